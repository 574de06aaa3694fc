//! Hadoop configuration files (`<configuration><property><name/><value/></property>...`), read
//! into name/value pairs that remember where each property was written. Shared by yarn-site.xml
//! and capacity-scheduler.xml.

use crate::alloc_file::xml::{parse_document, raw_text, Sink};
use crate::{Diagnostic, Diagnostics};

/// One property with where it was written (line 0 when it came without a text).
#[derive(Clone, Debug)]
pub(crate) struct Property {
    /// The trimmed name.
    pub(crate) name: String,
    /// The value as written (untrimmed: an ACL's single space means "no one").
    pub(crate) value: String,
    /// 1-based line and column of the `<property>` element.
    pub(crate) pos: (u32, u32),
}

/// Reads every `<property>` of a configuration file, in document order (duplicates kept, the
/// caller decides which wins). `file` names the kind of file in messages ("yarn-site.xml").
/// Returns the properties with the problems found in their markup (a property without a name is
/// an error the caller reports beside its own); `Err` when the text is no configuration at all.
pub(crate) fn read_properties(
    text: &str,
    file: &str,
) -> Result<(Vec<Property>, Vec<Diagnostic>), Diagnostics> {
    let doc = parse_document(text).map_err(|d| Diagnostics(vec![d]))?;
    let mut sink = Sink::new(text);
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        sink.error(
            root,
            "",
            format!(
                "the root element is <{}>, but a {file}'s root element must be <configuration>",
                root.tag_name().name()
            ),
        );
        return Err(Diagnostics(sink.diags));
    }
    let mut properties = Vec::new();
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
        properties.push(Property {
            name,
            value,
            pos: sink.pos(element),
        });
    }
    Ok((properties, sink.diags))
}
