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

/// Marks a key that does not fold into one word (no folded key takes this value).
const UNFOLDED: u128 = u128::MAX;

#[inline]
fn packed_of(key: &SortKey) -> u128 {
    key.packed().unwrap_or(UNFOLDED)
}

/// An entry being looked for, with its packed key worked out once.
struct Probe<'a> {
    key: &'a SortKey,
    member: u64,
    packed: u128,
}

impl Probe<'_> {
    #[inline]
    fn new(key: &SortKey, member: u64) -> Probe<'_> {
        Probe {
            key,
            member,
            packed: packed_of(key),
        }
    }

    /// How this probe compares with another (packed words when both fold).
    #[inline]
    fn cmp(&self, other: &Probe<'_>) -> Ordering {
        if self.packed != UNFOLDED && other.packed != UNFOLDED {
            return self
                .packed
                .cmp(&other.packed)
                .then(self.member.cmp(&other.member));
        }
        self.key.cmp(other.key).then(self.member.cmp(&other.member))
    }
}

/// Entries in ascending order, no duplicates.
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedSet {
    /// Entries by slot; a free slot holds a stale entry.
    slots: Vec<Entry>,
    /// Packed keys by slot.
    packed: Vec<u128>,
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
        if p != UNFOLDED && probe.packed != UNFOLDED {
            if p != probe.packed {
                return p.cmp(&probe.packed);
            }
            return self.slots[slot as usize].1.cmp(&probe.member);
        }
        let (key, member) = &self.slots[slot as usize];
        key.cmp(probe.key).then(member.cmp(&probe.member))
    }

    /// The first position in `lo..hi` whose entry is not below the probe (`strict`: above it).
    #[inline]
    fn bound(&self, mut lo: usize, mut hi: usize, probe: &Probe<'_>, strict: bool) -> usize {
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            let slot = self.order[mid];
            let p = self.packed[slot as usize];
            // One integer comparison unless a key does not fold or the keys are equal.
            let before = if p != UNFOLDED && probe.packed != UNFOLDED && p != probe.packed {
                p < probe.packed
            } else {
                let c = self.cmp_slot(slot, probe);
                c == Ordering::Less || (strict && c == Ordering::Equal)
            };
            if before {
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
        let i = self.bound(0, self.order.len(), &Probe::new(&e.0, e.1), true);
        self.order.get(i).map(|&s| &self.slots[s as usize])
    }

    fn store(&mut self, e: Entry) -> u32 {
        let packed = packed_of(&e.0);
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
        match self.search(&Probe::new(&e.0, e.1)) {
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
        match self.search(&Probe::new(&e.0, e.1)) {
            Ok(i) => {
                let slot = self.order.remove(i);
                self.free.push(slot);
                true
            }
            Err(_) => false,
        }
    }

    /// Moves `member` from key `old` to key `new`, shifting only the slot numbers between its
    /// two positions. Inserts it if it was not there under `old`.
    pub(crate) fn replace(&mut self, member: u64, old: &SortKey, new: &SortKey) {
        let old_probe = Probe::new(old, member);
        let len = self.order.len();
        // The walk re-keys the member it just served, which was first in its set.
        let from = match self.order.first() {
            Some(&s) if self.cmp_slot(s, &old_probe) == Ordering::Equal => 0,
            _ => match self.search(&old_probe) {
                Ok(i) => i,
                Err(_) => {
                    self.insert((*new, member));
                    return;
                }
            },
        };
        let slot = self.order[from];
        let new_probe = Probe::new(new, member);
        let to = if new_probe.cmp(&old_probe).is_gt() {
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
        self.slots[slot as usize].0 = *new;
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
        // Keys that fold into one word and keys that do not (demand class 2, unflagged, a
        // ratio without its top bit), mixed.
        let ratio = if v.is_multiple_of(5) {
            v % 3
        } else {
            (1 << 63) | (v % 3)
        };
        SortKey::new([(v / 8) % 3, (v / 4) % 2, 0, 0, ratio, 0, 0], v % 4, 0)
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
                                ours.replace(m, &o.0, &new.0);
                                model.remove(&o);
                            }
                            None => ours.replace(m, &new.0, &new.0),
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
