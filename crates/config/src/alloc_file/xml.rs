//! XML plumbing shared by the allocation-file and yarn-site parsers: parsing with errors said in
//! plain words, positions of nodes, element text, and the diagnostic collector.

use crate::{Diagnostic, Severity};
use roxmltree::{Document, Error, Node, ParsingOptions};

/// Parses `text` as XML; a syntax error becomes one diagnostic with line, column and a
/// sentence saying what is wrong.
pub(crate) fn parse_document(text: &str) -> Result<Document<'_>, Diagnostic> {
    let options = ParsingOptions {
        // Hadoop's parser accepts a DOCTYPE; refusing one would reject files Hadoop loads.
        allow_dtd: true,
        ..ParsingOptions::default()
    };
    Document::parse_with_options(text, options).map_err(|e| syntax_error(text, &e))
}

fn syntax_error(text: &str, e: &Error) -> Diagnostic {
    let pos = e.pos();
    let (line, column) = (pos.row, pos.col);
    let found = char_at(text, line, column);
    let message = match e {
        Error::InvalidComment(_) => {
            "malformed comment: a comment may not contain '--' or end with '-' before '-->'"
                .to_string()
        }
        Error::UnexpectedCloseTag(expected, actual, _) => {
            format!("closing tag </{actual}> does not match the open element <{expected}>")
        }
        Error::UnknownEntityReference(name, _) => {
            format!("unknown entity '&{name};' (write '&amp;' for a literal '&')")
        }
        Error::MalformedEntityReference(_) => {
            "malformed entity reference: a literal '&' must be written '&amp;'".to_string()
        }
        Error::InvalidAttributeValue(_) => {
            "an attribute value may not contain '<' (write '&lt;')".to_string()
        }
        Error::DuplicatedAttribute(name, _) => format!("attribute '{name}' is given twice"),
        Error::NoRootNode => "the document has no element at all".to_string(),
        Error::UnclosedRootNode | Error::UnexpectedEndOfStream => {
            "the document ends before every element is closed".to_string()
        }
        Error::UnexpectedDeclaration(_) => {
            "the '<?xml ...?>' declaration must come first in the document, and only once"
                .to_string()
        }
        Error::NonXmlChar(c, _) => {
            format!("character {} is not allowed in XML", describe_char(*c))
        }
        Error::InvalidName(_) => match found {
            Some(c) => format!(
                "malformed markup: {} cannot start or continue a name",
                describe_char(c)
            ),
            None => "malformed markup: an element or attribute name is missing".to_string(),
        },
        Error::InvalidChar(expected, _, _) => malformed_markup(
            text,
            line,
            column,
            found,
            Some(format!("'{}'", *expected as char)),
        ),
        Error::InvalidChar2(expected, _, _) => {
            malformed_markup(text, line, column, found, Some((*expected).to_string()))
        }
        Error::InvalidString(expected, _) => {
            malformed_markup(text, line, column, found, Some(format!("'{expected}'")))
        }
        _ => malformed_markup(text, line, column, found, None),
    };
    Diagnostic {
        severity: Severity::Error,
        line,
        column,
        path: String::new(),
        message: format!("XML syntax error: {message}"),
    }
}

/// A message for the tokenizer's generic errors, saying which markup was being read and which
/// character was found where something else was expected.
fn malformed_markup(
    text: &str,
    line: u32,
    column: u32,
    found: Option<char>,
    expected: Option<String>,
) -> String {
    let found_text = |c: Option<char>| match c {
        Some(c) => format!("found {}", describe_char(c)),
        None => "found the end of the document".to_string(),
    };
    // The markup being read starts at the nearest '<' at or before the error.
    let offset = offset_of(text, line, column)
        .unwrap_or(text.len())
        .min(text.len());
    let start = if text[offset..].starts_with('<') {
        Some(offset)
    } else {
        text[..offset].rfind('<')
    };
    let markup = start.map_or("", |s| &text[s..]);
    if let Some(after) = markup.strip_prefix("<!") {
        if !after.starts_with("--")
            && !after.starts_with("[CDATA[")
            && !after.starts_with("DOCTYPE")
        {
            let bad = after.chars().find(|c| *c != '-');
            let mut message = format!(
                "malformed comment or markup: '<!' must be followed by '--' to open a comment '<!--' (or by '[CDATA[' or 'DOCTYPE'); {}",
                found_text(bad)
            );
            if bad.is_some_and(is_dash_like) {
                message.push_str(", a typographic dash where '-' (hyphen-minus) is needed");
            }
            return message;
        }
        if after.starts_with("--") {
            return format!("malformed comment; {}", found_text(found));
        }
    }
    match expected {
        Some(e) => format!("malformed markup: expected {e}; {}", found_text(found)),
        None => format!("malformed markup; {}", found_text(found)),
    }
}

