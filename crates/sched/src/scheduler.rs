//! The scheduler state machine: event dispatch, application and node lifecycles, snapshots.
//!
//! Scheduling itself (the walk on a heartbeat) is in `assign`, the fast-path order in `order`,
//! the periodic update in `update`, maxRunningApps in `runnable`.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use weft_config::PlacementRule;
use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

use crate::api::*;
use crate::fair::placement::{self, QueueLookup};
use crate::fair::UserState;
use crate::objects::app::App;
use crate::objects::containers::Owner;
use crate::objects::node::{Container, Node};
use crate::objects::table::{IdMap, Table};
use crate::queues::{QueueId, QueueTree, ROOT};

/// How the heartbeat walk finds its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkMode {
    /// Incrementally maintained candidate sets and aggregates (the production path).
    Fast,
    /// The textbook walk: sort every level with the comparator, recompute usage by recursion.
    Reference,
}

/// Hadoop's Fair Scheduler as a deterministic state machine.
///
/// Driving contract: call [`Scheduler::handle`] with the current time and one event, then drain
/// [`Scheduler::poll_decision`] until it returns `None`. Time only comes in through `handle`;
/// the periodic [`Event::Update`] is the driver's job (every `update_interval_ms`).
pub struct Scheduler {
    pub(crate) config: Arc<SchedulerConfig>,
    pub(crate) groups: GroupMapping,
    pub(crate) queues: QueueTree,
    pub(crate) apps: Table<AppId, App>,
    pub(crate) nodes: Table<NodeId, Node>,
    pub(crate) hosts: BTreeMap<String, NodeId>,
    pub(crate) rack_sizes: BTreeMap<String, u32>,
    pub(crate) containers: IdMap<ContainerId, Container>,
    pub(crate) users: BTreeMap<String, UserState>,
    pub(crate) next_container: u64,
    pub(crate) cluster: Resource,
    pub(crate) cluster_used: Resource,
    /// Root queue metrics' available resources, refreshed on update and node changes (§2 step 3).
    pub(crate) root_available: Resource,
    pub(crate) decisions: VecDeque<Decision>,
    pub(crate) walk: WalkMode,
    /// The fast-path order must be rebuilt before the next walk.
    pub(crate) order_dirty: bool,
    /// Steady fair shares must be recomputed before they are next shown.
    pub(crate) steady_dirty: bool,
    pub(crate) last_queue_gc: Time,
    pub(crate) allocations: u64,
    /// Fast path: distinct outstanding ask sizes of candidate apps -> how many apps have them.
    pub(crate) pending_sizes: BTreeMap<[i64; weft_types::MAX_RESOURCE_TYPES], u32>,
    /// Reused buffer for re-indexing an app's sizes without allocating.
    pub(crate) scratch_sizes: Vec<[i64; weft_types::MAX_RESOURCE_TYPES]>,
    /// Reused buffer for a leaf's share inputs in the update.
    pub(crate) scratch_items: Vec<crate::fair::shares::ShareItem>,
    /// The update's reusable buffers: app slots, demand sums by leaf, leaves where an app's
    /// weight changed.
    pub(crate) scratch_slots: Vec<u32>,
    pub(crate) scratch_demands: Vec<Resource>,
    pub(crate) scratch_reweighted: Vec<bool>,
    /// The reservation threshold of the current configuration (read on every re-key).
    pub(crate) reservation_threshold: Resource,
    /// Twice the cluster fits in `Resource::UNBOUNDED`, so usage plus one container (each at
    /// most the cluster) can never exceed an unbounded max share.
    pub(crate) unbounded_never_binds: bool,
}

/// `incrementAllocation x reservation-threshold.increment-multiple` (spec §6.6).
fn reservation_threshold_of(config: &SchedulerConfig) -> Resource {
    let props = &config.properties;
    props
        .increment_allocation
        .mul_trunc(f64::from(props.reservation_threshold_increment_multiple))
}

