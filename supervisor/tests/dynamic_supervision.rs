//! The dynamic supervisor, exercised with real actix actors: children that come and go, are
//! restarted with back-off when they panic or fail (their owner told of each failure, the
//! restart counted under the child's path), are forgotten when they finish or are no longer
//! wanted, and past their intensity are given up for a while — reported to their owner —
//! without escalating or making the tree degraded.

mod common;

use common::{metrics_handle, run, wait_for};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use actix::{Actor, ActorContext, Addr, Context, Handler, Message};
use sergeant_messages::supervision::{ChildGaveUp, ChildState, GetTree, Strategy, TreeNode};
use sergeant_supervisor::{
    start_root, ChildEnv, ChildRef, ChildSpec, DynamicSpec, DynamicSupervisor, GiveUpPolicy,
    Incarnation, RestartPolicy, SendError, Slot, StartChild, StopChild, Supervisor, TreeHealth,
};

static INCARNATIONS: AtomicU64 = AtomicU64::new(1);

/// A child that answers its incarnation number, and panics, fails or finishes on request.
struct Worker {
    env: ChildEnv,
    incarnation: u64,
}

impl Actor for Worker {
    type Context = Context<Self>;
}

enum Order {
    Incarnation,
    Panic,
    Fail,
    Finish,
}

impl Message for Order {
    type Result = u64;
}

impl Handler<Order> for Worker {
    type Result = u64;
    fn handle(&mut self, order: Order, ctx: &mut Context<Self>) -> u64 {
        match order {
            Order::Incarnation => {}
            Order::Panic => panic!("worker {} told to panic", self.env.name()),
            Order::Fail => self.env.fail(ctx, "told to fail"),
            Order::Finish => ctx.stop(),
        }
        self.incarnation
    }
}

type GaveUp = Rc<RefCell<Vec<ChildGaveUp>>>;
type Shared<T> = Rc<RefCell<T>>;

struct Fixture {
    supervisor: ChildRef<DynamicSupervisor<Worker>>,
    root: ChildRef<Supervisor>,
    sibling: Slot<Worker>,
    gave_up: GaveUp,
    made: Shared<Vec<String>>,
    /// Every failure the owner was told of: the child's name and the failure.
    failures: Shared<Vec<(String, String)>>,
    /// Children the factory declines to make again.
    unwanted: Shared<BTreeSet<String>>,
    /// How many times a child was asked for its subtree.
    inspected: Shared<u32>,
    /// What the health check reads.
    health: TreeHealth,
}

fn policy() -> RestartPolicy {
    RestartPolicy {
        backoff_initial: Duration::from_millis(20),
        backoff_max: Duration::from_millis(100),
        intensity: 3,
        intensity_period: Duration::from_secs(60),
        shutdown_timeout: Duration::from_millis(500),
        delivery_timeout: Duration::from_secs(3),
        ..RestartPolicy::default()
    }
}

