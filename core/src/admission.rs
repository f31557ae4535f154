//! Admission: whether a pod fits on the node next to the pods already admitted — pod count
//! (`maxPods`), host ports, and CPU and memory requests against what the node has. Entry point:
//! [`admit`], which the pod manager asks before it starts a pod.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::Pod;

/// Why a pod was not admitted; it becomes the pod's Failed status, as upstream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The upstream reason (`OutOfpods`, `OutOfcpu`, `OutOfmemory`, `HostPortConflict`).
    pub reason: String,
    /// The message.
    pub message: String,
}

/// What the node can give pods.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capacity {
    /// `maxPods`.
    pub pods: usize,
    /// Allocatable CPU in millicores.
    pub cpu_millis: i64,
    /// Allocatable memory in bytes.
    pub memory_bytes: i64,
}

/// Decides whether `pod` may join `admitted`.
///
/// # Errors
/// The [`Rejection`] when it may not.
pub fn admit(pod: &Pod, admitted: &[&Pod], capacity: Capacity) -> Result<(), Rejection> {
    if admitted.len() >= capacity.pods {
        return Err(reject(
            "OutOfpods",
            format!(
                "Node didn't have enough resource: pods, requested: 1, used: {}, capacity: {}",
                admitted.len(),
                capacity.pods
            ),
        ));
    }
    let used: BTreeSet<(String, i32)> = admitted.iter().flat_map(|p| host_ports(p)).collect();
    if let Some((protocol, port)) = host_ports(pod).into_iter().find(|p| used.contains(p)) {
        return Err(reject(
            "HostPortConflict",
            format!("host port {port}/{protocol} is already used by another pod"),
        ));
    }
    let (cpu, memory) = requests(pod);
    let (used_cpu, used_memory) = admitted
        .iter()
        .map(|p| requests(p))
        .fold((0i64, 0i64), |(c, m), (pc, pm)| {
            (c.saturating_add(pc), m.saturating_add(pm))
        });
    if cpu > 0 && used_cpu.saturating_add(cpu) > capacity.cpu_millis {
        return Err(reject("OutOfcpu", format!("Node didn't have enough resource: cpu, requested: {cpu}m, used: {used_cpu}m, capacity: {}m", capacity.cpu_millis)));
    }
    if memory > 0 && used_memory.saturating_add(memory) > capacity.memory_bytes {
        return Err(reject("OutOfmemory", format!("Node didn't have enough resource: memory, requested: {memory}, used: {used_memory}, capacity: {}", capacity.memory_bytes)));
    }
    Ok(())
}

fn reject(reason: &str, message: String) -> Rejection {
    Rejection {
        reason: reason.to_owned(),
        message,
    }
}

fn host_ports(pod: &Pod) -> Vec<(String, i32)> {
    pod.spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .chain(s.init_containers.iter().flatten())
        })
        .flat_map(|c| c.ports.iter().flatten())
        .filter_map(|p| {
            p.host_port
                .filter(|hp| *hp > 0)
                .map(|hp| (p.protocol.clone().unwrap_or_else(|| "TCP".into()), hp))
        })
        .collect()
}

/// The pod's CPU (millicores) and memory (bytes) requests: the larger of the sum over app
/// containers and the largest init container, as the scheduler counts them. Sums saturate:
/// each request is within a quantity's range, but a pod's total need not be.
fn requests(pod: &Pod) -> (i64, i64) {
    let Some(spec) = &pod.spec else { return (0, 0) };
    let of = |c: &k8s_openapi::api::core::v1::Container| {
        let requests = c.resources.as_ref().and_then(|r| r.requests.as_ref());
        let get = |name: &str, milli: bool| {
            requests
                .and_then(|r| r.get(name))
                .and_then(|q| q.0.parse::<sergeant_config::Quantity>().ok())
                .map_or(0, |q| if milli { q.milli_value() } else { q.value() })
        };
        (get("cpu", true), get("memory", false))
    };
    let apps = spec
        .containers
        .iter()
        .map(of)
        .fold((0i64, 0i64), |(c, m), (pc, pm)| {
            (c.saturating_add(pc), m.saturating_add(pm))
        });
    let init = spec
        .init_containers
        .iter()
        .flatten()
        .map(of)
        .fold((0, 0), |(c, m), (pc, pm)| (c.max(pc), m.max(pm)));
    (apps.0.max(init.0), apps.1.max(init.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).expect("a pod")
    }

    fn with(cpu: &str, memory: &str, host_port: Option<i32>) -> Pod {
        let mut container = serde_json::json!({"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": memory}}});
        if let Some(port) = host_port {
            container["ports"] = serde_json::json!([{"containerPort": 80, "hostPort": port}]);
        }
        pod(serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [container]}}))
    }

    const NODE: Capacity = Capacity {
        pods: 2,
        cpu_millis: 1000,
        memory_bytes: 1 << 30,
    };

    #[test]
    fn max_pods_is_enforced() {
        let a = with("1m", "1", None);
        let err = admit(&a, &[&a, &a], NODE).unwrap_err();
        assert_eq!(err.reason, "OutOfpods");
    }

    #[test]
    fn host_port_conflicts_are_refused() {
        let a = with("1m", "1", Some(8080));
        assert_eq!(
            admit(&a, &[&a], NODE).unwrap_err().reason,
            "HostPortConflict"
        );
        assert!(admit(&with("1m", "1", Some(8081)), &[&a], NODE).is_ok());
    }

    #[test]
    fn cpu_and_memory_requests_must_fit() {
        let big = with("600m", "1Mi", None);
        assert_eq!(admit(&big, &[&big], NODE).unwrap_err().reason, "OutOfcpu");
        let fat = with("1m", "600Mi", None);
        assert_eq!(
            admit(&fat, &[&fat], NODE).unwrap_err().reason,
            "OutOfmemory"
        );
        assert!(admit(&with("300m", "100Mi", None), &[&big], NODE).is_ok());
    }

    /// Requests each within a quantity's range can sum past it: two containers of 4Ei
    /// overflowed the sum (a panic in a debug build, a wrap to a negative request that fits
    /// any node in a release build). The sums saturate, and such a pod does not fit.
    #[test]
    fn huge_requests_do_not_overflow_the_sums() {
        let container = serde_json::json!({"name": "c", "image": "i", "resources": {"requests": {"cpu": "4000000000000000", "memory": "4Ei"}}});
        let huge = pod(
            serde_json::json!({"metadata": {"name": "p"}, "spec": {"containers": [container.clone(), container]}}),
        );
        assert_eq!(admit(&huge, &[], NODE).unwrap_err().reason, "OutOfcpu");
        let small = with("1m", "1", None);
        assert_eq!(
            admit(&small, &[&huge], NODE).unwrap_err().reason,
            "OutOfcpu"
        );
    }
}
