//! The core's memory footprint on its hot path: the sizes of the structures a heartbeat and a
//! completion reach, and the walk's visit counters, for benchmarks (`weft sim bench` turns
//! them into bytes per heartbeat).
//!
//! At full scale the fast path is memory-bound (10,000 apps and 2,000 queues do not fit the
//! L2 cache, and each visit's first touch of an app or queue is a miss), so a structure's size
//! is as much a figure of its speed as instructions are.

use std::mem::{offset_of, size_of};

use crate::lanes::Resource;

use crate::api::Footprint;
use crate::engine::Engine;
use crate::objects::app::{Request, SchedulerKey};
use crate::objects::node::{Container, Node};
use crate::order::ordset::OrderedSet;
use crate::rules::{AppOf, QueueOf, Rules};

impl<R: Rules> Engine<R> {
    pub(crate) fn footprint(&self) -> Footprint {
        Footprint {
            walks: self.walks,
            queues_visited: self.queues_visited,
            apps_visited: self.apps_visited,
            ..structure_sizes::<R>()
        }
    }
}

/// The sizes of `R`'s structures, counters at zero.
fn structure_sizes<R: Rules>() -> Footprint {
    Footprint {
        app_bytes: size_of::<AppOf<R>>(),
        app_hot_bytes: offset_of!(AppOf<R>, user),
        queue_bytes: size_of::<QueueOf<R>>(),
        queue_hot_bytes: offset_of!(QueueOf<R>, runnable_count),
        request_bytes: size_of::<(SchedulerKey, Request)>(),
        node_bytes: size_of::<Node>(),
        container_bytes: size_of::<Container>(),
        candidate_set_bytes: size_of::<OrderedSet>(),
        resource_bytes: size_of::<Resource>(),
        engine_bytes: size_of::<Engine<R>>(),
        walks: 0,
        queues_visited: 0,
        apps_visited: 0,
    }
}

#[cfg(all(test, not(weft_two_lanes)))]
mod tests {
    use super::*;
    use crate::capacity::Capacity;
    use crate::fair::Fair;
    use crate::fifo::Fifo;

    /// Prints each scheduler's sizes (`cargo test -p weft-sched --lib footprint -- --nocapture`)
    /// and holds the lines an app and a queue take, so that growing them is a decision.
    #[test]
    fn hot_structure_sizes() {
        for (name, f) in [
            ("fair", structure_sizes::<Fair>()),
            ("capacity", structure_sizes::<Capacity>()),
            ("fifo", structure_sizes::<Fifo>()),
        ] {
            println!("{name}: {f:?}");
        }
        let fair = structure_sizes::<Fair>();
        let lines = |bytes: usize| bytes.div_ceil(64);
        assert!(
            lines(fair.app_bytes) <= 10,
            "Fair's App: {} bytes",
            fair.app_bytes
        );
        // A request's host and rack levels are behind one pointer.
        assert!(fair.request_bytes <= 96, "{} bytes", fair.request_bytes);
        assert!(
            lines(fair.queue_bytes) <= 19,
            "Fair's Queue: {} bytes",
            fair.queue_bytes
        );
    }
}
