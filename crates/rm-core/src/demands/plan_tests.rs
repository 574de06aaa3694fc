//! Demands placed by a plan (spec §3.3, §3.4 rows 2-6; acceptance scenarios C2, C3, C12 and
//! the replanner's rows) through the core.
//!
//! The spec's cluster as in `tests/reservations.rs`: 4 nodes × 8 GB / 8 vcores, Fair with
//! `root.prod` reservable (weight 3), `root.adhoc` (weight 1) and `root.default` (weight 1),
//! so the prod plan holds 3/5 of the cluster: 19,662 MB and 19 vcores. Plan step 1 s. The lead
//! (§3.3) is max(plan step 1 s, waitTimeBeforeKill 15 s + 2 × heartbeat 1 s) = 17 s.

use serde_json::Value;
use weft_store::{DemandState, Write};
use weft_types::{Resource, Time};

use crate::tests::{config, drain, register, stored, writes, TS};
use crate::*;

use DemandState::*;

const SEC: u64 = 1_000;
const LEAD: u64 = 17 * SEC;

const PROD_ADHOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
</allocations>"#;

fn cluster() -> RmCore {
    let mut c = RmCore::new(config(PROD_ADHOC), TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

fn gb(n: i64) -> Resource {
    Resource::new(n * 1024, n)
}

fn batch(c: &mut RmCore, t: u64, queue: &str, json: &str) -> Result<Vec<DemandReport>, RmError> {
    let value: Value = serde_json::from_str(json).expect("test JSON");
    let result = c.submit_demands(
        Time(t),
        DemandBatch {
            user: "alice",
            queue: Some(queue),
            application: None,
            demands: &value,
            pointer: "/demands",
        },
    );
    drain(c);
    result
}

/// Demand `id`: `n` containers of 1 GB / 1 vcore with the given extra fields, in `prod`.
fn one(c: &mut RmCore, t: u64, id: u64, n: u64, extra: &str) -> DemandReport {
    let json = format!(
        r#"{{"DemandID": {id}, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": {n}}}{extra}}}"#
    );
    batch(c, t, "prod", &json)
        .unwrap_or_else(|e| panic!("{e}"))
        .remove(0)
}

fn key(id: u64) -> String {
    format!("~alice/{id}")
}

fn last(c: &RmCore, id: u64) -> (DemandState, &'static str, u64) {
    let d = c.demand(&key(id)).expect("a demand");
    let t = d.timeline.last().expect("a transition");
    (t.state, t.reason.as_str(), t.at.as_millis())
}

fn planned(c: &RmCore, id: u64) -> (Option<u64>, Option<u64>) {
    let d = c.demand(&key(id)).expect("a demand");
    (
        d.planned_start.map(Time::as_millis),
        d.planned_end.map(Time::as_millis),
    )
}

fn reservation(c: &RmCore, id: u64) -> weft_plan::ReservationId {
    c.demand(&key(id))
        .and_then(|d| d.reservation_id)
        .expect("a reservation id")
        .parse()
        .expect("a valid id")
}

fn committed(c: &RmCore, t: u64) -> Resource {
    c.reservations()
        .plan("prod")
        .expect("prod is reservable")
        .committed()
        .value_at(Time(t))
}

fn tick(c: &mut RmCore, t: u64) {
    c.tick(Time(t));
    drain(c);
}

/// Strict Start [10 min, 15 min), Duration 30 min.
const STRICT_C2: &str =
    r#", "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m""#;
/// The same, loose.
const LOOSE_C2: &str =
    r#", "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "loose"}, "Duration": "30m""#;

/// A planned gang demand's leaf is not capped at the gang's size: the scheduler's gang asks
/// deliver it whole, and its leaf also holds the app's AM, so a cap at exactly 8 GB (spec B6's
/// rule for Hadoop's gang reservations) would leave the gang no room. An RDL gang reservation
/// keeps the cap (`b6_...` in crates/sched/tests/plan_follower.rs).
#[test]
fn a_planned_gang_demands_leaf_is_not_capped_at_the_gang() {
    let mut c = cluster();
    one(&mut c, 0, 1, 8, &format!("{STRICT_C2}, \"Gang\": true"));
    assert_eq!(last(&c, 1).1, "planned");
    let leaf = format!("root.prod.{}", reservation(&c, 1));
    tick(&mut c, 600 * SEC);
    // The scheduler's follower acts at its own change points (the leaf's start).
    c.timeout(Time(600 * SEC));
    drain(&mut c);
    let snapshot = c.scheduler_snapshot();
    let q = snapshot
        .queues
        .iter()
        .find(|q| q.name == leaf)
        .expect("the reservation's leaf at its start");
    assert_eq!(q.max_resources, Resource::UNBOUNDED, "{q:?}");
}

/// C2 in the plan: the window is [600 s, 900 s), so the definition is arrival 600 s,
/// deadline 900 s + 1,800 s = 2,700 s, 8 × 1 GB for 1,800 s. The plan is empty: placed at its
/// arrival, [600 s, 2,400 s). ALLOCATING at 600 s − 17 s = 583 s.
#[test]
fn c2_a_strict_start_is_planned_and_activated_one_lead_before_its_planned_start() {
    let mut c = cluster();
    let report = one(&mut c, 0, 1, 8, STRICT_C2);
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Accepted, "planned")
    );
    assert_eq!(planned(&c, 1), (Some(600 * SEC), Some(2_400 * SEC)));
    assert_eq!(
        report.reservation_id,
        Some(format!("reservation_{TS}_0001"))
    );
    assert_eq!(committed(&c, 600 * SEC), gb(8));
    assert_eq!(committed(&c, 2_400 * SEC), Resource::ZERO);
    // A real reservation of the plan: listed, and persisted with the demand's plan.
    let id = reservation(&c, 1);
    assert_eq!(c.reservations().queue_of(&id), Some("root.prod"));
    let store = stored();
    assert!(store.reservations.iter().any(|r| r.id == id.to_string()));
    let record = store
        .demands
        .iter()
        .find(|d| d.key == key(1))
        .expect("stored");
    let plan = record.plan.as_ref().expect("its plan is stored");
    assert_eq!(
        (plan.reservation_id.as_str(), plan.start_ms, plan.end_ms),
        (id.to_string().as_str(), 600 * SEC, 2_400 * SEC)
    );

    tick(&mut c, 583 * SEC - 1);
    assert_eq!(last(&c, 1).0, Accepted, "not before planned start - lead");
    tick(&mut c, 583 * SEC);
    assert_eq!(last(&c, 1), (Allocating, "eligible", 583 * SEC));

    // The follower made the reservation's leaf at its start.
    tick(&mut c, 600 * SEC);
    assert!(c
        .scheduler_snapshot()
        .queues
        .iter()
        .any(|q| q.name == format!("root.prod.{id}")));
}

