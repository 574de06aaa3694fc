//! The Capacity Scheduler over exclusive node partitions (Hadoop's node labels, NodeLabel.md;
//! capacity spec §3.14): every capacity figure is per partition, and an exclusive partition's
//! nodes serve only apps whose label expression names it. So the partitions are disjoint
//! schedulers over one queue tree: one engine per partition, DEFAULT's being the engine the
//! scheduler has without labels. Partition P's engine holds P's nodes and the apps of P, and
//! reads the tree with each queue's P figures (`accessible-node-labels.P.capacity` and
//! `.maximum-capacity`, 0 and 0 for a queue that cannot access P), so capacities, maximums,
//! user limits, AM limits, headroom, ordering, reservations and preemption are all computed
//! against P's resource with P's usage, by the code DEFAULT runs. Without labels none of this
//! exists and the scheduler is exactly the single engine.
//!
//! An app's partition is its queue's `default-node-label-expression` at submission (DEFAULT
//! when unset), fixed for its life. Decisions where Hadoop's single scheduler shares state
//! across partitions, and the engines do not:
//! * `maximum-applications` (system and per queue) and `max-parallel-apps` count per
//!   partition; a leaf's derived application limit comes from its DEFAULT capacity, as in
//!   Hadoop;
//! * a node changes partition only while it runs no container (Hadoop moves the running
//!   containers' usage to the new partition; here the relabel is refused until they end);
//! * plan queues (reservations) and auto-created leaves serve DEFAULT only;
//! * non-exclusive labels (lending idle partition resources to DEFAULT apps) are not
//!   modelled.

use std::collections::BTreeMap;
use std::ops::{Deref, DerefMut};

use crate::lanes::Resource;
use crate::lanes::{inward_ask, outward};
use weft_config::capacity::{
    CapacityConfig, CapacityValue, MaxCapacityValue, NodePartitions, QueueKind,
};
use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::api::{
    CapacityQueueDetails, CapacitySchedulerConfig, Decision, Event, GangHold, GroupMapping,
    LeafQueueStats, PendingSummary, Placement, PoolStats, RejectCode, SchedError, SchedulerConfig,
    Snapshot,
};
use crate::engine::WalkMode;

use super::CapacityEngine;

/// The Capacity Scheduler with labeled partitions: DEFAULT's engine (what `Deref` reaches, so
/// every query that is about DEFAULT or the queue tree reads it) and one engine per label.
pub(crate) struct Partitioned {
    default: CapacityEngine,
    /// Per label (sorted by name): its engine. Partition `i + 1` is `labeled[i]`.
    labeled: Vec<(String, CapacityEngine)>,
    /// The configuration in force, with the registry's partitions.
    file: CapacitySchedulerConfig,
    node_partition: BTreeMap<NodeId, usize>,
    app_partition: BTreeMap<AppId, usize>,
    /// The partition of the latest heartbeat's node (its walk counters are the latest).
    last_heartbeat: usize,
}

impl Deref for Partitioned {
    type Target = CapacityEngine;
    fn deref(&self) -> &CapacityEngine {
        &self.default
    }
}

impl DerefMut for Partitioned {
    fn deref_mut(&mut self) -> &mut CapacityEngine {
        &mut self.default
    }
}

/// Hadoop's refusal of a request naming a label the cluster does not have
/// (`SchedulerUtils.checkQueueLabelInLabelManager`).
pub(crate) fn label_not_in_cluster(label: &str) -> String {
    format!("Invalid label resource request, cluster do not contain , label= {label}")
}

/// Whether `file` makes the scheduler label-aware: the registry has labels, or a queue's
/// `default-node-label-expression` names one (its apps are then refused until the label
/// exists, as in Hadoop).
pub(crate) fn uses_labels(file: &CapacityConfig) -> bool {
    !file.partitions.is_empty()
        || file
            .queues
            .iter()
            .any(|q| !q.labels.default_partition().is_empty())
}

/// Hadoop's refusal of a request naming a label its queue cannot access
/// (`SchedulerUtils.validateResourceRequest`).
pub(crate) fn label_not_accessible(queue: &str, label: &str, queue_labels: &str) -> String {
    format!(
        "Invalid resource request, queue={queue} doesn't have permission to access all labels in resource request. labelExpression of resource request={label}. Queue labels={queue_labels}"
    )
}

