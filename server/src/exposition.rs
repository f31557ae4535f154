//! Cutting one Prometheus text exposition into the subsets upstream serves on separate paths
//! (`/metrics/probes` has only the prober families).

/// The lines of `text` that belong to metric families whose name starts with `prefix`, their
/// `# HELP` and `# TYPE` lines included.
#[must_use]
pub fn families_with_prefix(text: &str, prefix: &str) -> String {
    text.lines()
        .filter(|line| {
            let name = line
                .strip_prefix("# HELP ")
                .or_else(|| line.strip_prefix("# TYPE "))
                .unwrap_or(line);
            name.starts_with(prefix)
        })
        .flat_map(|line| [line, "\n"])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_prefixed_families_are_kept_with_their_metadata() {
        let text = "# HELP kubelet_running_pods Pods.\n# TYPE kubelet_running_pods gauge\nkubelet_running_pods 3\n\
                    # HELP prober_probe_total Probes.\n# TYPE prober_probe_total counter\n\
                    prober_probe_total{probe_type=\"Liveness\",result=\"successful\"} 7\n";
        assert_eq!(
            families_with_prefix(text, "prober_"),
            "# HELP prober_probe_total Probes.\n# TYPE prober_probe_total counter\n\
             prober_probe_total{probe_type=\"Liveness\",result=\"successful\"} 7\n"
        );
    }
}
