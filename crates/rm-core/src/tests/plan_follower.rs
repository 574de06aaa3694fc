//! The plan follower through the core: the tick's replanning and archiving with what they
//! persist, and apps submitted with a reservation id. The spec's cluster as in
//! `reservations.rs`: the prod plan holds 3/5 of 4 x 8 GB = 19,662 MB (`root.default` counts).

use weft_plan::{Interpreter, ReservationDefinition, ReservationId, ReservationRequest};

use super::*;

const PROD_ADHOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
</allocations>"#;

/// Fair's default `reservation-window` (the sharing policy's, 24 h): a reservation is archived
/// this long after its end.
const WINDOW_MS: u64 = 86_400_000;

fn cluster() -> RmCore {
    let mut c = RmCore::new(config(PROD_ADHOC), TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

/// A gang of eight 1 GB containers for 100 s, in a window exactly that wide: 8 GB over
/// [10 s, 110 s).
fn eight_gb() -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(10_000),
        deadline: Time(110_000),
        name: "eight".into(),
        priority: 0,
        recurrence: None,
        interpreter: Interpreter::All,
        requests: vec![ReservationRequest {
            capability: Resource::new(1024, 1),
            num_containers: 8,
            concurrency: 8,
            duration: Duration::from_secs(100),
        }],
    }
}

fn reserve(c: &mut RmCore, t: u64) -> ReservationId {
    let id = c.new_reservation();
    c.submit_reservation(Time(t), "alice", "prod", Some(id), &eight_gb())
        .expect("accepted");
    id
}

fn removed(out: &[Output]) -> Vec<String> {
    writes(out)
        .into_iter()
        .filter_map(|w| match w {
            Write::RemoveReservation(id) => Some(id),
            _ => None,
        })
        .collect()
}

fn queue_exists(c: &mut RmCore, name: &str) -> bool {
    c.scheduler_snapshot().queues.iter().any(|q| q.name == name)
}

#[test]
fn the_tick_replans_newest_first_when_capacity_drops_and_persists_the_drop() {
    let mut c = cluster();
    let first = reserve(&mut c, 1_000);
    let second = reserve(&mut c, 2_000);
    drain(&mut c);
    // Half the nodes go: the plan holds 3/5 of 16 GB = 9,830 MB, room for one 8 GB
    // reservation from now on.
    for n in ["n3:1", "n4:1"] {
        c.decommission(Time(4_000), n).expect("decommissioned");
    }
    drain(&mut c);
    c.tick(Time(5_000));
    let out = drain(&mut c);
    assert_eq!(removed(&out), vec![second.to_string()], "the newest goes");
    assert!(c.reservations().find(&second).is_none());
    assert!(c.reservations().find(&first).is_some());
    assert!(stored()
        .reservations
        .iter()
        .all(|r| r.id != second.to_string()));

    // The scheduler follows: at the start only the kept reservation has a queue.
    c.tick(Time(10_000));
    drain(&mut c);
    assert!(queue_exists(&mut c, &format!("root.prod.{first}")));
    assert!(!queue_exists(&mut c, &format!("root.prod.{second}")));
    assert!(queue_exists(&mut c, "root.prod.prod-default"));
}

#[test]
fn an_ended_reservation_is_archived_one_policy_window_after_its_end() {
    let mut c = cluster();
    let id = reserve(&mut c, 1_000);
    drain(&mut c);
    c.tick(Time(110_000 + WINDOW_MS - 1_000));
    assert!(removed(&drain(&mut c)).is_empty(), "kept within the window");
    assert!(c.reservations().find(&id).is_some());
    c.tick(Time(110_000 + WINDOW_MS));
    assert_eq!(removed(&drain(&mut c)), vec![id.to_string()]);
    assert!(c.reservations().find(&id).is_none());
    assert!(stored().reservations.is_empty());
}

#[test]
fn an_app_with_a_reservation_id_runs_in_its_queue_and_moves_to_the_default_at_the_end() {
    let mut c = cluster();
    let id = reserve(&mut c, 1_000);
    drain(&mut c);
    let sub = |c: &mut RmCore, t: u64| {
        let app = c.new_application(Time(t));
        let sub = Submission {
            reservation_id: Some(id.to_string()),
            ..submission("alice", Some("prod"))
        };
        c.submit(Time(t), app, sub).expect("submission taken");
        app
    };

    // Before the start: refused with Hadoop's words, FAILED at once.
    let early = sub(&mut c, 2_000);
    let report = c.app_report(&early).expect("recorded");
    assert_eq!(report.state, AppState::Failed);
    assert!(
        report.diagnostics.contains(&format!(
            "Application {early} submitted to a reservation which is not yet currently active: root.prod.{id}"
        )),
        "{}",
        report.diagnostics
    );

    // At the start its queue exists, and the app runs there.
    c.tick(Time(10_000));
    let app = sub(&mut c, 10_000);
    let leaf = format!("root.prod.{id}");
    assert_eq!(c.app_report(&app).map(|r| r.queue), Some(leaf.clone()));
    drain(&mut c);
    assert_eq!(
        stored()
            .apps
            .iter()
            .find(|a| a.app.app_id == app.seq)
            .and_then(|a| a.app.reservation_id.clone()),
        Some(id.to_string())
    );
    heartbeat(&mut c, 10_000, "n1:1");
    drain(&mut c);

    // At the end (110 s) it moves to prod's default queue, persisted.
    c.tick(Time(110_000));
    let out = drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| (r.queue, r.state)),
        Some(("root.prod.prod-default".to_string(), AppState::Accepted))
    );
    assert!(writes(&out).iter().any(|w| matches!(
        w,
        Write::PutApp(r) if r.app_id == app.seq && r.queue == "root.prod.prod-default"
    )));
    assert!(!queue_exists(&mut c, &leaf));
}

