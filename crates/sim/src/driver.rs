//! The one simulator driver: what scenario runs and scale runs share. It owns the scheduler,
//! the agenda and the simulated nodes, feeds the scheduler (timing each call), and handles
//! every decision the same way before the run's own [`Script`] sees it: a container is tracked
//! from its allocation to its completion, and one whose ask carried a run time completes when
//! that time is up.
//!
//! A container's run time travels with its ask through the scheduler (as the ask's tag, see
//! [`duration_tag`]) and comes back on its allocation, so no run keeps a copy of the asks.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use weft_sched::{AskTag, ContainerExit, Decision, Event, SchedError, Scheduler, Snapshot};
use weft_types::{ContainerId, Duration, NodeId, Resource, Time};

use crate::clock::CpuClock;
use crate::queue::{Agenda, Due, UpdateOrder};

/// The tag that carries a container's run time through the scheduler (`None`: it runs until
/// something else ends it). The tag is the run time in milliseconds plus one, so that no run
/// time is [`AskTag::NONE`].
pub(crate) fn duration_tag(run_time: Option<Duration>) -> AskTag {
    run_time.map_or(AskTag::NONE, |d| AskTag(d.as_millis().saturating_add(1)))
}

/// The run time a tag made by [`duration_tag`] carries.
fn tagged_duration(tag: AskTag) -> Option<Duration> {
    tag.0.checked_sub(1).map(Duration::from_millis)
}

/// The scheduler's work, by the kind of event that caused it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum EventKind {
    /// Node heartbeats (where containers are assigned).
    Heartbeat,
    /// Container completions reported by nodes.
    Completion,
    /// AM asks.
    Ask,
    /// Submissions (placement, ACLs, limits).
    Submit,
    /// App finishes.
    Finish,
    /// The periodic update (demand, fair shares, runnability).
    Update,
    /// Node joins and anything else.
    Other,
}

impl EventKind {
    pub(crate) const ALL: [EventKind; 7] = [
        EventKind::Heartbeat,
        EventKind::Completion,
        EventKind::Ask,
        EventKind::Submit,
        EventKind::Finish,
        EventKind::Update,
        EventKind::Other,
    ];

    pub(crate) fn name(self) -> &'static str {
        match self {
            EventKind::Heartbeat => "heartbeat (matching apps and requests to the node)",
            EventKind::Completion => "container completion (release, re-keying)",
            EventKind::Ask => "ask (demand upkeep, re-keying)",
            EventKind::Submit => "submission (placement, ACLs, limits)",
            EventKind::Finish => "app finish",
            EventKind::Update => "fair-share update",
            EventKind::Other => "node join",
        }
    }
}

/// When the scheduler hears that a container's run time is up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CompletionReport {
    /// At that very instant, before the instant's other work (scenario runs).
    AtItsEnd,
    /// In its node's next heartbeat, just before the heartbeat itself, as a NodeManager reports
    /// it (scale runs).
    AtNextHeartbeat,
}

/// A run's timing model.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    /// Every node heartbeats this often.
    pub(crate) heartbeat_interval: Duration,
    /// The periodic update's period.
    pub(crate) update_interval: Duration,
    /// Where the update goes within an instant.
    pub(crate) update_order: UpdateOrder,
    /// When completions are reported.
    pub(crate) completions: CompletionReport,
}

/// A step the driver takes on its own, named when the scheduler refuses it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// A node joining.
    NodeJoin,
    /// A node leaving.
    NodeLeave(NodeId),
    /// A node's heartbeat.
    Heartbeat(NodeId),
    /// A container whose run time is up.
    Completion(ContainerId),
    /// The periodic update.
    Update,
    /// The scheduler's wake-up at its `poll_timeout`.
    Timeout,
}

