//! `<queue>` / `<pool>` elements (spec §14.2) and the policy rules between parents and children
//! (spec §5).

use super::values;
use super::xml::{has_child_elements, raw_text, Sink};
use crate::resource_string::{parse_resource, MissingTypes};
use crate::{Acl, ConfiguredResource, PolicyKind, QueueConfig, Severity};
use roxmltree::Node;
use std::collections::BTreeMap;
use weft_types::ResourceTypes;

/// The queues read so far, with where each was declared.
pub(super) struct Queues<'t> {
    types: &'t ResourceTypes,
    /// Every valid queue by full name.
    pub(super) map: BTreeMap<String, QueueConfig>,
    /// Line and column of each queue's element.
    pub(super) positions: BTreeMap<String, (u32, u32)>,
}

impl<'t> Queues<'t> {
    pub(super) fn new(types: &'t ResourceTypes) -> Queues<'t> {
        Queues {
            types,
            map: BTreeMap::new(),
            positions: BTreeMap::new(),
        }
    }

    /// Reads the top-level queue elements: a `root` queue, if any, must be the only one.
    pub(super) fn load_top_level(&mut self, sink: &mut Sink<'_>, elements: &[Node<'_, '_>]) {
        for &element in elements {
            let name = element.attribute("name").unwrap_or("").trim();
            let is_root = name.eq_ignore_ascii_case("root");
            if is_root && elements.len() > 1 {
                sink.error(
                    element,
                    "queue root",
                    "a top-level queue named 'root' must be the only top-level queue: put the other top-level queues inside it",
                );
            }
            self.load(sink, element, if is_root { None } else { Some("root") });
        }
    }

    fn load(&mut self, sink: &mut Sink<'_>, element: Node<'_, '_>, parent: Option<&str>) {
        let tag = element.tag_name().name();
        let raw_name = element.attribute("name").unwrap_or("");
        let name = raw_name.trim();
        let parent_text = parent.unwrap_or("the file");
        let mut valid = true;
        let full = match parent {
            None => "root".to_string(),
            Some(p) => format!("{p}.{name}"),
        };
        let path = format!("queue {full}");
        if name.is_empty() {
            valid = false;
            let what = if element.attribute("name").is_none() {
                "has no name attribute"
            } else {
                "has an empty name"
            };
            sink.error(
                element,
                &format!("{tag} in {parent_text}"),
                format!("the {tag} element {what}"),
            );
        } else if name.contains('.') {
            valid = false;
            sink.error(
                element,
                &format!("{tag} '{name}' in {parent_text}"),
                format!("queue name '{name}' contains '.': nest <{tag}> elements to make child queues instead"),
            );
        }
        let pos = sink.pos(element);
        if valid {
            if let Some(first) = self.positions.get(&full) {
                sink.error(
                    element,
                    &path,
                    format!("queue {full} is declared twice (first at line {})", first.0),
                );
                valid = false;
            }
        }

        let mut q = QueueConfig {
            name: full.clone(),
            line: pos.0,
            ..QueueConfig::default()
        };
        let mut has_children = false;
        for field in element.children().filter(|c| c.is_element()) {
            let fname = field.tag_name().name();
            if fname == "queue" || fname == "pool" {
                has_children = true;
                self.load(sink, field, Some(&full));
                continue;
            }
            self.field(sink, field, &path, &mut q);
        }

        let type_attr = element.attribute("type");
        if let Some(t) = type_attr.filter(|t| *t != "parent" && *t != "leaf") {
            sink.warn(
                element,
                &path,
                format!("type=\"{t}\" is ignored: only type=\"parent\" has a meaning"),
            );
        }
        let declared_parent = has_children || type_attr == Some("parent");
        if q.reservation && declared_parent {
            sink.error(
                element,
                &path,
                "a queue with <reservation/> is itself the parent of its reservations: it cannot also have child queues or type=\"parent\"",
            );
        }
        q.is_parent = declared_parent || q.reservation || parent.is_none();
        if let (Some(min), Some(ConfiguredResource::Absolute(max))) =
            (q.min_resources, q.max_resources)
        {
            if !min.fits_in(&max) {
                sink.warn(
                    element,
                    &path,
                    format!("minResources {min:?} exceed maxResources {max:?}; the maximum is raised to the minimum"),
                );
            }
        }
        if valid {
            self.positions.insert(full.clone(), pos);
            self.map.insert(full, q);
        }
    }

    /// Reads one child element of a queue into `q`.
    fn field(&self, sink: &mut Sink<'_>, field: Node<'_, '_>, path: &str, q: &mut QueueConfig) {
        let fname = field.tag_name().name();
        let text = raw_text(field);
        let report = |sink: &mut Sink<'_>, r: Result<(), String>| {
            if let Err(msg) = r {
                sink.error(field, path, format!("{fname}: {msg}"));
            }
        };
        let types = self.types;
        let max = |t: &str| parse_resource(t.trim(), types, MissingTypes::Unbounded);
        match fname {
            "minResources" => {
                let r =
                    parse_resource(text.trim(), types, MissingTypes::Zero).and_then(|r| match r {
                        ConfiguredResource::Absolute(r) => Ok(r),
                        ConfiguredResource::Percent(_) => Err(format!(
                            "'{}': a minimum must be an absolute amount, not a percentage",
                            text.trim()
                        )),
                    });
                report(sink, r.map(|r| q.min_resources = Some(r)));
            }
            "maxResources" => report(sink, max(&text).map(|r| q.max_resources = Some(r))),
            "maxChildResources" => {
                report(sink, max(&text).map(|r| q.max_child_resources = Some(r)))
            }
            // Hadoop keeps only an absolute value here (`ConfigurableResource.getResource()`
            // is null for a percentage), so a percentage leaves the queue inheriting.
            "maxContainerAllocation" => match max(&text) {
                Ok(ConfiguredResource::Percent(_)) => sink.warn(
                    field,
                    path,
                    format!(
                        "maxContainerAllocation '{}' is a percentage, which Hadoop ignores here: give an absolute amount; the queue inherits its parent's maximum",
                        text.trim()
                    ),
                ),
                r => report(sink, r.map(|r| q.max_container_allocation = Some(r))),
            },
            "maxRunningApps" => report(
                sink,
                values::int(&text).map(|v| q.max_running_apps = Some(v)),
            ),
            "maxAMShare" => report(
                sink,
                values::float(&text).map(|v| q.max_am_share = Some(v.min(1.0))),
            ),
            "weight" => report(sink, values::float(&text).map(|v| q.weight = Some(v))),
            "minSharePreemptionTimeout" => report(
                sink,
                values::seconds_as_ms(&text).map(|v| q.min_share_preemption_timeout_ms = Some(v)),
            ),
            "fairSharePreemptionTimeout" => report(
                sink,
                values::seconds_as_ms(&text).map(|v| q.fair_share_preemption_timeout_ms = Some(v)),
            ),
            "fairSharePreemptionThreshold" => report(
                sink,
                values::float(&text)
                    .map(|v| q.fair_share_preemption_threshold = Some(v.clamp(0.0, 1.0))),
            ),
            "schedulingPolicy" | "schedulingMode" => {
                report(sink, policy(&text).map(|p| q.scheduling_policy = Some(p)))
            }
            "aclSubmitApps" => report(sink, acl(&text).map(|a| q.acl_submit_apps = Some(a))),
            "aclAdministerApps" => {
                report(sink, acl(&text).map(|a| q.acl_administer_apps = Some(a)))
            }
            "aclAdministerReservations" => report(
                sink,
                acl(&text).map(|a| q.acl_administer_reservations = Some(a)),
            ),
            "aclListReservations" => {
                report(sink, acl(&text).map(|a| q.acl_list_reservations = Some(a)))
            }
            "aclSubmitReservations" => report(
                sink,
                acl(&text).map(|a| q.acl_submit_reservations = Some(a)),
            ),
            "reservation" => {
                q.reservation = true;
                if has_child_elements(field) || !text.trim().is_empty() {
                    sink.warn(field, path, "reservation: the content of <reservation> is ignored; write <reservation/>");
                }
            }
            "allowPreemptionFrom" => q.allow_preemption_from = Some(values::java_bool(&text)),
            // Checked against the declared pools once the whole file is read.
            "resourcePool" => q.resource_pool = Some(text.trim().to_string()),
            other => sink.warn(field, path, format!("unknown element <{other}> is ignored")),
        }
    }

