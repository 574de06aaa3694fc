//! Scale runs on the one simulator driver ([`crate::driver`]): a [`Workload`] replayed with
//! simulated ApplicationMasters, and measured.
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
pub mod capacity_form;
pub mod footprint;
pub mod metrics;
pub mod pools;
pub mod present;
#[cfg(test)]
mod tests;
pub mod walk_bound;

use crate::clock::CpuClock;
use crate::driver::{CompletionReport, EventKind, Script, Sim, Step, Timing};
use crate::queue::{Due, UpdateOrder};
use crate::workload::{AppSource, Workload};
use apps::{AppRun, AppStep};
use footprint::FootprintFigures;
use metrics::{Recorder, ScaleReport};
use std::collections::BTreeMap;
use thiserror::Error;
use walk_bound::WalkBound;
use weft_config::SchedulerKind;
use weft_sched::{
    CapacitySchedulerConfig, ContainerAsk, ContainerExit, Decision, Event, FifoConfig, SchedError,
    Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, Duration, NodeId, Resource, Time};

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
    /// With each verification, also run a sliced round (`Scheduler::verify_slice`, its slices
    /// back to back) with this budget of containers per slice, timing each slice.
    pub verify_slice_budget: Option<usize>,
}

impl Default for ScaleOptions {
    fn default() -> Self {
        ScaleOptions {
            walk: WalkMode::Fast,
            verify_every: Some(Duration::from_secs(10)),
            sample_interval: Duration::from_secs(1),
            end_override: None,
            drain: false,
            verify_slice_budget: None,
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
    // The simulated AMs ask again for preempted tasks, so their records are kept.
    let preemption = match &config {
        SchedulerConfig::Fair(f) => f.properties.preemption,
        SchedulerConfig::Capacity(c) => c.properties.capacity_preemption_monitor(),
        SchedulerConfig::Fifo(_) => false,
    };
    let mut sched = Scheduler::new(config, BTreeMap::new());
    sched.set_walk_mode(options.walk);
    let timing = Timing {
        heartbeat_interval: workload.heartbeat_interval,
        update_interval: workload.update_interval,
        update_order: UpdateOrder::AfterHeartbeats,
        completions: CompletionReport::AtNextHeartbeat,
    };
    let mut sim = Sim::new(sched, clock, timing);
    if preemption {
        sim.keep_tasks();
    }
    let mut run = ScaleRun {
        recorder: Recorder::new(workload),
        apps: Vec::new(),
        workload,
        next_closed_loop: 0,
        draining: false,
        walk_bound: WalkBound::default(),
    };
    run.start(&mut sim)?;
    let end_for_progress = end.unwrap_or(Time(0));
    let mut next_verify = options.verify_every.map(|d| Time::ZERO + d);
    while let Some((at, due)) = sim.agenda.pop() {
        if end.is_some_and(|e| at > e) && !run.draining {
            if !options.drain {
                break;
            }
            run.draining = true;
        }
        sim.now = at;
        match sim.step(&mut run, at, due)? {
            None => {}
            Some(Due::Submit(i)) => run.submit(&mut sim, i as usize)?,
            Some(Due::Sample) => {
                run.recorder.sample(sim.now, &sim.sched);
                run.walk_bound.stale();
                progress(at, end_for_progress);
                if let Some(v) = next_verify {
                    if at >= v {
                        let (drift, nanos) = sim.verify_timed();
                        run.recorder.drift(drift, nanos);
                        if let Some(budget) = options.verify_slice_budget {
                            let (drift, timing) = sim.verify_sliced_timed(budget);
                            run.recorder.sliced_drift(drift, timing);
                        }
                        next_verify = options.verify_every.map(|d| at + d);
                    }
                }
                if !run.all_done() {
                    sim.agenda.push(at + options.sample_interval, Due::Sample);
                }
            }
            // The driver carries these out itself, and a scale run has no file events.
            Some(
                Due::FileEvent(_)
                | Due::Completion(_)
                | Due::Update
                | Due::Heartbeat(_)
                | Due::Timeout,
            ) => {}
        }
        if (end.is_none() || run.draining) && run.all_done() {
            break;
        }
    }
    if run.recorder.last_sample_at() != Some(sim.now) {
        run.recorder.sample(sim.now, &sim.sched);
    }
    let (drift, nanos) = sim.verify_timed();
    run.recorder.drift(drift, nanos);
    if let Some(budget) = options.verify_slice_budget {
        let (drift, timing) = sim.verify_sliced_timed(budget);
        run.recorder.sliced_drift(drift, timing);
    }
    let walks = (sim.sched.queues_visited(), sim.sched.top_level_reachable());
    let walk_bound = run
        .walk_bound
        .finish(sim.sched.walks(), sim.sched.queues_visited());
    let mut report = run.recorder.finish(sim.now, walks);
    report.footprint = FootprintFigures::new(&sim.sched.footprint(), walk_bound.heartbeats);
    report.walk_bound = walk_bound;
    Ok(report)
}

/// The scale run's part: simulated AMs, the workload's apps and the metrics.
struct ScaleRun<'a> {
    recorder: Recorder,
    apps: Vec<AppRun>,
    workload: &'a Workload,
    next_closed_loop: u64,
    /// Past the end with `drain`: no new apps.
    draining: bool,
    /// Each heartbeat's widest walk against its node's pool.
    walk_bound: WalkBound,
}

impl Script for ScaleRun<'_> {
    type Error = ScaleError;

