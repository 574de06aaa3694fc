//! Node registration, heartbeats, health, unregistration and decommissioning.

use super::*;

#[test]
fn registration_is_validated() {
    let mut c = core();
    let reg = |id: &str, mem| NodeRegistration {
        address: String::new(),
        http_address: String::new(),
        hadoop_address: String::new(),
        node_id: id.into(),
        capability: Resource::new(mem, 4),
        rack: String::new(),
        containers: Vec::new(),
        secret: String::new(),
    };
    for bad in ["nohost", "h:", ":1", "h:x", "h:70000"] {
        assert!(
            matches!(
                c.node_register(Time(0), reg(bad, 1024)),
                Err(RmError::InvalidNode(_))
            ),
            "{bad}"
        );
    }
    assert!(matches!(
        c.node_register(Time(0), reg("h:1", 0)),
        Err(RmError::InvalidNode(_))
    ));
    assert!(c.node_infos().is_empty());
    c.node_register(Time(0), reg("h:1", 1024)).unwrap();
    let n = &c.node_infos()[0];
    assert_eq!(
        (n.rack.as_str(), n.state, n.capability),
        ("/default-rack", NodeState::Running, Resource::new(1024, 4))
    );
}

#[test]
fn unknown_nodes_are_told_to_resync() {
    let mut c = core();
    assert_eq!(heartbeat(&mut c, 0, "h:1").action(), NodeAction::Resync);
    assert!(c.node_infos().is_empty());
}

#[test]
fn two_nms_on_one_host_both_get_containers() {
    let mut c = core();
    register(&mut c, 0, "localhost:8041");
    register(&mut c, 0, "localhost:8042");
    assert_eq!(c.cluster_resources().0, Resource::new(16384, 16));
    let (_, attempt, token, _) = running_app(&mut c, 1, "localhost:8041");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 3, "localhost:8042");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated[0].node_id, "localhost:8042");
}

#[test]
fn unknown_running_containers_are_stopped() {
    let mut c = core();
    register(&mut c, 0, "h:1");
    let stray = ContainerId {
        app: ApplicationId {
            cluster_ts: TS,
            seq: 7,
        },
        attempt: 1,
        n: 3,
    };
    let r = report(
        &mut c,
        1,
        "h:1",
        vec![status(stray, NmContainerState::Running, 0)],
    );
    assert_eq!(r.containers_to_stop, vec![stray]);
    assert!(
        heartbeat(&mut c, 2, "h:1").containers_to_stop.is_empty(),
        "told once per report"
    );
}

#[test]
fn unhealthy_node_loses_its_containers_and_gets_none_until_healthy() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    heartbeat(&mut c, 3, "h2:1");
    let w = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated[0]
        .id;
    let sick = NodeStatus {
        healthy: false,
        health_report: "disk full".into(),
        containers: Vec::new(),
        last_key_id: None,
        secret: c.node_secret("h2:1").unwrap(),
        running_containers: None,
    };
    let reply = c.node_heartbeat(Time(5), "h2:1", sick.clone()).unwrap();
    assert_eq!(reply.action(), NodeAction::Normal);
    assert_eq!(c.node_infos()[1].state, NodeState::Unhealthy);
    assert_eq!(c.node_infos()[1].health_report, "disk full");
    let resp = c
        .am_allocate(Time(6), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(resp.completed[0].id, w);
    assert_eq!(resp.completed[0].diagnostics, "node unhealthy: disk full");
    assert_eq!(resp.updated_nodes[0].state, NodeState::Unhealthy);
    c.node_heartbeat(Time(7), "h2:1", sick).unwrap();
    assert!(c
        .am_allocate(Time(8), attempt, &token, AllocateRequest::default())
        .unwrap()
        .allocated
        .is_empty());
    heartbeat(&mut c, 9, "h2:1");
    assert_eq!(c.node_infos()[1].state, NodeState::Running);
    let resp = c
        .am_allocate(Time(10), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(
        resp.allocated.len(),
        1,
        "healthy again, the outstanding ask is served"
    );
}

#[test]
fn unregister_and_decommission() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    c.node_unregister(Time(1), "h1:1", &c.node_secret("h1:1").unwrap_or_default())
        .unwrap();
    assert_eq!(c.node_infos()[0].state, NodeState::Shutdown);
    assert_eq!(heartbeat(&mut c, 2, "h1:1").action(), NodeAction::Resync);
    c.decommission(Time(3), "h2:1").unwrap();
    assert_eq!(heartbeat(&mut c, 4, "h2:1").action(), NodeAction::Shutdown);
    assert_eq!(c.cluster_resources().0, Resource::ZERO);
    let reg = NodeRegistration {
        address: String::new(),
        http_address: String::new(),
        hadoop_address: String::new(),
        node_id: "h2:1".into(),
        capability: Resource::new(1024, 1),
        rack: String::new(),
        containers: Vec::new(),
        secret: String::new(),
    };
    assert!(matches!(
        c.node_register(Time(5), reg),
        Err(RmError::InvalidNode(_))
    ));
    assert!(matches!(
        c.decommission(Time(6), "h9:1"),
        Err(RmError::UnknownNode(_))
    ));
}

