//! The demand carrier (spec §3.3, `carrier.rs` and `plan_follower.rs`'s carried view) through
//! the core: acceptance scenario C2 in full under a saturating `adhoc`.
//!
//! The spec's cluster as in `plan_tests.rs`: 4 nodes × 8 GB / 8 vcores, Fair with `root.prod`
//! reservable (weight 3) and `root.adhoc` (weight 1), plan step 1 s; preemption on,
//! `weft.reservation.enforce=guarantee`, Hadoop's defaults otherwise: waitTimeBeforeKill
//! 15 s, NM heartbeat 1 s, so the lead is max(1 s, 15 s + 2 × 1 s) = 17 s. Each simulated
//! second every node heartbeats once, after the core's tick (the scheduler's update runs on
//! every tick here, update interval 0).

use serde_json::Value;
use weft_store::DemandState;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{Resource, Time};

use crate::tests::{
    ask, config, drain, heartbeat, launches, register, status, stored, submission, TS,
};
use crate::*;

use DemandState::*;

const SEC: u64 = 1_000;
const NODES: [&str; 4] = ["n1:1", "n2:1", "n3:1", "n4:1"];

const PROD_ADHOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
</allocations>"#;

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

/// The cluster's configuration: preempting, with reservation leaves guaranteed their
/// reserved amount.
fn preempting_config() -> RmConfig {
    config_with(weft_config::ReservationEnforcement::Guarantee)
}

/// The cluster's configuration: preempting, with reservation leaves given `enforcement`.
fn config_with(enforcement: weft_config::ReservationEnforcement) -> RmConfig {
    let mut rm = config(PROD_ADHOC);
    // Nodes and AMs report only when the test says; nothing here expires them.
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    rm.am_expiry = weft_types::Duration::from_secs(100_000);
    let properties = rm.scheduler.properties_mut();
    properties.preemption = true;
    properties.reservation_enforcement = enforcement;
    rm
}

fn preempting_cluster() -> RmCore {
    cluster_with(weft_config::ReservationEnforcement::Guarantee)
}

fn cluster_with(enforcement: weft_config::ReservationEnforcement) -> RmCore {
    let mut c = RmCore::new(config_with(enforcement), TS, Time(0));
    for n in NODES {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

/// `user`'s app in `queue` at `t`, its AM launched on `node` and registered.
fn running(
    c: &mut RmCore,
    t: u64,
    user: &str,
    queue: &str,
    node: &str,
) -> (ApplicationId, AttemptId, String, ContainerId) {
    let app = c.new_application(Time(t));
    c.submit(Time(t), app, submission(user, Some(queue)))
        .expect("submitted");
    drain(c);
    heartbeat(c, t, node);
    let launch = launches(&drain(c)).pop().expect("AM launched");
    let token = launch.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(t), launch.attempt, &token, "amhost", 4000, None)
        .expect("AM registers");
    (app, launch.attempt, token, launch.container)
}

/// `node` registers again with these containers running (a work-preserving restart).
fn reregister(c: &mut RmCore, t: u64, node: &str, running: &[ContainerId]) {
    c.node_register(
        Time(t),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: node.into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: running
                .iter()
                .map(|id| status(*id, NmContainerState::Running, 0))
                .collect(),
            secret: String::new(),
        },
    )
    .expect("registered");
    drain(c);
}

/// `app`'s AM sends demand 1: `n` × 1 GB, strict Start [NOW+10m, +5m), Duration 30 min.
fn send_demand(c: &mut RmCore, t: u64, attempt: AttemptId, token: &str, n: u64) {
    let description: Value = serde_json::from_str(&format!(
        r#"{{"DemandID": 1, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": {n}, "priority": 2}},
            "Start": {{"Time": "[NOW+10m, +5m]", "Strategy": "strict"}}, "Duration": "30m"}}"#
    ))
    .expect("test JSON");
    c.am_allocate(
        Time(t),
        attempt,
        token,
        AllocateRequest {
            demands: vec![AmDemand {
                description,
                ..AmDemand::default()
            }],
            ..AllocateRequest::default()
        },
    )
    .expect("admitted");
    drain(c);
}

/// One simulated second: every node heartbeats (each after a tick).
fn second(c: &mut RmCore, t: u64) {
    for n in NODES {
        heartbeat(c, t, n);
    }
    drain(c);
}

fn usage(c: &mut RmCore, queue: &str) -> Resource {
    c.scheduler_snapshot()
        .queues
        .iter()
        .find(|q| q.name == queue)
        .map_or(Resource::ZERO, |q| q.usage)
}

