//! Resource pools in the scheduler core (resource-pools spec §6-§8), figures derived by hand:
//! headroom and the AM limit against the pool, per-pool reservable-node counts, and the
//! admission refusals' codes and texts through `Scheduler::submit`.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    ContainerAsk, Decision, Event, Placement, RejectCode, Scheduler, SchedulerConfig,
};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

/// pool1 = n1, pool2 = n2, u in no pool; every node 8192 MB / 8 vcores.
const POOLS: &str = r#"<allocations>
  <resourcePools>
    <resourcePool name="pool1"><host>n1</host></resourcePool>
    <resourcePool name="pool2"><host>n2</host></resourcePool>
    <resourcePool name="pool3"/>
  </resourcePools>
  <queue name="pool1_ads"><maxAMShare>0.5</maxAMShare></queue>
  <queue name="pool1_search"/>
  <queue name="pool2_etl"/>
  <queue name="pool3_x"/>
  <queue name="adhoc"/>
</allocations>"#;

fn handle(s: &mut Scheduler, event: Event) -> Vec<Decision> {
    s.handle(Time(0), event).expect("event accepted");
    let mut out = Vec::new();
    while let Some(d) = s.poll_decision() {
        out.push(d);
    }
    assert_eq!(s.verify(), Vec::<String>::new(), "no drift");
    out
}

fn scheduler() -> Scheduler {
    let (allocations, _) =
        parse_allocations(POOLS, &ResourceTypes::default()).expect("valid allocations");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    );
    for (id, host) in [(1, "n1"), (2, "n2"), (3, "u")] {
        handle(
            &mut s,
            Event::NodeAdded {
                node: NodeId(id),
                host: host.into(),
                port: 8041,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
    s
}

fn submit(s: &mut Scheduler, app: u64, queue: &str, am: Option<Resource>) -> Placement {
    let placement = s
        .submit(Time(0), AppId(app), "alice".into(), Some(queue.into()), am)
        .expect("new id");
    while s.poll_decision().is_some() {}
    placement
}

fn ask(s: &mut Scheduler, app: u64, count: u32) {
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(1024, 1),
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: weft_sched::AskTag::NONE,
    };
    handle(
        s,
        Event::Ask {
            app: AppId(app),
            ask,
        },
    );
}

fn allocated_on(decisions: &[Decision]) -> Vec<(u64, u32)> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated { app, node, .. } => Some((app.0, node.0)),
            _ => None,
        })
        .collect()
}

#[test]
fn the_two_seed_refusals_carry_their_codes_and_texts_and_a_bound_queue_is_accepted() {
    let mut s = scheduler();
    match submit(&mut s, 1, "adhoc", None) {
        Placement::Rejected { code, reason } => {
            assert_eq!(code, RejectCode::NoResourcePool);
            assert_eq!(reason, "Application app_0001 submitted by user alice to queue root.adhoc rejected: queue root.adhoc is not bound to any resource pool (resource pools: pool1, pool2, pool3)");
        }
        other => panic!("adhoc must be refused: {other:?}"),
    }
    match submit(&mut s, 2, "pool3_x", None) {
        Placement::Rejected { code, reason } => {
            assert_eq!(code, RejectCode::ResourcePoolEmpty);
            assert!(
                reason
                    .ends_with("to queue root.pool3_x rejected: resource pool pool3 has no hosts"),
                "{reason}"
            );
        }
        other => panic!("pool3_x must be refused: {other:?}"),
    }
    assert!(matches!(
        submit(&mut s, 3, "pool1_ads", None),
        Placement::Accepted { .. }
    ));
}

