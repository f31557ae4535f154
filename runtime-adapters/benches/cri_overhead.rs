//! What `CriClient` costs over a bare tonic client: `version`, `list_containers` and
//! `image_status` through each, on the same socket, p50/p99 per operation and the difference.
//!
//! After `WARMUP` unmeasured calls of each, a round makes `N` calls per operation per client,
//! interleaved call by call (which client goes first alternates from call to call, and from
//! round to round, so neither always meets a warm runtime cache), and takes each client's
//! p50 and p99 per operation and their difference. `SERGEANT_BENCH_ROUNDS` rounds (default
//! 3, see `benches/common/rounds.rs` of the workspace, shared with the other benchmarks),
//! each printed as it comes; at the end the median, min and max over the rounds of every
//! number, per client and for the difference (`overhead`).
//!
//! Needs `SERGEANT_CRI_ENDPOINT` (the node env's containerd). Writes every round and the
//! summary as JSON to `$SERGEANT_RESULTS_DIR/cri_overhead.json` (default
//! `target/bench-results/` in the workspace).

#[path = "../../benches/common/rounds.rs"]
mod rounds;
#[path = "../../benches/common/stats.rs"]
mod stats;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use hyper_util::rt::TokioIo;
use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::{
    ImageSpec, ImageStatusRequest, ListContainersRequest, PullImageRequest, VersionRequest,
};
use rounds::Rounds;
use serde_json::{json, Value};
use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::{image_named, CriClient};
use tokio::net::UnixStream;
use tonic::transport::{Channel, Uri};
use tower::service_fn;

/// Measured calls per operation, client and round.
const N: usize = 200;
/// Unmeasured calls per operation and client before the first round.
const WARMUP: usize = 10;
/// The image `image_status` asks about (pulled first).
const IMAGE: &str = "127.0.0.1:5000/sergeant/shell:1.0";
/// The operations measured, by the index [`wrapped_call`] and [`bare_call`] take.
const OPERATIONS: [&str; 3] = ["version", "list_containers", "image_status"];

/// Any error that ends the benchmark.
type BoxError = Box<dyn std::error::Error>;

/// Runs the benchmark; an error ends it with exit code 1.
fn main() {
    if let Err(e) = run() {
        eprintln!("cri_overhead: {e}");
        std::process::exit(1);
    }
}

