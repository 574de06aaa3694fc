//! Container assignment on a node heartbeat (spec §6, §7, §8).
//!
//! The walk descends from the root; at every level it tries children in policy order and stops
//! at the first that assigns (or reserves). The fast path takes the order from the incrementally
//! maintained candidate sets; the reference path sorts every level with the comparator and
//! recomputes usage by recursion. Both call the same per-app code, so they decide identically.

pub(crate) mod gang;

use crate::lanes::Resource;
use weft_types::{AppId, Locality, NodeId};

use crate::engine::{Engine, WalkMode};
use crate::objects::app::{Request, SchedulerKey};
use crate::objects::node::{Node, Reservation};
use crate::queues::{QueueId, ROOT};
use crate::rules::{AppOf, QueueOf, Rules};

/// What one attempt produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Assignment {
    None,
    Allocated(Resource),
    Reserved,
    /// Nothing, and the leaf's later apps are not to be tried on this walk (Capacity: the
    /// leaf is at its limit, or its head app's ask exceeds the leaf's headroom).
    QueueBlocked,
}

impl<R: Rules> Engine<R> {
    /// One node heartbeat: what the rules hand over first (preemption's earmarks), then the
    /// node's reservation, or assign containers (spec §6).
    pub(crate) fn heartbeat(&mut self, node: NodeId) {
        if self.order_dirty {
            self.rebuild_order();
        }
        let watched = R::heartbeat_starts(self, node);
        self.serve_node(node);
        if let Some(mark) = watched {
            R::heartbeat_assigned(self, node, mark);
        }
    }

    /// Serve the node's reservation, or assign containers (spec §6 steps 2-3).
    fn serve_node(&mut self, node: NodeId) {
        self.last_heartbeat_widest_walk = 0;
        if let Some(res) = self.nodes.get(&node).and_then(|n| n.reservation.clone()) {
            if self.assign_reserved(node, &res) {
                self.refresh_root_available();
                return;
            }
        }
        let Some(n) = self.nodes.get(&node) else {
            return;
        };
        let max_to_assign = n.unallocated().mul_trunc(0.5);
        let mut assigned = Resource::ZERO;
        let mut count = 0;
        loop {
            if self
                .nodes
                .get(&node)
                .is_none_or(|n| n.reservation.is_some())
            {
                break;
            }
            let visited_before = self.queues_visited;
            let a = self.assign_from_root(node);
            self.walks += 1;
            self.last_heartbeat_widest_walk = self
                .last_heartbeat_widest_walk
                .max(self.queues_visited.wrapping_sub(visited_before));
            let size = match a {
                Assignment::None | Assignment::QueueBlocked => break,
                Assignment::Reserved => break,
                Assignment::Allocated(size) => size,
            };
            count += 1;
            assigned = assigned.saturating_add(size);
            if !R::keep_assigning(self, assigned, count, max_to_assign) {
                break;
            }
        }
        self.refresh_root_available();
    }

    /// One walk from the root. On the fast path, when no outstanding ask fits the node's free
    /// resources and delay scheduling is off, only a reservation can come out of the walk, so
    /// it visits only the members that could reserve (see `order.rs`); the decisions are the
    /// full walk's.
    fn assign_from_root(&mut self, node: NodeId) -> Assignment {
        if !R::node_may_take(self, node) {
            return Assignment::None;
        }
        if self.walk == WalkMode::Fast && !self.delay_scheduling_enabled() {
            let Some(free) = self.nodes.get(&node).map(|n| n.unallocated()) else {
                return Assignment::None;
            };
            if !self.any_pending_fits(free) {
                let reservable = match &self.pools {
                    None => self.queues.get(ROOT).reservable_members,
                    Some(pools) => self.node_pool(node).map_or(0, |p| {
                        pools
                            .root_reservable
                            .get(usize::from(p))
                            .copied()
                            .unwrap_or(0)
                    }),
                };
                if reservable == 0 {
                    return Assignment::None;
                }
                return self.assign_queue(ROOT, node, true);
            }
        }
        self.assign_queue(ROOT, node, false)
    }

