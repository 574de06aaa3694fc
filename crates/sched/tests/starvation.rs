//! Fair Scheduler starvation (preemption spec §0.2, §0.3, A.1-A.3): the effective timeouts,
//! threshold and `allowPreemptionFrom` after inheritance, and the min-share and fair-share
//! starvation the update computes, with figures derived by hand from the spec.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    AppStarvation, ContainerAsk, Decision, Event, FifoConfig, QueueStarvation, Scheduler,
    SchedulerConfig, Snapshot,
};
use weft_types::{AppId, ContainerId, NodeId, Resource, ResourceTypes, Time};

fn scheduler(allocations: &str, props: &[(&str, &str)]) -> Scheduler {
    let (allocations, _) = parse_allocations(allocations, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("valid allocations: {e}"));
    let (properties, _) = weft_config::site::from_pairs(props.iter().copied())
        .unwrap_or_else(|e| panic!("valid properties: {e}"));
    Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    )
}

/// Applies the event and returns the containers it allocated.
fn handle(s: &mut Scheduler, at: u64, event: Event) -> Vec<ContainerId> {
    s.handle(Time(at), event).expect("event accepted");
    let mut allocated = Vec::new();
    while let Some(d) = s.poll_decision() {
        if let Decision::Allocated { container, .. } = d {
            allocated.push(container);
        }
    }
    allocated
}

fn add_node(s: &mut Scheduler, id: u32, memory_mb: i64, vcores: i64) {
    handle(
        s,
        0,
        Event::NodeAdded {
            node: NodeId(id),
            host: format!("n{id}"),
            port: 0,
            rack: "/r".into(),
            capability: Resource::new(memory_mb, vcores),
        },
    );
}

fn submit(s: &mut Scheduler, app: u64, queue: &str) {
    handle(
        s,
        0,
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    );
}

/// `count` asks of 1024 MB / 1 vcore.
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
        0,
        Event::Ask {
            app: AppId(app),
            ask,
        },
    );
}

/// App 1 takes `count` containers of 1024 MB / 1 vcore on node 1 (one per heartbeat).
fn fill(s: &mut Scheduler, count: u32) -> Vec<ContainerId> {
    ask(s, 1, count);
    handle(s, 0, Event::Update);
    let mut containers = Vec::new();
    for _ in 0..count {
        containers.extend(handle(s, 0, Event::NodeHeartbeat { node: NodeId(1) }));
    }
    assert_eq!(
        s.cluster_used(),
        Resource::new(1024 * i64::from(count), i64::from(count)),
        "app 1 runs {count} containers"
    );
    containers
}

fn update(s: &mut Scheduler, at: u64) -> Snapshot {
    handle(s, at, Event::Update);
    s.snapshot()
}

fn app(snap: &Snapshot, id: u64) -> AppStarvation {
    let a = snap
        .apps
        .iter()
        .find(|a| a.app == AppId(id))
        .expect("app listed");
    a.starvation.expect("the Fair Scheduler reports starvation")
}

fn queue(snap: &Snapshot, name: &str) -> QueueStarvation {
    let q = snap
        .queues
        .iter()
        .find(|q| q.name == name)
        .unwrap_or_else(|| panic!("{name} listed"));
    q.starvation
        .expect("the Fair Scheduler reports preemption settings")
}

const PREEMPTION_ON: &[(&str, &str)] = &[("yarn.scheduler.fair.preemption", "true")];

/// `b` has a min share of 4096 MB / 4 vcores and a 5 s min-share timeout; `a` has neither.
const MIN_SHARE: &str = r#"<allocations>
  <queue name="a"/>
  <queue name="b">
    <minResources>4096 mb, 4 vcores</minResources>
    <minSharePreemptionTimeout>5</minSharePreemptionTimeout>
  </queue>
</allocations>"#;

