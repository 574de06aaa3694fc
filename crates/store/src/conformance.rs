//! The contract every [`StateStore`] must meet, written once and run against each backend.
//!
//! A backend provides a [`Harness`] and expands [`conformance_tests!`](crate::conformance_tests)
//! inside a test module, which makes one `#[test]` per case:
//!
//! ```no_run
//! mod conformance {
//!     weft_store::conformance_tests!(weft_store::conformance::MemoryHarness::default());
//! }
//! # fn main() {}
//! ```

use std::collections::{BTreeMap, BTreeSet};

use crate::{
    AllocationRecord, AppState, ApplicationRecord, AttemptRecord, AttemptState, ClusterMeta,
    DemandContainerRecord, DemandPlacementRecord, DemandPlanRecord, DemandRecord, DemandState,
    DemandTransitionRecord, FinalStatus, GangRecord, LaunchContext, LocalResource,
    LocalResourceKind, MemoryStore, NodeLabelsRecord, RecoveredState, ReservationDefinitionRecord,
    ReservationRecord, ReservationRequestRecord, ResourceRecord, StateStore, StoreError, Write,
};

/// Opens the store under test.
pub trait Harness {
    /// The backend under test.
    type Store: StateStore;

    /// Opens the store. The first call gives an empty store; a later call, made after every
    /// earlier handle was dropped, must give a handle on the same contents (an RM restart).
    fn open(&mut self) -> Self::Store;
}

/// [`Harness`] for [`MemoryStore`]: a "restart" is a clone sharing the contents.
#[derive(Debug, Default)]
pub struct MemoryHarness {
    store: MemoryStore,
}

impl Harness for MemoryHarness {
    type Store = MemoryStore;

    fn open(&mut self) -> MemoryStore {
        self.store.clone()
    }
}

