//! A manifest becomes a static pod: parsed and checked, then given upstream's static pod
//! identity (name suffixed with the node name, a UID hashed from the file, the node's name in
//! `spec.nodeName`, the config annotations) and upstream's API defaults, so the pod manager
//! and pod actors see the same pod the API server would have stored.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Container, Pod, PodSecurityContext, Probe, Toleration};

use super::decode;
use crate::limits::MAX_MANIFEST_BYTES;
use crate::located::{FieldPath, Manifest, ManifestError, Rejection};
use crate::source::{CONFIG_HASH, CONFIG_SOURCE, FILE_SOURCE};
use crate::validate;

const NAMESPACE_DEFAULT: &str = "default";
const GRACE_PERIOD_DEFAULT: i64 = 30;

/// Turns one manifest file's bytes into the static pod it defines for node `node`, and the
/// line the pod's name is written on (where a duplicate of the pod is reported).
///
/// # Errors
/// A [`Rejection`] naming the file, line, field and reason of every problem: more bytes than
/// [`MAX_MANIFEST_BYTES`], bytes that are not UTF-8, text that is not one v1 Pod, unknown
/// fields, wrong types, failed checks.
pub fn load_static_pod(file: &str, content: &[u8], node: &str) -> Result<(Pod, usize), Rejection> {
    if u64::try_from(content.len()).map_or(true, |len| len > MAX_MANIFEST_BYTES) {
        return Err(too_large(file).into());
    }
    let text = std::str::from_utf8(content).map_err(|e| {
        let line = content[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        ManifestError {
            file: file.to_owned(),
            line,
            field: None,
            reason: "not UTF-8 text".to_owned(),
        }
    })?;
    let manifest = Manifest::new(file, text);
    let pod = decode::parse(&manifest)?;
    let problems = validate::validate(&pod, &manifest, validate::Origin::StaticPod { node });
    if !problems.is_empty() {
        return Err(Rejection { problems });
    }
    let name_line = manifest.line_of(&FieldPath::of(&["metadata", "name"]));
    Ok((into_static_pod(pod, content, node), name_line))
}

/// The problem of a manifest file larger than [`MAX_MANIFEST_BYTES`].
fn too_large(file: &str) -> ManifestError {
    ManifestError {
        file: file.to_owned(),
        line: 1,
        field: None,
        reason: format!(
            "the file is larger than {MAX_MANIFEST_BYTES} bytes (1.5 MiB), the most a static pod \
             manifest may have (the largest object the API server stores)"
        ),
    }
}

/// The UID of the static pod defined by `content` on `node`: a stable hash, so a restart of
/// sergeant finds the same pods and an edit of the file makes a new pod.
#[must_use]
pub fn static_pod_uid(content: &[u8], node: &str) -> String {
    // The file source's name as it was first hashed (its JSON form, quotes included): changing
    // it would give every static pod a new UID on upgrade.
    let source = "\"file\"";
    let mut hash = Fnv128::default();
    for part in [source.as_bytes(), node.as_bytes(), content] {
        hash.write(&(part.len() as u64).to_le_bytes());
        hash.write(part);
    }
    format!("{:032x}", hash.0)
}

/// FNV-1a, 128-bit: a tiny hash whose output never changes between Rust releases (unlike
/// std's `DefaultHasher`), which a UID that must survive upgrades needs.
struct Fnv128(u128);

impl Default for Fnv128 {
    fn default() -> Self {
        Self(0x6c62_272e_07bb_0142_62b8_2175_6295_c58d)
    }
}

impl Fnv128 {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u128::from(*byte);
            self.0 = self.0.wrapping_mul(Self::PRIME);
        }
    }
}

/// Applies the static pod identity and the API defaults to a validated pod.
fn into_static_pod(mut pod: Pod, content: &[u8], node: &str) -> Pod {
    let uid = static_pod_uid(content, node);
    let meta = &mut pod.metadata;
    meta.name = meta.name.take().map(|name| format!("{name}-{node}"));
    meta.namespace
        .get_or_insert_with(|| NAMESPACE_DEFAULT.to_owned());
    meta.uid = Some(uid.clone());
    let annotations = meta.annotations.get_or_insert_with(BTreeMap::new);
    annotations.insert(CONFIG_SOURCE.to_owned(), FILE_SOURCE.to_owned());
    annotations.insert(CONFIG_HASH.to_owned(), uid);
    if let Some(spec) = pod.spec.as_mut() {
        spec.node_name = Some(node.to_owned());
        spec.restart_policy
            .get_or_insert_with(|| "Always".to_owned());
        spec.termination_grace_period_seconds
            .get_or_insert(GRACE_PERIOD_DEFAULT);
        spec.dns_policy
            .get_or_insert_with(|| "ClusterFirst".to_owned());
        spec.enable_service_links.get_or_insert(true);
        spec.scheduler_name
            .get_or_insert_with(|| "default-scheduler".to_owned());
        spec.security_context
            .get_or_insert_with(PodSecurityContext::default);
        // Static pods keep running whatever NoExecute taint the node gets, as upstream.
        spec.tolerations
            .get_or_insert_with(Vec::new)
            .push(Toleration {
                operator: Some("Exists".to_owned()),
                effect: Some("NoExecute".to_owned()),
                ..Toleration::default()
            });
        for container in spec
            .init_containers
            .iter_mut()
            .flatten()
            .chain(spec.containers.iter_mut())
        {
            default_container(container);
        }
    }
    pod
}

