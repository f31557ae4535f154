//! The checks upstream's pod validation makes that matter on a node: names that can become
//! container and cgroup names, labels and annotations within upstream's rules and sizes,
//! containers that can run, resources that are real quantities, ports and probes that can be
//! reached, and volume mounts that stay inside volumes that exist; plus the count bounds of
//! [`crate::limits`] that keep one pod from wedging the runtime. Every failed check is
//! reported with its field path and line; all of them are collected, not just the first.
//! Entry point: [`validate`]; the metadata, resource and mount checks live in submodules.

mod metadata;
mod mounts;
mod profiles;
mod resources;
mod restart;

use std::collections::{HashMap, HashSet};

use k8s_openapi::api::core::v1::{Container, ContainerPort, LifecycleHandler, Pod, PodSpec, Probe};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::limits::{MAX_CONTAINERS, MAX_ENV, MAX_PORTS, MAX_VOLUMES};
use crate::located::{FieldPath, Manifest, ManifestError};
use crate::names::{label_problem, port_name_problem};

const RESTART_POLICIES: &[&str] = &["Always", "OnFailure", "Never"];
const PROTOCOLS: &[&str] = &["TCP", "UDP", "SCTP"];

/// Where the checked pod comes from, for the few checks that differ between sources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Origin<'a> {
    /// A static pod manifest; its name will be suffixed with `-<node>`, so the suffixed name
    /// is checked too, and it may not carry ephemeral containers.
    StaticPod {
        /// The node name of the suffix.
        node: &'a str,
    },
    /// The API server, whose names are used as they are.
    Api,
}

/// Every problem with a pod from the API server, each as `field: reason`; empty when it is fine
/// to run. The same checks as a static pod's, plus the UID the API server always sets (sergeant
/// keys everything about a pod by it).
#[must_use]
pub fn api_pod_problems(pod: &Pod) -> Vec<String> {
    let manifest = Manifest::new("", "");
    let mut problems: Vec<String> = validate(pod, &manifest, Origin::Api)
        .into_iter()
        .map(|p| format!("{}: {}", p.field.unwrap_or_default(), p.reason))
        .collect();
    if pod.metadata.uid.as_deref().unwrap_or_default().is_empty() {
        problems.push("metadata.uid: required".to_owned());
    }
    problems
}

/// Every problem with the parsed pod; empty when it is fine to run. The cost is linear in the
/// pod's size.
pub(crate) fn validate(
    pod: &Pod,
    manifest: &Manifest<'_>,
    origin: Origin<'_>,
) -> Vec<ManifestError> {
    let mut check = Checks {
        manifest,
        problems: Vec::new(),
    };
    check.metadata(pod, origin);
    match &pod.spec {
        Some(spec) => {
            check.spec(spec, origin);
            check.apparmor_annotations(pod);
        }
        None => check.fail(&FieldPath::of(&["spec"]), "required: a pod needs a spec"),
    }
    check.problems.sort_by_key(|problem| problem.line);
    check.problems
}

/// The problems found so far, and the manifest they are reported against.
struct Checks<'m, 'a> {
    manifest: &'m Manifest<'a>,
    problems: Vec<ManifestError>,
}

impl Checks<'_, '_> {
    fn fail(&mut self, path: &FieldPath, reason: impl Into<String>) {
        self.problems.push(self.manifest.error(path, reason));
    }

    /// Fails `path` when its list holds more than `max` items; true when within the bound.
    fn at_most(&mut self, path: &FieldPath, count: usize, max: usize, what: &str) -> bool {
        if count > max {
            self.fail(
                path,
                format!("{count} {what}, more than the {max} sergeant accepts"),
            );
        }
        count <= max
    }

