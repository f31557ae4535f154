//! Where the PLEG's container event subscription stands, and what follows from it: how often
//! to relist, and what to do when the runtime refuses or breaks the stream. The PLEG actor
//! acts on it (`sergeant_actors::pleg`, its evented half).

use std::time::Duration;

use k8s_cri::v1 as cri;

use crate::labels;

/// How often the runtime is relisted without an event stream (upstream's default).
pub const RELIST_PERIOD: Duration = Duration::from_secs(1);

/// How often the runtime is relisted while events stream, as a safety net (upstream's
/// evented relist period).
pub const EVENTED_RELIST_PERIOD: Duration = Duration::from_secs(300);

/// The first wait before subscribing again after a failure; it doubles with each failure.
const FIRST_RETRY: Duration = Duration::from_secs(1);

/// The longest wait between two subscription attempts.
const LAST_RETRY: Duration = Duration::from_secs(32);

/// The last outcome of subscribing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stance {
    /// No answer yet.
    Starting,
    /// Events stream.
    Streaming,
    /// The adapter in service cannot stream events.
    Unsupported,
    /// The stream could not be opened or broke.
    Broken,
}

/// Why a subscription was refused, or its stream broke, as far as what follows goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The adapter in service cannot stream events (the runtime answered `Unimplemented`).
    Unsupported,
    /// Anything else: the runtime is unreachable, or the stream failed.
    Failed,
}

/// What to do after a subscription was refused or ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Subscribe again at once: the stream was ended on purpose (adapter swapped, or the
    /// adapter dropped a subscriber that fell behind).
    Resubscribe,
    /// Subscribe again only once another adapter is in service; `log` is true the first time
    /// (logged at debug level: relisting is the normal mode on such runtimes).
    AwaitSwap {
        /// Whether to log it.
        log: bool,
    },
    /// Subscribe again after `delay`; `warn` is true for the first failure of an outage,
    /// whose later failures are logged at debug level only.
    Retry {
        /// How long to wait.
        delay: Duration,
        /// Whether to warn.
        warn: bool,
    },
}

/// The state of the PLEG's event subscription.
#[derive(Debug, Clone)]
pub struct Subscription {
    stance: Stance,
    failures: u32,
    warned: bool,
}

impl Default for Subscription {
    fn default() -> Self {
        Self {
            stance: Stance::Starting,
            failures: 0,
            warned: false,
        }
    }
}

impl Subscription {
    /// True while events stream.
    #[must_use]
    pub fn is_streaming(&self) -> bool {
        self.stance == Stance::Streaming
    }

    /// How often to relist now.
    #[must_use]
    pub fn relist_period(&self) -> Duration {
        if self.is_streaming() {
            EVENTED_RELIST_PERIOD
        } else {
            RELIST_PERIOD
        }
    }

    /// What the PLEG is doing, for its status.
    #[must_use]
    pub fn describe(&self) -> String {
        let period = self.relist_period();
        match self.stance {
            Stance::Streaming => {
                format!("evented (container events stream); relisting every {period:?}")
            }
            Stance::Unsupported => {
                format!("relisting every {period:?} (the runtime streams no container events)")
            }
            Stance::Broken => {
                format!("relisting every {period:?} (container event stream broken; retrying)")
            }
            Stance::Starting => format!("relisting every {period:?}"),
        }
    }

    /// A subscription was opened.
    pub fn connected(&mut self) {
        self.stance = Stance::Streaming;
        self.failures = 0;
        self.warned = false;
    }

    /// A subscription was refused, for `refusal`.
    pub fn refused(&mut self, refusal: Refusal) -> Next {
        if refusal == Refusal::Unsupported {
            let log = self.stance != Stance::Unsupported;
            self.stance = Stance::Unsupported;
            return Next::AwaitSwap { log };
        }
        self.failed()
    }

    /// The stream ended, with why it broke if an error broke it.
    pub fn ended(&mut self, refusal: Option<Refusal>) -> Next {
        match refusal {
            None => {
                self.stance = Stance::Starting;
                Next::Resubscribe
            }
            Some(refusal) => self.refused(refusal),
        }
    }

    fn failed(&mut self) -> Next {
        self.stance = Stance::Broken;
        let delay = FIRST_RETRY
            .saturating_mul(1 << self.failures.min(8))
            .min(LAST_RETRY);
        self.failures = self.failures.saturating_add(1);
        let warn = !std::mem::replace(&mut self.warned, true);
        Next::Retry { delay, warn }
    }
}

/// Whether `event` may concern the objects of node `node`: its sandbox carries the node's
/// label, or it has no sandbox status to tell (then a relist finds out).
#[must_use]
pub fn concerns_node(event: &cri::ContainerEventResponse, node: &str) -> bool {
    event
        .pod_sandbox_status
        .as_ref()
        .is_none_or(|sandbox| sandbox.labels.get(labels::NODE).map(String::as_str) == Some(node))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_relists_every_five_minutes_and_anything_else_every_second() {
        let mut subscription = Subscription::default();
        assert_eq!(subscription.relist_period(), RELIST_PERIOD);
        subscription.connected();
        assert_eq!(subscription.relist_period(), EVENTED_RELIST_PERIOD);
        assert!(subscription.describe().starts_with("evented"));
        subscription.ended(Some(Refusal::Failed));
        assert_eq!(subscription.relist_period(), RELIST_PERIOD);
    }

    #[test]
    fn unimplemented_waits_for_a_swap_and_is_logged_once() {
        let mut subscription = Subscription::default();
        assert_eq!(
            subscription.refused(Refusal::Unsupported),
            Next::AwaitSwap { log: true }
        );
        assert_eq!(
            subscription.refused(Refusal::Unsupported),
            Next::AwaitSwap { log: false }
        );
        assert_eq!(subscription.relist_period(), RELIST_PERIOD);
        assert!(subscription
            .describe()
            .contains("streams no container events"));
    }

    #[test]
    fn failures_back_off_and_warn_once_per_outage() {
        let mut subscription = Subscription::default();
        let delays: Vec<Next> = (0..8)
            .map(|_| subscription.refused(Refusal::Failed))
            .collect();
        let expected = [1, 2, 4, 8, 16, 32, 32, 32].map(|secs| Next::Retry {
            delay: Duration::from_secs(secs),
            warn: secs == 1,
        });
        assert_eq!(delays, expected);
        subscription.connected();
        assert_eq!(
            subscription.ended(Some(Refusal::Failed)),
            Next::Retry {
                delay: FIRST_RETRY,
                warn: true
            },
            "a new outage warns again, from the first delay"
        );
    }

    #[test]
    fn a_stream_ended_on_purpose_is_resubscribed_at_once() {
        let mut subscription = Subscription::default();
        subscription.connected();
        assert_eq!(subscription.ended(None), Next::Resubscribe);
        assert_eq!(subscription.relist_period(), RELIST_PERIOD);
    }

    #[test]
    fn events_of_other_nodes_are_not_ours() {
        let event = |labels: &[(&str, &str)]| cri::ContainerEventResponse {
            pod_sandbox_status: Some(cri::PodSandboxStatus {
                labels: labels
                    .iter()
                    .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                    .collect(),
                ..Default::default()
            }),
            ..Default::default()
        };
        assert!(concerns_node(&event(&[(labels::NODE, "n1")]), "n1"));
        assert!(!concerns_node(&event(&[(labels::NODE, "n2")]), "n1"));
        assert!(!concerns_node(&event(&[]), "n1"));
        assert!(concerns_node(&cri::ContainerEventResponse::default(), "n1"));
    }
}
