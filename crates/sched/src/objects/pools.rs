//! Resource pools as the shared objects see them (resource-pools spec §7): each node's pool,
//! and per pool its capacity, usage and node count, plus root's candidate order per pool, so a
//! heartbeat descends only its pool's part of the tree.
//!
//! Pool 0 is DEFAULT (the nodes in no pool); pool `i + 1` is the allocation file's `i`-th pool.
//! Engines without pools keep `Engine::pools` at `None` and pay one branch where it is read.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::lanes::Resource;
use weft_config::pools::{FairShareScope, ResourcePools, UnboundQueues};

use crate::order::ordset::OrderedSet;

/// The pools' run-time state.
#[derive(Debug)]
pub(crate) struct Pools {
    /// The allocation file's `<resourcePools>`.
    pub(crate) config: Arc<ResourcePools>,
    /// Per pool: the capacity of its nodes.
    pub(crate) capacity: Vec<Resource>,
    /// Per pool: what its nodes have allocated (kept by the ledger).
    pub(crate) used: Vec<Resource>,
    /// Per pool: the part of `used` held by foreign containers (apps of another pool left on
    /// its nodes by a host move, spec §10; kept by the ledger and the reload).
    pub(crate) foreign_used: Vec<Resource>,
    /// Per pool: how many nodes it has.
    pub(crate) nodes: Vec<u32>,
    /// How many nodes each (pool, rack) has (the rack-local reservable-node count).
    pub(crate) rack_nodes: BTreeMap<(u16, String), u32>,
    /// Per pool: capacity less usage as of the last refresh of root's available resources
    /// (the AM limit reads it, as it reads root's: Hadoop's queue metrics lag the same way).
    pub(crate) available: Vec<Resource>,
    /// Fast path: root's children with something to schedule, one order per pool (the same
    /// keys as root's own candidates).
    pub(crate) root_candidates: Vec<OrderedSet>,
    /// Fast path: how many of each pool's root candidates could take a reservation.
    pub(crate) root_reservable: Vec<u32>,
}

impl Pools {
    pub(crate) fn new(config: Arc<ResourcePools>) -> Pools {
        let n = config.pools.len() + 1;
        Pools {
            config,
            capacity: vec![Resource::ZERO; n],
            used: vec![Resource::ZERO; n],
            foreign_used: vec![Resource::ZERO; n],
            available: vec![Resource::ZERO; n],
            nodes: vec![0; n],
            rack_nodes: BTreeMap::new(),
            root_candidates: (0..n).map(|_| OrderedSet::new()).collect(),
            root_reservable: vec![0; n],
        }
    }

    /// The pool of the NM at `host:port`. A driver that names a second NM of a host
    /// `host:port` (the RM does) is matched by the host part.
    pub(crate) fn pool_of_node(&self, host: &str, port: u16) -> u16 {
        let suffix = format!(":{port}");
        let host = host.strip_suffix(suffix.as_str()).unwrap_or(host);
        self.config
            .pools
            .iter()
            .position(|p| p.hosts.iter().any(|h| h.covers(host, port)))
            .map_or(0, |i| (i + 1) as u16)
    }

    /// Counts a node of `capability` on `rack` joining (`joins`) or leaving pool `pool`.
    pub(crate) fn count_node(&mut self, pool: u16, rack: &str, capability: Resource, joins: bool) {
        let i = usize::from(pool);
        let (Some(c), Some(n)) = (self.capacity.get_mut(i), self.nodes.get_mut(i)) else {
            return;
        };
        let key = (pool, rack.to_string());
        if joins {
            *c = c.saturating_add(capability);
            *n += 1;
            *self.rack_nodes.entry(key).or_insert(0) += 1;
        } else {
            *c = c.saturating_sub(capability);
            *n = n.saturating_sub(1);
            if let Some(r) = self.rack_nodes.get_mut(&key) {
                *r -= 1;
                if *r == 0 {
                    self.rack_nodes.remove(&key);
                }
            }
        }
    }

    /// A pool's name (`""` for DEFAULT).
    pub(crate) fn name(&self, pool: u16) -> &str {
        match pool.checked_sub(1) {
            Some(i) => self
                .config
                .pools
                .get(usize::from(i))
                .map_or("", |p| p.name.as_str()),
            None => "",
        }
    }

    /// Whether shares, percentages and DRF are resolved against each pool's capacity.
    pub(crate) fn per_pool_shares(&self) -> bool {
        self.config.fair_share_scope == FairShareScope::Pool
    }

    /// Whether apps of queues in no pool run on DEFAULT's nodes (else they are refused).
    pub(crate) fn unbound_run_in_default(&self) -> bool {
        self.config.unbound_queues == UnboundQueues::DefaultPartition
    }

    /// The pool's `preemptionUtilizationThreshold`, else `site` (the yarn-site value; DEFAULT
    /// always takes it).
    pub(crate) fn preemption_threshold(&self, pool: u16, site: f32) -> f32 {
        self.file_pool(pool)
            .and_then(|p| p.preemption_utilization_threshold)
            .unwrap_or(site)
    }

    /// The pool's `foreignContainerTimeout` in ms, if it kills foreign containers at all
    /// (unset or negative: never; DEFAULT never does).
    pub(crate) fn foreign_timeout_ms(&self, pool: u16) -> Option<u64> {
        self.file_pool(pool)
            .and_then(|p| p.foreign_container_timeout_ms)
            .and_then(|ms| u64::try_from(ms).ok())
    }

    /// The allocation file's entry of a pool (`None` for DEFAULT).
    fn file_pool(&self, pool: u16) -> Option<&weft_config::pools::ResourcePool> {
        let i = usize::from(pool.checked_sub(1)?);
        self.config.pools.get(i)
    }

    /// A container of `size` (`foreign` or not) ended on a node of `pool`. Not inlined: the
    /// completion without pools stays as small as it was.
    #[inline(never)]
    pub(crate) fn release(&mut self, pool: u16, size: Resource, foreign: bool) {
        if let Some(u) = self.used.get_mut(usize::from(pool)) {
            *u = u.saturating_sub(size);
        }
        if foreign {
            self.count_foreign(pool, size, false);
        }
    }

    /// Counts a foreign container of `size` arriving on (`joins`) or leaving a node of `pool`.
    pub(crate) fn count_foreign(&mut self, pool: u16, size: Resource, joins: bool) {
        if let Some(f) = self.foreign_used.get_mut(usize::from(pool)) {
            *f = if joins {
                f.saturating_add(size)
            } else {
                f.saturating_sub(size)
            };
        }
    }

    /// Takes each pool's capacity less usage as its available resources (`available`).
    pub(crate) fn refresh_available(&mut self) {
        for ((a, c), u) in self
            .available
            .iter_mut()
            .zip(&self.capacity)
            .zip(&self.used)
        {
            *a = c.saturating_sub(*u);
        }
    }

    /// The pool's capacity less its usage, now.
    pub(crate) fn free_now(&self, pool: u16) -> Resource {
        let i = usize::from(pool);
        match (self.capacity.get(i), self.used.get(i)) {
            (Some(c), Some(u)) => c.saturating_sub(*u),
            _ => Resource::ZERO,
        }
    }
}
