//! What `CriClient` costs over a bare tonic client: N calls of `version`, `list_containers` and
//! `image_status` through each, on the same socket, p50/p99 per operation and the difference.
//!
//! Needs `SERGEANT_CRI_ENDPOINT` (the node env's containerd). Prints a table and writes the
//! numbers as JSON to `$SERGEANT_RESULTS_DIR/cri_overhead.json` (default
//! `target/bench-results/` in the workspace).

use std::path::{Path, PathBuf};
use std::time::Instant;

use hyper_util::rt::TokioIo;
use k8s_cri::v1::image_service_client::ImageServiceClient;
use k8s_cri::v1::runtime_service_client::RuntimeServiceClient;
use k8s_cri::v1::{ImageSpec, ImageStatusRequest, ListContainersRequest, VersionRequest};
use serde_json::json;
use sergeant_config::Endpoint;
use sergeant_runtime_adapters::cri::CriClient;
use tokio::net::UnixStream;
use tonic::transport::{Channel, Uri};
use tower::service_fn;

const N: usize = 200;
const WARMUP: usize = 10;
const IMAGE: &str = "127.0.0.1:5000/sergeant/shell:1.0";
const OPERATIONS: [&str; 3] = ["version", "list_containers", "image_status"];

type BoxError = Box<dyn std::error::Error>;

fn main() {
    if let Err(e) = run() {
        eprintln!("cri_overhead: {e}");
        std::process::exit(1);
    }
}

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

/// Per-operation latencies, in microseconds, for both clients.
struct Samples {
    wrapped: Vec<Vec<f64>>,
    bare: Vec<Vec<f64>>,
}

async fn bench(endpoint: Endpoint, socket: PathBuf) -> Result<(), BoxError> {
    // Record metrics for real, as the agent does: their cost is part of the overhead.
    let _metrics = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    let client = CriClient::for_endpoint(endpoint.clone())?;
    client.pull_image(IMAGE, None, None).await?;

    let channel = tonic::transport::Endpoint::from_static("http://localhost")
        .connect_with_connector(service_fn(move |_: Uri| {
            let socket = socket.clone();
            async move { UnixStream::connect(socket).await.map(TokioIo::new) }
        }))
        .await?;
    let bare_runtime = RuntimeServiceClient::new(channel.clone());
    let bare_image = ImageServiceClient::new(channel);

    let mut samples = Samples {
        wrapped: vec![Vec::with_capacity(N); OPERATIONS.len()],
        bare: vec![Vec::with_capacity(N); OPERATIONS.len()],
    };
    for round in 0..WARMUP + N {
        for op in 0..OPERATIONS.len() {
            // Alternate which client goes first, so neither always sees a warm runtime cache.
            let (first_wrapped, keep) = (round % 2 == 0, round >= WARMUP);
            for wrapped in [first_wrapped, !first_wrapped] {
                let started = Instant::now();
                if wrapped {
                    wrapped_call(&client, op).await?;
                } else {
                    bare_call(&bare_runtime, &bare_image, op).await?;
                }
                let micros = started.elapsed().as_secs_f64() * 1e6;
                if keep {
                    let into = if wrapped {
                        &mut samples.wrapped
                    } else {
                        &mut samples.bare
                    };
                    into[op].push(micros);
                }
            }
        }
    }
    report(&endpoint, &mut samples)
}

async fn wrapped_call(client: &CriClient, op: usize) -> Result<(), BoxError> {
    match op {
        0 => drop(client.version().await?),
        1 => drop(client.list_containers(None).await?),
        _ => drop(client.image_status(IMAGE, false).await?),
    }
    Ok(())
}

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

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (p / 100.0 * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn report(endpoint: &Endpoint, samples: &mut Samples) -> Result<(), BoxError> {
    println!("cri_overhead: {N} calls per operation per client on {endpoint} (µs)");
    println!(
        "{:<16} {:>12} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "operation", "cri p50", "bare p50", "cri p99", "bare p99", "Δ p50", "Δ p99"
    );
    let mut rows = Vec::new();
    for (op, name) in OPERATIONS.iter().enumerate() {
        for series in [&mut samples.wrapped[op], &mut samples.bare[op]] {
            series.sort_by(f64::total_cmp);
        }
        let (w, b) = (&samples.wrapped[op], &samples.bare[op]);
        let (w50, w99, b50, b99) = (
            percentile(w, 50.0),
            percentile(w, 99.0),
            percentile(b, 50.0),
            percentile(b, 99.0),
        );
        println!(
            "{name:<16} {w50:>12.1} {b50:>12.1} {w99:>12.1} {b99:>12.1} {:>10.1} {:>10.1}",
            w50 - b50,
            w99 - b99
        );
        rows.push(json!({
            "operation": name,
            "calls": N,
            "cri_client_us": { "p50": w50, "p99": w99 },
            "bare_tonic_us": { "p50": b50, "p99": b99 },
            "overhead_us": { "p50": w50 - b50, "p99": w99 - b99 },
        }));
    }
    let dir = std::env::var_os("SERGEANT_RESULTS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
            crate_dir
                .parent()
                .unwrap_or(crate_dir)
                .join("target/bench-results")
        });
    std::fs::create_dir_all(&dir)?;
    let path = dir.join("cri_overhead.json");
    let document = json!({
        "benchmark": "cri_overhead",
        "endpoint": endpoint.to_string(),
        "unit": "microseconds",
        "warmup_calls": WARMUP,
        "operations": rows,
    });
    std::fs::write(&path, serde_json::to_string_pretty(&document)? + "\n")?;
    println!("wrote {}", path.display());
    Ok(())
}
