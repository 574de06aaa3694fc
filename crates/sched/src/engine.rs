//! `Engine<R>`: the shared state machine every scheduler runs as. It dispatches events, keeps
//! the application and node lifecycles, normalizes asks and takes snapshots; what is decided
//! is asked of the rules `R` (see `rules.rs`).

use std::collections::{BTreeMap, VecDeque};

use crate::lanes::Resource;
use crate::lanes::{inward, inward_ask, outward};
use weft_types::{AppId, ContainerId, NodeId, Time};

use crate::api::*;
use crate::lanes::ClusterProperties;
use crate::objects::app::{App, LocationAsk, Request};
use crate::objects::containers::Owner;
use crate::objects::gangs::Gangs;
use crate::objects::node::{Container, Node};
use crate::objects::pools::Pools;
use crate::objects::table::{IdMap, Table};
use crate::objects::timers::Timers;
use crate::queues::{QueueId, QueueTree, ROOT};
use crate::rules::{AppOf, Rules};

pub(crate) use crate::api::WalkMode;

/// The shared objects plus one scheduler's rules.
pub(crate) struct Engine<R: Rules> {
    pub(crate) rules: R,
    pub(crate) properties: ClusterProperties,
    pub(crate) groups: GroupMapping,
    pub(crate) queues: QueueTree<R::QueueHot, R::QueueCold>,
    pub(crate) apps: Table<AppId, AppOf<R>>,
    pub(crate) nodes: Table<NodeId, Node>,
    pub(crate) hosts: BTreeMap<String, NodeId>,
    pub(crate) rack_sizes: BTreeMap<String, u32>,
    pub(crate) containers: IdMap<ContainerId, Container>,
    pub(crate) next_container: u64,
    pub(crate) cluster: Resource,
    pub(crate) cluster_used: Resource,
    /// Root queue metrics' available resources, refreshed after each heartbeat, each
    /// completion, updates and node changes (Hadoop's root queue metrics; the AM limit reads it).
    pub(crate) root_available: Resource,
    pub(crate) decisions: VecDeque<Decision>,
    /// What the rules asked to be woken for (`poll_timeout`).
    pub(crate) timers: Timers<R::Timer>,
    pub(crate) walk: WalkMode,
    /// The fast-path order must be rebuilt before the next walk.
    pub(crate) order_dirty: bool,
    pub(crate) allocations: u64,
    /// Queues the heartbeat walks entered (root included), since the engine was made: what a
    /// heartbeat costs in tree visits, for benchmarks (one increment per visit).
    pub(crate) queues_visited: u64,
    /// Summed over the walks: how many top-level queues each could descend to (root's
    /// candidates, or its node's pool's): the breadth a heartbeat draws from.
    pub(crate) top_level_reachable: u64,
    /// Walks from the root so far (a heartbeat makes one per container it assigns, plus the
    /// one that finds nothing more).
    pub(crate) walks: u64,
    /// The most queues one walk of the latest heartbeat entered (resource-pools spec §14
    /// scenario 31: never more than the heartbeating node's pool holds).
    pub(crate) last_heartbeat_widest_walk: u64,
    /// Apps the heartbeat walks offered a node to (one increment per visit), for the
    /// footprint figures (`Scheduler::footprint`).
    pub(crate) apps_visited: u64,
    /// Fast path: distinct outstanding ask sizes of candidate apps -> how many apps have them.
    pub(crate) pending_sizes: BTreeMap<[i64; crate::lanes::MAX_RESOURCE_TYPES], u32>,
    /// Reused buffer for re-indexing an app's sizes without allocating.
    pub(crate) scratch_sizes: Vec<[i64; crate::lanes::MAX_RESOURCE_TYPES]>,
    /// Twice the cluster fits in `Resource::UNBOUNDED`, so usage plus one container (each at
    /// most the cluster) can never exceed an unbounded max share.
    pub(crate) unbounded_never_binds: bool,
    /// Resource pools (`None`: off, the whole cluster is one partition).
    pub(crate) pools: Option<Box<Pools>>,
    /// Gangs waiting for room (`None` while there is none: then events cost one test more).
    pub(crate) gangs: Option<Box<Gangs>>,
    /// The plan follower (`None` until a plan is given: then events cost one test more).
    pub(crate) follower: Option<Box<crate::follower::Follower>>,
}

