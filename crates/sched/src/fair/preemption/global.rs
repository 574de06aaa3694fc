//! The global preemption strategy (`weft.scheduler.fair.preemption.strategy = global`): Hadoop
//! 2.7's algorithm, preemption spec Part B. One deficit for the whole cluster, the sum of each
//! leaf's; victims taken one container at a time by walking down from the root towards whatever
//! the 2.x comparators rank last, on usage net of what this round already took; a container is
//! warned in one round and killed in a later one.
//!
//! This file holds the strategy's own state and rules: the 2.7 queue timers (B.1, B.2), the
//! deficits (B.3), the round's model and walk (B.4 steps 2-3, B.5, B.8) and the warned list
//! (B.4 step 1, B.6). Marking and killing a container go through the shared preemption layer
//! (`marks.rs`). Called from the update: [`before_shares`] at its start, [`preemption_round`]
//! at its end.
//!
//! Where seed 001 (the walk-through of this algorithm) and Hadoop 2.7's code disagree, this
//! follows the code (spec B.9): inside an app the NEWEST container of the least important
//! priority goes first; warned containers are re-checked only while the deficit lasts (the rest
//! leave the list); a parent descends into the child its comparator ranks last, and a child
//! that yields nothing ends the round; a leaf is owed up to min(fair share, demand); every
//! amount and loop is memory-only (2.7, not 2.8); the clocks are refreshed before the shares.
//! Not in Hadoop 2.7 (Weft honours them in both strategies, spec B.8): `allowPreemptionFrom`
//! and the AM-preemption switches.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::lanes::Resource;
use weft_config::PolicyKind;
use weft_types::{AppId, ContainerId, NodeId, Time, VCORES};

use crate::fair::policy::{self, usage_over_fair_share, PolicyContext, SchedView};
use crate::fair::starvation::PreemptionSettings;
use crate::fair::FairEngine;
use crate::objects::containers::Owner;
use crate::queues::{QueueId, ROOT};

/// B.1 step 1, at the START of the update (before demand and fair shares): every leaf's clocks.
pub(crate) fn before_shares(e: &mut FairEngine, now: Time) {
    e.refresh_global_timers(now);
}

/// B.1 step 3, at the END of the update: a preemption check when the utilization gate is open
/// and `preemptionInterval` has passed since the last one (the first check runs at once);
/// it runs a round (B.4) when the leaves are owed some memory.
pub(crate) fn preemption_round(e: &mut FairEngine, now: Time) {
    let gates = e.preemption_gates();
    if !gates.contains(&true) {
        return;
    }
    let interval = e.rules.config.properties.preemption_interval_ms;
    if !e.rules.preemption.global.interval_passed(now, interval) {
        return;
    }
    e.rules.preemption.global.last_check = Some(now);
    let deficits = e.global_deficits(now);
    // With resource pools, one round per pool whose gate is open (resource-pools spec §9),
    // in pool order, on its own leaves' deficits, queues and nodes; without, one round.
    let scopes: Vec<Option<u16>> = match &e.pools {
        None => vec![None],
        Some(_) => (0..gates.len())
            .filter(|i| gates[*i])
            .map(|i| Some(i as u16))
            .collect(),
    };
    for scope in scopes {
        let in_scope: Vec<(QueueId, Resource)> = deficits
            .iter()
            .filter(|(q, _)| scope.is_none_or(|p| e.queues.get(*q).pool == p))
            .copied()
            .collect();
        let to_preempt = in_scope
            .iter()
            .fold(Resource::ZERO, |sum, (_, d)| sum.saturating_add(*d));
        if to_preempt.memory_mb() <= 0 {
            continue;
        }
        let named: Vec<(&str, Resource)> = in_scope
            .iter()
            .map(|(q, d)| (e.queues.get(*q).name.as_str(), *d))
            .collect();
        let for_queue = neediest_leaf(named).unwrap_or_default().to_string();
        e.global_round(to_preempt, &for_queue, now, scope);
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests;

/// A leaf's 2.7 starvation clocks (Hadoop 2.7's `FSLeafQueue.lastTimeAtMinShare` and
/// `lastTimeAtFairShareThreshold`): the last update at which the leaf was not starved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LeafTimers {
    pub(crate) at_min_share: Time,
    pub(crate) at_fair_share_threshold: Time,
}

/// What the timers and the deficit read of one leaf.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct LeafFigures {
    pub(crate) usage: Resource,
    pub(crate) demand: Resource,
    pub(crate) min_share: Resource,
    pub(crate) fair_share: Resource,
}

