//! The one clock the simulator uses: the scheduler's CPU time, measured around each call into
//! it. It is injected because the library must not read the wall clock itself.

/// A monotonic nanosecond counter supplied by the caller (the CLI passes one backed by
/// `std::time::Instant`).
pub trait CpuClock {
    /// Nanoseconds since an arbitrary origin; must never go backwards.
    fn now_nanos(&mut self) -> u64;
}

/// The deterministic clock: always 0, so `scheduler_cpu_ms` is 0 and runs are byte-identical.
#[derive(Clone, Copy, Debug, Default)]
pub struct ZeroClock;

impl CpuClock for ZeroClock {
    fn now_nanos(&mut self) -> u64 {
        0
    }
}

impl<F: FnMut() -> u64> CpuClock for F {
    fn now_nanos(&mut self) -> u64 {
        self()
    }
}
