//! From properties to the queue tree: `<path>.queues` lists the children, every per-queue key
//! is read with its default or inherited value (spec §3.2), then the global keys.

use super::model::*;
use super::reader::Reader;
use super::{values, PREFIX};
use crate::{Acl, MAX_QUEUE_DEPTH};
use std::collections::{BTreeMap, VecDeque};
use weft_types::{Resource, ResourceTypes, MEMORY, VCORES};

/// Builds the tree from root. Queues deeper than [`MAX_QUEUE_DEPTH`] are refused at the
/// `queues` property that lists them (their subtrees are not read).
pub(super) fn queues(
    r: &mut Reader,
    types: &ResourceTypes,
    globals: &CapacityGlobals,
) -> Vec<CsQueue> {
    let mut queues: Vec<CsQueue> = Vec::new();
    let mut pending: VecDeque<(String, Option<usize>)> = VecDeque::new();
    pending.push_back(("root".to_string(), None));
    while let Some((path, parent)) = pending.pop_front() {
        let depth = parent.map_or(1, |p| queues[p].depth + 1);
        let index = queues.len();
        let children = child_names(r, &path, depth);
        let mut queue = read_queue(
            r,
            types,
            globals,
            &path,
            parent.map(|p| &queues[p]),
            depth,
            !children.is_empty(),
        );
        queue.parent = parent;
        queues.push(queue);
        if let Some(p) = parent {
            if let QueueKind::Parent { children, .. } = &mut queues[p].kind {
                children.push(index);
            }
        }
        for name in children {
            pending.push_back((format!("{path}.{name}"), Some(index)));
        }
    }
    queues
}

/// Each managed parent's `leaf-queue-template.*` (spec §3.13): the settings of the leaves it
/// creates, read as a leaf's own keys would be (same defaults and inheritance, the managed
/// parent as the parent), by the parent's path. The template's capacity is mandatory.
pub(super) fn leaf_templates(
    r: &mut Reader,
    types: &ResourceTypes,
    globals: &CapacityGlobals,
    queues: &[CsQueue],
) -> BTreeMap<String, LeafTemplate> {
    let mut templates = BTreeMap::new();
    for parent in queues.iter().filter(|q| q.is_managed_parent()) {
        let path = format!("{}.leaf-queue-template", parent.path);
        if !r.is_set(&format!("{PREFIX}{path}.capacity")) {
            r.error(
                &format!("{PREFIX}{}.auto-create-child-queue.enabled", parent.path),
                format!(
                    "{}: a managed parent (auto-create-child-queue.enabled) needs {PREFIX}{path}.capacity",
                    parent.path
                ),
            );
        }
        let capacity = capacity(r, types, &path, false);
        let maximum_capacity = maximum_capacity(r, types, &path, &capacity, Some(parent));
        let settings = leaf_settings(r, globals, &path, Some(parent));
        let max_queues = r.int(
            &format!("{PREFIX}{}.auto-create-child-queue.max-queues", parent.path),
            1000,
        );
        templates.insert(
            parent.path.clone(),
            LeafTemplate {
                capacity,
                maximum_capacity,
                settings,
                max_queues,
            },
        );
    }
    templates
}

/// The children listed by `<path>.queues` (trimmed, empty entries dropped as Hadoop drops
/// them). Names with a dot, and names listed twice, are refused.
fn child_names(r: &mut Reader, path: &str, depth: usize) -> Vec<String> {
    let key = format!("{PREFIX}{path}.queues");
    let Some(list) = r.get(&key) else {
        if path == "root" {
            r.error(&key, "Queue configuration missing child queue names for root (set yarn.scheduler.capacity.root.queues)".to_string());
        }
        return Vec::new();
    };
    let mut names: Vec<String> = Vec::new();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name.contains('.') {
            r.error(&key, format!("queue name '{name}' may not contain '.' (list the child's own name, not a path)"));
        } else if names.iter().any(|n| n == name) {
            r.error(&key, format!("queue '{name}' is listed twice under {path}"));
        } else {
            names.push(name.to_string());
        }
    }
    if path == "root" && names.is_empty() {
        r.error(
            &key,
            "Queue configuration missing child queue names for root".to_string(),
        );
    }
    if !names.is_empty() && depth >= MAX_QUEUE_DEPTH {
        r.error(
            &key,
            format!(
                "the children of {path} would be at level {} of the queue tree (root is level 1), \
                 but queues may be nested at most {MAX_QUEUE_DEPTH} levels deep",
                depth + 1
            ),
        );
        return Vec::new();
    }
    names
}