/// Hadoop's `Resources.min` under the memory calculator: the whole vector whose memory is
/// smaller, `a` on ties.
pub(crate) fn min_by_memory(a: Resource, b: Resource) -> Resource {
    if a.memory_mb() <= b.memory_mb() {
        a
    } else {
        b
    }
}

/// Hadoop's `Resources.max` under the memory calculator: the whole vector whose memory is
/// larger, `a` on ties.
pub(crate) fn max_by_memory(a: Resource, b: Resource) -> Resource {
    if a.memory_mb() >= b.memory_mb() {
        a
    } else {
        b
    }
}

/// `now - since > timeout` on signed milliseconds. `i64::MAX` is "never": Java's `long`
/// difference can never exceed it, where a `u64` time could.
fn expired(now: Time, since: Time, timeout_ms: i64) -> bool {
    timeout_ms != i64::MAX
        && i128::from(now.as_millis()) - i128::from(since.as_millis()) > i128::from(timeout_ms)
}

impl LeafTimers {
    /// Clocks of a leaf first seen at `now` (Hadoop starts them at the queue's creation).
    pub(crate) fn started(now: Time) -> LeafTimers {
        LeafTimers {
            at_min_share: now,
            at_fair_share_threshold: now,
        }
    }

    /// B.2: each clock moves to `now` unless the leaf is starved for that share (memory
    /// calculator whatever the policy, as 2.7's scheduler-wide calculator). Fair-share
    /// starvation is against `threshold x fairShare` (truncated); the deficit asks for the full
    /// share.
    pub(crate) fn refresh(&mut self, f: &LeafFigures, threshold: f32, now: Time) {
        let below =
            |share: Resource| f.usage.memory_mb() < min_by_memory(share, f.demand).memory_mb();
        if !below(f.min_share) {
            self.at_min_share = now;
        }
        if !below(f.fair_share.mul_trunc(f64::from(threshold))) {
            self.at_fair_share_threshold = now;
        }
    }
}

/// B.3, Hadoop 2.7's `resToPreempt`: what the leaf is owed once a timeout has passed (STRICT
/// `>`), the larger by memory of the min-share and the fair-share deficits. Only memory decides;
/// the vector's vcores are whatever the whole-vector choices carried.
pub(crate) fn leaf_deficit(
    f: &LeafFigures,
    timers: &LeafTimers,
    settings: &PreemptionSettings,
    now: Time,
) -> Resource {
    let owed = |share: Resource| {
        max_by_memory(
            Resource::ZERO,
            min_by_memory(share, f.demand).saturating_sub(f.usage),
        )
    };
    let min = if expired(now, timers.at_min_share, settings.min_share_timeout_ms) {
        owed(f.min_share)
    } else {
        Resource::ZERO
    };
    let fair = if expired(
        now,
        timers.at_fair_share_threshold,
        settings.fair_share_timeout_ms,
    ) {
        owed(f.fair_share)
    } else {
        Resource::ZERO
    };
    max_by_memory(min, fair)
}

/// Part E's `for_queue` of a round: the leaf with the largest deficit (memory, then vcores;
/// the first in queue order on a tie). `None` when no leaf is owed memory.
pub(crate) fn neediest_leaf<'a, I>(deficits: I) -> Option<&'a str>
where
    I: IntoIterator<Item = (&'a str, Resource)>,
{
    let mut best: Option<(&str, Resource)> = None;
    for (name, d) in deficits {
        if d.memory_mb() <= 0 {
            continue;
        }
        let larger = best
            .is_none_or(|(_, b)| (d.memory_mb(), d.get(VCORES)) > (b.memory_mb(), b.get(VCORES)));
        if larger {
            best = Some((name, d));
        }
    }
    best.map(|(name, _)| name)
}

/// A container the walk may choose: live, not warned, and not excluded by the AM switch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    pub(crate) id: ContainerId,
    pub(crate) app: AppId,
    pub(crate) node: NodeId,
    pub(crate) size: Resource,
    /// The priority of the request it satisfied (a larger number is less important).
    pub(crate) priority: i32,
    pub(crate) am: bool,
}

/// 2.7's `RMContainerComparator`: `Less` means `a` goes first. A larger priority NUMBER first
/// (2.x `Priority.compareTo` is `other - this`), then the larger container id (the newest).
pub(crate) fn victim_order(a: &Candidate, b: &Candidate) -> Ordering {
    b.priority.cmp(&a.priority).then_with(|| b.id.cmp(&a.id))
}

