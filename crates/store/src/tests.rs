//! Runs the conformance suite against both backends.

use crate::conformance::Harness;
use crate::{MemoryStore, RedbStore, StateStore};

mod memory {
    crate::conformance_tests!(crate::conformance::MemoryHarness::default());
}

mod redb {
    crate::conformance_tests!(super::RedbHarness::new());
}

/// Reopens by dropping the handle and opening the same directory again, as an RM restart does.
struct RedbHarness {
    dir: tempfile::TempDir,
}

impl RedbHarness {
    fn new() -> Self {
        RedbHarness {
            dir: tempfile::tempdir().unwrap(),
        }
    }
}

impl Harness for RedbHarness {
    type Store = RedbStore;

    fn open(&mut self) -> RedbStore {
        RedbStore::open(self.dir.path()).unwrap()
    }
}

/// The RM holds its store as a trait object chosen at start-up.
#[test]
fn stores_work_as_trait_objects() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<Box<dyn StateStore>> = vec![
        Box::new(MemoryStore::new()),
        Box::new(RedbStore::open(dir.path()).unwrap()),
    ];
    for store in &stores {
        store.put_app(&crate::conformance::sample_app(1)).unwrap();
        assert_eq!(store.load().unwrap().apps.len(), 1);
    }
}
