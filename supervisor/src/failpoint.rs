//! Named fault-injection points, compiled in only with the `failpoints` cargo feature and set
//! through the `FAILPOINTS` environment variable (`name=panic`, `name=1*return(reason)`, …).
//! A point checked with [`check_scoped`] can also be set for one instance alone
//! (`pod::sync/default/web=panic` makes only that pod's actor panic).

/// A fault injected at a named failpoint with the `return` action.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("fault injected at failpoint {point}: {message}")]
pub struct InjectedFault {
    /// The failpoint's name.
    pub point: String,
    /// The argument of the `return(...)` action, if any.
    pub message: String,
}

/// Evaluates the failpoint `name`: panics for a `panic` action, returns the fault for a
/// `return` action, and does nothing when the point is off or the feature is not compiled in.
///
/// # Errors
/// [`InjectedFault`] when the failpoint is set to `return`.
pub fn check(name: &str) -> Result<(), InjectedFault> {
    let _ = name;
    fail::fail_point!(name, |message: Option<String>| Err(InjectedFault {
        point: name.to_owned(),
        message: message.unwrap_or_default(),
    }));
    Ok(())
}

/// Evaluates the failpoint `name` for every instance, then `name/scope` for this one (a pod's
/// `namespace/name`), so a test can fail one pod's actor and leave the others alone. The scope
/// is only formatted when failpoints are compiled in.
///
/// # Errors
/// [`InjectedFault`] when either point is set to `return`.
pub fn check_scoped(name: &str, scope: std::fmt::Arguments<'_>) -> Result<(), InjectedFault> {
    check(name)?;
    #[cfg(feature = "failpoints")]
    check(&format!("{name}/{scope}"))?;
    let _ = scope;
    Ok(())
}
