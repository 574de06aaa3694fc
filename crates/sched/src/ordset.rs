//! The fast path's candidate sets: `(key, member)` entries kept in order.
//!
//! A set holds at most the children of one queue or the apps of one leaf (tens of entries in
//! practice), and the hot operation is moving one entry after its usage changed: the member just
//! served goes from the front to (near) the back, a member whose container ended moves forward.
//! Entries stay put in a small slab; a vector of their slot numbers is kept sorted by entry, so
//! a move is a search and a shift of 4-byte slot numbers, with no allocation. Beside each slot
//! the set keeps the key folded into two integers ([`SortKey::packed`]), so a probe compares
//! two words without loading the 88-byte entry; keys that do not fold are marked and compared
//! in full.

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

/// Marks a packed key that does not fold (the top bit is never set in a folded key, whose
/// high word holds a 0/1 level above a 64-bit one).
const UNFOLDED: u128 = 1 << 127;

/// An entry's key as two words (see [`SortKey::packed`]), or [`UNFOLDED`].
#[derive(Clone, Copy, Debug, Default)]
struct Packed {
    hi: u128,
    lo: u128,
}

impl Packed {
    #[inline]
    fn of(e: &Entry) -> Packed {
        match e.0.packed() {
            Some((hi, lo)) => Packed { hi, lo },
            None => Packed {
                hi: UNFOLDED,
                lo: 0,
            },
        }
    }
}

/// An entry being looked for, with its packed key worked out once.
struct Probe<'a> {
    entry: &'a Entry,
    packed: Packed,
}

impl Probe<'_> {
    fn new(entry: &Entry) -> Probe<'_> {
        Probe {
            entry,
            packed: Packed::of(entry),
        }
    }
}

/// Entries in ascending order, no duplicates.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedSet {
    /// Entries by slot; a free slot holds a stale entry.
    slots: Vec<Entry>,
    /// Packed keys by slot.
    packed: Vec<Packed>,
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
        self.packed.clear();
        self.free.clear();
        self.order.clear();
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Entry> + '_ {
        self.order.iter().map(|&s| &self.slots[s as usize])
    }

    /// The smallest entry.
    pub(crate) fn first(&self) -> Option<&Entry> {
        self.order.first().map(|&s| &self.slots[s as usize])
    }

    /// How the entry at `slot` compares with the probe.
    #[inline(always)]
    fn cmp_slot(&self, slot: u32, probe: &Probe<'_>) -> Ordering {
        let p = self.packed[slot as usize];
        if (p.hi | probe.packed.hi) & UNFOLDED == 0 {
            let by_key = p.hi.cmp(&probe.packed.hi).then(p.lo.cmp(&probe.packed.lo));
            if by_key != Ordering::Equal {
                return by_key;
            }
            return self.slots[slot as usize].1.cmp(&probe.entry.1);
        }
        cmp_entry(&self.slots[slot as usize], probe.entry)
    }

    /// The first position in `lo..hi` whose entry is not below the probe (`strict`: above it).
    #[inline]
    fn bound(&self, mut lo: usize, mut hi: usize, probe: &Probe<'_>, strict: bool) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let c = self.cmp_slot(self.order[mid], probe);
            if c == Ordering::Less || (strict && c == Ordering::Equal) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo
    }

    /// The position of `e` (`Ok`), or where it would go (`Err`).
    fn search(&self, probe: &Probe<'_>) -> Result<usize, usize> {
        let i = self.bound(0, self.order.len(), probe, false);
        match self.order.get(i) {
            Some(&s) if self.cmp_slot(s, probe) == Ordering::Equal => Ok(i),
            _ => Err(i),
        }
    }

    /// The smallest entry greater than `e` (which need not be in the set).
    pub(crate) fn next_after(&self, e: &Entry) -> Option<&Entry> {
        let i = self.bound(0, self.order.len(), &Probe::new(e), true);
        self.order.get(i).map(|&s| &self.slots[s as usize])
    }

    fn store(&mut self, e: Entry) -> u32 {
        let packed = Packed::of(&e);
        match self.free.pop() {
            Some(s) => {
                self.slots[s as usize] = e;
                self.packed[s as usize] = packed;
                s
            }
            None => {
                self.slots.push(e);
                self.packed.push(packed);
                (self.slots.len() - 1) as u32
            }
        }
    }

    /// Inserts `e`; false if it was already there.
    pub(crate) fn insert(&mut self, e: Entry) -> bool {
        match self.search(&Probe::new(&e)) {
            Ok(_) => false,
            Err(i) => {
                let slot = self.store(e);
                self.order.insert(i, slot);
                true
            }
        }
    }

    /// Removes `e`; false if it was not there.
    pub(crate) fn remove(&mut self, e: &Entry) -> bool {
        match self.search(&Probe::new(e)) {
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
        let old_probe = Probe::new(old);
        let len = self.order.len();
        // The walk re-keys the member it just served, which was first in its set.
        let from = match self.order.first() {
            Some(&s) if self.cmp_slot(s, &old_probe) == Ordering::Equal => 0,
            _ => match self.search(&old_probe) {
                Ok(i) => i,
                Err(_) => {
                    self.insert(new);
                    return;
                }
            },
        };
        let slot = self.order[from];
        let new_probe = Probe::new(&new);
        let to = if cmp_entry(&new, old).is_gt() {
            // Entries after `from` that are smaller than `new` move one place left. A served
            // member usually goes last, so that end is tried before searching.
            let last = self.order[len - 1];
            let to = if from + 1 < len && self.cmp_slot(last, &new_probe).is_lt() {
                len - 1
            } else {
                self.bound(from + 1, len, &new_probe, false) - 1
            };
            self.order.copy_within(from + 1..=to, from);
            to
        } else {
            // A member whose container ended often goes first.
            let to = if from > 0 && self.cmp_slot(self.order[0], &new_probe).is_gt() {
                0
            } else {
                self.bound(0, from, &new_probe, false)
            };
            self.order.copy_within(to..from, to + 1);
            to
        };
        self.order[to] = slot;
        self.packed[slot as usize] = new_probe.packed;
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