#[allow(clippy::too_many_arguments)]
fn read_queue(
    r: &mut Reader,
    types: &ResourceTypes,
    globals: &CapacityGlobals,
    path: &str,
    parent: Option<&CsQueue>,
    depth: usize,
    has_children: bool,
) -> CsQueue {
    let key = |suffix: &str| format!("{PREFIX}{path}.{suffix}");
    let is_root = parent.is_none();
    let capacity = capacity(r, types, path, is_root);
    let maximum_capacity = maximum_capacity(r, types, path, &capacity, parent);
    let (state, state_configured) = match r.get(&key("state")) {
        Some(v) => match v.trim().to_ascii_uppercase().as_str() {
            "RUNNING" => (QueueState::Running, true),
            "STOPPED" => (QueueState::Stopped, true),
            _ => {
                r.error(
                    &key("state"),
                    format!("'{}': Invalid queue state configuration. We can only use RUNNING or STOPPED.", v.trim()),
                );
                (parent.map_or(QueueState::Running, |p| p.state), false)
            }
        },
        None => (parent.map_or(QueueState::Running, |p| p.state), false),
    };
    let default_acl = if is_root {
        Acl::everyone()
    } else {
        Acl::nobody()
    };
    let acl_submit_applications = r
        .get(&key("acl_submit_applications"))
        .map_or(default_acl.clone(), |v| Acl::parse(&v));
    let acl_administer_queue = r
        .get(&key("acl_administer_queue"))
        .map_or(default_acl, |v| Acl::parse(&v));
    // Reservation ACLs belong to the reservation system, which Weft does not have.
    for unmodeled in [
        "acl_administer_reservations",
        "acl_list_reservations",
        "acl_submit_reservations",
    ] {
        r.get(&key(unmodeled));
    }
    let priority = r.int(&key("priority"), 0);
    let disable_preemption = r.bool(
        &key("disable_preemption"),
        parent.is_some_and(|p| p.disable_preemption),
    );
    let intra_queue_disable_preemption = r.bool(
        &key("intra-queue-preemption.disable_preemption"),
        parent.is_some_and(|p| p.intra_queue_disable_preemption),
    );
    let max_parallel_apps = r
        .get(&key("max-parallel-apps"))
        .is_some()
        .then(|| r.int(&key("max-parallel-apps"), globals.max_parallel_apps));
    let maximum_allocation =
        maximum_allocation(r, types, path, parent.and_then(|p| p.maximum_allocation));
    let maximum_application_lifetime = r.long(
        &key("maximum-application-lifetime"),
        parent.map_or(-1, |p| p.maximum_application_lifetime),
    );
    let default_application_lifetime = r.long(
        &key("default-application-lifetime"),
        parent.map_or(-1, |p| p.default_application_lifetime),
    );
    if maximum_application_lifetime > 0
        && default_application_lifetime > maximum_application_lifetime
    {
        r.error(
            &key("default-application-lifetime"),
            format!(
                "Default lifetime {default_application_lifetime} can't exceed maximum lifetime {maximum_application_lifetime} for queue {path}"
            ),
        );
    }
    let kind = if has_children {
        let ordering = match r.get(&key("ordering-policy")) {
            None => parent_ordering(parent),
            Some(v) => match v.trim() {
                "utilization" => QueueOrdering::Utilization,
                "priority-utilization" => QueueOrdering::PriorityUtilization,
                other => {
                    r.error(
                        &key("ordering-policy"),
                        format!("'{other}' is not a queue ordering policy Weft knows (utilization or priority-utilization)"),
                    );
                    parent_ordering(parent)
                }
            },
        };
        let auto_create_child_queue = r.bool(&key("auto-create-child-queue.enabled"), false);
        if auto_create_child_queue {
            r.error(
                &key("auto-create-child-queue.enabled"),
                format!("a queue with auto-create-child-queue.enabled must have no static children, but {path} lists some in its queues"),
            );
        }
        QueueKind::Parent {
            children: Vec::new(),
            ordering,
            allow_zero_capacity_sum: r.bool(&key("allow-zero-capacity-sum"), false),
            auto_create_child_queue,
        }
    } else if r.bool(&key("auto-create-child-queue.enabled"), false) {
        QueueKind::Parent {
            children: Vec::new(),
            ordering: parent_ordering(parent),
            allow_zero_capacity_sum: r.bool(&key("allow-zero-capacity-sum"), false),
            auto_create_child_queue: true,
        }
    } else {
        QueueKind::Leaf(leaf_settings(r, globals, path, parent))
    };
    CsQueue {
        path: path.to_string(),
        name: path.rsplit('.').next().unwrap_or(path).to_string(),
        parent: None,
        depth,
        kind,
        capacity,
        maximum_capacity,
        state,
        state_configured,
        acl_submit_applications,
        acl_administer_queue,
        priority,
        disable_preemption,
        intra_queue_disable_preemption,
        max_parallel_apps,
        maximum_allocation,
        maximum_application_lifetime,
        default_application_lifetime,
        labels: super::labels::read(r, path, parent),
    }
}