    fn spec(&mut self, spec: &PodSpec, origin: Origin<'_>) {
        let spec_path = FieldPath::of(&["spec"]);
        if spec.containers.is_empty() {
            self.fail(
                &spec_path.key("containers"),
                "required: at least one container",
            );
        }
        if let Some(policy) = spec.restart_policy.as_deref() {
            self.one_of(&spec_path.key("restartPolicy"), policy, RESTART_POLICIES);
        }
        if spec.termination_grace_period_seconds.is_some_and(|s| s < 0) {
            self.fail(
                &spec_path.key("terminationGracePeriodSeconds"),
                "must be greater than or equal to 0",
            );
        }
        if spec
            .active_deadline_seconds
            .is_some_and(|s| !(1..=i64::from(i32::MAX)).contains(&s))
        {
            self.fail(
                &spec_path.key("activeDeadlineSeconds"),
                "must be between 1 and 2147483647",
            );
        }
        let ephemeral = spec.ephemeral_containers.as_deref().unwrap_or_default();
        if !ephemeral.is_empty() && origin != Origin::Api {
            self.fail(
                &spec_path.key("ephemeralContainers"),
                "may not be set in a static pod manifest",
            );
        }
        self.pod_resources(spec);
        if let Some(security) = &spec.security_context {
            if let Some(policy) = security.supplemental_groups_policy.as_deref() {
                self.one_of(
                    &spec_path
                        .key("securityContext")
                        .key("supplementalGroupsPolicy"),
                    policy,
                    &["Merge", "Strict"],
                );
            }
            self.profiles(
                security.seccomp_profile.as_ref(),
                security.app_armor_profile.as_ref(),
                &spec_path.key("securityContext"),
            );
        }
        let volumes = self.volumes(spec);
        let init = spec.init_containers.as_deref().unwrap_or_default();
        let count = init.len() + spec.containers.len() + ephemeral.len();
        let what = "containers (init, app and ephemeral together)";
        if !self.at_most(&spec_path.key("containers"), count, MAX_CONTAINERS, what) {
            return;
        }
        let mut names: HashMap<&str, FieldPath> = HashMap::new();
        for (kind, list) in [
            ("initContainers", init),
            ("containers", &spec.containers[..]),
        ] {
            for (index, container) in list.iter().enumerate() {
                let path = spec_path.key(kind).index(index);
                self.container_name(&container.name, &path, &mut names);
                self.container(container, &path, &volumes);
            }
        }
        for (index, container) in ephemeral.iter().enumerate() {
            let path = spec_path.key("ephemeralContainers").index(index);
            self.container_name(&container.name, &path, &mut names);
            self.container_profiles(container.security_context.as_ref(), &path);
        }
    }

