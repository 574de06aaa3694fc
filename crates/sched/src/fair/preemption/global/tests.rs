//! The global strategy's pure parts (preemption spec B.2-B.5, B.8), with figures derived by hand
//! from the spec.

use super::*;
use crate::api::{AskTag, ContainerAsk, Decision, Event};
use weft_config::alloc_file::parse_allocations;
use weft_types::ResourceTypes;

fn mb(m: i64) -> Resource {
    Resource::new(m, 0)
}

#[test]
fn memory_min_and_max_return_whole_vectors_and_the_first_on_ties() {
    let (a, b) = (Resource::new(1024, 9), Resource::new(1024, 1));
    assert_eq!(min_by_memory(a, b), a);
    assert_eq!(max_by_memory(a, b), a);
    let small = Resource::new(512, 7);
    assert_eq!(min_by_memory(a, small), small);
    assert_eq!(max_by_memory(small, a), a);
}

fn settings(min_ms: i64, fair_ms: i64, threshold: f32) -> PreemptionSettings {
    PreemptionSettings {
        min_share_timeout_ms: min_ms,
        fair_share_timeout_ms: fair_ms,
        fair_share_threshold: threshold,
        preemptable: true,
    }
}

#[test]
fn timers_stay_while_starved_and_move_when_not() {
    // Min share 1024, demand 3072, fair share 1536 x 0.5 = 768: usage 0 is starved for both.
    let mut f = LeafFigures {
        usage: mb(0),
        demand: mb(3072),
        min_share: mb(1024),
        fair_share: mb(1536),
    };
    let mut t = LeafTimers::started(Time(0));
    t.refresh(&f, 0.5, Time(500));
    assert_eq!(t, LeafTimers::started(Time(0)));
    // 1024 used: at the min share (not starved for it), still below 768? no: 1024 >= 768.
    f.usage = mb(1024);
    t.refresh(&f, 0.5, Time(1000));
    assert_eq!(t, LeafTimers::started(Time(1000)));
    // 800 used: below the min share (1024), above the threshold share (768).
    f.usage = mb(800);
    t.refresh(&f, 0.5, Time(1500));
    assert_eq!(t.at_min_share, Time(1000));
    assert_eq!(t.at_fair_share_threshold, Time(1500));
}

#[test]
fn a_leaf_without_demand_is_never_starved() {
    let f = LeafFigures {
        usage: mb(0),
        demand: mb(0),
        min_share: mb(4096),
        fair_share: mb(4096),
    };
    let mut t = LeafTimers::started(Time(0));
    t.refresh(&f, 1.0, Time(7000));
    assert_eq!(t, LeafTimers::started(Time(7000)));
}

#[test]
fn the_deficit_waits_strictly_past_each_timeout_and_asks_the_full_fair_share() {
    // B.3's testPreemptionDecision leaf C: min 1024, demand 3072, fair share 1536, nothing used,
    // clocks at 0, timeouts 5 s and 10 s.
    let f = LeafFigures {
        usage: mb(0),
        demand: Resource::new(3072, 3),
        min_share: Resource::new(1024, 1),
        fair_share: mb(1536),
    };
    let t = LeafTimers::started(Time(0));
    let s = settings(5000, 10_000, 0.5);
    assert_eq!(leaf_deficit(&f, &t, &s, Time(5000)), Resource::ZERO);
    assert_eq!(leaf_deficit(&f, &t, &s, Time(5001)).memory_mb(), 1024);
    assert_eq!(leaf_deficit(&f, &t, &s, Time(10_000)).memory_mb(), 1024);
    // The full share, not the 768 the threshold starved it against.
    assert_eq!(leaf_deficit(&f, &t, &s, Time(10_001)).memory_mb(), 1536);
    // "Never" never expires.
    let never = settings(i64::MAX, i64::MAX, 0.5);
    assert_eq!(leaf_deficit(&f, &t, &never, Time(u64::MAX)), Resource::ZERO);
}

#[test]
fn the_deficit_of_a_leaf_above_its_target_is_none() {
    let f = LeafFigures {
        usage: mb(4096),
        demand: mb(8192),
        min_share: mb(1024),
        fair_share: mb(2048),
    };
    let t = LeafTimers::started(Time(0));
    assert_eq!(
        leaf_deficit(&f, &t, &settings(0, 0, 0.5), Time(1)),
        Resource::ZERO
    );
}

