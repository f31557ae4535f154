//! Liveness-check latency while an agent is busy: [`Sampler`] asks a `/healthz` URL every
//! 20 ms, and [`FloorServer`] is the yardstick beside it — a one-thread HTTP server in the
//! bench's own process that does nothing but answer. Asked by the same kind of sampler in the
//! same burst, it shows how long any answer takes on the machine at that moment (the cores all
//! busy, dozens of threads runnable); an agent's excess over it is the agent's own delay.
//!
//! A check is one plain HTTP/1.1 request on a fresh connection from the sampler's own thread,
//! as a liveness probe makes it; no client library with threads of its own stands between the
//! timer and the socket, so the sampler adds no wake-ups of its own to what it measures.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How often a sampler asks.
const PERIOD: Duration = Duration::from_millis(20);
/// How long a check may take; a failed or slower one counts as this long.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Asks `http://<addr><path>` every [`PERIOD`] on a thread of its own until finished.
pub struct Sampler {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<Vec<Duration>>,
}

impl Sampler {
    /// Starts asking `url` (`http://host:port/path`).
    ///
    /// # Panics
    /// When `url` is not a plain-HTTP URL with a numeric address.
    pub fn start(url: &str) -> Self {
        let rest = url.strip_prefix("http://").expect("a plain-HTTP URL");
        let (addr, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let addr: SocketAddr = addr.parse().expect("a numeric address and port");
        let request = format!(
            "GET {} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n",
            if path.is_empty() { "/" } else { path }
        );
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::spawn(move || {
            let mut latencies = Vec::new();
            while !flag.load(Ordering::Relaxed) {
                let asked = Instant::now();
                let answered = check(addr, request.as_bytes());
                latencies.push(if answered {
                    asked.elapsed()
                } else {
                    CHECK_TIMEOUT
                });
                std::thread::sleep(PERIOD);
            }
            latencies
        });
        Self { stop, thread }
    }

    /// Stops asking; the latencies, sorted.
    pub fn finish(self) -> Vec<Duration> {
        self.stop.store(true, Ordering::Relaxed);
        let mut latencies = self.thread.join().unwrap_or_default();
        latencies.sort();
        latencies
    }
}

/// One check: whether `addr` answered `request` with a 200 within [`CHECK_TIMEOUT`].
fn check(addr: SocketAddr, request: &[u8]) -> bool {
    let Ok(mut stream) = TcpStream::connect_timeout(&addr, CHECK_TIMEOUT) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(CHECK_TIMEOUT));
    let _ = stream.set_nodelay(true);
    if stream.write_all(request).is_err() {
        return false;
    }
    let mut answer = Vec::new();
    stream.read_to_end(&mut answer).is_ok() && answer.starts_with(b"HTTP/1.1 200")
}

/// A one-thread HTTP server on a loopback port that answers every request `200 ok` and
/// closes the connection; it stops with the bench process.
pub struct FloorServer {
    /// `http://127.0.0.1:<port>/`.
    pub url: String,
}

impl FloorServer {
    /// Binds a free loopback port and starts answering on a thread of its own.
    ///
    /// # Panics
    /// When no loopback port can be bound.
    pub fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let url = format!(
            "http://{}/",
            listener.local_addr().expect("the bound address")
        );
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                answer(stream);
            }
        });
        Self { url }
    }
}

/// Reads one request's head from `stream` and answers it.
fn answer(mut stream: TcpStream) {
    let _ = stream.set_read_timeout(Some(CHECK_TIMEOUT));
    let mut head = Vec::new();
    let mut buffer = [0_u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buffer) {
            Ok(0) | Err(_) => return,
            Ok(read) => head.extend_from_slice(&buffer[..read]),
        }
    }
    let _ =
        stream.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok");
}
