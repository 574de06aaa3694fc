//! The transitions of §3.4's table: submission and the scheduler's decision (rows 1-3), the
//! timers checked on every tick (5, 6, 8, 9, 12, 13, 15), and the inputs that later the AM
//! protocol and the scheduler deliver (7, 10, 11, 14, 16).

use serde_json::Value;
use weft_demand_lang::window::{Bound, Clock};
use weft_demand_lang::Strategy;
use weft_demand_lang::{parse_value, resolve, DemandError, DemandErrors, DemandRef, Gang, Owner};
use weft_store::{DemandState, Write};
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::order::{evaluate, Predecessor, Truth};
use super::{Demand, DemandReason, Scope, MAX_DEMANDS_PER_SUBMISSION};
use crate::model::NodeState;
use crate::{RmCore, RmError};

/// One submission of demands (REST's `POST /ws/v1/cluster/demands`, later the AM protocol).
#[derive(Clone, Copy, Debug)]
pub struct DemandBatch<'a> {
    /// The caller.
    pub user: &'a str,
    /// The queue named (REST-only demands); an application's demands take its queue.
    pub queue: Option<&'a str>,
    /// The application whose `allocationRequestId`s the DemandIDs are.
    pub application: Option<ApplicationId>,
    /// One ResourceDescription or an array of them.
    pub demands: &'a Value,
    /// Where `demands` sits in the caller's document (`/demands`), for diagnostics.
    pub pointer: &'a str,
}

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
    /// The ResourceDescription as the printer writes it.
    pub spec: String,
}

fn invalid(errors: Vec<DemandError>) -> RmError {
    RmError::InvalidDemand(DemandErrors(errors).to_string())
}

impl RmCore {
    fn demand_clock(&self, now: Time) -> Clock {
        Clock {
            now: now.as_millis(),
            offset_minutes: self.config.demand_timezone_minutes,
        }
    }

    /// Submits demands (§3.4 row 1): the batch is read and checked whole, and an invalid one
    /// creates no demand (`InvalidDemand`, naming every problem's field and column). Each
    /// valid demand is recorded NEW, then decided at once (rows 2-3), and advanced as far as
    /// `now` allows. Returns the new demands' reports in submission order.
    pub fn submit_demands(
        &mut self,
        now: Time,
        batch: DemandBatch<'_>,
    ) -> Result<Vec<DemandReport>, RmError> {
        self.latest = self.latest.max(now);
        let (scope, queue) = match batch.application {
            Some(id) => {
                let app = self
                    .apps
                    .get(&id)
                    .ok_or_else(|| RmError::UnknownApp(id.to_string()))?;
                if app.state.is_final() {
                    return Err(RmError::FinalState {
                        app: id.to_string(),
                        state: format!("{:?}", app.state).to_uppercase(),
                    });
                }
                if app.sub.user != batch.user && !self.is_admin(batch.user) {
                    return Err(RmError::Forbidden(format!(
                        "user {} may not add demands to {id}, which belongs to {}",
                        batch.user, app.sub.user
                    )));
                }
                (Scope::App(id), app.queue.clone())
            }
            None => (
                Scope::User(batch.user.to_owned()),
                batch.queue.unwrap_or_default().to_owned(),
            ),
        };
        let default = self.config.demand_default_strategy;
        let exists = |reference: &DemandRef| {
            let key = match reference.owner {
                None => scope.key(reference.demand),
                Some(Owner::Application {
                    cluster_timestamp,
                    seq,
                }) => Scope::App(ApplicationId {
                    cluster_ts: cluster_timestamp,
                    seq,
                })
                .key(reference.demand),
                // No reservation system yet: nothing to refer to.
                Some(Owner::Reservation { .. }) => return false,
            };
            self.demands.by_key.contains_key(&key)
        };
        let submission = parse_value(batch.demands, batch.pointer, default, &exists)
            .map_err(|e| RmError::InvalidDemand(e.to_string()))?;
        if submission.demands.len() > MAX_DEMANDS_PER_SUBMISSION {
            return Err(invalid(vec![DemandError::at(
                batch.pointer,
                format!(
                    "{} demands in one submission; at most {MAX_DEMANDS_PER_SUBMISSION}",
                    submission.demands.len()
                ),
            )]));
        }
        let clock = self.demand_clock(now);
        let mut errors = Vec::new();
        let mut ready = Vec::with_capacity(submission.demands.len());
        for (spec, pointer) in submission.demands.into_iter().zip(&submission.pointers) {
            let key = scope.key(spec.demand_id);
            if self.demands.by_key.contains_key(&key) {
                errors.push(DemandError::at(
                    &format!("{pointer}/DemandID"),
                    format!("demand {key} already exists"),
                ));
                continue;
            }
            match resolve(&spec, pointer, clock, default) {
                Ok(times) => ready.push((key, spec, times)),
                Err(found) => errors.extend(found),
            }
        }
        if !errors.is_empty() {
            return Err(invalid(errors));
        }
        let mut keys = Vec::with_capacity(ready.len());
        for (key, spec, times) in ready {
            let spec_json = weft_demand_lang::print::to_json_string(&spec);
            let demand = Demand {
                key: key.clone(),
                scope: scope.clone(),
                user: batch.user.to_owned(),
                queue: queue.clone(),
                spec,
                spec_json,
                accepted_at: now,
                times,
                timeline: Vec::new(),
                first_allocation: None,
                missed: 0,
                allocated: 0,
                claimed: 0,
                completed: 0,
            };
            self.demands.by_key.insert(key.clone(), demand);
            self.demand_transition(
                now,
                &key,
                DemandState::New,
                DemandReason::Submitted,
                String::new(),
            );
            keys.push(key);
        }
        for key in &keys {
            self.decide_demand(now, key);
        }
        self.advance_demands(now);
        Ok(keys.iter().filter_map(|k| self.demand(k)).collect())
    }

