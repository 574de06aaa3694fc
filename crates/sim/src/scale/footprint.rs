//! The scheduler core's footprint per heartbeat: the hot structures' sizes
//! ([`weft_sched::Footprint`]) times how often the heartbeat walks reached them.
//!
//! `visited_bytes_per_heartbeat` is the size of what a heartbeat's walks reach, whole
//! structures counted: the heartbeating node, every queue entered, every app offered the node.
//! A visit reads only some of a structure's lines, so this is an upper bound of the bytes
//! read, and a measure that moves with the structures' sizes at fixed decisions (the visit
//! counts depend only on the decisions). At full scale none of it stays in the L2 cache from
//! one visit of the same app or queue to the next, so it is close to the misses a heartbeat
//! pays.

use serde::Serialize;
use weft_sched::Footprint;

/// The figures of a run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FootprintFigures {
    /// Bytes of one application attempt (two requests inline).
    pub app_bytes: usize,
    /// Bytes of its hot fields (those before the cold ones).
    pub app_hot_bytes: usize,
    /// Bytes of one queue (its candidate set's header inline).
    pub queue_bytes: usize,
    /// Bytes of its hot fields (those before the cold ones).
    pub queue_hot_bytes: usize,
    /// Bytes of one request with its scheduler key.
    pub request_bytes: usize,
    /// Bytes of one node.
    pub node_bytes: usize,
    /// Bytes of one running container.
    pub container_bytes: usize,
    /// Bytes of a candidate set's header.
    pub candidate_set_bytes: usize,
    /// Bytes of one resource vector.
    pub resource_bytes: usize,
    /// Walks from the root per heartbeat.
    pub walks_per_heartbeat: f64,
    /// Queues entered per heartbeat (root included).
    pub queues_visited_per_heartbeat: f64,
    /// Apps offered the node per heartbeat.
    pub apps_visited_per_heartbeat: f64,
    /// The node, the queues entered and the apps offered per heartbeat, in bytes of whole
    /// structures (see the module).
    pub visited_bytes_per_heartbeat: f64,
    /// That in 64-byte cache lines (each structure rounded up to whole lines).
    pub visited_lines_per_heartbeat: f64,
    /// As `visited_bytes_per_heartbeat`, with only the hot fields of apps and queues.
    pub hot_bytes_per_heartbeat: f64,
}

impl FootprintFigures {
    /// The figures from the scheduler's at the end of a run of `heartbeats` heartbeats.
    pub(crate) fn new(f: &Footprint, heartbeats: u64) -> FootprintFigures {
        let per_heartbeat = |n: f64| {
            if heartbeats > 0 {
                n / heartbeats as f64
            } else {
                0.0
            }
        };
        let lines = |bytes: usize| bytes.div_ceil(64) as f64;
        let (queues, apps) = (f.queues_visited as f64, f.apps_visited as f64);
        let node_share = if heartbeats > 0 { 1.0 } else { 0.0 };
        FootprintFigures {
            app_bytes: f.app_bytes,
            app_hot_bytes: f.app_hot_bytes,
            queue_bytes: f.queue_bytes,
            queue_hot_bytes: f.queue_hot_bytes,
            request_bytes: f.request_bytes,
            node_bytes: f.node_bytes,
            container_bytes: f.container_bytes,
            candidate_set_bytes: f.candidate_set_bytes,
            resource_bytes: f.resource_bytes,
            walks_per_heartbeat: per_heartbeat(f.walks as f64),
            queues_visited_per_heartbeat: per_heartbeat(queues),
            apps_visited_per_heartbeat: per_heartbeat(apps),
            visited_bytes_per_heartbeat: per_heartbeat(
                queues * f.queue_bytes as f64 + apps * f.app_bytes as f64,
            ) + node_share * f.node_bytes as f64,
            visited_lines_per_heartbeat: per_heartbeat(
                queues * lines(f.queue_bytes) + apps * lines(f.app_bytes),
            ) + node_share * lines(f.node_bytes),
            hot_bytes_per_heartbeat: per_heartbeat(
                queues * f.queue_hot_bytes as f64 + apps * f.app_hot_bytes as f64,
            ) + node_share * f.node_bytes as f64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn per_heartbeat_figures_weigh_each_visit_by_its_structure() {
        let f = Footprint {
            app_bytes: 640,
            app_hot_bytes: 320,
            queue_bytes: 1000,
            queue_hot_bytes: 400,
            node_bytes: 200,
            walks: 30,
            queues_visited: 60,
            apps_visited: 40,
            ..Footprint::default()
        };
        let figures = FootprintFigures::new(&f, 10);
        // Per heartbeat: 6 queues x 1000 + 4 apps x 640 + one node of 200.
        assert_eq!(figures.visited_bytes_per_heartbeat, 6000.0 + 2560.0 + 200.0);
        // Lines: a queue is 16 (1000 / 64 rounded up), an app 10, the node 4.
        assert_eq!(figures.visited_lines_per_heartbeat, 96.0 + 40.0 + 4.0);
        assert_eq!(figures.hot_bytes_per_heartbeat, 2400.0 + 1280.0 + 200.0);
        assert_eq!(figures.walks_per_heartbeat, 3.0);
        assert_eq!(
            FootprintFigures::new(&f, 0).visited_bytes_per_heartbeat,
            0.0
        );
    }
}
