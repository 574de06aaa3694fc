//! One app on one node (spec §6.4 from the leaf's queue check on, §6.6-§6.10): the leaf's
//! limit, the user limit, then the app's keys in priority order with Capacity's delay
//! scheduling, allocating, reserving, or allocating here while releasing a reservation of the
//! same key elsewhere (continue looking).
//!
//! Outcomes map onto the shared walk: allocated or reserved ends the walk; an app that is
//! skipped (user limit, locality, nothing fits) lets the leaf try its next app; a leaf at its
//! limit, or an app whose ask exceeds the leaf's headroom (`QUEUE_SKIPPED`), blocks the rest
//! of the leaf for this walk (`Assignment::QueueBlocked`), so smaller later asks never overtake.
//!
//! Reservations count in queue and user usage (spec §1.4). With continue looking, a queue or
//! user at its limit may still take an allocation that releases enough of the app's
//! reservations (the same key's, on another node) in the same step; without it, an app holding
//! as many reservations as it needs containers skips the key.
//!
//! Decisions: re-reservations are not counted, so `shouldAllocOrReserveNewContainer` is
//! `outstanding − reserved > 0` without its starvation term; a reserved node's reservation is
//! served by the shared walk (allocated once it fits, with no limit re-checked, as Hadoop's
//! commit of a reserved container), and the heartbeat then ends.

use crate::lanes::Resource;
use weft_types::{AppId, Locality, NodeId};

use crate::objects::app::SchedulerKey;
use crate::walk::Assignment;

use super::CapacityEngine;

/// What the leaf's checks hand the app's keys (Hadoop's `ResourceLimits` for the app).
struct Limits {
    /// The leaf's limit less its used resources (may be negative).
    headroom: Resource,
    /// The app's reservations (zero without continue looking).
    app_reserved: Resource,
    /// What an allocation must release for the user to stay within its limit.
    must_release: Resource,
    /// The path's room to its effective maximums (`LeafLimit::room_to_max`).
    room_to_max: Resource,
}

/// What one key produced (Hadoop's allocation states).
enum KeyOutcome {
    Done(Assignment),
    /// `PRIORITY_SKIPPED`: try the app's next key.
    NextKey,
    /// `APP_SKIPPED`: the app gets nothing on this node.
    SkipApp,
}

/// What `assignContainer` did at one locality level.
enum Tried {
    Done(Assignment),
    /// `LOCALITY_SKIPPED`.
    Skipped,
}

