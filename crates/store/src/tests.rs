//! Runs the conformance suite against both backends.

use crate::conformance::Harness;
use crate::RedbStore;

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