/// An application with every field set to something other than its default.
pub fn sample_app(app_id: u64) -> ApplicationRecord {
    ApplicationRecord {
        app_id,
        cluster_timestamp: 1_700_000_000_000,
        name: format!("app-{app_id} «distributed shell»"),
        user: "alice".to_owned(),
        requested_queue: "default".to_owned(),
        queue: "root.alice".to_owned(),
        application_type: "YARN".to_owned(),
        priority: 3,
        max_attempts: 2,
        submit_time_ms: 1_700_000_000_100 + app_id,
        start_time_ms: 1_700_000_000_200 + app_id,
        finish_time_ms: None,
        am_launch: LaunchContext {
            commands: vec!["weft dshell-am --num_containers 2 1>out 2>err".to_owned()],
            environment: BTreeMap::from([
                ("CLASSPATH".to_owned(), "./*".to_owned()),
                ("DSHELL_CMD".to_owned(), "echo 'hi' \"there\"".to_owned()),
            ]),
            local_resources: BTreeMap::from([(
                "script.sh".to_owned(),
                LocalResource {
                    url: "file:///tmp/script.sh".to_owned(),
                    kind: LocalResourceKind::File,
                },
            )]),
            tokens: Vec::new(),
            hadoop_quoting: false,
        },
        am_resource: ResourceRecord {
            memory_mb: 1024,
            vcores: 1,
        },
        state: AppState::Accepted,
        final_status: FinalStatus::Undefined,
        diagnostics: String::new(),
        tags: BTreeSet::from(["nightly".to_owned(), "team-a".to_owned()]),
        memory_mb_ms: 3_072_000,
        vcore_ms: 3_000,
        reservation_id: Some("reservation_1_0001".into()),
        weft_demand: Some(r#"{"DemandID":1}"#.into()),
    }
}

/// An attempt of `app_id` with every field set.
pub fn sample_attempt(app_id: u64, attempt: u32) -> AttemptRecord {
    AttemptRecord {
        app_id,
        attempt,
        am_container_id: Some(format!(
            "container_1700000000000_{app_id:04}_{attempt:02}_000001"
        )),
        am_node_id: Some("host-1:8041".to_owned()),
        state: AttemptState::Running,
        final_status: FinalStatus::Undefined,
        diagnostics: String::new(),
        start_time_ms: 1_700_000_001_000 + u64::from(attempt),
        finish_time_ms: None,
        am_exit_status: None,
        am_token: format!("token-{app_id}-{attempt}"),
        tracking_url: Some("http://host-1:9999/".to_owned()),
        preempted_memory_mb: 3072,
        preempted_vcores: 3,
        preempted_am_containers: 0,
        preempted_non_am_containers: 3,
        preempted_memory_mb_ms: 9_216_000,
        preempted_vcore_ms: 9_000,
        gangs: vec![GangRecord {
            gang: 3,
            priority: 2,
            resource: ResourceRecord {
                memory_mb: 2048,
                vcores: 1,
            },
            other_resources: vec![0, 2],
            size: 4,
            hold_timeout_ms: Some(900_000),
            hard: false,
        }],
    }
}

fn load(store: &impl StateStore) -> RecoveredState {
    match store.load() {
        Ok(state) => state,
        Err(e) => panic!("load failed: {e}"),
    }
}

fn ok(result: Result<(), StoreError>) {
    if let Err(e) = result {
        panic!("write failed: {e}");
    }
}

fn app_ids(state: &RecoveredState) -> Vec<u64> {
    state.apps.iter().map(|a| a.app.app_id).collect()
}

fn attempt_numbers(state: &RecoveredState, app_id: u64) -> Vec<u32> {
    state
        .apps
        .iter()
        .find(|a| a.app.app_id == app_id)
        .map(|a| a.attempts.iter().map(|t| t.attempt).collect())
        .unwrap_or_default()
}

/// Drops `store`, reopens, and checks the reopened store holds exactly `expected`.
fn assert_survives_reopen<H: Harness>(h: &mut H, store: H::Store, expected: &RecoveredState) {
    drop(store);
    let reopened = h.open();
    assert_eq!(
        &load(&reopened),
        expected,
        "contents changed across a reopen"
    );
}

/// A new store has no meta and no applications.
pub fn empty_store_loads_empty<H: Harness>(h: &mut H) {
    let store = h.open();
    assert_eq!(load(&store), RecoveredState::default());
    assert_survives_reopen(h, store, &RecoveredState::default());
}

/// Cluster meta is stored, replaced by later writes, and kept across a reopen.
pub fn meta_is_stored_and_replaced<H: Harness>(h: &mut H) {
    let store = h.open();
    let first = ClusterMeta {
        cluster_timestamp: 1_700_000_000_000,
        next_app_seq: 1,
        epoch: 0,
    };
    ok(store.store_meta(&first));
    assert_eq!(load(&store).meta, Some(first.clone()));
    let second = ClusterMeta {
        next_app_seq: 42,
        epoch: 1,
        ..first
    };
    ok(store.store_meta(&second));
    let state = load(&store);
    assert_eq!(state.meta, Some(second));
    assert!(state.apps.is_empty());
    assert_survives_reopen(h, store, &state);
}

/// The node-label registry's admin part is stored, replaced whole by later writes, and kept
/// across a reopen; it leaves the meta and applications alone.
pub fn node_labels_are_stored_and_replaced<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(1)));
    let first = NodeLabelsRecord {
        labels: vec![("gpu".to_owned(), true), ("ssd".to_owned(), false)],
        mappings: vec![
            ("host-1".to_owned(), "gpu".to_owned()),
            ("host-2:8041".to_owned(), "gpu".to_owned()),
        ],
    };
    ok(store.apply(&[Write::NodeLabels(first.clone())]));
    assert_eq!(load(&store).node_labels, first);
    let second = NodeLabelsRecord {
        labels: vec![("gpu".to_owned(), true)],
        mappings: Vec::new(),
    };
    ok(store.apply(&[Write::NodeLabels(second.clone())]));
    let state = load(&store);
    assert_eq!(state.node_labels, second);
    assert_eq!(app_ids(&state), vec![1]);
    assert_survives_reopen(h, store, &state);
}

fn sample_reservation(seq: u64) -> ReservationRecord {
    let gb = ResourceRecord {
        memory_mb: 1024,
        vcores: 1,
    };
    ReservationRecord {
        id: format!("reservation_7_{seq:04}"),
        queue: "root.prod".to_owned(),
        user: "alice".to_owned(),
        acceptance_time: 5,
        start: 60_000,
        end: 600_000,
        definition: ReservationDefinitionRecord {
            arrival: 60_000,
            deadline: 600_000,
            name: format!("r{seq}"),
            priority: 0,
            recurrence_ms: None,
            interpreter: 1,
            requests: vec![ReservationRequestRecord {
                capability: gb,
                num_containers: 10,
                concurrency: 1,
                duration_ms: 60_000,
            }],
        },
        allocation: vec![AllocationRecord {
            start: 60_000,
            end: 120_000,
            resource: ResourceRecord {
                memory_mb: 10_240,
                vcores: 10,
            },
        }],
    }
}