/// Measures on the containerd at `SERGEANT_CRI_ENDPOINT`, a unix socket.
fn run() -> Result<(), BoxError> {
    let raw = std::env::var("SERGEANT_CRI_ENDPOINT").map_err(|_| {
        "SERGEANT_CRI_ENDPOINT is not set (e.g. unix:///run/sergeant-node/main/containerd.sock; \
         start it with deploy/node-env/node-env.sh up)"
    })?;
    let endpoint = Endpoint::parse(&raw)?;
    let Endpoint::Unix(socket) = endpoint.clone() else {
        return Err(format!("{endpoint}: the benchmark needs a unix socket").into());
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(bench(endpoint, socket))
}

/// One round's latencies per operation (by index in [`OPERATIONS`]), for both clients.
struct Samples {
    /// Through `CriClient`.
    wrapped: Vec<Vec<Duration>>,
    /// Through the bare tonic clients.
    bare: Vec<Vec<Duration>>,
}

/// Pulls the image, connects both clients to `socket`, and runs the warm-up and the rounds.
async fn bench(endpoint: Endpoint, socket: PathBuf) -> Result<(), BoxError> {
    // Record metrics for real, as the agent does: their cost is part of the overhead.
    let _metrics = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    let client = CriClient::for_endpoint(endpoint.clone())?;
    client
        .call(PullImageRequest {
            image: Some(image_named(IMAGE)),
            ..PullImageRequest::default()
        })
        .await?;

    let channel = tonic::transport::Endpoint::from_static("http://localhost")
        .connect_with_connector(service_fn(move |_: Uri| {
            let socket = socket.clone();
            async move { UnixStream::connect(socket).await.map(TokioIo::new) }
        }))
        .await?;
    let bare_runtime = RuntimeServiceClient::new(channel.clone());
    let bare_image = ImageServiceClient::new(channel);

    let bare = (bare_runtime, bare_image);
    let mut rounds = Rounds::new(
        "cri_overhead.json",
        json!({
            "benchmark": "cri_overhead",
            "endpoint": endpoint.to_string(),
            "unit": "microseconds",
            "calls_per_round": N,
            "warmup_calls": WARMUP,
        }),
    );
    println!("cri_overhead: {N} calls per operation per client and round on {endpoint} (µs)");
    interleaved(&client, &bare, WARMUP, 0).await?;
    for round in 0..rounds.count() {
        let samples = interleaved(&client, &bare, N, round).await?;
        println!("--- round {}/{}", round + 1, rounds.count());
        let [wrapped, bare, overhead] = summarize(samples);
        rounds.record("cri_client", wrapped);
        rounds.record("bare_tonic", bare);
        rounds.record("overhead", overhead);
    }
    rounds.finish();
    Ok(())
}

/// `calls` calls of every operation through each client, interleaved call by call: which
/// client goes first alternates from call to call, starting with the other one each round.
async fn interleaved(
    client: &CriClient,
    (bare_runtime, bare_image): &(RuntimeServiceClient<Channel>, ImageServiceClient<Channel>),
    calls: usize,
    round: usize,
) -> Result<Samples, BoxError> {
    let mut samples = Samples {
        wrapped: vec![Vec::with_capacity(calls); OPERATIONS.len()],
        bare: vec![Vec::with_capacity(calls); OPERATIONS.len()],
    };
    for call in 0..calls {
        for op in 0..OPERATIONS.len() {
            let first_wrapped = (call + round).is_multiple_of(2);
            for wrapped in [first_wrapped, !first_wrapped] {
                let started = Instant::now();
                if wrapped {
                    wrapped_call(client, op).await?;
                    samples.wrapped[op].push(started.elapsed());
                } else {
                    bare_call(bare_runtime, bare_image, op).await?;
                    samples.bare[op].push(started.elapsed());
                }
            }
        }
    }
    Ok(samples)
}

/// One round's numbers, printed as a table: per operation the p50 and p99 in µs through
/// `CriClient`, through the bare clients, and their difference.
fn summarize(mut samples: Samples) -> [Value; 3] {
    println!(
        "{:<16} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "operation", "cri p50", "bare p50", "cri p99", "bare p99", "Δ p50", "Δ p99"
    );
    let (mut wrapped, mut bare, mut overhead) = (json!({}), json!({}), json!({}));
    for (op, name) in OPERATIONS.iter().enumerate() {
        let (w, b) = (&mut samples.wrapped[op], &mut samples.bare[op]);
        w.sort();
        b.sort();
        let micros = |sorted: &[Duration], p: f64| stats::percentile(sorted, p) * 1e3;
        let (w50, w99, b50, b99) = (
            micros(w, 0.50),
            micros(w, 0.99),
            micros(b, 0.50),
            micros(b, 0.99),
        );
        println!(
            "{name:<16} {w50:>12.1} {b50:>12.1} {w99:>12.1} {b99:>12.1} {:>10.1} {:>10.1}",
            w50 - b50,
            w99 - b99
        );
        wrapped[name] = json!({"p50_us": w50, "p99_us": w99});
        bare[name] = json!({"p50_us": b50, "p99_us": b99});
        overhead[name] = json!({"p50_us": w50 - b50, "p99_us": w99 - b99});
    }
    [wrapped, bare, overhead]
}

/// One call of operation `op` through `CriClient`.
async fn wrapped_call(client: &CriClient, op: usize) -> Result<(), BoxError> {
    match op {
        0 => drop(client.call(VersionRequest::default()).await?),
        1 => drop(client.call(ListContainersRequest { filter: None }).await?),
        _ => drop(
            client
                .call(ImageStatusRequest {
                    image: Some(image_named(IMAGE)),
                    verbose: false,
                })
                .await?,
        ),
    }
    Ok(())
}

/// One call of operation `op` through the bare tonic clients.
async fn bare_call(
    runtime: &RuntimeServiceClient<Channel>,
    image: &ImageServiceClient<Channel>,
    op: usize,
) -> Result<(), BoxError> {
    match op {
        0 => drop(
            runtime
                .clone()
                .version(VersionRequest {
                    version: "v1".into(),
                })
                .await?,
        ),
        1 => drop(
            runtime
                .clone()
                .list_containers(ListContainersRequest { filter: None })
                .await?,
        ),
        _ => drop(
            image
                .clone()
                .image_status(ImageStatusRequest {
                    image: Some(ImageSpec {
                        image: IMAGE.into(),
                        ..ImageSpec::default()
                    }),
                    verbose: false,
                })
                .await?,
        ),
    }
    Ok(())
}
