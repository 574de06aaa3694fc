//! `weft sim run` for scenario files with `driver = "rm"` (docs/scenario-format.md): the same
//! file format and output lines as the scheduler-only runner (`weft_sim::run`), replayed
//! through the RM core, [`RmCore`], so that what only the RM has is seen: reservations placed
//! by the planner, demands over the AM protocol and their state machine, the plan follower.
//!
//! Virtual time, at each instant in this order: the file's events of that instant (file
//! order), one `RmCore::tick` (and its timeout when due), then, at heartbeat instants, every
//! node's heartbeat (node order: what started since the last one, what ended) and every live
//! AM's heartbeat (it registers once its container was launched, sends what the file asked
//! of it, launches what it gets on the node that got it and releases surplus). Instants are
//! the heartbeats (every `heartbeat_interval`, so at least one tick per plan step at the
//! spec's 1 s), the scheduler's updates (the RM daemon ticks every few hundred ms), the
//! events' and the core's scheduler timers. Demand timers run on `tick`, so one is seen at
//! the first instant at or after it. Store writes are dropped; each demand
//! write names a demand whose new transitions are printed then, in the order the core made
//! them. Nothing reads a clock: the same file gives the same bytes.

mod app;
mod config;
mod lines;

use std::collections::BTreeMap;

use weft_plan::{Interpreter, ReservationDefinition, ReservationId, ReservationRequest};
use weft_rm_core::{
    AllocateRequest, AllocateResponse, AmDemand, FinalStatus, LaunchContext, NodeRegistration,
    Output, ResourceAsk, RmCore, Submission,
};
use weft_sched::SchedulerConfig;
use weft_sim::output::Obj;
use weft_sim::{Action, ReserveInterpreter, ReserveSpec, Scenario, ScheduledEvent};
use weft_store::Write;
use weft_types::yarn_id::ApplicationId;
use weft_types::{Resource, Time};

use crate::node::SimNode;
use app::{Phase, QueuedDemand, ScApp};

/// The cluster timestamp of every id in a run: ids read `application_1_0001`,
/// `reservation_1_0001`.
const CLUSTER_TS: u64 = 1;
/// Each node's id is `<host>:<port>`.
const NM_PORT: u16 = 8041;
/// An app that names no AM size gets YARN's default AM container (1 GiB, 1 vcore).
const DEFAULT_AM: Resource = Resource::new(1024, 1);
/// Without an `end`, the run stops once nothing is pending or at most this long after the
/// last event.
const IDLE_LIMIT_MS: u64 = 2 * 3_600_000;

/// What a finished run reports (also the `summary` line).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ScenarioSummary {
    /// When the run stopped (virtual ms).
    pub end_ms: u64,
    /// Containers handed out, AM containers included.
    pub allocations: u64,
}

/// The RM core refused something the scenario cannot go on without.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: at {at_ms} ms, {place}: {message}")]
pub struct ScenarioRunError {
    /// The scenario file's name.
    pub file: String,
    /// Virtual time of the failure.
    pub at_ms: u64,
    /// What was being applied, e.g. `line 12 (events[3], submit)`.
    pub place: String,
    /// Why.
    pub message: String,
}

/// Replays a `driver = "rm"` scenario, calling `out` with each output line (no newline), the
/// `summary` line last. `scheduler` is the file's scheduler configuration
/// (`weft_sim::initial_config`).
pub fn run_scenario(
    scenario: &Scenario,
    scheduler: SchedulerConfig,
    out: &mut dyn FnMut(&str),
) -> Result<ScenarioSummary, ScenarioRunError> {
    let config = config::rm_config(scenario, scheduler).map_err(|message| ScenarioRunError {
        file: scenario.file.clone(),
        at_ms: 0,
        place: "[properties]".into(),
        message,
    })?;
    let mut core = RmCore::new(config, CLUSTER_TS, Time(0));
    while core.poll_output().is_some() {}
    let mut r = Runner {
        sc: scenario,
        out,
        core,
        nodes: Vec::new(),
        sim_nodes: BTreeMap::new(),
        apps: BTreeMap::new(),
        app_names: BTreeMap::new(),
        reservations: BTreeMap::new(),
        seen: BTreeMap::new(),
        followed: BTreeMap::new(),
        queues: BTreeMap::new(),
        allocations: 0,
        place: String::new(),
    };
    r.run()
}

