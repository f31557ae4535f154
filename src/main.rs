//! `sergeant`: the node agent binary. Wiring only — parse the command line, load the
//! configuration, set up logging and metrics, start the supervision tree, and turn its end
//! into the process exit code.

mod adapters;
mod cli;
mod logging;
mod memory;
mod stop_signal;
mod swap;

use std::process::ExitCode;

use anyhow::Context as _;
use clap::Parser;
use sergeant_actors::{config_feed, tree};
use sergeant_config::NodeConfig;
use sergeant_kube_api::{client_from_kubeconfig, ApiRateLimit};
use sergeant_supervisor::{metrics, start_root, RestartPolicy, RootExit};

/// Exit code for a configuration that cannot be used.
const EXIT_BAD_CONFIG: u8 = 2;
/// Exit code when the root supervisor gave up.
const EXIT_GAVE_UP: u8 = 1;

fn main() -> ExitCode {
    memory::limit_allocator_arenas();
    let cli = cli::Cli::parse();
    let flags = cli.overrides();
    let config = match NodeConfig::load(&cli.config, &flags) {
        Ok(config) => config,
        Err(err) => {
            eprintln!("sergeant: invalid configuration: {err}");
            return ExitCode::from(EXIT_BAD_CONFIG);
        }
    };
    if let Err(reason) = swap::refuse_swap(&cli.config, &config) {
        eprintln!("sergeant: invalid configuration: {reason}");
        return ExitCode::from(EXIT_BAD_CONFIG);
    }
    match run(&cli, flags, config) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("sergeant: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Threads for blocking work (file and cgroup writes, reading logs).
const BLOCKING_THREADS: usize = 8;

fn run(
    cli: &cli::Cli,
    flags: sergeant_config::FlagOverrides,
    config: NodeConfig,
) -> anyhow::Result<ExitCode> {
    let verbosity = logging::init(&config.kubelet.logging).context("setting up logging")?;
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
        });
        let root = start_root(&spec);
        let trim = tokio::spawn(memory::trim_freed_memory());
        let mut stop = stop_signal::StopSignals::install()?;
        let exit = tokio::select! {
            exit = root.wait() => exit,
            name = stop.next() => { tracing::info!("{name}: shutting down"); root.shutdown(shutdown_bound).await }
        };
        trim.abort();
        anyhow::Ok(exit)
    })?;
    Ok(match exit {
        RootExit::Clean => {
            tracing::info!("stopped cleanly; pods on this node keep running");
            ExitCode::SUCCESS
        }
        RootExit::GaveUp(reason) | RootExit::Crashed(reason) => {
            tracing::error!("root supervisor gave up, exiting: {reason}");
            ExitCode::from(EXIT_GAVE_UP)
        }
    })
}
