//! Durable ResourceManager state, like YARN's `RMStateStore`.
//!
//! The RM writes applications, attempts, demands and cluster counters here *before* it acknowledges the
//! change to a client, and reads them back with [`StateStore::load`] after a restart. Running
//! containers are not stored: NodeManagers report them again when they resync.
//!
//! Two implementations share one contract, checked by the `conformance` suite (feature
//! `testing`): [`MemoryStore`] for tests and simulations, [`RedbStore`] for the daemon.

#![warn(missing_docs)]

mod error;
mod integrity;
mod memory;
mod records;
mod redb_store;

#[cfg(any(test, feature = "testing"))]
pub mod conformance;

pub use error::{BackendError, StoreError};
pub use integrity::{CREATED_MARKER, DAMAGED_MARKER};
pub use memory::MemoryStore;
pub use records::{
    AllocationRecord, AppState, ApplicationRecord, AttemptRecord, AttemptState, ClusterMeta,
    DemandContainerRecord, DemandPlacementRecord, DemandPlanRecord, DemandRecord, DemandState,
    DemandTransitionRecord, FinalStatus, GangRecord, LaunchContext, LocalResource,
    LocalResourceKind, NodeLabelsRecord, RecoveredApp, RecoveredState, ReservationDefinitionRecord,
    ReservationRecord, ReservationRequestRecord, ResourceRecord, Write,
};
pub use redb_store::{RedbStore, DEFAULT_CACHE_BYTES, SCHEMA_VERSION, STORE_FILE_NAME};

/// A place the RM's state survives in.
///
/// Calls block until the change is durable: when a write returns `Ok`, a crash of the process
/// (or, for durable backends, of the machine) no longer loses it, so the RM may acknowledge.
/// A write that returns `Err` changed nothing. Call from a thread that may block (e.g. tokio's
/// `spawn_blocking`), never from an async task directly.
pub trait StateStore: Send + Sync {
    /// Reads everything stored: the cluster counters and every application with its attempts,
    /// in id order.
    fn load(&self) -> Result<RecoveredState, StoreError>;

    /// Applies `writes` in order, atomically: either all of them are durable or none is.
    fn apply(&self, writes: &[Write]) -> Result<(), StoreError>;

    /// Replaces the cluster counters.
    fn store_meta(&self, meta: &ClusterMeta) -> Result<(), StoreError> {
        self.apply(&[Write::Meta(meta.clone())])
    }

    /// Inserts or replaces an application; its stored attempts are kept.
    fn put_app(&self, app: &ApplicationRecord) -> Result<(), StoreError> {
        self.apply(&[Write::PutApp(app.clone())])
    }

    /// Inserts or replaces an attempt; fails with [`StoreError::UnknownApp`] if its
    /// application is not stored.
    fn put_attempt(&self, attempt: &AttemptRecord) -> Result<(), StoreError> {
        self.apply(&[Write::PutAttempt(attempt.clone())])
    }

    /// Removes an application and its attempts (retention GC); unknown ids are ignored.
    fn remove_app(&self, app_id: u64) -> Result<(), StoreError> {
        self.apply(&[Write::RemoveApp(app_id)])
    }
}

#[cfg(test)]
mod tests;