/// One node of 8192 MB / 8 vcores filled by app 1 in `a`; app 2 in `b` asks 4 x 1024 MB and
/// gets nothing (no heartbeat after its ask). The first update is at 0 with the cluster full.
fn min_share_cluster(props: &[(&str, &str)]) -> Scheduler {
    let mut s = scheduler(MIN_SHARE, props);
    add_node(&mut s, 1, 8192, 8);
    submit(&mut s, 1, "a");
    fill(&mut s, 8);
    submit(&mut s, 2, "b");
    ask(&mut s, 2, 4);
    s
}

#[test]
fn a_leaf_below_its_min_share_is_starved_once_the_timeout_has_passed() {
    let mut s = min_share_cluster(PREEMPTION_ON);
    // Utilization 8192/8192 = 1 > 0.8: evaluated. b: desired = min(min share 4096/4, demand
    // 4096/4) = 4096/4 (equal memory: the min share), usage 0, so 4096/4 below it since the
    // first update at 0; less than 5 s have passed at 0 and 4999.
    for at in [0, 4_999] {
        let snap = update(&mut s, at);
        let b = queue(&snap, "root.b");
        assert_eq!(b.at_min_share_since, Some(Time(0)), "at {at}");
        assert_eq!(b.min_share_starvation, Resource::ZERO, "at {at}");
        let a2 = app(&snap, 2);
        assert_eq!(a2.min_share_starvation, Resource::ZERO, "at {at}");
        assert_eq!(a2.fair_share_starvation, Resource::ZERO, "at {at}");
        assert!(a2.starved, "usage 0 is below its fair share 4096");
        assert_eq!(a2.identified_at, None, "at {at}");
    }
    // At 5000, 5000 - 0 is not below 5000: starved by 4096/4. No fair-share starvation (its
    // timeout is never), so the whole deficit goes to app 2, the only app with pending demand
    // (its claim 4096/4 is not greater than what is left, so it gets the claim).
    let snap = update(&mut s, 5_000);
    let b = queue(&snap, "root.b");
    assert_eq!(b.min_share_starvation, Resource::new(4096, 4));
    assert_eq!(b.fair_share_starvation, Resource::ZERO);
    let a2 = app(&snap, 2);
    assert_eq!(a2.min_share_starvation, Resource::new(4096, 4));
    assert_eq!(a2.fair_share_starvation, Resource::ZERO);
    assert_eq!(a2.identified_at, Some(Time(5_000)));
    // App 1 has no pending demand: never a candidate, nothing computed for it.
    let a1 = app(&snap, 1);
    assert_eq!(a1.min_share_starvation, Resource::ZERO);
    assert_eq!(a1.identified_at, None);
    assert!(!a1.starved, "8192 used is above its fair share 4096");
    // `a` is above min(0, demand) = 0: a negative difference, which is not "none", so its
    // timer is never refreshed (Hadoop's quirk), but it is reported as no starvation.
    let a = queue(&snap, "root.a");
    assert_eq!(a.at_min_share_since, Some(Time(0)));
    assert_eq!(a.min_share_starvation, Resource::ZERO);
}

#[test]
fn reaching_the_min_share_restarts_the_min_share_clock() {
    let mut s = min_share_cluster(PREEMPTION_ON);
    update(&mut s, 0);
    // App 2 withdraws its asks at 3000: b's demand is 0, desired = min(4096/4, 0) = 0 = usage,
    // so b is at its (effective) min share and the clock restarts at 3000.
    handle(
        &mut s,
        3_000,
        Event::CancelAsks {
            app: AppId(2),
            priority: None,
            count: None,
        },
    );
    let snap = update(&mut s, 3_000);
    assert_eq!(queue(&snap, "root.b").at_min_share_since, Some(Time(3_000)));
    // It asks again at 4000: starved from 3000 on, so not yet at 5000 (2 s) but at 8000 (5 s).
    ask(&mut s, 2, 4);
    let snap = update(&mut s, 5_000);
    assert_eq!(queue(&snap, "root.b").min_share_starvation, Resource::ZERO);
    let snap = update(&mut s, 8_000);
    assert_eq!(
        queue(&snap, "root.b").min_share_starvation,
        Resource::new(4096, 4)
    );
    assert_eq!(app(&snap, 2).min_share_starvation, Resource::new(4096, 4));
}

