//! Which pod CIDR the runtime should have, and whether the adapter in service has been told.
//!
//! Entry point: [`PodCidr`]. As upstream's kubelet: the configuration's `podCIDR` is handed to
//! the runtime at start (CRI `UpdateRuntimeConfig`); once the Node's `spec.podCIDRs` is set
//! (managed mode), that wins. A runtime that renders its CNI configuration from a template
//! (containerd's `conf_template`) gives pods no network until it has one. The runtime-adapter
//! actor keeps this state and does the sending; a swapped-in adapter is told again.

/// The wanted pod CIDR and what the adapters in service were told.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PodCidr {
    /// `podCIDR` of the configuration; empty when unset.
    configured: String,
    /// The Node's `spec.podCIDRs`, comma-joined; empty until the Node has any.
    from_node: String,
    /// The adapter (by id) that accepted a CIDR, and which.
    handed: Option<(u64, String)>,
    /// A request on its way: to which adapter, with which CIDR.
    sending: Option<(u64, String)>,
}

impl PodCidr {
    /// The state at start, with the configuration's `podCIDR` (`None` or empty: unset).
    #[must_use]
    pub fn new(configured: Option<&str>) -> Self {
        Self {
            configured: configured.unwrap_or_default().to_owned(),
            ..Self::default()
        }
    }

    /// The configuration's `podCIDR` changed (a live reload).
    pub fn configure(&mut self, configured: Option<&str>) {
        configured
            .unwrap_or_default()
            .clone_into(&mut self.configured);
    }

    /// The Node's `spec.podCIDRs` as just read; an empty list changes nothing (the range
    /// assigned before stays with the runtime).
    pub fn node_assigned(&mut self, cidrs: &[String]) {
        if !cidrs.is_empty() {
            self.from_node = cidrs.join(",");
        }
    }

    /// The pod CIDR the runtime should have: the Node's, else the configuration's; `None`
    /// when neither names one.
    #[must_use]
    pub fn wanted(&self) -> Option<&str> {
        [&self.from_node, &self.configured]
            .into_iter()
            .find(|cidr| !cidr.is_empty())
            .map(String::as_str)
    }

    /// The CIDR to send to adapter `adapter` now, if it does not have the wanted one and no
    /// request with it is on its way; the request counts as on its way from here on.
    pub fn to_send(&mut self, adapter: u64) -> Option<String> {
        let wanted = self.wanted()?.to_owned();
        let target = Some((adapter, wanted.clone()));
        if self.handed == target || self.sending == target {
            return None;
        }
        self.sending.clone_from(&target);
        Some(wanted)
    }

    /// The answer to a request sent with [`PodCidr::to_send`]: when it was accepted and is
    /// still the wanted CIDR, returns the CIDR the runtime had before (empty when none), for
    /// the log; on failure, the next [`PodCidr::to_send`] asks again; an answer overtaken by a
    /// newer wish changes nothing.
    pub fn answered(&mut self, adapter: u64, cidr: &str, accepted: bool) -> Option<String> {
        if self
            .sending
            .as_ref()
            .is_some_and(|(id, sent)| *id == adapter && sent == cidr)
        {
            self.sending = None;
        }
        if !accepted || self.wanted() != Some(cidr) {
            return None;
        }
        let before = self
            .handed
            .replace((adapter, cidr.to_owned()))
            .map(|(_, before)| before)
            .unwrap_or_default();
        Some(before)
    }

    /// The CIDR the adapter in service accepted last, if any.
    #[must_use]
    pub fn handed(&self) -> Option<&str> {
        self.handed.as_ref().map(|(_, cidr)| cidr.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(cidrs: &[&str]) -> Vec<String> {
        cidrs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn nothing_is_sent_when_neither_the_config_nor_the_node_names_a_cidr() {
        let mut state = PodCidr::new(None);
        state.node_assigned(&[]);
        assert_eq!(state.wanted(), None);
        assert_eq!(state.to_send(1), None);
        assert_eq!(PodCidr::new(Some("")).to_send(1), None);
    }

    #[test]
    fn the_configured_cidr_is_sent_once_to_each_adapter() {
        let mut state = PodCidr::new(Some("10.244.7.0/24"));
        assert_eq!(state.to_send(1).as_deref(), Some("10.244.7.0/24"));
        assert_eq!(state.to_send(1), None, "already on its way");
        assert_eq!(
            state.answered(1, "10.244.7.0/24", true).as_deref(),
            Some("")
        );
        assert_eq!(state.to_send(1), None, "already accepted");
        assert_eq!(
            state.to_send(2).as_deref(),
            Some("10.244.7.0/24"),
            "a swapped-in adapter is told again"
        );
    }

    #[test]
    fn the_nodes_cidrs_win_over_the_configuration_and_an_empty_list_keeps_them() {
        let mut state = PodCidr::new(Some("10.244.7.0/24"));
        let sent = state.to_send(1).expect("sent");
        state.answered(1, &sent, true);
        state.node_assigned(&node(&["10.244.8.0/24", "fd00:8::/64"]));
        assert_eq!(state.wanted(), Some("10.244.8.0/24,fd00:8::/64"));
        assert_eq!(
            state.to_send(1).as_deref(),
            Some("10.244.8.0/24,fd00:8::/64")
        );
        assert_eq!(
            state
                .answered(1, "10.244.8.0/24,fd00:8::/64", true)
                .as_deref(),
            Some("10.244.7.0/24")
        );
        state.node_assigned(&[]);
        assert_eq!(state.wanted(), Some("10.244.8.0/24,fd00:8::/64"));
        assert_eq!(state.to_send(1), None);
    }

    #[test]
    fn a_refused_request_is_asked_again() {
        let mut state = PodCidr::new(Some("10.244.7.0/24"));
        let sent = state.to_send(1).expect("sent");
        assert_eq!(state.answered(1, &sent, false), None);
        assert_eq!(state.handed(), None);
        assert_eq!(state.to_send(1).as_deref(), Some("10.244.7.0/24"));
    }

    #[test]
    fn a_reload_of_the_configured_cidr_is_sent_unless_the_node_names_one() {
        let mut state = PodCidr::new(Some("10.244.7.0/24"));
        let sent = state.to_send(1).expect("sent");
        state.answered(1, &sent, true);
        state.configure(Some("10.244.9.0/24"));
        assert_eq!(state.to_send(1).as_deref(), Some("10.244.9.0/24"));
        state.node_assigned(&node(&["10.244.8.0/24"]));
        state.configure(Some("10.244.10.0/24"));
        assert_eq!(state.wanted(), Some("10.244.8.0/24"));
    }

    #[test]
    fn an_answer_to_an_older_request_does_not_clear_the_newer_one_on_its_way() {
        let mut state = PodCidr::new(Some("10.244.7.0/24"));
        let first = state.to_send(1).expect("sent");
        state.node_assigned(&node(&["10.244.8.0/24"]));
        let second = state.to_send(1).expect("sent");
        state.answered(1, &first, true);
        assert_eq!(state.to_send(1), None, "the second is still on its way");
        state.answered(1, &second, true);
        assert_eq!(state.handed(), Some("10.244.8.0/24"));
    }
}