    /// Checks the policies between parents and children (spec §5): `fifo` only on leaves, and
    /// no `drf` child under a `fair` parent. `default` is the policy of queues without one.
    pub(super) fn check_policies(&self, sink: &mut Sink<'_>, default: PolicyKind) {
        let effective = |q: &QueueConfig| q.scheduling_policy.unwrap_or(default);
        for (name, q) in &self.map {
            let pos = self.positions.get(name).copied().unwrap_or((0, 0));
            let path = format!("queue {name}");
            if q.scheduling_policy == Some(PolicyKind::Fifo) && q.is_parent {
                sink.push(
                    Severity::Error,
                    pos,
                    &path,
                    format!("schedulingPolicy: fifo is only allowed for leaf queues, and {name} is a parent queue: use fair or drf"),
                );
                continue;
            }
            let parent_name = match name.rsplit_once('.') {
                Some((p, _)) => p,
                None => continue,
            };
            // A parent that is not declared (only `root` can be missing) has the default policy.
            let (parent_policy, how) = match self.map.get(parent_name) {
                Some(p) => (
                    effective(p),
                    if p.scheduling_policy.is_some() {
                        ""
                    } else {
                        " (the default policy)"
                    },
                ),
                None => (default, " (the default policy)"),
            };
            if parent_policy == PolicyKind::Fifo {
                continue; // reported on the parent itself
            }
            let child_policy = effective(q);
            if !parent_policy.allows_child(child_policy, !q.is_parent) {
                let fix = match parent_name {
                    "root" if !self.map.contains_key("root") => {
                        "declare <queue name=\"root\"> with <schedulingPolicy>drf</schedulingPolicy> around the other queues, or set <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>".to_string()
                    }
                    _ => format!("set {parent_name}'s schedulingPolicy to drf"),
                };
                sink.push(
                    Severity::Error,
                    pos,
                    &path,
                    format!(
                        "schedulingPolicy: {name} uses {} but its parent {parent_name} uses {}{how}, and a {} parent cannot have a {} child: {fix}",
                        child_policy.name(),
                        parent_policy.name(),
                        parent_policy.name(),
                        child_policy.name(),
                    ),
                );
            }
        }
    }
}

/// A policy name: `fair`, `drf`, `fifo` in any case, or one of their class names.
pub(super) fn policy(text: &str) -> Result<PolicyKind, String> {
    PolicyKind::parse(text).ok_or_else(|| {
        format!(
            "'{}' is not a scheduling policy: expected fair, drf or fifo (or the full class name of one of them)",
            text.trim()
        )
    })
}

/// An ACL, untrimmed; an empty element is refused as Hadoop refuses it.
fn acl(text: &str) -> Result<Acl, String> {
    if text.is_empty() {
        return Err(
            "the ACL is empty: write '*' for everyone or ' ' (a single space) for no one"
                .to_string(),
        );
    }
    Ok(Acl::parse(text))
}
