//! The node lease `kube-node-lease/<node>`: the cheap heartbeat the node lifecycle controller
//! watches, renewed every quarter of its duration, as upstream's lease controller does —
//! created when missing (owned by the Node, so it goes when the Node goes), renewed from the
//! lease the API server returned last time (one request per renewal), and read again only when
//! there is none or on a conflict, then retried.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, OwnerReference};
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::core::Status;
use kube::{Api, Client};

use super::error::{api_status, ApiCallError};

/// The namespace node leases live in.
pub const NAMESPACE: &str = "kube-node-lease";
/// How many times a renewal is tried again after a conflict before the round gives up.
const CONFLICT_RETRIES: usize = 5;

/// What one renewal did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Renewal {
    /// There was no lease; one was created.
    Created,
    /// The lease's `renewTime` was moved to now.
    Renewed,
}

impl Renewal {
    /// The `result` label of `sergeant_node_lease_renewals_total`.
    #[must_use]
    pub fn label(self) -> &'static str {
        match self {
            Self::Created => "created",
            Self::Renewed => "renewed",
        }
    }
}

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

/// Renews (or creates) the lease of `holder`, starting from `last` (what the API server
/// returned at the previous renewal), which is replaced by what it returns now; dropped when a
/// renewal fails, so the next one reads the lease first.
///
/// # Errors
/// [`ApiCallError`] when the API server cannot be reached, refuses the call, or the lease kept
/// changing under us for [`CONFLICT_RETRIES`] tries.
pub async fn renew(
    client: Client,
    holder: &Holder,
    last: &mut Option<Lease>,
) -> Result<Renewal, ApiCallError> {
    let leases: Api<Lease> = Api::namespaced(client, NAMESPACE);
    let object = format!("lease {NAMESPACE}/{}", holder.node);
    let mut attempt = 0;
    loop {
        let current = match last.take() {
            Some(lease) => Some(lease),
            None => leases
                .get_opt(&holder.node)
                .await
                .map_err(ApiCallError::of("get", &object))?,
        };
        let result = match current {
            None => leases
                .create(&PostParams::default(), &new_lease(holder, now()))
                .await
                .map(|lease| (lease, Renewal::Created))
                .map_err(ApiCallError::of("create", &object)),
            Some(lease) => leases
                .replace(
                    &holder.node,
                    &PostParams::default(),
                    &renewed(lease, holder, now()),
                )
                .await
                .map(|lease| (lease, Renewal::Renewed))
                .map_err(ApiCallError::of("renew", &object)),
        };
        match result {
            Ok((lease, renewal)) => {
                *last = Some(lease);
                return Ok(renewal);
            }
            Err(err)
                if attempt < CONFLICT_RETRIES
                    && (api_status(&err.source, Status::is_conflict)
                        || api_status(&err.source, Status::is_already_exists)
                        || api_status(&err.source, Status::is_not_found)) =>
            {
                attempt += 1;
            }
            Err(err) => return Err(err),
        }
    }
}

fn now() -> MicroTime {
    MicroTime(Timestamp::now())
}

/// A new lease of `holder`, renewed at `at`.
fn new_lease(holder: &Holder, at: MicroTime) -> Lease {
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
fn renewed(mut lease: Lease, holder: &Holder, at: MicroTime) -> Lease {
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
