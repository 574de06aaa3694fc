//! Demands an ApplicationMaster sends with its heartbeat (issue 17 item 5; spec §3.6 "AM
//! protocol"): admitted as REST's demands are, their containers asked of the scheduler only
//! while the state machine says ALLOCATING (tagged with the DemandID, or as a gang), and the
//! scheduler's answers driving the machine: an allocation (`Decision::Allocated` with the
//! demand's tag, or `Decision::Gang` for a gang) is `demand_allocated`, the NM's first RUNNING
//! report of a container its claim, its end `demand_completed`. A demand that fails gives back
//! what it holds: its outstanding asks withdrawn, its unlaunched containers released (claim
//! expiry, as Hadoop's ContainerAllocationExpirer), and, unless the claim timer was the cause,
//! its running containers killed.

use std::ops::Bound;

use serde_json::Value;
use weft_demand_lang::{Gang, ResourceDescription};
use weft_sched::{AskTag, ContainerAsk, Event, GangAsk, GangChange, GangStyle};
use weft_store::{DemandPlacementRecord, DemandState};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{AppId, Resource, Time};

use super::{DemandBatch, DemandReason, Scope};
use crate::core::ContainerState;
use crate::model::{exit, AllocateRequest, AmDemand, DemandUpdate};
use crate::{RmCore, RmError};

/// The most demands one application may send over the AM protocol (each is kept, and each
/// allocate answer may report all of them).
pub const MAX_AM_DEMANDS_PER_APP: usize = 1000;

/// Scheduler gang ids at and above this are the RM's, for demands' gangs; an AM's own
/// `GangRequest`s stay below.
pub const DEMAND_GANG_IDS: u64 = 1 << 63;

/// The AM side of a demand an AM sent.
#[derive(Clone, Debug, Default)]
pub(crate) struct AmAsks {
    /// Where its containers should go (persisted).
    pub(crate) placement: DemandPlacementRecord,
    /// Its containers were asked of this RM's scheduler (not persisted: a restarted RM asks
    /// again for what is left).
    pub(crate) asked: bool,
    /// What it held was given back after it left ALLOCATING for good or failed.
    pub(crate) settled: bool,
    /// Its asks are withdrawn while its Start window is in a hole (`blackout`; not
    /// persisted: each tick decides again).
    pub(crate) paused: bool,
    /// Its gangs' ids in the scheduler.
    pub(crate) gangs: Vec<u64>,
    /// Asked without what its Start window bound (a loose window closed, §3.4 row 8): its
    /// gangs fell back and its locality was relaxed.
    pub(crate) unbound: bool,
    /// Members of delivered gangs already counted whose `Decision::Allocated` is still due.
    pub(crate) members_due: u64,
    /// How many timeline entries the AM has been told about.
    pub(crate) told: usize,
    /// The description as the AM sent it, so an identical resend (a retried call) is no error
    /// (`Null` after a restart: a resend is then refused as a duplicate).
    pub(crate) sent: Value,
}

/// What a tagged allocation is.
pub(crate) enum TagOutcome {
    /// No demand's: an ordinary container.
    Plain,
    /// A container of the demand with this DemandID.
    Demand(u64),
    /// Its demand no longer wants it: given back to the scheduler.
    Surplus,
}

fn ask_tag(demand_id: u64) -> AskTag {
    AskTag(demand_id.saturating_add(1))
}

/// The demand's priority as written (the parser checks its type; 0 when absent).
fn raw_priority(description: &Value) -> i64 {
    description
        .get("ResourceRequest")
        .and_then(|r| r.get("priority"))
        .and_then(Value::as_i64)
        .unwrap_or(0)
}

fn request_size(spec: &ResourceDescription) -> Resource {
    Resource::new(
        i64::try_from(spec.request.memory_mb).unwrap_or(i64::MAX),
        i64::try_from(spec.request.vcores).unwrap_or(i64::MAX),
    )
}

