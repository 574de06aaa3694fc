//! An AM's gangs (Weft's `AllocateRequest.gangs`) across an RM restart (time-aware-demands
//! spec §3.4 "Persistence and recovery", C18: held gangs re-acquired).
//!
//! A gang's held members were never launched, so no NM reports them after a restart: the
//! scheduler would simply have forgotten the gang. Each attempt therefore keeps the gangs its
//! AM asked for until the scheduler delivers them (or they fall back or fail), in its store
//! record; a restarted RM asks for each again, whole, under the same id, as soon as the app is
//! back in the scheduler. A gang is all-or-nothing, so a pending gang has no member delivered:
//! it is asked again at its full size. Its hold timeout starts again from the first member
//! held after the restart.

use weft_sched::{AskTag, Event, GangAsk, GangChange, GangStyle};
use weft_store::{GangRecord, ResourceRecord, Write};
use weft_types::yarn_id::{ApplicationId, AttemptId};
use weft_types::{AppId, Duration, Resource, Time, MAX_RESOURCE_TYPES};

use crate::apps::attempt_record;
use crate::core::RmCore;
use crate::RmError;

/// The most gangs one attempt may have asked for and not yet received (each is kept in the
/// attempt's store record).
pub const MAX_PENDING_GANGS_PER_ATTEMPT: usize = 1000;

/// Recovered gangs not yet asked of the scheduler again.
#[derive(Debug, Default)]
pub(crate) struct GangReask {
    /// Until when a gang the registered nodes cannot host yet waits (the NM expiry from the
    /// restart: a node not back by then is lost); `None` once nothing waits.
    pub(crate) until: Option<Time>,
    /// AM gangs: (application, gang id).
    pub(crate) am: std::collections::BTreeSet<(ApplicationId, u64)>,
    /// Demands whose gangs wait, by key.
    pub(crate) demands: std::collections::BTreeSet<String>,
}

/// Memory and vcores, then the other types.
const FIRST_OTHER_TYPE: usize = 2;

pub(crate) fn gang_record(ask: &GangAsk) -> GangRecord {
    let r = ask.resources;
    let mut other_resources: Vec<i64> = r.values()[FIRST_OTHER_TYPE..].to_vec();
    while other_resources.last() == Some(&0) {
        other_resources.pop();
    }
    GangRecord {
        gang: ask.gang,
        priority: ask.priority,
        resource: ResourceRecord {
            memory_mb: u64::try_from(r.memory_mb()).unwrap_or(0),
            vcores: u32::try_from(r.vcores()).unwrap_or(0),
        },
        other_resources,
        size: ask.size,
        hold_timeout_ms: ask.hold_timeout.map(|d| d.as_millis()),
        hard: ask.style == GangStyle::Hard,
    }
}

pub(crate) fn gang_from_record(r: &GangRecord) -> Result<GangAsk, String> {
    if r.other_resources.len() > MAX_RESOURCE_TYPES - FIRST_OTHER_TYPE {
        return Err(format!(
            "gang {} names {} resource types beyond memory and vcores",
            r.gang,
            r.other_resources.len()
        ));
    }
    let mut resources = Resource::new(
        i64::try_from(r.resource.memory_mb).unwrap_or(i64::MAX),
        i64::from(r.resource.vcores),
    );
    for (i, v) in r.other_resources.iter().enumerate() {
        resources.set(FIRST_OTHER_TYPE + i, *v);
    }
    Ok(GangAsk {
        gang: r.gang,
        priority: r.priority,
        resources,
        size: r.size,
        hold_timeout: r.hold_timeout_ms.map(Duration::from_millis),
        style: if r.hard {
            GangStyle::Hard
        } else {
            GangStyle::Soft
        },
        tag: AskTag::NONE,
    })
}

impl RmCore {
    /// Refuses gangs that would leave the attempt owing more than
    /// [`MAX_PENDING_GANGS_PER_ATTEMPT`] (checked before anything changes).
    pub(crate) fn check_pending_gangs(
        &self,
        attempt: AttemptId,
        asked: usize,
    ) -> Result<(), RmError> {
        let pending = self
            .apps
            .get(&attempt.app)
            .and_then(|a| a.current())
            .map_or(0, |t| t.gangs.len());
        if pending.saturating_add(asked) > MAX_PENDING_GANGS_PER_ATTEMPT {
            return Err(RmError::InvalidRequest(format!(
                "{asked} more gangs would leave {} not yet received; at most {MAX_PENDING_GANGS_PER_ATTEMPT} per attempt",
                pending.saturating_add(asked)
            )));
        }
        Ok(())
    }

