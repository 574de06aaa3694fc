//! The ledger: the only code that changes usage and allocations (apps, queues up the path,
//! nodes, the cluster), reservations and the running lists. Every change of usage re-keys the
//! app and its queue path in the candidate sets in the same pass up the tree, so no caller has
//! to remember a refresh.

use crate::lanes::outward;
use crate::lanes::Resource;
use weft_types::{AppId, ContainerId, Locality, NodeId};

use crate::api::{ContainerExit, Decision, ExitStatus};
use crate::engine::{Engine, WalkMode};
use crate::objects::app::SchedulerKey;
use crate::objects::containers::{Link, Owner};
use crate::objects::node::{Container, Reservation};
use crate::queues::QueueId;
use crate::rules::Rules;

impl<R: Rules> Engine<R> {
    /// Allocates one container of the request under `key` on the node (the walk checked that
    /// it fits): usage on the app, its path, the node and the cluster; the app and its path
    /// re-keyed; `Decision::Allocated` queued.
    pub(crate) fn allocate(
        &mut self,
        app_id: AppId,
        key: SchedulerKey,
        node_id: NodeId,
        locality: Locality,
    ) {
        let (Some(app_slot), Some(node_slot)) =
            (self.apps.slot_of(&app_id), self.nodes.slot_of(&node_id))
        else {
            return;
        };
        let (Some(n), Some(app)) = (self.nodes.at(node_slot), self.apps.at_mut(app_slot)) else {
            return;
        };
        let Some(req) = app.requests.get_mut(&key) else {
            return;
        };
        let size = req.size;
        if let Some(allowed) = req.allowed {
            if locality < allowed {
                req.allowed = Some(locality);
            }
        }
        let tag = req.take_one(&n.host, &n.rack, locality);
        // Only a request that ran out changes which ask sizes the app has outstanding.
        let emptied = req.any.count == 0;
        let id = ContainerId(self.next_container);
        self.next_container += 1;
        self.allocations += 1;
        let am = app.waiting_for_am();
        app.usage = app.usage.saturating_add(size);
        if emptied {
            app.refresh_outstanding();
        } else {
            app.took_one(size);
        }
        let leaf = app.queue;
        if am {
            app.am_resource = Some(size);
            app.am_running = true;
            app.am_container = Some(id);
            // Only a runnable app's AM counts (as for recovered AMs and `release_am_usage`):
            // a reservation can still turn into an AM for an app a Capacity move left pending.
            if app.runnable {
                let q = self.queues.get_mut(leaf);
                q.am_usage = q.am_usage.saturating_add(size);
            }
        }
        if let Some(n) = self.nodes.at_mut(node_slot) {
            n.allocated = n.allocated.saturating_add(size);
            if let Some(pools) = &mut self.pools {
                let u = &mut pools.used[usize::from(n.pool)];
                *u = u.saturating_add(size);
            }
        }
        self.cluster_used = self.cluster_used.saturating_add(size);
        self.add_container(Container {
            id,
            app_slot,
            node_slot,
            size,
            priority: key.0,
            foreign: false,
            by_app: Link::default(),
            by_node: Link::default(),
        });
        self.charge_path(app_slot, leaf, size, true, emptied);
        self.decisions.push_back(Decision::Allocated {
            app: app_id,
            container: id,
            node: node_id,
            resources: outward(size),
            locality,
            am,
            priority: key.0,
            tag,
        });
    }

