//! Part A (targeted strategy, Hadoop 3.x's `FSPreemptionThread`): for each app the update
//! found starved, the requests to preempt for (A.5), for each container of them the node and
//! victims that make room for it (A.6), the warning, the earmark and the kill timer (A.7), and
//! the app's next starvation check (A.9).
//!
//! Hadoop walks requests and nodes in hash order; Weft fixes both: scheduler keys in order
//! (priority, then the order sizes appeared), within a key hosts then racks (by name) then
//! ANY; nodes by id (the order the simulator and the RM register them in).

use std::cmp::Ordering;

use crate::lanes::Resource;
use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::engine::WalkMode;
use crate::fair::policy::calculator_compare;
use crate::fair::preemption::marks::LiveContainer;
use crate::fair::preemption::KillBatch;
use crate::fair::{FairEngine, FairTimer};
use crate::objects::containers::Owner;

/// Where one request of the starved app may be placed (spec A.5's locality levels).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Place {
    Node(NodeId),
    Rack(String),
    Any,
}

/// A request to preempt for: `count` containers of `size` at `place`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Target {
    pub(crate) place: Place,
    pub(crate) size: Resource,
    pub(crate) count: u32,
    /// The level's relax-locality flag (a node or rack request that relaxes may look at
    /// every node for a set with fewer AM containers, spec A.6 step 3).
    pub(crate) relax_locality: bool,
}

/// The victims found for one container: all on one node.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Victims {
    pub(crate) node: NodeId,
    pub(crate) containers: Vec<ContainerId>,
    pub(crate) am_count: u32,
}

/// The targeted pass of the update: every app the update offered, least starved first.
pub(crate) fn preemption_round(e: &mut FairEngine, now: Time) {
    if e.rules.preemption.starved.is_empty() {
        return;
    }
    let mut apps: Vec<(AppId, Resource)> = e
        .rules
        .preemption
        .starved
        .iter()
        .map(|a| (*a, e.starvation_of(*a)))
        .collect();
    // Stable: equal starvations keep the order they were offered in (spec A.4).
    apps.sort_by(|x, y| compare_starvation(&x.1, &y.1));
    let nodes = nodes_by_pool(e);
    for (app, starvation) in apps {
        // Victims only on the starved app's pool's nodes (resource-pools spec §9): the app
        // can use no other.
        let pool = e.apps.get(&app).map_or(0, |a| e.queues.get(a.queue).pool);
        let Some(nodes) = nodes.get(usize::from(pool)) else {
            continue;
        };
        e.preempt_for_app(app, starvation, now, nodes);
    }
}

/// Every node by id, one list per resource pool (by pool index; without pools one list).
fn nodes_by_pool(e: &FairEngine) -> Vec<Vec<NodeId>> {
    let mut lists = vec![Vec::new(); e.pools.as_ref().map_or(1, |p| p.capacity.len())];
    for n in e.nodes.values() {
        if let Some(list) = lists.get_mut(usize::from(n.pool)) {
            list.push(n.id);
        }
    }
    for list in &mut lists {
        list.sort_unstable();
    }
    lists
}

/// Spec A.4's order: memory, then vcores, then the other types.
fn compare_starvation(a: &Resource, b: &Resource) -> Ordering {
    a.values().cmp(b.values())
}

impl FairEngine {
    /// The app's starvation (A.3: fair-share plus min-share), as last evaluated.
    pub(crate) fn starvation_of(&self, app: AppId) -> Resource {
        self.rules
            .preemption
            .starvation
            .by_app
            .get(&app)
            .map_or(Resource::ZERO, |s| {
                s.fair_share_starvation
                    .saturating_add(s.min_share_starvation)
            })
    }

