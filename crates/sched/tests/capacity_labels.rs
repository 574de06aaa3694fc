//! The Capacity Scheduler's exclusive node partitions (Hadoop's node labels) through the
//! public API: confinement, per-partition capacities and maximums, label expressions refused
//! as Hadoop refuses them, relabeling, and DEFAULT deciding as it does without labels.

use weft_config::capacity::{parse_capacity, NodePartitions};
use weft_config::SchedulerProperties;
use weft_sched::{
    AskTag, CapacitySchedulerConfig, ContainerAsk, Decision, Event, Placement, RejectCode,
    SchedError, Scheduler, SchedulerConfig,
};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

const MB: i64 = 1024;

fn config(props: &[(&str, &str)], partitions: &[(&str, &str)]) -> SchedulerConfig {
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (mut capacity, _) = parse_capacity(&xml, &ResourceTypes::default()).expect("valid");
    let mut labels: Vec<String> = partitions.iter().map(|(_, l)| l.to_string()).collect();
    labels.sort();
    labels.dedup();
    capacity.partitions = NodePartitions {
        labels,
        nodes: partitions
            .iter()
            .map(|(h, l)| (h.to_string(), l.to_string()))
            .collect(),
    };
    SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties: SchedulerProperties::default(),
    })
}

/// root.a reaches x (all of it) and submits there by default, its leaves a1 (x 75, max 75)
/// and a2 (x 25); root.b is DEFAULT only. DEFAULT is split a 50 / b 50.
const LABELED: &[(&str, &str)] = &[
    ("root.queues", "a,b"),
    ("root.a.capacity", "50"),
    ("root.b.capacity", "50"),
    ("root.accessible-node-labels.x.capacity", "100"),
    ("root.a.accessible-node-labels", "x"),
    ("root.a.accessible-node-labels.x.capacity", "100"),
    ("root.a.default-node-label-expression", "x"),
    ("root.a.queues", "a1,a2"),
    ("root.a.a1.capacity", "50"),
    ("root.a.a2.capacity", "50"),
    ("root.a.a1.accessible-node-labels.x.capacity", "75"),
    ("root.a.a1.accessible-node-labels.x.maximum-capacity", "75"),
    ("root.a.a2.accessible-node-labels.x.capacity", "25"),
    ("root.b.accessible-node-labels", ","),
];

/// Nodes 0, 1 (hosts x1, x2) and 2, 3 (hosts d1, d2), 8192 MB and 8 vcores each.
fn add_nodes(s: &mut Scheduler) {
    for (n, host) in ["x1", "x2", "d1", "d2"].into_iter().enumerate() {
        s.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(n as u32),
                host: host.into(),
                port: 8041,
                rack: "/r".into(),
                capability: Resource::new(8 * MB, 8),
            },
        )
        .expect("node");
    }
}

fn submit(s: &mut Scheduler, app: u64, user: &str, queue: &str) {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: user.into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    )
    .expect("submit");
}

fn ask(s: &mut Scheduler, app: u64, count: u32) {
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(app),
            ask: ContainerAsk {
                priority: 1,
                resources: Resource::new(MB, 1),
                count,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: AskTag::default(),
            },
        },
    )
    .expect("ask");
}

/// `rounds` heartbeats of every node, in node order; every decision in order.
fn heartbeats(s: &mut Scheduler, rounds: u32) -> Vec<Decision> {
    let mut out = Vec::new();
    for _ in 0..rounds {
        for n in 0..4 {
            s.handle(Time(1000), Event::NodeHeartbeat { node: NodeId(n) })
                .expect("heartbeat");
            out.extend(std::iter::from_fn(|| s.poll_decision()));
        }
    }
    out
}

/// The nodes `app`'s containers went to, one entry per container.
fn placed(decisions: &[Decision], app: u64) -> Vec<u32> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated { app: a, node, .. } if *a == AppId(app) => Some(node.0),
            _ => None,
        })
        .collect()
}

