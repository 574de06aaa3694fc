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

/// `config` with resource pools: one pool `all` covering every host and binding the whole
/// tree (an explicit binding on root), which must decide exactly as no pools at all.
pub(crate) fn one_pool(assign_multiple: bool, locality: bool) -> SchedulerConfig {
    with_pools(
        config(assign_multiple, locality, false),
        &[("all", &["h0", "h1", "h2", "h3"])],
        &[("root", "all")],
    )
}

/// `config` split over two pools: `p1` (h0, h1) holds root.a's subtree, `p2` (h2) root.b and
/// root.c's; h3 is in no pool, where queues bound to none (root.default) run.
pub(crate) fn two_pools(assign_multiple: bool, locality: bool) -> SchedulerConfig {
    with_pools(
        config(assign_multiple, locality, false),
        &[("p1", &["h0", "h1"]), ("p2", &["h2"])],
        &[("root.a", "p1"), ("root.b", "p2"), ("root.c", "p2")],
    )
}

fn with_pools(
    config: SchedulerConfig,
    pools: &[(&str, &[&str])],
    explicit: &[(&str, &str)],
) -> SchedulerConfig {
    use weft_config::pools::{PoolHost, ResourcePool, ResourcePools, UnboundQueues};
    let SchedulerConfig::Fair(mut fair) = config else {
        panic!("a Fair configuration");
    };
    fair.allocations.resource_pools = Some(ResourcePools {
        unbound_queues: UnboundQueues::DefaultPartition,
        pools: pools
            .iter()
            .map(|(name, hosts)| ResourcePool {
                name: name.to_string(),
                exclusive: true,
                hosts: hosts
                    .iter()
                    .map(|h| PoolHost {
                        host: h.to_string(),
                        port: None,
                    })
                    .collect(),
                preemption_utilization_threshold: None,
                foreign_container_timeout_ms: None,
                position: (0, 0),
            })
            .collect(),
        explicit: explicit
            .iter()
            .map(|(q, p)| (q.to_string(), p.to_string()))
            .collect(),
        ..ResourcePools::default()
    });
    SchedulerConfig::Fair(fair)
}
