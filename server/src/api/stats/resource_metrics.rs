//! `/metrics/resource`: the resource metrics the upstream kubelet serves for metrics-server
//! and autoscalers — node, pod and container CPU time and working-set memory, container start
//! times, and whether the scrape failed — rendered in the Prometheus text format from the
//! same Summary as `/stats/summary`.

use std::fmt::Write as _;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use sergeant_core::stats::summary::{CpuStats, MemoryStats, Summary};

/// The families, with their type and help text, in the order they are written.
const FAMILIES: [(&str, &str, &str); 7] = [
    (
        "node_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the node in core-seconds",
    ),
    (
        "node_memory_working_set_bytes",
        "gauge",
        "Current working set of the node in bytes",
    ),
    (
        "pod_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the pod in core-seconds",
    ),
    (
        "pod_memory_working_set_bytes",
        "gauge",
        "Current working set of the pod in bytes",
    ),
    (
        "container_cpu_usage_seconds_total",
        "counter",
        "Cumulative cpu time consumed by the container in core-seconds",
    ),
    (
        "container_memory_working_set_bytes",
        "gauge",
        "Current working set of the container in bytes",
    ),
    (
        "container_start_time_seconds",
        "gauge",
        "Start time of the container since unix epoch in seconds",
    ),
];

/// The resource metrics of `summary`, or only `resource_scrape_error 1` when there is none.
#[must_use]
pub fn render(summary: Option<&Summary>) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# HELP resource_scrape_error 1 if there was an error while getting container metrics, 0 otherwise\n# TYPE resource_scrape_error gauge\nresource_scrape_error {}",
        u8::from(summary.is_none())
    );
    let Some(summary) = summary else {
        return out;
    };
    let mut samples: Vec<(usize, String, f64, Option<i64>)> = Vec::new();
    let mut add = |family: usize, labels: String, value: Option<(f64, Option<i64>)>| {
        if let Some((value, at)) = value {
            samples.push((family, labels, value, at));
        }
    };
    add(0, String::new(), cpu(summary.node.cpu.as_ref()));
    add(1, String::new(), memory(summary.node.memory.as_ref()));
    for pod in &summary.pods {
        let (name, namespace) = (&pod.pod_ref.name, &pod.pod_ref.namespace);
        let pod_labels = format!("{{namespace=\"{namespace}\",pod=\"{name}\"}}");
        add(2, pod_labels.clone(), cpu(pod.cpu.as_ref()));
        add(3, pod_labels, memory(pod.memory.as_ref()));
        for container in &pod.containers {
            let labels = format!(
                "{{container=\"{}\",namespace=\"{namespace}\",pod=\"{name}\"}}",
                container.name
            );
            add(4, labels.clone(), cpu(container.cpu.as_ref()));
            add(5, labels.clone(), memory(container.memory.as_ref()));
            add(6, labels, Some((seconds(&container.start_time), None)));
        }
    }
    for (index, (family, kind, help)) in FAMILIES.iter().enumerate() {
        let _ = writeln!(out, "# HELP {family} {help}\n# TYPE {family} {kind}");
        for (_, labels, value, at) in samples.iter().filter(|s| s.0 == index) {
            match at {
                Some(ms) => {
                    let _ = writeln!(out, "{family}{labels} {value} {ms}");
                }
                None => {
                    let _ = writeln!(out, "{family}{labels} {value}");
                }
            }
        }
    }
    out
}

/// CPU seconds and the sample's time in milliseconds.
fn cpu(stats: Option<&CpuStats>) -> Option<(f64, Option<i64>)> {
    let stats = stats?;
    #[allow(clippy::cast_precision_loss)]
    let seconds = stats.usage_core_nano_seconds? as f64 / 1e9;
    Some((seconds, Some(millis(&stats.time))))
}

/// Working-set bytes and the sample's time in milliseconds.
fn memory(stats: Option<&MemoryStats>) -> Option<(f64, Option<i64>)> {
    let stats = stats?;
    #[allow(clippy::cast_precision_loss)]
    let bytes = stats.working_set_bytes? as f64;
    Some((bytes, Some(millis(&stats.time))))
}

fn millis(time: &Time) -> i64 {
    time.0.as_millisecond()
}

fn seconds(time: &Time) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let ms = time.0.as_millisecond() as f64;
    ms / 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    const SUMMARY: &str = r#"{
      "node": {"nodeName": "n1", "startTime": "2024-05-01T10:00:00Z",
        "cpu": {"time": "2024-05-01T12:00:00Z", "usageCoreNanoSeconds": 2500000000},
        "memory": {"time": "2024-05-01T12:00:00Z", "workingSetBytes": 4096}},
      "pods": [{"podRef": {"name": "web", "namespace": "default", "uid": "u-1"},
        "startTime": "2024-05-01T11:00:00Z",
        "cpu": {"time": "2024-05-01T12:00:00Z", "usageCoreNanoSeconds": 1000000000},
        "containers": [{"name": "app", "startTime": "2024-05-01T11:00:01Z",
          "memory": {"time": "2024-05-01T12:00:00Z", "workingSetBytes": 2048}}]}]
    }"#;

    #[test]
    fn the_summary_becomes_upstreams_resource_metrics() {
        let summary: Summary = serde_json::from_str(SUMMARY).unwrap();
        let text = render(Some(&summary));
        for line in [
            "resource_scrape_error 0",
            "node_cpu_usage_seconds_total 2.5 1714564800000",
            "node_memory_working_set_bytes 4096 1714564800000",
            "pod_cpu_usage_seconds_total{namespace=\"default\",pod=\"web\"} 1 1714564800000",
            "container_memory_working_set_bytes{container=\"app\",namespace=\"default\",pod=\"web\"} 2048 1714564800000",
            "container_start_time_seconds{container=\"app\",namespace=\"default\",pod=\"web\"} 1714561201",
            "# TYPE container_cpu_usage_seconds_total counter",
        ] {
            assert!(text.lines().any(|l| l == line), "{line:?} missing in:\n{text}");
        }
        assert!(
            !text.contains("container_cpu_usage_seconds_total{"),
            "no CPU sample for app"
        );
    }

    #[test]
    fn a_failed_scrape_says_so() {
        assert!(render(None).contains("resource_scrape_error 1\n"));
    }
}
