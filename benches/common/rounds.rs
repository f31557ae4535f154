//! Repeated, interleaved rounds: how every benchmark compares the agents it measures, and its
//! results file.
//!
//! Each agent runs [`count`] rounds (`SERGEANT_BENCH_ROUNDS`, default 3). In round `r` the
//! agents go in their order rotated by `r` ([`order`]): with two, each goes first in every
//! other round (sergeant, upstream; upstream, sergeant; ...), so that neither always runs on
//! the warmer or the colder machine. A round's numbers are a JSON object: every number in it,
//! at any depth of nested objects, is a metric (named by its path, `110_pods.started_ms`);
//! other values (an `error`, a log's path) are kept but not summarised. The benchmark prints a
//! round's numbers as they come; [`Rounds::finish`] prints, per metric and agent, the median,
//! the min and the max over the rounds, and the results file holds every round and that
//! summary. The file is written again after every round, so a run stopped early keeps the
//! rounds it finished.
//!
//! Shared by the benchmarks of both packages: the sergeant package's include it through
//! `benches/common`, `runtime-adapters/benches/cri_overhead.rs` by its path. It needs only
//! `std` and `serde_json`.
#![allow(dead_code)] // each benchmark uses its own part

use std::collections::BTreeMap;
use std::fs;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

/// The environment variable that sets the rounds per agent.
pub const ROUNDS_VAR: &str = "SERGEANT_BENCH_ROUNDS";
/// Rounds per agent when [`ROUNDS_VAR`] is not set.
pub const DEFAULT_ROUNDS: usize = 3;

/// Rounds per agent: `$SERGEANT_BENCH_ROUNDS`, or [`DEFAULT_ROUNDS`]. Ends the benchmark with
/// a message (exit code 2) when it is 0 or not a whole number: such a run would measure
/// nothing.
pub fn count() -> usize {
    let Some(raw) = std::env::var_os(ROUNDS_VAR) else {
        return DEFAULT_ROUNDS;
    };
    let text = raw.to_string_lossy();
    match text.trim().parse::<usize>() {
        Ok(0) => refuse("0 rounds would measure nothing: set it to 1 or more, or unset it for 3"),
        Ok(rounds) => rounds,
        Err(_) => refuse(&format!(
            "{text:?} is not a whole number of rounds per agent (unset it for 3)"
        )),
    }
}

/// Says why [`ROUNDS_VAR`] is refused and ends the benchmark.
fn refuse(why: &str) -> ! {
    eprintln!("{ROUNDS_VAR}: {why}");
    std::process::exit(2)
}

/// The agents in the order they go in round `round`: `agents` rotated left by `round`.
pub fn order<T>(agents: &[T], round: usize) -> impl Iterator<Item = &T> {
    let first = if agents.is_empty() {
        0
    } else {
        round % agents.len()
    };
    agents[first..].iter().chain(&agents[..first])
}

