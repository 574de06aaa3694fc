//! The production-scale driver: replays a [`Workload`] through the real scheduler with a
//! virtual clock, simulated NodeManagers and simulated ApplicationMasters, and measures it.
//!
//! Timing model (in the spirit of Hadoop's SLS):
//! * node `i` of `n` first heartbeats at `i * interval / n`, then every interval; a container
//!   whose run time is up is reported complete in its node's next heartbeat, just before the
//!   heartbeat itself, as a real NodeManager does;
//! * an AM asks for its first stage as soon as its AM container is allocated (unmanaged AMs:
//!   when the app is accepted), and for stage k+1 when the last container of stage k completes;
//!   it finishes when its last stage is done;
//! * at one instant: submissions, heartbeats (node order), the update, then the metrics sample;
//!   otherwise ties go by insertion order.
//!
//! Only calls into the scheduler are timed (with the injected clock); everything else is the
//! simulator's own overhead.

mod apps;
pub mod metrics;
pub mod present;
#[cfg(test)]
mod tests;

use crate::clock::CpuClock;
use crate::workload::{AppSource, Workload};
use apps::{AppRun, AppStep};
use metrics::{EventKind, Recorder, ScaleReport};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use thiserror::Error;
use weft_sched::{
    ContainerExit, Decision, Event, SchedError, Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, Duration, NodeId, Time};

/// How to run.
#[derive(Clone, Debug)]
pub struct ScaleOptions {
    /// Fast path or the reference walk.
    pub walk: WalkMode,
    /// Recompute aggregates and orders from scratch this often (and at the end); `None` = only
    /// at the end.
    pub verify_every: Option<Duration>,
    /// Metrics sample period.
    pub sample_interval: Duration,
    /// Stop here even if the workload says later (the bench's shorter windows).
    pub end_override: Option<Time>,
    /// At the end time, stop submitting (a closed loop stops replacing apps) and run on until
    /// every submitted app has finished, instead of stopping there.
    pub drain: bool,
}

impl Default for ScaleOptions {
    fn default() -> Self {
        ScaleOptions {
            walk: WalkMode::Fast,
            verify_every: Some(Duration::from_secs(10)),
            sample_interval: Duration::from_secs(1),
            end_override: None,
            drain: false,
        }
    }
}

/// A scale run could not go on.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum ScaleError {
    /// The scheduler refused an event the simulation depends on.
    #[error("at {at} ms, {what}: {source}")]
    Refused {
        /// Virtual time.
        at: u64,
        /// What was being applied.
        what: String,
        /// The scheduler's error.
        source: SchedError,
    },
    /// The workload has no nodes.
    #[error("the workload has no nodes")]
    NoNodes,
    /// Neither the workload nor the options say when to stop, and apps never end.
    #[error("the workload never ends: give it an end time")]
    Endless,
}

/// What is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Due {
    Submit(u32),
    Heartbeat(u32),
    Update,
    Sample,
    /// The scheduler asked to be woken now (`Scheduler::poll_timeout`).
    Timeout,
}

impl Due {
    /// The order of kinds within an instant.
    fn class(self) -> u8 {
        match self {
            Due::Submit(_) => 0,
            Due::Heartbeat(_) => 1,
            Due::Update => 2,
            Due::Sample => 3,
            Due::Timeout => 4,
        }
    }
}

/// The agenda: ordered by (time, class, insertion sequence); the sequence is unique, so the
/// `Due` itself never decides the order.
#[derive(Default)]
struct Agenda {
    heap: BinaryHeap<Reverse<(u64, u8, u64, Due)>>,
    seq: u64,
}

impl Agenda {
    fn push(&mut self, at: Time, due: Due) {
        self.seq += 1;
        self.heap
            .push(Reverse((at.as_millis(), due.class(), self.seq, due)));
    }

    fn pop(&mut self) -> Option<(Time, Due)> {
        let Reverse((at, _, _, due)) = self.heap.pop()?;
        Some((Time(at), due))
    }
}

/// A running non-AM container as its node sees it: when it ends, and whose it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct RunningContainer {
    end: u64,
    container: u64,
}

/// A simulated NodeManager.
struct SimNode {
    id: NodeId,
    /// Containers by end time (earliest first).
    running: BinaryHeap<Reverse<RunningContainer>>,
}