impl RmCore {
    /// The app's demands sent over the AM protocol that still run (may ask or hold).
    fn live_am_demands(&self, app: ApplicationId) -> impl Iterator<Item = &super::Demand> {
        self.demands
            .by_key
            .values()
            .filter(move |d| d.scope == Scope::App(app) && d.am.is_some() && !d.state().is_final())
    }

    /// The AM-protocol checks of a heartbeat's demands and of its asks against them, before
    /// anything changes: the counts, each demand's size, and one priority per demand (the
    /// scheduler withdraws asks per priority, so a demand's priority is its own among the
    /// app's asks). The demand language's checks follow in [`RmCore::submit_demands`].
    pub(crate) fn check_am_demands(
        &self,
        attempt: AttemptId,
        req: &AllocateRequest,
    ) -> Result<(), RmError> {
        let app = attempt.app;
        let held_by_demands: std::collections::BTreeMap<i64, u64> = self
            .live_am_demands(app)
            .map(|d| {
                (
                    i64::from(d.spec.request.priority.unwrap_or(0)),
                    d.spec.demand_id,
                )
            })
            .collect();
        for ask in &req.asks {
            if let Some(id) = held_by_demands.get(&i64::from(ask.priority)) {
                return Err(RmError::InvalidRequest(format!(
                    "ask at priority {} uses the priority of demand {}: ask at another priority",
                    ask.priority,
                    Scope::App(app).key(*id)
                )));
            }
        }
        if req.demands.is_empty() {
            return Ok(());
        }
        let known = self
            .demands
            .by_key
            .values()
            .filter(|d| d.scope == Scope::App(app) && d.am.is_some())
            .count();
        if known.saturating_add(req.demands.len()) > MAX_AM_DEMANDS_PER_APP {
            return Err(RmError::InvalidDemand(format!(
                "/demands: {} more demands would make {} for {app}; at most {MAX_AM_DEMANDS_PER_APP} per application",
                req.demands.len(),
                known.saturating_add(req.demands.len())
            )));
        }
        let asked = self.apps.get(&app).and_then(|a| a.current()).map(|t| {
            t.asked
                .iter()
                .filter(|(_, (_, n))| *n > 0)
                .map(|(p, _)| i64::from(*p))
                .collect::<Vec<_>>()
        });
        let mut taken = held_by_demands;
        for (i, demand) in req.demands.iter().enumerate() {
            let pointer = format!("/demands/{i}");
            let priority = raw_priority(&demand.description);
            let id = demand.description.get("DemandID").and_then(Value::as_u64);
            let resend = id.is_some_and(|id| self.is_resend(app, id, &demand.description));
            if resend {
                continue;
            }
            if let Some(other) = taken.insert(priority, id.unwrap_or(0)) {
                return Err(RmError::InvalidDemand(format!(
                    "{pointer}/ResourceRequest/priority: priority {priority} is demand {}'s; give each demand its own priority",
                    Scope::App(app).key(other)
                )));
            }
            if asked.as_ref().is_some_and(|a| a.contains(&priority)) {
                return Err(RmError::InvalidDemand(format!(
                    "{pointer}/ResourceRequest/priority: the application has ordinary asks at priority {priority}; give the demand its own priority"
                )));
            }
            self.check_am_demand_size(&pointer, &demand.description)?;
        }
        Ok(())
    }

    /// A demand's size and count as the scheduler will take them (parsed leniently here; the
    /// full checks come at submission).
    fn check_am_demand_size(&self, pointer: &str, description: &Value) -> Result<(), RmError> {
        let default = self.config.demand_default_strategy;
        let Ok(parsed) = weft_demand_lang::parse_value(description, pointer, default, &|_| true)
        else {
            // Submission names the problem with every other one.
            return Ok(());
        };
        for spec in &parsed.demands {
            if spec.request.resources.values().any(|v| *v > 0) {
                return Err(RmError::InvalidDemand(format!(
                    "{pointer}/ResourceRequest/capability/resources: custom resource types are not asked through demands yet"
                )));
            }
            self.check_size(
                &format!("{pointer}/ResourceRequest/capability"),
                request_size(spec),
            )?;
            let members = match spec.gang {
                Gang::Off => 0,
                Gang::All => spec.request.num_containers,
                Gang::Size(g) => g,
            };
            if spec.request.num_containers > u64::from(u32::MAX)
                || members > u64::from(weft_sched::MAX_GANG_SIZE)
            {
                return Err(RmError::InvalidDemand(format!(
                    "{pointer}/ResourceRequest/num-containers: {} containers is more than one demand may ask over the AM protocol (at most {} in a gang)",
                    spec.request.num_containers,
                    weft_sched::MAX_GANG_SIZE
                )));
            }
        }
        Ok(())
    }

