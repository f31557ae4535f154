//! Reading a CNI configuration's JSON as the Go plugins do: keys matched exactly first and
//! then without regard to case (Go's decoder), each value checked with the path it sits at,
//! so a fault names its field.

use std::fmt;
use std::net::IpAddr;

use serde_json::{Map, Value};

/// A JSON object being checked, with the path that names it in messages.
#[derive(Debug, Clone)]
pub(super) struct Obj<'a> {
    pub(super) path: String,
    pub(super) map: &'a Map<String, Value>,
}

/// A fault at a path, before the file is known.
pub(super) type Fault = (String, String);

/// `path.key` (or `key` at the top).
fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_owned()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a> Obj<'a> {
    /// `value` as an object at `path`.
    pub(super) fn at(path: String, value: &'a Value) -> Result<Self, Fault> {
        match value {
            Value::Object(map) => Ok(Self { path, map }),
            other => {
                let reason = format!("must be an object, not {}", kind(other));
                Err((path, reason))
            }
        }
    }

    /// The key as the file writes it and its value, matched as Go's decoder matches `key`.
    fn entry(&self, key: &str) -> Option<(&'a str, &'a Value)> {
        self.map
            .get_key_value(key)
            .or_else(|| self.map.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)))
            .map(|(k, v)| (k.as_str(), v))
    }

    /// The value under `key`, matched as Go's decoder matches it.
    pub(super) fn get(&self, key: &str) -> Option<&'a Value> {
        self.entry(key).map(|(_, value)| value)
    }

    /// The path of `key` in this object, spelled as the file spells it when it is there.
    pub(super) fn path_of(&self, key: &str) -> String {
        join(
            &self.path,
            self.entry(key).map_or(key, |(written, _)| written),
        )
    }

    /// A fault at `key` of this object.
    pub(super) fn fault(&self, key: &str, reason: impl fmt::Display) -> Fault {
        (self.path_of(key), reason.to_string())
    }

    /// The string under `key`, if set.
    pub(super) fn opt_str(&self, key: &str) -> Result<Option<&'a str>, Fault> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s)),
            Some(other) => Err(self.fault(key, format!("must be a string, not {}", kind(other)))),
        }
    }

    /// The non-empty string under `key`.
    pub(super) fn str(&self, key: &str) -> Result<&'a str, Fault> {
        match self.opt_str(key)? {
            Some(s) if !s.trim().is_empty() => Ok(s),
            Some(_) => Err(self.fault(key, "is empty")),
            None => Err(self.fault(key, "is missing")),
        }
    }

    /// The boolean under `key` (false when not set).
    pub(super) fn flag(&self, key: &str) -> Result<bool, Fault> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(other) => {
                Err(self.fault(key, format!("must be true or false, not {}", kind(other))))
            }
        }
    }

    /// The object under `key`, if set.
    pub(super) fn opt_obj(&self, key: &str) -> Result<Option<Obj<'a>>, Fault> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => Obj::at(self.path_of(key), value).map(Some),
        }
    }

    /// The object under `key`, which must be set.
    pub(super) fn obj(&self, key: &str) -> Result<Obj<'a>, Fault> {
        self.opt_obj(key)?
            .ok_or_else(|| self.fault(key, "is missing"))
    }

    /// The objects of the list under `key` (none when not set).
    pub(super) fn objects(&self, key: &str) -> Result<Vec<Obj<'a>>, Fault> {
        let field = self.path_of(key);
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(n, item)| Obj::at(format!("{field}[{n}]"), item))
            .collect()
    }

    /// The array under `key` (empty when not set).
    pub(super) fn array(&self, key: &str) -> Result<&'a [Value], Fault> {
        match self.get(key) {
            None | Some(Value::Null) => Ok(&[]),
            Some(Value::Array(items)) => Ok(items),
            Some(other) => Err(self.fault(key, format!("must be a list, not {}", kind(other)))),
        }
    }

    /// The strings of the list under `key`, each checked with `check` (which says why not).
    pub(super) fn strings(
        &self,
        key: &str,
        check: fn(&str) -> Result<(), AddressError>,
    ) -> Result<Vec<&'a str>, Fault> {
        let field = self.path_of(key);
        self.array(key)?
            .iter()
            .enumerate()
            .map(|(n, item)| {
                let at = || format!("{field}[{n}]");
                let text = item
                    .as_str()
                    .ok_or_else(|| (at(), format!("must be a string, not {}", kind(item))))?;
                check(text).map_err(|error| (at(), error.to_string()))?;
                Ok(text)
            })
            .collect()
    }
}

/// What kind of JSON value this is, for messages.
pub(super) fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Why a value that should be an address or a CIDR block is not one; the reason of the
/// [`ConfigFault`](super::ConfigFault) at its field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum AddressError {
    /// Not an IP address.
    #[error("{0:?} is not an IP address")]
    NotIp(String),
    /// Not `address/prefix`, or a prefix too long for the address.
    #[error("{0:?} is not a CIDR block (address/prefix)")]
    NotCidr(String),
}

/// An IP address.
pub(super) fn ip(text: &str) -> Result<(), AddressError> {
    text.parse::<IpAddr>()
        .map(drop)
        .map_err(|_| AddressError::NotIp(text.to_owned()))
}

/// A CIDR block (`10.244.0.0/16`, `fd00::/64`), returned as its address.
pub(super) fn cidr(text: &str) -> Result<IpAddr, AddressError> {
    let bad = || AddressError::NotCidr(text.to_owned());
    let (addr, prefix) = text.split_once('/').ok_or_else(bad)?;
    let addr: IpAddr = addr.parse().map_err(|_| bad())?;
    let prefix: u8 = prefix.parse().map_err(|_| bad())?;
    let max = if addr.is_ipv4() { 32 } else { 128 };
    if prefix > max {
        return Err(bad());
    }
    Ok(addr)
}

/// [`cidr`], for list checks.
pub(super) fn cidr_only(text: &str) -> Result<(), AddressError> {
    cidr(text).map(drop)
}

/// A CIDR block or a single address (NAT exceptions take both).
pub(super) fn cidr_or_ip(text: &str) -> Result<(), AddressError> {
    if text.contains('/') {
        cidr_only(text)
    } else {
        ip(text)
    }
}
