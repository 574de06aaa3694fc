//! Queue-name rules shared by placement and queue creation (spec §12.1 name cleaning, §15).

use super::PlacementError;
use std::fmt;

/// Whether `c` is whitespace for queue names.
///
/// Hadoop trims queue names with Guava's whitespace table rather than Java's `String.trim`, so
/// NBSP (U+00A0), U+2007 and U+202F count while the ASCII control separators U+001C..U+001F do
/// not. That table is exactly Unicode's `White_Space` property; it is spelled out here so the
/// compatibility target stays visible (a test checks it against `char::is_whitespace`).
pub(super) fn is_queue_whitespace(c: char) -> bool {
    matches!(
        c,
        '\u{0009}'..='\u{000D}'
            | '\u{0020}'
            | '\u{0085}'
            | '\u{00A0}'
            | '\u{1680}'
            | '\u{2000}'..='\u{200A}'
            | '\u{2028}'
            | '\u{2029}'
            | '\u{202F}'
            | '\u{205F}'
            | '\u{3000}'
    )
}

/// Trims queue-name whitespace from both ends.
pub(super) fn trim_queue_name(name: &str) -> &str {
    name.trim_matches(is_queue_whitespace)
}

/// Turns a user or group name into one queue-name component: trimmed, every '.' replaced by
/// `_dot_` (`first.last` -> `first_dot_last`), so a dotted user cannot address a nested queue.
pub(crate) fn clean_component(name: &str) -> String {
    trim_queue_name(name).replace('.', "_dot_")
}

/// Adds the `root.` prefix unless the name already is `root` or starts with `root.`.
///
/// An empty name stays empty so that the caller's validation reports it as empty instead of as
/// the odd-looking `root.`.
pub(super) fn assure_root(name: &str) -> String {
    if name.is_empty() || name == "root" || name.starts_with("root.") {
        name.to_owned()
    } else {
        format!("root.{name}")
    }
}

/// What is wrong with a queue name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum NameProblem {
    /// The name is the empty string.
    Empty,
    /// The whole name starts or ends with whitespace.
    Whitespace,
    /// The name starts or ends with '.'.
    EdgeDot,
    /// Two dots in a row (or an empty name between dots).
    EmptyComponent,
    /// One component (given) starts or ends with whitespace.
    ComponentWhitespace(String),
    /// More levels (given, counting `root`) than [`weft_config::MAX_QUEUE_DEPTH`].
    TooDeep(usize),
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NameProblem::Empty => f.write_str("is empty"),
            NameProblem::Whitespace => f.write_str("is invalid: leading or trailing whitespace"),
            NameProblem::EdgeDot => f.write_str("is invalid: it begins or ends with '.'"),
            NameProblem::EmptyComponent => f.write_str("has an empty component"),
            NameProblem::ComponentWhitespace(component) => write!(
                f,
                "is invalid: component '{component}' has leading or trailing whitespace"
            ),
            NameProblem::TooDeep(levels) => write!(
                f,
                "is {levels} levels deep counting root, but queues may be nested at most {} levels deep",
                weft_config::MAX_QUEUE_DEPTH
            ),
        }
    }
}

/// The check Hadoop's `specified` rule applies to the submitted name before anything else: the
/// name must equal its trimmed form and must not begin or end with '.'. Inner problems such as
/// `a..b` pass here (Hadoop only finds them when it creates the queue).
pub(super) fn check_submitted_name(name: &str) -> Result<(), NameProblem> {
    if trim_queue_name(name) != name {
        Err(NameProblem::Whitespace)
    } else if name.starts_with('.') || name.ends_with('.') {
        Err(NameProblem::EdgeDot)
    } else {
        Ok(())
    }
}

fn invalid(name: &str, problem: NameProblem) -> PlacementError {
    PlacementError::InvalidQueueName {
        name: name.to_owned(),
        problem,
    }
}

/// Makes `name` a full queue name (`a.b` -> `root.a.b`; `root` and `root.*` unchanged) and checks
/// that every component is non-empty and equal to its trimmed form (spec §15).
pub(crate) fn normalize_queue_name(name: &str) -> Result<String, PlacementError> {
    if name.is_empty() {
        return Err(invalid(name, NameProblem::Empty));
    }
    check_submitted_name(name).map_err(|problem| invalid(name, problem))?;
    let full = assure_root(name);
    let levels = full.split('.').count();
    if levels > weft_config::MAX_QUEUE_DEPTH {
        return Err(invalid(name, NameProblem::TooDeep(levels)));
    }
    for component in full.split('.') {
        if component.is_empty() {
            return Err(invalid(name, NameProblem::EmptyComponent));
        }
        if trim_queue_name(component) != component {
            return Err(invalid(
                name,
                NameProblem::ComponentWhitespace(component.to_owned()),
            ));
        }
    }
    Ok(full)
}