struct Runner<'s, 'o> {
    sc: &'s Scenario,
    out: &'o mut dyn FnMut(&str),
    core: RmCore,
    /// (host, node id) in join order: the heartbeat order.
    nodes: Vec<(String, String)>,
    sim_nodes: BTreeMap<String, SimNode>,
    apps: BTreeMap<String, ScApp>,
    /// Application id -> the scenario's name.
    app_names: BTreeMap<ApplicationId, String>,
    /// Reservation name -> id.
    reservations: BTreeMap<String, ReservationId>,
    /// Demand key -> transitions printed so far.
    seen: BTreeMap<String, usize>,
    /// Plan queue -> the entitlements last printed (`plan_follower`).
    followed: BTreeMap<String, String>,
    /// App name -> the queue it was last seen in.
    queues: BTreeMap<String, String>,
    allocations: u64,
    place: String,
}

impl Runner<'_, '_> {
    fn emit(&mut self, line: String) {
        (self.out)(&line);
    }

    fn fail(&self, at: u64, message: String) -> ScenarioRunError {
        ScenarioRunError {
            file: self.sc.file.clone(),
            at_ms: at,
            place: self.place.clone(),
            message,
        }
    }

    fn run(&mut self) -> Result<ScenarioSummary, ScenarioRunError> {
        for spec in &self.sc.nodes {
            self.place = format!("line {} (nodes)", spec.line);
            self.add_node(0, &spec.host, &spec.rack, spec.resources)?;
        }
        let hb = self.sc.heartbeat_interval.as_millis().max(1);
        let events = &self.sc.events;
        let last_event = events.last().map_or(0, |e| e.at.as_millis());
        let limit = self
            .sc
            .end
            .map_or(last_event + IDLE_LIMIT_MS, Time::as_millis);
        let mut next = 0;
        let mut t = 0;
        loop {
            while next < events.len() && events[next].at.as_millis() <= t {
                self.event(t, &events[next])?;
                next += 1;
            }
            self.place = "tick".into();
            self.core.tick(Time(t));
            if self.core.poll_timeout().is_some_and(|p| p <= Time(t)) {
                self.core.timeout(Time(t));
            }
            self.outputs(t);
            if t % hb == 0 {
                self.heartbeats(t)?;
                self.am_heartbeats(t)?;
            }
            self.plan_follower(t);
            self.app_moves(t);
            let done = next == events.len() && self.sc.end.is_none() && self.idle();
            if done || t >= limit {
                break;
            }
            // The RM daemon ticks every few hundred ms: a tick at each scheduler update too.
            let update = self.core.update_interval().as_millis().max(1);
            let mut after = ((t / hb + 1) * hb).min((t / update + 1) * update);
            if let Some(e) = events.get(next) {
                after = after.min(e.at.as_millis());
            }
            if let Some(p) = self.core.poll_timeout() {
                if p.as_millis() > t {
                    after = after.min(p.as_millis());
                }
            }
            t = after.min(limit.max(t + 1));
        }
        let line = Obj::line("summary", t)
            .field("allocations", self.allocations)
            .finish();
        self.emit(line);
        Ok(ScenarioSummary {
            end_ms: t,
            allocations: self.allocations,
        })
    }

    /// Nothing can happen any more without a new event: no demand is live, no container is
    /// due to end, no AM has something to send.
    fn idle(&self) -> bool {
        let demands_over = self
            .core
            .demands(None, None, None)
            .iter()
            .all(|d| d.state.is_final());
        let nodes_quiet = self.sim_nodes.values().all(|n| !n.has_timed());
        let apps_quiet = self.apps.values().all(|a| {
            a.phase != Phase::Live
                || (a.queued.is_empty()
                    && a.releases.is_empty()
                    && a.outstanding.values().all(|q| q.is_empty()))
        });
        demands_over && nodes_quiet && apps_quiet
    }

    fn add_node(
        &mut self,
        t: u64,
        host: &str,
        rack: &str,
        capability: Resource,
    ) -> Result<(), ScenarioRunError> {
        let id = format!("{host}:{NM_PORT}");
        self.core
            .node_register(
                Time(t),
                NodeRegistration {
                    node_id: id.clone(),
                    address: id.clone(),
                    http_address: String::new(),
                    hadoop_address: String::new(),
                    capability,
                    rack: rack.to_string(),
                    containers: Vec::new(),
                    secret: String::new(),
                },
            )
            .map_err(|e| self.fail(t, format!("node {host} could not register: {e}")))?;
        let secret = self.core.node_secret(&id).unwrap_or_default();
        self.sim_nodes.insert(id.clone(), SimNode::new(secret));
        self.nodes.push((host.to_string(), id));
        self.outputs(t);
        Ok(())
    }

