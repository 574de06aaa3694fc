//! A virtual ApplicationMaster playing one job: it registers, asks stage by stage (plain
//! asks) or sends the job's demands at once, launches every container it is given on the node
//! that got it (running for the task's time), releases what it cannot use, and finishes when
//! the last task completed.

use std::collections::{BTreeMap, VecDeque};

use serde_json::{json, Value};
use weft_rm_core::{
    AllocateRequest, AllocateResponse, AmDemand, DemandState, FinalStatus, ResourceAsk, RmCore,
};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::Time;

use crate::driver::Recorder;
use crate::node::SimNode;
use crate::workload::{Job, JobKind, Stage};
use crate::SimError;

/// How the AM asks for its containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Asking {
    /// Plain YARN asks, one stage after the other.
    Plain,
    /// Plain asks, each sent as an unconstrained demand instead (scenario C16).
    WrappedAsDemands,
    /// The job's time-aware demands, sent at registration.
    Demands,
}

struct Task {
    stage: usize,
    runtime_ms: u64,
    end_ms: u64,
}

pub(crate) struct AmRun {
    pub(crate) app: ApplicationId,
    attempt: Option<(AttemptId, String)>,
    am_container: Option<(ContainerId, String)>,
    registered: bool,
    asking: Asking,
    /// Plain asking: the stage being run, and whether its ask went out.
    stage: usize,
    asked: Option<usize>,
    reask: bool,
    /// Per stage: run times of the tasks not yet given a container.
    pending: Vec<VecDeque<u64>>,
    /// Per stage: tasks not yet completed successfully.
    left: Vec<usize>,
    tasks: BTreeMap<ContainerId, Task>,
    release: Vec<ContainerId>,
    kill: Vec<u64>,
    /// The job's demand keys, once sent.
    pub(crate) demand_keys: Vec<String>,
    /// Whether every demand was admitted (`None`: no demands sent).
    pub(crate) admitted: Option<bool>,
    /// Per stage: the first allocation and the last successful end.
    pub(crate) first_allocation: Vec<Option<u64>>,
    pub(crate) last_end: Vec<Option<u64>>,
    /// `Some(succeeded)` once the AM unregistered (or its attempt was lost).
    pub(crate) done: Option<bool>,
    pub(crate) finished_ms: Option<u64>,
}

impl AmRun {
    pub(crate) fn new(job: &Job, app: ApplicationId, asking: Asking) -> AmRun {
        AmRun {
            app,
            attempt: None,
            am_container: None,
            registered: false,
            asking,
            stage: 0,
            asked: None,
            reask: false,
            pending: job
                .stages
                .iter()
                .map(|s| s.actual_ms.iter().copied().collect())
                .collect(),
            left: job.stages.iter().map(|s| s.runtimes_ms.len()).collect(),
            tasks: BTreeMap::new(),
            release: Vec::new(),
            kill: Vec::new(),
            demand_keys: Vec::new(),
            admitted: None,
            first_allocation: vec![None; job.stages.len()],
            last_end: vec![None; job.stages.len()],
            done: None,
            finished_ms: None,
        }
    }

    /// The RM launched the AM container (again, after a lost attempt: MapReduce's new attempt
    /// runs every task not yet completed, the old attempt's containers being gone).
    pub(crate) fn launched(
        &mut self,
        attempt: AttemptId,
        token: String,
        container: ContainerId,
        node: String,
    ) {
        if self.attempt.is_some() {
            for task in std::mem::take(&mut self.tasks).into_values() {
                self.pending[task.stage].push_back(task.runtime_ms);
            }
            self.release.clear();
            self.asked = None;
            self.reask = true;
        }
        self.attempt = Some((attempt, token));
        self.am_container = Some((container, node));
        self.registered = false;
    }