impl<R: Rules> Engine<R> {
    /// An engine with no nodes or apps.
    pub(crate) fn new(
        rules: R,
        properties: ClusterProperties,
        queues: QueueTree<R::QueueHot, R::QueueCold>,
        groups: GroupMapping,
    ) -> Engine<R> {
        Engine {
            rules,
            properties,
            groups,
            queues,
            apps: Table::new(),
            nodes: Table::new(),
            hosts: BTreeMap::new(),
            rack_sizes: BTreeMap::new(),
            containers: IdMap::new(),
            next_container: 1,
            cluster: Resource::ZERO,
            cluster_used: Resource::ZERO,
            root_available: Resource::ZERO,
            decisions: VecDeque::new(),
            timers: Timers::default(),
            walk: WalkMode::Fast,
            order_dirty: true,
            allocations: 0,
            queues_visited: 0,
            top_level_reachable: 0,
            walks: 0,
            last_heartbeat_widest_walk: 0,
            apps_visited: 0,
            pending_sizes: BTreeMap::new(),
            scratch_sizes: Vec::new(),
            unbounded_never_binds: true,
            pools: None,
            gangs: None,
            follower: None,
        }
    }

    pub(crate) fn set_walk_mode(&mut self, mode: WalkMode) {
        self.walk = mode;
        self.order_dirty = true;
    }

    pub(crate) fn queue_name(&self, app: AppId) -> Option<&str> {
        self.apps
            .get(&app)
            .map(|a| self.queues.get(a.queue).name.as_str())
    }

    /// Applies one event at time `now`. An `Err` leaves the state exactly as it was.
    pub(crate) fn handle(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        // Whatever came due happens before the event, whichever event wakes the core.
        if self.gangs.is_some() {
            return self.handle_with_gangs(now, event);
        }
        if self.timers.next_due().is_some_and(|at| at <= now) {
            self.fire_timers(now);
        }
        if self.follower.is_some() {
            self.follow_if_due(now);
        }
        self.apply(now, event)
    }

    /// [`Engine::handle`] while gangs wait: a hold due to time out does first, a heartbeat
    /// serves the gangs before its walk, and what the event did to held members is sorted out
    /// after it.
    fn handle_with_gangs(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        let mark = self.decisions.len();
        if self.timers.next_due().is_some_and(|at| at <= now) {
            self.fire_timers(now);
        }
        self.follow_if_due(now);
        self.expire_gang_hold(now);
        let restarted = match &event {
            Event::AttemptRestarted { app, .. } => Some(*app),
            Event::NodeHeartbeat { node } if self.nodes.contains_key(node) => {
                if self.order_dirty {
                    self.rebuild_order();
                }
                self.serve_gangs(now);
                None
            }
            _ => None,
        };
        let out = self.apply(now, event);
        self.gang_fallout(mark, restarted);
        out
    }

