//! The one error type of every store.

use std::path::PathBuf;

/// A backend failure, boxed so the public API does not expose the backend's own error types.
pub type BackendError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a store operation failed. A failed write changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The store file could not be opened or created (permissions, a damaged file, another
    /// process holding it).
    #[error("cannot open the state store at {path}: {source}")]
    Open {
        /// The store file.
        path: PathBuf,
        /// What the backend reported.
        #[source]
        source: BackendError,
    },
    /// The file was written by an incompatible version of this crate.
    #[error(
        "the state store at {path} has schema version {found}, but this build reads version \
         {expected}; move the file away to start with empty state"
    )]
    IncompatibleVersion {
        /// The store file.
        path: PathBuf,
        /// The version recorded in the file.
        found: u32,
        /// The version this build reads and writes.
        expected: u32,
    },
    /// A stored record could not be decoded, or does not match its key.
    #[error("the state store at {path} holds a corrupt {what}: {detail}")]
    Corrupt {
        /// The store file.
        path: PathBuf,
        /// Which record, e.g. `application 7`.
        what: String,
        /// What was wrong with it.
        detail: String,
    },
    /// The store file is damaged (a checksum does not match), or missing or empty where a
    /// store was created: the RM refuses to start rather than run on older or empty state.
    #[error("the state store at {path} is damaged: {detail}")]
    Damaged {
        /// The store file.
        path: PathBuf,
        /// What is wrong and what to do.
        detail: String,
    },
    /// A read or a write failed in the backend (I/O error, full disk...).
    #[error("state store at {path}: {operation} failed: {source}")]
    Backend {
        /// The store file.
        path: PathBuf,
        /// What the store was doing, e.g. `commit`.
        operation: &'static str,
        /// What the backend reported.
        #[source]
        source: BackendError,
    },
    /// An attempt was written for an application the store does not hold.
    #[error(
        "attempt {attempt} of application {app_id} refers to an application that is not stored"
    )]
    UnknownApp {
        /// The application's sequence number.
        app_id: u64,
        /// The attempt number.
        attempt: u32,
    },
    /// A record could not be serialized (should not happen for the record types).
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// Which record.
        what: String,
        /// The serializer's error.
        #[source]
        source: serde_json::Error,
    },
}