#[test]
fn a_restart_puts_a_reservation_app_back_in_its_queue_or_in_the_default_after_the_end() {
    let mut c = cluster();
    let id = reserve(&mut c, 1_000);
    c.tick(Time(10_000));
    let app = c.new_application(Time(10_000));
    let sub = Submission {
        reservation_id: Some(id.to_string()),
        ..submission("alice", Some("prod"))
    };
    c.submit(Time(10_000), app, sub).expect("submission taken");
    drain(&mut c);

    let back = |t: u64| {
        let c = RmCore::recover(config(PROD_ADHOC), stored(), TS, Time(t)).expect("recovered");
        c.app_report(&app).map(|r| r.queue)
    };
    // While the reservation is active, its queue is made again before the app returns.
    assert_eq!(back(20_000), Some(format!("root.prod.{id}")));
    // After its end: the plan's default queue (Hadoop's failover rule with move-on-expiry).
    assert_eq!(back(200_000), Some("root.prod.prod-default".to_string()));
}

#[test]
fn after_a_restart_the_replanner_waits_for_the_nodes() {
    let mut c = cluster();
    let id = reserve(&mut c, 1_000);
    drain(&mut c);
    // Restarted with no node yet, then one of four: the plan looks empty, then a quarter.
    let mut c = RmCore::recover(config(PROD_ADHOC), stored(), TS, Time(2_000)).expect("recovered");
    c.tick(Time(3_000));
    register(&mut c, 4_000, "n1:1");
    c.tick(Time(5_000));
    assert!(
        removed(&drain(&mut c)).is_empty(),
        "nothing replanned in the wait"
    );
    assert!(c.reservations().find(&id).is_some());
    for n in ["n2:1", "n3:1", "n4:1"] {
        register(&mut c, 6_000, n);
    }
    c.tick(Time(12_000));
    assert!(
        removed(&drain(&mut c)).is_empty(),
        "the whole cluster holds it"
    );
    assert!(c.reservations().find(&id).is_some());
}

/// Under the Capacity Scheduler (`reservations::capacity_cluster`: `root.prod` 75 percent of
/// 4 x 8 GB, reservable, so the plan holds 24 GB): the core's plan reaches the scheduler, the
/// gang reservation's leaf has 8/24 of the plan as capacity and as maximum, the app runs there
/// and moves to `prod-default` at the end.
#[test]
fn under_capacity_an_app_with_a_reservation_runs_in_its_leaf_and_moves_at_the_end() {
    let mut c = super::reservations::capacity_cluster(&[]);
    let id = reserve(&mut c, 1_000);
    drain(&mut c);
    c.tick(Time(10_000));
    let leaf = format!("root.prod.{id}");
    let details = c
        .scheduler()
        .capacity_details()
        .into_iter()
        .find(|q| q.name == leaf)
        .expect("the reservation's leaf at its start");
    // Percent of the plan queue: 8 / 24 = 33.33 (held as f32, as Hadoop holds it).
    assert!(
        (details.capacity - 100.0 / 3.0).abs() < 1e-4,
        "{}",
        details.capacity
    );
    assert!(
        (details.max_capacity - 100.0 / 3.0).abs() < 1e-4,
        "{}",
        details.max_capacity
    );

    let app = c.new_application(Time(10_000));
    let sub = Submission {
        reservation_id: Some(id.to_string()),
        ..submission("alice", Some("prod"))
    };
    c.submit(Time(10_000), app, sub).expect("submission taken");
    assert_eq!(c.app_report(&app).map(|r| r.queue), Some(leaf.clone()));
    drain(&mut c);

    c.tick(Time(110_000));
    drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| r.queue),
        Some("root.prod.prod-default".to_string())
    );
    assert!(!queue_exists(&mut c, &leaf));
    assert!(
        c.scheduler().verify().is_empty(),
        "{:?}",
        c.scheduler().verify()
    );
}