/// The 2.x comparators (B.5): `Less` means `a` is served first, so the walk takes the
/// GREATEST. `fair` is spec §5.1 without "zero demand sorts last" (2.x had no such rule) and
/// with a zero weight reading as an infinite usage/weight; `drf` and `fifo` are the current ones.
pub(crate) fn compare_2x(
    policy: PolicyKind,
    a: &SchedView,
    b: &SchedView,
    ctx: &PolicyContext,
) -> Ordering {
    match policy {
        PolicyKind::Fair => compare_fair_2x(a, b)
            .then_with(|| a.start_time.cmp(&b.start_time))
            .then_with(|| a.tiebreak.cmp(&b.tiebreak)),
        PolicyKind::Drf | PolicyKind::Fifo => policy::compare(policy, a, b, ctx),
    }
}

/// Hadoop 2.7's `FairShareComparator` minus its start-time and name tie-breaks.
fn compare_fair_2x(a: &SchedView, b: &SchedView) -> Ordering {
    let effective_min = |v: &SchedView| min_by_memory(v.min_share, v.demand).memory_mb();
    let needy = |v: &SchedView| v.usage.memory_mb() < effective_min(v);
    match (needy(a), needy(b)) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (true, true) => {
            let ratio = |v: &SchedView| v.usage.memory_mb() as f64 / effective_min(v).max(1) as f64;
            ratio(a).total_cmp(&ratio(b))
        }
        (false, false) => {
            let ratio = |v: &SchedView| {
                if v.weight > 0.0 {
                    v.usage.memory_mb() as f64 / v.weight
                } else {
                    f64::INFINITY
                }
            };
            ratio(a).partial_cmp(&ratio(b)).unwrap_or(Ordering::Equal)
        }
    }
}

/// One queue of a round's model.
#[derive(Clone, Debug)]
pub(crate) struct RoundQueue {
    pub(crate) parent: Option<usize>,
    /// Children (parents) in queue order.
    pub(crate) children: Vec<usize>,
    /// Runnable apps (leaves), indexes into [`Round::apps`].
    pub(crate) apps: Vec<usize>,
    pub(crate) is_leaf: bool,
    /// The queue's own policy: it orders the queue's children or apps.
    pub(crate) policy: PolicyKind,
    /// The comparator's inputs, usage NET of what is marked (B.4).
    pub(crate) view: SchedView,
    pub(crate) fair_share: Resource,
    /// `allowPreemptionFrom` of the queue and every ancestor (B.8).
    pub(crate) preemptable: bool,
}

/// One runnable app of a round's model.
#[derive(Clone, Debug)]
pub(crate) struct RoundApp {
    pub(crate) id: AppId,
    pub(crate) leaf: usize,
    /// The comparator's inputs, usage NET of what is marked.
    pub(crate) view: SchedView,
}

/// The queue tree as one round's walk sees it (B.4 steps 2-3): every usage net of the
/// containers already marked, and less what the round marks as it goes.
#[derive(Clone, Debug)]
pub(crate) struct Round {
    /// Index 0 is the root.
    pub(crate) queues: Vec<RoundQueue>,
    pub(crate) apps: Vec<RoundApp>,
    pub(crate) ctx: PolicyContext,
    /// Each visited app's victims, best LAST (asked of the source once per app and round;
    /// what the round chooses is popped).
    victims: BTreeMap<AppId, Vec<Candidate>>,
}

impl Round {
    pub(crate) fn new(queues: Vec<RoundQueue>, apps: Vec<RoundApp>, ctx: PolicyContext) -> Round {
        Round {
            queues,
            apps,
            ctx,
            victims: BTreeMap::new(),
        }
    }

    /// B.4 step 3: walks until `to_preempt` has no memory left or the walk yields nothing, and
    /// returns the chosen containers in order. `candidates(app)` lists the app's live containers
    /// that are not marked and not excluded by the AM switch.
    pub(crate) fn select(
        &mut self,
        mut to_preempt: Resource,
        candidates: &mut dyn FnMut(AppId) -> Vec<Candidate>,
    ) -> Vec<Candidate> {
        let mut out = Vec::new();
        while to_preempt.memory_mb() > 0 {
            let Some(app) = self.walk(0, candidates) else {
                break;
            };
            let id = self.apps[app].id;
            let Some(c) = self.victims.get_mut(&id).and_then(Vec::pop) else {
                break;
            };
            self.charge(app, c.size);
            to_preempt = to_preempt.saturating_sub(c.size);
            out.push(c);
        }
        out
    }

