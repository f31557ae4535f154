//! `sergeant-fake-cri ENDPOINT [--record FILE]`: the fake runtime served as a CRI runtime and
//! image service on `ENDPOINT` (`npipe://./pipe/NAME` on Windows, `unix:///path/to/socket`
//! elsewhere), until Ctrl-C.
//!
//! Why it exists: a Windows node's CRI path (named pipe, gRPC, the pod path above) can be run
//! end to end under Wine, where no containerd runs. Point `sergeant --container-runtime-endpoint`
//! at the same endpoint. Prints `serving ENDPOINT` once the endpoint accepts connections.
//!
//! With `--record FILE`, every RunPodSandbox, CreateContainer, PullImage and
//! UpdateContainerResources request is appended to FILE as one JSON line
//! (`{"method": ..., "request": ...}`) before it is answered, so what two node agents ask for
//! the same pod can be compared (tests/windows/cri_compare.sh).

use std::path::PathBuf;
use std::process::ExitCode;

use actix::Actor;
use sergeant_config::Endpoint;
use sergeant_runtime_adapters::fake::grpc::{self, Recorder};
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};

/// Exit code for missing or malformed arguments.
const EXIT_USAGE: u8 = 2;

/// The usage line printed on a malformed command line.
const USAGE: &str =
    "usage: sergeant-fake-cri ENDPOINT [--record FILE] (npipe://./pipe/NAME or unix:///path)";

/// The command line: the endpoint and where to record requests, if anywhere.
fn parse_args(mut args: impl Iterator<Item = String>) -> Option<(String, Option<PathBuf>)> {
    let endpoint = args.next()?;
    let record = match args.next().as_deref() {
        None => None,
        Some("--record") => Some(PathBuf::from(args.next()?)),
        Some(_) => return None,
    };
    args.next().is_none().then_some((endpoint, record))
}

fn main() -> ExitCode {
    let Some((raw, record)) = parse_args(std::env::args().skip(1)) else {
        eprintln!("{USAGE}");
        return ExitCode::from(EXIT_USAGE);
    };
    let endpoint = match Endpoint::parse(&raw) {
        Ok(endpoint) => endpoint,
        Err(error) => {
            eprintln!("sergeant-fake-cri: {error}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let recorder = match record.as_deref().map(Recorder::append_to).transpose() {
        Ok(recorder) => recorder,
        Err(error) => {
            eprintln!("sergeant-fake-cri: --record: {error}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let served = actix_rt::System::new().block_on(async {
        let mut listener = grpc::Listener::bind(&endpoint)?;
        if let Some(recorder) = recorder {
            listener = listener.recording(recorder);
        }
        println!("serving {endpoint}");
        let adapter = FakeAdapter::new(FakeRuntime::new()).start();
        let stop = async {
            // Without a Ctrl-C handler the server runs until it is killed, which is as good.
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        listener.serve(adapter, stop).await
    });
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("sergeant-fake-cri: {error}");
            ExitCode::FAILURE
        }
    }
}
