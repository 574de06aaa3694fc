//! Typed access to a parsed TOML table that records every problem with its line and field path.
//!
//! Walking `toml`'s spanned tables by hand (rather than deriving `Deserialize`) is what lets
//! every message name the exact field (`events[2].resources`) and its line, and report all
//! problems of a file at once instead of stopping at the first.

use crate::scenario::Problem;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// A value with its span in the scenario text.
pub(crate) type Val<'i> = Spanned<DeValue<'i>>;

/// The scenario text's line index and the problems found so far.
pub(crate) struct Ctx {
    line_starts: Vec<usize>,
    pub(crate) problems: Vec<Problem>,
    /// What the file says that is ignored (the run goes on).
    pub(crate) warnings: Vec<Problem>,
}

impl Ctx {
    pub(crate) fn new(text: &str) -> Ctx {
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Ctx {
            line_starts,
            problems: Vec::new(),
            warnings: Vec::new(),
        }
    }

    /// The 1-based line holding byte `offset`.
    pub(crate) fn line(&self, offset: usize) -> u32 {
        u32::try_from(self.line_starts.partition_point(|s| *s <= offset)).unwrap_or(u32::MAX)
    }

    pub(crate) fn warn(&mut self, line: u32, field: &str, message: impl Into<String>) {
        self.warnings.push(Problem {
            line,
            field: field.to_string(),
            message: message.into(),
        });
    }

    pub(crate) fn problem(&mut self, line: u32, field: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            line,
            field: field.to_string(),
            message: message.into(),
        });
    }
}

/// A table at a known path.
pub(crate) struct Tbl<'a, 'i> {
    pub(crate) map: &'a DeTable<'i>,
    /// Dotted path of the table (`events[2]`); empty for the document.
    pub(crate) path: String,
    /// Line of the table's header (or of its first key).
    pub(crate) line: u32,
}

impl<'a, 'i> Tbl<'a, 'i> {
    /// The table held by `value`, or a problem when it is not one.
    pub(crate) fn of(ctx: &mut Ctx, value: &'a Val<'i>, path: String) -> Option<Tbl<'a, 'i>> {
        let line = ctx.line(value.span().start);
        match value.get_ref() {
            DeValue::Table(map) => {
                // A header-less table (the document) has an empty span: use its first key.
                let line = if value.span().is_empty() {
                    map.keys()
                        .map(|k| ctx.line(k.span().start))
                        .min()
                        .unwrap_or(1)
                } else {
                    line
                };
                Some(Tbl { map, path, line })
            }
            other => {
                ctx.problem(
                    line,
                    &path,
                    format!("expected a table, found {}", other.type_str()),
                );
                None
            }
        }
    }

