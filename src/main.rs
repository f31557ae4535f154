//! `sergeant`: the node agent binary. Wiring only — parse the command line, load the
//! configuration, set up logging and metrics, start the supervision tree, and turn its end
//! into the process exit code.

mod adapters;
mod cli;
mod event_log;
mod log_file;
mod logging;
mod memory;
mod service;
mod stop_signal;
mod swap;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use sergeant_actors::{config_feed, tree};
use sergeant_config::NodeConfig;
use sergeant_kube_api::{client_from_kubeconfig, ApiRateLimit};
use sergeant_supervisor::{metrics, start_root, RestartPolicy, RootExit, TreeHealth};

use crate::log_file::{LogFileError, LogFileSettings, RotatingFile};
use crate::service::ServiceLink;

/// Exit code for a configuration that cannot be used.
const EXIT_BAD_CONFIG: u8 = 2;
/// Exit code when the root supervisor gave up.
const EXIT_GAVE_UP: u8 = 1;
/// Exit code when the agent could not be started (logging, metrics, the API client).
const EXIT_FAILED: u8 = 1;

fn main() -> ExitCode {
    memory::limit_allocator_arenas();
    let cli = cli::Cli::parse();
    if cli.windows_service {
        return match service::run_as_service(move |link| agent(&cli, Some(link))) {
            Ok(code) => ExitCode::from(code),
            Err(err) => {
                eprintln!("sergeant: {err}");
                ExitCode::from(EXIT_BAD_CONFIG)
            }
        };
    }
    ExitCode::from(agent(&cli, None))
}

/// Loads the configuration and runs the agent until it stops (as a service when `service`
/// links it to the service manager); the process exit code.
fn agent(cli: &cli::Cli, service: Option<ServiceLink>) -> u8 {
    // A service has no console: what stops it before logging is set up goes to the Event Log.
    let as_service = service.is_some();
    let failed = |code: u8, message: String| {
        eprintln!("{message}");
        if as_service {
            event_log::report_error(&message);
        }
        code
    };
    let flags = cli.overrides();
    let config = match NodeConfig::load(&cli.config, &flags) {
        Ok(config) => config,
        Err(err) => {
            return failed(
                EXIT_BAD_CONFIG,
                format!("sergeant: invalid configuration: {err}"),
            );
        }
    };
    if let Err(reason) = swap::refuse_swap(&cli.config, &config) {
        return failed(
            EXIT_BAD_CONFIG,
            format!("sergeant: invalid configuration: {reason}"),
        );
    }
    let log_file = match open_log_file(cli) {
        Ok(file) => file,
        Err(err) => return failed(EXIT_BAD_CONFIG, format!("sergeant: {err}")),
    };
    match run(cli, flags, config, log_file, service) {
        Ok(code) => code,
        Err(err) => failed(EXIT_FAILED, format!("sergeant: {err:#}")),
    }
}

/// The `--log-file` the flags ask for, opened; `None` logs to stderr.
///
/// # Errors
/// A bad flag value, or a file that cannot be opened, named with its flag.
fn open_log_file(cli: &cli::Cli) -> Result<Option<RotatingFile>, LogFileError> {
    LogFileSettings::from_flags(cli.log_file.as_deref(), cli.log_file_max_size)?
        .map(|settings| RotatingFile::open(&settings))
        .transpose()
}

/// Threads for blocking work (file and cgroup writes, reading logs).
const BLOCKING_THREADS: usize = 8;

fn run(
    cli: &cli::Cli,
    flags: sergeant_config::FlagOverrides,
    config: NodeConfig,
    log_file: Option<RotatingFile>,
    mut service: Option<ServiceLink>,
) -> anyhow::Result<u8> {
    let verbosity = logging::init(&config.kubelet.logging, log_file, service.is_some())
        .context("setting up logging")?;
    if cli.log_file.is_none() && cli.log_file_max_size.is_some() {
        tracing::warn!("--log-file-max-size has no effect without --log-file");
    }
    let _failpoints = fail::FailScenario::setup();
    let prometheus = metrics_exporter_prometheus::PrometheusBuilder::new()
        .install_recorder()
        .context("installing the metrics recorder")?;
    metrics::describe();
    for warning in &config.warnings {
        tracing::warn!("configuration: {warning}");
    }

    let node_name = config.node_name().context("determining the node name")?;
    let policy = RestartPolicy::from_config(&config.sergeant.supervision);
    let shutdown_bound = policy.shutdown_timeout * 8;
    let kubeconfig = config.command_line.kubeconfig.clone();
    let api_limit = ApiRateLimit::new(config.kubelet.kube_api_qps, config.kubelet.kube_api_burst);
    let feed = config_feed::feed(cli.config.display().to_string(), config);

    // Few blocking threads: the file work of pod syncs is short, and every extra thread costs
    // memory (its stack and an allocator arena) that a node agent should not spend.
    let system = actix_rt::System::with_tokio_rt(|| {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(BLOCKING_THREADS)
            .build()
            .expect("a tokio runtime")
    });
    let exit = system.block_on(async move {
        // The client spawns its connection workers, so it is built inside the runtime.
        let api = match kubeconfig {
            Some(path) => Some(client_from_kubeconfig(&path, api_limit).await?),
            None => None,
        };
        let health = TreeHealth::new();
        let spec = tree::build(tree::TreeDeps {
            policy,
            config_path: cli.config.clone(),
            flags,
            config: feed,
            verbosity,
            metrics: prometheus,
            adapter_factory: adapters::factory(),
            node_name,
            api,
            server: sergeant_server::child_specs,
            health: health.clone(),
        });
        let root = start_root(&spec, &health);
        if let Some(link) = &service {
            link.report.running();
        }
        let trim = tokio::spawn(memory::trim_freed_memory());
        let mut stop = stop_signal::StopSignals::install()?;
        let exit = tokio::select! {
            exit = root.wait() => exit,
            name = stop.next() => { tracing::info!("{name}: shutting down"); root.shutdown(shutdown_bound).await }
            name = service::stop_requested(&mut service, shutdown_bound) => {
                tracing::info!("{name}: shutting down");
                root.shutdown(shutdown_bound).await
            }
        };
        trim.abort();
        anyhow::Ok(exit)
    })?;
    Ok(match exit {
        RootExit::Clean => {
            tracing::info!("stopped cleanly; pods on this node keep running");
            0
        }
        RootExit::GaveUp(reason) | RootExit::Crashed(reason) => {
            tracing::error!("root supervisor gave up, exiting: {reason}");
            EXIT_GAVE_UP
        }
    })
}