impl CapacityEngine {
    /// Serves `app` on `node` (the shared walk's leaf step for Capacity).
    pub(crate) fn cs_serve(&mut self, app: AppId, node: NodeId) -> Assignment {
        let calc = self.rules.calc;
        let step = self.properties.minimum_allocation;
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return Assignment::None;
        };
        // §6.1 step 2: a node without room for one minimum container takes nothing.
        if calc.available_containers(&n.unallocated(), &step) <= 0 {
            return Assignment::None;
        }
        let leaf = a.queue;
        let continue_looking = self.rules.file.globals.reservations_continue_look_all_nodes;
        let app_reserved = if continue_looking {
            self.app_reserved(a)
        } else {
            Resource::ZERO
        };
        let limit = self.leaf_limit_unreserving(leaf, app_reserved);
        if limit.refused {
            return Assignment::QueueBlocked;
        }
        let cluster = self.cluster;
        let Some((leaf_limit, used_user)) = self.user_figures(leaf, app) else {
            return Assignment::None;
        };
        let Some(user) = self.apps.get(&app).map(|a| a.user.as_str()) else {
            return Assignment::None;
        };
        let user_limit = self.user_limit_of(leaf, user, leaf_limit);
        // §6.6: soft by one container (strictly greater is refused); with continue looking a
        // user over it may go on if releasing the app's reservations brings it back under, and
        // the allocation must then release at least the excess.
        let mut must_release = Resource::ZERO;
        if calc.gt(&cluster, &used_user, &user_limit) {
            let after = used_user.saturating_sub(app_reserved);
            if !continue_looking || calc.gt(&cluster, &after, &user_limit) {
                return Assignment::None;
            }
            must_release = used_user.saturating_sub(user_limit);
        }
        let headroom = limit.limit.saturating_sub(limit.used);
        let limits = Limits {
            headroom,
            app_reserved,
            must_release,
            room_to_max: limit.room_to_max,
        };
        let mut previous: Option<SchedulerKey> = None;
        loop {
            let Some(a) = self.apps.get(&app) else {
                return Assignment::None;
            };
            let next = match previous {
                None => a.requests.first_key(),
                Some(p) => a.requests.key_after(&p),
            };
            let Some(key) = next else {
                return Assignment::None;
            };
            previous = Some(key);
            match self.serve_key(app, key, node, &limits) {
                KeyOutcome::Done(Assignment::QueueBlocked) => {
                    // §6.2 step 5: the leaf keeps its headroom from its later siblings for the
                    // rest of this walk.
                    self.block_headroom(leaf, headroom);
                    return Assignment::QueueBlocked;
                }
                KeyOutcome::Done(done) => {
                    // The walk ends with this assignment; the next starts afresh, and the
                    // leaf's users' figures changed.
                    if !self.rules.blocked_headroom.is_empty() {
                        self.rules.blocked_headroom.clear();
                    }
                    return done;
                }
                KeyOutcome::NextKey => continue,
                KeyOutcome::SkipApp => return Assignment::None,
            }
        }
    }

    /// Adds a blocked leaf's headroom (floored at none) to its parent's blocked headroom.
    fn block_headroom(&mut self, leaf: crate::queues::QueueId, headroom: Resource) {
        let Some(parent) = self.queues.get(leaf).parent else {
            return;
        };
        let add = headroom.clamp_non_negative();
        let entry = self
            .rules
            .blocked_headroom
            .entry(parent)
            .or_insert(Resource::ZERO);
        *entry = entry.saturating_add(add);
    }

    /// `allocate(key)` (spec §6.7 steps 1-11).
    fn serve_key(
        &mut self,
        app: AppId,
        key: SchedulerKey,
        node: NodeId,
        limits: &Limits,
    ) -> KeyOutcome {
        let calc = self.rules.calc;
        let continue_looking = self.rules.file.globals.reservations_continue_look_all_nodes;
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return KeyOutcome::SkipApp;
        };
        let Some(req) = a.requests.get(&key) else {
            return KeyOutcome::NextKey;
        };
        if req.any.count == 0 {
            return KeyOutcome::NextKey;
        }
        if !continue_looking && !self.should_take_new(app, key) {
            return KeyOutcome::NextKey;
        }
        // §6.7 step 5: with continue looking, the app's reservations count as room.
        if !calc.fits(
            &req.size,
            &limits.headroom.saturating_add(limits.app_reserved),
        ) {
            return KeyOutcome::Done(Assignment::QueueBlocked);
        }
        // What this allocation must release elsewhere: its excess over the leaf's headroom, or
        // the user's over its limit (`needUnreserve`).
        let over_headroom = req.size.saturating_sub(limits.headroom);
        let need = self
            .rules
            .calc
            .max(&self.cluster, over_headroom, limits.must_release);
        let host_asked = req.host_count(&n.host).is_some_and(|h| h.count > 0);
        let rack_ask = req.rack_count(&n.rack).filter(|r| r.count > 0);
        let any_relax = req.any.relax_locality;
        let only_any = !req.has_locations();
        if let Some(r) = self
            .apps
            .get_mut(&app)
            .and_then(|a| a.requests.get_mut(&key))
        {
            r.opportunities += 1;
        }
        if host_asked {
            if let Tried::Done(done) = self.try_at(
                app,
                key,
                node,
                Locality::NodeLocal,
                (need, limits.room_to_max),
            ) {
                return KeyOutcome::Done(done);
            }
        }
        if let Some(r) = rack_ask {
            if !r.relax_locality {
                self.undo_opportunity(app, key);
                return KeyOutcome::NextKey;
            }
            if self.may_assign_rack(app, key) {
                if let Tried::Done(done) = self.try_at(
                    app,
                    key,
                    node,
                    Locality::RackLocal,
                    (need, limits.room_to_max),
                ) {
                    return KeyOutcome::Done(done);
                }
            }
        }
        if !any_relax {
            self.undo_opportunity(app, key);
            return KeyOutcome::NextKey;
        }
        if only_any || self.may_assign_off_switch(app, key) {
            return match self.try_at(
                app,
                key,
                node,
                Locality::OffSwitch,
                (need, limits.room_to_max),
            ) {
                Tried::Done(done) => KeyOutcome::Done(done),
                Tried::Skipped => KeyOutcome::SkipApp,
            };
        }
        KeyOutcome::SkipApp
    }

    fn undo_opportunity(&mut self, app: AppId, key: SchedulerKey) {
        if let Some(r) = self
            .apps
            .get_mut(&app)
            .and_then(|a| a.requests.get_mut(&key))
        {
            r.opportunities = r.opportunities.saturating_sub(1);
        }
    }

    /// Missed opportunities of the key (this offer counted).
    fn missed(
        &self,
        app: AppId,
        key: SchedulerKey,
    ) -> Option<(f64, &crate::objects::app::Request)> {
        let req = self.apps.get(&app)?.requests.get(&key)?;
        Some((req.opportunities as f64, req))
    }

    /// §6.8 rack-local: more missed opportunities than `min(nodes, node-locality-delay)`
    /// (-1: no wait).
    fn may_assign_rack(&self, app: AppId, key: SchedulerKey) -> bool {
        let Some((missed, _)) = self.missed(app, key) else {
            return false;
        };
        let delay = f64::from(self.rules.file.globals.node_locality_delay);
        let nodes = self.nodes.len() as f64;
        missed > nodes.min(delay)
    }

    /// §6.8 off-switch: `missed > min(nodes, node-locality-delay + rack-locality-additional-delay)`
    /// when the additional delay is set, else `missed > min(nodes, C × min(max(L − 1, 0) / nodes, 1))`
    /// with C the key's outstanding containers and L its locations (hosts, racks and ANY).
    /// A node-locality-delay of -1 removes only the rack wait (spec §13.3: the code's reading).
    fn may_assign_off_switch(&self, app: AppId, key: SchedulerKey) -> bool {
        let Some((missed, req)) = self.missed(app, key) else {
            return false;
        };
        let nodes = self.nodes.len() as f64;
        if nodes == 0.0 {
            return false;
        }
        let g = &self.rules.file.globals;
        if g.rack_locality_additional_delay > -1 {
            let delay =
                f64::from(g.node_locality_delay) + f64::from(g.rack_locality_additional_delay);
            return missed > nodes.min(delay);
        }
        let locations = (req.location_count() + 1) as f64;
        let containers = f64::from(req.any.count);
        let factor = ((locations - 1.0).max(0.0) / nodes).min(1.0);
        missed > nodes.min(containers * factor)
    }

    /// `shouldAllocOrReserveNewContainer` without re-reservations: the key still needs more
    /// containers than the app holds reservations for.
    fn should_take_new(&self, app: AppId, key: SchedulerKey) -> bool {
        let Some(a) = self.apps.get(&app) else {
            return false;
        };
        let outstanding = a.requests.get(&key).map_or(0, |r| i64::from(r.any.count));
        if a.reservations.is_empty() {
            return outstanding > 0;
        }
        outstanding - self.reserved_for(app, key).len() as i64 > 0
    }

    /// The nodes the app holds reservations on for `key`.
    fn reserved_for(&self, app: AppId, key: SchedulerKey) -> Vec<NodeId> {
        let Some(a) = self.apps.get(&app) else {
            return Vec::new();
        };
        a.reservations
            .iter()
            .copied()
            .filter(|n| {
                self.nodes
                    .get(n)
                    .and_then(|n| n.reservation.as_ref())
                    .is_some_and(|r| r.app == app && r.key == key)
            })
            .collect()
    }

    /// §6.11's check: on the fast walk from the path's room to its maximums, found by the
    /// leaf's limit walk (no usage changes between the two); the reference walk goes up the
    /// path again. The two agree unless a figure reaches the `i64` limits (the walk up
    /// saturates per queue, the room per path).
    fn fits_maximums(
        &self,
        leaf: crate::queues::QueueId,
        size: Resource,
        released: Resource,
        room_to_max: Resource,
    ) -> bool {
        match self.walk {
            crate::engine::WalkMode::Fast => self
                .rules
                .calc
                .fits(&size.saturating_sub(released), &room_to_max),
            crate::engine::WalkMode::Reference => self.within_maximums(leaf, size, released),
        }
    }

    /// §6.11's check for a fresh allocation or reservation: every queue from the leaf to the
    /// root stays within its effective maximum after adding `size` and releasing `released`
    /// (`rc.fitsIn`).
    fn within_maximums(
        &self,
        leaf: crate::queues::QueueId,
        size: Resource,
        released: Resource,
    ) -> bool {
        let calc = self.rules.calc;
        let mut next = Some(leaf);
        while let Some(q) = next {
            let queue = self.queues.get(q);
            let max = if queue.parent.is_none() {
                self.cluster
            } else {
                self.eff_max_of(queue)
            };
            let after = self.used(q).saturating_add(size).saturating_sub(released);
            if !calc.fits(&after, &max) {
                return false;
            }
            next = queue.parent;
        }
        true
    }

    /// `assignContainer(type)` (spec §6.7 step 10, §6.9, §6.10).
    fn try_at(
        &mut self,
        app: AppId,
        key: SchedulerKey,
        node: NodeId,
        locality: Locality,
        (need, room_to_max): (Resource, Resource),
    ) -> Tried {
        let calc = self.rules.calc;
        let (Some(a), Some(n)) = (self.apps.get(&app), self.nodes.get(&node)) else {
            return Tried::Skipped;
        };
        let Some(req) = a.requests.get(&key) else {
            return Tried::Skipped;
        };
        let size = req.size;
        let leaf = a.queue;
        if !calc.fits(&size, &n.capability) {
            return Tried::Skipped;
        }
        let room = calc.fits(&size, &n.unallocated());
        let should = self.should_take_new(app, key);
        let continue_looking = self.rules.file.globals.reservations_continue_look_all_nodes;
        let need_unreserve = continue_looking && calc.gt(&self.cluster, &need, &Resource::ZERO);
        if room {
            if !should || need_unreserve {
                if !continue_looking {
                    return Tried::Skipped;
                }
                // Continue looking: allocate here and, in the same step, release one of the
                // key's reservations on another node, at least as large as what must go.
                let other = self.reserved_for(app, key).into_iter().find_map(|n| {
                    let r = self.nodes.get(&n)?.reservation.as_ref()?;
                    (n != node && calc.fits(&need, &r.size)).then_some((n, r.size))
                });
                let Some((other, released)) = other else {
                    return Tried::Skipped;
                };
                if !self.fits_maximums(leaf, size, released, room_to_max) {
                    return Tried::Skipped;
                }
                self.unreserve_node(other);
            } else if !self.fits_maximums(leaf, size, Resource::ZERO, room_to_max) {
                return Tried::Skipped;
            }
            self.allocate(app, key, node, locality);
            self.after_allocation(app, key, locality);
            return Tried::Done(Assignment::Allocated(size));
        }
        if should && !need_unreserve && self.fits_maximums(leaf, size, Resource::ZERO, room_to_max)
        {
            self.reserve(app, key, node, size);
            return Tried::Done(Assignment::Reserved);
        }
        Tried::Skipped
    }

    /// §6.7 step 11 and the per-heartbeat off-switch count.
    fn after_allocation(&mut self, app: AppId, key: SchedulerKey, locality: Locality) {
        let full_reset = self.rules.file.globals.rack_locality_full_reset;
        let reset =
            locality == Locality::NodeLocal || (locality == Locality::RackLocal && full_reset);
        if reset {
            if let Some(r) = self
                .apps
                .get_mut(&app)
                .and_then(|a| a.requests.get_mut(&key))
            {
                r.opportunities = 0;
            }
        }
        if locality == Locality::OffSwitch {
            self.rules.offswitch_assigned += 1;
        }
    }
}