    /// The scheduler took the AM's gangs: the attempt owes them until they are delivered.
    pub(crate) fn remember_gangs(&mut self, attempt: AttemptId, gangs: &[GangAsk]) {
        if gangs.is_empty() {
            return;
        }
        let Some(t) = self
            .apps
            .get_mut(&attempt.app)
            .and_then(|a| a.current_mut())
            .filter(|t| t.id == attempt)
        else {
            return;
        };
        for g in gangs {
            t.gangs.insert(g.gang, g.clone());
        }
        self.persist_current_attempt(attempt.app);
    }

    /// News of an AM's gang: once it is delivered, falls back (its rest is then ordinary
    /// asks, which the AM resends after a restart) or fails, nothing of it is owed any more.
    pub(crate) fn am_gang_changed(&mut self, app: AppId, gang: u64, change: &GangChange) {
        let over = matches!(
            change,
            GangChange::Delivered { .. }
                | GangChange::FellBack { .. }
                | GangChange::Failed { .. }
                | GangChange::Refused { .. }
        );
        if !over {
            return;
        }
        let id = self.app_key(app);
        let removed = self
            .apps
            .get_mut(&id)
            .and_then(|a| a.current_mut())
            .is_some_and(|t| t.gangs.remove(&gang).is_some());
        if removed {
            self.persist_current_attempt(id);
        }
    }

    /// After a restart: each live app's current attempt will ask the scheduler again for the
    /// gangs it was still owed, once their nodes are back ([`RmCore::reask_recovered_gangs`]).
    pub(crate) fn ask_recovered_gangs(&mut self, now: Time) {
        let owed: Vec<(ApplicationId, u64)> = self
            .apps
            .values()
            .filter(|a| a.in_sched && !a.state.is_final())
            .filter_map(|a| {
                a.current()
                    .filter(|t| !t.state.is_final())
                    .map(|t| (a.id, t))
            })
            .flat_map(|(app, t)| t.gangs.keys().map(move |g| (app, *g)))
            .collect();
        self.gang_reask.am.extend(owed);
        self.reask_recovered_gangs(now);
    }

    /// Whether a recovered gang of `members` of `size` must wait: the RM came back moments
    /// ago and the nodes that registered again cannot host it yet (the scheduler would refuse
    /// it as unpackable while the NMs are still re-registering). Hadoop's scheduler likewise
    /// waits after a work-preserving recovery (`scheduling-wait-ms`).
    pub(crate) fn gang_waits_for_nodes(
        &self,
        now: Time,
        app: AppId,
        size: Resource,
        members: u32,
    ) -> bool {
        self.gang_reask.until.is_some_and(|until| now < until)
            && self.sched.gang_unpackable(app, size, members).is_some()
    }

    /// Asks the scheduler for the recovered gangs whose nodes are back (or all that wait,
    /// once the wait is over: one still unpackable is then refused as at any time). Run when
    /// a node registers and on every tick; costs nothing once none waits.
    pub(crate) fn reask_recovered_gangs(&mut self, now: Time) {
        if self.gang_reask.am.is_empty() && self.gang_reask.demands.is_empty() {
            self.gang_reask.until = None;
            return;
        }
        for (app, gang) in std::mem::take(&mut self.gang_reask.am) {
            let Some(ask) = self
                .apps
                .get(&app)
                .filter(|a| a.in_sched && !a.state.is_final())
                .and_then(|a| a.current())
                .and_then(|t| t.gangs.get(&gang))
                .cloned()
            else {
                continue;
            };
            let seq = AppId(app.seq);
            if self.gang_waits_for_nodes(now, seq, ask.resources, ask.size) {
                self.gang_reask.am.insert((app, gang));
                continue;
            }
            let asked = self.sched.handle(now, Event::GangAsk { app: seq, ask });
            if asked.is_err() {
                if let Some(t) = self.apps.get_mut(&app).and_then(|a| a.current_mut()) {
                    t.gangs.remove(&gang);
                }
                self.persist_current_attempt(app);
            }
        }
        // Each asks again through its state machine, which defers it again if need be.
        for key in std::mem::take(&mut self.gang_reask.demands) {
            self.sync_demand_asks(now, &key);
        }
        self.drain(now);
    }

    /// The gangs `attempt` is still owed (for its AM after a resync: their members are not
    /// to be asked again as ordinary containers).
    pub(crate) fn pending_gangs(&self, attempt: &AttemptId) -> Vec<GangAsk> {
        self.apps
            .get(&attempt.app)
            .and_then(|a| a.current())
            .filter(|t| t.id == *attempt)
            .map(|t| t.gangs.values().cloned().collect())
            .unwrap_or_default()
    }

    fn persist_current_attempt(&mut self, app: ApplicationId) {
        let Some(a) = self.apps.get(&app) else {
            return;
        };
        if a.attempts.is_empty() {
            return;
        }
        let write = Write::PutAttempt(attempt_record(a, a.attempts.len() - 1));
        self.persist(vec![write]);
    }
}
