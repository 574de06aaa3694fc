//! A realistic capacity-scheduler.xml parses to the tree its admin meant.

use weft_config::capacity::{
    parse_capacity, AppOrdering, CapacityValue, MaxCapacityValue, QueueKind, QueueOrdering,
    QueueState, ResourceCalculator,
};
use weft_types::ResourceTypes;

const SAMPLE: &str = include_str!("data/capacity-scheduler.xml");

#[test]
fn the_sample_file_parses_to_the_expected_tree() {
    let (c, warnings) =
        parse_capacity(SAMPLE, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let paths: Vec<&str> = c.queues.iter().map(|q| q.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "root",
            "root.prod",
            "root.dev",
            "root.legacy",
            "root.prod.etl",
            "root.prod.reporting"
        ]
    );

    let g = &c.globals;
    assert_eq!(g.maximum_applications, 20_000);
    assert!((g.maximum_am_resource_percent - 0.2).abs() < 1e-6);
    assert_eq!(g.resource_calculator, ResourceCalculator::Dominant);
    assert_eq!(g.node_locality_delay, 20);
    assert_eq!(g.queue_mappings.len(), 3);
    assert!(!g.queue_mappings_override);
    assert!((c.preemption.natural_termination_factor - 0.5).abs() < 1e-6);
    assert!(c.preemption.observe_only);

    let root = &c.queues[0];
    assert!(
        !root.acl_submit_applications.everyone && root.acl_submit_applications.users.is_empty()
    );
    assert!(
        root.acl_administer_queue.users.contains("yarn")
            && root.acl_administer_queue.groups.contains("admins")
    );

    let prod = c.queue("root.prod").unwrap();
    assert!(matches!(
        prod.kind,
        QueueKind::Parent {
            ordering: QueueOrdering::PriorityUtilization,
            ..
        }
    ));
    let etl = c.queue("root.prod.etl").unwrap();
    assert_eq!(
        (etl.capacity.clone(), etl.maximum_capacity.clone()),
        (
            CapacityValue::Percent(60.0),
            MaxCapacityValue::Percent(80.0)
        )
    );
    assert_eq!(etl.priority, 10);
    assert!(etl.disable_preemption, "inherited from root.prod");
    assert!(etl.acl_submit_applications.users.contains("etl_svc"));
    let QueueKind::Leaf(etl_leaf) = &etl.kind else {
        panic!("etl is a leaf")
    };
    assert_eq!(etl_leaf.ordering, AppOrdering::Fifo);
    assert!(
        (etl_leaf.maximum_am_resource_percent - 0.2).abs() < 1e-6,
        "from the global key"
    );

    let reporting = c.queue("root.prod.reporting").unwrap();
    assert!(reporting
        .acl_submit_applications
        .groups
        .contains("analysts"));
    let QueueKind::Leaf(rep) = &reporting.kind else {
        panic!("reporting is a leaf")
    };
    assert_eq!(
        (rep.ordering, rep.minimum_user_limit_percent),
        (AppOrdering::Fair, 25.0)
    );

    let dev = c.queue("root.dev").unwrap();
    assert!(dev.acl_submit_applications.everyone);
    assert!(!dev.disable_preemption);
    assert_eq!(dev.maximum_allocation.map(|r| r.memory_mb()), Some(4096));
    let QueueKind::Leaf(d) = &dev.kind else {
        panic!("dev is a leaf")
    };
    assert_eq!(
        (d.user_limit_factor, d.maximum_applications),
        (2.0, Some(500))
    );
    assert_eq!(d.user_weights.get("intern"), Some(&0.5));

    let legacy = c.queue("root.legacy").unwrap();
    assert_eq!(
        (legacy.state, legacy.capacity.clone()),
        (QueueState::Stopped, CapacityValue::Percent(0.0))
    );
}

#[test]
fn a_large_generated_file_parses_completely() {
    // 40 departments of 50 leaves (the meituan preset's 2,000 leaves), each level summing to 100.
    let mut text = String::from("<configuration>\n");
    let mut prop = |name: String, value: String| {
        text.push_str(&format!("<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"));
    };
    let departments: Vec<String> = (0..40).map(|d| format!("d{d}")).collect();
    prop("root.queues".into(), departments.join(","));
    for d in &departments {
        prop(format!("root.{d}.capacity"), "2.5".into());
        let leaves: Vec<String> = (0..50).map(|l| format!("{d}_l{l}")).collect();
        prop(format!("root.{d}.queues"), leaves.join(","));
        for l in &leaves {
            prop(format!("root.{d}.{l}.capacity"), "2".into());
            prop(format!("root.{d}.{l}.user-limit-factor"), "2".into());
        }
    }
    text.push_str("</configuration>\n");
    let (c, warnings) =
        parse_capacity(&text, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty());
    assert_eq!(c.leaves().count(), 2_000);
}
