//! [`Relay`]: a TCP relay on loopback to the API server, between one sergeant and the shared
//! control plane, that a test can break in the two ways a network breaks: loudly (every
//! connection reset and new ones refused, [`Relay::cut`]) or silently (the connections open at
//! one moment stop carrying bytes, with no FIN, no RST and no error,
//! [`Relay::silence_open_connections`]). It keeps its port for its whole life, so nobody else
//! can take the port between a cut and a [`Relay::resume`].

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// What the relay's threads share.
#[derive(Default)]
struct Shared {
    stop: AtomicBool,
    refusing: AtomicBool,
    /// Connections are numbered from 1 as they are accepted.
    accepted: AtomicU64,
    /// Connections numbered up to this one carry nothing any more.
    silenced_up_to: AtomicU64,
    /// Both sockets of every relayed connection, to reset them on a cut.
    open: Mutex<Vec<TcpStream>>,
}

/// The relay; it resets every connection and stops when dropped.
pub struct Relay {
    /// The loopback port it listens on.
    pub port: u16,
    shared: Arc<Shared>,
    accept: Option<JoinHandle<()>>,
}

impl Relay {
    /// Listens on a free loopback port and relays every connection to `upstream`
    /// (`host:port`).
    pub fn start(upstream: &str) -> Self {
        let listener = TcpListener::bind(("127.0.0.1", 0)).expect("a relay port");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("the relay address").port();
        let shared = Arc::new(Shared::default());
        let (state, upstream) = (Arc::clone(&shared), upstream.to_owned());
        let accept = std::thread::spawn(move || {
            while !state.stop.load(Ordering::SeqCst) {
                let Ok((client, _)) = listener.accept() else {
                    std::thread::sleep(Duration::from_millis(10));
                    continue;
                };
                if state.refusing.load(Ordering::SeqCst) {
                    let _ = client.shutdown(Shutdown::Both);
                    continue;
                }
                let Ok(server) = TcpStream::connect(&upstream) else {
                    continue;
                };
                let _ = client.set_nonblocking(false);
                let number = state.accepted.fetch_add(1, Ordering::SeqCst) + 1;
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let (from, to) = (from.try_clone().unwrap(), to.try_clone().unwrap());
                    let state = Arc::clone(&state);
                    std::thread::spawn(move || pump(from, to, number, &state));
                }
                state.open.lock().unwrap().extend([client, server]);
            }
        });
        Self {
            port,
            shared,
            accept: Some(accept),
        }
    }

    /// A relay to the API server of `cluster`.
    pub fn to_apiserver(cluster: &super::cluster::Cluster) -> Self {
        Self::start(cluster.apiserver().trim_start_matches("https://"))
    }

    /// `https://127.0.0.1:<port>`: the API server's serving certificate covers 127.0.0.1.
    pub fn url(&self) -> String {
        format!("https://127.0.0.1:{}", self.port)
    }

    /// Resets every connection through the relay, and every new one until [`Relay::resume`].
    pub fn cut(&mut self) {
        self.shared.refusing.store(true, Ordering::SeqCst);
        for connection in self.shared.open.lock().unwrap().drain(..) {
            let _ = connection.shutdown(Shutdown::Both);
        }
    }

    /// Relays again.
    pub fn resume(&mut self) {
        self.shared.refusing.store(false, Ordering::SeqCst);
    }

    /// Every connection open now goes silent both ways, and stays open; connections opened
    /// later are relayed. Returns how many went silent.
    pub fn silence_open_connections(&self) -> u64 {
        let open = self.shared.accepted.load(Ordering::SeqCst);
        self.shared.silenced_up_to.store(open, Ordering::SeqCst);
        open
    }

    /// Connections relayed so far.
    pub fn accepted(&self) -> u64 {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.cut();
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(accept) = self.accept.take() {
            let _ = accept.join();
        }
    }
}

/// Copies `from` to `to` until either end closes, then closes `to`; once connection `number`
/// is silenced, what arrives is read and dropped and nothing is closed, so neither peer hears
/// anything.
fn pump(mut from: TcpStream, mut to: TcpStream, number: u64, state: &Shared) {
    let silenced = || number <= state.silenced_up_to.load(Ordering::SeqCst);
    let mut buffer = [0u8; 16 * 1024];
    loop {
        let read = match from.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if silenced() {
            continue;
        }
        if to.write_all(&buffer[..read]).is_err() {
            break;
        }
    }
    if !silenced() {
        let _ = to.shutdown(Shutdown::Both);
    }
}
