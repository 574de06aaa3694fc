//! Sharing policies (Hadoop's `SharingPolicy`): what a plan lets one user reserve.
//!
//! * `NoOverCommit`: the plan's committed resources never exceed its capacity.
//! * `CapacityOverTime` (Hadoop's default): that, plus a user's reservations never exceed
//!   `instantaneous-max-capacity` percent of the plan at any instant, nor `average-capacity`
//!   percent of it integrated over any window of `reservation-window` milliseconds.
//!
//! Both check a candidate against the plan with the candidate's previous version (an update)
//! taken out, so an update is a try-and-swap.

use thiserror::Error;
use weft_types::{Duration, Resource, Time, MAX_RESOURCE_TYPES};

use crate::skyline::{MergeOp, Skyline};

/// A percentage kept in thousandths of a percent, so comparisons are exact integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Percent {
    millipercent: u64,
}

/// A percentage that is negative, infinite or not a number.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{0} is not a percentage (expected a finite number >= 0)")]
pub struct BadPercent(pub f64);

impl Percent {
    /// 100%, Hadoop's default for both limits.
    pub const HUNDRED: Percent = Percent {
        millipercent: 100_000,
    };

    /// From a number of percent (`50` is half), rounded to a thousandth of a percent.
    pub fn from_percent(p: f64) -> Result<Percent, BadPercent> {
        if !p.is_finite() || p < 0.0 || p * 1000.0 > u64::MAX as f64 {
            return Err(BadPercent(p));
        }
        Ok(Percent {
            millipercent: (p * 1000.0).round() as u64,
        })
    }

    /// The number of percent.
    pub fn as_percent(self) -> f64 {
        self.millipercent as f64 / 1000.0
    }

    /// The fraction Hadoop prints in its messages (`0.5` for 50%).
    pub fn as_fraction(self) -> f64 {
        self.millipercent as f64 / 100_000.0
    }

    /// This share of `r`, rounded down per component (as Hadoop's `Resources.multiply`
    /// truncates).
    pub fn of(self, r: Resource) -> Resource {
        let mut out = Resource::ZERO;
        for i in 0..MAX_RESOURCE_TYPES {
            let scaled = i128::from(r.get(i)) * i128::from(self.millipercent) / 100_000;
            out.set(
                i,
                scaled.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64,
            );
        }
        out
    }

    fn millis(self) -> i128 {
        i128::from(self.millipercent)
    }
}

/// Hadoop's `CapacityOverTimePolicy` settings, with its defaults (100%, 100%, 24 h).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CapacityOverTime {
    /// `instantaneous-max-capacity`: a user's share of the plan at any instant.
    pub instantaneous_max: Percent,
    /// `average-capacity`: a user's share of the plan integrated over any window.
    pub average: Percent,
    /// `reservation-window`: the window's length (0 turns the average check off).
    pub window: Duration,
}

impl Default for CapacityOverTime {
    fn default() -> Self {
        CapacityOverTime {
            instantaneous_max: Percent::HUNDRED,
            average: Percent::HUNDRED,
            window: Duration(86_400_000),
        }
    }
}

/// The policy a plan checks every add and update against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingPolicy {
    /// Hadoop's `NoOverCommitPolicy`.
    NoOverCommit,
    /// Hadoop's `CapacityOverTimePolicy` (the default).
    CapacityOverTime(CapacityOverTime),
}

impl Default for SharingPolicy {
    fn default() -> Self {
        SharingPolicy::CapacityOverTime(CapacityOverTime::default())
    }
}

/// Why a policy refused a candidate.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PolicyViolation {
    /// The plan would hold more than its capacity.
    #[error("Resources at time {at} would be overcommitted ({total:?} over {capacity:?})")]
    OverCommit {
        /// The first instant over capacity.
        at: Time,
        /// What the plan would hold then.
        total: Resource,
        /// The capacity then.
        capacity: Resource,
    },
    /// The user would hold more than the instantaneous share.
    #[error("Instantaneous quota capacity {fraction} would be passed at time {at}")]
    Instantaneous {
        /// The first instant over the share.
        at: Time,
        /// The share, as Hadoop prints it (0.5 for 50%).
        fraction: f64,
    },
    /// The user's reservations over some window would exceed the average share.
    #[error("Integral (avg over time) quota capacity {fraction} over a window of {window_secs} seconds,  would be passed at time {at}")]
    Integral {
        /// The end of the first window found over the share.
        at: Time,
        /// The share, as Hadoop prints it.
        fraction: f64,
        /// The window in seconds.
        window_secs: u64,
    },
}