    fn is_resend(&self, app: ApplicationId, demand_id: u64, description: &Value) -> bool {
        self.demands
            .by_key
            .get(&Scope::App(app).key(demand_id))
            .and_then(|d| d.am.as_ref())
            .is_some_and(|am| !am.sent.is_null() && am.sent == *description)
    }

    /// Admits a heartbeat's demands (after [`RmCore::check_am_demands`]) through the REST
    /// path's checks; an identical resend of an admitted one is skipped. Each new demand's
    /// containers are asked of the scheduler as soon as it is ALLOCATING.
    pub(crate) fn admit_am_demands(
        &mut self,
        now: Time,
        attempt: AttemptId,
        demands: Vec<AmDemand>,
    ) -> Result<(), RmError> {
        if demands.is_empty() {
            return Ok(());
        }
        let app = attempt.app;
        let unsent: Vec<AmDemand> = demands
            .into_iter()
            .filter(|d| {
                let id = d.description.get("DemandID").and_then(Value::as_u64);
                !id.is_some_and(|id| self.is_resend(app, id, &d.description))
            })
            .collect();
        let fresh: Vec<AmDemand> = unsent
            .into_iter()
            .filter_map(|d| self.adopt_bound_demand(now, app, d))
            .collect();
        if fresh.is_empty() {
            return Ok(());
        }
        let user = self
            .apps
            .get(&app)
            .map(|a| a.sub.user.clone())
            .ok_or_else(|| RmError::UnknownApp(app.to_string()))?;
        let values = Value::Array(fresh.iter().map(|d| d.description.clone()).collect());
        let reports = self.submit_demands(
            now,
            DemandBatch {
                user: &user,
                queue: None,
                application: Some(app),
                demands: &values,
                pointer: "/demands",
            },
        )?;
        for (report, sent) in reports.iter().zip(fresh) {
            self.take_over_asks(now, &report.key, sent);
        }
        Ok(())
    }

    /// The AM's copy of a demand already bound to its application (its `weft-demand`, or a
    /// REST submission with its application id), whose containers nobody asks for yet: the
    /// AM takes the asking over (C15: the AM started at the demand's time then asks for its
    /// tasks), keeping the demand's state, resolved times and plan. Anything else is left
    /// for admission, which refuses a differing one as a duplicate.
    fn adopt_bound_demand(
        &mut self,
        now: Time,
        app: ApplicationId,
        sent: AmDemand,
    ) -> Option<AmDemand> {
        let Some(id) = sent.description.get("DemandID").and_then(Value::as_u64) else {
            return Some(sent);
        };
        let key = Scope::App(app).key(id);
        let default = self.config.demand_default_strategy;
        let same = self.demands.by_key.get(&key).is_some_and(|d| {
            d.am.is_none()
                && !d.state().is_final()
                && weft_demand_lang::parse_value(&sent.description, "", default, &|_| true)
                    .ok()
                    .and_then(|mut parsed| parsed.demands.pop())
                    .is_some_and(|mut spec| {
                        spec.strategy.get_or_insert(default);
                        spec == d.spec
                    })
        });
        if !same {
            return Some(sent);
        }
        self.take_over_asks(now, &key, sent);
        None
    }

