//! The node lease `kube-node-lease/<node>`: the cheap heartbeat the node lifecycle controller
//! watches, renewed every quarter of its duration, as upstream's lease controller does —
//! created when missing (owned by the Node, so it goes when the Node goes), renewed from the
//! lease the API server returned last time (one request per renewal), and read again only when
//! there is none or on a conflict, then retried. The lease objects themselves are made by
//! `sergeant_core::node_status::lease`.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;
use kube::api::PostParams;
use kube::core::Status;
use kube::{Api, Client};
use sergeant_core::node_status::lease::{new_lease, renewed, Holder, NAMESPACE};

use super::error::{api_status, ApiCallError};

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
