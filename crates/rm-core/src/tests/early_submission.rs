//! `weft.reservation.accept-early-submission` through the core (spec §5 B3, second half).
//! The prod plan of `plan_follower.rs`'s cluster (4 × 8 GB, prod weight 3 of 5) holds a
//! reservation of 8 × 1 GB over [60 s, 160 s) (arrival and deadline on the 1 s plan step).
//! The lead is max(plan step 1 s, waitTimeBeforeKill 15 s + 2 × heartbeat 1 s) = 17 s, so a
//! held app's AM is asked at 60 − 17 = 43 s.

use weft_plan::{Interpreter, ReservationDefinition, ReservationId, ReservationRequest};

use super::*;

const PROD_ADHOC: &str = r#"<allocations>
  <queue name="prod"><weight>3</weight><reservation/></queue>
  <queue name="adhoc"><weight>1</weight></queue>
</allocations>"#;
const DEFAULT_LEAF: &str = "root.prod.prod-default";

fn rm_config(accept_early: bool) -> RmConfig {
    let mut rm = config(PROD_ADHOC);
    rm.scheduler
        .properties_mut()
        .reservation_accept_early_submission = accept_early;
    // Only n1 heartbeats in these tests; the others must not be lost meanwhile.
    rm.nm_expiry = Duration::from_secs(100_000);
    rm.am_expiry = Duration::from_secs(100_000);
    rm
}

fn cluster(accept_early: bool) -> RmCore {
    let mut c = RmCore::new(rm_config(accept_early), TS, Time(0));
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

fn eight_gb_from_60s() -> ReservationDefinition {
    ReservationDefinition {
        arrival: Time(60_000),
        deadline: Time(160_000),
        name: "later".into(),
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

fn reserve(c: &mut RmCore) -> ReservationId {
    let id = c.new_reservation();
    c.submit_reservation(Time(1_000), "alice", "prod", Some(id), &eight_gb_from_60s())
        .expect("accepted");
    drain(c);
    id
}

fn submit_into(c: &mut RmCore, t: u64, id: ReservationId) -> ApplicationId {
    let app = c.new_application(Time(t));
    let sub = Submission {
        reservation_id: Some(id.to_string()),
        ..submission("alice", Some("prod"))
    };
    c.submit(Time(t), app, sub).expect("submission taken");
    drain(c);
    app
}

fn waiting(id: ReservationId, asked: &str) -> String {
    format!("waiting for its reservation {id} to start at 60000 ms (its AM {asked} at 43000 ms)")
}

fn stored_queue(app: ApplicationId) -> Option<String> {
    stored()
        .apps
        .iter()
        .find(|a| a.app.app_id == app.seq)
        .map(|a| a.app.queue.clone())
}

#[test]
fn off_an_early_submission_is_rejected_as_in_hadoop() {
    let mut c = cluster(false);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(report.state, AppState::Failed);
    assert!(
        report.diagnostics.contains(&format!(
            "Application {app} submitted to a reservation which is not yet currently active: root.prod.{id}"
        )),
        "{}",
        report.diagnostics
    );
}

#[test]
fn on_the_app_waits_its_am_is_asked_one_lead_early_and_it_enters_the_leaf_at_the_start() {
    let mut c = cluster(true);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(
        (report.state, report.queue.as_str()),
        (AppState::Accepted, DEFAULT_LEAF)
    );
    assert_eq!(report.diagnostics, waiting(id, "is asked"));

    heartbeat(&mut c, 42_000, "n1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "no AM before 43 s");

    heartbeat(&mut c, 43_000, "n1:1");
    let launched = launches(&drain(&mut c));
    assert_eq!(launched.len(), 1, "the AM is allocated at 43 s");
    assert_eq!(launched[0].attempt.app, app);
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(report.queue, DEFAULT_LEAF, "the leaf opens only at 60 s");
    assert_eq!(report.diagnostics, waiting(id, "was asked"));

    c.tick(Time(59_000));
    drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| r.queue).as_deref(),
        Some(DEFAULT_LEAF)
    );

    c.tick(Time(60_000));
    drain(&mut c);
    let leaf = format!("root.prod.{id}");
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(
        (report.queue.as_str(), report.diagnostics.as_str()),
        (leaf.as_str(), "")
    );
    assert_eq!(stored_queue(app), Some(leaf));
}

#[test]
fn a_reservation_deleted_while_its_app_waits_fails_the_app() {
    let mut c = cluster(true);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    c.delete_reservation(Time(5_000), "alice", Some(id))
        .expect("deleted");
    c.tick(Time(5_000));
    drain(&mut c);
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(report.state, AppState::Failed);
    assert_eq!(
        report.diagnostics,
        format!("Application {app} was waiting for reservation {id}, which was deleted before it started")
    );
}

#[test]
fn an_unknown_reservation_is_still_rejected_when_on() {
    let mut c = cluster(true);
    let _ = reserve(&mut c);
    let unknown = ReservationId {
        cluster_timestamp: TS,
        sequence: 99,
    };
    let app = submit_into(&mut c, 2_000, unknown);
    assert_eq!(c.app_report(&app).map(|r| r.state), Some(AppState::Failed));
}

#[test]
fn a_restart_keeps_the_app_waiting() {
    let mut c = cluster(true);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    drop(c);

    let mut c = RmCore::recover(rm_config(true), stored(), TS, Time(20_000)).expect("recovered");
    for n in ["n1:1", "n2:1", "n3:1", "n4:1"] {
        register(&mut c, 20_000, n);
    }
    drain(&mut c);
    let report = c.app_report(&app).expect("recovered");
    assert_eq!(
        (report.state, report.queue.as_str()),
        (AppState::Accepted, DEFAULT_LEAF)
    );
    assert_eq!(report.diagnostics, waiting(id, "is asked"));
    heartbeat(&mut c, 42_000, "n1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "no AM before 43 s");
    heartbeat(&mut c, 43_000, "n1:1");
    assert_eq!(launches(&drain(&mut c)).len(), 1);
    c.tick(Time(60_000));
    drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| r.queue),
        Some(format!("root.prod.{id}"))
    );
}

/// Restarted at 50 s, after its AM was allocated at 43 s: the NM reports the AM again, so the
/// attempt keeps it (no second AM), and the app still enters the leaf at 60 s.
#[test]
fn a_restart_after_the_am_started_keeps_the_am_and_still_enters_the_leaf() {
    let mut c = cluster(true);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    heartbeat(&mut c, 43_000, "n1:1");
    let launched = launches(&drain(&mut c));
    assert_eq!(launched.len(), 1);
    let am = launched[0].container;
    drop(c);

    let mut c = RmCore::recover(rm_config(true), stored(), TS, Time(50_000)).expect("recovered");
    c.node_register(
        Time(50_000),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "n1:1".into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: vec![status(am, NmContainerState::Running, 0)],
            secret: String::new(),
        },
    )
    .expect("registered");
    for n in ["n2:1", "n3:1", "n4:1"] {
        register(&mut c, 50_000, n);
    }
    drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| r.diagnostics),
        Some(waiting(id, "was asked"))
    );
    heartbeat(&mut c, 60_000, "n1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "the AM is kept");
    let report = c.app_report(&app).expect("recovered");
    assert_eq!(report.queue, format!("root.prod.{id}"));
    assert_eq!(report.current_attempt.map(|a| a.id.attempt), Some(1));
}

