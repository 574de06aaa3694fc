//! The fast path's order: every queue keeps its schedulable children (or apps) in a set keyed by
//! its policy's sort key, and an allocation re-keys only the path it touched.
//!
//! Invariant (checked by `verify`): an app is in its leaf's set iff it is runnable, has pending
//! demand and has outstanding asks; a queue is in its parent's set iff its own set is non-empty;
//! every key equals `sort_key` of the member's current view. Members are table slots: a queue's
//! id, an app's slot in the app table (keys end with a unique tie-break, so members never
//! decide an order).
//!
//! Members that could take a reservation are flagged, and each queue counts its flagged
//! members: apps starved for reservation (spec §6.4 step 2a) with an outstanding ask at or
//! above the reservation threshold (§6.6), and queues with a non-zero count. (A separately
//! sorted subset cost as much upkeep as the candidate sets themselves.) With the pending-size
//! index (the distinct sizes of every candidate's outstanding asks) they let a heartbeat on a
//! node that no outstanding ask fits visit only the apps that could reserve:
//! every other app would return "none" without changing anything, so skipping it changes no
//! decision (the full walk's only other effect, counting scheduling opportunities, is off when
//! delay scheduling is off, which is the only time the shortcut is taken).

pub(crate) mod key;
pub(crate) mod ordset;

use crate::lanes::{Resource, MAX_RESOURCE_TYPES};
use weft_types::AppId;

use crate::engine::{Engine, WalkMode};
use crate::order::key::SortKey;
use crate::order::ordset::OrderedSet;
use crate::queues::{QueueId, ROOT};
use crate::rules::{AppOf, QueueOf, Rules};

impl<R: Rules> Engine<R> {
    /// The app's key in its leaf's candidates, or `None` when it is not a candidate.
    #[inline]
    fn app_key(&self, app: &AppOf<R>) -> Option<SortKey> {
        if !R::is_candidate(self, app) {
            return None;
        }
        Some(R::app_key(self, app))
    }

    /// The queue's key in its parent's candidates, or `None` (the root, or nothing to visit).
    #[inline]
    fn queue_key(&self, q: &QueueOf<R>) -> Option<SortKey> {
        let parent = q.parent?;
        if q.candidates.is_empty() {
            return None;
        }
        Some(R::queue_key(self, parent, q))
    }

    /// Whether a candidate app could take a reservation (the rules' conditions that depend on
    /// the app alone).
    pub(crate) fn app_reservable(&self, app: &AppOf<R>) -> bool {
        R::starved_for_reservation(self, app) && R::has_reservable_ask(self, app)
    }

    /// Re-keys an app after its asks or runnability changed, then its queue path. Also where
    /// the app's cached outstanding asks follow its asks: every change of asks outside the
    /// ledger ends here, on either walk.
    pub(crate) fn refresh_app(&mut self, id: AppId) {
        if let Some(app) = self.apps.get_mut(&id) {
            app.refresh_outstanding();
        }
        R::asks_changed(self, id);
        self.refresh_app_with(id, true);
    }

    fn refresh_app_with(&mut self, id: AppId, asks_changed: bool) {
        if self.order_dirty || self.walk != WalkMode::Fast {
            return;
        }
        if let Some(leaf) = self.rekey_app(id, asks_changed) {
            self.refresh_queue_path(leaf);
        }
    }

    /// After the periodic update has re-keyed the apps (demand, weights and fair shares moved,
    /// the queue tree did not): re-keys every queue in its parent's sets, deepest first.
    /// Cheaper than a rebuild because most keys do not change and unchanged entries stay put.
    pub(crate) fn rekey_queues(&mut self) {
        if self.order_dirty || self.walk != WalkMode::Fast {
            return;
        }
        let mut queues: Vec<(u32, QueueId)> = self
            .queues
            .ids()
            .map(|q| (self.queues.get(q).depth, q))
            .collect();
        queues.sort_unstable_by_key(|(depth, q)| (std::cmp::Reverse(*depth), q.0));
        for (_, q) in queues {
            self.rekey_queue(q);
        }
    }

    /// Re-keys one app in its leaf's sets and the size index (`asks_changed`: its asks may
    /// differ from when it was last indexed); returns its leaf.
    pub(crate) fn rekey_app(&mut self, id: AppId, asks_changed: bool) -> Option<QueueId> {
        let app_slot = self.apps.slot_of(&id)?;
        self.rekey_app_at(app_slot, asks_changed)
    }

