//! Missed scheduling opportunities of demands an AM sent (§3.2.3's k, which `^N` Start windows
//! bound): a node heartbeat that reaches the scheduler while the demand's containers are asked
//! and gives it none of them is one miss, whether it did not fit, was held back by locality or
//! its gang was incomplete. Counted in the RM core around the scheduler's heartbeat, so the
//! scheduler's walk pays nothing. YARN counts an opportunity only when its fair-share walk
//! offers the node to the application; here every heartbeat of a node the scheduler uses
//! counts, as if the demand were offered each node (the cheapest signal the core sees without
//! the walk's help). Deterministic, since heartbeats are events.

use weft_store::DemandState;
use weft_types::Time;

use super::{Demand, DemandReason};
use crate::RmCore;

/// Whether the demand's k can still close or open its Start window (a `^N` term, its bound
/// not dropped): only then is each miss written at once and its window checked.
fn counts_matter(d: &Demand) -> bool {
    !d.noted(DemandReason::WindowMissed)
        && d.times.start.as_ref().is_some_and(|w| {
            w.terms
                .iter()
                .any(|t| t.max_misses.is_some() || t.min_misses > 0)
        })
}

impl RmCore {
    /// Keeps [`super::Demands::asking`] in line with the demand's state.
    pub(crate) fn index_asking(&mut self, key: &str) {
        let asking = self.demands.by_key.get(key).is_some_and(|d| {
            d.state() == DemandState::Allocating && d.am.as_ref().is_some_and(|am| am.asked)
        });
        if asking {
            if !self.demands.asking.contains(key) {
                self.demands.asking.insert(key.to_owned());
            }
        } else {
            self.demands.asking.remove(key);
        }
    }

    /// Before a node heartbeat reaches the scheduler: how many containers each asking demand
    /// has (empty, and free, while no AM demand asks).
    pub(crate) fn asking_demands(&self) -> Vec<(String, u64)> {
        if self.demands.asking.is_empty() {
            return Vec::new();
        }
        self.demands
            .asking
            .iter()
            .filter_map(|k| self.demands.by_key.get(k).map(|d| (k.clone(), d.allocated)))
            .collect()
    }

    /// After the heartbeat: each demand still ALLOCATING that got no container from it missed
    /// an opportunity; a `^N` window is checked at once (and its miss written), other counts
    /// are written with the demand's next change.
    pub(crate) fn count_missed_opportunities(&mut self, now: Time, before: Vec<(String, u64)>) {
        let mut changed = false;
        for (key, allocated) in before {
            let Some(d) = self.demands.by_key.get_mut(&key) else {
                continue;
            };
            if d.state() != DemandState::Allocating || d.allocated > allocated {
                continue;
            }
            d.missed = d.missed.saturating_add(1);
            if counts_matter(d) {
                self.persist_demand(&key);
                changed |= self.step_demand(now, &key);
            }
        }
        if changed {
            // A failure may decide its dependents' OrderBy at the same instant.
            self.advance_demands(now);
        }
    }
}
