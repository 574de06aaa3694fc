//! `GET /ws/v1/cluster/scheduler` under the Capacity Scheduler: Hadoop's `capacityScheduler`
//! `schedulerInfo` (capacity spec §9, REST spec §3.2). The root's figures sit in
//! `schedulerInfo` itself; each queue (`CapacitySchedulerQueueInfo`, leaves
//! `capacitySchedulerLeafQueueInfo`) nests its children under `queues.queue`. Live figures come
//! from the scheduler (`Scheduler::capacity_details`), settings from the capacity-scheduler.xml
//! in force. With node labels each queue lists its figures in DEFAULT and in every label it
//! can access (`queueCapacitiesByPartition`, `resourceUsagesByPartition`), its
//! `accessible-node-labels` (`nodeLabels`) and its `defaultNodeLabelExpression`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use weft_config::capacity::{AccessibleLabels, CapacityConfig, CapacityValue, CsQueue, QueueKind};
use weft_config::Acl;
use weft_sched::{CapacityQueueDetails, CapacityUserDetails};
use weft_types::Resource;

use super::json::resource;
use super::scheduler::SchedulerView;

/// Hadoop's `Resource.toString()`, the older `usedResources` string.
fn resource_text(r: Resource) -> String {
    format!("<memory:{}, vCores:{}>", r.memory_mb(), r.vcores())
}

/// An ACL as capacity-scheduler.xml writes it (`*`, `users groups`, `" "` for no one).
fn acl_text(acl: &Acl) -> String {
    if acl.everyone {
        return "*".to_string();
    }
    let join =
        |s: &std::collections::BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(",");
    let (users, groups) = (join(&acl.users), join(&acl.groups));
    if groups.is_empty() && users.is_empty() {
        " ".to_string()
    } else if groups.is_empty() {
        users
    } else {
        format!("{users} {groups}")
    }
}

/// Percent figures are clamped where Hadoop clamps them (absolute ones to 0-100).
fn clamp_percent(x: f64) -> f64 {
    x.clamp(0.0, 100.0)
}

/// f64 figures as Hadoop's floats print (no long binary tails).
fn float(x: f64) -> Value {
    json!((x as f32 * 1000.0).round() / 1000.0)
}

impl SchedulerView {
    /// `{"scheduler": {"schedulerInfo": {"type": "capacityScheduler", ...}}}`.
    pub(crate) fn capacity_json(&self) -> Value {
        let (Some(file), Some(root)) = (&self.capacity_file, self.capacity.first()) else {
            return json!({"scheduler": {"schedulerInfo": {"type": "capacityScheduler"}}});
        };
        let by_name: BTreeMap<&str, &CapacityQueueDetails> =
            self.capacity.iter().map(|d| (d.name.as_str(), d)).collect();
        let mut info = self.capacity_queue(file, &by_name, root);
        info.remove("type");
        info.insert("type".into(), json!("capacityScheduler"));
        // Root's usedCapacity is the cluster's use (its guarantee is the cluster).
        info.insert("capacity".into(), json!(100.0));
        info.insert("maxCapacity".into(), json!(100.0));
        json!({"scheduler": {"schedulerInfo": Value::Object(info)}})
    }