/// The file as partition `label`'s engine reads it: every queue's capacity and maximum are its
/// figures in the label (percentages of the parent's), its AM share the label's where set,
/// and a leaf's application limit the one its DEFAULT capacity gives (`default_abs`: each
/// queue's absolute DEFAULT capacity, by index).
pub(crate) fn partition_file(
    file: &CapacityConfig,
    label: &str,
    default_abs: &[f64],
) -> CapacityConfig {
    let mut out = file.clone();
    out.partitions = NodePartitions::default();
    out.reservable.clear();
    out.leaf_templates.clear();
    let system = file.globals.maximum_applications;
    let global_queue = file.globals.global_queue_max_application;
    for (i, q) in out.queues.iter_mut().enumerate() {
        let is_root = q.parent.is_none();
        let figures = q.labels.in_partition(label, is_root);
        q.capacity = CapacityValue::Percent(figures.capacity);
        q.maximum_capacity = MaxCapacityValue::Percent(figures.maximum_capacity);
        match &mut q.kind {
            QueueKind::Leaf(settings) => {
                if let Some(am) = figures.maximum_am_resource_percent {
                    settings.maximum_am_resource_percent = am;
                }
                if settings.maximum_applications.is_none() && global_queue <= 0 {
                    let abs = default_abs.get(i).copied().unwrap_or(0.0);
                    settings.maximum_applications = Some((f64::from(system) * abs) as i32);
                }
            }
            QueueKind::Parent {
                allow_zero_capacity_sum,
                auto_create_child_queue,
                ..
            } => {
                // A parent without the label has children without it: a zero sum is right.
                *allow_zero_capacity_sum = true;
                *auto_create_child_queue = false;
            }
        }
    }
    out
}

/// Each queue's absolute DEFAULT capacity as `engine` derived it, by the file's index.
fn default_absolutes(engine: &CapacityEngine, file: &CapacityConfig) -> Vec<f64> {
    file.queues
        .iter()
        .map(|q| {
            engine
                .queues
                .lookup(&q.path)
                .map_or(0.0, |id| engine.queues.get(id).rules_cold.abs_capacity)
        })
        .collect()
}

impl Partitioned {
    /// Takes over `default` (DEFAULT's engine, with whatever it holds) for `config`'s
    /// partitions. Its nodes in a label move to that label's engine, which they may only do
    /// while they run nothing (`Err` otherwise, and `default` is given back).
    pub(crate) fn new(
        default: CapacityEngine,
        config: CapacitySchedulerConfig,
        groups: &GroupMapping,
        now: Time,
    ) -> Result<Partitioned, (Box<CapacityEngine>, SchedError)> {
        let mut p = Partitioned {
            default,
            labeled: Vec::new(),
            file: config.clone(),
            node_partition: BTreeMap::new(),
            app_partition: BTreeMap::new(),
            last_heartbeat: 0,
        };
        let nodes: Vec<NodeId> = p.default.nodes.values().map(|n| n.id).collect();
        let apps: Vec<AppId> = p.default.apps.values().map(|a| a.id).collect();
        p.node_partition.extend(nodes.into_iter().map(|n| (n, 0)));
        p.app_partition.extend(apps.into_iter().map(|a| (a, 0)));
        if let Err(e) = p.repartition(now, &config, groups) {
            return Err((Box::new(p.default), e));
        }
        Ok(p)
    }

    fn engine(&self, p: usize) -> &CapacityEngine {
        match p.checked_sub(1).and_then(|i| self.labeled.get(i)) {
            Some((_, e)) => e,
            None => &self.default,
        }
    }

    fn engine_mut(&mut self, p: usize) -> &mut CapacityEngine {
        match p.checked_sub(1) {
            Some(i) if i < self.labeled.len() => &mut self.labeled[i].1,
            _ => &mut self.default,
        }
    }

    fn engines(&self) -> impl Iterator<Item = &CapacityEngine> {
        std::iter::once(&self.default).chain(self.labeled.iter().map(|(_, e)| e))
    }

    fn engines_mut(&mut self) -> impl Iterator<Item = &mut CapacityEngine> {
        std::iter::once(&mut self.default).chain(self.labeled.iter_mut().map(|(_, e)| e))
    }

