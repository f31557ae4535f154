//! Image pulls through the runtime-adapter actor honour `serializeImagePulls` and
//! `maxParallelImagePulls`. The adapter behind it here is a test adapter that takes 100 ms per
//! pull and records how many pulls it holds at once.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Duration;

use actix::{Actor, Context, Handler, ResponseFuture};
use futures::future::join_all;
use sergeant_actors::config_feed;
use sergeant_actors::runtime::{AdapterFactory, RuntimeAdapter, RuntimePort, StartedAdapter};
use sergeant_config::{FlagOverrides, NodeConfig};
use sergeant_core::node_status::facts::RuntimeHealth;
use sergeant_messages::runtime::{cri, RuntimeCall, RuntimeRequest, RuntimeResponse};
use sergeant_messages::runtime_error::RuntimeError;
use sergeant_messages::supervision::Strategy;
use sergeant_supervisor::{spawn_actor, start_root, ChildSpec, RestartPolicy, Slot, TreeHealth};
use tokio::sync::watch;

/// Counts concurrent pulls: `now` in flight, `max` ever.
#[derive(Default)]
struct Gauge {
    now: Cell<usize>,
    max: Cell<usize>,
}

struct SlowPuller {
    gauge: Rc<Gauge>,
}

impl Actor for SlowPuller {
    type Context = Context<Self>;
}

impl Handler<RuntimeCall> for SlowPuller {
    type Result = ResponseFuture<Result<RuntimeResponse, RuntimeError>>;

    fn handle(&mut self, RuntimeCall(request): RuntimeCall, _: &mut Context<Self>) -> Self::Result {
        let gauge = Rc::clone(&self.gauge);
        Box::pin(async move {
            match request {
                RuntimeRequest::PullImage(_) => {
                    gauge.now.set(gauge.now.get() + 1);
                    gauge.max.set(gauge.max.get().max(gauge.now.get()));
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    gauge.now.set(gauge.now.get() - 1);
                    Ok(RuntimeResponse::PullImage(cri::PullImageResponse {
                        image_ref: "sha256:x".into(),
                    }))
                }
                other => Err(RuntimeError::Unimplemented {
                    operation: other.operation(),
                    message: "test adapter".into(),
                }),
            }
        })
    }
}

/// Sends 5 pulls at once through a runtime-adapter configured with `kubelet` lines; answers the
/// most pulls the adapter saw at once.
fn most_concurrent_pulls(kubelet: &str) -> usize {
    actix_rt::System::new().block_on(async {
        let text = format!(
            "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n{kubelet}"
        );
        let config =
            NodeConfig::parse(&text, "test.yaml", &FlagOverrides::default()).expect("config");
        let feed = config_feed::feed("test.yaml".into(), config);
        let gauge = Rc::new(Gauge::default());
        let adapter_gauge = Rc::clone(&gauge);
        let factory: AdapterFactory = Rc::new(move |_| {
            let (addr, running) = spawn_actor(
                SlowPuller {
                    gauge: Rc::clone(&adapter_gauge),
                },
                tracing::Span::current(),
            );
            Ok(StartedAdapter {
                recipient: addr.recipient(),
                events: None,
                running,
            })
        });
        let slot = Slot::new("runtime-adapter");
        let config = feed.subscribe();
        let child = ChildSpec::worker("runtime-adapter", &slot, move |env| {
            let health = watch::Sender::new(RuntimeHealth::default());
            RuntimeAdapter::new(env, factory.clone(), config.clone(), health)
        });
        let policy = RestartPolicy::default();
        let spec = ChildSpec::supervisor(
            "gate",
            Strategy::OneForOne,
            &policy,
            &Slot::new("gate"),
            vec![child],
        );
        let root = start_root(&spec, &TreeHealth::new());
        let port = RuntimePort::new(slot.reference(Duration::from_secs(2)));
        let pulls = (0..5).map(|i| {
            let port = port.clone();
            async move {
                port.call(cri::PullImageRequest {
                    image: Some(cri::ImageSpec {
                        image: format!("image-{i}"),
                        ..Default::default()
                    }),
                    ..Default::default()
                })
                .await
            }
        });
        for answer in join_all(pulls).await {
            assert_eq!(answer.expect("pulled").image_ref, "sha256:x");
        }
        root.shutdown(Duration::from_secs(5)).await;
        gauge.max.get()
    })
}

#[test]
fn pulls_are_serialized_by_default() {
    assert_eq!(most_concurrent_pulls(""), 1);
}

#[test]
fn max_parallel_image_pulls_bounds_parallel_pulls() {
    assert_eq!(
        most_concurrent_pulls("serializeImagePulls: false\nmaxParallelImagePulls: 3\n"),
        3
    );
}

#[test]
fn without_a_bound_every_pull_runs_at_once() {
    assert_eq!(most_concurrent_pulls("serializeImagePulls: false\n"), 5);
}
