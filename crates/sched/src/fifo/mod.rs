//! Hadoop's FIFO scheduler (capacity-scheduler spec §10) as rules over the shared objects.
//!
//! One leaf, `root.default`, takes every application whatever queue it names; all ACLs are
//! `*`. Apps are served in application-id order, each app's keys in priority order, and a key
//! takes as many containers as the node's free memory holds (node-local, then rack-local, then
//! off-switch) before the next key; a key with outstanding asks that gets nothing ends the
//! app's turn. Only memory is checked (Hadoop's DefaultResourceCalculator: vcores are
//! allocated but may exceed the node's). No limits, AM shares, reservations, delay scheduling,
//! preemption or moves.

use std::cmp::Ordering;

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_config::Acl;
use weft_types::{AppId, Locality, NodeId, Time, MEMORY};

use crate::api::{FifoConfig, GroupMapping, RejectCode, SchedError, SchedulerConfig};
use crate::engine::Engine;
use crate::lanes::ClusterProperties;
use crate::objects::app::SchedulerKey;
use crate::order::key::SortKey;
use crate::queues::{QueueId, QueueTree, DEFAULT_NAME, ROOT};
use crate::rules::{AppOf, QueueOf, QueueReport, Rules};
use crate::walk::Assignment;

/// The FIFO scheduler's engine.
pub(crate) type FifoEngine = Engine<Fifo>;

/// The FIFO scheduler's own state: its one queue.
pub(crate) struct Fifo {
    leaf: QueueId,
}

/// What a FIFO timer carries: FIFO sets none.
#[derive(Clone, Debug)]
pub(crate) enum FifoTimer {}

impl FifoEngine {
    /// A FIFO scheduler with no nodes or apps.
    pub(crate) fn new_fifo(config: FifoConfig, groups: GroupMapping) -> FifoEngine {
        let mut queues = QueueTree::new();
        let leaf = queues.add_child(ROOT, DEFAULT_NAME.to_string(), true);
        for q in [ROOT, leaf] {
            let queue = queues.get_mut(q);
            queue.configured = true;
            queue.acl_submit = Acl::everyone();
            queue.acl_admin = Acl::everyone();
        }
        let rules = Fifo { leaf };
        Engine::new(
            rules,
            ClusterProperties::from_site(&config.properties),
            queues,
            groups,
        )
    }

    /// Queue rights (§10.1): every ACL is `*`, so anyone may do anything on the one queue
    /// (`default`, with or without `root.`); `None` for any other name.
    pub(crate) fn queue_access(&self, queue: &str) -> Option<bool> {
        let name = queue.strip_prefix("root.").unwrap_or(queue);
        (name == "default").then_some(true)
    }

    /// Hadoop's per-app step (§10.2): keys in priority order; each key with outstanding asks
    /// takes node-local, then rack-local, then off-switch containers while the node's free
    /// memory holds them; a key that gets none ends the app's turn.
    fn serve(&mut self, app: AppId, node: NodeId) -> Assignment {
        let mut total = Resource::ZERO;
        let mut previous: Option<SchedulerKey> = None;
        while let Some(a) = self.apps.get(&app) {
            let next = match previous {
                None => a.requests.first_key(),
                Some(p) => a.requests.key_after(&p),
            };
            let Some(key) = next else {
                break;
            };
            previous = Some(key);
            if a.requests.get(&key).is_none_or(|r| r.any.count == 0) {
                continue;
            }
            let mut taken = 0;
            for locality in [
                Locality::NodeLocal,
                Locality::RackLocal,
                Locality::OffSwitch,
            ] {
                while let Some(size) = self.fits_at(app, key, node, locality) {
                    self.allocate(app, key, node, locality);
                    total = total.saturating_add(size);
                    taken += 1;
                }
            }
            if taken == 0 {
                break;
            }
        }
        if total == Resource::ZERO {
            Assignment::None
        } else {
            Assignment::Allocated(total)
        }
    }

    /// The size of one more container of the app's request under `key` at `locality` on the
    /// node, if it is asked for there and the node's free memory holds it.
    fn fits_at(
        &self,
        app: AppId,
        key: SchedulerKey,
        node: NodeId,
        locality: Locality,
    ) -> Option<Resource> {
        let (a, n) = (self.apps.get(&app)?, self.nodes.get(&node)?);
        let req = a.requests.get(&key)?;
        let rack = req.rack_count(&n.rack).map_or(0, |r| r.count);
        let asked = match locality {
            Locality::NodeLocal => {
                let host = req.host_count(&n.host).map_or(0, |h| h.count);
                host > 0 && rack > 0 && req.any.count > 0
            }
            Locality::RackLocal => rack > 0 && req.any.count > 0,
            Locality::OffSwitch => req.any.count > 0,
        };
        let fits = req.size.get(MEMORY) <= n.unallocated().get(MEMORY);
        (asked && fits).then_some(req.size)
    }
}

impl Rules for Fifo {
    type App = ();
    type QueueHot = ();
    type QueueCold = ();
    type Timer = FifoTimer;

    fn new_app() {}

    fn place(
        e: &mut FifoEngine,
        _: AppId,
        _: &str,
        _: Option<&str>,
    ) -> Result<QueueId, (RejectCode, String)> {
        Ok(e.rules.leaf)
    }

    fn admit(e: &mut FifoEngine, app: AppId) {
        let Some(a) = e.apps.get_mut(&app) else {
            return;
        };
        a.runnable = true;
        let leaf = a.queue;
        e.queues.get_mut(leaf).runnable_apps.push(app);
        let path: Vec<QueueId> = e.queues.path_to_root(leaf).collect();
        for q in path {
            e.queues.get_mut(q).runnable_count += 1;
        }
    }

