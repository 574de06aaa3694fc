//! The shared event generator: random ops turned into events against the current state (so
//! most events are valid), for any scheduler kind.

use proptest::prelude::*;
use weft_sched::{ContainerAsk, ContainerExit, Event};
use weft_types::{AppId, ContainerId, NodeId, Resource};

/// The queues submissions and moves name (Fair's test tree declares them; other kinds may
/// ignore or refuse them).
pub(crate) const QUEUES: &[&str] = &[
    "root.a.a1",
    "root.a.a2",
    "root.b",
    "root.c.c1",
    "root.default",
];

/// Nodes `h0`..`h3`, on two racks.
pub(crate) const NODES: u32 = 4;

#[derive(Clone, Debug)]
pub(crate) enum Op {
    Submit {
        queue: usize,
        user: u8,
        am: Option<i64>,
    },
    Ask {
        app: u8,
        mb: i64,
        vcores: i64,
        count: u32,
        priority: i32,
        host: Option<u32>,
    },
    Heartbeat(u32),
    Update,
    Complete(u8),
    Finish(u8),
    Move {
        app: u8,
        queue: usize,
    },
    RemoveNode(u32),
    AddNode(u32),
    /// Lists (`add`) or unlists (`remove`) a place: `PLACES[i]`.
    Blacklist {
        app: u8,
        add: Option<usize>,
        remove: Option<usize>,
    },
    /// A container found running after a driver restart (`Event::ContainerRecovered`).
    Recover {
        app: u8,
        node: u32,
        mb: i64,
        am: bool,
    },
    /// A new attempt of an app (`Event::AttemptRestarted`).
    Restart {
        app: u8,
        am: Option<i64>,
    },
    /// An application priority change (`Event::AppPriorityChanged`).
    Priority {
        app: u8,
        priority: i32,
    },
}

/// The places a blacklist names: every host, both racks (see `node_event`), and a name no
/// node has.
pub(crate) const PLACES: &[&str] = &["h0", "h1", "h2", "h3", "/r0", "/r1", "elsewhere"];

pub(crate) fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        2 => (0..QUEUES.len(), 0u8..3, prop::option::of(512i64..2048)).prop_map(|(queue, user, am)| Op::Submit { queue, user, am }),
        4 => (0u8..12, 256i64..5000, 1i64..4, 1u32..6, 0i32..3, prop::option::of(0..NODES)).prop_map(|(app, mb, vcores, count, priority, host)| Op::Ask { app, mb, vcores, count, priority, host }),
        8 => (0..NODES).prop_map(Op::Heartbeat),
        2 => Just(Op::Update),
        3 => any::<u8>().prop_map(Op::Complete),
        1 => (0u8..12).prop_map(Op::Finish),
        1 => (0u8..12, 0..QUEUES.len()).prop_map(|(app, queue)| Op::Move { app, queue }),
        1 => (0..NODES).prop_map(Op::RemoveNode),
        1 => (0..NODES).prop_map(Op::AddNode),
        2 => (0u8..12, prop::option::of(0..PLACES.len()), prop::option::of(0..PLACES.len())).prop_map(|(app, add, remove)| Op::Blacklist { app, add, remove }),
        1 => (0u8..12, 0..NODES, 256i64..3000, any::<bool>()).prop_map(|(app, node, mb, am)| Op::Recover { app, node, mb, am }),
        1 => (0u8..12, prop::option::of(512i64..2048)).prop_map(|(app, am)| Op::Restart { app, am }),
        1 => (0u8..12, -1i32..4).prop_map(|(app, priority)| Op::Priority { app, priority }),
    ]
}

pub(crate) fn node_event(n: u32) -> Event {
    Event::NodeAdded {
        node: NodeId(n),
        host: format!("h{n}"),
        port: 0,
        rack: format!("/r{}", n % 2),
        capability: Resource::new(4096 * (1 + n as i64 % 2), 4),
    }
}

/// Turns an op into an event against the current state (so most events are valid); `next` is
/// the id the schedulers would give the next container.
pub(crate) fn to_event(
    op: &Op,
    submitted: u64,
    running: &[ContainerId],
    next: ContainerId,
) -> Option<Event> {
    Some(match op {
        Op::Submit { queue, user, am } => Event::AppSubmitted {
            app: AppId(submitted),
            user: format!("u{user}"),
            queue: Some(QUEUES[*queue].to_string()),
            am_resource: am.map(|mb| Resource::new(mb, 1)),
        },
        Op::Ask {
            app,
            mb,
            vcores,
            count,
            priority,
            host,
        } => Event::Ask {
            app: AppId(u64::from(*app) % submitted.max(1)),
            ask: ContainerAsk {
                priority: *priority,
                resources: Resource::new(*mb, *vcores),
                count: *count,
                hosts: host.map(|h| vec![format!("h{h}")]).unwrap_or_default(),
                racks: vec![],
                relax_locality: true,
                tag: weft_sched::AskTag::NONE,
            },
        },
        Op::Heartbeat(n) => Event::NodeHeartbeat { node: NodeId(*n) },
        Op::Update => Event::Update,
        Op::Complete(i) => {
            if running.is_empty() {
                return None;
            }
            Event::ContainerCompleted {
                container: running[*i as usize % running.len()],
                exit: ContainerExit::Success,
                status: None,
            }
        }
        Op::Finish(app) => Event::AppFinished {
            app: AppId(u64::from(*app) % submitted.max(1)),
        },
        Op::Move { app, queue } => Event::Move {
            app: AppId(u64::from(*app) % submitted.max(1)),
            queue: QUEUES[*queue].to_string(),
        },
        Op::RemoveNode(n) => Event::NodeRemoved { node: NodeId(*n) },
        Op::AddNode(n) => node_event(*n),
        Op::Blacklist { app, add, remove } => Event::BlacklistUpdated {
            app: AppId(u64::from(*app) % submitted.max(1)),
            additions: add.iter().map(|i| PLACES[*i].to_string()).collect(),
            removals: remove.iter().map(|i| PLACES[*i].to_string()).collect(),
        },
        Op::Recover { app, node, mb, am } => Event::ContainerRecovered {
            // Ids from before a restart may lie anywhere ahead of the counter.
            container: ContainerId(next.0 + u64::from(*app)),
            app: AppId(u64::from(*app) % submitted.max(1)),
            node: NodeId(*node),
            resources: Resource::new(*mb, 1),
            priority: 0,
            am: *am,
        },
        Op::Priority { app, priority } => Event::AppPriorityChanged {
            app: AppId(u64::from(*app) % submitted.max(1)),
            priority: *priority,
        },
        Op::Restart { app, am } => Event::AttemptRestarted {
            app: AppId(u64::from(*app) % submitted.max(1)),
            am_resource: am.map(|mb| Resource::new(mb, 1)),
        },
    })
}
