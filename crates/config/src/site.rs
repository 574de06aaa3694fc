//! yarn-site.xml properties of the Fair Scheduler (spec §14.4).
//!
//! Properties arrive as `name = value` pairs ([`from_pairs`]) or as a yarn-site.xml text
//! ([`parse_site_xml`]). A bad value is an error naming the property; a name under
//! `yarn.scheduler.` or `yarn.resource-types` that Weft does not know is a warning (it is most
//! likely misspelt); other names belong to other parts of YARN and are ignored silently.

mod apply;
mod units;

use crate::alloc_file::xml::{parse_document, raw_text, Sink};
use crate::{Diagnostic, Diagnostics, SchedulerProperties, Severity};

/// One property with where it was written (line 0 when it came without a text).
#[derive(Clone, Debug)]
struct Entry {
    name: String,
    value: String,
    pos: (u32, u32),
}

/// Builds properties from `name = value` pairs (Hadoop names); unknown names are warnings.
/// On failure every problem is returned, each naming its property.
pub fn from_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(SchedulerProperties, Vec<Diagnostic>), Diagnostics> {
    let entries = pairs
        .into_iter()
        .map(|(name, value)| Entry {
            name: name.trim().to_string(),
            value: value.to_string(),
            pos: (0, 0),
        })
        .collect();
    finish(apply::apply(entries))
}

/// Parses a yarn-site.xml text (`<configuration><property><name>..</name><value>..</value>
/// </property>...</configuration>`) into properties. XML and value errors carry line and
/// column.
pub fn parse_site_xml(text: &str) -> Result<(SchedulerProperties, Vec<Diagnostic>), Diagnostics> {
    let doc = parse_document(text).map_err(|d| Diagnostics(vec![d]))?;
    let mut sink = Sink::new(text);
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        sink.error(
            root,
            "",
            format!(
                "the root element is <{}>, but a yarn-site.xml's root element must be <configuration>",
                root.tag_name().name()
            ),
        );
        return Err(Diagnostics(sink.diags));
    }
    let mut entries = Vec::new();
    for (i, element) in root.children().filter(|c| c.is_element()).enumerate() {
        let path = format!("property {}", i + 1);
        if element.tag_name().name() != "property" {
            sink.warn(
                element,
                "configuration",
                format!("unknown element <{}> is ignored", element.tag_name().name()),
            );
            continue;
        }
        let child_text = |tag: &str| {
            element
                .children()
                .find(|c| c.has_tag_name(tag))
                .map(raw_text)
                .or_else(|| element.attribute(tag).map(str::to_string))
        };
        let Some(name) = child_text("name")
            .map(|n| n.trim().to_string())
            .filter(|n| !n.is_empty())
        else {
            sink.error(element, &path, "the property has no <name>");
            continue;
        };
        let Some(value) = child_text("value") else {
            sink.warn(element, &name, "the property has no <value> and is ignored");
            continue;
        };
        entries.push(Entry {
            name,
            value,
            pos: sink.pos(element),
        });
    }
    let (props, mut diags) = apply::apply(entries);
    diags.extend(sink.diags);
    diags.sort_by_key(|d| (d.line, d.column));
    finish((props, diags))
}

fn finish(
    (props, diags): (SchedulerProperties, Vec<Diagnostic>),
) -> Result<(SchedulerProperties, Vec<Diagnostic>), Diagnostics> {
    if diags.iter().any(|d| d.severity == Severity::Error) {
        Err(Diagnostics(diags))
    } else {
        Ok((props, diags))
    }
}

#[cfg(test)]
mod tests;
