//! A run-length step function of resources over integer milliseconds (Hadoop's
//! `RLESparseResourceAllocation`).
//!
//! The value at `t` is the value of the last step starting at or before `t`, and zero before the
//! first step. The representation is canonical: no step repeats its predecessor's value and the
//! first step is not zero, so two skylines describing the same function compare equal.
//! Intervals are half-open, `[start, end)`.

use std::collections::BTreeMap;
use std::ops::Bound;

use thiserror::Error;
use weft_types::{Resource, Time, MAX_RESOURCE_TYPES};

/// A refused change to a skyline; the skyline is left as it was.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum SkylineError {
    /// Adding would overflow a component.
    #[error("adding {amount:?} over [{start}, {end}) overflows a resource component")]
    Overflow {
        /// Start of the interval.
        start: Time,
        /// End of the interval.
        end: Time,
        /// The amount added.
        amount: Resource,
    },
    /// Subtracting would leave a component below zero.
    #[error("subtracting {amount:?} over [{start}, {end}) goes below zero at {at}")]
    Negative {
        /// Start of the interval.
        start: Time,
        /// End of the interval.
        end: Time,
        /// The amount subtracted.
        amount: Resource,
        /// The first instant that would go negative.
        at: Time,
    },
}

/// How [`Skyline::merge`] combines two skylines point by point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MergeOp {
    /// a + b (saturating).
    Add,
    /// a − b (saturating; may go negative, as available capacity does when a plan shrinks).
    Subtract,
    /// Componentwise minimum.
    Min,
    /// Componentwise maximum.
    Max,
}

/// One constant piece of a skyline: `value` over `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    /// First instant of the piece.
    pub start: Time,
    /// First instant after the piece.
    pub end: Time,
    /// The value over the piece.
    pub value: Resource,
}

/// Per-component integrals (resource × milliseconds), wide enough that no realistic plan
/// overflows (Hadoop's `IntegralResource` exists because 32-bit products did).
pub type Integral = [i128; MAX_RESOURCE_TYPES];

/// A resource step function over time.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Skyline {
    steps: BTreeMap<Time, Resource>,
}

impl Skyline {
    /// Zero everywhere.
    pub fn new() -> Skyline {
        Skyline::default()
    }

    /// `value` from `start` on, forever (a plan's capacity).
    pub fn constant_from(start: Time, value: Resource) -> Skyline {
        let mut s = Skyline::new();
        if value != Resource::ZERO {
            s.steps.insert(start, value);
        }
        s
    }

    /// `value` over `[start, end)`, zero elsewhere.
    pub fn interval(start: Time, end: Time, value: Resource) -> Skyline {
        let mut s = Skyline::new();
        if start < end && value != Resource::ZERO {
            s.steps.insert(start, value);
            s.steps.insert(end, Resource::ZERO);
        }
        s
    }

    /// True when the function is zero everywhere.
    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    /// The value at `t`.
    pub fn value_at(&self, t: Time) -> Resource {
        self.steps
            .range(..=t)
            .next_back()
            .map_or(Resource::ZERO, |(_, v)| *v)
    }

