//! The properties of one file, looked up by name: each lookup marks the property as understood,
//! so that what is left over at the end can be warned about, and each problem is placed at the
//! property's line and column.

use crate::alloc_file::values;
use crate::conf_xml::Property;
use crate::{Diagnostic, Severity};
use std::collections::{BTreeMap, BTreeSet};

/// Properties by name (the last of duplicates wins), with the diagnostics found so far.
pub(super) struct Reader {
    values: BTreeMap<String, (String, (u32, u32))>,
    used: BTreeSet<String>,
    pub(super) diags: Vec<Diagnostic>,
}

impl Reader {
    /// Indexes `properties`; a name set twice is a warning at the later one.
    pub(super) fn new(properties: Vec<Property>, mut diags: Vec<Diagnostic>) -> Reader {
        let mut values: BTreeMap<String, (String, (u32, u32))> = BTreeMap::new();
        for p in properties {
            if let Some((_, (line, _))) = values.get(&p.name) {
                diags.push(Diagnostic {
                    severity: Severity::Warning,
                    line: p.pos.0,
                    column: p.pos.1,
                    path: p.name.clone(),
                    message: format!(
                        "set more than once (also at line {line}); the last value is used"
                    ),
                });
            }
            values.insert(p.name, (p.value, p.pos));
        }
        Reader {
            values,
            used: BTreeSet::new(),
            diags,
        }
    }

    /// The value of `name`, marking it understood.
    pub(super) fn get(&mut self, name: &str) -> Option<String> {
        let (value, _) = self.values.get(name)?;
        self.used.insert(name.to_string());
        Some(value.clone())
    }

    /// Where `name` was written ((0, 0) when it was not).
    pub(super) fn pos(&self, name: &str) -> (u32, u32) {
        self.values.get(name).map_or((0, 0), |(_, pos)| *pos)
    }

    /// Every property name with its position.
    pub(super) fn positions(&self) -> BTreeMap<String, (u32, u32)> {
        self.values
            .iter()
            .map(|(name, (_, pos))| (name.clone(), *pos))
            .collect()
    }

    /// The names starting with `prefix`.
    pub(super) fn names_with_prefix(&self, prefix: &str) -> Vec<String> {
        self.values
            .range(prefix.to_string()..)
            .take_while(|(name, _)| name.starts_with(prefix))
            .map(|(name, _)| name.clone())
            .collect()
    }

    /// The names not looked up, with their positions.
    pub(super) fn unused(&self) -> Vec<(String, (u32, u32))> {
        self.values
            .iter()
            .filter(|(name, _)| !self.used.contains(*name))
            .map(|(name, (_, pos))| (name.clone(), *pos))
            .collect()
    }

    /// Whether an error was reported about property `name`.
    pub(super) fn has_error(&self, name: &str) -> bool {
        self.diags
            .iter()
            .any(|d| d.severity == Severity::Error && d.path == name)
    }

    /// Whether property `name` is in the file.
    pub(super) fn is_set(&self, name: &str) -> bool {
        self.values.contains_key(name)
    }

    /// Records a problem with property `name`, at its position.
    pub(super) fn report(&mut self, severity: Severity, name: &str, message: String) {
        let (line, column) = self.pos(name);
        self.diags.push(Diagnostic {
            severity,
            line,
            column,
            path: name.to_string(),
            message,
        });
    }

    /// An error about property `name`.
    pub(super) fn error(&mut self, name: &str, message: String) {
        self.report(Severity::Error, name, message);
    }

    /// A warning about property `name`.
    pub(super) fn warn(&mut self, name: &str, message: String) {
        self.report(Severity::Warning, name, message);
    }

    /// A float (Java's `getFloat`); a bad value is an error and `default` is used.
    pub(super) fn float(&mut self, name: &str, default: f32) -> f32 {
        self.parsed(name, default, values::float)
    }

    /// An int (Java's `getInt`).
    pub(super) fn int(&mut self, name: &str, default: i32) -> i32 {
        self.parsed(name, default, values::int)
    }

    /// A long (Java's `getLong`).
    pub(super) fn long(&mut self, name: &str, default: i64) -> i64 {
        self.parsed(name, default, values::long)
    }

    /// A boolean: Hadoop's `getBoolean` takes anything but true/false as the default; Weft
    /// does the same and warns, as such a value is almost certainly a mistake.
    pub(super) fn bool(&mut self, name: &str, default: bool) -> bool {
        let Some(value) = self.get(name) else {
            return default;
        };
        match value.trim().to_ascii_lowercase().as_str() {
            "true" => true,
            "false" => false,
            _ => {
                self.warn(
                    name,
                    format!(
                        "'{}' is neither true nor false; the default {default} is used",
                        value.trim()
                    ),
                );
                default
            }
        }
    }

    fn parsed<T: Copy>(
        &mut self,
        name: &str,
        default: T,
        parse: impl Fn(&str) -> Result<T, String>,
    ) -> T {
        let Some(value) = self.get(name) else {
            return default;
        };
        match parse(&value) {
            Ok(v) => v,
            Err(e) => {
                self.error(name, e);
                default
            }
        }
    }
}
