//! The plan follower through the public API (time-aware-demands spec §5 B1-B4, B6, B7 in both
//! `weft.reservation.enforce` modes, queue
//! side): the spec's cluster of 4 nodes x (8 GiB, 8 vcores), `root.prod` reservable with
//! weight 3 and `root.adhoc` and `root.default` with 0.5 each, so the prod plan's capacity
//! (its steady fair share) is 3/4 of 32 GiB = 24 GiB.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{
    ContainerAsk, ContainerExit, Decision, Event, Placement, PlanReservations, PlannedReservation,
    RejectCode, Scheduler, SchedulerConfig,
};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

const GB: i64 = 1024;
const PLAN: &str = "root.prod";
const DEFAULT_LEAF: &str = "root.prod.prod-default";
const R1: &str = "reservation_1700000000000_0001";

const ALLOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>0.5</weight></queue>
  <queue name="default"><weight>0.5</weight></queue>
</allocations>"#;

fn cluster_with(alloc: &str, properties: weft_config::SchedulerProperties) -> Scheduler {
    let (allocations, _) =
        parse_allocations(alloc, &ResourceTypes::default()).expect("valid allocations");
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, properties),
        Default::default(),
    );
    for id in 1..=4 {
        s.handle(
            Time(0),
            Event::NodeAdded {
                node: NodeId(id),
                host: format!("n{id}"),
                port: 0,
                rack: "/default-rack".into(),
                capability: Resource::new(8 * GB, 8),
            },
        )
        .expect("node added");
    }
    s
}

fn cluster() -> Scheduler {
    cluster_with(ALLOC, Default::default())
}

fn reservation(id: &str, start: u64, end: u64, gb: i64, gang: bool) -> PlannedReservation {
    PlannedReservation {
        id: id.into(),
        start: Time(start),
        end: Time(end),
        steps: vec![(Time(start), Resource::new(gb * GB, gb))],
        gang,
    }
}

fn plan(s: &mut Scheduler, now: u64, move_on_expiry: bool, reservations: Vec<PlannedReservation>) {
    s.handle(
        Time(now),
        Event::PlanChanged(Box::new(PlanReservations {
            queue: PLAN.into(),
            move_on_expiry,
            reservations,
        })),
    )
    .expect("plan taken");
}

fn queue(s: &mut Scheduler, name: &str) -> Option<weft_sched::QueueSnapshot> {
    s.snapshot().queues.into_iter().find(|q| q.name == name)
}

fn submit(
    s: &mut Scheduler,
    now: u64,
    app: u64,
    queue: &str,
    reservation: Option<&str>,
) -> Placement {
    let (id, user) = (AppId(app), "alice".to_string());
    let q = Some(queue.to_string());
    match reservation {
        Some(r) => s.submit_with_reservation(Time(now), id, user, q, None, r),
        None => s.submit(Time(now), id, user, q, None),
    }
    .expect("a new id")
}

fn ask(s: &mut Scheduler, now: u64, app: u64, count: u32) {
    s.handle(
        Time(now),
        Event::Ask {
            app: AppId(app),
            ask: ContainerAsk {
                priority: 1,
                resources: Resource::new(GB, 1),
                count,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: weft_sched::AskTag::NONE,
            },
        },
    )
    .expect("ask taken");
}

/// One second of cluster life: the update, then a heartbeat from every node.
fn second(s: &mut Scheduler, now: u64) -> Vec<Decision> {
    s.handle(Time(now), Event::Update).expect("update");
    for id in 1..=4 {
        s.handle(Time(now), Event::NodeHeartbeat { node: NodeId(id) })
            .expect("heartbeat");
    }
    std::iter::from_fn(|| s.poll_decision()).collect()
}

fn app_queue(s: &mut Scheduler, app: u64) -> Option<String> {
    s.queue_name(AppId(app)).map(str::to_string)
}

fn usage(s: &mut Scheduler, app: u64) -> Resource {
    s.app_usage(AppId(app)).map_or(Resource::ZERO, |(u, _)| u)
}