    /// Charges a container that was already running before a driver restart (the caller
    /// checked that the app, the node and the id are valid and that it fits): the same usage
    /// as [`Engine::allocate`], no request taken and no decision queued. A recovered AM
    /// container marks the app's AM as running (AM usage counts only in a runnable app, as the
    /// rules' `leave` releases it), and an AM ask still outstanding is withdrawn (the AM it
    /// asked for is this one).
    pub(crate) fn charge_recovered(
        &mut self,
        id: ContainerId,
        app_slot: u32,
        node_slot: u32,
        size: Resource,
        priority: i32,
        am: bool,
    ) {
        let Some(app) = self.apps.at_mut(app_slot) else {
            return;
        };
        let mut asks_changed = false;
        if am {
            if let Some(asked) = app.am_resource.filter(|_| !app.am_running) {
                let key = app.key_for(0, asked);
                if let Some(req) = app.requests.get_mut(&key) {
                    if req.any.count > 0 {
                        req.any.count -= 1;
                        req.tags.take_oldest();
                        asks_changed = true;
                    }
                }
                app.requests
                    .retain(|_, r| r.any.count > 0 || r.allowed.is_some());
            }
            app.am_resource = Some(size);
            app.am_running = true;
            app.am_container = Some(id);
        }
        app.usage = app.usage.saturating_add(size);
        if asks_changed {
            app.refresh_outstanding();
        }
        let (leaf, runnable) = (app.queue, app.runnable);
        if am && runnable {
            let q = self.queues.get_mut(leaf);
            q.am_usage = q.am_usage.saturating_add(size);
        }
        if let Some(n) = self.nodes.at_mut(node_slot) {
            n.allocated = n.allocated.saturating_add(size);
            if let Some(pools) = &mut self.pools {
                let u = &mut pools.used[usize::from(n.pool)];
                *u = u.saturating_add(size);
            }
        }
        self.cluster_used = self.cluster_used.saturating_add(size);
        self.refresh_root_available();
        self.next_container = self.next_container.max(id.0.saturating_add(1));
        let node_pool = self.nodes.at(node_slot).map(|n| n.pool);
        let foreign = self.pools.is_some() && node_pool != Some(self.queues.get(leaf).pool);
        if let (true, Some(pools), Some(pool)) = (foreign, &mut self.pools, node_pool) {
            pools.count_foreign(pool, size, true);
        }
        self.add_container(Container {
            id,
            app_slot,
            node_slot,
            size,
            priority,
            foreign,
            by_app: Link::default(),
            by_node: Link::default(),
        });
        self.charge_path(app_slot, leaf, size, true, asks_changed);
    }

    /// The app's AM stops counting against its leaf's AM usage (its attempt ended; the app
    /// stays): the inverse of what `allocate` and `charge_recovered` charged for it.
    pub(crate) fn release_am_usage(&mut self, app: AppId) {
        let Some(a) = self.apps.get_mut(&app) else {
            return;
        };
        let am = a.am_resource.filter(|_| a.am_running && a.runnable);
        a.am_running = false;
        let leaf = a.queue;
        if let Some(am) = am {
            let q = self.queues.get_mut(leaf);
            q.am_usage = q.am_usage.saturating_sub(am);
        }
    }

    /// A container ends: usage drops on its node, the cluster, its app and the app's path.
    /// `status` is the driver's, handed back in the decision.
    pub(crate) fn complete_container(
        &mut self,
        id: ContainerId,
        exit: ContainerExit,
        status: Option<ExitStatus>,
    ) {
        let Some(c) = self.take_container(id) else {
            return;
        };
        R::container_ended(self, &c);
        if let Some(node) = self.nodes.at_mut(c.node_slot) {
            node.allocated = node.allocated.saturating_sub(c.size);
            if let Some(pools) = &mut self.pools {
                pools.release(node.pool, c.size, c.foreign);
            }
        }
        self.cluster_used = self.cluster_used.saturating_sub(c.size);
        self.refresh_root_available();
        let Some(app) = self.apps.at_mut(c.app_slot) else {
            return;
        };
        app.usage = app.usage.saturating_sub(c.size);
        let (app_id, leaf) = (app.id, app.queue);
        self.apps.remember(app_id, c.app_slot);
        self.charge_path(c.app_slot, leaf, c.size, false, false);
        self.decisions.push_back(Decision::Completed {
            app: app_id,
            container: id,
            exit,
            status,
        });
    }

    /// After the app in `app_slot` (of `leaf`) changed its usage by `amount`: the same change on
    /// every queue from `leaf` to the root, and, on the fast path, the app and each of those
    /// queues re-keyed as the pass goes up (`asks_changed`: the app's asks changed too).
    fn charge_path(
        &mut self,
        app_slot: u32,
        leaf: QueueId,
        amount: Resource,
        add: bool,
        asks_changed: bool,
    ) {
        R::usage_charged(self, app_slot, amount, add, asks_changed);
        let rekey = !self.order_dirty && self.walk == WalkMode::Fast;
        if rekey {
            self.rekey_app_at(app_slot, asks_changed);
        }
        let mut cur = Some(leaf);
        while let Some(q) = cur {
            let queue = self.queues.get_mut(q);
            queue.usage = if add {
                queue.usage.saturating_add(amount)
            } else {
                queue.usage.saturating_sub(amount)
            };
            cur = queue.parent;
            if rekey {
                self.rekey_queue(q);
            }
        }
    }