#[test]
fn the_neediest_leaf_is_the_largest_deficit_by_memory_then_vcores_then_order() {
    let d = [
        ("root.a", Resource::new(1024, 1)),
        ("root.b", Resource::new(2048, 1)),
        ("root.c", Resource::new(2048, 3)),
        ("root.d", Resource::new(2048, 3)),
    ];
    assert_eq!(neediest_leaf(d), Some("root.c"));
    assert_eq!(neediest_leaf([("root.x", Resource::new(0, 4))]), None);
}

fn candidate(id: u64, priority: i32) -> Candidate {
    Candidate {
        id: ContainerId(id),
        app: AppId(1),
        node: NodeId(1),
        size: mb(1024),
        priority,
        am: false,
    }
}

#[test]
fn the_victim_is_the_largest_priority_number_then_the_newest_container() {
    let mut v = [
        candidate(3, 1),
        candidate(7, 1),
        candidate(5, 2),
        candidate(1, 0),
    ];
    v.sort_by(victim_order);
    let ids: Vec<u64> = v.iter().map(|c| c.id.0).collect();
    assert_eq!(ids, [5, 7, 3, 1]);
}

fn view(usage: i64, demand: i64, min_share: i64, weight: f64, tiebreak: u64) -> SchedView {
    SchedView {
        demand: mb(demand),
        usage: mb(usage),
        min_share: mb(min_share),
        weight,
        start_time: 0,
        tiebreak,
    }
}

fn ctx() -> PolicyContext {
    PolicyContext {
        cluster: Resource::new(8192, 8),
        resource_types: 2,
    }
}

#[test]
fn the_2x_fair_comparator_has_no_zero_demand_rule() {
    // An idle queue (no usage, no demand) is the SMALLEST under 2.x, not the largest.
    let idle = view(0, 0, 0, 1.0, 0);
    let busy = view(1024, 2048, 0, 1.0, 1);
    assert_eq!(
        compare_2x(PolicyKind::Fair, &idle, &busy, &ctx()),
        Ordering::Less
    );
    // The current comparator puts the idle one last.
    assert_eq!(
        policy::compare(PolicyKind::Fair, &idle, &busy, &ctx()),
        Ordering::Greater
    );
}

#[test]
fn the_2x_fair_comparator_serves_needy_first_then_usage_over_weight() {
    let needy = view(512, 4096, 1024, 1.0, 0);
    let rich = view(100, 4096, 0, 1.0, 1);
    assert_eq!(
        compare_2x(PolicyKind::Fair, &needy, &rich, &ctx()),
        Ordering::Less
    );
    // B.10: A at 4096 / weight 8 = 512 ties B at 1024 / 2 = 512; names decide (A first).
    let a = view(4096, 14_336, 0, 8.0, 1);
    let b = view(1024, 1024, 0, 2.0, 2);
    assert_eq!(compare_2x(PolicyKind::Fair, &a, &b, &ctx()), Ordering::Less);
    // A zero weight is an infinite ratio: the largest.
    let zero = view(1, 1, 0, 0.0, 0);
    assert_eq!(
        compare_2x(PolicyKind::Fair, &zero, &a, &ctx()),
        Ordering::Greater
    );
}

/// A model of spec B.10's tree: root {A (weight 8) {A1, A2}, B (weight 2)}, apps app1 in A1 with
/// 7 x 1 GB, app2 in B with 1 x 1 GB, app3 in A2 with nothing yet; fair shares A 6553, B 1638,
/// A1 3276, A2 3277.
fn b10_round() -> Round {
    let q = |parent, is_leaf, usage, demand, weight, fair_share, tiebreak| RoundQueue {
        parent,
        children: Vec::new(),
        apps: Vec::new(),
        is_leaf,
        policy: PolicyKind::Fair,
        view: view(usage, demand, 0, weight, tiebreak),
        fair_share: mb(fair_share),
        preemptable: true,
    };
    let mut queues = vec![
        q(None, false, 8192, 15_360, 1.0, 8192, 0),
        q(Some(0), false, 7168, 14_336, 8.0, 6553, 1),
        q(Some(1), true, 7168, 7168, 1.0, 3276, 2),
        q(Some(1), true, 0, 7168, 1.0, 3277, 3),
        q(Some(0), true, 1024, 1024, 2.0, 1638, 4),
    ];
    queues[0].children = vec![1, 4];
    queues[1].children = vec![2, 3];
    queues[2].apps = vec![0];
    queues[3].apps = vec![2];
    queues[4].apps = vec![1];
    let app = |id, leaf, usage| RoundApp {
        id: AppId(id),
        leaf,
        view: view(usage, usage, 0, 1.0, id),
    };
    let apps = vec![app(1, 2, 7168), app(2, 4, 1024), app(3, 3, 0)];
    Round::new(queues, apps, ctx())
}

