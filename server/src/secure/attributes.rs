//! What a request to the kubelet API asks to do, in authorization terms: a verb on a
//! subresource of this node's `nodes` object, as upstream maps paths (`/stats/*` →
//! `nodes/stats`, `/metrics/*` → `nodes/metrics`, `/logs/*` → `nodes/log`, everything else →
//! `nodes/proxy`, with the fine-grained `nodes/pods`, `nodes/healthz`, `nodes/configz` tried
//! first for their paths).

use axum::http::Method;

/// One authorization question: may the user `verb` the node's `subresource`?
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Attributes {
    /// `get`, `create`, `update`, `patch` or `delete`.
    pub verb: &'static str,
    /// The subresource of `nodes/<name>`.
    pub subresource: &'static str,
}

/// The questions to ask for `method` on `path`, in order: the first allowed one admits the
/// request.
#[must_use]
pub fn for_request(method: &Method, path: &str, upgrade: bool) -> Vec<Attributes> {
    let verb = verb(method, upgrade);
    let first = path
        .trim_start_matches('/')
        .split('/')
        .next()
        .unwrap_or_default();
    let ask = |subresource| Attributes { verb, subresource };
    match first {
        "stats" => vec![ask("stats")],
        "metrics" => vec![ask("metrics")],
        "logs" => vec![ask("log")],
        "spec" => vec![ask("spec")],
        "checkpoint" => vec![ask("checkpoint")],
        "pods" => vec![ask("pods"), ask("proxy")],
        "healthz" => vec![ask("healthz"), ask("proxy")],
        "configz" => vec![ask("configz"), ask("proxy")],
        _ => vec![ask("proxy")],
    }
}

/// The API verb of an HTTP method; a connection upgrade (exec, attach, port-forward over
/// websockets or SPDY) creates, whatever its method.
fn verb(method: &Method, upgrade: bool) -> &'static str {
    if upgrade {
        return "create";
    }
    match *method {
        Method::POST => "create",
        Method::PUT => "update",
        Method::PATCH => "patch",
        Method::DELETE => "delete",
        _ => "get",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(method: Method, path: &str) -> (&'static str, &'static str) {
        let all = for_request(&method, path, false);
        (all[0].verb, all[0].subresource)
    }

    #[test]
    fn paths_map_to_the_upstream_subresources() {
        assert_eq!(first(Method::GET, "/stats/summary"), ("get", "stats"));
        assert_eq!(first(Method::GET, "/metrics/probes"), ("get", "metrics"));
        assert_eq!(first(Method::GET, "/metrics"), ("get", "metrics"));
        assert_eq!(first(Method::GET, "/logs/syslog"), ("get", "log"));
        assert_eq!(first(Method::POST, "/exec/ns/pod/c"), ("create", "proxy"));
        assert_eq!(
            first(Method::GET, "/containerLogs/ns/pod/c"),
            ("get", "proxy")
        );
    }

    #[test]
    fn fine_grained_paths_fall_back_to_proxy() {
        let pods = for_request(&Method::GET, "/pods", false);
        let subresources: Vec<_> = pods.iter().map(|a| a.subresource).collect();
        assert_eq!(subresources, ["pods", "proxy"]);
    }

    #[test]
    fn an_upgrade_is_a_create() {
        let exec = for_request(&Method::GET, "/exec/ns/pod/c", true);
        assert_eq!(exec[0].verb, "create");
    }
}