    /// The partition's label (`""`: DEFAULT).
    fn label(&self, p: usize) -> &str {
        p.checked_sub(1)
            .and_then(|i| self.labeled.get(i))
            .map_or("", |(l, _)| l.as_str())
    }

    fn partition_named(&self, label: &str) -> Option<usize> {
        if label.is_empty() {
            return Some(0);
        }
        self.labeled
            .iter()
            .position(|(l, _)| l == label)
            .map(|i| i + 1)
    }

    fn app_engine(&self, app: AppId) -> usize {
        self.app_partition.get(&app).copied().unwrap_or(0)
    }

    fn node_engine(&self, node: NodeId) -> usize {
        self.node_partition.get(&node).copied().unwrap_or(0)
    }

    /// After any call: container ids stay unique across the engines (each allocates from the
    /// highest any has reached), and every engine's decisions join DEFAULT's queue, which is
    /// what the driver drains.
    fn settle(&mut self) {
        let next = self.engines().map(|e| e.next_container).max().unwrap_or(0);
        for e in self.engines_mut() {
            e.next_container = next;
        }
        let mut moved: Vec<Decision> = Vec::new();
        for (_, e) in &mut self.labeled {
            moved.extend(e.decisions.drain(..));
        }
        self.default.decisions.extend(moved);
    }

    /// See [`crate::Scheduler::handle`].
    pub(crate) fn handle(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        let out = self.route(now, event);
        self.settle();
        out
    }

    fn route(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        match event {
            Event::NodeAdded {
                node,
                host,
                port,
                rack,
                capability,
            } => {
                let label = self.file.capacity.partitions.label_of(&host, port);
                let p = self.partition_named(label).unwrap_or(0);
                self.engine_mut(p).handle(
                    now,
                    Event::NodeAdded {
                        node,
                        host,
                        port,
                        rack,
                        capability,
                    },
                )?;
                self.node_partition.insert(node, p);
                Ok(())
            }
            Event::NodeRemoved { node } => {
                let p = self.node_engine(node);
                self.engine_mut(p)
                    .handle(now, Event::NodeRemoved { node })?;
                self.node_partition.remove(&node);
                Ok(())
            }
            Event::NodeHeartbeat { node } => {
                let p = self.node_engine(node);
                self.last_heartbeat = p;
                self.engine_mut(p)
                    .handle(now, Event::NodeHeartbeat { node })
            }
            Event::ContainerCompleted {
                container,
                exit,
                status,
            } => {
                let p = self.container_engine(container);
                self.engine_mut(p).handle(
                    now,
                    Event::ContainerCompleted {
                        container,
                        exit,
                        status,
                    },
                )
            }
            Event::AppSubmitted {
                app,
                user,
                queue,
                am_resource,
            } => {
                let am_resource = inward_ask(app, am_resource)?;
                self.submit_now(now, app, user, queue, am_resource, None, None)
                    .map(|_| ())
            }
            Event::Move { app, queue } => {
                let p = self.app_engine(app);
                if p != 0 {
                    self.check_move(app, p, &queue)?;
                }
                self.engine_mut(p).handle(now, Event::Move { app, queue })
            }
            Event::ContainerRecovered {
                container,
                app,
                node,
                resources,
                priority,
                am,
            } => {
                let p = self.app_engine(app);
                if self.node_partition.get(&node).is_some_and(|n| *n != p) {
                    return Err(SchedError::RecoveryRefused {
                        container,
                        app,
                        reason: format!(
                            "its node is in partition '{}', the app's is '{}'",
                            self.label(self.node_engine(node)),
                            self.label(p)
                        ),
                    });
                }
                self.engine_mut(p).handle(
                    now,
                    Event::ContainerRecovered {
                        container,
                        app,
                        node,
                        resources,
                        priority,
                        am,
                    },
                )
            }
            Event::Reload(config) => self.reload(now, *config),
            Event::PlanChanged(plan) => self.default.handle(now, Event::PlanChanged(plan)),
            event @ (Event::GroupsChanged(_)
            | Event::UserGroups { .. }
            | Event::Update
            | Event::Timeout) => {
                for e in self.engines_mut() {
                    e.handle(now, event.clone())?;
                }
                Ok(())
            }
            event => {
                let Some(app) = app_of(&event) else {
                    return self.default.handle(now, event);
                };
                let p = self.app_engine(app);
                let out = self.engine_mut(p).handle(now, event);
                if !self.engine(p).apps.contains_key(&app) {
                    self.app_partition.remove(&app);
                }
                out
            }
        }
    }

