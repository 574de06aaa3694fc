//! The rows of §3.4 that time and other demands drive (5, 6, 8, 9, 12, 13, 15): checked for
//! every live demand on each tick and after every demand input, at the input's `now`.
//!
//! A strict end (row 15: the lease of a strict Duration, a strict DeadLine) with containers
//! still running warns before it kills, as Hadoop's preemption does: the demand notes the
//! reason without leaving its state, the AM finds the containers in its allocate answer's
//! preemption message, and `yarn.scheduler.fair.waitTimeBeforeKill` later (§3.2.3's table,
//! 15 s by default) the demand fails with that reason and its containers are killed. A demand
//! whose containers all end inside the grace ends as it would have (FINISHED `ok`, or `late`
//! past a DeadLine).

use weft_demand_lang::window::Bound;
use weft_demand_lang::Strategy;
use weft_store::DemandState;
use weft_types::{Duration, Time};

use super::{Demand, DemandReason};
use crate::RmCore;

/// What [`RmCore::due_transition`] decides: the state, its reason and the detail.
type Due = Option<(DemandState, DemandReason, String)>;

impl Demand {
    /// The warning of a strict end, when one was given: its instant (ms) and the reason the
    /// demand fails with at the kill. A loose DeadLine's `deadline_missed` is a note, not a
    /// warning.
    pub(crate) fn kill_warning(&self, default: Strategy) -> Option<(u64, DemandReason)> {
        let strict_deadline = self
            .spec
            .deadline
            .as_ref()
            .is_some_and(|f| self.spec.effective(f, default) == Strategy::Strict);
        self.timeline
            .iter()
            .find(|t| {
                !t.state.is_final()
                    && (t.reason == DemandReason::DurationExceeded
                        || (strict_deadline && t.reason == DemandReason::DeadlineMissed))
            })
            .map(|t| (t.at.as_millis(), t.reason))
    }

    /// Its containers not yet ended.
    pub(crate) fn live_containers(&self) -> u64 {
        self.allocated.saturating_sub(self.completed)
    }
}

