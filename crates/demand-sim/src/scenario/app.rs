//! A scenario's virtual ApplicationMaster: what its file events asked of it, what the RM gave
//! it, and what it still has to send.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use weft_rm_core::ResourceAsk;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::Duration;

/// Where an app is in the run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Phase {
    /// Submitted (its AM may not run yet).
    Live,
    /// The RM rejected it.
    Rejected,
    /// A `finish` event unregistered it.
    Finished,
    /// A `kill` event killed it.
    Killed,
}

/// A demand event waiting for the AM to send it.
pub(crate) struct QueuedDemand {
    pub(crate) demand: serde_json::Value,
    /// The event's index and line, for the refusal's line.
    pub(crate) event: usize,
    pub(crate) line: u32,
}

pub(crate) struct ScApp {
    pub(crate) name: String,
    pub(crate) id: ApplicationId,
    pub(crate) user: String,
    /// False: containers are never launched (claim expiry).
    pub(crate) claim: bool,
    pub(crate) phase: Phase,
    pub(crate) attempt: Option<(AttemptId, String)>,
    pub(crate) am_container: Option<(ContainerId, String)>,
    pub(crate) registered: bool,
    /// Per request priority: the run times of containers asked and not yet received, oldest
    /// first (`None`: runs until the app ends). Its length is the outstanding total YARN's
    /// protocol sends.
    pub(crate) outstanding: BTreeMap<i32, VecDeque<Option<Duration>>>,
    /// The last ask sent per priority (size, places), resent with each new total.
    pub(crate) asks: BTreeMap<i32, ResourceAsk>,
    /// Priorities whose total changed since the last Allocate call.
    pub(crate) changed: BTreeSet<i32>,
    /// Each demand's container run time, by DemandID.
    pub(crate) demand_durations: BTreeMap<u64, Option<Duration>>,
    /// Demands to send once the AM is registered.
    pub(crate) queued: Vec<QueuedDemand>,
    /// Containers to release with the next call.
    pub(crate) releases: Vec<ContainerId>,
    /// Containers the AM was told are about to be preempted (each told once).
    pub(crate) warned: BTreeSet<ContainerId>,
}

impl ScApp {
    pub(crate) fn new(name: String, id: ApplicationId, user: String, claim: bool) -> ScApp {
        ScApp {
            name,
            id,
            user,
            claim,
            phase: Phase::Live,
            attempt: None,
            am_container: None,
            registered: false,
            outstanding: BTreeMap::new(),
            asks: BTreeMap::new(),
            changed: BTreeSet::new(),
            demand_durations: BTreeMap::new(),
            queued: Vec::new(),
            releases: Vec::new(),
            warned: BTreeSet::new(),
        }
    }

    /// An `ask` event: `count` more containers at the ask's priority.
    pub(crate) fn ask(&mut self, ask: ResourceAsk, duration: Option<Duration>) {
        let queue = self.outstanding.entry(ask.priority).or_default();
        queue.extend(std::iter::repeat_n(duration, ask.count as usize));
        self.changed.insert(ask.priority);
        self.asks.insert(ask.priority, ask);
    }

    /// The asks to send: each changed priority with its outstanding total.
    pub(crate) fn take_asks(&mut self) -> Vec<ResourceAsk> {
        let changed = std::mem::take(&mut self.changed);
        changed
            .into_iter()
            .filter_map(|p| {
                let mut ask = self.asks.get(&p)?.clone();
                ask.count = u32::try_from(self.outstanding.get(&p).map_or(0, VecDeque::len))
                    .unwrap_or(u32::MAX);
                Some(ask)
            })
            .collect()
    }

    /// The run time of a container just received: its demand's, or the oldest outstanding
    /// ask's at its priority. `None` when nothing asked for it (a surplus, released).
    pub(crate) fn received(
        &mut self,
        priority: i32,
        demand: Option<u64>,
    ) -> Option<Option<Duration>> {
        match demand {
            Some(d) => Some(self.demand_durations.get(&d).copied().flatten()),
            None => self.outstanding.get_mut(&priority)?.pop_front(),
        }
    }
}
