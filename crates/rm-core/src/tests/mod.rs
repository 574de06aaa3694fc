//! Unit tests of the RM core, with explicit times.

mod am;
mod apps;
mod capacity;
mod capacity_labels;
mod capacity_preemption;
mod early_submission;
mod liveness;
mod node_labels;
mod nodes;
mod plan_follower;
mod preemption;
mod recovery;
pub(crate) mod reservations;
mod tokens;

use weft_config::alloc_file::parse_allocations;
use weft_sched::SchedulerConfig;
use weft_store::{LaunchContext, Write};
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::{Duration, Resource, ResourceTypes, Time};

use crate::*;

pub(crate) const TS: u64 = 1_700_000_000_000;
pub(crate) const NM_EXPIRY: u64 = 10_000;
pub(crate) const AM_EXPIRY: u64 = 5_000;

pub(crate) fn config(xml: &str) -> RmConfig {
    let (allocations, _) = parse_allocations(xml, &ResourceTypes::default()).expect("valid xml");
    // The scheduler only serves demand seen by an update; tests update on every tick.
    let properties = weft_config::SchedulerProperties {
        update_interval_ms: 0,
        ..Default::default()
    };
    let mut c = RmConfig::new(SchedulerConfig::fair(allocations, properties));
    c.nm_expiry = Duration::from_millis(NM_EXPIRY);
    c.am_expiry = Duration::from_millis(AM_EXPIRY);
    c.scheduler_address = "rm:8030".into();
    c.token_secret = 0x5eed;
    c
}

pub(crate) fn core() -> RmCore {
    let mut c = RmCore::new(config("<allocations/>"), TS, Time(0));
    drain(&mut c);
    c
}

thread_local! {
    /// Every write a test's cores emitted, applied in order (each test runs on its own
    /// thread): checks the writes are valid for a real store and lets tests restart from it.
    static STORE: weft_store::MemoryStore = weft_store::MemoryStore::new();
}

/// Drains a core's outputs, applying its writes to the test's store.
pub(crate) fn drain(c: &mut RmCore) -> Vec<Output> {
    let out: Vec<Output> = std::iter::from_fn(|| c.poll_output()).collect();
    STORE.with(|s| {
        for o in &out {
            if let Output::Persist(w) = o {
                weft_store::StateStore::apply(s, w).expect("a valid store write");
            }
        }
    });
    out
}

/// Empties the test's store of applications, demands and reservations (a test that runs a
/// scenario twice on one thread starts each run from an empty store).
pub(crate) fn forget_stored() {
    let state = stored();
    let mut writes: Vec<Write> = state
        .apps
        .iter()
        .map(|a| Write::RemoveApp(a.app.app_id))
        .collect();
    writes.extend(
        state
            .demands
            .into_iter()
            .map(|d| Write::RemoveDemand(d.key)),
    );
    writes.extend(
        state
            .reservations
            .into_iter()
            .map(|r| Write::RemoveReservation(r.id)),
    );
    STORE.with(|s| weft_store::StateStore::apply(s, &writes).expect("removals apply"));
}

/// What the test's store holds now.
pub(crate) fn stored() -> weft_store::RecoveredState {
    STORE.with(|s| weft_store::StateStore::load(s).expect("load"))
}

pub(crate) fn writes(out: &[Output]) -> Vec<Write> {
    out.iter()
        .filter_map(|o| match o {
            Output::Persist(w) => Some(w.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

pub(crate) fn launches(out: &[Output]) -> Vec<AmLaunch> {
    out.iter()
        .filter_map(|o| match o {
            Output::LaunchAm(l) => Some((**l).clone()),
            _ => None,
        })
        .collect()
}

/// Containers the nodes' next heartbeat replies stop (`containers_to_cleanup`), sorted: how
/// the RM stops every container but an AM container (which [`stops`] sees as well).
pub(crate) fn pending_stops(c: &RmCore) -> Vec<ContainerId> {
    let mut all: Vec<ContainerId> = c
        .nodes
        .values()
        .flat_map(|n| n.to_stop.iter().copied())
        .collect();
    all.sort();
    all
}

/// The containers stopped through their NMs at once (StopContainers calls: AM containers).
pub(crate) fn stops(out: &[Output]) -> Vec<ContainerId> {
    out.iter()
        .filter_map(|o| match o {
            Output::StopContainer { container, .. } => Some(*container),
            _ => None,
        })
        .collect()
}

pub(crate) fn submission(user: &str, queue: Option<&str>) -> Submission {
    Submission {
        name: "test".into(),
        user: user.into(),
        queue: queue.map(str::to_string),
        application_type: "YARN".into(),
        am_resource: Resource::new(1024, 1),
        launch: LaunchContext {
            commands: vec!["run-am".into()],
            ..LaunchContext::default()
        },
        ..Submission::default()
    }
}

pub(crate) fn submit(c: &mut RmCore, t: u64) -> ApplicationId {
    let id = c.new_application(Time(t));
    c.submit(Time(t), id, submission("alice", None))
        .expect("submission accepted");
    id
}

/// Registers `node` (again, as its own NM: with its secret if it holds one).
pub(crate) fn register(c: &mut RmCore, t: u64, node: &str) {
    let secret = c.node_secret(node).unwrap_or_default();
    c.node_register(
        Time(t),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: node.into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: Vec::new(),
            secret,
        },
    )
    .expect("registered");
}

/// A node heartbeat after a tick (so the scheduler's update has seen every ask).
pub(crate) fn heartbeat(c: &mut RmCore, t: u64, node: &str) -> HeartbeatReply {
    c.tick(Time(t));
    let secret = c.node_secret(node).unwrap_or_default();
    c.node_heartbeat(
        Time(t),
        node,
        NodeStatus {
            healthy: true,
            secret,
            ..NodeStatus::default()
        },
    )
    .expect("heartbeat")
}

pub(crate) fn status(c: ContainerId, state: NmContainerState, exit: i32) -> NmContainerStatus {
    NmContainerStatus {
        container: c,
        state,
        exit_status: exit,
        diagnostics: if state == NmContainerState::Complete {
            format!("exited with {exit}")
        } else {
            String::new()
        },
        resource: Resource::new(1024, 1),
    }
}

pub(crate) fn report(
    c: &mut RmCore,
    t: u64,
    node: &str,
    s: Vec<NmContainerStatus>,
) -> HeartbeatReply {
    c.tick(Time(t));
    let secret = c.node_secret(node).unwrap_or_default();
    c.node_heartbeat(
        Time(t),
        node,
        NodeStatus {
            healthy: true,
            health_report: String::new(),
            containers: s,
            last_key_id: None,
            secret,
            running_containers: None,
        },
    )
    .expect("heartbeat")
}

/// One app with its AM launched on `node` and registered: (app, attempt, token, AM container).
pub(crate) fn running_app(
    c: &mut RmCore,
    t: u64,
    node: &str,
) -> (ApplicationId, AttemptId, String, ContainerId) {
    let app = submit(c, t);
    drain(c);
    heartbeat(c, t, node);
    let out = drain(c);
    let l = launches(&out).pop().expect("AM launched");
    let token = l.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(t), l.attempt, &token, "amhost", 4000, None)
        .expect("AM registers");
    (app, l.attempt, token, l.container)
}

pub(crate) fn ask(n: u32) -> AllocateRequest {
    AllocateRequest {
        asks: vec![ResourceAsk {
            priority: 1,
            resource: Resource::new(1024, 1),
            count: n,
            hosts: Vec::new(),
            racks: Vec::new(),
            relax_locality: true,
        }],
        ..AllocateRequest::default()
    }
}