/// C3: a gang of 19 × 1 GB holds the whole plan's vcores (19) over [600 s, 2,700 s), so 8
/// containers find no room anywhere in [600 s, 2,700 s). Strict: FAILED(unplannable), nothing
/// reserved. Loose: searched from the window's last start on (2,700 s − 1,800 s = 900 s); the
/// plan is free again at 2,700 s, so deferred to [2,700 s, 4,500 s), activated at 2,683 s.
#[test]
fn c3_a_full_plan_fails_a_strict_demand_unplannable_and_defers_a_loose_one() {
    let mut c = cluster();
    let full = c.new_reservation();
    let definition = weft_plan::ReservationDefinition {
        arrival: Time(600 * SEC),
        deadline: Time(2_700 * SEC),
        name: "full".into(),
        priority: 0,
        recurrence: None,
        interpreter: weft_plan::Interpreter::All,
        requests: vec![weft_plan::ReservationRequest {
            capability: gb(1),
            num_containers: 19,
            concurrency: 19,
            duration: weft_types::Duration::from_secs(2_100),
        }],
    };
    c.submit_reservation(Time(0), "bob", "prod", Some(full), &definition)
        .expect("the whole plan");
    drain(&mut c);

    let strict = one(&mut c, 0, 1, 8, STRICT_C2);
    assert_eq!(
        (strict.state, strict.reason.as_str()),
        (Failed, "unplannable")
    );
    let detail = &strict.timeline.last().expect("a transition").detail;
    assert!(
        detail.contains("no room in plan root.prod between 600000 and 2700000 ms"),
        "{detail}"
    );
    assert_eq!(strict.reservation_id, None, "nothing is held");
    assert_eq!(
        c.reservations()
            .plan("prod")
            .map(|p| p.reservations().count()),
        Some(1)
    );

    let loose = one(&mut c, 0, 2, 8, LOOSE_C2);
    assert_eq!((loose.state, loose.reason.as_str()), (Accepted, "deferred"));
    assert_eq!(planned(&c, 2), (Some(2_700 * SEC), Some(4_500 * SEC)));
    // Its window closes at 900 s, yet it waits for its plan.
    tick(&mut c, 900 * SEC);
    assert_eq!(last(&c, 2).0, Accepted);
    tick(&mut c, 2_683 * SEC);
    assert_eq!(last(&c, 2), (Allocating, "window_missed", 2_683 * SEC));
}