/// B13: pool1 (n1) is full and pool2 (n2) empty. A pool1_ads app's headroom counts pool1's
/// free resources only: min(pool free 0, max share - usage, fair share - usage) = 0 memory,
/// where the cluster-wide figure would be n2's and u's 16384 MB.
#[test]
fn headroom_counts_only_the_apps_pool() {
    let mut s = scheduler();
    submit(&mut s, 1, "pool1_ads", None);
    ask(&mut s, 1, 8);
    handle(&mut s, Event::Update);
    let mut placed = Vec::new();
    for _ in 0..8 {
        for node in 1..=3 {
            placed.extend(allocated_on(&handle(
                &mut s,
                Event::NodeHeartbeat { node: NodeId(node) },
            )));
        }
    }
    assert_eq!(placed.len(), 8, "n1 holds 8 containers of 1024 MB");
    assert!(placed.iter().all(|(_, node)| *node == 1), "{placed:?}");
    ask(&mut s, 1, 1);
    handle(&mut s, Event::Update);
    assert_eq!(s.headroom(AppId(1)).map(|h| h.memory_mb()), Some(0));
    // Under `fair` vcores are capped by the free resources only, not the fair share: 0 is
    // pool1's free vcores, where the cluster's would be 16.
    assert_eq!(s.headroom(AppId(1)).map(|h| h.vcores()), Some(0));
}

/// maxAMShare against the pool: pool1_ads and pool1_search split pool1's 8192 MB (4096 each
/// once both are active), so pool1_ads's AM limit is 0.5 x 4096 = 2048 MB: two AMs of 1024 MB
/// start on n1 and the third waits, however empty n2 and u are. (Against the cluster, 24576 MB
/// split three ways, the limit would have let four start.)
#[test]
fn the_am_limit_is_a_share_of_the_pool_relative_fair_share() {
    let mut s = scheduler();
    submit(&mut s, 9, "pool1_search", None);
    ask(&mut s, 9, 1);
    for app in 1..=3 {
        submit(&mut s, app, "pool1_ads", Some(Resource::new(1024, 1)));
    }
    handle(&mut s, Event::Update);
    let mut ams = Vec::new();
    for _ in 0..4 {
        for node in 1..=3 {
            for d in handle(&mut s, Event::NodeHeartbeat { node: NodeId(node) }) {
                if let Decision::Allocated {
                    app,
                    node,
                    am: true,
                    ..
                } = d
                {
                    ams.push((app.0, node.0));
                }
            }
        }
        handle(&mut s, Event::Update);
    }
    assert_eq!(
        ams,
        [(1, 1), (2, 1)],
        "two AMs on n1, the third held by the AM limit"
    );
}

