//! Start windows with holes (§3.2.3: NOT makes blackout windows; an OR of disjoint intervals
//! leaves a gap): a demand that became a scheduling candidate inside its window stays
//! ALLOCATING while the window is shut but not closed for good, yet no instant in the hole is
//! admissible (Start is "the set of admissible allocation instants"). Its asks are withdrawn
//! when the hole begins and made again when it ends (C6: never allocated inside a blackout).
//! The state machine has no transition for this (§3.4), so nothing is printed or persisted:
//! each tick decides again from the window, and a restarted RM's first tick withdraws what
//! restoring asked.

use weft_sched::Event;
use weft_store::DemandState;
use weft_types::{AppId, Time};

use super::{Demand, DemandReason, Scope};
use crate::RmCore;

/// The demand's Start window holds no instant now but will again (a hole), and its lower
/// bound has passed: a planned demand activated one lead before its window opens is not in a
/// hole, it is early on purpose (§3.3's lead).
fn in_hole(d: &Demand, now: u64) -> bool {
    if d.noted(DemandReason::WindowMissed) || now < d.times.earliest_start {
        return false;
    }
    d.times
        .start
        .as_ref()
        .is_some_and(|w| !w.holds(now, d.missed) && !w.closed_for_good(now, d.missed))
}

impl RmCore {
    /// Withdraws the asks of AM demands whose Start window is in a hole, and asks again for
    /// those whose hole ended (run by each tick after the demands' timers, over the demands
    /// that were live before them).
    pub(crate) fn follow_start_holes(&mut self, now: Time, live: &[String]) {
        let t = now.as_millis();
        let changes: Vec<(String, bool)> = live
            .iter()
            .filter_map(|key| {
                let d = self.demands.by_key.get(key)?;
                if d.state() != DemandState::Allocating {
                    return None;
                }
                let paused = d.am.as_ref()?.paused;
                let hole = in_hole(d, t);
                (hole != paused).then(|| (key.clone(), hole))
            })
            .collect();
        for (key, hole) in changes {
            if hole {
                self.withdraw_for_hole(now, &key);
            } else if let Some(am) = self
                .demands
                .by_key
                .get_mut(&key)
                .and_then(|d| d.am.as_mut())
            {
                am.paused = false;
                self.sync_demand_asks(now, &key);
            }
        }
    }

    /// The hole began: what the demand asks (ordinary asks at its priority, its gangs, whose
    /// held members go back) is withdrawn until it ends; containers it already got stay.
    fn withdraw_for_hole(&mut self, now: Time, key: &str) {
        let Some(d) = self.demands.by_key.get_mut(key) else {
            return;
        };
        let Scope::App(app) = d.scope else {
            return;
        };
        let priority = d.spec.request.priority.unwrap_or(0);
        let Some(am) = d.am.as_mut() else {
            return;
        };
        am.paused = true;
        let asked = std::mem::replace(&mut am.asked, false);
        let gangs = std::mem::take(&mut am.gangs);
        let seq = AppId(app.seq);
        if asked {
            // Refused only when the scheduler no longer holds the app, and its asks went with it.
            let _ = self.sched.handle(
                now,
                Event::CancelAsks {
                    app: seq,
                    priority: Some(priority),
                    count: None,
                },
            );
        }
        for gang in gangs {
            let _ = self
                .sched
                .handle(now, Event::GangCancelled { app: seq, gang });
            self.demands.gang_owner.remove(&(seq, gang));
        }
        self.index_asking(key);
        self.drain(now);
    }
}