impl Scheduler {
    /// A scheduler with the given configuration and user groups, and no nodes or apps.
    pub fn new(config: SchedulerConfig, groups: GroupMapping) -> Scheduler {
        let mut queues = QueueTree::new(&config.allocations);
        // Absolute max shares do not depend on the cluster, so node joins leave them alone
        // (`cluster_changed`); they are resolved here, and on every reload.
        queues.resolve_max_shares(Resource::ZERO);
        let reservation_threshold = reservation_threshold_of(&config);
        Scheduler {
            config: Arc::new(config),
            groups,
            queues,
            apps: Table::new(),
            nodes: Table::new(),
            hosts: BTreeMap::new(),
            rack_sizes: BTreeMap::new(),
            containers: IdMap::new(),
            users: BTreeMap::new(),
            next_container: 1,
            cluster: Resource::ZERO,
            cluster_used: Resource::ZERO,
            root_available: Resource::ZERO,
            decisions: VecDeque::new(),
            walk: WalkMode::Fast,
            order_dirty: true,
            steady_dirty: true,
            last_queue_gc: Time::ZERO,
            allocations: 0,
            pending_sizes: BTreeMap::new(),
            scratch_sizes: Vec::new(),
            scratch_items: Vec::new(),
            scratch_slots: Vec::new(),
            scratch_demands: Vec::new(),
            scratch_reweighted: Vec::new(),
            reservation_threshold,
            unbounded_never_binds: true,
        }
    }

    /// Chooses the walk (the reference walk exists for differential tests and benchmarks).
    pub fn set_walk_mode(&mut self, mode: WalkMode) {
        self.walk = mode;
        self.order_dirty = true;
    }

    /// The resource types in use.
    pub fn resource_types(&self) -> &ResourceTypes {
        &self.config.properties.resource_types
    }

    /// The current configuration.
    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// The full name of the queue an application is in.
    pub fn queue_name(&self, app: AppId) -> Option<&str> {
        self.apps
            .get(&app)
            .map(|a| self.queues.get(a.queue).name.as_str())
    }

    /// How many containers have been allocated since the start.
    pub fn allocation_count(&self) -> u64 {
        self.allocations
    }

    /// The next output, if any.
    pub fn poll_decision(&mut self) -> Option<Decision> {
        self.decisions.pop_front()
    }

