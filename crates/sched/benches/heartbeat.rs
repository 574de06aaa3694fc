//! One node heartbeat at production scale: 12,000 nodes, 2,000 leaf queues, 10,000 running apps.
//!
//! Each iteration is one heartbeat (which allocates one container, the default without
//! assignmultiple) followed by that container's completion, so the state stays stationary.
//! The fast path and the reference walk run on the same state in the same run.

use criterion::{criterion_group, criterion_main, Criterion};
use std::collections::BTreeMap;
use weft_config::{AllocationConfig, QueueConfig};
use weft_sched::{
    ContainerAsk, ContainerExit, Decision, Event, Scheduler, SchedulerConfig, WalkMode,
};
use weft_types::{AppId, NodeId, Resource, Time};

const NODES: u32 = 12_000;
const PARENTS: usize = 40;
const LEAVES_PER_PARENT: usize = 50;
const APPS: u64 = 10_000;

fn build(mode: WalkMode) -> Scheduler {
    let mut queues = BTreeMap::new();
    for p in 0..PARENTS {
        let parent = format!("root.p{p:02}");
        queues.insert(
            parent.clone(),
            QueueConfig {
                name: parent.clone(),
                is_parent: true,
                weight: Some(1.0 + (p % 3) as f32),
                ..Default::default()
            },
        );
        for l in 0..LEAVES_PER_PARENT {
            let name = format!("{parent}.q{l:02}");
            queues.insert(
                name.clone(),
                QueueConfig {
                    name,
                    ..Default::default()
                },
            );
        }
    }
    let allocations = AllocationConfig {
        queues,
        ..Default::default()
    };
    let properties = weft_config::SchedulerProperties {
        maximum_allocation: Resource::new(409_600, 100),
        ..Default::default()
    };
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    s.set_walk_mode(mode);
    for n in 0..NODES {
        s.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("h{n}"),
                port: 0,
                rack: format!("/r{}", n / 40),
                capability: Resource::new(409_600, 100),
            },
        )
        .expect("node");
    }
    for a in 0..APPS {
        let leaf = a as usize % (PARENTS * LEAVES_PER_PARENT);
        let queue = format!(
            "root.p{:02}.q{:02}",
            leaf / LEAVES_PER_PARENT,
            leaf % LEAVES_PER_PARENT
        );
        s.handle(
            Time(a),
            Event::AppSubmitted {
                app: AppId(a),
                user: format!("u{}", a % 500),
                queue: Some(queue),
                am_resource: None,
            },
        )
        .expect("submit");
        s.handle(
            Time(a),
            Event::Ask {
                app: AppId(a),
                ask: ContainerAsk {
                    priority: 1,
                    resources: Resource::new(4096, 1),
                    count: 1_000,
                    hosts: vec![],
                    racks: vec![],
                    relax_locality: true,
                    tag: weft_sched::AskTag::NONE,
                },
            },
        )
        .expect("ask");
    }
    s.handle(Time(APPS), Event::Update).expect("update");
    while s.poll_decision().is_some() {}
    s
}

fn heartbeat_then_complete(s: &mut Scheduler, node: u32) {
    s.handle(Time(APPS), Event::NodeHeartbeat { node: NodeId(node) })
        .expect("heartbeat");
    let mut done = Vec::new();
    while let Some(d) = s.poll_decision() {
        if let Decision::Allocated { container, .. } = d {
            done.push(container);
        }
    }
    for c in done {
        s.handle(
            Time(APPS),
            Event::ContainerCompleted {
                container: c,
                exit: ContainerExit::Success,
                status: None,
            },
        )
        .expect("complete");
    }
    while s.poll_decision().is_some() {}
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("heartbeat_12k_nodes_2k_queues_10k_apps");
    group.sample_size(20);
    for (name, mode) in [("fast", WalkMode::Fast), ("reference", WalkMode::Reference)] {
        let mut s = build(mode);
        let mut node = 0;
        group.bench_function(name, |b| {
            b.iter(|| {
                node = (node + 1) % NODES;
                heartbeat_then_complete(&mut s, node);
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
