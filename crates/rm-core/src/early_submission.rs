//! Early submission into a reservation (`weft.reservation.accept-early-submission`, Weft
//! only, default false; time-aware-demands spec §3.4 "The AM at a scheduled time", §5 B3).
//! Hadoop rejects an app submitted with the id of a reservation that is not yet active; with
//! the setting on, an app naming a reservation that exists and starts later is taken into its
//! plan's default leaf without an AM ask and held in ACCEPTED. Its AM is asked the demand lead
//! before the reservation's start (the lead of planned demands, `demands::planning`), and it
//! moves into the reservation's leaf once the plan follower opens it, so it runs by the start.
//! A reservation deleted (or gone) while the app waits fails the app with a diagnostic that
//! says so; an unknown reservation id is rejected at submission as in Hadoop.
//!
//! Nothing extra is persisted: the app record carries its reservation id, and recovery holds
//! an app whose reservation still starts later again (`recovery::resume`).

use std::collections::BTreeMap;

use weft_plan::ReservationId;
use weft_sched::Event;
use weft_store::{AppState, FinalStatus, Write};
use weft_types::yarn_id::ApplicationId;
use weft_types::{AppId, Time};

use crate::apps::app_record;
use crate::RmCore;

/// The apps held for their reservation's start.
#[derive(Clone, Debug, Default)]
pub(crate) struct EarlySubmissions {
    waiting: BTreeMap<ApplicationId, Waiting>,
}

#[derive(Clone, Debug)]
struct Waiting {
    reservation: ReservationId,
    /// Whether its AM was asked (or already runs, after a restart).
    am_asked: bool,
}

/// Where a held app stands at `now`.
enum Step {
    Wait {
        start: u64,
        due: u64,
    },
    AskAm,
    Enter {
        leaf: String,
    },
    /// Over before the app got into its leaf: it stays in `<plan>-default`, as an app whose
    /// reservation ended does.
    Over,
    Deleted,
}

impl RmCore {
    /// The reservation a submission naming `reservation` waits for, when the setting is on and
    /// the reservation exists and starts after `now`; `None`: the submission goes Hadoop's way.
    pub(crate) fn early_reservation(&self, now: Time, reservation: &str) -> Option<ReservationId> {
        let properties = self.config.scheduler.properties();
        if !properties.reservation_accept_early_submission {
            return None;
        }
        let id: ReservationId = reservation.trim().parse().ok()?;
        let r = self.reservations.find(&id)?;
        (r.start > now).then_some(id)
    }

    /// Holds `app` (in the scheduler without an AM ask) until `reservation` starts.
    pub(crate) fn hold_for_reservation(
        &mut self,
        now: Time,
        app: ApplicationId,
        reservation: ReservationId,
        am_asked: bool,
    ) {
        self.early.waiting.insert(
            app,
            Waiting {
                reservation,
                am_asked,
            },
        );
        self.advance_early_submissions(now);
    }

    /// Asks the AMs that came due, moves the apps whose reservation's leaf is open, and fails
    /// those whose reservation went away.
    pub(crate) fn advance_early_submissions(&mut self, now: Time) {
        if self.early.waiting.is_empty() {
            return;
        }
        let held: Vec<(ApplicationId, Waiting)> = self
            .early
            .waiting
            .iter()
            .map(|(a, w)| (*a, w.clone()))
            .collect();
        for (app, waiting) in held {
            let live = self.apps.get(&app).is_some_and(|a| !a.state.is_final());
            if !live {
                self.early.waiting.remove(&app);
                continue;
            }
            match self.early_step(now, &waiting) {
                Step::Wait { start, due } => {
                    let text = if waiting.am_asked {
                        format!(
                            "waiting for its reservation {} to start at {start} ms (its AM was asked at {due} ms)",
                            waiting.reservation
                        )
                    } else {
                        format!(
                            "waiting for its reservation {} to start at {start} ms (its AM is asked at {due} ms)",
                            waiting.reservation
                        )
                    };
                    if let Some(a) = self.apps.get_mut(&app) {
                        a.diagnostics = text;
                    }
                }
                Step::AskAm => {
                    if let Some(w) = self.early.waiting.get_mut(&app) {
                        w.am_asked = true;
                    }
                    self.ask_early_am(now, app);
                    // The diagnostics say what it waits for now.
                    if let Step::Wait { start, due } = self.early_step(
                        now,
                        &Waiting {
                            am_asked: true,
                            ..waiting
                        },
                    ) {
                        if let Some(a) = self.apps.get_mut(&app) {
                            a.diagnostics = format!(
                                "waiting for its reservation {} to start at {start} ms (its AM was asked at {due} ms)",
                                waiting.reservation
                            );
                        }
                    }
                }
                Step::Enter { leaf } => {
                    if !waiting.am_asked {
                        self.ask_early_am(now, app);
                        if let Some(w) = self.early.waiting.get_mut(&app) {
                            w.am_asked = true;
                        }
                    }
                    self.enter_reservation_leaf(now, app, &leaf);
                }
                Step::Over => {
                    self.early.waiting.remove(&app);
                    if !waiting.am_asked {
                        self.ask_early_am(now, app);
                    }
                    if let Some(a) = self.apps.get_mut(&app) {
                        a.diagnostics.clear();
                    }
                }
                Step::Deleted => {
                    self.early.waiting.remove(&app);
                    self.finish_app(
                        now,
                        app,
                        AppState::Failed,
                        FinalStatus::Failed,
                        format!(
                            "Application {app} was waiting for reservation {}, which was deleted before it started",
                            waiting.reservation
                        ),
                        false,
                    );
                }
            }
        }
    }

    fn early_step(&self, now: Time, waiting: &Waiting) -> Step {
        let id = &waiting.reservation;
        let (Some(r), Some(queue)) = (self.reservations.find(id), self.reservations.queue_of(id))
        else {
            return Step::Deleted;
        };
        let lead = self
            .reservations
            .plan(queue)
            .map_or(0, |p| self.demand_lead(p.step()).0);
        let start = r.start.as_millis();
        let due = start.saturating_sub(lead);
        if now >= r.end {
            Step::Over
        } else if now.as_millis() >= start {
            Step::Enter {
                leaf: format!("{queue}.{id}"),
            }
        } else if now.as_millis() >= due && !waiting.am_asked {
            Step::AskAm
        } else {
            Step::Wait { start, due }
        }
    }

    /// Asks the scheduler for the AM of an app that holds nothing yet (as `demands::am_gate`
    /// does). An app with a `weft-demand` has its AM asked by that demand's gate instead.
    fn ask_early_am(&mut self, now: Time, app: ApplicationId) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        if a.sub.demand.is_some() {
            return;
        }
        let am = a.sub.am_resource;
        let _ = self.sched.handle(
            now,
            Event::AttemptRestarted {
                app: AppId(app.seq),
                am_resource: Some(am),
            },
        );
        self.drain(now);
    }

    /// Moves a held app into its reservation's leaf once the follower has opened it (it is
    /// tried again at the next tick otherwise).
    fn enter_reservation_leaf(&mut self, now: Time, app: ApplicationId, leaf: &str) {
        let moved = self.sched.handle(
            now,
            Event::Move {
                app: AppId(app.seq),
                queue: leaf.to_string(),
            },
        );
        self.drain(now);
        if moved.is_err() {
            return;
        }
        self.early.waiting.remove(&app);
        let name = self
            .sched
            .queue_name(AppId(app.seq))
            .unwrap_or(leaf)
            .to_string();
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        a.queue = name;
        a.diagnostics.clear();
        let record = app_record(a);
        self.persist(vec![Write::PutApp(record)]);
    }
}