    /// The steps (start, value) in time order; each value holds until the next step.
    pub fn steps(&self) -> impl Iterator<Item = (Time, Resource)> + '_ {
        self.steps.iter().map(|(t, v)| (*t, *v))
    }

    /// How many steps the representation holds.
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// The first instant with a non-zero value.
    pub fn earliest_start(&self) -> Option<Time> {
        self.steps.keys().next().copied()
    }

    /// The instant from which the function is zero for good; `Time(u64::MAX)` when it never
    /// returns to zero, `None` when it is zero everywhere.
    pub fn latest_end(&self) -> Option<Time> {
        let (t, v) = self.steps.iter().next_back()?;
        Some(if *v == Resource::ZERO {
            *t
        } else {
            Time(u64::MAX)
        })
    }

    /// Adds `amount` over `[start, end)`; refuses (changing nothing) if a component would
    /// overflow.
    pub fn add(&mut self, start: Time, end: Time, amount: Resource) -> Result<(), SkylineError> {
        self.apply(start, end, |v| v.checked_add(amount))
            .map_err(|_| SkylineError::Overflow { start, end, amount })
    }

    /// Subtracts `amount` over `[start, end)`; refuses (changing nothing) if a component would
    /// go below zero or overflow.
    pub fn subtract(
        &mut self,
        start: Time,
        end: Time,
        amount: Resource,
    ) -> Result<(), SkylineError> {
        self.apply(start, end, |v| {
            v.checked_sub(amount)
                .filter(|r| r.values().iter().all(|c| *c >= 0))
        })
        .map_err(|at| SkylineError::Negative {
            start,
            end,
            amount,
            at,
        })
    }

    /// Adds every step of `other` (checked for overflow; nothing changes on error).
    pub fn add_skyline(&mut self, other: &Skyline) -> Result<(), SkylineError> {
        let mut result = self.clone();
        for seg in other.nonzero_segments() {
            result.add(seg.start, seg.end, seg.value)?;
        }
        *self = result;
        Ok(())
    }

    /// Subtracts every step of `other`, refusing (changing nothing) if a component would go
    /// below zero.
    pub fn subtract_skyline(&mut self, other: &Skyline) -> Result<(), SkylineError> {
        let mut result = self.clone();
        for seg in other.nonzero_segments() {
            result.subtract(seg.start, seg.end, seg.value)?;
        }
        *self = result;
        Ok(())
    }

    /// Applies `f` to the value of every piece in `[start, end)`; `Err(t)` names the first
    /// instant where `f` refused, and then nothing has changed.
    fn apply(
        &mut self,
        start: Time,
        end: Time,
        f: impl Fn(Resource) -> Option<Resource>,
    ) -> Result<(), Time> {
        if start >= end {
            return Ok(());
        }
        let mut updated: Vec<(Time, Resource)> = Vec::new();
        for seg in self.segments(start, end) {
            updated.push((seg.start, f(seg.value).ok_or(seg.start)?));
        }
        let after = self.value_at(end);
        for (t, v) in updated {
            self.steps.insert(t, v);
        }
        self.steps.insert(end, after);
        self.normalize_range(start, end);
        Ok(())
    }

    /// Drops the steps in `[from, to]` that repeat their predecessor's value.
    fn normalize_range(&mut self, from: Time, to: Time) {
        let mut previous = self
            .steps
            .range(..from)
            .next_back()
            .map_or(Resource::ZERO, |(_, v)| *v);
        let keys: Vec<Time> = self.steps.range(from..=to).map(|(t, _)| *t).collect();
        for t in keys {
            let Some(v) = self.steps.get(&t).copied() else {
                continue;
            };
            if v == previous {
                self.steps.remove(&t);
            } else {
                previous = v;
            }
        }
    }

    /// The pieces covering exactly `[from, to)`, zero pieces included, in time order.
    pub fn segments(&self, from: Time, to: Time) -> Vec<Segment> {
        let mut out = Vec::new();
        if from >= to {
            return out;
        }
        let mut cursor = from;
        let mut value = self.value_at(from);
        for (t, v) in self
            .steps
            .range((Bound::Excluded(from), Bound::Excluded(to)))
        {
            out.push(Segment {
                start: cursor,
                end: *t,
                value,
            });
            cursor = *t;
            value = *v;
        }
        out.push(Segment {
            start: cursor,
            end: to,
            value,
        });
        out
    }

    /// The non-zero pieces over the whole timeline (a piece that never ends stops at
    /// `Time(u64::MAX)`).
    pub fn nonzero_segments(&self) -> Vec<Segment> {
        let mut out = Vec::new();
        let mut iter = self.steps.iter().peekable();
        while let Some((t, v)) = iter.next() {
            let end = iter.peek().map_or(Time(u64::MAX), |(n, _)| **n);
            if *v != Resource::ZERO && *t < end {
                out.push(Segment {
                    start: *t,
                    end,
                    value: *v,
                });
            }
        }
        out
    }

    /// The componentwise maximum over `[from, to)` (zero for an empty range).
    pub fn max_over(&self, from: Time, to: Time) -> Resource {
        self.segments(from, to)
            .iter()
            .fold(None, |acc: Option<Resource>, s| {
                Some(acc.map_or(s.value, |a| a.cw_max(s.value)))
            })
            .unwrap_or(Resource::ZERO)
    }

    /// The componentwise minimum over `[from, to)` (zero for an empty range).
    pub fn min_over(&self, from: Time, to: Time) -> Resource {
        self.segments(from, to)
            .iter()
            .fold(None, |acc: Option<Resource>, s| {
                Some(acc.map_or(s.value, |a| a.cw_min(s.value)))
            })
            .unwrap_or(Resource::ZERO)
    }

    /// The integral over `[from, to)`, per component.
    pub fn integral(&self, from: Time, to: Time) -> Integral {
        let mut sum = [0i128; MAX_RESOURCE_TYPES];
        for seg in self.segments(from, to) {
            let len = i128::from(seg.end.0 - seg.start.0);
            for (i, s) in sum.iter_mut().enumerate() {
                *s += i128::from(seg.value.get(i)) * len;
            }
        }
        sum
    }

    /// This function with every value passed through `f` (`f(ZERO)` must be `ZERO`, as it is
    /// for any scaling).
    pub fn map(&self, f: impl Fn(Resource) -> Resource) -> Skyline {
        let mut out = Skyline {
            steps: self.steps.iter().map(|(t, v)| (*t, f(*v))).collect(),
        };
        out.normalize_all();
        out
    }

    /// This function over `[from, to)`, zero elsewhere.
    pub fn clip(&self, from: Time, to: Time) -> Skyline {
        let mut out = Skyline::new();
        for seg in self.segments(from, to) {
            out.steps.insert(seg.start, seg.value);
        }
        if from < to {
            out.steps.insert(to, Resource::ZERO);
        }
        out.normalize_all();
        out
    }

    /// Combines two skylines point by point.
    pub fn merge(a: &Skyline, b: &Skyline, op: MergeOp) -> Skyline {
        let combine = |x: Resource, y: Resource| match op {
            MergeOp::Add => x.saturating_add(y),
            MergeOp::Subtract => x.saturating_sub(y),
            MergeOp::Min => x.cw_min(y),
            MergeOp::Max => x.cw_max(y),
        };
        // One walk over both step lists in time order. Before every step both are zero, and
        // every operation maps (0, 0) to 0.
        let mut steps: Vec<(Time, Resource)> = Vec::with_capacity(a.steps.len() + b.steps.len());
        let (mut ia, mut ib) = (a.steps.iter().peekable(), b.steps.iter().peekable());
        let (mut va, mut vb) = (Resource::ZERO, Resource::ZERO);
        let mut previous = Resource::ZERO;
        loop {
            let t = match (ia.peek(), ib.peek()) {
                (None, None) => break,
                (Some((ta, _)), None) => **ta,
                (None, Some((tb, _))) => **tb,
                (Some((ta, _)), Some((tb, _))) => (**ta).min(**tb),
            };
            if let Some((_, v)) = ia.next_if(|(ta, _)| **ta == t) {
                va = *v;
            }
            if let Some((_, v)) = ib.next_if(|(tb, _)| **tb == t) {
                vb = *v;
            }
            let value = combine(va, vb);
            if value != previous {
                steps.push((t, value));
                previous = value;
            }
        }
        Skyline {
            steps: steps.into_iter().collect(),
        }
    }

    fn normalize_all(&mut self) {
        let mut previous = Resource::ZERO;
        self.steps.retain(|_, v| {
            let keep = *v != previous;
            previous = *v;
            keep
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(mb: i64) -> Resource {
        Resource::new(mb, 0)
    }

    #[test]
    fn adding_overlapping_intervals_steps_up_and_back_down() {
        let mut s = Skyline::new();
        s.add(Time(10), Time(20), mem(5)).unwrap();
        s.add(Time(15), Time(30), mem(3)).unwrap();
        assert_eq!(s.value_at(Time(9)), Resource::ZERO);
        assert_eq!(s.value_at(Time(10)), mem(5));
        assert_eq!(s.value_at(Time(15)), mem(8));
        assert_eq!(s.value_at(Time(20)), mem(3));
        assert_eq!(s.value_at(Time(30)), Resource::ZERO);
        assert_eq!(s.max_over(Time(0), Time(100)), mem(8));
        assert_eq!(s.latest_end(), Some(Time(30)));
        assert_eq!(s.earliest_start(), Some(Time(10)));
    }

    #[test]
    fn subtracting_what_was_added_gives_the_empty_skyline() {
        let mut s = Skyline::new();
        s.add(Time(10), Time(20), mem(5)).unwrap();
        s.add(Time(20), Time(30), mem(5)).unwrap();
        assert_eq!(s.step_count(), 2, "adjacent equal pieces merge");
        s.subtract(Time(10), Time(30), mem(5)).unwrap();
        assert!(s.is_empty());
        assert_eq!(s, Skyline::new());
    }

    #[test]
    fn a_subtraction_below_zero_is_refused_and_changes_nothing() {
        let mut s = Skyline::new();
        s.add(Time(0), Time(10), mem(5)).unwrap();
        let before = s.clone();
        let err = s.subtract(Time(5), Time(15), mem(5)).unwrap_err();
        assert_eq!(
            err,
            SkylineError::Negative {
                start: Time(5),
                end: Time(15),
                amount: mem(5),
                at: Time(10)
            }
        );
        assert_eq!(s, before);
    }

    #[test]
    fn an_overflowing_add_is_refused() {
        let mut s = Skyline::constant_from(Time(0), mem(i64::MAX));
        let before = s.clone();
        assert!(matches!(
            s.add(Time(1), Time(2), mem(1)),
            Err(SkylineError::Overflow { .. })
        ));
        assert_eq!(s, before);
    }

    #[test]
    fn merge_subtract_goes_negative_and_min_clips() {
        let cap = Skyline::constant_from(Time(0), mem(10));
        let used = Skyline::interval(Time(5), Time(8), mem(12));
        let avail = Skyline::merge(&cap, &used, MergeOp::Subtract);
        assert_eq!(avail.value_at(Time(6)), mem(-2));
        assert_eq!(avail.value_at(Time(9)), mem(10));
        let clipped = Skyline::merge(
            &avail,
            &Skyline::constant_from(Time(0), mem(4)),
            MergeOp::Min,
        );
        assert_eq!(clipped.value_at(Time(6)), mem(-2));
        assert_eq!(clipped.value_at(Time(9)), mem(4));
    }

    #[test]
    fn integral_counts_resource_times_milliseconds() {
        let mut s = Skyline::new();
        s.add(Time(0), Time(10), Resource::new(3, 1)).unwrap();
        s.add(Time(5), Time(20), Resource::new(1, 2)).unwrap();
        let i = s.integral(Time(0), Time(100));
        assert_eq!(i[0], 3 * 10 + 15);
        assert_eq!(i[1], 10 + 2 * 15);
        assert_eq!(s.integral(Time(5), Time(10))[0], 4 * 5);
    }

    #[test]
    fn segments_cover_the_range_exactly() {
        let s = Skyline::interval(Time(5), Time(8), mem(2));
        let segs = s.segments(Time(0), Time(10));
        assert_eq!(
            segs,
            vec![
                Segment {
                    start: Time(0),
                    end: Time(5),
                    value: Resource::ZERO
                },
                Segment {
                    start: Time(5),
                    end: Time(8),
                    value: mem(2)
                },
                Segment {
                    start: Time(8),
                    end: Time(10),
                    value: Resource::ZERO
                },
            ]
        );
        assert_eq!(
            s.clip(Time(6), Time(7)),
            Skyline::interval(Time(6), Time(7), mem(2))
        );
    }
}