fn default_container(container: &mut Container) {
    if container.image_pull_policy.is_none() {
        let policy = if pulls_latest(container.image.as_deref().unwrap_or_default()) {
            "Always"
        } else {
            "IfNotPresent"
        };
        container.image_pull_policy = Some(policy.to_owned());
    }
    container
        .termination_message_path
        .get_or_insert_with(|| "/dev/termination-log".to_owned());
    container
        .termination_message_policy
        .get_or_insert_with(|| "File".to_owned());
    for port in container.ports.iter_mut().flatten() {
        port.protocol.get_or_insert_with(|| "TCP".to_owned());
    }
    for probe in [
        &mut container.liveness_probe,
        &mut container.readiness_probe,
        &mut container.startup_probe,
    ]
    .into_iter()
    .flatten()
    {
        default_probe(probe);
    }
}

fn default_probe(probe: &mut Probe) {
    probe.timeout_seconds.get_or_insert(1);
    probe.period_seconds.get_or_insert(10);
    probe.success_threshold.get_or_insert(1);
    probe.failure_threshold.get_or_insert(3);
    if let Some(http) = probe.http_get.as_mut() {
        http.path.get_or_insert_with(|| "/".to_owned());
        http.scheme.get_or_insert_with(|| "HTTP".to_owned());
    }
}

