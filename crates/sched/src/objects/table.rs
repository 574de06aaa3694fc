//! Id-keyed storage for apps, nodes and containers with constant-time lookups.
//!
//! The heartbeat walk looks an app and a node up a dozen times per container, and every
//! allocation and completion inserts or removes a container among a million; a `BTreeMap` made
//! each of those a multi-level search with cache misses at full scale. Values live in a slot
//! vector; an index maps ids to slots by the id's low bits ([`RingIndex`]), with a memo of the
//! last look-up. Every id is handed out by a counter (containers by the scheduler, apps and
//! nodes by the driver), so live ids are nearly dense and the index needs no hashing; any other
//! ids still work, through the index's overflow map. The index is never iterated: [`Table`]
//! iterates in id order through a `BTreeMap` of ids, [`IdMap`] cannot be iterated at all.

use std::cell::Cell;
use std::collections::BTreeMap;
use weft_types::{AppId, ContainerId, NodeId};

/// An id that is one machine word.
pub(crate) trait Id: Copy + Ord {
    fn raw(self) -> u64;
}

impl Id for AppId {
    fn raw(self) -> u64 {
        self.0
    }
}

impl Id for NodeId {
    fn raw(self) -> u64 {
        u64::from(self.0)
    }
}

impl Id for ContainerId {
    fn raw(self) -> u64 {
        self.0
    }
}

/// Marks a free bucket of the index.
const EMPTY: u32 = u32::MAX;

/// For ids from a counter: id -> slot by the id's low bits, with no hashing and no probing, so
/// ids created together sit together in memory (containers are created, and mostly end, in id
/// order, and nodes heartbeat in id order; a hashed index made each of those a cache miss at
/// full scale). An id
/// whose bucket is held by a live id from an earlier lap goes to an ordered overflow map.
#[derive(Clone, Debug)]
struct RingIndex {
    ring: Vec<(u64, u32)>,
    overflow: BTreeMap<u64, u32>,
    len: usize,
}

impl RingIndex {
    fn new() -> RingIndex {
        RingIndex {
            ring: vec![(0, EMPTY); 8],
            overflow: BTreeMap::new(),
            len: 0,
        }
    }

    fn pos(&self, raw: u64) -> usize {
        (raw as usize) & (self.ring.len() - 1)
    }

    #[inline]
    fn get(&self, raw: u64) -> Option<u32> {
        let (k, v) = self.ring[self.pos(raw)];
        if v != EMPTY && k == raw {
            return Some(v);
        }
        self.overflow.get(&raw).copied()
    }

    /// Maps `raw` to `slot` (the id must not be present).
    fn insert(&mut self, raw: u64, slot: u32) {
        // Grow with the live count, and also when live ids span more than a lap (long-lived
        // containers keep old buckets busy and the overflow map fills).
        if (self.len + 1) * 2 > self.ring.len() || self.overflow.len() * 16 > self.ring.len() {
            self.grow();
        }
        self.place(raw, slot);
        self.len += 1;
    }

    fn place(&mut self, raw: u64, slot: u32) {
        let p = self.pos(raw);
        if self.ring[p].1 == EMPTY {
            self.ring[p] = (raw, slot);
        } else {
            self.overflow.insert(raw, slot);
        }
    }

    fn remove(&mut self, raw: u64) -> Option<u32> {
        let p = self.pos(raw);
        let (k, v) = self.ring[p];
        let slot = if v != EMPTY && k == raw {
            self.ring[p] = (0, EMPTY);
            v
        } else {
            self.overflow.remove(&raw)?
        };
        self.len -= 1;
        Some(slot)
    }

    fn grow(&mut self) {
        let doubled = vec![(0, EMPTY); self.ring.len() * 2];
        let old = std::mem::replace(&mut self.ring, doubled);
        let spilled = std::mem::take(&mut self.overflow);
        for (k, v) in old.into_iter().filter(|e| e.1 != EMPTY).chain(spilled) {
            self.place(k, v);
        }
    }
}