impl RmCore {
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
        self.follow_start_holes(now, &live);
        if std::mem::take(&mut self.demands.plans_changed) {
            self.follow_plans(now);
        }
    }

    /// How long a strict end warns before it kills: `yarn.scheduler.fair.waitTimeBeforeKill`
    /// (§3.2.3), in ms.
    pub(crate) fn demand_kill_grace(&self) -> u64 {
        u64::try_from(self.config.scheduler.properties().wait_time_before_kill_ms).unwrap_or(0)
    }

    /// A strict end of a demand whose containers run: the warning (its state kept, the kill
    /// due one grace later), or FAILED at once when nothing runs or the grace is 0.
    fn strict_end(&self, now: Time, d: &Demand, reason: DemandReason, what: &str) -> Due {
        let live = d.live_containers();
        let grace = self.demand_kill_grace();
        let running = matches!(d.state(), DemandState::Allocated | DemandState::Monitoring);
        if running && live > 0 && grace > 0 {
            let kill_at = now.as_millis().saturating_add(grace);
            return Some((
                d.state(),
                reason,
                format!(
                    "{what} with {live} containers running: they are warned and killed at {kill_at} ms unless they end first"
                ),
            ));
        }
        let detail = if live > 0 {
            format!("{what} with {live} containers running")
        } else {
            what.to_owned()
        };
        Some((DemandState::Failed, reason, detail))
    }

    /// One demand's timers and order at `now`; true if it changed.
    pub(crate) fn step_demand(&mut self, now: Time, key: &str) -> bool {
        // `advance_demands` steps the demands live when it started; one that ended in an
        // earlier pass has nothing due (a warned strict end would otherwise fail again, once
        // per pass: scenario `demand-c1-strict`).
        let Some(d) = self
            .demands
            .by_key
            .get(key)
            .filter(|d| !d.state().is_final())
        else {
            return false;
        };
        let Some((state, reason, detail)) = self.due_transition(now, d) else {
            return false;
        };
        self.demand_transition(now, key, state, reason, detail);
        if reason == DemandReason::LeaseOverrun {
            self.uncarry_demand_app(now, key);
        }
        true
    }

    fn due_transition(&self, now: Time, d: &Demand) -> Due {
        let default = self.config.demand_default_strategy;
        let t = now.as_millis();
        if let Some((warned, reason)) = d.kill_warning(default) {
            // Warned: only the kill is due (what the AM does meanwhile ends the demand).
            let grace = self.demand_kill_grace();
            return (t >= warned.saturating_add(grace)).then(|| {
                (
                    DemandState::Failed,
                    reason,
                    format!(
                        "{} containers still ran {grace} ms after the warning: killed",
                        d.live_containers()
                    ),
                )
            });
        }
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
                // A planned demand is activated at its planned start - lead (§3.3), not by
                // its window: a deferred one's window has closed before its plan begins.
                let activation = d.plan.as_ref().map(|p| {
                    let lead = self
                        .reservations
                        .plan(&p.queue)
                        .map_or(Duration(0), |plan| self.demand_lead(plan.step()));
                    p.start.as_millis().saturating_sub(lead.0)
                });
                let activated = activation.is_none_or(|at| t >= at);
                if window_closed(0) {
                    if strict(start_strategy) {
                        return failed(
                            DemandReason::WindowExpired,
                            "the Start window closed before the demand could start".to_owned(),
                        );
                    }
                    return (order_ok && activated).then(|| {
                        (
                            DemandState::Allocating,
                            DemandReason::WindowMissed,
                            "the Start window closed; continuing without a time bound".to_owned(),
                        )
                    });
                }
                let start_ok = match activation {
                    Some(at) => t >= at,
                    None => window_dropped || d.times.start.as_ref().is_none_or(|w| w.holds(t, 0)),
                };
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
                        let held = if d.am.as_ref().is_some_and(|am| !am.gangs.is_empty()) {
                            let held = self.demand_holds().get(&d.key).copied().unwrap_or(0);
                            format!("; its gangs' {held} held members are released")
                        } else {
                            String::new()
                        };
                        return failed(
                            DemandReason::WindowExpired,
                            format!(
                                "the Start window closed after {} missed opportunities{held}",
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
                self.deadline_due(now, d, deadline_passed, deadline_strategy)
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
                self.deadline_due(now, d, deadline_passed, deadline_strategy)
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
                        return self.strict_end(
                            now,
                            d,
                            DemandReason::DurationExceeded,
                            "the lease ended",
                        );
                    }
                    if !d.noted(DemandReason::LeaseOverrun) {
                        let detail = match self.demand_carrier(d) {
                            Some((_, plan)) => format!(
                                "the lease ended; its application leaves the reservation for {plan}'s default queue and runs on best-effort"
                            ),
                            None => "the lease ended; its containers run on best-effort".to_owned(),
                        };
                        return Some((DemandState::Monitoring, DemandReason::LeaseOverrun, detail));
                    }
                }
                self.deadline_due(now, d, deadline_passed, deadline_strategy)
            }
        }
    }

    /// A passed deadline: under strict FAILED (after the warning's grace when containers
    /// run), noted once under loose.
    fn deadline_due(&self, now: Time, d: &Demand, passed: bool, strategy: Option<Strategy>) -> Due {
        if !passed || d.noted(DemandReason::DeadlineMissed) {
            return None;
        }
        if strategy == Some(Strategy::Strict) {
            return self.strict_end(now, d, DemandReason::DeadlineMissed, "the DeadLine passed");
        }
        Some((
            d.state(),
            DemandReason::DeadlineMissed,
            "the DeadLine passed".to_owned(),
        ))
    }
}

/// The deadline as far as it is known: an absolute one, or START plus a relative one.
pub(super) fn effective_deadline(d: &Demand) -> Option<u64> {
    let relative = match (d.times.deadline.after_start, d.first_allocation) {
        (Some(ms), Some(start)) => Some(start.as_millis().saturating_add(ms)),
        _ => None,
    };
    match (d.times.deadline.at, relative) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}
