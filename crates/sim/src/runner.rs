//! The discrete-event loop: a virtual clock that jumps from one due item to the next, feeding
//! the real scheduler and turning its decisions into output lines.
//!
//! At each instant: (a) container completions due, (b) the file's events in file order, (c) the
//! periodic update, (d) node heartbeats in node order. Nodes of `[[nodes]]` join at time 0
//! before anything else; a node heartbeats when it joins and then every heartbeat interval.

use crate::clock::CpuClock;
use crate::config::parse_reload;
use crate::output::{resource_json, snapshot_line, Names, Obj};
use crate::queue::{Agenda, Due};
use crate::scenario::{Action, NodeSpec, Scenario, ScheduledEvent};
use crate::Scheduler;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use thiserror::Error;
use weft_sched::{ContainerExit, Decision, Event, SchedError, SchedulerConfig};
use weft_types::{AppId, ContainerId, Duration, NodeId, Time};

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
    let mut r = Runner {
        sc: scenario,
        sched: Scheduler::new(config, scenario.groups.clone()),
        clock,
        out,
        now: Time::ZERO,
        agenda: Agenda::default(),
        armed_timeout: None,
        apps: BTreeMap::new(),
        app_ids: BTreeMap::new(),
        live_hosts: BTreeMap::new(),
        hosts: BTreeMap::new(),
        containers: BTreeMap::new(),
        pending_completions: BTreeSet::new(),
        last_completion: Time::ZERO,
        allocations: 0,
        cpu_nanos: 0,
        place: String::new(),
    };
    r.run()
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
    /// Running non-AM containers in allocation order, with their request priority.
    running: Vec<(ContainerId, i32)>,
    /// Per request priority, the duration of each outstanding container, oldest ask first.
    durations: BTreeMap<i32, VecDeque<Option<Duration>>>,
}

