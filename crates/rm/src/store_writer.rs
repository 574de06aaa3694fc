//! The store writer: one thread that makes the driver's batches durable in the order the
//! driver ran them, then answers their callers and carries out their NM calls. The driver
//! hands a batch over and runs the next jobs while the transaction is fsynced (a redb commit
//! takes milliseconds, and the driver once spent an eighth of its time waiting on them).
//! Batches that queue up while a commit runs go into the next transaction together.
//!
//! A batch without writes may show state that an earlier batch changed, so while any earlier
//! batch is still with the writer it goes through the writer too and waits until that batch
//! is durable; when the writer holds nothing ([`StoreWriter::idle`]) the driver answers it
//! itself (most heartbeat rounds write nothing, and the hand-over to this thread and back
//! cost about a tenth of the RM's CPU under `weft rm-bench`). After a refused
//! write nothing is answered or carried out any more: the failure is published, the thread
//! ends and the batches still queued are dropped (their callers get an error).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use tokio::sync::watch;
use weft_rm_core::{Output, Write};
use weft_store::StateStore;

use crate::driver::Reply;

/// At most this many batches go into one transaction (bounds its size and the wait of the
/// first batch's callers).
const MAX_GROUP: usize = 64;

/// What one round of the driver produced.
pub(crate) struct Batch {
    pub(crate) writes: Vec<Write>,
    pub(crate) replies: Vec<Reply>,
    /// AM launches and container stops, carried out once the batch is durable.
    pub(crate) outputs: Vec<Output>,
}

/// Transactions written and the time they took, for `/metrics`.
#[derive(Default)]
pub(crate) struct WriteStats {
    transactions: AtomicU64,
    nanos: AtomicU64,
}

impl WriteStats {
    pub(crate) fn transactions(&self) -> u64 {
        self.transactions.load(Ordering::Relaxed)
    }

    pub(crate) fn seconds(&self) -> f64 {
        self.nanos.load(Ordering::Relaxed) as f64 / 1e9
    }