    /// Demand `key`'s containers are asked for by its AM from now on, at `sent`'s places.
    fn take_over_asks(&mut self, now: Time, key: &str, sent: AmDemand) {
        if let Some(d) = self.demands.by_key.get_mut(key) {
            let mut placement = DemandPlacementRecord {
                hosts: sent.hosts,
                racks: sent.racks,
            };
            if let Some(name) = d.spec.request.resource_name.as_deref() {
                if name.starts_with('/') {
                    placement.racks.push(name.to_owned());
                } else if name != "*" && !name.is_empty() {
                    placement.hosts.push(name.to_owned());
                }
            }
            d.am = Some(AmAsks {
                placement,
                sent: sent.description,
                ..AmAsks::default()
            });
        }
        self.persist_demand(key);
        self.sync_demand_asks(now, key);
    }

    /// Brings what the scheduler has for an AM demand in line with its state: asks while
    /// ALLOCATING, nothing before, and once FAILED its asks withdrawn and its containers
    /// given back. Called after every transition; idempotent.
    pub(crate) fn sync_demand_asks(&mut self, now: Time, key: &str) {
        self.sync_asks(now, key);
        self.index_asking(key);
    }

    fn sync_asks(&mut self, now: Time, key: &str) {
        let Some(d) = self.demands.by_key.get(key) else {
            return;
        };
        let Some(am) = &d.am else {
            return;
        };
        let Scope::App(app) = d.scope else {
            return;
        };
        let state = d.state();
        if state == DemandState::Allocating && !am.asked && !am.paused {
            self.ask_for_demand(now, key, app);
        } else if state == DemandState::Allocating
            && !am.unbound
            && d.noted(DemandReason::WindowMissed)
        {
            self.drop_time_bound(now, key, app);
        } else if state == DemandState::Failed && !am.settled {
            let reason = d.reason();
            let demand_id = d.spec.demand_id;
            let priority = d.spec.request.priority.unwrap_or(0);
            let gangs = am.gangs.clone();
            let asked = am.asked;
            if let Some(am) = self.demands.by_key.get_mut(key).and_then(|d| d.am.as_mut()) {
                am.settled = true;
            }
            let seq = AppId(app.seq);
            if asked {
                // Failing errors only when the app is gone, and then so are its asks.
                let _ = self.sched.handle(
                    now,
                    Event::CancelAsks {
                        app: seq,
                        priority: Some(priority),
                        count: None,
                    },
                );
                for gang in gangs {
                    let _ = self
                        .sched
                        .handle(now, Event::GangCancelled { app: seq, gang });
                    self.demands.gang_owner.remove(&(seq, gang));
                }
            }
            if reason != DemandReason::AppFailed {
                self.end_demand_containers(now, app, demand_id, key, reason);
            }
        }
    }

    /// A loose demand's Start window closed while it asks (§3.4 row 8: the time bound is
    /// dropped and it continues). Each gang falls back at once (C7): its held members handed
    /// over (the scheduler's `FellBack`, counted as allocations in
    /// [`RmCore::demand_gang_changed`]) and its missing ones asked as ordinary containers with
    /// the demand's tag. Ordinary asks held to their places (`relaxLocality` false) are asked
    /// again relaxed (C4: "locality relaxed"). A strict demand fails instead, and its gangs
    /// are cancelled with their holds released.
    fn drop_time_bound(&mut self, now: Time, key: &str, app: ApplicationId) {
        let Some(d) = self.demands.by_key.get_mut(key) else {
            return;
        };
        let remaining = d.requested().saturating_sub(d.allocated);
        let priority = d.spec.request.priority.unwrap_or(0);
        let size = request_size(&d.spec);
        let tag = ask_tag(d.spec.demand_id);
        let held_to_places = !d.spec.request.relax_locality.unwrap_or(true);
        let Some(am) = d.am.as_mut() else {
            return;
        };
        am.unbound = true;
        let gangs = std::mem::take(&mut am.gangs);
        let placement = am.placement.clone();
        let seq = AppId(app.seq);
        let mut events: Vec<Event> = gangs
            .into_iter()
            .map(|gang| Event::GangExpired { app: seq, gang })
            .collect();
        let placed = !placement.hosts.is_empty() || !placement.racks.is_empty();
        if events.is_empty() && held_to_places && placed && remaining > 0 {
            events.push(Event::CancelAsks {
                app: seq,
                priority: Some(priority),
                count: None,
            });
            events.push(Event::Ask {
                app: seq,
                ask: ContainerAsk {
                    priority,
                    resources: size,
                    count: u32::try_from(remaining).unwrap_or(u32::MAX),
                    hosts: placement.hosts,
                    racks: placement.racks,
                    relax_locality: true,
                    tag,
                },
            });
        }
        for event in events {
            // Only an app the scheduler no longer holds is refused, and its asks went with it.
            let _ = self.sched.handle(now, event);
        }
    }

