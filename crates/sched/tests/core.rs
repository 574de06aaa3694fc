//! End-to-end checks of the scheduler core through its public event API.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{ContainerAsk, Decision, Event, Scheduler, SchedulerConfig};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

fn scheduler(xml: &str) -> Scheduler {
    scheduler_with(xml, Default::default())
}

fn scheduler_with(xml: &str, properties: weft_config::SchedulerProperties) -> Scheduler {
    let (allocations, _) =
        parse_allocations(xml, &ResourceTypes::default()).expect("valid allocations");
    Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    )
}

fn drain(s: &mut Scheduler) -> Vec<Decision> {
    std::iter::from_fn(|| s.poll_decision()).collect()
}

fn ask(mb: i64, count: u32) -> ContainerAsk {
    ContainerAsk {
        priority: 1,
        resources: Resource::new(mb, 1),
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
    }
}

fn add_node(s: &mut Scheduler, id: u32, mb: i64, vcores: i64) {
    s.handle(
        Time(0),
        Event::NodeAdded {
            node: NodeId(id),
            host: format!("n{id}"),
            rack: "/default-rack".into(),
            capability: Resource::new(mb, vcores),
        },
    )
    .expect("node added");
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
    .expect("submitted");
}

/// (node, size) of every allocation, in order.
fn allocated(decisions: &[Decision]) -> Vec<(NodeId, Resource)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated {
                node, resources, ..
            } => Some((*node, *resources)),
            _ => None,
        })
        .collect()
}

fn allocations_by_app(decisions: &[Decision]) -> std::collections::BTreeMap<u64, usize> {
    let mut m = std::collections::BTreeMap::new();
    for d in decisions {
        if let Decision::Allocated { app, .. } = d {
            *m.entry(app.0).or_insert(0) += 1;
        }
    }
    m
}

#[test]
fn weighted_queues_split_a_full_cluster_by_weight() {
    let mut s = scheduler(
        r#"<allocations>
             <queue name="a"><weight>3</weight></queue>
             <queue name="b"><weight>1</weight></queue>
           </allocations>"#,
    );
    add_node(&mut s, 1, 8192, 8);
    submit(&mut s, 1, "alice", "a");
    submit(&mut s, 2, "bob", "b");
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask(1024, 100),
        },
    )
    .unwrap();
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(2),
            ask: ask(1024, 100),
        },
    )
    .unwrap();
    s.handle(Time(0), Event::Update).unwrap();
    for t in 0..8 {
        s.handle(Time(t), Event::NodeHeartbeat { node: NodeId(1) })
            .unwrap();
        assert!(s.verify().is_empty(), "{:?}", s.verify());
    }
    let d = drain(&mut s);
    let by_app = allocations_by_app(&d);
    // Fair policy: usage/weight ordering, a (w=3) gets 6 of 8 GB, b (w=1) gets 2.
    assert_eq!(by_app.get(&1), Some(&6), "{d:?}");
    assert_eq!(by_app.get(&2), Some(&2), "{d:?}");
}

#[test]
fn fast_and_reference_walks_decide_the_same() {
    let xml = r#"<allocations>
         <queue name="a"><weight>2</weight><queue name="a1"/><queue name="a2"><minResources>2048 mb, 2 vcores</minResources></queue></queue>
         <queue name="b"/>
       </allocations>"#;
    let mut runs = Vec::new();
    for mode in [weft_sched::WalkMode::Fast, weft_sched::WalkMode::Reference] {
        let mut s = scheduler(xml);
        s.set_walk_mode(mode);
        for n in 1..=3 {
            add_node(&mut s, n, 4096, 4);
        }
        for (app, q) in [(1, "a.a1"), (2, "a.a2"), (3, "b"), (4, "b")] {
            submit(&mut s, app, "u", q);
            s.handle(
                Time(0),
                Event::Ask {
                    app: AppId(app),
                    ask: ask(512 * app as i64, 20),
                },
            )
            .unwrap();
        }
        let mut out = Vec::new();
        for t in 0..40u64 {
            if t % 5 == 0 {
                s.handle(Time(t), Event::Update).unwrap();
            }
            s.handle(
                Time(t),
                Event::NodeHeartbeat {
                    node: NodeId((t % 3) as u32 + 1),
                },
            )
            .unwrap();
            if t == 20 {
                s.handle(Time(t), Event::AppFinished { app: AppId(3) })
                    .unwrap();
            }
            out.extend(drain(&mut s));
            assert!(s.verify().is_empty(), "{mode:?} {:?}", s.verify());
        }
        runs.push(out);
    }
    assert!(!runs[0].is_empty());
    assert_eq!(runs[0], runs[1]);
}

fn ask_at(priority: i32, mb: i64, count: u32, hosts: &[&str], relax: bool) -> ContainerAsk {
    ContainerAsk {
        priority,
        resources: Resource::new(mb, 1),
        count,
        hosts: hosts.iter().map(|h| h.to_string()).collect(),
        racks: vec![],
        relax_locality: relax,
    }
}

