//! Why an input was refused. A refused input changes nothing.

use thiserror::Error;
use weft_sched::SchedError;

/// An input [`RmCore`](crate::RmCore) refused; the state is as it was before the call.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RmError {
    /// No such application.
    #[error("application {0} not found")]
    UnknownApp(String),
    /// No such attempt, or not the application's current one.
    #[error("application attempt {0} not found or not current")]
    UnknownAttempt(String),
    /// The AM's token does not match its attempt.
    #[error("invalid AM token for {0}")]
    InvalidToken(String),
    /// The AM called allocate or finish before registering.
    #[error("application attempt {0} has not registered")]
    NotRegistered(String),
    /// The application id was not issued by this cluster (or is from another cluster).
    #[error("application id {0} was not issued by this ResourceManager (use new-application)")]
    NotIssued(String),
    /// The application was already submitted.
    #[error("application {0} has already been submitted")]
    AlreadySubmitted(String),
    /// A submission or ask is invalid (size, max attempts, ...).
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// An ask or AM container is larger than the maximum allocation.
    #[error("invalid resource request: {what} {asked} exceeds the maximum allocation {max}")]
    AboveMaximum {
        /// What was asked (`AM container`, `ask at priority 1`).
        what: String,
        /// The asked size.
        asked: String,
        /// The maximum.
        max: String,
    },
    /// The scheduler refused the submission (placement rules, ACLs, limits).
    #[error("{0}")]
    Rejected(String),
    /// The caller may not do this (kill ACL).
    #[error("{0}")]
    Forbidden(String),
    /// A move was refused.
    #[error("{0}")]
    MoveRefused(String),
    /// The application already reached a final state.
    #[error("application {app} is in a final state ({state})")]
    FinalState {
        /// The application.
        app: String,
        /// Its state.
        state: String,
    },
    /// A container named in a release is not one of the attempt's.
    #[error("container {0} does not belong to this application attempt")]
    UnknownContainer(String),
    /// A node registration is invalid.
    #[error("invalid node registration: {0}")]
    InvalidNode(String),
    /// The node is not registered (the NM should re-register).
    #[error("node {0} is not registered")]
    UnknownNode(String),
    /// A stored record could not be recovered.
    #[error("cannot recover stored state: {0}")]
    Corrupt(String),
    /// A node-label change was refused (unknown node or label, ownership, ...).
    #[error("{0}")]
    NodeLabels(String),
    /// A demand submission was refused: every problem with its JSON pointer and column.
    #[error("invalid demand: {0}")]
    InvalidDemand(String),
    /// No such demand.
    #[error("demand {0} not found")]
    UnknownDemand(String),
    /// The demand already ended (FINISHED or FAILED).
    #[error("demand {key} is in a final state ({state})")]
    DemandFinal {
        /// The demand's key.
        key: String,
        /// Its state.
        state: String,
    },
    /// Not supported (yet).
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// The scheduler refused an event the RM thought valid.
    #[error("scheduler: {0}")]
    Scheduler(#[from] SchedError),
}
