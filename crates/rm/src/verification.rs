//! Trust, but verify, in production: every `weft.scheduler.verify-interval-ms` (default one
//! minute, 0 = never) the driver has the scheduler recompute every aggregate and order from
//! scratch. Drift is logged naming what differed, counted for `/metrics`, and repaired by
//! rebuilding the scheduler's derived state.

use std::time::{Duration, Instant};

use weft_rm_core::RmCore;
use weft_types::Time;

/// The property (yarn-site.xml or the TOML file's `[properties]`) that sets the interval.
pub(crate) const INTERVAL_PROPERTY: &str = "weft.scheduler.verify-interval-ms";
/// The interval when the property is not set.
pub(crate) const DEFAULT_INTERVAL_MS: u64 = 60_000;
/// At most this many differences are named in one log line.
const NAMED: usize = 20;

/// What the verifications found so far, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct VerifyStats {
    /// Verifications run.
    pub(crate) runs: u64,
    /// Differences the last one found (0: consistent).
    pub(crate) last_drift: u64,
    /// Differences found by all of them (each was repaired).
    pub(crate) drift_total: u64,
    /// Seconds the last one took.
    pub(crate) last_seconds: f64,
}

impl VerifyStats {
    fn record(&mut self, drift: &[String], took: Duration) {
        self.runs += 1;
        self.last_drift = drift.len() as u64;
        self.drift_total += drift.len() as u64;
        self.last_seconds = took.as_secs_f64();
    }
}

/// When the next verification is due.
pub(crate) struct Verifier {
    /// 0: never.
    interval_ms: u64,
    /// `None` until the first tick, which starts the first interval.
    next: Option<Time>,
}

impl Verifier {
    pub(crate) fn new(interval_ms: u64) -> Verifier {
        Verifier {
            interval_ms,
            next: None,
        }
    }

    /// Whether a verification is due at `now`; if so, the next one is an interval later.
    fn due(&mut self, now: Time) -> bool {
        if self.interval_ms == 0 {
            return false;
        }
        let interval = weft_types::Duration::from_millis(self.interval_ms);
        match self.next {
            Some(at) if now < at => false,
            Some(_) => {
                self.next = Some(now + interval);
                true
            }
            None => {
                self.next = Some(now + interval);
                false
            }
        }
    }

    /// Verifies `core`'s scheduler when it is due, repairing and logging any drift.
    pub(crate) fn tick(&mut self, core: &mut RmCore, now: Time, stats: &mut VerifyStats) {
        if !self.due(now) {
            return;
        }
        let start = stopwatch();
        let drift = core.verify_scheduler();
        let took = start.elapsed();
        stats.record(&drift, took);
        if !drift.is_empty() {
            tracing::warn!(
                differences = drift.len(),
                "the scheduler's state differed from a recomputation from scratch and was rebuilt: {}",
                describe(&drift)
            );
        }
    }
}

/// The differences, one after the other, the first [`NAMED`] of them.
fn describe(drift: &[String]) -> String {
    let mut text = drift
        .iter()
        .take(NAMED)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("; ");
    if drift.len() > NAMED {
        text.push_str(&format!("; and {} more", drift.len() - NAMED));
    }
    text
}

/// The clock for durations only; the core never sees it.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verifications_come_an_interval_apart_from_the_first_tick() {
        let mut v = Verifier::new(1000);
        let due: Vec<u64> = (0..=35)
            .map(|i| Time(5000 + i * 100))
            .filter(|t| v.due(*t))
            .map(|t| t.as_millis())
            .collect();
        assert_eq!(due, vec![6000, 7000, 8000]);
    }

    #[test]
    fn an_interval_of_zero_never_verifies() {
        let mut v = Verifier::new(0);
        assert!((0..100).all(|i| !v.due(Time(i * 60_000))));
    }

    #[test]
    fn a_log_line_names_the_first_differences_and_counts_the_rest() {
        let drift: Vec<String> = (1..=22).map(|i| format!("d{i}")).collect();
        let text = describe(&drift);
        assert!(text.starts_with("d1; d2; "), "{text}");
        assert!(text.ends_with("d20; and 2 more"), "{text}");
        assert_eq!(describe(&drift[..1]), "d1");
    }

    #[test]
    fn stats_keep_the_last_findings_and_the_total() {
        let mut s = VerifyStats::default();
        s.record(
            &["a".to_string(), "b".to_string()],
            Duration::from_millis(3),
        );
        s.record(&[], Duration::from_millis(1));
        assert_eq!((s.runs, s.last_drift, s.drift_total), (2, 0, 2));
        assert!((s.last_seconds - 0.001).abs() < 1e-9);
    }
}
