//! The `Cache` strategy's rules: how long a read object stays good (the node's
//! `node.alpha.kubernetes.io/ttl` annotation, in seconds, which the control plane's TTL
//! controller sets by cluster size; a minute without it, as upstream), and whether a cached
//! read is still good. Pure: the clock is passed in.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// The Node annotation that says how long a kubelet may cache config maps and secrets.
pub const TTL_ANNOTATION: &str = "node.alpha.kubernetes.io/ttl";
/// Upstream's TTL when the node has no (readable) annotation.
pub const DEFAULT_TTL: Duration = Duration::from_secs(60);

/// The TTL the Node's `annotations` give, `None` without a readable one (upstream ignores a
/// value that is not a whole number of seconds).
#[must_use]
pub fn node_ttl(annotations: Option<&BTreeMap<String, String>>) -> Option<Duration> {
    let value = annotations?.get(TTL_ANNOTATION)?;
    value.trim().parse::<u64>().ok().map(Duration::from_secs)
}

/// Whether an object read at `fetched` is still good at `now` under `ttl`.
pub(super) fn is_fresh(fetched: Instant, ttl: Duration, now: Instant) -> bool {
    fetched.checked_add(ttl).is_none_or(|expires| now < expires)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn annotated(value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(TTL_ANNOTATION.to_owned(), value.to_owned())])
    }

    #[test]
    fn the_annotation_gives_seconds_and_anything_else_gives_none() {
        assert_eq!(
            node_ttl(Some(&annotated("15"))),
            Some(Duration::from_secs(15))
        );
        assert_eq!(node_ttl(Some(&annotated("0"))), Some(Duration::ZERO));
        assert_eq!(node_ttl(Some(&annotated("1m"))), None);
        assert_eq!(node_ttl(Some(&annotated("-5"))), None);
        assert_eq!(node_ttl(Some(&BTreeMap::new())), None);
        assert_eq!(node_ttl(None), None);
    }

    #[test]
    fn a_read_is_fresh_until_its_ttl_has_passed() {
        let fetched = Instant::now();
        let ttl = Duration::from_secs(60);
        assert!(is_fresh(fetched, ttl, fetched));
        assert!(is_fresh(fetched, ttl, fetched + Duration::from_secs(59)));
        assert!(!is_fresh(fetched, ttl, fetched + ttl));
        assert!(
            !is_fresh(fetched, Duration::ZERO, fetched),
            "TTL 0 caches nothing"
        );
        assert!(is_fresh(fetched, Duration::MAX, fetched + ttl));
    }
}