/// Replays `workload` through a scheduler built from `config`; `progress` is called at each
/// metrics sample with (now, end).
pub fn run_scale(
    workload: &Workload,
    config: SchedulerConfig,
    clock: &mut dyn CpuClock,
    options: &ScaleOptions,
    progress: &mut dyn FnMut(Time, Time),
) -> Result<ScaleReport, ScaleError> {
    if workload.nodes.is_empty() {
        return Err(ScaleError::NoNodes);
    }
    let end = options.end_override.or(workload.end);
    if end.is_none() && matches!(workload.apps, AppSource::ClosedLoop(_)) {
        return Err(ScaleError::Endless);
    }
    let mut sched = Scheduler::new(config, BTreeMap::new());
    sched.set_walk_mode(options.walk);
    let mut driver = Driver {
        sched,
        clock,
        recorder: Recorder::new(workload),
        agenda: Agenda::default(),
        nodes: Vec::with_capacity(workload.nodes.len()),
        apps: Vec::new(),
        container_app: Vec::new(),
        now: Time::ZERO,
        workload,
        next_closed_loop: 0,
        decisions: Vec::new(),
        draining: false,
        armed_timeout: None,
    };
    driver.start()?;
    let end_for_progress = end.unwrap_or(Time(0));
    let mut next_verify = options.verify_every.map(|d| Time::ZERO + d);
    while let Some((at, due)) = driver.agenda.pop() {
        if end.is_some_and(|e| at > e) && !driver.draining {
            if !options.drain {
                break;
            }
            driver.draining = true;
        }
        driver.now = at;
        match due {
            Due::Submit(i) => driver.submit(i as usize)?,
            Due::Heartbeat(i) => driver.heartbeat(i as usize)?,
            Due::Timeout => {
                driver.armed_timeout = None;
                driver.timed(EventKind::Other, "timeout", Event::Timeout)?;
            }
            Due::Update => {
                driver.timed(EventKind::Update, "update", Event::Update)?;
                driver
                    .agenda
                    .push(at + workload.update_interval, Due::Update);
            }
            Due::Sample => {
                driver.sample();
                progress(at, end_for_progress);
                if let Some(v) = next_verify {
                    if at >= v {
                        driver.verify();
                        next_verify = options.verify_every.map(|d| at + d);
                    }
                }
                if !driver.all_done() {
                    driver
                        .agenda
                        .push(at + options.sample_interval, Due::Sample);
                }
            }
        }
        if (end.is_none() || driver.draining) && driver.all_done() {
            break;
        }
    }
    if driver.recorder.last_sample_at() != Some(driver.now) {
        driver.sample();
    }
    driver.verify();
    Ok(driver.recorder.finish(driver.now))
}

struct Driver<'a> {
    sched: Scheduler,
    clock: &'a mut dyn CpuClock,
    recorder: Recorder,
    agenda: Agenda,
    nodes: Vec<SimNode>,
    apps: Vec<AppRun>,
    /// Container id -> index of its app in `apps` (`u32::MAX` once the container is gone).
    container_app: Vec<u32>,
    now: Time,
    workload: &'a Workload,
    next_closed_loop: u64,
    decisions: Vec<Decision>,
    /// Past the end with `drain`: no new apps.
    draining: bool,
    /// The earliest `Due::Timeout` on the agenda (the scheduler's `poll_timeout` when armed).
    armed_timeout: Option<Time>,
}

const GONE: u32 = u32::MAX;

