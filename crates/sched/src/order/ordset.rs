//! The fast path's candidate sets: `(key, member)` entries kept in order.
//!
//! A set holds at most the children of one queue or the apps of one leaf (tens of entries in
//! practice), and the hot operation is moving one entry after its usage changed: the member just
//! served goes from the front to (near) the back, a member whose container ended moves forward.
//! Each entry lives in a slot that stays its own while it is in the set; a member keeps its
//! slot number (its handle) and re-keys or leaves through it, so it never keeps a copy of its
//! key. A vector of slot numbers is kept sorted by entry, so a move is a search and a shift of
//! 4-byte slot numbers, with no allocation.
//!
//! Per slot the set keeps the key folded into one 128-bit word ([`SortKey::packed`]) and the
//! member, in separate vectors, so a probe compares one word and the walk reads a member without
//! its key. Keys that do not fold (rare: needy queues, zero weights, `drf`) are marked and kept
//! in full beside; while a set holds none, its searches compare words only.

use std::cmp::Ordering;

use crate::order::key::SortKey;

/// One member under its key. Members are distinct, so entries are too.
pub(crate) type Entry = (SortKey, u64);

/// Marks a key that does not fold into one word (no folded key takes this value).
const UNFOLDED: u128 = u128::MAX;

/// Where a walk over a set stands: the position it visited and the slot it found there.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Cursor {
    pos: usize,
    slot: u32,
}

impl Cursor {
    /// The handle of the entry the cursor stands on.
    pub(crate) fn slot(self) -> u32 {
        self.slot
    }
}

/// An entry being looked for: its folded word, or its full key when it does not fold.
#[derive(Clone, Copy)]
struct Probe<'a> {
    packed: u128,
    key: Option<&'a SortKey>,
    member: u64,
}

impl<'a> Probe<'a> {
    #[inline]
    fn new(key: &'a SortKey, member: u64) -> Probe<'a> {
        match key.packed() {
            Some(packed) => Probe {
                packed,
                key: None,
                member,
            },
            None => Probe {
                packed: UNFOLDED,
                key: Some(key),
                member,
            },
        }
    }

    fn full_key(&self) -> SortKey {
        match self.key {
            Some(k) => *k,
            None => SortKey::from_packed(self.packed),
        }
    }

    /// How this probe compares with another (words when both fold).
    #[inline]
    fn cmp(&self, other: &Probe<'_>) -> Ordering {
        if self.packed != UNFOLDED && other.packed != UNFOLDED {
            return self
                .packed
                .cmp(&other.packed)
                .then(self.member.cmp(&other.member));
        }
        self.full_key()
            .cmp(&other.full_key())
            .then(self.member.cmp(&other.member))
    }
}

/// Entries in ascending order, no duplicates. Fields in declaration order (`repr(C)`): what
/// the walk and a re-key read comes first.
#[repr(C)]
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedSet {
    /// Slots of the live entries, in entry order.
    order: Vec<u32>,
    /// Member by slot.
    members: Vec<u64>,
    /// Folded key by slot ([`UNFOLDED`]: see `unfolded`).
    packed: Vec<u128>,
    /// How many live entries have a key that does not fold.
    unfolded_count: u32,
    /// Full key by slot, written only for keys that do not fold.
    unfolded: Vec<SortKey>,
    free: Vec<u32>,
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
        self.packed.clear();
        self.members.clear();
        self.unfolded.clear();
        self.unfolded_count = 0;
        self.free.clear();
        self.order.clear();
    }

    /// The key held in `slot`.
    fn key_at(&self, slot: u32) -> SortKey {
        match self.packed[slot as usize] {
            UNFOLDED => self.unfolded[slot as usize],
            word => SortKey::from_packed(word),
        }
    }

    /// The member held in `slot`.
    #[inline]
    pub(crate) fn member(&self, slot: u32) -> u64 {
        self.members[slot as usize]
    }

    /// Whether `slot` holds `key`.
    #[cfg(all(test, not(weft_two_lanes)))]
    pub(crate) fn holds_key(&self, slot: u32, key: &SortKey) -> bool {
        self.holds(slot, &Probe::new(key, 0))
    }

    /// Whether `slot` holds the probe's key (members aside).
    #[inline]
    fn holds(&self, slot: u32, probe: &Probe<'_>) -> bool {
        let word = self.packed[slot as usize];
        word == probe.packed
            && (word != UNFOLDED || probe.key == Some(&self.unfolded[slot as usize]))
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        self.iter_slots().map(|(_, e)| e)
    }