    /// `rekey_app` for the app in `app_slot` of the app table.
    pub(crate) fn rekey_app_at(&mut self, app_slot: u32, asks_changed: bool) -> Option<QueueId> {
        let app = self.apps.at(app_slot)?;
        let id = app.id;
        let new = self.app_key(app);
        // Which asks reach the threshold changes only with the asks (or a move or a
        // reconfiguration, which forget it).
        let threshold_ask = match app.threshold_ask {
            Some(known) if !asks_changed => known,
            _ => R::has_reservable_ask(self, app),
        };
        let new_res = new.is_some() && threshold_ask && R::starved_for_reservation(self, app);
        let (slot, old_res, leaf) = (app.leaf_slot, app.reservable_in_leaf, app.queue);
        let q = self.queues.get_mut(leaf);
        let new_slot = move_entry(&mut q.candidates, slot, new.as_ref(), u64::from(app_slot));
        count_reservable(&mut q.reservable_members, old_res, new_res);
        if let Some(app) = self.apps.at_mut(app_slot) {
            app.leaf_slot = new_slot;
            app.reservable_in_leaf = new_res;
            app.threshold_ask = Some(threshold_ask);
        }
        if asks_changed || new.is_some() != slot.is_some() {
            self.reindex_sizes(id, new.is_some());
        }
        Some(leaf)
    }

    /// Takes an app out of its leaf's sets and the size index (before it leaves the leaf).
    pub(crate) fn detach_app(&mut self, id: AppId) {
        let Some(app) = self.apps.get_mut(&id) else {
            return;
        };
        let slot = app.leaf_slot.take();
        let reservable = std::mem::take(&mut app.reservable_in_leaf);
        let sizes = std::mem::take(&mut app.indexed_sizes);
        let q = self.queues.get_mut(app.queue);
        if let Some(s) = slot {
            q.candidates.remove(s);
        }
        count_reservable(&mut q.reservable_members, reservable, false);
        for s in sizes {
            self.unindex_size(s);
        }
    }

    /// Brings the app's entries in the pending-size index up to date.
    fn reindex_sizes(&mut self, id: AppId, candidate: bool) {
        let Some(app) = self.apps.get(&id) else {
            return;
        };
        let mut fresh = std::mem::take(&mut self.scratch_sizes);
        fresh.clear();
        if candidate {
            for r in app.requests.values().filter(|r| r.any.count > 0) {
                let v = *r.size.values();
                if !fresh.contains(&v) {
                    fresh.push(v);
                }
            }
            fresh.sort_unstable();
        }
        // Element by element: a `==` on these vectors is a `memcmp` call.
        let same = fresh.len() == app.indexed_sizes.len()
            && fresh
                .iter()
                .zip(&app.indexed_sizes)
                .all(|(a, b)| a.iter().zip(b).all(|(x, y)| x == y));
        if same {
            self.scratch_sizes = fresh;
            return;
        }
        let old = match self.apps.get_mut(&id) {
            Some(app) => std::mem::replace(&mut app.indexed_sizes, fresh.clone()),
            None => return,
        };
        for s in &old {
            self.unindex_size(*s);
        }
        for s in &fresh {
            *self.pending_sizes.entry(*s).or_insert(0) += 1;
        }
        self.scratch_sizes = old;
    }

    fn unindex_size(&mut self, size: [i64; MAX_RESOURCE_TYPES]) {
        if let Some(n) = self.pending_sizes.get_mut(&size) {
            *n -= 1;
            if *n == 0 {
                self.pending_sizes.remove(&size);
            }
        }
    }

    /// Whether some candidate's outstanding ask fits in `free` (as the rules fit containers) (the index is ordered by memory
    /// first, so only sizes with little enough memory are looked at).
    pub(crate) fn any_pending_fits(&self, free: Resource) -> bool {
        let mut upper = [i64::MAX; MAX_RESOURCE_TYPES];
        upper[0] = free.values()[0];
        self.pending_sizes
            .range(..=upper)
            .any(|(size, _)| R::fits_node(size, &free))
    }

    /// Re-keys `from` and every ancestor in their parents' sets.
    pub(crate) fn refresh_queue_path(&mut self, from: QueueId) {
        if self.order_dirty || self.walk != WalkMode::Fast {
            return;
        }
        let mut cur = from;
        while let Some(parent) = self.rekey_queue(cur) {
            cur = parent;
        }
    }

