//! Container and NM tokens as the core issues them, checked the way an NM checks them.

use weft_tokens::KeyRing;

use super::*;

fn ring_of(c: &RmCore) -> KeyRing {
    let mut ring = KeyRing::default();
    ring.learn(c.current_master_key());
    ring
}

#[test]
fn allocations_carry_container_tokens_and_one_nm_token_per_node() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(2)).unwrap();
    heartbeat(&mut c, 3, "h1:1");
    heartbeat(&mut c, 3, "h1:1");
    let got = c
        .am_allocate(Time(4), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(got.allocated.len(), 2);
    let ring = ring_of(&c);
    for a in &got.allocated {
        let t = ring.verify_container(&a.token, 4).expect("valid token");
        assert_eq!(t.container, a.id);
        assert_eq!((t.node_id.as_str(), t.user.as_str()), ("h1:1", "alice"));
        assert_eq!((t.memory_mb, t.vcores), (1024, 1));
        assert_eq!(
            t.expiry_ms,
            3 + 600_000,
            "expiry counts from the allocation"
        );
    }
    assert_eq!(got.nm_tokens.len(), 1, "one NM token for the one node");
    let nm = ring.verify_nm(&got.nm_tokens[0].token).unwrap();
    assert_eq!((nm.attempt, nm.node_id.as_str()), (attempt, "h1:1"));
    // The next containers on the same node come without another NM token.
    c.am_allocate(Time(5), attempt, &token, ask(1)).unwrap();
    heartbeat(&mut c, 6, "h1:1");
    let again = c
        .am_allocate(Time(7), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(again.allocated.len(), 1);
    assert!(again.nm_tokens.is_empty());
    // A released task container is stopped by the node's heartbeat, with no NM call.
    let out = drain(&mut c);
    assert!(launches(&out).is_empty());
    c.am_allocate(
        Time(8),
        attempt,
        &token,
        AllocateRequest {
            releases: vec![again.allocated[0].id],
            ..AllocateRequest::default()
        },
    )
    .unwrap();
    assert!(stops(&drain(&mut c)).is_empty());
    assert_eq!(pending_stops(&c), vec![again.allocated[0].id]);
    assert_eq!(am.attempt_id(), attempt);
}

#[test]
fn the_am_launch_carries_a_container_token_for_the_am() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    submit(&mut c, 1);
    drain(&mut c);
    heartbeat(&mut c, 2, "h1:1");
    let l = launches(&drain(&mut c)).pop().expect("AM launched");
    let ring = ring_of(&c);
    let t = ring.verify_container(&l.container_token, 2).unwrap();
    assert_eq!((t.container, t.user.as_str()), (l.container, "alice"));
    assert_eq!(ring.verify_nm(&l.nm_token).unwrap().attempt, l.attempt);
}

