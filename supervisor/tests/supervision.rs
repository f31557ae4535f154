//! The supervisor, exercised with real actix actors and faults injected through failpoints.
#![cfg(feature = "failpoints")]

mod common;

use common::{metrics_handle, run, wait_for};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix::{Actor, ActorContext, Context, Handler, Message, Running as ActorRunning};
use sergeant_messages::supervision::{ChildState, GetTree, Strategy, TreeNode};
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{
    start_root, ChildEnv, ChildRef, ChildSpec, RestartPolicy, RootExit, RootHandle, SendError,
    Slot, Supervisor, TreeHealth,
};

static INCARNATIONS: AtomicU64 = AtomicU64::new(1);

type Journal = Rc<RefCell<Vec<String>>>;

/// A worker whose every incarnation has a unique number, and which records its start and stop.
struct Probe {
    env: ChildEnv,
    incarnation: u64,
    journal: Journal,
    start_point: String,
    stubborn: bool,
}

impl Actor for Probe {
    type Context = Context<Self>;

    fn started(&mut self, _: &mut Context<Self>) {
        self.journal
            .borrow_mut()
            .push(format!("start {}", self.env.name()));
        self.env
            .set_status(format!("incarnation {}", self.incarnation));
        if let Err(fault) = failpoint::check(&self.start_point) {
            panic!("{fault}");
        }
    }

    fn stopping(&mut self, _: &mut Context<Self>) -> ActorRunning {
        if self.stubborn {
            ActorRunning::Continue
        } else {
            ActorRunning::Stop
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        self.journal
            .borrow_mut()
            .push(format!("stop {}", self.env.name()));
    }
}

/// Evaluates a failpoint inside a handler; answers the incarnation number.
struct Poke(String);
impl Message for Poke {
    type Result = u64;
}
impl Handler<Poke> for Probe {
    type Result = u64;
    fn handle(&mut self, Poke(point): Poke, _: &mut Context<Self>) -> u64 {
        if let Err(fault) = failpoint::check(&point) {
            panic!("{fault}");
        }
        self.incarnation
    }
}

/// Makes the actor exit with an error.
struct FailWith(String);
impl Message for FailWith {
    type Result = ();
}
impl Handler<FailWith> for Probe {
    type Result = ();
    fn handle(&mut self, FailWith(reason): FailWith, ctx: &mut Context<Self>) {
        self.env.fail(ctx, reason);
    }
}

/// Makes the actor stop without saying why.
struct StopQuietly;
impl Message for StopQuietly {
    type Result = ();
}
impl Handler<StopQuietly> for Probe {
    type Result = ();
    fn handle(&mut self, _: StopQuietly, ctx: &mut Context<Self>) {
        ctx.stop();
    }
}

struct Fixture {
    journal: Journal,
}

impl Fixture {
    fn new() -> Self {
        Self {
            journal: Rc::new(RefCell::new(Vec::new())),
        }
    }

    fn probe(
        &self,
        name: &str,
        slot: &Slot<Probe>,
        start_point: &str,
        stubborn: bool,
    ) -> ChildSpec {
        let journal = Rc::clone(&self.journal);
        let start_point = start_point.to_owned();
        ChildSpec::worker(name, slot, move |env| Probe {
            env: env.clone(),
            incarnation: INCARNATIONS.fetch_add(1, Ordering::SeqCst),
            journal: Rc::clone(&journal),
            start_point: start_point.clone(),
            stubborn,
        })
    }

    fn entries(&self) -> Vec<String> {
        self.journal.borrow().clone()
    }
}

fn fast_policy() -> RestartPolicy {
    RestartPolicy {
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(200),
        shutdown_timeout: Duration::from_millis(500),
        delivery_timeout: Duration::from_secs(3),
        ..RestartPolicy::default()
    }
}

async fn tree(root: &ChildRef<Supervisor>) -> TreeNode {
    root.send(GetTree::default()).await.expect("root answers")
}

fn child<'a>(tree: &'a TreeNode, name: &str) -> &'a TreeNode {
    tree.children
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no child {name} in {tree:?}"))
}

