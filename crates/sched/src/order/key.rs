//! The candidate sets' key: policy levels as unsigned words, then start time and tie-break.
//!
//! Every scheduler's rules build their keys from these parts (a level per ordering criterion,
//! most significant first), so one ordered set serves every scheduler; the common `fair` shape
//! folds into one 128-bit word (`SortKey::packed`).

use crate::lanes::MAX_RESOURCE_TYPES;
use std::cmp::Ordering;

/// Words of policy-specific ordering levels in a [`SortKey`]: drf needs one for neediness plus
/// one per resource type, and `fair`'s shape and Capacity's use words up to 6 whatever the
/// lane count, so the key keeps seven words when resource vectors narrow (issue 20 item 4).
pub(crate) const KEY_LEVELS: usize = 7;
const _: () = assert!(
    MAX_RESOURCE_TYPES < KEY_LEVELS,
    "drf needs a level per lane"
);

/// A precomputed ordering key: comparing two keys gives exactly what the rules' reference comparator gives.
///
/// `levels` holds the policy's fairness levels, most significant first, each an unsigned word
/// (booleans as 0/1, doubles through [`ordered_bits`]); unused words are 0. The start time and
/// the tie-break follow, so keys of distinct schedulables never compare equal.
///
/// Keys are compared millions of times a second on the fast path, so the common shape of a
/// `fair` key (not needy, positive weight: every level but the demand class and usage / weight
/// fixed, see [`SortKey::SIMPLE_REST`]) is flagged when the key is built, and two flagged keys
/// compare only the words that can differ. The order is the same either way.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SortKey {
    /// Policy-specific levels (see `fair::key` and `drf::key`).
    levels: [u64; KEY_LEVELS],
    /// Start time, earlier first.
    start_time: u64,
    /// Final tie-break, smaller first.
    tiebreak: u64,
    /// Levels other than 0 and 4 are [`SortKey::SIMPLE_REST`].
    simple: bool,
}

impl SortKey {
    /// Levels 1, 2, 3, 5 and 6 of a flagged key: a `fair` key that is not needy and has a
    /// positive weight.
    const SIMPLE_REST: [u64; 5] = [1, 0, 0, 0, 0];

    /// A key from its levels, start time and tie-break.
    pub(crate) fn new(levels: [u64; KEY_LEVELS], start_time: u64, tiebreak: u64) -> SortKey {
        let rest = [levels[1], levels[2], levels[3], levels[5], levels[6]];
        // Word by word: an array `==` here compiles to a `memcmp` call.
        let simple = rest.iter().zip(SortKey::SIMPLE_REST).all(|(a, b)| *a == b);
        SortKey {
            levels,
            start_time,
            tiebreak,
            simple,
        }
    }

    /// A key of one class bit and one value, then a 64-bit tie-break, in the shape that folds
    /// into one word (see [`SortKey::packed`]) whenever `value` has its top bit set (the
    /// [`ordered_bits`] of a non-negative double, or `1 << 63` plus a small integer): ordered
    /// by `class`, then `value`, then `tiebreak`, split over the start-time and tie-break
    /// fields so that any 64-bit tie-break folds.
    pub(crate) fn two_level(class: bool, value: u64, tiebreak: u64) -> SortKey {
        let mut levels = [0; KEY_LEVELS];
        levels[0] = u64::from(class);
        levels[1] = SortKey::SIMPLE_REST[0];
        levels[4] = value;
        SortKey::new(levels, tiebreak >> 24, tiebreak & ((1 << 24) - 1))
    }

    /// A key ordered by start time and tie-break alone (every policy level equal), in the
    /// shape that folds into one word (see [`SortKey::packed`]).
    pub(crate) fn arrival(start_time: u64, tiebreak: u64) -> SortKey {
        let mut levels = [0; KEY_LEVELS];
        levels[1] = SortKey::SIMPLE_REST[0];
        levels[4] = 1 << 63;
        SortKey::new(levels, start_time, tiebreak)
    }
}

