//! The driver against a store that starts refusing writes (a full disk): the failing call gets
//! an error, nothing after it is answered, the store keeps exactly what was acknowledged, and
//! the failure is published for the RM to stop.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use weft_store::{MemoryStore, RecoveredState, StateStore, StoreError, Write};

use super::test_support::{start_driver, submission};
use crate::driver::{self, DriverError};

/// A memory store whose writes fail while `full` is set, like a full disk.
#[derive(Default)]
struct FillingStore {
    inner: MemoryStore,
    full: AtomicBool,
}

impl StateStore for FillingStore {
    fn load(&self) -> Result<RecoveredState, StoreError> {
        self.inner.load()
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        if self.full.load(Ordering::SeqCst) {
            return Err(StoreError::Backend {
                path: "test-store".into(),
                operation: "commit",
                source: "No space left on device (os error 28)".into(),
            });
        }
        self.inner.apply(writes)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_write_is_not_acknowledged_and_stops_the_driver() {
    let store = Arc::new(FillingStore::default());
    let running = start_driver(Arc::clone(&store) as Arc<dyn StateStore>);
    let driver = &running.driver;

    let submit = |driver: driver::Driver| async move {
        driver
            .call(|core, now| {
                let id = core.new_application(now);
                core.submit(now, id, submission()).map(|()| id)
            })
            .await
    };
    let stored_first = submit(driver.clone())
        .await
        .expect("answered")
        .expect("accepted");
    store.full.store(true, Ordering::SeqCst);
    match submit(driver.clone()).await {
        Err(DriverError::NotPersisted) => {}
        other => panic!("a submission the store refused was answered: {other:?}"),
    }
    let message = tokio::time::timeout(Duration::from_secs(5), running.failure.wait())
        .await
        .expect("the failure is published");
    assert!(
        message.contains("No space left on device") && message.contains("stops"),
        "{message}"
    );
    tokio::time::timeout(Duration::from_secs(5), running.task)
        .await
        .expect("the driver stops by itself")
        .expect("join");
    // Nothing is served from memory that ran ahead of the store.
    assert!(matches!(
        driver.call(|core, _| core.app_reports().len()).await,
        Err(DriverError::Stopped)
    ));
    let stored = store.inner.load().expect("load");
    let ids: Vec<u64> = stored.apps.iter().map(|a| a.app.app_id).collect();
    assert_eq!(
        ids,
        vec![stored_first.seq],
        "only the acknowledged app is stored"
    );
    // The refused submission's app was not stored, but its id was handed out: the next start
    // continues above it (at the stored ceiling), so it is never handed out again.
    let next = stored.meta.expect("meta").next_app_seq;
    assert!(next > stored_first.seq + 1, "next id {next}");
}
