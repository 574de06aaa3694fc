//! Reading the JSON of SLS inputs with positions.
//!
//! `serde_json::Value` forgets where things were, and a trace can hold thousands of jobs, so
//! values are read with serde_json and positions are recovered only when an error is reported:
//! the offending item's text is scanned again for the field's path ([`locate`]).

use serde_json::{Map, Value};

use super::TraceError;

/// One step of a path inside a JSON value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Seg {
    /// An object member.
    Key(String),
    /// An array element.
    Index(usize),
}

/// A path as users write it: `job.tasks[2].container.end.ms`.
pub(crate) fn display_path(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// A file's text, its name, and where its lines start.
pub(crate) struct Source<'a> {
    text: &'a str,
    file: &'a str,
    line_starts: Vec<usize>,
}

/// One top-level value and the byte range it came from.
pub(crate) struct Item {
    /// The value.
    pub(crate) value: Value,
    /// Offset of its first byte.
    pub(crate) start: usize,
    /// Offset just after its last byte.
    pub(crate) end: usize,
}

impl<'a> Source<'a> {
    /// Indexes `text` (named `file` in errors).
    pub(crate) fn new(text: &'a str, file: &'a str) -> Source<'a> {
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Source {
            text,
            file,
            line_starts,
        }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub(crate) fn line_col(&self, offset: usize) -> (u32, u32) {
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1);
        let start = self.line_starts[line - 1];
        let col = self
            .text
            .get(start..offset.min(self.text.len()))
            .map_or(0, |s| s.chars().count());
        (to_u32(line), to_u32(col + 1))
    }

    /// Every top-level value, in order: the file is a sequence of concatenated values (Jackson's
    /// `readValues`), not an array.
    pub(crate) fn items(&self) -> Result<Vec<Item>, TraceError> {
        let mut stream = serde_json::Deserializer::from_str(self.text).into_iter::<Value>();
        let mut items = Vec::new();
        let mut prev_end = 0;
        while let Some(next) = stream.next() {
            let value = next.map_err(|e| self.syntax_error(&e))?;
            let end = stream.byte_offset();
            let start = prev_end + leading_space(&self.text[prev_end..end]);
            items.push(Item { value, start, end });
            prev_end = end;
        }
        Ok(items)
    }

    fn syntax_error(&self, e: &serde_json::Error) -> TraceError {
        let full = e.to_string();
        let suffix = format!(" at line {} column {}", e.line(), e.column());
        let message = full.strip_suffix(&suffix).unwrap_or(&full);
        TraceError {
            line: Some(to_u32(e.line())),
            column: Some(to_u32(e.column())),
            ..TraceError::file(self.file, format!("invalid JSON: {message}"))
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn leading_space(s: &str) -> usize {
    s.len() - s.trim_start().len()
}

/// Where errors about one top-level item point.
pub(crate) struct Ctx<'s, 'a> {
    src: &'s Source<'a>,
    item: Option<String>,
    start: usize,
    end: usize,
}

impl<'s, 'a> Ctx<'s, 'a> {
    /// Errors about `item` (named e.g. `job 2`) will point into its text.
    pub(crate) fn new(src: &'s Source<'a>, item: String, it: &Item) -> Ctx<'s, 'a> {
        Ctx {
            src,
            item: Some(item),
            start: it.start,
            end: it.end,
        }
    }

    /// Errors about a file that is a single value (no item name, just the line).
    pub(crate) fn whole(src: &'s Source<'a>, it: &Item) -> Ctx<'s, 'a> {
        Ctx {
            src,
            item: None,
            start: it.start,
            end: it.end,
        }
    }

    /// An error about the value at `path`, on the line of that value (or of its nearest
    /// enclosing value that can be found, e.g. the object a required field is missing from).
    pub(crate) fn err(&self, path: &[Seg], message: impl Into<String>) -> TraceError {
        let slice = self.src.text.get(self.start..self.end).unwrap_or("");
        let offset = (0..=path.len())
            .rev()
            .find_map(|n| locate(slice, &path[..n]))
            .unwrap_or(0);
        let (line, _) = self.src.line_col(self.start + offset);
        TraceError {
            item: self.item.clone(),
            line: Some(line),
            field: (!path.is_empty()).then(|| display_path(path)),
            ..TraceError::file(self.src.file, message)
        }
    }

    /// A required field is absent.
    pub(crate) fn missing(&self, parent: &Node<'_>, key: &str) -> TraceError {
        self.err(&parent.child_path(key), "missing (it is required)")
    }
}

/// A value with its path from the item's root, so errors can say where it is.
#[derive(Clone)]
pub(crate) struct Node<'v> {
    value: &'v Value,
    path: Vec<Seg>,
}

impl<'v> Node<'v> {
    /// The item's root value.
    pub(crate) fn root(value: &'v Value) -> Node<'v> {
        Node {
            value,
            path: Vec::new(),
        }
    }

    /// The raw value.
    pub(crate) fn value(&self) -> &'v Value {
        self.value
    }

    /// The path of this value.
    pub(crate) fn path(&self) -> &[Seg] {
        &self.path
    }

    /// The path of member `key` of this value.
    pub(crate) fn child_path(&self, key: &str) -> Vec<Seg> {
        let mut p = self.path.clone();
        p.push(Seg::Key(key.to_string()));
        p
    }

    /// Member `key`; `null` counts as absent (Hadoop reads absent and null alike).
    pub(crate) fn get(&self, key: &str) -> Option<Node<'v>> {
        match self.value.as_object()?.get(key)? {
            Value::Null => None,
            v => Some(Node {
                value: v,
                path: self.child_path(key),
            }),
        }
    }

    /// The first present member among `keys` (a field and its legacy spelling).
    pub(crate) fn get_any(&self, keys: &[&str]) -> Option<Node<'v>> {
        keys.iter().find_map(|k| self.get(k))
    }

    /// The object's members, or an error if this is not an object.
    pub(crate) fn object(&self, ctx: &Ctx<'_, '_>) -> Result<&'v Map<String, Value>, TraceError> {
        self.value.as_object().ok_or_else(|| {
            ctx.err(
                &self.path,
                format!("expected an object, found {}", describe(self.value)),
            )
        })
    }

    /// The array's elements, or an error if this is not an array.
    pub(crate) fn elements(&self, ctx: &Ctx<'_, '_>) -> Result<Vec<Node<'v>>, TraceError> {
        let items = self.value.as_array().ok_or_else(|| {
            ctx.err(
                &self.path,
                format!("expected a list, found {}", describe(self.value)),
            )
        })?;
        Ok(items
            .iter()
            .enumerate()
            .map(|(i, value)| {
                let mut path = self.path.clone();
                path.push(Seg::Index(i));
                Node { value, path }
            })
            .collect())
    }

    /// A whole number: a JSON integer or a string holding one (Hadoop parses `toString()`).
    pub(crate) fn int(&self, ctx: &Ctx<'_, '_>) -> Result<i64, TraceError> {
        let parsed = match self.value {
            Value::Number(n) => n.as_i64().ok_or(()),
            Value::String(s) => s.trim().parse::<i64>().map_err(|_| ()),
            _ => Err(()),
        };
        parsed.map_err(|()| {
            let what = if self.value.is_f64() || self.value.is_u64() {
                "a whole number"
            } else {
                "a number"
            };
            ctx.err(
                &self.path,
                format!("expected {what}, found {}", describe(self.value)),
            )
        })
    }

    /// A non-negative whole number.
    pub(crate) fn non_negative(&self, ctx: &Ctx<'_, '_>) -> Result<u64, TraceError> {
        let v = self.int(ctx)?;
        u64::try_from(v)
            .map_err(|_| ctx.err(&self.path, format!("must not be negative, found {v}")))
    }

    /// A number (integer or decimal), or a string holding one (Jackson coerces those).
    pub(crate) fn float(&self, ctx: &Ctx<'_, '_>) -> Result<f64, TraceError> {
        let parsed = match self.value {
            Value::Number(n) => n.as_f64(),
            Value::String(s) => s.trim().parse::<f64>().ok(),
            _ => None,
        };
        parsed.filter(|f| f.is_finite()).ok_or_else(|| {
            ctx.err(
                &self.path,
                format!("expected a number, found {}", describe(self.value)),
            )
        })
    }

    /// A string; numbers are accepted as their text (Hadoop calls `toString()` on names).
    pub(crate) fn text(&self, ctx: &Ctx<'_, '_>) -> Result<String, TraceError> {
        match self.value {
            Value::String(s) => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            v => Err(ctx.err(
                &self.path,
                format!("expected a string, found {}", describe(v)),
            )),
        }
    }
}