fn containers_of(app: AppId) -> Vec<Candidate> {
    let ids: &[u64] = match app.0 {
        1 => &[1, 2, 3, 4, 5, 6, 7],
        2 => &[8],
        _ => &[],
    };
    ids.iter()
        .map(|id| Candidate {
            app,
            ..candidate(*id, 1)
        })
        .collect()
}

#[test]
fn the_walk_of_b10_warns_app1s_three_newest_and_stops_at_b() {
    let mut round = b10_round();
    let chosen = round.select(mb(3277), &mut containers_of);
    let ids: Vec<u64> = chosen.iter().map(|c| c.id.0).collect();
    // A's net usage 7168 -> 4096: 4096 / 8 = 512 = B's 1024 / 2, names make B the larger, B is
    // within its share (1024 <= 1638): the round ends with 205 MB still wanted.
    assert_eq!(ids, [7, 6, 5]);
    assert_eq!(round.queues[1].view.usage, mb(4096));
    assert_eq!(round.apps[0].view.usage, mb(4096));
}

#[test]
fn a_non_preemptable_child_is_skipped_and_an_all_protected_parent_yields_nothing() {
    let mut round = b10_round();
    // A protected: root's only preemptable child is B, within its share: nothing.
    round.queues[1].preemptable = false;
    round.queues[2].preemptable = false;
    round.queues[3].preemptable = false;
    assert!(round.select(mb(3277), &mut containers_of).is_empty());
    let mut round = b10_round();
    for q in &mut round.queues[1..] {
        q.preemptable = false;
    }
    assert!(round.select(mb(3277), &mut containers_of).is_empty());
}

#[test]
fn containers_the_source_leaves_out_are_never_chosen() {
    // The AM switch and earlier warnings are the source's to apply: app1's two newest are out.
    let mut round = b10_round();
    let mut source = |app: AppId| {
        containers_of(app)
            .into_iter()
            .filter(|c| c.id.0 < 6)
            .collect()
    };
    let ids: Vec<u64> = round
        .select(mb(2048), &mut source)
        .iter()
        .map(|c| c.id.0)
        .collect();
    assert_eq!(ids, [5, 4]);
}

#[test]
fn under_drf_a_leaf_is_over_its_share_when_usage_does_not_fit_in_it() {
    // One leaf under a drf root: usage <3072, 1> against a share <4096, 0> does not fit (vcores).
    let mut round = b10_round();
    for q in &mut round.queues {
        q.policy = PolicyKind::Drf;
    }
    round.queues[4].view.usage = Resource::new(1024, 1);
    round.queues[4].fair_share = Resource::new(4096, 0);
    round.apps[1].view.usage = Resource::new(1024, 1);
    // root's drf order: A (7168/8192 = 0.875 dominant / weight 8) vs B (1024/8192 vs 1/8 =
    // 0.125 / 2): A = 0.109, B = 0.0625: A is larger, so A is walked first anyway; protect A.
    round.queues[1].preemptable = false;
    let ids: Vec<u64> = round
        .select(mb(1024), &mut containers_of)
        .iter()
        .map(|c| c.id.0)
        .collect();
    assert_eq!(ids, [8]);
}

// ----- through the engine -----

fn engine(alloc: &str, props: &[(&str, &str)]) -> FairEngine {
    let (allocations, _) = parse_allocations(alloc, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("valid allocations: {e}"));
    let (properties, _) = weft_config::site::from_pairs(props.iter().copied())
        .unwrap_or_else(|e| panic!("valid properties: {e}"));
    let crate::api::SchedulerConfig::Fair(config) =
        crate::api::SchedulerConfig::fair(allocations, properties)
    else {
        panic!("a Fair configuration");
    };
    FairEngine::new_fair(config, Default::default())
}

fn send(e: &mut FairEngine, at: u64, event: Event) {
    e.handle(Time(at), event).expect("event accepted");
    while e.decisions.pop_front().is_some() {}
}

