//! The crate's only clock: wall time of admissions and of whole runs (the planning-cost
//! metric). Virtual time never comes from here; this is the single place allowed to read it.

use std::time::Instant;

/// Wall time since it was started.
pub(crate) struct Stopwatch(Instant);

impl Stopwatch {
    #[allow(clippy::disallowed_methods)] // the driver's clock module is where time is read
    pub(crate) fn start() -> Stopwatch {
        Stopwatch(Instant::now())
    }

    pub(crate) fn micros(&self) -> f64 {
        self.0.elapsed().as_secs_f64() * 1e6
    }

    pub(crate) fn seconds(&self) -> f64 {
        self.0.elapsed().as_secs_f64()
    }
}