/// The sharing policy refusing is `quota`: Capacity's prod plan is 24 GB; `average-capacity`
/// 25 over a 1 h window allows one user 24 GB × 1 h × 25% = 6 GB·h. A strict Start at
/// [1 min, 2 min) for 1 h of 8 × 1 GB is 8 GB·h.
#[test]
fn a_demand_over_the_users_average_share_fails_quota() {
    let mut c = crate::tests::reservations::capacity_cluster(&[
        ("root.prod.average-capacity", "25"),
        ("root.prod.reservation-window", "3600000"),
    ]);
    let report = one(
        &mut c,
        0,
        1,
        8,
        r#", "Start": {"Time": "[NOW+1m, +1m]", "Strategy": "strict"}, "Duration": "1h""#,
    );
    assert_eq!((report.state, report.reason.as_str()), (Failed, "quota"));
    let detail = &report.timeline.last().expect("a transition").detail;
    assert!(
        detail.starts_with("Integral (avg over time) quota capacity 0.25"),
        "{detail}"
    );
}

/// C12: DeadLine strict [NOW, +30 min), Duration 20 min, OrderBy 1200 (loose, the default).
/// 1200 is unplanned, so 1234 is planned by time alone: arrival 0, deadline 1,800 s, 2 × 1 GB
/// for 1,200 s at [0, 1,200 s). 1200 still runs at 10 min: now + 20 min > 30 min first holds
/// at the tick one step after 600 s, 601 s: FAILED(deadline_unreachable), and the plan's
/// committed skyline drops from 2 GB to nothing.
#[test]
fn c12_an_unreachable_deadline_fails_the_demand_and_its_reservation_leaves_the_plan() {
    let mut c = cluster();
    one(&mut c, 0, 1200, 1, "");
    let report = one(
        &mut c,
        0,
        1234,
        2,
        r#", "DeadLine": {"Time": "[NOW, +30m]", "Strategy": "strict"}, "Duration": "20m", "OrderBy": 1200"#,
    );
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Accepted, "planned")
    );
    assert_eq!(planned(&c, 1234), (Some(0), Some(1_200 * SEC)));
    let id = reservation(&c, 1234);
    assert_eq!(committed(&c, 300 * SEC), gb(2));

    tick(&mut c, 600 * SEC);
    assert_eq!(last(&c, 1234).0, Accepted, "waits for 1200");
    c.tick(Time(601 * SEC));
    let out = drain(&mut c);
    assert_eq!(last(&c, 1234), (Failed, "deadline_unreachable", 601 * SEC));
    assert_eq!(committed(&c, 601 * SEC), Resource::ZERO);
    assert!(c.reservations().find(&id).is_none());
    assert!(writes(&out)
        .iter()
        .any(|w| matches!(w, Write::RemoveReservation(r) if *r == id.to_string())));
    assert!(stored().reservations.is_empty());
}

/// A strict OrderBy with a strict DeadLine cannot be guaranteed behind an unplanned
/// predecessor (§3.3's 400).
#[test]
fn a_strict_order_and_deadline_behind_an_unplanned_predecessor_fails() {
    let mut c = cluster();
    one(&mut c, 0, 1200, 1, "");
    let report = one(
        &mut c,
        0,
        1234,
        1,
        r#", "Strategy": "strict", "DeadLine": "[NOW, +30m]", "Duration": "20m", "OrderBy": 1200"#,
    );
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Failed, "unplannable")
    );
    assert_eq!(
        report.timeline.last().map(|t| t.detail.as_str()),
        Some("cannot guarantee: predecessor 1200 is not planned")
    );
}

/// An OrderBy-only demand behind a planned predecessor is placed after its planned end: 1200
/// is planned at [600 s, 2,400 s) (C2); 1234, 2 × 1 GB for 10 min after it, gets arrival
/// 2,400 s and so [2,400 s, 3,000 s).
#[test]
fn an_order_only_demand_is_placed_after_its_planned_predecessor() {
    let mut c = cluster();
    one(&mut c, 0, 1200, 8, STRICT_C2);
    let report = one(
        &mut c,
        0,
        1234,
        2,
        r#", "Duration": "10m", "OrderBy": 1200"#,
    );
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Accepted, "planned")
    );
    assert_eq!(planned(&c, 1234), (Some(2_400 * SEC), Some(3_000 * SEC)));
}

/// Row 6: two nodes leave at 4 s, so the plan holds 3/5 of 16 GB = 9,830 MB (9 vcores) from
/// then on, under the 12 GB gang planned at [600 s, 2,400 s). The tick's replanner drops it,
/// and the strict demand fails `capacity_lost`.
#[test]
fn a_strict_demand_whose_reservation_the_replanner_drops_fails_capacity_lost() {
    let mut c = cluster();
    let gang = r#", "Gang": true, "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m""#;
    one(&mut c, 0, 1, 12, gang);
    let id = reservation(&c, 1);
    for n in ["n3:1", "n4:1"] {
        c.decommission(Time(4 * SEC), n).expect("decommissioned");
    }
    drain(&mut c);
    tick(&mut c, 5 * SEC);
    assert_eq!(last(&c, 1), (Failed, "capacity_lost", 5 * SEC));
    assert!(c.reservations().find(&id).is_none());
    assert!(stored().reservations.is_empty());
}

