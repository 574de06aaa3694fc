//! The `fair-scheduler.xml` parser (spec §14.1, §14.2, §12.2).
//!
//! Every problem of a file is collected, not just the first, each placed at a line and column
//! and named by the element's path (`queue root.a`, `queuePlacementPolicy rule 2`, `user bob`).
//! Unknown elements are warnings: Hadoop ignores them, but a misspelt element is usually a
//! mistake worth showing.

mod depth;
mod placement;
mod pools;
mod queues;
pub(crate) mod values;
pub(crate) mod xml;

use crate::reservation::{ReplannerKind, ReservationAgentKind, SharingPolicyKind};
use crate::{AllocationConfig, Diagnostic, Diagnostics, PolicyKind};
use roxmltree::Node;
use std::collections::BTreeMap;
use weft_types::ResourceTypes;
use xml::{raw_text, Sink};

/// Settings from outside the allocation file that change how it is validated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AllocationOptions {
    /// `yarn.scheduler.fair.no-terminal-rule.check` (migration mode): a terminal placement rule
    /// before the last one is allowed.
    pub no_terminal_rule_check: bool,
}

/// Parses and validates an allocation file. On success returns the config and its warnings;
/// on failure every problem found, each with line, column and the element's path.
pub fn parse_allocations(
    text: &str,
    types: &ResourceTypes,
) -> Result<(AllocationConfig, Vec<Diagnostic>), Diagnostics> {
    parse_allocations_with(text, types, AllocationOptions::default())
}

/// [`parse_allocations`] with options taken from the scheduler's properties.
pub fn parse_allocations_with(
    text: &str,
    types: &ResourceTypes,
    options: AllocationOptions,
) -> Result<(AllocationConfig, Vec<Diagnostic>), Diagnostics> {
    let doc = xml::parse_document(text).map_err(|d| Diagnostics(vec![d]))?;
    let mut sink = Sink::new(text);
    let root = doc.root_element();
    if root.tag_name().name() != "allocations" {
        sink.error(
            root,
            "",
            format!(
                "the root element is <{}>, but an allocation file's root element must be <allocations>",
                root.tag_name().name()
            ),
        );
        return Err(Diagnostics(sink.diags));
    }
    if !depth::check(&mut sink, root) {
        return Err(Diagnostics(sink.diags));
    }
    let config = read_top_level(&mut sink, root, types, options);
    sink.finish().map(|warnings| (config, warnings))
}

