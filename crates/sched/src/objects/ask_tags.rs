//! The tags of one request's outstanding asks, in the order the asks arrived.
//!
//! A request merges every ask under its key into one count, so which ask a container came from
//! is kept beside it as runs of (count, tag): an allocation takes from the oldest run, a cancel
//! from the newest. Drivers that never tag pay one null pointer per request: the runs exist only
//! once a tagged ask arrives, and go again when the request runs out.

use std::collections::VecDeque;

use crate::api::AskTag;

/// Runs of equal tags, oldest first, counting exactly the request's outstanding containers;
/// `None` while all of them carry [`AskTag::NONE`].
// Boxed on purpose: one word in every request while unused, where a `VecDeque` is four.
#[allow(clippy::box_collection)]
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct AskTags(Option<Box<VecDeque<(u32, AskTag)>>>);

impl AskTags {
    /// `count` more containers tagged `tag`, after the `outstanding` the request already had.
    pub(crate) fn add(&mut self, outstanding: u32, count: u32, tag: AskTag) {
        if count == 0 {
            return;
        }
        let runs = match &mut self.0 {
            Some(runs) => runs,
            None if tag == AskTag::NONE => return,
            None => {
                let mut runs = VecDeque::new();
                if outstanding > 0 {
                    runs.push_back((outstanding, AskTag::NONE));
                }
                self.0.insert(Box::new(runs))
            }
        };
        match runs.back_mut() {
            Some((n, last)) if *last == tag => *n = n.saturating_add(count),
            _ => runs.push_back((count, tag)),
        }
    }

    /// The tag of the oldest outstanding container, which is taken.
    pub(crate) fn take_oldest(&mut self) -> AskTag {
        let Some(runs) = &mut self.0 else {
            return AskTag::NONE;
        };
        let Some((n, tag)) = runs.front_mut() else {
            return AskTag::NONE;
        };
        let tag = *tag;
        *n -= 1;
        if *n == 0 {
            runs.pop_front();
        }
        if runs.is_empty() {
            self.0 = None;
        }
        tag
    }

    /// Withdraws the `count` newest containers.
    pub(crate) fn cancel_newest(&mut self, mut count: u32) {
        let Some(runs) = &mut self.0 else {
            return;
        };
        while count > 0 {
            let Some((n, _)) = runs.back_mut() else {
                break;
            };
            let take = count.min(*n);
            *n -= take;
            count -= take;
            if *n == 0 {
                runs.pop_back();
            }
        }
        if runs.is_empty() {
            self.0 = None;
        }
    }

    /// How many containers the runs count, or `None` when there are no runs (verify compares it
    /// with the request's count).
    pub(crate) fn counted(&self) -> Option<u64> {
        let runs = self.0.as_ref()?;
        Some(runs.iter().map(|(n, _)| u64::from(*n)).sum())
    }

    /// The tags in order, one entry per container (tests).
    #[cfg(all(test, not(weft_two_lanes)))]
    pub(crate) fn expanded(&self, outstanding: u32) -> Vec<AskTag> {
        match &self.0 {
            None => vec![AskTag::NONE; outstanding as usize],
            Some(runs) => runs
                .iter()
                .flat_map(|(n, tag)| std::iter::repeat_n(*tag, *n as usize))
                .collect(),
        }
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        Add(u32, u64),
        Take,
        Cancel(u32),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            (0..4u32, 0..3u64).prop_map(|(n, t)| Op::Add(n, t)),
            Just(Op::Take),
            (0..5u32).prop_map(Op::Cancel),
        ]
    }

    #[test]
    fn untagged_asks_keep_no_runs() {
        let mut tags = AskTags::default();
        tags.add(0, 5, AskTag::NONE);
        tags.add(5, 2, AskTag::NONE);
        assert_eq!(tags, AskTags::default());
        assert_eq!(tags.take_oldest(), AskTag::NONE);
        assert_eq!(std::mem::size_of::<AskTags>(), std::mem::size_of::<usize>());
    }

    #[test]
    fn a_tag_after_untagged_asks_keeps_their_count_first() {
        let mut tags = AskTags::default();
        tags.add(3, 2, AskTag(7));
        assert_eq!(
            tags.expanded(5),
            vec![
                AskTag::NONE,
                AskTag::NONE,
                AskTag::NONE,
                AskTag(7),
                AskTag(7)
            ]
        );
        tags.cancel_newest(3);
        assert_eq!(tags.expanded(2), vec![AskTag::NONE, AskTag::NONE]);
        assert_eq!(tags.take_oldest(), AskTag::NONE);
        assert_eq!(tags.take_oldest(), AskTag::NONE);
        assert_eq!(
            tags,
            AskTags::default(),
            "runs go when the request runs out"
        );
    }

    proptest! {
        /// The runs behave like a queue of one tag per container: allocations take from the
        /// front, cancels from the back, and they always count the outstanding containers.
        #[test]
        fn behaves_like_a_queue_of_tags(ops in proptest::collection::vec(op(), 0..40)) {
            let mut model: VecDeque<AskTag> = VecDeque::new();
            let mut tags = AskTags::default();
            for op in ops {
                match op {
                    Op::Add(n, t) => {
                        tags.add(model.len() as u32, n, AskTag(t));
                        model.extend(std::iter::repeat_n(AskTag(t), n as usize));
                    }
                    Op::Take => {
                        let want = model.pop_front().unwrap_or(AskTag::NONE);
                        prop_assert_eq!(tags.take_oldest(), want);
                    }
                    Op::Cancel(n) => {
                        tags.cancel_newest(n);
                        model.truncate(model.len().saturating_sub(n as usize));
                    }
                }
                let outstanding = model.len() as u32;
                prop_assert_eq!(tags.expanded(outstanding), Vec::from(model.clone()));
                if let Some(counted) = tags.counted() {
                    prop_assert_eq!(counted, u64::from(outstanding));
                }
            }
        }
    }
}
