//! The cluster's capacity is the exact sum of its nodes: a node that would overflow it is
//! refused, and nodes leaving never leave a saturated remainder behind.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{Event, SchedError, Scheduler, SchedulerConfig};
use weft_types::{NodeId, Resource, ResourceTypes, Time};

fn scheduler() -> Scheduler {
    let (allocations, _) =
        parse_allocations("<allocations/>", &ResourceTypes::default()).expect("valid");
    Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    )
}

fn add(s: &mut Scheduler, id: u32, capability: Resource) -> Result<(), SchedError> {
    s.handle(
        Time(0),
        Event::NodeAdded {
            node: NodeId(id),
            host: format!("n{id}"),
            port: 0,
            rack: "/r".into(),
            capability,
        },
    )
}

#[test]
fn a_node_overflowing_the_total_is_refused_and_removals_stay_exact() {
    let mut s = scheduler();
    let huge = Resource::new(i64::MAX - 8192, 1);
    add(&mut s, 1, huge).expect("the first fits");
    match add(&mut s, 2, huge) {
        Err(SchedError::InvalidNode { node, reason }) => {
            assert_eq!(node, NodeId(2));
            assert!(reason.contains("overflow the cluster total"), "{reason}");
        }
        other => panic!("an overflowing node was taken: {other:?}"),
    }
    assert_eq!(
        s.snapshot().nodes.len(),
        1,
        "the refused node changed nothing"
    );
    add(&mut s, 3, Resource::new(4096, 4)).expect("a normal node");
    s.handle(Time(1), Event::NodeRemoved { node: NodeId(1) })
        .expect("removed");
    assert_eq!(s.snapshot().cluster_capacity, Resource::new(4096, 4));
    assert_eq!(s.verify(), Vec::<String>::new());
}
