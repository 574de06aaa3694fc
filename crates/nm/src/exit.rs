//! YARN's container exit statuses and the human-readable sizes used in diagnostics.

// The statuses themselves are defined once, beside the wire types that carry them.
pub use weft_proto::exit_status::{
    ABORTED, DISKS_FAILED, INVALID, KILLED_AFTER_APP_COMPLETION, KILLED_BY_APPMASTER,
    KILLED_BY_CONTAINER_SCHEDULER, KILLED_BY_RESOURCEMANAGER, KILLED_EXCEEDED_PMEM,
    KILLED_EXCEEDED_VMEM, PREEMPTED, SUCCESS,
};

/// Formats a byte count with binary units, one decimal only when it is not whole
/// (`1 GiB`, `1.2 GiB`, `50 MiB`).
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    let rounded = (value * 10.0).round() / 10.0;
    if rounded.fract() == 0.0 {
        format!("{} {}", rounded as u64, UNITS[unit])
    } else {
        format!("{rounded:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_like_the_issue_text() {
        assert_eq!(human_bytes(1 << 30), "1 GiB");
        assert_eq!(human_bytes((1.2 * (1u64 << 30) as f64) as u64), "1.2 GiB");
        assert_eq!(human_bytes(50 << 20), "50 MiB");
        assert_eq!(human_bytes(512), "512 B");
        assert_eq!(human_bytes(1536), "1.5 KiB");
    }
}
