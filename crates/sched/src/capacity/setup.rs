//! The queue tree from a capacity-scheduler.xml (`weft_config::capacity`), and the values
//! derived from it and the cluster (spec §5.1-§5.5), recomputed whenever the node set changes.

use crate::lanes::truncate;
use crate::lanes::Resource;
use weft_config::capacity::{
    CapacityConfig, CapacityValue, MaxCapacityValue, QueueKind, QueueOrdering, QueueState,
};

use crate::api::{CapacitySchedulerConfig, GroupMapping};
use crate::engine::Engine;
use crate::lanes::ClusterProperties;
use crate::queues::{QueueId, QueueTree, ROOT};

use super::calc::Calc;
use super::{Capacity, CapacityEngine, CsCold, CsHot, CsState, LeafLimits};
use crate::rules::QueueOf;

impl CapacityEngine {
    /// A Capacity Scheduler with the configured queues and no nodes or apps.
    pub(crate) fn new_capacity(
        config: CapacitySchedulerConfig,
        groups: GroupMapping,
    ) -> CapacityEngine {
        let mut config = config;
        config.capacity.expand_plan_queues();
        let properties = ClusterProperties::from_site(&config.properties);
        let calc = Calc::new(
            config.capacity.globals.resource_calculator,
            properties.resource_types.len(),
        );
        let mut queues: QueueTree<CsHot, CsCold> = QueueTree::new();
        let mut ids: Vec<QueueId> = Vec::with_capacity(config.capacity.queues.len());
        for (index, q) in config.capacity.queues.iter().enumerate() {
            let id = match q.parent {
                None => ROOT,
                Some(p) => queues.add_child(ids[p], q.path.clone(), q.is_leaf()),
            };
            ids.push(id);
            let queue = queues.get_mut(id);
            queue.configured = true;
            queue.acl_submit = q.acl_submit_applications.clone();
            queue.acl_admin = q.acl_administer_queue.clone();
            queue.rules = hot_settings(&config.capacity, index);
            queue.rules_cold = cold_settings(&config.capacity, index);
        }
        queues.rank_names();
        let rules = Capacity {
            file: config.capacity,
            calc,
            offswitch_assigned: 0,
            max_priority: config.properties.max_application_priority,
            blocked_headroom: std::collections::BTreeMap::new(),
            users: Default::default(),
            scaled: false,
            derived_stale: false,
            pending_leaves: std::collections::BTreeSet::new(),
            preempt: Box::new(super::preempt::PreemptState::new(
                config.properties.capacity_preemption_monitor(),
            )),
            parallel: Default::default(),
        };
        let mut e = Engine::new(rules, properties, queues, groups);
        e.derive_capacities();
        e
    }

