//! Scenario runs on the one simulator driver ([`crate::driver`]): the file's events go in, the
//! decisions come out as output lines.
//!
//! At each instant: (a) container completions due, (b) the file's events in file order, (c) the
//! periodic update, (d) node heartbeats in node order. Nodes of `[[nodes]]` join at time 0
//! before anything else; a node heartbeats when it joins and then every heartbeat interval.

use crate::clock::CpuClock;
use crate::config::parse_reload;
use crate::driver::{duration_tag, CompletionReport, EventKind, Script, Sim, Step, Timing};
use crate::output::{resource_json, snapshot_line, Names, Obj, SnapshotPools};
use crate::queue::{Due, UpdateOrder};
use crate::scenario::{Action, NodeSpec, Scenario, ScheduledEvent};
use crate::Scheduler;
use std::collections::BTreeMap;
use thiserror::Error;
use weft_sched::{
    ContainerAsk, ContainerExit, Decision, Event, GangAsk, GangChange, SchedError, SchedulerConfig,
};
use weft_types::{AppId, ContainerId, NodeId, Time};

/// What a finished run reports (also printed as the `summary` line).
#[derive(Clone, Debug, PartialEq)]
pub struct RunSummary {
    /// When the run stopped (virtual ms).
    pub end_ms: u64,
    /// Containers allocated, AM containers included.
    pub allocations: u64,
    /// CPU time spent inside the scheduler, as the injected clock measured it.
    pub scheduler_cpu_ms: f64,
}

/// The scheduler refused an event the scenario cannot go on without (anything but a refused
/// kill, move or reload, which are outputs).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}: at {at_ms} ms, {place}: {message}")]
pub struct RunError {
    /// The scenario file's name.
    pub file: String,
    /// Virtual time of the failure.
    pub at_ms: u64,
    /// What was being applied, e.g. `line 12 (events[3], ask)` or `heartbeat of n1`.
    pub place: String,
    /// The scheduler's error, with the scenario's names.
    pub message: String,
}

/// Replays `scenario` through a scheduler built from `config`, calling `out` with each output
/// line (without newline), the `summary` line last.
pub fn run(
    scenario: &Scenario,
    config: SchedulerConfig,
    clock: &mut dyn CpuClock,
    out: &mut dyn FnMut(&str),
) -> Result<RunSummary, RunError> {
    let timing = Timing {
        heartbeat_interval: scenario.heartbeat_interval,
        update_interval: scenario.update_interval,
        update_order: UpdateOrder::BeforeHeartbeats,
        completions: CompletionReport::AtItsEnd,
    };
    let mut sim = Sim::new(
        Scheduler::new(config, scenario.groups.clone()),
        clock,
        timing,
    );
    let mut r = Runner {
        sc: scenario,
        out,
        apps: BTreeMap::new(),
        app_ids: BTreeMap::new(),
        live_hosts: BTreeMap::new(),
        hosts: BTreeMap::new(),
        allocations: 0,
        cpu_nanos: 0,
        place: String::new(),
        plans: BTreeMap::new(),
    };
    r.run(&mut sim)
}

/// Where an app stands, as far as the simulator knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AppState {
    Running,
    Rejected,
    Finished,
    Killed,
}

struct AppTrack {
    name: String,
    state: AppState,
    /// Running non-AM containers in allocation order, with their request priority (a release
    /// takes the newest).
    running: Vec<(ContainerId, i32)>,
}

/// The scenario run's part: the file's events, the output lines and the scenario's names.
struct Runner<'a> {
    sc: &'a Scenario,
    out: &'a mut dyn FnMut(&str),
    apps: BTreeMap<AppId, AppTrack>,
    app_ids: BTreeMap<String, AppId>,
    live_hosts: BTreeMap<String, NodeId>,
    /// Every node that ever joined (outputs name removed nodes too).
    hosts: BTreeMap<NodeId, String>,
    allocations: u64,
    cpu_nanos: u64,
    /// What is being applied, for error messages.
    place: String,
    /// Each plan queue's reservations so far (`reservation` events) and move-on-expiry.
    plans: BTreeMap<String, weft_sched::PlanReservations>,
}