/// Whether an image reference means "the latest": tagged `latest`, or with neither a tag nor
/// a digest (which the runtime reads as `latest`).
fn pulls_latest(image: &str) -> bool {
    let (name, digest) = match image.split_once('@') {
        Some((name, _)) => (name, true),
        None => (image, false),
    };
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':') {
        Some((_, tag)) => tag == "latest",
        None => !digest,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
apiVersion: v1
kind: Pod
metadata:
  name: web
  annotations:
    team: edge
spec:
  initContainers:
  - name: setup
    image: busybox@sha256:0123
  containers:
  - name: nginx
    image: registry.local:5000/nginx
    ports:
    - containerPort: 80
    readinessProbe:
      httpGet:
        port: 80
  - name: pinned
    image: nginx:1.27
  - name: latest
    image: nginx:latest
    imagePullPolicy: Never
";

    fn load(text: &str) -> Pod {
        load_static_pod("/m/web.yaml", text.as_bytes(), "node-a")
            .unwrap()
            .0
    }

    #[test]
    fn identity() {
        let pod = load(TEXT);
        let meta = &pod.metadata;
        assert_eq!(meta.name.as_deref(), Some("web-node-a"));
        assert_eq!(meta.namespace.as_deref(), Some("default"));
        let uid = meta.uid.clone().unwrap();
        assert_eq!(uid.len(), 32);
        let annotations = meta.annotations.as_ref().unwrap();
        assert_eq!(
            annotations.get(CONFIG_SOURCE).map(String::as_str),
            Some("file")
        );
        assert_eq!(annotations.get(CONFIG_HASH), Some(&uid));
        assert_eq!(annotations.get("team").map(String::as_str), Some("edge"));
        assert!(!annotations.contains_key("kubernetes.io/config.mirror"));
        assert_eq!(pod.spec.unwrap().node_name.as_deref(), Some("node-a"));
    }

    #[test]
    fn explicit_namespace_is_kept() {
        let pod = load(&TEXT.replace("  name: web\n", "  name: web\n  namespace: kube-system\n"));
        assert_eq!(pod.metadata.namespace.as_deref(), Some("kube-system"));
    }

    #[test]
    fn uid_is_stable_and_follows_content_and_node() {
        let first = static_pod_uid(TEXT.as_bytes(), "node-a");
        assert_eq!(first, static_pod_uid(TEXT.as_bytes(), "node-a"));
        assert_eq!(load(TEXT).metadata.uid.as_deref(), Some(first.as_str()));
        let edited = TEXT.replace("nginx:1.27", "nginx:1.28");
        assert_ne!(first, static_pod_uid(edited.as_bytes(), "node-a"));
        assert_ne!(first, static_pod_uid(TEXT.as_bytes(), "node-b"));
        // Pinned so an upgrade of sergeant cannot silently change every static pod's UID.
        assert_eq!(
            static_pod_uid(b"kind: Pod", "node-a"),
            "a3ee292fc29ff119f5f90f27aae4335b"
        );
    }

    #[test]
    fn pod_defaults() {
        let spec = load(TEXT).spec.unwrap();
        assert_eq!(spec.restart_policy.as_deref(), Some("Always"));
        assert_eq!(spec.termination_grace_period_seconds, Some(30));
        assert_eq!(spec.dns_policy.as_deref(), Some("ClusterFirst"));
        assert_eq!(spec.enable_service_links, Some(true));
        assert_eq!(spec.scheduler_name.as_deref(), Some("default-scheduler"));
        assert_eq!(spec.security_context, Some(PodSecurityContext::default()));
        let tolerations = spec.tolerations.unwrap();
        assert_eq!(tolerations.len(), 1);
        assert_eq!(tolerations[0].effect.as_deref(), Some("NoExecute"));
    }

    #[test]
    fn container_defaults() {
        let spec = load(TEXT).spec.unwrap();
        let policies: Vec<Option<&str>> = spec
            .init_containers
            .iter()
            .flatten()
            .chain(&spec.containers)
            .map(|c| c.image_pull_policy.as_deref())
            .collect();
        // digest only, no tag (a registry port is not a tag), a version tag, explicit.
        assert_eq!(
            policies,
            [
                Some("IfNotPresent"),
                Some("Always"),
                Some("IfNotPresent"),
                Some("Never")
            ]
        );
        let nginx = &spec.containers[0];
        assert_eq!(
            nginx.termination_message_path.as_deref(),
            Some("/dev/termination-log")
        );
        assert_eq!(nginx.termination_message_policy.as_deref(), Some("File"));
        let ports = nginx.ports.as_ref().unwrap();
        assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
        let probe = nginx.readiness_probe.as_ref().unwrap();
        assert_eq!(
            (
                probe.timeout_seconds,
                probe.period_seconds,
                probe.success_threshold,
                probe.failure_threshold
            ),
            (Some(1), Some(10), Some(1), Some(3))
        );
        let http = probe.http_get.as_ref().unwrap();
        assert_eq!(
            (http.path.as_deref(), http.scheme.as_deref()),
            (Some("/"), Some("HTTP"))
        );
    }

    #[test]
    fn latest_rules() {
        assert!(pulls_latest("nginx"));
        assert!(pulls_latest("nginx:latest"));
        assert!(pulls_latest("localhost:5000/nginx"));
        assert!(!pulls_latest("localhost:5000/nginx:1.2"));
        assert!(!pulls_latest("nginx@sha256:abc"));
        assert!(!pulls_latest("nginx:1.2@sha256:abc"));
    }

    #[test]
    fn rejection_lists_every_problem_on_one_line() {
        let text = TEXT
            .replace("image: nginx:1.27", "image: \"\"")
            .replace("containerPort: 80", "containerPort: 0");
        let error = load_static_pod("/m/web.yaml", text.as_bytes(), "node-a").unwrap_err();
        assert_eq!(
            error.to_string(),
            "/m/web.yaml:15: spec.containers[0].ports[0].containerPort: must be between 1 and 65535; \
             /m/web.yaml:20: spec.containers[1].image: required: a container needs an image"
        );
    }

    #[test]
    fn a_file_past_the_size_cap_is_refused_unread() {
        let limit = usize::try_from(MAX_MANIFEST_BYTES).unwrap();
        let padded = |size: usize| {
            let mut text = TEXT.to_owned();
            text.push('#');
            text.push_str(&"x".repeat(size - text.len() - 1));
            text.push('\n');
            text
        };
        assert!(load_static_pod("/m/web.yaml", padded(limit).as_bytes(), "node-a").is_ok());
        let error = load_static_pod("/m/big.yaml", padded(limit + 1).as_bytes(), "node-a")
            .unwrap_err()
            .to_string();
        assert!(
            error.starts_with("/m/big.yaml:1: the file is larger than 1572864 bytes"),
            "{error}"
        );
    }

    #[test]
    fn non_utf8_is_rejected_with_its_line() {
        let error = load_static_pod("/m/x", b"apiVersion: v1\nkind: \xff\n", "n").unwrap_err();
        assert_eq!(error.to_string(), "/m/x:2: not UTF-8 text");
    }
}