fn ask_1gb(e: &mut FairEngine, app: u64, queue: &str, count: u32) {
    send(
        e,
        0,
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    );
    let ask = ContainerAsk {
        priority: 1,
        resources: Resource::new(1024, 1),
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: AskTag::NONE,
    };
    send(
        e,
        0,
        Event::Ask {
            app: AppId(app),
            ask,
        },
    );
}

/// 2.7's testPreemptionDecision (spec B.3): 3 nodes of 2048 MB; A..D weight 0.25, min 1024 MB;
/// default capped at 0; A and B hold 3 GB each, C and D ask 3 GB each.
#[test]
fn test_preemption_decision_deficits_after_5_and_10_seconds() {
    let alloc = r#"<allocations>
        <queue name="queueA"><weight>.25</weight><minResources>1024 mb, 0 vcores</minResources></queue>
        <queue name="queueB"><weight>.25</weight><minResources>1024 mb, 0 vcores</minResources></queue>
        <queue name="queueC"><weight>.25</weight><minResources>1024 mb, 0 vcores</minResources></queue>
        <queue name="queueD"><weight>.25</weight><minResources>1024 mb, 0 vcores</minResources></queue>
        <queue name="default"><maxResources>0 mb, 0 vcores</maxResources></queue>
        <defaultMinSharePreemptionTimeout>5</defaultMinSharePreemptionTimeout>
        <defaultFairSharePreemptionTimeout>10</defaultFairSharePreemptionTimeout>
        <defaultFairSharePreemptionThreshold>.5</defaultFairSharePreemptionThreshold>
    </allocations>"#;
    let mut e = engine(
        alloc,
        &[
            ("yarn.scheduler.fair.preemption", "true"),
            ("weft.scheduler.fair.preemption.strategy", "global"),
        ],
    );
    for n in 1..=3 {
        send(
            &mut e,
            0,
            Event::NodeAdded {
                node: NodeId(n),
                host: format!("n{n}"),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(2048, 2),
            },
        );
    }
    ask_1gb(&mut e, 1, "queueA", 3);
    ask_1gb(&mut e, 2, "queueB", 3);
    send(&mut e, 0, Event::Update);
    for n in [1, 2, 3, 1, 2, 3] {
        send(&mut e, 0, Event::NodeHeartbeat { node: NodeId(n) });
    }
    assert_eq!(e.cluster_used.memory_mb(), 6144, "A and B hold the cluster");
    ask_1gb(&mut e, 3, "queueC", 3);
    ask_1gb(&mut e, 4, "queueD", 3);
    // The first update after C and D asked refreshes their clocks from the PREVIOUS demand
    // (none): not starved, clocks at 0. From the next update on they are starved.
    send(&mut e, 0, Event::Update);
    let deficit = |e: &FairEngine, at: u64, leaf: &str| {
        let id = e.queues.lookup(leaf).expect("leaf");
        e.global_deficits(Time(at))
            .into_iter()
            .find(|(q, _)| *q == id)
            .map(|(_, d)| d.memory_mb())
    };
    for at in [500, 5000] {
        send(&mut e, at, Event::Update);
    }
    assert_eq!(
        deficit(&e, 5000, "root.queueC"),
        Some(0),
        "5 s is not past 5 s"
    );
    send(&mut e, 5500, Event::Update);
    assert_eq!(deficit(&e, 5500, "root.queueC"), Some(1024));
    assert_eq!(deficit(&e, 5500, "root.queueD"), Some(1024));
    assert_eq!(deficit(&e, 5500, "root.queueA"), Some(0));
    send(&mut e, 10_500, Event::Update);
    assert_eq!(deficit(&e, 10_500, "root.queueC"), Some(1536));
    assert_eq!(deficit(&e, 10_500, "root.queueD"), Some(1536));
    let total: i64 = e
        .global_deficits(Time(10_500))
        .iter()
        .map(|(_, d)| d.memory_mb())
        .sum();
    assert_eq!(total, 3072);
}

