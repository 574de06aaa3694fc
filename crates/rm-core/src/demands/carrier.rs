//! The demand's reservation carries its app (spec §3.3's carriers, in their simplest honest
//! form): while a planned demand of an application runs and its reservation's leaf exists
//! (`root.<plan>.<reservation id>`, made by the scheduler's plan follower), the app runs in
//! that leaf, so its asks get the leaf's entitlement; when the demand ends the app goes back
//! to the plan's default queue before the reservation leaves the plan (the follower would
//! otherwise move it, or kill it without move-on-expiry). One leaf per app at a time: of
//! several planned demands, the first to run takes the app. A loose lease that ends with
//! containers running (`lease_overrun`, §3.2.3) demotes the app the same way, to the plan's
//! default queue, where it continues best-effort (Hadoop's move-on-expiry); it is not carried
//! again.
//!
//! The time-bounded floor (§3.3: the demand's asks first, up to reserved(now), non-reserved
//! usage preempted with the usual warn → kill) is the leaf's own guarantee: the follower is
//! told the reservation opens one lead before its planned start (when the demand goes
//! ALLOCATING) at reserved + the app's AM (`plan_follower::carried_view`), and under
//! `weft.reservation.enforce=guarantee` that is the leaf's min share with a min-share
//! preemption timeout of 0. The first update after activation finds the leaf starved, warns
//! the victims, kills them waitTimeBeforeKill later, and the freed room is handed to the app at
//! the next heartbeat: within the lead (waitTimeBeforeKill + 2 heartbeats). The leaf holds only
//! the carried app (and any app submitted with the reservation's id), so "its asks first
//! within the leaf" holds without a per-demand order; the AM is added because it moves in with
//! the app and would otherwise take one container's worth of the guarantee. Under `hadoop`
//! enforcement only the leaf's weight changes (Hadoop's follower), and the floor is whatever
//! fair-share preemption gives.

use weft_sched::QueueAccess;
use weft_store::DemandState;
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::{Demand, DemandReason, Scope};
use crate::RmCore;

impl RmCore {
    /// Moves every app whose planned demand runs into its reservation's leaf, once the leaf
    /// exists.
    pub(crate) fn carry_demand_apps(&mut self, now: Time) {
        let moves: Vec<(ApplicationId, String)> = self
            .demands
            .by_key
            .values()
            .filter(|d| {
                matches!(
                    d.state(),
                    DemandState::Allocating | DemandState::Allocated | DemandState::Monitoring
                ) && !d.noted(DemandReason::LeaseOverrun)
            })
            .filter_map(|d| {
                let Scope::App(app) = d.scope else {
                    return None;
                };
                let plan = d.plan.as_ref()?;
                let a = self.apps.get(&app).filter(|a| !a.state.is_final())?;
                let leaf = format!("{}.{}", plan.queue, plan.reservation);
                // Already in a reservation's leaf (this one or another demand's).
                if a.queue.starts_with(&format!("{}.reservation_", plan.queue)) {
                    return None;
                }
                self.sched
                    .queue_access(&leaf, &a.sub.user, QueueAccess::Submit)
                    .map(|_| (app, leaf))
            })
            .collect();
        for (app, leaf) in moves {
            // A refusal (the leaf's limits) leaves the app where it is; tried again next tick.
            let _ = self.move_app(now, app, &leaf, None);
        }
    }

    /// The app demand `d`'s reservation carries now (it runs in the reservation's leaf), with
    /// the plan's queue.
    pub(crate) fn demand_carrier(&self, d: &Demand) -> Option<(ApplicationId, String)> {
        let (Scope::App(app), Some(plan)) = (&d.scope, &d.plan) else {
            return None;
        };
        let leaf = format!("{}.{}", plan.queue, plan.reservation);
        self.apps
            .get(app)
            .is_some_and(|a| !a.state.is_final() && a.queue == leaf)
            .then(|| (*app, plan.queue.clone()))
    }

    /// Demand `key`'s reservation stops carrying its app (the demand ended, or its loose lease
    /// overran): the app, if in the reservation's leaf, goes to the plan's default queue.
    pub(crate) fn uncarry_demand_app(&mut self, now: Time, key: &str) {
        let Some((app, plan_queue)) = self
            .demands
            .by_key
            .get(key)
            .and_then(|d| self.demand_carrier(d))
        else {
            return;
        };
        // The scheduler maps a plan queue to its default leaf (`<plan>-default`).
        let _ = self.move_app(now, app, &plan_queue, None);
    }
}