/// A root supervisor with one sibling worker and the dynamic supervisor `workers`.
fn fixture(retry_after: Duration) -> (Fixture, sergeant_supervisor::RootHandle) {
    let gave_up: GaveUp = Rc::default();
    let made: Shared<Vec<String>> = Rc::default();
    let failures: Shared<Vec<(String, String)>> = Rc::default();
    let unwanted: Shared<BTreeSet<String>> = Rc::default();
    let inspected: Shared<u32> = Rc::default();
    let asked = Rc::clone(&inspected);
    let seen = Rc::clone(&gave_up);
    let (names, told, declined) = (Rc::clone(&made), Rc::clone(&failures), Rc::clone(&unwanted));
    let spec = DynamicSpec {
        policy: policy(),
        give_up: GiveUpPolicy { retry_after },
        make: Rc::new(move |name: &str, env: &ChildEnv| {
            if declined.borrow().contains(name) {
                return None;
            }
            names.borrow_mut().push(name.to_owned());
            let worker = Worker {
                env: env.clone(),
                incarnation: INCARNATIONS.fetch_add(1, Ordering::SeqCst),
            };
            Some(Incarnation::new(worker, env))
        }),
        on_give_up: Some(Rc::new(move |report| seen.borrow_mut().push(report))),
        on_failure: Some(Rc::new(move |name: &str, failure: &str| {
            told.borrow_mut()
                .push((name.to_owned(), failure.to_owned()));
        })),
        inspect: Some(Rc::new(move |_: &Addr<Worker>| {
            *asked.borrow_mut() += 1;
            Box::pin(async { None })
        })),
    };
    let slot = Slot::new("workers");
    let sibling_slot: Slot<Worker> = Slot::new("sibling");
    let root_slot = Slot::new("root");
    let children = vec![
        ChildSpec::worker("sibling", &sibling_slot, |env| Worker {
            env: env.clone(),
            incarnation: INCARNATIONS.fetch_add(1, Ordering::SeqCst),
        }),
        ChildSpec::dynamic_supervisor("workers", &slot, spec),
    ];
    let root_spec =
        ChildSpec::supervisor("root", Strategy::OneForOne, &policy(), &root_slot, children);
    let health = TreeHealth::new();
    let root = start_root(&root_spec, &health);
    (
        Fixture {
            supervisor: slot.reference(Duration::from_secs(3)),
            root: root_slot.reference(Duration::from_secs(3)),
            sibling: sibling_slot.clone(),
            gave_up,
            made,
            failures,
            unwanted,
            inspected,
            health,
        },
        root,
    )
}

impl Fixture {
    async fn start(&self, name: &str) -> ChildRef<Worker> {
        let slot = Slot::new(name);
        let child = slot.reference(Duration::from_secs(3));
        self.supervisor
            .send(StartChild {
                name: name.to_owned(),
                slot,
            })
            .await
            .expect("the dynamic supervisor answers");
        child
    }

    async fn tree(&self) -> TreeNode {
        self.tree_as(GetTree::default()).await
    }

    async fn tree_as(&self, ask: GetTree) -> TreeNode {
        let root = self.root.send(ask).await.expect("root answers");
        root.children
            .into_iter()
            .find(|c| c.name == "workers")
            .expect("the dynamic supervisor is in the tree")
    }

    async fn child(&self, name: &str) -> Option<TreeNode> {
        self.tree()
            .await
            .children
            .into_iter()
            .find(|c| c.name == name)
    }
}

#[test]
fn children_come_and_go_and_show_in_the_tree() {
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let a = fixture.start("a").await;
        let b = fixture.start("b").await;
        let first_a = a.send(Order::Incarnation).await.expect("a answers");
        b.send(Order::Incarnation).await.expect("b answers");
        let tree = fixture.tree().await;
        let names: Vec<_> = tree.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(tree.children[0].path, "root/workers/a");
        assert!(tree.children.iter().all(|c| c.state == ChildState::Running));

        // Asking again for a running child starts nothing new.
        let again = fixture.start("a").await;
        assert_eq!(again.send(Order::Incarnation).await, Ok(first_a));
        assert_eq!(fixture.made.borrow().as_slice(), ["a", "b"]);

        // Stopped on purpose: gone, not restarted.
        fixture
            .supervisor
            .send(StopChild::<Worker>::named("b"))
            .await
            .expect("answers");
        assert_eq!(
            b.send(Order::Incarnation).await,
            Err(SendError::Down { actor: "b".into() })
        );
        assert!(fixture.child("b").await.is_none());

        // Finished by itself without a failure: forgotten (transient).
        a.send(Order::Finish)
            .await
            .expect("a answers before it stops");
        wait_for("a to be forgotten", Duration::from_secs(5), || async {
            fixture.child("a").await.is_none()
        })
        .await;
        assert_eq!(fixture.made.borrow().as_slice(), ["a", "b"]);
    });
}