    /// One event's own work (due timers and gangs aside).
    fn apply(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        match event {
            Event::NodeAdded {
                node,
                host,
                port,
                rack,
                capability,
            } => {
                let capability = inward(capability)
                    .map_err(|reason| SchedError::InvalidNode { node, reason })?;
                self.add_node(node, host, port, rack, capability)?;
                self.plans_resized(now);
                Ok(())
            }
            Event::NodeRemoved { node } => {
                self.remove_node(node)?;
                self.plans_resized(now);
                Ok(())
            }
            Event::NodeHeartbeat { node } => {
                if !self.nodes.contains_key(&node) {
                    return Err(SchedError::UnknownNode(node));
                }
                self.heartbeat(node);
                Ok(())
            }
            Event::ContainerCompleted {
                container,
                exit,
                status,
            } => {
                if !self.containers.contains_key(&container) {
                    return Err(SchedError::UnknownContainer(container));
                }
                self.complete_container(container, exit, status);
                Ok(())
            }
            Event::AppSubmitted {
                app,
                user,
                queue,
                am_resource,
            } => {
                let am_resource = inward_ask(app, am_resource)?;
                self.submit(now, app, user, queue, am_resource, None)
                    .map(|_| ())
            }
            Event::AppFinished { app } => {
                if !self.apps.contains_key(&app) {
                    return Err(SchedError::UnknownApp(app));
                }
                self.remove_app(app, ContainerExit::Killed);
                Ok(())
            }
            Event::AppKilled { app, user } => self.kill(app, user),
            Event::Ask { app, ask } => self.add_ask(app, ask),
            Event::CancelAsks {
                app,
                priority,
                count,
            } => self.cancel_asks(app, priority, count),
            Event::Release { app, container } => {
                match self.containers.get(&container) {
                    Some(c) if self.apps.slot_of(&app) == Some(c.app_slot) => {}
                    Some(_) | None => return Err(SchedError::UnknownContainer(container)),
                }
                self.complete_container(container, ContainerExit::Released, None);
                Ok(())
            }
            Event::Move { app, queue } => R::move_app(self, app, &queue),
            Event::Reload(config) => {
                R::reload(self, *config, now)?;
                // The reload re-read every queue's settings: the follower sizes its leaves again.
                self.follow(now);
                Ok(())
            }
            Event::PlanChanged(plan) => self.plan_changed(now, *plan),
            Event::GroupsChanged(groups) => {
                self.groups = groups;
                Ok(())
            }
            Event::UserGroups { user, groups } => {
                if groups.is_empty() {
                    self.groups.remove(&user);
                } else {
                    self.groups.insert(user, groups);
                }
                Ok(())
            }
            Event::Update => {
                R::update(self, now);
                Ok(())
            }
            // Due timers fired above.
            Event::Timeout => Ok(()),

            Event::BlacklistUpdated {
                app,
                additions,
                removals,
            } => self.update_blacklist(app, &additions, &removals),
            Event::ContainerRecovered {
                container,
                app,
                node,
                resources,
                priority,
                am,
            } => {
                let resources =
                    inward(resources).map_err(|reason| SchedError::InvalidAsk { app, reason })?;
                self.recover_container(container, app, node, resources, priority, am)
            }
            Event::AttemptRestarted { app, am_resource } => {
                let am_resource = inward_ask(app, am_resource)?;
                self.restart_attempt(app, am_resource)
            }
            Event::GangAsk { app, ask } => self.ask_gang(now, app, ask),
            Event::GangCancelled { app, gang } => self.cancel_gang(app, gang),
            Event::GangExpired { app, gang } => self.end_gang_wait(app, gang),
            Event::AppPriorityChanged { app, priority } => {
                if !self.apps.contains_key(&app) {
                    return Err(SchedError::UnknownApp(app));
                }
                R::priority_changed(self, app, priority);
                Ok(())
            }
        }
    }

    /// [`Engine::submit`] as an input of its own (`Scheduler::submit`): due timers fire first,
    /// as for every event.
    pub(crate) fn submit_now(
        &mut self,
        now: Time,
        id: AppId,
        user: String,
        requested: Option<String>,
        am_resource: Option<Resource>,
        reservation: Option<&str>,
    ) -> Result<Placement, SchedError> {
        let mark = self.decisions.len();
        if self.timers.next_due().is_some_and(|at| at <= now) {
            self.fire_timers(now);
        }
        self.follow_if_due(now);
        if self.gangs.is_some() {
            self.expire_gang_hold(now);
            self.gang_fallout(mark, None);
        }
        self.submit(now, id, user, requested, am_resource, reservation)
    }

    /// When the core next wants `Event::Timeout`: the earliest due timer.
    pub(crate) fn poll_timeout(&self) -> Option<Time> {
        let gang = self.gangs.as_ref().and_then(|g| g.next_expiry());
        let plans = self.follower.as_ref().and_then(|f| f.next_change());
        [self.timers.next_due(), gang, plans]
            .into_iter()
            .flatten()
            .min()
    }