    /// A.5-A.9 for one starved app.
    fn preempt_for_app(&mut self, app: AppId, starvation: Resource, now: Time, nodes: &[NodeId]) {
        let Some(leaf) = self.apps.get(&app).map(|a| a.queue) else {
            return;
        };
        let props = &self.rules.config.properties;
        let wait = props.wait_time_before_kill_ms.max(0) as u64;
        let allocation_delay = if props.continuous_scheduling_enabled {
            props.continuous_scheduling_sleep_ms.saturating_mul(10)
        } else {
            props.node_heartbeat_interval_ms.saturating_mul(4)
        };
        let recheck = props
            .wait_time_before_next_starvation_check_ms
            .saturating_add(allocation_delay)
            .max(0) as u64;
        let kill_at = Time(now.as_millis().saturating_add(wait));
        let mut batch = Vec::new();
        for target in self.targets_for(app, starvation) {
            let mut scan = NodeScan::new(self, &target, nodes);
            for _ in 0..target.count {
                let Some(victims) = self.victims_for(&target, nodes, &mut scan) else {
                    continue;
                };
                let mut earmarked = Resource::ZERO;
                for c in &victims.containers {
                    let size = self.live_container(*c).map(|l| l.size);
                    if self.mark_for_preemption(*c, now, Some(app), Some(kill_at)) {
                        batch.push(*c);
                        earmarked = earmarked.saturating_add(size.unwrap_or(Resource::ZERO));
                    }
                }
                self.rules
                    .preemption
                    .earmarks
                    .add(victims.node, app, earmarked);
            }
        }
        if !batch.is_empty() {
            let for_queue = self.queues.get(leaf).name.clone();
            self.timers.set(
                kill_at,
                FairTimer::Kill(KillBatch {
                    containers: batch,
                    for_queue,
                }),
            );
        }
        if let Some(state) = self.rules.preemption.starvation.by_app.get_mut(&app) {
            state.next_check = Time(now.as_millis().saturating_add(wait).saturating_add(recheck));
            if let Some(a) = self.apps.get_mut(&app) {
                a.rules.next_check_set = true;
            }
        }
    }

    /// Spec A.5: the app's requests to preempt for, with how many containers of each, until
    /// `starvation` is covered (counted in memory only, as Hadoop does).
    pub(crate) fn targets_for(&self, app: AppId, starvation: Resource) -> Vec<Target> {
        let Some(a) = self.apps.get(&app) else {
            return Vec::new();
        };
        // Places outside the app's pool can never take its containers: a host there counts
        // as unknown, a rack without nodes of the pool as absent (without pools every node
        // and rack is in pool 0).
        let pool = self.queues.get(a.queue).pool;
        let rack_in_pool = |rack: &String| match &self.pools {
            Some(p) => p.rack_nodes.contains_key(&(pool, rack.clone())),
            None => self.rack_sizes.contains_key(rack),
        };
        let mut pending = starvation;
        let mut out = Vec::new();
        for (_, req) in a.requests.iter() {
            // Hadoop's VisitedResourceRequestTracker for one (priority, size).
            let mut racks_with_nodes: Vec<&str> = Vec::new();
            let mut racks_visited: Vec<&str> = Vec::new();
            let mut levels: Vec<(Place, u32, bool)> = Vec::new();
            for (host, ask) in req.hosts() {
                let Some(node) = self
                    .hosts
                    .get(host)
                    .and_then(|n| self.nodes.get(n))
                    .filter(|n| n.pool == pool)
                else {
                    continue;
                };
                if ask.count == 0 || racks_visited.contains(&node.rack.as_str()) {
                    continue;
                }
                racks_with_nodes.push(node.rack.as_str());
                levels.push((Place::Node(node.id), ask.count, ask.relax_locality));
            }
            for (rack, ask) in req.racks() {
                if ask.count == 0
                    || !rack_in_pool(rack)
                    || racks_with_nodes.contains(&rack.as_str())
                {
                    continue;
                }
                racks_visited.push(rack.as_str());
                levels.push((Place::Rack(rack.clone()), ask.count, ask.relax_locality));
            }
            if racks_visited.is_empty() && racks_with_nodes.is_empty() && req.any.count > 0 {
                levels.push((Place::Any, req.any.count, req.any.relax_locality));
            }
            for (place, outstanding, relax_locality) in levels {
                if pending.is_zero() {
                    return out;
                }
                let fit = if req.size.memory_mb() == 0 {
                    i64::from(outstanding)
                } else {
                    pending.memory_mb().max(0) / req.size.memory_mb()
                };
                if fit <= 0 {
                    continue;
                }
                let count = fit.min(i64::from(outstanding)) as u32;
                out.push(Target {
                    place,
                    size: req.size,
                    count,
                    relax_locality,
                });
                pending = floor_zero(pending.saturating_sub(req.size.saturating_mul(count.into())));
            }
            if pending.is_zero() {
                break;
            }
        }
        out
    }

