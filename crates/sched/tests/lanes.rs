//! The facade's choice of engine width: two resource lanes for a registry of memory and vcores,
//! six with a custom type; what a two-lane engine cannot carry is refused, never dropped.

use weft_config::alloc_file::parse_allocations;
use weft_config::SchedulerProperties;
use weft_sched::{ContainerAsk, Decision, Event, SchedError, Scheduler, SchedulerConfig};
use weft_types::{AppId, NodeId, Resource, ResourceTypes, Time};

const GPU: usize = 2;

fn config(types: &ResourceTypes) -> SchedulerConfig {
    let (allocations, _) = parse_allocations("<allocations/>", types).expect("valid allocations");
    let properties = SchedulerProperties {
        resource_types: types.clone(),
        // Every container that fits in one heartbeat.
        assign_multiple: true,
        dynamic_max_assign: false,
        ..Default::default()
    };
    SchedulerConfig::fair(allocations, properties)
}

fn gpu_types() -> ResourceTypes {
    ResourceTypes::with_custom(["gpu"]).expect("one custom type")
}

fn drain(s: &mut Scheduler) -> Vec<Decision> {
    std::iter::from_fn(|| s.poll_decision()).collect()
}

fn node(id: u32, capability: Resource) -> Event {
    Event::NodeAdded {
        node: NodeId(id),
        host: format!("n{id}"),
        port: 0,
        rack: "/default-rack".into(),
        capability,
    }
}

fn ask(resources: Resource, count: u32) -> ContainerAsk {
    ContainerAsk {
        priority: 1,
        resources,
        count,
        hosts: vec![],
        racks: vec![],
        relax_locality: true,
        tag: weft_sched::AskTag::NONE,
    }
}

fn submit(s: &mut Scheduler, app: u64) {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: "alice".into(),
            queue: Some("default".into()),
            am_resource: None,
        },
    )
    .expect("submitted");
}

fn allocated(decisions: &[Decision]) -> Vec<Resource> {
    decisions
        .iter()
        .filter_map(|d| match d {
            Decision::Allocated { resources, .. } => Some(*resources),
            _ => None,
        })
        .collect()
}

/// A node of 8 GB, 8 vcores and 2 GPUs; an app asking three 1 GB, 1 vcore, 1 GPU containers:
/// the GPUs bind, so one heartbeat places two, each with its GPU.
fn gpu_heartbeat(s: &mut Scheduler) -> Vec<Decision> {
    s.handle(Time(0), node(1, Resource::new(8192, 8).with(GPU, 2)))
        .expect("node");
    submit(s, 1);
    let one_gpu = Resource::new(1024, 1).with(GPU, 1);
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask(one_gpu, 3),
        },
    )
    .expect("ask");
    s.handle(Time(0), Event::Update).expect("update");
    drain(s);
    s.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    drain(s)
}

#[test]
fn memory_and_vcores_run_on_two_lanes_and_a_custom_type_on_six() {
    assert_eq!(
        Scheduler::new(config(&ResourceTypes::default()), Default::default()).resource_lanes(),
        2
    );
    let gpu = Scheduler::new(config(&gpu_types()), Default::default());
    assert_eq!(gpu.resource_lanes(), 6);
    assert_eq!(gpu.resource_types().index_of("gpu"), Some(GPU));
}

#[test]
fn a_gpu_cluster_schedules_gpus_in_every_lane() {
    let mut s = Scheduler::new(config(&gpu_types()), Default::default());
    let decisions = gpu_heartbeat(&mut s);
    let one_gpu = Resource::new(1024, 1).with(GPU, 1);
    assert_eq!(allocated(&decisions), vec![one_gpu, one_gpu]);
    assert_eq!(
        s.node_allocated(NodeId(1)),
        Some(Resource::new(2048, 2).with(GPU, 2))
    );
    assert_eq!(s.cluster_used().get(GPU), 2);
    assert_eq!(
        s.app_usage(AppId(1)),
        Some((Resource::new(2048, 2).with(GPU, 2), 2))
    );
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    // The six-lane engine forced on the same registry decides the same (it is the same engine).
    let mut six = Scheduler::with_six_lanes(config(&gpu_types()), Default::default());
    assert_eq!(gpu_heartbeat(&mut six), decisions);
}

#[test]
fn a_two_lane_engine_refuses_an_amount_of_an_unregistered_type_and_keeps_its_state() {
    let mut s = Scheduler::new(config(&ResourceTypes::default()), Default::default());
    s.handle(Time(0), node(1, Resource::new(8192, 8)))
        .expect("node");
    submit(&mut s, 1);
    drain(&mut s);

    let refused = s.handle(Time(0), node(2, Resource::new(8192, 8).with(GPU, 2)));
    assert!(
        matches!(&refused, Err(SchedError::InvalidNode { node: NodeId(2), reason }) if reason.contains("not registered")),
        "{refused:?}"
    );
    assert_eq!(s.cluster_capacity(), Resource::new(8192, 8));

    let refused = s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask(Resource::new(1024, 1).with(GPU, 1), 1),
        },
    );
    assert!(
        matches!(&refused, Err(SchedError::InvalidAsk { app: AppId(1), .. })),
        "{refused:?}"
    );
    let refused = s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(2),
            user: "bob".into(),
            queue: None,
            am_resource: Some(Resource::new(1024, 1).with(GPU, 1)),
        },
    );
    assert!(
        matches!(&refused, Err(SchedError::InvalidAsk { app: AppId(2), .. })),
        "{refused:?}"
    );
    assert!(drain(&mut s).is_empty());
    s.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    assert!(allocated(&drain(&mut s)).is_empty(), "nothing was asked");
    assert_eq!(s.queue_name(AppId(2)), None);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
}

#[test]
fn a_reload_adding_a_type_to_a_two_lane_engine_is_refused_and_the_old_configuration_kept() {
    let mut s = Scheduler::new(config(&ResourceTypes::default()), Default::default());
    let before = s.config().clone();
    let refused = s.handle(Time(0), Event::Reload(Box::new(config(&gpu_types()))));
    assert!(
        matches!(&refused, Err(SchedError::ConfigRefused(why)) if why.contains("gpu") && why.contains("restart")),
        "{refused:?}"
    );
    assert_eq!(s.config().properties(), before.properties());
    assert_eq!(s.resource_types().len(), 2);
    // The same registry reloads; so does a custom type's registry on a six-lane engine.
    s.handle(Time(0), Event::Reload(Box::new(before)))
        .expect("same types");
    let mut gpu = Scheduler::new(config(&gpu_types()), Default::default());
    gpu.handle(Time(0), Event::Reload(Box::new(config(&gpu_types()))))
        .expect("six lanes carry the custom type");
    // And the two-lane engine still schedules.
    s.handle(Time(0), node(1, Resource::new(4096, 4)))
        .expect("node");
    submit(&mut s, 1);
    s.handle(
        Time(0),
        Event::Ask {
            app: AppId(1),
            ask: ask(Resource::new(1024, 1), 2),
        },
    )
    .expect("ask");
    s.handle(Time(0), Event::Update).expect("update");
    s.handle(Time(1), Event::NodeHeartbeat { node: NodeId(1) })
        .expect("heartbeat");
    assert_eq!(
        allocated(&drain(&mut s)),
        vec![Resource::new(1024, 1), Resource::new(1024, 1)]
    );
}