    fn leave(e: &mut FifoEngine, app: AppId) {
        let Some(a) = e.apps.get(&app) else {
            return;
        };
        let leaf = a.queue;
        let am = a.am_resource.filter(|_| a.am_running);
        let q = e.queues.get_mut(leaf);
        q.runnable_apps.retain(|x| *x != app);
        if let Some(am) = am {
            q.am_usage = q.am_usage.saturating_sub(am);
        }
        let path: Vec<QueueId> = e.queues.path_to_root(leaf).collect();
        for q in path {
            e.queues.get_mut(q).runnable_count -= 1;
        }
    }

    fn move_app(_: &mut FifoEngine, app: AppId, target: &str) -> Result<(), SchedError> {
        Err(SchedError::MoveRefused {
            app,
            queue: target.to_string(),
            // Hadoop's wording (FifoScheduler's moveApplication), which clients may match.
            reason:
                "the FIFO scheduler (FifoScheduler) does not support moving apps between queues"
                    .to_string(),
        })
    }

    #[inline]
    fn is_candidate(_: &FifoEngine, app: &AppOf<Fifo>) -> bool {
        app.has_outstanding_asks()
    }

    #[inline]
    fn app_key(_: &FifoEngine, app: &AppOf<Fifo>) -> SortKey {
        SortKey::arrival(0, app.id.0)
    }

    #[inline]
    fn queue_key(_: &FifoEngine, _: QueueId, q: &QueueOf<Fifo>) -> SortKey {
        SortKey::arrival(0, q.name_rank)
    }

    fn compare_apps(_: &FifoEngine, _: QueueId, a: &AppOf<Fifo>, b: &AppOf<Fifo>) -> Ordering {
        a.id.cmp(&b.id)
    }

    fn compare_queues(
        _: &FifoEngine,
        _: QueueId,
        a: (&QueueOf<Fifo>, Resource),
        b: (&QueueOf<Fifo>, Resource),
    ) -> Ordering {
        a.0.name_rank.cmp(&b.0.name_rank)
    }

    fn starved_for_reservation(_: &FifoEngine, _: &AppOf<Fifo>) -> bool {
        false
    }

    fn has_reservable_ask(_: &FifoEngine, _: &AppOf<Fifo>) -> bool {
        false
    }

    fn locality_delay(_: &FifoEngine) -> Option<(f64, f64)> {
        None
    }

    fn may_start_am(_: &FifoEngine, _: QueueId, _: Resource) -> bool {
        true
    }

    fn may_reserve(_: &FifoEngine, _: AppId, _: Resource, _: NodeId, _: Locality) -> bool {
        false
    }

    fn keep_assigning(_: &FifoEngine, _: Resource, _: i32, _: Resource) -> bool {
        // Every app gets its turn on every heartbeat; the walk ends when no app takes more.
        true
    }

    #[inline]
    fn fits_node(size: &[i64; MAX_RESOURCE_TYPES], free: &Resource) -> bool {
        size[MEMORY] <= free.get(MEMORY)
    }

    fn serve_app(e: &mut FifoEngine, app: AppId, node: NodeId) -> Assignment {
        e.serve(app, node)
    }

    fn max_container_allocation(e: &FifoEngine, _: QueueId) -> Resource {
        e.properties.maximum_allocation
    }

    fn update(e: &mut FifoEngine, _: Time) {
        // Demand is only reported: usage plus outstanding asks, per app and for the queues.
        let mut total = Resource::ZERO;
        for slot in 0..e.apps.slot_bound() {
            if let Some(a) = e.apps.at_mut(slot) {
                a.demand = a.compute_demand();
                total = total.saturating_add(a.demand);
            }
        }
        let leaf = e.rules.leaf;
        e.queues.get_mut(leaf).demand = total;
        e.queues.get_mut(ROOT).demand = total;
        e.refresh_root_available();
    }

    fn timer_due(_: &mut FifoEngine, timer: FifoTimer, _: Time, _: Time) {
        match timer {}
    }

    fn reload(e: &mut FifoEngine, config: SchedulerConfig, _: Time) -> Result<(), SchedError> {
        match config {
            SchedulerConfig::Fifo(c) => {
                e.properties = ClusterProperties::from_site(&c.properties);
                Ok(())
            }
            other => Err(SchedError::ConfigRefused(format!(
                "the FIFO scheduler cannot take a {} scheduler's configuration; changing the scheduler needs a restart",
                other.kind().short_name()
            ))),
        }
    }

    fn cluster_changed(_: &mut FifoEngine) {}

    fn refresh_reports(_: &mut FifoEngine) {}

    fn app_fair_share(_: &AppOf<Fifo>) -> Resource {
        Resource::ZERO
    }

    /// Hadoop's FifoScheduler: the cluster less what every app uses, for every app alike (no
    /// blacklist or queue limit enters it); memory floored at zero, as the app attempt reports it.
    fn headroom(e: &FifoEngine, _: &AppOf<Fifo>) -> Resource {
        let free = e.cluster.saturating_sub(e.cluster_used);
        free.with(MEMORY, free.memory_mb().max(0))
    }

    fn queue_report(_: &FifoEngine, _: &QueueOf<Fifo>) -> QueueReport {
        QueueReport {
            preempted_containers: 0,
            policy: "fifo",
            weight: 1.0,
            fair_share: Resource::ZERO,
            steady_fair_share: Resource::ZERO,
            min_share: Resource::ZERO,
            starvation: None,
        }
    }

    fn app_starvation(_: &FifoEngine, _: &AppOf<Fifo>) -> Option<crate::api::AppStarvation> {
        None
    }

    fn verify(_: &FifoEngine, _: &mut Vec<String>) {}
}
