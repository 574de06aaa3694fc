//! The due-time table behind `Scheduler::poll_timeout`: what the rules asked to be woken for,
//! by due time. A driver (the RM's tick loop, the simulator's agenda) wakes the core with
//! `Event::Timeout` at the earliest due time, so a timed action (a kill after a preemption
//! warning, a demand's start time, a claim's expiry) happens at exactly its time, not at the
//! next periodic update.

use std::collections::BTreeMap;

use weft_types::Time;

/// Handle of a scheduled timer, for cancelling it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct TimerId(u64);

/// Timers carrying a `T` each, ordered by due time, then by when they were set.
#[derive(Clone, Debug)]
pub(crate) struct Timers<T> {
    due: BTreeMap<(Time, TimerId), T>,
    when: BTreeMap<TimerId, Time>,
    next_id: u64,
}

impl<T> Default for Timers<T> {
    fn default() -> Timers<T> {
        Timers {
            due: BTreeMap::new(),
            when: BTreeMap::new(),
            next_id: 0,
        }
    }
}

// No rules set timers yet (preemption's kill and timed asks will); until then only the
// tests below call `set`, `cancel` and `len`.
#[cfg_attr(not(all(test, not(weft_two_lanes))), allow(dead_code))]
impl<T> Timers<T> {
    /// Sets a timer for `at`.
    pub(crate) fn set(&mut self, at: Time, what: T) -> TimerId {
        let id = TimerId(self.next_id);
        self.next_id += 1;
        self.due.insert((at, id), what);
        self.when.insert(id, at);
        id
    }

    /// Cancels a timer; returns what it carried, or `None` if it already fired or was cancelled.
    pub(crate) fn cancel(&mut self, id: TimerId) -> Option<T> {
        let at = self.when.remove(&id)?;
        self.due.remove(&(at, id))
    }

    /// The earliest due time, if any timer is set.
    #[inline]
    pub(crate) fn next_due(&self) -> Option<Time> {
        self.due.first_key_value().map(|((at, _), _)| *at)
    }

    /// Takes the earliest timer due at or before `now`, if any.
    pub(crate) fn pop_due(&mut self, now: Time) -> Option<(Time, T)> {
        let entry = self.due.first_entry()?;
        let (at, id) = *entry.key();
        if at > now {
            return None;
        }
        let what = entry.remove();
        self.when.remove(&id);
        Some((at, what))
    }

    /// How many timers are set.
    pub(crate) fn len(&self) -> usize {
        self.due.len()
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;

    #[test]
    fn timers_fire_by_due_time_then_by_order_set_and_never_early() {
        let mut t = Timers::default();
        t.set(Time(300), "c");
        t.set(Time(100), "a");
        t.set(Time(100), "b");
        assert_eq!(t.next_due(), Some(Time(100)));
        assert_eq!(t.pop_due(Time(99)), None, "nothing is due before 100 ms");
        assert_eq!(t.pop_due(Time(250)), Some((Time(100), "a")));
        assert_eq!(t.pop_due(Time(250)), Some((Time(100), "b")));
        assert_eq!(t.pop_due(Time(250)), None);
        assert_eq!(t.next_due(), Some(Time(300)));
        assert_eq!(t.pop_due(Time(300)), Some((Time(300), "c")));
        assert_eq!((t.next_due(), t.len()), (None, 0));
    }

    #[test]
    fn a_cancelled_timer_never_fires_and_cancels_once() {
        let mut t = Timers::default();
        let early = t.set(Time(10), 1);
        t.set(Time(20), 2);
        assert_eq!(t.cancel(early), Some(1));
        assert_eq!(t.cancel(early), None);
        assert_eq!(t.next_due(), Some(Time(20)));
        assert_eq!(t.pop_due(Time(1_000)), Some((Time(20), 2)));
        assert_eq!(t.cancel(early), None);
        assert_eq!(t.len(), 0);
    }
}
