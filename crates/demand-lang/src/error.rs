//! Diagnostics: every problem names the JSON field (a JSON pointer, RFC 6901) and, inside a
//! compact string, the 1-based column of the offending character.

use std::fmt;

/// One problem with a demand.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct DemandError {
    /// Where: a JSON pointer such as `/Start/Time` or `/demands/0/OrderBy` (empty for the whole
    /// document).
    pub pointer: String,
    /// The 1-based character column inside the string at `pointer`, for compact expressions.
    pub column: Option<usize>,
    /// What is wrong, and what was expected.
    pub message: String,
}

impl DemandError {
    /// A problem with the value at `pointer` as a whole.
    pub fn at(pointer: &str, message: impl Into<String>) -> DemandError {
        DemandError {
            pointer: pointer.to_owned(),
            column: None,
            message: message.into(),
        }
    }

    /// A problem at `column` inside the string at `pointer`.
    pub fn at_column(pointer: &str, column: usize, message: impl Into<String>) -> DemandError {
        DemandError {
            pointer: pointer.to_owned(),
            column: Some(column),
            message: message.into(),
        }
    }
}

impl fmt::Display for DemandError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "(document)"
        } else {
            &self.pointer
        };
        match self.column {
            Some(column) => write!(f, "{pointer}: column {column}: {}", self.message),
            None => write!(f, "{pointer}: {}", self.message),
        }
    }
}

/// Every problem found in one submission (never empty).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct DemandErrors(pub Vec<DemandError>);

impl DemandErrors {
    /// The problems, in document order.
    pub fn iter(&self) -> std::slice::Iter<'_, DemandError> {
        self.0.iter()
    }
}

impl fmt::Display for DemandErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{error}")?;
        }
        Ok(())
    }
}

impl From<DemandError> for DemandErrors {
    fn from(error: DemandError) -> DemandErrors {
        DemandErrors(vec![error])
    }
}

/// Appends a JSON pointer token, escaping `~` and `/` as RFC 6901 says.
pub(crate) fn child(pointer: &str, token: &str) -> String {
    let escaped = token.replace('~', "~0").replace('/', "~1");
    format!("{pointer}/{escaped}")
}
