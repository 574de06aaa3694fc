//! Starvation (preemption spec §0.2, §0.3, A.1-A.3; Hadoop 3.x's `FSLeafQueue` /
//! `FSAppAttempt`): which apps have waited too long below their share of a leaf's fair share
//! or min share, and by how much. Computed at the end of the periodic update, only while
//! preemption is on and the cluster's utilization is above the threshold; it decides nothing
//! yet (the preemption strategies will read it), and snapshots show it.
//!
//! Starvation is evaluated only in the update, as in Hadoop, so a queue whose timeout expires
//! between two updates becomes starved at the next one: no timer is set for it (a timer
//! firing at the exact expiry would show a state Hadoop never computes).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::lanes::outward;
use crate::lanes::Resource;
use weft_config::{AllocationConfig, QueueConfig};
use weft_types::{AppId, Time, MEMORY, VCORES};

use crate::api::{AppStarvation, QueueStarvation};
use crate::fair::policy::{calculator_compare, PolicyContext};
use crate::fair::{Fair, FairEngine};
use crate::queues::QueueId;
use crate::rules::{AppOf, QueueOf, Rules};

/// A queue's preemption settings after Hadoop's defaults and inheritance (spec §0.2).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PreemptionSettings {
    /// `minSharePreemptionTimeout` in ms (`i64::MAX`: never).
    pub(crate) min_share_timeout_ms: i64,
    /// `fairSharePreemptionTimeout` in ms (`i64::MAX`: never).
    pub(crate) fair_share_timeout_ms: i64,
    /// `fairSharePreemptionThreshold`, in [0, 1].
    pub(crate) fair_share_threshold: f32,
    /// `allowPreemptionFrom` of the queue and every ancestor.
    pub(crate) preemptable: bool,
}

impl Default for PreemptionSettings {
    fn default() -> PreemptionSettings {
        PreemptionSettings::file_defaults(&AllocationConfig::default())
    }
}

impl PreemptionSettings {
    /// What root inherits: the file's `default*` elements.
    pub(crate) fn file_defaults(alloc: &AllocationConfig) -> PreemptionSettings {
        PreemptionSettings {
            min_share_timeout_ms: alloc.default_min_share_preemption_timeout_ms,
            fair_share_timeout_ms: alloc.default_fair_share_preemption_timeout_ms,
            fair_share_threshold: alloc.default_fair_share_preemption_threshold,
            preemptable: true,
        }
    }

    /// A queue's settings under a parent with these (effective) ones: its own values where
    /// set, else the parent's; preemptable only if the parent is (a non-preemptable parent
    /// makes its whole subtree non-preemptable whatever the children say).
    pub(crate) fn child(&self, own: &QueueConfig) -> PreemptionSettings {
        PreemptionSettings {
            min_share_timeout_ms: own
                .min_share_preemption_timeout_ms
                .unwrap_or(self.min_share_timeout_ms),
            fair_share_timeout_ms: own
                .fair_share_preemption_timeout_ms
                .unwrap_or(self.fair_share_timeout_ms),
            fair_share_threshold: own
                .fair_share_preemption_threshold
                .unwrap_or(self.fair_share_threshold),
            preemptable: self.preemptable && own.allow_preemption_from.unwrap_or(true),
        }
    }
}

/// A leaf's min-share starvation state (Hadoop's `FSLeafQueue.lastTimeAtMinShare` and what
/// `identifyStarvedApplications` computes).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LeafStarvation {
    /// Hadoop's `lastTimeAtMinShare`. Hadoop starts it at the queue's creation; queues here
    /// are created without a clock, so it starts at the first update that runs with
    /// preemption on after the queue appeared (at most one update interval late).
    pub(crate) at_min_share_since: Option<Time>,
    /// `min(minShare, demand) - usage` (plain subtraction: negative above the min share) once
    /// the timeout has passed, none before.
    pub(crate) min_share_starvation: Resource,
    /// The sum of its apps' fair-share starvation found in the same evaluation.
    pub(crate) fair_share_starvation: Resource,
}