/// What one kind of run adds to the driver: its own reaction to decisions, its accounting of
/// the scheduler's time, and its words for a refusal.
pub(crate) trait Script {
    /// How the run fails.
    type Error;
    /// A decision, after the driver has tracked its container.
    fn decision(&mut self, sim: &mut Sim<'_>, decision: &Decision) -> Result<(), Self::Error>;
    /// The scheduler spent `nanos` of CPU time on one event of this kind.
    fn timed(&mut self, kind: EventKind, nanos: u64);
    /// A node heartbeat was handled (before its decisions are processed); the scheduler's
    /// walk counters describe it.
    fn heartbeat_walked(&mut self, _sim: &Sim<'_>, _node: NodeId) {}
    /// The scheduler refused a step the driver took; the run cannot go on.
    fn refused(&mut self, sim: &Sim<'_>, step: Step, source: SchedError) -> Self::Error;
}

/// A container as it was allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct TaskRecord {
    /// When it was allocated (and started: simulated containers launch at once).
    pub(crate) started: Time,
    /// The request priority it satisfied.
    pub(crate) priority: i32,
    /// Its ask's tag (the run time, see [`duration_tag`]).
    pub(crate) tag: AskTag,
}

/// A simulated NodeManager.
struct SimNode {
    live: bool,
    /// Running containers that report their end in a heartbeat, as (end ms, container id),
    /// earliest first.
    ending: BinaryHeap<Reverse<(u64, u64)>>,
}

/// The shared driver state.
pub(crate) struct Sim<'c> {
    pub(crate) sched: Scheduler,
    pub(crate) agenda: Agenda,
    pub(crate) now: Time,
    clock: &'c mut dyn CpuClock,
    timing: Timing,
    /// Indexed by node id - 1 (ids are handed out from 1 in join order).
    nodes: Vec<SimNode>,
    /// Container id -> its app's id while it runs, 0 once it is gone.
    container_app: Vec<u64>,
    /// Container id -> what a preempted task needs to be asked again and measured, kept only
    /// when a run asks for it ([`Sim::keep_tasks`]).
    tasks: Option<Vec<TaskRecord>>,
    decisions: Vec<Decision>,
    last_completion: Time,
    /// The earliest `Due::Timeout` on the agenda (the scheduler's `poll_timeout` when armed).
    armed_timeout: Option<Time>,
}

impl<'c> Sim<'c> {
    pub(crate) fn new(sched: Scheduler, clock: &'c mut dyn CpuClock, timing: Timing) -> Sim<'c> {
        Sim {
            sched,
            agenda: Agenda::new(timing.update_order),
            now: Time::ZERO,
            clock,
            timing,
            nodes: Vec::new(),
            container_app: Vec::new(),
            tasks: None,
            decisions: Vec::new(),
            last_completion: Time::ZERO,
            armed_timeout: None,
        }
    }

    /// From now on, remember each allocated container's start, priority and tag (runs with
    /// preemption read them back when a container is preempted).
    pub(crate) fn keep_tasks(&mut self) {
        self.tasks.get_or_insert_with(Vec::new);
    }

    /// What was recorded of a container at its allocation (with [`Sim::keep_tasks`]).
    pub(crate) fn task(&self, container: ContainerId) -> Option<TaskRecord> {
        self.tasks.as_ref()?.get(container.0 as usize).copied()
    }

    /// The latest time a container is due to complete (so far).
    pub(crate) fn last_completion(&self) -> Time {
        self.last_completion
    }

    /// Hands `event` to the scheduler, timing the call, and keeps its decisions for
    /// [`Sim::process`]. A refused event leaves the scheduler as it was.
    pub(crate) fn call<S: Script>(
        &mut self,
        script: &mut S,
        kind: EventKind,
        event: Event,
    ) -> Result<(), SchedError> {
        let t0 = self.clock.now_nanos();
        let result = self.sched.handle(self.now, event);
        let t1 = self.clock.now_nanos();
        script.timed(kind, t1.saturating_sub(t0));
        while let Some(d) = self.sched.poll_decision() {
            self.decisions.push(d);
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

    /// The scheduler's snapshot with demand and shares recomputed now (but no starvation
    /// evaluated), its CPU time counted as [`EventKind::Other`].
    pub(crate) fn snapshot_timed<S: Script>(&mut self, script: &mut S) -> Snapshot {
        let t0 = self.clock.now_nanos();
        self.sched.update_shares(self.now);
        let snapshot = self.sched.snapshot();
        script.timed(EventKind::Other, self.clock.now_nanos().saturating_sub(t0));
        snapshot
    }

    /// The scheduler's `verify` and the CPU time it took (not counted as scheduling).
    pub(crate) fn verify_timed(&mut self) -> (Vec<String>, u64) {
        let t0 = self.clock.now_nanos();
        let drift = self.sched.verify();
        (drift, self.clock.now_nanos().saturating_sub(t0))
    }

    /// A whole sliced verification round (`Scheduler::verify_slice` with `budget`, its
    /// slices back to back) and the CPU time of its slices.
    pub(crate) fn verify_sliced_timed(&mut self, budget: usize) -> (Vec<String>, SliceTiming) {
        let mut round = weft_sched::VerifyRound::default();
        let mut timing = SliceTiming::default();
        loop {
            let phase = round.cursor.phase as usize;
            let t0 = self.clock.now_nanos();
            let done = self.sched.verify_slice(&mut round, budget);
            let took = self.clock.now_nanos().saturating_sub(t0);
            timing.slices += 1;
            timing.total_nanos += took;
            timing.max_nanos = timing.max_nanos.max(took);
            if let Some(m) = timing.phase_max_nanos.get_mut(phase) {
                *m = (*m).max(took);
            }
            if done {
                return (round.drift, timing);
            }
        }
    }

    /// Handles every decision kept so far, and those the script's reactions cause, in order.
    pub(crate) fn process<S: Script>(&mut self, script: &mut S) -> Result<(), S::Error> {
        while !self.decisions.is_empty() {
            let mut batch = std::mem::take(&mut self.decisions);
            for d in &batch {
                self.track(d);
                script.decision(self, d)?;
            }
            // Keep the buffer's capacity for the next round.
            batch.clear();
            if self.decisions.is_empty() {
                self.decisions = batch;
            }
        }
        Ok(())
    }

    /// Follows a container from its allocation to its end.
    fn track(&mut self, d: &Decision) {
        match d {
            Decision::Allocated {
                app,
                container,
                node,
                am,
                tag,
                priority,
                ..
            } => {
                let slot = container.0 as usize;
                if self.container_app.len() <= slot {
                    self.container_app.resize(slot + 1, 0);
                }
                self.container_app[slot] = app.0;
                if let Some(tasks) = &mut self.tasks {
                    if tasks.len() <= slot {
                        tasks.resize(slot + 1, TaskRecord::default());
                    }
                    tasks[slot] = TaskRecord {
                        started: self.now,
                        priority: *priority,
                        tag: *tag,
                    };
                }
                if *am {
                    return;
                }
                let Some(run_time) = tagged_duration(*tag) else {
                    return;
                };
                let end = self.now + run_time;
                self.last_completion = self.last_completion.max(end);
                match self.timing.completions {
                    CompletionReport::AtItsEnd => {
                        self.agenda.push(end, Due::Completion(*container))
                    }
                    CompletionReport::AtNextHeartbeat => {
                        if let Some(n) = self.node_mut(*node) {
                            n.ending.push(Reverse((end.as_millis(), container.0)));
                        }
                    }
                }
            }
            Decision::Completed { container, .. } => {
                if let Some(app) = self.container_app.get_mut(container.0 as usize) {
                    *app = 0;
                }
            }
            Decision::Accepted { .. }
            | Decision::Rejected { .. }
            | Decision::Reserved { .. }
            | Decision::Gang { .. }
            | Decision::PreemptWarning { .. }
            | Decision::Preempted { .. }
            | Decision::ReservationEnded { .. } => {}
        }
    }

    fn node_mut(&mut self, node: NodeId) -> Option<&mut SimNode> {
        let index = (node.0 as usize).checked_sub(1)?;
        self.nodes.get_mut(index)
    }

    /// A node joins now; it heartbeats first at `first_heartbeat`, then every interval.
    pub(crate) fn add_node<S: Script>(
        &mut self,
        script: &mut S,
        host: &str,
        rack: &str,
        capability: Resource,
        first_heartbeat: Time,
    ) -> Result<NodeId, S::Error> {
        let node = NodeId(u32::try_from(self.nodes.len() + 1).unwrap_or(u32::MAX));
        self.nodes.push(SimNode {
            live: true,
            ending: BinaryHeap::new(),
        });
        let joined = self.call(
            script,
            EventKind::Other,
            Event::NodeAdded {
                node,
                host: host.to_string(),
                port: 0,
                rack: rack.to_string(),
                capability,
            },
        );
        if let Err(e) = joined {
            return Err(script.refused(self, Step::NodeJoin, e));
        }
        self.process(script)?;
        self.agenda.push(first_heartbeat, Due::Heartbeat(node));
        Ok(node)
    }

    /// The node is lost with its containers; it heartbeats no more.
    pub(crate) fn remove_node<S: Script>(
        &mut self,
        script: &mut S,
        node: NodeId,
    ) -> Result<(), S::Error> {
        if let Some(n) = self.node_mut(node) {
            n.live = false;
        }
        if let Err(e) = self.call(script, EventKind::Other, Event::NodeRemoved { node }) {
            return Err(script.refused(self, Step::NodeLeave(node), e));
        }
        self.process(script)
    }

    /// Carries out an agenda item the driver owns (completions, the update, heartbeats) at
    /// `at`; any other item is handed back for the script.
    pub(crate) fn step<S: Script>(
        &mut self,
        script: &mut S,
        at: Time,
        due: Due,
    ) -> Result<Option<Due>, S::Error> {
        self.now = at;
        match due {
            Due::Completion(container) => self.complete(script, container)?,
            Due::Update => {
                if let Err(e) = self.call(script, EventKind::Update, Event::Update) {
                    return Err(script.refused(self, Step::Update, e));
                }
                self.process(script)?;
                self.agenda
                    .push(at + self.timing.update_interval, Due::Update);
            }
            Due::Heartbeat(node) => self.heartbeat(script, node)?,
            Due::Timeout => {
                self.armed_timeout = None;
                if let Err(e) = self.call(script, EventKind::Other, Event::Timeout) {
                    return Err(script.refused(self, Step::Timeout, e));
                }
                self.process(script)?;
            }
            Due::FileEvent(_) | Due::Submit(_) | Due::Sample => return Ok(Some(due)),
        }
        Ok(None)
    }

    fn heartbeat<S: Script>(&mut self, script: &mut S, node: NodeId) -> Result<(), S::Error> {
        let now = self.now.as_millis();
        loop {
            let Some(n) = self.node_mut(node) else {
                return Ok(());
            };
            if !n.live {
                return Ok(());
            }
            match n.ending.peek() {
                Some(Reverse((end, container))) if *end <= now => {
                    let container = ContainerId(*container);
                    n.ending.pop();
                    self.complete(script, container)?;
                }
                _ => break,
            }
        }
        if let Err(e) = self.call(script, EventKind::Heartbeat, Event::NodeHeartbeat { node }) {
            return Err(script.refused(self, Step::Heartbeat(node), e));
        }
        script.heartbeat_walked(self, node);
        self.process(script)?;
        self.agenda.push(
            self.now + self.timing.heartbeat_interval,
            Due::Heartbeat(node),
        );
        Ok(())
    }

    /// A container's run time is up: the scheduler hears of it unless it has already ended.
    fn complete<S: Script>(
        &mut self,
        script: &mut S,
        container: ContainerId,
    ) -> Result<(), S::Error> {
        let running = self
            .container_app
            .get(container.0 as usize)
            .is_some_and(|app| *app != 0);
        if !running {
            return Ok(());
        }
        let completed = self.call(
            script,
            EventKind::Completion,
            Event::ContainerCompleted {
                container,
                exit: ContainerExit::Success,
                status: None,
            },
        );
        if let Err(e) = completed {
            return Err(script.refused(self, Step::Completion(container), e));
        }
        self.process(script)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_time_survives_the_trip_through_a_tag() {
        for ms in [0, 1, 10_000, u64::MAX - 1] {
            let d = Some(Duration::from_millis(ms));
            assert_eq!(tagged_duration(duration_tag(d)), d);
        }
        assert_eq!(duration_tag(None), AskTag::NONE);
        assert_eq!(tagged_duration(AskTag::NONE), None);
    }
}

/// The slices of one sliced verification round ([`Sim::verify_sliced_timed`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SliceTiming {
    pub(crate) slices: u64,
    pub(crate) total_nanos: u64,
    pub(crate) max_nanos: u64,
    /// The longest slice that started in each phase (`VerifyCursor::phase`, the engine's
    /// numbering: the checks of the whole come first).
    pub(crate) phase_max_nanos: [u64; 8],
}
