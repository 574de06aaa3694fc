//! YARN's container exit statuses and the human-readable sizes used in diagnostics.

/// The container's process exited with status 0.
pub const SUCCESS: i32 = 0;
/// Invalid or unknown (YARN's `ContainerExitStatus.INVALID`).
pub const INVALID: i32 = -1000;
/// Stopped without a more specific reason (e.g. the NodeManager shut down).
pub const ABORTED: i32 = -100;
/// The node's disks failed.
pub const DISKS_FAILED: i32 = -101;
/// Preempted by the scheduler.
pub const PREEMPTED: i32 = -102;
/// Killed for exceeding its virtual memory limit.
pub const KILLED_EXCEEDED_VMEM: i32 = -103;
/// Killed for exceeding its physical memory limit.
pub const KILLED_EXCEEDED_PMEM: i32 = -104;
/// Stopped at the request of its ApplicationMaster.
pub const KILLED_BY_APPMASTER: i32 = -105;
/// Stopped at the request of the ResourceManager.
pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
/// Stopped because its application finished.
pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
/// Stopped by the NodeManager's container scheduler.
pub const KILLED_BY_CONTAINER_SCHEDULER: i32 = -108;

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
