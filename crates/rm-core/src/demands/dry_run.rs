//! The dry run of a demand submission (spec §3.6, `POST /demands/plan`): what each demand of
//! a batch would get if it were submitted now, by the same reading, checks and admission
//! (rows 2-3) as the submission, with nothing changed.
//!
//! Admission places real reservations in the plans (that is how it learns where a demand
//! fits, and a later demand of the batch sees an earlier one's place, as OrderBy needs). The
//! dry run therefore works on the live state and puts back what admission touches: the
//! reservation system (cloned before, restored after: plans are a few skylines per
//! reservation), the demands it inserted, the store writes it queued and the plan flags. Nothing
//! else is touched by admission; `dry_run_changes_nothing` checks the reports and the store.
//!
//! "The reservations it would displace" (§3.6) are always none: Weft's agents place a demand
//! only in what the plan has free and never move or drop a committed reservation to make
//! room (the replanner drops reservations only when capacity is lost).

use weft_store::DemandState;
use weft_types::{Resource, Time};

use super::submit::{Admitted, ReadBatch};
use super::{Demand, DemandBatch, DemandReason};
use crate::{RmCore, RmError};

/// What one demand of a dry run would get.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DemandPreview {
    /// The key it would have (`application_<ts>_<n>/<id>` or `~<user>/<id>`).
    pub key: String,
    /// The queue it would run in.
    pub queue: String,
    /// The state admission would put it in (ACCEPTED or FAILED).
    pub state: DemandState,
    /// Why.
    pub reason: DemandReason,
    /// The detail of that transition (where it was placed, or why it was refused).
    pub detail: String,
    /// The reservable queue whose plan decides it, when there is one.
    pub plan_queue: Option<String>,
    /// Where its reservation's resources would begin.
    pub planned_start: Option<Time>,
    /// Where they would end.
    pub planned_end: Option<Time>,
    /// The least the sharing policy leaves the user in the plan over the demand's window,
    /// before this demand is placed (none without a plan or a Duration).
    pub headroom: Option<Resource>,
}

impl RmCore {
    /// Answers what `batch` would get if submitted at `now`: one preview per demand in
    /// submission order, or the submission's own error (an invalid batch, an unknown or
    /// finished application, a foreign user). Changes nothing.
    pub fn plan_demands(
        &mut self,
        now: Time,
        batch: DemandBatch<'_>,
    ) -> Result<Vec<DemandPreview>, RmError> {
        let ReadBatch {
            scope,
            queue,
            ready,
        } = self.read_batch(now, &batch)?;
        let default = self.config.demand_default_strategy;
        let saved_reservations = self.reservations.clone();
        let saved_outputs = self.outputs.len();
        let saved_flags = (self.demands.plans_changed, self.demands.plan_capacity_fresh);
        self.demands.plan_capacity_fresh = false;
        let mut keys = Vec::with_capacity(ready.len());
        for (key, mut spec, times) in ready {
            spec.strategy.get_or_insert(default);
            let demand = Demand::submitted(
                key.clone(),
                scope.clone(),
                batch.user,
                queue.clone(),
                spec,
                String::new(),
                now,
                times,
            );
            self.demands.by_key.insert(key.clone(), demand);
            keys.push(key);
        }
        let mut previews = Vec::with_capacity(keys.len());
        for key in &keys {
            let headroom = self.plan_headroom(now, key);
            let Some(Admitted {
                state,
                reason,
                detail,
                plan,
            }) = self.admission(now, key)
            else {
                continue;
            };
            let plan_queue = self
                .demands
                .by_key
                .get(key)
                .and_then(|d| self.plan_queue_of(&d.queue));
            previews.push(DemandPreview {
                key: key.clone(),
                queue: queue.clone(),
                state,
                reason,
                detail,
                plan_queue,
                planned_start: plan.as_ref().map(|p| p.start),
                planned_end: plan.as_ref().map(|p| p.end),
                headroom,
            });
            // A later demand of the batch ordered after this one sees its planned end.
            if let Some(d) = self.demands.by_key.get_mut(key) {
                d.plan = plan;
            }
        }
        for key in &keys {
            self.demands.by_key.remove(key);
        }
        self.reservations = saved_reservations;
        self.outputs.truncate(saved_outputs);
        (self.demands.plans_changed, self.demands.plan_capacity_fresh) = saved_flags;
        Ok(previews)
    }
}
