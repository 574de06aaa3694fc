//! Gangs waiting for room, in their global order, and the one partial hold (time-aware-demands
//! spec §3.3, "Gang delivery at run time"). Plain data: `walk/gang.rs` decides.
//!
//! Deadlock freedom is by construction: at most one gang (`holder`) holds members at a time, so
//! no two gangs can each hold part of what the other needs. Every other gang is only ever placed
//! whole, in one step.

use std::collections::BTreeMap;

use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::api::GangAsk;

/// A gang's place in the global order: submission time, then its id, then its application's
/// id (the spec's "planned start, then DemandID, then application id", with the submission
/// standing for the planned start until a planner exists).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct GangKey {
    pub(crate) submitted: Time,
    pub(crate) gang: u64,
    pub(crate) app: AppId,
}

/// One waiting gang.
#[derive(Clone, Debug)]
pub(crate) struct Gang {
    /// The ask, its size normalized.
    pub(crate) ask: GangAsk,
    /// Members held so far (only the holder has any), in the order they were held.
    pub(crate) held: Vec<(ContainerId, NodeId)>,
    /// When the current hold began (its first held member).
    pub(crate) hold_since: Option<Time>,
}

impl Gang {
    /// Members still to be placed.
    pub(crate) fn missing(&self) -> u32 {
        self.ask.size.saturating_sub(self.held.len() as u32)
    }

    /// When the current hold times out (`None`: no hold, or no limit).
    pub(crate) fn expires(&self) -> Option<Time> {
        Some(self.hold_since? + self.ask.hold_timeout?)
    }
}

/// Every waiting gang. The engine keeps `None` while there is none, so the heartbeat and the
/// event dispatch cost one test when no gang exists.
#[derive(Clone, Debug, Default)]
pub(crate) struct Gangs {
    /// Waiting gangs in the global order.
    pub(crate) order: BTreeMap<GangKey, Gang>,
    /// (application, gang id) -> the gang's key.
    pub(crate) index: BTreeMap<(AppId, u64), GangKey>,
    /// The one gang that may hold members, once it holds some.
    pub(crate) holder: Option<GangKey>,
    /// Each held container -> its gang (completions of held members are the gang's business,
    /// never the driver's: the driver has not seen them).
    pub(crate) held: BTreeMap<ContainerId, GangKey>,
}

impl Gangs {
    /// When the holder's hold times out.
    pub(crate) fn next_expiry(&self) -> Option<Time> {
        self.holder
            .and_then(|k| self.order.get(&k))
            .and_then(Gang::expires)
    }

    /// Takes the gang out of every index; its held members stay charged (the caller delivers
    /// or releases them).
    pub(crate) fn remove(&mut self, key: GangKey) -> Option<Gang> {
        let gang = self.order.remove(&key)?;
        self.index.remove(&(key.app, gang.ask.gang));
        for (c, _) in &gang.held {
            self.held.remove(c);
        }
        if self.holder == Some(key) {
            self.holder = None;
        }
        Some(gang)
    }

    /// A held member ended (its node was lost, its app left, it was preempted): the gang holds
    /// one fewer; a holder left with none stops holding, so another gang may hold.
    pub(crate) fn lose_member(&mut self, container: ContainerId) {
        let Some(key) = self.held.remove(&container) else {
            return;
        };
        if let Some(g) = self.order.get_mut(&key) {
            g.held.retain(|(c, _)| *c != container);
            if g.held.is_empty() {
                g.hold_since = None;
                if self.holder == Some(key) {
                    self.holder = None;
                }
            }
        }
    }
}