#[test]
fn nothing_is_evaluated_with_preemption_off() {
    let mut s = min_share_cluster(&[]);
    let snap = update(&mut s, 10_000);
    let b = queue(&snap, "root.b");
    assert_eq!(b.at_min_share_since, None, "the pass is skipped entirely");
    assert_eq!(b.min_share_starvation, Resource::ZERO);
    let a2 = app(&snap, 2);
    assert_eq!(a2.min_share_starvation, Resource::ZERO);
    assert_eq!(a2.identified_at, None);
    assert_eq!(a2.at_fair_share_since, Time(0), "its start time");
}

#[test]
fn below_the_utilization_threshold_nothing_is_refreshed_and_the_wait_counts_later() {
    // n1 6144 MB / 6 vcores filled by app 1, n2 2048 MB / 2 vcores empty: utilization
    // max(6144/8192, 6/8) = 0.75, not above 0.8.
    let mut s = scheduler(MIN_SHARE, PREEMPTION_ON);
    add_node(&mut s, 1, 6144, 6);
    add_node(&mut s, 2, 2048, 2);
    submit(&mut s, 1, "a");
    fill(&mut s, 6);
    submit(&mut s, 2, "b");
    ask(&mut s, 2, 4);
    for at in [0, 3_000, 6_000] {
        let snap = update(&mut s, at);
        let b = queue(&snap, "root.b");
        assert_eq!(b.at_min_share_since, Some(Time(0)), "stamped, then left");
        assert_eq!(b.min_share_starvation, Resource::ZERO, "at {at}");
        assert_eq!(app(&snap, 2).identified_at, None, "at {at}");
    }
    // n2 leaves at 7000: the cluster is 6144/6, all used, utilization 1. b has been below
    // min(4096/4, 4096/4) since 0 as far as the clock knows: starved at once.
    handle(&mut s, 7_000, Event::NodeRemoved { node: NodeId(2) });
    let snap = update(&mut s, 7_000);
    assert_eq!(
        queue(&snap, "root.b").min_share_starvation,
        Resource::new(4096, 4)
    );
    assert_eq!(app(&snap, 2).identified_at, Some(Time(7_000)));
}

#[test]
fn a_threshold_of_exactly_the_utilization_keeps_the_gate_closed() {
    // Full cluster: utilization 1.0; 1.0 < 1.0 is false (the comparison is strict).
    let mut s = min_share_cluster(&[
        ("yarn.scheduler.fair.preemption", "true"),
        (
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
            "1.0",
        ),
    ]);
    let snap = update(&mut s, 60_000);
    assert_eq!(queue(&snap, "root.b").min_share_starvation, Resource::ZERO);
    assert_eq!(app(&snap, 2).identified_at, None);
}

/// One leaf with a 2 s fair-share timeout and the given threshold; app 1's containers.
fn fair_share_cluster(threshold: &str) -> (Scheduler, Vec<ContainerId>) {
    let allocations = format!(
        r#"<allocations>
  <queue name="shared">
    <fairSharePreemptionTimeout>2</fairSharePreemptionTimeout>
    <fairSharePreemptionThreshold>{threshold}</fairSharePreemptionThreshold>
  </queue>
</allocations>"#
    );
    let mut s = scheduler(&allocations, PREEMPTION_ON);
    add_node(&mut s, 1, 8192, 8);
    submit(&mut s, 1, "shared");
    let containers = fill(&mut s, 8);
    submit(&mut s, 2, "shared");
    ask(&mut s, 2, 4);
    (s, containers)
}