/// Reservations come back in id order with every field, a put replaces, a remove removes
/// (an unknown id is no error), the sequence number is kept, and apps are left alone.
pub fn reservations_are_stored_replaced_and_removed<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(1)));
    assert_eq!(load(&store).next_reservation_seq, 0);
    ok(store.apply(&[
        Write::PutReservation(sample_reservation(2)),
        Write::PutReservation(sample_reservation(1)),
        Write::ReservationSequence(3),
    ]));
    let mut updated = sample_reservation(1);
    updated.user = "bob".to_owned();
    ok(store.apply(&[
        Write::PutReservation(updated.clone()),
        Write::RemoveReservation(sample_reservation(2).id),
        Write::RemoveReservation("reservation_7_0099".to_owned()),
    ]));
    let state = load(&store);
    assert_eq!(state.reservations, vec![updated]);
    assert_eq!(state.next_reservation_seq, 3);
    assert_eq!(app_ids(&state), vec![1]);
    assert_survives_reopen(h, store, &state);
}

/// Applications come back in id order whatever the insertion order, with every field intact;
/// a put with an existing id replaces the record (a queue move, a state change).
pub fn put_app_inserts_and_replaces<H: Harness>(h: &mut H) {
    let store = h.open();
    for id in [3, 1, 2, 10] {
        ok(store.put_app(&sample_app(id)));
    }
    assert_eq!(app_ids(&load(&store)), vec![1, 2, 3, 10]);

    let mut moved = sample_app(2);
    moved.queue = "root.bob".to_owned();
    moved.state = AppState::Running;
    ok(store.put_app(&moved));
    let state = load(&store);
    assert_eq!(app_ids(&state), vec![1, 2, 3, 10]);
    assert_eq!(state.apps[1].app, moved);
    assert_eq!(state.apps[0].app, sample_app(1));
    assert_eq!(state.apps[3].app, sample_app(10));
    assert_survives_reopen(h, store, &state);
}

/// Final states with their diagnostics and times round-trip.
pub fn final_states_round_trip<H: Harness>(h: &mut H) {
    let store = h.open();
    let mut app = sample_app(1);
    app.state = AppState::Failed;
    app.final_status = FinalStatus::Failed;
    app.finish_time_ms = Some(1_700_000_009_999);
    app.diagnostics = "AM container exited with code 1\nsecond line".to_owned();
    ok(store.put_app(&app));
    let mut attempt = sample_attempt(1, 2);
    attempt.state = AttemptState::Failed;
    attempt.final_status = FinalStatus::Failed;
    attempt.am_exit_status = Some(-104);
    attempt.finish_time_ms = Some(1_700_000_009_000);
    attempt.tracking_url = None;
    attempt.diagnostics = "killed: memory 1.2 GiB over limit 1 GiB".to_owned();
    ok(store.put_attempt(&attempt));
    let state = load(&store);
    assert_eq!(state.apps.len(), 1);
    assert_eq!(state.apps[0].app, app);
    assert_eq!(state.apps[0].attempts, vec![attempt]);
    assert_survives_reopen(h, store, &state);
}

/// Attempts are returned under their own application, in attempt order, and replaced by a
/// put of the same (app, attempt).
pub fn attempts_attach_to_their_app<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(1)));
    ok(store.put_app(&sample_app(2)));
    ok(store.put_app(&sample_app(3)));
    for (app, attempt) in [(2, 3), (1, 2), (2, 1), (1, 1)] {
        ok(store.put_attempt(&sample_attempt(app, attempt)));
    }
    let mut finished = sample_attempt(1, 2);
    finished.state = AttemptState::Finished;
    finished.final_status = FinalStatus::Succeeded;
    ok(store.put_attempt(&finished));

    let state = load(&store);
    assert_eq!(attempt_numbers(&state, 1), vec![1, 2]);
    assert_eq!(attempt_numbers(&state, 2), vec![1, 3]);
    assert_eq!(attempt_numbers(&state, 3), Vec::<u32>::new());
    assert_eq!(state.apps[0].attempts[1], finished);
    for app in &state.apps {
        assert!(app.attempts.iter().all(|t| t.app_id == app.app.app_id));
    }
    assert_survives_reopen(h, store, &state);
}

/// Replacing an application record keeps its attempts.
pub fn replacing_app_keeps_attempts<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(7)));
    ok(store.put_attempt(&sample_attempt(7, 1)));
    let mut running = sample_app(7);
    running.state = AppState::Running;
    ok(store.put_app(&running));
    let state = load(&store);
    assert_eq!(state.apps[0].app, running);
    assert_eq!(state.apps[0].attempts, vec![sample_attempt(7, 1)]);
    assert_survives_reopen(h, store, &state);
}