    /// Hands every timer due by `now` to the rules, earliest first (a timer set while firing
    /// for `now` or earlier fires in the same pass).
    pub(crate) fn fire_timers(&mut self, now: Time) {
        while let Some((at, timer)) = self.timers.pop_due(now) {
            R::timer_due(self, timer, at, now);
        }
    }

    fn add_node(
        &mut self,
        id: NodeId,
        host: String,
        port: u16,
        rack: String,
        capability: Resource,
    ) -> Result<(), SchedError> {
        if self.nodes.contains_key(&id) {
            return Err(SchedError::Duplicate(format!("node {id}")));
        }
        if self.hosts.contains_key(&host) {
            return Err(SchedError::Duplicate(format!("host {host}")));
        }
        // The total stays exact (no saturation that a removal would turn into drift).
        let Some(cluster) = self.cluster.checked_add(capability) else {
            return Err(SchedError::InvalidNode {
                node: id,
                reason: format!("its capability {capability:?} would overflow the cluster total"),
            });
        };
        self.hosts.insert(host.clone(), id);
        *self.rack_sizes.entry(rack.clone()).or_insert(0) += 1;
        let mut node = Node::new(id, host, rack, capability);
        node.port = port;
        if let Some(pools) = &mut self.pools {
            node.pool = pools.pool_of_node(&node.host, port);
            pools.count_node(node.pool, &node.rack, capability, true);
        }
        self.nodes.insert(id, node);
        self.cluster = cluster;
        self.cluster_changed();
        Ok(())
    }

    fn remove_node(&mut self, id: NodeId) -> Result<(), SchedError> {
        let Some(node) = self.nodes.get(&id) else {
            return Err(SchedError::UnknownNode(id));
        };
        let containers = self.container_ids(node.running, Owner::Node);
        for c in containers {
            self.complete_container(c, ContainerExit::Lost, None);
        }
        self.unreserve_node(id);
        let Some(node) = self.nodes.remove(&id) else {
            return Err(SchedError::UnknownNode(id));
        };
        self.hosts.remove(&node.host);
        if let Some(pools) = &mut self.pools {
            pools.count_node(node.pool, &node.rack, node.capability, false);
        }
        if let Some(n) = self.rack_sizes.get_mut(&node.rack) {
            *n -= 1;
            if *n == 0 {
                self.rack_sizes.remove(&node.rack);
            }
        }
        // Exact: the total is a checked sum that includes this node.
        self.cluster = self
            .cluster
            .checked_sub(node.capability)
            .unwrap_or(Resource::ZERO);
        self.cluster_changed();
        Ok(())
    }

    /// Turns resource pools on (`Some`) or off, re-assigning every node and queue to its
    /// pool and recomputing each pool's capacity and usage; the order is rebuilt before the
    /// next walk.
    pub(crate) fn set_pools(
        &mut self,
        config: Option<std::sync::Arc<weft_config::pools::ResourcePools>>,
    ) {
        self.queues.set_pools(config.clone());
        self.pools = config.map(|c| Box::new(Pools::new(c)));
        let ids: Vec<NodeId> = self.nodes.values().map(|n| n.id).collect();
        for id in ids {
            let Some(n) = self.nodes.get(&id) else {
                continue;
            };
            let pool = match &mut self.pools {
                Some(pools) => {
                    let pool = pools.pool_of_node(&n.host, n.port);
                    pools.count_node(pool, &n.rack, n.capability, true);
                    let used = &mut pools.used[usize::from(pool)];
                    *used = used.saturating_add(n.allocated);
                    pool
                }
                None => 0,
            };
            if let Some(n) = self.nodes.get_mut(&id) {
                n.pool = pool;
            }
        }
        self.refresh_root_available();
        self.refresh_pool_placements();
        self.order_dirty = true;
    }

