//! Service environment variables: for every service a pod links to, `<NAME>_SERVICE_HOST`,
//! `<NAME>_SERVICE_PORT[_<PORT NAME>]` and the Docker-link style `<NAME>_PORT...` variables,
//! as upstream's kubelet sets them. Which services a pod links to is
//! [`crate::context::linked_services`]'s answer.
//!
//! Entry point: [`service_env`] (the variables of the linked services).

use crate::context::LinkedService;

/// The variables of `services`, in service order, as upstream names them.
#[must_use]
pub fn service_env(services: &[LinkedService]) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for service in services {
        let Some(first) = service.ports.first() else {
            continue;
        };
        let prefix = variable_name(&service.name);
        let ip = &service.cluster_ip;
        env.push((format!("{prefix}_SERVICE_HOST"), ip.clone()));
        env.push((format!("{prefix}_SERVICE_PORT"), first.port.to_string()));
        for port in service.ports.iter().filter(|p| !p.name.is_empty()) {
            let name = format!("{prefix}_SERVICE_PORT_{}", variable_name(&port.name));
            env.push((name, port.port.to_string()));
        }
        let host_port = |port: i32| {
            if ip.contains(':') {
                format!("[{ip}]:{port}")
            } else {
                format!("{ip}:{port}")
            }
        };
        for (index, port) in service.ports.iter().enumerate() {
            let proto = port.protocol.to_lowercase();
            let url = format!("{proto}://{}", host_port(port.port));
            if index == 0 {
                env.push((format!("{prefix}_PORT"), url.clone()));
            }
            let port_prefix = format!(
                "{prefix}_PORT_{}_{}",
                port.port,
                port.protocol.to_uppercase()
            );
            env.push((port_prefix.clone(), url));
            env.push((format!("{port_prefix}_PROTO"), proto));
            env.push((format!("{port_prefix}_PORT"), port.port.to_string()));
            env.push((format!("{port_prefix}_ADDR"), ip.clone()));
        }
    }
    env
}

/// A service or port name as a variable name: upper case, `-` as `_`.
fn variable_name(name: &str) -> String {
    name.replace('-', "_").to_uppercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::context::linked_services;
    use k8s_openapi::api::core::v1::{PodSpec, Service};

    fn service(namespace: &str, name: &str, ip: &str, ports: &[(&str, i32, &str)]) -> Service {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name, "namespace": namespace},
            "spec": {
                "clusterIP": ip,
                "ports": ports.iter().map(|(n, p, proto)| serde_json::json!({
                    "name": n, "port": p, "protocol": proto
                })).collect::<Vec<_>>(),
            },
        }))
        .expect("a service")
    }

    #[test]
    fn a_service_gives_upstreams_variables() {
        let links = linked_services(
            &PodSpec::default(),
            &[service("ns", "foo-svc", "10.96.0.9", &[("", 8765, "TCP")])],
            None,
        );
        assert_eq!(
            service_env(&links),
            [
                ("FOO_SVC_SERVICE_HOST", "10.96.0.9"),
                ("FOO_SVC_SERVICE_PORT", "8765"),
                ("FOO_SVC_PORT", "tcp://10.96.0.9:8765"),
                ("FOO_SVC_PORT_8765_TCP", "tcp://10.96.0.9:8765"),
                ("FOO_SVC_PORT_8765_TCP_PROTO", "tcp"),
                ("FOO_SVC_PORT_8765_TCP_PORT", "8765"),
                ("FOO_SVC_PORT_8765_TCP_ADDR", "10.96.0.9"),
            ]
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
        );
    }

    #[test]
    fn named_ports_headless_services_links_off_and_the_master_service() {
        let master = service(
            "default",
            "kubernetes",
            "10.96.0.1",
            &[("https", 443, "TCP")],
        );
        let ns = [
            service(
                "ns",
                "dns",
                "10.96.0.10",
                &[("dns", 53, "UDP"), ("dns-tcp", 53, "TCP")],
            ),
            service("ns", "headless", "None", &[("", 80, "TCP")]),
        ];
        let names =
            |links: &[LinkedService]| links.iter().map(|l| l.name.clone()).collect::<Vec<_>>();
        let links = linked_services(&PodSpec::default(), &ns, Some(&master));
        assert_eq!(names(&links), ["dns", "kubernetes"]);
        let env = service_env(&links);
        let value = |key: &str| env.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str());
        assert_eq!(value("DNS_SERVICE_PORT"), Some("53"));
        assert_eq!(value("DNS_SERVICE_PORT_DNS_TCP"), Some("53"));
        assert_eq!(value("DNS_PORT"), Some("udp://10.96.0.10:53"));
        assert_eq!(value("DNS_PORT_53_TCP_PROTO"), Some("tcp"));
        assert_eq!(value("KUBERNETES_SERVICE_PORT_HTTPS"), Some("443"));

        let off = PodSpec {
            enable_service_links: Some(false),
            ..PodSpec::default()
        };
        assert_eq!(
            names(&linked_services(&off, &ns, Some(&master))),
            ["kubernetes"],
            "the master service always"
        );
        let elsewhere = service("other", "kubernetes", "10.96.0.1", &[("", 443, "TCP")]);
        assert!(linked_services(&off, &ns, Some(&elsewhere)).is_empty());
        let v6 = service("ns", "six", "fd00::1", &[("", 80, "TCP")]);
        let env = service_env(&linked_services(&PodSpec::default(), &[v6], None));
        assert!(env.contains(&("SIX_PORT".to_owned(), "tcp://[fd00::1]:80".to_owned())));
    }
}