    /// `preempted(app) += size`: the app's and every ancestor's net usage drop by it.
    fn charge(&mut self, app: usize, size: Resource) {
        let a = &mut self.apps[app];
        a.view.usage = a.view.usage.saturating_sub(size);
        let mut q = Some(a.leaf);
        while let Some(i) = q {
            let queue = &mut self.queues[i];
            queue.view.usage = queue.view.usage.saturating_sub(size);
            q = queue.parent;
        }
    }

    /// B.5: the largest preemptable child of a parent (the comparator's last; a child that
    /// yields nothing ends the walk, 2.7's quirk), a leaf's largest runnable app if the leaf is
    /// over its fair share under its parent's policy, if that app has a container left to
    /// choose (its first by [`victim_order`] is then the last of its `victims`).
    fn walk(
        &mut self,
        queue: usize,
        candidates: &mut dyn FnMut(AppId) -> Vec<Candidate>,
    ) -> Option<usize> {
        let q = &self.queues[queue];
        if !q.is_leaf {
            let child = self.largest(
                q.policy,
                q.children
                    .iter()
                    .copied()
                    .filter(|c| self.queues[*c].preemptable),
                |c| &self.queues[c].view,
            )?;
            return self.walk(child, candidates);
        }
        let parent_policy = q.parent.map_or(q.policy, |p| self.queues[p].policy);
        if !usage_over_fair_share(parent_policy, q.view.usage, q.fair_share) {
            return None;
        }
        let app = self.largest(q.policy, q.apps.iter().copied(), |a| &self.apps[a].view)?;
        let victims = self
            .victims
            .entry(self.apps[app].id)
            .or_insert_with_key(|id| {
                let mut v = candidates(*id);
                v.sort_by(|a, b| victim_order(b, a));
                v
            });
        (!victims.is_empty()).then_some(app)
    }

    /// The member the policy would serve last (the first seen on a full tie, as 2.7's strict
    /// `compare(x, candidate) > 0`).
    fn largest<'a>(
        &'a self,
        policy: PolicyKind,
        members: impl Iterator<Item = usize>,
        view: impl Fn(usize) -> &'a SchedView,
    ) -> Option<usize> {
        let mut best: Option<usize> = None;
        for m in members {
            let larger = best.is_none_or(|b| {
                compare_2x(policy, view(m), view(b), &self.ctx) == Ordering::Greater
            });
            if larger {
                best = Some(m);
            }
        }
        best
    }
}

/// B.6: a warned container dies once `warnTime + waitTimeBeforeKill < now` (STRICT).
fn warned_long_enough(warned_at: Time, wait_ms: i64, now: Time) -> bool {
    i128::from(warned_at.as_millis()) + i128::from(wait_ms) < i128::from(now.as_millis())
}

/// One entry of the cluster-wide warned list (B.4 step 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Warned {
    pub(crate) container: ContainerId,
    pub(crate) size: Resource,
    /// Part E's `for_queue`: the neediest leaf of the round that warned it.
    pub(crate) for_queue: String,
}

/// The global strategy's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct GlobalState {
    /// Each leaf's 2.7 clocks (queue ids are never reused).
    pub(crate) timers: BTreeMap<QueueId, LeafTimers>,
    /// The last preemption check (`None`: none yet, so the first that passes the gate runs).
    pub(crate) last_check: Option<Time>,
    /// Warned containers in warning order.
    pub(crate) warned: Vec<Warned>,
}

impl GlobalState {
    /// B.1 step 3's interval test: no check yet, or `now - last >= interval`.
    pub(crate) fn interval_passed(&self, now: Time, interval_ms: i64) -> bool {
        self.last_check.is_none_or(|last| {
            i128::from(now.as_millis()) - i128::from(last.as_millis()) >= i128::from(interval_ms)
        })
    }
}

impl FairEngine {
    /// Every leaf in queue order.
    pub(crate) fn leaves(&self) -> Vec<QueueId> {
        self.queues
            .ids()
            .filter(|id| self.queues.get(*id).is_leaf)
            .collect()
    }

    fn leaf_figures(&self, leaf: QueueId) -> LeafFigures {
        let q = self.queues.get(leaf);
        LeafFigures {
            usage: q.usage,
            demand: q.demand,
            min_share: q.rules.min_share,
            fair_share: q.rules_cold.fair_share,
        }
    }