/// An attempt for an application that is not stored is refused and changes nothing.
pub fn attempt_for_unknown_app_is_rejected<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(1)));
    let before = load(&store);
    match store.put_attempt(&sample_attempt(9, 1)) {
        Err(StoreError::UnknownApp {
            app_id: 9,
            attempt: 1,
        }) => {}
        other => panic!("expected UnknownApp for app 9 attempt 1, got {other:?}"),
    }
    assert_eq!(load(&store), before);
    // A put of the app afterwards must not resurrect the refused attempt.
    ok(store.put_app(&sample_app(9)));
    assert_eq!(attempt_numbers(&load(&store), 9), Vec::<u32>::new());
}

/// Removing an application removes its attempts and nothing else; removing an unknown id
/// succeeds; a later put of the same id starts without attempts.
pub fn remove_app_removes_its_attempts<H: Harness>(h: &mut H) {
    let store = h.open();
    for id in 1..=3 {
        ok(store.put_app(&sample_app(id)));
        ok(store.put_attempt(&sample_attempt(id, 1)));
        ok(store.put_attempt(&sample_attempt(id, 2)));
    }
    ok(store.remove_app(2));
    let state = load(&store);
    assert_eq!(app_ids(&state), vec![1, 3]);
    assert_eq!(attempt_numbers(&state, 1), vec![1, 2]);
    assert_eq!(attempt_numbers(&state, 3), vec![1, 2]);

    ok(store.remove_app(2));
    ok(store.remove_app(99));
    assert_eq!(load(&store), state);

    ok(store.put_app(&sample_app(2)));
    let state = load(&store);
    assert_eq!(app_ids(&state), vec![1, 2, 3]);
    assert_eq!(attempt_numbers(&state, 2), Vec::<u32>::new());
    assert_survives_reopen(h, store, &state);
}

/// A batch is applied in order and atomically: a failing write rejects the whole batch.
pub fn batches_are_ordered_and_atomic<H: Harness>(h: &mut H) {
    let store = h.open();
    let meta = ClusterMeta {
        cluster_timestamp: 5,
        next_app_seq: 6,
        epoch: 2,
    };
    let mut v2 = sample_app(5);
    v2.queue = "root.moved".to_owned();
    ok(store.apply(&[
        Write::PutApp(sample_app(5)),
        Write::PutAttempt(sample_attempt(5, 1)),
        Write::PutApp(v2.clone()),
        Write::Meta(meta.clone()),
        Write::PutApp(sample_app(8)),
        Write::PutAttempt(sample_attempt(8, 1)),
        Write::RemoveApp(8),
        Write::PutApp(sample_app(8)),
    ]));
    let state = load(&store);
    assert_eq!(state.meta, Some(meta.clone()));
    assert_eq!(app_ids(&state), vec![5, 8]);
    assert_eq!(state.apps[0].app, v2);
    assert_eq!(attempt_numbers(&state, 5), vec![1]);
    assert_eq!(attempt_numbers(&state, 8), Vec::<u32>::new());

    let refused = store.apply(&[
        Write::PutApp(sample_app(6)),
        Write::Meta(ClusterMeta {
            next_app_seq: 100,
            ..meta.clone()
        }),
        Write::RemoveApp(5),
        Write::PutAttempt(sample_attempt(5, 2)),
    ]);
    assert!(
        matches!(refused, Err(StoreError::UnknownApp { app_id: 5, .. })),
        "an attempt after its app's removal in the same batch must be refused, got {refused:?}"
    );
    assert_eq!(load(&store), state, "a refused batch must change nothing");

    ok(store.apply(&[]));
    assert_survives_reopen(h, store, &state);
}

/// Everything written before a reopen is there after it, and the reopened store takes writes.
pub fn reopen_keeps_everything_and_accepts_writes<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.store_meta(&ClusterMeta {
        cluster_timestamp: 1_700_000_000_000,
        next_app_seq: 51,
        epoch: 0,
    }));
    for id in 1..=50 {
        ok(store.put_app(&sample_app(id)));
        for attempt in 1..=(id % 3) as u32 {
            ok(store.put_attempt(&sample_attempt(id, attempt)));
        }
    }
    let state = load(&store);
    assert_eq!(state.apps.len(), 50);
    drop(store);

    let store = h.open();
    assert_eq!(load(&store), state);
    ok(store.remove_app(1));
    ok(store.put_attempt(&sample_attempt(2, 9)));
    let state = load(&store);
    assert_eq!(state.apps.len(), 49);
    assert_eq!(attempt_numbers(&state, 2), vec![1, 2, 9]);
    assert_survives_reopen(h, store, &state);
}

