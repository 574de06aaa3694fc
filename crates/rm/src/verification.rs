//! Trust, but verify, in production: every `weft.scheduler.verify-interval-ms` (default one
//! minute, 0 = never) the driver has the scheduler recompute every aggregate and order from
//! scratch. Drift is logged naming what differed, counted for `/metrics`, and repaired by
//! rebuilding the scheduler's derived state.
//!
//! A round runs in slices (`RmCore::verify_scheduler_slice`, [`SLICE_CONTAINERS`] containers
//! walked at most), one per driver tick between the driver's other jobs: done at once, a round
//! blocked every heartbeat and Allocate for ~0.15 s at 12,000 nodes and a million containers,
//! and its slices back to back still lifted heartbeat p99 to 0.4-0.9 s around each round in
//! rm-bench's jittered preset (0.13 s with verification off).

use std::time::{Duration, Instant};

use weft_rm_core::RmCore;
use weft_sched::VerifyRound;
use weft_types::Time;

/// The property (yarn-site.xml or the TOML file's `[properties]`) that sets the interval.
pub(crate) const INTERVAL_PROPERTY: &str = "weft.scheduler.verify-interval-ms";
/// The interval when the property is not set.
pub(crate) const DEFAULT_INTERVAL_MS: u64 = 60_000;
/// At most this many differences are named in one log line.
const NAMED: usize = 20;
/// Containers one slice walks at most: at the meituan preset's size in the simulator
/// (`verify_cost 1.0 60 10 20000`) such a slice takes ~0.7 ms on average, a round of ~2.4M
/// list entries (each container is on its app's and its node's list) is ~120 slices, and the
/// longest slices are the checks of the whole (the candidate orders, ~2-7 ms).
pub(crate) const SLICE_CONTAINERS: usize = 20_000;

/// What the verifications found so far, for `/metrics`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct VerifyStats {
    /// Verification rounds completed.
    pub(crate) runs: u64,
    /// Differences the last one found (0: consistent).
    pub(crate) last_drift: u64,
    /// Differences found by all of them (each was repaired).
    pub(crate) drift_total: u64,
    /// Seconds the last one took, all its slices together.
    pub(crate) last_seconds: f64,
    /// Seconds its longest slice took (the longest the driver was held up by it).
    pub(crate) last_longest_slice_seconds: f64,
    /// How many slices it took.
    pub(crate) last_slices: u64,
}

impl VerifyStats {
    fn record(&mut self, drift: &[String], round: &Round) {
        self.runs += 1;
        self.last_drift = drift.len() as u64;
        self.drift_total += drift.len() as u64;
        self.last_seconds = round.took.as_secs_f64();
        self.last_longest_slice_seconds = round.longest.as_secs_f64();
        self.last_slices = round.slices;
    }
}

/// A round under way: its progress and its slices' time.
#[derive(Default)]
struct Round {
    progress: VerifyRound,
    slices: u64,
    took: Duration,
    longest: Duration,
}

/// When the next verification is due, and the round under way.
pub(crate) struct Verifier {
    /// 0: never.
    interval_ms: u64,
    /// `None` until the first tick, which starts the first interval.
    next: Option<Time>,
    /// Containers a slice walks at most.
    budget: usize,
    round: Option<Round>,
    /// Whether the round may run its next slice: once per driver tick, so a round's ~0.1-0.4 s
    /// of CPU (at seed 003's scale) is spread over ~10 s instead of being taken in the one
    /// or two seconds the slices would fill back to back (which, on an RM near its core's
    /// limit, still lifted heartbeat p99 from ~0.13 s to ~0.4-0.9 s around each round).
    slice_granted: bool,
}

