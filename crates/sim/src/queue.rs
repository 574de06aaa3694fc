//! The simulator's agenda, one for every kind of run: what is due when, and the order of the
//! kinds of work within one instant.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use weft_types::{ContainerId, NodeId, Time};

/// The phases of one instant, in the order they apply. A scenario run (the contract's timing
/// rules) updates before the heartbeats; a scale run after them, as its timing model says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    /// Timers the scheduler set (`Scheduler::poll_timeout`): any event at this instant would
    /// fire them first anyway.
    Timeout,
    /// Containers whose duration is up (runs that complete them at their end).
    Completion,
    /// The file's events in file order, or submissions in the order the apps were created.
    Input,
    /// The periodic update, in runs that update before the heartbeats.
    UpdateFirst,
    /// Node heartbeats, in node order.
    Heartbeat,
    /// The periodic update, in runs that update after the heartbeats.
    UpdateLast,
    /// The metrics sample.
    Sample,
}

/// Where the periodic update goes within an instant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum UpdateOrder {
    /// Before the heartbeats (scenario runs).
    #[default]
    BeforeHeartbeats,
    /// After the heartbeats (scale runs).
    AfterHeartbeats,
}

/// What is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Due {
    /// A container's duration is up.
    Completion(ContainerId),
    /// The scenario's event at this position of the sorted timeline.
    FileEvent(usize),
    /// A scale run's submission of the app with this index.
    Submit(u32),
    /// The periodic update.
    Update,
    /// A node's heartbeat.
    Heartbeat(NodeId),
    /// A scale run's metrics sample.
    Sample,
    /// The scheduler asked to be woken now.
    Timeout,
}

impl Due {
    fn phase(&self, update: UpdateOrder) -> Phase {
        match self {
            Due::Completion(_) => Phase::Completion,
            Due::FileEvent(_) | Due::Submit(_) => Phase::Input,
            Due::Update => match update {
                UpdateOrder::BeforeHeartbeats => Phase::UpdateFirst,
                UpdateOrder::AfterHeartbeats => Phase::UpdateLast,
            },
            Due::Heartbeat(_) => Phase::Heartbeat,
            Due::Sample => Phase::Sample,
            Due::Timeout => Phase::Timeout,
        }
    }

    /// The order within a phase: container id, file position, app index, node id.
    fn rank(&self) -> u64 {
        match self {
            Due::Completion(c) => c.0,
            Due::FileEvent(i) => *i as u64,
            Due::Submit(i) => u64::from(*i),
            Due::Update | Due::Sample | Due::Timeout => 0,
            Due::Heartbeat(n) => u64::from(n.0),
        }
    }
}

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    at: Time,
    phase: Phase,
    rank: u64,
    seq: u64,
    due: Due,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.at, self.phase, self.rank, self.seq).cmp(&(
            other.at,
            other.phase,
            other.rank,
            other.seq,
        ))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A min-heap keyed by (time, phase, rank within phase, insertion sequence).
#[derive(Debug, Default)]
pub(crate) struct Agenda {
    heap: BinaryHeap<Reverse<Entry>>,
    seq: u64,
    update: UpdateOrder,
}

impl Agenda {
    pub(crate) fn new(update: UpdateOrder) -> Agenda {
        Agenda {
            update,
            ..Agenda::default()
        }
    }

    pub(crate) fn push(&mut self, at: Time, due: Due) {
        self.seq += 1;
        self.heap.push(Reverse(Entry {
            at,
            phase: due.phase(self.update),
            rank: due.rank(),
            seq: self.seq,
            due,
        }));
    }

    /// When the next item is due.
    pub(crate) fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|Reverse(e)| e.at)
    }

    pub(crate) fn pop(&mut self) -> Option<(Time, Due)> {
        self.heap.pop().map(|Reverse(e)| (e.at, e.due))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_applies_completions_events_update_then_heartbeats() {
        let mut a = Agenda::default();
        a.push(Time(1000), Due::Heartbeat(NodeId(2)));
        a.push(Time(1000), Due::Heartbeat(NodeId(1)));
        a.push(Time(1000), Due::Update);
        a.push(Time(1000), Due::FileEvent(3));
        a.push(Time(1000), Due::FileEvent(1));
        a.push(Time(1000), Due::Completion(ContainerId(9)));
        a.push(Time(500), Due::Heartbeat(NodeId(7)));
        let order: Vec<Due> = std::iter::from_fn(|| a.pop().map(|(_, d)| d)).collect();
        assert_eq!(
            order,
            vec![
                Due::Heartbeat(NodeId(7)),
                Due::Completion(ContainerId(9)),
                Due::FileEvent(1),
                Due::FileEvent(3),
                Due::Update,
                Due::Heartbeat(NodeId(1)),
                Due::Heartbeat(NodeId(2)),
            ]
        );
    }

    #[test]
    fn a_scale_instant_applies_submissions_heartbeats_update_then_the_sample() {
        let mut a = Agenda::new(UpdateOrder::AfterHeartbeats);
        a.push(Time(1000), Due::Sample);
        a.push(Time(1000), Due::Update);
        a.push(Time(1000), Due::Heartbeat(NodeId(2)));
        a.push(Time(1000), Due::Heartbeat(NodeId(1)));
        a.push(Time(1000), Due::Submit(4));
        a.push(Time(1000), Due::Submit(3));
        let order: Vec<Due> = std::iter::from_fn(|| a.pop().map(|(_, d)| d)).collect();
        assert_eq!(
            order,
            vec![
                Due::Submit(3),
                Due::Submit(4),
                Due::Heartbeat(NodeId(1)),
                Due::Heartbeat(NodeId(2)),
                Due::Update,
                Due::Sample,
            ]
        );
    }
}