    fn capacity_queue(
        &self,
        file: &CapacityConfig,
        by_name: &BTreeMap<&str, &CapacityQueueDetails>,
        d: &CapacityQueueDetails,
    ) -> Map<String, Value> {
        let Some(q) = file.queue(&d.name) else {
            return Map::new();
        };
        let counts = self.counts(&d.name);
        let leaf = match &q.kind {
            QueueKind::Leaf(l) => Some(l),
            QueueKind::Parent { .. } => None,
        };
        let mut o = Map::new();
        if leaf.is_some() {
            o.insert("type".into(), json!("capacitySchedulerLeafQueueInfo"));
        }
        // DEFAULT's figures, then each labeled partition the queue can access.
        let partitions: Vec<(&str, &CapacityQueueDetails)> = std::iter::once(("", d))
            .chain(d.by_partition.iter().map(|(l, p)| (l.as_str(), p)))
            .collect();
        let capacities: Vec<Value> = partitions
            .iter()
            .map(|(label, p)| partition_capacities(q, label, p))
            .collect();
        let usages: Vec<Value> = partitions
            .iter()
            .map(|(label, p)| {
                let am_limit = p.am_limit.unwrap_or(Resource::ZERO);
                json!({
                    "partitionName": label,
                    "used": resource(p.used),
                    "reserved": resource(p.reserved),
                    "pending": resource(p.pending),
                    "amUsed": resource(p.am_used),
                    "amLimit": resource(am_limit),
                    "userAmLimit": resource(p.user_am_limit.unwrap_or(am_limit)),
                })
            })
            .collect();
        let used = d.used;
        let am_limit = d.am_limit.unwrap_or(Resource::ZERO);
        let ordering = match &q.kind {
            QueueKind::Leaf(l) => l.ordering.name(),
            QueueKind::Parent { ordering, .. } => ordering.name(),
        };
        let max_allocation = q
            .maximum_allocation
            .map_or(self.max_allocation, |m| m.cw_min(self.max_allocation));
        let acls = json!({"queueAcl": [
            {"accessType": "ADMINISTER_QUEUE", "accessControlList": acl_text(&q.acl_administer_queue)},
            {"accessType": "APPLICATION_MAX_PRIORITY", "accessControlList": "*"},
            {"accessType": "SUBMIT_APP", "accessControlList": acl_text(&q.acl_submit_applications)},
        ]});
        let num_applications = d.active_apps + d.pending_apps;
        let fields = [
            ("queuePath", json!(d.name)),
            ("queueName", json!(q.name)),
            ("capacity", float(d.capacity)),
            ("usedCapacity", float(d.used_capacity)),
            ("maxCapacity", float(d.max_capacity)),
            (
                "absoluteCapacity",
                float(clamp_percent(d.absolute_capacity)),
            ),
            (
                "absoluteMaxCapacity",
                float(clamp_percent(d.absolute_max_capacity)),
            ),
            (
                "absoluteUsedCapacity",
                float(clamp_percent(d.absolute_used_capacity)),
            ),
            ("weight", weight(q)),
            ("normalizedWeight", json!(0.0)),
            ("numApplications", json!(num_applications)),
            (
                "maxParallelApps",
                json!(file.effective_max_parallel_apps(index_of(file, q))),
            ),
            ("state", json!(d.state)),
            ("usedResources", json!(resource_text(used))),
            ("resourcesUsed", resource(used)),
            ("hideReservationQueues", json!(false)),
            ("nodeLabels", node_labels(q)),
            ("allocatedContainers", json!(counts.allocated)),
            ("reservedContainers", json!(counts.reserved)),
            ("pendingContainers", json!(counts.pending)),
            (
                "capacities",
                json!({"queueCapacitiesByPartition": capacities}),
            ),
            ("resources", json!({"resourceUsagesByPartition": usages})),
            ("minEffectiveCapacity", resource(d.effective_min)),
            ("maxEffectiveCapacity", resource(d.effective_max)),
            ("maximumAllocation", resource(max_allocation)),
            ("queueAcls", acls),
            ("queuePriority", json!(q.priority)),
            ("orderingPolicyInfo", json!(ordering)),
            (
                "isAbsoluteResource",
                json!(matches!(q.capacity, CapacityValue::Absolute(_))),
            ),
            ("mode", json!(q.capacity.mode().name())),
            (
                "queueType",
                json!(if leaf.is_some() { "leaf" } else { "parent" }),
            ),
            ("creationMethod", json!("static")),
            (
                "autoCreationEligibility",
                json!(if q.is_managed_parent() {
                    "legacy"
                } else {
                    "off"
                }),
            ),
        ];
        for (k, v) in fields {
            o.insert(k.into(), v);
        }
        if let Some(l) = leaf {
            let users: Vec<Value> = d.users.iter().map(|u| user_json(u, d)).collect();
            let leaf_fields = [
                ("numActiveApplications", json!(d.active_apps)),
                ("numPendingApplications", json!(d.pending_apps)),
                ("numContainers", json!(counts.allocated + counts.reserved)),
                ("maxApplications", json!(d.max_applications.unwrap_or(0))),
                (
                    "maxApplicationsPerUser",
                    json!(d.max_applications_per_user.unwrap_or(0)),
                ),
                ("userLimit", json!(l.minimum_user_limit_percent as i64)),
                ("userLimitFactor", float(f64::from(l.user_limit_factor))),
                ("users", json!({"user": users})),
                (
                    "configuredMaxAMResourceLimit",
                    float(f64::from(l.maximum_am_resource_percent)),
                ),
                ("AMResourceLimit", resource(am_limit)),
                ("usedAMResource", resource(d.am_used)),
                (
                    "userAMResourceLimit",
                    resource(d.user_am_limit.unwrap_or(am_limit)),
                ),
                ("preemptionDisabled", json!(d.preemption_disabled)),
                ("intraQueuePreemptionDisabled", json!(true)),
                ("defaultPriority", json!(l.default_application_priority)),
                ("isAutoCreatedLeafQueue", json!(false)),
                (
                    "maxApplicationLifetime",
                    json!(lifetime(q.maximum_application_lifetime)),
                ),
                (
                    "defaultApplicationLifetime",
                    json!(lifetime(q.default_application_lifetime)),
                ),
                (
                    "defaultNodeLabelExpression",
                    json!(q.labels.default_partition()),
                ),
            ];
            for (k, v) in leaf_fields {
                o.insert(k.into(), v);
            }
        } else {
            let children: Vec<Value> = q
                .children()
                .iter()
                .filter_map(|c| by_name.get(file.queues[*c].path.as_str()))
                .map(|c| Value::Object(self.capacity_queue(file, by_name, c)))
                .collect();
            o.insert("queues".into(), json!({"queue": children}));
        }
        o
    }
}