/// B12 (DRF relative to the pool): pool1's hosts are memory-heavy (65536 MB / 8 vcores), pool2's
/// CPU-heavy (8192 MB / 32 vcores); drf everywhere; apps ask 4096 MB / 1 vcore. Each pool must
/// decide exactly as a cluster made of only its hosts and queues: the same allocations (app,
/// node) in the same order, and the same instantaneous fair shares, because DRF's dominant shares are
/// fractions of the pool's capacity, not the cluster's (against the cluster, memory would
/// dominate in pool2 and vcores in pool1 differently than each pool alone).
#[test]
fn drf_inside_each_pool_decides_as_that_pool_alone() {
    const QUEUES: [&str; 4] = ["pool1_x", "pool1_y", "pool2_x", "pool2_y"];
    let xml = |pools: bool, keep: &str| {
        let mut text = String::from(
            "<allocations>\n<defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>\n",
        );
        if pools {
            text.push_str(
                r#"<resourcePools>
  <resourcePool name="pool1"><host>m1</host><host>m2</host></resourcePool>
  <resourcePool name="pool2"><host>c1</host><host>c2</host></resourcePool>
</resourcePools>
"#,
            );
        }
        for (i, q) in QUEUES.iter().enumerate() {
            if q.starts_with(keep) {
                text.push_str(&format!(
                    "<queue name=\"{q}\"><weight>{}</weight></queue>\n",
                    1 + i % 2
                ));
            }
        }
        text.push_str("</allocations>");
        let (allocations, _) =
            parse_allocations(&text, &ResourceTypes::default()).expect("valid allocations");
        Scheduler::new(
            SchedulerConfig::fair(allocations, Default::default()),
            Default::default(),
        )
    };
    let nodes = [
        (1, "m1", Resource::new(65536, 8)),
        (2, "m2", Resource::new(65536, 8)),
        (3, "c1", Resource::new(8192, 32)),
        (4, "c2", Resource::new(8192, 32)),
    ];
    let mut both = xml(true, "pool");
    let mut alone = [xml(false, "pool1"), xml(false, "pool2")];
    let side = |host: &str| usize::from(host.starts_with('c'));
    for (id, host, cap) in nodes {
        let added = Event::NodeAdded {
            node: NodeId(id),
            host: host.into(),
            port: 0,
            rack: "/r".into(),
            capability: cap,
        };
        handle(&mut both, added.clone());
        handle(&mut alone[side(host)], added);
    }
    // Apps 1..=8, two per queue, with different demands; app n goes to QUEUES[(n - 1) % 4].
    for app in 1..=8u64 {
        let queue = QUEUES[((app - 1) % 4) as usize];
        let pool = usize::from(queue.starts_with("pool2"));
        for s in [&mut both, &mut alone[pool]] {
            assert!(matches!(
                submit(s, app, queue, None),
                Placement::Accepted { .. }
            ));
            let ask = ContainerAsk {
                priority: 1,
                resources: Resource::new(4096, 1),
                count: 3 + app as u32 * 2,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: weft_sched::AskTag::NONE,
            };
            handle(
                s,
                Event::Ask {
                    app: AppId(app),
                    ask,
                },
            );
        }
    }
    let mut seen = [Vec::new(), Vec::new()];
    let mut expected = [Vec::new(), Vec::new()];
    for round in 0..12 {
        if round % 3 == 0 {
            handle(&mut both, Event::Update);
            for s in &mut alone {
                handle(s, Event::Update);
            }
        }
        for (id, host, _) in nodes {
            let beat = Event::NodeHeartbeat { node: NodeId(id) };
            seen[side(host)].extend(allocated_on(&handle(&mut both, beat.clone())));
            expected[side(host)].extend(allocated_on(&handle(&mut alone[side(host)], beat)));
        }
    }
    // pool1 fills by vcores (2 x 8 containers of 1 vcore), pool2 by memory (2 x 2 of 4096 MB).
    assert_eq!((seen[0].len(), seen[1].len()), (16, 4), "{seen:?}");
    assert_eq!(seen, expected, "each pool allocates as it would alone");
    both.update_shares(Time(0));
    let shares = |s: &mut Scheduler| {
        s.snapshot()
            .queues
            .into_iter()
            .filter(|q| q.name.starts_with("root.pool"))
            .map(|q| (q.name, q.fair_share))
            .collect::<Vec<_>>()
    };
    let mut want = Vec::new();
    for s in &mut alone {
        s.update_shares(Time(0));
        want.extend(shares(s));
    }
    // Instantaneous shares only: steady shares count inactive queues too, and a cluster made of
    // one pool alone has root.default among them, which with pools is in no pool (steady
    // shares per pool: scenario pools-fair-share).
    assert_eq!(shares(&mut both), want, "fair shares per pool");
}

