//! Containers marked for preemption (preemption spec A.7, A.8, B.4, B.6, §C), shared by both
//! Fair strategies (`fair/preemption`) and the Capacity Scheduler's preemption policy
//! (`capacity/preempt`): the app's tracked set in marking order and its total (Hadoop's
//! `resourcesToBePreempted`), the node's marked set, the warning and the kill. Any rules type
//! whose state holds a [`Marks`] ([`HoldsMarks`]) gets the warning, the kill and the strict
//! contract from here.
//!
//! A mark lives exactly as long as its container: whatever ends the container (release,
//! completion, its app or node leaving, the kill itself) drops the mark through
//! `Rules::container_ended`, so no stale mark survives.

use std::collections::{BTreeMap, BTreeSet};

use crate::lanes::outward;
use crate::lanes::Resource;
use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::api::{ContainerExit, Decision};
use crate::engine::Engine;
use crate::objects::node::Container;
use crate::rules::Rules;

/// Rules whose state keeps preemption marks.
pub(crate) trait HoldsMarks {
    fn marks(&self) -> &Marks;
    fn marks_mut(&mut self) -> &mut Marks;
}

/// One container marked for preemption.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Mark {
    pub(crate) app: AppId,
    pub(crate) node: NodeId,
    pub(crate) size: Resource,
    /// When it was marked (the warning).
    pub(crate) at: Time,
}

/// An app's containers marked for preemption.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct AppMarks {
    /// In marking order (the order of the AM's strict contract).
    pub(crate) containers: Vec<ContainerId>,
    /// Their total size (Hadoop's `resourcesToBePreempted`).
    pub(crate) total: Resource,
}

/// Every mark, by container, app and node.
#[derive(Clone, Debug, Default)]
pub(crate) struct Marks {
    pub(crate) by_container: BTreeMap<ContainerId, Mark>,
    pub(crate) by_app: BTreeMap<AppId, AppMarks>,
    pub(crate) by_node: BTreeMap<NodeId, BTreeSet<ContainerId>>,
}

impl Marks {
    fn insert(&mut self, id: ContainerId, mark: Mark) {
        let app = self.by_app.entry(mark.app).or_default();
        app.containers.push(id);
        app.total = app.total.saturating_add(mark.size);
        self.by_node.entry(mark.node).or_default().insert(id);
        self.by_container.insert(id, mark);
    }

    /// Drops the mark of `id`, if any.
    fn remove(&mut self, id: ContainerId) -> Option<Mark> {
        let mark = self.by_container.remove(&id)?;
        if let Some(app) = self.by_app.get_mut(&mark.app) {
            app.containers.retain(|c| *c != id);
            app.total = app.total.saturating_sub(mark.size);
            if app.containers.is_empty() {
                self.by_app.remove(&mark.app);
            }
        }
        if let Some(node) = self.by_node.get_mut(&mark.node) {
            node.remove(&id);
            if node.is_empty() {
                self.by_node.remove(&mark.node);
            }
        }
        Some(mark)
    }
}

/// A live container as preemption needs it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LiveContainer {
    pub(crate) app: AppId,
    pub(crate) node: NodeId,
    pub(crate) size: Resource,
    pub(crate) am: bool,
    /// On a node outside its app's resource pool (left there by a host move): a preferred
    /// victim that the fair-share guard does not protect (resource-pools spec §9).
    pub(crate) foreign: bool,
}

impl<R: Rules + HoldsMarks> Engine<R> {
    /// The container's app, node, size and whether it is its app's AM, if it is live.
    pub(crate) fn live_container(&self, id: ContainerId) -> Option<LiveContainer> {
        let c = self.containers.get(&id)?;
        let app = self.apps.at(c.app_slot)?;
        let node = self.nodes.at(c.node_slot)?;
        Some(LiveContainer {
            app: app.id,
            node: node.id,
            size: c.size,
            am: app.am_container == Some(id),
            foreign: c.foreign,
        })
    }

    /// Marks a live container for preemption at `now` and emits `Decision::PreemptWarning`
    /// (targeted: `for_app` is the starved app, `kill_at` when its batch is killed; global:
    /// both `None`). False, and nothing changes, if it is not live or already marked.
    pub(crate) fn mark_for_preemption(
        &mut self,
        id: ContainerId,
        now: Time,
        for_app: Option<AppId>,
        kill_at: Option<Time>,
    ) -> bool {
        let Some(c) = self.live_container(id) else {
            return false;
        };
        let marks = self.rules.marks_mut();
        if marks.by_container.contains_key(&id) {
            return false;
        }
        marks.insert(
            id,
            Mark {
                app: c.app,
                node: c.node,
                size: c.size,
                at: now,
            },
        );
        self.decisions.push_back(Decision::PreemptWarning {
            app: c.app,
            container: id,
            node: c.node,
            for_app,
            kill_at,
        });
        true
    }