struct Runner<'a> {
    sc: &'a Scenario,
    sched: Scheduler,
    clock: &'a mut dyn CpuClock,
    out: &'a mut dyn FnMut(&str),
    now: Time,
    agenda: Agenda,
    /// The earliest `Due::Timeout` on the agenda (the scheduler's `poll_timeout` when armed).
    armed_timeout: Option<Time>,
    apps: BTreeMap<AppId, AppTrack>,
    app_ids: BTreeMap<String, AppId>,
    live_hosts: BTreeMap<String, NodeId>,
    /// Every node that ever joined (outputs name removed nodes too).
    hosts: BTreeMap<NodeId, String>,
    containers: BTreeMap<ContainerId, AppId>,
    pending_completions: BTreeSet<ContainerId>,
    last_completion: Time,
    allocations: u64,
    cpu_nanos: u64,
    /// What is being applied, for error messages.
    place: String,
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

    fn run(&mut self) -> Result<RunSummary, RunError> {
        self.place = "initial nodes".to_string();
        for spec in &self.sc.nodes {
            self.add_node(spec)?;
        }
        self.agenda.push(Time::ZERO, Due::Update);
        for (i, e) in self.sc.events.iter().enumerate() {
            self.agenda.push(e.at, Due::FileEvent(i));
        }
        while let Some(at) = self.agenda.peek_time() {
            if at > self.end() {
                break;
            }
            let Some((at, due)) = self.agenda.pop() else {
                break;
            };
            self.now = at;
            self.apply(due)?;
        }
        let end = self.end();
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
    fn end(&self) -> Time {
        if let Some(end) = self.sc.end {
            return end;
        }
        let last_event = self.sc.events.last().map_or(Time::ZERO, |e| e.at);
        last_event.max(self.last_completion) + self.sc.heartbeat_interval
    }

    fn apply(&mut self, due: Due) -> Result<(), RunError> {
        match due {
            Due::Completion(c) => {
                if self.pending_completions.remove(&c) {
                    self.place = format!("completion of {c}");
                    self.must(Event::ContainerCompleted {
                        container: c,
                        exit: ContainerExit::Success,
                    })?;
                }
            }
            Due::FileEvent(i) => {
                let sc = self.sc;
                if let Some(e) = sc.events.get(i) {
                    self.place = format!(
                        "line {} (events[{}], {})",
                        e.line,
                        e.index,
                        e.action.type_name()
                    );
                    self.file_event(e)?;
                }
            }
            Due::Timeout => {
                self.armed_timeout = None;
                self.place = "scheduler timeout".to_string();
                self.must(Event::Timeout)?;
            }
            Due::Update => {
                self.place = "periodic update".to_string();
                self.must(Event::Update)?;
                self.agenda
                    .push(self.now + self.sc.update_interval, Due::Update);
            }
            Due::Heartbeat(node) => {
                let Some(host) = self.hosts.get(&node) else {
                    return Ok(());
                };
                if self.live_hosts.get(host) != Some(&node) {
                    return Ok(()); // the node was removed
                }
                self.place = format!("heartbeat of {host}");
                self.must(Event::NodeHeartbeat { node })?;
                self.agenda
                    .push(self.now + self.sc.heartbeat_interval, Due::Heartbeat(node));
            }
        }
        Ok(())
    }

    /// Hands one event to the scheduler, then drains and prints its decisions.
    fn send(&mut self, event: Event) -> Result<(), SchedError> {
        let start = self.clock.now_nanos();
        let result = self.sched.handle(self.now, event);
        let mut decisions = Vec::new();
        while let Some(d) = self.sched.poll_decision() {
            decisions.push(d);
        }
        self.cpu_nanos += self.clock.now_nanos().saturating_sub(start);
        for d in decisions {
            self.decision(d);
        }
        self.arm_timeout();
        result
    }

    /// Puts the scheduler's next wake-up on the agenda, unless it is there already.
    fn arm_timeout(&mut self) {
        let Some(due) = self.sched.poll_timeout() else {
            return;
        };
        if self.armed_timeout.is_none_or(|armed| due < armed) {
            self.armed_timeout = Some(due);
            self.agenda.push(due.max(self.now), Due::Timeout);
        }
    }

    /// Like [`Runner::send`], but a refusal ends the run.
    fn must(&mut self, event: Event) -> Result<(), RunError> {
        self.send(event).map_err(|e| RunError {
            file: self.sc.file.clone(),
            at_ms: self.now.as_millis(),
            place: self.place.clone(),
            message: format!("the scheduler refused it: {}", self.describe(&e)),
        })
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

    fn decision(&mut self, d: Decision) {
        let at = self.now.as_millis();
        let line = match d {
            Decision::Accepted { app, queue } => {
                self.set_state(app, AppState::Running);
                Obj::line("accepted", at)
                    .field("app", self.names().app(app))
                    .field("queue", queue)
                    .finish()
            }
            Decision::Rejected { app, reason } => {
                self.set_state(app, AppState::Rejected);
                Obj::line("rejected", at)
                    .field("app", self.names().app(app))
                    .field("reason", reason)
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
            } => {
                let resources = resource_json(self.sched.resource_types(), &resources);
                self.allocations += 1;
                self.allocated(app, container, am, priority);
                Obj::line("allocated", at)
                    .field("app", self.names().app(app))
                    .field("container", container.to_string())
                    .field("node", self.names().node(node))
                    .raw("resources", &resources)
                    .field("locality", locality.as_str())
                    .field("am", am)
                    .field("priority", priority)
                    .finish()
            }
            Decision::Completed {
                app,
                container,
                exit,
            } => {
                self.pending_completions.remove(&container);
                self.containers.remove(&container);
                if let Some(a) = self.apps.get_mut(&app) {
                    a.running.retain(|(c, _)| *c != container);
                }
                let name = self.names().app(app);
                if exit == ContainerExit::Preempted {
                    // The scheduler does not say for which queue yet.
                    let line = Obj::line("preempted", at)
                        .field("app", &name)
                        .field("container", container.to_string())
                        .field("for_queue", Option::<String>::None)
                        .finish();
                    self.emit(line);
                }
                Obj::line("completed", at)
                    .field("app", name)
                    .field("container", container.to_string())
                    .field("exit", exit.as_str())
                    .finish()
            }
            Decision::Reserved {
                app,
                node,
                resources,
            } => Obj::line("reserved", at)
                .field("app", self.names().app(app))
                .field("node", self.names().node(node))
                .raw(
                    "resources",
                    &resource_json(self.sched.resource_types(), &resources),
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

    /// Tracks a new container and schedules its completion when its ask had a duration.
    fn allocated(&mut self, app: AppId, container: ContainerId, am: bool, priority: i32) {
        self.containers.insert(container, app);
        if am {
            return;
        }
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        a.running.push((container, priority));
        let duration = a
            .durations
            .get_mut(&priority)
            .and_then(VecDeque::pop_front)
            .flatten();
        if let Some(d) = duration {
            let at = self.now + d;
            self.pending_completions.insert(container);
            self.last_completion = self.last_completion.max(at);
            self.agenda.push(at, Due::Completion(container));
        }
    }

    fn add_node(&mut self, spec: &NodeSpec) -> Result<(), RunError> {
        let node = NodeId(u32::try_from(self.hosts.len() + 1).unwrap_or(u32::MAX));
        self.hosts.insert(node, spec.host.clone());
        self.live_hosts.insert(spec.host.clone(), node);
        self.must(Event::NodeAdded {
            node,
            host: spec.host.clone(),
            rack: spec.rack.clone(),
            capability: spec.resources,
        })?;
        self.agenda.push(self.now, Due::Heartbeat(node));
        Ok(())
    }

    /// The id of a scenario app that is still running, or a `skipped` line saying why not.
    fn live_app(&mut self, name: &str, event: &str) -> Option<AppId> {
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
        let line = Obj::line("skipped", self.now.as_millis())
            .field("event", event)
            .field("app", name)
            .field("reason", format!("{name} {why}"))
            .finish();
        self.emit(line);
        None
    }

    fn file_event(&mut self, e: &ScheduledEvent) -> Result<(), RunError> {
        let at = self.now.as_millis();
        let kind = e.action.type_name();
        match &e.action {
            Action::Submit {
                app,
                user,
                queue,
                am,
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
                        durations: BTreeMap::new(),
                    },
                );
                self.must(Event::AppSubmitted {
                    app: id,
                    user: user.clone(),
                    queue: queue.clone(),
                    am_resource: *am,
                })?;
            }
            Action::Ask { app, ask, duration } => {
                let Some(id) = self.live_app(app, kind) else {
                    return Ok(());
                };
                let queue = self.track(id).durations.entry(ask.priority).or_default();
                queue.extend(std::iter::repeat_n(*duration, ask.count as usize));
                match self.send(Event::Ask {
                    app: id,
                    ask: ask.clone(),
                }) {
                    Ok(()) => {}
                    Err(SchedError::InvalidAsk { reason, .. }) => {
                        let queue = self.track(id).durations.entry(ask.priority).or_default();
                        queue.truncate(queue.len().saturating_sub(ask.count as usize));
                        let line = Obj::line("ask_refused", at)
                            .field("app", app)
                            .field("reason", reason)
                            .finish();
                        self.emit(line);
                    }
                    Err(other) => return Err(self.fail(&other)),
                }
            }
            Action::Release {
                app,
                count,
                priority,
            } => {
                let Some(id) = self.live_app(app, kind) else {
                    return Ok(());
                };
                let victims: Vec<ContainerId> = self
                    .track(id)
                    .running
                    .iter()
                    .rev()
                    .filter(|(_, p)| priority.is_none_or(|want| *p == want))
                    .take(*count as usize)
                    .map(|(c, _)| *c)
                    .collect();
                for container in victims {
                    self.must(Event::Release { app: id, container })?;
                }
            }
            Action::Cancel {
                app,
                priority,
                count,
            } => {
                let Some(id) = self.live_app(app, kind) else {
                    return Ok(());
                };
                self.must(Event::CancelAsks {
                    app: id,
                    priority: *priority,
                    count: *count,
                })?;
                forget_durations(self.track(id), *priority, *count);
            }
            Action::Finish { app } => {
                let Some(id) = self.live_app(app, kind) else {
                    return Ok(());
                };
                self.must(Event::AppFinished { app: id })?;
                self.set_state(id, AppState::Finished);
                let line = Obj::line("finished", at).field("app", app).finish();
                self.emit(line);
            }
            Action::Kill { app, user } => {
                let id = self.app_ids.get(app).copied().unwrap_or(AppId(0));
                match self.send(Event::AppKilled {
                    app: id,
                    user: user.clone(),
                }) {
                    Ok(()) => {
                        self.set_state(id, AppState::Killed);
                        let line = Obj::line("killed", at)
                            .field("app", app)
                            .field("user", user)
                            .finish();
                        self.emit(line);
                    }
                    Err(err) => {
                        let line = Obj::line("kill_refused", at)
                            .field("app", app)
                            .field("user", user)
                            .field("reason", self.describe(&err))
                            .finish();
                        self.emit(line);
                    }
                }
            }
            Action::Move { app, queue } => {
                let id = self.app_ids.get(app).copied().unwrap_or(AppId(0));
                match self.send(Event::Move {
                    app: id,
                    queue: queue.clone(),
                }) {
                    Ok(()) => {
                        let now_in = self.sched.queue_name(id).unwrap_or(queue).to_string();
                        let line = Obj::line("moved", at)
                            .field("app", app)
                            .field("queue", now_in)
                            .finish();
                        self.emit(line);
                    }
                    Err(err) => {
                        let line = Obj::line("move_refused", at)
                            .field("app", app)
                            .field("queue", queue)
                            .field("reason", self.describe(&err))
                            .finish();
                        self.emit(line);
                    }
                }
            }
            Action::AddNode(spec) => self.add_node(spec)?,
            Action::RemoveNode { host } => {
                if let Some(node) = self.live_hosts.remove(host) {
                    self.must(Event::NodeRemoved { node })?;
                }
            }
            Action::Reload { allocations } => {
                let types = self.sched.resource_types().clone();
                let options = weft_config::alloc_file::AllocationOptions {
                    no_terminal_rule_check: self.sched.config().properties().no_terminal_rule_check,
                };
                let refused = match parse_reload(&allocations.text, &types, options) {
                    Err(text) => Some(text),
                    Ok(allocations) => {
                        let properties = self.sched_properties();
                        let config = SchedulerConfig::fair(allocations, properties);
                        self.send(Event::Reload(Box::new(config)))
                            .err()
                            .map(|e| self.describe(&e))
                    }
                };
                if let Some(error) = refused {
                    let line = Obj::line("config_refused", at)
                        .field("error", error)
                        .finish();
                    self.emit(line);
                }
            }
            Action::Snapshot => {
                self.must(Event::Update)?;
                let start = self.clock.now_nanos();
                let snapshot = self.sched.snapshot();
                self.cpu_nanos += self.clock.now_nanos().saturating_sub(start);
                let line = snapshot_line(at, &snapshot, self.sched.resource_types(), &self.names());
                self.emit(line);
            }
        }
        Ok(())
    }

    fn fail(&self, e: &SchedError) -> RunError {
        RunError {
            file: self.sc.file.clone(),
            at_ms: self.now.as_millis(),
            place: self.place.clone(),
            message: format!("the scheduler refused it: {}", self.describe(e)),
        }
    }

    fn track(&mut self, id: AppId) -> &mut AppTrack {
        self.apps.entry(id).or_insert_with(|| AppTrack {
            name: id.to_string(),
            state: AppState::Running,
            running: Vec::new(),
            durations: BTreeMap::new(),
        })
    }

    /// The properties in force: a reload changes only the allocation file.
    fn sched_properties(&self) -> weft_config::SchedulerProperties {
        self.sched.config().properties().clone()
    }
}

/// A cancel withdraws the newest outstanding asks, so their durations go too.
fn forget_durations(app: &mut AppTrack, priority: Option<i32>, count: Option<u32>) {
    let mut left = count.map_or(usize::MAX, |c| c as usize);
    // Without a priority, the least important asks (highest number) go first.
    for (p, queue) in app.durations.iter_mut().rev() {
        if priority.is_some_and(|want| want != *p) {
            continue;
        }
        let n = left.min(queue.len());
        queue.truncate(queue.len() - n);
        left -= n;
    }
}