    fn decision(&mut self, sim: &mut Sim<'_>, d: &Decision) -> Result<(), ScaleError> {
        match d {
            Decision::Accepted { app, .. } => {
                let index = app_index(*app);
                let step = self.apps[index].accepted();
                self.advance(sim, index, step)
            }
            Decision::Rejected { app, .. } => {
                let index = app_index(*app);
                self.apps[index].rejected = true;
                self.recorder.app_rejected();
                self.new_closed_loop_app(sim, sim.now);
                Ok(())
            }
            Decision::Allocated { app, am, .. } => {
                let index = app_index(*app);
                self.recorder.allocated(
                    sim.now,
                    &self.apps[index],
                    *am,
                    sim.sched.cluster_used(),
                    sim.sched.cluster_capacity(),
                );
                if self.apps[index].first_container.is_none() {
                    self.apps[index].first_container = Some(sim.now);
                }
                if *am {
                    let step = self.apps[index].am_started();
                    self.advance(sim, index, step)
                } else {
                    Ok(())
                }
            }
            Decision::Completed { app, exit, .. } => {
                // A task ran its time (the AM container only ends with its app).
                if *exit != ContainerExit::Success {
                    return Ok(());
                }
                let index = app_index(*app);
                let step = self.apps[index].task_completed();
                self.advance(sim, index, step)
            }
            Decision::Reserved { .. } => {
                self.recorder.reserved();
                Ok(())
            }
            // Scale runs' workloads ask for no gangs and have no plans.
            Decision::Gang { .. } | Decision::ReservationEnded { .. } => Ok(()),
            Decision::PreemptWarning { .. } => {
                self.recorder.preempt_warning();
                Ok(())
            }
            Decision::Preempted {
                app,
                container,
                resources,
                am,
                ..
            } => self.preempted(sim, *app, *container, *resources, *am),
        }
    }

    fn timed(&mut self, kind: EventKind, nanos: u64) {
        self.recorder.add_time(kind, nanos);
    }

    fn heartbeat_walked(&mut self, sim: &Sim<'_>, node: NodeId) {
        self.walk_bound.heartbeat(&sim.sched, node);
    }

