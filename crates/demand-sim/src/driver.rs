//! The discrete-event loop: virtual time advances by the NM heartbeat interval (1 s); at each
//! step the trace's arrivals are submitted (apps, or reservations first under Rayon), the
//! core is ticked (and woken at its scheduler timers), every node heartbeats (reporting what
//! started and what ended), then every live AM heartbeats. The core's outputs (AM launches,
//! container stops) are carried out as they appear; store writes are dropped.

use std::collections::BTreeMap;

use weft_plan::{Interpreter, ReservationDefinition, ReservationId, ReservationRequest};
use weft_rm_core::{
    DemandState, LaunchContext, NodeRegistration, NodeState, Output, RmCore, Submission,
};
use weft_types::yarn_id::ApplicationId;
use weft_types::{Duration, Resource, Time};

use crate::am::{AmRun, Asking};
use crate::cluster::{rm_config, Configuration};
use crate::node::SimNode;
use crate::workload::{Job, JobKind, MixParams, NODE_MEMORY_MB, NODE_VCORES};
use crate::SimError;

/// The cluster timestamp in every id of a run.
const CLUSTER_TS: u64 = 1_700_000_000_000;
/// The NM (and AM) heartbeat interval: the loop's step.
pub const STEP_MS: u64 = 1000;
/// The AM container of every job (MapReduce's default, 1 GiB / 1 vcore).
const AM_RESOURCE: Resource = Resource::new(1024, 1);

/// What one run does besides the configuration.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// The configuration.
    pub configuration: Configuration,
    /// Scenario C16: every stage's ask sent as an unconstrained demand instead.
    pub wrap_asks_as_demands: bool,
    /// Keep the allocation trace (one line per container given to an AM, per AM launch, per
    /// demand transition an AM is told).
    pub record_trace: bool,
}

impl RunOptions {
    /// A run of `configuration` without a trace.
    pub fn new(configuration: Configuration) -> RunOptions {
        RunOptions {
            configuration,
            wrap_asks_as_demands: false,
            record_trace: false,
        }
    }
}

/// Counters and traces the AMs feed.
#[derive(Default)]
pub(crate) struct Recorder {
    record: bool,
    pub(crate) allocations: u64,
    pub(crate) planning_us: Vec<f64>,
    pub(crate) trace: Vec<String>,
    pub(crate) demand_lines: Vec<String>,
    pub(crate) refusals: BTreeMap<String, u64>,
    pub(crate) ask_refusals: BTreeMap<String, u64>,
    /// Task containers that ended killed (preempted, lost with a node, a demand's kill).
    pub(crate) containers_killed: u64,
    /// The vcore-seconds those had run (work lost).
    pub(crate) work_lost_vcore_s: f64,
}

