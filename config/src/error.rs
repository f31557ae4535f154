//! Error types: `ConfigError`, the one-line "file:line:column: field: reason" report every
//! configuration failure becomes, and `ParseError`, the reason a single value did not parse.

use std::fmt;

/// Why a single value (a duration, quantity, threshold or signal) did not parse. Its text is
/// the reason that ends up after the field name in a `ConfigError`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct ParseError {
    message: String,
}

impl ParseError {
    pub(crate) fn new(message: String) -> Self {
        ParseError { message }
    }
}

/// A 1-based position in the configuration file, so editors and operators can jump to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Line, counted from 1 over the whole file (not per YAML document).
    pub line: usize,
    /// Column, counted from 1 in characters.
    pub column: usize,
}

/// A configuration that cannot be used, with enough detail to fix it without guessing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("{file}: cannot read: {reason}")]
    Read {
        /// The file as named to `NodeConfig::load`.
        file: String,
        /// The operating system's reason, without the error number.
        reason: String,
    },
    /// The file was read but its content is not a valid configuration.
    #[error("{}: {problem}", Place(.file, .location))]
    Invalid {
        /// The file (or source name given to `NodeConfig::parse`).
        file: String,
        /// Where in the file, when it is known.
        location: Option<Location>,
        /// What is wrong (boxed to keep `Result<_, ConfigError>` small).
        problem: Box<Problem>,
    },
    /// Neither `--hostname-override` nor the machine gave a node name.
    #[error("cannot determine the node name: {reason}")]
    NodeName {
        /// Why the machine hostname was not usable.
        reason: String,
    },
}

/// What is wrong with a configuration's content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Problem {
    /// The text is not YAML.
    #[error("malformed YAML: {0}")]
    MalformedYaml(String),
    /// A key that the document's schema does not have (usually a typo).
    #[error("unknown field \"{name}\" in {container}{}", Suggestion(.suggestion))]
    UnknownField {
        /// The full path of the unknown key, e.g. `authentication.webhook.enabeld`.
        field: String,
        /// The unknown key itself.
        name: String,
        /// The document kind (top level) or the parent path holding the key.
        container: String,
        /// The closest known field name, when one is close.
        suggestion: Option<String>,
    },
    /// A value of the wrong type, unparsable, out of range, or inconsistent with another.
    #[error("{}{reason}", FieldPrefix(.field))]
    InvalidValue {
        /// The path of the offending key, e.g. `evictionHard.memory.available`; none when the
        /// problem is the document as a whole.
        field: Option<String>,
        /// Why the value is refused.
        reason: String,
    },
}

impl ConfigError {
    pub(crate) fn invalid(file: &str, location: Option<Location>, problem: Problem) -> Self {
        ConfigError::Invalid {
            file: file.to_string(),
            location,
            problem: Box::new(problem),
        }
    }

    /// The file the error is about, when it is about a file.
    pub fn file(&self) -> Option<&str> {
        match self {
            ConfigError::Read { file, .. } | ConfigError::Invalid { file, .. } => Some(file),
            ConfigError::NodeName { .. } => None,
        }
    }

    /// The 1-based line in the file, when known.
    pub fn line(&self) -> Option<usize> {
        self.location().map(|at| at.line)
    }

    /// The 1-based column in the file, when known.
    pub fn column(&self) -> Option<usize> {
        self.location().map(|at| at.column)
    }

    /// The path of the offending field (e.g. `evictionHard.memory.available`), when the error
    /// is about one field.
    pub fn field(&self) -> Option<&str> {
        match self {
            ConfigError::Invalid { problem, .. } => match problem.as_ref() {
                Problem::UnknownField { field, .. } => Some(field),
                Problem::InvalidValue { field, .. } => field.as_deref(),
                Problem::MalformedYaml(_) => None,
            },
            _ => None,
        }
    }

    fn location(&self) -> Option<Location> {
        match self {
            ConfigError::Invalid { location, .. } => *location,
            _ => None,
        }
    }
}

/// Renders `file:line:column`, or `file` alone when the position is unknown.
struct Place<'a>(&'a String, &'a Option<Location>);

impl fmt::Display for Place<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.1 {
            Some(at) => write!(f, "{}:{}:{}", self.0, at.line, at.column),
            None => f.write_str(self.0),
        }
    }
}

/// Renders ` (did you mean "x"?)` when there is a suggestion.
struct Suggestion<'a>(&'a Option<String>);

impl fmt::Display for Suggestion<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Some(name) => write!(f, " (did you mean \"{name}\"?)"),
            None => Ok(()),
        }
    }
}

/// Renders `field: ` when there is a field.
struct FieldPrefix<'a>(&'a Option<String>);

impl fmt::Display for FieldPrefix<'_> {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match self.0 {
            Some(field) => write!(f, "{field}: "),
            None => Ok(()),
        }
    }
}
