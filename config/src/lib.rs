//! sergeant's configuration: the upstream `KubeletConfiguration` document, sergeant's own
//! `SergeantConfiguration` document, and the command-line flags, merged into one `NodeConfig`.
//!
//! The entry point is [`NodeConfig::load`]: it reads the file, parses both documents with
//! upstream defaults for whatever is absent, checks them, and applies the flags. Every problem
//! comes back as a [`ConfigError`] naming the file, line, field and reason. [`diff`] compares
//! two loaded configurations and says which changes can be applied live, and by whom.

mod adopt;
mod diff;
mod document;
mod duration;
mod endpoint;
mod error;
mod eviction;
mod feature_gates;
mod flags;
pub mod kubelet;
mod locate;
mod node;
mod quantity;
mod serde_error;
pub mod sergeant;
mod support;
pub mod sysctl;
mod text;
mod tls;
mod validate;
mod warning;

pub use diff::{diff, Apply, ConfigDiff, FieldChange, Owner};
pub use duration::Duration;
pub use endpoint::{Endpoint, EndpointError};
pub use error::{ConfigError, Location, ParseError, Problem};
pub use eviction::{GracePeriods, Signal, Threshold, Thresholds};
pub use flags::{CommandLine, FlagOverrides, DEFAULT_ROOT_DIR};
pub use kubelet::KubeletConfiguration;
pub use locate::locate_field;
pub use node::NodeConfig;
pub use quantity::Quantity;
pub use serde_error::{reword, suggest};
pub use sergeant::SergeantConfiguration;
pub use tls::CipherSuite;
pub use warning::ConfigWarning;