/// C2 in full: Start strict [+10 min, +15 min), Duration 30 min, 8 × 1 GB, while `adhoc`
/// holds everything but the demand's AM from the first seconds. Hand-derived:
/// * at 1 s alice's AM (1 GB, `prod`) and bob's (1 GB, `adhoc`) start; bob asks 40 × 1 GB and
///   Fair hands out one container per node heartbeat, so by 9 s the 32 slots are full: bob
///   holds 31 GB (his AM + 30), alice her AM;
/// * at 10 s the demand is sent: planned [610 s, 2,410 s), ALLOCATING at 610 − 17 = 593 s;
/// * at 593 s the carrier opens the reservation's leaf (one lead early) with min share
///   8 GB + the AM's 1 GB, timeout 0, and moves the app in: its usage is the AM's 1 GB, its
///   demand 9 GB, so the update at 593 s finds it min-share starved by 8 GB and warns 8 of
///   bob's containers (the leaf's min share is the only starved share in the cluster);
/// * 15 s later (waitTimeBeforeKill), at 608 s, they are killed, and the nodes' heartbeats of
///   608 s hand the freed room to alice first (earmarks): all 8 are allocated at 608 s ≤ 610 s.
///   The lead's arithmetic: warn at s − 17 s (+ the update interval, 0 here and 0.5 s in the
///   RM), kill 15 s later, hand-over at the next heartbeat ≤ 1 s later: s − 1 s; the second
///   heartbeat of the lead is the slack for the update interval.
#[test]
fn c2_under_a_saturating_adhoc_all_8_containers_are_allocated_by_the_planned_start() {
    let (mut c, app, key, leaf) = c2_submitted(weft_config::ReservationEnforcement::Guarantee);
    for t in 11..593 {
        second(&mut c, t * SEC);
    }
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Accepted));
    assert_eq!(
        usage(&mut c, "root.adhoc"),
        gb(31),
        "nothing taken before the lead"
    );

    let mut allocated_at = None;
    for t in 593..=610 {
        second(&mut c, t * SEC);
        let d = c.demand(&key).expect("a demand");
        if t == 593 {
            assert_eq!(d.state, Allocating);
            let snapshot = c.scheduler_snapshot();
            let q = snapshot
                .queues
                .iter()
                .find(|q| q.name == leaf)
                .expect("the leaf opens one lead before the start");
            assert_eq!(q.min_resources, gb(9), "8 GB reserved + the AM");
            assert_eq!(
                c.app_report(&app).map(|r| r.queue),
                Some(leaf.clone()),
                "carried"
            );
        }
        if allocated_at.is_none() && d.allocated == 8 {
            allocated_at = Some(t);
        }
    }
    assert_eq!(
        allocated_at,
        Some(608),
        "killed at 593 s + 15 s, handed over"
    );
    let d = c.demand(&key).expect("a demand");
    assert_eq!(d.state, Allocated);
    assert_eq!(usage(&mut c, &leaf), gb(9), "the demand's 8 and the AM");
    assert_eq!(
        usage(&mut c, "root.adhoc"),
        gb(23),
        "exactly 8 of adhoc's taken"
    );
}

/// C2 under Hadoop's enforcement (the default, spec B7's other half): the leaf opens one lead
/// early with the same weight but no min share, and with Hadoop's default fair-share
/// preemption timeout (never) nothing is taken from adhoc: at the planned start the demand
/// still has nothing. This is why C2's "by s" needs `weft.reservation.enforce=guarantee`.
#[test]
fn c2_under_hadoops_enforcement_nothing_is_preempted_by_the_planned_start() {
    let (mut c, app, key, leaf) = c2_submitted(weft_config::ReservationEnforcement::Hadoop);
    for t in 11..=610 {
        second(&mut c, t * SEC);
    }
    let d = c.demand(&key).expect("a demand");
    assert_eq!((d.state, d.allocated), (Allocating, 0));
    assert_eq!(
        c.app_report(&app).map(|r| r.queue),
        Some(leaf.clone()),
        "carried all the same"
    );
    let snapshot = c.scheduler_snapshot();
    let q = snapshot
        .queues
        .iter()
        .find(|q| q.name == leaf)
        .expect("the leaf");
    assert_eq!(q.min_resources, Resource::ZERO);
    assert_eq!(usage(&mut c, "root.adhoc"), gb(31));
}