impl SharingPolicy {
    /// How long an ended reservation still counts against its user (Hadoop's
    /// `getValidWindow`; zero for a policy without memory).
    pub fn window(&self) -> Duration {
        match self {
            SharingPolicy::NoOverCommit => Duration(0),
            SharingPolicy::CapacityOverTime(c) => c.window,
        }
    }

    /// What `user` may still reserve at each instant under the instantaneous share, or `None`
    /// when the policy has no per-user limit. `user_load` is the user's committed skyline with
    /// the reservation being replaced already taken out. Hadoop's agents plan within this
    /// (`availableResources`), so they never propose what the instantaneous check refuses.
    pub(crate) fn user_headroom(&self, capacity: &Skyline, user_load: &Skyline) -> Option<Skyline> {
        match self {
            SharingPolicy::NoOverCommit => None,
            SharingPolicy::CapacityOverTime(c) => {
                let limit = capacity.map(|r| c.instantaneous_max.of(r));
                Some(Skyline::merge(&limit, user_load, MergeOp::Subtract))
            }
        }
    }

    /// Checks a candidate allocation over `[start, end)`. `total` and `user_total` are the
    /// plan's and the user's committed skylines with the candidate in place of its previous
    /// version.
    pub(crate) fn check(
        &self,
        capacity: &Skyline,
        total: &Skyline,
        user_total: &Skyline,
        start: Time,
        end: Time,
    ) -> Result<(), PolicyViolation> {
        // Only the candidate's span can change, so only it is checked (as Hadoop does).
        let capacity_here = capacity.clip(start, end);
        let user_here = user_total.clip(start, end);
        let room = Skyline::merge(&capacity_here, &total.clip(start, end), MergeOp::Subtract);
        if let Some(at) = first_negative(&room, start, end) {
            return Err(PolicyViolation::OverCommit {
                at,
                total: total.value_at(at),
                capacity: capacity.value_at(at),
            });
        }
        let SharingPolicy::CapacityOverTime(c) = self else {
            return Ok(());
        };
        let limit = capacity_here.map(|r| c.instantaneous_max.of(r));
        let headroom = Skyline::merge(&limit, &user_here, MergeOp::Subtract);
        if let Some(at) = first_negative(&headroom, start, end) {
            return Err(PolicyViolation::Instantaneous {
                at,
                fraction: c.instantaneous_max.as_fraction(),
            });
        }
        if let Some(at) = first_window_over_average(c, capacity, user_total, start, end) {
            return Err(PolicyViolation::Integral {
                at,
                fraction: c.average.as_fraction(),
                window_secs: c.window.0 / 1000,
            });
        }
        Ok(())
    }
}

/// The first instant in `[from, to)` where some component of `s` is negative.
fn first_negative(s: &Skyline, from: Time, to: Time) -> Option<Time> {
    s.segments(from, to)
        .into_iter()
        .find(|seg| seg.value.values().iter().any(|v| *v < 0))
        .map(|seg| seg.start)
}