    /// Whether count-based delay scheduling is on (spec §7.1).
    #[inline]
    pub(crate) fn delay_scheduling_enabled(&self) -> bool {
        R::locality_delay(self).is_some()
    }

    /// Usage of a queue: the maintained aggregate, or a recursive sum in the reference walk.
    fn usage_of(&self, q: QueueId) -> Resource {
        match self.walk {
            WalkMode::Fast => self.queues.get(q).usage,
            WalkMode::Reference => self.recursive_usage(q),
        }
    }

    pub(crate) fn recursive_usage(&self, q: QueueId) -> Resource {
        let queue = self.queues.get(q);
        let mut sum = Resource::ZERO;
        for a in queue
            .runnable_apps
            .iter()
            .chain(queue.non_runnable_apps.iter())
        {
            if let Some(app) = self.apps.get(a) {
                sum = sum.saturating_add(app.usage);
            }
        }
        for c in &queue.children {
            sum = sum.saturating_add(self.recursive_usage(*c));
        }
        sum
    }

    /// Queue pre-check (spec §6.1), then children or apps in policy order. `reserve_only`
    /// (fast path) visits only the members flagged reservable.
    fn assign_queue(&mut self, q: QueueId, node: NodeId, reserve_only: bool) -> Assignment {
        self.queues_visited = self.queues_visited.wrapping_add(1);
        if self
            .nodes
            .get(&node)
            .is_none_or(|n| n.reservation.is_some())
        {
            return Assignment::None;
        }
        let queue = self.queues.get(q);
        if !self.max_share_never_binds(queue) && !self.usage_of(q).fits_in(&queue.max_share) {
            return Assignment::None;
        }
        let is_leaf = queue.is_leaf;
        // With pools, root's members come from the order of the node's pool only.
        let root_pool = match &self.pools {
            Some(_) if q == ROOT => self.node_pool(node).map(usize::from),
            _ => None,
        };
        match self.walk {
            WalkMode::Fast => {
                let mut cursor = None;
                loop {
                    let set = match (root_pool, &self.pools) {
                        (Some(p), Some(pools)) => match pools.root_candidates.get(p) {
                            Some(set) => set,
                            None => return Assignment::None,
                        },
                        _ => &self.queues.get(q).candidates,
                    };
                    let next = match cursor {
                        None => {
                            // The set read is at hand: counting the breadth costs one add.
                            if q == ROOT {
                                self.top_level_reachable += set.len() as u64;
                            }
                            set.first()
                        }
                        Some(c) => set.next(c),
                    };
                    let Some(at) = next else {
                        return Assignment::None;
                    };
                    cursor = Some(at);
                    let member = set.member(at.slot());
                    if reserve_only && !self.member_reservable(is_leaf, member) {
                        continue;
                    }
                    let a = if is_leaf {
                        // A leaf's members are app slots: the app is read there, and noted so
                        // that the visit's look-ups by id skip the index.
                        let slot = member as u32;
                        let Some(a) = self.apps.at(slot) else {
                            continue;
                        };
                        let app = a.id;
                        if a.has_blacklist && self.blacklists_node(a, node) {
                            continue;
                        }
                        self.apps.remember(app, slot);
                        self.apps_visited = self.apps_visited.wrapping_add(1);
                        R::serve_app(self, app, node)
                    } else {
                        self.assign_queue(QueueId(member as u32), node, reserve_only)
                    };
                    match a {
                        Assignment::None => {}
                        Assignment::QueueBlocked => return Assignment::None,
                        done => return done,
                    }
                }
            }
            WalkMode::Reference => {
                let order = self.reference_order(q, root_pool);
                if q == ROOT {
                    self.top_level_reachable += order.len() as u64;
                }
                for member in order {
                    let a = if is_leaf {
                        let app = AppId(member);
                        if self
                            .apps
                            .get(&app)
                            .is_some_and(|a| self.blacklists_node(a, node))
                        {
                            continue;
                        }
                        self.apps_visited = self.apps_visited.wrapping_add(1);
                        R::serve_app(self, app, node)
                    } else {
                        self.assign_queue(QueueId(member as u32), node, false)
                    };
                    match a {
                        Assignment::None => {}
                        Assignment::QueueBlocked => return Assignment::None,
                        done => return done,
                    }
                }
                Assignment::None
            }
        }
    }