/// An app's starvation state (Hadoop's `FSAppAttempt` fields of the same names).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AppStarvationState {
    /// `lastTimeAtFairShare`: starts at the app's start time.
    pub(crate) at_fair_share_since: Time,
    pub(crate) fair_share_starvation: Resource,
    pub(crate) min_share_starvation: Resource,
    /// The last update that offered the app to the starved-app set (spec A.4); the
    /// preemption pass of that update is to process it.
    pub(crate) identified_at: Option<Time>,
    /// The app is not a candidate before this time (spec A.9; set by the preemption pass).
    pub(crate) next_check: Time,
    /// Whether its AM container may be preempted, resolved from the queue it was placed in.
    pub(crate) am_preemption: bool,
}

/// Every app's starvation state, by id (only apps seen while preemption was on).
#[derive(Clone, Debug, Default)]
pub(crate) struct AppStarvationTable {
    pub(crate) by_app: BTreeMap<AppId, AppStarvationState>,
}

impl AppStarvationState {
    fn new(start_time: Time, am_preemption: bool) -> AppStarvationState {
        AppStarvationState {
            at_fair_share_since: start_time,
            fair_share_starvation: Resource::ZERO,
            min_share_starvation: Resource::ZERO,
            identified_at: None,
            next_check: Time::ZERO,
            am_preemption,
        }
    }
}

/// Hadoop's `Resources.subtractFromNonNegative`: only memory and vcores are floored at zero
/// (custom types keep a negative difference, as Hadoop's do).
fn subtract_non_negative(a: Resource, b: Resource) -> Resource {
    let mut r = a.saturating_sub(b);
    for i in [MEMORY, VCORES] {
        r.set(i, r.get(i).max(0));
    }
    r
}

/// `now - since < timeout` on signed milliseconds (a timeout may be negative or "never").
fn within(now: Time, since: Time, timeout_ms: i64) -> bool {
    i128::from(now.as_millis()) - i128::from(since.as_millis()) < i128::from(timeout_ms)
}

impl FairEngine {
    /// Hadoop's `shouldAttemptPreemption`: preemption on and `threshold < max(allocated
    /// memory / cluster memory, allocated vcores / cluster vcores)` in float division (an
    /// empty cluster gives NaN, which never passes).
    pub(crate) fn preemption_gate_open(&self) -> bool {
        let props = &self.rules.config.properties;
        props.preemption
            && utilization_above(
                self.cluster_used,
                self.cluster,
                props.preemption_cluster_utilization_threshold,
            )
    }

    /// The gate per resource pool (resource-pools spec §9), by pool index: each pool's
    /// usage against its capacity and its `preemptionUtilizationThreshold` (else the
    /// yarn-site value), so a saturated small pool preempts in an idle cluster. Without
    /// pools one entry, the cluster's gate (every queue is in pool 0).
    pub(crate) fn preemption_gates(&self) -> Vec<bool> {
        let props = &self.rules.config.properties;
        let site = props.preemption_cluster_utilization_threshold;
        match &self.pools {
            None => vec![self.preemption_gate_open()],
            Some(pools) => (0..pools.capacity.len())
                .map(|i| {
                    let pool = i as u16;
                    props.preemption
                        && utilization_above(
                            pools.used[i],
                            pools.capacity[i],
                            pools.preemption_threshold(pool, site),
                        )
                })
                .collect(),
        }
    }

    /// The starvation pass of the update (call only with preemption on): stamps new leaves,
    /// then, if the utilization gate is open, evaluates every leaf (spec A.1). With the gate
    /// closed nothing is refreshed, so a long spell below the threshold counts as starved all
    /// along once it opens (Hadoop's behaviour).
    pub(crate) fn update_starvation(&mut self, now: Time) {
        let leaves: Vec<QueueId> = self
            .queues
            .ids()
            .filter(|id| self.queues.get(*id).is_leaf)
            .collect();
        for leaf in &leaves {
            let state = &mut self.queues.get_mut(*leaf).rules_cold.starvation;
            state.at_min_share_since.get_or_insert(now);
        }
        let gates = self.preemption_gates();
        if !gates.contains(&true) {
            return;
        }
        let mut candidates = Vec::new();
        for leaf in leaves {
            let pool = usize::from(self.queues.get(leaf).pool);
            if gates.get(pool).copied().unwrap_or(false) {
                self.identify_starved_apps(leaf, now, &mut candidates);
            }
        }
    }

