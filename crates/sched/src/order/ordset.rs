//! The fast path's candidate sets: `(key, member)` entries kept in order.
//!
//! A set holds at most the children of one queue or the apps of one leaf (tens of entries in
//! practice), and the hot operation is moving one entry after its usage changed: the member just
//! served goes from the front to (near) the back, a member whose container ended moves forward.
//! Each entry lives in a slot that stays its own while it is in the set; a member keeps its
//! slot number (its handle) and re-keys or leaves through it, so it never keeps a copy of its
//! key. A column of slot numbers is kept sorted by entry, so a move is a search and a shift of
//! slot numbers, with no allocation.
//!
//! Per slot the set keeps the key folded into one 128-bit word ([`SortKey::packed`]) and the
//! member, in separate columns, so a probe compares one word and the walk reads a member without
//! its key. Keys that do not fold (rare: needy queues, zero weights, `drf`) are marked and kept
//! in full beside; while a set holds none, its searches compare words only.
//!
//! Every column lives in one heap block of words behind the set's one pointer (a queue holds
//! its set inline, and 2,000 queues do not fit the L2 cache at full scale): a walk's visit of a
//! small set reads its counts, its first slot number and that slot's member from the block's
//! first line, where five vectors took five headers in the queue and three heap lines.

use std::cmp::Ordering;

use crate::order::key::SortKey;

/// One member under its key. Members are distinct, so entries are too.
pub(crate) type Entry = (SortKey, u64);

/// Marks a key that does not fold into one word (no folded key takes this value).
const UNFOLDED: u128 = u128::MAX;

/// Words before the columns: the count of live entries whose key does not fold (read by
/// searches, which read the block anyway; the counts a walk or an unchanged re-key reads are
/// in the set itself).
const HEADER: usize = 1;
/// Words per slot of capacity: its place in the order column, its member, its folded key (two).
const WORDS_PER_SLOT: usize = 4;
/// Slots of a set's first block (most leaves hold a few apps).
const FIRST_CAPACITY: usize = 2;

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

/// Full keys of the slots whose key does not fold, by slot (cold: most sets never hold one).
#[derive(Clone, Debug, Default)]
struct UnfoldedKeys {
    by_slot: Vec<SortKey>,
}

/// Entries in ascending order, no duplicates.
///
/// The block (empty until the first insert), in words: [`HEADER`], then for a capacity of
/// `cap` slots four columns of `cap` words: the order column (the live entries' slots in entry
/// order from the front, the free slots as a stack from the back), members by slot, folded
/// keys by slot (high word, low word).
#[derive(Clone, Debug, Default)]
pub(crate) struct OrderedSet {
    block: Box<[u64]>,
    /// Live entries.
    live: u32,
    /// Slots ever handed out (live or free).
    slots: u32,
    unfolded: Option<Box<UnfoldedKeys>>,
}

/// The block's columns, split once per operation: what searches and comparisons read.
#[derive(Clone, Copy)]
struct Columns<'a> {
    /// The order column's live part.
    order: &'a [u64],
    /// Member by slot.
    members: &'a [u64],
    /// Folded key by slot, high word then low word.
    packed: &'a [u64],
    unfolded_count: u32,
    unfolded: Option<&'a UnfoldedKeys>,
}

impl<'a> Columns<'a> {
    #[inline(always)]
    fn packed_at(&self, slot: u32) -> u128 {
        let i = 2 * slot as usize;
        (u128::from(self.packed[i]) << 64) | u128::from(self.packed[i + 1])
    }

    #[inline(always)]
    fn member(&self, slot: u32) -> u64 {
        self.members[slot as usize]
    }

