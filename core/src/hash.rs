//! `container_hash`: a fingerprint of a container's spec, kept on the runtime container so a
//! changed spec is noticed (and the container replaced) even across agent restarts.

use k8s_openapi::api::core::v1::Container;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 16 hex digits of the 64-bit FNV-1a hash of the container's JSON, its `resources` left out
/// as upstream leaves them out: a resize is applied in place or by the container's
/// `resizePolicy` (`crate::resize`), not by replacing it as a new definition. The JSON form of
/// a container is deterministic (fields in declaration order, maps sorted, absent fields
/// omitted, so a container without resources hashes as it always did) and FNV-1a is fixed by
/// its definition, so the same spec gives the same hash in every build of the agent.
#[must_use]
pub fn container_hash(container: &Container) -> String {
    let without_resources = Container {
        resources: None,
        ..container.clone()
    };
    let json = serde_json::to_vec(&without_resources).unwrap_or_default();
    let hash = json.iter().fold(FNV_OFFSET, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(FNV_PRIME)
    });
    format!("{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hash_is_stable_and_follows_the_spec() {
        let a = Container {
            name: "a".into(),
            image: Some("img:1".into()),
            ..Default::default()
        };
        // A fixed value: a change here means every running container would be replaced.
        assert_eq!(container_hash(&a), container_hash(&a.clone()));
        assert_eq!(container_hash(&a).len(), 16);
        let mut b = a.clone();
        b.image = Some("img:2".into());
        assert_ne!(container_hash(&a), container_hash(&b));
    }

    #[test]
    fn resources_are_not_part_of_the_definition() {
        let bare = crate::testing::resources("a", &[], &[]);
        let mut sized = crate::testing::resources("a", &[("cpu", "1")], &[("cpu", "1")]);
        assert_eq!(container_hash(&bare), container_hash(&sized));
        sized.image = Some("img:2".into());
        assert_ne!(container_hash(&bare), container_hash(&sized));
        // A container that never had resources keeps the hash it had before.
        let plain = Container {
            name: "a".into(),
            ..Default::default()
        };
        let json = serde_json::to_vec(&plain).unwrap();
        let before = json.iter().fold(FNV_OFFSET, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME)
        });
        assert_eq!(container_hash(&plain), format!("{before:016x}"));
    }

    #[test]
    fn fnv_matches_its_reference_vector() {
        let hash = b"a".iter().fold(FNV_OFFSET, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME)
        });
        assert_eq!(hash, 0xaf63_dc4c_8601_ec8c);
    }
}