    /// Hadoop's `FSLeafQueue.identifyStarvedApplications` for one leaf.
    fn identify_starved_apps(&mut self, leaf: QueueId, now: Time, candidates: &mut Vec<AppId>) {
        let q = self.queues.get(leaf);
        let ctx = self.policy_context_of(q.pool);
        let (policy, settings) = (q.rules.policy, q.rules_cold.preemption);
        self.starvation_candidates(leaf, now, candidates);

        // Fair-share starvation, in the leaf's order, up to the first app that is not starved
        // (later apps keep their previous values and timers: Hadoop's loop stops there).
        let mut fair_sum = Resource::ZERO;
        for id in candidates.iter() {
            let Some(app) = self.apps.get(id) else {
                continue;
            };
            let threshold = app
                .rules
                .fair_share
                .mul_trunc(f64::from(settings.fair_share_threshold));
            let fair_demand = threshold.cw_min(app.demand);
            let below =
                calculator_compare(policy, app.usage, fair_demand, &ctx, true) == Ordering::Less;
            let usage = app.usage;
            let state = self.starvation_entry(*id);
            if !below {
                state.at_fair_share_since = now;
            }
            state.fair_share_starvation = if !below
                || within(
                    now,
                    state.at_fair_share_since,
                    settings.fair_share_timeout_ms,
                ) {
                Resource::ZERO
            } else {
                subtract_non_negative(fair_demand, usage)
            };
            if state.fair_share_starvation.is_zero() {
                break;
            }
            let offered = state.identified_at == Some(now);
            state.identified_at = Some(now);
            fair_sum = fair_sum.saturating_add(state.fair_share_starvation);
            self.offer_starved(*id, offered);
        }

        // Min-share starvation of the leaf, less what fair-share starvation already claims.
        let q = self.queues.get(leaf);
        let desired = min_by(policy, q.rules.min_share, q.demand, &ctx);
        let mut starvation = desired.saturating_sub(q.usage);
        let usage_at_min = starvation.is_zero();
        let state = &mut self.queues.get_mut(leaf).rules_cold.starvation;
        let since = *state.at_min_share_since.get_or_insert(now);
        let since = if usage_at_min { now } else { since };
        state.at_min_share_since = Some(since);
        if within(now, since, settings.min_share_timeout_ms) {
            starvation = Resource::ZERO;
        }
        state.min_share_starvation = starvation;
        state.fair_share_starvation = fair_sum;
        let left = subtract_non_negative(starvation, fair_sum);
        self.distribute_min_share_starvation(candidates, left, now, &ctx, policy);
    }

    /// A leaf's candidates (spec A.1: runnable, pending demand, next check due) in the leaf's
    /// order. On the fast path the leaf's candidate set already holds exactly its runnable apps
    /// with pending demand, in that order and re-keyed by this update's demand pass (pending
    /// demand is then the outstanding asks); otherwise they are sorted by their order keys
    /// (which order as the comparator does, `verify` checks it).
    fn starvation_candidates(&mut self, leaf: QueueId, now: Time, candidates: &mut Vec<AppId>) {
        let due = |e: &FairEngine, a: &AppOf<Fair>| {
            !a.demand.saturating_sub(a.usage).is_zero()
                && (!a.rules.next_check_set
                    || e.rules
                        .preemption
                        .starvation
                        .by_app
                        .get(&a.id)
                        .is_none_or(|s| s.next_check <= now))
        };
        candidates.clear();
        let q = self.queues.get(leaf);
        if !self.order_dirty && self.walk == crate::engine::WalkMode::Fast {
            let set = &q.candidates;
            let mut cursor = set.first();
            while let Some(at) = cursor {
                if let Some(a) = self.apps.at(set.member(at.slot()) as u32) {
                    if due(self, a) {
                        candidates.push(a.id);
                    }
                }
                cursor = set.next(at);
            }
            return;
        }
        let mut keyed = std::mem::take(&mut self.rules.preemption.scratch_keys);
        keyed.clear();
        keyed.extend(q.runnable_apps.iter().filter_map(|id| {
            let a = self.apps.get(id)?;
            due(self, a).then(|| (Fair::app_key(self, a), *id))
        }));
        // Keys end with the app id, so no two are equal.
        keyed.sort_unstable_by_key(|k| k.0);
        candidates.extend(keyed.iter().map(|(_, id)| *id));
        self.rules.preemption.scratch_keys = keyed;
    }

