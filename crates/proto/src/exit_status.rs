//! Container exit statuses with YARN's `ContainerExitStatus` meanings.
//!
//! Non-negative values are the process's own exit code (128 + signal number when a signal ended
//! it); negative values say that the framework ended the container, and why.

/// The container's process exited with code 0.
pub const SUCCESS: i32 = 0;
/// Not yet exited (the value a running container reports).
pub const INVALID: i32 = -1000;
/// Released or never launched (e.g. its node was lost or the NM refused to start it).
pub const ABORTED: i32 = -100;
/// The NM's disks failed.
pub const DISKS_FAILED: i32 = -101;
/// Preempted by the scheduler.
pub const PREEMPTED: i32 = -102;
/// Over its virtual-memory limit.
pub const KILLED_EXCEEDED_VMEM: i32 = -103;
/// Over its physical-memory limit.
pub const KILLED_EXCEEDED_PMEM: i32 = -104;
/// Stopped at the AM's request.
pub const KILLED_BY_APPMASTER: i32 = -105;
/// Stopped by the RM.
pub const KILLED_BY_RESOURCEMANAGER: i32 = -106;
/// Stopped because its application finished.
pub const KILLED_AFTER_APP_COMPLETION: i32 = -107;
/// Stopped by the NM's container scheduler (opportunistic containers).
pub const KILLED_BY_CONTAINER_SCHEDULER: i32 = -108;

/// A short human name for a status, for logs and diagnostics.
pub fn describe(status: i32) -> String {
    match status {
        SUCCESS => "success".to_string(),
        INVALID => "not exited".to_string(),
        ABORTED => "aborted".to_string(),
        DISKS_FAILED => "disks failed".to_string(),
        PREEMPTED => "preempted".to_string(),
        KILLED_EXCEEDED_VMEM => "killed: virtual memory over limit".to_string(),
        KILLED_EXCEEDED_PMEM => "killed: physical memory over limit".to_string(),
        KILLED_BY_APPMASTER => "killed by the application master".to_string(),
        KILLED_BY_RESOURCEMANAGER => "killed by the resource manager".to_string(),
        KILLED_AFTER_APP_COMPLETION => "killed after the application finished".to_string(),
        KILLED_BY_CONTAINER_SCHEDULER => "killed by the container scheduler".to_string(),
        s if s > 128 && s < 128 + 65 => format!("exit code {s} (signal {})", s - 128),
        s => format!("exit code {s}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_framework_codes_and_signals() {
        assert_eq!(
            describe(KILLED_EXCEEDED_PMEM),
            "killed: physical memory over limit"
        );
        assert_eq!(describe(137), "exit code 137 (signal 9)");
        assert_eq!(describe(3), "exit code 3");
    }
}
