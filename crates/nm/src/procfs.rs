//! Process-tree discovery and memory accounting from `/proc`.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

/// What the monitor needs to know about one process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcInfo {
    pub(crate) pid: i32,
    pub(crate) ppid: i32,
    pub(crate) pgid: i32,
    pub(crate) rss_bytes: u64,
}

/// Parses `/proc/<pid>/status`; one file gives the parent, the process group and the RSS.
/// Kernel threads and zombies have no `VmRSS` line and count as 0 bytes.
fn parse_status(pid: i32, text: &str) -> Option<ProcInfo> {
    let mut ppid = None;
    let mut pgid = None;
    let mut rss_kib = 0u64;
    for line in text.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match key {
            "PPid" => ppid = value.parse().ok(),
            // The last NSpgid value is the group id in /proc's own pid namespace.
            "NSpgid" => pgid = value.split_whitespace().last().and_then(|v| v.parse().ok()),
            "VmRSS" => {
                rss_kib = value
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0)
            }
            _ => {}
        }
    }
    Some(ProcInfo {
        pid,
        ppid: ppid?,
        pgid: pgid.unwrap_or(0),
        rss_bytes: rss_kib * 1024,
    })
}

/// Every process currently visible in `/proc`. Processes that vanish mid-scan are skipped.
fn all_processes() -> Vec<ProcInfo> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()))
        .filter_map(|pid| {
            let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
            parse_status(pid, &text)
        })
        .collect()
}

/// The processes belonging to a container: descendants of `root` plus every member of
/// process group `pgid` (members whose parent already exited were re-parented away from
/// the tree but still share the group).
pub(crate) fn container_tree(root: i32, pgid: i32) -> Vec<ProcInfo> {
    select_tree(&all_processes(), root, pgid)
}

fn select_tree(procs: &[ProcInfo], root: i32, pgid: i32) -> Vec<ProcInfo> {
    let mut children: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    for p in procs {
        children.entry(p.ppid).or_default().push(p.pid);
    }
    let mut members: BTreeSet<i32> = procs
        .iter()
        .filter(|p| p.pgid == pgid || p.pid == root)
        .map(|p| p.pid)
        .collect();
    let mut stack: Vec<i32> = members.iter().copied().collect();
    while let Some(pid) = stack.pop() {
        for &child in children.get(&pid).map(Vec::as_slice).unwrap_or(&[]) {
            if members.insert(child) {
                stack.push(child);
            }
        }
    }
    procs
        .iter()
        .filter(|p| members.contains(&p.pid))
        .copied()
        .collect()
}

/// Resident memory of the container's process tree in bytes.
pub(crate) fn tree_rss(root: i32, pgid: i32) -> u64 {
    container_tree(root, pgid).iter().map(|p| p.rss_bytes).sum()
}

/// Whether a process exists and is not a zombie.
pub(crate) fn is_alive(pid: i32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the command name, which may itself contain ')'.
        Ok(text) => text
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(pid: i32, ppid: i32, pgid: i32, rss: u64) -> ProcInfo {
        ProcInfo {
            pid,
            ppid,
            pgid,
            rss_bytes: rss,
        }
    }

    #[test]
    fn status_parsing_reads_parent_group_and_rss() {
        let text = "Name:\tbash\nPid:\t42\nPPid:\t7\nNSpgid:\t100\t42\nVmRSS:\t  2048 kB\n";
        assert_eq!(parse_status(42, text), Some(p(42, 7, 42, 2048 * 1024)));
        let kthread = "Name:\tkworker\nPPid:\t2\nNSpgid:\t0\n";
        assert_eq!(parse_status(9, kthread), Some(p(9, 2, 0, 0)));
    }

    #[test]
    fn tree_holds_descendants_and_group_members_only() {
        let procs = [
            p(1, 0, 1, 5),
            p(10, 1, 10, 1),  // container root
            p(11, 10, 10, 2), // child
            p(12, 11, 12, 4), // grandchild in its own group
            p(13, 1, 10, 8),  // orphan re-parented to init, same group
            p(20, 1, 20, 16), // unrelated
        ];
        let tree = select_tree(&procs, 10, 10);
        let pids: Vec<i32> = tree.iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![10, 11, 12, 13]);
        assert_eq!(tree.iter().map(|p| p.rss_bytes).sum::<u64>(), 15);
    }

    #[test]
    fn our_own_process_is_alive_and_a_bogus_pid_is_not() {
        assert!(is_alive(std::process::id() as i32));
        assert!(!is_alive(i32::MAX));
    }
}
