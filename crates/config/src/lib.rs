//! Hadoop's scheduler configuration, read as Hadoop writes it.
//!
//! This crate owns the typed model of a `fair-scheduler.xml` allocation file ([`AllocationConfig`]),
//! of the Fair Scheduler's `yarn-site.xml` properties ([`SchedulerProperties`]), the resource
//! string syntaxes, and every diagnostic those files can produce (with line, column and the
//! element's path).
//! Parsing is pure: it takes text and returns values; reading files is the caller's business.
//! It must not know about the scheduler's runtime state.

pub mod alloc_file;
mod diagnostic;
mod model;
pub mod resource_string;
pub mod site;

pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use model::*;