    /// Asks the scheduler for what the demand still lacks: ordinary asks tagged with its
    /// DemandID, or its gangs (one for `Gang: true`, one per g for `Gang: g`; ordinary asks
    /// once a loose Start window closed, since the gang fell back then).
    fn ask_for_demand(&mut self, now: Time, key: &str, app: ApplicationId) {
        let Some(d) = self.demands.by_key.get(key) else {
            return;
        };
        let Some(am) = &d.am else {
            return;
        };
        let seq = AppId(app.seq);
        let remaining = d.requested().saturating_sub(d.allocated);
        let count = u32::try_from(remaining).unwrap_or(u32::MAX);
        let size = request_size(&d.spec);
        let priority = d.spec.request.priority.unwrap_or(0);
        let tag = ask_tag(d.spec.demand_id);
        let strict_start = d.spec.start.as_ref().is_some_and(|f| {
            d.spec.effective(f, self.config.demand_default_strategy)
                == weft_demand_lang::Strategy::Strict
        });
        // A hold lasts while the Start window may still open (§3.3: a hold ends when it closes).
        let hold_timeout = d
            .times
            .start
            .as_ref()
            .and_then(|w| w.latest_end())
            .map(|end| weft_types::Duration::from_millis(end.saturating_sub(now.as_millis())));
        let unbound = d.noted(DemandReason::WindowMissed);
        let gang_members = match d.spec.gang {
            _ if unbound => None,
            Gang::Off => None,
            Gang::All => Some(count),
            Gang::Size(g) => Some(u32::try_from(g).unwrap_or(u32::MAX)),
        };
        let placement = am.placement.clone();
        let relax = d.spec.request.relax_locality.unwrap_or(true) || unbound;
        if let Some(members) = gang_members.filter(|m| *m > 0 && count > 0) {
            if self.gang_waits_for_nodes(now, seq, size, members) {
                self.gang_reask.demands.insert(key.to_owned());
                return;
            }
        }
        let mut events = Vec::new();
        let mut gangs = Vec::new();
        match gang_members {
            Some(members) if members > 0 && count > 0 => {
                for _ in 0..count / members {
                    let gang = self.demands.next_gang_id();
                    gangs.push(gang);
                    events.push(Event::GangAsk {
                        app: seq,
                        ask: GangAsk {
                            gang,
                            priority,
                            resources: size,
                            size: members,
                            hold_timeout,
                            style: if strict_start {
                                GangStyle::Hard
                            } else {
                                GangStyle::Soft
                            },
                            tag,
                        },
                    });
                }
            }
            _ if count > 0 => events.push(Event::Ask {
                app: seq,
                ask: ContainerAsk {
                    priority,
                    resources: size,
                    count,
                    hosts: placement.hosts,
                    racks: placement.racks,
                    relax_locality: relax,
                    tag,
                },
            }),
            _ => {}
        }
        if let Some(am) = self.demands.by_key.get_mut(key).and_then(|d| d.am.as_mut()) {
            am.asked = true;
            am.unbound = unbound;
            am.gangs.extend(gangs.iter().copied());
        }
        for gang in gangs {
            self.demands.gang_owner.insert((seq, gang), key.to_owned());
        }
        for event in events {
            if let Err(e) = self.sched.handle(now, event) {
                self.demand_transition(
                    now,
                    key,
                    DemandState::Failed,
                    DemandReason::AskRefused,
                    e.to_string(),
                );
                return;
            }
        }
    }