/// The queue's `accessible-node-labels` as Hadoop lists them (`["*"]`, or the labels).
fn node_labels(q: &CsQueue) -> Value {
    match &q.labels.accessible {
        AccessibleLabels::Any => json!(["*"]),
        AccessibleLabels::Only(labels) => json!(labels),
    }
}

/// One entry of `capacities.queueCapacitiesByPartition` (`PartitionQueueCapacitiesInfo`).
fn partition_capacities(q: &CsQueue, label: &str, p: &CapacityQueueDetails) -> Value {
    let leaf_am = match &q.kind {
        QueueKind::Leaf(l) => f64::from(l.maximum_am_resource_percent),
        QueueKind::Parent { .. } => 0.0,
    };
    let (am_percent, weight_value, configured_min, configured_max) = if label.is_empty() {
        (leaf_am, weight(q), configured_min(q), configured_max(q))
    } else {
        let own = q.labels.per_label.get(label);
        let am = own
            .and_then(|c| c.maximum_am_resource_percent)
            .map_or(leaf_am, f64::from);
        (am, json!(-1.0), Resource::ZERO, Resource::ZERO)
    };
    json!({
        "partitionName": label,
        "capacity": float(p.capacity),
        "usedCapacity": float(p.used_capacity),
        "maxCapacity": float(p.max_capacity),
        "absoluteCapacity": float(clamp_percent(p.absolute_capacity)),
        "absoluteUsedCapacity": float(clamp_percent(p.absolute_used_capacity)),
        "absoluteMaxCapacity": float(clamp_percent(p.absolute_max_capacity)),
        "maxAMLimitPercentage": float(am_percent * 100.0),
        "weight": weight_value,
        "normalizedWeight": 0.0,
        "configuredMinResource": resource(configured_min),
        "configuredMaxResource": resource(configured_max),
        "effectiveMinResource": resource(p.effective_min),
        "effectiveMaxResource": resource(p.effective_max),
    })
}

/// One user of a leaf (`UserInfo`, capacity spec §9.4).
fn user_json(u: &CapacityUserDetails, leaf: &CapacityQueueDetails) -> Value {
    let am_limit = leaf.user_am_limit.unwrap_or(Resource::ZERO);
    json!({
        "username": u.user,
        "resourcesUsed": resource(u.usage),
        "numActiveApplications": u.running_apps,
        "numPendingApplications": u.pending_apps,
        "AMResourceUsed": resource(u.am_used),
        "userResourceLimit": resource(u.user_limit),
        "userWeight": float(u.weight),
        "isActive": u.active,
        "resources": {"resourceUsagesByPartition": [{
            "partitionName": "",
            "used": resource(u.usage),
            "amUsed": resource(u.am_used),
            "amLimit": resource(am_limit),
        }]},
    })
}

fn index_of(file: &CapacityConfig, q: &CsQueue) -> usize {
    file.index_of(&q.path).unwrap_or(0)
}

/// A weight-mode queue's weight, else -1 (Hadoop's "not in weight mode").
fn weight(q: &CsQueue) -> Value {
    match q.capacity {
        CapacityValue::Weight(w) => float(f64::from(w)),
        _ => json!(-1.0),
    }
}

fn configured_min(q: &CsQueue) -> Resource {
    match q.capacity {
        CapacityValue::Absolute(r) => r,
        _ => Resource::ZERO,
    }
}

fn configured_max(q: &CsQueue) -> Resource {
    match q.maximum_capacity {
        weft_config::capacity::MaxCapacityValue::Absolute(r) => r,
        _ => Resource::ZERO,
    }
}

/// Lifetimes in seconds; unset (<= 0) is Hadoop's -1.
fn lifetime(seconds: i64) -> i64 {
    if seconds <= 0 {
        -1
    } else {
        seconds
    }
}
