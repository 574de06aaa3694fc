//! The Capacity Scheduler behind the RM core: every refresh refusal of capacity spec §4.3
//! leaves the running queues exactly as they were, and application priorities reach the
//! scheduler.

use weft_config::capacity::parse_capacity;
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};
use weft_types::{ResourceTypes, Time};

use super::*;
use crate::RmError;

/// A Capacity configuration from `yarn.scheduler.capacity.*` pairs.
fn capacity(props: &[(&str, &str)]) -> SchedulerConfig {
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) =
        parse_capacity(&xml, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"));
    let properties = weft_config::SchedulerProperties {
        update_interval_ms: 0,
        max_application_priority: 10,
        ..Default::default()
    };
    SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties,
    })
}

/// root (administered by `admin` only): a (40%, maximum allocation 4096 MB, one app of
/// alice), b (30%, empty), p (30%, a parent of x), m (0%, a managed parent).
const RUNNING: &[(&str, &str)] = &[
    ("root.acl_administer_queue", "admin"),
    ("root.queues", "a,b,p,m"),
    ("root.a.capacity", "40"),
    ("root.a.maximum-allocation-mb", "4096"),
    ("root.b.capacity", "30"),
    ("root.p.capacity", "30"),
    ("root.p.queues", "x"),
    ("root.p.x.capacity", "100"),
    ("root.m.capacity", "0"),
    ("root.m.auto-create-child-queue.enabled", "true"),
    ("root.m.leaf-queue-template.capacity", "10"),
];

fn capacity_core() -> RmCore {
    let mut config = config("<allocations/>");
    config.scheduler = capacity(RUNNING);
    config.admin_acl = weft_config::Acl::parse("admin");
    let mut c = RmCore::new(config, TS, Time(0));
    register(&mut c, 0, "n1:45454");
    let id = c.new_application(Time(1));
    c.submit(Time(1), id, submission("alice", Some("a")))
        .expect("submitted");
    drain(&mut c);
    c
}

/// `RUNNING` with `changes` applied: a pair replaces the one of the same name, a value of ""
/// removes it.
fn running_with(changes: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    let mut props: Vec<(&str, &str)> = RUNNING
        .iter()
        .filter(|(k, _)| !changes.iter().any(|(c, _)| c == k))
        .copied()
        .collect();
    props.extend(changes.iter().filter(|(_, v)| !v.is_empty()).copied());
    props
}

/// Refreshes with `props`, expects a refusal containing `text`, and checks that the queues,
/// apps and the configuration in force are unchanged.
fn refused(props: &[(&str, &str)], text: &str) {
    let mut c = capacity_core();
    let before = (c.scheduler_snapshot(), c.scheduler().capacity_details());
    let e = c
        .reload(Time(2), capacity(props))
        .expect_err("the refresh is refused");
    assert!(e.to_string().contains(text), "{e}");
    assert_eq!(
        (c.scheduler_snapshot(), c.scheduler().capacity_details()),
        before,
        "a refused refresh changes nothing"
    );
    let SchedulerConfig::Capacity(running) = &c.config.scheduler else {
        panic!("still the Capacity Scheduler")
    };
    assert!(running
        .capacity
        .queue("root.a")
        .is_some_and(|q| q.is_leaf()));
    assert!(c.scheduler().verify().is_empty());
}

#[test]
fn deleting_a_running_queue_with_apps_is_refused() {
    refused(
        &running_with(&[
            ("root.queues", "b,p,m"),
            ("root.a.capacity", ""),
            ("root.a.maximum-allocation-mb", ""),
            ("root.b.capacity", "70"),
        ]),
        "root.a cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING",
    );
}

#[test]
fn deleting_a_running_empty_queue_is_refused_too() {
    refused(
        &running_with(&[
            ("root.queues", "a,p,m"),
            ("root.b.capacity", ""),
            ("root.a.capacity", "70"),
        ]),
        "root.b cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING",
    );
}

#[test]
fn moving_a_queue_to_another_parent_is_refused() {
    refused(
        &running_with(&[
            ("root.queues", "a,p,m"),
            ("root.b.capacity", ""),
            ("root.a.capacity", "70"),
            ("root.p.queues", "x,b"),
            ("root.p.x.capacity", "50"),
            ("root.p.b.capacity", "50"),
        ]),
        "b is moved from:root.b to:root.p.b after refresh, which is not allowed.",
    );
}

#[test]
fn turning_a_running_leaf_into_a_parent_is_refused() {
    refused(
        &running_with(&[("root.a.queues", "a1"), ("root.a.a1.capacity", "100")]),
        "Can not convert the leaf queue: root.a to parent queue since it is not yet in stopped state. Current State : RUNNING",
    );
}

#[test]
fn turning_a_parent_into_a_managed_parent_is_refused() {
    // A managed parent lists no static children (a load-time rule), so x goes too.
    refused(
        &running_with(&[
            ("root.p.auto-create-child-queue.enabled", "true"),
            ("root.p.leaf-queue-template.capacity", "10"),
            ("root.p.queues", ""),
            ("root.p.x.capacity", ""),
        ]),
        "Can not convert parent queue: root.p to auto create enabled parent queue",
    );
}

#[test]
fn turning_a_managed_parent_into_a_leaf_is_refused() {
    refused(
        &running_with(&[("root.m.auto-create-child-queue.enabled", "false")]),
        "Cannot convert auto create enabled parent queue: root.m to leaf queue",
    );
}

