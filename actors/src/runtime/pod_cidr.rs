//! Handing the node's pod CIDR to the runtime (CRI `UpdateRuntimeConfig`): the configured
//! `podCIDR` at start, the Node's `spec.podCIDRs` once the node-status actor reads them
//! ([`NodePodCidrs`]), again to every adapter swapped in, and again after a refusal at the next
//! health poll. What to send when is decided by [`sergeant_core::cni::pod_cidr::PodCidr`]; this file only sends it.

use actix::{ActorFutureExt, AsyncContext, Context, Handler, WrapFuture};
use sergeant_messages::pod_cidr::NodePodCidrs;
use sergeant_messages::runtime::{cri, RuntimeCall, RuntimeOperation};

use super::adapter::RuntimeAdapter;

impl RuntimeAdapter {
    /// Sends the wanted pod CIDR to the adapter in service when it does not have it yet.
    pub(super) fn hand_pod_cidr(&mut self, ctx: &mut Context<Self>) {
        let Some((id, recipient)) = self.in_service_port() else {
            return;
        };
        let Some(cidr) = self.pod_cidr.to_send(id) else {
            return;
        };
        let request = cri::UpdateRuntimeConfigRequest {
            runtime_config: Some(cri::RuntimeConfig {
                network_config: Some(cri::NetworkConfig {
                    pod_cidr: cidr.clone(),
                }),
            }),
        };
        let call = recipient.send(RuntimeCall(request.into_request()));
        ctx.spawn(call.into_actor(self).map(move |answer, act, _| {
            let refusal = match answer {
                Ok(Ok(_)) => None,
                Ok(Err(err)) => Some(err.to_string()),
                Err(_) => Some("the runtime adapter died during the call".to_owned()),
            };
            let accepted = refusal.is_none();
            match act.pod_cidr.answered(id, &cidr, accepted) {
                Some(before) => tracing::info!(
                    original = %before,
                    new = %cidr,
                    "pod CIDR handed to the runtime"
                ),
                None if !accepted => tracing::warn!(
                    cidr = %cidr,
                    "the runtime refused the pod CIDR ({}); asked again at the next health poll",
                    refusal.unwrap_or_default()
                ),
                None => {}
            }
            act.show_status();
        }));
    }
}

impl Handler<NodePodCidrs> for RuntimeAdapter {
    type Result = ();

    fn handle(&mut self, NodePodCidrs(cidrs): NodePodCidrs, ctx: &mut Context<Self>) {
        self.pod_cidr.node_assigned(&cidrs);
        self.hand_pod_cidr(ctx);
    }
}