    /// Spec §5.1-§5.3: capacities, absolute capacities and effective resources of every queue
    /// against the current cluster, top down (a parent is configured before its children).
    pub(crate) fn derive_capacities(&mut self) {
        let cluster = self.cluster;
        let calc = self.rules.calc;
        let ids: Vec<QueueId> = self.queues.ids().collect();
        for id in ids {
            let parent = self.queues.get(id).parent;
            let index = self.queues.get(id).rules_cold.index;
            let Some(parent) = parent else {
                let root = self.queues.get_mut(id);
                root.rules_cold.capacity = 1.0;
                root.rules_cold.max_capacity = 1.0;
                root.rules_cold.abs_capacity = 1.0;
                root.rules_cold.abs_max_capacity = 1.0;
                root.rules_cold.eff_min = cluster;
                root.rules.eff_max = cluster;
                root.rules.abs_capacity = 1.0;
                root.rules.guaranteed =
                    calc.max(&cluster, cluster, self.properties.minimum_allocation);
                continue;
            };
            let p = self.queues.get(parent).rules_cold.clone();
            let parent_eff_max = self.queues.get(parent).rules.eff_max;
            let q = &self.rules.file.queues[index];
            let (capacity, eff_min) = match &q.capacity {
                CapacityValue::Percent(v) => {
                    let c = f64::from(*v) / 100.0;
                    (c, None)
                }
                CapacityValue::Weight(w) => {
                    let sum: f64 = self.rules.file.queues
                        [self.rules.file.queues[index].parent.unwrap_or(0)]
                    .children()
                    .iter()
                    .filter_map(|c| match self.rules.file.queues[*c].capacity {
                        CapacityValue::Weight(w) if w >= 0.0 => Some(f64::from(w)),
                        _ => None,
                    })
                    .sum();
                    let c = if sum > 0.0 { f64::from(*w) / sum } else { 0.0 };
                    (c, None)
                }
                CapacityValue::Absolute(min) => {
                    let scaled = self.scaled_absolute_min(index, truncate(*min), &p.eff_min);
                    let c = if p.eff_min.is_zero() {
                        0.0
                    } else {
                        finite_or_zero(calc.divide(&cluster, &scaled, &p.eff_min))
                    };
                    (c, Some(scaled))
                }
            };
            let abs_capacity = if capacity > 0.0 {
                capacity * p.abs_capacity
            } else {
                0.0
            };
            let (max_capacity, eff_max) = match &q.maximum_capacity {
                MaxCapacityValue::Percent(m) => (f64::from(*m) / 100.0, None),
                MaxCapacityValue::Absolute(max) => {
                    let capped = calc.min(&cluster, truncate(*max), parent_eff_max);
                    let m = if parent_eff_max.is_zero() {
                        0.0
                    } else {
                        finite_or_zero(calc.divide(&cluster, &capped, &parent_eff_max))
                    };
                    (m, Some(capped))
                }
            };
            let abs_max_capacity = max_capacity * p.abs_max_capacity;
            let eff_min = eff_min.unwrap_or_else(|| cluster.mul_trunc(abs_capacity));
            let eff_max = eff_max.unwrap_or_else(|| cluster.mul_trunc(abs_max_capacity));
            let queue = self.queues.get_mut(id);
            let cold = &mut queue.rules_cold;
            cold.capacity = capacity;
            cold.max_capacity = max_capacity;
            cold.abs_capacity = abs_capacity;
            cold.abs_max_capacity = abs_max_capacity;
            cold.eff_min = eff_min;
            queue.rules.eff_max = eff_max;
            queue.rules.abs_capacity = abs_capacity;
            queue.rules.guaranteed =
                calc.max(&cluster, eff_min, self.properties.minimum_allocation);
            if let Some(leaf) = &mut cold.leaf {
                leaf.max_applications = max_applications(&self.rules.file, index, abs_capacity);
                leaf.max_applications_per_user = leaf.per_user_cap();
            }
        }
        self.rank_ties();
        self.rules.scaled = !self.rules.file.queues.iter().any(|q| {
            matches!(q.capacity, CapacityValue::Absolute(_))
                || matches!(q.maximum_capacity, MaxCapacityValue::Absolute(_))
        });
        self.rules.derived_stale = false;
    }

    /// After a node change: with every capacity a fraction (`Capacity::scaled`) the fractions
    /// stand and the kept effective resources are only marked stale (read through
    /// computation until `refresh_scaled`); otherwise (absolute capacities) every queue is
    /// derived again.
    pub(crate) fn cluster_resized(&mut self) {
        if self.rules.scaled {
            self.rules.derived_stale = true;
        } else {
            self.derive_capacities();
        }
    }

    /// Brings stale effective resources (scaled mode, after node changes) up to date: once per
    /// heartbeat that follows node changes, however many nodes changed.
    pub(crate) fn refresh_scaled(&mut self) {
        if !self.rules.derived_stale {
            return;
        }
        let ids: Vec<QueueId> = self.queues.ids().collect();
        for id in ids {
            let q = self.queues.get(id);
            let (eff_min, eff_max) = (self.scaled_eff_min(q), self.scaled_eff_max(q));
            let guaranteed =
                self.rules
                    .calc
                    .max(&self.cluster, eff_min, self.properties.minimum_allocation);
            let q = self.queues.get_mut(id);
            q.rules_cold.eff_min = eff_min;
            q.rules.eff_max = eff_max;
            q.rules.guaranteed = guaranteed;
        }
        self.rules.derived_stale = false;
    }

