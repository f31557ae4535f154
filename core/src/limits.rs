//! The bounds a pod must stay within before sergeant reads or runs it, each with its reason.
//! Upstream's own limits are kept as upstream has them; where upstream has none, the bound is
//! far above any real pod and low enough that one pod cannot stall the node's pod source or
//! wedge the container runtime (a pod with 600 000 labels once kept containerd's CRI from
//! answering any other pod).

/// The largest static pod manifest read, in bytes (1.5 MiB). Upstream reads a manifest file
/// whole, without a limit; but a static pod is mirrored to the API server, whose store (etcd)
/// refuses objects above 1.5 MiB by default, so no larger pod can exist in a cluster either.
pub const MAX_MANIFEST_BYTES: u64 = 1536 * 1024;

/// How far a manifest's text may expand when its YAML aliases (`*name`) are replaced by what
/// they name: the same as the file itself, since the expanded pod is what would be stored.
pub(crate) const MAX_EXPANDED_BYTES: u64 = MAX_MANIFEST_BYTES;

/// How deep mappings and lists may nest. The deepest field of a v1 Pod is about a dozen levels
/// down (an affinity term's `matchExpressions[].values[]`). libyaml spends time proportional
/// to the flow nesting depth on every token, and serde_yaml applies its own limit (128) only
/// after reading the whole text, so a deep file is refused here, before either sees it.
pub(crate) const MAX_NESTING: usize = 64;

/// The total size of a pod's annotations, keys and values (256 KiB), as upstream's
/// `TotalAnnotationSizeLimitB`.
pub(crate) const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// How many labels a pod may have. Upstream has no count limit, only the object's size; labels
/// go to the runtime with the sandbox, and real pods carry a few dozen at most.
pub(crate) const MAX_LABELS: usize = 1024;

/// How many containers (init, app and ephemeral together) a pod may have. Upstream has no
/// limit; each container is a process, a log and a set of runtime calls in one sandbox, real
/// pods run a handful, and this leaves room for generated tests that start a thousand.
pub(crate) const MAX_CONTAINERS: usize = 2048;

/// How many volumes a pod may declare. Upstream has no limit; each is set up (and, for most
/// kinds, mounted) before any container starts.
pub(crate) const MAX_VOLUMES: usize = 1024;

/// How many volume mounts one container may have. Upstream has no limit; each is a bind mount
/// in the container's mount namespace, and the kernel allows 100 000 mounts per namespace.
pub(crate) const MAX_VOLUME_MOUNTS: usize = 1024;

/// How many `env` entries one container may have. Upstream has no count limit; the kernel
/// refuses to start a process whose environment passes 2 MiB (a quarter of the stack limit),
/// which a few thousand variables already reach.
pub(crate) const MAX_ENV: usize = 4096;

/// How many ports one container may declare. Upstream has no limit; a host port is a rule in
/// the node's network setup, and no service exposes more than a few dozen.
pub(crate) const MAX_PORTS: usize = 1024;

/// How many of a rejected manifest's problems are listed; the rest are counted. A file with
/// thousands of bad labels gives a rejection one can read, and a log line of bounded size.
pub(crate) const MAX_PROBLEMS_SHOWN: usize = 20;