    /// The AM's heartbeat at `t`.
    pub(crate) fn step(
        &mut self,
        core: &mut RmCore,
        t: u64,
        job: &Job,
        nodes: &mut BTreeMap<String, SimNode>,
        rec: &mut Recorder,
    ) -> Result<(), SimError> {
        if self.done.is_some() {
            return Ok(());
        }
        let Some((attempt, token)) = self.attempt.clone() else {
            return Ok(());
        };
        if !self.registered {
            if core
                .am_register(Time(t), attempt, &token, "sim-am", 0, None)
                .is_err()
            {
                return Ok(());
            }
            self.registered = true;
        }
        let mut req = AllocateRequest {
            releases: std::mem::take(&mut self.release),
            kill_demands: std::mem::take(&mut self.kill),
            ..AllocateRequest::default()
        };
        let sends_demands = self.asking == Asking::Demands && self.admitted.is_none();
        if sends_demands {
            req.demands = job_demands(job, t)
                .into_iter()
                .map(|description| AmDemand {
                    description,
                    ..AmDemand::default()
                })
                .collect();
            self.demand_keys = (1..=req.demands.len())
                .map(|id| format!("{}/{id}", self.app))
                .collect();
        } else if self.asking != Asking::Demands || self.admitted == Some(false) {
            self.ask_stage(job, &mut req);
        }
        let (retry_releases, retry_kills) = (req.releases.clone(), req.kill_demands.clone());
        let started = crate::clock::Stopwatch::start();
        let reply = core.am_allocate(Time(t), attempt, &token, req);
        if sends_demands {
            rec.planning_us.push(started.micros());
        }
        let reply = match reply {
            Ok(r) => r,
            Err(e) if sends_demands => {
                // Refused as a whole (e.g. a deadline already unreachable): the job runs on
                // plain asks, not admitted.
                rec.refused(&e.to_string());
                self.admitted = Some(false);
                self.demand_keys.clear();
                return Ok(());
            }
            Err(e) => {
                if core
                    .app_report(&self.app)
                    .is_none_or(|r| r.state.is_final())
                {
                    self.done = Some(false);
                    self.finished_ms = Some(t);
                } else {
                    // Refused as a whole (nothing applied): asked again at the next heartbeat.
                    rec.ask_refused(&e.to_string());
                    self.release = retry_releases;
                    self.kill = retry_kills;
                    self.asked = None;
                }
                return Ok(());
            }
        };
        if sends_demands {
            self.judge_admission(core, rec);
        }
        self.take(core, t, job, nodes, rec, reply);
        self.finish_if_done(core, t, &attempt, &token, nodes)
    }

    /// Admitted iff every demand reached ACCEPTED; otherwise the rest are killed and the
    /// job runs on plain asks.
    fn judge_admission(&mut self, core: &RmCore, rec: &mut Recorder) {
        let reports: Vec<_> = self
            .demand_keys
            .iter()
            .filter_map(|k| core.demand(k))
            .collect();
        let admitted = reports.len() == self.demand_keys.len()
            && reports
                .iter()
                .all(|r| r.timeline.iter().any(|s| s.state == DemandState::Accepted));
        self.admitted = Some(admitted);
        if !admitted {
            // One refusal per job: the first demand refused says why.
            if let Some(r) = reports.iter().find(|r| r.state == DemandState::Failed) {
                rec.refused(r.reason.as_str());
            }
            self.kill = reports
                .iter()
                .filter(|r| !matches!(r.state, DemandState::Failed | DemandState::Finished))
                .map(|r| r.demand_id)
                .collect();
        }
    }

    fn ask_stage(&mut self, job: &Job, req: &mut AllocateRequest) {
        while self.stage < self.left.len() && self.left[self.stage] == 0 {
            self.stage += 1;
        }
        let Some(stage) = job.stages.get(self.stage) else {
            return;
        };
        if self.asked == Some(self.stage) && !self.reask {
            return;
        }
        self.asked = Some(self.stage);
        self.reask = false;
        let count = self.pending[self.stage].len();
        if self.asking == Asking::WrappedAsDemands {
            req.demands.push(AmDemand {
                description: unconstrained(self.stage, stage, count),
                ..AmDemand::default()
            });
        } else {
            req.asks.push(ResourceAsk {
                priority: stage.priority,
                resource: stage.capability,
                count: u32::try_from(count).unwrap_or(u32::MAX),
                hosts: Vec::new(),
                racks: Vec::new(),
                relax_locality: true,
            });
        }
    }

    fn take(
        &mut self,
        core: &RmCore,
        t: u64,
        job: &Job,
        nodes: &mut BTreeMap<String, SimNode>,
        rec: &mut Recorder,
        reply: AllocateResponse,
    ) {
        for c in reply.allocated {
            rec.allocations += 1;
            let stage = job.stages.iter().position(|s| s.priority == c.priority);
            let runtime = stage.and_then(|s| self.pending[s].pop_front());
            let (Some(stage), Some(runtime), Some(node)) =
                (stage, runtime, nodes.get_mut(&c.node_id))
            else {
                self.release.push(c.id);
                continue;
            };
            rec.line(|| {
                format!(
                    "{t} alloc {} app={} node={} mem={} vcores={} prio={}",
                    c.id,
                    self.app,
                    c.node_id,
                    c.resource.memory_mb(),
                    c.resource.vcores(),
                    c.priority
                )
            });
            let end = t + runtime;
            node.launch(c.id, c.resource, Some(end));
            self.tasks.insert(
                c.id,
                Task {
                    stage,
                    runtime_ms: runtime,
                    end_ms: end,
                },
            );
            self.first_allocation[stage].get_or_insert(t);
        }
        for c in reply.completed {
            let Some(task) = self.tasks.remove(&c.id) else {
                continue;
            };
            if c.exit_status != 0 {
                rec.containers_killed += 1;
                let started = task.end_ms.saturating_sub(task.runtime_ms);
                let ran_ms = t.min(task.end_ms).saturating_sub(started);
                let vcores = job.stages[task.stage].capability.vcores() as f64;
                rec.work_lost_vcore_s += ran_ms as f64 / 1000.0 * vcores;
            }
            if c.exit_status == 0 {
                self.left[task.stage] = self.left[task.stage].saturating_sub(1);
                let last = self.last_end[task.stage].get_or_insert(task.end_ms);
                *last = (*last).max(task.end_ms);
            } else if self.asking == Asking::Demands && self.admitted == Some(true) {
                // A demand's container does not come back (its count was used): the demand
                // has failed or will; the job is lost.
                self.done = Some(false);
            } else {
                // Killed or preempted: MapReduce runs the task again.
                self.pending[task.stage].push_back(task.runtime_ms);
                self.reask = true;
            }
        }
        for u in reply.demand_updates {
            rec.demand_line(|| {
                format!(
                    "{t} demand_state {}/{} {:?} {}",
                    self.app,
                    u.demand_id,
                    u.state,
                    u.reason.as_str()
                )
            });
            if u.state == DemandState::Failed && self.admitted == Some(true) {
                self.done = Some(false);
            }
        }
        let _ = core;
    }

