//! Time as the scheduler sees it: milliseconds passed in by the driver.
//!
//! The RM passes wall-clock milliseconds, the simulator virtual ones; the core never reads a clock.

use std::fmt;
use std::ops::{Add, Sub};

/// A point in time, in milliseconds since an origin chosen by the driver.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of time in milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

impl Time {
    /// The origin.
    pub const ZERO: Time = Time(0);

    /// Milliseconds since the origin.
    pub fn as_millis(self) -> u64 {
        self.0
    }

    /// Time elapsed since `earlier` (zero when `earlier` is later).
    pub fn since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    /// A span of `ms` milliseconds.
    pub fn from_millis(ms: u64) -> Duration {
        Duration(ms)
    }

    /// A span of `s` seconds.
    pub fn from_secs(s: u64) -> Duration {
        Duration(s.saturating_mul(1000))
    }

    /// The span in milliseconds.
    pub fn as_millis(self) -> u64 {
        self.0
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    fn sub(self, other: Time) -> Duration {
        self.since(other)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}ms", self.0)
    }
}