    /// The full key of `slot`, which does not fold.
    fn unfolded_key(&self, slot: u32) -> &'a SortKey {
        match self.unfolded.and_then(|u| u.by_slot.get(slot as usize)) {
            Some(key) => key,
            None => unreachable!("slot {slot} is marked unfolded but holds no full key"),
        }
    }

    /// The key held in `slot`.
    fn key_at(&self, slot: u32) -> SortKey {
        match self.packed_at(slot) {
            UNFOLDED => *self.unfolded_key(slot),
            word => SortKey::from_packed(word),
        }
    }

    /// Whether `slot` holds the probe's key (members aside).
    #[inline]
    fn holds(&self, slot: u32, probe: &Probe<'_>) -> bool {
        let word = self.packed_at(slot);
        word == probe.packed && (word != UNFOLDED || probe.key == Some(self.unfolded_key(slot)))
    }

    /// How the entry at `slot` compares with the probe.
    #[inline(always)]
    fn cmp_slot(&self, slot: u32, probe: &Probe<'_>) -> Ordering {
        let p = self.packed_at(slot);
        if p != UNFOLDED && probe.packed != UNFOLDED {
            if p != probe.packed {
                return p.cmp(&probe.packed);
            }
            return self.member(slot).cmp(&probe.member);
        }
        self.key_at(slot)
            .cmp(&probe.full_key())
            .then(self.member(slot).cmp(&probe.member))
    }

    /// The first position in `lo..hi` whose entry is not below the probe (`strict`: above it).
    #[inline]
    fn bound(&self, mut lo: usize, mut hi: usize, probe: &Probe<'_>, strict: bool) -> usize {
        if self.unfolded_count == 0 && probe.packed != UNFOLDED {
            // Words only: one integer comparison per step, the member only on equal words.
            let (want, member) = (probe.packed, probe.member);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let slot = self.order[mid] as u32;
                let p = self.packed_at(slot);
                let before = p < want
                    || (p == want && {
                        let m = self.member(slot);
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
            let c = self.cmp_slot(self.order[mid] as u32, probe);
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
            Some(&s) if self.cmp_slot(s as u32, probe) == Ordering::Equal => Ok(i),
            _ => Err(i),
        }
    }

    /// The entry in `slot` as a probe.
    #[inline]
    fn probe_at(&self, slot: u32) -> Probe<'a> {
        let packed = self.packed_at(slot);
        Probe {
            packed,
            key: (packed == UNFOLDED).then(|| self.unfolded_key(slot)),
            member: self.member(slot),
        }
    }

    /// The position of the live entry in `slot`.
    fn position_of(&self, slot: u32) -> Option<usize> {
        // The walk re-keys the member it just served, which was first in its set.
        if self.order.first() == Some(&u64::from(slot)) {
            return Some(0);
        }
        match self.search(&self.probe_at(slot)) {
            Ok(i) if self.order[i] == u64::from(slot) => Some(i),
            _ => None,
        }
    }
}