/// The end of the first window `[t − W, t)` with `t` in `[start, end + W]` over which the
/// user's integral exceeds `average` percent of the capacity's integral, per component.
///
/// The window integral of a step function is piecewise linear in `t` with corners only where
/// `t` or `t − W` meets a step, so checking those corners (and the range's ends) is exact.
/// Hadoop samples every plan step (older code) or the user's steps plus multiples of W (newer
/// code) and compares memory then vcores lexicographically; Weft checks every resource type
/// exactly, which decides the same for memory-and-vcores plans on step-aligned allocations.
/// Hadoop's newest code also adds (instead of subtracting) the reservation's old version when
/// checking an update, counting it twice; Weft takes it out, as the other checks do.
fn first_window_over_average(
    c: &CapacityOverTime,
    capacity: &Skyline,
    user_total: &Skyline,
    start: Time,
    end: Time,
) -> Option<Time> {
    let w = c.window.0;
    if w == 0 {
        return None;
    }
    let last = end.0.saturating_add(w);
    // Windows ending in [start, end + W] begin at start − W or later: nothing before matters.
    let first = Time(start.0.saturating_sub(w));
    // The capacity is known from its first step on (the plan's creation: the RM's start, on
    // a wall clock long after 0); before it, the first value stands, as Hadoop's constant
    // capacity would.
    let (origin_at, origin) = capacity
        .steps()
        .next()
        .unwrap_or((Time::ZERO, Resource::ZERO));
    let user_total = &user_total.clip(first, Time(last));
    let capacity = &capacity.clip(first, Time(last));
    let mut corners: Vec<u64> = vec![start.0, last];
    for (t, _) in user_total.steps().chain(capacity.steps()) {
        for corner in [Some(t.0), t.0.checked_add(w)].into_iter().flatten() {
            if corner >= start.0 && corner <= last {
                corners.push(corner);
            }
        }
    }
    corners.sort_unstable();
    corners.dedup();
    let user = Cumulative::new(user_total);
    let cap = Cumulative::new(capacity);
    corners.into_iter().map(Time).find(|t| {
        let from = Time(t.0.saturating_sub(w));
        let used = user.between(from, *t);
        let mut allowed = cap.between(from, *t);
        // A window reaching back before the origin sees the origin's capacity there, as
        // Hadoop's constant capacity would be seen: the limit is never cut short.
        let window_start = i128::from(t.0) - i128::from(w);
        let before_origin =
            (i128::from(origin_at.0.min(t.0)) - window_start).clamp(0, i128::from(w));
        for (i, a) in allowed.iter_mut().enumerate() {
            *a = a.saturating_add(i128::from(origin.get(i)).saturating_mul(before_origin));
        }
        (0..MAX_RESOURCE_TYPES).any(|i| {
            used[i].saturating_mul(100_000) > allowed[i].saturating_mul(c.average.millis())
        })
    })
}

/// Prefix integrals of a skyline, for window integrals in logarithmic time.
struct Cumulative {
    /// (step start, value, integral from the first step up to this one).
    steps: Vec<(u64, Resource, [i128; MAX_RESOURCE_TYPES])>,
}

impl Cumulative {
    fn new(s: &Skyline) -> Cumulative {
        let mut steps = Vec::with_capacity(s.step_count());
        let mut acc = [0i128; MAX_RESOURCE_TYPES];
        let mut previous: Option<(u64, Resource)> = None;
        for (t, v) in s.steps() {
            if let Some((pt, pv)) = previous {
                let len = i128::from(t.0 - pt);
                for (i, a) in acc.iter_mut().enumerate() {
                    *a = a.saturating_add(i128::from(pv.get(i)).saturating_mul(len));
                }
            }
            steps.push((t.0, v, acc));
            previous = Some((t.0, v));
        }
        Cumulative { steps }
    }

    /// The integral from the origin up to `t`.
    fn upto(&self, t: Time) -> [i128; MAX_RESOURCE_TYPES] {
        let idx = self.steps.partition_point(|(s, _, _)| *s <= t.0);
        if idx == 0 {
            return [0; MAX_RESOURCE_TYPES];
        }
        let (s, v, acc) = self.steps[idx - 1];
        let len = i128::from(t.0 - s);
        let mut out = acc;
        for (i, o) in out.iter_mut().enumerate() {
            *o = o.saturating_add(i128::from(v.get(i)).saturating_mul(len));
        }
        out
    }

