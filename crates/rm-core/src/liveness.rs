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
        self.expire_silent_nodes(now);
        self.expire_silent_ams(now);
        let due: Vec<ContainerId> = self
            .lingering_am
            .iter()
            .filter(|(_, (_, deadline, _))| *deadline <= now)
            .map(|(c, _)| *c)
            .collect();
        for c in due {
            self.end_lingering_am(c, true);
        }
    }

    /// Marks LOST the nodes silent past the NM expiry. The walk over every node runs only
    /// once the earliest instant a node can expire has passed (a heartbeat only moves a
    /// node's instant later, and a node registered since the last walk expires no sooner
    /// than a walk-time `now` plus the expiry): at 12,000 nodes a walk every tick was a
    /// measurable share of the RM.
    fn expire_silent_nodes(&mut self, now: Time) {
        let expiry = self.config.nm_expiry;
        if self.node_expiry_check.1 == expiry && now <= self.node_expiry_check.0 {
            return;
        }
        let mut next = now + expiry;
        let mut lost: Vec<String> = Vec::new();
        for (_, n) in self.nodes.iter() {
            if !matches!(n.state, NodeState::Running | NodeState::Unhealthy) {
                continue;
            }
            if now.since(n.last_heartbeat) > expiry {
                lost.push(n.id.clone());
            } else {
                next = next.min(n.last_heartbeat + expiry);
            }
        }
        self.node_expiry_check = (next, expiry);
        lost.sort_unstable();
        for node in lost {
            self.node_lost(now, &node);
        }
    }

    /// Fails the attempts whose AM has been silent past the AM expiry, walking the apps only
    /// once the earliest instant one can expire has passed (as for nodes; attempts in any
    /// live state count toward that instant, since an attempt may reach a checked state
    /// without a new contact).
    fn expire_silent_ams(&mut self, now: Time) {
        let am_expiry = self.config.am_expiry;
        if self.am_expiry_check.1 == am_expiry && now <= self.am_expiry_check.0 {
            return;
        }
        let mut next = now + am_expiry;
        let mut expired: Vec<(ApplicationId, String)> = Vec::new();
        for t in self
            .apps
            .values()
            .filter(|a| !a.state.is_final())
            .filter_map(|a| a.current())
        {
            let checked = matches!(
                t.state,
                AttemptState::Allocated | AttemptState::Launched | AttemptState::Running
            );
            if checked && now.since(t.last_contact) > am_expiry {
                expired.push((
                    t.id.app,
                    format!(
                        "ApplicationMaster for attempt {} timed out: no contact for {} ms (AM expiry {} ms)",
                        t.id,
                        now.since(t.last_contact).as_millis(),
                        am_expiry.as_millis()
                    ),
                ));
            } else {
                next = next.min(t.last_contact + am_expiry);
            }
        }
        self.am_expiry_check = (next, am_expiry);
        for (app, diag) in expired {
            self.attempt_failed(now, app, diag);
        }
    }
}
