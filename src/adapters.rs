//! The concrete runtime adapters, handed to the tree as the factory the runtime-adapter actor
//! starts them with. This is the one place that names them.

use std::rc::Rc;

use sergeant_actors::runtime::{AdapterFactory, AdapterSpec, AdapterStartError, StartedAdapter};
use sergeant_config::sergeant::RuntimeAdapterKind;
use sergeant_runtime_adapters::cri::{CriAdapter, CriClient, CriClientConfig};
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};
use sergeant_supervisor::{spawn_actor, spawn_actor_on_thread, SpawnError};

/// Starts a CRI or fake adapter as the spec says.
pub fn factory() -> AdapterFactory {
    Rc::new(|spec: &AdapterSpec| {
        let span = tracing::info_span!("adapter", kind = spec.kind_name(), endpoint = %spec.runtime_endpoint);
        let (recipient, events, running) = match spec.kind {
            RuntimeAdapterKind::Cri => {
                // On a thread of its own: the gRPC connection and the decoding of every answer
                // stay off the loop the pod actors share.
                let spec = spec.clone();
                let make = move || cri_client(&spec).map(CriAdapter::new);
                let (addr, running) = spawn_actor_on_thread(make, span).map_err(|e| match e {
                    SpawnError::Make(e) => e,
                    other => AdapterStartError::new(other),
                })?;
                (addr.clone().recipient(), addr.recipient(), running)
            }
            RuntimeAdapterKind::Fake => {
                let (addr, running) = spawn_actor(FakeAdapter::new(FakeRuntime::new()), span);
                (addr.clone().recipient(), addr.recipient(), running)
            }
        };
        Ok(StartedAdapter {
            recipient,
            events: Some(events),
            running,
        })
    })
}

fn cri_client(spec: &AdapterSpec) -> Result<CriClient, AdapterStartError> {
    let mut config = CriClientConfig::new(spec.runtime_endpoint.clone())
        .with_runtime_request_timeout(spec.request_timeout);
    if let Some(image_endpoint) = &spec.image_endpoint {
        config = config.with_image_endpoint(image_endpoint.clone());
    }
    CriClient::new(&config).map_err(AdapterStartError::new)
}
