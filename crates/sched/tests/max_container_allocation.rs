//! A queue's maximum allocation (`maxContainerAllocation`, spec §9.3; Hadoop's
//! `getMaximumResourceCapability(queue)`): own or the nearest ancestor's, a value unbounded in
//! every type counting as unset, capped by the scheduler's maximum allocation.

use weft_config::alloc_file::parse_allocations;
use weft_sched::{Event, FifoConfig, Scheduler, SchedulerConfig};
use weft_types::{AppId, Resource, ResourceTypes, Time};

const QUEUES: &str = r#"<allocations>
  <queue name="root">
    <maxContainerAllocation>4096 mb, 4 vcores</maxContainerAllocation>
    <queue name="plain"/>
    <queue name="small"><maxContainerAllocation>2048 mb, 1 vcores</maxContainerAllocation>
      <queue name="child"/>
    </queue>
    <queue name="big"><maxContainerAllocation>16384 mb, 2 vcores</maxContainerAllocation></queue>
    <queue name="open">
      <maxContainerAllocation>memory-mb=9223372036854775807, vcores=9223372036854775807</maxContainerAllocation>
    </queue>
  </queue>
</allocations>"#;

fn submit(s: &mut Scheduler, app: u64, queue: &str) {
    s.handle(
        Time(0),
        Event::AppSubmitted {
            app: AppId(app),
            user: "u".into(),
            queue: Some(queue.into()),
            am_resource: None,
        },
    )
    .expect("submitted");
}

#[test]
fn the_queue_maximum_is_inherited_and_capped_by_the_scheduler_maximum() {
    let (allocations, _) =
        parse_allocations(QUEUES, &ResourceTypes::default()).expect("valid allocations");
    // The scheduler's maximum is yarn-site's default, 8192 MB / 4 vcores.
    let mut s = Scheduler::new(
        SchedulerConfig::fair(allocations, Default::default()),
        Default::default(),
    );
    let cases = [
        // Nothing of its own: root's.
        (1, "plain", Resource::new(4096, 4)),
        // Its parent's, not root's.
        (3, "small.child", Resource::new(2048, 1)),
        // Its own, memory capped at the scheduler's 8192 MB.
        (4, "big", Resource::new(8192, 2)),
        // Unbounded in every type counts as unset (Hadoop compares with unbounded()): root's.
        (5, "open", Resource::new(4096, 4)),
    ];
    for (app, queue, _) in cases {
        submit(&mut s, app, queue);
    }
    for (app, queue, max) in cases {
        assert_eq!(
            s.max_container_allocation(AppId(app)),
            Some(max),
            "app in {queue}"
        );
        let snapshot = s.snapshot();
        let q = snapshot
            .queues
            .iter()
            .find(|q| q.name == format!("root.{queue}"))
            .expect("queue in the snapshot");
        assert_eq!(q.max_container_allocation, max, "{queue} in the snapshot");
    }
    let snapshot = s.snapshot();
    let small = snapshot
        .queues
        .iter()
        .find(|q| q.name == "root.small")
        .expect("parent in the snapshot");
    assert_eq!(
        small.max_container_allocation,
        Resource::new(2048, 1),
        "its own"
    );
    assert_eq!(s.max_container_allocation(AppId(99)), None);
}

#[test]
fn fifo_has_only_the_scheduler_maximum() {
    let mut s = Scheduler::new(
        SchedulerConfig::Fifo(FifoConfig::default()),
        Default::default(),
    );
    submit(&mut s, 1, "anything");
    let max = s.max_container_allocation(AppId(1)).expect("known app");
    assert_eq!((max.memory_mb(), max.vcores()), (8192, 4));
}