    /// Spec A.6 for one container of `target`: the node (in `nodes` order) whose victims
    /// include the fewest AM containers; `None` if no node works or the best needs nothing
    /// preempted. `scan` carries what the target's earlier containers learnt.
    fn victims_for(
        &self,
        target: &Target,
        nodes: &[NodeId],
        scan: &mut NodeScan,
    ) -> Option<Victims> {
        let mut best = match &target.place {
            Place::Any => self.best_node_resuming(target.size, nodes, scan),
            Place::Node(_) | Place::Rack(_) => self.best_node(target.size, &scan.local, 0).1,
        };
        let relaxes = target.place != Place::Any && target.relax_locality;
        if relaxes && best.as_ref().is_some_and(|b| b.am_count > 0) {
            best = self.best_node_resuming(target.size, nodes, scan);
        }
        best.filter(|b| !b.containers.is_empty())
    }

    /// `best_node` over every node, starting where the target's previous container found a
    /// node needing no AM container. The result is the full scan's: within one target the
    /// round only marks containers and earmarks room, so each node's set can only get harder
    /// to find (fewer candidates, victims closer to their fair share, less free room), and a
    /// node before that point, which had no AM-free set then, has none now. Without an AM-free
    /// node from there, the full scan decides (the fewest AM containers may be anywhere).
    fn best_node_resuming(
        &self,
        size: Resource,
        nodes: &[NodeId],
        scan: &mut NodeScan,
    ) -> Option<Victims> {
        // The reference walk always scans from the first node (the property tests compare).
        if scan.resume_at > 0 && self.walk == WalkMode::Fast {
            if let (at, Some(v)) = self.best_node(size, nodes, scan.resume_at) {
                if v.am_count == 0 {
                    scan.resume_at = at;
                    return Some(v);
                }
            }
        }
        let (at, best) = self.best_node(size, nodes, 0);
        if best.as_ref().is_some_and(|v| v.am_count == 0) {
            scan.resume_at = at;
        }
        best
    }

    /// The first node from `from` on whose set needs no AM container, else the one needing the
    /// fewest (the first of equals); with the index it stopped at.
    fn best_node(&self, size: Resource, nodes: &[NodeId], from: usize) -> (usize, Option<Victims>) {
        let mut best = None;
        let mut max_am = u32::MAX;
        for (at, node) in nodes.iter().enumerate().skip(from) {
            if let Some(v) = self.try_node(*node, size, max_am) {
                max_am = v.am_count;
                best = Some(v);
                if max_am == 0 {
                    return (at, best);
                }
            }
        }
        (nodes.len(), best)
    }