    /// Rows 2-3: without a planner, a condition that needs a plan is refused when strict and
    /// run best-effort when loose; a gang must fit on the nodes (§3.3's packability).
    fn decide_demand(&mut self, now: Time, key: &str) {
        let Some(d) = self.demands.by_key.get(key) else {
            return;
        };
        let default = self.config.demand_default_strategy;
        if let Some(detail) = self.unpackable(d) {
            self.demand_transition(
                now,
                key,
                DemandState::Failed,
                DemandReason::Unpackable,
                detail,
            );
            return;
        }
        let start_bounded =
            d.times.start.as_ref().is_some_and(|w| {
                w.latest_end().is_some() || d.times.earliest_start > now.as_millis()
            });
        let deadline_bounded = d.times.deadline.at.is_some();
        let needs_plan = d.spec.duration.is_some() && (start_bounded || deadline_bounded);
        let strict_start = start_bounded
            && d.spec
                .start
                .as_ref()
                .is_some_and(|f| d.spec.effective(f, default) == Strategy::Strict);
        let strict_deadline = deadline_bounded
            && d.spec
                .deadline
                .as_ref()
                .is_some_and(|f| d.spec.effective(f, default) == Strategy::Strict);
        let refuse = (strict_start || strict_deadline) && !self.config.demand_admit_unplanned;
        let (state, reason, detail) = if needs_plan && refuse {
            (
                DemandState::Failed,
                DemandReason::NotReservable,
                format!(
                    "a strict {} with a Duration needs a plan, and queue '{}' is not reservable (no planner yet)",
                    if strict_start { "Start" } else { "DeadLine" },
                    d.queue
                ),
            )
        } else if needs_plan {
            (
                DemandState::Accepted,
                DemandReason::BestEffort,
                String::new(),
            )
        } else if d.spec.order_by.is_some() && !self.order_truth(d).now {
            (
                DemandState::Accepted,
                DemandReason::WaitingOrder,
                String::new(),
            )
        } else {
            (
                DemandState::Accepted,
                DemandReason::Unconstrained,
                String::new(),
            )
        };
        self.demand_transition(now, key, state, reason, detail);
    }

    /// `None` when the demand is no gang or its members fit on the running nodes' capacities;
    /// otherwise why not (C8: "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4
    /// members").
    fn unpackable(&self, d: &Demand) -> Option<String> {
        let members = match d.spec.gang {
            Gang::Off => return None,
            Gang::All => d.requested(),
            Gang::Size(g) => g,
        };
        let (mb, vcores) = (d.spec.request.memory_mb, d.spec.request.vcores);
        let per_node = |capacity: i64, size: u64| -> u64 {
            let capacity = u64::try_from(capacity).unwrap_or(0);
            capacity.checked_div(size).unwrap_or(u64::MAX)
        };
        let mut nodes = 0u64;
        let mut fits = 0u64;
        for node in self.nodes.values() {
            if node.state != NodeState::Running {
                continue;
            }
            nodes += 1;
            let here = per_node(node.capability.memory_mb(), mb)
                .min(per_node(node.capability.vcores(), vcores));
            fits = fits.saturating_add(here);
        }
        (fits < members).then(|| {
            format!(
                "gang of {members} × {mb} MB cannot be packed on {nodes} nodes: at most {fits} members"
            )
        })
    }

