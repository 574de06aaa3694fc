//! Recovered attempts whose AM may be gone: after an RM restart an attempt keeps its AM
//! container until a node reports it. If the AM's node re-registers without it, or no node
//! reports it within the grace period, the attempt fails at once and the next one starts,
//! instead of waiting out the AM expiry (YARN waits for the AM liveness monitor).

use std::collections::BTreeSet;

use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::Time;

use crate::core::RmCore;

impl RmCore {
    /// A node registered reporting `running`: confirms the AM containers it holds and fails
    /// the attempts whose AM container was on it but is not reported.
    pub(crate) fn confirm_ams_on(
        &mut self,
        now: Time,
        node: &str,
        running: &BTreeSet<ContainerId>,
    ) {
        let on_node: Vec<(ApplicationId, ContainerId)> = self
            .unconfirmed_am
            .iter()
            .filter(|(_, (am, n, _))| n == node || running.contains(am))
            .map(|(app, (am, _, _))| (*app, *am))
            .collect();
        for (app, am) in on_node {
            self.unconfirmed_am.remove(&app);
            if !running.contains(&am) {
                self.fail_unconfirmed(
                    now,
                    app,
                    am,
                    format!("AM container {am} was not running on {node} when the node re-registered after an RM restart"),
                );
            }
        }
    }

    /// An AM confirmed itself by registering again.
    pub(crate) fn confirm_am(&mut self, app: ApplicationId) {
        self.unconfirmed_am.remove(&app);
    }

    /// Fails the attempts whose AM no node reported within the grace period.
    pub(crate) fn expire_unconfirmed_ams(&mut self, now: Time) {
        let due: Vec<(ApplicationId, ContainerId)> = self
            .unconfirmed_am
            .iter()
            .filter(|(_, (_, _, deadline))| *deadline <= now)
            .map(|(app, (am, _, _))| (*app, *am))
            .collect();
        let grace = self.config.am_recovery_grace.as_millis();
        for (app, am) in due {
            self.unconfirmed_am.remove(&app);
            self.fail_unconfirmed(
                now,
                app,
                am,
                format!("AM container {am} was not reported by any node within {grace} ms of the RM's recovery"),
            );
        }
    }

    fn fail_unconfirmed(&mut self, now: Time, app: ApplicationId, am: ContainerId, diag: String) {
        let still_current = self.apps.get(&app).is_some_and(|a| {
            !a.state.is_final()
                && a.current()
                    .is_some_and(|t| !t.state.is_final() && t.am_container == Some(am))
        });
        if still_current {
            self.attempt_failed(now, app, diag);
            self.drain(now);
        }
    }
}