    /// The resource pool of `node` (pools on or off).
    #[inline]
    pub(crate) fn node_pool(&self, node: NodeId) -> Option<u16> {
        self.nodes.get(&node).map(|n| n.pool)
    }

    /// Whether `app` may get containers on `node`: always without pools, else only when the
    /// node is in the app's queue's pool.
    pub(crate) fn app_may_use_node(&self, app: AppId, node: NodeId) -> bool {
        if self.pools.is_none() {
            return true;
        }
        match (self.apps.get(&app), self.nodes.get(&node)) {
            (Some(a), Some(n)) => self.queues.get(a.queue).pool == n.pool,
            _ => false,
        }
    }

    /// Whether the queue's max share cannot stop any allocation (see `max_share_unbounded`).
    #[inline]
    fn max_share_never_binds(&self, queue: &QueueOf<R>) -> bool {
        queue.max_share_unbounded && self.unbounded_never_binds
    }

    /// Whether a candidate (an app of a leaf, or a child queue) is flagged reservable.
    fn member_reservable(&self, is_leaf: bool, member: u64) -> bool {
        if is_leaf {
            self.apps
                .at(member as u32)
                .is_some_and(|a| a.reservable_in_leaf)
        } else {
            self.queues.get(QueueId(member as u32)).reservable_in_parent
        }
    }

    /// The textbook order at one level: every child queue, or every runnable app with pending
    /// demand, sorted with the comparator (with `pool`, only the children in that pool).
    fn reference_order(&self, q: QueueId, pool: Option<usize>) -> Vec<u64> {
        let queue = self.queues.get(q);
        if queue.is_leaf {
            let mut apps: Vec<&AppOf<R>> = queue
                .runnable_apps
                .iter()
                .filter_map(|a| self.apps.get(a))
                .filter(|a| R::is_candidate(self, a))
                .collect();
            apps.sort_by(|x, y| R::compare_apps(self, q, x, y));
            apps.into_iter().map(|a| a.id.0).collect()
        } else {
            let mut children: Vec<_> = queue
                .children
                .iter()
                .filter(|c| pool.is_none_or(|p| usize::from(self.queues.get(**c).pool) == p))
                .map(|c| (self.queues.get(*c), self.recursive_usage(*c)))
                .collect();
            children.sort_by(|x, y| R::compare_queues(self, q, *x, *y));
            children.into_iter().map(|(c, _)| c.id.0 as u64).collect()
        }
    }

    /// Whether the app is blocked from running its AM (spec §6.4 step 0).
    fn am_blocked(&self, app: AppId) -> bool {
        let Some(a) = self.apps.get(&app) else {
            return true;
        };
        if !a.waiting_for_am() {
            return false;
        }
        match a.requests.values().find(|r| r.any.count > 0) {
            None => true,
            Some(r) => !R::may_start_am(self, a.queue, r.size),
        }
    }

