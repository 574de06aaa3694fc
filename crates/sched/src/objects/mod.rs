//! The shared objects every scheduler works on: the id tables, apps and their requests, nodes,
//! running containers. They know no scheduler's rules (`tests/tidy.rs` checks it).

pub(crate) mod app;
pub(crate) mod ask_tags;
pub(crate) mod blacklist;
pub(crate) mod containers;
pub(crate) mod gangs;
pub(crate) mod ledger;
pub(crate) mod lifecycle;
pub(crate) mod node;
pub(crate) mod pools;
pub(crate) mod preemption;
pub(crate) mod requests;
pub(crate) mod table;
pub(crate) mod timers;