/// A short rendering of a value for error messages.
pub(crate) fn describe(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let cut: String = s.chars().take(57).collect();
        format!("{cut}...")
    } else {
        s
    }
}

/// Byte offset, within `text` (one JSON value), of the value at `path`: for an object member
/// the offset of its key, for an array element the element's first byte. `None` when the path
/// is not there. `text` is known to be valid JSON (serde_json parsed it).
pub(crate) fn locate(text: &str, path: &[Seg]) -> Option<usize> {
    enum Frame {
        Obj { key: Option<String>, want_key: bool },
        Arr { index: usize },
    }
    fn current(stack: &[Frame]) -> Vec<Seg> {
        stack
            .iter()
            .filter_map(|f| match f {
                Frame::Obj { key, .. } => key.clone().map(Seg::Key),
                Frame::Arr { index } => Some(Seg::Index(*index)),
            })
            .collect()
    }
    if path.is_empty() {
        return Some(leading_space(text));
    }
    let bytes = text.as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() || b == b':' {
            i += 1;
            continue;
        }
        let is_key = matches!(stack.last(), Some(Frame::Obj { want_key: true, .. }));
        if b == b'"' {
            let end = string_end(bytes, i);
            if is_key {
                let key: String = serde_json::from_str(&text[i..end]).unwrap_or_default();
                if let Some(Frame::Obj { key: k, want_key }) = stack.last_mut() {
                    *k = Some(key);
                    *want_key = false;
                }
                if current(&stack) == path {
                    return Some(i);
                }
                i = end;
                continue;
            }
        }
        match b {
            b',' => match stack.last_mut() {
                Some(Frame::Obj { key, want_key }) => {
                    *key = None;
                    *want_key = true;
                }
                Some(Frame::Arr { index }) => *index += 1,
                None => {}
            },
            b'}' | b']' => {
                stack.pop();
            }
            _ => {
                // A value starts here: an array element is found by its first byte.
                if matches!(stack.last(), Some(Frame::Arr { .. })) && current(&stack) == path {
                    return Some(i);
                }
                match b {
                    b'{' => stack.push(Frame::Obj {
                        key: None,
                        want_key: true,
                    }),
                    b'[' => stack.push(Frame::Arr { index: 0 }),
                    b'"' => {
                        i = string_end(bytes, i);
                        continue;
                    }
                    _ => {}
                }
            }
        }
        i += 1;
    }
    None
}