    fn container_engine(&self, container: ContainerId) -> usize {
        (0..=self.labeled.len())
            .find(|p| self.engine(*p).containers.contains_key(&container))
            .unwrap_or(0)
    }

    /// Hadoop's `checkQueuePartition` on a move: the target must access the app's partition.
    fn check_move(&self, app: AppId, p: usize, target: &str) -> Result<(), SchedError> {
        let label = self.label(p);
        let Some(q) = self.file_queue_named(target) else {
            // Unknown target: the engine refuses it in its own words.
            return Ok(());
        };
        if q.labels.accessible.can_access(label) {
            return Ok(());
        }
        Err(SchedError::MoveRefused {
            app,
            queue: target.to_string(),
            reason: format!(
                "Specified queue={} can't satisfy following apps label expressions ={label} accessible node labels ={}",
                q.path,
                q.labels.accessible.display()
            ),
        })
    }

    fn file_queue_named(&self, name: &str) -> Option<&weft_config::capacity::CsQueue> {
        let id = self.default.resolve_queue(name)?;
        let path = &self.default.queues.get(id).name;
        self.file.capacity.queue(path)
    }

    /// See [`crate::Scheduler::submit_labeled`]: placed as DEFAULT's engine places it (the
    /// engines share the tree, the mapping rules and the ACLs), then sent to the partition of
    /// `label`, else of its queue's `default-node-label-expression`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn submit_now(
        &mut self,
        now: Time,
        app: AppId,
        user: String,
        queue: Option<String>,
        am_resource: Option<Resource>,
        reservation: Option<&str>,
        label: Option<&str>,
    ) -> Result<Placement, SchedError> {
        if self.app_partition.contains_key(&app) {
            return Err(SchedError::Duplicate(format!("application {app}")));
        }
        let p = match self.partition_for(app, &user, queue.as_deref(), label) {
            Ok(p) => p,
            Err((code, reason)) => {
                self.default.decisions.push_back(Decision::Rejected {
                    app,
                    reason: reason.clone(),
                    code,
                });
                return Ok(Placement::Rejected { reason, code });
            }
        };
        let out = self
            .engine_mut(p)
            .submit_now(now, app, user, queue, am_resource, reservation);
        if self.engine(p).apps.contains_key(&app) {
            self.app_partition.insert(app, p);
        }
        self.settle();
        out
    }

    /// The partition an app submitted to `queue` (with `label`, the submission's own
    /// expression) runs in, or Hadoop's refusal when the queue cannot access the label or the
    /// cluster does not have it. A placement DEFAULT's engine refuses goes there (refused in
    /// its words).
    fn partition_for(
        &self,
        app: AppId,
        user: &str,
        queue: Option<&str>,
        label: Option<&str>,
    ) -> Result<usize, (RejectCode, String)> {
        let Ok(leaf) = self.default.cs_place(app, user, queue) else {
            return Ok(0);
        };
        let path = &self.default.queues.get(leaf).name;
        let Some(q) = self.file.capacity.queue(path) else {
            return Ok(0);
        };
        let label = match label.map(str::trim).filter(|l| !l.is_empty()) {
            Some(own) => {
                if !q.labels.accessible.can_access(own) {
                    return Err((
                        RejectCode::LabelNotAccessible,
                        label_not_accessible(path, own, &q.labels.accessible.display()),
                    ));
                }
                own
            }
            None => q.labels.default_partition(),
        };
        self.partition_named(label)
            .ok_or_else(|| (RejectCode::LabelNotAccessible, label_not_in_cluster(label)))
    }

    /// A new configuration or new partitions: each engine takes the file with its partition's
    /// figures; labels new to the registry get an engine, nodes whose label changed move (only
    /// while they run nothing), and a label gone takes its nodes back to DEFAULT (refused
    /// while its partition holds apps).
    fn reload(&mut self, now: Time, config: SchedulerConfig) -> Result<(), SchedError> {
        let SchedulerConfig::Capacity(config) = config else {
            return Err(SchedError::ConfigRefused(
                "the scheduler kind cannot change on a reload (restart the ResourceManager)"
                    .to_string(),
            ));
        };
        let groups = self.default.groups.clone();
        self.repartition(now, &config, &groups)
    }

    fn repartition(
        &mut self,
        now: Time,
        config: &CapacitySchedulerConfig,
        groups: &GroupMapping,
    ) -> Result<(), SchedError> {
        let labels = &config.capacity.partitions.labels;
        self.check_repartition(config)?;
        self.check_access(config)?;
        // DEFAULT first: its refusal (Hadoop's refresh rules) changes nothing.
        let mut default_config = config.clone();
        default_config.capacity.partitions = NodePartitions::default();
        self.default.handle(
            now,
            Event::Reload(Box::new(SchedulerConfig::Capacity(default_config))),
        )?;
        let abs = default_absolutes(&self.default, &config.capacity);
        // Partition indices follow the label list: remember each index's label to re-key.
        let before: Vec<String> = (0..=self.labeled.len())
            .map(|p| self.label(p).to_string())
            .collect();
        let mut old = std::mem::take(&mut self.labeled);
        let mut labeled = Vec::with_capacity(labels.len());
        for label in labels {
            let part = CapacitySchedulerConfig {
                capacity: partition_file(&config.capacity, label, &abs),
                properties: config.properties.clone(),
            };
            let engine = match old.iter().position(|(l, _)| l == label) {
                Some(i) => {
                    let (_, mut e) = old.remove(i);
                    let reloaded = e.handle(
                        now,
                        Event::Reload(Box::new(SchedulerConfig::Capacity(part))),
                    );
                    if let Err(err) = reloaded {
                        // Put every engine back as it was listed; DEFAULT's reload stands.
                        labeled.push((label.clone(), e));
                        labeled.append(&mut old);
                        labeled.sort_by(|a, b| a.0.cmp(&b.0));
                        self.labeled = labeled;
                        return Err(err);
                    }
                    e
                }
                None => {
                    let mut e = CapacityEngine::new_capacity(part, groups.clone());
                    e.set_walk_mode(self.default.walk);
                    e.next_container = self.default.next_container;
                    e
                }
            };
            labeled.push((label.clone(), engine));
        }
        // What is left of `old` is labels gone, checked to hold no app; their nodes go back to
        // DEFAULT below.
        let mut orphans: Vec<(NodeId, Event)> = Vec::new();
        for (_, e) in &old {
            for n in e.nodes.values() {
                orphans.push((
                    n.id,
                    Event::NodeAdded {
                        node: n.id,
                        host: n.host.clone(),
                        port: n.port,
                        rack: n.rack.clone(),
                        capability: outward(n.capability),
                    },
                ));
            }
        }
        self.labeled = labeled;
        let index_of = |label: &str| self.partition_named(label).unwrap_or(0);
        let remap: Vec<usize> = before.iter().map(|l| index_of(l)).collect();
        for p in self.app_partition.values_mut() {
            *p = remap.get(*p).copied().unwrap_or(0);
        }
        for p in self.node_partition.values_mut() {
            *p = remap.get(*p).copied().unwrap_or(0);
        }
        for (node, added) in orphans {
            self.node_partition.insert(node, 0);
            self.default.handle(now, added)?;
        }
        self.file = config.clone();
        self.move_relabeled_nodes(now)?;
        self.settle();
        Ok(())
    }

    /// A label may go only when its engine holds no app and no node; a node may change
    /// partition only while it runs no container.
    fn check_repartition(&self, config: &CapacitySchedulerConfig) -> Result<(), SchedError> {
        let partitions = &config.capacity.partitions;
        for (label, e) in &self.labeled {
            if !partitions.labels.contains(label) && e.apps.len() > 0 {
                return Err(SchedError::ConfigRefused(format!(
                    "label {label} still has {} application(s) running in its partition",
                    e.apps.len()
                )));
            }
        }
        for (id, p) in &self.node_partition {
            let Some(n) = self.engine(*p).nodes.get(id) else {
                continue;
            };
            let now_label = partitions.label_of(&n.host, n.port);
            let now_label = if partitions.labels.iter().any(|l| l == now_label) {
                now_label
            } else {
                ""
            };
            if now_label != self.label(*p) && !n.allocated.is_zero() {
                let name = match n.port {
                    0 => n.host.clone(),
                    port => format!("{}:{port}", n.host),
                };
                return Err(SchedError::ConfigRefused(format!(
                    "node {name} runs containers in partition '{}': its partition can change to '{now_label}' once they end (Weft does not move running containers between partitions)",
                    self.label(*p)
                )));
            }
        }
        Ok(())
    }

    /// A refresh may not take a partition away from a queue that has apps in it.
    fn check_access(&self, config: &CapacitySchedulerConfig) -> Result<(), SchedError> {
        for (label, e) in &self.labeled {
            for a in e.apps.values() {
                let path = &e.queues.get(a.queue).name;
                let can = config
                    .capacity
                    .queue(path)
                    .is_none_or(|q| q.labels.accessible.can_access(label));
                if !can {
                    return Err(SchedError::ConfigRefused(format!(
                        "queue {path} has applications in partition {label}: it must keep {label} in its accessible-node-labels until they finish"
                    )));
                }
            }
        }
        Ok(())
    }

    /// Moves each node whose label changed to its new partition's engine (checked empty).
    fn move_relabeled_nodes(&mut self, now: Time) -> Result<(), SchedError> {
        let moves: Vec<(NodeId, usize, usize)> = self
            .node_partition
            .iter()
            .filter_map(|(id, p)| {
                let n = self.engine(*p).nodes.get(id)?;
                let label = self.file.capacity.partitions.label_of(&n.host, n.port);
                let to = self.partition_named(label).unwrap_or(0);
                (to != *p).then_some((*id, *p, to))
            })
            .collect();
        for (node, from, to) in moves {
            let Some(n) = self.engine(from).nodes.get(&node) else {
                continue;
            };
            let added = Event::NodeAdded {
                node,
                host: n.host.clone(),
                port: n.port,
                rack: n.rack.clone(),
                capability: outward(n.capability),
            };
            self.engine_mut(from)
                .handle(now, Event::NodeRemoved { node })?;
            self.engine_mut(to).handle(now, added)?;
            self.node_partition.insert(node, to);
        }
        Ok(())
    }

    // Queries.

    pub(crate) fn set_walk_mode(&mut self, mode: WalkMode) {
        for e in self.engines_mut() {
            e.set_walk_mode(mode);
        }
    }

    pub(crate) fn queue_name(&self, app: AppId) -> Option<&str> {
        self.engine(self.app_engine(app)).queue_name(app)
    }

    pub(crate) fn poll_timeout(&self) -> Option<Time> {
        self.engines().filter_map(|e| e.poll_timeout()).min()
    }

    pub(crate) fn allocation_count(&self) -> u64 {
        self.engines().map(|e| e.allocations).sum()
    }

    pub(crate) fn cluster_capacity(&self) -> Resource {
        self.engines()
            .fold(Resource::ZERO, |s, e| s.saturating_add(e.cluster))
    }

    pub(crate) fn cluster_used_now(&self) -> Resource {
        self.engines()
            .fold(Resource::ZERO, |s, e| s.saturating_add(e.cluster_used))
    }

    pub(crate) fn queues_visited_total(&self) -> u64 {
        self.engines().map(|e| e.queues_visited).sum()
    }

    pub(crate) fn walks_total(&self) -> u64 {
        self.engines().map(|e| e.walks).sum()
    }

    pub(crate) fn top_level_reachable_total(&self) -> u64 {
        self.engines().map(|e| e.top_level_reachable).sum()
    }

    pub(crate) fn widest_walk_of_last_heartbeat(&self) -> u64 {
        self.engine(self.last_heartbeat).last_heartbeat_widest_walk
    }

    pub(crate) fn next_container_id(&self) -> ContainerId {
        ContainerId(self.engines().map(|e| e.next_container).max().unwrap_or(0))
    }

    pub(crate) fn app_usage(&self, app: AppId) -> Option<(Resource, usize)> {
        let a = self.engine(self.app_engine(app)).apps.get(&app)?;
        Some((a.usage, a.running.len()))
    }

    pub(crate) fn node_allocated(&self, node: NodeId) -> Option<Resource> {
        self.engine(self.node_engine(node))
            .nodes
            .get(&node)
            .map(|n| n.allocated)
    }

    /// Each partition's nodes, capacity, usage and pending demand, DEFAULT first then by
    /// label (the resource pools' figures, since a label is an exclusive partition).
    pub(crate) fn pool_stats(&self) -> Vec<PoolStats> {
        (0..=self.labeled.len())
            .map(|p| {
                let e = self.engine(p);
                let mut pending = Resource::ZERO;
                for a in e.apps.values() {
                    pending = pending.saturating_add(a.outstanding());
                }
                PoolStats {
                    name: self.label(p).to_string(),
                    nodes: e.nodes.len() as u32,
                    capacity: outward(e.cluster),
                    used: outward(e.cluster_used),
                    pending: outward(pending),
                    foreign_used: outward(Resource::ZERO),
                }
            })
            .collect()
    }

    pub(crate) fn node_pool_name(&self, node: NodeId) -> Option<&str> {
        let p = *self.node_partition.get(&node)?;
        Some(self.label(p))
    }

    /// Every leaf once, with its figures in the partition its apps go to by default (its
    /// `default-node-label-expression`), `pool` naming that partition.
    pub(crate) fn visit_leaf_queues(&self, mut visit: impl FnMut(LeafQueueStats<'_>)) {
        let default_of = |name: &str| -> usize {
            self.file
                .capacity
                .queue(name)
                .and_then(|q| self.partition_named(q.labels.default_partition()))
                .unwrap_or(0)
        };
        self.default.visit_leaf_queues(|stats| {
            if default_of(stats.name) == 0 {
                visit(stats);
            }
        });
        for (i, (label, e)) in self.labeled.iter().enumerate() {
            e.visit_leaf_queues(|stats| {
                if default_of(stats.name) == i + 1 {
                    visit(LeafQueueStats {
                        pool: label,
                        ..stats
                    });
                }
            });
        }
    }

    pub(crate) fn update_shares(&mut self, now: Time) {
        for e in self.engines_mut() {
            e.update_shares(now);
        }
        self.settle();
    }

    /// DEFAULT's picture with every partition's apps, nodes and usage added (a queue's usage,
    /// demand, AM usage and app counts are its sums over the partitions).
    pub(crate) fn snapshot(&mut self) -> Snapshot {
        self.merged_snapshot(CapacityEngine::snapshot)
    }

    /// [`Partitioned::snapshot`] without the per-app and per-node lists.
    pub(crate) fn queue_snapshot(&mut self) -> Snapshot {
        self.merged_snapshot(CapacityEngine::queue_snapshot)
    }

    /// Every partition's pending asks and reservations, summed.
    pub(crate) fn pending_summary(&self) -> PendingSummary {
        self.engines().map(CapacityEngine::pending_summary).fold(
            PendingSummary::default(),
            |acc, s| PendingSummary {
                pending: acc.pending.saturating_add(s.pending),
                pending_containers: acc.pending_containers + s.pending_containers,
                reserved_nodes: acc.reserved_nodes + s.reserved_nodes,
                reserved: acc.reserved.saturating_add(s.reserved),
            },
        )
    }

    fn merged_snapshot(&mut self, take: fn(&mut CapacityEngine) -> Snapshot) -> Snapshot {
        let mut out = take(&mut self.default);
        for (_, e) in &mut self.labeled {
            let s = take(e);
            out.cluster_capacity = out.cluster_capacity.saturating_add(s.cluster_capacity);
            out.cluster_used = out.cluster_used.saturating_add(s.cluster_used);
            out.cluster_pending = out.cluster_pending.saturating_add(s.cluster_pending);
            for q in s.queues {
                if let Some(mine) = out.queues.iter_mut().find(|m| m.name == q.name) {
                    mine.usage = mine.usage.saturating_add(q.usage);
                    mine.demand = mine.demand.saturating_add(q.demand);
                    mine.am_usage = mine.am_usage.saturating_add(q.am_usage);
                    mine.running_apps += q.running_apps;
                    mine.pending_apps += q.pending_apps;
                    mine.preempted_containers += q.preempted_containers;
                }
            }
            out.apps.extend(s.apps);
            out.nodes.extend(s.nodes);
        }
        out.apps.sort_by_key(|a| a.app);
        out.nodes.sort_by_key(|n| n.node);
        self.settle();
        out
    }

    pub(crate) fn rebuild_derived(&mut self) {
        for e in self.engines_mut() {
            e.rebuild_derived();
        }
        self.settle();
    }

    /// DEFAULT's figures per queue, each with its figures in every label it can access.
    pub(crate) fn capacity_details(&self) -> Vec<CapacityQueueDetails> {
        let mut out = self.default.capacity_details();
        for (label, e) in &self.labeled {
            for d in e.capacity_details() {
                let can = self
                    .file
                    .capacity
                    .queue(&d.name)
                    .is_none_or(|q| q.labels.accessible.can_access(label));
                if let (true, Some(mine)) = (can, out.iter_mut().find(|m| m.name == d.name)) {
                    mine.by_partition.push((label.clone(), d));
                }
            }
        }
        out
    }

    pub(crate) fn verify(&self) -> Vec<String> {
        let mut drift = self.default.verify();
        for (label, e) in &self.labeled {
            drift.extend(
                e.verify()
                    .into_iter()
                    .map(|d| format!("partition {label}: {d}")),
            );
        }
        self.verify_routing(&mut drift);
        drift
    }

    /// [`Partitions::verify`] in slices: each partition's engine's round in turn (part 0 the
    /// default partition, then each labeled one), then the apps' routing in a slice of its
    /// own. True when the round is done.
    pub(crate) fn verify_slice(
        &self,
        cursor: &mut crate::api::VerifyCursor,
        budget: usize,
        drift: &mut Vec<String>,
    ) -> bool {
        let part = cursor.part as usize;
        if part > self.labeled.len() {
            self.verify_routing(drift);
            return true;
        }
        let from = drift.len();
        let engine_done = self.engine(part).verify_slice(cursor, budget, drift);
        if part > 0 {
            for d in &mut drift[from..] {
                *d = format!("partition {}: {d}", self.label(part));
            }
        }
        if engine_done {
            *cursor = crate::api::VerifyCursor {
                part: cursor.part + 1,
                phase: 0,
                slot: 0,
            };
        }
        false
    }

    /// Every app routed to a partition is held by that partition's engine.
    fn verify_routing(&self, drift: &mut Vec<String>) {
        for (app, p) in &self.app_partition {
            if !self.engine(*p).apps.contains_key(app) {
                drift.push(format!(
                    "{app} is routed to partition '{}', which does not hold it",
                    self.label(*p)
                ));
            }
        }
    }

    pub(crate) fn app_headroom(&self, app: AppId) -> Option<Resource> {
        self.engine(self.app_engine(app)).app_headroom(app)
    }

    pub(crate) fn app_max_container_allocation(&self, app: AppId) -> Option<Resource> {
        self.engine(self.app_engine(app))
            .app_max_container_allocation(app)
    }

    pub(crate) fn app_preemption_contract(&self, app: AppId) -> Vec<ContainerId> {
        self.engine(self.app_engine(app))
            .app_preemption_contract(app)
    }

    pub(crate) fn gang_holds(&self) -> Vec<GangHold> {
        self.engines().flat_map(|e| e.gang_holds()).collect()
    }

    pub(crate) fn gang_unpackable(
        &self,
        app: AppId,
        resources: Resource,
        members: u32,
    ) -> Option<String> {
        self.engine(self.app_engine(app))
            .gang_unpackable(app, resources, members)
    }

    pub(crate) fn waiting_reason(&self, app: AppId) -> Option<String> {
        self.engine(self.app_engine(app)).waiting_reason(app)
    }

    /// The partition an app runs in (`""`: DEFAULT), `None` for an unknown app.
    pub(crate) fn app_partition_name(&self, app: AppId) -> Option<&str> {
        let p = *self.app_partition.get(&app)?;
        Some(self.label(p))
    }
}

/// The app an app-scoped event names.
fn app_of(event: &Event) -> Option<AppId> {
    match event {
        Event::AppFinished { app }
        | Event::AppKilled { app, .. }
        | Event::Ask { app, .. }
        | Event::CancelAsks { app, .. }
        | Event::Release { app, .. }
        | Event::BlacklistUpdated { app, .. }
        | Event::AttemptRestarted { app, .. }
        | Event::GangAsk { app, .. }
        | Event::GangCancelled { app, .. }
        | Event::GangExpired { app, .. }
        | Event::AppPriorityChanged { app, .. } => Some(*app),
        _ => None,
    }
}