/// Row 4: a strict 8 GB gang (older) and a loose one (newer) both at [600 s, 2,400 s); after
/// the plan shrinks to 9,830 MB the replanner drops the newest, the loose one. Planned again
/// at 5 s: inside its conditions (arrival 600 s, deadline 2,700 s) only 1,638 MB are free
/// until 2,400 s, so it is searched from 900 s on and placed at [2,400 s, 4,200 s).
#[test]
fn a_loose_demand_whose_reservation_the_replanner_drops_is_planned_again() {
    let mut c = cluster();
    let gang = |strategy: &str| {
        format!(
            r#", "Gang": true, "Start": {{"Time": "[NOW+10m, +5m]", "Strategy": "{strategy}"}}, "Duration": "30m""#
        )
    };
    one(&mut c, 0, 1, 8, &gang("strict"));
    one(&mut c, 0, 2, 8, &gang("loose"));
    let first = reservation(&c, 2);
    for n in ["n3:1", "n4:1"] {
        c.decommission(Time(4 * SEC), n).expect("decommissioned");
    }
    drain(&mut c);
    tick(&mut c, 5 * SEC);
    assert_eq!(last(&c, 1), (Accepted, "planned", 0), "the older is kept");
    assert_eq!(last(&c, 2), (Accepted, "replanned", 5 * SEC));
    assert_eq!(planned(&c, 2), (Some(2_400 * SEC), Some(4_200 * SEC)));
    assert_ne!(reservation(&c, 2), first, "a new reservation");
    assert!(c.reservations().find(&reservation(&c, 2)).is_some());
}

/// A killed planned demand gives its reservation back; a restart keeps a planned demand, its
/// reservation and its activation time.
#[test]
fn a_restart_keeps_planned_demands_and_their_reservations() {
    let mut c = cluster();
    one(&mut c, 0, 1, 8, STRICT_C2);
    one(&mut c, 0, 2, 4, STRICT_C2);
    let kept = reservation(&c, 1);
    let killed = reservation(&c, 2);
    c.kill_demand(Time(SEC), &key(2), "alice").expect("killed");
    drain(&mut c);
    assert!(c.reservations().find(&killed).is_none());
    assert_eq!(committed(&c, 600 * SEC), gb(8));

    let mut c =
        RmCore::recover(config(PROD_ADHOC), stored(), TS, Time(2 * SEC)).expect("recovered");
    drain(&mut c);
    let report = c.demand(&key(1)).expect("kept");
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Accepted, "planned")
    );
    assert_eq!(report.reservation_id, Some(kept.to_string()));
    assert_eq!(planned(&c, 1), (Some(600 * SEC), Some(2_400 * SEC)));
    assert_eq!(
        c.reservations()
            .find(&kept)
            .map(|r| r.allocation.value_at(Time(600 * SEC))),
        Some(gb(8))
    );
    assert!(c.reservations().find(&killed).is_none());
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 3 * SEC, n);
    }
    drain(&mut c);
    tick(&mut c, 600 * SEC - LEAD);
    assert_eq!(last(&c, 1), (Allocating, "eligible", 583 * SEC));
}

/// Under no reservable queue, today's behaviour: strict fails `not_reservable`.
#[test]
fn a_queue_under_no_plan_keeps_not_reservable() {
    let mut c = cluster();
    let json = format!(
        r#"{{"DemandID": 1, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": 1}}{STRICT_C2}}}"#
    );
    let report = batch(&mut c, 0, "adhoc", &json)
        .expect("recorded")
        .remove(0);
    assert_eq!(
        (report.state, report.reason.as_str()),
        (Failed, "not_reservable")
    );
}