#[test]
fn a_partition_serves_only_its_apps_with_its_own_capacities() {
    let mut s = Scheduler::new(
        config(LABELED, &[("x1", "x"), ("x2", "x")]),
        Default::default(),
    );
    add_nodes(&mut s);
    submit(&mut s, 1, "alice", "a1");
    submit(&mut s, 2, "bob", "b");
    submit(&mut s, 3, "carol", "a2");
    assert_eq!(s.app_partition(AppId(1)), Some("x"));
    assert_eq!(s.app_partition(AppId(2)), Some(""));
    ask(&mut s, 1, 20);
    ask(&mut s, 2, 20);
    ask(&mut s, 3, 20);
    let d = heartbeats(&mut s, 30);
    // x is 2 x 8192 = 16384 MB: a1 may use 75% of it (12288, its maximum: 12 containers), a2
    // the remaining 4 (its guarantee, 4096, with the user limit of a leaf guaranteeing 4096).
    let (one, three) = (placed(&d, 1), placed(&d, 3));
    assert_eq!(one.len(), 12, "{one:?}");
    assert_eq!(three.len(), 4, "{three:?}");
    assert!(
        one.iter().chain(&three).all(|n| *n < 2),
        "x apps on x nodes"
    );
    // b's app never gets an x node, and does get DEFAULT's.
    let two = placed(&d, 2);
    assert!(!two.is_empty() && two.iter().all(|n| *n >= 2), "{two:?}");
    let x = s
        .pool_stats()
        .into_iter()
        .find(|p| p.name == "x")
        .expect("x");
    assert_eq!((x.nodes, x.capacity.memory_mb()), (2, 16 * MB));
    assert_eq!(x.used.memory_mb(), 16 * MB);
    // The per-partition figures: a1 uses 100% of its x guarantee (12288) and 75% of x.
    let details = s.capacity_details();
    let a1 = details.iter().find(|q| q.name == "root.a.a1").expect("a1");
    let (label, in_x) = a1.by_partition.first().expect("a1 in x");
    assert_eq!(label, "x");
    assert_eq!(in_x.effective_min.memory_mb(), 12 * MB);
    assert!(
        (in_x.used_capacity - 100.0).abs() < 1e-6,
        "{}",
        in_x.used_capacity
    );
    assert!((in_x.absolute_used_capacity - 75.0).abs() < 1e-6);
    assert!((a1.used_capacity).abs() < 1e-6, "nothing in DEFAULT");
    let b = details.iter().find(|q| q.name == "root.b").expect("b");
    assert!(b.by_partition.is_empty(), "b cannot access x");
    assert_eq!(s.node_pool(NodeId(0)), Some("x"));
    assert_eq!(s.node_pool(NodeId(3)), Some(""));
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn label_expressions_the_queue_cannot_use_are_refused_with_hadoops_texts() {
    let mut s = Scheduler::new(
        config(LABELED, &[("x1", "x"), ("x2", "x")]),
        Default::default(),
    );
    add_nodes(&mut s);
    let refused = s
        .submit_labeled(
            Time(0),
            AppId(1),
            "bob".into(),
            Some("b".into()),
            None,
            None,
            Some("x"),
        )
        .expect("answered");
    assert_eq!(
        refused,
        Placement::Rejected {
            reason: "Invalid resource request, queue=root.b doesn't have permission to access all labels in resource request. labelExpression of resource request=x. Queue labels=".into(),
            code: RejectCode::LabelNotAccessible,
        }
    );
    assert_eq!(
        RejectCode::LabelNotAccessible.as_str(),
        "label_not_accessible"
    );
    // a reaches only x.
    let refused = s
        .submit_labeled(
            Time(0),
            AppId(2),
            "alice".into(),
            Some("a1".into()),
            None,
            None,
            Some("gpu"),
        )
        .expect("answered");
    assert!(
        matches!(&refused, Placement::Rejected { reason, .. } if reason.ends_with("labelExpression of resource request=gpu. Queue labels=x")),
        "{refused:?}"
    );
    // b's own expression of DEFAULT (blank) is its default: accepted, on DEFAULT.
    let accepted = s
        .submit_labeled(
            Time(0),
            AppId(3),
            "bob".into(),
            Some("b".into()),
            None,
            None,
            Some(" "),
        )
        .expect("answered");
    assert!(
        matches!(accepted, Placement::Accepted { .. }),
        "{accepted:?}"
    );
    assert_eq!(s.app_partition(AppId(3)), Some(""));
}

#[test]
fn a_label_the_cluster_lacks_refuses_the_queues_apps() {
    // The file names x as a's default, the registry has no label: Hadoop's
    // InvalidLabelResourceRequestException.
    let mut s = Scheduler::new(config(LABELED, &[]), Default::default());
    add_nodes(&mut s);
    submit(&mut s, 1, "alice", "a1");
    let d: Vec<Decision> = std::iter::from_fn(|| s.poll_decision()).collect();
    assert_eq!(
        d,
        vec![Decision::Rejected {
            app: AppId(1),
            reason: "Invalid label resource request, cluster do not contain , label= x".into(),
            code: RejectCode::LabelNotAccessible,
        }]
    );
    submit(&mut s, 2, "bob", "b");
    ask(&mut s, 2, 2);
    assert_eq!(placed(&heartbeats(&mut s, 2), 2).len(), 2);
}

/// Apps in b and c (DEFAULT) with asks and completions, the same events whatever the nodes.
fn default_workload(s: &mut Scheduler, nodes: &[u32]) -> Vec<Decision> {
    let mut out = Vec::new();
    for (app, user, queue) in [(1, "u1", "b"), (2, "u2", "c"), (3, "u1", "c")] {
        s.handle(
            Time(0),
            Event::AppSubmitted {
                app: AppId(app),
                user: user.into(),
                queue: Some(queue.into()),
                am_resource: Some(Resource::new(MB, 1)),
            },
        )
        .expect("submit");
        ask(s, app, 9);
    }
    for round in 0..12u64 {
        for n in nodes {
            s.handle(
                Time(round * 1000),
                Event::NodeHeartbeat { node: NodeId(*n) },
            )
            .expect("heartbeat");
        }
        if round == 6 {
            s.handle(Time(round * 1000), Event::AppFinished { app: AppId(2) })
                .expect("finish");
        }
        out.extend(std::iter::from_fn(|| s.poll_decision()));
    }
    out
}

#[test]
fn default_decides_as_without_labels() {
    // The same file without label keys; with labels, x1 and x2 are in x, which no app uses:
    // DEFAULT (d1, d2) must decide exactly as a cluster of d1 and d2 alone.
    let plain: &[(&str, &str)] = &[
        ("root.queues", "b,c"),
        ("root.b.capacity", "30"),
        ("root.c.capacity", "70"),
        ("root.c.maximum-capacity", "80"),
        ("root.c.minimum-user-limit-percent", "50"),
    ];
    let mut labeled = Scheduler::new(
        config(plain, &[("x1", "x"), ("x2", "x")]),
        Default::default(),
    );
    add_nodes(&mut labeled);
    let mut alone = Scheduler::new(config(plain, &[]), Default::default());
    for n in [2u32, 3] {
        alone
            .handle(
                Time(0),
                Event::NodeAdded {
                    node: NodeId(n),
                    host: if n == 2 { "d1" } else { "d2" }.into(),
                    port: 8041,
                    rack: "/r".into(),
                    capability: Resource::new(8 * MB, 8),
                },
            )
            .expect("node");
    }
    let with_labels = default_workload(&mut labeled, &[0, 1, 2, 3]);
    let without = default_workload(&mut alone, &[2, 3]);
    assert!(with_labels.len() > 10, "{with_labels:?}");
    assert_eq!(with_labels, without);
    assert!(labeled.verify().is_empty(), "{:?}", labeled.verify());
}

#[test]
fn nodes_change_partition_by_reload_only_while_they_run_nothing() {
    let mut s = Scheduler::new(config(LABELED, &[]), Default::default());
    add_nodes(&mut s);
    submit(&mut s, 1, "bob", "b");
    ask(&mut s, 1, 1);
    let d = heartbeats(&mut s, 1);
    assert_eq!(placed(&d, 1), vec![0], "x1 is DEFAULT's for now");
    // x1 runs bob's container: it may not move to x yet.
    let refused = s.handle(
        Time(2000),
        Event::Reload(Box::new(config(LABELED, &[("x1", "x"), ("x2", "x")]))),
    );
    assert!(
        matches!(&refused, Err(SchedError::ConfigRefused(why)) if why.contains("node x1:8041 runs containers in partition ''")),
        "{refused:?}"
    );
    assert_eq!(s.node_pool(NodeId(0)), Some(""));
    // x2 alone may.
    s.handle(
        Time(2000),
        Event::Reload(Box::new(config(LABELED, &[("x2", "x")]))),
    )
    .expect("x2 moves");
    assert_eq!(s.node_pool(NodeId(1)), Some("x"));
    submit(&mut s, 2, "alice", "a2");
    ask(&mut s, 2, 30);
    let d = heartbeats(&mut s, 12);
    let two = placed(&d, 2);

    assert!(two.iter().all(|n| *n == 1), "{two:?}");
    // A label gone takes its nodes back to DEFAULT only once its apps are gone.
    let refused = s.handle(Time(3000), Event::Reload(Box::new(config(LABELED, &[]))));
    assert!(
        matches!(refused, Err(SchedError::ConfigRefused(_))),
        "{refused:?}"
    );
    s.handle(Time(3000), Event::AppFinished { app: AppId(2) })
        .expect("finish");
    s.handle(Time(3000), Event::Reload(Box::new(config(LABELED, &[]))))
        .expect("x is gone");
    assert_eq!(s.node_pool(NodeId(1)), Some(""));
    assert_eq!(s.cluster_capacity().memory_mb(), 32 * MB);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_move_keeps_the_app_in_a_queue_that_reaches_its_partition() {
    let mut s = Scheduler::new(
        config(LABELED, &[("x1", "x"), ("x2", "x")]),
        Default::default(),
    );
    add_nodes(&mut s);
    submit(&mut s, 1, "alice", "a1");
    let refused = s.handle(
        Time(0),
        Event::Move {
            app: AppId(1),
            queue: "b".into(),
        },
    );
    assert!(
        matches!(&refused, Err(SchedError::MoveRefused { reason, .. }) if reason == "Specified queue=root.b can't satisfy following apps label expressions =x accessible node labels ="),
        "{refused:?}"
    );
    s.handle(
        Time(0),
        Event::Move {
            app: AppId(1),
            queue: "a2".into(),
        },
    )
    .expect("a2 reaches x");
    assert_eq!(s.queue_name(AppId(1)), Some("root.a.a2"));
}
