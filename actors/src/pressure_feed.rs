//! [`PressureFeed`]: the node's pressure conditions as the eviction manager last decided them,
//! one published set replaced whole at each decision. The eviction manager is the only writer;
//! the node status (conditions) and the pod manager (admission) read it.

use std::collections::BTreeSet;

use sergeant_core::eviction::signals::Pressure;
use tokio::sync::watch;

/// The pressure conditions the node reports `True`.
pub type PressureFeed = watch::Receiver<BTreeSet<Pressure>>;