/// An error's kind: its text without numbers, ids and JSON pointers (the first problem only).
fn kind_of(why: &str) -> String {
    let first = why.split(';').next().unwrap_or(why);
    first
        .split_whitespace()
        .filter(|w| !w.starts_with('/') && !w.contains('_'))
        .map(|w| {
            if w.chars().any(|c| c.is_ascii_digit()) {
                "N"
            } else {
                w
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl Recorder {
    /// An admission refused, by its reason.
    pub(crate) fn refused(&mut self, why: &str) {
        *self.refusals.entry(kind_of(why)).or_insert(0) += 1;
    }

    /// An AM's Allocate call refused as a whole, by its reason.
    pub(crate) fn ask_refused(&mut self, why: &str) {
        *self.ask_refusals.entry(kind_of(why)).or_insert(0) += 1;
    }

    pub(crate) fn line(&mut self, f: impl FnOnce() -> String) {
        if self.record {
            self.trace.push(f());
        }
    }

    pub(crate) fn demand_line(&mut self, f: impl FnOnce() -> String) {
        if self.record {
            self.demand_lines.push(f());
        }
    }
}

/// Resource-time sums between the end of the warm-up and the last arrival.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    /// Σ allocated memory (MB·steps) and Σ capacity.
    pub memory: (f64, f64),
    /// Σ allocated vcores and Σ capacity.
    pub vcores: (f64, f64),
    /// Σ dominant share (per step) and the number of steps.
    pub dominant: (f64, f64),
}

/// What happened to one job.
#[derive(Clone, Debug)]
pub struct JobOutcome {
    /// Its kind.
    pub kind: JobKind,
    /// Arrival, ms.
    pub arrival_ms: u64,
    /// Its deadline, ms.
    pub deadline_ms: Option<u64>,
    /// Its longest task per stage summed as they actually ran (the critical path with every
    /// task in parallel: its isolated runtime, less the driver's overhead).
    pub ideal_ms: u64,
    /// Whether its reservation or demands were accepted (`None`: not planned in this run).
    pub admitted: Option<bool>,
    /// When its last container completed, if every task succeeded.
    pub completion_ms: Option<u64>,
    /// Whether each stage started only after the previous one ended.
    pub order_respected: bool,
}

impl JobOutcome {
    /// Its last container completed by its deadline.
    pub fn hit(&self) -> bool {
        matches!((self.completion_ms, self.deadline_ms), (Some(c), Some(d)) if c <= d)
    }
}

/// Everything a run measured.
pub struct RunOutput {
    /// The configuration.
    pub configuration: Configuration,
    /// Per job, in trace order.
    pub jobs: Vec<JobOutcome>,
    /// Utilisation sums.
    pub usage: Usage,
    /// Wall time of each admission (reservation submission, or the Allocate call carrying a
    /// job's demands), µs.
    pub planning_us: Vec<f64>,
    /// Admitted strict demands that ended FAILED, by reason.
    pub honesty: BTreeMap<String, u64>,
    /// Demands whose timeline names a planner decision (planned, deferred, unplannable, replanned).
    pub planner_decisions: u64,
    /// Refused admissions by reason (reservations and demands).
    pub refusals: BTreeMap<String, u64>,
    /// AM Allocate calls the core refused as a whole, by reason (asked again a step later).
    pub ask_refusals: BTreeMap<String, u64>,
    /// Reservations submitted to the core.
    pub reservations_submitted: u64,
    /// Containers handed to AMs.
    pub allocations: u64,
    /// Task containers that ended killed (preempted, lost with a node, killed for a demand):
    /// §4.1's preemption cost, with the vcore-seconds of work they had run.
    pub containers_killed: u64,
    /// The work those containers lost, vcore-seconds.
    pub work_lost_vcore_s: f64,
    /// Nodes the RM holds LOST at the end (the fault variant).
    pub nodes_lost: usize,
    /// The largest share of one node's memory or vcores ever allocated (at most 1 unless a
    /// scheduler over-commits a node).
    pub peak_node_share: f64,
    /// When the run stopped (virtual ms).
    pub end_ms: u64,
    /// The allocation trace (with `record_trace`).
    pub trace: Vec<String>,
    /// The demand-state lines (with `record_trace`).
    pub demand_lines: Vec<String>,
}

struct Sim<'a> {
    core: RmCore,
    jobs: &'a [Job],
    options: RunOptions,
    nodes: BTreeMap<String, SimNode>,
    /// Every AM by job, and the live ones by application.
    runs: Vec<Option<AmRun>>,
    live: BTreeMap<ApplicationId, usize>,
    admitted: Vec<Option<bool>>,
    /// Rayon: accepted reservations whose app is not submitted yet (job, id, start, end).
    waiting: Vec<(usize, ReservationId, u64, u64)>,
    rec: Recorder,
    reservations_submitted: u64,
    /// The fault variant: nodes that stop heartbeating at `loss_at_ms`, and whether they have.
    doomed: Vec<String>,
    loss_at_ms: u64,
    lost: bool,
    peak_node_share: f64,
}

/// Runs `jobs` on `params.nodes` nodes under `options`.
pub fn run(params: &MixParams, jobs: &[Job], options: RunOptions) -> Result<RunOutput, SimError> {
    let mut config = rm_config(options.configuration)?;
    // Keep every finished application (and so its demands, which leave with it) until the
    // end: honesty and planner decisions are read from the core's demands then, and YARN's
    // retention of 1,000 would evict most of a trace's jobs first.
    config.max_completed_apps = config.max_completed_apps.max(jobs.len());
    let mut core = RmCore::new(config, CLUSTER_TS, Time(0));
    while core.poll_output().is_some() {}
    let mut nodes = BTreeMap::new();
    for i in 0..params.nodes {
        let id = format!("sim{i:04}:8041");
        core.node_register(
            Time(0),
            NodeRegistration {
                node_id: id.clone(),
                address: id.clone(),
                http_address: String::new(),
                hadoop_address: String::new(),
                capability: Resource::new(NODE_MEMORY_MB, NODE_VCORES),
                rack: String::new(),
                containers: Vec::new(),
                secret: String::new(),
            },
        )
        .map_err(|e| SimError::Core(format!("register {id}: {e}")))?;
        let secret = core.node_secret(&id).unwrap_or_default();
        nodes.insert(id, SimNode::new(secret));
    }
    let mut sim = Sim {
        core,
        jobs,
        options,
        nodes,
        runs: (0..jobs.len()).map(|_| None).collect(),
        live: BTreeMap::new(),
        admitted: vec![None; jobs.len()],
        waiting: Vec::new(),
        rec: Recorder {
            record: options.record_trace,
            ..Recorder::default()
        },
        reservations_submitted: 0,
        doomed: doomed_nodes(params),
        loss_at_ms: (params.loss_at_hours * 3_600_000.0) as u64,
        lost: false,
        peak_node_share: 0.0,
    };
    sim.handle_outputs(0);
    let last_arrival = jobs.last().map_or(0, |j| j.arrival_ms);
    let warmup_end = (params.warmup_minutes * 60_000.0) as u64;
    let stop_at = ((params.hours + params.drain_hours) * 3_600_000.0) as u64;
    let mut usage = Usage::default();
    let mut next_job = 0;
    let mut t = 0;
    loop {
        while next_job < jobs.len() && jobs[next_job].arrival_ms <= t {
            sim.arrive(next_job, t)?;
            next_job += 1;
        }
        sim.lose_nodes(t);
        sim.submit_activated(t)?;
        sim.core.tick(Time(t));
        if sim.core.poll_timeout().is_some_and(|p| p <= Time(t)) {
            sim.core.timeout(Time(t));
        }
        sim.handle_outputs(t);
        sim.heartbeats(t)?;
        sim.am_heartbeats(t)?;
        sim.note_node_shares();
        if t >= warmup_end && t <= last_arrival {
            let (capacity, used) = sim.core.cluster_resources();
            let share = |u: i64, c: i64| if c > 0 { u as f64 / c as f64 } else { 0.0 };
            let m = share(used.memory_mb(), capacity.memory_mb());
            let v = share(used.vcores(), capacity.vcores());
            usage.memory.0 += used.memory_mb() as f64;
            usage.memory.1 += capacity.memory_mb() as f64;
            usage.vcores.0 += used.vcores() as f64;
            usage.vcores.1 += capacity.vcores() as f64;
            usage.dominant.0 += m.max(v);
            usage.dominant.1 += 1.0;
        }
        let all_in = next_job == jobs.len() && sim.waiting.is_empty();
        if (all_in && sim.live.is_empty()) || t >= stop_at {
            break;
        }
        t += STEP_MS;
    }
    Ok(sim.finish(usage, t))
}

/// The fault variant's nodes, spread evenly over the cluster (`lost_nodes` of them).
fn doomed_nodes(params: &MixParams) -> Vec<String> {
    let lost = params.lost_nodes.min(params.nodes);
    (0..lost)
        .map(|k| {
            format!(
                "sim{:04}:8041",
                u64::from(k) * u64::from(params.nodes) / u64::from(lost)
            )
        })
        .collect()
}

impl Sim<'_> {
    fn note_node_shares(&mut self) {
        let share = |u: i64, c: i64| if c > 0 { u as f64 / c as f64 } else { 0.0 };
        for n in self.core.node_infos() {
            let memory = share(n.used.memory_mb(), n.capability.memory_mb());
            let vcores = share(n.used.vcores(), n.capability.vcores());
            self.peak_node_share = self.peak_node_share.max(memory).max(vcores);
        }
    }

    /// The fault variant: at its instant the doomed nodes go silent (no heartbeat, their
    /// containers never report again, AMs on them stop); the RM finds them LOST after its NM
    /// expiry, as YARN's liveness monitor does.
    fn lose_nodes(&mut self, t: u64) {
        if self.lost || self.doomed.is_empty() || t < self.loss_at_ms {
            return;
        }
        self.lost = true;
        for id in &self.doomed {
            if let Some(node) = self.nodes.get_mut(id) {
                node.silent = true;
            }
            self.rec.line(|| format!("{t} node_silent {id}"));
        }
    }

    fn arrive(&mut self, index: usize, t: u64) -> Result<(), SimError> {
        let job = &self.jobs[index];
        if self.options.configuration == Configuration::Rayon && job.kind == JobKind::Production {
            let id = self.core.new_reservation();
            let definition = mr_reservation(job, t);
            let started = crate::clock::Stopwatch::start();
            let result =
                self.core
                    .submit_reservation(Time(t), job.user(), "prod", Some(id), &definition);
            self.rec.planning_us.push(started.micros());
            self.reservations_submitted += 1;
            self.handle_outputs(t);
            if let Err(e) = &result {
                self.rec.refused(&e.to_string());
            }
            if result.is_ok() {
                let window = self
                    .core
                    .reservations()
                    .find(&id)
                    .map(|r| (r.start.as_millis(), r.end.as_millis()));
                if let Some((start, end)) = window {
                    self.admitted[index] = Some(true);
                    self.waiting.push((index, id, start, end));
                    return Ok(());
                }
            }
            // Refused: the job runs without a reservation, as SLS does.
            self.admitted[index] = Some(false);
        }
        self.submit(index, t, None).map(|_| ())
    }

    /// Rayon: submits each waiting job once its reservation is active (retrying while the
    /// core still calls it not active; after its end, without it).
    fn submit_activated(&mut self, t: u64) -> Result<(), SimError> {
        let due: Vec<(usize, ReservationId, u64, u64)> = self
            .waiting
            .iter()
            .filter(|(_, _, start, _)| *start <= t)
            .cloned()
            .collect();
        self.waiting.retain(|(_, _, start, _)| *start > t);
        for (index, id, start, end) in due {
            if t >= end {
                self.submit(index, t, None)?;
            } else if !self.submit(index, t, Some(id.to_string()))? {
                self.waiting.push((index, id, start, end));
            }
        }
        Ok(())
    }

    /// Submits the job's app; false when the core rejected it.
    fn submit(
        &mut self,
        index: usize,
        t: u64,
        reservation: Option<String>,
    ) -> Result<bool, SimError> {
        let job = &self.jobs[index];
        let app = self.core.new_application(Time(t));
        let submission = Submission {
            name: format!("{:?}-{index}", job.kind).to_lowercase(),
            user: job.user().into(),
            queue: Some(job.queue().into()),
            application_type: "MAPREDUCE".into(),
            am_resource: AM_RESOURCE,
            launch: LaunchContext {
                commands: vec!["sim-am".into()],
                ..LaunchContext::default()
            },
            reservation_id: reservation,
            ..Submission::default()
        };
        self.core
            .submit(Time(t), app, submission)
            .map_err(|e| SimError::Core(format!("submit job {index}: {e}")))?;
        self.handle_outputs(t);
        if self
            .core
            .app_report(&app)
            .is_none_or(|r| r.state.is_final())
        {
            return Ok(false);
        }
        let asking = match job.kind {
            JobKind::BestEffort => Asking::Plain,
            _ if self.options.configuration.uses_demands() => Asking::Demands,
            _ => Asking::Plain,
        };
        let asking = if self.options.wrap_asks_as_demands {
            Asking::WrappedAsDemands
        } else {
            asking
        };
        self.runs[index] = Some(AmRun::new(job, app, asking));
        self.live.insert(app, index);
        Ok(true)
    }

    fn heartbeats(&mut self, t: u64) -> Result<(), SimError> {
        let ids: Vec<String> = self.nodes.keys().cloned().collect();
        for id in ids {
            let Some(node) = self.nodes.get_mut(&id).filter(|n| !n.silent) else {
                continue;
            };
            let status = node.status(t);
            let reply = self
                .core
                .node_heartbeat(Time(t), &id, status)
                .map_err(|e| SimError::Core(format!("heartbeat {id}: {e}")))?;
            for c in &reply.containers_to_stop {
                node.stop(c);
            }
            self.handle_outputs(t);
        }
        Ok(())
    }

    fn am_heartbeats(&mut self, t: u64) -> Result<(), SimError> {
        let live: Vec<usize> = self.live.values().copied().collect();
        for index in live {
            let Some(am) = self.runs[index].as_mut() else {
                continue;
            };
            // An AM on a silent node is gone with it (the RM learns at its expiries): the job
            // goes on only if the RM launches another attempt elsewhere, and is lost once the
            // RM holds the application final.
            if am
                .am_node()
                .and_then(|n| self.nodes.get(n))
                .is_some_and(|n| n.silent)
            {
                if self
                    .core
                    .app_report(&am.app)
                    .is_none_or(|r| r.state.is_final())
                {
                    am.done = Some(false);
                    am.finished_ms = Some(t);
                }
                continue;
            }
            am.step(
                &mut self.core,
                t,
                &self.jobs[index],
                &mut self.nodes,
                &mut self.rec,
            )?;
            self.handle_outputs(t);
        }
        let runs = &self.runs;
        self.live
            .retain(|_, index| runs[*index].as_ref().is_some_and(|a| a.done.is_none()));
        Ok(())
    }

    fn handle_outputs(&mut self, t: u64) {
        while let Some(output) = self.core.poll_output() {
            match output {
                Output::LaunchAm(launch) => {
                    let token = launch
                        .launch
                        .environment
                        .get("WEFT_AM_TOKEN")
                        .cloned()
                        .unwrap_or_default();
                    self.rec.line(|| {
                        format!(
                            "{t} am {} app={} node={}",
                            launch.container, launch.attempt.app, launch.node_id
                        )
                    });
                    if let Some(node) = self.nodes.get_mut(&launch.node_id) {
                        node.launch(launch.container, launch.resource, None);
                    }
                    let index = self.live.get(&launch.attempt.app).copied();
                    if let Some(am) = index.and_then(|i| self.runs[i].as_mut()) {
                        am.launched(
                            launch.attempt,
                            token,
                            launch.container,
                            launch.node_id.clone(),
                        );
                    }
                }
                Output::StopContainer {
                    node_id, container, ..
                } => {
                    if let Some(node) = self.nodes.get_mut(&node_id) {
                        node.stop(&container);
                    }
                }
                Output::Persist(_) => {}
            }
        }
    }

    fn finish(self, usage: Usage, end_ms: u64) -> RunOutput {
        let nodes_lost = self
            .core
            .node_infos()
            .iter()
            .filter(|n| n.state == NodeState::Lost)
            .count();
        let mut honesty = BTreeMap::new();
        let mut planner_decisions = 0;
        let mut jobs = Vec::with_capacity(self.jobs.len());
        for (index, job) in self.jobs.iter().enumerate() {
            let run = self.runs[index].as_ref();
            let mut admitted = self.admitted[index];
            if let Some(am) = run {
                if am.admitted.is_some() {
                    admitted = am.admitted;
                }
                for key in &am.demand_keys {
                    let Some(report) = self.core.demand(key) else {
                        continue;
                    };
                    if report.timeline.iter().any(|s| {
                        matches!(
                            s.reason.as_str(),
                            "planned" | "deferred" | "unplannable" | "replanned"
                        )
                    }) {
                        planner_decisions += 1;
                    }
                    let was_admitted = report
                        .timeline
                        .iter()
                        .any(|s| s.state == DemandState::Accepted);
                    if job.kind == JobKind::Production
                        && was_admitted
                        && report.state == DemandState::Failed
                    {
                        *honesty
                            .entry(report.reason.as_str().to_string())
                            .or_insert(0) += 1;
                    }
                }
            }
            let order_respected =
                run.is_none_or(|am| {
                    am.first_allocation.iter().skip(1).zip(&am.last_end).all(
                        |(first, previous_end)| match (first, previous_end) {
                            (Some(f), Some(e)) => f >= e,
                            (Some(_), None) => false,
                            _ => true,
                        },
                    )
                });
            jobs.push(JobOutcome {
                kind: job.kind,
                arrival_ms: job.arrival_ms,
                deadline_ms: job.deadline_ms,
                ideal_ms: job.actual_ideal_ms(),
                admitted: if job.kind == JobKind::Production && self.options.configuration.plans() {
                    admitted
                } else {
                    None
                },
                completion_ms: run.and_then(AmRun::completion_ms),
                order_respected,
            });
        }
        RunOutput {
            configuration: self.options.configuration,
            jobs,
            usage,
            planning_us: self.rec.planning_us,
            honesty,
            refusals: self.rec.refusals,
            ask_refusals: self.rec.ask_refusals,
            planner_decisions,
            reservations_submitted: self.reservations_submitted,
            allocations: self.rec.allocations,
            containers_killed: self.rec.containers_killed,
            work_lost_vcore_s: self.rec.work_lost_vcore_s,
            nodes_lost,
            peak_node_share: self.peak_node_share,
            end_ms,
            trace: self.rec.trace,
            demand_lines: self.rec.demand_lines,
        }
    }
}

/// Hadoop's `ReservationClientUtil.createMRReservation`: the maps as one gang of every map
/// (the largest map's size, the longest map's time), then the reduces likewise,
/// `R_ORDER_NO_GAP`, over [arrival, deadline).
fn mr_reservation(job: &Job, t: u64) -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(t),
        deadline: Time(job.deadline_ms.unwrap_or(t)),
        name: format!("reservation_job_{}", job.index),
        priority: 0,
        recurrence: None,
        interpreter: Interpreter::OrderNoGap,
        requests: job
            .stages
            .iter()
            .map(|s| {
                let n = u32::try_from(s.runtimes_ms.len()).unwrap_or(u32::MAX);
                ReservationRequest {
                    capability: s.capability,
                    num_containers: n,
                    concurrency: n,
                    duration: Duration::from_millis(s.longest_ms()),
                }
            })
            .collect(),
    }
}