#[test]
fn usage_past_a_stale_demand_still_counts_as_pending() {
    // Spec §3/§6.3 with Hadoop's getPendingDemand: demand (1024, from the last update) minus
    // usage (4096) is negative, which is not "none", so the app keeps being served.
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 16384, 8);
    submit(&mut s, 1, "alice", "a");
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask_at(2, 1024, 1, &[], true),
        },
    )
    .unwrap();
    s.handle(Time(0), Event::Update).unwrap();
    s.handle(
        Time(1),
        Event::Ask {
            app: AppId(1),
            ask: ask_at(1, 4096, 2, &[], true),
        },
    )
    .unwrap();
    s.handle(Time(2), Event::NodeHeartbeat { node: NodeId(1) })
        .unwrap();
    s.handle(Time(3), Event::NodeHeartbeat { node: NodeId(1) })
        .unwrap();
    let sizes: Vec<i64> = allocated(&drain(&mut s))
        .iter()
        .map(|(_, r)| r.memory_mb())
        .collect();
    assert_eq!(sizes, vec![4096, 4096]);
}

#[test]
fn a_spent_strict_rack_entry_does_not_block_the_rest_of_the_rack() {
    // One strict container on n1 (its rack inferred, relax=false) and two relaxed ones at the same
    // priority and size: once n1's container is placed, the rack entry is gone (Hadoop removes
    // requests at zero), so n2 on the same rack can take the others.
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 4096, 4);
    add_node(&mut s, 2, 4096, 4);
    submit(&mut s, 1, "alice", "a");
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask_at(1, 1024, 1, &["n1"], false),
        },
    )
    .unwrap();
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask_at(1, 1024, 2, &[], true),
        },
    )
    .unwrap();
    s.handle(Time(0), Event::Update).unwrap();
    s.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) })
        .unwrap();
    for t in 2..4 {
        s.handle(Time(t), Event::NodeHeartbeat { node: NodeId(2) })
            .unwrap();
    }
    let nodes: Vec<u32> = allocated(&drain(&mut s)).iter().map(|(n, _)| n.0).collect();
    assert_eq!(nodes, vec![1, 2, 2]);
}

/// The update reuses a leaf's app shares while its runnable apps and their weights stay the
/// same. With size-based weights a change of demand changes a weight, and a new app changes
/// the set: each time the shares must be those a scheduler computing afresh gets (the same
/// events, one update at the end).
#[test]
fn app_shares_follow_weight_and_membership_changes_across_updates() {
    fn events() -> Vec<Vec<Event>> {
        let asks = |app: u64, mb: i64, count: u32| Event::Ask {
            app: AppId(app),
            ask: ask(mb, count),
        };
        let submit = |app: u64| Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some("root.a".into()),
            am_resource: None,
        };
        vec![
            vec![submit(1), submit(2), asks(1, 1024, 4), asks(2, 1024, 1)],
            vec![asks(2, 1024, 30)],
            vec![submit(3), asks(3, 2048, 3)],
            vec![asks(1, 1024, 2)],
        ]
    }
    fn fresh(rounds: usize) -> Scheduler {
        let mut s = size_based();
        for batch in events().into_iter().take(rounds) {
            for e in batch {
                s.handle(Time(0), e).expect("accepted");
            }
        }
        s.handle(Time(0), Event::Update).expect("update");
        s
    }
    fn size_based() -> Scheduler {
        let properties = weft_config::SchedulerProperties {
            size_based_weight: true,
            ..Default::default()
        };
        let mut s = scheduler_with("<allocations><queue name=\"a\"/></allocations>", properties);
        add_node(&mut s, 1, 8192, 8);
        s
    }
    let shares = |s: &mut Scheduler| -> Vec<(u64, i64)> {
        s.snapshot()
            .apps
            .iter()
            .map(|a| (a.app.0, a.fair_share.memory_mb()))
            .collect()
    };
    let mut updated = size_based();
    let mut seen = Vec::new();
    for (round, batch) in events().into_iter().enumerate() {
        for e in batch {
            updated.handle(Time(0), e).expect("accepted");
        }
        updated.handle(Time(0), Event::Update).expect("update");
        let got = shares(&mut updated);
        assert_eq!(got, shares(&mut fresh(round + 1)), "after round {round}");
        seen.push(got);
    }
    // The rounds did move the shares (the check above is not comparing constants).
    assert!(seen.windows(2).all(|w| w[0] != w[1]), "{seen:?}");
    assert!(updated.verify().is_empty());
}

#[test]
fn with_nothing_timed_there_is_no_timeout_and_a_timeout_event_changes_nothing() {
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 4096, 4);
    submit(&mut s, 1, "alice", "root.default");
    drain(&mut s);
    assert_eq!(s.poll_timeout(), None, "Fair sets no timers yet");
    s.handle(Time(5_000), Event::Timeout)
        .expect("a timeout is always taken");
    assert_eq!(drain(&mut s), vec![], "nothing was due");
    assert!(s.verify().is_empty());
}