/// Spec B.10 (2.7's testPreemptionIsNotDelayedToNextRound) through the engine: one node of
/// 8192 MB; A (weight 8) {A1, A2}, B (weight 2); fair timeout 10 s, threshold 0.5, wait 5 s,
/// interval 5 s (default). app1 (A1) holds 7 x 1 GB, app2 (B) 1 x 1 GB, app3 (A2) asks 7.
///
/// By hand: updates every 500 ms, a heartbeat after each. A2's clock: 0 at the first update
/// (no leaf demand yet), 500 at the next (the PREVIOUS demand, still none, B.1), then it stays
/// (usage 0 < min(0.5 x 3277, 7168)). Checks: the first with the gate open at 500 (owes
/// nothing), then 5500, 10500 (10000 is not > 10000), 15500: A2 owes min(3277, 7168) = 3277.
/// The walk takes app1's three newest and stops at B. Ids: at the first heartbeat A and B
/// tie at usage 0 (names: A first, container 1 to app1), then B (0 < 1024 / 8) takes 2, app1
/// the rest: its newest are 8, 7, 6.
/// 20500: the three are charged (3072 of 3277), 15500 + 5000 < 20500 fails; the walk stops at
/// B again. 25500: all three killed. The heartbeats at 25500, 26000, 26500 hand app3 1 GB each.
#[test]
fn b10_three_warnings_the_round_ends_at_b_and_the_kills_come_a_round_later() {
    let alloc = r#"<allocations>
        <queue name="A"><weight>8</weight><queue name="A1"/><queue name="A2"/></queue>
        <queue name="B"><weight>2</weight></queue>
        <defaultFairSharePreemptionTimeout>10</defaultFairSharePreemptionTimeout>
        <defaultFairSharePreemptionThreshold>0.5</defaultFairSharePreemptionThreshold>
    </allocations>"#;
    let mut e = engine(
        alloc,
        &[
            ("yarn.scheduler.fair.preemption", "true"),
            ("weft.scheduler.fair.preemption.strategy", "global"),
            ("yarn.scheduler.fair.waitTimeBeforeKill", "5000"),
        ],
    );
    send(
        &mut e,
        0,
        Event::NodeAdded {
            node: NodeId(1),
            host: "n1".into(),
            port: 0,
            rack: "/r".into(),
            capability: Resource::new(8192, 8),
        },
    );
    ask_1gb(&mut e, 1, "root.A.A1", 7);
    ask_1gb(&mut e, 2, "root.B", 1);
    send(&mut e, 0, Event::Update);
    for _ in 0..8 {
        send(&mut e, 0, Event::NodeHeartbeat { node: NodeId(1) });
    }
    assert_eq!(e.cluster_used.memory_mb(), 8192);
    ask_1gb(&mut e, 3, "root.A.A2", 7);
    let mut warned = Vec::new();
    let mut killed = Vec::new();
    for t in (500..=30_000).step_by(500) {
        for event in [Event::Update, Event::NodeHeartbeat { node: NodeId(1) }] {
            e.handle(Time(t), event).expect("accepted");
            while let Some(d) = e.decisions.pop_front() {
                match d {
                    Decision::PreemptWarning {
                        app,
                        container,
                        for_app,
                        kill_at,
                        ..
                    } => {
                        assert_eq!((for_app, kill_at), (None, None), "global names neither");
                        warned.push((t, app.0, container.0));
                    }
                    Decision::Preempted {
                        app,
                        container,
                        for_queue,
                        ..
                    } => killed.push((t, app.0, container.0, for_queue)),
                    _ => {}
                }
            }
        }
    }
    assert_eq!(
        warned,
        [(15_500, 1, 8), (15_500, 1, 7), (15_500, 1, 6)],
        "three warnings in one round, none later"
    );
    let a2 = "root.A.A2".to_string();
    assert_eq!(
        killed,
        [
            (25_500, 1, 8, a2.clone()),
            (25_500, 1, 7, a2.clone()),
            (25_500, 1, 6, a2)
        ]
    );
    let usage = |app: u64| e.apps.get(&AppId(app)).map(|a| a.usage.memory_mb());
    assert_eq!(
        (usage(1), usage(2), usage(3)),
        (Some(4096), Some(1024), Some(3072))
    );
    let q = |name: &str| {
        let id = e.queues.lookup(name).expect("queue");
        e.queues.get(id).rules_cold.preempted_containers
    };
    assert_eq!(
        (q("root.A.A1"), q("root.A"), q("root"), q("root.B")),
        (3, 3, 3, 0)
    );
    assert!(e.verify().is_empty(), "{:?}", e.verify());
}