    /// Applies one event at time `now`. An `Err` leaves the state exactly as it was.
    pub fn handle(&mut self, now: Time, event: Event) -> Result<(), SchedError> {
        match event {
            Event::NodeAdded {
                node,
                host,
                rack,
                capability,
            } => self.add_node(node, host, rack, capability),
            Event::NodeRemoved { node } => self.remove_node(node),
            Event::NodeHeartbeat { node } => {
                if !self.nodes.contains_key(&node) {
                    return Err(SchedError::UnknownNode(node));
                }
                self.heartbeat(node);
                Ok(())
            }
            Event::ContainerCompleted { container, exit } => {
                if !self.containers.contains_key(&container) {
                    return Err(SchedError::UnknownContainer(container));
                }
                self.complete_container(container, exit);
                Ok(())
            }
            Event::AppSubmitted {
                app,
                user,
                queue,
                am_resource,
            } => self.submit(now, app, user, queue, am_resource),
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
                self.complete_container(container, ContainerExit::Released);
                Ok(())
            }
            Event::Move { app, queue } => self.move_app(app, &queue),
            Event::Reload(config) => {
                self.reload(*config);
                Ok(())
            }
            Event::GroupsChanged(groups) => {
                self.groups = groups;
                Ok(())
            }
            Event::Update => {
                self.update(now);
                Ok(())
            }
        }
    }

    fn add_node(
        &mut self,
        id: NodeId,
        host: String,
        rack: String,
        capability: Resource,
    ) -> Result<(), SchedError> {
        if self.nodes.contains_key(&id) {
            return Err(SchedError::Duplicate(format!("node {id}")));
        }
        if self.hosts.contains_key(&host) {
            return Err(SchedError::Duplicate(format!("host {host}")));
        }
        self.hosts.insert(host.clone(), id);
        *self.rack_sizes.entry(rack.clone()).or_insert(0) += 1;
        self.nodes.insert(id, Node::new(id, host, rack, capability));
        self.cluster = self.cluster.saturating_add(capability);
        self.cluster_changed();
        Ok(())
    }

    fn remove_node(&mut self, id: NodeId) -> Result<(), SchedError> {
        let Some(node) = self.nodes.get(&id) else {
            return Err(SchedError::UnknownNode(id));
        };
        let containers = self.container_ids(node.running, Owner::Node);
        for c in containers {
            self.complete_container(c, ContainerExit::Lost);
        }
        self.unreserve_node(id);
        let Some(node) = self.nodes.remove(&id) else {
            return Err(SchedError::UnknownNode(id));
        };
        self.hosts.remove(&node.host);
        if let Some(n) = self.rack_sizes.get_mut(&node.rack) {
            *n -= 1;
            if *n == 0 {
                self.rack_sizes.remove(&node.rack);
            }
        }
        self.cluster = self.cluster.saturating_sub(node.capability);
        self.cluster_changed();
        Ok(())
    }

    /// Node set changed: max shares, steady shares, root metrics and (for drf) orders follow.
    fn cluster_changed(&mut self) {
        self.queues.resolve_relative_max_shares(self.cluster);
        self.unbounded_never_binds = self.cluster.saturating_mul(2).fits_in(&Resource::UNBOUNDED);
        self.root_available = self.cluster.saturating_sub(self.cluster_used);
        self.steady_dirty = true;
        self.order_dirty = true;
    }

    fn submit(
        &mut self,
        now: Time,
        id: AppId,
        user: String,
        requested: Option<String>,
        am_resource: Option<Resource>,
    ) -> Result<(), SchedError> {
        if self.apps.contains_key(&id) {
            return Err(SchedError::Duplicate(format!("application {id}")));
        }
        match self.place(id, &user, requested.as_deref(), am_resource) {
            Ok((queue, am)) => {
                let mut app = App::new(id, user, queue, now.as_millis(), am);
                if let Some(am) = am {
                    let key = app.key_for(0, am);
                    let mut req = crate::objects::app::Request::new(am);
                    req.any.count = 1;
                    app.requests.insert(key, req);
                }
                self.apps.insert(id, app);
                self.add_app_to_queue(id);
                let name = self.queues.get(queue).name.clone();
                self.decisions.push_back(Decision::Accepted {
                    app: id,
                    queue: name,
                });
                self.refresh_app(id);
                Ok(())
            }
            Err(reason) => {
                self.decisions
                    .push_back(Decision::Rejected { app: id, reason });
                Ok(())
            }
        }
    }

    /// Placement, queue creation, ACL and AM checks (spec §12.4, §13, §9.4).
    fn place(
        &mut self,
        id: AppId,
        user: &str,
        requested: Option<&str>,
        am: Option<Resource>,
    ) -> Result<(QueueId, Option<Resource>), String> {
        let groups = self.groups.get(user).cloned().unwrap_or_default();
        let props = &self.config.properties;
        let default_rules;
        let rules: &[PlacementRule] = match &self.config.allocations.placement_policy {
            Some(r) => r,
            None => {
                default_rules = PlacementRule::default_policy(
                    props.allow_undeclared_pools,
                    props.user_as_default_queue,
                );
                &default_rules
            }
        };
        let name = placement::place(rules, requested, user, &groups, &TreeLookup(&self.queues))
            .map_err(|e| e.to_string())?;
        let name = self.queues.plan_default(name);
        let config = Arc::clone(&self.config);
        let queue = self
            .queues
            .get_or_create_leaf(&name, &config.allocations, self.cluster)
            .map_err(|e| {
                format!("application {id} submitted by user {user} could not be placed: {e}")
            })?;
        // The queue may be new, whatever happens next.
        self.steady_dirty = true;
        if !self.queues.allows(queue, user, &groups, |q| &q.acl_submit)
            && !self.queues.allows(queue, user, &groups, |q| &q.acl_admin)
        {
            return Err(format!(
                "user {user} cannot submit applications to queue {name}: not allowed by aclSubmitApps or aclAdministerApps of the queue or its parents"
            ));
        }
        let am = match am {
            Some(r) => Some(
                self.normalize(queue, r)
                    .map_err(|e| format!("application {id} rejected: AM container {e}"))?,
            ),
            None => None,
        };
        Ok((queue, am))
    }

    /// Normalizes an ask (spec §9.4): at least the minimum, rounded up to the increment, at most
    /// the queue's maximum allocation. Refuses types the queue may never have.
    pub(crate) fn normalize(&self, queue: QueueId, ask: Resource) -> Result<Resource, String> {
        let props = &self.config.properties;
        let max_share = self.queues.get(queue).max_share;
        for i in 0..self.resource_types().len() {
            if ask.get(i) > 0 && max_share.get(i) == 0 {
                return Err(format!(
                    "asks for a non-zero amount of resource '{}' but queue {} has a zero maximum for it",
                    self.resource_types().name(i),
                    self.queues.get(queue).name
                ));
            }
            if ask.get(i) < 0 {
                return Err(format!(
                    "asks for a negative amount of '{}'",
                    self.resource_types().name(i)
                ));
            }
        }
        let max =
            self.queues
                .max_container_allocation(queue, props.maximum_allocation, self.cluster);
        let min = props.minimum_allocation;
        let step = props.increment_allocation;
        let mut out = ask;
        for i in 0..weft_types::MAX_RESOURCE_TYPES {
            let mut v = ask.get(i).max(min.get(i));
            let s = step.get(i);
            if s > 0 {
                let rounded = if v % s == 0 {
                    v
                } else {
                    (v / s).saturating_add(1)
                };
                v = if v % s == 0 {
                    v
                } else {
                    rounded.saturating_mul(s)
                };
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

    /// Removes an application: kills its containers, drops its reservations, leaves its queue,
    /// and promotes waiting apps (spec §17, §10).
    fn remove_app(&mut self, id: AppId, exit: ContainerExit) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let containers = self.container_ids(app.running, Owner::App);
        let reserved: Vec<NodeId> = app.reservations.iter().copied().collect();
        for c in containers {
            self.complete_container(c, exit);
        }
        for n in reserved {
            self.unreserve_node(n);
        }
        self.remove_app_from_queue(id);
        self.detach_app(id);
        if let Some(app) = self.apps.remove(&id) {
            self.refresh_queue_path(app.queue);
        }
    }

    /// A container ends: usage drops along the queue path, the node frees it.
    pub(crate) fn complete_container(&mut self, id: ContainerId, exit: ContainerExit) {
        let Some(c) = self.take_container(id) else {
            return;
        };
        if let Some(node) = self.nodes.at_mut(c.node_slot) {
            node.allocated = node.allocated.saturating_sub(c.size);
        }
        self.cluster_used = self.cluster_used.saturating_sub(c.size);
        self.refresh_root_available();
        let Some(app) = self.apps.at_mut(c.app_slot) else {
            return;
        };
        app.usage = app.usage.saturating_sub(c.size);
        let (app_id, leaf) = (app.id, app.queue);
        self.apps.remember(app_id, c.app_slot);
        self.add_queue_usage(leaf, c.size, false);
        self.refresh_app_usage(app_id);
        self.decisions.push_back(Decision::Completed {
            app: app_id,
            container: id,
            exit,
        });
    }

    /// Adds (or subtracts) `amount` to the usage of `leaf` and all its ancestors.
    pub(crate) fn add_queue_usage(&mut self, leaf: QueueId, amount: Resource, add: bool) {
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queues.get_mut(q);
            queue.usage = if add {
                queue.usage.saturating_add(amount)
            } else {
                queue.usage.saturating_sub(amount)
            };
            cur = queue.parent;
        }
    }

    fn add_ask(&mut self, id: AppId, ask: ContainerAsk) -> Result<(), SchedError> {
        let Some(app) = self.apps.get(&id) else {
            return Err(SchedError::UnknownApp(id));
        };
        let size = self
            .normalize(app.queue, ask.resources)
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
        let req = app
            .requests
            .get_or_insert_with(key, || crate::objects::app::Request::new(size));
        req.any.count = req.any.count.saturating_add(ask.count);
        req.any.relax_locality = ask.relax_locality;
        for (rack, relax) in racks {
            let e = req
                .racks
                .entry(rack)
                .or_insert(crate::objects::app::LocationAsk {
                    count: 0,
                    relax_locality: relax,
                });
            e.count = e.count.saturating_add(ask.count);
            e.relax_locality = relax;
        }
        for host in &ask.hosts {
            let e = req
                .hosts
                .entry(host.clone())
                .or_insert(crate::objects::app::LocationAsk {
                    count: 0,
                    relax_locality: true,
                });
            e.count = e.count.saturating_add(ask.count);
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
            left -= take;
            let cap = req.any.count;
            for a in req.racks.values_mut().chain(req.hosts.values_mut()) {
                a.count = a.count.min(cap);
            }
            req.racks.retain(|_, a| a.count > 0);
            req.hosts.retain(|_, a| a.count > 0);
        }
        app.requests
            .retain(|_, r| r.any.count > 0 || r.allowed.is_some());
        self.refresh_app(id);
        Ok(())
    }

    fn reload(&mut self, config: SchedulerConfig) {
        self.reservation_threshold = reservation_threshold_of(&config);
        self.config = Arc::new(config);
        let config = Arc::clone(&self.config);
        self.queues.apply_config(&config.allocations);
        self.queues.resolve_max_shares(self.cluster);
        self.update_runnability_on_reload();
        self.steady_dirty = true;
        self.order_dirty = true;
    }

    /// Sum of node capabilities.
    pub fn cluster_capacity(&self) -> Resource {
        self.cluster
    }

    /// Sum of allocated containers.
    pub fn cluster_used(&self) -> Resource {
        self.cluster_used
    }

    /// Calls `visit` for every leaf queue with its current figures: a cheap alternative to
    /// [`Scheduler::snapshot`] for drivers that sample often (no strings are cloned).
    pub fn visit_leaf_queues(&self, mut visit: impl FnMut(LeafQueueStats<'_>)) {
        for id in self.queues.ids() {
            let q = self.queues.get(id);
            if q.is_leaf {
                visit(LeafQueueStats {
                    name: &q.name,
                    fair_share: q.fair_share,
                    usage: q.usage,
                    demand: q.demand,
                    max_resources: q.max_share,
                    running_apps: q.runnable_apps.len(),
                });
            }
        }
    }

    /// A read-only picture of the state (steady shares are brought up to date first).
    pub fn snapshot(&mut self) -> Snapshot {
        if self.steady_dirty {
            self.compute_steady_shares();
        }
        let mut queues = Vec::with_capacity(self.queues.len());
        self.snapshot_queue(ROOT, &mut queues);
        let apps = self
            .apps
            .values()
            .map(|a| AppSnapshot {
                app: a.id,
                queue: self.queues.get(a.queue).name.clone(),
                user: a.user.clone(),
                runnable: a.runnable,
                usage: a.usage,
                demand: a.demand,
                fair_share: a.fair_share,
                running_containers: a.running.len(),
                pending_containers: a.outstanding_containers(),
                am_running: a.am_running,
            })
            .collect();
        let nodes = self
            .nodes
            .values()
            .map(|n| NodeSnapshot {
                node: n.id,
                host: n.host.clone(),
                rack: n.rack.clone(),
                capacity: n.capability,
                used: n.allocated,
                reserved: n.reservation.as_ref().map(|r| (r.app, r.size)),
            })
            .collect();
        let pending = self
            .apps
            .values()
            .fold(Resource::ZERO, |acc, a| acc.saturating_add(a.outstanding()));
        Snapshot {
            cluster_capacity: self.cluster,
            cluster_used: self.cluster_used,
            cluster_pending: pending,
            queues,
            apps,
            nodes,
        }
    }

    fn snapshot_queue(&self, id: QueueId, out: &mut Vec<QueueSnapshot>) {
        let q = self.queues.get(id);
        let (running, pending) = self.subtree_app_counts(id);
        out.push(QueueSnapshot {
            name: q.name.clone(),
            leaf: q.is_leaf,
            policy: q.policy.name(),
            weight: q.weight,
            fair_share: q.fair_share,
            steady_fair_share: q.steady_fair_share,
            usage: q.usage,
            demand: q.demand,
            min_resources: q.min_share,
            max_resources: q.max_share,
            am_usage: q.am_usage,
            running_apps: running,
            pending_apps: pending,
            configured: q.configured,
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

/// The placement rules' view of the queue tree.
pub(crate) struct TreeLookup<'a>(pub(crate) &'a QueueTree);

impl QueueLookup for TreeLookup<'_> {
    fn exists(&self, full_name: &str) -> bool {
        self.0.lookup(full_name).is_some()
    }
    fn is_configured(&self, full_name: &str) -> bool {
        self.0
            .lookup(full_name)
            .is_some_and(|q| self.0.get(q).configured)
    }
    fn is_leaf(&self, full_name: &str) -> Option<bool> {
        self.0.lookup(full_name).map(|q| self.0.get(q).is_leaf)
    }
}