    /// Hadoop's `updateStarvedAppsMinshare`: each candidate in order takes its pending demand
    /// beyond its fair-share starvation while some of the leaf's deficit is left. An app
    /// whose claim exceeds what is left gets the EXCESS (Hadoop's arithmetic, spec A.3).
    fn distribute_min_share_starvation(
        &mut self,
        candidates: &[AppId],
        mut left: Resource,
        now: Time,
        ctx: &PolicyContext,
        policy: weft_config::PolicyKind,
    ) {
        for id in candidates {
            let Some(app) = self.apps.get(id) else {
                continue;
            };
            // Nothing to hand out and nothing to take back (the cached flag is the stored
            // value's non-zeroness): the app's state stays as it is, unread.
            if left.is_zero() && !app.rules.min_share_starved {
                continue;
            }
            let pending = app.demand.saturating_sub(app.usage);
            let state = self.starvation_entry(*id);
            let was_starved = !state.min_share_starvation.is_zero();
            if left.is_zero() {
                state.min_share_starvation = Resource::ZERO;
                if was_starved {
                    self.note_min_share_starved(*id, false);
                }
                continue;
            }
            let claim = subtract_non_negative(pending, state.fair_share_starvation);
            if calculator_compare(policy, claim, left, ctx, false) == Ordering::Greater {
                state.min_share_starvation = subtract_non_negative(claim, left);
                left = Resource::ZERO;
            } else {
                state.min_share_starvation = claim;
                left = subtract_non_negative(left, claim);
            }
            let offered = state.identified_at == Some(now);
            state.identified_at = Some(now);
            let starved = !state.min_share_starvation.is_zero();
            if starved != was_starved {
                self.note_min_share_starved(*id, starved);
            }
            self.offer_starved(*id, offered);
        }
    }

    /// Keeps the app's cached min-share flag (read by the reservation gate on every re-key)
    /// equal to its stored min-share starvation (called when that became or stopped being
    /// none), re-keying it where the flag changed.
    pub(crate) fn note_min_share_starved(&mut self, id: AppId, starved: bool) {
        let Some(slot) = self.apps.slot_of(&id) else {
            return;
        };
        let Some(app) = self.apps.at_mut(slot) else {
            return;
        };
        if app.rules.min_share_starved == starved {
            return;
        }
        app.rules.min_share_starved = starved;
        let leaf = app.queue;
        if !self.order_dirty && self.walk == crate::engine::WalkMode::Fast {
            // The app's reservable flag may change, and with it its leaf's count and every
            // ancestor's flag.
            self.rekey_app_at(slot, false);
            let mut cur = Some(leaf);
            while let Some(q) = cur {
                self.rekey_queue(q);
                cur = self.queues.get(q).parent;
            }
        }
    }