    /// `hasContainerForNode` (spec §6.4 step 1a).
    fn has_container_for_node(&self, app: AppId, key: SchedulerKey, node: NodeId) -> bool {
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return false;
        };
        let Some(req) = a.requests.get(&key) else {
            return false;
        };
        self.request_fits_node(a, req, n)
    }

    /// `hasContainerForNode` for one of `a`'s requests on `n`.
    fn request_fits_node(&self, a: &AppOf<R>, req: &Request, n: &Node) -> bool {
        if req.any.count == 0 {
            return false;
        }
        let rack = req.rack_count(&n.rack);
        if !req.any.relax_locality && rack.is_none_or(|r| r.count == 0) {
            return false;
        }
        if let Some(r) = rack {
            if !r.relax_locality && req.host_count(&n.host).is_none_or(|h| h.count == 0) {
                return false;
            }
        }
        if !req.size.fits_in(&n.capability) {
            return false;
        }
        if self.unbounded_never_binds && self.queues.get(a.queue).path_unbounded {
            return true;
        }
        let mut next = Some(a.queue);
        while let Some(q) = next {
            let queue = self.queues.get(q);
            if !self.max_share_never_binds(queue)
                && !fits_after_adding(&self.usage_of(q), &req.size, &queue.max_share)
            {
                return false;
            }
            next = queue.parent;
        }
        true
    }

    /// Delay scheduling, count-based (spec §7.1).
    fn allowed_locality(&mut self, app: AppId, key: SchedulerKey) -> Locality {
        let (node_t, rack_t) = R::locality_delay(self).unwrap_or((-1.0, -1.0));
        let (node_t, rack_t) = (node_t.min(1.0), rack_t.min(1.0));
        let nodes = self.nodes.len() as f64;
        let Some(req) = self
            .apps
            .get_mut(&app)
            .and_then(|a| a.requests.get_mut(&key))
        else {
            return Locality::OffSwitch;
        };
        if node_t < 0.0 || rack_t < 0.0 {
            return Locality::OffSwitch;
        }
        let Some(allowed) = req.allowed else {
            req.allowed = Some(Locality::NodeLocal);
            return Locality::NodeLocal;
        };
        if allowed == Locality::OffSwitch {
            return allowed;
        }
        let threshold = if allowed == Locality::NodeLocal {
            node_t
        } else {
            rack_t
        };
        if req.opportunities as f64 > nodes * threshold {
            let relaxed = if allowed == Locality::NodeLocal {
                Locality::RackLocal
            } else {
                Locality::OffSwitch
            };
            req.allowed = Some(relaxed);
            req.opportunities = 0;
            return relaxed;
        }
        allowed
    }

    /// `FSAppAttempt.assignContainer(node)` (spec §6.4): keys in priority order, locality, then
    /// allocate or reserve. `only` restricts to the reserved key.
    pub(crate) fn assign_app(
        &mut self,
        app: AppId,
        node: NodeId,
        only: Option<SchedulerKey>,
    ) -> Assignment {
        if self.am_blocked(app) {
            return Assignment::None;
        }
        if !self.nodes.contains_key(&node) {
            return Assignment::None;
        }
        if !self.delay_scheduling_enabled() {
            return match self.choose_without_delay(app, node, only) {
                Some((key, locality)) => self.assign_at(app, key, node, locality, only.is_some()),
                None => Assignment::None,
            };
        }
        // Keys in priority order, found one at a time so the walk allocates nothing.
        let mut previous: Option<SchedulerKey> = None;
        loop {
            let key = match only {
                Some(k) if previous.is_none() => k,
                Some(_) => break,
                None => {
                    let Some(a) = self.apps.get(&app) else {
                        return Assignment::None;
                    };
                    let next = match previous {
                        None => a.requests.first_key(),
                        Some(p) => a.requests.key_after(&p),
                    };
                    match next {
                        Some(k) => k,
                        None => break,
                    }
                }
            };
            previous = Some(key);
            if !self.has_container_for_node(app, key, node) {
                continue;
            }
            // Opportunities only feed delay scheduling; while it is off they are not counted
            // (Hadoop counts them regardless; they would only matter after a reload turned
            // delay scheduling on, where Weft starts from zero).
            if self.delay_scheduling_enabled() {
                if let Some(req) = self
                    .apps
                    .get_mut(&app)
                    .and_then(|a| a.requests.get_mut(&key))
                {
                    req.opportunities += 1;
                }
            }
            let allowed = self.allowed_locality(app, key);
            let (Some(req), Some(n)) = (
                self.apps.get(&app).and_then(|a| a.requests.get(&key)),
                self.nodes.get(&node),
            ) else {
                continue;
            };
            if let Some(locality) = locality_on(req, n, allowed) {
                return self.assign_at(app, key, node, locality, only.is_some());
            }
        }
        Assignment::None
    }

    /// The key and locality `assign_app` acts on while delay scheduling is off: then nothing
    /// in the choice changes state (no opportunities counted, every level allowed), so the app,
    /// the node and each request are looked up once. Decides exactly as the general loop does
    /// with `allowed_locality` answering "off-switch".
    fn choose_without_delay(
        &self,
        app: AppId,
        node: NodeId,
        only: Option<SchedulerKey>,
    ) -> Option<(SchedulerKey, Locality)> {
        let (a, n) = (self.apps.get(&app)?, self.nodes.get(&node)?);
        let mut requests = a.requests.iter();
        let mut reserved = only.and_then(|k| a.requests.get_key_value(&k));
        loop {
            let (key, req) = match only {
                Some(_) => reserved.take()?,
                None => requests.next()?,
            };
            if !self.request_fits_node(a, req, n) {
                continue;
            }
            if let Some(locality) = locality_on(req, n, Locality::OffSwitch) {
                return Some((*key, locality));
            }
        }
    }

    /// Allocates on the node if the ask fits, else tries to reserve (spec §6.4 step 2).
    fn assign_at(
        &mut self,
        app: AppId,
        key: SchedulerKey,
        node: NodeId,
        locality: Locality,
        reserved: bool,
    ) -> Assignment {
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return Assignment::None;
        };
        let Some(req) = a.requests.get(&key) else {
            return Assignment::None;
        };
        let size = req.size;
        if size.fits_in(&n.unallocated()) {
            if reserved {
                self.unreserve_node(node);
            }
            self.allocate(app, key, node, locality);
            return Assignment::Allocated(size);
        }
        if R::may_reserve(self, app, size, node, locality) {
            self.reserve(app, key, node, size);
            return Assignment::Reserved;
        }
        Assignment::None
    }

    /// Serves an existing reservation (spec §6.5). True when it is still valid, in which case
    /// nothing else is scheduled on this heartbeat. A reservation on a node the app has since
    /// blacklisted is not (Hadoop keeps serving it; Weft never allocates on a listed node).
    fn assign_reserved(&mut self, node: NodeId, res: &Reservation) -> bool {
        let valid = self
            .apps
            .get(&res.app)
            .is_some_and(|a| !a.has_blacklist || !self.blacklists_node(a, node))
            && self.has_container_for_node(res.app, res.key, node)
            && !self.am_blocked(res.app);
        if !valid {
            self.unreserve_node(node);
            return false;
        }
        let fits = self
            .nodes
            .get(&node)
            .is_some_and(|n| res.size.fits_in(&n.unallocated()));
        if fits {
            self.assign_app(res.app, node, Some(res.key));
        }
        true
    }
}

