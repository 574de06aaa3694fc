//! The daemon's only clock: wall-clock milliseconds since the Unix epoch, passed to the core as
//! `now` (so REST times are epoch milliseconds, as in YARN).

use weft_types::Time;

/// Now, as epoch milliseconds.
#[allow(clippy::disallowed_methods)]
pub(crate) fn now() -> Time {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    Time(since.as_millis() as u64)
}

/// A secret from the process's entropy for AM tokens (std seeds `RandomState` from the OS).
pub(crate) fn token_secret() -> u128 {
    use std::hash::{BuildHasher, Hasher};
    let half = || {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u64(now().as_millis());
        h.finish() as u128
    };
    (half() << 64) | half()
}