/// C15, scaled to a test's clock: an app submitted at 60 s to `prod` with a strict gang of 4 ×
/// 4 GB, Start [NOW+10m, +10m), Duration 45 min, DeadLine [NOW, +60m). Arrival 660 s;
/// deadline min(60 s + 3,600 s, 1,260 s + 2,700 s) = 3,660 s; placed at [660 s, 3,360 s). The
/// AM is asked at 660 s − (17 s + 60 s) = 583 s, the demand goes ALLOCATING at 643 s. The
/// RM restarts at 100 s in between.
#[test]
fn c15_an_apps_am_waits_for_its_demands_planned_start() {
    let mut rm = config(PROD_ADHOC);
    // The nodes stay silent between the test's heartbeats.
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    let mut c = RmCore::new(rm, TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    let demand: Value = serde_json::from_str(
        r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 4096, "vCores": 2}, "num-containers": 4},
            "Gang": true, "Start": {"Time": "[NOW+10m, +10m]", "Strategy": "strict"}, "Duration": "45m",
            "DeadLine": {"Time": "[NOW, +60m]", "Strategy": "strict"}}"#,
    )
    .expect("test JSON");
    let app = c.new_application(Time(60 * SEC));
    let sub = Submission {
        demand: Some(demand),
        ..crate::tests::submission("alice", Some("prod"))
    };
    c.submit(Time(60 * SEC), app, sub).expect("submitted");
    drain(&mut c);
    let key = format!("{app}/1");
    let d = c.demand(&key).expect("bound to the app");
    assert_eq!((d.state, d.reason.as_str()), (Accepted, "planned"));
    assert_eq!(
        (d.planned_start, d.planned_end),
        (Some(Time(660 * SEC)), Some(Time(3_360 * SEC)))
    );

    // A restart keeps the AM held (the app's record keeps its weft-demand).
    let mut rm = config(PROD_ADHOC);
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    let mut c = RmCore::recover(rm, stored(), TS, Time(100 * SEC)).expect("recovered");
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 100 * SEC, n);
    }
    drain(&mut c);
    let out = {
        crate::tests::heartbeat(&mut c, 582 * SEC, "n1:1");
        drain(&mut c)
    };
    assert!(
        crate::tests::launches(&out).is_empty(),
        "no AM before 583 s"
    );
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(report.state, AppState::Accepted);
    assert_eq!(
        report.diagnostics,
        "waiting for scheduled start at 660000 ms (its AM is asked at 583000 ms)"
    );

    crate::tests::heartbeat(&mut c, 583 * SEC, "n1:1");
    let out = drain(&mut c);
    let launched = crate::tests::launches(&out);
    assert_eq!(launched.len(), 1, "the AM is allocated at 583 s");
    assert_eq!(launched[0].attempt.app, app);
    assert_eq!(
        c.app_report(&app).map(|r| r.diagnostics),
        Some(String::new())
    );

    tick(&mut c, 643 * SEC);
    assert_eq!(
        c.demand(&key).map(|d| (d.state, d.reason.as_str())),
        Some((Allocating, "eligible"))
    );
}

/// An app whose demand cannot be planned is refused with it, FAILED.
#[test]
fn an_app_whose_demand_is_unplannable_is_refused() {
    let mut c = cluster();
    let demand: Value = serde_json::from_str(
        r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 24},
            "Gang": true, "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m"}"#,
    )
    .expect("test JSON");
    let app = c.new_application(Time(SEC));
    let sub = Submission {
        demand: Some(demand),
        ..crate::tests::submission("alice", Some("prod"))
    };
    let err = c.submit(Time(SEC), app, sub).expect_err("refused");
    assert!(err.to_string().contains("FAILED (unplannable)"), "{err}");
    drain(&mut c);
    assert_eq!(c.app_report(&app).map(|r| r.state), Some(AppState::Failed));
}

/// The demand's reservation carries its app: an AM in `prod` (so in `root.prod.prod-default`)
/// sends at 2 s a strict demand of 2 × 1 GB, Start [NOW+10m, +5m), Duration 30 min: planned
/// at [602 s, 2,402 s), ALLOCATING at 585 s. The carrier opens the reservation's leaf then, one
/// lead before the planned start, and the app moves in; killed, the demand sends the app back
/// to the plan's default queue before its reservation leaves the plan.
#[test]
fn a_running_planned_demand_carries_its_app_into_the_reservations_leaf() {
    let mut rm = config(PROD_ADHOC);
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    rm.am_expiry = weft_types::Duration::from_secs(100_000);
    let mut c = RmCore::new(rm, TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    let app = c.new_application(Time(SEC));
    c.submit(
        Time(SEC),
        app,
        crate::tests::submission("alice", Some("prod")),
    )
    .expect("submitted");
    drain(&mut c);
    crate::tests::heartbeat(&mut c, SEC, "n1:1");
    let out = drain(&mut c);
    let launch = crate::tests::launches(&out).pop().expect("AM launched");
    let token = launch.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(SEC), launch.attempt, &token, "amhost", 4000, None)
        .expect("AM registers");
    let description: Value = serde_json::from_str(
        r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 2, "priority": 1},
            "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m"}"#,
    )
    .expect("test JSON");
    c.am_allocate(
        Time(2 * SEC),
        launch.attempt,
        &token,
        AllocateRequest {
            demands: vec![AmDemand {
                description,
                ..AmDemand::default()
            }],
            ..AllocateRequest::default()
        },
    )
    .expect("admitted");
    drain(&mut c);
    let key = format!("{app}/1");
    let d = c.demand(&key).expect("a demand");
    assert_eq!(
        (d.reason.as_str(), d.planned_start, d.planned_end),
        ("planned", Some(Time(602 * SEC)), Some(Time(2_402 * SEC)))
    );
    let leaf = format!("root.prod.{}", d.reservation_id.expect("a reservation"));
    let queue = |c: &RmCore| c.app_report(&app).map(|r| r.queue).expect("an app");
    assert_eq!(queue(&c), "root.prod.prod-default");

    tick(&mut c, 585 * SEC - 1);
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Accepted));
    assert_eq!(
        queue(&c),
        "root.prod.prod-default",
        "no leaf before the lead"
    );
    tick(&mut c, 585 * SEC);
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Allocating));
    assert_eq!(queue(&c), leaf, "carried at activation");
    tick(&mut c, 603 * SEC);
    assert_eq!(queue(&c), leaf);

    c.kill_demand(Time(604 * SEC), &key, "alice")
        .expect("killed");
    drain(&mut c);
    assert_eq!(queue(&c), "root.prod.prod-default");
    assert_eq!(committed(&c, 700 * SEC), Resource::ZERO);
}