    fn host_of(node_id: &str) -> &str {
        node_id.rsplit_once(':').map_or(node_id, |(h, _)| h)
    }

    fn event(&mut self, t: u64, e: &ScheduledEvent) -> Result<(), ScenarioRunError> {
        let kind = e.action.type_name();
        self.place = format!("line {} (events[{}], {kind})", e.line, e.index);
        match &e.action {
            Action::Submit {
                app,
                user,
                queue,
                am,
                priority,
                reservation,
                demand,
                claim,
                ..
            } => {
                let id = self.core.new_application(Time(t));
                let reservation = reservation.as_ref().map(|r| {
                    self.reservations
                        .get(r)
                        .map_or_else(|| r.clone(), ToString::to_string)
                });
                let submission = Submission {
                    name: app.clone(),
                    user: user.clone(),
                    queue: queue.clone(),
                    application_type: "YARN".into(),
                    priority: *priority,
                    am_resource: am.unwrap_or(DEFAULT_AM),
                    launch: LaunchContext {
                        commands: vec!["sim-am".into()],
                        ..LaunchContext::default()
                    },
                    reservation_id: reservation,
                    demand: demand.clone(),
                    ..Submission::default()
                };
                self.app_names.insert(id, app.clone());
                let mut sc_app = ScApp::new(app.clone(), id, user.clone(), *claim);
                let submitted = self.core.submit(Time(t), id, submission);
                self.outputs(t);
                let report = self.core.app_report(&id);
                let line = match (submitted, report) {
                    (Err(e), _) => {
                        sc_app.phase = Phase::Rejected;
                        lines::rejected(t, app, &e.to_string(), None)
                    }
                    (Ok(()), Some(r)) if r.state.is_final() => {
                        sc_app.phase = Phase::Rejected;
                        lines::rejected(t, app, &r.diagnostics, lines::reject_code(&r.diagnostics))
                    }
                    (Ok(()), r) => {
                        let queue = r.map(|r| r.queue);
                        if let Some(q) = &queue {
                            self.queues.insert(app.clone(), q.clone());
                        }
                        Obj::line("accepted", t)
                            .field("app", app)
                            .field("queue", queue)
                            .finish()
                    }
                };
                self.apps.insert(app.clone(), sc_app);
                self.emit(line);
            }
            Action::Ask { app, ask, duration } => {
                let Some(a) = self.live(t, app, kind) else {
                    return Ok(());
                };
                a.ask(
                    ResourceAsk {
                        priority: ask.priority,
                        resource: ask.resources,
                        count: ask.count,
                        hosts: ask.hosts.clone(),
                        racks: ask.racks.clone(),
                        relax_locality: ask.relax_locality,
                    },
                    *duration,
                );
                if a.registered {
                    self.am_call(t, app)?;
                }
            }
            Action::Demand {
                app,
                demand,
                duration,
            } => {
                let Some(a) = self.live(t, app, kind) else {
                    return Ok(());
                };
                let items: Vec<&serde_json::Value> = match demand {
                    serde_json::Value::Array(items) => items.iter().collect(),
                    one => vec![one],
                };
                for item in items {
                    if let Some(id) = item.get("DemandID").and_then(serde_json::Value::as_u64) {
                        a.demand_durations.insert(id, *duration);
                    }
                }
                let queued = QueuedDemand {
                    demand: demand.clone(),
                    event: e.index,
                    line: e.line,
                };
                a.queued.push(queued);
                if a.registered {
                    self.send_demands(t, app);
                }
            }
            Action::DemandKill { app, demand, user } => {
                let Some(a) = self.apps.get(app) else {
                    return Ok(());
                };
                let key = format!("{}/{demand}", a.id);
                let user = user.clone().unwrap_or_else(|| a.user.clone());
                let result = self.core.kill_demand(Time(t), &key, &user);
                self.outputs(t);
                if let Err(e) = result {
                    let line = Obj::line("demand_kill_refused", t)
                        .field("app", app)
                        .field("demand", demand)
                        .field("status", lines::http_status(&e))
                        .field("reason", e.to_string())
                        .finish();
                    self.emit(line);
                }
            }
            Action::Finish { app } => {
                let Some(a) = self.live(t, app, kind) else {
                    return Ok(());
                };
                let Some((attempt, token)) = a.attempt.clone().filter(|_| a.registered) else {
                    let line = lines::skipped(t, kind, app, "its AM has not registered yet");
                    self.emit(line);
                    return Ok(());
                };
                self.core
                    .am_finish(Time(t), attempt, &token, FinalStatus::Succeeded, "", None)
                    .map_err(|e| self.fail(t, format!("{app} could not finish: {e}")))?;
                if let Some(a) = self.apps.get_mut(app) {
                    a.phase = Phase::Finished;
                    if let Some((container, node)) = &a.am_container {
                        if let Some(n) = self.sim_nodes.get_mut(node) {
                            n.end_at(container, t);
                        }
                    }
                }
                self.outputs(t);
                let line = Obj::line("finished", t).field("app", app).finish();
                self.emit(line);
            }
            Action::Kill { app, user } => {
                let Some(a) = self.live(t, app, kind) else {
                    return Ok(());
                };
                let id = a.id;
                let result = self.core.kill(Time(t), id, user.as_deref());
                self.outputs(t);
                let line = match result {
                    Ok(_) => {
                        if let Some(a) = self.apps.get_mut(app) {
                            a.phase = Phase::Killed;
                        }
                        Obj::line("killed", t).field("app", app).finish()
                    }
                    Err(e) => Obj::line("kill_refused", t)
                        .field("app", app)
                        .field("user", user)
                        .field("reason", e.to_string())
                        .finish(),
                };
                self.emit(line);
            }
            Action::RemoveNode { host } => {
                // The node's NM stops at once and says so (SHUTDOWN): its containers end and
                // the cluster, so every plan's capacity, shrinks now. A silent NM would be
                // LOST only after the NM expiry (600 s).
                let Some(i) = self.nodes.iter().position(|(h, _)| h == host) else {
                    return Err(self.fail(t, format!("no node {host} is in the cluster")));
                };
                let (_, id) = self.nodes.remove(i);
                let secret = self
                    .sim_nodes
                    .remove(&id)
                    .map(|n| n.secret)
                    .unwrap_or_default();
                let result = self.core.node_unregister(Time(t), &id, &secret);
                self.outputs(t);
                result.map_err(|e| self.fail(t, format!("node {host} could not leave: {e}")))?;
            }
            Action::Snapshot => {
                let line = lines::snapshot(
                    t,
                    &mut self.core,
                    &self.sc.resource_types,
                    &self.app_names,
                    &self.reservations,
                );
                self.emit(line);
            }
            Action::Reserve(spec) => self.reserve(t, spec, false),
            Action::ReservationUpdate(spec) => self.reserve(t, spec, true),
            Action::ReservationDelete { name, user } => {
                let line = match self.reservations.get(name).copied() {
                    None => lines::reservation_rejected(
                        t,
                        name,
                        "delete",
                        "no reservation of that name was accepted",
                    ),
                    Some(id) => match self.core.delete_reservation(Time(t), user, Some(id)) {
                        Ok(()) => {
                            self.reservations.remove(name);
                            Obj::line("reservation_deleted", t)
                                .field("name", name)
                                .field("id", id.to_string())
                                .finish()
                        }
                        Err(e) => lines::reservation_rejected(t, name, "delete", &e.to_string()),
                    },
                };
                self.outputs(t);
                self.emit(line);
            }
            // The parser refuses every other event type under `driver = "rm"`.
            other => {
                return Err(self.fail(
                    t,
                    format!(
                        "event type '{}' is not replayed by driver = \"rm\"",
                        other.type_name()
                    ),
                ))
            }
        }
        Ok(())
    }