/// Three probes a, b, c under one supervisor named `root_name` with `strategy`.
struct Trio {
    fixture: Fixture,
    health: TreeHealth,
    root: RootHandle,
    root_ref: ChildRef<Supervisor>,
    refs: Vec<ChildRef<Probe>>,
}

fn trio(root_name: &str, strategy: Strategy, policy: &RestartPolicy) -> Trio {
    let fixture = Fixture::new();
    let slots: Vec<Slot<Probe>> = ["a", "b", "c"].iter().map(|n| Slot::new(n)).collect();
    let children = ["a", "b", "c"]
        .iter()
        .zip(&slots)
        .map(|(name, slot)| {
            fixture.probe(name, slot, &format!("{root_name}::{name}::start"), false)
        })
        .collect();
    let root_slot = Slot::new(root_name);
    let spec = ChildSpec::supervisor(root_name, strategy, policy, &root_slot, children);
    let health = TreeHealth::new();
    let root = start_root(&spec, &health);
    Trio {
        fixture,
        health,
        root,
        root_ref: root_slot.reference(policy.delivery_timeout),
        refs: slots
            .iter()
            .map(|s| s.reference(policy.delivery_timeout))
            .collect(),
    }
}

async fn wait_until_restarting(root: &ChildRef<Supervisor>, name: &str) {
    wait_for(
        "the child to be restarting",
        Duration::from_secs(5),
        || async { child(&tree(root).await, name).state == ChildState::Restarting },
    )
    .await;
}

async fn incarnations(refs: &[ChildRef<Probe>], point: &str) -> Vec<u64> {
    let mut out = Vec::new();
    for r in refs {
        out.push(r.send(Poke(point.to_owned())).await.expect("probe answers"));
    }
    out
}

/// Panics b through a failpoint, then checks which incarnations changed.
async fn panic_b_and_compare(name: &str, trio: &Trio) -> (Vec<u64>, Vec<u64>) {
    let noop = format!("{name}::noop");
    let before = incarnations(&trio.refs, &noop).await;
    let point = format!("{name}::b::poke");
    fail::cfg(&point, "1*panic(boom)").expect("failpoint set");
    let answer = trio.refs[1].send(Poke(point)).await;
    assert_eq!(answer, Err(SendError::Died { actor: "b".into() }));
    let after = incarnations(&trio.refs, &noop).await;
    (before, after)
}