/// C2's first 10 s under `enforcement`: adhoc saturates the cluster, alice's AM sends the
/// demand. (core, app, demand key, the reservation's leaf.)
fn c2_submitted(
    enforcement: weft_config::ReservationEnforcement,
) -> (RmCore, ApplicationId, String, String) {
    let mut c = cluster_with(enforcement);
    let (app, attempt, token, _) = running(&mut c, SEC, "alice", "prod", "n1:1");
    let (_bob, bob_attempt, bob_token, _) = running(&mut c, SEC, "bob", "adhoc", "n2:1");
    c.am_allocate(Time(SEC), bob_attempt, &bob_token, ask(40))
        .expect("bob asks");
    for t in 2..=9 {
        second(&mut c, t * SEC);
    }
    assert_eq!(usage(&mut c, "root.adhoc"), gb(31), "adhoc saturates");
    assert_eq!(usage(&mut c, "root.prod"), gb(1), "alice's AM only");

    send_demand(&mut c, 10 * SEC, attempt, &token, 8);
    let key = format!("{app}/1");
    let d = c.demand(&key).expect("a demand");
    assert_eq!(
        (d.state, d.reason.as_str(), d.planned_start, d.planned_end),
        (
            Accepted,
            "planned",
            Some(Time(610 * SEC)),
            Some(Time(2_410 * SEC))
        )
    );
    let leaf = format!("root.prod.{}", d.reservation_id.expect("a reservation"));
    (c, app, key, leaf)
}

/// A restart with a carried app: the app's record keeps the leaf as its queue, so the
/// recovered app is placed back in the leaf, which the recovered plan's follower opens again
/// (the demand still runs); when the demand ends the app goes to `<plan>-default`, and a
/// second restart finds it there. Times: the demand (2 × 1 GB) is sent at 10 s, planned
/// [610 s, 2,410 s), ALLOCATING, carried and allocated at 593 s; the RM restarts at 600 s.
#[test]
fn a_restarted_rm_keeps_a_carried_app_in_its_leaf_until_the_demand_ends() {
    let mut c = preempting_cluster();
    let (app, attempt, token, am) = running(&mut c, SEC, "alice", "prod", "n1:1");
    send_demand(&mut c, 10 * SEC, attempt, &token, 2);
    let key = format!("{app}/1");
    let leaf = format!(
        "root.prod.{}",
        c.demand(&key)
            .and_then(|d| d.reservation_id)
            .expect("planned")
    );
    let queue = |c: &RmCore| c.app_report(&app).map(|r| r.queue).expect("an app");
    second(&mut c, 593 * SEC);
    assert_eq!(queue(&c), leaf, "carried at activation");
    let got = c
        .am_allocate(Time(594 * SEC), attempt, &token, AllocateRequest::default())
        .expect("polled")
        .allocated;
    assert_eq!(got.len(), 2, "room for both at once");
    let on = |node: &str, extra: Option<ContainerId>| -> Vec<ContainerId> {
        got.iter()
            .filter(|a| a.node_id == node)
            .map(|a| a.id)
            .chain(extra)
            .collect()
    };

    let mut c =
        RmCore::recover(preempting_config(), stored(), TS, Time(600 * SEC)).expect("recovered");
    drain(&mut c);
    assert_eq!(queue(&c), leaf, "the record keeps the leaf");
    // Its 2 containers found room at 593 s (nothing else runs).
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Allocated));
    c.am_register(Time(600 * SEC), attempt, &token, "amhost", 4000, None)
        .expect("the AM registers again");
    for n in NODES {
        let am_here = (n == "n1:1").then_some(am);
        reregister(&mut c, 600 * SEC, n, &on(n, am_here));
    }
    second(&mut c, 601 * SEC);
    let snapshot = c.scheduler_snapshot();
    let q = snapshot
        .queues
        .iter()
        .find(|q| q.name == leaf)
        .expect("the leaf again");
    assert_eq!(
        (q.running_apps, q.min_resources),
        (1, gb(3)),
        "the app in it; 2 GB + the AM"
    );

    c.kill_demand(Time(610 * SEC), &key, "alice")
        .expect("killed");
    drain(&mut c);
    assert_eq!(queue(&c), "root.prod.prod-default");
    let mut c = RmCore::recover(preempting_config(), stored(), TS, Time(620 * SEC))
        .expect("recovered again");
    drain(&mut c);
    for n in NODES {
        register(&mut c, 620 * SEC, n);
    }
    second(&mut c, 621 * SEC);
    assert_eq!(queue(&c), "root.prod.prod-default");
    let snapshot = c.scheduler_snapshot();
    assert!(
        snapshot.queues.iter().all(|q| q.name != leaf),
        "the reservation left the plan with its demand"
    );
    assert_eq!(
        snapshot
            .queues
            .iter()
            .find(|q| q.name == "root.prod.prod-default")
            .map(|q| q.running_apps),
        Some(1)
    );
}
