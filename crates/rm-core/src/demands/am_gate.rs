//! The AM at a scheduled time (spec §3.4; scenario C15): an application submitted with a
//! demand (`weft-demand`) stays ACCEPTED, "waiting for scheduled start at …", and its AM is
//! asked at the first demand's planned start − (lead + `weft.demand.am-lead`): no user-supplied
//! lead time. The scheduler took the app without an AM ask; `Event::AttemptRestarted` on an
//! app that holds nothing is how the AM is asked later (no change in crates/sched).

use weft_sched::Event;
use weft_store::{AppState, DemandState, FinalStatus};
use weft_types::yarn_id::ApplicationId;
use weft_types::{AppId, Time};

use super::DemandBatch;
use crate::{RmCore, RmError};

impl RmCore {
    /// Admits a new application's `weft-demand`, bound to it. Refused (an invalid demand, or
    /// one that failed at once, e.g. `unplannable`): the application ends FAILED with the
    /// reason, and the caller is told (REST's 400).
    pub(crate) fn admit_app_demands(
        &mut self,
        now: Time,
        app: ApplicationId,
    ) -> Result<(), RmError> {
        let Some((user, value)) = self
            .apps
            .get(&app)
            .and_then(|a| Some((a.sub.user.clone(), a.sub.demand.clone()?)))
        else {
            return Ok(());
        };
        let admitted = self.submit_demands(
            now,
            DemandBatch {
                user: &user,
                queue: None,
                application: Some(app),
                demands: &value,
                pointer: "/weft-demand",
            },
        );
        let refusal = match admitted {
            Err(e) => Some(e),
            Ok(reports) => {
                let failed: Vec<String> = reports
                    .iter()
                    .filter(|r| r.state == DemandState::Failed)
                    .map(|r| {
                        let detail = r.timeline.last().map_or("", |t| t.detail.as_str());
                        format!("demand {} FAILED ({}): {detail}", r.key, r.reason.as_str())
                    })
                    .collect();
                match reports.first() {
                    _ if !failed.is_empty() => Some(RmError::InvalidDemand(failed.join("; "))),
                    Some(first) => {
                        self.demands.am_gates.insert(app, first.key.clone());
                        None
                    }
                    None => None,
                }
            }
        };
        if let Some(e) = refusal {
            self.finish_app(
                now,
                app,
                AppState::Failed,
                FinalStatus::Failed,
                format!("Application {app} was refused: its weft-demand: {e}"),
                false,
            );
            return Err(e);
        }
        self.ask_due_ams(now);
        Ok(())
    }

    /// When the AM of `app` is due: its demand's planned start − (lead + am-lead); without a
    /// plan, the demand's earliest start − am-lead while it waits, else now.
    fn am_due(&self, key: &str) -> Option<(u64, u64)> {
        let d = self.demands.by_key.get(key)?;
        let am_lead = self.config.demand_am_lead.0;
        match &d.plan {
            Some(plan) if !d.state().is_final() => {
                let lead = self
                    .reservations
                    .plan(&plan.queue)
                    .map_or(0, |p| self.demand_lead(p.step()).0);
                let start = plan.start.as_millis();
                Some((start, start.saturating_sub(lead.saturating_add(am_lead))))
            }
            _ if d.state() == DemandState::Accepted => {
                let start = d.times.earliest_start;
                Some((start, start.saturating_sub(am_lead)))
            }
            _ => None,
        }
    }

    /// Asks the scheduler for every held-back AM that came due by `now`; the others say in
    /// their diagnostics when they start.
    pub(crate) fn ask_due_ams(&mut self, now: Time) {
        if self.demands.am_gates.is_empty() {
            return;
        }
        let gates: Vec<(ApplicationId, String)> = self
            .demands
            .am_gates
            .iter()
            .map(|(a, k)| (*a, k.clone()))
            .collect();
        let mut asked = false;
        for (app, key) in gates {
            let live = self.apps.get(&app).is_some_and(|a| !a.state.is_final());
            if !live {
                self.demands.am_gates.remove(&app);
                continue;
            }
            match self.am_due(&key) {
                Some((start, due)) if now.as_millis() < due => {
                    let waiting = format!(
                        "waiting for scheduled start at {start} ms (its AM is asked at {due} ms)"
                    );
                    if let Some(a) = self.apps.get_mut(&app) {
                        a.diagnostics = waiting;
                    }
                }
                _ => {
                    self.demands.am_gates.remove(&app);
                    let Some(am) = self.apps.get(&app).map(|a| a.sub.am_resource) else {
                        continue;
                    };
                    if let Some(a) = self.apps.get_mut(&app) {
                        a.diagnostics.clear();
                    }
                    // The app holds nothing yet, so this only asks for its AM.
                    let _ = self.sched.handle(
                        now,
                        Event::AttemptRestarted {
                            app: AppId(app.seq),
                            am_resource: Some(am),
                        },
                    );
                    asked = true;
                }
            }
        }
        if asked {
            self.drain(now);
        }
    }
}
