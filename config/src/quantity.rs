//! `Quantity`: a Kubernetes resource quantity ("100Mi", "1Gi", "500m", "1.5G", "1e3", "42"),
//! kept as written for display and as an exact value for arithmetic.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::ParseError;
use crate::text::{deserialize_parsed, Scalars};

const NANOS_PER_UNIT: i128 = 1_000_000_000;

/// Decimal SI suffixes and their powers of ten ("" is the plain number).
const DECIMAL_SUFFIXES: &[(&str, i32)] = &[
    ("n", -9),
    ("u", -6),
    ("m", -3),
    ("", 0),
    ("k", 3),
    ("M", 6),
    ("G", 9),
    ("T", 12),
    ("P", 15),
    ("E", 18),
];

/// Binary SI suffixes and their powers of 1024.
const BINARY_SUFFIXES: &[(&str, u32)] = &[
    ("Ki", 1),
    ("Mi", 2),
    ("Gi", 3),
    ("Ti", 4),
    ("Pi", 5),
    ("Ei", 6),
];

/// A resource amount (bytes, cores, pids) as Kubernetes writes it. The text is kept so a
/// configuration shows and diffs exactly as the operator wrote it; the value is kept exactly
/// (in billionths of the base unit) so comparisons never suffer rounding.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Quantity {
    text: String,
    nanos: i128,
}

impl Quantity {
    /// `n` mebibytes, written as `"<n>Mi"`, for defaults such as `containerLogMaxSize: 10Mi`.
    pub fn mebibytes(n: u32) -> Self {
        Quantity {
            text: format!("{n}Mi"),
            nanos: i128::from(n) * (1 << 20) * NANOS_PER_UNIT,
        }
    }

    /// The value in base units (bytes, cores, …), rounded up as Kubernetes does, saturating at
    /// the bounds of `i64`.
    pub fn value(&self) -> i64 {
        saturate(div_ceil(self.nanos, NANOS_PER_UNIT))
    }

    /// The value in thousandths of the base unit (millicores), rounded up, saturating.
    pub fn milli_value(&self) -> i64 {
        saturate(div_ceil(self.nanos, NANOS_PER_UNIT / 1000))
    }

    /// Whether the quantity is below zero (never meaningful for a threshold or reservation).
    pub fn is_negative(&self) -> bool {
        self.nanos < 0
    }

    /// Whether the quantity is exactly zero (`0`, `0m`, `0Gi`, …): an API field left unset
    /// reaches the node as the zero quantity, which some fields read as their default.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// The text as written in the configuration.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The exact value in billionths of the base unit, for sums and comparisons that must not
    /// round (a pod's requests are the sum of its containers').
    pub fn nanos(&self) -> i128 {
        self.nanos
    }

    /// The quantity of exactly `nanos` billionths of the base unit, written in the shortest
    /// exact decimal form: whole units (`"3"`, `"268435456"`), else thousandths (`"250m"`),
    /// else billionths (`"5n"`).
    pub fn from_nanos(nanos: i128) -> Self {
        let text = if nanos % NANOS_PER_UNIT == 0 {
            format!("{}", nanos / NANOS_PER_UNIT)
        } else if nanos % 1_000_000 == 0 {
            format!("{}m", nanos / 1_000_000)
        } else {
            format!("{nanos}n")
        };
        Quantity { text, nanos }
    }
}

fn div_ceil(value: i128, divisor: i128) -> i128 {
    let quotient = value.div_euclid(divisor);
    if value.rem_euclid(divisor) == 0 {
        quotient
    } else {
        quotient + 1
    }
}

fn saturate(value: i128) -> i64 {
    i64::try_from(value).unwrap_or(if value < 0 { i64::MIN } else { i64::MAX })
}

impl FromStr for Quantity {
    type Err = ParseError;

    /// Parses `<sign?><digits>[.<digits>]<suffix>` where the suffix is a binary SI suffix
    /// (Ki … Ei), a decimal SI suffix (n u m k M G T P E) or a decimal exponent (e3, E-2).
    fn from_str(text: &str) -> Result<Self, ParseError> {
        let fail =
            |reason: &str| ParseError::new(format!("\"{text}\" is not a quantity: {reason}"));
        let (negative, unsigned) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let number_len = unsigned
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(unsigned.len());
        let (number, suffix) = unsigned.split_at(number_len);
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        if whole.is_empty() && fraction.is_empty() || fraction.contains('.') {
            return Err(fail(
                "expected a number such as \"100Mi\", \"1.5G\" or \"500m\"",
            ));
        }
        let too_large = || fail("it is too large");
        let mantissa = format!("{whole}{fraction}")
            .bytes()
            .try_fold(0i128, |value, digit| {
                value.checked_mul(10)?.checked_add(i128::from(digit - b'0'))
            })
            .ok_or_else(too_large)?;
        let fraction_digits = i32::try_from(fraction.len()).map_err(|_| too_large())?;
        let (scale, exponent) = match parse_suffix(suffix) {
            Some(Suffix::Binary(power)) => (1024i128.pow(power), 0),
            Some(Suffix::Decimal(exponent)) => (1, exponent),
            None => {
                return Err(fail(&format!(
                    "unknown suffix \"{suffix}\" (use Ki, Mi, Gi, Ti, Pi, Ei, n, u, m, k, M, G, T, P, E or an exponent such as e3)"
                )))
            }
        };
        let nanos = exponent
            .checked_add(9)
            .and_then(|e| e.checked_sub(fraction_digits))
            .zip(mantissa.checked_mul(scale))
            .and_then(|(exponent, scaled)| scale_decimal(scaled, exponent))
            .ok_or_else(too_large)?;
        Ok(Quantity {
            text: text.to_string(),
            nanos: if negative { -nanos } else { nanos },
        })
    }
}

enum Suffix {
    Binary(u32),
    Decimal(i32),
}

fn parse_suffix(suffix: &str) -> Option<Suffix> {
    if let Some((_, power)) = BINARY_SUFFIXES.iter().find(|(name, _)| *name == suffix) {
        return Some(Suffix::Binary(*power));
    }
    if let Some((_, exponent)) = DECIMAL_SUFFIXES.iter().find(|(name, _)| *name == suffix) {
        return Some(Suffix::Decimal(*exponent));
    }
    let exponent = suffix.strip_prefix(['e', 'E'])?;
    let digits = exponent.strip_prefix(['+', '-']).unwrap_or(exponent);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    exponent.parse().ok().map(Suffix::Decimal)
}

/// `mantissa * 10^exponent`, rounding a fractional result up; `None` on overflow.
fn scale_decimal(mantissa: i128, exponent: i32) -> Option<i128> {
    if exponent >= 0 {
        10i128
            .checked_pow(exponent.unsigned_abs())
            .and_then(|scale| mantissa.checked_mul(scale))
    } else {
        let divisor = 10i128.checked_pow(exponent.unsigned_abs());
        // A divisor past i128 leaves at most a sliver of a nanounit, which rounds up to one.
        Some(divisor.map_or(i128::from(mantissa > 0), |d| div_ceil(mantissa, d)))
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Serialize for Quantity {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for Quantity {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserialize_parsed(
            deserializer,
            "a quantity such as \"100Mi\"",
            Scalars::StringsAndNumbers,
        )
    }
}