/// Offset just after the string literal starting at `start` (a `"`).
fn string_end(bytes: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.to_string())
    }

    #[test]
    fn locate_finds_keys_and_elements_by_path() {
        let text = r#"{ "a": 1, "b": [ {"c": "x\"y"}, {"c": 2, "d": [5, 6]} ], "c": 3 }"#;
        let at = |p: &[Seg]| locate(text, p).map(|o| &text[o..o + 3]);
        assert_eq!(at(&[key("a")]), Some("\"a\""));
        assert_eq!(at(&[key("c")]), Some("\"c\""));
        assert_eq!(
            locate(text, &[key("c")]),
            Some(text.rfind("\"c\"").unwrap())
        );
        assert_eq!(at(&[key("b"), Seg::Index(1)]), Some("{\"c"));
        let second_c = locate(text, &[key("b"), Seg::Index(1), key("c")]).unwrap();
        assert_eq!(&text[second_c..second_c + 6], "\"c\": 2");
        let six = locate(text, &[key("b"), Seg::Index(1), key("d"), Seg::Index(1)]).unwrap();
        assert_eq!(&text[six..six + 1], "6");
        assert_eq!(locate(text, &[key("zz")]), None);
    }

    #[test]
    fn items_are_split_with_their_ranges_and_lines() {
        let text = "{\"a\": 1}\n\n  {\"b\":\n 2}\n";
        let src = Source::new(text, "f.json");
        let items = src.items().unwrap();
        assert_eq!(items.len(), 2);
        assert_eq!(&text[items[1].start..items[1].end], "{\"b\":\n 2}");
        assert_eq!(src.line_col(items[1].start), (3, 3));
    }

    #[test]
    fn syntax_errors_carry_line_and_column() {
        let src = Source::new("{\"a\": 1}\n{\"b\" 2}", "f.json");
        let e = src.items().err().unwrap();
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("f.json:2:"), "{e}");
        assert!(!e.to_string().contains("at line"), "{e}");
    }

    #[test]
    fn numbers_accept_numeric_strings_and_reject_the_rest() {
        let v: Value = serde_json::from_str(r#"{"n": "42", "f": 1.5, "s": "abc"}"#).unwrap();
        let src = Source::new("", "f.json");
        let it = Item {
            value: Value::Null,
            start: 0,
            end: 0,
        };
        let ctx = Ctx::new(&src, "job 1".into(), &it);
        let root = Node::root(&v);
        assert_eq!(root.get("n").unwrap().int(&ctx).unwrap(), 42);
        let e = root.get("f").unwrap().int(&ctx).unwrap_err();
        assert_eq!(e.message, "expected a whole number, found 1.5");
        let e = root.get("s").unwrap().int(&ctx).unwrap_err();
        assert_eq!(e.message, "expected a number, found \"abc\"");
        assert_eq!(e.field.as_deref(), Some("s"));
    }
}
