//! End-to-end checks of the scheduler core through its public event API.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{AskTag, ContainerAsk, Decision, Event, RejectCode, Scheduler, SchedulerConfig};
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
        tag: weft_sched::AskTag::NONE,
    }
}

fn add_node(s: &mut Scheduler, id: u32, mb: i64, vcores: i64) {
    s.handle(
        Time(0),
        Event::NodeAdded {
            node: NodeId(id),
            host: format!("n{id}"),
            port: 0,
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
        tag: weft_sched::AskTag::NONE,
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

fn tagged(priority: i32, count: u32, tag: u64) -> ContainerAsk {
    ContainerAsk {
        priority,
        tag: AskTag(tag),
        ..ask_at(priority, 1024, count, &[], true)
    }
}

/// Heartbeats node 1 `n` times and returns the (priority, tag) of each allocation, checking
/// the scheduler's state after each.
fn tags_of_heartbeats(s: &mut Scheduler, n: u64) -> Vec<(i32, AskTag)> {
    let mut got = Vec::new();
    // Demand is what the last update saw (spec §3): without one the apps have none.
    s.handle(Time(0), Event::Update).expect("update");
    for t in 0..n {
        s.handle(Time(t), Event::NodeHeartbeat { node: NodeId(1) })
            .expect("heartbeat");
        assert_eq!(s.verify(), Vec::<String>::new());
        for d in drain(s) {
            if let Decision::Allocated { priority, tag, .. } = d {
                got.push((priority, tag));
            }
        }
    }
    got
}

#[test]
fn allocations_carry_the_oldest_asks_tag_and_a_cancel_takes_the_newest() {
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 16384, 16);
    submit(&mut s, 1, "alice", "a");
    let app = AppId(1);
    // Three asks of one size at one priority merge into one request of five containers.
    for a in [tagged(1, 2, 10), tagged(1, 1, 0), tagged(1, 2, 30)] {
        s.handle(Time(0), Event::Ask { app, ask: a }).expect("ask");
    }
    s.handle(
        Time(0),
        Event::CancelAsks {
            app,
            priority: Some(1),
            count: Some(2),
        },
    )
    .expect("cancel");
    assert_eq!(s.verify(), Vec::<String>::new());
    let got = tags_of_heartbeats(&mut s, 5);
    assert_eq!(
        got,
        vec![(1, AskTag(10)), (1, AskTag(10)), (1, AskTag::NONE)],
        "the two newest (tag 30) were cancelled; the rest come oldest first"
    );
}

#[test]
fn a_cancel_without_priority_withdraws_the_most_important_priority_first() {
    // The scheduler's order for a cancel with a count and no priority: priorities by number,
    // lowest first. The container that remains carries its own ask's tag.
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 16384, 16);
    submit(&mut s, 1, "alice", "a");
    let app = AppId(1);
    for a in [tagged(1, 1, 10), tagged(2, 1, 100)] {
        s.handle(Time(0), Event::Ask { app, ask: a }).expect("ask");
    }
    s.handle(
        Time(0),
        Event::CancelAsks {
            app,
            priority: None,
            count: Some(1),
        },
    )
    .expect("cancel");
    assert_eq!(tags_of_heartbeats(&mut s, 3), vec![(2, AskTag(100))]);
}

#[test]
fn a_tag_added_to_a_request_with_untagged_asks_comes_after_them() {
    let mut s = scheduler("<allocations/>");
    add_node(&mut s, 1, 16384, 16);
    submit(&mut s, 1, "alice", "a");
    let app = AppId(1);
    for a in [tagged(3, 2, 0), tagged(3, 1, 7)] {
        s.handle(Time(0), Event::Ask { app, ask: a }).expect("ask");
    }
    assert_eq!(
        tags_of_heartbeats(&mut s, 4),
        vec![(3, AskTag::NONE), (3, AskTag::NONE), (3, AskTag(7))]
    );
}

#[test]
fn each_kind_of_rejection_has_its_code() {
    let xml = r#"<allocations>
      <queue name="root">
        <aclSubmitApps> </aclSubmitApps>
        <aclAdministerApps> </aclAdministerApps>
        <queue name="open"><aclSubmitApps>*</aclSubmitApps></queue>
        <queue name="closed"/>
        <queue name="parent" type="parent"><aclSubmitApps>*</aclSubmitApps></queue>
        <queue name="leaf"><aclSubmitApps>*</aclSubmitApps></queue>
      </queue>
      <queuePlacementPolicy>
        <rule name="specified" create="true"/>
        <rule name="reject"/>
      </queuePlacementPolicy>
    </allocations>"#;
    let mut s = scheduler(xml);
    let cases: [(Option<&str>, Option<RejectCode>); 6] = [
        (Some("open"), None),
        (Some("closed"), Some(RejectCode::AclDenied)),
        (Some("parent"), Some(RejectCode::QueueNotLeaf)),
        (Some("leaf.below"), Some(RejectCode::QueueNotLeaf)),
        (Some("a..b"), Some(RejectCode::InvalidQueueName)),
        (None, Some(RejectCode::PlacementRejected)),
    ];
    for (i, (queue, want)) in cases.into_iter().enumerate() {
        let app = AppId(i as u64 + 1);
        s.handle(
            Time(0),
            Event::AppSubmitted {
                app,
                user: "carol".into(),
                queue: queue.map(str::to_string),
                am_resource: None,
            },
        )
        .expect("a rejection is a decision, not an error");
        let got = drain(&mut s).into_iter().find_map(|d| match d {
            Decision::Rejected { code, reason, .. } => Some(Some((code, reason))),
            Decision::Accepted { .. } => Some(None),
            _ => None,
        });
        let got = got.expect("accepted or rejected");
        assert_eq!(
            got.as_ref().map(|(c, _)| *c),
            want,
            "queue {queue:?}: {got:?}"
        );
    }
    let names: Vec<&str> = RejectCode::ALL.iter().map(|c| c.as_str()).collect();
    let mut unique = names.clone();
    unique.sort_unstable();
    unique.dedup();
    assert_eq!(unique.len(), names.len(), "codes are distinct: {names:?}");
}
