//! Samples taken during a run and what is computed from them.

use serde::Serialize;

/// One timed RPC: when it was sent (ms since the run's origin) and how long it took (µs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Sample {
    /// Send time, ms since the origin.
    pub(crate) at_ms: u64,
    /// Round-trip time, µs.
    pub(crate) micros: u32,
}

/// Latency percentiles in milliseconds.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Percentiles {
    /// How many samples.
    pub count: usize,
    /// Median.
    pub p50_ms: f64,
    /// 90th percentile.
    pub p90_ms: f64,
    /// 99th percentile.
    pub p99_ms: f64,
    /// Slowest.
    pub max_ms: f64,
}

/// Percentiles of the samples sent within `[from_ms, to_ms)` (nearest-rank).
pub(crate) fn percentiles(samples: &[Sample], from_ms: u64, to_ms: u64) -> Percentiles {
    let mut v: Vec<u32> = samples
        .iter()
        .filter(|s| s.at_ms >= from_ms && s.at_ms < to_ms)
        .map(|s| s.micros)
        .collect();
    if v.is_empty() {
        return Percentiles::default();
    }
    v.sort_unstable();
    let rank = |p: f64| {
        let i = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1;
        f64::from(v[i]) / 1000.0
    };
    Percentiles {
        count: v.len(),
        p50_ms: rank(0.50),
        p90_ms: rank(0.90),
        p99_ms: rank(0.99),
        max_ms: f64::from(v[v.len() - 1]) / 1000.0,
    }
}

/// Events counted by when they happened: `(ms since origin, how many)`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Timeline {
    events: Vec<(u64, u64)>,
}

impl Timeline {
    /// Records `n` events at `at_ms`.
    pub(crate) fn add(&mut self, at_ms: u64, n: u64) {
        if n > 0 {
            self.events.push((at_ms, n));
        }
    }

    /// Appends another timeline's events.
    pub(crate) fn extend(&mut self, other: &Timeline) {
        self.events.extend_from_slice(&other.events);
    }

    /// Events within `[from_ms, to_ms)`.
    pub(crate) fn count(&self, from_ms: u64, to_ms: u64) -> u64 {
        self.events
            .iter()
            .filter(|(t, _)| *t >= from_ms && *t < to_ms)
            .map(|(_, n)| n)
            .sum()
    }

    /// Events per whole second from `from_ms` (partial last second left out).
    pub(crate) fn per_second(&self, from_ms: u64, to_ms: u64) -> Vec<u64> {
        let seconds = to_ms.saturating_sub(from_ms) / 1000;
        let mut out = vec![0; usize::try_from(seconds).unwrap_or(0)];
        for (t, n) in &self.events {
            if *t < from_ms {
                continue;
            }
            let i = usize::try_from((t - from_ms) / 1000).unwrap_or(usize::MAX);
            if let Some(slot) = out.get_mut(i) {
                *slot += n;
            }
        }
        out
    }

    /// Events in `count` consecutive buckets of `width_ms` from `from_ms`.
    pub(crate) fn buckets(&self, from_ms: u64, width_ms: u64, count: usize) -> Vec<u64> {
        let mut out = vec![0; count];
        for (t, n) in &self.events {
            let Some(offset) = t.checked_sub(from_ms) else {
                continue;
            };
            let i = usize::try_from(offset / width_ms.max(1)).unwrap_or(usize::MAX);
            if let Some(slot) = out.get_mut(i) {
                *slot += n;
            }
        }
        out
    }

    /// The busiest 1-second sliding window within `[from_ms, to_ms)`, scanned at 100 ms steps.
    pub(crate) fn peak_1s(&self, from_ms: u64, to_ms: u64) -> u64 {
        if to_ms < from_ms + 1000 {
            return self.count(from_ms, to_ms);
        }
        let steps = usize::try_from((to_ms - from_ms) / 100).unwrap_or(0);
        let mut buckets = vec![0u64; steps + 1];
        for (t, n) in &self.events {
            if *t >= from_ms && *t < to_ms {
                let i = usize::try_from((t - from_ms) / 100).unwrap_or(usize::MAX);
                if let Some(b) = buckets.get_mut(i) {
                    *b += n;
                }
            }
        }
        buckets
            .windows(10)
            .map(|w| w.iter().sum())
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_nearest_rank_within_the_window() {
        let mut samples: Vec<Sample> = (1..=100)
            .map(|i| Sample {
                at_ms: 1000,
                micros: i * 1000,
            })
            .collect();
        samples.push(Sample {
            at_ms: 5,
            micros: 9_999_000,
        });
        let p = percentiles(&samples, 500, 2000);
        assert_eq!(p.count, 100);
        assert_eq!(p.p50_ms, 50.0);
        assert_eq!(p.p90_ms, 90.0);
        assert_eq!(p.p99_ms, 99.0);
        assert_eq!(p.max_ms, 100.0);
        assert_eq!(percentiles(&samples, 0, 1), Percentiles::default());
    }

    #[test]
    fn timeline_counts_windows_seconds_and_peaks() {
        let mut t = Timeline::default();
        t.add(100, 5);
        t.add(1_050, 10);
        t.add(1_950, 20);
        t.add(2_500, 1);
        t.add(3_000, 0);
        assert_eq!(t.count(1_000, 3_000), 31);
        assert_eq!(t.per_second(0, 3_000), vec![5, 30, 1]);
        assert_eq!(t.peak_1s(0, 3_000), 30);
        assert_eq!(t.buckets(1_000, 500, 4), vec![10, 20, 0, 1]);
        assert_eq!(t.buckets(0, 2_000, 1), vec![35]);
        let mut u = Timeline::default();
        u.extend(&t);
        assert_eq!(u.count(0, u64::MAX), 36);
    }
}
