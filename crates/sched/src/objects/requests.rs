//! An app's requests by scheduler key: a short vector sorted by key, its first two entries
//! stored inside the [`App`](crate::objects::app::App) itself.
//!
//! Apps typically ask under one or two keys (the AM's, then one per task size and priority),
//! and the walk reads them on every visit. In a `BTreeMap` that was a dependent cache miss on
//! the map's node and more lines for the key and value arrays, per visit to one of 10,000
//! apps; inline, the requests share the app's lines.

use smallvec::SmallVec;

use crate::objects::app::{Request, SchedulerKey};

/// Requests ordered by key, each key at most once.
#[derive(Clone, Debug, Default)]
pub(crate) struct Requests {
    entries: SmallVec<[(SchedulerKey, Request); 2]>,
}

impl Requests {
    fn position(&self, key: &SchedulerKey) -> Result<usize, usize> {
        self.entries.binary_search_by(|(k, _)| k.cmp(key))
    }

    pub(crate) fn get(&self, key: &SchedulerKey) -> Option<&Request> {
        let i = self.position(key).ok()?;
        Some(&self.entries[i].1)
    }

    /// Always inlined: `allocate` calls it per container, and a cold caller (recovery) made
    /// the compiler keep it out of line there.
    #[inline(always)]
    pub(crate) fn get_mut(&mut self, key: &SchedulerKey) -> Option<&mut Request> {
        let i = self.position(key).ok()?;
        Some(&mut self.entries[i].1)
    }

    pub(crate) fn get_key_value(&self, key: &SchedulerKey) -> Option<(&SchedulerKey, &Request)> {
        let i = self.position(key).ok()?;
        let (k, r) = &self.entries[i];
        Some((k, r))
    }

    /// Sets the request under `key`, replacing any there.
    pub(crate) fn insert(&mut self, key: SchedulerKey, request: Request) {
        match self.position(&key) {
            Ok(i) => self.entries[i].1 = request,
            Err(i) => self.entries.insert(i, (key, request)),
        }
    }

    /// The request under `key`, made with `make` if there is none.
    pub(crate) fn get_or_insert_with(
        &mut self,
        key: SchedulerKey,
        make: impl FnOnce() -> Request,
    ) -> &mut Request {
        let i = match self.position(&key) {
            Ok(i) => i,
            Err(i) => {
                self.entries.insert(i, (key, make()));
                i
            }
        };
        &mut self.entries[i].1
    }

    /// Keeps only the requests `keep` says yes to.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(&SchedulerKey, &Request) -> bool) {
        self.entries.retain(|(k, r)| keep(k, r));
    }

    /// In key order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&SchedulerKey, &Request)> {
        self.entries.iter().map(|(k, r)| (k, r))
    }

    /// In key order.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = (&SchedulerKey, &mut Request)> {
        self.entries.iter_mut().map(|(k, r)| (&*k, r))
    }

    /// In key order.
    pub(crate) fn values(&self) -> impl Iterator<Item = &Request> {
        self.entries.iter().map(|(_, r)| r)
    }

    /// The first key, if any.
    pub(crate) fn first_key(&self) -> Option<SchedulerKey> {
        self.entries.first().map(|(k, _)| *k)
    }

    /// The first key after `key`.
    pub(crate) fn key_after(&self, key: &SchedulerKey) -> Option<SchedulerKey> {
        let i = match self.position(key) {
            Ok(i) => i + 1,
            Err(i) => i,
        };
        self.entries.get(i).map(|(k, _)| *k)
    }

    /// The requests at `priority`, in key order.
    pub(crate) fn at_priority(
        &self,
        priority: i32,
    ) -> impl Iterator<Item = (&SchedulerKey, &Request)> {
        let start = self.entries.partition_point(|(k, _)| k.0 < priority);
        self.entries[start..]
            .iter()
            .take_while(move |(k, _)| k.0 == priority)
            .map(|(k, r)| (k, r))
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;
    use crate::lanes::Resource;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    fn request(count: u32) -> Request {
        let mut r = Request::new(Resource::new(1024, 1));
        r.any.count = count;
        r
    }

    #[derive(Clone, Debug)]
    enum Op {
        Insert(i32, u32, u32),
        Add(i32, u32, u32),
        RetainAbove(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (-2..3i32, 0..3u32, 0..5u32).prop_map(|(p, s, c)| Op::Insert(p, s, c)),
            (-2..3i32, 0..3u32, 0..5u32).prop_map(|(p, s, c)| Op::Add(p, s, c)),
            (0..4u32).prop_map(Op::RetainAbove),
        ]
    }

    proptest! {
        /// Every read agrees with a `BTreeMap` given the same changes (the type it replaced).
        #[test]
        fn behaves_like_an_ordered_map(ops in proptest::collection::vec(op(), 0..40)) {
            let mut model: BTreeMap<SchedulerKey, u32> = BTreeMap::new();
            let mut requests = Requests::default();
            for op in ops {
                match op {
                    Op::Insert(p, s, c) => {
                        model.insert((p, s), c);
                        requests.insert((p, s), request(c));
                    }
                    Op::Add(p, s, c) => {
                        *model.entry((p, s)).or_insert(0) += c;
                        requests.get_or_insert_with((p, s), || request(0)).any.count += c;
                    }
                    Op::RetainAbove(min) => {
                        model.retain(|_, c| *c > min);
                        requests.retain(|_, r| r.any.count > min);
                    }
                }
                let got: Vec<_> = requests.iter().map(|(k, r)| (*k, r.any.count)).collect();
                let want: Vec<_> = model.iter().map(|(k, c)| (*k, *c)).collect();
                prop_assert_eq!(&got, &want);
                prop_assert_eq!(requests.first_key(), model.keys().next().copied());
                for p in -2..3 {
                    for s in 0..3 {
                        let key = (p, s);
                        prop_assert_eq!(
                            requests.get(&key).map(|r| r.any.count),
                            model.get(&key).copied()
                        );
                        let after = model
                            .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
                            .next()
                            .map(|(k, _)| *k);
                        prop_assert_eq!(requests.key_after(&key), after);
                    }
                    let at: Vec<_> = requests.at_priority(p).map(|(k, _)| *k).collect();
                    let want_at: Vec<_> = model
                        .range((p, 0)..=(p, u32::MAX))
                        .map(|(k, _)| *k)
                        .collect();
                    prop_assert_eq!(at, want_at);
                }
            }
        }
    }
}
