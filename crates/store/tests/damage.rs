//! A damaged store is refused with a message naming the file, never opened on older or empty
//! state: flipped bytes in a page, a store file emptied or deleted where one was created.

use std::path::Path;

use weft_store::conformance::{sample_app, sample_attempt};
use weft_store::{
    ClusterMeta, RedbStore, StateStore, StoreError, Write, DAMAGED_MARKER, STORE_FILE_NAME,
};

/// A store with `apps` applications (each with an attempt), closed cleanly.
fn store_with_apps(dir: &Path, apps: u64) {
    let store = RedbStore::open(dir).expect("open");
    for id in 1..=apps {
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
            .expect("write");
    }
}

fn refusal(dir: &Path) -> String {
    match RedbStore::open(dir) {
        Ok(_) => panic!("a damaged store was opened"),
        Err(e @ StoreError::Damaged { .. }) => e.to_string(),
        Err(other) => panic!("not reported as damaged: {other}"),
    }
}

/// Flips 16 bytes inside the last stored copy of `needle` in the store file.
fn flip_bytes_at(file: &Path, needle: &[u8]) {
    let mut bytes = std::fs::read(file).expect("read store");
    let at = bytes
        .windows(needle.len())
        .rposition(|w| w == needle)
        .expect("the record is in the file");
    for b in &mut bytes[at..at + 16] {
        *b ^= 0xff;
    }
    std::fs::write(file, bytes).expect("write store");
}

#[test]
fn flipped_bytes_in_a_page_are_refused_naming_the_file_and_stay_refused() {
    let dir = tempfile::tempdir().unwrap();
    store_with_apps(dir.path(), 20);
    let file = dir.path().join(STORE_FILE_NAME);
    let name = serde_json::to_vec(&sample_app(20).name).unwrap();
    flip_bytes_at(&file, &name[..name.len().min(8)]);
    let message = refusal(dir.path());
    assert!(
        message.contains(&file.display().to_string()) && message.contains("checksum"),
        "{message}"
    );
    // redb's repair may have rewritten the file; the refusal must not go away by itself.
    let again = refusal(dir.path());
    assert!(
        again.contains("an earlier start found it damaged"),
        "{again}"
    );
    assert!(
        again.contains(DAMAGED_MARKER),
        "says how to clear it: {again}"
    );
}

#[test]
fn an_emptied_or_deleted_store_is_refused_where_one_was_created() {
    let dir = tempfile::tempdir().unwrap();
    store_with_apps(dir.path(), 2);
    let file = dir.path().join(STORE_FILE_NAME);
    std::fs::write(&file, b"").unwrap();
    let message = refusal(dir.path());
    assert!(
        message.contains(&file.display().to_string()) && message.contains("empty (0 bytes)"),
        "{message}"
    );
    std::fs::remove_file(&file).unwrap();
    assert!(refusal(dir.path()).contains("is missing"));
}

#[test]
fn a_new_directory_starts_empty_and_a_clean_store_reopens() {
    let dir = tempfile::tempdir().unwrap();
    store_with_apps(dir.path(), 3);
    let store = RedbStore::open(dir.path()).expect("a clean store reopens");
    assert_eq!(store.load().unwrap().apps.len(), 3);
}
