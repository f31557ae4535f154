//! `kubectl get --watch` in the background: when each change of the Node's pressure condition
//! and of the scenario's pods reached the benchmark.

use std::io::{BufRead, BufReader};
use std::process::Child;
use std::sync::mpsc::Receiver;
use std::time::SystemTime;

use crate::common::cluster::Cluster;
use crate::pressure::Pressure;

/// A `kubectl get --watch` printing one line per event, each line with when it arrived;
/// stopped when dropped.
pub struct Watch {
    child: Child,
    lines: Receiver<(SystemTime, String)>,
}

impl Watch {
    /// Watches what `args` (after `get`) name, printing each event with the JSONPath `template`.
    pub fn start(cluster: &Cluster, args: &[&str], template: &str) -> Self {
        let output = format!("jsonpath={template}{{\"\\n\"}}");
        let mut child =
            cluster.kubectl_spawn(&[&["get"], args, &["--watch", "-o", &output]].concat());
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender
                    .send((SystemTime::now(), line.trim().to_owned()))
                    .is_err()
                {
                    break;
                }
            }
        });
        Self { child, lines }
    }

    /// The lines that arrived since the last call.
    pub fn arrived(&self) -> Vec<(SystemTime, String)> {
        self.lines.try_iter().collect()
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The watches of one scenario: the Node's pressure condition, and the scenario's pods.
pub struct Watches {
    /// The Node's condition status, one line per event.
    pub node: Watch,
    /// `<name> <phase> <reason>` of the scenario's pods, one line per event.
    pub pods: Watch,
}

impl Watches {
    /// Starts watching Node `node`'s condition of `pressure` and the pods labelled
    /// `bench=<label>`.
    pub fn start(cluster: &Cluster, node: &str, label: &str, pressure: Pressure) -> Self {
        let condition = format!(
            "{{.status.conditions[?(@.type==\"{}\")].status}}",
            pressure.condition()
        );
        let selector = format!("bench={label}");
        Self {
            node: Watch::start(cluster, &["node", node], &condition),
            pods: Watch::start(
                cluster,
                &["pods", "-n", "default", "-l", &selector],
                "{.metadata.name} {.status.phase} {.status.reason}",
            ),
        }
    }
}