    /// The app named by an event while it runs; else a `skipped` line.
    fn live(&mut self, t: u64, app: &str, kind: &str) -> Option<&mut ScApp> {
        let phase = self.apps.get(app).map(|a| a.phase);
        let why = match phase {
            Some(Phase::Live) => return self.apps.get_mut(app),
            Some(Phase::Rejected) => "was rejected",
            Some(Phase::Finished) => "has finished",
            Some(Phase::Killed) => "was killed",
            None => "was never submitted",
        };
        let line = lines::skipped(t, kind, app, &format!("{app} {why}"));
        self.emit(line);
        None
    }

    fn reserve(&mut self, t: u64, spec: &ReserveSpec, update: bool) {
        let action = if update { "update" } else { "submit" };
        let definition = ReservationDefinition {
            arrival: spec.arrival,
            deadline: spec.deadline,
            name: spec.name.clone(),
            priority: 0,
            recurrence: spec.recurrence,
            interpreter: match spec.interpreter {
                ReserveInterpreter::Any => Interpreter::Any,
                ReserveInterpreter::All => Interpreter::All,
                ReserveInterpreter::Order => Interpreter::Order,
                ReserveInterpreter::OrderNoGap => Interpreter::OrderNoGap,
            },
            requests: spec
                .requests
                .iter()
                .map(|r| ReservationRequest {
                    capability: r.resources,
                    num_containers: r.count,
                    concurrency: r.gang,
                    duration: r.duration,
                })
                .collect(),
        };
        let result = if update {
            match self.reservations.get(&spec.name).copied() {
                None => {
                    let line = lines::reservation_rejected(
                        t,
                        &spec.name,
                        action,
                        "no reservation of that name was accepted",
                    );
                    self.emit(line);
                    return;
                }
                Some(id) => self
                    .core
                    .update_reservation(Time(t), &spec.user, Some(id), &definition)
                    .map(|()| id),
            }
        } else {
            let id = self.core.new_reservation();
            self.core
                .submit_reservation(Time(t), &spec.user, &spec.queue, Some(id), &definition)
                .map(|()| id)
        };
        self.outputs(t);
        let line = match result {
            Ok(id) => {
                self.reservations.insert(spec.name.clone(), id);
                match self.core.reservations().find(&id) {
                    Some(r) => lines::reservation_accepted(
                        t,
                        &spec.name,
                        action,
                        r,
                        &self.sc.resource_types,
                    ),
                    None => lines::reservation_rejected(
                        t,
                        &spec.name,
                        action,
                        "accepted, then gone from its plan",
                    ),
                }
            }
            Err(e) => lines::reservation_rejected(t, &spec.name, action, &e.to_string()),
        };
        self.emit(line);
    }

