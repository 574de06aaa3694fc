//! Queue placement: evaluates a `queuePlacementPolicy` (spec §12) for one submission and returns
//! the full name of the queue the application goes to. Queue-name rules (spec §15) live in
//! [`names`].
//!
//! Placement only decides a name. Creating the queue, checking that it is a leaf and checking
//! ACLs is the scheduler's job (spec §12.4).

mod names;
mod rules;
#[cfg(all(test, not(weft_two_lanes)))]
mod tests;

pub(crate) use names::{normalize_queue_name, NameProblem};
pub(crate) use rules::place;

use thiserror::Error;

/// What placement needs to know about the scheduler's queue tree.
pub(crate) trait QueueLookup {
    /// Whether a queue with this full name (`root.a.b`) exists, static or dynamic.
    fn exists(&self, full_name: &str) -> bool;
    /// Whether the queue is declared in the allocation file (a static queue). Dynamic queues,
    /// created by earlier placements, are not: `create="false"` rules ignore them.
    fn is_configured(&self, full_name: &str) -> bool;
    /// `Some(true)` for a leaf queue, `Some(false)` for a parent, `None` if it does not exist.
    fn is_leaf(&self, full_name: &str) -> Option<bool>;
}

/// Why an application could not be placed; the submission is rejected with this message.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub(crate) enum PlacementError {
    /// Every rule passed (or a `reject` rule was reached).
    #[error("rejected by the placement policy: no rule placed the application (rules: {rules})")]
    Rejected {
        /// The policy, rendered like `specified, user(create=false), reject`.
        rules: String,
    },
    /// A `primaryGroup` rule met a user without groups.
    #[error("user '{user}' has no groups: the primaryGroup rule cannot place the application")]
    NoGroups {
        /// The submitting user.
        user: String,
    },
    /// The submitted queue name, or the name a rule produced, is not a valid queue name.
    #[error("queue name '{name}' {problem}")]
    InvalidQueueName {
        /// The name as given.
        name: String,
        /// What is wrong with it.
        problem: NameProblem,
    },
}

impl PlacementError {
    /// The submission's rejection code for this error.
    pub(crate) fn code(&self) -> crate::api::RejectCode {
        use crate::api::RejectCode;
        match self {
            PlacementError::Rejected { .. } | PlacementError::NoGroups { .. } => {
                RejectCode::PlacementRejected
            }
            PlacementError::InvalidQueueName { .. } => RejectCode::InvalidQueueName,
        }
    }
}
