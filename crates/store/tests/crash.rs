//! A process that dies without closing its `RedbStore` (abort, `kill -9`) loses no write that
//! `apply` had acknowledged, and leaves no batch half-applied.
//!
//! The writer runs in a child process: this test binary re-invoked with a filter that selects
//! `crash_child`, which does nothing unless `CHILD_DIR_ENV` is set.

use std::io::{BufRead, BufReader, Write as _};
use std::path::Path;
use std::process::{Command, Stdio};

use weft_store::conformance::{sample_app, sample_attempt};
use weft_store::{ClusterMeta, RedbStore, StateStore, Write};

const CHILD_DIR_ENV: &str = "WEFT_STORE_CRASH_DIR";
const CHILD_COUNT_ENV: &str = "WEFT_STORE_CRASH_COUNT";
const ACK: &str = "ACKED ";

/// The writer: continues after the highest stored app, writes `count` apps (each with its
/// first attempt and the advanced sequence, in one batch), printing each acknowledgement, then
/// aborts without closing the store.
#[test]
fn crash_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_ENV) else {
        return;
    };
    let count: u64 = std::env::var(CHILD_COUNT_ENV).unwrap().parse().unwrap();
    let store = RedbStore::open(&dir).unwrap();
    let first = store
        .load()
        .unwrap()
        .meta
        .map_or(1, |meta| meta.next_app_seq);
    let mut out = std::io::stdout().lock();
    for id in first..first + count {
        store
            .apply(&[
                Write::PutApp(sample_app(id)),
                Write::PutAttempt(sample_attempt(id, 1)),
                Write::Meta(ClusterMeta {
                    cluster_timestamp: 1_700_000_000_000,
                    next_app_seq: id + 1,
                    epoch: 0,
                }),
            ])
            .unwrap();
        writeln!(out, "{ACK}{id}").unwrap();
        out.flush().unwrap();
    }
    std::process::abort();
}

/// Runs the writer on `dir`; with `kill_after`, SIGKILLs it once that many writes were
/// acknowledged. Returns the highest acknowledged app id.
fn run_child(dir: &Path, count: u64, kill_after: Option<usize>) -> Option<u64> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "crash_child", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR_ENV, dir)
        .env(CHILD_COUNT_ENV, count.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut acked = Vec::new();
    let mut killed = false;
    // Read to EOF even after the kill: acknowledgements still in the pipe count too.
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(id) = line.strip_prefix(ACK) {
            acked.push(id.parse::<u64>().unwrap());
        }
        if !killed && kill_after.is_some_and(|n| acked.len() >= n) {
            child.kill().unwrap();
            killed = true;
        }
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "the writer must die, not exit cleanly");
    if kill_after.is_some() {
        assert!(killed, "the writer ended before it could be killed");
    }
    acked.last().copied()
}

/// Reopens and checks: apps are exactly 1..=n with n the last acknowledged id or one more
/// (a commit that completed before its acknowledgement was printed), each with its attempt,
/// and the sequence agrees (the batches were atomic). Returns n.
fn check_recovered(dir: &Path, last_acked: u64) -> u64 {
    let store = RedbStore::open(dir).unwrap();
    let state = store.load().unwrap();
    let n = state.apps.len() as u64;
    assert!(
        n == last_acked || n == last_acked + 1,
        "acknowledged up to {last_acked}, recovered {n} apps"
    );
    for (i, recovered) in state.apps.iter().enumerate() {
        let id = i as u64 + 1;
        assert_eq!(recovered.app, sample_app(id));
        assert_eq!(recovered.attempts, vec![sample_attempt(id, 1)]);
    }
    assert_eq!(state.meta.map(|m| m.next_app_seq), Some(n + 1));
    // The repaired file takes new writes.
    store.put_app(&sample_app(n + 1)).unwrap();
    store.remove_app(n + 1).unwrap();
    n
}

#[test]
fn abort_after_acknowledged_writes_loses_none() {
    let dir = tempfile::tempdir().unwrap();
    let last = run_child(dir.path(), 40, None);
    assert_eq!(last, Some(40));
    assert_eq!(check_recovered(dir.path(), 40), 40);
}

#[test]
fn kill_during_writes_loses_no_acknowledged_write() {
    let dir = tempfile::tempdir().unwrap();
    let mut last = 0;
    // Two crashes in a row: the second writer starts on a file repaired after the first.
    for _ in 0..2 {
        let acked = run_child(dir.path(), 5_000, Some(25)).unwrap();
        assert!(acked >= last + 25, "acknowledged {acked} after {last}");
        last = check_recovered(dir.path(), acked);
    }
}