    /// Adds (or subtracts) `amount` to the usage of `leaf` and all its ancestors, without
    /// re-keying: for a move, which re-keys both paths once the app is in its new leaf.
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

    /// Hadoop refreshes the root queue's available resources after every heartbeat and every
    /// completion (not inside the heartbeat loop); the AM limit reads it (spec §8).
    pub(crate) fn refresh_root_available(&mut self) {
        self.root_available = self.cluster.saturating_sub(self.cluster_used);
        if let Some(pools) = &mut self.pools {
            pools.refresh_available();
        }
    }

    /// Reserves `node` for the app's ask under `key`.
    pub(crate) fn reserve(&mut self, app: AppId, key: SchedulerKey, node: NodeId, size: Resource) {
        let Some(n) = self.nodes.get_mut(&node) else {
            return;
        };
        let fresh = n.reservation.is_none();
        n.reservation = Some(Reservation { app, key, size });
        if let Some(a) = self.apps.get_mut(&app) {
            a.reservations.insert(node);
        }
        if fresh {
            self.decisions.push_back(Decision::Reserved {
                app,
                node,
                resources: outward(size),
            });
            R::reservation_changed(self, app, size, true);
        }
    }

    /// Drops the reservation held on `node`, if any.
    pub(crate) fn unreserve_node(&mut self, node: NodeId) {
        let Some(n) = self.nodes.get_mut(&node) else {
            return;
        };
        if let Some(r) = n.reservation.take() {
            if let Some(a) = self.apps.get_mut(&r.app) {
                a.reservations.remove(&node);
            }
            R::reservation_changed(self, r.app, r.size, false);
        }
    }

    /// Repairs drift: recomputes every figure the scheduler maintains from what it holds (its
    /// running containers, its apps' requests and the queues' app lists): the usage of apps,
    /// nodes, queues and the cluster, the runnable counts, the cached outstanding asks, the
    /// max-share path flags, and the fast path's order (rebuilt before the next heartbeat, as
    /// after a reload). What it cannot recompute (an app listed by the wrong leaf, a node over
    /// its capacity, ask tags that disagree with their request) `verify` keeps reporting.
    pub(crate) fn rebuild_derived(&mut self) {
        let app_slots: Vec<u32> = self
            .apps
            .values()
            .filter_map(|a| self.apps.slot_of(&a.id))
            .collect();
        for slot in app_slots {
            let Some(list) = self.apps.at(slot).map(|a| a.running) else {
                continue;
            };
            let usage = self.walk_list(list, Owner::App, slot, |_| {}).total;
            if let Some(a) = self.apps.at_mut(slot) {
                a.usage = usage;
                a.refresh_outstanding();
                a.threshold_ask = None;
            }
        }
        let mut used = Resource::ZERO;
        if let Some(pools) = &mut self.pools {
            pools.used.fill(Resource::ZERO);
        }
        let node_ids: Vec<_> = self.nodes.values().map(|n| n.id).collect();
        for id in node_ids {
            let Some(slot) = self.nodes.slot_of(&id) else {
                continue;
            };
            let Some(list) = self.nodes.at(slot).map(|n| n.running) else {
                continue;
            };
            let allocated = self.walk_list(list, Owner::Node, slot, |_| {}).total;
            if let Some(n) = self.nodes.at_mut(slot) {
                n.allocated = allocated;
                if let Some(pools) = &mut self.pools {
                    let u = &mut pools.used[usize::from(n.pool)];
                    *u = u.saturating_add(allocated);
                }
            }
            used = used.saturating_add(allocated);
        }
        self.cluster_used = used;
        self.refresh_root_available();
        self.refresh_foreign();
        let queue_ids: Vec<QueueId> = self.queues.ids().collect();
        for id in queue_ids {
            let usage = self.recursive_usage(id);
            let runnable = self.recursive_runnable(id);
            let q = self.queues.get_mut(id);
            q.usage = usage;
            q.runnable_count = runnable;
        }
        self.queues.refresh_path_bounds();
        R::rebuild_derived(self);
        self.order_dirty = true;
    }
}