#[test]
fn nm_restart_keeps_reported_containers_and_ends_the_others() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 4, "h1:1");
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    let (kept, gone) = (got.allocated[0].id, got.allocated[1].id);
    c.node_register(
        Time(6),
        NodeRegistration {
            address: String::new(),
            http_address: String::new(),
            hadoop_address: String::new(),
            node_id: "h1:1".into(),
            capability: Resource::new(8192, 8),
            rack: String::new(),
            containers: vec![
                status(am, NmContainerState::Running, 0),
                status(kept, NmContainerState::Running, 0),
            ],
            secret: c.node_secret("h1:1").unwrap(),
        },
    )
    .unwrap();
    let resp = c
        .am_allocate(Time(7), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(resp.completed.len(), 1);
    assert_eq!(
        (resp.completed[0].id, resp.completed[0].exit_status),
        (gone, exit::ABORTED)
    );
    assert_eq!(c.node_infos()[0].containers, 2);
}

#[test]
fn web_address_is_reported_and_survives_a_reregistration_without_one() {
    let mut c = core();
    let reg = |http: &str, secret: Option<String>| NodeRegistration {
        address: String::new(),
        http_address: http.into(),
        hadoop_address: String::new(),
        node_id: "h:1".into(),
        capability: Resource::new(1024, 4),
        rack: String::new(),
        containers: Vec::new(),
        secret: secret.unwrap_or_default(),
    };
    c.node_register(Time(0), reg("h:8042", None)).unwrap();
    assert_eq!(c.node_infos()[0].http_address, "h:8042");
    c.node_register(Time(1), reg("", c.node_secret("h:1")))
        .unwrap();
    assert_eq!(c.node_infos()[0].http_address, "h:8042");
    c.node_register(Time(2), reg("h:9042", c.node_secret("h:1")))
        .unwrap();
    assert_eq!(c.node_infos()[0].http_address, "h:9042");
}

#[test]
fn the_hadoop_address_follows_the_latest_registration() {
    let mut c = core();
    let reg = |hadoop: &str, secret: Option<String>| NodeRegistration {
        address: String::new(),
        http_address: String::new(),
        hadoop_address: hadoop.into(),
        node_id: "h:1".into(),
        capability: Resource::new(1024, 4),
        rack: String::new(),
        containers: Vec::new(),
        secret: secret.unwrap_or_default(),
    };
    assert_eq!(c.node_hadoop_address("h:1"), None);
    c.node_register(Time(0), reg("h:45454", None)).unwrap();
    assert_eq!(c.node_hadoop_address("h:1"), Some("h:45454"));
    assert_eq!(c.node_infos()[0].hadoop_address, "h:45454");
    c.node_register(Time(1), reg("h:45999", c.node_secret("h:1")))
        .unwrap();
    assert_eq!(c.node_hadoop_address("h:1"), Some("h:45999"));
    c.node_register(Time(2), reg("", c.node_secret("h:1")))
        .unwrap();
    assert_eq!(c.node_hadoop_address("h:1"), None);
    assert_eq!(c.node_hadoop_address("other:1"), None);
}

fn node_offering(id: &str, capability: Resource) -> NodeRegistration {
    NodeRegistration {
        address: String::new(),
        http_address: String::new(),
        hadoop_address: String::new(),
        node_id: id.into(),
        capability,
        rack: String::new(),
        containers: Vec::new(),
        secret: String::new(),
    }
}

