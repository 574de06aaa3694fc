//! Id-keyed storage for apps, nodes and containers with constant-time lookups.
//!
//! The heartbeat walk looks an app and a node up a dozen times per container, and every
//! allocation and completion inserts or removes a container among a million; a `BTreeMap` made
//! each of those a multi-level search with cache misses at full scale. Values live in a slot
//! vector; an open-addressing index maps ids to slots. The index is never iterated, so nothing
//! here depends on hashing order: [`Table`] iterates in id order through a `BTreeMap` of ids,
//! [`IdMap`] cannot be iterated at all.

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

/// Open addressing with linear probing and backward-shift deletion: raw id -> slot.
#[derive(Clone, Debug)]
struct SlotIndex {
    buckets: Vec<(u64, u32)>,
    len: usize,
    /// `64 - log2(buckets.len())`.
    shift: u32,
}

impl SlotIndex {
    fn new() -> SlotIndex {
        SlotIndex {
            buckets: vec![(0, EMPTY); 8],
            len: 0,
            shift: 64 - 3,
        }
    }

    fn mask(&self) -> usize {
        self.buckets.len() - 1
    }

    /// Fibonacci hashing: ids are often consecutive, and the multiply spreads them.
    fn home(&self, raw: u64) -> usize {
        (raw.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    fn find(&self, raw: u64) -> Option<usize> {
        let mut i = self.home(raw);
        loop {
            let (k, v) = self.buckets[i];
            if v == EMPTY {
                return None;
            }
            if k == raw {
                return Some(i);
            }
            i = (i + 1) & self.mask();
        }
    }

    fn get(&self, raw: u64) -> Option<u32> {
        self.find(raw).map(|i| self.buckets[i].1)
    }

    /// Maps `raw` to `slot` (the id must not be present).
    fn insert(&mut self, raw: u64, slot: u32) {
        if (self.len + 1) * 2 > self.buckets.len() {
            self.grow();
        }
        let mut i = self.home(raw);
        while self.buckets[i].1 != EMPTY {
            i = (i + 1) & self.mask();
        }
        self.buckets[i] = (raw, slot);
        self.len += 1;
    }

    fn remove(&mut self, raw: u64) -> Option<u32> {
        let mut hole = self.find(raw)?;
        let slot = self.buckets[hole].1;
        let mask = self.mask();
        let mut j = hole;
        loop {
            j = (j + 1) & mask;
            let (k, v) = self.buckets[j];
            if v == EMPTY {
                break;
            }
            // The entry at j may fill the hole if the hole lies on its probe path.
            let home = self.home(k);
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.buckets[hole] = (k, v);
                hole = j;
            }
        }
        self.buckets[hole] = (0, EMPTY);
        self.len -= 1;
        Some(slot)
    }

    fn grow(&mut self) {
        let doubled = vec![(0, EMPTY); self.buckets.len() * 2];
        let old = std::mem::replace(&mut self.buckets, doubled);
        self.shift -= 1;
        self.len = 0;
        for (k, v) in old {
            if v != EMPTY {
                self.insert(k, v);
            }
        }
    }
}

/// Values by id, with constant-time lookup, insertion and removal; not iterable.
#[derive(Clone, Debug)]
pub(crate) struct IdMap<K, V> {
    slots: Vec<Option<V>>,
    free: Vec<u32>,
    index: SlotIndex,
    _key: std::marker::PhantomData<K>,
}

impl<K: Id, V> IdMap<K, V> {
    pub(crate) fn new() -> IdMap<K, V> {
        IdMap {
            slots: Vec::new(),
            free: Vec::new(),
            index: SlotIndex::new(),
            _key: std::marker::PhantomData,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.index.len
    }

    pub(crate) fn get(&self, id: &K) -> Option<&V> {
        let slot = self.index.get(id.raw())?;
        self.slots[slot as usize].as_ref()
    }

    pub(crate) fn get_mut(&mut self, id: &K) -> Option<&mut V> {
        let slot = self.index.get(id.raw())?;
        self.slots[slot as usize].as_mut()
    }

    pub(crate) fn contains_key(&self, id: &K) -> bool {
        self.index.get(id.raw()).is_some()
    }

    /// The slot `id` is stored in (stable until it is removed).
    pub(crate) fn slot_of(&self, id: &K) -> Option<u32> {
        self.index.get(id.raw())
    }

    /// The value in `slot`, if the slot is in use.
    pub(crate) fn at(&self, slot: u32) -> Option<&V> {
        self.slots.get(slot as usize).and_then(Option::as_ref)
    }

    pub(crate) fn at_mut(&mut self, slot: u32) -> Option<&mut V> {
        self.slots.get_mut(slot as usize).and_then(Option::as_mut)
    }

    /// Stores `value` under `id`, returning its slot and the value it replaced.
    pub(crate) fn insert_slot(&mut self, id: K, value: V) -> (u32, Option<V>) {
        if let Some(slot) = self.index.get(id.raw()) {
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
        self.index.insert(id.raw(), slot);
        (slot, None)
    }

    pub(crate) fn remove(&mut self, id: &K) -> Option<V> {
        let slot = self.index.remove(id.raw())?;
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

    pub(crate) fn insert(&mut self, id: K, value: V) -> Option<V> {
        let (slot, old) = self.map.insert_slot(id, value);
        self.order.insert(id, slot);
        old
    }

    pub(crate) fn remove(&mut self, id: &K) -> Option<V> {
        self.order.remove(id);
        self.map.remove(id)
    }

    /// Ids in ascending order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = &K> + '_ {
        self.order.keys()
    }

    /// Values in ascending id order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &V> + '_ {
        self.order
            .values()
            .filter_map(|&s| self.map.slots[s as usize].as_ref())
    }

    /// Values in slot order (deterministic, but not id order: for order-free updates).
    pub(crate) fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.map.slots.iter_mut().flatten()
    }
}

impl<K: Id, V> Default for Table<K, V> {
    fn default() -> Self {
        Table::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Container ids (an unordered map) agree with a `BTreeMap` too.
        #[test]
        fn container_ids_behave_like_a_btreemap(ops in prop::collection::vec((any::<bool>(), 0u64..300, any::<u32>()), 1..400)) {
            let mut ours: IdMap<ContainerId, u32> = IdMap::new();
            let mut model = BTreeMap::new();
            for (insert, id, v) in ops {
                let id = ContainerId(id * 7);
                if insert {
                    prop_assert_eq!(ours.insert_slot(id, v).1, model.insert(id, v));
                } else {
                    prop_assert_eq!(ours.remove(&id), model.remove(&id));
                }
                prop_assert_eq!(ours.len(), model.len());
                for k in 0..300u64 {
                    let probe = ContainerId(k * 7);
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
                // Spread some ids far apart so probe chains wrap around the index.
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
