//! The daemon's only wall-clock read (container creation times for the RM).

/// Milliseconds since the Unix epoch.
#[allow(clippy::disallowed_methods)]
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