impl Driver<'_> {
    fn start(&mut self) -> Result<(), ScaleError> {
        let interval = self.workload.heartbeat_interval.as_millis().max(1);
        let n = self.workload.nodes.len() as u64;
        for (i, spec) in self.workload.nodes.iter().enumerate() {
            let id = NodeId(u32::try_from(i + 1).unwrap_or(u32::MAX));
            self.timed(
                EventKind::Other,
                "node join",
                Event::NodeAdded {
                    node: id,
                    host: spec.host.clone(),
                    rack: spec.rack.clone(),
                    capability: spec.capability,
                },
            )?;
            self.nodes.push(SimNode {
                id,
                running: BinaryHeap::new(),
            });
            let offset = (i as u64) * interval / n;
            self.agenda.push(Time(offset), Due::Heartbeat(i as u32));
        }
        match &self.workload.apps {
            AppSource::Trace(plans) => {
                for (i, plan) in plans.iter().enumerate() {
                    self.apps.push(AppRun::new(plan.clone()));
                    self.agenda.push(plan.submit, Due::Submit(i as u32));
                }
            }
            AppSource::ClosedLoop(cl) => {
                let spread = cl.initial_spread.as_millis();
                for k in 0..u64::from(cl.concurrent) {
                    let at = Time(spread * k / u64::from(cl.concurrent.max(1)));
                    self.new_closed_loop_app(at);
                }
            }
        }
        self.agenda.push(Time::ZERO, Due::Update);
        self.agenda.push(Time::ZERO, Due::Sample);
        Ok(())
    }

    fn new_closed_loop_app(&mut self, at: Time) {
        if self.draining {
            return;
        }
        if let AppSource::ClosedLoop(cl) = &self.workload.apps {
            let plan = cl.app(self.next_closed_loop, at);
            self.next_closed_loop += 1;
            let index = self.apps.len();
            self.apps.push(AppRun::new(plan));
            self.agenda.push(at, Due::Submit(index as u32));
        }
    }

    /// Every app created so far (submitted or still to be) has finished or was rejected, and
    /// no more will come.
    fn all_done(&self) -> bool {
        let no_more = self.draining || matches!(self.workload.apps, AppSource::Trace(_));
        no_more && self.recorder.ended_apps() == self.apps.len() as u64
    }

    /// Hands `event` to the scheduler, timing the call, and collects its decisions.
    fn timed(&mut self, kind: EventKind, what: &str, event: Event) -> Result<(), ScaleError> {
        let t0 = self.clock.now_nanos();
        let result = self.sched.handle(self.now, event);
        let t1 = self.clock.now_nanos();
        self.recorder.add_time(kind, t1.saturating_sub(t0));
        result.map_err(|source| ScaleError::Refused {
            at: self.now.as_millis(),
            what: what.to_string(),
            source,
        })?;
        while let Some(d) = self.sched.poll_decision() {
            self.decisions.push(d);
        }
        self.arm_timeout();
        Ok(())
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

    fn submit(&mut self, index: usize) -> Result<(), ScaleError> {
        let app = app_id(index);
        let (user, queue, am) = {
            let plan = &self.apps[index].plan;
            (plan.user.clone(), plan.queue.clone(), plan.am)
        };
        self.apps[index].submitted = Some(self.now);
        self.recorder.app_submitted();
        self.timed(
            EventKind::Submit,
            "submission",
            Event::AppSubmitted {
                app,
                user,
                queue,
                am_resource: am,
            },
        )?;
        self.process_decisions()
    }

    fn heartbeat(&mut self, index: usize) -> Result<(), ScaleError> {
        let now = self.now.as_millis();
        while let Some(Reverse(top)) = self.nodes[index].running.peek().copied() {
            if top.end > now {
                break;
            }
            self.nodes[index].running.pop();
            self.complete(ContainerId(top.container))?;
        }
        let node = self.nodes[index].id;
        self.timed(
            EventKind::Heartbeat,
            "heartbeat",
            Event::NodeHeartbeat { node },
        )?;
        self.process_decisions()?;
        self.agenda.push(
            self.now + self.workload.heartbeat_interval,
            Due::Heartbeat(index as u32),
        );
        Ok(())
    }

    /// A task container's run time is up: report it, and move its AM along.
    fn complete(&mut self, container: ContainerId) -> Result<(), ScaleError> {
        let Some(slot) = self.container_app.get(container.0 as usize).copied() else {
            return Ok(());
        };
        if slot == GONE {
            return Ok(());
        }
        self.timed(
            EventKind::Completion,
            "container completion",
            Event::ContainerCompleted {
                container,
                exit: ContainerExit::Success,
            },
        )?;
        self.process_decisions()?;
        let index = slot as usize;
        let step = self.apps[index].task_completed();
        self.advance(index, step)
    }

    /// Acts on what an AM does next.
    fn advance(&mut self, index: usize, step: AppStep) -> Result<(), ScaleError> {
        match step {
            AppStep::Wait => Ok(()),
            AppStep::Ask(asks) => {
                for ask in asks {
                    self.recorder.asked(u64::from(ask.count));
                    self.timed(
                        EventKind::Ask,
                        "ask",
                        Event::Ask {
                            app: app_id(index),
                            ask,
                        },
                    )?;
                }
                self.process_decisions()
            }
            AppStep::Finish => {
                self.timed(
                    EventKind::Finish,
                    "app finish",
                    Event::AppFinished { app: app_id(index) },
                )?;
                self.apps[index].finished = Some(self.now);
                self.recorder.app_finished(&self.apps[index]);
                self.process_decisions()?;
                self.new_closed_loop_app(self.now);
                Ok(())
            }
        }
    }

    /// Turns the scheduler's decisions into simulated AM and NM actions.
    fn process_decisions(&mut self) -> Result<(), ScaleError> {
        while !self.decisions.is_empty() {
            let batch = std::mem::take(&mut self.decisions);
            for d in &batch {
                self.apply(d)?;
            }
            // Keep the buffer's capacity for the next round.
            let mut batch = batch;
            batch.clear();
            if self.decisions.is_empty() {
                self.decisions = batch;
            }
        }
        Ok(())
    }

    fn apply(&mut self, d: &Decision) -> Result<(), ScaleError> {
        match d {
            Decision::Accepted { app, .. } => {
                let index = app_index(*app);
                let step = self.apps[index].accepted();
                self.advance(index, step)
            }
            Decision::Rejected { app, .. } => {
                let index = app_index(*app);
                self.apps[index].rejected = true;
                self.recorder.app_rejected();
                self.new_closed_loop_app(self.now);
                Ok(())
            }
            Decision::Allocated {
                app,
                container,
                node,
                am,
                priority,
                ..
            } => {
                let index = app_index(*app);
                let slot = container.0 as usize;
                if self.container_app.len() <= slot {
                    self.container_app.resize(slot + 1, GONE);
                }
                self.container_app[slot] = index as u32;
                self.recorder.allocated(
                    self.now,
                    &self.apps[index],
                    *am,
                    self.sched.cluster_used(),
                    self.sched.cluster_capacity(),
                );
                if self.apps[index].first_container.is_none() {
                    self.apps[index].first_container = Some(self.now);
                }
                if *am {
                    let step = self.apps[index].am_started();
                    self.advance(index, step)
                } else {
                    let duration = self.apps[index].task_started(*priority);
                    let end = (self.now + duration).as_millis();
                    let n = node.0 as usize - 1;
                    self.nodes[n].running.push(Reverse(RunningContainer {
                        end,
                        container: container.0,
                    }));
                    Ok(())
                }
            }
            Decision::Completed { container, .. } => {
                let slot = container.0 as usize;
                if let Some(app) = self.container_app.get_mut(slot) {
                    *app = GONE;
                }
                Ok(())
            }
            Decision::Reserved { .. } => {
                self.recorder.reserved();
                Ok(())
            }
        }
    }

    fn sample(&mut self) {
        self.recorder.sample(self.now, &self.sched);
    }

    fn verify(&mut self) {
        let problems = self.sched.verify();
        self.recorder.drift(problems);
    }
}

