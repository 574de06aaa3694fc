//! The RM's allocator settings. mimalloc (the global allocator, see `main.rs`) returns memory
//! a freed page held to the kernel after `purge_delay` (one second by default), and the next
//! allocation there faults the page back in, zeroed: with transparent huge pages on, 2 MiB at
//! a time. In rm-bench's preset every 40 s wave of 1.2M ending and starting containers freed
//! and refilled the same buffers within seconds, and the RM made ~50 `madvise` calls and
//! ~220 huge-page faults a second (`clear_page_erms` 11-19% of its CPU in the waves); with
//! the purge held for a minute, none (docs/TODO.md, stop 34). mimalloc reads its options from
//! the environment when the process starts, and the workspace forbids the unsafe call that
//! would set one later, so `weft rm` re-executes itself once with the setting in its
//! environment; a setting the environment already has is the operator's, and is kept (set it
//! yourself to skip the re-execution, e.g. under valgrind, which would not follow it).

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The environment variable mimalloc reads the purge delay (milliseconds) from.
pub(crate) const PURGE_DELAY_ENV: &str = "MIMALLOC_PURGE_DELAY";
/// The RM's purge delay: memory unused for a minute goes back to the kernel.
const RM_PURGE_DELAY_MS: &str = "60000";

/// The purge delay to re-execute with, given the environment's: none when it has one.
fn purge_delay_to_set(current: Option<OsString>) -> Option<&'static str> {
    current.is_none().then_some(RM_PURGE_DELAY_MS)
}

/// Re-executes this process with the RM's allocator settings when its environment lacks
/// them; returns (having changed nothing) when it has them or the re-execution failed.
pub(crate) fn settle_for_rm() {
    let Some(delay) = purge_delay_to_set(std::env::var_os(PURGE_DELAY_ENV)) else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("weft"));
    // `exec` returns only when it failed; the RM then runs with mimalloc's defaults.
    let error = Command::new("/proc/self/exe")
        .arg0(arg0)
        .args(args)
        .env(PURGE_DELAY_ENV, delay)
        .exec();
    eprintln!(
        "weft rm: could not re-execute with {PURGE_DELAY_ENV}={delay} ({error}); running with the allocator's defaults"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_operators_setting_is_kept_and_a_missing_one_is_set() {
        assert_eq!(purge_delay_to_set(None), Some(RM_PURGE_DELAY_MS));
        assert_eq!(purge_delay_to_set(Some(OsString::from("-1"))), None);
        assert_eq!(purge_delay_to_set(Some(OsString::new())), None);
    }
}