    fn order_truth(&self, d: &Demand) -> Truth {
        let Some(order) = &d.spec.order_by else {
            return Truth {
                now: true,
                possible: true,
            };
        };
        let strategy = d.spec.effective(order, self.config.demand_default_strategy);
        let lookup = |reference: &DemandRef| {
            let key = match reference.owner {
                None => d.scope.key(reference.demand),
                Some(Owner::Application {
                    cluster_timestamp,
                    seq,
                }) => Scope::App(ApplicationId {
                    cluster_ts: cluster_timestamp,
                    seq,
                })
                .key(reference.demand),
                Some(Owner::Reservation { .. }) => return None,
            };
            self.demands.by_key.get(&key).map(|p| Predecessor {
                state: p.state(),
                reason: p.reason(),
                ever_allocated: p.ever_in(DemandState::Allocated),
            })
        };
        evaluate(&order.value, strategy, &lookup)
    }

    /// Records a transition and persists the demand.
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
        d.timeline.push(DemandTransition {
            state,
            reason,
            detail,
            at: now,
        });
        self.persist_demand(key);
    }

    pub(crate) fn persist_demand(&mut self, key: &str) {
        if let Some(d) = self.demands.by_key.get(key) {
            let record = super::record::to_record(d);
            self.persist(vec![Write::PutDemand(record)]);
        }
    }

    /// The timers and order of every live demand at `now` (rows 5, 6, 8, 9, 12, 13, 15),
    /// repeated while something changes, since one demand's end can make another eligible at
    /// the same instant.
    pub(crate) fn advance_demands(&mut self, now: Time) {
        let live: Vec<String> = self
            .demands
            .by_key
            .iter()
            .filter(|(_, d)| !d.state().is_final())
            .map(|(k, _)| k.clone())
            .collect();
        for _ in 0..=live.len() {
            let mut changed = false;
            for key in &live {
                changed |= self.step_demand(now, key);
            }
            if !changed {
                break;
            }
        }
    }

    /// One demand's timers and order at `now`; true if it changed.
    fn step_demand(&mut self, now: Time, key: &str) -> bool {
        let Some(d) = self.demands.by_key.get(key) else {
            return false;
        };
        let Some((state, reason, detail)) = self.due_transition(now, d) else {
            return false;
        };
        self.demand_transition(now, key, state, reason, detail);
        true
    }

    fn due_transition(&self, now: Time, d: &Demand) -> Option<(DemandState, DemandReason, String)> {
        let default = self.config.demand_default_strategy;
        let t = now.as_millis();
        let strict = |field: Option<Strategy>| field == Some(Strategy::Strict);
        let start_strategy = d.spec.start.as_ref().map(|f| d.spec.effective(f, default));
        let deadline_strategy = d
            .spec
            .deadline
            .as_ref()
            .map(|f| d.spec.effective(f, default));
        let duration_strategy = d
            .spec
            .duration
            .as_ref()
            .map(|f| d.spec.effective(f, default));
        let deadline = effective_deadline(d);
        let deadline_passed = deadline.is_some_and(|at| t >= at);
        let window_dropped = d.noted(DemandReason::WindowMissed);
        let window_closed = |k: u64| {
            !window_dropped
                && d.times
                    .start
                    .as_ref()
                    .is_some_and(|w| w.closed_for_good(t, k))
        };
        let failed =
            |reason: DemandReason, detail: String| Some((DemandState::Failed, reason, detail));
        match d.state() {
            DemandState::New | DemandState::Finished | DemandState::Failed => None,
            DemandState::Accepted => {
                let order = self.order_truth(d);
                let order_strict = d
                    .spec
                    .order_by
                    .as_ref()
                    .is_some_and(|f| d.spec.effective(f, default) == Strategy::Strict);
                if order_strict && !order.possible {
                    return failed(
                        DemandReason::PredecessorFailed,
                        "its OrderBy can no longer be satisfied".to_owned(),
                    );
                }
                if strict(deadline_strategy) {
                    if let (Some(at), Some(Bound::AfterStart(lease))) =
                        (d.times.deadline.at, d.times.lease)
                    {
                        if t.saturating_add(lease) > at {
                            return failed(
                                DemandReason::DeadlineUnreachable,
                                format!("now + Duration ends after the DeadLine ({at} ms)"),
                            );
                        }
                    }
                }
                let order_ok = order.now || (!order_strict && !order.possible);
                if window_closed(0) {
                    if strict(start_strategy) {
                        return failed(
                            DemandReason::WindowExpired,
                            "the Start window closed before the demand could start".to_owned(),
                        );
                    }
                    return order_ok.then(|| {
                        (
                            DemandState::Allocating,
                            DemandReason::WindowMissed,
                            "the Start window closed; continuing without a time bound".to_owned(),
                        )
                    });
                }
                let start_ok =
                    window_dropped || d.times.start.as_ref().is_none_or(|w| w.holds(t, 0));
                (order_ok && start_ok).then(|| {
                    (
                        DemandState::Allocating,
                        DemandReason::Eligible,
                        String::new(),
                    )
                })
            }
            DemandState::Allocating => {
                if window_closed(d.missed) {
                    if strict(start_strategy) {
                        return failed(
                            DemandReason::WindowExpired,
                            format!(
                                "the Start window closed after {} missed opportunities",
                                d.missed
                            ),
                        );
                    }
                    return Some((
                        DemandState::Allocating,
                        DemandReason::WindowMissed,
                        "the Start window closed; continuing without a time bound".to_owned(),
                    ));
                }
                self.deadline_due(d, deadline_passed, deadline_strategy)
            }
            DemandState::Allocated => {
                let allocated_at = d
                    .timeline
                    .iter()
                    .rev()
                    .find(|tr| tr.state == DemandState::Allocated)
                    .map(|tr| tr.at)
                    .unwrap_or(now);
                let timeout = d
                    .spec
                    .claim_timeout
                    .unwrap_or(self.config.container_token_expiry.as_millis());
                if d.claimed < d.allocated && t >= allocated_at.as_millis().saturating_add(timeout)
                {
                    return failed(
                        DemandReason::ClaimExpired,
                        format!(
                            "{} of {} containers were not launched within {timeout} ms",
                            d.allocated - d.claimed,
                            d.allocated
                        ),
                    );
                }
                self.deadline_due(d, deadline_passed, deadline_strategy)
            }
            DemandState::Monitoring => {
                let lease_end = match (d.times.lease, d.first_allocation) {
                    (Some(Bound::AfterStart(ms)), Some(start)) => {
                        Some(start.as_millis().saturating_add(ms))
                    }
                    (Some(Bound::At(end)), _) => Some(end),
                    _ => None,
                };
                let running = d.completed < d.allocated;
                if running && lease_end.is_some_and(|end| t >= end) {
                    if strict(duration_strategy) {
                        return failed(
                            DemandReason::DurationExceeded,
                            "the lease ended with containers running".to_owned(),
                        );
                    }
                    if !d.noted(DemandReason::LeaseOverrun) {
                        return Some((
                            DemandState::Monitoring,
                            DemandReason::LeaseOverrun,
                            "the lease ended; its containers run on best-effort".to_owned(),
                        ));
                    }
                }
                self.deadline_due(d, deadline_passed, deadline_strategy)
            }
        }
    }

    /// A passed deadline: FAILED under strict, noted once under loose.
    fn deadline_due(
        &self,
        d: &Demand,
        passed: bool,
        strategy: Option<Strategy>,
    ) -> Option<(DemandState, DemandReason, String)> {
        if !passed || d.noted(DemandReason::DeadlineMissed) {
            return None;
        }
        let state = if strategy == Some(Strategy::Strict) {
            DemandState::Failed
        } else {
            d.state()
        };
        Some((
            state,
            DemandReason::DeadlineMissed,
            "the DeadLine passed".to_owned(),
        ))
    }

    fn live_demand(&self, key: &str) -> Result<&Demand, RmError> {
        let d = self
            .demands
            .by_key
            .get(key)
            .ok_or_else(|| RmError::UnknownDemand(key.to_owned()))?;
        if d.state().is_final() {
            return Err(RmError::DemandFinal {
                key: key.to_owned(),
                state: demand_state_name(d.state()).to_owned(),
            });
        }
        Ok(d)
    }

    fn expect_state(d: &Demand, states: &[DemandState], input: &str) -> Result<(), RmError> {
        if states.contains(&d.state()) {
            Ok(())
        } else {
            Err(RmError::InvalidRequest(format!(
                "demand {} is {}: {input} needs {}",
                d.key,
                demand_state_name(d.state()),
                states
                    .iter()
                    .map(|s| demand_state_name(*s))
                    .collect::<Vec<_>>()
                    .join(" or ")
            )))
        }
    }

    /// `count` more containers were allocated for the demand (row 7 once all are: START is
    /// the first allocation, or the whole gang's).
    pub fn demand_allocated(&mut self, now: Time, key: &str, count: u64) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(d, &[DemandState::Allocating], "an allocation")?;
        let total = d.allocated.saturating_add(count);
        if count == 0 || total > d.requested() {
            return Err(RmError::InvalidRequest(format!(
                "demand {key}: {count} more containers would make {total} of {}",
                d.requested()
            )));
        }
        let complete = total == d.requested();
        let gang = d.spec.gang != Gang::Off;
        if let Some(d) = self.demands.by_key.get_mut(key) {
            d.allocated = total;
            if d.first_allocation.is_none() && (!gang || complete) {
                d.first_allocation = Some(now);
            }
        }
        if complete {
            self.demand_transition(
                now,
                key,
                DemandState::Allocated,
                DemandReason::Satisfied,
                String::new(),
            );
        } else {
            self.persist_demand(key);
        }
        self.advance_demands(now);
        Ok(())
    }

    /// The demand was offered a node and got nothing from it (§3.2.3's count k).
    pub fn demand_missed_opportunity(&mut self, now: Time, key: &str) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(d, &[DemandState::Allocating], "a missed opportunity")?;
        if let Some(d) = self.demands.by_key.get_mut(key) {
            d.missed = d.missed.saturating_add(1);
        }
        self.persist_demand(key);
        self.advance_demands(now);
        Ok(())
    }

    /// `count` of its containers were launched on their NMs (row 10 once all are, when
    /// something is watched; otherwise it waits in ALLOCATED for completion, row 11).
    pub fn demand_claimed(&mut self, now: Time, key: &str, count: u64) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(d, &[DemandState::Allocated], "a claim")?;
        let total = d.claimed.saturating_add(count);
        if count == 0 || total > d.allocated {
            return Err(RmError::InvalidRequest(format!(
                "demand {key}: {count} more claims would make {total} of {} allocated",
                d.allocated
            )));
        }
        let watched =
            d.spec.duration.is_some() || d.spec.deadline.is_some() || self.has_dependents(key);
        if let Some(d) = self.demands.by_key.get_mut(key) {
            d.claimed = total;
        }
        let all = self
            .demands
            .by_key
            .get(key)
            .is_some_and(|d| d.claimed == d.requested());
        if all && watched {
            self.demand_transition(
                now,
                key,
                DemandState::Monitoring,
                DemandReason::Claimed,
                String::new(),
            );
        } else {
            self.persist_demand(key);
        }
        self.advance_demands(now);
        Ok(())
    }

    /// `count` of its containers completed or were released (rows 11 and 14 once all are).
    pub fn demand_completed(&mut self, now: Time, key: &str, count: u64) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(
            d,
            &[
                DemandState::Allocating,
                DemandState::Allocated,
                DemandState::Monitoring,
            ],
            "a completion",
        )?;
        let total = d.completed.saturating_add(count);
        if count == 0 || total > d.allocated {
            return Err(RmError::InvalidRequest(format!(
                "demand {key}: {count} more completions would make {total} of {} allocated",
                d.allocated
            )));
        }
        let over = total == d.requested() && d.state() != DemandState::Allocating;
        let late = d.noted(DemandReason::DeadlineMissed);
        if let Some(d) = self.demands.by_key.get_mut(key) {
            d.completed = total;
        }
        if over {
            let reason = if late {
                DemandReason::Late
            } else {
                DemandReason::Ok
            };
            self.demand_transition(now, key, DemandState::Finished, reason, String::new());
        } else {
            self.persist_demand(key);
        }
        self.advance_demands(now);
        Ok(())
    }

    /// The AM marks the demand done (row 14): outcome ok (late after a missed loose
    /// deadline) or failed.
    pub fn demand_done(&mut self, now: Time, key: &str, succeeded: bool) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(
            d,
            &[DemandState::Allocated, DemandState::Monitoring],
            "marking it done",
        )?;
        let reason = match (succeeded, d.noted(DemandReason::DeadlineMissed)) {
            (false, _) => DemandReason::Failed,
            (true, true) => DemandReason::Late,
            (true, false) => DemandReason::Ok,
        };
        self.demand_transition(now, key, DemandState::Finished, reason, String::new());
        self.advance_demands(now);
        Ok(())
    }

    /// Kills a demand (row 16): its owner or an administrator; a FINISHED or FAILED demand
    /// is refused (`DemandFinal`, REST's 409).
    pub fn kill_demand(
        &mut self,
        now: Time,
        key: &str,
        user: &str,
    ) -> Result<DemandReport, RmError> {
        let d = self.live_demand(key)?;
        if d.user != user && !self.is_admin(user) {
            return Err(RmError::Forbidden(format!(
                "user {user} may not kill demand {key}, which belongs to {}",
                d.user
            )));
        }
        self.demand_transition(
            now,
            key,
            DemandState::Failed,
            DemandReason::Killed,
            format!("killed by {user}"),
        );
        self.advance_demands(now);
        self.demand(key)
            .ok_or_else(|| RmError::UnknownDemand(key.to_owned()))
    }

    /// Its application ended (row 16): killed or failed, every live demand fails with it; a
    /// finished one ends the demands it was watching with outcome ok and fails the rest.
    pub(crate) fn demands_app_ended(
        &mut self,
        now: Time,
        app: ApplicationId,
        state: crate::AppState,
    ) {
        let keys: Vec<String> = self
            .demands
            .by_key
            .values()
            .filter(|d| d.scope == Scope::App(app) && !d.state().is_final())
            .map(|d| d.key.clone())
            .collect();
        if keys.is_empty() {
            return;
        }
        for key in &keys {
            let Some(d) = self.demands.by_key.get(key) else {
                continue;
            };
            let watching = matches!(d.state(), DemandState::Allocated | DemandState::Monitoring);
            let (state, reason) = match state {
                crate::AppState::Finished if watching => {
                    let reason = if d.noted(DemandReason::DeadlineMissed) {
                        DemandReason::Late
                    } else {
                        DemandReason::Ok
                    };
                    (DemandState::Finished, reason)
                }
                crate::AppState::Killed => (DemandState::Failed, DemandReason::Killed),
                _ => (DemandState::Failed, DemandReason::AppFailed),
            };
            let detail = format!(
                "application {app} ended {}",
                format!("{state:?}").to_uppercase()
            );
            self.demand_transition(now, key, state, reason, detail);
        }
        self.advance_demands(now);
    }

    fn has_dependents(&self, key: &str) -> bool {
        self.demands.by_key.values().any(|other| {
            !other.state().is_final()
                && other.spec.order_by.as_ref().is_some_and(|order| {
                    weft_demand_lang::references(&order.value).iter().any(|r| {
                        let target = match r.owner {
                            None => other.scope.key(r.demand),
                            Some(Owner::Application {
                                cluster_timestamp,
                                seq,
                            }) => Scope::App(ApplicationId {
                                cluster_ts: cluster_timestamp,
                                seq,
                            })
                            .key(r.demand),
                            Some(Owner::Reservation { .. }) => return false,
                        };
                        target == key
                    })
                })
        })
    }

    /// One demand's report.
    pub fn demand(&self, key: &str) -> Option<DemandReport> {
        self.demands.by_key.get(key).map(report)
    }

    /// Every demand matching the filters (`None`: any), in key order.
    pub fn demands(
        &self,
        state: Option<DemandState>,
        queue: Option<&str>,
        application: Option<ApplicationId>,
    ) -> Vec<DemandReport> {
        self.demands
            .by_key
            .values()
            .filter(|d| state.is_none_or(|s| d.state() == s))
            .filter(|d| queue.is_none_or(|q| d.queue == q))
            .filter(|d| application.is_none_or(|a| d.scope == Scope::App(a)))
            .map(report)
            .collect()
    }
}

/// The deadline as far as it is known: an absolute one, or START plus a relative one.
fn effective_deadline(d: &Demand) -> Option<u64> {
    let relative = match (d.times.deadline.after_start, d.first_allocation) {
        (Some(ms), Some(start)) => Some(start.as_millis().saturating_add(ms)),
        _ => None,
    };
    match (d.times.deadline.at, relative) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
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

fn report(d: &Demand) -> DemandReport {
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
        missed_opportunities: d.missed,
        accepted_at: d.accepted_at,
        earliest_start: Time(d.times.earliest_start),
        first_allocation: d.first_allocation,
        deadline: effective_deadline(d).map(Time),
        timeline: d.timeline.clone(),
        spec: d.spec_json.clone(),
    }
}