/// Values by id, with constant-time lookup, insertion and removal; not iterable.
#[derive(Clone, Debug)]
pub(crate) struct IdMap<K, V> {
    slots: Vec<Option<V>>,
    free: Vec<u32>,
    index: RingIndex,
    /// The last id looked up and its slot: the walk looks the same app and node up many times
    /// in a row. Cleared whenever an id is added or removed.
    last: Cell<Option<(u64, u32)>>,
    _key: std::marker::PhantomData<K>,
}

impl<K: Id, V> IdMap<K, V> {
    pub(crate) fn new() -> IdMap<K, V> {
        IdMap {
            slots: Vec::new(),
            free: Vec::new(),
            index: RingIndex::new(),
            last: Cell::new(None),
            _key: std::marker::PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.index.len
    }

    #[inline]
    fn index_get(&self, raw: u64) -> Option<u32> {
        if let Some((last, slot)) = self.last.get() {
            if last == raw {
                return Some(slot);
            }
        }
        let found = self.index.get(raw);
        if let Some(slot) = found {
            self.last.set(Some((raw, slot)));
        }
        found
    }

    fn index_insert(&mut self, raw: u64, slot: u32) {
        self.last.set(None);
        self.index.insert(raw, slot);
    }

    fn index_remove(&mut self, raw: u64) -> Option<u32> {
        self.last.set(None);
        self.index.remove(raw)
    }

    pub(crate) fn get(&self, id: &K) -> Option<&V> {
        let slot = self.index_get(id.raw())?;
        self.slots[slot as usize].as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: &K) -> Option<&mut V> {
        let slot = self.index_get(id.raw())?;
        self.slots[slot as usize].as_mut()
    }

    pub(crate) fn contains_key(&self, id: &K) -> bool {
        self.index_get(id.raw()).is_some()
    }

    /// The slot `id` is stored in (stable until it is removed). Always inlined: the fast path
    /// calls it per allocation and completion, and cold callers must not make the compiler
    /// keep it out of line there.
    #[inline(always)]
    pub(crate) fn slot_of(&self, id: &K) -> Option<u32> {
        self.index_get(id.raw())
    }

    /// Notes that `id` is in `slot` (the caller read it there), so the next look-ups of `id`
    /// skip the index.
    pub(crate) fn remember(&self, id: K, slot: u32) {
        self.last.set(Some((id.raw(), slot)));
    }

    /// The value in `slot`, if the slot is in use.
    pub(crate) fn at(&self, slot: u32) -> Option<&V> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    /// One more than the largest slot in use: slots are `0..slot_bound()` (some free), for a
    /// pass in storage order (sequential memory, no look-ups by id).
    pub(crate) fn slot_bound(&self) -> u32 {
        self.slots.len() as u32
    }

    pub(crate) fn at_mut(&mut self, slot: u32) -> Option<&mut V> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Stores `value` under `id`, returning its slot and the value it replaced.
    pub(crate) fn insert_slot(&mut self, id: K, value: V) -> (u32, Option<V>) {
        if let Some(slot) = self.index_get(id.raw()) {
            let old = self.slots[slot as usize].replace(value);
            return (slot, old);
        }
        let slot = match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = Some(value);
                s
            }
            None => {
                self.slots.push(Some(value));
                (self.slots.len() - 1) as u32
            }
        };
        self.index_insert(id.raw(), slot);
        (slot, None)
    }

    pub(crate) fn remove(&mut self, id: &K) -> Option<V> {
        let slot = self.index_remove(id.raw())?;
        self.free.push(slot);
        self.slots[slot as usize].take()
    }
}

impl<K: Id, V> Default for IdMap<K, V> {
    fn default() -> Self {
        IdMap::new()
    }
}

/// An [`IdMap`] that also iterates, in id order.
#[derive(Clone, Debug)]
pub(crate) struct Table<K, V> {
    map: IdMap<K, V>,
    order: BTreeMap<K, u32>,
}

