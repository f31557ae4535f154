//! The server actor: the healthz endpoint and the read-only port.
//!
//! Entry point: [`Server`]. It binds its listeners when it starts (failing, and so being
//! restarted by its supervisor, when an address is taken) and serves them as tasks that end
//! with the actor. The authenticated kubelet API on `port` (10250) is [`secure`]. Every
//! listener serves its connections through [`listener`], under the same bounds (connection
//! cap, header and setup timeouts, head and body sizes), with a handler's panic answered 500
//! ([`panics`]).

mod api;
mod exposition;
mod listener;
mod panics;
mod routes;
mod secure;

use std::net::SocketAddr;

use actix::{Actor, Context};
use metrics_exporter_prometheus::PrometheusHandle;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::config_feed::ConfigState;
use crate::pod_manager::PodManager;
use sergeant_messages::pods::SourceSnapshot;
use sergeant_supervisor::failpoint;
use sergeant_supervisor::{ChildEnv, ChildRef, Supervisor};

pub use routes::Endpoints;
use secure::TlsSettings;

/// What the server needs from the rest of the agent.
#[derive(Clone)]
pub struct ServerDeps {
    /// The root supervisor, for `/debug/supervision` and `/healthz`.
    pub root: ChildRef<Supervisor>,
    /// The Prometheus recorder's handle, for `/metrics`.
    pub metrics: PrometheusHandle,
    /// The live configuration, for `/debug/config` and the listen addresses.
    pub config: watch::Receiver<ConfigState>,
    /// The pod manager, for `/pods`.
    pub pods: ChildRef<PodManager>,
    /// When PLEG last relisted, for `/healthz`.
    pub pleg: watch::Receiver<Option<std::time::Instant>>,
    /// The static pod source's view, for `/debug/sources`.
    pub file_source: watch::Receiver<SourceSnapshot>,
    /// The API pod source's view (never synced when standalone), for `/debug/sources`.
    pub api_source: watch::Receiver<SourceSnapshot>,
    /// The API server client in managed mode: tokens and authorization are checked with it.
    pub api: Option<kube::Client>,
    /// The runtime, for container logs and commands.
    pub port: crate::runtime::RuntimePort,
}

/// Serves `/healthz` on `healthzBindAddress:healthzPort` and, when `readOnlyPort` is set, the
/// unauthenticated read-only endpoints on `address:readOnlyPort`.
pub struct Server {
    env: ChildEnv,
    deps: ServerDeps,
    tasks: Vec<JoinHandle<()>>,
}

impl Server {
    /// A server that will bind when started.
    #[must_use]
    pub fn new(env: &ChildEnv, deps: ServerDeps) -> Self {
        Self {
            env: env.clone(),
            deps,
            tasks: Vec::new(),
        }
    }

    fn listen(&mut self) -> Result<Vec<String>, String> {
        failpoint::check("server::listen").map_err(|fault| fault.to_string())?;
        panics::describe();
        let config = self.deps.config.borrow().active.clone();
        let kubelet = &config.kubelet;
        let mut serving = Vec::new();
        if kubelet.healthz_port != 0 {
            let healthz = SocketAddr::new(kubelet.healthz_bind_address, kubelet.healthz_port);
            self.tasks
                .push(serve_plain(healthz, Endpoints::Healthz, &self.deps)?);
            serving.push(format!("healthz on {healthz}"));
        }
        if kubelet.read_only_port != 0 {
            let read_only = SocketAddr::new(kubelet.address, kubelet.read_only_port);
            self.tasks
                .push(serve_plain(read_only, Endpoints::ReadOnly, &self.deps)?);
            serving.push(format!("read-only on {read_only}"));
        }
        if kubelet.port != 0 {
            let secure = SocketAddr::new(kubelet.address, kubelet.port);
            let tls = TlsSettings {
                cert_file: kubelet.tls_cert_file.clone(),
                key_file: kubelet.tls_private_key_file.clone(),
                client_ca_file: kubelet.authentication.x509.client_ca_file.clone(),
                cert_dir: config.command_line.root_dir.join("pki"),
                node_name: config.node_name().map_err(|e| e.to_string())?,
                node_ip: config.command_line.node_ip,
                min_version: kubelet.tls_min_version,
                cipher_suites: kubelet.tls_cipher_suites.clone(),
            };
            let router = routes::router(Endpoints::Authenticated, self.deps.clone());
            self.tasks.push(secure::serve(
                secure,
                kubelet,
                &tls,
                self.deps.api.clone(),
                router,
            )?);
            serving.push(format!("the kubelet API (TLS) on {secure}"));
        }
        Ok(serving)
    }
}

/// Serves `endpoints` on `addr` in plain HTTP.
fn serve_plain(
    addr: SocketAddr,
    endpoints: Endpoints,
    deps: &ServerDeps,
) -> Result<JoinHandle<()>, String> {
    let router = routes::router(endpoints, deps.clone());
    listener::serve(addr, endpoints, listener::Plain, router)
}

impl Actor for Server {
    type Context = Context<Self>;

    fn started(&mut self, ctx: &mut Context<Self>) {
        match self.listen() {
            Ok(serving) => {
                tracing::info!("serving {}", serving.join(", "));
                self.env
                    .set_status(format!("serving {}", serving.join(", ")));
            }
            Err(reason) => self.env.fail(ctx, reason),
        }
    }

    fn stopped(&mut self, _: &mut Context<Self>) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}
