//! The rows of §3.4 that time and other demands drive (5, 6, 8, 9, 12, 13, 15): checked for
//! every live demand on each tick and after every demand input, at the input's `now`.

use weft_demand_lang::window::Bound;
use weft_demand_lang::Strategy;
use weft_store::DemandState;
use weft_types::{Duration, Time};

use super::{Demand, DemandReason};
use crate::RmCore;

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
        if std::mem::take(&mut self.demands.plans_changed) {
            self.follow_plans(now);
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
