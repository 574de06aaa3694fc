//! Time-driven rules, run by [`RmCore::tick`]: the scheduler's periodic update, NM expiry
//! (LOST), AM expiry (attempt failure and retry), and the cleanup of finished AMs that do not
//! exit.

use weft_store::AttemptState;
use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::{Duration, Time};

use crate::core::RmCore;
use crate::model::NodeState;

impl RmCore {
    /// The scheduler's update interval (`yarn.scheduler.fair.update-interval-ms`, negative
    /// values fall back to 500 ms as in Hadoop).
    pub fn update_interval(&self) -> Duration {
        let ms = self.sched.config().properties().update_interval_ms;
        Duration::from_millis(if ms < 0 { 500 } else { ms as u64 })
    }

    /// When the scheduler next wants to be woken between ticks (`None`: nothing is timed); the
    /// driver then calls [`RmCore::timeout`].
    pub fn poll_timeout(&self) -> Option<Time> {
        self.sched.poll_timeout()
    }

    /// Wakes the scheduler for what came due by `now` (see [`RmCore::poll_timeout`]).
    pub fn timeout(&mut self, now: Time) {
        self.latest = self.latest.max(now);
        let _ = self.sched.handle(now, weft_sched::Event::Timeout);
        self.drain(now);
    }

    /// Advances time: runs the scheduler update when due, expires silent NMs and AMs, stops
    /// finished AMs that outstayed the AM expiry, and runs the demands' timers. Call it often (every few hundred ms).
    pub fn tick(&mut self, now: Time) {
        self.latest = self.latest.max(now);
        self.roll_keys(now);
        self.expire_unconfirmed_ams(now);
        self.advance_demands(now);
        self.tick_plans(now);
        self.ask_due_ams(now);
        self.advance_early_submissions(now);
        self.carry_demand_apps(now);
        self.reask_recovered_gangs(now);
        if now >= self.next_update {
            let _ = self.sched.handle(now, weft_sched::Event::Update);
            self.drain(now);
            self.next_update = now + self.update_interval();
        }
        let nm_expiry = self.config.nm_expiry;
        let mut lost: Vec<String> = self
            .nodes
            .iter()
            .filter(|(_, n)| matches!(n.state, NodeState::Running | NodeState::Unhealthy))
            .filter(|(_, n)| now.since(n.last_heartbeat) > nm_expiry)
            .map(|(_, n)| n.id.clone())
            .collect();
        lost.sort_unstable();
        for node in lost {
            self.node_lost(now, &node);
        }
        let am_expiry = self.config.am_expiry;
        let expired: Vec<(ApplicationId, String)> = self
            .apps
            .values()
            .filter(|a| !a.state.is_final())
            .filter_map(|a| a.current())
            .filter(|t| {
                matches!(
                    t.state,
                    AttemptState::Allocated | AttemptState::Launched | AttemptState::Running
                )
            })
            .filter(|t| now.since(t.last_contact) > am_expiry)
            .map(|t| {
                (
                    t.id.app,
                    format!(
                        "ApplicationMaster for attempt {} timed out: no contact for {} ms (AM expiry {} ms)",
                        t.id,
                        now.since(t.last_contact).as_millis(),
                        am_expiry.as_millis()
                    ),
                )
            })
            .collect();
        for (app, diag) in expired {
            self.attempt_failed(now, app, diag);
        }
        let due: Vec<ContainerId> = self
            .lingering_am
            .iter()
            .filter(|(_, (_, deadline))| *deadline <= now)
            .map(|(c, _)| *c)
            .collect();
        for c in due {
            self.end_lingering_am(c, true);
        }
    }
}