    fn between(&self, from: Time, to: Time) -> [i128; MAX_RESOURCE_TYPES] {
        let a = self.upto(from);
        let b = self.upto(to);
        let mut out = [0i128; MAX_RESOURCE_TYPES];
        for i in 0..MAX_RESOURCE_TYPES {
            out[i] = b[i].saturating_sub(a[i]);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(mb: i64) -> Resource {
        Resource::new(mb, 0)
    }

    fn policy(inst: f64, avg: f64, window: u64) -> SharingPolicy {
        SharingPolicy::CapacityOverTime(CapacityOverTime {
            instantaneous_max: Percent::from_percent(inst).unwrap(),
            average: Percent::from_percent(avg).unwrap(),
            window: Duration(window),
        })
    }

    #[test]
    fn percent_scales_down_and_refuses_nonsense() {
        let half = Percent::from_percent(50.0).unwrap();
        assert_eq!(half.of(Resource::new(1001, 3)), Resource::new(500, 1));
        assert_eq!(half.as_fraction(), 0.5);
        assert!(Percent::from_percent(-1.0).is_err());
        assert!(Percent::from_percent(f64::NAN).is_err());
    }

    #[test]
    fn overcommit_is_found_at_its_first_instant() {
        let cap = Skyline::constant_from(Time(0), mem(10));
        let total = Skyline::interval(Time(5), Time(9), mem(11));
        let err = SharingPolicy::NoOverCommit
            .check(&cap, &total, &total, Time(0), Time(20))
            .unwrap_err();
        assert_eq!(
            err,
            PolicyViolation::OverCommit {
                at: Time(5),
                total: mem(11),
                capacity: mem(10)
            }
        );
    }

    #[test]
    fn instantaneous_share_is_checked_per_user() {
        let cap = Skyline::constant_from(Time(0), mem(100));
        let user = Skyline::interval(Time(0), Time(10), mem(51));
        let p = policy(50.0, 100.0, 1000);
        let err = p.check(&cap, &user, &user, Time(0), Time(10)).unwrap_err();
        assert_eq!(
            err,
            PolicyViolation::Instantaneous {
                at: Time(0),
                fraction: 0.5
            }
        );
        let ok = Skyline::interval(Time(0), Time(10), mem(50));
        assert_eq!(p.check(&cap, &ok, &ok, Time(0), Time(10)), Ok(()));
    }

    /// A plan made long after time 0 (an RM on the wall clock) has no capacity recorded
    /// before its creation; a window reaching back before it still counts the plan's first
    /// capacity there, so the quota is not cut to the part of the window since the start.
    #[test]
    fn a_window_before_the_plan_was_made_sees_its_first_capacity() {
        // Capacity 100 MB from 1,000,000 ms; window 100 ms, average 50%: 5,000 MB·ms.
        let cap = Skyline::constant_from(Time(1_000_000), mem(100));
        let p = policy(100.0, 50.0, 100);
        // 100 MB for 40 ms right at the start: 4,000 in every window (the window ending at
        // 1,000,040 reaches 60 ms before the plan existed).
        let early = Skyline::interval(Time(1_000_000), Time(1_000_040), mem(100));
        assert_eq!(
            p.check(&cap, &early, &early, Time(1_000_000), Time(1_000_040)),
            Ok(())
        );
        let over = Skyline::interval(Time(1_000_000), Time(1_000_060), mem(100));
        assert!(p
            .check(&cap, &over, &over, Time(1_000_000), Time(1_000_060))
            .is_err());
    }

    #[test]
    fn the_average_is_an_integral_over_every_window() {
        // Capacity 100 MB, window 100 ms, average 50%: at most 5,000 MB·ms in any window.
        let cap = Skyline::constant_from(Time(0), mem(100));
        let p = policy(100.0, 50.0, 100);
        // 100 MB for 50 ms is exactly 5,000: allowed.
        let edge = Skyline::interval(Time(0), Time(50), mem(100));
        assert_eq!(p.check(&cap, &edge, &edge, Time(0), Time(50)), Ok(()));
        // A second block after a 10 ms gap: the window [0, 100) holds 50 + 40 ms = 9,000.
        let mut two = edge.clone();
        two.add(Time(60), Time(110), mem(100)).unwrap();
        let err = p.check(&cap, &two, &two, Time(60), Time(110)).unwrap_err();
        let PolicyViolation::Integral {
            at,
            fraction,
            window_secs,
        } = err
        else {
            panic!("expected the integral check, got {err:?}");
        };
        assert_eq!((fraction, window_secs), (0.5, 0));
        let used = two.integral(Time(at.0.saturating_sub(100)), at)[0];
        assert!(used > 5_000, "the window ending at {at} holds {used}");
        // After a 100 ms gap every window holds at most 5,000: allowed.
        let mut spaced = edge.clone();
        spaced.add(Time(150), Time(200), mem(100)).unwrap();
        assert_eq!(
            p.check(&cap, &spaced, &spaced, Time(150), Time(200)),
            Ok(())
        );
    }
}