struct NameMaps<'m> {
    apps: &'m BTreeMap<AppId, AppTrack>,
    hosts: &'m BTreeMap<NodeId, String>,
}

impl Names for NameMaps<'_> {
    fn app(&self, app: AppId) -> String {
        self.apps
            .get(&app)
            .map_or_else(|| app.to_string(), |a| a.name.clone())
    }
    fn node(&self, node: NodeId) -> String {
        self.hosts
            .get(&node)
            .cloned()
            .unwrap_or_else(|| node.to_string())
    }
}

impl Script for Runner<'_> {
    type Error = RunError;

    fn decision(&mut self, sim: &mut Sim<'_>, d: &Decision) -> Result<(), RunError> {
        self.print_decision(sim, d);
        Ok(())
    }

    fn timed(&mut self, _kind: EventKind, nanos: u64) {
        self.cpu_nanos += nanos;
    }

    fn refused(&mut self, sim: &Sim<'_>, step: Step, source: SchedError) -> RunError {
        let names = self.names();
        let place = match step {
            Step::NodeJoin => self.place.clone(),
            Step::NodeLeave(node) => format!("removal of {}", names.node(node)),
            Step::Heartbeat(node) => format!("heartbeat of {}", names.node(node)),
            Step::Completion(c) => format!("completion of {c}"),
            Step::Update => "periodic update".to_string(),
            Step::Timeout => "scheduler timeout".to_string(),
        };
        self.place = place;
        self.fail(sim, &source)
    }
}