#[test]
fn capabilities_beyond_the_documented_maximum_are_refused_naming_the_component() {
    let mut c = core();
    let cases = [
        (
            Resource::new(i64::MAX, 8),
            "9223372036854775807 MB of memory",
        ),
        (Resource::new(MAX_NODE_MEMORY_MB + 1, 8), "MB of memory"),
        (Resource::new(1024, MAX_NODE_VCORES + 1), "vcores"),
        (Resource::new(1024, 8).with(2, -1), "resource type #2"),
        (Resource::new(-5, 8), "-5 MB of memory"),
    ];
    for (capability, named) in cases {
        match c.node_register(Time(0), node_offering("big:1", capability)) {
            Err(RmError::InvalidNode(m)) => {
                assert!(m.contains(named) && m.contains("big:1"), "{m}")
            }
            other => panic!("{capability:?} was not refused: {other:?}"),
        }
    }
    assert!(c.node_infos().is_empty(), "nothing half-registered");
    assert_eq!(c.cluster_resources().0, Resource::ZERO);
}

#[test]
fn huge_nodes_joining_and_leaving_leave_the_cluster_total_exact_and_scheduling_working() {
    let mut c = core();
    let huge = Resource::new(MAX_NODE_MEMORY_MB, MAX_NODE_VCORES);
    for id in ["huge:1", "huge:2"] {
        c.node_register(Time(0), node_offering(id, huge)).unwrap();
    }
    assert_eq!(c.cluster_resources().0, huge.saturating_mul(2));
    let secret = c.node_secret("huge:1").unwrap();
    c.node_unregister(Time(1), "huge:1", &secret).unwrap();
    let secret = c.node_secret("huge:2").unwrap();
    c.node_unregister(Time(1), "huge:2", &secret).unwrap();
    assert_eq!(c.cluster_resources().0, Resource::ZERO);
    register(&mut c, 2, "small:1");
    let small = c
        .node_infos()
        .iter()
        .find(|n| n.node_id == "small:1")
        .unwrap()
        .capability;
    assert_eq!(c.cluster_resources().0, small, "exactly the one node left");
    assert_eq!(c.scheduler().verify(), Vec::<String>::new());
    assert_eq!(c.scheduler_snapshot().cluster_capacity, small);
    // A share of a zero or negative total would starve every queue: the app still runs.
    let (_, attempt, token, _) = running_app(&mut c, 3, "small:1");
    c.am_allocate(Time(4), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 5, "small:1");
    let got = c
        .am_allocate(Time(6), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 1);
}

#[test]
fn a_live_node_id_stays_with_the_nm_that_registered_it() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let secret = c.node_secret("h1:1").unwrap();
    assert_eq!(secret.len(), 64);
    let fake = |address: &str, secret: &str| NodeRegistration {
        address: address.into(),
        http_address: String::new(),
        hadoop_address: String::new(),
        node_id: "h1:1".into(),
        capability: Resource::new(1 << 20, 1000),
        rack: String::new(),
        containers: Vec::new(),
        secret: secret.into(),
    };
    // Another NM cannot take over the id, redirect it, heartbeat for it or remove it.
    for wrong in ["", "guess"] {
        assert!(matches!(
            c.node_register(Time(1), fake("10.0.0.66:1", wrong)),
            Err(RmError::Forbidden(_))
        ));
        let status = NodeStatus {
            healthy: false,
            secret: wrong.into(),
            ..NodeStatus::default()
        };
        assert!(matches!(
            c.node_heartbeat(Time(1), "h1:1", status),
            Err(RmError::Forbidden(_))
        ));
        assert!(matches!(
            c.node_unregister(Time(1), "h1:1", wrong),
            Err(RmError::Forbidden(_))
        ));
    }
    let n = &c.node_infos()[0];
    assert_eq!((n.state, n.address.as_str()), (NodeState::Running, "h1:1"));
    assert_eq!(n.capability, Resource::new(8192, 8));
    // Its own NM re-registers with the secret and keeps it.
    c.node_register(Time(2), fake("127.0.0.1:1", &secret))
        .unwrap();
    assert_eq!(c.node_secret("h1:1").unwrap(), secret);
    // Once the node is lost the id is free, and a new registration gets a new secret.
    c.tick(Time(2 + NM_EXPIRY + 1));
    assert_eq!(c.node_infos()[0].state, NodeState::Lost);
    c.node_register(Time(NM_EXPIRY + 4), fake("127.0.0.1:2", ""))
        .unwrap();
    assert_ne!(c.node_secret("h1:1").unwrap(), secret);
}

