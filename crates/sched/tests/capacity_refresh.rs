//! Refreshing the Capacity Scheduler's queues (capacity spec §4.2-§4.3): an accepted file keeps
//! apps and usage, a queue stopped with apps drains, and a refused file changes nothing.

use weft_config::capacity::parse_capacity;
use weft_config::SchedulerProperties;
use weft_sched::{
    AskTag, CapacityQueueDetails, CapacitySchedulerConfig, ContainerAsk, Decision, Event,
    RejectCode, SchedError, Scheduler, SchedulerConfig,
};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

/// A Capacity configuration from `yarn.scheduler.capacity.*` (name, value) pairs.
fn config(props: &[(&str, &str)]) -> SchedulerConfig {
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) = parse_capacity(&xml, &ResourceTypes::default()).expect("valid");
    SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties: SchedulerProperties::default(),
    })
}

const TWO_LEAVES: &[(&str, &str)] = &[
    ("root.queues", "a,b"),
    ("root.a.capacity", "50"),
    ("root.b.capacity", "50"),
];

/// One 8 GB node, alice's app 1 in `a` running its AM and one 1 GB container.
fn busy_cluster() -> Scheduler {
    let mut s = Scheduler::new(config(TWO_LEAVES), Default::default());
    s.handle(
        Time(0),
        Event::NodeAdded {
            node: NodeId(0),
            host: "h0".into(),
            port: 0,
            rack: "/r".into(),
            capability: Resource::new(8192, 8),
        },
    )
    .expect("node");
    submit(&mut s, 1, "a").expect("accepted");
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ContainerAsk {
                priority: 1,
                resources: Resource::new(1024, 1),
                count: 1,
                hosts: vec![],
                racks: vec![],
                relax_locality: true,
                tag: AskTag::default(),
            },
        },
    )
    .expect("ask");
    let mut allocated = 0;
    for _ in 0..2 {
        s.handle(Time(0), Event::NodeHeartbeat { node: NodeId(0) })
            .expect("heartbeat");
        allocated += std::iter::from_fn(|| s.poll_decision())
            .filter(|d| matches!(d, Decision::Allocated { .. }))
            .count();
    }
    assert_eq!(allocated, 2, "the AM and one container");
    s
}

fn submit(s: &mut Scheduler, app: u64, queue: &str) -> Result<(), (RejectCode, String)> {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: "alice".into(),
            queue: Some(queue.into()),
            am_resource: Some(Resource::new(1024, 1)),
        },
    )
    .expect("submission handled");
    let mut outcome = Err((RejectCode::PlacementRejected, "no decision".to_string()));
    while let Some(d) = s.poll_decision() {
        match d {
            Decision::Accepted { app: a, .. } if a == AppId(app) => outcome = Ok(()),
            Decision::Rejected {
                app: a,
                code,
                reason,
            } if a == AppId(app) => outcome = Err((code, reason)),
            _ => {}
        }
    }
    outcome
}

fn queue<'a>(details: &'a [CapacityQueueDetails], name: &str) -> &'a CapacityQueueDetails {
    details
        .iter()
        .find(|q| q.name == name)
        .unwrap_or_else(|| panic!("{name} is shown"))
}

fn refresh(s: &mut Scheduler, props: &[(&str, &str)]) -> Result<(), SchedError> {
    s.handle(Time(0), Event::Reload(Box::new(config(props))))
}

#[test]
fn a_queue_stopped_with_apps_drains_then_stops_when_its_last_app_leaves() {
    let mut s = busy_cluster();
    let mut stopping = TWO_LEAVES.to_vec();
    stopping.push(("root.a.state", "STOPPED"));
    refresh(&mut s, &stopping).expect("stopping a queue is allowed");

    let details = s.capacity_details();
    let a = queue(&details, "root.a");
    assert_eq!(a.state, "DRAINING", "a still holds app 1");
    assert_eq!(a.users.len(), 1);
    assert_eq!(
        a.users[0].usage,
        Resource::new(2048, 2),
        "the refresh kept the app's AM and container"
    );
    let (code, _) = submit(&mut s, 2, "a").expect_err("a draining queue takes no new app");
    assert_eq!(code, RejectCode::QueueStopped);

    s.handle(Time(1), Event::AppFinished { app: AppId(1) })
        .expect("finish");
    assert_eq!(queue(&s.capacity_details(), "root.a").state, "STOPPED");

    // Now a may go: b takes the whole cluster.
    refresh(&mut s, &[("root.queues", "b"), ("root.b.capacity", "100")])
        .expect("a stopped queue may be deleted");
    let details = s.capacity_details();
    assert!(details.iter().all(|q| q.name != "root.a"), "a is gone");
    assert_eq!(queue(&details, "root.b").absolute_capacity, 100.0);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_refresh_keeps_usage_applies_new_capacities_and_adds_queues() {
    let mut s = busy_cluster();
    refresh(
        &mut s,
        &[
            ("root.queues", "a,b,c"),
            ("root.a.capacity", "20"),
            ("root.b.capacity", "30"),
            ("root.c.capacity", "50"),
        ],
    )
    .expect("new capacities and a new queue");
    let details = s.capacity_details();
    let a = queue(&details, "root.a");
    assert_eq!(a.capacity, 20.0);
    assert_eq!(a.state, "RUNNING");
    // 2048 MB used over a's guarantee of 20% of 8192 = 1638 MB (memory only): 125%.
    assert!(
        (a.used_capacity - 2048.0 / 1638.0 * 100.0).abs() < 0.01,
        "{}",
        a.used_capacity
    );
    assert_eq!(queue(&details, "root.c").capacity, 50.0);
    submit(&mut s, 2, "c").expect("the new queue takes apps");
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_refused_refresh_leaves_every_queue_as_it_was() {
    let mut s = busy_cluster();
    let before = s.capacity_details();
    // Deleting a RUNNING queue with an app is refused (spec §4.3), whatever else changes.
    let e = refresh(&mut s, &[("root.queues", "b"), ("root.b.capacity", "100")])
        .expect_err("a is running");
    let SchedError::ConfigRefused(message) = e else {
        panic!("refused as a configuration: {e:?}")
    };
    assert!(
        message.contains(
            "root.a cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING"
        ),
        "{message}"
    );
    assert_eq!(s.capacity_details(), before);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}
