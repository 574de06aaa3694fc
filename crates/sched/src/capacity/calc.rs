//! Hadoop's two resource calculators (capacity spec §2): every comparison, ratio and rounding
//! of the Capacity Scheduler goes through one of them, and the choice changes results.
//!
//! * `Default` (`DefaultResourceCalculator`) looks at memory alone. Every resource it builds
//!   carries vcores 1 when its memory is positive, else 0, as Hadoop's does (REST shows
//!   `{memory: 2048, vCores: 1}` for an AM limit); the other types are 0.
//! * `Dominant` (`DominantResourceCalculator`) looks at every type in use, by shares of the
//!   cluster.

use std::cmp::Ordering;

use crate::lanes::Resource;
use weft_config::capacity::ResourceCalculator;

/// One of Hadoop's resource calculators over the first `types` resource types.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Calc {
    dominant: bool,
    types: usize,
}

impl Calc {
    pub(crate) fn new(kind: ResourceCalculator, types: usize) -> Calc {
        Calc {
            dominant: kind == ResourceCalculator::Dominant,
            types: types.max(2),
        }
    }

    /// A memory-only result in Hadoop's shape (vcores 1 when memory is positive).
    pub(crate) fn memory(mb: i64) -> Resource {
        Resource::new(mb, i64::from(mb > 0))
    }

    /// Per type `f`, over the types in use (the rest 0).
    fn per_type(&self, f: impl Fn(usize) -> i64) -> Resource {
        let mut out = Resource::ZERO;
        for i in 0..self.types {
            out.set(i, f(i));
        }
        out
    }

    /// The shares of `r` in `cluster`, largest first (a type with a zero cluster value has
    /// share +Inf and is skipped).
    fn shares(&self, cluster: &Resource, r: &Resource) -> Vec<f64> {
        let mut s: Vec<f64> = (0..self.types)
            .filter(|i| cluster.get(*i) != 0)
            .map(|i| r.get(i) as f64 / cluster.get(i) as f64)
            .collect();
        s.sort_by(|a, b| b.total_cmp(a));
        s
    }

    /// `rc.compare(cluster, a, b)`.
    pub(crate) fn compare(&self, cluster: &Resource, a: &Resource, b: &Resource) -> Ordering {
        if !self.dominant {
            return a.memory_mb().cmp(&b.memory_mb());
        }
        if (0..self.types).all(|i| a.get(i) == b.get(i)) {
            return Ordering::Equal;
        }
        if (0..self.types).all(|i| cluster.get(i) == 0) {
            let a_over = (0..self.types).all(|i| a.get(i) >= b.get(i));
            let b_over = (0..self.types).all(|i| b.get(i) >= a.get(i));
            return match (a_over, b_over) {
                (true, false) => Ordering::Greater,
                (false, true) => Ordering::Less,
                _ => Ordering::Equal,
            };
        }
        let (sa, sb) = (self.shares(cluster, a), self.shares(cluster, b));
        for (x, y) in sa.iter().zip(&sb) {
            match x.total_cmp(y) {
                Ordering::Equal => continue,
                other => return other,
            }
        }
        Ordering::Equal
    }