/// The same under the Capacity Scheduler (`prod` reservable at 75%): the app waits in
/// `root.prod.prod-default`, its AM comes at 43 s and it is in the leaf at 60 s.
#[test]
fn under_capacity_the_app_waits_and_enters_the_leaf_at_the_start() {
    let mut c = super::reservations::capacity_cluster(&[]);
    c.config
        .scheduler
        .properties_mut()
        .reservation_accept_early_submission = true;
    c.config.nm_expiry = Duration::from_secs(100_000);
    c.config.am_expiry = Duration::from_secs(100_000);
    let id = reserve(&mut c);
    let app = submit_into(&mut c, 2_000, id);
    let report = c.app_report(&app).expect("recorded");
    assert_eq!(
        (report.state, report.queue.as_str(), report.diagnostics),
        (AppState::Accepted, DEFAULT_LEAF, waiting(id, "is asked"))
    );
    heartbeat(&mut c, 42_000, "n1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "no AM before 43 s");
    heartbeat(&mut c, 43_000, "n1:1");
    assert_eq!(launches(&drain(&mut c)).len(), 1);
    c.tick(Time(60_000));
    drain(&mut c);
    assert_eq!(
        c.app_report(&app).map(|r| r.queue),
        Some(format!("root.prod.{id}"))
    );
    assert!(
        c.scheduler().verify().is_empty(),
        "{:?}",
        c.scheduler().verify()
    );
}