#[test]
fn nodes_learn_the_next_key_before_it_signs_and_keep_old_tokens_valid() {
    let mut cfg = config("<allocations/>");
    cfg.master_key_roll_interval = Duration::from_millis(100_000);
    // Long expiries keep the node and the AM alive across the roll.
    cfg.nm_expiry = Duration::from_millis(1_000_000);
    cfg.am_expiry = Duration::from_millis(1_000_000);
    let mut c = RmCore::new(cfg, TS, Time(0));
    drain(&mut c);
    register(&mut c, 0, "h1:1");
    let (_, attempt, token, _) = running_app(&mut c, 1, "h1:1");
    let first = c.current_master_key();
    let mut ring = KeyRing::default();
    ring.learn(first.clone());
    let secret = c.node_secret("h1:1").unwrap();
    let status = |known: Option<u32>| NodeStatus {
        healthy: true,
        last_key_id: known,
        secret: secret.clone(),
        ..NodeStatus::default()
    };
    let reply = c
        .node_heartbeat(Time(2), "h1:1", status(Some(first.id)))
        .unwrap();
    assert_eq!(reply.master_key, None, "the node holds the current key");
    // After the roll interval a next key goes out while the current one still signs.
    c.tick(Time(100_000));
    let reply = c
        .node_heartbeat(Time(100_000), "h1:1", status(Some(first.id)))
        .unwrap();
    let next = reply.master_key.expect("the next key is handed out");
    assert_ne!(next.id, first.id);
    assert_eq!(c.current_master_key(), first);
    ring.learn(next.clone());
    c.am_allocate(Time(100_001), attempt, &token, ask(1))
        .unwrap();
    heartbeat(&mut c, 100_002, "h1:1");
    let old = c
        .am_allocate(Time(100_003), attempt, &token, AllocateRequest::default())
        .unwrap();
    // Activation after 1.5 x the NM expiry: new tokens use the next key, and the AM gets a
    // fresh NM token; tokens from before still verify on the node.
    // Keep the node and the AM in contact on the way.
    heartbeat(&mut c, 900_000, "h1:1");
    c.am_allocate(Time(900_000), attempt, &token, AllocateRequest::default())
        .unwrap();
    c.tick(Time(1_599_999));
    assert_eq!(c.current_master_key(), first);
    c.tick(Time(1_600_000));
    assert_eq!(c.current_master_key(), next);
    c.am_allocate(Time(1_600_001), attempt, &token, ask(1))
        .unwrap();
    heartbeat(&mut c, 1_600_002, "h1:1");
    let new = c
        .am_allocate(Time(1_600_003), attempt, &token, AllocateRequest::default())
        .unwrap();
    assert_eq!(new.nm_tokens.len(), 1);
    assert_eq!(
        ring.verify_nm(&new.nm_tokens[0].token).unwrap().key_id,
        next.id
    );
    assert_eq!(old.allocated.len(), 1);
    assert!(ring
        .verify_container(&old.allocated[0].token, 600_000)
        .is_ok());
    assert!(ring.verify_nm(&old.nm_tokens[0].token).is_ok());
}

#[test]
fn a_finishing_app_stops_its_containers_through_the_heartbeats_only() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    let (_, attempt, token, am) = running_app(&mut c, 1, "h1:1");
    c.am_allocate(Time(2), attempt, &token, ask(4)).unwrap();
    let mut allocated = Vec::new();
    for t in 3..11 {
        heartbeat(&mut c, t, if t % 2 == 0 { "h2:1" } else { "h1:1" });
        let got = c
            .am_allocate(Time(t), attempt, &token, AllocateRequest::default())
            .unwrap();
        allocated.extend(got.allocated);
    }
    assert_eq!(allocated.len(), 4);
    assert!(allocated.iter().any(|a| a.node_id == "h2:1"));
    drain(&mut c);
    c.am_finish(Time(12), attempt, &token, FinalStatus::Succeeded, "", None)
        .unwrap();
    assert!(
        stops(&drain(&mut c)).is_empty(),
        "no StopContainers call: YARN's RM leaves them to the heartbeats"
    );
    let mut expected: Vec<ContainerId> = allocated.iter().map(|a| a.id).collect();
    expected.sort();
    assert_eq!(
        pending_stops(&c),
        expected,
        "every container but the finished AM's"
    );
    for node in ["h1:1", "h2:1"] {
        let mut told = heartbeat(&mut c, 13, node).containers_to_stop;
        told.sort();
        let on_node: Vec<ContainerId> = allocated
            .iter()
            .filter(|a| a.node_id == node)
            .map(|a| a.id)
            .collect();
        assert_eq!(told, on_node, "{node} is told to stop its own");
        assert!(!told.contains(&am));
    }
}

#[test]
fn a_killed_app_stops_its_am_container_through_its_nm_with_the_attempt_token() {
    let mut c = core();
    register(&mut c, 0, "h1:1");
    let (app, attempt, _, am) = running_app(&mut c, 1, "h1:1");
    drain(&mut c);
    c.kill(Time(5), app, Some("alice")).unwrap();
    let ring = ring_of(&c);
    let stopped: Vec<(ContainerId, String, String)> = drain(&mut c)
        .into_iter()
        .filter_map(|o| match o {
            Output::StopContainer {
                nm_token,
                container,
                node_id,
                ..
            } => Some((container, node_id, nm_token)),
            _ => None,
        })
        .collect();
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    let (container, node, nm_token) = &stopped[0];
    assert_eq!((*container, node.as_str()), (am, "h1:1"));
    let t = ring.verify_nm(nm_token).expect("a valid NM token");
    assert_eq!(
        (t.attempt, t.node_id.as_str(), t.user.as_str()),
        (attempt, "h1:1", "alice")
    );
    assert_eq!(pending_stops(&c), vec![am], "its heartbeat carries it too");
}
