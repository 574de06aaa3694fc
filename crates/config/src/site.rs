//! yarn-site.xml properties of the Fair Scheduler (spec §14.4).
//!
//! Properties arrive as `name = value` pairs ([`from_pairs`]) or as a yarn-site.xml text
//! ([`parse_site_xml`]). A bad value is an error naming the property; a name under
//! `yarn.scheduler.` or `yarn.resource-types` that Weft does not know is a warning (it is most
//! likely misspelt); other names belong to other parts of YARN and are ignored silently.

mod apply;
pub(crate) mod units;

use crate::{Diagnostic, Diagnostics, SchedulerProperties, Severity};

type Entry = crate::conf_xml::Property;

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
    let (entries, read_diags) = crate::conf_xml::read_properties(text, "yarn-site.xml")?;
    let (props, mut diags) = apply::apply(entries);
    diags.extend(read_diags);
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
