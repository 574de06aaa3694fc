//! The Capacity Scheduler's configurations for the differential test: the generator's tree
//! (`root.a.a1`, `root.a.a2`, `root.b`, `root.c.c1`, `root.default`) with guarantees and
//! maximums that bind, a zero-capacity leaf, user limits (minimum-user-limit-percent,
//! user-limit-factor), small AM limits and application caps, `fair` and `fifo` leaves,
//! `utilization` or `priority-utilization` at the root, and the switches of one heartbeat
//! (delay scheduling, continue looking, off-switch and container caps, the calculator);
//! application priorities up to 2; `max-parallel-apps` on a parent, a leaf and a user.

use weft_config::capacity::parse_capacity;
use weft_config::SchedulerProperties;
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};
use weft_types::{Resource, ResourceTypes};

/// The knobs one case varies.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Knobs {
    pub(crate) fair_leaves: bool,
    pub(crate) priority_utilization: bool,
    pub(crate) locality: bool,
    pub(crate) continue_looking: bool,
    pub(crate) several_offswitch: bool,
    pub(crate) dominant: bool,
}

pub(crate) fn config(k: Knobs) -> SchedulerConfig {
    let leaf_policy = if k.fair_leaves { "fair" } else { "fifo" };
    let root_policy = if k.priority_utilization {
        "priority-utilization"
    } else {
        "utilization"
    };
    let calculator = if k.dominant {
        "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
    } else {
        "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator"
    };
    let props: &[(&str, String)] = &[
        ("root.queues", "a,b,c,default".into()),
        ("root.ordering-policy", root_policy.into()),
        ("root.a.capacity", "40".into()),
        ("root.a.priority", "1".into()),
        ("root.a.max-parallel-apps", "3".into()),
        ("root.a.queues", "a1,a2".into()),
        ("root.a.a1.capacity", "50".into()),
        ("root.a.a1.minimum-user-limit-percent", "50".into()),
        ("root.a.a1.ordering-policy", leaf_policy.into()),
        ("root.a.a2.capacity", "50".into()),
        ("root.a.a2.maximum-capacity", "60".into()),
        ("root.a.a2.user-limit-factor", "2".into()),
        ("root.a.a2.maximum-am-resource-percent", "0.3".into()),
        ("root.b.capacity", "30".into()),
        ("root.b.maximum-capacity", "50".into()),
        ("root.b.maximum-applications", "3".into()),
        ("root.b.ordering-policy", leaf_policy.into()),
        (
            "root.b.ordering-policy.fair.enable-size-based-weight",
            "true".into(),
        ),
        ("root.c.capacity", "30".into()),
        ("root.c.queues", "c1".into()),
        ("root.c.c1.capacity", "100".into()),
        ("root.c.c1.user-limit-factor", "-1".into()),
        ("root.c.c1.minimum-user-limit-percent", "34".into()),
        ("root.c.c1.max-parallel-apps", "2".into()),
        ("user.u1.max-parallel-apps", "2".into()),
        ("root.default.capacity", "0".into()),
        ("root.default.maximum-capacity", "30".into()),
        ("root.default.maximum-applications", "4".into()),
        (
            "node-locality-delay",
            if k.locality { "2" } else { "-1" }.into(),
        ),
        (
            "rack-locality-additional-delay",
            if k.locality { "1" } else { "-1" }.into(),
        ),
        (
            "reservations-continue-look-all-nodes",
            k.continue_looking.to_string(),
        ),
        (
            "per-node-heartbeat.maximum-offswitch-assignments",
            if k.several_offswitch { "3" } else { "1" }.into(),
        ),
        (
            "per-node-heartbeat.maximum-container-assignments",
            "4".into(),
        ),
        ("resource-calculator", calculator.into()),
    ];
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) =
        parse_capacity(&xml, &ResourceTypes::default()).expect("the test's configuration is valid");
    SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties: SchedulerProperties {
            minimum_allocation: Resource::new(512, 1),
            increment_allocation: Resource::new(512, 1),
            max_application_priority: 2,
            ..Default::default()
        },
    })
}