    fn finish_if_done(
        &mut self,
        core: &mut RmCore,
        t: u64,
        attempt: &AttemptId,
        token: &str,
        nodes: &mut BTreeMap<String, SimNode>,
    ) -> Result<(), SimError> {
        let succeeded = self.left.iter().all(|l| *l == 0);
        let status = match self.done {
            Some(false) => FinalStatus::Failed,
            _ if succeeded => FinalStatus::Succeeded,
            _ => return Ok(()),
        };
        core.am_finish(Time(t), *attempt, token, status, "", None)
            .map_err(|e| SimError::Core(format!("{}: finish: {e}", self.app)))?;
        self.done = Some(status == FinalStatus::Succeeded);
        self.finished_ms = Some(t);
        if let Some((container, node)) = &self.am_container {
            if let Some(n) = nodes.get_mut(node) {
                n.end_at(container, t);
            }
        }
        Ok(())
    }

    /// The node the AM runs on.
    pub(crate) fn am_node(&self) -> Option<&str> {
        self.am_container.as_ref().map(|(_, node)| node.as_str())
    }

    /// The latest successful task end: when the job's last container completed.
    pub(crate) fn completion_ms(&self) -> Option<u64> {
        if self.done != Some(true) {
            return None;
        }
        self.last_end.iter().flatten().copied().max()
    }
}

fn seconds_up(ms: u64) -> u64 {
    ms.div_ceil(1000)
}

fn request(stage: &Stage, count: usize) -> Value {
    json!({
        "capability": {"memory": stage.capability.memory_mb(), "vCores": stage.capability.vcores()},
        "num-containers": count,
        "priority": stage.priority,
    })
}

/// C16's wrapping: the ask as a demand with no time field, no order and no gang.
fn unconstrained(index: usize, stage: &Stage, count: usize) -> Value {
    json!({"DemandID": index + 1, "ResourceRequest": request(stage, count)})
}

/// The job's demands sent at `t` (the AM's registration), §4.2: a production job is its maps
/// and its reduces, each a gang with a strict Start from now, a strict DeadLine (the maps' leaves
/// room for the reduces) and its Duration, the reduces strictly after the maps; a workflow is
/// one demand per stage, each after the previous one, with a loose deadline of twice its
/// estimate after its start. Best-effort jobs send none.
fn job_demands(job: &Job, t: u64) -> Vec<Value> {
    let deadline = job.deadline_ms.unwrap_or(u64::MAX);
    match job.kind {
        JobKind::Production => {
            let mut left_after = job.ideal_ms();
            job.stages
                .iter()
                .enumerate()
                .map(|(i, stage)| {
                    left_after -= stage.longest_ms();
                    let by = deadline.saturating_sub(left_after).saturating_sub(t) / 1000;
                    let mut d = json!({
                        "DemandID": i + 1,
                        "ResourceRequest": request(stage, stage.runtimes_ms.len()),
                        "Gang": true,
                        "Start": {"Time": "[NOW, ]", "Strategy": "strict"},
                        "Duration": format!("{}s", seconds_up(stage.longest_ms())),
                        "DeadLine": {"Time": format!("[NOW, +{by}s]"), "Strategy": "strict"},
                    });
                    if i > 0 {
                        d["OrderBy"] = json!({"After": i, "Strategy": "strict"});
                    }
                    d
                })
                .collect()
        }
        JobKind::Workflow => job
            .stages
            .iter()
            .enumerate()
            .map(|(i, stage)| {
                let mut d = json!({
                    "DemandID": i + 1,
                    "ResourceRequest": request(stage, stage.runtimes_ms.len()),
                    "DeadLine": {
                        "Time": format!("[, +{}s]", 2 * seconds_up(stage.longest_ms())),
                        "Strategy": "loose"
                    },
                });
                if i > 0 {
                    d["OrderBy"] = json!(i);
                }
                d
            })
            .collect(),
        JobKind::BestEffort => Vec::new(),
    }
}