/// C13 loose with a plan: an AM in `prod` sends at 2 s a loose demand of 1 × 1 GB, Start
/// [NOW+10m, +5m), Duration 10 min: planned at [602 s, 1,202 s), ALLOCATING at 602 − 17 =
/// 585 s. n2's heartbeat at 586 s allocates its container (START = 586 s), running at 587 s
/// (MONITORING); at 602-603 s the app moves into the reservation's leaf. The lease ends at
/// 586 + 600 = 1,186 s with the container running: `lease_overrun`, and the app is demoted to
/// `root.prod.prod-default` (not carried back), where it continues; its container's end at
/// 1,300 s finishes the demand ok.
#[test]
fn c13_a_loose_lease_overrun_moves_the_app_to_the_plans_default_queue() {
    let mut rm = config(PROD_ADHOC);
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    rm.am_expiry = weft_types::Duration::from_secs(100_000);
    let mut c = RmCore::new(rm, TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    let app = c.new_application(Time(SEC));
    c.submit(
        Time(SEC),
        app,
        crate::tests::submission("alice", Some("prod")),
    )
    .expect("submitted");
    drain(&mut c);
    crate::tests::heartbeat(&mut c, SEC, "n1:1");
    let out = drain(&mut c);
    let launch = crate::tests::launches(&out).pop().expect("AM launched");
    let token = launch.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(SEC), launch.attempt, &token, "amhost", 4000, None)
        .expect("AM registers");
    let description: Value = serde_json::from_str(
        r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1, "priority": 1},
            "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "loose"}, "Duration": "10m"}"#,
    )
    .expect("test JSON");
    let allocate = |c: &mut RmCore, t: u64, demands: Vec<AmDemand>| {
        let r = c
            .am_allocate(
                Time(t),
                launch.attempt,
                &token,
                AllocateRequest {
                    demands,
                    ..AllocateRequest::default()
                },
            )
            .expect("allocate");
        drain(c);
        r
    };
    allocate(
        &mut c,
        2 * SEC,
        vec![AmDemand {
            description,
            ..AmDemand::default()
        }],
    );
    let key = format!("{app}/1");
    let d = c.demand(&key).expect("a demand");
    assert_eq!(
        (d.reason.as_str(), d.planned_start, d.planned_end),
        ("planned", Some(Time(602 * SEC)), Some(Time(1_202 * SEC)))
    );
    let leaf = format!("root.prod.{}", d.reservation_id.expect("a reservation"));
    let queue = |c: &RmCore| c.app_report(&app).map(|r| r.queue).expect("an app");

    tick(&mut c, 585 * SEC);
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Allocating));
    crate::tests::heartbeat(&mut c, 586 * SEC, "n2:1");
    drain(&mut c);
    let got = allocate(&mut c, 586 * SEC, Vec::new()).allocated;
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(
        c.demand(&key).and_then(|d| d.first_allocation),
        Some(Time(586 * SEC))
    );
    let running = |id| crate::tests::status(id, NmContainerState::Running, 0);
    crate::tests::report(&mut c, 587 * SEC, "n2:1", vec![running(got[0].id)]);
    drain(&mut c);
    assert_eq!(c.demand(&key).map(|d| d.state), Some(Monitoring));
    tick(&mut c, 602 * SEC);
    tick(&mut c, 603 * SEC);
    assert_eq!(queue(&c), leaf);

    tick(&mut c, 1_186 * SEC - 1);
    assert_eq!(last_of(&c, &key), (Monitoring, "claimed", 587 * SEC));
    assert_eq!(queue(&c), leaf);
    tick(&mut c, 1_186 * SEC);
    assert_eq!(
        last_of(&c, &key),
        (Monitoring, "lease_overrun", 1_186 * SEC)
    );
    assert_eq!(queue(&c), "root.prod.prod-default");
    tick(&mut c, 1_190 * SEC);
    assert_eq!(queue(&c), "root.prod.prod-default", "not carried back");
    let done = crate::tests::status(got[0].id, NmContainerState::Complete, 0);
    crate::tests::report(&mut c, 1_300 * SEC, "n2:1", vec![done]);
    drain(&mut c);
    assert_eq!(last_of(&c, &key), (Finished, "ok", 1_300 * SEC));
}