    pub(crate) fn lt(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) == Ordering::Less
    }

    pub(crate) fn gt(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) == Ordering::Greater
    }

    pub(crate) fn ge(&self, cluster: &Resource, a: &Resource, b: &Resource) -> bool {
        self.compare(cluster, a, b) != Ordering::Less
    }

    /// `max_rc`: the whole vector that compares larger (`a` on a tie).
    pub(crate) fn max(&self, cluster: &Resource, a: Resource, b: Resource) -> Resource {
        if self.lt(cluster, &a, &b) {
            b
        } else {
            a
        }
    }

    /// `min_rc`: the whole vector that compares smaller (`a` on a tie).
    pub(crate) fn min(&self, cluster: &Resource, a: Resource, b: Resource) -> Resource {
        if self.gt(cluster, &a, &b) {
            b
        } else {
            a
        }
    }

    /// `rc.fitsIn(a, b)`: memory alone, or every type.
    pub(crate) fn fits(&self, a: &Resource, b: &Resource) -> bool {
        if !self.dominant {
            return a.memory_mb() <= b.memory_mb();
        }
        (0..self.types).all(|i| a.get(i) <= b.get(i))
    }

    /// `rc.ratio(a, b)`: memory over memory, or the largest per-type ratio.
    pub(crate) fn ratio(&self, a: &Resource, b: &Resource) -> f64 {
        if !self.dominant {
            return a.memory_mb() as f64 / b.memory_mb() as f64;
        }
        (0..self.types)
            .map(|i| a.get(i) as f64 / b.get(i) as f64)
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// `rc.divide(cluster, a, b)`: memory over memory, or dominant share over dominant share.
    pub(crate) fn divide(&self, cluster: &Resource, a: &Resource, b: &Resource) -> f64 {
        if !self.dominant {
            return a.memory_mb() as f64 / b.memory_mb() as f64;
        }
        let top = |r: &Resource| self.shares(cluster, r).first().copied().unwrap_or(0.0);
        top(a) / top(b)
    }

    /// `rc.computeAvailableContainers(avail, size)`: how many `size` fit in `avail`.
    pub(crate) fn available_containers(&self, avail: &Resource, size: &Resource) -> i64 {
        if !self.dominant {
            return if size.memory_mb() == 0 {
                i64::MAX
            } else {
                avail.memory_mb() / size.memory_mb()
            };
        }
        (0..self.types)
            .filter(|i| size.get(*i) != 0)
            .map(|i| avail.get(i) / size.get(i))
            .min()
            .unwrap_or(i64::MAX)
    }

    pub(crate) fn round_up_value(v: i64, step: i64) -> i64 {
        if step <= 0 {
            return v;
        }
        v.div_euclid(step)
            .saturating_add(i64::from(v.rem_euclid(step) != 0))
            * step
    }

    pub(crate) fn round_down_value(v: i64, step: i64) -> i64 {
        if step <= 0 {
            return v;
        }
        v.div_euclid(step) * step
    }

    pub(crate) fn round_up(&self, r: Resource, step: Resource) -> Resource {
        if !self.dominant {
            return Calc::memory(Calc::round_up_value(r.memory_mb(), step.memory_mb()));
        }
        self.per_type(|i| Calc::round_up_value(r.get(i), step.get(i)))
    }

    pub(crate) fn round_down(&self, r: Resource, step: Resource) -> Resource {
        if !self.dominant {
            return Calc::memory(Calc::round_down_value(r.memory_mb(), step.memory_mb()));
        }
        self.per_type(|i| Calc::round_down_value(r.get(i), step.get(i)))
    }

    /// `multiplyAndNormalizeUp(r, f, step)`.
    pub(crate) fn multiply_normalize_up(&self, r: Resource, f: f64, step: Resource) -> Resource {
        if !self.dominant {
            let v = (r.memory_mb() as f64 * f + 0.5) as i64;
            return Calc::memory(Calc::round_up_value(v, step.memory_mb()));
        }
        self.per_type(|i| Calc::round_up_value((r.get(i) as f64 * f).ceil() as i64, step.get(i)))
    }

    /// `multiplyAndNormalizeDown(r, f, step)`.
    pub(crate) fn multiply_normalize_down(&self, r: Resource, f: f64, step: Resource) -> Resource {
        if !self.dominant {
            let v = (r.memory_mb() as f64 * f) as i64;
            return Calc::memory(Calc::round_down_value(v, step.memory_mb()));
        }
        self.per_type(|i| Calc::round_down_value((r.get(i) as f64 * f) as i64, step.get(i)))
    }

    /// `multiplyAndRoundDown(r, f)`: per type truncation, no step (both calculators).
    pub(crate) fn multiply_round_down(&self, r: Resource, f: f64) -> Resource {
        self.per_type(|i| (r.get(i) as f64 * f) as i64)
    }

    /// `divideAndCeil(r, n)` (0 when `n` is 0, as Hadoop's).
    pub(crate) fn divide_and_ceil(&self, r: Resource, n: f64) -> Resource {
        let div = |v: i64| {
            if n == 0.0 {
                0
            } else {
                (v as f64 / n).ceil() as i64
            }
        };
        if !self.dominant {
            return Calc::memory(div(r.memory_mb()));
        }
        self.per_type(|i| div(r.get(i)))
    }

    /// Whether the calculator compares every type (else memory alone).
    pub(crate) fn is_dominant(&self) -> bool {
        self.dominant
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;

    const DEFAULT: Calc = Calc {
        dominant: false,
        types: 2,
    };
    const DOMINANT: Calc = Calc {
        dominant: true,
        types: 2,
    };

    #[test]
    fn default_calculator_rounds_memory_and_shows_one_vcore() {
        let step = Resource::new(1024, 1);
        // Spec §5.9: AM limit roundUp(trunc(16384 × 0.1 + 0.5) = 1638, 1024) = 2048.
        assert_eq!(
            DEFAULT.multiply_normalize_up(Resource::new(16384, 16), 0.1, step),
            Resource::new(2048, 1)
        );
        assert_eq!(
            DEFAULT.round_up(Resource::new(9830, 9), step),
            Resource::new(10240, 1)
        );
        assert_eq!(
            DEFAULT.round_down(Resource::new(1023, 9), step),
            Resource::ZERO
        );
        assert_eq!(
            DEFAULT.divide_and_ceil(Resource::new(5, 0), 2.0),
            Resource::new(3, 1)
        );
        // vcores never enter a Default comparison.
        assert!(DEFAULT.fits(&Resource::new(1024, 64), &Resource::new(1024, 1)));
    }

    #[test]
    fn dominant_calculator_compares_dominant_shares_then_the_others() {
        let cluster = Resource::new(10_000, 10);
        // a: shares (0.5, 0.1); b: (0.2, 0.5): dominant 0.5 each, then 0.1 < 0.2.
        let (a, b) = (Resource::new(5_000, 1), Resource::new(2_000, 5));
        assert_eq!(DOMINANT.compare(&cluster, &a, &b), Ordering::Less);
        assert!(!DOMINANT.fits(&Resource::new(1024, 64), &Resource::new(1024, 1)));
        assert_eq!(
            DOMINANT.available_containers(&Resource::new(8192, 3), &Resource::new(2048, 1)),
            3
        );
    }
}
