//! What a demand looks like from outside (REST, the UI): its timeline, its report, and the
//! transition that records and persists each step.

use weft_store::{DemandState, Write};
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::timers::effective_deadline;
use super::{Demand, DemandReason, Scope};
use crate::RmCore;

/// One step of a demand's timeline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandTransition {
    /// The state entered.
    pub state: DemandState,
    /// Why.
    pub reason: DemandReason,
    /// What the reason does not say (e.g. the gang that did not fit); may be empty.
    pub detail: String,
    /// When.
    pub at: Time,
}

/// A read-only view of a demand (what REST shows).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandReport {
    /// `application_<ts>_<n>/<id>` or `~<user>/<id>`.
    pub key: String,
    /// The application it belongs to.
    pub application: Option<String>,
    /// Its DemandID.
    pub demand_id: u64,
    /// The submitting user.
    pub user: String,
    /// The queue.
    pub queue: String,
    /// The current state.
    pub state: DemandState,
    /// Why it is in that state.
    pub reason: DemandReason,
    /// Containers asked for.
    pub requested: u64,
    /// Allocated so far.
    pub allocated: u64,
    /// Claimed (launched) so far.
    pub claimed: u64,
    /// Completed or released so far.
    pub completed: u64,
    /// Members its gangs hold now (counted as used, not yet handed to the AM).
    pub held: u64,
    /// Scheduling opportunities missed while ALLOCATING.
    pub missed_opportunities: u64,
    /// When NOW was bound.
    pub accepted_at: Time,
    /// The earliest admissible start.
    pub earliest_start: Time,
    /// START.
    pub first_allocation: Option<Time>,
    /// The deadline as far as it is known (an absolute one, or START + a relative one).
    pub deadline: Option<Time>,
    /// Every transition, oldest first.
    pub timeline: Vec<DemandTransition>,
    /// Its reservation in the plan, when the planner placed it (`reservation_<ts>_<seq>`).
    pub reservation_id: Option<String>,
    /// The planned start: where its reservation's resources begin.
    pub planned_start: Option<Time>,
    /// The planned end: where its reservation's resources end.
    pub planned_end: Option<Time>,
    /// The ResourceDescription as the printer writes it.
    pub spec: String,
}

impl RmCore {
    /// Records a transition and persists the demand; a demand that ends gives its
    /// reservation back to the plan.
    pub(crate) fn demand_transition(
        &mut self,
        now: Time,
        key: &str,
        state: DemandState,
        reason: DemandReason,
        detail: String,
    ) {
        let Some(d) = self.demands.by_key.get_mut(key) else {
            return;
        };
        let outcomes = &mut self.demands.outcomes;
        if state == DemandState::Failed && reason == DemandReason::ClaimExpired {
            outcomes.claim_expired += 1;
        }
        if state.is_final() && (d.times.deadline.at.is_some() || effective_deadline(d).is_some()) {
            let missed = d.noted(DemandReason::DeadlineMissed)
                || matches!(
                    reason,
                    DemandReason::Late
                        | DemandReason::DeadlineMissed
                        | DemandReason::DeadlineUnreachable
                );
            if missed {
                outcomes.deadline_miss += 1;
            } else if state == DemandState::Finished && reason == DemandReason::Ok {
                outcomes.deadline_hit += 1;
            }
        }
        d.timeline.push(DemandTransition {
            state,
            reason,
            detail,
            at: now,
        });
        if state.is_final() {
            self.release_demand_plan(now, key);
        }
        self.persist_demand(key);
        self.sync_demand_asks(now, key);
    }

    pub(crate) fn persist_demand(&mut self, key: &str) {
        if let Some(d) = self.demands.by_key.get(key) {
            let record = super::record::to_record(d);
            self.persist(vec![Write::PutDemand(record)]);
        }
    }

    /// Demand outcomes counted since this RM started (`weft_demand_deadline_total`,
    /// `weft_claim_expired_total`).
    pub fn demand_outcomes(&self) -> super::DemandOutcomes {
        self.demands.outcomes
    }