    /// After the pools changed (a reload): running containers stay where they are, marked
    /// foreign where their node is no longer in their app's pool (resource-pools spec §10: host
    /// moves keep work), and a node's reservation for an app of another pool is cancelled.
    fn refresh_pool_placements(&mut self) {
        self.refresh_foreign();
        let stale: Vec<NodeId> = self
            .nodes
            .values()
            .filter(|n| {
                n.reservation.as_ref().is_some_and(|r| {
                    self.apps
                        .get(&r.app)
                        .is_none_or(|a| self.queues.get(a.queue).pool != n.pool)
                })
            })
            .map(|n| n.id)
            .collect();
        for node in stale {
            self.unreserve_node(node);
        }
    }

    /// Recomputes from scratch which containers are foreign (on a node outside their app's
    /// pool) and each pool's foreign usage.
    pub(crate) fn refresh_foreign(&mut self) {
        let on = self.pools.is_some();
        if let Some(pools) = &mut self.pools {
            pools.foreign_used.fill(Resource::ZERO);
        }
        let app_ids: Vec<AppId> = self.apps.values().map(|a| a.id).collect();
        for id in app_ids {
            let Some(app) = self.apps.get(&id) else {
                continue;
            };
            let pool = self.queues.get(app.queue).pool;
            for c in self.container_ids(app.running, Owner::App) {
                let Some((size, node_pool)) = self
                    .containers
                    .get(&c)
                    .and_then(|c| Some((c.size, self.nodes.at(c.node_slot)?.pool)))
                else {
                    continue;
                };
                let foreign = on && node_pool != pool;
                if let Some(container) = self.containers.get_mut(&c) {
                    container.foreign = foreign;
                }
                if let (true, Some(pools)) = (foreign, &mut self.pools) {
                    pools.count_foreign(node_pool, size, true);
                }
            }
        }
    }

    /// Node set changed: the rules' cluster-relative state, root metrics and orders follow.
    fn cluster_changed(&mut self) {
        R::cluster_changed(self);
        self.unbounded_never_binds = self.cluster.saturating_mul(2).fits_in(&Resource::UNBOUNDED);
        self.refresh_root_available();
        self.order_dirty = true;
    }

    /// A submission: placed and admitted, or rejected (both queued as decisions too). `Err`
    /// only for an id already in use.
    fn submit(
        &mut self,
        now: Time,
        id: AppId,
        user: String,
        requested: Option<String>,
        am_resource: Option<Resource>,
        reservation: Option<&str>,
    ) -> Result<Placement, SchedError> {
        if self.apps.contains_key(&id) {
            return Err(SchedError::Duplicate(format!("application {id}")));
        }
        let placed = R::place(self, id, &user, requested.as_deref());
        let placed = match reservation {
            Some(r) => placed.and_then(|queue| self.reservation_leaf(id, queue, r)),
            None => placed,
        };
        let placed = placed.and_then(|queue| {
            let am = match am_resource {
                Some(r) => Some(self.normalize(queue, r).map_err(|e| {
                    let reason = format!("application {id} rejected: AM container {e}");
                    (RejectCode::InvalidAmResource, reason)
                })?),
                None => None,
            };
            Ok((queue, am))
        });
        match placed {
            Ok((queue, am)) => {
                let mut app = App::new(id, user, queue, now.as_millis(), am, R::new_app());
                if let Some(am) = am {
                    let key = app.key_for(0, am);
                    let mut req = Request::new(am);
                    req.any.count = 1;
                    app.requests.insert(key, req);
                }
                self.apps.insert(id, app);
                R::admit(self, id);
                let name = self.queues.get(queue).name.clone();
                self.decisions.push_back(Decision::Accepted {
                    app: id,
                    queue: name.clone(),
                });
                self.refresh_app(id);
                Ok(Placement::Accepted { queue: name })
            }
            Err((code, reason)) => {
                self.decisions.push_back(Decision::Rejected {
                    app: id,
                    reason: reason.clone(),
                    code,
                });
                Ok(Placement::Rejected { reason, code })
            }
        }
    }

