//! The Capacity Scheduler's `capacity-scheduler.xml` (spec §3-§4), parsed into a typed queue
//! tree with Hadoop's defaults and inheritance applied, validated with every problem listed,
//! and the refresh rules between two parsed files ([`check_refresh`]).
//!
//! Decisions where Hadoop is silent or lenient (spec §13):
//! * Unknown `yarn.scheduler.capacity.*` properties are warnings (Hadoop ignores them silently;
//!   a misspelt key is usually a mistake), as the Fair side warns about unknown properties.
//! * An absolute resource without memory is refused (Hadoop treats it as "not configured").
//! * `maximum-capacity` outside 0..100 (other than -1) is refused.
//! * Weights (`2w`, Hadoop 3.4) are accepted; all children of one parent use one mode.
//! * Queues deeper than [`crate::MAX_QUEUE_DEPTH`] are refused, as for the Fair Scheduler.
//! * Node labels are exclusive partitions (`labels`): non-exclusive labels and their lending
//!   are not modelled. Auto-created queues take their parent's labels and no per-label
//!   capacities.
//! * Reservation keys are read on reservable leaves ([`CapacityConfig::reservable`]); on other
//!   queues they are warnings, as Hadoop ignores them there.

mod build;
mod globals;
pub mod labels;
pub mod model;
mod plans;
mod reader;
mod refresh;
mod reservations;

mod validate;
mod values;

pub use model::*;
pub use refresh::{check_maximum_allocations, check_refresh, RefreshContext};

use crate::{conf_xml, Diagnostic, Diagnostics, Severity};
use reader::Reader;
use weft_types::ResourceTypes;

/// Every Capacity Scheduler key starts with this.
pub const PREFIX: &str = "yarn.scheduler.capacity.";

/// Per-queue keys Weft reads (on some queue kinds) or knows and does not model.
const QUEUE_KEYS: &[&str] = &[
    "queues",
    "capacity",
    "maximum-capacity",
    "state",
    "acl_submit_applications",
    "acl_administer_queue",
    "acl_administer_reservations",
    "acl_list_reservations",
    "acl_submit_reservations",
    "priority",
    "disable_preemption",
    "intra-queue-preemption.disable_preemption",
    "max-parallel-apps",
    "maximum-allocation",
    "maximum-allocation-mb",
    "maximum-allocation-vcores",
    "maximum-application-lifetime",
    "default-application-lifetime",
    "ordering-policy",
    "ordering-policy.fair.enable-size-based-weight",
    "allow-zero-capacity-sum",
    "auto-create-child-queue.enabled",
    "minimum-user-limit-percent",
    "user-limit-factor",
    "maximum-applications",
    "maximum-am-resource-percent",
    "default-application-priority",
];

/// Per-queue keys of features Weft does not have (legacy and v2 auto-creation, application
/// priority ACLs): accepted silently.
const QUEUE_UNMODELED_PREFIXES: &[&str] = &[
    "auto-create-child-queue.",
    "leaf-queue-template.",
    "auto-queue-creation-v2.",
    "acl_application_max_priority",
];

/// Parses and validates a capacity-scheduler.xml text. `types` are the cluster's resource
/// types (absolute capacities may name custom ones). On success returns the configuration and
/// its warnings; otherwise every problem, each with line, column and the property's name.
pub fn parse_capacity(
    text: &str,
    types: &ResourceTypes,
) -> Result<(CapacityConfig, Vec<Diagnostic>), Diagnostics> {
    parse_capacity_over_site(text, &[], types)
}

/// Whether yarn-site.xml's property `name` belongs to the Capacity Scheduler (Hadoop's
/// `CapacitySchedulerConfiguration` reads yarn-site.xml too, so such keys may live there).
pub fn is_capacity_property(name: &str) -> bool {
    name.starts_with(PREFIX) || name.starts_with(globals::PREEMPTION)
}