fn read_top_level(
    sink: &mut Sink<'_>,
    root: Node<'_, '_>,
    types: &ResourceTypes,
    options: AllocationOptions,
) -> AllocationConfig {
    let mut config = AllocationConfig::default();
    let mut queue_elements = Vec::new();
    let mut seen: BTreeMap<&str, u32> = BTreeMap::new();
    let mut legacy_fair_timeout = None;
    let mut default_fair_timeout = None;
    for element in root.children().filter(|c| c.is_element()) {
        let tag = element.tag_name().name();
        let text = raw_text(element);
        let single_valued = !matches!(tag, "queue" | "pool" | "user");
        if single_valued {
            if let Some(first_line) = seen.insert(tag, sink.pos(element).0) {
                sink.warn(
                    element,
                    tag,
                    format!("<{tag}> appears more than once (also at line {first_line}); the last one is used"),
                );
            }
        }
        let report = |sink: &mut Sink<'_>, r: Result<(), String>| {
            if let Err(msg) = r {
                sink.error(element, tag, msg);
            }
        };
        match tag {
            "queue" | "pool" => queue_elements.push(element),
            "user" => read_user(sink, element, &mut config),
            "userMaxAppsDefault" => report(
                sink,
                values::int(&text).map(|v| config.user_max_apps_default = v),
            ),
            "queueMaxAppsDefault" => report(
                sink,
                values::int(&text).map(|v| config.queue_max_apps_default = v),
            ),
            "queueMaxResourcesDefault" => report(
                sink,
                crate::resource_string::parse_resource(
                    text.trim(),
                    types,
                    crate::resource_string::MissingTypes::Unbounded,
                )
                .map(|r| config.queue_max_resources_default = r),
            ),
            "queueMaxAMShareDefault" => report(
                sink,
                values::float(&text).map(|v| config.queue_max_am_share_default = v.min(1.0)),
            ),
            "defaultFairSharePreemptionTimeout" => report(
                sink,
                values::seconds_as_ms(&text).map(|v| default_fair_timeout = Some(v)),
            ),
            "fairSharePreemptionTimeout" => report(
                sink,
                values::seconds_as_ms(&text).map(|v| legacy_fair_timeout = Some(v)),
            ),
            "defaultMinSharePreemptionTimeout" => report(
                sink,
                values::seconds_as_ms(&text)
                    .map(|v| config.default_min_share_preemption_timeout_ms = v),
            ),
            "defaultFairSharePreemptionThreshold" => report(
                sink,
                values::float(&text)
                    .map(|v| config.default_fair_share_preemption_threshold = v.clamp(0.0, 1.0)),
            ),
            "defaultQueueSchedulingPolicy" | "defaultQueueSchedulingMode" => {
                let r = queues::policy(&text).and_then(|p| {
                    if p == PolicyKind::Fifo {
                        Err("fifo cannot be the default policy (it is only allowed for leaf queues): use fair or drf, and set fifo on the leaf queues that need it".to_string())
                    } else {
                        config.default_queue_scheduling_policy = p;
                        Ok(())
                    }
                });
                report(sink, r);
            }
            "queuePlacementPolicy" => {
                config.placement_policy =
                    placement::parse_policy(sink, element, options.no_terminal_rule_check);
            }
            "resourcePools" => config.resource_pools = Some(pools::parse(sink, element)),
            "reservation-agent" => report(
                sink,
                ReservationAgentKind::from_class_name(&text)
                    .map(|k| config.reservation_agent = Some(k)),
            ),
            "reservation-policy" => report(
                sink,
                SharingPolicyKind::from_class_name(&text)
                    .map(|k| config.reservation_policy = Some(k)),
            ),
            "reservation-planner" => report(
                sink,
                ReplannerKind::from_class_name(&text).map(|k| config.reservation_planner = Some(k)),
            ),
            other => sink.warn(
                element,
                "allocations",
                format!("unknown element <{other}> is ignored"),
            ),
        }
    }
    // The legacy top-level element counts only when the new one is absent.
    if let Some(v) = default_fair_timeout.or(legacy_fair_timeout) {
        config.default_fair_share_preemption_timeout_ms = v;
    }

    let mut queues = queues::Queues::new(types);
    queues.load_top_level(sink, &queue_elements);
    queues.check_policies(sink, config.default_queue_scheduling_policy);
    pools::check_queues(
        sink,
        config.resource_pools.as_mut(),
        &queues.map,
        &queues.positions,
    );
    config.queues = queues.map;
    config
}

/// `<user name="..."><maxRunningApps>n</maxRunningApps></user>`.
fn read_user(sink: &mut Sink<'_>, element: Node<'_, '_>, config: &mut AllocationConfig) {
    let Some(name) = element.attribute("name") else {
        sink.warn(
            element,
            "user",
            "a <user> element without a name attribute is ignored",
        );
        return;
    };
    let path = format!("user {name}");
    for field in element.children().filter(|c| c.is_element()) {
        match field.tag_name().name() {
            "maxRunningApps" => match values::int(&raw_text(field)) {
                Ok(v) => {
                    config.user_max_apps.insert(name.to_string(), v);
                }
                Err(msg) => sink.error(field, &path, format!("maxRunningApps: {msg}")),
            },
            other => sink.warn(
                field,
                &path,
                format!("unknown element <{other}> is ignored"),
            ),
        }
    }
}
