//! Answers that skip the writes' queue (`Driver::call_periodic_unordered`): while a write is
//! still being made durable, a periodic call that wrote nothing and whose result reveals
//! nothing is answered; one whose result could reveal a change waits for the write.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use weft_rm_core::RmCore;
use weft_store::{MemoryStore, RecoveredState, StateStore, StoreError, Write};

use super::test_support::{start_driver, submission};

/// A memory store whose writes wait while its gate is closed (a slow fsync).
#[derive(Default)]
struct GatedStore {
    inner: MemoryStore,
    closed: Mutex<bool>,
    opened: Condvar,
    /// Writes that reached the gate.
    arrived: AtomicUsize,
}

impl GatedStore {
    fn set_closed(&self, closed: bool) {
        *self.closed.lock().expect("not poisoned") = closed;
        self.opened.notify_all();
    }
}

impl StateStore for GatedStore {
    fn load(&self) -> Result<RecoveredState, StoreError> {
        self.inner.load()
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        self.arrived.fetch_add(1, Ordering::SeqCst);
        let mut closed = self.closed.lock().expect("not poisoned");
        while *closed {
            closed = self.opened.wait(closed).expect("not poisoned");
        }
        drop(closed);
        self.inner.apply(writes)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_that_reveals_nothing_is_answered_while_an_earlier_write_waits() {
    let store = Arc::new(GatedStore::default());
    let running = start_driver(Arc::clone(&store) as Arc<dyn StateStore>);
    let driver = &running.driver;

    let startup_writes = store.arrived.load(Ordering::SeqCst);
    store.set_closed(true);
    let submitted = {
        let driver = driver.clone();
        tokio::spawn(async move {
            driver
                .call(|core, now| {
                    let id = core.new_application(now);
                    core.submit(now, id, submission()).map(|()| id)
                })
                .await
        })
    };
    // The submission's write is at the gate.
    tokio::time::timeout(Duration::from_secs(5), async {
        while store.arrived.load(Ordering::SeqCst) == startup_writes {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await
    .expect("the submission's write reaches the store");
    let apps = |core: &mut RmCore| core.app_reports().len();
    let seen = tokio::time::timeout(
        Duration::from_secs(5),
        driver.call_periodic_unordered(move |core, _| apps(core), |n: &usize| *n == 1),
    )
    .await
    .expect("answered while the submission's write waits")
    .expect("no driver error");
    assert_eq!(seen, 1);
    assert!(
        !submitted.is_finished(),
        "the submission waits for its write"
    );

    // A result its predicate does not clear waits for the write like any other.
    let held = {
        let driver = driver.clone();
        tokio::spawn(async move {
            driver
                .call_periodic_unordered(|core, _| core.app_reports().len(), |_| false)
                .await
        })
    };
    // A call that writes waits as well, whatever its result.
    let writing = {
        let driver = driver.clone();
        tokio::spawn(async move {
            driver
                .call_periodic_unordered(
                    |core, now| {
                        let id = core.new_application(now);
                        core.submit(now, id, submission()).is_ok()
                    },
                    |_| true,
                )
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !held.is_finished(),
        "a revealing result waits for the write"
    );
    assert!(
        !writing.is_finished(),
        "a call that wrote waits for its write"
    );

    store.set_closed(false);
    let timeout = Duration::from_secs(5);
    let first = tokio::time::timeout(timeout, submitted).await;
    assert!(matches!(first, Ok(Ok(Ok(Ok(_))))), "{first:?}");
    // One app, or two when the writing call's job ran first (the two tasks race).
    let held = tokio::time::timeout(timeout, held).await;
    assert!(matches!(held, Ok(Ok(Ok(1 | 2)))), "{held:?}");
    let writing = tokio::time::timeout(timeout, writing).await;
    assert!(matches!(writing, Ok(Ok(Ok(true)))), "{writing:?}");
}
