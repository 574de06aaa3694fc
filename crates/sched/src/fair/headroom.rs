//! The headroom an AM is told (Hadoop's `FSAppAttempt.getHeadroom` and each policy's
//! `getHeadroom`): how much more the app could get now.

use crate::lanes::Resource;
use weft_config::PolicyKind;
use weft_types::{MEMORY, VCORES};

use crate::fair::{Fair, FairEngine};
use crate::rules::AppOf;

impl FairEngine {
    /// `maxAvailable` = min(cluster free less the free resources of the nodes the app's
    /// blacklist names, floored at zero in memory and vcores; the leaf's max share minus its
    /// usage), per resource. Memory is further capped by the leaf's fair share minus its usage
    /// (floored at zero); so are vcores under `drf`, while `fair` and `fifo` leave them at
    /// `maxAvailable`. Only memory and vcores are reported (Hadoop's policies build the answer
    /// from those two), and a leaf over its max share gives a negative figure, as in Hadoop.
    pub(crate) fn headroom(&self, app: &AppOf<Fair>) -> Resource {
        let leaf = self.queues.get(app.queue);
        let usage = leaf.usage;
        // The app's containers land only on its pool's nodes (resource-pools spec §8).
        let free = match &self.pools {
            Some(pools) => pools.free_now(leaf.pool),
            None => self.cluster.saturating_sub(self.cluster_used),
        };
        let mut cluster_free = free.saturating_sub(self.free_on_blacklisted_nodes(app));
        for lane in [MEMORY, VCORES] {
            cluster_free.set(lane, cluster_free.get(lane).max(0));
        }
        let max_available = cluster_free.cw_min(leaf.max_share.saturating_sub(usage));
        let fair_room = |lane: usize| {
            leaf.rules_cold
                .fair_share
                .get(lane)
                .saturating_sub(usage.get(lane))
                .max(0)
        };
        let memory = max_available.memory_mb().min(fair_room(MEMORY));
        let vcores = match leaf.rules.policy {
            PolicyKind::Drf => max_available.vcores().min(fair_room(VCORES)),
            PolicyKind::Fair | PolicyKind::Fifo => max_available.vcores(),
        };
        Resource::new(memory, vcores)
    }
}