#[test]
fn repeated_running_statuses_change_nothing_and_write_nothing() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (app, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2))
        .expect("asks");
    // One container per heartbeat.
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    let granted = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .expect("allocate")
        .allocated;
    assert_eq!(granted.len(), 2, "both asks granted on h1");
    drain(&mut c);
    let running: Vec<NmContainerStatus> = [am, granted[0].id, granted[1].id]
        .iter()
        .map(|id| status(*id, NmContainerState::Running, 0))
        .collect();
    report(&mut c, 5, "h1:1", running.clone());
    let state_of = |c: &RmCore, id: ContainerId| {
        c.container_reports(&app)
            .expect("app known")
            .into_iter()
            .find(|r| r.id == id)
            .map(|r| r.state)
    };
    assert_eq!(
        state_of(&c, granted[0].id),
        Some(LiveContainerState::Running),
        "the first RUNNING status is taken in"
    );
    drain(&mut c);
    for t in 6..9 {
        let reply = report(&mut c, t, "h1:1", running.clone());
        assert!(
            reply.containers_to_stop.is_empty(),
            "nothing to stop at {t}"
        );
        let out = drain(&mut c);
        assert!(
            writes(&out).is_empty(),
            "a heartbeat repeating known RUNNING statuses writes nothing: {out:?}"
        );
    }
    assert_eq!(
        state_of(&c, granted[1].id),
        Some(LiveContainerState::Running)
    );
    // The same container reported by another node is not that node's: stopped there, and
    // it keeps running where it was allocated.
    let reply = report(&mut c, 9, "h2:1", vec![running[1].clone()]);
    assert_eq!(reply.containers_to_stop, vec![granted[0].id]);
    assert_eq!(
        state_of(&c, granted[0].id),
        Some(LiveContainerState::Running)
    );
    // A completion after the repeated RUNNING statuses still ends it.
    report(
        &mut c,
        10,
        "h1:1",
        vec![status(granted[0].id, NmContainerState::Complete, 0)],
    );
    assert_eq!(
        state_of(&c, granted[0].id),
        Some(LiveContainerState::Complete)
    );
}

/// A delta heartbeat of node "h1:1" (after a tick): `statuses` and the NM's running count.
fn delta(c: &mut RmCore, t: u64, statuses: Vec<NmContainerStatus>, running: u32) -> HeartbeatReply {
    c.tick(Time(t));
    let secret = c.node_secret("h1:1").unwrap_or_default();
    c.node_heartbeat(
        Time(t),
        "h1:1",
        NodeStatus {
            healthy: true,
            containers: statuses,
            secret,
            running_containers: Some(running),
            ..NodeStatus::default()
        },
    )
    .expect("heartbeat")
}

/// Weft's NMs leave out RUNNING statuses an answered heartbeat already carried and send how
/// many containers run: the RM takes the count as the check of what was left out and asks for
/// every status when its own count of containers seen running on the node differs.
#[test]
fn delta_reports_are_checked_by_the_running_count() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_app, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2))
        .expect("asks");
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    let granted = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .expect("allocate")
        .allocated;
    assert_eq!(granted.len(), 2);
    // The AM and one container are new: reported, and the count agrees.
    let first = vec![
        status(am, NmContainerState::Running, 0),
        status(granted[0].id, NmContainerState::Running, 0),
    ];
    assert!(!delta(&mut c, 5, first, 2).send_all_statuses);
    // Nothing changed: no statuses, the same count.
    assert!(!delta(&mut c, 6, Vec::new(), 2).send_all_statuses);
    // The NM runs the second container but its RUNNING status never arrived: the counts differ.
    assert!(delta(&mut c, 7, Vec::new(), 3).send_all_statuses);
    let all = [am, granted[0].id, granted[1].id]
        .iter()
        .map(|id| status(*id, NmContainerState::Running, 0))
        .collect();
    assert!(!delta(&mut c, 8, all, 3).send_all_statuses);
    // A completion is a change; the count falls with it.
    let done = vec![status(granted[0].id, NmContainerState::Complete, 0)];
    assert!(!delta(&mut c, 9, done, 2).send_all_statuses);
    // An NM that lists everything (no count) is never asked.
    let reply = report(&mut c, 10, "h1:1", Vec::new());
    assert!(!reply.send_all_statuses);
}

