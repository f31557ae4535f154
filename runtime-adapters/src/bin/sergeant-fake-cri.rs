//! `sergeant-fake-cri ENDPOINT`: the fake runtime served as a CRI runtime and image service on
//! `ENDPOINT` (`npipe://./pipe/NAME` on Windows, `unix:///path/to/socket` elsewhere), until
//! Ctrl-C.
//!
//! Why it exists: a Windows node's CRI path (named pipe, gRPC, the pod path above) can be run
//! end to end under Wine, where no containerd runs. Point `sergeant --container-runtime-endpoint`
//! at the same endpoint. Prints `serving ENDPOINT` once the endpoint accepts connections.

use std::process::ExitCode;

use actix::Actor;
use sergeant_config::Endpoint;
use sergeant_runtime_adapters::fake::grpc;
use sergeant_runtime_adapters::fake::{FakeAdapter, FakeRuntime};

/// Exit code for a missing or malformed endpoint argument.
const EXIT_USAGE: u8 = 2;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let (Some(raw), None) = (args.next(), args.next()) else {
        eprintln!("usage: sergeant-fake-cri ENDPOINT (npipe://./pipe/NAME or unix:///path)");
        return ExitCode::from(EXIT_USAGE);
    };
    let endpoint = match Endpoint::parse(&raw) {
        Ok(endpoint) => endpoint,
        Err(error) => {
            eprintln!("sergeant-fake-cri: {error}");
            return ExitCode::from(EXIT_USAGE);
        }
    };
    let served = actix_rt::System::new().block_on(async {
        let listener = grpc::Listener::bind(&endpoint)?;
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