#[test]
fn fair_share_starvation_follows_the_threshold() {
    // `shared` is the only active queue: fair share 8192 MB (fair policy: memory only), split
    // between apps 1 and 2: 4096 / 0 each. App 2: demand 4096/4, usage 0.
    // Threshold 0.5: fairDemand = min(4096 x 0.5 = 2048/0, 4096/4) = 2048/0, starved by 2048/0.
    // Threshold 0.8: 4096 x 0.8 = 3276.8, truncated: 3276/0.
    for (threshold, starvation) in [("0.5", 2048), ("0.8", 3276)] {
        let (mut s, _) = fair_share_cluster(threshold);
        // Below its threshold since its start at 0; at 1999 the 2 s have not passed.
        let snap = update(&mut s, 1_999);
        assert_eq!(app(&snap, 2).fair_share_starvation, Resource::ZERO);
        assert_eq!(app(&snap, 2).at_fair_share_since, Time(0));
        let snap = update(&mut s, 2_000);
        let a2 = app(&snap, 2);
        assert_eq!(
            a2.fair_share_starvation,
            Resource::new(starvation, 0),
            "threshold {threshold}"
        );
        assert_eq!(a2.identified_at, Some(Time(2_000)));
        // The leaf's min share is 0 (timeout never): no min-share part.
        assert_eq!(a2.min_share_starvation, Resource::ZERO);
        let q = queue(&snap, "root.shared");
        assert_eq!(q.fair_share_starvation, Resource::new(starvation, 0));
        assert_eq!(q.min_share_starvation, Resource::ZERO);
        assert_eq!(q.fair_share_preemption_threshold.to_string(), threshold);
    }
}

#[test]
fn an_app_at_its_threshold_is_not_fair_share_starved_and_its_clock_restarts() {
    let (mut s, containers) = fair_share_cluster("0.5");
    for container in &containers[..2] {
        handle(
            &mut s,
            1_000,
            Event::Release {
                app: AppId(1),
                container: *container,
            },
        );
    }
    handle(&mut s, 1_000, Event::Update);
    for _ in 0..2 {
        handle(&mut s, 1_000, Event::NodeHeartbeat { node: NodeId(1) });
    }
    assert_eq!(s.app_usage(AppId(2)), Some((Resource::new(2048, 2), 2)));
    let snap = update(&mut s, 3_000);
    let a2 = app(&snap, 2);
    assert_eq!(a2.fair_share_starvation, Resource::ZERO);
    assert_eq!(a2.at_fair_share_since, Time(3_000));
    assert_eq!(a2.identified_at, None);
}

