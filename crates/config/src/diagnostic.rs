//! Problems found in a configuration text, each placed at a line and column.

use std::fmt;

/// How bad a problem is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// The text is still accepted (for example an unknown element).
    Warning,
    /// The text is refused.
    Error,
}

/// One problem, placed in the text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Warning or error.
    pub severity: Severity,
    /// 1-based line in the text (0 when the problem has no single place).
    pub line: u32,
    /// 1-based column in the text (0 when the problem has no single place).
    pub column: u32,
    /// Where in the document, e.g. `queue root.a` or `queuePlacementPolicy rule 2`; may be empty.
    pub path: String,
    /// What is wrong, said so a person can fix it.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// `line 12, column 5: queue root.a: maxAMShare: '1.5x' is not a number`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "line {}, column {}: ", self.line, self.column)?;
        }
        if !self.path.is_empty() {
            write!(f, "{}: ", self.path)?;
        }
        write!(f, "{}", self.message)
    }
}

/// Every problem of a refused text, in document order.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{d}")?;
        }
        Ok(())
    }
}