impl<K: Id, V> Table<K, V> {
    pub(crate) fn new() -> Table<K, V> {
        Table {
            map: IdMap::new(),
            order: BTreeMap::new(),
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    pub(crate) fn get(&self, id: &K) -> Option<&V> {
        self.map.get(id)
    }

    pub(crate) fn get_mut(&mut self, id: &K) -> Option<&mut V> {
        self.map.get_mut(id)
    }

    pub(crate) fn contains_key(&self, id: &K) -> bool {
        self.map.contains_key(id)
    }

    pub(crate) fn slot_of(&self, id: &K) -> Option<u32> {
        self.map.slot_of(id)
    }

    pub(crate) fn at(&self, slot: u32) -> Option<&V> {
        self.map.at(slot)
    }

    pub(crate) fn at_mut(&mut self, slot: u32) -> Option<&mut V> {
        self.map.at_mut(slot)
    }

    /// See [`IdMap::remember`].
    pub(crate) fn remember(&self, id: K, slot: u32) {
        self.map.remember(id, slot);
    }

    pub(crate) fn insert(&mut self, id: K, value: V) -> Option<V> {
        let (slot, old) = self.map.insert_slot(id, value);
        self.order.insert(id, slot);
        old
    }

    pub(crate) fn remove(&mut self, id: &K) -> Option<V> {
        self.order.remove(id);
        self.map.remove(id)
    }

    /// Ids in ascending order (the scheduler walks `values`; the tests check the ids too).
    #[cfg(all(test, not(weft_two_lanes)))]
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.order.keys()
    }

    /// One more than the largest slot in use: slots are `0..slot_bound()` (some free), for a
    /// pass in storage order (sequential memory, no look-ups by id).
    pub(crate) fn slot_bound(&self) -> u32 {
        self.map.slots.len() as u32
    }

    /// Values in ascending id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.order
            .values()
            .filter_map(|&s| self.map.slots[s as usize].as_ref())
    }
}

impl<K: Id, V> Default for Table<K, V> {
    fn default() -> Self {
        Table::new()
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Container ids (the ring index) agree with a `BTreeMap` too, with ids that share
        /// buckets (overflow) and rings that grow.
        #[test]
        fn container_ids_behave_like_a_btreemap(ops in prop::collection::vec((any::<bool>(), 0u64..300, any::<u32>()), 1..400)) {
            let mut ours: IdMap<ContainerId, u32> = IdMap::new();
            let mut model = BTreeMap::new();
            for (insert, id, v) in ops {
                let id = ContainerId(if id % 2 == 0 { id * 8 } else { id });
                if insert {
                    prop_assert_eq!(ours.insert_slot(id, v).1, model.insert(id, v));
                } else {
                    prop_assert_eq!(ours.remove(&id), model.remove(&id));
                }
                prop_assert_eq!(ours.len(), model.len());
                for k in 0..300u64 {
                    let probe = ContainerId(if k % 2 == 0 { k * 8 } else { k });
                    prop_assert_eq!(ours.get(&probe), model.get(&probe));
                }
            }
        }

        /// Inserts and removes leave the same contents as a `BTreeMap`, iterated in id order.
        #[test]
        fn behaves_like_a_btreemap(ops in prop::collection::vec((any::<bool>(), 0u64..64, any::<u32>()), 1..400)) {
            let mut ours: Table<AppId, u32> = Table::new();
            let mut model = BTreeMap::new();
            for (insert, id, v) in ops {
                // Spread some ids far apart so they share ring buckets and go to the overflow map.
                let id = AppId(if id % 2 == 0 { id } else { id << 40 });
                if insert {
                    prop_assert_eq!(ours.insert(id, v), model.insert(id, v));
                } else {
                    prop_assert_eq!(ours.remove(&id), model.remove(&id));
                }
                prop_assert_eq!(ours.len(), model.len());
                prop_assert!(ours.keys().eq(model.keys()));
                prop_assert!(ours.values().eq(model.values()));
                for k in 0..64u64 {
                    let probe = AppId(if k % 2 == 0 { k } else { k << 40 });
                    prop_assert_eq!(ours.get(&probe), model.get(&probe));
                }
            }
        }
    }
}