fn is_dash_like(c: char) -> bool {
    matches!(
        c,
        '\u{2010}'..='\u{2015}' | '\u{2212}' | '\u{FE58}' | '\u{FE63}' | '\u{FF0D}'
    )
}

fn describe_char(c: char) -> String {
    if c.is_ascii_graphic() {
        format!("'{c}'")
    } else {
        format!("'{c}' (U+{:04X})", c as u32)
    }
}

/// The byte offset of a 1-based line and character column.
fn offset_of(text: &str, line: u32, column: u32) -> Option<usize> {
    let line_start = if line <= 1 {
        0
    } else {
        text.match_indices('\n')
            .nth(line as usize - 2)
            .map(|(i, _)| i + 1)?
    };
    let rest = &text[line_start..];
    let col = column.saturating_sub(1) as usize;
    Some(
        rest.char_indices()
            .nth(col)
            .map_or(text.len(), |(i, _)| line_start + i),
    )
}

fn char_at(text: &str, line: u32, column: u32) -> Option<char> {
    offset_of(text, line, column).and_then(|o| text[o..].chars().next())
}

/// Maps byte offsets to 1-based line and character column, cheaply for many nodes.
pub(crate) struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub(crate) fn new(text: &'a str) -> LineIndex<'a> {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        LineIndex { text, starts }
    }

    /// Line and column of byte offset `pos`.
    pub(crate) fn position(&self, pos: usize) -> (u32, u32) {
        let line = self.starts.partition_point(|s| *s <= pos).max(1);
        let start = self.starts[line - 1];
        let end = pos.min(self.text.len()).max(start);
        let column = self.text.get(start..end).map_or(0, |s| s.chars().count()) + 1;
        (
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )
    }
}

/// Collects diagnostics, placing each at a node.
pub(crate) struct Sink<'a> {
    lines: LineIndex<'a>,
    /// Everything found so far, in the order found.
    pub(crate) diags: Vec<Diagnostic>,
}

impl<'a> Sink<'a> {
    /// A collector for the document text `text`.
    pub(crate) fn new(text: &'a str) -> Sink<'a> {
        Sink {
            lines: LineIndex::new(text),
            diags: Vec::new(),
        }
    }

    /// Line and column where `node` starts.
    pub(crate) fn pos(&self, node: Node<'_, '_>) -> (u32, u32) {
        self.lines.position(node.range().start)
    }

    /// Records an error at `node`.
    pub(crate) fn error(&mut self, node: Node<'_, '_>, path: &str, message: impl Into<String>) {
        self.push(Severity::Error, self.pos(node), path, message.into());
    }

    /// Records a warning at `node`.
    pub(crate) fn warn(&mut self, node: Node<'_, '_>, path: &str, message: impl Into<String>) {
        self.push(Severity::Warning, self.pos(node), path, message.into());
    }

    /// Records a diagnostic at an already known position.
    pub(crate) fn push(
        &mut self,
        severity: Severity,
        (line, column): (u32, u32),
        path: &str,
        message: String,
    ) {
        self.diags.push(Diagnostic {
            severity,
            line,
            column,
            path: path.to_string(),
            message,
        });
    }

    /// Whether any error was recorded.
    pub(crate) fn has_errors(&self) -> bool {
        self.diags.iter().any(|d| d.severity == Severity::Error)
    }

    /// Splits into `Ok(warnings)` or `Err(all diagnostics)`, sorted by position.
    pub(crate) fn finish(mut self) -> Result<Vec<Diagnostic>, crate::Diagnostics> {
        self.diags.sort_by_key(|d| (d.line, d.column));
        if self.has_errors() {
            Err(crate::Diagnostics(self.diags))
        } else {
            Ok(self.diags)
        }
    }
}

/// The text directly inside an element (comments and child elements skipped), untrimmed.
pub(crate) fn raw_text(node: Node<'_, '_>) -> String {
    node.children()
        .filter(|c| c.is_text())
        .filter_map(|c| c.text())
        .collect()
}

/// Whether `node` has a child element.
pub(crate) fn has_child_elements(node: Node<'_, '_>) -> bool {
    node.children().any(|c| c.is_element())
}