fn parent_ordering(parent: Option<&CsQueue>) -> QueueOrdering {
    match parent.map(|p| &p.kind) {
        Some(QueueKind::Parent { ordering, .. }) => *ordering,
        _ => QueueOrdering::Utilization,
    }
}

fn capacity(r: &mut Reader, types: &ResourceTypes, path: &str, is_root: bool) -> CapacityValue {
    let key = format!("{PREFIX}{path}.capacity");
    let Some(text) = r.get(&key) else {
        return CapacityValue::Percent(if is_root { 100.0 } else { 0.0 });
    };
    let mut warnings = Vec::new();
    let parsed = values::capacity(&text, path, types, &mut warnings);
    for w in warnings {
        r.warn(&key, w);
    }
    if is_root {
        match parsed {
            Ok(Some(CapacityValue::Percent(p))) if (p - 100.0).abs() > f32::EPSILON => {
                r.error(
                    &key,
                    format!("Illegal capacity of {p} for queue root. Must be 100.0"),
                );
            }
            Ok(Some(CapacityValue::Percent(_)) | None) => {}
            Ok(Some(_)) => r.warn(
                &key,
                "root always has the whole cluster; its capacity is ignored".to_string(),
            ),
            Err(e) => r.error(&key, e),
        }
        return CapacityValue::Percent(100.0);
    }
    match parsed {
        Ok(Some(value)) => value,
        Ok(None) => CapacityValue::Percent(0.0),
        Err(e) => {
            r.error(&key, e);
            CapacityValue::Percent(0.0)
        }
    }
}

fn maximum_capacity(
    r: &mut Reader,
    types: &ResourceTypes,
    path: &str,
    capacity: &CapacityValue,
    parent: Option<&CsQueue>,
) -> MaxCapacityValue {
    let key = format!("{PREFIX}{path}.maximum-capacity");
    let unset = || match (capacity, parent.map(|p| &p.maximum_capacity)) {
        // An absolute guarantee without a maximum is bounded by the parent's absolute maximum.
        (CapacityValue::Absolute(_), Some(MaxCapacityValue::Absolute(parent_max))) => {
            MaxCapacityValue::Absolute(*parent_max)
        }
        _ => MaxCapacityValue::Percent(100.0),
    };
    let Some(text) = r.get(&key) else {
        return unset();
    };
    let mut warnings = Vec::new();
    let parsed = values::maximum_capacity(&text, path, types, &mut warnings);
    for w in warnings {
        r.warn(&key, w);
    }
    match parsed {
        Ok(value) => value,
        Err(e) => {
            r.error(&key, e);
            unset()
        }
    }
}

/// `maximum-allocation` (a resource string, takes precedence) or `maximum-allocation-mb` /
/// `-vcores`; unset types keep the parent's value.
fn maximum_allocation(
    r: &mut Reader,
    types: &ResourceTypes,
    path: &str,
    inherited: Option<Resource>,
) -> Option<Resource> {
    let key = |suffix: &str| format!("{PREFIX}{path}.{suffix}");
    if let Some(text) = r.get(&key("maximum-allocation")) {
        match crate::resource_string::parse_quantity(&text, types) {
            // A type the string leaves out (0) is bounded by the cluster's maximum only.
            Ok(resource) => {
                let mut bounded = Resource::UNBOUNDED;
                for i in 0..weft_types::MAX_RESOURCE_TYPES {
                    if resource.get(i) > 0 {
                        bounded.set(i, resource.get(i));
                    }
                }
                return Some(bounded);
            }
            Err(e) => r.error(&key("maximum-allocation"), e),
        }
    }
    let mut result = inherited;
    for (suffix, index) in [
        ("maximum-allocation-mb", MEMORY),
        ("maximum-allocation-vcores", VCORES),
    ] {
        if r.get(&key(suffix)).is_some() {
            let value = r.long(&key(suffix), -1);
            if value > 0 {
                result = Some(result.unwrap_or(Resource::UNBOUNDED).with(index, value));
            } else if !r.has_error(&key(suffix)) {
                r.error(&key(suffix), format!("'{value}' must be a positive amount"));
            }
        }
    }
    result
}