/// B.7, B.8: the AM container is an ordinary candidate in global mode, the last of its app
/// (its priority 0 is the smallest number, the tasks ask at 1); `yarn.scheduler.fair.am.preemption`
/// false spares it.
///
/// One node of 4096 MB; a (weight 0.01) and b (weight 1), fair timeout 1 s, threshold 1,
/// interval 500 ms, wait 60 s. big (a) gets its AM (c_0001) then 3 tasks (c_0002..c_0004);
/// small (b) asks 4 x 1 GB. b's fair share is nearly the whole node (4096 / 1.01 = 4055) and
/// a's nearly nothing, so a stays over its share whatever it loses: b owes ~4055 once its
/// clock (held from the second update after its ask) is more than 1 s old; the walk takes
/// c_0004, c_0003, c_0002, then the AM c_0001 (4096 >= 4055 owed) unless it is spared, in
/// which case big has nothing left to give and the round ends after three.
#[test]
fn the_am_container_goes_last_and_the_am_switch_spares_it() {
    for (am_preemption, expected) in [("true", vec![4_u64, 3, 2, 1]), ("false", vec![4, 3, 2])] {
        let alloc = r#"<allocations>
            <queue name="a"><weight>0.01</weight></queue>
            <queue name="b"><weight>1</weight></queue>
            <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout>
            <defaultFairSharePreemptionThreshold>1</defaultFairSharePreemptionThreshold>
        </allocations>"#;
        let mut e = engine(
            alloc,
            &[
                ("yarn.scheduler.fair.preemption", "true"),
                ("weft.scheduler.fair.preemption.strategy", "global"),
                ("yarn.scheduler.fair.preemptionInterval", "500"),
                ("yarn.scheduler.fair.waitTimeBeforeKill", "60000"),
                ("yarn.scheduler.fair.am.preemption", am_preemption),
                ("yarn.scheduler.fair.assignmultiple", "true"),
                ("yarn.scheduler.fair.dynamic.max.assign", "false"),
            ],
        );
        send(
            &mut e,
            0,
            Event::NodeAdded {
                node: NodeId(1),
                host: "n1".into(),
                port: 0,
                rack: "/r".into(),
                capability: Resource::new(4096, 4),
            },
        );
        send(
            &mut e,
            0,
            Event::AppSubmitted {
                app: AppId(1),
                user: "u".into(),
                queue: Some("root.a".into()),
                am_resource: Some(Resource::new(1024, 1)),
            },
        );
        send(&mut e, 0, Event::Update);
        send(&mut e, 0, Event::NodeHeartbeat { node: NodeId(1) });
        let ask = ContainerAsk {
            priority: 1,
            resources: Resource::new(1024, 1),
            count: 3,
            hosts: vec![],
            racks: vec![],
            relax_locality: true,
            tag: AskTag::NONE,
        };
        send(&mut e, 0, Event::Ask { app: AppId(1), ask });
        send(&mut e, 0, Event::Update);
        send(&mut e, 0, Event::NodeHeartbeat { node: NodeId(1) });
        assert_eq!(e.cluster_used.memory_mb(), 4096, "the AM and 3 tasks");
        ask_1gb(&mut e, 2, "root.b", 4);
        let mut warned = Vec::new();
        for t in (500..=10_000).step_by(500) {
            e.handle(Time(t), Event::Update).expect("update");
            while let Some(d) = e.decisions.pop_front() {
                if let Decision::PreemptWarning { container, .. } = d {
                    warned.push(container.0);
                }
            }
        }
        assert_eq!(warned, expected, "am.preemption {am_preemption}");
    }
}

#[test]
fn under_fifo_the_largest_app_is_the_one_started_last() {
    // 2.x FifoPolicy: priority (all equal), start time, name; the walk takes the largest.
    let mut first = view(4096, 4096, 0, 1.0, 1);
    first.start_time = 1000;
    let mut later = view(0, 1024, 0, 1.0, 2);
    later.start_time = 5000;
    assert_eq!(
        compare_2x(PolicyKind::Fifo, &later, &first, &ctx()),
        Ordering::Greater
    );
    let mut round = b10_round();
    round.queues[2].policy = PolicyKind::Fifo;
    round.apps.push(RoundApp {
        id: AppId(9),
        leaf: 2,
        view: later,
    });
    round.apps[0].view.start_time = 1000;
    round.queues[2].apps.push(3);
    let mut source = |app: AppId| {
        let id = if app == AppId(9) { 90 } else { 7 };
        vec![Candidate {
            app,
            ..candidate(id, 1)
        }]
    };
    let chosen = round.select(mb(1), &mut source);
    assert_eq!(chosen.iter().map(|c| c.app).collect::<Vec<_>>(), [AppId(9)]);
}