    /// Hadoop's `identifyContainersToPreemptOnNode`: the node's preemptable containers,
    /// foreign ones before the pool's own, each non-AM newest first then AM oldest first, taken until the request fits in the room
    /// they free plus the node's unallocated room (less its reservation and earmarks). The
    /// fit is tested after each container, so a node with room enough succeeds on its first
    /// container and an empty node never does (spec A.6).
    fn try_node(&self, node: NodeId, size: Resource, max_am: u32) -> Option<Victims> {
        let n = self.nodes.get(&node)?;
        let reserved = n.reservation.as_ref().map_or(Resource::ZERO, |r| r.size);
        let held = reserved.saturating_add(self.rules.preemption.earmarks.total_on(node));
        let mut potential = floor_zero(n.unallocated().saturating_sub(held));
        let ids = self.container_ids(n.running, Owner::Node);
        let marked = self.marked_on_node(node);
        let live: Vec<(ContainerId, LiveContainer)> = ids
            .into_iter()
            .filter(|c| marked.is_none_or(|m| !m.contains(c)))
            .filter_map(|c| self.live_container(c).map(|l| (c, l)))
            .collect();
        // Foreign containers first (resource-pools spec §9), then the pool's own; within
        // each, non-AM newest first, then AM oldest first.
        let order_of = |foreign: bool| {
            live.iter()
                .rev()
                .filter(move |(_, l)| l.foreign == foreign && !l.am)
                .chain(
                    live.iter()
                        .filter(move |(_, l)| l.foreign == foreign && l.am),
                )
        };
        let order = order_of(true).chain(order_of(false));
        let mut chosen = Victims {
            node,
            containers: Vec::new(),
            am_count: 0,
        };
        let mut chosen_by_app: Vec<(AppId, Resource)> = Vec::new();
        for (id, c) in order {
            let also = chosen_by_app
                .iter()
                .find(|(a, _)| *a == c.app)
                .map_or(Resource::ZERO, |(_, r)| *r);
            if self.can_be_preempted(*id, c, also) {
                if c.am {
                    chosen.am_count += 1;
                    if chosen.am_count >= max_am {
                        return None;
                    }
                }
                chosen.containers.push(*id);
                match chosen_by_app.iter_mut().find(|(a, _)| *a == c.app) {
                    Some((_, r)) => *r = r.saturating_add(c.size),
                    None => chosen_by_app.push((c.app, c.size)),
                }
                potential = potential.saturating_add(c.size);
            }
            if size.fits_in(&potential) {
                return Some(chosen);
            }
        }
        None
    }

    /// Hadoop's `canContainerBePreempted`: the app's leaf is preemptable, the container is not
    /// an AM its attempt protects, not already marked, and the app keeps at least its fair
    /// share (victim leaf's calculator, against its pool) without it, its marked containers and
    /// `also` (what this node's set already takes from it); a foreign container skips that
    /// last guard.
    pub(crate) fn can_be_preempted(
        &self,
        id: ContainerId,
        c: &LiveContainer,
        also: Resource,
    ) -> bool {
        let Some(app) = self.apps.get(&c.app) else {
            return false;
        };
        let leaf = self.queues.get(app.queue);
        if !leaf.rules_cold.preemption.preemptable {
            return false;
        }
        if c.am && !self.am_preemption_of(c.app) {
            return false;
        }
        if self.is_marked(id) {
            return false;
        }
        // A foreign container is not entitled to its place: no fair-share guard.
        if c.foreign {
            return true;
        }
        let after = app
            .usage
            .saturating_sub(self.marked_total_of_app(c.app))
            .saturating_sub(c.size)
            .saturating_sub(also);
        calculator_compare(
            leaf.rules.policy,
            after,
            app.rules.fair_share,
            &self.policy_context_of(leaf.pool),
            true,
        ) != Ordering::Less
    }

    /// Whether the app's attempt lets its AM container be preempted (spec 0.1).
    pub(crate) fn am_preemption_of(&self, app: AppId) -> bool {
        if let Some(s) = self.rules.preemption.starvation.by_app.get(&app) {
            return s.am_preemption;
        }
        self.apps.get(&app).is_none_or(|a| {
            let name = &self.queues.get(a.queue).name;
            self.rules.config.properties.am_preemption_enabled(name)
        })
    }
}

/// One target's scan state across its containers (spec A.6).
struct NodeScan {
    /// A node or rack target's own nodes, in `nodes` order (computed once per target).
    local: Vec<NodeId>,
    /// Where the last node needing no AM container was found in the full node list: no node
    /// before it can have such a set any more.
    resume_at: usize,
}

impl NodeScan {
    fn new(e: &FairEngine, target: &Target, nodes: &[NodeId]) -> NodeScan {
        let local = match &target.place {
            Place::Node(n) => vec![*n],
            Place::Rack(r) => nodes
                .iter()
                .copied()
                .filter(|n| e.nodes.get(n).is_some_and(|node| &node.rack == r))
                .collect(),
            Place::Any => Vec::new(),
        };
        NodeScan {
            local,
            resume_at: 0,
        }
    }
}

/// Every type floored at zero (Hadoop's `subtractFromNonNegative`): a room or a pending
/// amount is never negative.
fn floor_zero(r: Resource) -> Resource {
    r.clamp_non_negative()
}
