//! The command's only clock: the process's monotonic clock, used to measure the scheduler's
//! CPU time in simulations. This is the single place allowed to read it.

use std::time::Instant;
use weft_sim::CpuClock;

/// Nanoseconds since the clock was made.
pub(crate) struct WallClock(Instant);

impl WallClock {
    /// A clock starting now.
    #[allow(clippy::disallowed_methods)] // the driver's clock module is where time is read
    pub(crate) fn start() -> WallClock {
        WallClock(Instant::now())
    }
}

impl CpuClock for WallClock {
    fn now_nanos(&mut self) -> u64 {
        u64::try_from(self.0.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }
}
