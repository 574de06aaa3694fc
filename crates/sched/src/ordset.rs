//! The fast path's candidate sets: `(key, member)` entries kept in order.
//!
//! A set holds at most the children of one queue or the apps of one leaf (tens of entries in
//! practice), and the hot operation is moving one entry after its usage changed, often from the
//! front to far back. Entries stay put in a small slab; a vector of their slot numbers is kept
//! sorted by entry, so a move is two binary searches and a shift of 4-byte slot numbers, with no
//! allocation and no node bookkeeping, where a `BTreeSet` removes and inserts 88-byte entries.

use std::cmp::Ordering;

use crate::policy::SortKey;

/// One member under its key. Members are distinct, so entries are too.
pub(crate) type Entry = (SortKey, u64);

/// Entry order: the key, then the member. Written out because a tuple's `<` first tests the
/// keys for equality and then compares them, which doubles the cost of every probe.
#[inline]
fn cmp_entry(a: &Entry, b: &Entry) -> Ordering {
    a.0.cmp(&b.0).then(a.1.cmp(&b.1))
}

/// Entries in ascending order, no duplicates.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedSet {
    /// Entries by slot; a free slot holds a stale entry.
    slots: Vec<Entry>,
    free: Vec<u32>,
    /// Slots of the live entries, in entry order.
    order: Vec<u32>,
}

impl OrderedSet {
    pub(crate) fn new() -> OrderedSet {
        OrderedSet::default()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.order.len()
    }

    pub(crate) fn clear(&mut self) {
        self.slots.clear();
        self.free.clear();
        self.order.clear();
    }

    fn at(&self, pos: usize) -> &Entry {
        &self.slots[self.order[pos] as usize]
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.order.iter().map(|&s| &self.slots[s as usize])
    }

    /// The smallest entry.
    pub(crate) fn first(&self) -> Option<&Entry> {
        self.order.first().map(|&s| &self.slots[s as usize])
    }

    /// The position of the first entry not below `e` (`Ok` if it is `e`).
    fn search(&self, e: &Entry) -> Result<usize, usize> {
        self.order
            .binary_search_by(|&s| cmp_entry(&self.slots[s as usize], e))
    }

    /// How many entries in `range` of positions are below `e`, counted from its start.
    fn below(&self, range: std::ops::Range<usize>, e: &Entry) -> usize {
        self.order[range].partition_point(|&s| cmp_entry(&self.slots[s as usize], e).is_lt())
    }

    /// The smallest entry greater than `e` (which need not be in the set).
    pub(crate) fn next_after(&self, e: &Entry) -> Option<&Entry> {
        let i = self
            .order
            .partition_point(|&s| cmp_entry(&self.slots[s as usize], e).is_le());
        self.order.get(i).map(|&s| &self.slots[s as usize])
    }

    /// Inserts `e`; false if it was already there.
    pub(crate) fn insert(&mut self, e: Entry) -> bool {
        match self.search(&e) {
            Ok(_) => false,
            Err(i) => {
                let slot = match self.free.pop() {
                    Some(s) => {
                        self.slots[s as usize] = e;
                        s
                    }
                    None => {
                        self.slots.push(e);
                        (self.slots.len() - 1) as u32
                    }
                };
                self.order.insert(i, slot);
                true
            }
        }
    }

    /// Removes `e`; false if it was not there.
    pub(crate) fn remove(&mut self, e: &Entry) -> bool {
        match self.search(e) {
            Ok(i) => {
                let slot = self.order.remove(i);
                self.free.push(slot);
                true
            }
            Err(_) => false,
        }
    }

    /// Replaces `old` by `new`, shifting only the slot numbers between their positions.
    /// Inserts `new` if `old` was not there.
    pub(crate) fn replace(&mut self, old: &Entry, new: Entry) {
        // The walk re-keys the member it just served, which was first in its set.
        let from = if !self.order.is_empty() && self.at(0) == old {
            0
        } else {
            match self.search(old) {
                Ok(i) => i,
                Err(_) => {
                    self.insert(new);
                    return;
                }
            }
        };
        let slot = self.order[from];
        let to = if cmp_entry(&new, old).is_gt() {
            // Entries after `from` that are smaller than `new` move one place left.
            let to = from + self.below(from + 1..self.order.len(), &new);
            self.order.copy_within(from + 1..=to, from);
            to
        } else {
            let to = self.below(0..from, &new);
            self.order.copy_within(to..from, to + 1);
            to
        };
        self.order[to] = slot;
        self.slots[slot as usize] = new;
    }
}

impl PartialEq for OrderedSet {
    /// The same entries (slot numbers do not matter).
    fn eq(&self, other: &OrderedSet) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for OrderedSet {}

impl FromIterator<Entry> for OrderedSet {
    fn from_iter<I: IntoIterator<Item = Entry>>(iter: I) -> OrderedSet {
        let mut set = OrderedSet::new();
        for e in iter {
            set.insert(e);
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeSet;

    fn key(v: u64) -> SortKey {
        // Flagged keys (level 1 is 1) and unflagged ones, mixed.
        SortKey::new([v / 8, (v / 4) % 2, 0, 0, v % 3, 0, 0], v % 4, 0)
    }

    proptest! {
        /// Every operation leaves the same entries, in the same order, as a `BTreeSet` would.
        #[test]
        fn behaves_like_a_btreeset(ops in prop::collection::vec((0u8..3, 0u64..40, 0u64..6, 0u64..40), 1..200)) {
            let mut ours = OrderedSet::new();
            let mut model = BTreeSet::new();
            for (op, k, m, k2) in ops {
                let e = (key(k), m);
                match op {
                    0 => prop_assert_eq!(ours.insert(e), model.insert(e)),
                    1 => prop_assert_eq!(ours.remove(&e), model.remove(&e)),
                    _ => {
                        // Re-key member m from whatever key it has (if any) to k2.
                        let new = (key(k2), m);
                        let old = model.iter().find(|x| x.1 == m).copied();
                        if model.contains(&new) && old != Some(new) {
                            continue;
                        }
                        match old {
                            Some(o) => {
                                ours.replace(&o, new);
                                model.remove(&o);
                            }
                            None => ours.replace(&new, new),
                        }
                        model.insert(new);
                    }
                }
                prop_assert!(ours.iter().eq(model.iter()));
                let probe = (key(k2), m);
                prop_assert_eq!(ours.next_after(&probe), model.range((std::ops::Bound::Excluded(probe), std::ops::Bound::Unbounded)).next());
                prop_assert_eq!(ours.first(), model.iter().next());
            }
        }
    }
}