    /// `verify`: the kept effective resources, when not stale, are what the cluster and the
    /// fractions give now.
    pub(crate) fn verify_derived(&self, drift: &mut Vec<String>) {
        if !self.rules.scaled || self.rules.derived_stale {
            return;
        }
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            let eff_min = self.scaled_eff_min(q);
            let eff_max = self.scaled_eff_max(q);
            let guaranteed =
                self.rules
                    .calc
                    .max(&self.cluster, eff_min, self.properties.minimum_allocation);
            let kept = (q.rules_cold.eff_min, q.rules.eff_max, q.rules.guaranteed);
            if kept != (eff_min, eff_max, guaranteed) {
                drift.push(format!(
                    "queue {}: kept (effMin, effMax, guaranteed) {kept:?}, recomputed {:?}",
                    q.name,
                    (eff_min, eff_max, guaranteed)
                ));
            }
        }
    }

    /// Scaled mode's `effMin`: the cluster times the absolute capacity (root: the cluster).
    fn scaled_eff_min(&self, q: &QueueOf<Capacity>) -> Resource {
        match q.parent {
            None => self.cluster,
            Some(_) => self.cluster.mul_trunc(q.rules.abs_capacity),
        }
    }

    /// Scaled mode's `effMax`: the cluster times the absolute maximum capacity.
    fn scaled_eff_max(&self, q: &QueueOf<Capacity>) -> Resource {
        match q.parent {
            None => self.cluster,
            Some(_) => self.cluster.mul_trunc(q.rules_cold.abs_max_capacity),
        }
    }

    /// Numbers every queue by absolute capacity descending, then configuration order: the
    /// `utilization` key's tie-break (`CsHot::tie_rank`), equal to the comparator's.
    fn rank_ties(&mut self) {
        let mut ids: Vec<(f64, u64, QueueId)> = self
            .queues
            .ids()
            .map(|id| {
                let hot = &self.queues.get(id).rules;
                (hot.abs_capacity, hot.config_rank, id)
            })
            .collect();
        ids.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        for (rank, (_, _, id)) in ids.into_iter().enumerate() {
            self.queues.get_mut(id).rules.tie_rank = rank as u64;
        }
    }

    /// `effMin` (spec §5.1, §5.3): the cluster times the absolute capacity, or as derived.
    #[inline]
    pub(crate) fn eff_min_of(&self, q: &QueueOf<Capacity>) -> Resource {
        if self.rules.derived_stale {
            return self.scaled_eff_min(q);
        }
        q.rules_cold.eff_min
    }

    /// `effMax` (spec §5.1, §5.3): the cluster times the absolute maximum capacity, or as
    /// derived.
    #[inline]
    pub(crate) fn eff_max_of(&self, q: &QueueOf<Capacity>) -> Resource {
        if self.rules.derived_stale {
            return self.scaled_eff_max(q);
        }
        q.rules.eff_max
    }

    /// `max_rc(effMin, minAlloc)` (spec §5.4).
    #[inline]
    pub(crate) fn guaranteed_of(&self, q: &QueueOf<Capacity>) -> Resource {
        if !self.rules.derived_stale {
            return q.rules.guaranteed;
        }
        self.rules.calc.max(
            &self.cluster,
            self.eff_min_of(q),
            self.properties.minimum_allocation,
        )
    }

    /// Spec §5.3: an absolute minimum, scaled down per type when the siblings' minimums
    /// together exceed the parent's effective minimum.
    fn scaled_absolute_min(&self, index: usize, min: Resource, parent_min: &Resource) -> Resource {
        let file = &self.rules.file;
        let parent = file.queues[index].parent.unwrap_or(0);
        let mut sum = Resource::ZERO;
        for c in file.queues[parent].children() {
            if let CapacityValue::Absolute(m) = file.queues[*c].capacity {
                sum = sum.saturating_add(truncate(m));
            }
        }
        let over = if parent == 0 {
            !self.rules.calc.fits(&sum, &self.cluster)
        } else {
            self.rules.calc.gt(&self.cluster, &sum, parent_min)
        };
        if !over {
            return min;
        }
        let mut out = min;
        for i in 0..self.properties.resource_types.len() {
            if sum.get(i) > 0 {
                let ratio = parent_min.get(i) as f64 / sum.get(i) as f64;
                out.set(i, (min.get(i) as f64 * ratio) as i64);
            }
        }
        out
    }
}

fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// Spec §5.5 (3.3): the per-queue key, else `global-queue-max-application`, else
/// `maximum-applications` × absolute capacity.
fn max_applications(file: &CapacityConfig, index: usize, abs_capacity: f64) -> i64 {
    let configured = match &file.queues[index].kind {
        QueueKind::Leaf(l) => l.maximum_applications,
        QueueKind::Parent { .. } => None,
    };
    match configured {
        Some(n) if n >= 0 => i64::from(n),
        _ if file.globals.global_queue_max_application > 0 => {
            i64::from(file.globals.global_queue_max_application)
        }
        _ => (f64::from(file.globals.maximum_applications) * abs_capacity) as i64,
    }
}

/// What the walk's keys read of queue `index`.
pub(super) fn hot_settings(file: &CapacityConfig, index: usize) -> CsHot {
    let q = &file.queues[index];
    let (priority_ordering, fair_leaf, size_based) = match &q.kind {
        QueueKind::Parent { ordering, .. } => (
            *ordering == QueueOrdering::PriorityUtilization,
            false,
            false,
        ),
        QueueKind::Leaf(l) => (
            false,
            l.ordering == weft_config::capacity::AppOrdering::Fair,
            l.fair_size_based_weight,
        ),
    };
    CsHot {
        guaranteed: Resource::ZERO,
        eff_max: Resource::ZERO,
        abs_capacity: 0.0,
        priority: q.priority,
        config_rank: index as u64,
        tie_rank: 0,
        children_by_priority: priority_ordering,
        fair_leaf,
        size_based,
        reserved: Resource::ZERO,
    }
}

