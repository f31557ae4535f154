//! Events as the upstream kubelet reports them, before any API call: what one says
//! ([`record`]: the object, type, upstream reason and message), what becomes of each before it
//! is written ([`correlate`]: client-go's rate limit, combining and repeat counting), the Event
//! object written ([`object`]), and Go's way of printing durations that upstream's messages use
//! ([`duration`]). The actors emit, correlate and write them.

pub mod correlate;
pub mod duration;
pub mod object;
pub mod record;

pub use duration::go_millis;
pub use record::{reason, EventType, Involved, ObjectKind, Record};
