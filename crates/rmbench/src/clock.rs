//! The bench's only clock read: it measures real elapsed time, which is its whole purpose.

use std::time::Instant;

/// Now, on the monotonic clock.
#[allow(clippy::disallowed_methods)] // the bench's one clock module, as the daemons' clock.rs
pub(crate) fn now() -> Instant {
    Instant::now()
}