    /// Each plan's committed share now: the larger of its committed memory and vcores over
    /// its capacity at `now` (0 for an empty plan), by plan queue (`weft_plan_committed_ratio`).
    pub fn plan_committed_ratios(&self, now: Time) -> Vec<(String, f64)> {
        self.reservations
            .queues()
            .filter_map(|q| {
                let plan = self.reservations.plan(q)?;
                let capacity = plan.capacity().value_at(now);
                let committed = plan.committed().value_at(now);
                let ratio = |used: i64, of: i64| if of > 0 { used as f64 / of as f64 } else { 0.0 };
                let share = ratio(committed.memory_mb(), capacity.memory_mb())
                    .max(ratio(committed.vcores(), capacity.vcores()));
                Some((q.to_owned(), share))
            })
            .collect()
    }

    /// How many demands are in each state, by the reason of their last transition (for
    /// `/metrics`), in state then reason order (the enums' order).
    pub fn demand_counts(&self) -> Vec<(DemandState, DemandReason, u64)> {
        let mut counts: std::collections::BTreeMap<(DemandState, DemandReason), u64> =
            std::collections::BTreeMap::new();
        for d in self.demands.by_key.values() {
            *counts.entry((d.state(), d.reason())).or_default() += 1;
        }
        counts
            .into_iter()
            .map(|((state, reason), n)| (state, reason, n))
            .collect()
    }

    /// One demand's report.
    pub fn demand(&self, key: &str) -> Option<DemandReport> {
        let held = self.demand_holds();
        self.demands.by_key.get(key).map(|d| report(d, &held))
    }

    /// Every demand matching the filters (`None`: any), in key order.
    pub fn demands(
        &self,
        state: Option<DemandState>,
        queue: Option<&str>,
        application: Option<ApplicationId>,
    ) -> Vec<DemandReport> {
        let held = self.demand_holds();
        self.demands
            .by_key
            .values()
            .filter(|d| state.is_none_or(|s| d.state() == s))
            .filter(|d| queue.is_none_or(|q| d.queue == q))
            .filter(|d| application.is_none_or(|a| d.scope == Scope::App(a)))
            .map(|d| report(d, &held))
            .collect()
    }
}

/// The state's name as REST and the store spell it.
pub fn demand_state_name(state: DemandState) -> &'static str {
    match state {
        DemandState::New => "NEW",
        DemandState::Accepted => "ACCEPTED",
        DemandState::Allocating => "ALLOCATING",
        DemandState::Allocated => "ALLOCATED",
        DemandState::Monitoring => "MONITORING",
        DemandState::Finished => "FINISHED",
        DemandState::Failed => "FAILED",
    }
}

fn report(d: &Demand, held: &std::collections::BTreeMap<String, u64>) -> DemandReport {
    DemandReport {
        key: d.key.clone(),
        application: match &d.scope {
            Scope::App(app) => Some(app.to_string()),
            Scope::User(_) => None,
        },
        demand_id: d.spec.demand_id,
        user: d.user.clone(),
        queue: d.queue.clone(),
        state: d.state(),
        reason: d.reason(),
        requested: d.requested(),
        allocated: d.allocated,
        claimed: d.claimed,
        completed: d.completed,
        held: held.get(&d.key).copied().unwrap_or(0),
        missed_opportunities: d.missed,
        accepted_at: d.accepted_at,
        earliest_start: Time(d.times.earliest_start),
        first_allocation: d.first_allocation,
        deadline: effective_deadline(d).map(Time),
        timeline: d.timeline.clone(),
        spec: d.spec_json.clone(),
        reservation_id: d.plan.as_ref().map(|p| p.reservation.to_string()),
        planned_start: d.plan.as_ref().map(|p| p.start),
        planned_end: d.plan.as_ref().map(|p| p.end),
    }
}