impl OrderedSet {
    pub(crate) fn new() -> OrderedSet {
        OrderedSet::default()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.len() == 0
    }

    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.live as usize
    }

    #[inline]
    fn slots(&self) -> usize {
        self.slots as usize
    }

    #[inline]
    fn unfolded_count(&self) -> u32 {
        self.block.first().map_or(0, |&w| w as u32)
    }

    #[inline]
    fn capacity(&self) -> usize {
        self.block.len().saturating_sub(HEADER) / WORDS_PER_SLOT
    }

    /// Sets the counts (live entries and slots are below `u32::MAX`: a set holds the apps of
    /// one leaf or the children of one queue).
    #[inline]
    fn set_counts(&mut self, live: usize, slots: usize, unfolded: u32) {
        self.live = live as u32;
        self.slots = slots as u32;
        self.block[0] = u64::from(unfolded);
    }

    /// The block split into its columns.
    #[inline]
    fn columns(&self) -> Columns<'_> {
        let cap = self.capacity();
        let body = self.block.get(HEADER..).unwrap_or(&[]);
        let (order, rest) = body.split_at(cap);
        let (members, packed) = rest.split_at(cap);
        Columns {
            order: &order[..self.len()],
            members,
            packed,
            unfolded_count: self.unfolded_count(),
            unfolded: self.unfolded.as_deref(),
        }
    }

    /// The slot at `pos` of the order column.
    #[inline]
    fn order_at(&self, pos: usize) -> u32 {
        self.block[HEADER + pos] as u32
    }

    pub(crate) fn clear(&mut self) {
        if self.block.is_empty() {
            return;
        }
        self.set_counts(0, 0, 0);
        if let Some(u) = self.unfolded.as_mut() {
            u.by_slot.clear();
        }
    }

    /// The member held in `slot`.
    #[inline]
    pub(crate) fn member(&self, slot: u32) -> u64 {
        debug_assert!(
            (slot as usize) < self.slots(),
            "slot {slot} was never handed out"
        );
        self.block[HEADER + self.capacity() + slot as usize]
    }

    /// Whether `slot` holds `key`.
    #[cfg(test)]
    pub(crate) fn holds_key(&self, slot: u32, key: &SortKey) -> bool {
        self.columns().holds(slot, &Probe::new(key, 0))
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        self.iter_slots().map(|(_, e)| e)
    }

    /// The entries in order, each with its slot.
    pub(crate) fn iter_slots(&self) -> impl Iterator<Item = (u32, Entry)> + '_ {
        let c = self.columns();
        c.order.iter().map(move |&s| {
            let s = s as u32;
            (s, (c.key_at(s), c.member(s)))
        })
    }

    /// Where a walk starts: the smallest entry.
    #[inline]
    pub(crate) fn first(&self) -> Option<Cursor> {
        (!self.is_empty()).then(|| Cursor {
            pos: 0,
            slot: self.order_at(0),
        })
    }

    /// The entry after the one `at` stood on. While the set has not changed since, that is
    /// the next position; otherwise the smallest entry greater than the one the slot holds (or
    /// last held: the walk never changes a set while it moves along it, so that is a safety
    /// net).
    #[inline]
    pub(crate) fn next(&self, at: Cursor) -> Option<Cursor> {
        let len = self.len();
        let pos = if at.pos < len && self.order_at(at.pos) == at.slot {
            at.pos + 1
        } else {
            let c = self.columns();
            c.bound(0, len, &c.probe_at(at.slot), true)
        };
        (pos < len).then(|| Cursor {
            pos,
            slot: self.order_at(pos),
        })
    }

    /// Writes the probe's key into `slot` of a block of capacity `cap` and returns whether it
    /// does not fold.
    #[inline]
    fn write_key(&mut self, cap: usize, slot: u32, probe: &Probe<'_>) -> bool {
        let i = HEADER + 2 * cap + 2 * slot as usize;
        self.block[i] = (probe.packed >> 64) as u64;
        self.block[i + 1] = probe.packed as u64;
        let Some(key) = probe.key else {
            return false;
        };
        let keys = &mut self.unfolded.get_or_insert_with(Box::default).by_slot;
        let at = slot as usize;
        if keys.len() <= at {
            keys.resize(at + 1, *key);
        }
        keys[at] = *key;
        true
    }

    /// Doubles the capacity (or makes the first block), keeping every column.
    #[cold]
    fn grow(&mut self) {
        let (cap, slots, live) = (self.capacity(), self.slots(), self.len());
        let new_cap = (2 * cap).max(FIRST_CAPACITY);
        let mut block = vec![0; HEADER + WORDS_PER_SLOT * new_cap].into_boxed_slice();
        if cap > 0 {
            let old = &self.block;
            block[..HEADER].copy_from_slice(&old[..HEADER]);
            let free = slots - live;
            let order = HEADER;
            block[order..order + live].copy_from_slice(&old[order..order + live]);
            block[order + new_cap - free..order + new_cap]
                .copy_from_slice(&old[order + cap - free..order + cap]);
            let (old_members, new_members) = (HEADER + cap, HEADER + new_cap);
            block[new_members..new_members + slots]
                .copy_from_slice(&old[old_members..old_members + slots]);
            let (old_packed, new_packed) = (HEADER + 2 * cap, HEADER + 2 * new_cap);
            block[new_packed..new_packed + 2 * slots]
                .copy_from_slice(&old[old_packed..old_packed + 2 * slots]);
        }
        self.block = block;
    }

    /// Inserts `member` under `key` and returns its slot (the existing one if that very entry
    /// is already there). The caller keeps the slot to re-key or remove the entry.
    pub(crate) fn insert(&mut self, key: &SortKey, member: u64) -> u32 {
        let probe = Probe::new(key, member);
        let i = match self.columns().search(&probe) {
            Ok(i) => return self.order_at(i),
            Err(i) => i,
        };
        let (live, mut slots, mut unfolded) = (self.len(), self.slots(), self.unfolded_count());
        let slot = if slots > live {
            // The top of the free stack (just past the live part once it is the last one).
            self.block[HEADER + self.capacity() - (slots - live)] as u32
        } else {
            if slots == self.capacity() {
                self.grow();
            }
            slots += 1;
            (slots - 1) as u32
        };
        let cap = self.capacity();
        self.block[HEADER + cap + slot as usize] = member;
        if self.write_key(cap, slot, &probe) {
            unfolded += 1;
        }
        let order = HEADER + i;
        self.block.copy_within(order..HEADER + live, order + 1);
        self.block[order] = u64::from(slot);
        self.set_counts(live + 1, slots, unfolded);
        slot
    }

    /// Removes the entry in `slot`; false if the slot holds no live entry.
    pub(crate) fn remove(&mut self, slot: u32) -> bool {
        if slot as usize >= self.slots() {
            return false;
        }
        let c = self.columns();
        let Some(i) = c.position_of(slot) else {
            return false;
        };
        let was_unfolded = c.packed_at(slot) == UNFOLDED;
        let (live, slots, cap) = (self.len(), self.slots(), self.capacity());
        let unfolded = self.unfolded_count() - u32::from(was_unfolded);
        self.block
            .copy_within(HEADER + i + 1..HEADER + live, HEADER + i);
        // A free slot keeps its last entry, so a cursor left on it still finds its way on.
        let free = slots - (live - 1);
        self.block[HEADER + cap - free] = u64::from(slot);
        self.set_counts(live - 1, slots, unfolded);
        true
    }

    /// Moves the entry in `slot` to key `new`, shifting only the slot numbers between its two
    /// positions; false if the slot holds no live entry.
    ///
    /// `slot` is the caller's live handle: an unchanged key is noticed before the entry is
    /// looked for (the update re-keys every queue and most keys stay), so a stale handle whose
    /// slot still holds that very key is taken for live.
    pub(crate) fn rekey(&mut self, slot: u32, new: &SortKey) -> bool {
        let slots = self.slots();
        if slot as usize >= slots {
            return false;
        }
        // The unchanged key is told from the member and key columns alone (the block's header
        // is on another line).
        let cap = self.capacity();
        let new_probe = Probe::new(new, self.block[HEADER + cap + slot as usize]);
        let at = HEADER + 2 * cap + 2 * slot as usize;
        let word = (u128::from(self.block[at]) << 64) | u128::from(self.block[at + 1]);
        let c = self.columns();
        if word == new_probe.packed && (word != UNFOLDED || c.holds(slot, &new_probe)) {
            debug_assert!(c.position_of(slot).is_some(), "re-key of a free slot");
            return true;
        }
        let Some(from) = c.position_of(slot) else {
            return false;
        };
        let was_unfolded = c.packed_at(slot) == UNFOLDED;
        let len = c.order.len();
        let (to, moves_back) = if new_probe.cmp(&c.probe_at(slot)).is_gt() {
            // Entries after `from` that are smaller than `new` move one place left. A served
            // member usually goes last, so that end is tried before searching.
            let last = c.order[len - 1] as u32;
            let to = if from + 1 < len && c.cmp_slot(last, &new_probe).is_lt() {
                len - 1
            } else {
                c.bound(from + 1, len, &new_probe, false) - 1
            };
            (to, true)
        } else {
            // A member whose container ended often goes first.
            let to = if from > 0 && c.cmp_slot(c.order[0] as u32, &new_probe).is_gt() {
                0
            } else {
                c.bound(0, from, &new_probe, false)
            };
            (to, false)
        };
        if moves_back {
            self.block
                .copy_within(HEADER + from + 1..=HEADER + to, HEADER + from);
        } else {
            self.block
                .copy_within(HEADER + to..HEADER + from, HEADER + to + 1);
        }
        self.block[HEADER + to] = u64::from(slot);
        let now_unfolded = self.write_key(cap, slot, &new_probe);
        if was_unfolded != now_unfolded {
            let unfolded =
                self.unfolded_count() + u32::from(now_unfolded) - u32::from(was_unfolded);
            self.set_counts(len, slots, unfolded);
        }
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

#[cfg(test)]
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
