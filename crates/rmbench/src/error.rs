//! Why a benchmark run could not produce a report.

use thiserror::Error;

/// A failure that stops the run (RPC errors during the measured window are counted in the
/// report instead).
#[derive(Debug, Error)]
pub enum BenchError {
    /// The RM child process could not be started or did not come up.
    #[error("ResourceManager: {0}")]
    Rm(String),
    /// A REST call to the RM failed.
    #[error("REST {what}: {message}")]
    Rest {
        /// Which call.
        what: &'static str,
        /// What went wrong.
        message: String,
    },
    /// A gRPC call needed to set the run up failed.
    #[error("{what}: {status}")]
    Rpc {
        /// Which call.
        what: &'static str,
        /// The gRPC status.
        status: Box<tonic::Status>,
    },
    /// Something was not ready within its bounded wait.
    #[error("timed out: {0}")]
    Timeout(String),
    /// Local I/O (temp dir, config file, listener).
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        source: std::io::Error,
    },
    /// The flags do not describe a runnable benchmark.
    #[error("invalid arguments: {0}")]
    Args(String),
}

impl BenchError {
    /// Wraps an I/O error with what was being done.
    pub(crate) fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
        let what = what.into();
        move |source| BenchError::Io { what, source }
    }

    /// Wraps a gRPC status with the call it answered.
    pub(crate) fn rpc(what: &'static str) -> impl FnOnce(tonic::Status) -> BenchError {
        move |status| BenchError::Rpc {
            what,
            status: Box::new(status),
        }
    }
}
