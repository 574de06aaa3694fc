//! Containers left running by an NM that died (`kill -9`, a crash): the executor records each
//! container's process group and its leader's start time in `<local dir>/nm-containers/<id>`
//! while it runs, and a starting NM kills whatever those records still name. Weft has no NM
//! recovery (YARN's `yarn.nodemanager.recovery.enabled` re-acquires such containers instead);
//! the RM, told nothing of them at registration, ends them for their applications, and a
//! recovered attempt whose AM was among them starts again at once.
//!
//! The start time (field 22 of `/proc/<pid>/stat`) guards against a recycled pid: a record
//! whose group leader now has another start time names a different process and is dropped.

use std::fs;
use std::path::{Path, PathBuf};

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;

use crate::procfs;

/// Where the records live under the NM's local dir.
pub(crate) fn record_dir(local_dir: &Path) -> PathBuf {
    local_dir.join("nm-containers")
}

/// The start time of `pid` in clock ticks since boot, if it exists.
fn start_time(pid: i32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may contain ')'); start time is field 22, the
    // 20th after the name.
    let (_, rest) = text.rsplit_once(')')?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Records a running container's process group (best effort: a record that cannot be
/// written only means a leftover cannot be found after a crash).
pub(crate) fn record(local_dir: &Path, container: &str, pgid: i32) {
    let Some(start) = start_time(pgid) else {
        return;
    };
    let dir = record_dir(local_dir);
    let result = fs::create_dir_all(&dir)
        .and_then(|()| fs::write(dir.join(container), format!("{pgid} {start}\n")));
    if let Err(e) = result {
        tracing::warn!(%container, "cannot record the container's process group: {e}");
    }
}

/// Forgets a container that ended normally.
pub(crate) fn forget(local_dir: &Path, container: &str) {
    let _ = fs::remove_file(record_dir(local_dir).join(container));
}

/// Kills every process group a previous NM run recorded and still alive; returns the
/// containers killed. Records are removed either way.
pub(crate) fn kill_leftovers(local_dir: &Path) -> Vec<String> {
    let dir = record_dir(local_dir);
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut killed = Vec::new();
    for entry in entries.filter_map(Result::ok) {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let parsed = fs::read_to_string(&path).ok().and_then(|t| {
            let mut it = t.split_whitespace();
            Some((
                it.next()?.parse::<i32>().ok()?,
                it.next()?.parse::<u64>().ok()?,
            ))
        });
        let _ = fs::remove_file(&path);
        let Some((pgid, start)) = parsed.filter(|(pgid, _)| *pgid > 1) else {
            continue;
        };
        if start_time(pgid) != Some(start) {
            continue;
        }
        let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
        for p in procfs::container_tree(pgid, pgid) {
            let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
        }
        tracing::warn!(container = %name, pgid, "killed a container left from before the NM restarted");
        killed.push(name);
    }
    killed.sort();
    killed
}