    fn heartbeats(&mut self, t: u64) -> Result<(), ScenarioRunError> {
        for i in 0..self.nodes.len() {
            let id = self.nodes[i].1.clone();
            let Some(node) = self.sim_nodes.get_mut(&id) else {
                continue;
            };
            self.place = format!("heartbeat of {}", self.nodes[i].0);
            let status = node.status(t);
            let reply = self
                .core
                .node_heartbeat(Time(t), &id, status)
                .map_err(|e| self.fail(t, e.to_string()))?;
            if let Some(node) = self.sim_nodes.get_mut(&id) {
                for c in &reply.containers_to_stop {
                    node.stop(c);
                }
            }
            self.outputs(t);
        }
        Ok(())
    }

    fn am_heartbeats(&mut self, t: u64) -> Result<(), ScenarioRunError> {
        let names: Vec<String> = self
            .apps
            .values()
            .filter(|a| a.phase == Phase::Live && a.attempt.is_some())
            .map(|a| a.name.clone())
            .collect();
        for name in names {
            self.place = format!("heartbeat of {name}'s AM");
            self.am_call(t, &name)?;
        }
        Ok(())
    }

    /// One AM heartbeat: registers first if it has not, sends its queued demands (one call
    /// per demand event, so a refusal names its event), then its asks and releases.
    fn am_call(&mut self, t: u64, name: &str) -> Result<(), ScenarioRunError> {
        let Some(a) = self.apps.get_mut(name) else {
            return Ok(());
        };
        let Some((attempt, token)) = a.attempt.clone() else {
            return Ok(());
        };
        if !a.registered {
            if self
                .core
                .am_register(Time(t), attempt, &token, "sim-am", 0, None)
                .is_err()
            {
                self.outputs(t);
                return Ok(());
            }
            a.registered = true;
            self.outputs(t);
            self.send_demands(t, name);
        }
        let Some(a) = self.apps.get_mut(name) else {
            return Ok(());
        };
        let req = AllocateRequest {
            asks: a.take_asks(),
            releases: std::mem::take(&mut a.releases),
            ..AllocateRequest::default()
        };
        let result = self.core.am_allocate(Time(t), attempt, &token, req);
        self.outputs(t);
        match result {
            Ok(reply) => self.take(t, name, reply),
            Err(e) => {
                let final_app = self
                    .core
                    .app_report(&attempt.app)
                    .is_none_or(|r| r.state.is_final());
                if !final_app {
                    let line = Obj::line("ask_refused", t)
                        .field("app", name)
                        .field("reason", e.to_string())
                        .finish();
                    self.emit(line);
                }
            }
        }
        Ok(())
    }