#[test]
fn timeouts_threshold_and_preemptability_are_inherited() {
    // Hadoop 2.7's testPreemptionDecisionWithVariousTimeout (spec §0.2): defaults min 15 s /
    // fair 30 s; queueB min 10 / fair 25; queueB1 min 5; queueB2 fair 20.
    let allocations = r#"<allocations>
  <defaultMinSharePreemptionTimeout>15</defaultMinSharePreemptionTimeout>
  <defaultFairSharePreemptionTimeout>30</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>0.4</defaultFairSharePreemptionThreshold>
  <queue name="queueA"/>
  <queue name="queueB">
    <minSharePreemptionTimeout>10</minSharePreemptionTimeout>
    <fairSharePreemptionTimeout>25</fairSharePreemptionTimeout>
    <fairSharePreemptionThreshold>0.7</fairSharePreemptionThreshold>
    <allowPreemptionFrom>false</allowPreemptionFrom>
    <queue name="queueB1">
      <minSharePreemptionTimeout>5</minSharePreemptionTimeout>
      <allowPreemptionFrom>true</allowPreemptionFrom>
    </queue>
    <queue name="queueB2">
      <fairSharePreemptionTimeout>20</fairSharePreemptionTimeout>
    </queue>
  </queue>
  <queue name="queueC"><allowPreemptionFrom>false</allowPreemptionFrom></queue>
</allocations>"#;
    let mut s = scheduler(allocations, &[]);
    // A queue created at run time inherits from its parent at creation.
    submit(&mut s, 1, "root.queueB.queueB3");
    let snap = s.snapshot();
    let expect = [
        // (queue, min ms, fair ms, threshold, preemptable)
        ("root", 15_000, 30_000, 0.4, true),
        ("root.default", 15_000, 30_000, 0.4, true),
        ("root.queueA", 15_000, 30_000, 0.4, true),
        ("root.queueB", 10_000, 25_000, 0.7, false),
        // its own `true` cannot make it preemptable under a non-preemptable parent
        ("root.queueB.queueB1", 5_000, 25_000, 0.7, false),
        ("root.queueB.queueB2", 10_000, 20_000, 0.7, false),
        ("root.queueB.queueB3", 10_000, 25_000, 0.7, false),
        ("root.queueC", 15_000, 30_000, 0.4, false),
    ];
    for (name, min, fair, threshold, preemptable) in expect {
        let q = queue(&snap, name);
        assert_eq!(
            (
                q.min_share_preemption_timeout_ms,
                q.fair_share_preemption_timeout_ms,
                q.fair_share_preemption_threshold,
                q.preemptable
            ),
            (min, fair, threshold, preemptable),
            "{name}"
        );
    }
}

#[test]
fn without_a_file_the_timeouts_are_never_and_the_threshold_half() {
    let mut s = scheduler("<allocations/>", &[]);
    let snap = s.snapshot();
    let q = queue(&snap, "root.default");
    assert_eq!(q.min_share_preemption_timeout_ms, i64::MAX);
    assert_eq!(q.fair_share_preemption_timeout_ms, i64::MAX);
    assert_eq!(q.fair_share_preemption_threshold, 0.5);
    assert!(q.preemptable);
}

#[test]
fn the_am_preemption_setting_comes_from_the_queue_the_app_was_placed_in() {
    let allocations = r#"<allocations><queue name="a"/><queue name="b"/></allocations>"#;
    let mut s = scheduler(
        allocations,
        &[
            ("yarn.scheduler.fair.preemption", "true"),
            ("yarn.scheduler.fair.am.preemption.root.a", "false"),
        ],
    );
    submit(&mut s, 1, "a");
    submit(&mut s, 2, "b");
    // A move does not re-resolve it (Hadoop keeps it in the attempt).
    handle(
        &mut s,
        0,
        Event::Move {
            app: AppId(1),
            queue: "root.b".into(),
        },
    );
    let snap = s.snapshot();
    assert!(!app(&snap, 1).am_preemption);
    assert!(app(&snap, 2).am_preemption);
}

#[test]
fn fifo_reports_no_starvation() {
    let mut s = Scheduler::new(
        SchedulerConfig::Fifo(FifoConfig::default()),
        Default::default(),
    );
    submit(&mut s, 1, "default");
    let snap = s.snapshot();
    assert!(snap.apps.iter().all(|a| a.starvation.is_none()));
    assert!(snap.queues.iter().all(|q| q.starvation.is_none()));
}

#[test]
fn a_report_recomputation_moves_no_starvation_clock() {
    let mut s = min_share_cluster(PREEMPTION_ON);
    update(&mut s, 0);
    // A snapshot's recomputation at 6000 (past b's 5 s) evaluates nothing (spec §0.4)...
    s.update_shares(Time(6_000));
    let snap = s.snapshot();
    assert_eq!(queue(&snap, "root.b").min_share_starvation, Resource::ZERO);
    assert_eq!(app(&snap, 2).identified_at, None);
    // ...while the periodic update at the same instant does.
    let snap = update(&mut s, 6_000);
    assert_eq!(
        queue(&snap, "root.b").min_share_starvation,
        Resource::new(4096, 4)
    );
}