    fn record(&self, took: std::time::Duration) {
        self.transactions.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.nanos.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// The driver's end of the writer thread.
pub(crate) struct StoreWriter {
    tx: mpsc::Sender<Batch>,
    thread: JoinHandle<()>,
    /// Batches sent and not yet answered and carried out.
    pending: Arc<AtomicUsize>,
}

impl StoreWriter {
    /// Starts the thread. `carry_out` runs each durable batch's outputs (on the thread).
    pub(crate) fn spawn(
        store: Arc<dyn StateStore>,
        stats: Arc<WriteStats>,
        failure: watch::Sender<Option<String>>,
        carry_out: impl Fn(Vec<Output>) + Send + 'static,
    ) -> std::io::Result<StoreWriter> {
        let (tx, rx) = mpsc::channel();
        let pending = Arc::new(AtomicUsize::new(0));
        let done = Arc::clone(&pending);
        let thread = std::thread::Builder::new()
            .name("weft-store-writer".into())
            .spawn(move || write_in_order(&*store, &stats, &failure, &carry_out, &rx, &done))?;
        Ok(StoreWriter {
            tx,
            thread,
            pending,
        })
    }

    /// Queues a batch; false once the writer has stopped (after a refused write).
    pub(crate) fn send(&self, batch: Batch) -> bool {
        self.pending.fetch_add(1, Ordering::AcqRel);
        self.tx.send(batch).is_ok()
    }

    /// True when every batch sent has been made durable, answered and carried out (never
    /// again after a refused write: the failed batch stays pending).
    pub(crate) fn idle(&self) -> bool {
        self.pending.load(Ordering::Acquire) == 0
    }

    /// Lets the writer finish what is queued and returns its thread to join.
    pub(crate) fn finish(self) -> JoinHandle<()> {
        drop(self.tx);
        self.thread
    }
}

/// The clock for durations only.
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

fn write_in_order(
    store: &dyn StateStore,
    stats: &WriteStats,
    failure: &watch::Sender<Option<String>>,
    carry_out: &dyn Fn(Vec<Output>),
    rx: &mpsc::Receiver<Batch>,
    pending: &AtomicUsize,
) {
    while let Ok(first) = rx.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match rx.try_recv() {
                Ok(batch) => group.push(batch),
                Err(_) => break,
            }
        }
        let mut writes = Vec::new();
        for batch in &mut group {
            writes.append(&mut batch.writes);
        }
        if !writes.is_empty() {
            let start = stopwatch();
            let result = store.apply(&writes);
            stats.record(start.elapsed());
            if let Err(e) = result {
                let message = format!(
                    "the state store failed to record {} change(s): {e}; the ResourceManager stops so \
                     that it never serves state the store does not hold (the callers got an error). \
                     Start it again once the store works (e.g. the disk has space): it resumes from \
                     what the store holds",
                    writes.len()
                );
                tracing::error!("{message}");
                failure.send_replace(Some(message));
                return; // the group's and the queued batches' replies are dropped
            }
        }
        for batch in group {
            for reply in batch.replies {
                reply();
            }
            carry_out(batch.outputs);
            pending.fetch_sub(1, Ordering::AcqRel);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;
    use std::time::Duration;

    use weft_store::{ClusterMeta, MemoryStore, RecoveredState, StoreError};

    use super::*;

    /// Records each transaction's size; the first one says it began, then waits until the
    /// test lets it commit.
    struct GatedStore {
        inner: MemoryStore,
        began: Mutex<mpsc::Sender<()>>,
        gate: Mutex<Option<mpsc::Receiver<()>>>,
        transactions: Mutex<Vec<usize>>,
    }

    impl StateStore for GatedStore {
        fn load(&self) -> Result<RecoveredState, StoreError> {
            self.inner.load()
        }

        fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
            let gate = self.gate.lock().map(|mut g| g.take()).ok().flatten();
            if let Some(gate) = gate {
                let _ = self.began.lock().map(|b| b.send(()));
                let _ = gate.recv();
            }
            self.transactions
                .lock()
                .expect("not poisoned")
                .push(writes.len());
            self.inner.apply(writes)
        }
    }

    fn meta(seq: u64) -> Write {
        Write::Meta(ClusterMeta {
            cluster_timestamp: 1,
            next_app_seq: seq,
            epoch: 0,
        })
    }

    fn batch(
        writes: Vec<Write>,
        answered: &mpsc::Sender<&'static str>,
        name: &'static str,
    ) -> Batch {
        let answered = answered.clone();
        Batch {
            writes,
            replies: vec![Box::new(move || {
                let _ = answered.send(name);
            })],
            outputs: Vec::new(),
        }
    }

    #[test]
    fn answers_wait_for_earlier_writes_and_queued_batches_commit_together() {
        let (open, gate) = mpsc::channel();
        let (began, first_began) = mpsc::channel();
        let store = Arc::new(GatedStore {
            inner: MemoryStore::new(),
            began: Mutex::new(began),
            gate: Mutex::new(Some(gate)),
            transactions: Mutex::new(Vec::new()),
        });
        let (failure, _failed) = watch::channel(None);
        let writer = StoreWriter::spawn(
            Arc::clone(&store) as Arc<dyn StateStore>,
            Arc::default(),
            failure,
            |_| {},
        )
        .expect("thread");
        let (answered, answers) = mpsc::channel();
        assert!(writer.send(batch(vec![meta(2)], &answered, "first")));
        first_began
            .recv_timeout(Duration::from_secs(5))
            .expect("the first commit began");
        // Queued while the first commit waits: a read-only batch, then two that write.
        assert!(writer.send(batch(Vec::new(), &answered, "read")));
        assert!(writer.send(batch(vec![meta(3)], &answered, "second")));
        assert!(writer.send(batch(vec![meta(4)], &answered, "third")));
        assert!(
            answers.recv_timeout(Duration::from_millis(200)).is_err(),
            "nothing is answered before the first write is durable"
        );
        open.send(()).expect("gate open");
        let order: Vec<&str> = (0..4)
            .map(|_| {
                answers
                    .recv_timeout(Duration::from_secs(5))
                    .expect("answered")
            })
            .collect();
        assert_eq!(order, ["first", "read", "second", "third"]);
        writer.finish().join().expect("writer thread");
        let transactions = store.transactions.lock().expect("not poisoned").clone();
        assert_eq!(
            transactions,
            [1, 2],
            "the two batches queued behind the first commit share one transaction"
        );
        let meta = store.inner.load().expect("load").meta.expect("meta");
        assert_eq!(meta.next_app_seq, 4, "applied in order");
    }
}
