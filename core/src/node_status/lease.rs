//! The node lease `kube-node-lease/<node>` as the node-status actor
//! (`sergeant_actors::node_status`) writes it: who holds it, a new one, and one renewed — the
//! owner reference to the Node set once, as upstream's lease controller does.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};

/// The namespace node leases live in.
pub const NAMESPACE: &str = "kube-node-lease";

/// Who holds the lease: this node, and the Node object that owns it once registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Holder {
    /// The node's name, the lease's name and holder.
    pub node: String,
    /// The Node's uid, for the owner reference; `None` until the Node is registered.
    pub node_uid: Option<String>,
    /// `leaseDurationSeconds`.
    pub duration_seconds: i32,
}

/// A new lease of `holder`, renewed at `at`.
#[must_use]
pub fn new_lease(holder: &Holder, at: MicroTime) -> Lease {
    renewed(
        Lease {
            metadata: ObjectMeta {
                name: Some(holder.node.clone()),
                namespace: Some(NAMESPACE.to_owned()),
                ..ObjectMeta::default()
            },
            spec: None,
        },
        holder,
        at,
    )
}

/// `lease` renewed at `at` by `holder`; it gets the Node as owner when it has no owner yet
/// (as upstream: an owner set by someone else is left alone).
#[must_use]
pub fn renewed(mut lease: Lease, holder: &Holder, at: MicroTime) -> Lease {
    let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
    spec.holder_identity = Some(holder.node.clone());
    spec.lease_duration_seconds = Some(holder.duration_seconds);
    spec.renew_time = Some(at);
    if let Some(uid) = &holder.node_uid {
        let owners = lease.metadata.owner_references.get_or_insert_with(Vec::new);
        if owners.is_empty() {
            owners.push(OwnerReference {
                api_version: "v1".to_owned(),
                kind: "Node".to_owned(),
                name: holder.node.clone(),
                uid: uid.clone(),
                ..OwnerReference::default()
            });
        }
    }
    lease
}

#[cfg(test)]
mod tests {
    use k8s_openapi::jiff::Timestamp;

    use super::*;

    fn holder(uid: Option<&str>) -> Holder {
        Holder {
            node: "node-a".to_owned(),
            node_uid: uid.map(str::to_owned),
            duration_seconds: 40,
        }
    }

    fn at(second: i64) -> MicroTime {
        MicroTime(Timestamp::from_second(second).unwrap())
    }

    #[test]
    fn a_new_lease_names_the_holder_and_its_owner_node() {
        let lease = new_lease(&holder(Some("uid-1")), at(5));
        assert_eq!(lease.metadata.name.as_deref(), Some("node-a"));
        assert_eq!(lease.metadata.namespace.as_deref(), Some(NAMESPACE));
        let spec = lease.spec.unwrap();
        assert_eq!(spec.holder_identity.as_deref(), Some("node-a"));
        assert_eq!(spec.lease_duration_seconds, Some(40));
        assert_eq!(spec.renew_time, Some(at(5)));
        let owners = lease.metadata.owner_references.unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(
            (owners[0].kind.as_str(), owners[0].uid.as_str()),
            ("Node", "uid-1")
        );
    }

    #[test]
    fn renewing_moves_the_renew_time_and_keeps_an_existing_owner() {
        let first = new_lease(&holder(None), at(5));
        assert_eq!(first.metadata.owner_references, None);
        let owned = renewed(first, &holder(Some("uid-1")), at(15));
        assert_eq!(owned.spec.as_ref().unwrap().renew_time, Some(at(15)));
        let again = renewed(owned, &holder(Some("uid-2")), at(25));
        let owners = again.metadata.owner_references.unwrap();
        assert_eq!(owners.len(), 1);
        assert_eq!(owners[0].uid, "uid-1");
    }
}
