//! The node's HTTP endpoints: healthz, the read-only port and the authenticated kubelet API
//! on `port` (10250, [`secure`]).
//!
//! Entry point: [`child_specs`], the listeners the `server` supervisor runs, one [`Listener`]
//! actor each. A listener binds when it starts and serves until it cannot go on; it then fails
//! and its supervisor starts it again with back-off, so a dead listener is seen and healed
//! rather than only logged. Every listener serves its connections through [`listener`], under
//! the same bounds (connection cap, header and setup timeouts, head and body sizes), with a
//! handler's panic answered 500 ([`panics`]).

mod api;
mod exhausted;
mod exposition;
mod healthz;
mod listener;
mod own_thread;
mod panics;
mod routes;
mod secure;

use std::net::SocketAddr;

use actix::{Actor, ActorFutureExt, AsyncContext, Context, WrapFuture};
use futures::future::{FutureExt, LocalBoxFuture};

use sergeant_actors::serving::ServerDeps;
use sergeant_config::ConfigError;
use sergeant_supervisor::failpoint::{self, InjectedFault};
use sergeant_supervisor::{ChildEnv, ChildSpec, Slot};

pub use listener::BindError;
pub use routes::Endpoints;
pub use secure::TlsError;
use secure::TlsSettings;

/// Why a listener could not start serving: it fails with this, and its supervisor starts it
/// again with back-off, so a taken port or a bad certificate is seen (and retried) rather than
/// only logged.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ListenerError {
    /// The `server::listen` failpoint refused the start.
    #[error(transparent)]
    Injected(#[from] InjectedFault),
    /// The address could not be listened on.
    #[error(transparent)]
    Bind(#[from] BindError),
    /// The kubelet API's TLS configuration could not be built.
    #[error(transparent)]
    Tls(#[from] TlsError),
    /// The node's name (for its self-signed certificate and the authorizer) is unknown.
    #[error(transparent)]
    NodeName(ConfigError),
}

/// The listeners the configuration asks for, each a child of the `server` supervisor: the
/// healthz endpoint (`healthzPort`), the read-only port (`readOnlyPort`) and the kubelet API
/// (`port`); a port of 0 has none. Ports are read once: a change needs a restart.
#[must_use]
pub fn child_specs(deps: &ServerDeps) -> Vec<ChildSpec> {
    let kubelet = deps.config.borrow().active.kubelet.clone();
    [
        (Endpoints::Healthz, kubelet.healthz_port),
        (Endpoints::ReadOnly, kubelet.read_only_port),
        (Endpoints::Authenticated, kubelet.port),
    ]
    .into_iter()
    .filter(|(_, port)| *port != 0)
    .map(|(endpoints, _)| {
        let deps = deps.clone();
        ChildSpec::worker(
            endpoints.listener_name(),
            &Slot::new(endpoints.listener_name()),
            move |env| Listener::new(env, endpoints, deps.clone()),
        )
    })
    .collect()
}

/// One listener: binds its address when it starts (failing, and so being restarted by its
/// supervisor, when the address is taken) and serves it until it cannot go on, when it fails
/// with the reason and is started again. The healthz listener serves on a thread of its own
/// ([`own_thread`]), which lives as long as the actor.
pub struct Listener {
    env: ChildEnv,
    endpoints: Endpoints,
    deps: ServerDeps,
    thread: Option<own_thread::OwnThread>,
}

impl Listener {
    /// A listener of `endpoints` that will bind when started.
    #[must_use]
    pub fn new(env: &ChildEnv, endpoints: Endpoints, deps: ServerDeps) -> Self {
        Self {
            env: env.clone(),
            endpoints,
            deps,
            thread: None,
        }
    }

    /// Binds the address and returns what serves it, and the address.
    fn open(&mut self) -> Result<(LocalBoxFuture<'static, String>, SocketAddr), ListenerError> {
        failpoint::check("server::listen")?;
        panics::describe();
        let config = self.deps.config.borrow().active.clone();
        let kubelet = &config.kubelet;
        match self.endpoints {
            Endpoints::Healthz => {
                let addr = SocketAddr::new(kubelet.healthz_bind_address, kubelet.healthz_port);
                let router = routes::router(self.endpoints, self.deps.clone());
                let (thread, serving) =
                    own_thread::serve_on_own_thread(addr, self.endpoints, router);
                self.thread = Some(thread);
                Ok((serving.boxed_local(), addr))
            }
            Endpoints::ReadOnly => {
                let addr = SocketAddr::new(kubelet.address, kubelet.read_only_port);
                let router = routes::router(self.endpoints, self.deps.clone());
                let serving = listener::serve(addr, self.endpoints, listener::Plain, router)?;
                Ok((serving.boxed_local(), addr))
            }
            Endpoints::Authenticated => {
                let addr = SocketAddr::new(kubelet.address, kubelet.port);
                let tls = TlsSettings {
                    cert_file: kubelet.tls_cert_file.clone(),
                    key_file: kubelet.tls_private_key_file.clone(),
                    client_ca_file: kubelet.authentication.x509.client_ca_file.clone(),
                    cert_dir: config.command_line.root_dir.join("pki"),
                    node_name: config.node_name().map_err(ListenerError::NodeName)?,
                    node_ip: config.command_line.node_ip,
                    min_version: kubelet.tls_min_version,
                    cipher_suites: kubelet.tls_cipher_suites.clone(),
                };
                let router = routes::router(Endpoints::Authenticated, self.deps.clone());
                let serving = secure::serve(addr, kubelet, &tls, self.deps.api.clone(), router)?;
                Ok((serving.boxed_local(), addr))
            }
        }
    }
}

impl Actor for Listener {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        match self.open() {
            Ok((serving, addr)) => {
                tracing::info!(%addr, "serving {}", self.endpoints.listener_name());
                self.env.set_status(format!("serving on {addr}"));
                ctx.spawn(
                    serving
                        .into_actor(self)
                        .map(|reason, act, ctx| act.env.fail(ctx, reason)),
                );
            }
            Err(reason) => self.env.fail(ctx, reason),
        }
    }
}