/// What updates, admission and reports read of queue `index`.
pub(super) fn cold_settings(file: &CapacityConfig, index: usize) -> CsCold {
    let q = &file.queues[index];
    let leaf = match &q.kind {
        QueueKind::Leaf(l) => Some(LeafLimits {
            minimum_user_limit_percent: f64::from(l.minimum_user_limit_percent),
            user_limit_factor: f64::from(l.user_limit_factor),
            am_percent: f64::from(l.maximum_am_resource_percent),
            max_applications: 0,
            max_applications_per_user: 0,
            user_weights: l
                .user_weights
                .iter()
                .map(|(u, w)| (u.clone(), f64::from(*w)))
                .collect(),
            default_priority: l.default_application_priority,
        }),
        QueueKind::Parent { .. } => None,
    };
    CsCold {
        index,
        state: match q.state {
            QueueState::Running => CsState::Running,
            QueueState::Stopped => CsState::Stopped,
        },
        leaf,
        ..CsCold::default()
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use crate::lanes::Resource;
    use weft_config::capacity::parse_capacity;
    use weft_config::SchedulerProperties;
    use weft_types::{NodeId, ResourceTypes, Time};

    use crate::api::{CapacitySchedulerConfig, Event};
    use crate::capacity::{Capacity, CapacityEngine};
    use crate::rules::Rules;

    fn engine() -> CapacityEngine {
        let xml = "<configuration>\
            <property><name>yarn.scheduler.capacity.root.queues</name><value>a,default</value></property>\
            <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>60</value></property>\
            <property><name>yarn.scheduler.capacity.root.a.maximum-capacity</name><value>75</value></property>\
            <property><name>yarn.scheduler.capacity.root.default.capacity</name><value>40</value></property>\
            </configuration>";
        let (capacity, _) = parse_capacity(xml, &ResourceTypes::default()).expect("valid");
        let config = CapacitySchedulerConfig {
            capacity,
            properties: SchedulerProperties {
                minimum_allocation: Resource::new(1024, 1),
                increment_allocation: Resource::new(1024, 1),
                ..Default::default()
            },
        };
        CapacityEngine::new_capacity(config, Default::default())
    }

    fn add_node(e: &mut CapacityEngine, n: u32) {
        e.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("h{n}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        )
        .expect("node");
    }

    fn drift(e: &CapacityEngine) -> Vec<String> {
        let mut drift = Vec::new();
        Capacity::verify(e, &mut drift);
        drift
    }

    #[test]
    fn scaled_effective_resources_are_read_through_until_a_heartbeat_keeps_them() {
        let mut e = engine();
        add_node(&mut e, 0);
        add_node(&mut e, 1);
        assert!(e.rules.derived_stale, "a node change marks them stale");
        let a = e.queues.lookup("root.a").expect("a");
        // 16384 × 0.6 = 9830.4, × 0.75 = 12288: computed while stale.
        let q = e.queues.get(a);
        assert_eq!(e.eff_min_of(q).memory_mb(), 9830);
        assert_eq!(e.eff_max_of(q).memory_mb(), 12288);
        assert_eq!(e.guaranteed_of(q).memory_mb(), 9830);
        e.handle(Time(1), Event::NodeHeartbeat { node: NodeId(0) })
            .expect("heartbeat");
        assert!(!e.rules.derived_stale, "the heartbeat keeps them again");
        let q = e.queues.get(a);
        assert_eq!(q.rules_cold.eff_min.memory_mb(), 9830);
        assert_eq!(q.rules.eff_max.memory_mb(), 12288);
        assert_eq!(q.rules.guaranteed.memory_mb(), 9830);
        assert_eq!(drift(&e), Vec::<String>::new());
        add_node(&mut e, 2);
        // Read through computation (24576 × 0.6 = 14745.6) until the next heartbeat.
        assert_eq!(e.eff_min_of(e.queues.get(a)).memory_mb(), 14745);
        e.handle(Time(2), Event::NodeHeartbeat { node: NodeId(2) })
            .expect("heartbeat");
        assert_eq!(e.queues.get(a).rules.eff_max.memory_mb(), 18432);
        assert_eq!(drift(&e), Vec::<String>::new());
        e.queues.get_mut(a).rules.eff_max = Resource::new(1024, 1);
        assert_eq!(drift(&e).len(), 1, "a drifted kept maximum is reported");
    }

    /// An app's `queueUsagePercentage` divides by the leaf's effective capacity under Capacity
    /// (Hadoop's `FiCaSchedulerApp`), not by a fair share (which Capacity has none of).
    #[test]
    fn leaves_report_their_effective_capacity_as_the_apps_usage_basis() {
        let mut e = engine();
        add_node(&mut e, 1);
        add_node(&mut e, 2);
        let mut seen = Vec::new();
        e.visit_leaf_queues(|q| seen.push((q.name.to_string(), q.app_usage_basis, q.fair_share)));
        // 16 GiB and 16 vcores: a is 60% of it, default 40% (memory rounded down to MB).
        assert_eq!(
            seen,
            vec![
                ("root.a".to_string(), Resource::new(9830, 9), Resource::ZERO),
                (
                    "root.default".to_string(),
                    Resource::new(6553, 6),
                    Resource::ZERO
                ),
            ]
        );
    }
}