impl Verifier {
    pub(crate) fn new(interval_ms: u64) -> Verifier {
        Verifier {
            interval_ms,
            next: None,
            budget: SLICE_CONTAINERS,
            round: None,
            slice_granted: false,
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

    /// Starts a round when one is due at `now` (unless one is still under way, which goes on).
    pub(crate) fn tick(&mut self, now: Time) {
        if self.due(now) && self.round.is_none() {
            self.round = Some(Round::default());
        }
        self.slice_granted = self.round.is_some();
    }

    /// Whether the round's next slice may run now: a round is under way and no slice has run
    /// since the last tick.
    pub(crate) fn slice_due(&self) -> bool {
        self.slice_granted && self.round.is_some()
    }

    /// Whether a round is under way (the driver asks `slice_due`, which paces the slices).
    #[cfg(test)]
    pub(crate) fn in_round(&self) -> bool {
        self.round.is_some()
    }

    /// Runs the round's next slice on `core`; when that ends the round, records it in
    /// `stats` and logs any drift (which `core` has repaired). Returns the slice's time.
    pub(crate) fn run_slice(&mut self, core: &mut RmCore, stats: &mut VerifyStats) -> Duration {
        let Some(round) = &mut self.round else {
            return Duration::ZERO;
        };
        self.slice_granted = false;
        let start = stopwatch();
        let done = core.verify_scheduler_slice(&mut round.progress, self.budget);
        let took = start.elapsed();
        round.slices += 1;
        round.took += took;
        round.longest = round.longest.max(took);
        if done {
            if let Some(round) = self.round.take() {
                let drift = &round.progress.drift;
                stats.record(drift, &round);
                if !drift.is_empty() {
                    tracing::warn!(
                        differences = drift.len(),
                        "the scheduler's state differed from a recomputation from scratch and was rebuilt: {}",
                        describe(drift)
                    );
                }
            }
        }
        took
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
        let round = |slices, each_ms| Round {
            slices,
            took: Duration::from_millis(each_ms * slices),
            longest: Duration::from_millis(each_ms),
            ..Round::default()
        };
        s.record(&["a".to_string(), "b".to_string()], &round(2, 3));
        s.record(&[], &round(4, 1));
        assert_eq!((s.runs, s.last_drift, s.drift_total), (2, 0, 2));
        assert!((s.last_seconds - 0.004).abs() < 1e-9);
        assert!((s.last_longest_slice_seconds - 0.001).abs() < 1e-9);
        assert_eq!(s.last_slices, 4);
    }

    #[test]
    fn a_round_runs_in_slices_and_is_recorded_when_it_ends() {
        let config = weft_rm_core::RmConfig::new(weft_sched::SchedulerConfig::default());
        let mut core = RmCore::new(config, 1, Time(1));
        let mut v = Verifier::new(1000);
        let mut stats = VerifyStats::default();
        v.tick(Time(0));
        v.tick(Time(1000));
        let mut slices = 0;
        while v.in_round() {
            v.run_slice(&mut core, &mut stats);
            slices += 1;
            assert!(slices < 100, "the round ends");
        }
        assert_eq!(
            (stats.runs, stats.last_drift, stats.last_slices),
            (1, 0, slices)
        );
        assert!(
            slices >= 3,
            "the checks of the whole take slices of their own"
        );
        assert!(stats.last_longest_slice_seconds <= stats.last_seconds);
    }

    #[test]
    fn a_due_tick_starts_a_round_and_a_round_under_way_goes_on() {
        let mut v = Verifier::new(1000);
        v.tick(Time(0));
        assert!(!v.in_round(), "the first tick starts the first interval");
        v.tick(Time(1000));
        assert!(v.in_round());
        v.tick(Time(2000));
        assert!(v.in_round(), "still the one round");
    }

    #[test]
    fn a_round_runs_one_slice_per_tick() {
        let config = weft_rm_core::RmConfig::new(weft_sched::SchedulerConfig::default());
        let mut core = RmCore::new(config, 1, Time(1));
        let mut stats = VerifyStats::default();
        let mut v = Verifier::new(1000);
        v.tick(Time(0));
        assert!(!v.slice_due(), "no round yet");
        v.tick(Time(1000));
        assert!(v.slice_due(), "the round's first slice");
        v.run_slice(&mut core, &mut stats);
        assert!(
            !v.slice_due() || !v.in_round(),
            "the next slice waits for the next tick"
        );
        let mut ticks = 1;
        while v.in_round() {
            v.tick(Time(1000 + 100 * ticks));
            assert!(v.slice_due());
            v.run_slice(&mut core, &mut stats);
            ticks += 1;
            assert!(ticks < 100, "the round ends");
        }
        assert!(!v.slice_due(), "no slice after the round");
        assert_eq!(stats.last_slices, ticks);
    }
}