/// Reservable nodes count the node's pool (spec §7): with
/// `yarn.scheduler.fair.reservable-nodes` = 0.5, an app of pool1 (n1, n2 of a four-node
/// cluster) may hold ceil(2 x 0.5) = 1 off-switch reservation, not ceil(4 x 0.5) = 2. A in
/// pool1_ads fills 5120 MB of n1 and of n2; B in pool1_search (usage 0 below its fair share,
/// 8192 MB of pool1's 16384) asks 2 x 4096 MB, which fit on neither: n1's heartbeat reserves
/// for B, n2's does not.
#[test]
fn reservable_nodes_count_the_pool() {
    let text = r#"<allocations>
  <resourcePools>
    <resourcePool name="pool1"><host>n1</host><host>n2</host></resourcePool>
    <resourcePool name="pool2"><host>n3</host><host>n4</host></resourcePool>
  </resourcePools>
  <queue name="pool1_ads"/>
  <queue name="pool1_search"/>
</allocations>"#;
    let (allocations, _) =
        parse_allocations(text, &ResourceTypes::default()).expect("valid allocations");
    let properties = weft_config::SchedulerProperties {
        reservable_nodes: 0.5,
        ..Default::default()
    };
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    for id in 1..=4 {
        handle(
            &mut s,
            Event::NodeAdded {
                node: NodeId(id),
                host: format!("n{id}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
    let big = |app: u64, mb: i64, count: u32| Event::Ask {
        app: AppId(app),
        ask: ContainerAsk {
            priority: 1,
            resources: Resource::new(mb, 1),
            count,
            hosts: vec![],
            racks: vec![],
            relax_locality: true,
            tag: weft_sched::AskTag::NONE,
        },
    };
    submit(&mut s, 1, "pool1_ads", None);
    handle(&mut s, big(1, 5120, 2));
    handle(&mut s, Event::Update);
    for node in 1..=2 {
        let got = allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(node) }));
        assert_eq!(got, [(1, node)]);
    }
    submit(&mut s, 2, "pool1_search", None);
    handle(&mut s, big(2, 4096, 2));
    handle(&mut s, Event::Update);
    let mut reserved = Vec::new();
    for node in 1..=4 {
        for d in handle(&mut s, Event::NodeHeartbeat { node: NodeId(node) }) {
            if let Decision::Reserved { app, node, .. } = d {
                reserved.push((app.0, node.0));
            }
        }
    }
    assert_eq!(
        reserved,
        [(2, 1)],
        "one reservation: half of pool1's two nodes"
    );
}

/// A reload moving host n2 from pool1 to pool2 (spec §10): A's containers on n2 keep running
/// (nothing completes; they count as foreign, which verify accepts, and stay in pool2's usage),
/// and from then on n2 serves only pool2's apps: A's new asks go to n1, B's (pool2_etl) to n2.
#[test]
fn a_host_moved_by_a_reload_keeps_its_containers_and_serves_its_new_pool() {
    let layout = |pool1: &str, pool2: &str| {
        let text = format!(
            r#"<allocations>
  <resourcePools>
    <resourcePool name="pool1">{pool1}</resourcePool>
    <resourcePool name="pool2">{pool2}</resourcePool>
  </resourcePools>
  <queue name="pool1_ads"/>
  <queue name="pool2_etl"/>
</allocations>"#
        );
        let (allocations, _) =
            parse_allocations(&text, &ResourceTypes::default()).expect("valid allocations");
        SchedulerConfig::fair(allocations, Default::default())
    };
    let mut s = Scheduler::new(
        layout("<host>n1</host><host>n2</host>", "<host>n3</host>"),
        Default::default(),
    );
    for id in 1..=3 {
        handle(
            &mut s,
            Event::NodeAdded {
                node: NodeId(id),
                host: format!("n{id}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
    submit(&mut s, 1, "pool1_ads", None);
    ask(&mut s, 1, 2);
    handle(&mut s, Event::Update);
    let placed = allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(2) }));
    let placed2 = allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(2) }));
    assert_eq!([placed, placed2].concat(), [(1, 2), (1, 2)]);
    let moved = handle(
        &mut s,
        Event::Reload(Box::new(layout(
            "<host>n1</host>",
            "<host>n2</host><host>n3</host>",
        ))),
    );
    assert!(
        !moved
            .iter()
            .any(|d| matches!(d, Decision::Completed { .. })),
        "nothing ends at reload time: {moved:?}"
    );
    assert_eq!(s.node_allocated(NodeId(2)), Some(Resource::new(2048, 2)));
    submit(&mut s, 2, "pool2_etl", None);
    ask(&mut s, 1, 1);
    ask(&mut s, 2, 1);
    handle(&mut s, Event::Update);
    let on_n2 = allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(2) }));
    let on_n1 = allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) }));
    assert_eq!((on_n2, on_n1), (vec![(2, 2)], vec![(1, 1)]));
}

