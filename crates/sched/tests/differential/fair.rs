//! The Fair Scheduler's configurations for the differential test: a tree mixing the three
//! policies, limits, weights (zero included) and user limits, with assignmultiple and delay
//! scheduling on or off, and preemption on (short timeouts, no utilization threshold, so
//! starvation is computed whenever anything runs) or off.

use weft_config::{AllocationConfig, PolicyKind, QueueConfig, SchedulerProperties};
use weft_sched::SchedulerConfig;
use weft_types::Resource;

pub(crate) fn config(assign_multiple: bool, locality: bool, preemption: bool) -> SchedulerConfig {
    let mut allocations = AllocationConfig::default();
    let mut add = |name: &str, f: &dyn Fn(&mut QueueConfig)| {
        let mut q = QueueConfig {
            name: name.to_string(),
            ..Default::default()
        };
        f(&mut q);
        allocations.queues.insert(name.to_string(), q);
    };
    add("root.a", &|q| {
        q.is_parent = true;
        q.weight = Some(2.0);
        q.scheduling_policy = Some(PolicyKind::Drf);
        q.max_running_apps = Some(3);
    });
    add("root.a.a1", &|q| {
        q.scheduling_policy = Some(PolicyKind::Fifo)
    });
    add("root.a.a2", &|q| {
        q.min_resources = Some(Resource::new(2048, 2));
        q.scheduling_policy = Some(PolicyKind::Drf);
        q.min_share_preemption_timeout_ms = Some(0);
        q.fair_share_preemption_timeout_ms = Some(200);
    });
    add("root.b", &|q| {
        q.max_resources = Some(weft_config::ConfiguredResource::Absolute(Resource::new(
            6144, 6,
        )));
        q.max_am_share = Some(0.3);
    });
    add("root.c", &|q| {
        q.is_parent = true;
        q.fair_share_preemption_timeout_ms = Some(0);
        q.fair_share_preemption_threshold = Some(1.0);
    });
    add("root.c.c1", &|q| q.weight = Some(0.0));
    allocations.user_max_apps.insert("u1".into(), 2);
    let threshold = if locality { 0.5 } else { -1.0 };
    let properties = SchedulerProperties {
        assign_multiple,
        locality_threshold_node: threshold,
        locality_threshold_rack: threshold,
        preemption,
        preemption_cluster_utilization_threshold: 0.0,
        ..Default::default()
    };
    SchedulerConfig::fair(allocations, properties)
}