impl SortKey {
    /// The key folded into one 128-bit word whose order is the key's order, when it fits:
    /// a flagged key (see [`SortKey::SIMPLE_REST`]) whose usage / weight is not negative (its
    /// ordered bits then always have the top bit set, which leaves room for the demand class),
    /// with a start time below 2^40 ms and a tie-break below 2^24. `None` otherwise; such keys
    /// are compared in full. Ordered sets keep this beside each entry, so a probe is one
    /// integer comparison. Never `u128::MAX` (the ratio field stays below the NaN patterns).
    #[inline]
    pub(crate) fn packed(&self) -> Option<u128> {
        const RATIO_TOP: u64 = 1 << 63;
        let (class, ratio) = (self.levels[0], self.levels[4]);
        if !self.simple
            || class > 1
            || ratio & RATIO_TOP == 0
            || self.start_time >> 40 != 0
            || self.tiebreak >> 24 != 0
        {
            return None;
        }
        let hi = (class << 63) | (ratio & !RATIO_TOP);
        let lo = (self.start_time << 24) | self.tiebreak;
        Some((u128::from(hi) << 64) | u128::from(lo))
    }

    /// The key [`SortKey::packed`] folded into `word` (ordered sets keep only the word of a
    /// key that folds).
    #[inline]
    pub(crate) fn from_packed(word: u128) -> SortKey {
        const RATIO_TOP: u64 = 1 << 63;
        let (hi, lo) = ((word >> 64) as u64, word as u64);
        let rest = SortKey::SIMPLE_REST;
        SortKey {
            levels: [
                hi >> 63,
                rest[0],
                rest[1],
                rest[2],
                (hi & !RATIO_TOP) | RATIO_TOP,
                rest[3],
                rest[4],
            ],
            start_time: lo >> 24,
            tiebreak: lo & ((1 << 24) - 1),
            simple: true,
        }
    }
}

impl Ord for SortKey {
    /// Word by word, most significant first (what a derived `Ord` would do); two flagged keys
    /// agree on the fixed levels, so only the others are looked at.
    #[inline]
    fn cmp(&self, other: &SortKey) -> Ordering {
        if self.simple && other.simple {
            // Two 128-bit words: (demand class, usage / weight), (start time, tie-break).
            let wide = |hi: u64, lo: u64| (u128::from(hi) << 64) | u128::from(lo);
            let (a, b) = (
                wide(self.levels[0], self.levels[4]),
                wide(other.levels[0], other.levels[4]),
            );
            if a != b {
                return a.cmp(&b);
            }
            return wide(self.start_time, self.tiebreak)
                .cmp(&wide(other.start_time, other.tiebreak));
        }
        for (a, b) in self.levels.iter().zip(&other.levels) {
            if a != b {
                return a.cmp(b);
            }
        }
        self.start_time
            .cmp(&other.start_time)
            .then(self.tiebreak.cmp(&other.tiebreak))
    }
}

impl PartialEq for SortKey {
    /// Every word equal, without a call to `memcmp`.
    #[inline]
    fn eq(&self, other: &SortKey) -> bool {
        let mut diff = (self.start_time ^ other.start_time) | (self.tiebreak ^ other.tiebreak);
        for (a, b) in self.levels.iter().zip(&other.levels) {
            diff |= a ^ b;
        }
        diff == 0
    }
}

impl Eq for SortKey {}

impl PartialOrd for SortKey {
    #[inline]
    fn partial_cmp(&self, other: &SortKey) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Maps a double to a word whose unsigned order is the double's numeric order, with -0.0 and
/// 0.0 (which `signum(x - y)` treats as equal) mapped to the same word. NaN, which the callers
/// never pass, maps like 0.0.
pub(crate) fn ordered_bits(x: f64) -> u64 {
    let x = if x == 0.0 || x.is_nan() { 0.0 } else { x };
    let bits = x.to_bits();
    if bits >> 63 == 1 {
        !bits
    } else {
        bits | (1 << 63)
    }
}