#[test]
fn b2_an_app_without_a_reservation_runs_in_the_plan_default_queue() {
    let mut s = cluster();
    // Before any plan, as after one.
    assert_eq!(
        submit(&mut s, 0, 1, "prod", None),
        Placement::Accepted {
            queue: DEFAULT_LEAF.into()
        }
    );
    plan(&mut s, 0, true, vec![reservation(R1, 0, 60_000, 10, false)]);
    assert_eq!(
        submit(&mut s, 0, 2, "root.prod", None),
        Placement::Accepted {
            queue: DEFAULT_LEAF.into()
        }
    );
    ask(&mut s, 0, 2, 2);
    second(&mut s, 1_000);
    assert_eq!(usage(&mut s, 2), Resource::new(2 * GB, 2));
}

#[test]
fn b1_an_active_reservation_gets_its_own_leaf_sized_reserved_over_plan() {
    let mut s = cluster();
    plan(
        &mut s,
        0,
        true,
        vec![reservation(R1, 10_000, 70_000, 10, false)],
    );
    let leaf = format!("{PLAN}.{R1}");
    assert!(queue(&mut s, &leaf).is_none(), "not before its start");
    assert_eq!(queue(&mut s, DEFAULT_LEAF).map(|q| q.weight), Some(1.0));
    assert_eq!(s.poll_timeout(), Some(Time(10_000)), "woken at the start");

    s.handle(Time(10_000), Event::Timeout).expect("timeout");
    let q = queue(&mut s, &leaf).expect("the reservation's leaf at its start");
    assert!(q.leaf);
    // 10 GiB of the 24 GiB plan; the default leaf gets the rest.
    assert_eq!(q.weight, 10.0 / 24.0);
    let default_weight = queue(&mut s, DEFAULT_LEAF).map(|q| q.weight);
    assert_eq!(default_weight, Some(1.0 - 10.0 / 24.0));
    assert_eq!(s.poll_timeout(), Some(Time(70_000)), "then at its end");

    // An app with the id runs there, and gets its 10 GiB while adhoc runs too.
    assert_eq!(
        submit(&mut s, 10_000, 1, "prod", Some(R1)),
        Placement::Accepted {
            queue: leaf.clone()
        }
    );
    assert_eq!(
        submit(&mut s, 10_000, 2, "adhoc", None),
        Placement::Accepted {
            queue: "root.adhoc".into()
        }
    );
    ask(&mut s, 10_000, 2, 22);
    ask(&mut s, 10_000, 1, 10);
    for t in 0..5 {
        second(&mut s, 11_000 + t * 1_000);
    }
    assert_eq!(usage(&mut s, 1), Resource::new(10 * GB, 10));
    assert_eq!(
        queue(&mut s, &leaf).map(|q| q.usage),
        Some(Resource::new(10 * GB, 10))
    );
}

#[test]
fn b3_an_app_for_a_reservation_not_yet_active_is_rejected_with_hadoops_message() {
    let mut s = cluster();
    // Starts in 5 minutes.
    plan(
        &mut s,
        0,
        true,
        vec![reservation(R1, 300_000, 360_000, 10, false)],
    );
    match submit(&mut s, 0, 1, "prod", Some(R1)) {
        Placement::Rejected { reason, code } => {
            assert_eq!(code, RejectCode::ReservationNotActive);
            assert_eq!(
                reason,
                format!("Application app_0001 submitted to a reservation which is not yet currently active: {PLAN}.{R1}")
            );
        }
        other => panic!("accepted: {other:?}"),
    }
    // An unknown reservation is the same to the scheduler.
    assert!(matches!(
        submit(&mut s, 0, 2, "prod", Some("reservation_1_0099")),
        Placement::Rejected {
            code: RejectCode::ReservationNotActive,
            ..
        }
    ));
    // A reservation id on a queue that is not a plan is ignored, as in Hadoop.
    assert_eq!(
        submit(&mut s, 0, 3, "adhoc", Some(R1)),
        Placement::Accepted {
            queue: "root.adhoc".into()
        }
    );
    // At its start it is taken.
    s.handle(Time(300_000), Event::Timeout).expect("timeout");
    assert_eq!(
        submit(&mut s, 300_000, 4, "prod", Some(R1)),
        Placement::Accepted {
            queue: format!("{PLAN}.{R1}")
        }
    );
}