    /// Sends each queued demand event in its own Allocate call; a refusal is a
    /// `demand_refused` line naming the event.
    fn send_demands(&mut self, t: u64, name: &str) {
        let Some(a) = self.apps.get_mut(name) else {
            return;
        };
        let Some((attempt, token)) = a.attempt.clone() else {
            return;
        };
        for q in std::mem::take(&mut a.queued) {
            let demands: Vec<AmDemand> = match q.demand {
                serde_json::Value::Array(items) => items
                    .into_iter()
                    .map(|description| AmDemand {
                        description,
                        ..AmDemand::default()
                    })
                    .collect(),
                description => vec![AmDemand {
                    description,
                    ..AmDemand::default()
                }],
            };
            let req = AllocateRequest {
                demands,
                ..AllocateRequest::default()
            };
            let result = self.core.am_allocate(Time(t), attempt, &token, req);
            self.outputs(t);
            match result {
                Ok(reply) => self.take(t, name, reply),
                Err(e) => {
                    let line = Obj::line("demand_refused", t)
                        .field("app", name)
                        .field("event", q.event)
                        .field("line", q.line)
                        .field("field", format!("events[{}].demand", q.event))
                        .field("status", lines::http_status(&e))
                        .field("error", lines::demand_error(&e))
                        .finish();
                    self.emit(line);
                }
            }
        }
    }

    /// What an Allocate answer gave the AM: containers to launch (or release), completions,
    /// preemption warnings.
    fn take(&mut self, t: u64, name: &str, reply: AllocateResponse) {
        let types = &self.sc.resource_types;
        let mut out: Vec<String> = Vec::new();
        let Some(a) = self.apps.get_mut(name) else {
            return;
        };
        for c in reply.allocated {
            self.allocations += 1;
            out.push(
                Obj::line("allocated", t)
                    .field("app", name)
                    .field("container", c.id.to_string())
                    .field("node", Self::host_of(&c.node_id))
                    .raw(
                        "resources",
                        &weft_sim::output::resource_json(types, &c.resource),
                    )
                    .field("am", false)
                    .field("priority", c.priority)
                    .field("demand", c.demand_id)
                    .finish(),
            );
            let Some(run_time) = a.received(c.priority, c.demand_id) else {
                a.releases.push(c.id);
                continue;
            };
            if !a.claim {
                continue;
            }
            if let Some(node) = self.sim_nodes.get_mut(&c.node_id) {
                node.launch(c.id, c.resource, run_time.map(|d| t + d.as_millis()));
            }
        }
        for c in reply.completed {
            out.push(
                Obj::line("completed", t)
                    .field("app", name)
                    .field("container", c.id.to_string())
                    .field("exit", lines::exit_name(c.exit_status))
                    .finish(),
            );
        }
        for c in reply.preempt {
            if a.warned.insert(c) {
                out.push(
                    Obj::line("preempt_warning", t)
                        .field("app", name)
                        .field("container", c.to_string())
                        .finish(),
                );
            }
        }
        for line in out {
            self.emit(line);
        }
    }

