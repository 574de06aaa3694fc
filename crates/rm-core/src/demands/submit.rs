//! Submission (§3.4 row 1) and the decision made at once (rows 2-3): a batch is read and
//! checked whole, each valid demand recorded NEW, then ACCEPTED or FAILED.

use serde_json::Value;
use weft_demand_lang::window::Clock;
use weft_demand_lang::{
    parse_value, resolve, DemandError, DemandErrors, DemandRef, Gang, ResolvedTimes,
    ResourceDescription, Strategy,
};
use weft_store::DemandState;
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::planning::{Admission, DemandPlan};
use super::{Demand, DemandReason, DemandReport, Scope, MAX_DEMANDS_PER_SUBMISSION};
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

/// A batch read and checked whole, nothing recorded yet.
pub(super) struct ReadBatch {
    pub(super) scope: Scope,
    pub(super) queue: String,
    /// Each demand's key, spec and resolved times, in submission order.
    pub(super) ready: Vec<(String, ResourceDescription, ResolvedTimes)>,
}

/// Where admission (rows 2-3) puts a demand.
pub(super) struct Admitted {
    pub(super) state: DemandState,
    pub(super) reason: DemandReason,
    pub(super) detail: String,
    /// Its place in the plan, when it got one.
    pub(super) plan: Option<DemandPlan>,
}

impl Admitted {
    fn to(state: DemandState, reason: DemandReason, detail: String) -> Admitted {
        Admitted {
            state,
            reason,
            detail,
            plan: None,
        }
    }
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
        let ReadBatch {
            scope,
            queue,
            ready,
        } = self.read_batch(now, &batch)?;
        let default = self.config.demand_default_strategy;
        self.make_room_for_demands(&scope, ready.len())?;
        self.demands.plan_capacity_fresh = false;
        let mut keys = Vec::with_capacity(ready.len());
        for (key, mut spec, times) in ready {
            // The default strategy in force is written into the demand, so a later change of
            // `weft.demand.default-strategy` cannot change (or, on recovery, refuse) it.
            spec.strategy.get_or_insert(default);
            let spec_json = weft_demand_lang::print::to_json_string(&spec);
            let demand = Demand::submitted(
                key.clone(),
                scope.clone(),
                batch.user,
                queue.clone(),
                spec,
                spec_json,
                now,
                times,
            );
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

    /// Reads and checks a batch whole (shared by the submission and its dry run): the scope,
    /// the queue, and each demand's key, spec and resolved times, or every problem found.
    pub(super) fn read_batch(
        &self,
        now: Time,
        batch: &DemandBatch<'_>,
    ) -> Result<ReadBatch, RmError> {
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
            scope
                .target(reference)
                .is_some_and(|key| self.demands.by_key.contains_key(&key))
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
        Ok(ReadBatch {
            scope,
            queue,
            ready,
        })
    }

    /// Rows 2-3 carried out: the demand moves to the state [`RmCore::admission`] decides, and
    /// keeps its place in the plan when it got one.
    fn decide_demand(&mut self, now: Time, key: &str) {
        let Some(decided) = self.admission(now, key) else {
            return;
        };
        if let Some(plan) = decided.plan {
            if let Some(d) = self.demands.by_key.get_mut(key) {
                d.plan = Some(plan);
            }
        }
        self.demand_transition(now, key, decided.state, decided.reason, decided.detail);
    }

    /// Rows 2-3: a gang must fit on the nodes (§3.3's packability, unless
    /// `weft.reservation.packability-check` is off: then it is admitted on the aggregate, as
    /// Hadoop would, and waits for room); a demand that needs a
    /// plan is placed by its queue's plan (`planning`), or, under no reservable queue, refused
    /// when strict and run best-effort when loose. Places the reservation (the dry run puts
    /// the plans back afterwards) but moves no demand.
    pub(super) fn admission(&mut self, now: Time, key: &str) -> Option<Admitted> {
        let d = self.demands.by_key.get(key)?;
        let default = self.config.demand_default_strategy;
        let packability = self
            .config
            .scheduler
            .properties()
            .reservation_packability_check;
        if let Some(detail) = packability.then(|| self.unpackable(d)).flatten() {
            return Some(Admitted::to(
                DemandState::Failed,
                DemandReason::Unpackable,
                detail,
            ));
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
        let waiting_order = d.spec.order_by.is_some() && !self.order_truth(d).now;
        match self.plan_admission(now, key, needs_plan) {
            Admission::NoPlan => {}
            Admission::Placed(plan, reason) => {
                let detail = format!(
                    "reservation {} in {}: [{}, {}) ms",
                    plan.reservation,
                    plan.queue,
                    plan.start.as_millis(),
                    plan.end.as_millis()
                );
                return Some(Admitted {
                    state: DemandState::Accepted,
                    reason,
                    detail,
                    plan: Some(plan),
                });
            }
            Admission::Refused(reason, detail) => {
                return Some(Admitted::to(DemandState::Failed, reason, detail));
            }
            Admission::BestEffort(detail) => {
                return Some(Admitted::to(
                    DemandState::Accepted,
                    DemandReason::BestEffort,
                    detail,
                ));
            }
        }
        let d = self.demands.by_key.get(key)?;
        Some(if needs_plan && refuse {
            Admitted::to(
                DemandState::Failed,
                DemandReason::NotReservable,
                format!(
                    "a strict {} with a Duration needs a plan, and queue '{}' is under no reservable queue",
                    if strict_start { "Start" } else { "DeadLine" },
                    d.queue
                ),
            )
        } else if needs_plan {
            Admitted::to(
                DemandState::Accepted,
                DemandReason::BestEffort,
                String::new(),
            )
        } else if waiting_order {
            Admitted::to(
                DemandState::Accepted,
                DemandReason::WaitingOrder,
                String::new(),
            )
        } else {
            Admitted::to(
                DemandState::Accepted,
                DemandReason::Unconstrained,
                String::new(),
            )
        })
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
}
