//! Hadoop's scheduler configuration, read as Hadoop writes it.
//!
//! This crate owns the typed model of a `fair-scheduler.xml` allocation file ([`AllocationConfig`]),
//! of the Fair Scheduler's `yarn-site.xml` properties ([`SchedulerProperties`]), the resource
//! string syntaxes, and every diagnostic those files can produce (with line, column and the
//! element's path).
//! Parsing is pure: it takes text and returns values; reading files is the caller's business.
//! It must not know about the scheduler's runtime state.

pub mod alloc_file;
pub mod capacity;
mod conf_xml;
mod diagnostic;
mod model;
pub mod pools;
pub mod reservation;
pub mod resource_string;
pub mod site;

pub use diagnostic::{Diagnostic, Diagnostics, Severity};
pub use model::*;

/// The deepest a queue may be nested, in levels of its full name counting `root` (`root.a.b` is
/// 3 levels). Allocation files, placement rules, submissions and moves are refused beyond it, so
/// the scheduler's walks over the queue tree stay shallow whatever the input.
pub const MAX_QUEUE_DEPTH: usize = 100;

/// The deepest any element of an allocation file may be nested (room for the deepest queues
/// with their settings, and for nested placement rules); deeper files are refused before any
/// walk over them.
pub const MAX_ALLOCATION_ELEMENT_DEPTH: usize = MAX_QUEUE_DEPTH + 8;
