//! Which live containers are a demand's, across an RM restart (spec §3.4 "Persistence and
//! recovery": ALLOCATED and MONITORING demands re-attach to the containers the NMs report).
//!
//! The store keeps no containers, so each demand record lists its live ones (at most its
//! `allocated`), each with whether its NM reported it running (its claim). After a restart
//! a container an NM reports again is the demand's once more: its claim is counted if it was
//! not yet, and its end drives `demand_completed` as before. One that ended while the RM was
//! down (the NM reports it COMPLETE) is the demand's completion then.

use weft_store::{DemandContainerRecord, DemandRecord};
use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::Time;

use super::{DemandReason, Scope};
use crate::RmCore;

/// A demand's live containers: (attempt, number within the app) -> claimed.
pub(crate) type LiveContainers = std::collections::BTreeMap<(u32, u64), bool>;

pub(crate) fn to_records(live: &LiveContainers) -> Vec<DemandContainerRecord> {
    live.iter()
        .map(|(&(attempt, n), &claimed)| DemandContainerRecord {
            attempt,
            n,
            claimed,
        })
        .collect()
}

/// The record's containers; more than it has allocated is a damaged record.
pub(crate) fn from_records(record: &DemandRecord) -> Result<LiveContainers, String> {
    if record.containers.len() as u64 > record.allocated {
        return Err(format!(
            "it lists {} live containers of {} allocated",
            record.containers.len(),
            record.allocated
        ));
    }
    Ok(record
        .containers
        .iter()
        .map(|c| ((c.attempt, c.n), c.claimed))
        .collect())
}

impl RmCore {
    /// After a restart: the containers each live demand listed, waiting for their NMs to
    /// report them again.
    pub(crate) fn expect_demand_containers(&mut self) {
        for d in self.demands.by_key.values() {
            let Scope::App(app) = d.scope else {
                continue;
            };
            if d.state().is_final() {
                continue;
            }
            for &(attempt, n) in d.containers.keys() {
                self.demands
                    .unreported
                    .insert(ContainerId { app, attempt, n }, d.spec.demand_id);
            }
        }
    }

    /// A container was allocated for the demand (written with the demand at the end of the
    /// scheduler's decisions, once for a whole gang).
    pub(crate) fn demand_container_allocated(&mut self, container: ContainerId, demand_id: u64) {
        let key = Scope::App(container.app).key(demand_id);
        let Some(d) = self.demands.by_key.get_mut(&key) else {
            return;
        };
        if d.state().is_final() {
            return;
        }
        d.containers.insert((container.attempt, container.n), false);
        self.demands.unwritten.insert(key);
    }

    /// Writes the demands whose container lists changed.
    pub(crate) fn write_demand_containers(&mut self) {
        for key in std::mem::take(&mut self.demands.unwritten) {
            self.persist_demand(&key);
        }
    }

    /// Marks the container claimed; true when it was not yet.
    pub(crate) fn mark_demand_container_claimed(&mut self, key: &str, c: ContainerId) -> bool {
        self.demands
            .by_key
            .get_mut(key)
            .and_then(|d| d.containers.get_mut(&(c.attempt, c.n)))
            .is_some_and(|claimed| !std::mem::replace(claimed, true))
    }

    /// Forgets an ended container of the demand (before its completion is counted and written).
    pub(crate) fn forget_demand_container(&mut self, key: &str, c: ContainerId) {
        if let Some(d) = self.demands.by_key.get_mut(key) {
            d.containers.remove(&(c.attempt, c.n));
        }
    }

    /// An NM reported again, after a restart, a running container: the demand it was
    /// allocated for, if any (its claim counted now if its NM had not reported it before).
    pub(crate) fn demand_of_recovered(&mut self, now: Time, c: ContainerId) -> Option<u64> {
        let demand_id = self.demands.unreported.remove(&c)?;
        let key = Scope::App(c.app).key(demand_id);
        if self.mark_demand_container_claimed(&key, c) {
            // A demand that moved on meanwhile counts nothing more.
            let _ = self.demand_claimed(now, &key, 1);
        }
        Some(demand_id)
    }

    /// A container the demand listed ended while the RM was down (its NM reports it
    /// COMPLETE when it registers again): the demand's completion.
    pub(crate) fn demand_container_ended_while_away(&mut self, now: Time, c: ContainerId) {
        let Some(demand_id) = self.demands.unreported.remove(&c) else {
            return;
        };
        let key = Scope::App(c.app).key(demand_id);
        if self.mark_demand_container_claimed(&key, c) {
            let _ = self.demand_claimed(now, &key, 1);
        }
        self.forget_demand_container(&key, c);
        if self.demand_completed(now, &key, 1).is_err() {
            self.persist_demand(&key);
        }
    }

    /// A recovered container of a demand that failed while the RM was down with a reason that
    /// kills its running containers is killed now (its NM had not reported it yet then).
    pub(crate) fn end_recovered_of_failed_demand(
        &mut self,
        now: Time,
        app: ApplicationId,
        c: ContainerId,
        demand_id: u64,
    ) {
        let key = Scope::App(app).key(demand_id);
        let Some(d) = self.demands.by_key.get(&key) else {
            return;
        };
        let reason = d.reason();
        let kills = d.state() == weft_store::DemandState::Failed
            && d.am.is_some()
            && !matches!(reason, DemandReason::ClaimExpired | DemandReason::AppFailed);
        if kills {
            self.container_done(
                now,
                c,
                crate::model::exit::KILLED_BY_RESOURCEMANAGER,
                format!(
                    "Container killed: demand {key} failed ({})",
                    reason.as_str()
                ),
                true,
            );
        }
    }
}