fn last_of(c: &RmCore, key: &str) -> (DemandState, &'static str, u64) {
    let d = c.demand(key).expect("a demand");
    let t = d.timeline.last().expect("a transition");
    (t.state, t.reason.as_str(), t.at.as_millis())
}

/// §3.5's "loose before strict": as above, but the loose demand is the older one. Hadoop's
/// newest-first would drop the strict one; the loose one goes first, and is planned again at
/// [2,400 s, 4,200 s) behind the strict one.
#[test]
fn the_replanner_drops_a_loose_demand_before_a_newer_strict_one() {
    let mut c = cluster();
    let gang = |strategy: &str| {
        format!(
            r#", "Gang": true, "Start": {{"Time": "[NOW+10m, +5m]", "Strategy": "{strategy}"}}, "Duration": "30m""#
        )
    };
    one(&mut c, 0, 1, 8, &gang("loose"));
    one(&mut c, 0, 2, 8, &gang("strict"));
    for n in ["n3:1", "n4:1"] {
        c.decommission(Time(4 * SEC), n).expect("decommissioned");
    }
    drain(&mut c);
    tick(&mut c, 5 * SEC);
    assert_eq!(
        last(&c, 2),
        (Accepted, "planned", 0),
        "the strict one is kept"
    );
    assert_eq!(last(&c, 1), (Accepted, "replanned", 5 * SEC));
    assert_eq!(planned(&c, 1), (Some(2_400 * SEC), Some(4_200 * SEC)));
}

fn dry_run(c: &mut RmCore, t: u64, json: &str) -> Result<Vec<DemandPreview>, RmError> {
    let value: Value = serde_json::from_str(json).expect("test JSON");
    c.plan_demands(
        Time(t),
        DemandBatch {
            user: "alice",
            queue: Some("prod"),
            application: None,
            demands: &value,
            pointer: "/demands",
        },
    )
}

/// The dry run (§3.6 `POST /demands/plan`) with 1 planned at [600 s, 2,400 s) (C2, 8 GB of
/// the plan's 19,662 MB / 19 vcores): 2, the same again, fits beside it at 600 s, with the
/// user's headroom over its window [600 s, 2,700 s) before it 19,662 − 8,192 = 11,470 MB and
/// 19 − 8 = 11 vcores; 3, 2 × 1 GB for 10 min ordered after 2 in the same batch, goes at 2's
/// planned end, [2,400 s, 3,000 s); 4, 12 strict containers in C2's window, finds 3 GB free
/// there (19 − 8 − 8) and fails `unplannable`. Afterwards nothing has changed: no demand, no
/// reservation, no store write, and the real submission of 2 gets the previewed place and the
/// reservation id the dry run did not take.
#[test]
fn a_dry_run_answers_what_the_submission_would_get_and_changes_nothing() {
    let mut c = cluster();
    one(&mut c, 0, 1, 8, STRICT_C2);
    let first = reservation(&c, 1);
    let demand = |id: u64, n: u64, extra: &str| {
        format!(
            r#"{{"DemandID": {id}, "ResourceRequest": {{"capability": {{"memory": 1024, "vCores": 1}}, "num-containers": {n}}}{extra}}}"#
        )
    };
    let json = format!(
        "[{}, {}, {}]",
        demand(2, 8, STRICT_C2),
        demand(3, 2, r#", "Duration": "10m", "OrderBy": 2"#),
        demand(4, 12, STRICT_C2)
    );
    let previews = dry_run(&mut c, 0, &json).unwrap_or_else(|e| panic!("{e}"));
    let seen: Vec<_> = previews
        .iter()
        .map(|p| {
            (
                p.key.as_str(),
                p.state,
                p.reason.as_str(),
                p.planned_start.map(Time::as_millis),
                p.planned_end.map(Time::as_millis),
            )
        })
        .collect();
    assert_eq!(
        seen,
        vec![
            (
                "~alice/2",
                Accepted,
                "planned",
                Some(600 * SEC),
                Some(2_400 * SEC)
            ),
            (
                "~alice/3",
                Accepted,
                "planned",
                Some(2_400 * SEC),
                Some(3_000 * SEC)
            ),
            ("~alice/4", Failed, "unplannable", None, None),
        ]
    );
    assert_eq!(previews[0].headroom, Some(Resource::new(11_470, 11)));
    assert_eq!(previews[0].plan_queue.as_deref(), Some("root.prod"));
    assert!(
        previews[2].detail.contains("no room in plan root.prod"),
        "{}",
        previews[2].detail
    );

    assert!(drain(&mut c).is_empty(), "no store write, no output");
    for id in [2, 3, 4] {
        assert!(c.demand(&key(id)).is_none(), "demand {id} was not created");
    }
    assert_eq!(
        c.reservations()
            .plan("prod")
            .map(|p| p.reservations().count()),
        Some(1)
    );
    assert_eq!(committed(&c, 600 * SEC), gb(8));

    let real = one(&mut c, 0, 2, 8, STRICT_C2);
    assert_eq!((real.state, real.reason.as_str()), (Accepted, "planned"));
    assert_eq!(planned(&c, 2), (Some(600 * SEC), Some(2_400 * SEC)));
    assert_eq!(reservation(&c, 2).sequence, first.sequence + 1);
}

/// A dry run refuses what the submission refuses, with the same words, and changes nothing.
#[test]
fn a_dry_run_of_an_invalid_batch_is_refused_as_its_submission() {
    let mut c = cluster();
    let bad = r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1}, "Start": "[NOW, +5x]"}"#;
    let planned = dry_run(&mut c, 0, bad).expect_err("an unknown unit");
    let submitted = batch(&mut c, 0, "prod", bad).expect_err("an unknown unit");
    assert_eq!(planned.to_string(), submitted.to_string());
    assert!(
        planned.to_string().contains("unknown unit 'x'"),
        "{planned}"
    );
    assert!(c.demand(&key(1)).is_none());
}