    /// B.1 step 1: every leaf's clocks from the previous update's demand and shares and the
    /// current usage (run it BEFORE demand and shares are recomputed). A new leaf's clocks
    /// start now; clocks of leaves that are gone are dropped.
    pub(crate) fn refresh_global_timers(&mut self, now: Time) {
        let mut timers = std::mem::take(&mut self.rules.preemption.global.timers);
        let mut fresh = BTreeMap::new();
        for leaf in self.leaves() {
            let mut t = timers
                .remove(&leaf)
                .unwrap_or_else(|| LeafTimers::started(now));
            let threshold = self
                .queues
                .get(leaf)
                .rules_cold
                .preemption
                .fair_share_threshold;
            t.refresh(&self.leaf_figures(leaf), threshold, now);
            fresh.insert(leaf, t);
        }
        self.rules.preemption.global.timers = fresh;
    }

    /// B.3: each leaf's deficit, in queue order (leaves without clocks yet owe nothing).
    pub(crate) fn global_deficits(&self, now: Time) -> Vec<(QueueId, Resource)> {
        self.leaves()
            .into_iter()
            .map(|leaf| {
                let deficit =
                    self.rules
                        .preemption
                        .global
                        .timers
                        .get(&leaf)
                        .map_or(Resource::ZERO, |t| {
                            let settings = &self.queues.get(leaf).rules_cold.preemption;
                            leaf_deficit(&self.leaf_figures(leaf), t, settings, now)
                        });
                (leaf, deficit)
            })
            .collect()
    }

    /// B.4, one round with `to_preempt` (memory > 0) owed: the warned-list pass, then the
    /// selection loop on net usage; new warnings name `for_queue`. `scope` is a resource
    /// pool's round: only warned containers on its nodes are passed over, its foreign
    /// containers are warned first, and the walk sees its queues and nodes only.
    fn global_round(
        &mut self,
        mut to_preempt: Resource,
        for_queue: &str,
        now: Time,
        scope: Option<u16>,
    ) {
        // Step 1: the warned list in warning order. A live entry is charged against what is
        // owed whether it is killed or not; once nothing is owed, the rest are dropped from
        // the list (Hadoop's quirk: they stay marked, so reported to the AM and never chosen
        // again, but no later round kills them), as are entries whose container ended.
        let wait = self.rules.config.properties.wait_time_before_kill_ms;
        let warned = std::mem::take(&mut self.rules.preemption.global.warned);
        let mut kept = Vec::with_capacity(warned.len());
        for w in warned {
            if scope.is_some_and(|p| self.container_pool(w.container).is_some_and(|q| q != p)) {
                kept.push(w);
                continue;
            }
            if to_preempt.memory_mb() <= 0 || self.live_container(w.container).is_none() {
                continue;
            }
            to_preempt = to_preempt.saturating_sub(w.size);
            match self.mark_of(w.container).map(|m| m.at) {
                Some(at) if warned_long_enough(at, wait, now) => {
                    self.kill_for_preemption(w.container, &w.for_queue);
                }
                Some(_) => kept.push(w),
                // Its mark cannot have gone while it lives; warn it again if it did.
                None => {
                    self.mark_for_preemption(w.container, now, None, None);
                    kept.push(w);
                }
            }
        }
        // Steps 2-4: the walk on usage net of every mark (the model's `preempted(app)` starts
        // at the app's marked total and is dropped with the model, Hadoop's reset and clear).
        let mut chosen = Vec::new();
        if let Some(pool) = scope {
            for c in self.foreign_candidates(pool) {
                if to_preempt.memory_mb() <= 0 {
                    break;
                }
                to_preempt = to_preempt.saturating_sub(c.size);
                chosen.push(c);
            }
        }
        let mut round = self.global_model(&|app| self.marked_total_of_app(app), scope);
        chosen.extend(round.select(to_preempt, &mut |app| {
            self.global_candidates(app)
                .into_iter()
                .filter(|c| {
                    scope.is_none_or(|p| self.nodes.get(&c.node).map(|n| n.pool) == Some(p))
                })
                .collect()
        }));
        for c in chosen {
            if self.mark_for_preemption(c.id, now, None, None) {
                kept.push(Warned {
                    container: c.id,
                    size: c.size,
                    for_queue: for_queue.to_string(),
                });
            }
        }
        self.rules.preemption.global.warned = kept;
    }