    /// The AM's kills and verdicts name its own live demands, a verdict one that is ALLOCATED
    /// or MONITORING (checked before anything changes).
    pub(crate) fn check_demand_verdicts(
        &self,
        attempt: AttemptId,
        req: &AllocateRequest,
    ) -> Result<(), RmError> {
        let ids = req
            .kill_demands
            .iter()
            .map(|id| (*id, "kill_demands", None))
            .chain(
                req.complete_demands
                    .iter()
                    .map(|(id, _)| (*id, "complete_demands", Some(()))),
            );
        for (id, field, verdict) in ids {
            let key = Scope::App(attempt.app).key(id);
            let d = self
                .demands
                .by_key
                .get(&key)
                .filter(|d| d.am.is_some())
                .ok_or_else(|| {
                    RmError::InvalidRequest(format!("{field}: {key} is no demand of this AM"))
                })?;
            let state = d.state();
            let allowed = match verdict {
                None => !state.is_final(),
                Some(()) => matches!(state, DemandState::Allocated | DemandState::Monitoring),
            };
            if !allowed {
                return Err(RmError::InvalidRequest(format!(
                    "{field}: demand {key} is {}",
                    super::demand_state_name(state)
                )));
            }
        }
        Ok(())
    }

    /// Applies checked kills and verdicts (a demand both killed and judged is killed).
    pub(crate) fn apply_demand_verdicts(
        &mut self,
        now: Time,
        attempt: AttemptId,
        req: &AllocateRequest,
    ) {
        // Most Allocates carry no verdict: no copy of the user for them.
        if req.kill_demands.is_empty() && req.complete_demands.is_empty() {
            return;
        }
        let user = self
            .apps
            .get(&attempt.app)
            .map(|a| a.sub.user.clone())
            .unwrap_or_default();
        for id in &req.kill_demands {
            let key = Scope::App(attempt.app).key(*id);
            // Checked live above; a kill earlier in this call may have ended it (a repeat).
            let _ = self.kill_demand(now, &key, &user);
        }
        for (id, succeeded) in &req.complete_demands {
            let key = Scope::App(attempt.app).key(*id);
            let _ = self.demand_done(now, &key, *succeeded);
        }
    }

    /// A new attempt of `app` started: the scheduler dropped the old one's asks and gangs, so
    /// its AM demands still ALLOCATING ask again for what they lack.
    pub(crate) fn demands_attempt_restarted(&mut self, now: Time, app: ApplicationId) {
        let keys: Vec<String> = self.live_am_demands(app).map(|d| d.key.clone()).collect();
        let seq = AppId(app.seq);
        for key in keys {
            if let Some(am) = self
                .demands
                .by_key
                .get_mut(&key)
                .and_then(|d| d.am.as_mut())
            {
                am.asked = false;
                am.members_due = 0;
                for gang in std::mem::take(&mut am.gangs) {
                    self.demands.gang_owner.remove(&(seq, gang));
                }
            }
            self.sync_demand_asks(now, &key);
        }
    }

    /// The current attempt of `app` failed and a new one starts: the old attempt's containers
    /// are about to be killed with it (Weft keeps no containers across attempts), so an AM
    /// demand holding live ones has lost them (§3.4 row 16, "app attempt lost without
    /// work-preserving recovery": FAILED `app_failed`). Called before the kills, so they are
    /// not counted as the demand's completions (which would end it FINISHED ok). A demand with
    /// nothing live (still ALLOCATING with no container, or every container already ended)
    /// carries on: the new attempt asks again for what it lacks.
    pub(crate) fn demands_attempt_lost(&mut self, now: Time, failed: AttemptId) {
        let lost: Vec<(String, u64)> = self
            .live_am_demands(failed.app)
            .filter(|d| d.allocated > d.completed)
            .map(|d| (d.key.clone(), d.allocated - d.completed))
            .collect();
        for (key, live) in lost {
            self.demand_transition(
                now,
                &key,
                DemandState::Failed,
                DemandReason::AppFailed,
                format!("attempt {failed} failed: its {live} live containers of this demand were killed with it"),
            );
        }
        self.advance_demands(now);
    }

