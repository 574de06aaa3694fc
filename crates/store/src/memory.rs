//! The in-memory store, for tests and simulations.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::{
    ApplicationRecord, AttemptRecord, ClusterMeta, DemandRecord, NodeLabelsRecord, RecoveredApp,
    RecoveredState, ReservationRecord, StateStore, StoreError, Write,
};

/// A [`StateStore`] held in memory.
///
/// Clones share the same contents, so a test can "restart" an RM by handing a clone of the
/// store to a new instance. Writes can be made to fail on purpose with
/// [`MemoryStore::set_fail_writes`].
#[derive(Clone, Debug, Default)]
pub struct MemoryStore {
    inner: Arc<Mutex<Inner>>,
}

#[derive(Debug, Default)]
struct Inner {
    meta: Option<ClusterMeta>,
    node_labels: NodeLabelsRecord,
    reservations: BTreeMap<String, ReservationRecord>,
    next_reservation_seq: u64,
    apps: BTreeMap<u64, (ApplicationRecord, BTreeMap<u32, AttemptRecord>)>,
    demands: BTreeMap<String, DemandRecord>,
    fail_writes: bool,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// While `fail` is true every write returns [`StoreError::Backend`] and changes nothing,
    /// so callers' handling of a failing store can be tested.
    pub fn set_fail_writes(&self, fail: bool) {
        self.lock().fail_writes = fail;
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Writes validate before mutating, so a panic elsewhere cannot leave a half-applied
        // batch behind the poisoned lock.
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn location() -> PathBuf {
    PathBuf::from(":memory:")
}

impl StateStore for MemoryStore {
    fn load(&self) -> Result<RecoveredState, StoreError> {
        let inner = self.lock();
        Ok(RecoveredState {
            meta: inner.meta.clone(),
            node_labels: inner.node_labels.clone(),
            reservations: inner.reservations.values().cloned().collect(),
            next_reservation_seq: inner.next_reservation_seq,
            apps: inner
                .apps
                .values()
                .map(|(app, attempts)| RecoveredApp {
                    app: app.clone(),
                    attempts: attempts.values().cloned().collect(),
                })
                .collect(),
            demands: inner.demands.values().cloned().collect(),
        })
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        let mut inner = self.lock();
        if inner.fail_writes {
            return Err(StoreError::Backend {
                path: location(),
                operation: "apply",
                source: "writes are set to fail".into(),
            });
        }
        validate(&inner, writes)?;
        for write in writes {
            match write {
                Write::Meta(meta) => inner.meta = Some(meta.clone()),
                Write::PutApp(app) => match inner.apps.get_mut(&app.app_id) {
                    Some((stored, _)) => *stored = app.clone(),
                    None => {
                        inner
                            .apps
                            .insert(app.app_id, (app.clone(), BTreeMap::new()));
                    }
                },
                Write::PutAttempt(attempt) => {
                    if let Some((_, attempts)) = inner.apps.get_mut(&attempt.app_id) {
                        attempts.insert(attempt.attempt, attempt.clone());
                    }
                }
                Write::RemoveApp(app_id) => {
                    inner.apps.remove(app_id);
                }
                Write::NodeLabels(record) => inner.node_labels = record.clone(),
                Write::PutReservation(record) => {
                    inner.reservations.insert(record.id.clone(), record.clone());
                }
                Write::RemoveReservation(id) => {
                    inner.reservations.remove(id);
                }
                Write::ReservationSequence(seq) => inner.next_reservation_seq = *seq,
                Write::PutDemand(demand) => {
                    inner.demands.insert(demand.key.clone(), demand.clone());
                }
                Write::RemoveDemand(key) => {
                    inner.demands.remove(key);
                }
            }
        }
        Ok(())
    }
}

/// Checks the whole batch against the stored apps (as the batch changes them) so that a bad
/// write rejects the batch before anything is mutated.
fn validate(inner: &Inner, writes: &[Write]) -> Result<(), StoreError> {
    let mut added = BTreeSet::new();
    let mut removed = BTreeSet::new();
    for write in writes {
        match write {
            Write::Meta(_)
            | Write::NodeLabels(_)
            | Write::PutReservation(_)
            | Write::RemoveReservation(_)
            | Write::ReservationSequence(_)
            | Write::PutDemand(_)
            | Write::RemoveDemand(_) => {}
            Write::PutApp(app) => {
                added.insert(app.app_id);
                removed.remove(&app.app_id);
            }
            Write::RemoveApp(app_id) => {
                removed.insert(*app_id);
                added.remove(app_id);
            }
            Write::PutAttempt(attempt) => {
                let id = attempt.app_id;
                let exists =
                    added.contains(&id) || (inner.apps.contains_key(&id) && !removed.contains(&id));
                if !exists {
                    return Err(StoreError::UnknownApp {
                        app_id: id,
                        attempt: attempt.attempt,
                    });
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::sample_app;

    #[test]
    fn failing_writes_change_nothing_until_cleared() {
        let store = MemoryStore::new();
        store.put_app(&sample_app(1)).unwrap();
        store.set_fail_writes(true);
        let err = store.put_app(&sample_app(2)).unwrap_err();
        assert!(matches!(err, StoreError::Backend { .. }), "{err:?}");
        assert_eq!(store.load().unwrap().apps.len(), 1);
        store.set_fail_writes(false);
        store.put_app(&sample_app(2)).unwrap();
        assert_eq!(store.load().unwrap().apps.len(), 2);
    }

    #[test]
    fn clones_share_contents() {
        let store = MemoryStore::new();
        let restarted = store.clone();
        store.put_app(&sample_app(1)).unwrap();
        assert_eq!(restarted.load().unwrap().apps.len(), 1);
    }
}
