//! CRI label selectors: an object matches when it carries every selected label with its value.

use std::collections::HashMap;

/// Whether `labels` satisfy `selector` (an empty selector matches everything).
pub(super) fn matches(
    labels: &HashMap<String, String>,
    selector: &HashMap<String, String>,
) -> bool {
    selector
        .iter()
        .all(|(key, value)| labels.get(key) == Some(value))
}