fn app_id(index: usize) -> AppId {
    AppId(index as u64 + 1)
}

fn app_index(app: AppId) -> usize {
    (app.0 - 1) as usize
}

/// A workload's scheduler configuration could not be built.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum WorkloadConfigError {
    /// A yarn-site property is invalid.
    #[error("properties: {0}")]
    Properties(String),
    /// The allocation file is invalid.
    #[error("{source_name}: {message}")]
    Allocations {
        /// Where the text came from (a file name or `the preset`).
        source_name: String,
        /// Every problem, one per line.
        message: String,
    },
}

/// Builds the scheduler configuration a workload describes (its properties over Hadoop's
/// defaults, its allocation file) and the warnings found on the way. `allocations_name` names
/// the allocation text in messages.
pub fn workload_config(
    workload: &Workload,
    allocations_name: &str,
) -> Result<(SchedulerConfig, Vec<String>), WorkloadConfigError> {
    let pairs = workload
        .properties
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()));
    let (mut properties, warns) = weft_config::site::from_pairs(pairs)
        .map_err(|d| WorkloadConfigError::Properties(d.to_string()))?;
    let mut warnings: Vec<String> = warns.iter().map(|d| format!("properties: {d}")).collect();
    for i in 0..workload.resource_types.len() {
        let name = workload.resource_types.name(i);
        if properties.resource_types.index_of(name).is_none() {
            // The workload's amounts mention it; registering cannot fail below the cap the
            // workload's own registry already respects.
            let _ = properties.resource_types.register(name);
        }
    }
    let allocations = match &workload.allocations_xml {
        None => weft_config::AllocationConfig::default(),
        Some(text) => {
            let options = weft_config::alloc_file::AllocationOptions {
                no_terminal_rule_check: properties.no_terminal_rule_check,
            };
            let (config, warns) = weft_config::alloc_file::parse_allocations_with(
                text,
                &properties.resource_types,
                options,
            )
            .map_err(|d| WorkloadConfigError::Allocations {
                source_name: allocations_name.to_string(),
                message: d.to_string(),
            })?;
            warnings.extend(warns.iter().map(|d| format!("{allocations_name}: {d}")));
            config
        }
    };
    Ok((SchedulerConfig::fair(allocations, properties), warnings))
}
