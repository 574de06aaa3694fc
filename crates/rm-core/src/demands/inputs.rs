//! The inputs the AM protocol and the scheduler will deliver (§3.4 rows 7, 10, 11, 14) and
//! kills (row 16): each checks the demand's state and counts first, and a refusal changes
//! nothing.

use weft_demand_lang::Gang;
use weft_store::DemandState;
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::{demand_state_name, Demand, DemandReason, DemandReport, Scope};
use crate::{RmCore, RmError};

impl RmCore {
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
    /// something is watched; otherwise it waits in ALLOCATED for completion, row 11). A
    /// demand delivered over several heartbeats has its first containers launched while it
    /// is still ALLOCATING: those claims count too (before, they were refused and the demand
    /// later failed `claim_expired` with every container running; scenario `demand-c1`).
    pub fn demand_claimed(&mut self, now: Time, key: &str, count: u64) -> Result<(), RmError> {
        let d = self.live_demand(key)?;
        Self::expect_state(
            d,
            &[DemandState::Allocating, DemandState::Allocated],
            "a claim",
        )?;
        let satisfied = d.state() == DemandState::Allocated;
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
        if all && watched && satisfied {
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
}
