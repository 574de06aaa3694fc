//! Foreign containers' drain timeout (resource-pools spec §5, §9, §10): a container left on a
//! node that a reload moved to another pool keeps running; if that pool sets
//! `foreignContainerTimeout`, the container is killed that long after the move, with the
//! PREEMPTED exit status and the diagnostic `host <h> moved from resource pool <a> to <b>`.
//!
//! Each foreign container has a clock: the pool it became foreign in and when. A reload that
//! leaves it foreign in the same pool keeps the clock (the move is not restarted by an
//! unrelated reload); one that moves its node again restarts it; one that brings it back to
//! its app's pool drops it. The kill is a timer of the core's table, checked against the clock
//! when it fires, so a timer outlived by its move does nothing.

use std::collections::BTreeMap;

use weft_types::{ContainerId, Time};

use crate::api::{ContainerExit, ExitStatus};
use crate::fair::{FairEngine, FairTimer};
use crate::objects::containers::Owner;

/// YARN's `ContainerExitStatus.PREEMPTED`.
const PREEMPTED_EXIT: i32 = -102;

/// Where and since when a container is foreign.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ForeignClock {
    /// The name of the pool its node is in now.
    pub(crate) pool: String,
    /// The reload that made it foreign there.
    pub(crate) since: Time,
}

/// The kill of one foreign container at its pool's timeout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ForeignTimeout {
    pub(crate) container: ContainerId,
    /// The clock the timer was set for (the kill happens only if it still holds).
    pub(crate) clock: ForeignClock,
}

/// Every foreign container's clock.
#[derive(Clone, Debug, Default)]
pub(crate) struct ForeignClocks {
    pub(crate) by_container: BTreeMap<ContainerId, ForeignClock>,
}

impl FairEngine {
    /// After a reload at `now`: a clock for each container that became foreign (or moved to
    /// another pool while foreign), and a kill timer where its new pool has a timeout; the
    /// clocks of containers no longer foreign go.
    pub(crate) fn arm_foreign_timeouts(&mut self, now: Time) {
        let mut old = std::mem::take(&mut self.rules.preemption.foreign.by_container);
        let Some(pools) = &self.pools else {
            return;
        };
        let mut clocks = BTreeMap::new();
        let mut timers = Vec::new();
        for node in self.nodes.values() {
            let pool = pools.name(node.pool);
            for id in self.container_ids(node.running, Owner::Node) {
                if !self.containers.get(&id).is_some_and(|c| c.foreign) {
                    continue;
                }
                let clock = match old.remove(&id) {
                    Some(clock) if clock.pool == pool => clock,
                    _ => {
                        let clock = ForeignClock {
                            pool: pool.to_string(),
                            since: now,
                        };
                        if let Some(ms) = pools.foreign_timeout_ms(node.pool) {
                            let at = Time(now.as_millis().saturating_add(ms));
                            timers.push((
                                at,
                                ForeignTimeout {
                                    container: id,
                                    clock: clock.clone(),
                                },
                            ));
                        }
                        clock
                    }
                };
                clocks.insert(id, clock);
            }
        }
        self.rules.preemption.foreign.by_container = clocks;
        for (at, timeout) in timers {
            self.timers.set(at, FairTimer::ForeignTimeout(timeout));
        }
    }

    /// A foreign container's timeout came due: killed if it still lives, foreign, under the
    /// same clock (the node has not moved since).
    pub(crate) fn foreign_timeout_due(&mut self, timeout: ForeignTimeout) {
        let id = timeout.container;
        let clocks = &mut self.rules.preemption.foreign.by_container;
        if clocks.get(&id) != Some(&timeout.clock) {
            return;
        }
        clocks.remove(&id);
        let Some(c) = self.containers.get(&id).filter(|c| c.foreign) else {
            return;
        };
        let (Some(node), Some(app), Some(pools)) = (
            self.nodes.at(c.node_slot),
            self.apps.at(c.app_slot),
            &self.pools,
        ) else {
            return;
        };
        let from = pools.name(self.queues.get(app.queue).pool);
        let diagnostics = format!(
            "host {} moved from resource pool {} to {}",
            node.host,
            shown(from),
            shown(&timeout.clock.pool)
        );
        self.complete_container(
            id,
            ContainerExit::Preempted,
            Some(ExitStatus {
                code: PREEMPTED_EXIT,
                diagnostics,
            }),
        );
    }
}

/// A pool's name as the diagnostic shows it (DEFAULT as Hadoop's `<DEFAULT_PARTITION>`).
fn shown(pool: &str) -> &str {
    if pool.is_empty() {
        "<DEFAULT_PARTITION>"
    } else {
        pool
    }
}