/// [`parse_capacity`] over the Capacity Scheduler's keys found in yarn-site.xml (`site`, name
/// and value; other names are skipped): the file's value wins where both set a key, as in
/// Hadoop, where capacity-scheduler.xml is loaded after yarn-site.xml. A problem with a key
/// only yarn-site.xml sets has no line or column (it names the property).
pub fn parse_capacity_over_site(
    text: &str,
    site: &[(String, String)],
    types: &ResourceTypes,
) -> Result<(CapacityConfig, Vec<Diagnostic>), Diagnostics> {
    let (mut properties, diags) = conf_xml::read_properties(text, "capacity-scheduler.xml")?;
    let in_file: std::collections::BTreeSet<String> =
        properties.iter().map(|p| p.name.clone()).collect();
    let from_site = site
        .iter()
        .filter(|(name, _)| is_capacity_property(name) && !in_file.contains(name))
        .map(|(name, value)| conf_xml::Property {
            name: name.clone(),
            value: value.clone(),
            pos: (0, 0),
        });
    properties.splice(0..0, from_site);
    let mut r = Reader::new(properties, diags);
    let globals = globals::globals(&mut r);
    let preemption = globals::preemption(&mut r);
    let queues = build::queues(&mut r, types, &globals);
    let reservable = reservations::read(&mut r, &queues);
    let leaf_templates = build::leaf_templates(&mut r, types, &globals, &queues);
    let config = CapacityConfig {
        queues,
        leaf_templates,
        globals,
        preemption,
        positions: r.positions(),
        reservable,
        partitions: NodePartitions::default(),
    };
    validate::check(&mut r, &config);
    labels::check(&mut r, &config);
    warn_unused(&mut r, &config);
    let mut diags = std::mem::take(&mut r.diags);
    diags.sort_by_key(|d| (d.line, d.column));
    if diags.iter().any(|d| d.severity == Severity::Error) {
        Err(Diagnostics(diags))
    } else {
        Ok((config, diags))
    }
}

/// Warns about every `yarn.scheduler.capacity.*` (and preemption) property nothing read,
/// saying why it was not read where that can be told.
fn warn_unused(r: &mut Reader, config: &CapacityConfig) {
    for (name, _) in r.unused() {
        let message = if let Some(rest) = name.strip_prefix(PREFIX) {
            match queue_and_suffix(config, rest) {
                Some((queue, suffix)) => queue_key_message(queue, suffix),
                None => Some(
                    "unknown Capacity Scheduler property; ignored (is it misspelt?)".to_string(),
                ),
            }
        } else if name.starts_with(globals::PREEMPTION) {
            Some("unknown capacity preemption property; ignored (is it misspelt?)".to_string())
        } else {
            // Other parts of YARN may share the file (Hadoop reads it beside yarn-site.xml).
            None
        };
        if let Some(message) = message {
            r.warn(&name, message);
        }
    }
}

/// The longest queue path `rest` starts with, and what follows it.
fn queue_and_suffix<'a>(
    config: &'a CapacityConfig,
    rest: &'a str,
) -> Option<(&'a CsQueue, &'a str)> {
    rest.match_indices('.')
        .map(|(i, _)| i)
        .rev()
        .find_map(|i| config.queue(&rest[..i]).map(|q| (q, &rest[i + 1..])))
}

fn queue_key_message(queue: &CsQueue, suffix: &str) -> Option<String> {
    if reservations::QUEUE_KEYS.contains(&suffix) {
        return Some(format!(
            "{suffix} has no effect: queue {} is not reservable (set {PREFIX}{}.reservable to true); ignored",
            queue.path, queue.path
        ));
    }
    if QUEUE_UNMODELED_PREFIXES
        .iter()
        .any(|p| suffix.starts_with(p))
    {
        return None;
    }
    if suffix.starts_with("accessible-node-labels.") {
        return Some(format!(
            "unknown node-label setting '{suffix}' for queue {} (Weft reads accessible-node-labels.<label>.capacity, .maximum-capacity and .maximum-am-resource-percent); ignored",
            queue.path
        ));
    }
    if suffix.starts_with("user-settings.") {
        return Some(format!(
            "user settings take the form user-settings.<user>.weight; ignored for queue {}",
            queue.path
        ));
    }
    if QUEUE_KEYS.contains(&suffix) {
        let kind = if queue.is_leaf() {
            "a leaf"
        } else {
            "a parent"
        };
        return Some(format!(
            "{suffix} has no effect on queue {}, {kind}; ignored",
            queue.path
        ));
    }
    if let Some((child, key)) = suffix.split_once('.') {
        if QUEUE_KEYS
            .iter()
            .any(|k| key == *k || key.starts_with(&format!("{k}.")))
        {
            return Some(format!(
                "queue {}.{child} is not listed in {PREFIX}{}.queues, so it does not exist; ignored",
                queue.path, queue.path
            ));
        }
    }
    Some(format!(
        "unknown property '{suffix}' for queue {}; ignored (is it misspelt?)",
        queue.path
    ))
}

#[cfg(test)]
mod tests;