/// The spec's base layout with `pools` as the `<resourcePools>` body and `queues` after it.
fn config_of(pools: &str, queues: &str) -> SchedulerConfig {
    let text =
        format!("<allocations>\n  <resourcePools>{pools}</resourcePools>\n{queues}</allocations>");
    let (allocations, _) =
        parse_allocations(&text, &ResourceTypes::default()).expect("valid allocations");
    SchedulerConfig::fair(allocations, Default::default())
}

const TWO_POOLS: &str = r#"<resourcePool name="pool1"><host>n1</host></resourcePool>
    <resourcePool name="pool2"><host>n2</host></resourcePool>"#;
const QUEUES: &str = r#"  <queue name="pool1_ads"/>
  <queue name="pool1_search"/>
  <queue name="pool2_etl"/>
"#;

/// Spec §10 (scenarios 17 and 18): removing a pool, or rebinding a queue, while a queue of it
/// has applications is refused naming the queues and apps, and the old layout keeps
/// scheduling; once the queue is empty the same reload applies.
#[test]
fn a_reload_removing_a_pool_or_rebinding_a_queue_with_apps_is_refused() {
    let mut s = Scheduler::new(config_of(TWO_POOLS, QUEUES), Default::default());
    for (id, host) in [(1, "n1"), (2, "n2")] {
        handle(
            &mut s,
            Event::NodeAdded {
                node: NodeId(id),
                host: host.into(),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(8192, 8),
            },
        );
    }
    submit(&mut s, 1, "pool2_etl", None);
    submit(&mut s, 2, "pool1_ads", None);
    submit(&mut s, 3, "pool1_ads", None);
    submit(&mut s, 4, "pool1_search", None);

    let without_pool2 = config_of(
        r#"<resourcePool name="pool1"><host>n1</host><host>n2</host></resourcePool>"#,
        QUEUES,
    );
    let e = s
        .handle(Time(1), Event::Reload(Box::new(without_pool2.clone())))
        .expect_err("pool2 still has an app");
    assert_eq!(
        e.to_string(),
        "configuration refused: cannot remove resource pool pool2: queue root.pool2_etl (1 application) still has applications"
    );
    let without_pool1 = config_of(
        r#"<resourcePool name="pool2"><host>n1</host><host>n2</host></resourcePool>"#,
        QUEUES,
    );
    let e = s
        .handle(Time(1), Event::Reload(Box::new(without_pool1)))
        .expect_err("pool1 has apps");
    assert!(
        e.to_string().contains(
            "cannot remove resource pool pool1: queues root.pool1_ads (2 applications), root.pool1_search (1 application) still have applications"
        ),
        "{e}"
    );
    let rebound = config_of(
        TWO_POOLS,
        r#"  <queue name="pool1_ads"><resourcePool>pool2</resourcePool></queue>
  <queue name="pool1_search"/>
  <queue name="pool2_etl"/>
"#,
    );
    let e = s
        .handle(Time(1), Event::Reload(Box::new(rebound)))
        .expect_err("pool1_ads has apps");
    assert!(
        e.to_string().contains(
            "cannot move queue root.pool1_ads from resource pool pool1 to resource pool pool2 while it has applications: app_0002, app_0003"
        ),
        "{e}"
    );
    // The old layout still runs: app 1 (pool2_etl) gets its containers on n2 only.
    ask(&mut s, 1, 1);
    handle(&mut s, Event::Update);
    assert!(allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(1) })).is_empty());
    assert_eq!(
        allocated_on(&handle(&mut s, Event::NodeHeartbeat { node: NodeId(2) })),
        [(1, 2)]
    );
    // Once pool2_etl is empty, removing pool2 applies (n2 joins pool1, its container foreign).
    handle(&mut s, Event::AppFinished { app: AppId(1) });
    handle(&mut s, Event::Reload(Box::new(without_pool2)));
    assert_eq!(
        submit(&mut s, 5, "pool2_etl", None),
        Placement::Rejected {
            code: RejectCode::NoResourcePool,
            reason: "Application app_0005 submitted by user alice to queue root.pool2_etl rejected: queue root.pool2_etl is not bound to any resource pool (resource pools: pool1)".into(),
        }
    );
}