/// A demand with every field set to something other than its default.
pub fn sample_demand(key: &str) -> DemandRecord {
    DemandRecord {
        key: key.to_owned(),
        user: "alice".to_owned(),
        queue: "root.prod".to_owned(),
        spec: r#"{"DemandID":7,"ResourceRequest":{"capability":{"memory":1024,"vCores":1},"num-containers":2}}"#
            .to_owned(),
        accepted_at_ms: 1_700_000_000_000,
        timeline: vec![
            DemandTransitionRecord {
                state: DemandState::New,
                reason: "submitted".to_owned(),
                detail: String::new(),
                at_ms: 1_700_000_000_000,
            },
            DemandTransitionRecord {
                state: DemandState::Allocating,
                reason: "eligible".to_owned(),
                detail: "its order is met".to_owned(),
                at_ms: 1_700_000_001_000,
            },
        ],
        first_allocation_ms: Some(1_700_000_002_000),
        missed_opportunities: 3,
        allocated: 2,
        claimed: 1,
        completed: 1,
        am_asks: Some(DemandPlacementRecord {
            hosts: vec!["host1".to_owned()],
            racks: vec!["/rack1".to_owned()],
        }),
        plan: Some(DemandPlanRecord {
            reservation_id: "reservation_1700000000000_0003".to_owned(),
            queue: "root.prod".to_owned(),
            start_ms: 1_700_000_600_000,
            end_ms: 1_700_002_400_000,
        }),
        containers: vec![DemandContainerRecord {
            attempt: 1,
            n: 2,
            claimed: true,
        }],
    }
}

/// Demands come back in key order with every field intact, are replaced by key, removed by
/// key (an unknown key is no error), leave the applications alone and survive a reopen.
pub fn demands_are_stored_replaced_and_removed<H: Harness>(h: &mut H) {
    let store = h.open();
    ok(store.put_app(&sample_app(1)));
    let keys = ["~bob/2", "application_1_0001/7", "application_1_0001/10"];
    ok(store.apply(&keys.map(|k| Write::PutDemand(sample_demand(k)))));
    let state = load(&store);
    let stored: Vec<&str> = state.demands.iter().map(|d| d.key.as_str()).collect();
    assert_eq!(
        stored,
        ["application_1_0001/10", "application_1_0001/7", "~bob/2"]
    );
    assert_eq!(state.demands[1], sample_demand("application_1_0001/7"));
    let mut finished = sample_demand("~bob/2");
    finished.timeline.push(DemandTransitionRecord {
        state: DemandState::Finished,
        reason: "ok".to_owned(),
        detail: String::new(),
        at_ms: 1_700_000_009_000,
    });
    ok(store.apply(&[
        Write::PutDemand(finished.clone()),
        Write::RemoveDemand("application_1_0001/10".to_owned()),
        Write::RemoveDemand("never-stored".to_owned()),
    ]));
    let state = load(&store);
    assert_eq!(state.demands.len(), 2);
    assert_eq!(state.demands[1], finished);
    assert_eq!(app_ids(&state), vec![1]);
    assert_survives_reopen(h, store, &state);
}

/// Expands to one `#[test]` per conformance case; `$harness` is evaluated afresh for each.
#[macro_export]
macro_rules! conformance_tests {
    ($harness:expr) => {
        $crate::conformance_tests!(@cases $harness;
            empty_store_loads_empty,
            meta_is_stored_and_replaced,
            node_labels_are_stored_and_replaced,
            reservations_are_stored_replaced_and_removed,
            demands_are_stored_replaced_and_removed,
            put_app_inserts_and_replaces,
            final_states_round_trip,
            attempts_attach_to_their_app,
            replacing_app_keeps_attempts,
            attempt_for_unknown_app_is_rejected,
            remove_app_removes_its_attempts,
            batches_are_ordered_and_atomic,
            reopen_keeps_everything_and_accepts_writes
        );
    };
    (@cases $harness:expr; $($case:ident),*) => {
        $(
            #[test]
            fn $case() {
                let mut harness = $harness;
                $crate::conformance::$case(&mut harness);
            }
        )*
    };
}