/// A finished app's AM container lingers (it exits by itself): the NM still counts it
/// running, and the delta check expects it, so the node is not asked for every status at
/// each heartbeat until the AM exits; once its completion arrives the count drops with it.
#[test]
fn a_lingering_am_is_expected_in_the_running_count() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_app, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    assert!(!delta(&mut c, 2, vec![status(am, NmContainerState::Running, 0)], 1).send_all_statuses);
    c.am_finish(Time(3), attempt, &token, FinalStatus::Succeeded, "", None)
        .expect("finish");
    drain(&mut c);
    for t in 4..8 {
        assert!(
            !delta(&mut c, t, Vec::new(), 1).send_all_statuses,
            "heartbeat at {t} while the AM lingers"
        );
    }
    // A count still off by one more is still a difference.
    assert!(delta(&mut c, 8, Vec::new(), 2).send_all_statuses);
    let exited = vec![status(am, NmContainerState::Complete, 0)];
    assert!(!delta(&mut c, 9, exited, 0).send_all_statuses);
    assert!(!delta(&mut c, 10, Vec::new(), 0).send_all_statuses);
    assert!(delta(&mut c, 11, Vec::new(), 1).send_all_statuses);
}

/// A heartbeat as `node_heartbeat_deferred` takes it (after a tick, like `heartbeat`).
fn deferred_heartbeat(c: &mut RmCore, t: u64, node: &str, healthy: bool) -> HeartbeatReply {
    c.tick(Time(t));
    let secret = c.node_secret(node).unwrap_or_default();
    c.node_heartbeat_deferred(
        Time(t),
        node,
        NodeStatus {
            healthy,
            secret,
            ..NodeStatus::default()
        },
    )
    .expect("heartbeat")
}

#[test]
fn a_deferred_heartbeat_is_answered_first_and_its_node_passed_over_once_later() {
    let mut c = core();
    register(&mut c, 0, "h:1");
    register(&mut c, 0, "h:2");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h:1");
    c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    let reply = deferred_heartbeat(&mut c, 3, "h:2", true);
    assert_eq!(reply.action(), NodeAction::Normal);
    let none_yet = c
        .am_allocate(Time(3), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(none_yet.allocated.is_empty(), "the pass has not run yet");
    // A second heartbeat before the pass adds no second pass.
    deferred_heartbeat(&mut c, 4, "h:2", true);
    assert_eq!(c.node_updates_due(), 1);
    assert_eq!(c.run_node_updates(Time(4), 10), 1);
    assert_eq!(c.node_updates_due(), 0);
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    // One pass for the two heartbeats: one container (assignmultiple is off here), where
    // two heartbeats with their passes inside would have placed both.
    assert_eq!(got.allocated.len(), 1);
    assert_eq!(got.allocated[0].node_id, "h:2");
    // Once run, the next heartbeat queues the node again.
    deferred_heartbeat(&mut c, 6, "h:2", true);
    assert_eq!(c.node_updates_due(), 1);
}

#[test]
fn a_deferred_pass_skips_a_node_that_left_the_scheduler_meanwhile() {
    let mut c = core();
    register(&mut c, 0, "h:1");
    register(&mut c, 0, "h:2");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h:1");
    c.am_allocate(Time(2), attempt, &token, ask(1)).unwrap();
    deferred_heartbeat(&mut c, 3, "h:2", true);
    // Unhealthy: out of the scheduler, and not queued a second time.
    deferred_heartbeat(&mut c, 4, "h:2", false);
    assert_eq!(c.node_updates_due(), 1);
    assert_eq!(c.run_node_updates(Time(4), 10), 1);
    let got = c
        .am_allocate(Time(5), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert!(got.allocated.is_empty(), "{:?}", got.allocated);
}

#[test]
fn deferred_heartbeats_with_their_passes_run_at_once_decide_as_immediate_ones() {
    // The same calls on two cores, one heartbeating with the pass inside, the other deferred
    // and running the queue right after each heartbeat: the same containers on the same nodes.
    let run = |deferred: bool| {
        let mut c = core();
        for n in 1..=3 {
            register(&mut c, 0, &format!("h:{n}"));
        }
        let (_, attempt, token, _) = running_app(&mut c, 1, "h:1");
        c.am_allocate(Time(2), attempt, &token, ask(9)).unwrap();
        let mut placed = Vec::new();
        for t in 3..9 {
            for n in 1..=3 {
                let node = format!("h:{n}");
                if deferred {
                    deferred_heartbeat(&mut c, t, &node, true);
                    c.run_node_updates(Time(t), usize::MAX);
                } else {
                    heartbeat(&mut c, t, &node);
                }
            }
            let got = c
                .am_allocate(Time(t), attempt, &token, AllocateRequest::default())
                .unwrap();
            placed.extend(got.allocated.into_iter().map(|a| (t, a.id, a.node_id)));
        }
        placed
    };
    let immediate = run(false);
    assert_eq!(immediate.len(), 9, "{immediate:?}");
    assert_eq!(run(true), immediate);
}