    pub(crate) fn path_of(&self, key: &str) -> String {
        if self.path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{key}", self.path)
        }
    }

    /// Reports every key not in `allowed` as a problem, suggesting the closest allowed one.
    pub(crate) fn check_keys(&self, ctx: &mut Ctx, allowed: &[&str]) {
        for (line, name, hint) in self.unknown_keys(ctx, allowed) {
            ctx.problem(
                line,
                &self.path_of(name),
                format!("unknown field{hint}; allowed here: {}", allowed.join(", ")),
            );
        }
    }

    /// Reports every key not in `allowed` as a warning: the key is ignored and the run goes on.
    pub(crate) fn warn_unknown_keys(&self, ctx: &mut Ctx, allowed: &[&str]) {
        for (line, name, hint) in self.unknown_keys(ctx, allowed) {
            ctx.warn(
                line,
                &self.path_of(name),
                format!(
                    "unknown key, ignored{hint}; known here: {}",
                    allowed.join(", ")
                ),
            );
        }
    }

    /// The keys not in `allowed`, in file order: line, name and a did-you-mean hint.
    fn unknown_keys(&self, ctx: &Ctx, allowed: &[&str]) -> Vec<(u32, &'a str, String)> {
        let mut keys: Vec<_> = self.map.keys().collect();
        keys.sort_by_key(|k| k.span().start);
        keys.into_iter()
            .filter(|key| !allowed.contains(&key.get_ref().as_ref()))
            .map(|key| {
                let name: &'a str = key.get_ref();
                let hint = match closest(name, allowed) {
                    Some(c) => format!(" (did you mean '{c}'?)"),
                    None => String::new(),
                };
                (ctx.line(key.span().start), name, hint)
            })
            .collect()
    }

    pub(crate) fn raw(&self, key: &str) -> Option<&'a Val<'i>> {
        self.map.get(key)
    }

    fn typed<T>(
        &self,
        ctx: &mut Ctx,
        key: &str,
        what: &str,
        f: impl FnOnce(&'a DeValue<'i>) -> Option<T>,
    ) -> Option<(T, u32)> {
        let value = self.raw(key)?;
        let line = ctx.line(value.span().start);
        match f(value.get_ref()) {
            Some(v) => Some((v, line)),
            None => {
                let found = value.get_ref().type_str();
                ctx.problem(
                    line,
                    &self.path_of(key),
                    format!("expected {what}, found {found}"),
                );
                None
            }
        }
    }

    /// An optional string field.
    pub(crate) fn str(&self, ctx: &mut Ctx, key: &str) -> Option<(&'a str, u32)> {
        self.typed(ctx, key, "a string", |v| v.as_str())
    }

    /// A required string field.
    pub(crate) fn req_str(&self, ctx: &mut Ctx, key: &str) -> Option<(&'a str, u32)> {
        if self.raw(key).is_none() {
            self.missing(ctx, key);
            return None;
        }
        self.str(ctx, key)
    }

    /// An optional integer field within `[min, max]`.
    pub(crate) fn int(&self, ctx: &mut Ctx, key: &str, min: i64, max: i64) -> Option<(i64, u32)> {
        let (v, line) = self.typed(ctx, key, "an integer", |v| {
            v.as_integer()
                .map(|i| i64::from_str_radix(i.as_str(), i.radix()).ok())
        })?;
        match v {
            Some(v) if (min..=max).contains(&v) => Some((v, line)),
            _ => {
                ctx.problem(
                    line,
                    &self.path_of(key),
                    format!("must be an integer from {min} to {max}"),
                );
                None
            }
        }
    }

    /// An optional boolean field.
    pub(crate) fn bool(&self, ctx: &mut Ctx, key: &str) -> Option<(bool, u32)> {
        self.typed(ctx, key, "a boolean", |v| v.as_bool())
    }

    /// An optional array of strings.
    pub(crate) fn str_list(&self, ctx: &mut Ctx, key: &str) -> Option<(Vec<String>, u32)> {
        let (items, line) = self.typed(ctx, key, "an array of strings", |v| v.as_array())?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.get_ref().as_str() {
                Some(s) => out.push(s.to_string()),
                None => {
                    let l = ctx.line(item.span().start);
                    let found = item.get_ref().type_str();
                    ctx.problem(
                        l,
                        &format!("{}[{i}]", self.path_of(key)),
                        format!("expected a string, found {found}"),
                    );
                    return None;
                }
            }
        }
        Some((out, line))
    }

    /// Records that a required field is absent.
    pub(crate) fn missing(&self, ctx: &mut Ctx, key: &str) {
        ctx.problem(
            self.line,
            &self.path_of(key),
            "missing (this field is required)",
        );
    }
}

/// The allowed name within edit distance 2 of `name`, if exactly one is closest.
fn closest<'k>(name: &str, allowed: &[&'k str]) -> Option<&'k str> {
    allowed
        .iter()
        .map(|a| (edit_distance(name, a), *a))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, a)| a)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != *cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_field_name() {
        assert_eq!(
            closest("reosurces", &["resources", "count"]),
            Some("resources")
        );
        assert_eq!(closest("zzz", &["resources", "count"]), None);
    }

    #[test]
    fn lines_are_one_based() {
        let ctx = Ctx::new("a\nbc\n");
        assert_eq!(ctx.line(0), 1);
        assert_eq!(ctx.line(2), 2);
        assert_eq!(ctx.line(5), 3);
    }
}