    /// Carries out the core's outputs and prints the demand transitions its writes name.
    fn outputs(&mut self, t: u64) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::LaunchAm(launch) => {
                    if let Some(node) = self.sim_nodes.get_mut(&launch.node_id) {
                        node.launch(launch.container, launch.resource, None);
                    }
                    let token = launch
                        .launch
                        .environment
                        .get("WEFT_AM_TOKEN")
                        .cloned()
                        .unwrap_or_default();
                    let Some(name) = self.app_names.get(&launch.attempt.app).cloned() else {
                        continue;
                    };
                    if let Some(a) = self.apps.get_mut(&name) {
                        a.attempt = Some((launch.attempt, token));
                        a.am_container = Some((launch.container, launch.node_id.clone()));
                        a.registered = false;
                    }
                    self.allocations += 1;
                    let line = Obj::line("allocated", t)
                        .field("app", &name)
                        .field("container", launch.container.to_string())
                        .field("node", Self::host_of(&launch.node_id))
                        .raw(
                            "resources",
                            &weft_sim::output::resource_json(
                                &self.sc.resource_types,
                                &launch.resource,
                            ),
                        )
                        .field("am", true)
                        .finish();
                    self.emit(line);
                }
                Output::StopContainer {
                    node_id, container, ..
                } => {
                    if let Some(node) = self.sim_nodes.get_mut(&node_id) {
                        node.stop(&container);
                    }
                }
                Output::Persist(writes) => {
                    for w in writes {
                        if let Write::PutDemand(record) = w {
                            self.demand_lines(&record.key);
                        }
                    }
                }
            }
        }
    }

    /// Prints each plan's entitlements when they changed during the instant: the leaves the
    /// scheduler's plan follower keeps under the plan queue (a snapshot, which changes
    /// nothing the scheduler decides later).
    fn plan_follower(&mut self, t: u64) {
        if self.core.reservations().queues().next().is_none() {
            return;
        }
        let plans: Vec<String> = self
            .core
            .reservations()
            .queues()
            .map(str::to_string)
            .collect();
        let snapshot = self.core.scheduler_snapshot();
        for plan in plans {
            let entitlements = lines::entitlements(&plan, &snapshot, &self.sc.resource_types);
            if self.followed.get(&plan) == Some(&entitlements) {
                continue;
            }
            let line = Obj::line("plan_follower", t)
                .field("queue", &plan)
                .raw("entitlements", &entitlements)
                .finish();
            self.followed.insert(plan, entitlements);
            self.emit(line);
        }
    }

    /// Prints the queue changes the RM made by itself during the instant: an app leaving the
    /// leaf of a reservation that is no longer active (`reservation_ended`, `moved_to` null
    /// when the app was killed with it), or any other move (`moved`: the demand carrier taking
    /// an app into its planned demand's leaf and out again).
    fn app_moves(&mut self, t: u64) {
        let mut lines = Vec::new();
        let mut gone = Vec::new();
        for (name, last) in &mut self.queues {
            let Some(a) = self.apps.get(name) else {
                continue;
            };
            let Some(report) = self.core.app_report(&a.id) else {
                continue;
            };
            let ended_by_rm = report.state.is_final() && a.phase == Phase::Live;
            if report.queue == *last && !ended_by_rm {
                if report.state.is_final() {
                    gone.push(name.clone());
                }
                continue;
            }
            let reservation_over = last
                .rsplit_once('.')
                .and_then(|(_, leaf)| leaf.parse::<ReservationId>().ok())
                .is_some_and(|id| {
                    self.core
                        .reservations()
                        .find(&id)
                        .is_none_or(|r| !r.is_active_at(Time(t)))
                });
            let line = if reservation_over {
                Obj::line("reservation_ended", t)
                    .field("app", name)
                    .field("queue", &*last)
                    .field(
                        "moved_to",
                        (!report.state.is_final()).then_some(&report.queue),
                    )
                    .finish()
            } else if report.queue != *last {
                Obj::line("moved", t)
                    .field("app", name)
                    .field("from", &*last)
                    .field("queue", &report.queue)
                    .finish()
            } else {
                gone.push(name.clone());
                continue;
            };
            lines.push(line);
            if report.state.is_final() {
                gone.push(name.clone());
            }
            last.clone_from(&report.queue);
        }
        for name in gone {
            self.queues.remove(&name);
        }
        for line in lines {
            self.emit(line);
        }
    }

    /// Prints the transitions of demand `key` not printed yet.
    fn demand_lines(&mut self, key: &str) {
        let Some(report) = self.core.demand(key) else {
            return;
        };
        let seen = self.seen.entry(key.to_string()).or_insert(0);
        let from = *seen;
        *seen = report.timeline.len();
        let app = report
            .application
            .as_deref()
            .and_then(|id| id.parse::<ApplicationId>().ok())
            .and_then(|id| self.app_names.get(&id).cloned())
            .unwrap_or_else(|| key.split('/').next().unwrap_or(key).to_string());
        let names: BTreeMap<String, String> = self
            .reservations
            .iter()
            .map(|(name, id)| (id.to_string(), name.clone()))
            .collect();
        for i in from..report.timeline.len() {
            for line in lines::demand_state(&app, &report, i, &names) {
                self.emit(line);
            }
        }
    }
}
