//! The fast path's candidate sets: a sorted vector of `(key, member)` entries.
//!
//! A set holds at most the children of one queue or the apps of one leaf (tens of entries in
//! practice), and the hot operation is moving one entry a short distance after its usage changed.
//! A sorted vector does that with two binary searches and a rotation of the entries in between,
//! with no allocation and no node bookkeeping, where a `BTreeSet` removes and inserts.

use crate::policy::SortKey;

/// One member under its key. Members are distinct, so entries are too.
pub(crate) type Entry = (SortKey, u64);

/// Entries in ascending order, no duplicates.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct OrderedSet {
    entries: Vec<Entry>,
}

impl OrderedSet {
    pub(crate) fn new() -> OrderedSet {
        OrderedSet::default()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    pub(crate) fn clear(&mut self) {
        self.entries.clear();
    }

    /// The entries in order.
    pub(crate) fn iter(&self) -> std::slice::Iter<'_, Entry> {
        self.entries.iter()
    }

    /// The smallest entry.
    pub(crate) fn first(&self) -> Option<&Entry> {
        self.entries.first()
    }

    /// The smallest entry greater than `e` (which need not be in the set).
    pub(crate) fn next_after(&self, e: &Entry) -> Option<&Entry> {
        let i = self.entries.partition_point(|x| x <= e);
        self.entries.get(i)
    }

    /// Inserts `e`; false if it was already there.
    pub(crate) fn insert(&mut self, e: Entry) -> bool {
        match self.entries.binary_search(&e) {
            Ok(_) => false,
            Err(i) => {
                self.entries.insert(i, e);
                true
            }
        }
    }

    /// Removes `e`; false if it was not there.
    pub(crate) fn remove(&mut self, e: &Entry) -> bool {
        match self.entries.binary_search(e) {
            Ok(i) => {
                self.entries.remove(i);
                true
            }
            Err(_) => false,
        }
    }

    /// Replaces `old` by `new`, shifting only the entries between their positions. Inserts
    /// `new` if `old` was not there.
    pub(crate) fn replace(&mut self, old: &Entry, new: Entry) {
        // The walk re-keys the member it just served, which was first in its set.
        let from = if self.entries.first() == Some(old) {
            0
        } else {
            match self.entries.binary_search(old) {
                Ok(i) => i,
                Err(_) => {
                    self.insert(new);
                    return;
                }
            }
        };
        if new > *old {
            // Entries after `from` that are smaller than `new` move one place left.
            let to = from + self.entries[from + 1..].partition_point(|x| *x < new);
            self.entries.copy_within(from + 1..=to, from);
            self.entries[to] = new;
        } else {
            let to = self.entries[..from].partition_point(|x| *x < new);
            self.entries.copy_within(to..from, to + 1);
            self.entries[to] = new;
        }
    }
}

impl<'a> IntoIterator for &'a OrderedSet {
    type Item = &'a Entry;
    type IntoIter = std::slice::Iter<'a, Entry>;

    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter()
    }
}

impl FromIterator<Entry> for OrderedSet {
    fn from_iter<I: IntoIterator<Item = Entry>>(iter: I) -> OrderedSet {
        let mut entries: Vec<Entry> = iter.into_iter().collect();
        entries.sort_unstable();
        entries.dedup();
        OrderedSet { entries }
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