fn leaf_settings(
    r: &mut Reader,
    globals: &CapacityGlobals,
    path: &str,
    parent: Option<&CsQueue>,
) -> LeafSettings {
    let key = |suffix: &str| format!("{PREFIX}{path}.{suffix}");
    let ordering = match r.get(&key("ordering-policy")) {
        None => AppOrdering::Fifo,
        Some(v) => match v.trim() {
            "fifo"
            | "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FifoOrderingPolicy" => {
                AppOrdering::Fifo
            }
            "fair"
            | "org.apache.hadoop.yarn.server.resourcemanager.scheduler.policy.FairOrderingPolicy" => {
                AppOrdering::Fair
            }
            "fifo-with-partitions" => AppOrdering::FifoWithPartitions,
            "fifo-for-pending-apps" => AppOrdering::FifoForPendingApps,
            other => {
                r.error(
                    &key("ordering-policy"),
                    format!("Unable to construct ordering policy for: {other} (Weft knows fifo, fair, fifo-with-partitions and fifo-for-pending-apps)"),
                );
                AppOrdering::Fifo
            }
        },
    };
    let fair_size_based_weight =
        r.bool(&key("ordering-policy.fair.enable-size-based-weight"), false);
    let minimum_user_limit_percent = r.float(
        &key("minimum-user-limit-percent"),
        globals.minimum_user_limit_percent,
    );
    // Values inherited from a bad global key are reported once, at the global key.
    let own_mulp = r.is_set(&key("minimum-user-limit-percent"));
    if own_mulp && !(0.0..=100.0).contains(&minimum_user_limit_percent) {
        r.error(
            &key("minimum-user-limit-percent"),
            format!("{minimum_user_limit_percent} is not a percentage from 0 to 100"),
        );
    }
    let user_limit_factor = r.float(&key("user-limit-factor"), globals.user_limit_factor);
    if r.is_set(&key("user-limit-factor"))
        && user_limit_factor < 0.0
        && (user_limit_factor + 1.0).abs() > 1e-6
    {
        r.error(
            &key("user-limit-factor"),
            format!("{user_limit_factor} must be positive, or -1 for no per-user cap"),
        );
    }
    let maximum_applications = r
        .get(&key("maximum-applications"))
        .map(|_| r.int(&key("maximum-applications"), -1))
        .filter(|v| *v >= 0);
    let maximum_am_resource_percent = r.float(
        &key("maximum-am-resource-percent"),
        globals.maximum_am_resource_percent,
    );
    if r.is_set(&key("maximum-am-resource-percent"))
        && !(0.0..=1.0).contains(&maximum_am_resource_percent)
    {
        r.error(
            &key("maximum-am-resource-percent"),
            format!("{maximum_am_resource_percent} is not a fraction from 0 to 1 (0.1 means 10%)"),
        );
    }
    let mut user_weights = match parent.map(|p| &p.kind) {
        Some(QueueKind::Parent { .. }) => inherited_weights(r, parent),
        _ => BTreeMap::new(),
    };
    let own_prefix = key("user-settings.");
    let own_weights = user_weights_at(r, &own_prefix);
    // Hadoop's bound 100 / min(100, MULP); a MULP of 0 guarantees users nothing and bounds no
    // weight.
    let limit = if minimum_user_limit_percent > 0.0 {
        100.0 / minimum_user_limit_percent.min(100.0)
    } else {
        f32::INFINITY
    };
    for (user, weight) in &own_weights {
        if *weight < 0.0 || *weight > limit {
            let name = format!("{own_prefix}{user}.weight");
            r.error(
                &name,
                format!(
                    "Weight ({weight}) for user \"{user}\" must be between 0 and 100 / {minimum_user_limit_percent} (= {limit}, the number of concurrent active users in {path})"
                ),
            );
        }
    }
    user_weights.extend(own_weights);
    LeafSettings {
        ordering,
        fair_size_based_weight,
        minimum_user_limit_percent,
        user_limit_factor,
        maximum_applications,
        maximum_am_resource_percent,
        user_weights,
        default_application_priority: r.int(&key("default-application-priority"), 0),
    }
}

/// The user weights set on the ancestors, nearer ones overriding.
fn inherited_weights(r: &mut Reader, parent: Option<&CsQueue>) -> BTreeMap<String, f32> {
    let Some(parent) = parent else {
        return BTreeMap::new();
    };
    let mut paths: Vec<String> = Vec::new();
    let mut prefix = String::new();
    for part in parent.path.split('.') {
        if !prefix.is_empty() {
            prefix.push('.');
        }
        prefix.push_str(part);
        paths.push(prefix.clone());
    }
    let mut weights = BTreeMap::new();
    for path in paths {
        weights.extend(user_weights_at(
            r,
            &format!("{PREFIX}{path}.user-settings."),
        ));
    }
    weights
}

/// `<prefix><user>.weight` entries (the prefix ends in `user-settings.`).
fn user_weights_at(r: &mut Reader, prefix: &str) -> BTreeMap<String, f32> {
    let mut weights = BTreeMap::new();
    for name in r.names_with_prefix(prefix) {
        let Some(user) = name
            .strip_prefix(prefix)
            .and_then(|rest| rest.strip_suffix(".weight"))
        else {
            continue;
        };
        if user.is_empty() || weights.contains_key(user) {
            continue;
        }
        let weight = r.float(&name, 1.0);
        weights.insert(user.to_string(), weight);
    }
    weights
}
