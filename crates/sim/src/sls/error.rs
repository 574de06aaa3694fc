//! The one error type of the trace readers (SLS traces, nodes files, SYNTH descriptions).

use thiserror::Error;

/// A trace that cannot be used, with where the problem is: the file, the item (e.g. `job 2`),
/// the line (and column for JSON syntax errors), and the field.
///
/// Rendered as `inputsls.json: job 2 (line 40): job.start.ms: expected a number, found "abc"`,
/// or `inputsls.json:12:5: invalid JSON: ...` for a syntax error.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{}", self.render())]
pub struct TraceError {
    /// The file name as the caller gave it.
    pub file: String,
    /// The item the problem is in (`job 2`, `rack entry 3`, `workload 1`), if any.
    pub item: Option<String>,
    /// 1-based line, when known.
    pub line: Option<u32>,
    /// 1-based column, only for JSON syntax errors.
    pub column: Option<u32>,
    /// The field, in the trace's own spelling (`job.tasks[2].container.end.ms`), if any.
    pub field: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl TraceError {
    /// An error about the whole file (no item, line or field).
    pub(crate) fn file(file: &str, message: impl Into<String>) -> TraceError {
        TraceError {
            file: file.to_string(),
            item: None,
            line: None,
            column: None,
            field: None,
            message: message.into(),
        }
    }

    fn render(&self) -> String {
        let mut s = self.file.clone();
        match (&self.item, self.line, self.column) {
            (Some(item), Some(line), _) => s.push_str(&format!(": {item} (line {line})")),
            (Some(item), None, _) => s.push_str(&format!(": {item}")),
            (None, Some(line), Some(col)) => s.push_str(&format!(":{line}:{col}")),
            (None, Some(line), None) => s.push_str(&format!(":{line}")),
            (None, None, _) => {}
        }
        if let Some(field) = &self.field {
            s.push_str(": ");
            s.push_str(field);
        }
        s.push_str(": ");
        s.push_str(&self.message);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_every_part_that_is_known() {
        let mut e = TraceError::file("t.json", "boom");
        assert_eq!(e.to_string(), "t.json: boom");
        e.line = Some(3);
        e.column = Some(7);
        assert_eq!(e.to_string(), "t.json:3:7: boom");
        e.item = Some("job 2".into());
        e.field = Some("job.start.ms".into());
        assert_eq!(e.to_string(), "t.json: job 2 (line 3): job.start.ms: boom");
    }
}