/// Resource-pools spec §8-§9: DRF starvation is judged against the pool's capacity. pool1 is
/// n1 (65536 MB / 8 vcores), pool2 n2 (8192 MB / 64 vcores). X (drf queue pool1_ads, alone in
/// pool1) asks 16 x 4096 MB / 1 vcore and runs 8 on n1 (n1's vcores are gone): usage
/// 32768 MB / 8 vcores. Its fair share is pool1's whole 65536 MB / 8 vcores, and
/// min(1.0 x share, demand) = 65536 / 8. Against pool1 its dominant share is 8/8 = 1.0, the
/// same as the share's (1.0): not starved, no starvation (it cannot get more in its pool).
/// Against the cluster (73728 MB / 72 vcores) it would be 32768/73728 = 0.44 below
/// 65536/73728 = 0.89: starved by 32768 MB.
#[test]
fn drf_starvation_is_judged_against_the_pool() {
    let xml = r#"<allocations>
  <resourcePools>
    <resourcePool name="pool1"><host>n1</host></resourcePool>
    <resourcePool name="pool2"><host>n2</host></resourcePool>
  </resourcePools>
  <defaultQueueSchedulingPolicy>drf</defaultQueueSchedulingPolicy>
  <defaultFairSharePreemptionTimeout>0</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>
  <queue name="pool1_ads"/>
  <queue name="pool2_etl"/>
</allocations>"#;
    let (allocations, _) =
        parse_allocations(xml, &ResourceTypes::default()).expect("valid allocations");
    let (properties, _) = weft_config::site::from_pairs([
        ("yarn.scheduler.fair.preemption", "true"),
        (
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
            "0",
        ),
        ("yarn.scheduler.fair.assignmultiple", "true"),
    ])
    .expect("valid properties");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    for (id, host, capability) in [
        (1, "n1", Resource::new(65_536, 8)),
        (2, "n2", Resource::new(8192, 64)),
    ] {
        handle(
            &mut s,
            Event::NodeAdded {
                node: NodeId(id),
                host: host.into(),
                port: 0,
                rack: "/r".into(),
                capability,
            },
        );
    }
    submit(&mut s, 1, "pool1_ads", None);
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(4096, 1),
        count: 16,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: weft_sched::AskTag::NONE,
    };
    handle(&mut s, Event::Ask { app: AppId(1), ask });
    handle(&mut s, Event::Update);
    let mut placed = Vec::new();
    for _ in 0..4 {
        placed.extend(allocated_on(&handle(
            &mut s,
            Event::NodeHeartbeat { node: NodeId(1) },
        )));
    }
    assert_eq!(placed, [(1, 1); 8], "n1's 8 vcores");
    s.handle(Time(1000), Event::Update).expect("update");
    while s.poll_decision().is_some() {}
    let snap = s.snapshot();
    let x = snap
        .apps
        .iter()
        .find(|a| a.app == AppId(1))
        .expect("listed");
    assert_eq!(x.usage, Resource::new(32_768, 8));
    assert_eq!(x.fair_share, Resource::new(65_536, 8), "pool1's capacity");
    let starvation = x.starvation.expect("Fair reports starvation");
    assert_eq!(starvation.fair_share_starvation, Resource::ZERO);
    assert!(!starvation.starved, "at its dominant share of pool1");
}