    /// The app's containers the walk may choose (B.5, B.8): live, not marked, and not its AM
    /// container when AM preemption is off for it.
    fn global_candidates(&self, app: AppId) -> Vec<Candidate> {
        let Some(a) = self.apps.get(&app) else {
            return Vec::new();
        };
        let am_spared = a.am_container.is_some()
            && !self
                .rules
                .preemption
                .starvation
                .by_app
                .get(&app)
                .map_or_else(
                    || {
                        let queue = &self.queues.get(a.queue).name;
                        self.rules.config.properties.am_preemption_enabled(queue)
                    },
                    |s| s.am_preemption,
                );
        self.container_ids(a.running, Owner::App)
            .into_iter()
            .filter(|id| !self.is_marked(*id))
            .filter_map(|id| {
                let c = self.containers.get(&id)?;
                let node = self.nodes.at(c.node_slot)?.id;
                let am = a.am_container == Some(id);
                (!(am && am_spared)).then_some(Candidate {
                    id,
                    app,
                    node,
                    size: c.size,
                    priority: c.priority,
                    am,
                })
            })
            .collect()
    }

    /// The pool of the node a live container runs on.
    fn container_pool(&self, id: ContainerId) -> Option<u16> {
        let c = self.containers.get(&id)?;
        Some(self.nodes.at(c.node_slot)?.pool)
    }

    /// A pool's foreign containers that a round may warn (resource-pools spec §9: before the
    /// pool's own, whatever their app's share), not marked, from a preemptable leaf, not an
    /// AM its switch spares; in [`victim_order`].
    fn foreign_candidates(&self, pool: u16) -> Vec<Candidate> {
        let mut out = Vec::new();
        for node in self.nodes.values().filter(|n| n.pool == pool) {
            for id in self.container_ids(node.running, Owner::Node) {
                let Some(c) = self.containers.get(&id).filter(|c| c.foreign) else {
                    continue;
                };
                let Some(app) = self.apps.at(c.app_slot) else {
                    continue;
                };
                let preemptable = self.queues.get(app.queue).rules_cold.preemption.preemptable;
                if !preemptable || self.is_marked(id) {
                    continue;
                }
                let am = app.am_container == Some(id);
                if am && !self.am_preemption_of(app.id) {
                    continue;
                }
                out.push(Candidate {
                    id,
                    app: app.id,
                    node: node.id,
                    size: c.size,
                    priority: c.priority,
                    am,
                });
            }
        }
        out.sort_by(victim_order);
        out
    }

    /// The round's model: the tree from the root, runnable apps in their leaves, each usage
    /// net of `marked(app)` (the app's marked, live containers' total, B.4 step 2). A pool's
    /// round (`scope`) keeps root's children of that pool only, compared against its
    /// capacity.
    pub(crate) fn global_model(
        &self,
        marked: &dyn Fn(AppId) -> Resource,
        scope: Option<u16>,
    ) -> Round {
        let ctx = scope.map_or_else(|| self.policy_context(), |p| self.policy_context_of(p));
        let mut queues = Vec::new();
        let mut apps = Vec::new();
        let mut stack = vec![(ROOT, None)];
        while let Some((id, parent)) = stack.pop() {
            let q = self.queues.get(id);
            let index = queues.len();
            queues.push(RoundQueue {
                parent,
                children: Vec::new(),
                apps: Vec::new(),
                is_leaf: q.is_leaf,
                policy: q.rules.policy,
                view: FairEngine::queue_view(q, q.usage),
                fair_share: q.rules_cold.fair_share,
                preemptable: q.rules_cold.preemption.preemptable,
            });
            if let Some(p) = parent {
                queues[p].children.push(index);
            }
            if q.is_leaf {
                for app in q.runnable_apps.iter().filter_map(|a| self.apps.get(a)) {
                    let mut view = FairEngine::app_view(app);
                    view.usage = view.usage.saturating_sub(marked(app.id));
                    queues[index].apps.push(apps.len());
                    apps.push(RoundApp {
                        id: app.id,
                        leaf: index,
                        view,
                    });
                }
            }
            // Reversed so that children are visited, and numbered, in queue order.
            stack.extend(
                q.children
                    .iter()
                    .rev()
                    .filter(|c| id != ROOT || scope.is_none_or(|p| self.queues.get(**c).pool == p))
                    .map(|c| (*c, Some(index))),
            );
        }
        // Net usage: each queue's own usage less what is marked in its apps.
        for app in &apps {
            let taken = marked(app.id);
            let mut q = Some(app.leaf);
            while let Some(i) = q {
                queues[i].view.usage = queues[i].view.usage.saturating_sub(taken);
                q = queues[i].parent;
            }
        }
        Round::new(queues, apps, ctx)
    }
}