#[test]
fn a_child_started_again_under_its_name_while_the_old_one_stops_stays_up() {
    // As a probe worker is replaced when its container restarts: the stop and the new start
    // are sent together, and the old incarnation's end must not be taken for the new one's.
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let old = fixture.start("a").await;
        let first = old.send(Order::Incarnation).await.expect("a answers");
        fixture
            .supervisor
            .tell(StopChild::<Worker>::named("a"))
            .expect("the dynamic supervisor is up");
        let new = fixture.start("a").await;
        let second = new
            .send(Order::Incarnation)
            .await
            .expect("the new a answers");
        assert_ne!(first, second, "a new incarnation");
        // The old incarnation's end arrives within this second: the new one answers throughout
        // (an observation window: what is checked is that nothing happens).
        for _ in 0..20 {
            actix_rt::time::sleep(Duration::from_millis(50)).await;
            assert_eq!(
                new.send(Order::Incarnation).await,
                Ok(second),
                "the new incarnation stays in service"
            );
        }
        assert!(fixture.child("a").await.is_some(), "still in the tree");
    });
}

#[test]
fn a_tree_that_skips_isolated_subtrees_asks_no_child_of_a_dynamic_supervisor() {
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        fixture.start("a").await;
        fixture.start("b").await;
        fixture.tree().await;
        assert_eq!(
            *fixture.inspected.borrow(),
            2,
            "the full tree asks each child"
        );
        let tree = fixture
            .tree_as(GetTree {
                skip_isolated: true,
            })
            .await;
        assert_eq!(
            *fixture.inspected.borrow(),
            2,
            "the /healthz tree asks no child"
        );
        let names: Vec<_> = tree.children.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["a", "b"], "the children are still listed");
        assert!(tree.children.iter().all(|c| c.state == ChildState::Running));
    });
}

#[test]
fn a_panicking_child_is_restarted_with_back_off_and_its_siblings_are_untouched() {
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let a = fixture.start("a").await;
        let b = fixture.start("b").await;
        let first_a = a.send(Order::Incarnation).await.expect("a answers");
        let first_b = b.send(Order::Incarnation).await.expect("b answers");

        assert_eq!(
            a.send(Order::Panic).await,
            Err(SendError::Died { actor: "a".into() })
        );
        let second_a = a.send(Order::Incarnation).await.expect("a is back");
        assert_ne!(second_a, first_a, "a new incarnation");
        assert_eq!(b.send(Order::Incarnation).await, Ok(first_b), "b untouched");

        a.send(Order::Fail).await.expect("a answers before failing");
        let third_a = a.send(Order::Incarnation).await.expect("a is back again");
        assert_ne!(third_a, second_a);

        let node = fixture.child("a").await.expect("a is listed");
        assert_eq!(node.restarts, 2);
        assert_eq!(node.state, ChildState::Running);
        let failure = node.last_failure.expect("the last failure is kept");
        assert_eq!(failure.message, "failed: told to fail");
        assert_eq!(fixture.child("b").await.map(|b| b.restarts), Some(0));
        assert!(fixture.gave_up.borrow().is_empty());
    });
}

#[test]
fn past_its_intensity_a_child_is_given_up_reported_and_retried_later_without_escalation() {
    run(async {
        let retry_after = Duration::from_millis(800);
        let (fixture, _root) = fixture(retry_after);
        let a = fixture.start("a").await;
        let b = fixture.start("b").await;
        let first_b = b.send(Order::Incarnation).await.expect("b answers");
        // The intensity is 3 restarts a minute: the fourth failure gives the child up. Each
        // send waits out the restart of the incarnation before it.
        for _ in 0..4 {
            assert_eq!(
                a.send(Order::Panic).await,
                Err(SendError::Died { actor: "a".into() })
            );
        }
        let given_up_at = Instant::now();
        wait_for("a to be given up", Duration::from_secs(5), || async {
            fixture
                .child("a")
                .await
                .is_some_and(|a| a.state == ChildState::GaveUp)
        })
        .await;
        {
            let reports = fixture.gave_up.borrow();
            assert_eq!(reports.len(), 1, "{reports:?}");
            assert_eq!(reports[0].name, "a");
            assert!(
                reports[0].reason.contains("3 restarts in")
                    && reports[0].reason.contains("told to panic"),
                "{}",
                reports[0].reason
            );
            assert_eq!(reports[0].retry_after, retry_after);
        }
        // Nothing escalated: the sibling and the dynamic supervisor's other child carry on.
        assert_eq!(b.send(Order::Incarnation).await, Ok(first_b));
        let root = fixture
            .root
            .send(GetTree::default())
            .await
            .expect("root answers");
        assert!(root.children.iter().all(|c| c.restarts == 0), "{root:?}");

        // After the slow retry the child runs again, with a fresh intensity window.
        a.send(Order::Incarnation).await.expect("a is back");
        assert!(given_up_at.elapsed() >= retry_after / 2);
        let node = fixture.child("a").await.expect("a is listed");
        assert_eq!(node.state, ChildState::Running);
        assert_eq!(node.restarts, 4);
    });
}