    /// Gives back a failed demand's containers: the unlaunched ones released, the running ones
    /// killed (except on claim expiry, which takes only what was never launched).
    fn end_demand_containers(
        &mut self,
        now: Time,
        app: ApplicationId,
        demand_id: u64,
        key: &str,
        reason: DemandReason,
    ) {
        let mine: Vec<(ContainerId, bool)> = self
            .containers
            .of_app(app)
            .filter(|(_, c)| c.demand == Some(demand_id))
            .map(|(id, c)| (id, c.state == ContainerState::Running))
            .collect();
        for (id, running) in mine {
            if running && reason == DemandReason::ClaimExpired {
                continue;
            }
            let (status, diagnostics) = if running {
                (
                    exit::KILLED_BY_RESOURCEMANAGER,
                    format!(
                        "Container killed: demand {key} failed ({})",
                        reason.as_str()
                    ),
                )
            } else {
                (
                    exit::ABORTED,
                    format!(
                        "Container expired since it was unused: demand {key} failed ({})",
                        reason.as_str()
                    ),
                )
            };
            self.container_done(now, id, status, diagnostics, true);
        }
    }

    /// The demand a tagged allocation belongs to, counted as its allocation; a container its
    /// demand no longer wants goes back to the scheduler.
    pub(crate) fn demand_of_tag(
        &mut self,
        now: Time,
        app: AppId,
        container: weft_types::ContainerId,
        tag: AskTag,
    ) -> TagOutcome {
        if tag == AskTag::NONE {
            return TagOutcome::Plain;
        }
        let demand_id = tag.0 - 1;
        let key = Scope::App(self.app_key(app)).key(demand_id);
        let Some(am) = self
            .demands
            .by_key
            .get_mut(&key)
            .and_then(|d| d.am.as_mut())
        else {
            return TagOutcome::Plain;
        };
        if am.members_due > 0 {
            am.members_due -= 1;
            return TagOutcome::Demand(demand_id);
        }
        match self.demand_allocated(now, &key, 1) {
            Ok(()) => TagOutcome::Demand(demand_id),
            Err(_) => {
                let _ = self.release_to_sched(now, app, container);
                TagOutcome::Surplus
            }
        }
    }

    /// A demand gang's news: delivered members (or a soft fallback's handed ones) are its
    /// allocation; a hard timeout is its Start window closing; a refusal, unpackable.
    pub(crate) fn demand_gang_changed(
        &mut self,
        now: Time,
        app: AppId,
        gang: u64,
        change: GangChange,
    ) {
        let Some(key) = self.demands.gang_owner.get(&(app, gang)).cloned() else {
            return;
        };
        let (members, ended) = match &change {
            GangChange::Delivered { size } => (u64::from(*size), true),
            GangChange::FellBack { handed, .. } => (u64::from(*handed), true),
            GangChange::Failed { .. } | GangChange::Refused { .. } => (0, true),
            GangChange::Admitted | GangChange::Holding { .. } => (0, false),
        };
        if ended {
            self.demands.gang_owner.remove(&(app, gang));
        }
        if members > 0 && self.demand_allocated(now, &key, members).is_ok() {
            if let Some(am) = self
                .demands
                .by_key
                .get_mut(&key)
                .and_then(|d| d.am.as_mut())
            {
                am.members_due = am.members_due.saturating_add(members);
            }
        }
        let allocating = self
            .demands
            .by_key
            .get(&key)
            .is_some_and(|d| d.state() == DemandState::Allocating);
        match change {
            GangChange::Failed { released } if allocating => self.demand_transition(
                now,
                &key,
                DemandState::Failed,
                DemandReason::WindowExpired,
                format!("its gang's hold timed out with the Start window; {released} held members released"),
            ),
            GangChange::Refused { reason } if allocating => self.demand_transition(
                now,
                &key,
                DemandState::Failed,
                DemandReason::Unpackable,
                reason,
            ),
            _ => {}
        }
    }