/// C15's second half: the app's AM, started at the demand's time, sends the same demand over
/// the AM protocol and so asks for its tasks: the demand bound at submission is the AM's from
/// then on (no duplicate refused), keeps its plan, and its gang is delivered whole once
/// ALLOCATING. Submitted at 60 s: planned [660 s, 3,360 s) as in `c15_...`; the AM is asked at
/// 583 s and registers then; the demand goes ALLOCATING at 643 s and the first heartbeat after
/// (n1 at 643 s: 7 GB free beside the AM, 8 GB on the others) places all 4 × 4 GB members.
#[test]
fn c15_the_am_takes_its_apps_demand_over_and_gets_the_gang_at_the_planned_start() {
    let mut rm = config(PROD_ADHOC);
    rm.nm_expiry = weft_types::Duration::from_secs(100_000);
    rm.am_expiry = weft_types::Duration::from_secs(100_000);
    let mut c = RmCore::new(rm, TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    let json = r#"{"DemandID": 1, "ResourceRequest": {"capability": {"memory": 4096, "vCores": 2}, "num-containers": 4},
        "Gang": true, "Start": {"Time": "[NOW+10m, +10m]", "Strategy": "strict"}, "Duration": "45m",
        "DeadLine": {"Time": "[NOW, +60m]", "Strategy": "strict"}}"#;
    let demand: Value = serde_json::from_str(json).expect("test JSON");
    let app = c.new_application(Time(60 * SEC));
    let sub = Submission {
        demand: Some(demand.clone()),
        ..crate::tests::submission("alice", Some("prod"))
    };
    c.submit(Time(60 * SEC), app, sub).expect("submitted");
    drain(&mut c);
    crate::tests::heartbeat(&mut c, 583 * SEC, "n1:1");
    let out = drain(&mut c);
    let launch = crate::tests::launches(&out).pop().expect("the AM at 583 s");
    let token = launch.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(
        Time(583 * SEC),
        launch.attempt,
        &token,
        "amhost",
        4000,
        None,
    )
    .expect("AM registers");
    let allocate = |c: &mut RmCore, t: u64, demands: Vec<AmDemand>| {
        let r = c
            .am_allocate(
                Time(t),
                launch.attempt,
                &token,
                AllocateRequest {
                    demands,
                    ..AllocateRequest::default()
                },
            )
            .expect("allocate");
        drain(c);
        r
    };
    let sent = AmDemand {
        description: demand,
        ..AmDemand::default()
    };
    allocate(&mut c, 583 * SEC, vec![sent]);
    let key = format!("{app}/1");
    assert_eq!(last_of(&c, &key), (Accepted, "planned", 60 * SEC), "kept");
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        crate::tests::heartbeat(&mut c, 642 * SEC, n);
    }
    drain(&mut c);
    assert!(allocate(&mut c, 642 * SEC, Vec::new()).allocated.is_empty());
    crate::tests::heartbeat(&mut c, 643 * SEC, "n1:1");
    drain(&mut c);
    assert_eq!(last_of(&c, &key), (Allocated, "satisfied", 643 * SEC));
    let got = allocate(&mut c, 643 * SEC, Vec::new()).allocated;
    assert_eq!(got.len(), 4, "{got:?}");
    assert!(got.iter().all(|a| a.demand_id == Some(1)));
}
