//! Capacity preemption behind the RM core: the proportional policy's warning reaches the AM's
//! allocate reply (the strict contract) and its kill, `max_wait_before_kill` later, stops the
//! container on its NM and reports exit -102 to the AM, through the same path as the Fair
//! Scheduler's preemption (`tests/preemption.rs`).

use weft_config::capacity::parse_capacity;
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};
use weft_types::{ResourceTypes, Time};

use super::*;

/// root.a and root.b at 50% each of one 8192 MB node (a may hold the whole node: user-limit
/// factor 2); the monitor on, a round every second, a kill two seconds after the warning,
/// each round taking the whole excess (natural termination 1, no per-round cap), up to ten
/// off-switch containers per heartbeat.
fn preempting_core(observe_only: bool) -> RmCore {
    let props = [
        ("yarn.scheduler.capacity.root.queues", "a,b"),
        ("yarn.scheduler.capacity.root.a.capacity", "50"),
        ("yarn.scheduler.capacity.root.a.user-limit-factor", "2"),
        ("yarn.scheduler.capacity.root.b.capacity", "50"),
        (
            "yarn.scheduler.capacity.per-node-heartbeat.maximum-offswitch-assignments",
            "10",
        ),
        (
            "yarn.resourcemanager.monitor.capacity.preemption.monitoring_interval",
            "1000",
        ),
        (
            "yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill",
            "2000",
        ),
        (
            "yarn.resourcemanager.monitor.capacity.preemption.natural_termination_factor",
            "1.0",
        ),
        (
            "yarn.resourcemanager.monitor.capacity.preemption.total_preemption_per_round",
            "1.0",
        ),
        (
            "yarn.resourcemanager.monitor.capacity.preemption.observe_only",
            if observe_only { "true" } else { "false" },
        ),
    ];
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) =
        parse_capacity(&xml, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"));
    let (properties, _) = weft_config::site::from_pairs([
        ("yarn.scheduler.fair.update-interval-ms", "0"),
        ("yarn.resourcemanager.scheduler.monitor.enable", "true"),
    ])
    .unwrap_or_else(|e| panic!("{e}"));
    let mut config = config("<allocations/>");
    config.scheduler = SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties,
    });
    let mut c = RmCore::new(config, TS, Time(0));
    drain(&mut c);
    c
}

/// An app of `user` in `queue` with its AM launched on n1 at `t` and registered.
fn app_in(c: &mut RmCore, t: u64, user: &str, queue: &str) -> (AttemptId, String, ContainerId) {
    let id = c.new_application(Time(t));
    c.submit(Time(t), id, submission(user, Some(queue)))
        .expect("submitted");
    drain(c);
    heartbeat(c, t, "n1:45454");
    let l = launches(&drain(c)).pop().expect("AM launched");
    let token = l.launch.environment["WEFT_AM_TOKEN"].clone();
    c.am_register(Time(t), l.attempt, &token, "amhost", 4000, None)
        .expect("AM registers");
    (l.attempt, token, l.container)
}

/// alice's app in a holds its AM and six 1024 MB tasks (7168 of the node); bob's in b its
/// AM (1024) and asks for three more. A round: a (guaranteed 4096) starts at 4096, b at 1024
/// with 3072 pending (bob's limit 4096); b takes the 3072 unassigned over the passes, so a's
/// ideal is 4096 and it gives 7168 - 4096 = 3072: its three newest tasks (never its AM).
fn crowded(observe_only: bool) -> (RmCore, (AttemptId, String, ContainerId), Vec<ContainerId>) {
    let mut c = preempting_core(observe_only);
    register(&mut c, 0, "n1:45454");
    let alice = app_in(&mut c, 1, "alice", "a");
    c.am_allocate(Time(2), alice.0, &alice.1, ask(6)).unwrap();
    heartbeat(&mut c, 3, "n1:45454");
    let got = c
        .am_allocate(Time(4), alice.0, &alice.1, AllocateRequest::default())
        .unwrap();
    let mut tasks: Vec<ContainerId> = got.allocated.iter().map(|a| a.id).collect();
    assert_eq!(tasks.len(), 6);
    let bob = app_in(&mut c, 5, "bob", "b");
    c.am_allocate(Time(6), bob.0, &bob.1, ask(3)).unwrap();
    heartbeat(&mut c, 7, "n1:45454");
    drain(&mut c);
    tasks.sort();
    (c, alice, tasks)
}

#[test]
fn the_policy_warns_then_kills_with_minus_102_after_max_wait_before_kill() {
    let (mut c, (attempt, token, am), tasks) = crowded(false);
    let newest: Vec<ContainerId> = tasks[3..].iter().rev().copied().collect();

    c.timeout(Time(10_000));
    drain(&mut c);
    assert!(pending_stops(&c).is_empty(), "a warning kills nothing");
    let reply = c
        .am_allocate(Time(10_001), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        reply.preempt, newest,
        "the three newest tasks, newest first"
    );
    assert!(!reply.preempt.contains(&am));

    // Selected again a second later: not yet two seconds since the warning.
    c.timeout(Time(11_000));
    drain(&mut c);
    assert!(pending_stops(&c).is_empty());

    c.timeout(Time(12_000));
    drain(&mut c);
    assert_eq!(
        pending_stops(&c),
        tasks[3..].to_vec(),
        "the NM is told to stop them"
    );
    let reply = c
        .am_allocate(Time(12_001), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(reply.completed.len(), 3);
    for done in &reply.completed {
        assert!(newest.contains(&done.id));
        assert_eq!(done.exit_status, exit::PREEMPTED);
        assert_eq!(
            done.diagnostics,
            "Container preempted by scheduler for queue root.b"
        );
    }
    assert!(
        reply.preempt.is_empty(),
        "killed containers leave the contract"
    );
    assert_eq!(c.verify_scheduler(), Vec::<String>::new());
}

#[test]
fn observe_only_computes_but_neither_warns_nor_kills() {
    let (mut c, (attempt, token, _), _) = crowded(true);
    for t in [10_000, 11_000, 12_000, 13_000] {
        c.timeout(Time(t));
        drain(&mut c);
        assert!(pending_stops(&c).is_empty());
    }
    let reply = c
        .am_allocate(Time(13_001), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(reply.preempt.is_empty() && reply.completed.is_empty());
}