    fn refused(&mut self, sim: &Sim<'_>, step: Step, source: SchedError) -> ScaleError {
        let what = match step {
            Step::NodeJoin => "node join",
            Step::NodeLeave(_) => "node removal",
            Step::Heartbeat(_) => "heartbeat",
            Step::Completion(_) => "container completion",
            Step::Update => "update",
            Step::Timeout => "timeout",
        };
        refusal(sim, what, source)
    }
}

fn refusal(sim: &Sim<'_>, what: &str, source: SchedError) -> ScaleError {
    ScaleError::Refused {
        at: sim.now.as_millis(),
        what: what.to_string(),
        source,
    }
}

impl ScaleRun<'_> {
    fn start(&mut self, sim: &mut Sim<'_>) -> Result<(), ScaleError> {
        let interval = self.workload.heartbeat_interval.as_millis().max(1);
        let n = self.workload.nodes.len() as u64;
        for (i, spec) in self.workload.nodes.iter().enumerate() {
            let offset = (i as u64) * interval / n;
            sim.add_node(self, &spec.host, &spec.rack, spec.capability, Time(offset))?;
        }
        match &self.workload.apps {
            AppSource::Trace(plans) => {
                for (i, plan) in plans.iter().enumerate() {
                    self.apps.push(AppRun::new(plan.clone()));
                    sim.agenda.push(plan.submit, Due::Submit(i as u32));
                }
            }
            AppSource::ClosedLoop(cl) => {
                let spread = cl.initial_spread.as_millis();
                for k in 0..u64::from(cl.concurrent) {
                    let at = Time(spread * k / u64::from(cl.concurrent.max(1)));
                    self.new_closed_loop_app(sim, at);
                }
            }
        }
        sim.agenda.push(Time::ZERO, Due::Update);
        sim.agenda.push(Time::ZERO, Due::Sample);
        Ok(())
    }

    fn new_closed_loop_app(&mut self, sim: &mut Sim<'_>, at: Time) {
        if self.draining {
            return;
        }
        if let AppSource::ClosedLoop(cl) = &self.workload.apps {
            let plan = cl.app(self.next_closed_loop, at);
            self.next_closed_loop += 1;
            let index = self.apps.len();
            self.apps.push(AppRun::new(plan));
            sim.agenda.push(at, Due::Submit(index as u32));
        }
    }

    /// Every app created so far (submitted or still to be) has finished or was rejected, and
    /// no more will come.
    fn all_done(&self) -> bool {
        let no_more = self.draining || matches!(self.workload.apps, AppSource::Trace(_));
        no_more && self.recorder.ended_apps() == self.apps.len() as u64
    }

    /// Hands `event` to the scheduler; a refusal ends the run.
    fn call(
        &mut self,
        sim: &mut Sim<'_>,
        kind: EventKind,
        what: &str,
        event: Event,
    ) -> Result<(), ScaleError> {
        sim.call(self, kind, event)
            .map_err(|source| refusal(sim, what, source))
    }

    fn submit(&mut self, sim: &mut Sim<'_>, index: usize) -> Result<(), ScaleError> {
        let app = app_id(index);
        let (user, queue, am) = {
            let plan = &self.apps[index].plan;
            (plan.user.clone(), plan.queue.clone(), plan.am)
        };
        self.apps[index].submitted = Some(sim.now);
        self.recorder.app_submitted();
        self.call(
            sim,
            EventKind::Submit,
            "submission",
            Event::AppSubmitted {
                app,
                user,
                queue,
                am_resource: am,
            },
        )?;
        sim.process(self)
    }

    /// A container was preempted: its run time so far is lost work, and the AM asks again for
    /// a task (the same size, priority and run time, anywhere), as MapReduce's AM does. The
    /// stage still waits for that task, since its `Completed` says `preempted`, not success.
    /// A preempted AM container is only counted: the simulated AM goes on (its restart is the
    /// RM's business, not the simulated AM's).
    fn preempted(
        &mut self,
        sim: &mut Sim<'_>,
        app: AppId,
        container: ContainerId,
        resources: Resource,
        am: bool,
    ) -> Result<(), ScaleError> {
        let task = sim.task(container);
        let ran = task.map_or(Duration::from_millis(0), |t| sim.now.since(t.started));
        self.recorder.preempted(am, ran);
        let Some(task) = task.filter(|_| !am) else {
            return Ok(());
        };
        let ask = ContainerAsk {
            priority: task.priority,
            resources,
            count: 1,
            hosts: Vec::new(),
            racks: Vec::new(),
            relax_locality: true,
            tag: task.tag,
        };
        self.advance(sim, app_index(app), AppStep::Ask(vec![ask]))
    }

    /// Acts on what an AM does next.
    fn advance(
        &mut self,
        sim: &mut Sim<'_>,
        index: usize,
        step: AppStep,
    ) -> Result<(), ScaleError> {
        match step {
            AppStep::Wait => Ok(()),
            AppStep::Ask(asks) => {
                for ask in asks {
                    self.recorder.asked(u64::from(ask.count));
                    self.call(
                        sim,
                        EventKind::Ask,
                        "ask",
                        Event::Ask {
                            app: app_id(index),
                            ask,
                        },
                    )?;
                }
                sim.process(self)
            }
            AppStep::Finish => {
                self.call(
                    sim,
                    EventKind::Finish,
                    "app finish",
                    Event::AppFinished { app: app_id(index) },
                )?;
                self.apps[index].finished = Some(sim.now);
                self.recorder.app_finished(&self.apps[index]);
                sim.process(self)?;
                self.new_closed_loop_app(sim, sim.now);
                Ok(())
            }
        }
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
    /// The capacity-scheduler.xml generated from the allocation file is invalid.
    #[error("the capacity-scheduler.xml generated from {source_name}: {message}")]
    CapacityForm {
        /// Where the allocation text came from.
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

/// What a scale run under one scheduler runs: the workload (its apps sent to the queues as
/// that scheduler names them) and the scheduler's configuration, with the warnings.
#[derive(Clone, Debug)]
pub struct PreparedRun {
    /// The workload to run.
    pub workload: Workload,
    /// The scheduler's configuration.
    pub config: SchedulerConfig,
    /// Warnings found while building it.
    pub warnings: Vec<String>,
}

/// [`workload_config`] for the scheduler `kind`: Capacity runs the capacity-scheduler.xml
/// equivalent to the workload's allocation file ([`capacity_form`]), FIFO only the properties.
pub fn workload_config_for(
    workload: &Workload,
    allocations_name: &str,
    kind: SchedulerKind,
) -> Result<PreparedRun, WorkloadConfigError> {
    let (config, mut warnings) = workload_config(workload, allocations_name)?;
    let mut workload = workload.clone();
    let SchedulerConfig::Fair(fair) = config else {
        return Ok(PreparedRun {
            workload,
            config,
            warnings,
        });
    };
    let config = match kind {
        SchedulerKind::Fair => SchedulerConfig::Fair(fair),
        SchedulerKind::Fifo => SchedulerConfig::Fifo(FifoConfig {
            properties: fair.properties,
        }),
        SchedulerKind::Capacity => {
            let form = capacity_form::capacity_form(&fair.allocations);
            let (capacity, warns) =
                weft_config::capacity::parse_capacity(&form.xml, &fair.properties.resource_types)
                    .map_err(|d| WorkloadConfigError::CapacityForm {
                    source_name: allocations_name.to_string(),
                    message: d.to_string(),
                })?;
            warnings.extend(
                warns
                    .iter()
                    .map(|d| format!("the capacity form of {allocations_name}: {d}")),
            );
            capacity_form::rename_queues(&mut workload, &form.renamed);
            SchedulerConfig::Capacity(CapacitySchedulerConfig {
                capacity,
                properties: fair.properties,
            })
        }
    };
    Ok(PreparedRun {
        workload,
        config,
        warnings,
    })
}