    /// Normalizes an ask (spec §9.4): at least the minimum, rounded up to the increment, at most
    /// the queue's maximum allocation. Refuses types the queue may never have.
    pub(crate) fn normalize(&self, queue: QueueId, ask: Resource) -> Result<Resource, String> {
        let props = &self.properties;
        let types = &props.resource_types;
        let max_share = self.queues.get(queue).max_share;
        for i in 0..types.len() {
            if ask.get(i) > 0 && max_share.get(i) == 0 {
                return Err(format!(
                    "asks for a non-zero amount of resource '{}' but queue {} has a zero maximum for it",
                    types.name(i),
                    self.queues.get(queue).name
                ));
            }
            if ask.get(i) < 0 {
                return Err(format!("asks for a negative amount of '{}'", types.name(i)));
            }
        }
        let max = R::max_container_allocation(self, queue);
        let min = props.minimum_allocation;
        let step = props.increment_allocation;
        let mut out = ask;
        for i in 0..crate::lanes::MAX_RESOURCE_TYPES {
            let mut v = ask.get(i).max(min.get(i));
            let s = step.get(i);
            if s > 0 && v % s != 0 {
                v = (v / s).saturating_add(1).saturating_mul(s);
            }
            out.set(i, v.min(max.get(i).max(min.get(i))));
        }
        Ok(out)
    }

    fn kill(&mut self, app: AppId, user: Option<String>) -> Result<(), SchedError> {
        let Some(a) = self.apps.get(&app) else {
            return Err(SchedError::UnknownApp(app));
        };
        if let Some(user) = user {
            let groups = self.groups.get(&user).cloned().unwrap_or_default();
            let owner = a.user == user;
            if !owner
                && !self
                    .queues
                    .allows(a.queue, &user, &groups, |q| &q.acl_admin)
            {
                return Err(SchedError::KillRefused {
                    app,
                    reason: format!(
                        "user {user} is neither the owner of the application nor allowed by aclAdministerApps of queue {} or its parents",
                        self.queues.get(a.queue).name
                    ),
                    user,
                });
            }
        }
        self.remove_app(app, ContainerExit::Killed);
        Ok(())
    }

