//! Property tests on random event sequences:
//! * the fast walk makes exactly the decisions the reference walk makes;
//! * every maintained aggregate and order equals its recomputation (`verify`), and no node is
//!   ever over capacity.

use proptest::prelude::*;
use weft_config::{AllocationConfig, PolicyKind, QueueConfig, SchedulerProperties};
use weft_sched::{
    ContainerAsk, ContainerExit, Decision, Event, Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, ContainerId, NodeId, Resource, Time};

const QUEUES: &[&str] = &[
    "root.a.a1",
    "root.a.a2",
    "root.b",
    "root.c.c1",
    "root.default",
];
const NODES: u32 = 4;

fn config(assign_multiple: bool, locality: bool) -> SchedulerConfig {
    let mut allocations = AllocationConfig::default();
    let mut add = |name: &str, f: &dyn Fn(&mut QueueConfig)| {
        let mut q = QueueConfig {
            name: name.to_string(),
            ..Default::default()
        };
        f(&mut q);
        allocations.queues.insert(name.to_string(), q);
    };
    add("root.a", &|q| {
        q.is_parent = true;
        q.weight = Some(2.0);
        q.scheduling_policy = Some(PolicyKind::Drf);
        q.max_running_apps = Some(3);
    });
    add("root.a.a1", &|q| {
        q.scheduling_policy = Some(PolicyKind::Fifo)
    });
    add("root.a.a2", &|q| {
        q.min_resources = Some(Resource::new(2048, 2));
        q.scheduling_policy = Some(PolicyKind::Drf);
    });
    add("root.b", &|q| {
        q.max_resources = Some(weft_config::ConfiguredResource::Absolute(Resource::new(
            6144, 6,
        )));
        q.max_am_share = Some(0.3);
    });
    add("root.c", &|q| q.is_parent = true);
    add("root.c.c1", &|q| q.weight = Some(0.0));
    allocations.user_max_apps.insert("u1".into(), 2);
    let threshold = if locality { 0.5 } else { -1.0 };
    let properties = SchedulerProperties {
        assign_multiple,
        locality_threshold_node: threshold,
        locality_threshold_rack: threshold,
        ..Default::default()
    };
    SchedulerConfig {
        allocations,
        properties,
    }
}

#[derive(Clone, Debug)]
enum Op {
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
}

fn op() -> impl Strategy<Value = Op> {
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
    ]
}

fn node_event(n: u32) -> Event {
    Event::NodeAdded {
        node: NodeId(n),
        host: format!("h{n}"),
        rack: format!("/r{}", n % 2),
        capability: Resource::new(4096 * (1 + n as i64 % 2), 4),
    }
}

/// Turns an op into an event against the current state (so most events are valid).
fn to_event(op: &Op, submitted: u64, running: &[ContainerId]) -> Option<Event> {
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
    })
}

fn run(ops: &[Op], assign_multiple: bool, locality: bool) -> Result<(), TestCaseError> {
    let mut fast = Scheduler::new(config(assign_multiple, locality), Default::default());
    let mut reference = Scheduler::new(config(assign_multiple, locality), Default::default());
    reference.set_walk_mode(WalkMode::Reference);
    for n in 0..NODES {
        fast.handle(Time(0), node_event(n)).expect("node");
        reference.handle(Time(0), node_event(n)).expect("node");
    }
    let mut submitted = 0u64;
    let mut running: Vec<ContainerId> = Vec::new();
    for (step, op) in ops.iter().enumerate() {
        let Some(event) = to_event(op, submitted, &running) else {
            continue;
        };
        if matches!(op, Op::Submit { .. }) {
            submitted += 1;
        }
        let now = Time(step as u64 * 100);
        let a = fast.handle(now, event.clone());
        let b = reference.handle(now, event);
        prop_assert_eq!(&a, &b, "step {}: {:?}", step, op);
        let da: Vec<Decision> = std::iter::from_fn(|| fast.poll_decision()).collect();
        let db: Vec<Decision> = std::iter::from_fn(|| reference.poll_decision()).collect();
        prop_assert_eq!(&da, &db, "step {}: {:?}", step, op);
        for d in &da {
            match d {
                Decision::Allocated { container, .. } => running.push(*container),
                Decision::Completed { container, .. } => running.retain(|c| c != container),
                _ => {}
            }
        }
        let drift = fast.verify();
        prop_assert!(
            drift.is_empty(),
            "fast path drift at step {} ({:?}): {:?}",
            step,
            op,
            drift
        );
        let drift = reference.verify();
        prop_assert!(
            drift.is_empty(),
            "reference drift at step {} ({:?}): {:?}",
            step,
            op,
            drift
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn fast_path_decides_like_the_reference(ops in prop::collection::vec(op(), 1..120), multiple in any::<bool>(), locality in any::<bool>()) {
        run(&ops, multiple, locality)?;
    }
}
