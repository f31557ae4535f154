//! serde glue shared by the value types that are written as strings in YAML (durations,
//! quantities, thresholds, eviction signals): parse through `FromStr` so the parse error becomes
//! the serde error (and serde_yaml attaches the line and column), and print through `Display`.

use std::fmt::{self, Display};
use std::marker::PhantomData;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};

/// Which YAML scalars a string-parsed type accepts besides strings.
#[derive(Clone, Copy)]
pub(crate) enum Scalars {
    /// Only strings (durations, signals: upstream rejects bare numbers for them).
    StringsOnly,
    /// Strings and numbers, the number's decimal text being parsed (quantities: upstream
    /// accepts `containerLogMaxSize: 1000`).
    StringsAndNumbers,
}

/// Deserializes a `T` from a scalar by way of `T::from_str`.
pub(crate) fn deserialize_parsed<'de, D, T>(
    deserializer: D,
    expecting: &'static str,
    scalars: Scalars,
) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: FromStr,
    T::Err: Display,
{
    deserializer.deserialize_any(ParsedVisitor {
        expecting,
        scalars,
        target: PhantomData,
    })
}

struct ParsedVisitor<T> {
    expecting: &'static str,
    scalars: Scalars,
    target: PhantomData<T>,
}

impl<T> ParsedVisitor<T>
where
    T: FromStr,
    T::Err: Display,
{
    fn number<E: de::Error>(self, text: String, unexpected: de::Unexpected) -> Result<T, E> {
        match self.scalars {
            Scalars::StringsAndNumbers => text.parse().map_err(E::custom),
            Scalars::StringsOnly => Err(E::invalid_type(unexpected, &self)),
        }
    }
}

impl<T> Visitor<'_> for ParsedVisitor<T>
where
    T: FromStr,
    T::Err: Display,
{
    type Value = T;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str(self.expecting)
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<T, E> {
        value.parse().map_err(E::custom)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<T, E> {
        self.number(value.to_string(), de::Unexpected::Signed(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<T, E> {
        self.number(value.to_string(), de::Unexpected::Unsigned(value))
    }

    fn visit_f64<E: de::Error>(self, value: f64) -> Result<T, E> {
        self.number(value.to_string(), de::Unexpected::Float(value))
    }
}