    /// The NM reported a demand's container running for the first time: its claim.
    pub(crate) fn demand_container_claimed(&mut self, now: Time, container: ContainerId) {
        let Some(demand_id) = self.containers.get(&container).and_then(|c| c.demand) else {
            return;
        };
        let key = Scope::App(container.app).key(demand_id);
        self.mark_demand_container_claimed(&key, container);
        // A demand that failed or finished meanwhile counts nothing more.
        let _ = self.demand_claimed(now, &key, 1);
    }

    /// A demand's container ended.
    pub(crate) fn demand_container_ended(
        &mut self,
        now: Time,
        container: ContainerId,
        demand_id: u64,
    ) {
        let key = Scope::App(container.app).key(demand_id);
        self.forget_demand_container(&key, container);
        if self.demand_completed(now, &key, 1).is_err() {
            // Not counted (the demand moved on), but no longer live.
            self.persist_demand(&key);
        }
    }

    /// The attempt's demands whose state changed since its last allocate answer.
    pub(crate) fn take_demand_updates(&mut self, app: ApplicationId) -> Vec<DemandUpdate> {
        let mut updates = Vec::new();
        // Every Allocate asks: a cluster without demands builds no key for it.
        if self.demands.by_key.is_empty() {
            return updates;
        }
        // An app's keys (`<app>/<id>`) are contiguous in the map: visiting only them keeps an
        // Allocate call's cost independent of every other app's demands (the map is never
        // pruned, so a scan of it grew with the cluster's whole history).
        let prefix = app_prefix(app);
        for (_, d) in self
            .demands
            .by_key
            .range_mut::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
        {
            if d.scope != Scope::App(app) {
                continue;
            }
            let Some(am) = d.am.as_mut() else {
                continue;
            };
            let Some(last) = d.timeline.last() else {
                continue;
            };
            if am.told == d.timeline.len() {
                continue;
            }
            am.told = d.timeline.len();
            updates.push(DemandUpdate {
                demand_id: d.spec.demand_id,
                state: last.state,
                reason: last.reason,
                detail: last.detail.clone(),
                at: last.at,
            });
        }
        updates
    }

    /// The app's containers whose demand is under a strict end's warning (§3.4 row 15), for
    /// the allocate answer's preemption message beside the scheduler's own marks: the AM has
    /// until the kill to finish or give them back.
    pub(crate) fn demand_warned_containers(&self, app: ApplicationId) -> Vec<ContainerId> {
        if self.demands.by_key.is_empty() {
            return Vec::new();
        }
        let default = self.config.demand_default_strategy;
        let prefix = app_prefix(app);
        let warned: Vec<u64> = self
            .demands
            .by_key
            .range::<str, _>((Bound::Included(prefix.as_str()), Bound::Unbounded))
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter(|(_, d)| d.scope == Scope::App(app) && !d.state().is_final())
            .filter(|(_, d)| d.kill_warning(default).is_some())
            .map(|(_, d)| d.spec.demand_id)
            .collect();
        if warned.is_empty() {
            return Vec::new();
        }
        self.containers
            .of_app(app)
            .filter(|(_, c)| c.demand.is_some_and(|id| warned.contains(&id)))
            .map(|(id, _)| id)
            .collect()
    }

    /// Members each demand's gangs hold now (the scheduler's `gang_holds`), by demand key.
    pub(crate) fn demand_holds(&self) -> std::collections::BTreeMap<String, u64> {
        let mut held = std::collections::BTreeMap::new();
        if self.demands.gang_owner.is_empty() {
            return held;
        }
        for hold in self.sched.gang_holds() {
            if let Some(key) = self.demands.gang_owner.get(&(hold.app, hold.gang)) {
                *held.entry(key.clone()).or_insert(0) += u64::from(hold.held);
            }
        }
        held
    }
}

/// Where an app's demand keys (`<app>/<id>`) begin.
fn app_prefix(app: ApplicationId) -> String {
    let mut prefix = app.to_string();
    prefix.push('/');
    prefix
}
