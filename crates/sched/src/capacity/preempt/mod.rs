//! Capacity preemption: Hadoop's `ProportionalCapacityPreemptionPolicy` (capacity spec §8),
//! inter-queue, default partition.
//!
//! With `yarn.resourcemanager.scheduler.monitor.enable` on (and the policy among
//! `yarn.resourcemanager.scheduler.monitor.policies`), a round runs every
//! `monitoring_interval` (a Capacity timer; the first at the first periodic update after the
//! switch is on, as Hadoop's monitor starts with no initial delay). One round (§8.2):
//! * `snapshot`: every queue's used (reservations included), pending considering user limits
//!   (with and without each app's reservations), guarantee, maximum and `disable_preemption`;
//! * `ideal`: the ideal allocation top down and what each leaf gives this round (§8.3-§8.4);
//! * `select`: the FIFO candidate selector (§8.5), within `total_preemption_per_round`;
//! * unless `observe_only`: a container selected for the first time is marked (the warning,
//!   `Decision::PreemptWarning`, and the AM's strict contract); one first selected at least
//!   `max_wait_before_kill` ago and selected again is killed (`Decision::Preempted`, then
//!   the completion with exit PREEMPTED, -102 in the RM); a first-selection time older than
//!   twice the wait is forgotten (§8.2 steps 5-6). A reserved node selected is unreserved at
//!   once (KILL_RESERVED_CONTAINER).
//!
//! The marks and the kill are the ones the Fair Scheduler uses (`objects/preemption.rs`), so
//! the RM, the simulator and the AM protocol treat both schedulers' preemption alike.
//!
//! Decisions (Hadoop is silent or the spec leaves them open):
//! * Leaves are visited by full name (parents before children); Hadoop's order is its hash
//!   set's. It matters only when `total_preemption_per_round` runs out mid-round.
//! * A killed container's `for_queue` is the leaf furthest below its ideal in that round
//!   (by the calculator; Hadoop's policy names no beneficiary).
//! * Relative priority of `priority-utilization` parents is not applied in the water-filling:
//!   siblings are ordered by ideal over guaranteed alone.
//! * `max_ignored_over_capacity` and `natural_termination_factor` are read as the decimals
//!   written (Hadoop reads them as doubles; the configuration keeps f32).
//! * Not modelled: intra-queue preemption (§8.8, and §13.12: the spec only outlines it and
//!   asks for its own follow-up spec; `intra-queue-preemption.enabled` is read and ignored), the reserved-container and queue-priority selectors (§8.9), lazy preemption
//!   (§8.7: killable containers), node labels (one partition), `conservative-drf` (the
//!   inter-queue rule is always the non-conservative one, Hadoop's default).

mod ideal;
mod select;
mod snapshot;

use std::collections::BTreeMap;

use crate::lanes::Resource;
use weft_types::{ContainerId, Duration, Time};

use crate::objects::preemption::{HoldsMarks, Marks};

use super::{Capacity, CapacityEngine, CapacityTimer};

/// The policy's state.
#[derive(Clone, Debug, Default)]
pub(crate) struct PreemptState {
    /// The monitor switch and policy list of yarn-site (the policy runs only when on).
    pub(crate) monitor: bool,
    /// A round is scheduled (a `CapacityTimer::PreemptionRound` is set).
    armed: bool,
    /// The shared marks (warned containers, the AM's contract).
    marks: Marks,
    /// When each container was first selected (Hadoop's `preemptionCandidates`).
    first_selected: BTreeMap<ContainerId, Time>,
    /// Containers preempted from each queue's subtree, by full name.
    preempted: BTreeMap<String, u64>,
    /// What the last round computed and chose (observe-only mode reports only this).
    pub(crate) last_round: Option<RoundReport>,
}

/// What one round computed and chose.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct RoundReport {
    pub(crate) at: Time,
    /// Per leaf with something to give or something given: (full name, ideal, to obtain).
    pub(crate) leaves: Vec<(String, Resource, Resource)>,
    /// Containers selected, in selection order.
    pub(crate) selected: Vec<ContainerId>,
    /// Reserved nodes selected (their reservations dropped unless observe-only).
    pub(crate) reservations: usize,
}

impl PreemptState {
    /// The policy's state, running when `monitor` (yarn-site's switch and policy list) says.
    pub(crate) fn new(monitor: bool) -> PreemptState {
        PreemptState {
            monitor,
            ..PreemptState::default()
        }
    }
}