    /// The app's starvation state, created on first use (its AM setting then comes from the
    /// queue it is in; `admit` resolves it at placement while preemption is on).
    fn starvation_entry(&mut self, id: AppId) -> &mut AppStarvationState {
        let (start, queue) = self
            .apps
            .get(&id)
            .map_or((Time::ZERO, None), |a| (Time(a.start_time), Some(a.queue)));
        let (queues, props) = (&self.queues, &self.rules.config.properties);
        self.rules
            .preemption
            .starvation
            .by_app
            .entry(id)
            .or_insert_with(|| {
                let am = queue.is_none_or(|q| props.am_preemption_enabled(&queues.get(q).name));
                AppStarvationState::new(start, am)
            })
    }

    /// Resolves the AM-preemption setting of a newly placed app (Hadoop reads it when the
    /// attempt is created). Only while preemption is on: otherwise nothing reads it.
    pub(crate) fn note_admitted_for_starvation(&mut self, id: AppId) {
        if self.rules.config.properties.preemption {
            self.starvation_entry(id);
        }
    }

    /// Forgets a finished app.
    pub(crate) fn forget_starvation(&mut self, id: AppId) {
        self.rules.preemption.starvation.by_app.remove(&id);
    }

    /// The queue's part of a snapshot.
    pub(crate) fn queue_starvation(q: &QueueOf<Fair>) -> QueueStarvation {
        let (settings, state) = (&q.rules_cold.preemption, &q.rules_cold.starvation);
        QueueStarvation {
            min_share_preemption_timeout_ms: settings.min_share_timeout_ms,
            fair_share_preemption_timeout_ms: settings.fair_share_timeout_ms,
            fair_share_preemption_threshold: settings.fair_share_threshold,
            preemptable: settings.preemptable,
            at_min_share_since: if q.is_leaf {
                state.at_min_share_since
            } else {
                None
            },
            min_share_starvation: outward(state.min_share_starvation.clamp_non_negative()),
            fair_share_starvation: outward(state.fair_share_starvation),
        }
    }

    /// The app's part of a snapshot. `starved` is Hadoop's `isStarved`: usage below the fair
    /// share (leaf calculator, now) or some min-share starvation (as of the last evaluation).
    pub(crate) fn app_starvation(&self, app: &AppOf<Fair>) -> AppStarvation {
        let state = self
            .rules
            .preemption
            .starvation
            .by_app
            .get(&app.id)
            .copied()
            .unwrap_or_else(|| {
                let name = &self.queues.get(app.queue).name;
                AppStarvationState::new(
                    Time(app.start_time),
                    self.rules.config.properties.am_preemption_enabled(name),
                )
            });
        let leaf = self.queues.get(app.queue);
        let below_fair_share = calculator_compare(
            leaf.rules.policy,
            app.usage,
            app.rules.fair_share,
            &self.policy_context_of(leaf.pool),
            true,
        ) == Ordering::Less;
        AppStarvation {
            fair_share_starvation: outward(state.fair_share_starvation),
            min_share_starvation: outward(state.min_share_starvation),
            starved: below_fair_share || !state.min_share_starvation.is_zero(),
            at_fair_share_since: state.at_fair_share_since,
            identified_at: state.identified_at,
            next_starvation_check: state.next_check,
            am_preemption: state.am_preemption,
        }
    }
}

/// `threshold < max(used / capacity)` over memory and vcores in float division, Java's
/// `Math.max` (NaN if either ratio is, and NaN never passes).
fn utilization_above(used: Resource, capacity: Resource, threshold: f32) -> bool {
    let ratio = |i: usize| used.get(i) as f32 / capacity.get(i) as f32;
    let (memory, vcores) = (ratio(MEMORY), ratio(VCORES));
    let utilization = if memory.is_nan() || vcores.is_nan() {
        f32::NAN
    } else {
        memory.max(vcores)
    };
    threshold < utilization
}

/// Hadoop's `Resources.min(calculator, cluster, a, b)`: the whole vector that compares
/// smaller (`a` on ties), not a component-wise minimum.
fn min_by(
    policy: weft_config::PolicyKind,
    a: Resource,
    b: Resource,
    ctx: &PolicyContext,
) -> Resource {
    if calculator_compare(policy, a, b, ctx, false) != Ordering::Greater {
        a
    } else {
        b
    }
}
