//! Fair Scheduler preemption (preemption spec): the strategies.

pub(crate) mod global;