fn running_in_reservation(move_on_expiry: bool) -> Scheduler {
    let mut s = cluster();
    plan(
        &mut s,
        0,
        move_on_expiry,
        vec![reservation(R1, 0, 60_000, 10, false)],
    );
    submit(&mut s, 0, 1, "prod", Some(R1));
    ask(&mut s, 0, 1, 4);
    second(&mut s, 1_000);
    assert_eq!(usage(&mut s, 1), Resource::new(4 * GB, 4));
    s
}

#[test]
fn b4_at_the_end_the_app_moves_to_the_plan_default_and_keeps_running() {
    let mut s = running_in_reservation(true);
    s.handle(Time(60_000), Event::Timeout).expect("timeout");
    let decisions: Vec<Decision> = std::iter::from_fn(|| s.poll_decision()).collect();
    assert_eq!(
        decisions,
        vec![Decision::ReservationEnded {
            app: AppId(1),
            queue: format!("{PLAN}.{R1}"),
            moved_to: Some(DEFAULT_LEAF.into()),
        }]
    );
    assert_eq!(app_queue(&mut s, 1).as_deref(), Some(DEFAULT_LEAF));
    assert_eq!(
        usage(&mut s, 1),
        Resource::new(4 * GB, 4),
        "its containers still run"
    );
    assert!(
        queue(&mut s, &format!("{PLAN}.{R1}")).is_none(),
        "the leaf is gone"
    );
    assert_eq!(queue(&mut s, DEFAULT_LEAF).map(|q| q.weight), Some(1.0));
    assert_eq!(s.poll_timeout(), None, "nothing left to follow");
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn b4_without_move_on_expiry_the_app_is_killed_and_the_leaf_removed() {
    let mut s = running_in_reservation(false);
    s.handle(Time(60_000), Event::Timeout).expect("timeout");
    let decisions: Vec<Decision> = std::iter::from_fn(|| s.poll_decision()).collect();
    let killed = decisions
        .iter()
        .filter(|d| {
            matches!(
                d,
                Decision::Completed {
                    exit: ContainerExit::Killed,
                    ..
                }
            )
        })
        .count();
    assert_eq!(killed, 4, "its four containers end");
    assert_eq!(
        decisions.last(),
        Some(&Decision::ReservationEnded {
            app: AppId(1),
            queue: format!("{PLAN}.{R1}"),
            moved_to: None,
        })
    );
    assert_eq!(app_queue(&mut s, 1), None, "the app is gone");
    assert!(queue(&mut s, &format!("{PLAN}.{R1}")).is_none());
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_reservation_deleted_before_its_end_expires_at_the_next_plan() {
    let mut s = running_in_reservation(true);
    plan(&mut s, 5_000, true, vec![]);
    assert_eq!(app_queue(&mut s, 1).as_deref(), Some(DEFAULT_LEAF));
    assert!(queue(&mut s, &format!("{PLAN}.{R1}")).is_none());
}

#[test]
fn b6_a_gang_reservation_caps_its_leaf_at_its_reserved_amount() {
    let mut s = cluster();
    plan(
        &mut s,
        0,
        true,
        vec![
            reservation(R1, 0, 60_000, 10, true),
            reservation("reservation_1700000000000_0002", 0, 60_000, 6, false),
        ],
    );
    let gang = queue(&mut s, &format!("{PLAN}.{R1}")).expect("gang leaf");
    // 10/24 of the plan's 24 GiB and 24 vcores (the plan's memory share of the cluster).
    assert_eq!(gang.max_resources, Resource::new(10 * GB, 10));
    let plain =
        queue(&mut s, &format!("{PLAN}.reservation_1700000000000_0002")).expect("plain leaf");
    assert_eq!(plain.max_resources, Resource::UNBOUNDED, "the whole plan");
    assert_eq!(plain.weight, 6.0 / 24.0);
    let default_weight = queue(&mut s, DEFAULT_LEAF).map(|q| q.weight);
    assert_eq!(default_weight, Some(1.0 - 10.0 / 24.0 - 6.0 / 24.0));

    // The gang's app never gets more than its 10 GiB, with the cluster otherwise idle.
    submit(&mut s, 0, 1, "prod", Some(R1));
    ask(&mut s, 0, 1, 20);
    for t in 1..=3 {
        second(&mut s, t * 1_000);
    }
    assert_eq!(usage(&mut s, 1), Resource::new(10 * GB, 10));
}

/// A gang reservation whose skyline starts after the reservation does (Hadoop pads it with
/// zeros back to the arrival) caps its leaf at its peak, not at reserved(now): a maximum of
/// 0 before the step would refuse its app's asks outright as asks for a queue with a zero
/// maximum. The app waits, then takes its 10 GiB once the step comes.
#[test]
fn a_gang_leaf_is_capped_at_its_peak_so_asks_before_the_skyline_wait() {
    let mut s = cluster();
    let mut r = reservation(R1, 0, 60_000, 10, true);
    r.steps = vec![(Time(30_000), Resource::new(10 * GB, 10))];
    plan(&mut s, 0, true, vec![r]);
    let gang = queue(&mut s, &format!("{PLAN}.{R1}")).expect("gang leaf");
    assert_eq!(gang.max_resources, Resource::new(10 * GB, 10));
    assert_eq!(gang.weight, 0.0, "nothing reserved yet");
    submit(&mut s, 0, 1, "prod", Some(R1));
    ask(&mut s, 0, 1, 20);
    assert_eq!(s.poll_timeout(), Some(Time(30_000)));
    s.handle(Time(30_000), Event::Timeout).expect("timeout");
    for t in 31..=33 {
        second(&mut s, t * 1_000);
    }
    assert_eq!(usage(&mut s, 1), Resource::new(10 * GB, 10));
}

#[test]
fn a_steps_change_resizes_the_leaf_at_the_step() {
    let mut s = cluster();
    let mut r = reservation(R1, 0, 60_000, 12, false);
    r.steps.push((Time(30_000), Resource::new(6 * GB, 6)));
    plan(&mut s, 0, true, vec![r]);
    let leaf = format!("{PLAN}.{R1}");
    assert_eq!(queue(&mut s, &leaf).map(|q| q.weight), Some(0.5));
    assert_eq!(s.poll_timeout(), Some(Time(30_000)));
    s.handle(Time(30_000), Event::Timeout).expect("timeout");
    assert_eq!(queue(&mut s, &leaf).map(|q| q.weight), Some(0.25));
}

#[test]
fn b7_hadoop_mode_fair_share_preemption_brings_the_reservation_its_share() {
    let alloc = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>0.5</weight></queue>
  <queue name="default"><weight>0.5</weight></queue>
  <defaultFairSharePreemptionTimeout>5</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>
</allocations>"#;
    let properties = weft_config::SchedulerProperties {
        preemption: true,
        ..Default::default()
    };
    let mut s = cluster_with(alloc, properties);
    // adhoc takes the whole cluster first.
    // (one container per node and heartbeat: 8 seconds.)
    submit(&mut s, 0, 1, "adhoc", None);
    ask(&mut s, 0, 1, 32);
    for t in 1..=8 {
        second(&mut s, t * 1_000);
    }
    assert_eq!(usage(&mut s, 1), Resource::new(32 * GB, 32));

    plan(
        &mut s,
        10_000,
        true,
        vec![reservation(R1, 10_000, 600_000, 10, false)],
    );
    submit(&mut s, 10_000, 2, "prod", Some(R1));
    ask(&mut s, 10_000, 2, 10);
    let mut preempted = 0;
    for t in 11..=90 {
        let decisions = second(&mut s, t * 1_000);
        preempted += decisions
            .iter()
            .filter(|d| matches!(d, Decision::Preempted { app: AppId(1), .. }))
            .count();
    }
    // The reservation's leaf (weight 10/24 against the default leaf's rest, which has no
    // demand) holds prod's whole fair share, far above its 10 GiB demand: its app is starved
    // for its 10 containers, which come from adhoc, over its share.
    assert_eq!(usage(&mut s, 2), Resource::new(10 * GB, 10));
    assert_eq!(preempted, 10);
    assert_eq!(usage(&mut s, 1), Resource::new(22 * GB, 22));
}

/// adhoc holds the whole cluster (32 x 1 GiB); at 10 s a 10 GiB reservation starts and its app
/// asks for 10 containers; 80 seconds follow. Returns (containers preempted from adhoc, the
/// reservation app's usage, adhoc's usage, the leaf's min share at 11 s).
fn b7_run(
    enforcement: weft_config::ReservationEnforcement,
) -> (usize, Resource, Resource, Resource) {
    // The file sets no preemption timeouts: Hadoop's defaults never preempt for fair share.
    let properties = weft_config::SchedulerProperties {
        preemption: true,
        reservation_enforcement: enforcement,
        ..Default::default()
    };
    let mut s = cluster_with(ALLOC, properties);
    submit(&mut s, 0, 1, "adhoc", None);
    ask(&mut s, 0, 1, 32);
    for t in 1..=8 {
        second(&mut s, t * 1_000);
    }
    assert_eq!(usage(&mut s, 1), Resource::new(32 * GB, 32));

    plan(
        &mut s,
        10_000,
        true,
        vec![reservation(R1, 10_000, 600_000, 10, false)],
    );
    submit(&mut s, 10_000, 2, "prod", Some(R1));
    ask(&mut s, 10_000, 2, 10);
    let mut preempted = 0;
    let mut min_share = Resource::ZERO;
    for t in 11..=90 {
        let decisions = second(&mut s, t * 1_000);
        preempted += decisions
            .iter()
            .filter(|d| matches!(d, Decision::Preempted { app: AppId(1), .. }))
            .count();
        if t == 11 {
            let leaf = queue(&mut s, &format!("{PLAN}.{R1}")).expect("the leaf");
            min_share = leaf.min_resources;
        }
    }
    (preempted, usage(&mut s, 2), usage(&mut s, 1), min_share)
}

#[test]
fn b7_guarantee_min_share_preemption_brings_the_reservation_its_reserved_amount() {
    // Guarantee: the leaf's min share is the reserved 10 GiB with timeout 0, so the first
    // update finds it min-share starved by 10 GiB; adhoc's containers are warned and killed
    // after waitTimeBeforeKill (15 s), exactly the 10 the reservation lacks.
    let (preempted, reserved_app, adhoc, min_share) =
        b7_run(weft_config::ReservationEnforcement::Guarantee);
    assert_eq!(min_share, Resource::new(10 * GB, 10));
    assert_eq!(reserved_app, Resource::new(10 * GB, 10));
    assert_eq!(preempted, 10);
    assert_eq!(adhoc, Resource::new(22 * GB, 22));
}

#[test]
fn b7_hadoop_mode_without_fair_share_timeouts_leaves_the_reservation_waiting() {
    // Hadoop's mode gives only the weight: with no fair-share preemption timeout nothing is
    // taken back, and adhoc's containers never end, so the reservation's app gets nothing.
    let (preempted, reserved_app, adhoc, min_share) =
        b7_run(weft_config::ReservationEnforcement::Hadoop);
    assert_eq!(min_share, Resource::ZERO);
    assert_eq!((preempted, reserved_app), (0, Resource::ZERO));
    assert_eq!(adhoc, Resource::new(32 * GB, 32));
}

#[test]
fn a_plan_for_a_leaf_or_unknown_queue_is_refused_and_changes_nothing() {
    let mut s = cluster();
    let refused = s.handle(
        Time(0),
        Event::PlanChanged(Box::new(PlanReservations {
            queue: "root.adhoc".into(),
            move_on_expiry: true,
            reservations: vec![reservation(R1, 0, 10, 1, false)],
        })),
    );
    assert!(refused.is_err());
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn a_node_leaving_resizes_the_leaves_to_the_smaller_plan() {
    let mut s = cluster();
    plan(&mut s, 0, true, vec![reservation(R1, 0, 60_000, 6, false)]);
    let leaf = format!("{PLAN}.{R1}");
    assert_eq!(
        queue(&mut s, &leaf).map(|q| q.weight),
        Some(0.25),
        "6 of 24 GiB"
    );
    // Two nodes go: the plan is 3/4 of 16 GiB = 12 GiB, so 6 GiB is half of it.
    for id in [3, 4] {
        s.handle(Time(1_000), Event::NodeRemoved { node: NodeId(id) })
            .expect("removed");
    }
    s.handle(Time(1_000), Event::Update).expect("update");
    assert_eq!(queue(&mut s, &leaf).map(|q| q.weight), Some(0.5));
}