impl HoldsMarks for Capacity {
    fn marks(&self) -> &Marks {
        &self.preempt.marks
    }
    fn marks_mut(&mut self) -> &mut Marks {
        &mut self.preempt.marks
    }
}

impl CapacityEngine {
    /// Called by every periodic update: schedules the first round once the monitor is on.
    pub(crate) fn arm_preemption(&mut self, now: Time) {
        if self.rules.preempt.monitor && !self.rules.preempt.armed {
            self.rules.preempt.armed = true;
            self.timers.set(now, CapacityTimer::PreemptionRound);
        }
    }

    /// The round's timer: one round, then the next in `monitoring_interval` (none once the
    /// monitor is off).
    pub(crate) fn preemption_timer(&mut self, now: Time) {
        self.rules.preempt.armed = false;
        if !self.rules.preempt.monitor {
            return;
        }
        self.preemption_round(now);
        let interval = self.rules.file.preemption.monitoring_interval_ms.max(1);
        self.rules.preempt.armed = true;
        self.timers.set(
            now + Duration::from_millis(interval as u64),
            CapacityTimer::PreemptionRound,
        );
    }

    /// One round of the policy (spec §8.2).
    pub(crate) fn preemption_round(&mut self, now: Time) {
        let settings = self.rules.file.preemption.clone();
        let calc = self.rules.calc;
        let cluster = self.cluster;
        if !calc.gt(&cluster, &cluster, &Resource::ZERO) {
            return;
        }
        let mut snap = self.preemption_snapshot();
        let total_allowed = cluster.mul_trunc(f64::from(settings.total_preemption_per_round));
        ideal::compute(
            &mut snap.tree,
            calc,
            cluster,
            ideal::Knobs {
                total_allowed,
                max_ignored_over_capacity: as_written(settings.max_ignored_over_capacity),
                natural_termination_factor: as_written(settings.natural_termination_factor),
            },
        );
        let beneficiary = snap.most_underserved(calc, cluster);
        let chosen = self.select_fifo(&snap, total_allowed);
        self.rules.preempt.last_round = Some(RoundReport {
            at: now,
            leaves: snap.report(),
            selected: chosen.containers.clone(),
            reservations: chosen.reserved_nodes.len(),
        });
        if settings.observe_only {
            return;
        }
        for node in chosen.reserved_nodes {
            self.unreserve_node(node);
        }
        let wait = Duration::from_millis(settings.max_wait_before_kill_ms.max(0) as u64);
        for id in chosen.containers {
            match self.rules.preempt.first_selected.get(&id).copied() {
                Some(first) if first + wait <= now => {
                    self.rules.preempt.first_selected.remove(&id);
                    self.kill_for_capacity(id, &beneficiary);
                }
                Some(_) => {}
                None => {
                    self.rules.preempt.first_selected.insert(id, now);
                    self.mark_for_preemption(id, now, None, None);
                }
            }
        }
        let stale = Duration::from_millis(wait.as_millis().saturating_mul(2));
        self.rules
            .preempt
            .first_selected
            .retain(|_, first| *first + stale >= now);
    }

    /// Kills through the shared path and counts the victim's queues.
    fn kill_for_capacity(&mut self, id: ContainerId, for_queue: &str) {
        let Some(c) = self.kill_preempted(id, for_queue) else {
            return;
        };
        let Some(leaf) = self.apps.get(&c.app).map(|a| a.queue) else {
            return;
        };
        let names: Vec<String> = self
            .queues
            .path_to_root(leaf)
            .map(|q| self.queues.get(q).name.clone())
            .collect();
        for name in names {
            *self.rules.preempt.preempted.entry(name).or_insert(0) += 1;
        }
    }

    /// Containers preempted from the queue's subtree since the start.
    pub(crate) fn preempted_from(&self, name: &str) -> u64 {
        self.rules.preempt.preempted.get(name).copied().unwrap_or(0)
    }

    /// `Rules::container_ended`: its mark and first-selection time go with it.
    pub(crate) fn preemption_container_ended(&mut self, c: &crate::objects::node::Container) {
        if !self.rules.preempt.first_selected.is_empty() {
            self.rules.preempt.first_selected.remove(&c.id);
        }
        self.unmark_ended(c);
    }
}

/// An f32 setting as the decimal written in the file (`0.1`, not 0.100000001490116).
fn as_written(x: f32) -> f64 {
    x.to_string().parse().unwrap_or(f64::from(x))
}
