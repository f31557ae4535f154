//! Service environment variables of pods from the real API server, on the real containerd: a
//! container gets `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` and the `<NAME>_PORT_...`
//! variables of the services of its namespace and of the API server's own service
//! (`KUBERNETES_SERVICE_HOST`, which in-cluster clients read), as upstream ("Pods should
//! contain environment variables for services"); with `enableServiceLinks: false` only the API
//! server's. Before, no service variable was set.
//!
//! Needs the control plane and containerd `tests/run.sh` starts (SERGEANT_CONTROL_PLANE_DIR,
//! SERGEANT_CRI_ENDPOINT). Output is read from the termination message.

mod common;

use common::managed::Managed;
use common::node::{container, SHELL};

/// Deletes the test's service when the test ends, also when it fails.
struct ServiceGuard<'a>(&'a Managed);

impl Drop for ServiceGuard<'_> {
    fn drop(&mut self) {
        self.0.cluster.kubectl(&[
            "delete",
            "service",
            "svc-env-web",
            "-n",
            "default",
            "--ignore-not-found",
        ]);
    }
}

/// The environment lines of pod `name` (`env | sort` as its termination message) that start
/// with one of the service prefixes.
fn service_lines(node: &Managed, name: &str) -> Vec<String> {
    let pod = node.wait_pod(name, "terminated", |p| {
        container(p, "containerStatuses", "main")["state"]["terminated"].is_object()
    });
    container(&pod, "containerStatuses", "main")["state"]["terminated"]["message"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .filter(|l| l.starts_with("SVC_ENV_WEB_") || l.starts_with("KUBERNETES_"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn pods_get_the_variables_of_their_namespaces_services_and_the_api_servers() {
    let node = Managed::start("service-env", &[]);
    let _guard = ServiceGuard(&node);
    node.cluster.apply(
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-env-web\n  namespace: default\nspec:\n  \
         selector: {app: nothing}\n  ports:\n  - {name: http, port: 8765, protocol: TCP}\n",
    );
    let ip = |namespace: &str, name: &str| {
        node.cluster
            .get_json(&["service", name, "-n", namespace])
            .and_then(|s| s["spec"]["clusterIP"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("service {namespace}/{name} has a cluster IP"))
    };
    let (web, api) = (ip("default", "svc-env-web"), ip("default", "kubernetes"));
    let spec = |links: &str| {
        format!(
            "  restartPolicy: Never\n{links}  containers:\n  - name: main\n    image: {SHELL}\n    \
             command: [sh, -c, 'env | sort > /dev/termination-log']\n"
        )
    };
    node.create("linked", &spec(""));
    node.create("unlinked", &spec("  enableServiceLinks: false\n"));

    let kubernetes = [
        format!("KUBERNETES_PORT=tcp://{api}:443"),
        format!("KUBERNETES_PORT_443_TCP=tcp://{api}:443"),
        format!("KUBERNETES_PORT_443_TCP_ADDR={api}"),
        "KUBERNETES_PORT_443_TCP_PORT=443".to_owned(),
        "KUBERNETES_PORT_443_TCP_PROTO=tcp".to_owned(),
        format!("KUBERNETES_SERVICE_HOST={api}"),
        "KUBERNETES_SERVICE_PORT=443".to_owned(),
        "KUBERNETES_SERVICE_PORT_HTTPS=443".to_owned(),
    ];
    let web_lines = [
        format!("SVC_ENV_WEB_PORT=tcp://{web}:8765"),
        format!("SVC_ENV_WEB_PORT_8765_TCP=tcp://{web}:8765"),
        format!("SVC_ENV_WEB_PORT_8765_TCP_ADDR={web}"),
        "SVC_ENV_WEB_PORT_8765_TCP_PORT=8765".to_owned(),
        "SVC_ENV_WEB_PORT_8765_TCP_PROTO=tcp".to_owned(),
        format!("SVC_ENV_WEB_SERVICE_HOST={web}"),
        "SVC_ENV_WEB_SERVICE_PORT=8765".to_owned(),
        "SVC_ENV_WEB_SERVICE_PORT_HTTP=8765".to_owned(),
    ];
    let mut both: Vec<String> = kubernetes.iter().chain(&web_lines).cloned().collect();
    both.sort();
    assert_eq!(service_lines(&node, "linked"), both);
    assert_eq!(service_lines(&node, "unlinked"), kubernetes.to_vec());
}