    /// Kills a live container for preemption: `Decision::Preempted`, then the ordinary
    /// completion (`Decision::Completed { exit: Preempted }`: usage of the app, its queue path,
    /// the node and the cluster drop, the mark goes). `None`, and nothing happens, for a
    /// container already ended. A live container need not be marked first.
    pub(crate) fn kill_preempted(
        &mut self,
        id: ContainerId,
        for_queue: &str,
    ) -> Option<LiveContainer> {
        let c = self.live_container(id)?;
        self.decisions.push_back(Decision::Preempted {
            app: c.app,
            container: id,
            node: c.node,
            resources: outward(c.size),
            am: c.am,
            for_queue: for_queue.to_string(),
        });
        self.complete_container(id, ContainerExit::Preempted, None);
        Some(c)
    }

    /// `Rules::container_ended`: the ended container's mark goes (one test when none is set).
    #[inline]
    pub(crate) fn unmark_ended(&mut self, c: &Container) {
        if self.rules.marks().by_container.is_empty() {
            return;
        }
        self.unmark(c.id);
    }

    /// Drops the mark of a container, if it has one (kept out of the completion's inlined
    /// code).
    #[inline(never)]
    fn unmark(&mut self, id: ContainerId) {
        self.rules.marks_mut().remove(id);
    }

    /// Whether the container is marked for preemption.
    pub(crate) fn is_marked(&self, id: ContainerId) -> bool {
        self.rules.marks().by_container.contains_key(&id)
    }

    /// The mark of a container, if it has one.
    // For the global strategy (Part B), built on this layer next.
    #[allow(dead_code)]
    pub(crate) fn mark_of(&self, id: ContainerId) -> Option<&Mark> {
        self.rules.marks().by_container.get(&id)
    }

    /// The app's marked containers in marking order (empty if none).
    pub(crate) fn marked_of_app(&self, app: AppId) -> &[ContainerId] {
        self.rules
            .marks()
            .by_app
            .get(&app)
            .map_or(&[], |m| m.containers.as_slice())
    }

    /// The total size of the app's marked containers (Hadoop's `resourcesToBePreempted`).
    pub(crate) fn marked_total_of_app(&self, app: AppId) -> Resource {
        self.rules
            .marks()
            .by_app
            .get(&app)
            .map_or(Resource::ZERO, |m| m.total)
    }

    /// The containers marked on a node.
    pub(crate) fn marked_on_node(&self, node: NodeId) -> Option<&BTreeSet<ContainerId>> {
        self.rules.marks().by_node.get(&node)
    }

    /// The app's usage less what is marked for preemption: what it keeps once every mark is
    /// killed.
    // For the global strategy (Part B), built on this layer next.
    #[allow(dead_code)]
    pub(crate) fn net_usage_of_app(&self, app: AppId) -> Resource {
        self.apps.get(&app).map_or(Resource::ZERO, |a| {
            a.usage.saturating_sub(self.marked_total_of_app(app))
        })
    }

    /// Marks that disagree with the objects, in words (for `verify`).
    pub(crate) fn verify_marks(&self, drift: &mut Vec<String>) {
        let marks = self.rules.marks();
        let mut by_app: BTreeMap<AppId, (usize, Resource)> = BTreeMap::new();
        let mut by_node: BTreeMap<NodeId, usize> = BTreeMap::new();
        for (id, mark) in &marks.by_container {
            match self.live_container(*id) {
                None => drift.push(format!("container {id} is marked but not live")),
                Some(c) if (c.app, c.node, c.size) != (mark.app, mark.node, mark.size) => {
                    drift.push(format!(
                        "container {id}: marked as {:?} on {:?} ({:?}), lives as {:?} on {:?} ({:?})",
                        mark.app, mark.node, mark.size, c.app, c.node, c.size
                    ));
                }
                Some(_) => {}
            }
            let e = by_app.entry(mark.app).or_insert((0, Resource::ZERO));
            e.0 += 1;
            e.1 = e.1.saturating_add(mark.size);
            *by_node.entry(mark.node).or_insert(0) += 1;
        }
        for (app, m) in &marks.by_app {
            let want = by_app.get(app).copied().unwrap_or((0, Resource::ZERO));
            if (m.containers.len(), m.total) != want {
                drift.push(format!(
                    "app {app}: {} marked totalling {:?}, recomputed {} totalling {:?}",
                    m.containers.len(),
                    m.total,
                    want.0,
                    want.1
                ));
            }
        }
        if marks.by_app.len() != by_app.len() {
            drift.push(format!(
                "{} apps hold marks, recomputed {}",
                marks.by_app.len(),
                by_app.len()
            ));
        }
        let nodes: BTreeMap<NodeId, usize> =
            marks.by_node.iter().map(|(n, s)| (*n, s.len())).collect();
        if nodes != by_node {
            drift.push(format!("marked per node {nodes:?}, recomputed {by_node:?}"));
        }
    }
}
