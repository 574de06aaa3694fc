//! The `weft rm` process itself: the allocator settings it runs with.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

/// Starts `weft rm` (every port ephemeral) with `env`, waits until it is ready, and returns
/// it with its environment's `MIMALLOC_PURGE_DELAY`.
fn rm_purge_delay(dir: &std::path::Path, name: &str, env: &[(&str, &str)]) -> Option<String> {
    let (rm, _) = harness::start_lone_rm(dir, name, &dir.join(name), &[], env);
    let environ = std::fs::read(format!("/proc/{}/environ", rm.pid())).expect("environ");
    environ
        .split(|b| *b == 0)
        .filter_map(|kv| std::str::from_utf8(kv).ok())
        .find_map(|kv| kv.strip_prefix("MIMALLOC_PURGE_DELAY="))
        .map(str::to_string)
}

#[test]
fn the_rm_holds_freed_memory_a_minute_unless_the_operator_says_otherwise() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The children inherit this environment: a setting of its own would be the "operator's".
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        assert_eq!(
            rm_purge_delay(dir.path(), "default", &[]).as_deref(),
            Some("60000"),
            "the RM re-executes itself with its purge delay (same pid, ready as usual)"
        );
    }
    assert_eq!(
        rm_purge_delay(dir.path(), "operator", &[("MIMALLOC_PURGE_DELAY", "-1")]).as_deref(),
        Some("-1"),
        "an operator's setting is kept"
    );
}