    /// Removes an application: kills its containers, drops its reservations, leaves its queue
    /// (the rules promote waiting apps).
    pub(crate) fn remove_app(&mut self, id: AppId, exit: ContainerExit) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let containers = self.container_ids(app.running, Owner::App);
        let reserved: Vec<NodeId> = app.reservations.iter().copied().collect();
        for c in containers {
            self.complete_container(c, exit, None);
        }
        for n in reserved {
            self.unreserve_node(n);
        }
        R::leave(self, id);
        self.detach_app(id);
        if let Some(app) = self.apps.remove(&id) {
            self.refresh_queue_path(app.queue);
        }
    }

    pub(crate) fn add_ask(&mut self, id: AppId, ask: ContainerAsk) -> Result<(), SchedError> {
        let Some(app) = self.apps.get(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let size = inward(ask.resources)
            .and_then(|resources| self.normalize(app.queue, resources))
            .map_err(|reason| SchedError::InvalidAsk { app: id, reason })?;
        let mut racks: Vec<(String, bool)> = ask.racks.iter().map(|r| (r.clone(), true)).collect();
        for host in &ask.hosts {
            if let Some(node) = self.hosts.get(host).and_then(|n| self.nodes.get(n)) {
                if !ask.racks.contains(&node.rack) {
                    racks.push((node.rack.clone(), ask.relax_locality));
                }
            }
        }
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let key = app.key_for(ask.priority, size);
        let req = app.requests.get_or_insert_with(key, || Request::new(size));
        let before = req.any.count;
        req.any.count = before.saturating_add(ask.count);
        req.tags.add(before, req.any.count - before, ask.tag);
        req.any.relax_locality = ask.relax_locality;
        if !racks.is_empty() || !ask.hosts.is_empty() {
            let locations = req.locations_mut();
            for (rack, relax) in racks {
                let e = locations.racks.entry(rack).or_insert(LocationAsk {
                    count: 0,
                    relax_locality: relax,
                });
                e.count = e.count.saturating_add(ask.count);
                e.relax_locality = relax;
            }
            for host in &ask.hosts {
                let e = locations.hosts.entry(host.clone()).or_insert(LocationAsk {
                    count: 0,
                    relax_locality: true,
                });
                e.count = e.count.saturating_add(ask.count);
            }
        }
        self.refresh_app(id);
        Ok(())
    }

    fn cancel_asks(
        &mut self,
        id: AppId,
        priority: Option<i32>,
        count: Option<u32>,
    ) -> Result<(), SchedError> {
        let Some(app) = self.apps.get_mut(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let mut left = count.unwrap_or(u32::MAX);
        for (key, req) in app.requests.iter_mut() {
            if priority.is_some_and(|p| p != key.0) {
                continue;
            }
            let take = left.min(req.any.count);
            req.any.count -= take;
            req.tags.cancel_newest(take);
            left -= take;
            req.cap_locations(req.any.count);
        }
        app.requests
            .retain(|_, r| r.any.count > 0 || r.allowed.is_some());
        self.refresh_app(id);
        Ok(())
    }

    /// Why the app waits, if it is pending (not runnable) and the rules say.
    pub(crate) fn waiting_reason(&self, app: AppId) -> Option<String> {
        let a = self.apps.get(&app)?;
        if a.runnable {
            return None;
        }
        R::waiting_reason(self, a)
    }

    /// Calls `visit` for every leaf queue with its current figures.
    pub(crate) fn visit_leaf_queues(&self, mut visit: impl FnMut(LeafQueueStats<'_>)) {
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            if q.is_leaf {
                let report = R::queue_report(self, q);
                visit(LeafQueueStats {
                    name: &q.name,
                    fair_share: outward(report.fair_share),
                    app_usage_basis: outward(R::app_usage_basis(&report)),
                    usage: outward(q.usage),
                    demand: outward(q.demand),
                    max_resources: outward(q.max_share),
                    running_apps: q.runnable_apps.len(),
                    pool: self.pools.as_ref().map_or("", |p| p.name(q.pool)),
                });
            }
        }
    }

    /// Each pool's nodes, capacity and usage (empty without pools).
    pub(crate) fn pool_stats(&self) -> Vec<PoolStats> {
        let Some(pools) = &self.pools else {
            return Vec::new();
        };
        // Pending demand per pool: its leaves' demand (as of the last update) beyond usage.
        let mut pending = vec![Resource::ZERO; pools.capacity.len()];
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            if let (true, Some(p)) = (q.is_leaf, pending.get_mut(usize::from(q.pool))) {
                *p = p.saturating_add(q.demand.saturating_sub(q.usage).clamp_non_negative());
            }
        }
        (0..pools.capacity.len())
            .map(|i| {
                let pool = i as u16;
                PoolStats {
                    name: pools.name(pool).to_string(),
                    nodes: pools.nodes.get(i).copied().unwrap_or(0),
                    capacity: outward(pools.capacity.get(i).copied().unwrap_or(Resource::ZERO)),
                    used: outward(pools.used.get(i).copied().unwrap_or(Resource::ZERO)),
                    pending: outward(pending.get(i).copied().unwrap_or(Resource::ZERO)),
                    foreign_used: outward(
                        pools.foreign_used.get(i).copied().unwrap_or(Resource::ZERO),
                    ),
                }
            })
            .collect()
    }

    /// See [`crate::Scheduler::node_pool`].
    pub(crate) fn node_pool_name(&self, node: NodeId) -> Option<&str> {
        let pools = self.pools.as_ref()?;
        Some(pools.name(self.nodes.get(&node)?.pool))
    }

    /// See [`crate::Scheduler::queue_pool`].
    pub(crate) fn queue_pool_name(&self, queue: &str) -> Option<&str> {
        let pools = self.pools.as_ref()?;
        let id = self.queues.lookup(queue)?;
        Some(pools.name(self.queues.get(id).pool))
    }

    /// See [`crate::Scheduler::foreign_containers`].
    pub(crate) fn foreign_containers(&self) -> usize {
        if self.pools.is_none() {
            return 0;
        }
        self.nodes
            .values()
            .flat_map(|n| self.container_ids(n.running, Owner::Node))
            .filter(|c| self.containers.get(c).is_some_and(|c| c.foreign))
            .count()
    }

    /// The update's demand and shares for a report at `now`, without starvation.
    pub(crate) fn update_shares(&mut self, now: Time) {
        R::update_shares(self, now);
    }

    /// A read-only picture of the state (report-only figures are brought up to date first).
    pub(crate) fn snapshot(&mut self) -> Snapshot {
        let mut snapshot = self.queue_snapshot();
        snapshot.apps = self
            .apps
            .values()
            .map(|a| AppSnapshot {
                app: a.id,
                queue: self.queues.get(a.queue).name.clone(),
                user: a.user.clone(),
                runnable: a.runnable,
                usage: outward(a.usage),
                demand: outward(a.demand),
                fair_share: outward(R::app_fair_share(a)),
                running_containers: a.running.len(),
                pending_containers: a.outstanding_containers(),
                am_running: a.am_running,
                starvation: R::app_starvation(self, a),
            })
            .collect();
        snapshot.nodes = self
            .nodes
            .values()
            .map(|n| NodeSnapshot {
                node: n.id,
                host: n.host.clone(),
                rack: n.rack.clone(),
                capacity: outward(n.capability),
                used: outward(n.allocated),
                reserved: n.reservation.as_ref().map(|r| (r.app, outward(r.size))),
            })
            .collect();
        snapshot
    }

    /// [`Engine::snapshot`] without its per-app and per-node lists (left empty): the queues
    /// and the cluster's totals.
    pub(crate) fn queue_snapshot(&mut self) -> Snapshot {
        R::refresh_reports(self);
        let mut queues = Vec::with_capacity(self.queues.len());
        self.snapshot_queue(ROOT, &mut queues);
        Snapshot {
            cluster_capacity: outward(self.cluster),
            cluster_used: outward(self.cluster_used),
            cluster_pending: self.pending_summary().pending,
            queues,
            apps: Vec::new(),
            nodes: Vec::new(),
        }
    }

    /// See [`crate::Scheduler::pending_summary`].
    pub(crate) fn pending_summary(&self) -> PendingSummary {
        let mut summary = PendingSummary::default();
        let (mut pending, mut reserved) = (Resource::ZERO, Resource::ZERO);
        for a in self.apps.values() {
            pending = pending.saturating_add(a.outstanding());
            summary.pending_containers += a.outstanding_containers();
        }
        for n in self.nodes.values() {
            if let Some(r) = &n.reservation {
                summary.reserved_nodes += 1;
                reserved = reserved.saturating_add(r.size);
            }
        }
        summary.pending = outward(pending);
        summary.reserved = outward(reserved);
        summary
    }

    fn snapshot_queue(&self, id: QueueId, out: &mut Vec<QueueSnapshot>) {
        let q = self.queues.get(id);
        let (running, pending) = self.subtree_app_counts(id);
        let report = R::queue_report(self, q);
        out.push(QueueSnapshot {
            name: q.name.clone(),
            leaf: q.is_leaf,
            policy: report.policy,
            weight: report.weight,
            fair_share: outward(report.fair_share),
            steady_fair_share: outward(report.steady_fair_share),
            usage: outward(q.usage),
            demand: outward(q.demand),
            min_resources: outward(report.min_share),
            max_resources: outward(q.max_share),
            am_usage: outward(q.am_usage),
            running_apps: running,
            pending_apps: pending,
            configured: q.configured,
            max_container_allocation: outward(R::max_container_allocation(self, id)),
            starvation: report.starvation,
            preempted_containers: report.preempted_containers,
        });
        let mut children: Vec<QueueId> = q.children.iter().copied().collect();
        children.sort_by(|a, b| self.queues.get(*a).name.cmp(&self.queues.get(*b).name));
        for c in children {
            self.snapshot_queue(c, out);
        }
    }

    fn subtree_app_counts(&self, id: QueueId) -> (usize, usize) {
        let q = self.queues.get(id);
        let mut counts = (q.runnable_apps.len(), q.non_runnable_apps.len());
        for c in &q.children {
            let (r, p) = self.subtree_app_counts(*c);
            counts.0 += r;
            counts.1 += p;
        }
        counts
    }
}