/// The locality at which `req` may be served on `n` when delay scheduling allows `allowed`
/// (spec §6.4 step 1c), or `None`: node-local where the host and its rack are asked for, else
/// rack-local, else off-switch where locality may be relaxed.
fn locality_on(req: &Request, n: &Node, allowed: Locality) -> Option<Locality> {
    let rack_ask = req.rack_count(&n.rack);
    let rack_count = rack_ask.map_or(0, |r| r.count);
    if rack_count > 0 && req.host_count(&n.host).is_some_and(|h| h.count > 0) {
        return Some(Locality::NodeLocal);
    }
    if rack_ask.is_some_and(|r| !r.relax_locality) {
        return None;
    }
    if rack_count > 0 && allowed >= Locality::RackLocal {
        return Some(Locality::RackLocal);
    }
    if !req.any.relax_locality {
        return None;
    }
    // Off-switch needs no look at the locations once delay scheduling allows it anyway.
    (req.any.count > 0 && (allowed == Locality::OffSwitch || !req.has_locations()))
        .then_some(Locality::OffSwitch)
}

/// Whether `usage + size` (clamped) stays within `max` in every lane; every lane is compared,
/// without branching, as this runs for each level above every app the walk tries.
#[inline]
fn fits_after_adding(usage: &Resource, size: &Resource, max: &Resource) -> bool {
    usage
        .values()
        .iter()
        .zip(size.values())
        .zip(max.values())
        .fold(true, |ok, ((u, s), m)| ok & (u.saturating_add(*s) <= *m))
}
