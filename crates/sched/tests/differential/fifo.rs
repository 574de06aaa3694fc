//! The FIFO scheduler's configurations for the differential test: its only knobs are the
//! cluster-wide allocation limits.

use weft_config::SchedulerProperties;
use weft_sched::{FifoConfig, SchedulerConfig};
use weft_types::Resource;

/// A FIFO configuration; `coarse` rounds asks up to 1 GiB steps (else 512 MiB).
pub(crate) fn config(coarse: bool) -> SchedulerConfig {
    let step = if coarse { 1024 } else { 512 };
    SchedulerConfig::Fifo(FifoConfig {
        properties: SchedulerProperties {
            minimum_allocation: Resource::new(step, 1),
            increment_allocation: Resource::new(step, 1),
            ..Default::default()
        },
    })
}