    /// A container's name: an RFC 1123 label, unique across all the pod's containers.
    fn container_name<'s>(
        &mut self,
        name: &'s str,
        path: &FieldPath,
        names: &mut HashMap<&'s str, FieldPath>,
    ) {
        let name_path = path.key("name");
        if let Some(reason) = label_problem(name) {
            self.fail(&name_path, reason);
        } else if let Some(first) = names.get(name) {
            self.fail(
                &name_path,
                format!("duplicate container name \"{name}\" (first at {first})"),
            );
        } else {
            names.insert(name, name_path);
        }
    }

    /// Checks volume names and returns the declared ones.
    fn volumes<'s>(&mut self, spec: &'s PodSpec) -> HashSet<&'s str> {
        let volumes = spec.volumes.as_deref().unwrap_or_default();
        let path = FieldPath::of(&["spec", "volumes"]);
        let declared: HashSet<&str> = volumes.iter().map(|v| v.name.as_str()).collect();
        if !self.at_most(&path, volumes.len(), MAX_VOLUMES, "volumes") {
            return declared;
        }
        let mut seen = HashSet::new();
        for (index, volume) in volumes.iter().enumerate() {
            let name_path = path.index(index).key("name");
            if let Some(reason) = label_problem(&volume.name) {
                self.fail(&name_path, reason);
            } else if !seen.insert(volume.name.as_str()) {
                self.fail(
                    &name_path,
                    format!("duplicate volume name \"{}\"", volume.name),
                );
            }
            self.volume_quantities(volume, &path.index(index));
        }
        declared
    }

    fn container(&mut self, container: &Container, path: &FieldPath, volumes: &HashSet<&str>) {
        match container.image.as_deref() {
            None | Some("") => {
                self.fail(&path.key("image"), "required: a container needs an image")
            }
            Some(image) if image.trim() != image => {
                self.fail(
                    &path.key("image"),
                    "must not have leading or trailing whitespace",
                );
            }
            Some(_) => {}
        }
        self.restart_settings(container, path);
        self.container_profiles(container.security_context.as_ref(), path);
        let env = container.env.as_deref().unwrap_or_default();
        self.at_most(
            &path.key("env"),
            env.len(),
            MAX_ENV,
            "environment variables",
        );
        let ports = container.ports.as_deref().unwrap_or_default();
        if self.at_most(&path.key("ports"), ports.len(), MAX_PORTS, "ports") {
            for (index, port) in ports.iter().enumerate() {
                self.port(port, &path.key("ports").index(index));
            }
        }
        if let Some(resources) = &container.resources {
            self.resources(resources, &path.key("resources"));
        }
        self.mounts(container, path, volumes);
        for (key, probe) in [
            ("livenessProbe", &container.liveness_probe),
            ("readinessProbe", &container.readiness_probe),
            ("startupProbe", &container.startup_probe),
        ] {
            if let Some(probe) = probe {
                self.probe(probe, &path.key(key));
            }
        }
        if let Some(lifecycle) = &container.lifecycle {
            for (key, handler) in [
                ("postStart", &lifecycle.post_start),
                ("preStop", &lifecycle.pre_stop),
            ] {
                if let Some(handler) = handler {
                    self.handler(handler, &path.key("lifecycle").key(key));
                }
            }
        }
    }

    fn port(&mut self, port: &ContainerPort, path: &FieldPath) {
        if !(1..=65535).contains(&port.container_port) {
            self.fail(&path.key("containerPort"), "must be between 1 and 65535");
        }
        if port.host_port.is_some_and(|p| !(0..=65535).contains(&p)) {
            self.fail(
                &path.key("hostPort"),
                "must be between 1 and 65535, or 0 for none",
            );
        }
        if let Some(protocol) = port.protocol.as_deref() {
            self.one_of(&path.key("protocol"), protocol, PROTOCOLS);
        }
        if let Some(name) = port.name.as_deref() {
            if let Some(reason) = port_name_problem(name) {
                self.fail(&path.key("name"), reason);
            }
        }
    }

    fn probe(&mut self, probe: &Probe, path: &FieldPath) {
        if let Some(http) = &probe.http_get {
            self.named_port(&http.port, &path.key("httpGet").key("port"));
        }
        if let Some(tcp) = &probe.tcp_socket {
            self.named_port(&tcp.port, &path.key("tcpSocket").key("port"));
        }
        if let Some(grpc) = &probe.grpc {
            self.named_port(&IntOrString::Int(grpc.port), &path.key("grpc").key("port"));
        }
        for (key, value) in [
            ("initialDelaySeconds", probe.initial_delay_seconds),
            ("timeoutSeconds", probe.timeout_seconds),
            ("periodSeconds", probe.period_seconds),
            ("successThreshold", probe.success_threshold),
            ("failureThreshold", probe.failure_threshold),
        ] {
            if value.is_some_and(|v| v < 0) {
                self.fail(&path.key(key), "must be greater than or equal to 0");
            }
        }
    }

    fn handler(&mut self, handler: &LifecycleHandler, path: &FieldPath) {
        if let Some(http) = &handler.http_get {
            self.named_port(&http.port, &path.key("httpGet").key("port"));
        }
        if let Some(tcp) = &handler.tcp_socket {
            self.named_port(&tcp.port, &path.key("tcpSocket").key("port"));
        }
    }

    /// A port given by number (1–65535) or by the name of a container port.
    fn named_port(&mut self, port: &IntOrString, path: &FieldPath) {
        let problem = match port {
            IntOrString::Int(number) => {
                (!(1..=65535).contains(number)).then(|| "must be between 1 and 65535".to_owned())
            }
            IntOrString::String(name) => port_name_problem(name),
        };
        if let Some(reason) = problem {
            self.fail(path, reason);
        }
    }

    fn one_of(&mut self, path: &FieldPath, value: &str, allowed: &[&str]) {
        if !allowed.contains(&value) {
            let quoted: Vec<String> = allowed.iter().map(|a| format!("\"{a}\"")).collect();
            self.fail(
                path,
                format!(
                    "unsupported value \"{value}\": supported values: {}",
                    quoted.join(", ")
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::parse;

    const FILE: &str = "/m/web.yaml";

    /// Every problem with the manifest `text`, as (line, field, reason).
    pub(super) fn problems(text: &str) -> Vec<(usize, String, String)> {
        let manifest = Manifest::new(FILE, text);
        let pod = parse(&manifest).unwrap();
        validate(&pod, &manifest, Origin::StaticPod { node: "node-a" })
            .into_iter()
            .map(|p| (p.line, p.field.unwrap_or_default(), p.reason))
            .collect()
    }

    fn one(text: &str) -> (usize, String, String) {
        let mut all = problems(text);
        assert_eq!(all.len(), 1, "{all:?}");
        all.remove(0)
    }

    const GOOD: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  initContainers:
  - name: setup
    image: busybox
    restartPolicy: Always
  containers:
  - name: nginx
    image: nginx:1.27
    ports:
    - containerPort: 80
      name: http
    volumeMounts:
    - name: data
      mountPath: /data
    livenessProbe:
      httpGet:
        port: http
  volumes:
  - name: data
    emptyDir: {}
";

    #[test]
    fn a_good_pod_passes() {
        assert!(problems(GOOD).is_empty());
    }

    #[test]
    fn missing_name() {
        let text = GOOD.replace("  name: web\n", "  labels: {}\n");
        assert_eq!(
            one(&text),
            (
                3,
                "metadata.name".into(),
                "required: a static pod needs a name".into()
            )
        );
    }

    #[test]
    fn bad_name() {
        let text = GOOD.replace("name: web", "name: Web_1");
        let (line, field, reason) = one(&text);
        assert_eq!((line, field.as_str()), (4, "metadata.name"));
        assert!(reason.contains("RFC 1123 subdomain"), "{reason}");
    }

    #[test]
    fn no_containers() {
        let text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers: []\n";
        assert_eq!(
            one(text),
            (
                6,
                "spec.containers".into(),
                "required: at least one container".into()
            )
        );
    }

    #[test]
    fn a_static_pod_cannot_have_ephemeral_containers() {
        // Upstream's file source refuses them too (ValidatePodCreate: they are only ever added
        // to a running API pod through the ephemeralcontainers subresource).
        let text = format!("{GOOD}  ephemeralContainers:\n  - name: debug\n    image: busybox\n");
        assert_eq!(
            one(&text),
            (
                25,
                "spec.ephemeralContainers".into(),
                "may not be set in a static pod manifest".into()
            )
        );
    }

    #[test]
    fn duplicate_container_name_across_init_and_regular() {
        let text = GOOD.replace("  - name: nginx", "  - name: setup");
        assert_eq!(
            one(&text),
            (
                11,
                "spec.containers[0].name".into(),
                "duplicate container name \"setup\" (first at spec.initContainers[0].name)".into()
            )
        );
    }

    #[test]
    fn empty_image() {
        let text = GOOD.replace("image: nginx:1.27", "image: \"\"");
        assert_eq!(
            one(&text),
            (
                12,
                "spec.containers[0].image".into(),
                "required: a container needs an image".into()
            )
        );
    }

    #[test]
    fn bad_restart_policies() {
        let text = GOOD.replace("spec:\n", "spec:\n  restartPolicy: Sometimes\n");
        assert_eq!(
            one(&text),
            (6, "spec.restartPolicy".into(), "unsupported value \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"".into())
        );
        // An init container with its own Never is a plain init container (restart rules).
        let text = GOOD.replace("    restartPolicy: Always", "    restartPolicy: Never");
        assert!(problems(&text).is_empty());
        let text = GOOD.replace(
            "    image: nginx:1.27\n",
            "    image: nginx:1.27\n    restartPolicy: Sometimes\n",
        );
        assert_eq!(
            one(&text),
            (
                13,
                "spec.containers[0].restartPolicy".into(),
                "unsupported value \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"".into()
            )
        );
    }

    #[test]
    fn container_restart_policies_and_rules() {
        let with = |lines: &str| {
            GOOD.replace(
                "    image: nginx:1.27\n",
                &format!("    image: nginx:1.27\n{lines}"),
            )
        };
        assert!(problems(&with("    restartPolicy: Never\n")).is_empty());
        assert!(problems(&with(
            "    restartPolicy: Never\n    restartPolicyRules:\n    - action: Restart\n      exitCodes: {operator: In, values: [42]}\n"
        ))
        .is_empty());
        assert_eq!(
            one(&with(
                "    restartPolicyRules:\n    - action: Restart\n      exitCodes: {operator: In, values: [42]}\n"
            )),
            (
                13,
                "spec.containers[0].restartPolicyRules".into(),
                "requires the container's restartPolicy to be set explicitly".into()
            )
        );
        assert_eq!(
            problems(&with(
                "    restartPolicy: Never\n    restartPolicyRules:\n    - action: Reboot\n      exitCodes: {operator: Between, values: [1]}\n    - action: Restart\n"
            )),
            vec![
                (
                    15,
                    "spec.containers[0].restartPolicyRules[0].action".into(),
                    "unsupported value \"Reboot\": supported values: \"Restart\", \"RestartAllContainers\"".into()
                ),
                (
                    16,
                    "spec.containers[0].restartPolicyRules[0].exitCodes.operator".into(),
                    "unsupported value \"Between\": supported values: \"In\", \"NotIn\"".into()
                ),
                (
                    17,
                    "spec.containers[0].restartPolicyRules[1].exitCodes".into(),
                    "required: a rule needs exit codes".into()
                ),
            ]
        );
    }

    #[test]
    fn bad_ports() {
        let text = GOOD.replace(
            "containerPort: 80",
            "containerPort: 70000\n      protocol: HTTP",
        );
        assert_eq!(
            problems(&text),
            vec![
                (
                    14,
                    "spec.containers[0].ports[0].containerPort".into(),
                    "must be between 1 and 65535".into()
                ),
                (
                    15,
                    "spec.containers[0].ports[0].protocol".into(),
                    "unsupported value \"HTTP\": supported values: \"TCP\", \"UDP\", \"SCTP\""
                        .into()
                ),
            ]
        );
    }

    #[test]
    fn a_missing_container_port_is_caught() {
        let text = GOOD.replace(
            "    - containerPort: 80\n      name: http",
            "    - name: http",
        );
        assert_eq!(
            one(&text),
            (
                14,
                "spec.containers[0].ports[0].containerPort".into(),
                "must be between 1 and 65535".into()
            )
        );
    }

    #[test]
    fn undeclared_volume_and_duplicate_volume() {
        let text = GOOD.replace(
            "    - name: data\n      mountPath",
            "    - name: cache\n      mountPath",
        );
        assert_eq!(
            one(&text),
            (
                17,
                "spec.containers[0].volumeMounts[0].name".into(),
                "volume \"cache\" is not declared in spec.volumes".into()
            )
        );
        let text = format!("{GOOD}  - name: data\n    emptyDir: {{}}\n");
        assert_eq!(
            one(&text),
            (
                25,
                "spec.volumes[1].name".into(),
                "duplicate volume name \"data\"".into()
            )
        );
    }

    #[test]
    fn negative_durations() {
        let text = GOOD.replace(
            "spec:\n",
            "spec:\n  terminationGracePeriodSeconds: -1\n  activeDeadlineSeconds: 0\n",
        );
        assert_eq!(
            problems(&text),
            vec![
                (
                    6,
                    "spec.terminationGracePeriodSeconds".into(),
                    "must be greater than or equal to 0".into()
                ),
                (
                    7,
                    "spec.activeDeadlineSeconds".into(),
                    "must be between 1 and 2147483647".into()
                ),
            ]
        );
    }

    #[test]
    fn probe_ports() {
        let text = GOOD.replace("        port: http", "        port: 0");
        assert_eq!(
            one(&text),
            (
                21,
                "spec.containers[0].livenessProbe.httpGet.port".into(),
                "must be between 1 and 65535".into()
            )
        );
        let text = GOOD.replace("        port: http", "        port: not--valid");
        assert!(one(&text).2.contains("not a valid port name"));
    }

    #[test]
    fn the_suffixed_name_must_fit() {
        let long = "a".repeat(250);
        let text = GOOD.replace("name: web", &format!("name: {long}"));
        let (line, _, reason) = one(&text);
        assert_eq!(line, 4);
        assert!(reason.starts_with("with the node name suffix"), "{reason}");
    }

    /// A pod with `count` items of what `item` writes under each container's `key`.
    fn many(key: &str, item: &str, count: usize) -> String {
        let mut text = String::from(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: a\n    image: busybox\n",
        );
        text.push_str(&format!("    {key}:\n"));
        for n in 0..count {
            text.push_str(&item.replace("{n}", &n.to_string()));
        }
        text
    }

    #[test]
    fn container_lists_are_bounded() {
        for (key, item, max) in [
            ("env", "    - name: V{n}\n", MAX_ENV),
            ("ports", "    - containerPort: 80\n", MAX_PORTS),
        ] {
            assert!(problems(&many(key, item, max)).is_empty(), "{key}");
            assert_eq!(
                problems(&many(key, item, max + 1)),
                [(
                    9,
                    format!("spec.containers[0].{key}"),
                    format!(
                        "{} {}, more than the {max} sergeant accepts",
                        max + 1,
                        if key == "env" {
                            "environment variables"
                        } else {
                            "ports"
                        }
                    )
                )]
            );
        }
    }

    #[test]
    fn containers_and_volumes_are_bounded() {
        let mut text = String::from(
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n",
        );
        for n in 0..=MAX_CONTAINERS {
            text.push_str(&format!("  - {{name: c{n}, image: busybox}}\n"));
        }
        text.push_str("  volumes:\n");
        for n in 0..=MAX_VOLUMES {
            text.push_str(&format!("  - {{name: v{n}, emptyDir: {{}}}}\n"));
        }
        let found = problems(&text);
        let fields: Vec<(usize, &str)> = found.iter().map(|p| (p.0, p.1.as_str())).collect();
        assert_eq!(
            fields,
            [(6, "spec.containers"), (2056, "spec.volumes")],
            "{found:?}"
        );
        assert!(found[0].2.starts_with("2049 containers"), "{found:?}");
    }
}