    /// Re-keys one queue in its parent's sets; returns the parent.
    pub(crate) fn rekey_queue(&mut self, cur: QueueId) -> Option<QueueId> {
        {
            let parent = self.queues.get(cur).parent?;
            let q = self.queues.get(cur);
            let new = self.queue_key(q);
            let new_res = new.is_some() && q.reservable_members > 0;
            let (slot, old_res) = (q.parent_slot, q.reservable_in_parent);
            let p = self.queues.get_mut(parent);
            let slot = move_entry(&mut p.candidates, slot, new.as_ref(), cur.0 as u64);
            count_reservable(&mut p.reservable_members, old_res, new_res);
            let q = self.queues.get_mut(cur);
            q.parent_slot = slot;
            let old_pool_res = std::mem::replace(&mut q.reservable_in_parent, new_res);
            if parent == ROOT {
                if let Some(pools) = &mut self.pools {
                    // Root's per-pool orders hold the same entries as its own, split by pool.
                    let (pool, pool_slot) = (usize::from(q.pool), q.pool_slot);
                    if let (Some(set), Some(count)) = (
                        pools.root_candidates.get_mut(pool),
                        pools.root_reservable.get_mut(pool),
                    ) {
                        q.pool_slot = move_entry(set, pool_slot, new.as_ref(), cur.0 as u64);
                        count_reservable(count, old_pool_res, new_res);
                    }
                }
            }
            Some(parent)
        }
    }

    /// Rebuilds every candidate set from scratch (after updates, reloads, node changes).
    pub(crate) fn rebuild_order(&mut self) {
        if self.queues.structure_changed {
            self.queues.rank_names();
            self.queues.structure_changed = false;
        }
        let ids: Vec<QueueId> = self.queues.ids().collect();
        for id in &ids {
            let q = self.queues.get_mut(*id);
            q.candidates.clear();
            q.parent_slot = None;
            q.pool_slot = None;
            q.reservable_members = 0;
            q.reservable_in_parent = false;
        }
        if let Some(pools) = &mut self.pools {
            pools.root_candidates.iter_mut().for_each(OrderedSet::clear);
            pools.root_reservable.fill(0);
        }
        self.pending_sizes.clear();
        let fast = self.walk == WalkMode::Fast;
        let keys: Vec<(AppId, QueueId, Option<SortKey>, bool)> = self
            .apps
            .values()
            .map(|a| {
                let key = if fast { self.app_key(a) } else { None };
                let reservable = key.is_some() && self.app_reservable(a);
                (a.id, a.queue, key, reservable)
            })
            .collect();
        for (id, leaf, key, reservable) in keys {
            let app_slot = self.apps.slot_of(&id).unwrap_or(u32::MAX);
            let slot = key.map(|k| {
                let q = self.queues.get_mut(leaf);
                count_reservable(&mut q.reservable_members, false, reservable);
                q.candidates.insert(&k, u64::from(app_slot))
            });
            if let Some(app) = self.apps.get_mut(&id) {
                app.leaf_slot = slot;
                app.reservable_in_leaf = reservable;
                app.threshold_ask = None;
                app.indexed_sizes.clear();
            }
            self.reindex_sizes(id, key.is_some());
        }
        if fast {
            let mut by_depth = ids;
            by_depth.sort_by_key(|id| std::cmp::Reverse(self.queues.get(*id).depth));
            for id in by_depth {
                let q = self.queues.get(id);
                if let (Some(parent), Some(k)) = (q.parent, self.queue_key(q)) {
                    let reservable = q.reservable_members > 0;
                    let p = self.queues.get_mut(parent);
                    let slot = p.candidates.insert(&k, id.0 as u64);
                    count_reservable(&mut p.reservable_members, false, reservable);
                    let q = self.queues.get_mut(id);
                    q.parent_slot = Some(slot);
                    q.reservable_in_parent = reservable;
                    if parent == ROOT {
                        if let Some(pools) = &mut self.pools {
                            let pool = usize::from(q.pool);
                            if let (Some(set), Some(count)) = (
                                pools.root_candidates.get_mut(pool),
                                pools.root_reservable.get_mut(pool),
                            ) {
                                q.pool_slot = Some(set.insert(&k, id.0 as u64));
                                count_reservable(count, false, reservable);
                            }
                        }
                    }
                }
            }
        }
        self.order_dirty = false;
    }
}

/// Keeps a queue's count of reservable members as one member's flag goes from `old` to `new`.
fn count_reservable(count: &mut u32, old: bool, new: bool) {
    match (old, new) {
        (false, true) => *count += 1,
        (true, false) => *count = count.saturating_sub(1),
        _ => {}
    }
}

/// Moves `member` (in `slot`, or not in `set`) to key `new` (`None`: out of the set); returns
/// its slot afterwards. An unchanged key leaves the set as it was.
#[inline]
fn move_entry(
    set: &mut OrderedSet,
    slot: Option<u32>,
    new: Option<&SortKey>,
    member: u64,
) -> Option<u32> {
    match (slot, new) {
        (Some(s), Some(k)) => {
            if set.rekey(s, k) {
                Some(s)
            } else {
                Some(set.insert(k, member))
            }
        }
        (Some(s), None) => {
            set.remove(s);
            None
        }
        (None, Some(k)) => Some(set.insert(k, member)),
        (None, None) => None,
    }
}