/// Where results files go (made if missing): `$SERGEANT_RESULTS_DIR`, or
/// `target/bench-results` of the workspace (the nearest directory above the including
/// package that holds `Cargo.lock`).
pub fn results_dir() -> PathBuf {
    let dir = std::env::var_os("SERGEANT_RESULTS_DIR").map_or_else(
        || {
            let package = Path::new(env!("CARGO_MANIFEST_DIR"));
            package
                .ancestors()
                .find(|dir| dir.join("Cargo.lock").is_file())
                .unwrap_or(package)
                .join("target/bench-results")
        },
        PathBuf::from,
    );
    fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

/// Writes `report` to `file` in [`results_dir`]; the path written.
pub fn write_results(file: &str, report: &Value) -> PathBuf {
    let path = results_dir().join(file);
    let text = serde_json::to_string_pretty(report).expect("json") + "\n";
    fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    path
}

/// The rounds of one benchmark run: each agent's numbers, round by round, kept in its results
/// file.
pub struct Rounds {
    /// The results file's name.
    file: String,
    /// What the benchmark says of the whole run (its name, the runtime, its sizes).
    report: Value,
    /// Rounds per agent.
    count: usize,
    /// The agents' names, in the order they were first recorded.
    agents: Vec<String>,
    /// Each agent's rounds so far.
    rounds: BTreeMap<String, Vec<Value>>,
}

impl Rounds {
    /// A run of [`count`] rounds per agent, written to `file` with `report`'s fields.
    pub fn new(file: &str, report: Value) -> Self {
        let count = count();
        println!("{count} rounds per agent, interleaved ({ROUNDS_VAR})");
        Self {
            file: file.to_owned(),
            report,
            count,
            agents: Vec::new(),
            rounds: BTreeMap::new(),
        }
    }

    /// Rounds per agent.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Runs every round: in round `r`, `measure(agent, r)` for each of `agents` in the
    /// [`order`] of round `r`, each recorded under `name(agent)`. A round that panics is
    /// recorded as `{"error": <its message>}` and the run goes on.
    pub fn run<A>(
        &mut self,
        agents: &[A],
        name: impl Fn(&A) -> String,
        mut measure: impl FnMut(&A, usize) -> Value,
    ) {
        for round in 0..self.count {
            for agent in order(agents, round) {
                let name = name(agent);
                println!("--- round {}/{}: {name}", round + 1, self.count);
                let numbers = catch_unwind(AssertUnwindSafe(|| measure(agent, round)))
                    .unwrap_or_else(|panic| {
                        let why = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_else(|| "the round panicked".to_owned());
                        println!("{name:>16}: round {} not measured: {why}", round + 1);
                        json!({ "error": why })
                    });
                self.record(&name, numbers);
            }
        }
    }

    /// Records one round of `agent` and writes the results file again.
    pub fn record(&mut self, agent: &str, numbers: Value) {
        if !self.agents.iter().any(|a| a == agent) {
            self.agents.push(agent.to_owned());
        }
        self.rounds
            .entry(agent.to_owned())
            .or_default()
            .push(numbers);
        write_results(&self.file, &self.report(false));
    }

    /// Prints the summary (per metric: each agent's median, min and max over its rounds) and
    /// writes the results file a last time.
    pub fn finish(self) {
        self.print_summary();
        let path = write_results(&self.file, &self.report(true));
        println!("results in {}", path.display());
    }

    /// The results file: the benchmark's fields, the rounds per agent, every round of every
    /// agent (`rounds`), the summary (`summary`: agent → metric → median, min, max and how
    /// many rounds had it) and whether all rounds ran (`complete`).
    fn report(&self, complete: bool) -> Value {
        let mut report = self.report.clone();
        report["rounds_per_agent"] = json!(self.count);
        report["complete"] = json!(complete);
        report["rounds"] = json!(self.rounds);
        let summary: Map<String, Value> = self
            .agents
            .iter()
            .map(|agent| {
                let metrics: Map<String, Value> = self
                    .metrics(agent)
                    .into_iter()
                    .map(|(metric, s)| {
                        let value = json!({"median": s.median, "min": s.min, "max": s.max, "rounds": s.rounds});
                        (metric, value)
                    })
                    .collect();
                (agent.clone(), Value::Object(metrics))
            })
            .collect();
        report["summary"] = Value::Object(summary);
        report
    }

    /// Every metric of `agent`'s rounds, in the order first met, with its summary.
    fn metrics(&self, agent: &str) -> Vec<(String, Summary)> {
        let mut values: Vec<(String, Vec<f64>)> = Vec::new();
        for round in self.rounds.get(agent).into_iter().flatten() {
            let mut numbers = Vec::new();
            flatten("", round, &mut numbers);
            for (metric, value) in numbers {
                match values.iter_mut().find(|(m, _)| *m == metric) {
                    Some((_, all)) => all.push(value),
                    None => values.push((metric, vec![value])),
                }
            }
        }
        values
            .into_iter()
            .map(|(metric, all)| (metric, Summary::of(all)))
            .collect()
    }

    /// Prints a table: a row per metric, a column per agent, `median (min–max)`.
    fn print_summary(&self) {
        let per_agent: Vec<Vec<(String, Summary)>> =
            self.agents.iter().map(|a| self.metrics(a)).collect();
        let mut metrics: Vec<&str> = Vec::new();
        for (metric, _) in per_agent.iter().flatten() {
            if !metrics.contains(&metric.as_str()) {
                metrics.push(metric);
            }
        }
        let width = metrics.iter().map(|m| m.len()).max().unwrap_or(0).max(6);
        println!(
            "summary over {} rounds per agent: median (min–max)",
            self.count
        );
        let mut header = format!("{:<width$}", "metric");
        for agent in &self.agents {
            header.push_str(&format!(" {agent:>30}"));
        }
        println!("{header}");
        for metric in metrics {
            let mut line = format!("{metric:<width$}");
            for agent in &per_agent {
                let cell = agent
                    .iter()
                    .find(|(m, _)| m == metric)
                    .map_or_else(|| "—".to_owned(), |(_, s)| s.cell(self.count));
                line.push_str(&format!(" {cell:>30}"));
            }
            println!("{line}");
        }
    }
}

/// The numbers of `value` (at any depth of objects), each named by its path below `prefix`.
fn flatten(prefix: &str, value: &Value, into: &mut Vec<(String, f64)>) {
    match value {
        Value::Number(n) => {
            if let Some(n) = n.as_f64() {
                into.push((prefix.to_owned(), n));
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields {
                let path = if prefix.is_empty() {
                    key.clone()
                } else {
                    format!("{prefix}.{key}")
                };
                flatten(&path, field, into);
            }
        }
        _ => {}
    }
}

/// One metric of one agent over its rounds.
struct Summary {
    median: f64,
    min: f64,
    max: f64,
    /// How many rounds had the metric.
    rounds: usize,
}

impl Summary {
    /// The summary of `values` (at least one).
    fn of(mut values: Vec<f64>) -> Self {
        values.sort_by(f64::total_cmp);
        let n = values.len();
        let median = if n % 2 == 1 {
            values[n / 2]
        } else {
            (values[n / 2 - 1] + values[n / 2]) / 2.0
        };
        Self {
            median,
            min: values[0],
            max: values[n - 1],
            rounds: n,
        }
    }

    /// `median (min–max)`, with `[n rounds]` when fewer than `count` rounds had the metric.
    fn cell(&self, count: usize) -> String {
        let mut cell = format!(
            "{} ({}–{})",
            short(self.median),
            short(self.min),
            short(self.max)
        );
        if self.rounds < count {
            cell.push_str(&format!(" [{} rounds]", self.rounds));
        }
        cell
    }
}

/// `n` with three or four significant digits.
fn short(n: f64) -> String {
    match n.abs() {
        a if a >= 100.0 => format!("{n:.0}"),
        a if a >= 10.0 => format!("{n:.1}"),
        _ => format!("{n:.2}"),
    }
}