#[test]
fn the_owner_hears_of_each_failure_and_a_child_no_longer_wanted_is_forgotten() {
    run(async {
        let metrics = metrics_handle();
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let a = fixture.start("told").await;
        assert_eq!(
            a.send(Order::Panic).await,
            Err(SendError::Died {
                actor: "told".into()
            })
        );
        a.send(Order::Incarnation)
            .await
            .expect("back after the panic");
        assert_eq!(
            fixture.failures.borrow().as_slice(),
            [(
                "told".to_owned(),
                "panicked: worker told told to panic".to_owned()
            )]
        );
        let text = metrics.render();
        assert!(
            text.contains(r#"sergeant_actor_restarts_total{actor="root/workers/told"} 1"#),
            "restarts are counted under the child's own path: {text}"
        );

        // The factory declines the next incarnation: the child is forgotten, not restarted.
        fixture.unwanted.borrow_mut().insert("told".to_owned());
        a.send(Order::Fail).await.expect("answers before failing");
        wait_for(
            "the unwanted child to be forgotten",
            Duration::from_secs(5),
            || async { fixture.child("told").await.is_none() },
        )
        .await;
        assert_eq!(
            a.send(Order::Incarnation).await,
            Err(SendError::Down {
                actor: "told".into()
            })
        );
        assert_eq!(fixture.failures.borrow().len(), 2);
        assert!(fixture.gave_up.borrow().is_empty());
    });
}

#[test]
fn a_given_up_child_leaves_the_tree_healthy_and_shows_its_supervisor_isolated() {
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let a = fixture.start("doomed").await;
        for _ in 0..4 {
            assert_eq!(
                a.send(Order::Panic).await,
                Err(SendError::Died {
                    actor: "doomed".into()
                })
            );
        }
        wait_for(
            "the child to be given up",
            Duration::from_secs(5),
            || async {
                fixture
                    .child("doomed")
                    .await
                    .is_some_and(|a| a.state == ChildState::GaveUp)
            },
        )
        .await;
        let root = fixture
            .root
            .send(GetTree::default())
            .await
            .expect("root answers");
        assert!(!root.is_degraded(), "{root:?}");
        assert_eq!(
            fixture.health.degraded(),
            Vec::<String>::new(),
            "a dynamic supervisor's children are not the node's health"
        );
        let json = serde_json::to_value(&root).expect("tree serializes");
        assert_eq!(json["children"][1]["name"], "workers");
        assert_eq!(json["children"][1]["isolated"], true, "{json}");
        assert_eq!(json["children"][1]["children"][0]["state"], "gave_up");
        assert!(json["children"][0].get("isolated").is_none(), "{json}");
    });
}

#[test]
fn an_owner_waiting_for_a_restart_hears_of_the_new_incarnation() {
    run(async {
        let (fixture, _root) = fixture(Duration::from_secs(60));
        let sibling = fixture.sibling.reference(Duration::from_secs(3));
        let first = sibling.send(Order::Incarnation).await.expect("up");
        // Made while the first incarnation is up: only a later one is news to it.
        let mut watcher = fixture.sibling.reference(Duration::from_secs(3));
        let restarted = actix_rt::spawn(async move { watcher.restarted().await });
        tokio::task::yield_now().await;
        assert!(!restarted.is_finished(), "the incarnation up is not new");
        assert_eq!(
            sibling.send(Order::Panic).await,
            Err(SendError::Died {
                actor: "sibling".into()
            })
        );
        tokio::time::timeout(Duration::from_secs(5), restarted)
            .await
            .expect("heard of the restart in time")
            .expect("the watcher ran")
            .expect("a new incarnation came up");
        let second = sibling.send(Order::Incarnation).await.expect("up");
        assert_ne!(first, second);
    });
}