#[test]
fn shrinking_a_leafs_maximum_allocation_is_refused() {
    refused(
        &running_with(&[("root.a.maximum-allocation-mb", "2048")]),
        "Trying to reinitialize root.a the maximum allocation size can not be decreased! Current setting: <memory:4096, vCores:4>, trying to set it to: <memory:2048, vCores:4>",
    );
}

#[test]
fn a_maximum_allocation_above_the_clusters_is_refused() {
    refused(
        &running_with(&[("root.b.maximum-allocation-mb", "65536")]),
        "Queue maximum allocation cannot be larger than the cluster setting for queue root.b",
    );
}

#[test]
fn an_accepted_refresh_applies_and_is_recorded() {
    let mut c = capacity_core();
    c.reload(
        Time(2),
        capacity(&running_with(&[
            ("root.a.capacity", "50"),
            ("root.b.capacity", "20"),
            ("root.a.maximum-allocation-mb", "8192"),
        ])),
    )
    .expect("capacities may change and a maximum allocation may grow");
    let details = c.scheduler().capacity_details();
    let a = details.iter().find(|q| q.name == "root.a").expect("a");
    assert_eq!(a.capacity, 50.0);
    assert_eq!(a.users.len(), 1, "alice's app is still in a");
    let SchedulerConfig::Capacity(running) = &c.config.scheduler else {
        panic!("still the Capacity Scheduler")
    };
    assert_eq!(
        running.capacity.queue("root.b").map(|q| q.capacity.clone()),
        Some(weft_config::capacity::CapacityValue::Percent(20.0))
    );
}

#[test]
fn a_running_queue_under_a_stopped_parent_never_reaches_the_core() {
    // Spec §4.3's last refusal is a load-time rule (§4.1 item 9): the file is refused when it
    // is read, with the child's state property, before any refresh is tried.
    let mut xml = String::from("<configuration>\n");
    for (name, value) in running_with(&[("root.p.state", "STOPPED"), ("root.p.x.state", "RUNNING")])
    {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let e = parse_capacity(&xml, &ResourceTypes::default()).expect_err("refused at load");
    let text = e.to_string();
    assert!(
        text.contains("yarn.scheduler.capacity.root.p.x.state"),
        "{text}"
    );
    assert!(text.contains("line "), "{text}");
}

#[test]
fn priorities_reach_the_capacity_scheduler_capped_at_the_cluster_maximum() {
    let mut c = capacity_core();
    let id = c.new_application(Time(3));
    let mut sub = submission("bob", Some("b"));
    sub.priority = 3;
    c.submit(Time(3), id, sub)
        .expect("submitted with a priority");
    assert_eq!(c.app_report(&id).map(|r| r.priority), Some(3));
    let e = c
        .update_priority(Time(4), id, 7, Some("mallory"))
        .expect_err("not the owner");
    assert!(matches!(e, RmError::Forbidden(_)), "{e}");
    assert_eq!(
        c.update_priority(Time(4), id, 50, Some("bob")).ok(),
        Some(10)
    );
    assert_eq!(c.app_report(&id).map(|r| r.priority), Some(10));
    drain(&mut c);
    let stored_priority = stored()
        .apps
        .iter()
        .find(|a| a.app.app_id == id.seq)
        .map(|a| a.app.priority);
    assert_eq!(stored_priority, Some(10), "the new priority is persisted");
}

#[test]
fn the_fair_scheduler_refuses_a_priority_change() {
    let mut c = core();
    let id = submit(&mut c, 1);
    let e = c
        .update_priority(Time(2), id, 5, None)
        .expect_err("fair does not order by priority");
    assert!(matches!(e, RmError::Unsupported(_)), "{e}");
}

/// An accepted app that activation keeps pending says why in its diagnostics, with Hadoop's
/// words and figures: b's AM limit is 10% of its 30% of 8 GiB, so only its first AM (always let
/// in) runs and the second waits.
#[test]
fn a_pending_app_says_which_am_limit_holds_it() {
    let mut c = capacity_core();
    let first = c.new_application(Time(2));
    c.submit(Time(2), first, submission("bob", Some("b")))
        .expect("submitted");
    let second = c.new_application(Time(3));
    c.submit(Time(3), second, submission("carol", Some("b")))
        .expect("submitted");
    drain(&mut c);
    let diagnostics = |c: &RmCore, id| c.app_report(id).map(|r| r.diagnostics).unwrap_or_default();
    assert_eq!(diagnostics(&c, &first), "", "the first AM is let in");
    let waiting = diagnostics(&c, &second);
    assert!(
        waiting.starts_with(
            "Application is added to the scheduler and is not yet activated. \
             Queue's AM resource limit exceeded. Details : AM Partition = <DEFAULT_PARTITION>; \
             AM Resource Request = <memory:1024, vCores:1>;"
        ),
        "{waiting}"
    );
    assert!(
        waiting.ends_with("Queue AM Resource Usage = <memory:1024, vCores:1>;"),
        "{waiting}"
    );
    // Once the first app ends, the second is activated and its diagnostics say nothing more.
    c.kill(Time(4), first, Some("bob")).expect("killed");
    drain(&mut c);
    assert_eq!(diagnostics(&c, &second), "");
}