    /// The entries in order, each with its slot.
    pub(crate) fn iter_slots(&self) -> impl Iterator<Item = (u32, Entry)> + '_ {
        self.order
            .iter()
            .map(|&s| (s, (self.key_at(s), self.members[s as usize])))
    }

    /// Where a walk starts: the smallest entry.
    #[inline]
    pub(crate) fn first(&self) -> Option<Cursor> {
        self.order.first().map(|&slot| Cursor { pos: 0, slot })
    }

    /// The entry after the one `at` stood on. While the set has not changed since, that is
    /// the next position; otherwise the smallest entry greater than the one the slot holds (or
    /// last held: the walk never changes a set while it moves along it, so that is a safety
    /// net).
    #[inline]
    pub(crate) fn next(&self, at: Cursor) -> Option<Cursor> {
        let pos = if self.order.get(at.pos) == Some(&at.slot) {
            at.pos + 1
        } else {
            self.bound(0, self.order.len(), &self.probe_at(at.slot), true)
        };
        self.order.get(pos).map(|&slot| Cursor { pos, slot })
    }

    /// How the entry at `slot` compares with the probe.
    #[inline(always)]
    fn cmp_slot(&self, slot: u32, probe: &Probe<'_>) -> Ordering {
        let p = self.packed[slot as usize];
        if p != UNFOLDED && probe.packed != UNFOLDED {
            if p != probe.packed {
                return p.cmp(&probe.packed);
            }
            return self.members[slot as usize].cmp(&probe.member);
        }
        self.key_at(slot)
            .cmp(&probe.full_key())
            .then(self.members[slot as usize].cmp(&probe.member))
    }

    /// The first position in `lo..hi` whose entry is not below the probe (`strict`: above it).
    #[inline]
    fn bound(&self, mut lo: usize, mut hi: usize, probe: &Probe<'_>, strict: bool) -> usize {
        if self.unfolded_count == 0 && probe.packed != UNFOLDED {
            // Words only: one integer comparison per step, the member only on equal words.
            let (want, member) = (probe.packed, probe.member);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let slot = self.order[mid] as usize;
                let p = self.packed[slot];
                let before = p < want
                    || (p == want && {
                        let m = self.members[slot];
                        m < member || (strict && m == member)
                    });
                if before {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo;
        }
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

    /// The position of the entry, or where it would go.
    fn search(&self, probe: &Probe<'_>) -> Result<usize, usize> {
        let i = self.bound(0, self.order.len(), probe, false);
        match self.order.get(i) {
            Some(&s) if self.cmp_slot(s, probe) == Ordering::Equal => Ok(i),
            _ => Err(i),
        }
    }

    /// The entry in `slot` as a probe.
    #[inline]
    fn probe_at(&self, slot: u32) -> Probe<'_> {
        let packed = self.packed[slot as usize];
        Probe {
            packed,
            key: (packed == UNFOLDED).then(|| &self.unfolded[slot as usize]),
            member: self.members[slot as usize],
        }
    }

    /// The position of the live entry in `slot`.
    fn position_of(&self, slot: u32) -> Option<usize> {
        // The walk re-keys the member it just served, which was first in its set.
        if self.order.first() == Some(&slot) {
            return Some(0);
        }
        match self.search(&self.probe_at(slot)) {
            Ok(i) if self.order[i] == slot => Some(i),
            _ => None,
        }
    }

    /// Writes the probe's key into `slot`, keeping the count of unfolded keys (`was_unfolded`:
    /// the slot held a live entry whose key did not fold).
    fn write_key(&mut self, slot: u32, probe: &Probe<'_>, was_unfolded: bool) {
        let word = probe.packed;
        self.packed[slot as usize] = word;
        if let Some(key) = probe.key {
            self.unfolded[slot as usize] = *key;
        }
        match (was_unfolded, word == UNFOLDED) {
            (false, true) => self.unfolded_count += 1,
            (true, false) => self.unfolded_count -= 1,
            _ => {}
        }
    }

    /// Inserts `member` under `key` and returns its slot (the existing one if that very entry
    /// is already there). The caller keeps the slot to re-key or remove the entry.
    pub(crate) fn insert(&mut self, key: &SortKey, member: u64) -> u32 {
        let probe = Probe::new(key, member);
        let i = match self.search(&probe) {
            Ok(i) => return self.order[i],
            Err(i) => i,
        };
        let slot = match self.free.pop() {
            Some(s) => {
                self.members[s as usize] = member;
                s
            }
            None => {
                self.packed.push(UNFOLDED);
                self.members.push(member);
                self.unfolded.push(*key);
                (self.members.len() - 1) as u32
            }
        };
        self.write_key(slot, &probe, false);
        self.order.insert(i, slot);
        slot
    }

    /// Removes the entry in `slot`; false if the slot holds no live entry.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        let Some(i) = self.position_of(slot) else {
            return false;
        };
        self.order.remove(i);
        if self.packed[slot as usize] == UNFOLDED {
            self.unfolded_count -= 1;
        }
        // A free slot keeps its last entry, so a cursor left on it still finds its way on.
        self.free.push(slot);
        true
    }

    /// Moves the entry in `slot` to key `new`, shifting only the slot numbers between its two
    /// positions; false if the slot holds no live entry.
    ///
    /// `slot` is the caller's live handle: an unchanged key is noticed before the entry is
    /// looked for (the update re-keys every queue and most keys stay), so a stale handle whose
    /// slot still holds that very key is taken for live.
    pub(crate) fn rekey(&mut self, slot: u32, new: &SortKey) -> bool {
        let Some(&member) = self.members.get(slot as usize) else {
            return false;
        };
        let new_probe = Probe::new(new, member);
        if self.holds(slot, &new_probe) {
            debug_assert!(self.position_of(slot).is_some(), "re-key of a free slot");
            return true;
        }
        let Some(from) = self.position_of(slot) else {
            return false;
        };
        let len = self.order.len();
        let to = if new_probe.cmp(&self.probe_at(slot)).is_gt() {
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
        let was_unfolded = self.packed[slot as usize] == UNFOLDED;
        self.write_key(slot, &new_probe, was_unfolded);
        true
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
        for (key, member) in iter {
            set.insert(&key, member);
        }
        set
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::ops::Bound::{Excluded, Unbounded};

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
        /// Inserts, removals and re-keys through slots leave the same entries, in the same
        /// order, as a `BTreeSet`; a walk with cursors visits them in that order, and a cursor
        /// taken before a change goes on after its entry's current place.
        #[test]
        fn behaves_like_a_btreeset(ops in prop::collection::vec((0u8..3, 0u64..40, 0u64..6), 1..200)) {
            let mut ours = OrderedSet::new();
            let mut model: BTreeSet<Entry> = BTreeSet::new();
            let mut slots: BTreeMap<u64, u32> = BTreeMap::new();
            for (op, k, m) in ops {
                let current = model.iter().find(|e| e.1 == m).copied();
                let stale = ours.first();
                match (op, current) {
                    (0, None) => {
                        let slot = ours.insert(&key(k), m);
                        prop_assert!(!slots.values().any(|s| *s == slot));
                        slots.insert(m, slot);
                        model.insert((key(k), m));
                    }
                    (0, Some(e)) => {
                        // The very entry again: its own slot comes back.
                        prop_assert_eq!(ours.insert(&e.0, m), slots[&m]);
                    }
                    (1, Some(e)) => {
                        let slot = slots.remove(&m).unwrap_or(u32::MAX);
                        prop_assert!(ours.remove(slot));
                        prop_assert!(!ours.remove(slot));
                        model.remove(&e);
                    }
                    (_, Some(e)) => {
                        prop_assert!(ours.rekey(slots[&m], &key(k)));
                        prop_assert!(ours.holds_key(slots[&m], &key(k)));
                        model.remove(&e);
                        model.insert((key(k), m));
                    }
                    _ => {}
                }
                prop_assert!(ours.iter().eq(model.iter().copied()));
                prop_assert_eq!(ours.len(), model.len());
                let mut walked = Vec::new();
                let mut at = ours.first();
                while let Some(c) = at {
                    walked.push(ours.member(c.slot()));
                    at = ours.next(c);
                }
                prop_assert!(walked.iter().eq(model.iter().map(|e| &e.1)));
                if let Some(c) = stale {
                    let member = ours.member(c.slot());
                    if let Some(e) = model.iter().find(|e| e.1 == member && slots.get(&member) == Some(&c.slot())) {
                        let want = model.range((Excluded(*e), Unbounded)).next().map(|x| x.1);
                        prop_assert_eq!(ours.next(c).map(|n| ours.member(n.slot())), want);
                    }
                }
            }
        }
    }
}