impl Runner<'_> {
    fn names(&self) -> NameMaps<'_> {
        NameMaps {
            apps: &self.apps,
            hosts: &self.hosts,
        }
    }

    fn emit(&mut self, line: String) {
        (self.out)(&line);
    }

    fn run(&mut self, sim: &mut Sim<'_>) -> Result<RunSummary, RunError> {
        self.place = "initial nodes".to_string();
        for spec in &self.sc.nodes {
            self.add_node(sim, spec)?;
        }
        sim.agenda.push(Time::ZERO, Due::Update);
        for (i, e) in self.sc.events.iter().enumerate() {
            sim.agenda.push(e.at, Due::FileEvent(i));
        }
        while let Some(at) = sim.agenda.peek_time() {
            if at > self.end(sim) {
                break;
            }
            let Some((at, due)) = sim.agenda.pop() else {
                break;
            };
            if let Some(Due::FileEvent(i)) = sim.step(self, at, due)? {
                let sc = self.sc;
                if let Some(e) = sc.events.get(i) {
                    self.place = format!(
                        "line {} (events[{}], {})",
                        e.line,
                        e.index,
                        e.action.type_name()
                    );
                    self.file_event(sim, e)?;
                }
            }
        }
        let end = self.end(sim);
        let summary = RunSummary {
            end_ms: end.as_millis(),
            allocations: self.allocations,
            scheduler_cpu_ms: (self.cpu_nanos / 1_000) as f64 / 1_000.0,
        };
        let line = Obj::line("summary", summary.end_ms)
            .field("allocations", summary.allocations)
            .field("scheduler_cpu_ms", summary.scheduler_cpu_ms)
            .finish();
        self.emit(line);
        Ok(summary)
    }

    /// `end` when the file sets it; else the later of the last event and the last scheduled
    /// completion, plus one heartbeat interval.
    fn end(&self, sim: &Sim<'_>) -> Time {
        if let Some(end) = self.sc.end {
            return end;
        }
        let last_event = self.sc.events.last().map_or(Time::ZERO, |e| e.at);
        last_event.max(sim.last_completion()) + self.sc.heartbeat_interval
    }

    /// Hands one event to the scheduler and prints its decisions; the scheduler's answer is
    /// the inner result (the outer one fails only when a decision cannot be handled).
    fn send(
        &mut self,
        sim: &mut Sim<'_>,
        event: Event,
    ) -> Result<Result<(), SchedError>, RunError> {
        let answer = sim.call(self, EventKind::Other, event);
        sim.process(self)?;
        Ok(answer)
    }

    /// An ask (plain or gang): a refused ask is an `ask_refused` line, any other refusal ends
    /// the run.
    fn send_ask(
        &mut self,
        sim: &mut Sim<'_>,
        at: u64,
        app: &str,
        event: Event,
    ) -> Result<(), RunError> {
        match self.send(sim, event)? {
            Ok(()) => Ok(()),
            Err(SchedError::InvalidAsk { reason, .. }) => {
                let line = Obj::line("ask_refused", at)
                    .field("app", app)
                    .field("reason", reason)
                    .finish();
                self.emit(line);
                Ok(())
            }
            Err(other) => Err(self.fail(sim, &other)),
        }
    }

    /// Like [`Runner::send`], but a refusal ends the run.
    fn must(&mut self, sim: &mut Sim<'_>, event: Event) -> Result<(), RunError> {
        self.send(sim, event)?.map_err(|e| self.fail(sim, &e))
    }

    /// Each live node's resource pool (empty without pools), in node order.
    fn node_pools(&self, sim: &Sim<'_>) -> Vec<(NodeId, String)> {
        let mut nodes: Vec<NodeId> = self.live_hosts.values().copied().collect();
        nodes.sort_unstable();
        nodes
            .into_iter()
            .filter_map(|n| Some((n, sim.sched.node_pool(n)?.to_string())))
            .collect()
    }

    /// After a reload that moved hosts between pools: a `pool_layout` line naming each moved
    /// host with its old and new pool, and how many containers are foreign now
    /// (resource-pools spec §12).
    fn report_pool_layout(&mut self, sim: &Sim<'_>, at: u64, before: &[(NodeId, String)]) {
        let after = self.node_pools(sim);
        let names = self.names();
        let moved: Vec<String> = before
            .iter()
            .filter_map(|(node, from)| {
                let to = after.iter().find(|(n, _)| n == node).map(|(_, p)| p)?;
                (to != from).then(|| {
                    Obj::new()
                        .field("host", names.node(*node))
                        .field("from", from)
                        .field("to", to)
                        .finish()
                })
            })
            .collect();
        if moved.is_empty() {
            return;
        }
        let line = Obj::line("pool_layout", at)
            .raw("moved_hosts", &format!("[{}]", moved.join(",")))
            .field("foreign_containers", sim.sched.foreign_containers())
            .finish();
        self.emit(line);
    }

    /// A scheduler error in the scenario's words (app and host names, not ids).
    fn describe(&self, e: &SchedError) -> String {
        let names = self.names();
        match e {
            SchedError::UnknownApp(a) => format!("unknown application {}", names.app(*a)),
            SchedError::UnknownNode(n) => format!("unknown node {}", names.node(*n)),
            SchedError::MoveRefused { reason, .. }
            | SchedError::KillRefused { reason, .. }
            | SchedError::InvalidAsk { reason, .. } => reason.clone(),
            SchedError::ConfigRefused(reason) => reason.clone(),
            other => other.to_string(),
        }
    }

    fn print_decision(&mut self, sim: &Sim<'_>, d: &Decision) {
        let at = sim.now.as_millis();
        let line = match d {
            Decision::Accepted { app, queue } => {
                self.set_state(*app, AppState::Running);
                Obj::line("accepted", at)
                    .field("app", self.names().app(*app))
                    .field("queue", queue)
                    .finish()
            }
            Decision::Rejected { app, reason, code } => {
                self.set_state(*app, AppState::Rejected);
                Obj::line("rejected", at)
                    .field("app", self.names().app(*app))
                    .field("reason", reason)
                    .field("code", code.as_str())
                    .finish()
            }
            Decision::Allocated {
                app,
                container,
                node,
                resources,
                locality,
                am,
                priority,
                tag: _,
            } => {
                let resources = resource_json(sim.sched.resource_types(), resources);
                self.allocations += 1;
                if !*am {
                    if let Some(a) = self.apps.get_mut(app) {
                        a.running.push((*container, *priority));
                    }
                }
                Obj::line("allocated", at)
                    .field("app", self.names().app(*app))
                    .field("container", container.to_string())
                    .field("node", self.names().node(*node))
                    .raw("resources", &resources)
                    .field("locality", locality.as_str())
                    .field("am", *am)
                    .field("priority", *priority)
                    .finish()
            }
            Decision::Completed {
                app,
                container,
                exit,
                status,
            } => {
                if let Some(a) = self.apps.get_mut(app) {
                    a.running.retain(|(c, _)| c != container);
                }
                if *exit == ContainerExit::Preempted && status.is_none() {
                    // Its `preempted` line (from `Decision::Preempted`, just before) says it
                    // all; the contract wants no `completed` line beside it.
                    return;
                }
                let name = self.names().app(*app);
                let line = Obj::line("completed", at)
                    .field("app", name)
                    .field("container", container.to_string())
                    .field("exit", exit.as_str());
                // A foreign container killed at its pool's timeout says why (resource-pools
                // spec §12).
                match status {
                    Some(s) if *exit == ContainerExit::Preempted => {
                        line.field("reason", s.diagnostics.as_str()).finish()
                    }
                    _ => line.finish(),
                }
            }
            Decision::PreemptWarning {
                app,
                container,
                node,
                for_app,
                kill_at,
            } => Obj::line("preempt_warning", at)
                .field("app", self.names().app(*app))
                .field("container", container.to_string())
                .field("node", self.names().node(*node))
                .field("for_app", for_app.map(|a| self.names().app(a)))
                .field("kill_at_ms", kill_at.map(|t| t.as_millis()))
                .finish(),
            Decision::Preempted {
                app,
                container,
                node,
                for_queue,
                ..
            } => Obj::line("preempted", at)
                .field("app", self.names().app(*app))
                .field("container", container.to_string())
                .field("node", self.names().node(*node))
                .field("for_queue", for_queue)
                .finish(),
            Decision::Gang { app, gang, change } => {
                let line = Obj::line("gang", at)
                    .field("app", self.names().app(*app))
                    .field("gang", *gang)
                    .field("state", change.as_str());
                match change {
                    GangChange::Admitted => line.finish(),
                    GangChange::Refused { reason } => line.field("reason", reason).finish(),
                    GangChange::Holding { held, size } => {
                        line.field("held", *held).field("size", *size).finish()
                    }
                    GangChange::Delivered { size } => line.field("size", *size).finish(),
                    GangChange::FellBack { handed, asked } => line
                        .field("handed", *handed)
                        .field("asked", *asked)
                        .finish(),
                    GangChange::Failed { released } => line.field("released", *released).finish(),
                }
            }
            Decision::ReservationEnded {
                app,
                queue,
                moved_to,
            } => {
                if moved_to.is_none() {
                    self.set_state(*app, AppState::Killed);
                }
                Obj::line("reservation_ended", at)
                    .field("app", self.names().app(*app))
                    .field("queue", queue)
                    .field("moved_to", moved_to.as_deref())
                    .finish()
            }
            Decision::Reserved {
                app,
                node,
                resources,
            } => Obj::line("reserved", at)
                .field("app", self.names().app(*app))
                .field("node", self.names().node(*node))
                .raw(
                    "resources",
                    &resource_json(sim.sched.resource_types(), resources),
                )
                .finish(),
        };
        self.emit(line);
    }

    fn set_state(&mut self, app: AppId, state: AppState) {
        if let Some(a) = self.apps.get_mut(&app) {
            a.state = state;
        }
    }

    fn add_node(&mut self, sim: &mut Sim<'_>, spec: &NodeSpec) -> Result<(), RunError> {
        let node = sim.add_node(self, &spec.host, &spec.rack, spec.resources, sim.now)?;
        self.hosts.insert(node, spec.host.clone());
        self.live_hosts.insert(spec.host.clone(), node);
        Ok(())
    }

    /// The id of a scenario app that is still running, or a `skipped` line saying why not.
    fn live_app(&mut self, sim: &Sim<'_>, name: &str, event: &str) -> Option<AppId> {
        let id = *self.app_ids.get(name)?;
        let state = self.apps.get(&id).map(|a| a.state)?;
        if state == AppState::Running {
            return Some(id);
        }
        let why = match state {
            AppState::Rejected => "was rejected",
            AppState::Finished => "has finished",
            _ => "was killed",
        };
        let line = Obj::line("skipped", sim.now.as_millis())
            .field("event", event)
            .field("app", name)
            .field("reason", format!("{name} {why}"))
            .finish();
        self.emit(line);
        None
    }

    fn file_event(&mut self, sim: &mut Sim<'_>, e: &ScheduledEvent) -> Result<(), RunError> {
        let at = sim.now.as_millis();
        let kind = e.action.type_name();
        match &e.action {
            Action::Submit {
                app,
                user,
                queue,
                am,
                priority,
                reservation,
                label,
                ..
            } => {
                let id = AppId(self.app_ids.len() as u64 + 1);
                self.app_ids.insert(app.clone(), id);
                self.apps.insert(
                    id,
                    AppTrack {
                        name: app.clone(),
                        state: AppState::Running,
                        running: Vec::new(),
                    },
                );
                match (reservation, label) {
                    // The placement is also queued as a decision, printed by `process`.
                    (Some(_), _) | (None, Some(_)) => {
                        let placed = sim.sched.submit_labeled(
                            sim.now,
                            id,
                            user.clone(),
                            queue.clone(),
                            *am,
                            reservation.as_deref(),
                            label.as_deref(),
                        );
                        sim.process(self)?;
                        placed.map_err(|e| self.fail(sim, &e))?;
                    }
                    (None, None) => self.must(
                        sim,
                        Event::AppSubmitted {
                            app: id,
                            user: user.clone(),
                            queue: queue.clone(),
                            am_resource: *am,
                        },
                    )?,
                }
                // The application priority follows the submission, as Hadoop's RM sets it on
                // the accepted app (only the Capacity Scheduler orders by it).
                if *priority != 0 && sim.sched.queue_name(id).is_some() {
                    self.must(
                        sim,
                        Event::AppPriorityChanged {
                            app: id,
                            priority: *priority,
                        },
                    )?;
                }
            }
            Action::Ask { app, ask, duration } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                let ask = ContainerAsk {
                    tag: duration_tag(*duration),
                    ..ask.clone()
                };
                self.send_ask(sim, at, app, Event::Ask { app: id, ask })?;
            }
            Action::Release {
                app,
                count,
                priority,
            } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                let victims: Vec<ContainerId> = self
                    .apps
                    .get(&id)
                    .map(|a| {
                        a.running
                            .iter()
                            .rev()
                            .filter(|(_, p)| priority.is_none_or(|want| *p == want))
                            .take(*count as usize)
                            .map(|(c, _)| *c)
                            .collect()
                    })
                    .unwrap_or_default();
                for container in victims {
                    self.must(sim, Event::Release { app: id, container })?;
                }
            }
            Action::Cancel {
                app,
                priority,
                count,
            } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                self.must(
                    sim,
                    Event::CancelAsks {
                        app: id,
                        priority: *priority,
                        count: *count,
                    },
                )?;
            }
            Action::Finish { app } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                self.must(sim, Event::AppFinished { app: id })?;
                self.set_state(id, AppState::Finished);
                let line = Obj::line("finished", at).field("app", app).finish();
                self.emit(line);
            }
            Action::Kill { app, user } => {
                let id = self.app_ids.get(app).copied().unwrap_or(AppId(0));
                let killed = self.send(
                    sim,
                    Event::AppKilled {
                        app: id,
                        user: user.clone(),
                    },
                )?;
                let line = match killed {
                    Ok(()) => {
                        self.set_state(id, AppState::Killed);
                        Obj::line("killed", at)
                            .field("app", app)
                            .field("user", user)
                            .finish()
                    }
                    Err(err) => Obj::line("kill_refused", at)
                        .field("app", app)
                        .field("user", user)
                        .field("reason", self.describe(&err))
                        .finish(),
                };
                self.emit(line);
            }
            Action::Move { app, queue } => {
                let id = self.app_ids.get(app).copied().unwrap_or(AppId(0));
                let moved = self.send(
                    sim,
                    Event::Move {
                        app: id,
                        queue: queue.clone(),
                    },
                )?;
                let line = match moved {
                    Ok(()) => {
                        let now_in = sim.sched.queue_name(id).unwrap_or(queue).to_string();
                        Obj::line("moved", at)
                            .field("app", app)
                            .field("queue", now_in)
                            .finish()
                    }
                    Err(err) => Obj::line("move_refused", at)
                        .field("app", app)
                        .field("queue", queue)
                        .field("reason", self.describe(&err))
                        .finish(),
                };
                self.emit(line);
            }
            Action::AddNode(spec) => self.add_node(sim, spec)?,
            Action::RemoveNode { host } => {
                if let Some(node) = self.live_hosts.remove(host) {
                    sim.remove_node(self, node)?;
                }
            }
            Action::Reload { allocations } => {
                let types = sim.sched.resource_types().clone();
                let options = weft_config::alloc_file::AllocationOptions {
                    no_terminal_rule_check: sim.sched.config().properties().no_terminal_rule_check,
                };
                let pools_before = self.node_pools(sim);
                let refused = match parse_reload(&allocations.text, &types, options) {
                    Err(text) => Some(text),
                    Ok(allocations) => {
                        // A reload changes only the allocation file.
                        let properties = sim.sched.config().properties().clone();
                        let config = SchedulerConfig::fair(allocations, properties);
                        self.send(sim, Event::Reload(Box::new(config)))?
                            .err()
                            .map(|e| self.describe(&e))
                    }
                };
                if refused.is_none() {
                    self.report_pool_layout(sim, at, &pools_before);
                }
                if let Some(error) = refused {
                    let line = Obj::line("config_refused", at)
                        .field("error", error)
                        .finish();
                    self.emit(line);
                }
            }
            Action::Snapshot => {
                let snapshot = sim.snapshot_timed(self);
                let capacity = sim.sched.capacity_details();
                let stats = sim.sched.pool_stats();
                let node_pool = |n: NodeId| sim.sched.node_pool(n).map(str::to_string);
                let queue_pool = |q: &str| sim.sched.queue_pool(q).map(str::to_string);
                let pools = SnapshotPools {
                    stats: &stats,
                    node_pool: &node_pool,
                    queue_pool: &queue_pool,
                };
                let line = snapshot_line(
                    at,
                    &snapshot,
                    &capacity,
                    (!stats.is_empty()).then_some(&pools),
                    sim.sched.resource_types(),
                    &self.names(),
                );
                self.emit(line);
            }
            Action::Gang { app, ask, duration } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                let ask = GangAsk {
                    tag: duration_tag(*duration),
                    ..ask.clone()
                };
                self.send_ask(sim, at, app, Event::GangAsk { app: id, ask })?;
            }
            Action::GangCancel { app, gang } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                self.must(
                    sim,
                    Event::GangCancelled {
                        app: id,
                        gang: *gang,
                    },
                )?;
            }
            Action::Reservation {
                queue,
                move_on_expiry,
                reservation,
            } => {
                let plan = self.plans.entry(queue.clone()).or_insert_with(|| {
                    weft_sched::PlanReservations {
                        queue: queue.clone(),
                        move_on_expiry: *move_on_expiry,
                        reservations: Vec::new(),
                    }
                });
                plan.move_on_expiry = *move_on_expiry;
                plan.reservations.push(reservation.clone());
                let event = Event::PlanChanged(Box::new(plan.clone()));
                self.must(sim, event)?;
            }
            Action::Reserve(_)
            | Action::ReservationUpdate(_)
            | Action::ReservationDelete { .. }
            | Action::Demand { .. }
            | Action::DemandKill { .. } => {
                // The parser refuses these without `driver = "rm"`, which this runner is not.
                return Err(RunError {
                    file: self.sc.file.clone(),
                    at_ms: at,
                    place: self.place.clone(),
                    message: format!("event type '{kind}' needs driver = \"rm\""),
                });
            }
            Action::Blacklist { app, add, remove } => {
                let Some(id) = self.live_app(sim, app, kind) else {
                    return Ok(());
                };
                self.must(
                    sim,
                    Event::BlacklistUpdated {
                        app: id,
                        additions: add.clone(),
                        removals: remove.clone(),
                    },
                )?;
            }
        }
        Ok(())
    }

    fn fail(&self, sim: &Sim<'_>, e: &SchedError) -> RunError {
        RunError {
            file: self.sc.file.clone(),
            at_ms: sim.now.as_millis(),
            place: self.place.clone(),
            message: format!("the scheduler refused it: {}", self.describe(e)),
        }
    }
}
