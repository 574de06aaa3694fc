//! The time-aware demand language of seed 004 (spec `time-aware-demands.md` §3.2): a
//! ResourceDescription in JSON, whose time expressions are JSON structures or the seed's
//! compact strings (`OR([NOW, +5m], [NOW, ^3])`), read into one syntax tree ([`ast`]) with
//! `NOW` and `START` left symbolic, checked, printed back ([`print`]), and resolved against a
//! `now` the caller passes ([`window`], [`resolve`]).
//!
//! Pure: no clock, no files. Every problem names the JSON field as a pointer and, inside a
//! compact string, the column ([`DemandError`]); a submission reports all of its problems.

pub mod ast;
mod checks;
mod compact;
mod error;
mod json;
pub mod print;
pub mod window;

use serde_json::Value;

pub use ast::*;
pub use checks::{references, resolve, ResolvedTimes};
pub use compact::MAX_NESTING;
pub use error::{DemandError, DemandErrors};
pub use json::MAX_NAME_CHARS;

/// What one submission holds once read and checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Submission {
    /// The demands, in document order.
    pub demands: Vec<ResourceDescription>,
    /// Each demand's JSON pointer (for later diagnostics, e.g. [`resolve`]'s).
    pub pointers: Vec<String>,
    /// Accepted but noteworthy (the `Deadline` alias).
    pub warnings: Vec<DemandError>,
}

/// Reads a document holding one ResourceDescription or an array of them.
///
/// `default` is `weft.demand.default-strategy` (the strategy of fields that name none);
/// `exists` says whether an OrderBy reference outside this submission names a known demand.
pub fn parse_document(
    text: &str,
    default: Strategy,
    exists: &dyn Fn(&DemandRef) -> bool,
) -> Result<Submission, DemandErrors> {
    let value: Value = serde_json::from_str(text).map_err(|e| DemandError {
        pointer: String::new(),
        column: Some(e.column()),
        message: format!("not JSON: {e}"),
    })?;
    parse_value(&value, "", default, exists)
}

/// Reads the ResourceDescription (or array of them) at `pointer` of an already decoded
/// document (a REST body's `demands`, a scenario's field).
pub fn parse_value(
    value: &Value,
    pointer: &str,
    default: Strategy,
    exists: &dyn Fn(&DemandRef) -> bool,
) -> Result<Submission, DemandErrors> {
    let items: Vec<(&Value, String)> = match value {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(DemandError::at(pointer, "no demands: the array is empty").into());
            }
            items
                .iter()
                .enumerate()
                .map(|(i, item)| (item, error::child(pointer, &i.to_string())))
                .collect()
        }
        other => vec![(other, pointer.to_owned())],
    };
    let mut errors = Vec::new();
    let mut submission = Submission {
        demands: Vec::with_capacity(items.len()),
        pointers: Vec::with_capacity(items.len()),
        warnings: Vec::new(),
    };
    for (item, at) in items {
        match json::read_demand(item, &at) {
            Ok(read) => {
                checks::check_demand(&read.demand, &at, default, &mut errors);
                submission.demands.push(read.demand);
                submission.pointers.push(at);
                submission.warnings.extend(read.warnings);
            }
            Err(found) => errors.extend(found),
        }
    }
    if errors.is_empty() {
        checks::check_batch(
            &submission.demands,
            &submission.pointers,
            exists,
            &mut errors,
        );
    }
    if errors.is_empty() {
        Ok(submission)
    } else {
        Err(DemandErrors(errors))
    }
}

/// Reads a compact time expression on its own (as the CLI and tests write them); errors carry
/// the column.
pub fn parse_time_expr(text: &str) -> Result<TimeExpr, DemandError> {
    compact::parse_time_expr(text).map_err(|e| DemandError::at_column("", e.column, e.message))
}