#[test]
fn one_for_one_restarts_only_the_panicking_child() {
    run(async {
        let metrics = metrics_handle();
        let trio = trio("one-for-one", Strategy::OneForOne, &fast_policy());
        let (before, after) = panic_b_and_compare("one-for-one", &trio).await;
        assert_eq!(before[0], after[0], "a kept its incarnation");
        assert_ne!(before[1], after[1], "b was restarted");
        assert_eq!(before[2], after[2], "c kept its incarnation");

        let tree = tree(&trio.root_ref).await;
        assert_eq!(child(&tree, "a").restarts, 0);
        assert_eq!(child(&tree, "c").restarts, 0);
        let b = child(&tree, "b");
        assert_eq!(b.restarts, 1);
        assert_eq!(b.state, ChildState::Running);
        let failure = b.last_failure.as_ref().expect("b's failure is recorded");
        assert!(
            failure.message.contains("panicked") && failure.message.contains("boom"),
            "{failure:?}"
        );

        let json = serde_json::to_value(&tree).expect("tree serializes");
        assert_eq!(json["strategy"], "one_for_one");
        assert_eq!(json["children"][1]["path"], "one-for-one/b");
        assert_eq!(json["children"][1]["state"], "running");
        assert!(json["children"][1]["last_failure"]["at"]
            .as_str()
            .unwrap()
            .ends_with('Z'));

        let text = metrics.render();
        assert!(
            text.contains(r#"sergeant_actor_restarts_total{actor="one-for-one/b"} 1"#),
            "{text}"
        );
        assert!(
            !text.contains(r#"sergeant_actor_restarts_total{actor="one-for-one/a"}"#),
            "{text}"
        );
        assert!(
            text.contains(r#"sergeant_actor_up{actor="one-for-one/b"} 1"#),
            "{text}"
        );
        assert_eq!(
            trio.root.shutdown(Duration::from_secs(5)).await,
            RootExit::Clean
        );
        assert!(metrics
            .render()
            .contains(r#"sergeant_actor_up{actor="one-for-one/b"} 0"#));
    });
}

#[test]
fn the_health_board_names_a_child_while_it_waits_out_its_back_off_and_clears_when_it_is_back() {
    run(async {
        // b waits a minute before its restart: long enough to read the board while it waits.
        let slow = RestartPolicy {
            backoff_initial: Duration::from_secs(60),
            backoff_max: Duration::from_secs(60),
            ..fast_policy()
        };
        let waiting = trio("board", Strategy::OneForOne, &slow);
        wait_for("every child running", Duration::from_secs(5), || async {
            waiting.health.degraded().is_empty()
        })
        .await;
        fail::cfg("board::b::poke", "1*panic(boom)").expect("failpoint set");
        assert_eq!(
            waiting.refs[1].send(Poke("board::b::poke".into())).await,
            Err(SendError::Died { actor: "b".into() })
        );
        wait_for("b on the board", Duration::from_secs(5), || async {
            waiting.health.degraded() == vec!["board/b is Restarting".to_owned()]
        })
        .await;
        assert_eq!(
            waiting.root.shutdown(Duration::from_secs(5)).await,
            RootExit::Clean
        );

        // Under the fast policy b is back within milliseconds, and the board says so.
        let quick = trio("board-quick", Strategy::OneForOne, &fast_policy());
        fail::cfg("board-quick::b::poke", "1*panic(boom)").expect("failpoint set");
        assert!(quick.refs[1]
            .send(Poke("board-quick::b::poke".into()))
            .await
            .is_err());
        wait_for(
            "b back and the board clear",
            Duration::from_secs(5),
            || async {
                child(&tree(&quick.root_ref).await, "b").restarts == 1
                    && quick.health.degraded().is_empty()
            },
        )
        .await;
        assert_eq!(
            quick.root.shutdown(Duration::from_secs(5)).await,
            RootExit::Clean
        );
    });
}

#[test]
fn rest_for_one_restarts_the_failed_child_and_those_started_after_it() {
    run(async {
        let trio = trio("rest-for-one", Strategy::RestForOne, &fast_policy());
        let (before, after) = panic_b_and_compare("rest-for-one", &trio).await;
        assert_eq!(
            before[0], after[0],
            "a, started before b, kept its incarnation"
        );
        assert_ne!(before[1], after[1]);
        assert_ne!(before[2], after[2], "c, started after b, was restarted");
        let tree = tree(&trio.root_ref).await;
        let restarts: Vec<u64> = tree.children.iter().map(|c| c.restarts).collect();
        assert_eq!(restarts, vec![0, 1, 1]);
        let log = trio.fixture.entries();
        let tail: Vec<&str> = log.iter().skip(3).map(String::as_str).collect();
        assert_eq!(
            tail,
            vec!["stop b", "stop c", "start b", "start c"],
            "stopped in reverse, started in order"
        );
        trio.root.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn one_for_all_restarts_every_child() {
    run(async {
        let trio = trio("one-for-all", Strategy::OneForAll, &fast_policy());
        let (before, after) = panic_b_and_compare("one-for-all", &trio).await;
        assert!(
            before.iter().zip(&after).all(|(x, y)| x != y),
            "{before:?} -> {after:?}"
        );
        let tree = tree(&trio.root_ref).await;
        assert!(tree.children.iter().all(|c| c.restarts == 1));
        trio.root.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn an_error_exit_and_an_unasked_stop_are_failures_with_their_reason() {
    run(async {
        let trio = trio("exits", Strategy::OneForOne, &fast_policy());
        trio.refs[0]
            .send(FailWith("disk on fire".into()))
            .await
            .expect("delivered");
        trio.refs[2].send(StopQuietly).await.expect("delivered");
        wait_for("both restarts", Duration::from_secs(5), || async {
            let t = tree(&trio.root_ref).await;
            child(&t, "a").restarts == 1 && child(&t, "c").restarts == 1
        })
        .await;
        let t = tree(&trio.root_ref).await;
        let failure = |n| child(&t, n).last_failure.clone().expect("recorded").message;
        assert_eq!(failure("a"), "failed: disk on fire");
        assert_eq!(failure("c"), "stopped unexpectedly");
        assert!(child(&t, "b").last_failure.is_none());
        trio.root.shutdown(Duration::from_secs(5)).await;
    });
}

/// root (one_for_one) → sub (one_for_one, intensity `sub_intensity`) → w, whose start
/// evaluates the failpoint `point`.
fn nested(
    name: &str,
    point: &str,
    root_intensity: u32,
    sub_intensity: u32,
) -> (RootHandle, ChildRef<Supervisor>, ChildRef<Probe>) {
    let fixture = Fixture::new();
    let w_slot = Slot::new("w");
    let sub_policy = RestartPolicy {
        intensity: sub_intensity,
        ..fast_policy()
    };
    let root_policy = RestartPolicy {
        intensity: root_intensity,
        ..fast_policy()
    };
    let sub = ChildSpec::supervisor(
        "sub",
        Strategy::OneForOne,
        &sub_policy,
        &Slot::new("sub"),
        vec![fixture.probe("w", &w_slot, point, false)],
    );
    let root_slot = Slot::new(name);
    let root = start_root(
        &ChildSpec::supervisor(
            name,
            Strategy::OneForOne,
            &root_policy,
            &root_slot,
            vec![sub],
        ),
        &TreeHealth::new(),
    );
    (
        root,
        root_slot.reference(Duration::from_secs(3)),
        w_slot.reference(Duration::from_millis(500)),
    )
}

#[test]
fn exceeding_the_intensity_gives_the_child_up_and_escalates_to_the_parent() {
    run(async {
        // w fails three times at start: the sub allows one restart, gives up on the second
        // failure and fails itself; the root restarts the sub, whose fresh w survives the third.
        fail::cfg("escalates::w::start", "3*panic(cannot start)").expect("failpoint set");
        let (root, root_ref, w) = nested("escalates", "escalates::w::start", 5, 1);
        wait_for(
            "the root to restart the sub",
            Duration::from_secs(5),
            || async {
                let t = tree(&root_ref).await;
                let sub = child(&t, "sub");
                sub.restarts == 1
                    && sub.state == ChildState::Running
                    && sub.children.first().map(|w| w.state) == Some(ChildState::Running)
            },
        )
        .await;
        let t = tree(&root_ref).await;
        let sub = child(&t, "sub");
        let failure = sub
            .last_failure
            .clone()
            .expect("the sub's escalation is recorded")
            .message;
        assert!(
            failure.contains("gave up on escalates/sub/w after more than 1 restarts"),
            "{failure}"
        );
        assert_eq!(
            sub.children[0].restarts, 1,
            "the new sub restarted w once more"
        );
        assert!(
            w.send(Poke("escalates::noop".into())).await.is_ok(),
            "w is reachable again"
        );
        assert_eq!(root.shutdown(Duration::from_secs(5)).await, RootExit::Clean);
    });
}

#[test]
fn the_root_giving_up_ends_the_tree_with_the_reason() {
    run(async {
        fail::cfg("gives-up::w::start", "panic(never starts)").expect("failpoint set");
        let (root, _, w) = nested("gives-up", "gives-up::w::start", 1, 0);
        let exit = tokio::time::timeout(Duration::from_secs(10), root.wait())
            .await
            .expect("the root ends");
        match exit {
            RootExit::GaveUp(reason) => {
                assert!(reason.contains("gave up on gives-up/sub"), "{reason}")
            }
            other => panic!("expected GaveUp, got {other:?}"),
        }
        let started = Instant::now();
        assert_eq!(
            w.send(Poke("gives-up::noop".into())).await,
            Err(SendError::Down { actor: "w".into() })
        );
        assert!(
            started.elapsed() < Duration::from_millis(100),
            "a down child fails at once"
        );
        fail::remove("gives-up::w::start");
    });
}

#[test]
fn a_message_sent_during_a_restart_is_delivered_to_the_new_incarnation() {
    run(async {
        let policy = RestartPolicy {
            backoff_initial: Duration::from_millis(300),
            ..fast_policy()
        };
        let trio = trio("delivers", Strategy::OneForOne, &policy);
        let before = incarnations(&trio.refs, "delivers::noop").await;
        fail::cfg("delivers::b::poke", "1*panic(boom)").expect("failpoint set");
        trio.refs[1]
            .tell(Poke("delivers::b::poke".into()))
            .expect("b is up");
        wait_until_restarting(&trio.root_ref, "b").await;
        let sent = Instant::now();
        let answer = trio.refs[1]
            .send(Poke("delivers::noop".into()))
            .await
            .expect("delivered after the restart");
        assert_ne!(answer, before[1], "answered by the new incarnation");
        assert!(
            sent.elapsed() >= Duration::from_millis(150),
            "it waited for the restart: {:?}",
            sent.elapsed()
        );
        trio.root.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn a_message_to_a_child_restarting_longer_than_the_delivery_timeout_fails_fast() {
    run(async {
        let policy = RestartPolicy {
            backoff_initial: Duration::from_secs(5),
            delivery_timeout: Duration::from_millis(100),
            ..fast_policy()
        };
        let trio = trio("fails-fast", Strategy::OneForOne, &policy);
        incarnations(&trio.refs, "fails-fast::noop").await;
        fail::cfg("fails-fast::b::poke", "1*panic(boom)").expect("failpoint set");
        trio.refs[1]
            .tell(Poke("fails-fast::b::poke".into()))
            .expect("b is up");
        wait_until_restarting(&trio.root_ref, "b").await;
        let sent = Instant::now();
        match trio.refs[1].send(Poke("fails-fast::noop".into())).await {
            Err(SendError::Restarting { actor, .. }) => assert_eq!(actor, "b"),
            other => panic!("expected a Restarting error, got {other:?}"),
        }
        assert!(
            sent.elapsed() < Duration::from_secs(1),
            "failed fast: {:?}",
            sent.elapsed()
        );
        trio.root.shutdown(Duration::from_secs(5)).await;
    });
}

#[test]
fn children_start_in_order_and_stop_in_reverse_and_a_stubborn_one_is_aborted_at_its_deadline() {
    run(async {
        let fixture = Fixture::new();
        let policy = RestartPolicy {
            shutdown_timeout: Duration::from_millis(300),
            ..fast_policy()
        };
        let children = vec![
            fixture.probe("first", &Slot::new("first"), "ordered::none", false),
            fixture.probe("stubborn", &Slot::new("stubborn"), "ordered::none", true),
            fixture.probe("last", &Slot::new("last"), "ordered::none", false),
        ];
        let root = start_root(
            &ChildSpec::supervisor(
                "ordered",
                Strategy::OneForOne,
                &policy,
                &Slot::new("ordered"),
                children,
            ),
            &TreeHealth::new(),
        );
        wait_for("all started", Duration::from_secs(5), || {
            let n = fixture.entries().len();
            async move { n == 3 }
        })
        .await;
        let started = Instant::now();
        let exit = root.shutdown(Duration::from_secs(5)).await;
        let took = started.elapsed();
        assert_eq!(exit, RootExit::Clean);
        assert!(
            took >= Duration::from_millis(300) && took < Duration::from_secs(2),
            "bounded by the deadline: {took:?}"
        );
        assert_eq!(
            fixture.entries(),
            vec![
                "start first",
                "start stubborn",
                "start last",
                "stop last",
                "stop first"
            ]
        );
    });
}
