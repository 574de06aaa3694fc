//! capacity-scheduler.xml: keys, defaults, inheritance and every load-time rule, each error
//! checked for its line, column and property.

use super::*;
use weft_types::Resource;

/// A file with one property per line: line 1 is `<configuration>`, property `i` (0-based) is
/// on line `i + 2`, starting at column 1.
fn xml(props: &[(&str, &str)]) -> String {
    let mut text = String::from("<configuration>\n");
    for (name, value) in props {
        text.push_str(&format!(
            "<property><name>{PREFIX}{name}</name><value>{value}</value></property>\n"
        ));
    }
    text.push_str("</configuration>\n");
    text
}

fn ok(props: &[(&str, &str)]) -> (CapacityConfig, Vec<Diagnostic>) {
    parse_capacity(&xml(props), &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(props: &[(&str, &str)]) -> Vec<Diagnostic> {
    match parse_capacity(&xml(props), &ResourceTypes::default()) {
        Ok((c, _)) => panic!("accepted: {c:?}"),
        Err(Diagnostics(d)) => d
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect(),
    }
}

/// Asserts exactly one error, on the line of property `index` of `props`, naming `property`
/// and containing `text`.
fn one_error(props: &[(&str, &str)], index: usize, text: &str) {
    let errs = errors(props);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = &errs[0];
    assert_eq!((e.line, e.column), (index as u32 + 2, 1), "{e}");
    assert_eq!(e.path, format!("{PREFIX}{}", props[index].0), "{e}");
    assert!(e.message.contains(text), "{e}");
}

const TWO: &[(&str, &str)] = &[
    ("root.queues", "a,b"),
    ("root.a.capacity", "60"),
    ("root.b.capacity", "40"),
];

fn with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    TWO.iter().chain(extra).copied().collect()
}

#[test]
fn a_minimal_file_gets_hadoops_defaults() {
    let (c, warnings) = ok(TWO);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.globals, CapacityGlobals::default());
    assert_eq!(c.preemption, CapacityPreemption::default());
    let paths: Vec<&str> = c.queues.iter().map(|q| q.path.as_str()).collect();
    assert_eq!(paths, ["root", "root.a", "root.b"]);
    let root = &c.queues[0];
    assert_eq!(root.capacity, CapacityValue::Percent(100.0));
    assert!(root.acl_submit_applications.everyone && root.acl_administer_queue.everyone);
    assert_eq!(root.state, QueueState::Running);
    let a = c.queue("root.a").unwrap();
    assert_eq!(a.parent, Some(0));
    assert_eq!(a.depth, 2);
    assert_eq!(a.capacity, CapacityValue::Percent(60.0));
    assert_eq!(a.maximum_capacity, MaxCapacityValue::Percent(100.0));
    assert_eq!(a.acl_submit_applications, crate::Acl::nobody());
    assert_eq!(a.priority, 0);
    assert!(!a.disable_preemption);
    let QueueKind::Leaf(leaf) = &a.kind else {
        panic!("root.a is a leaf")
    };
    assert_eq!(leaf.ordering, AppOrdering::Fifo);
    assert_eq!(leaf.minimum_user_limit_percent, 100.0);
    assert_eq!(leaf.user_limit_factor, 1.0);
    assert_eq!(leaf.maximum_applications, None);
    assert!((leaf.maximum_am_resource_percent - 0.1).abs() < 1e-6);
}

#[test]
fn leaf_limits_fall_back_to_the_global_keys_not_the_parent() {
    let (c, _) = ok(&[
        ("root.queues", "p"),
        ("root.p.capacity", "100"),
        ("root.p.queues", "x,y"),
        ("root.p.x.capacity", "50"),
        ("root.p.y.capacity", "50"),
        ("user-limit-factor", "2"),
        ("minimum-user-limit-percent", "25"),
        ("maximum-am-resource-percent", "0.3"),
        ("root.p.y.user-limit-factor", "-1"),
        ("root.p.y.maximum-applications", "7"),
        ("root.p.y.maximum-am-resource-percent", "0.5"),
    ]);
    let leaf = |path: &str| match &c.queue(path).unwrap().kind {
        QueueKind::Leaf(l) => l.clone(),
        QueueKind::Parent { .. } => panic!("{path} is a leaf"),
    };
    let x = leaf("root.p.x");
    assert_eq!(
        (x.user_limit_factor, x.minimum_user_limit_percent),
        (2.0, 25.0)
    );
    assert!((x.maximum_am_resource_percent - 0.3).abs() < 1e-6);
    let y = leaf("root.p.y");
    assert_eq!(
        (y.user_limit_factor, y.maximum_applications),
        (-1.0, Some(7))
    );
    assert!((y.maximum_am_resource_percent - 0.5).abs() < 1e-6);
}

#[test]
fn state_preemption_lifetimes_and_allocation_inherit_from_the_parent() {
    let (c, _) = ok(&[
        ("root.queues", "p,q"),
        ("root.p.capacity", "50"),
        ("root.q.capacity", "50"),
        ("root.p.queues", "x"),
        ("root.p.x.capacity", "100"),
        ("root.p.state", "stopped"),
        ("root.p.disable_preemption", "true"),
        ("root.p.maximum-application-lifetime", "600"),
        ("root.p.maximum-allocation-mb", "4096"),
        ("root.p.ordering-policy", "priority-utilization"),
        ("root.p.priority", "3"),
        ("root.p.x.ordering-policy", "fair"),
    ]);
    let x = c.queue("root.p.x").unwrap();
    assert_eq!((x.state, x.state_configured), (QueueState::Stopped, false));
    assert!(x.disable_preemption);
    assert_eq!(x.maximum_application_lifetime, 600);
    assert_eq!(x.maximum_allocation.map(|r| r.memory_mb()), Some(4096));
    assert_eq!(x.priority, 0, "priority is not inherited");
    let QueueKind::Leaf(leaf) = &x.kind else {
        panic!("leaf")
    };
    assert_eq!(leaf.ordering, AppOrdering::Fair);
    let p = c.queue("root.p").unwrap();
    assert!(matches!(
        p.kind,
        QueueKind::Parent {
            ordering: QueueOrdering::PriorityUtilization,
            ..
        }
    ));
    let q = c.queue("root.q").unwrap();
    assert_eq!(q.state, QueueState::Running);
    assert!(!q.disable_preemption);
}

#[test]
fn global_keys_are_read() {
    let (c, warnings) = ok(&with(&[
        ("maximum-applications", "500"),
        (
            "resource-calculator",
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        ),
        ("node-locality-delay", "-1"),
        ("rack-locality-additional-delay", "5"),
        ("queue-mappings", "u:alice:a, g:eng:b,u:%user:%user"),
        ("queue-mappings-override.enable", "true"),
        ("per-node-heartbeat.maximum-offswitch-assignments", "0"),
        ("user.bob.max-parallel-apps", "3"),
    ]));
    let g = &c.globals;
    assert_eq!(g.maximum_applications, 500);
    assert_eq!(g.resource_calculator, ResourceCalculator::Dominant);
    assert_eq!(
        (g.node_locality_delay, g.rack_locality_additional_delay),
        (-1, 5)
    );
    assert_eq!(g.queue_mappings.len(), 3);
    assert_eq!(
        g.queue_mappings[1],
        QueueMapping {
            kind: MappingKind::Group,
            source: "eng".into(),
            queue: "b".into()
        }
    );
    assert!(g.queue_mappings_override);
    assert_eq!(g.maximum_offswitch_assignments, 1);
    assert_eq!(g.per_user_max_parallel_apps.get("bob"), Some(&3));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].message.contains("below 1"));
}

#[test]
fn absolute_and_weight_capacities_are_read() {
    let (c, _) = ok(&[
        ("root.queues", "a,b"),
        ("root.a.capacity", "[memory=10240,vcores=10]"),
        ("root.a.maximum-capacity", "[memory=20480,vcores=20]"),
        ("root.b.capacity", "[memory=2048,vcores=2]"),
        ("root.a.queues", "x,y"),
        ("root.a.x.capacity", "[memory=4096,vcores=4]"),
        ("root.a.y.capacity", "[memory=6144,vcores=6]"),
    ]);
    let y = c.queue("root.a.y").unwrap();
    assert_eq!(y.capacity, CapacityValue::Absolute(Resource::new(6144, 6)));
    assert_eq!(
        y.maximum_capacity,
        MaxCapacityValue::Absolute(Resource::new(20_480, 20)),
        "an absolute queue without a maximum takes its parent's"
    );
    let (c, _) = ok(&[
        ("root.queues", "a,b"),
        ("root.a.capacity", "2w"),
        ("root.b.capacity", "1w"),
    ]);
    assert_eq!(
        c.queue("root.a").unwrap().capacity,
        CapacityValue::Weight(2.0)
    );
}

#[test]
fn user_weights_inherit_and_are_bounded_by_the_user_limit() {
    let (c, _) = ok(&with(&[
        ("root.user-settings.alice.weight", "2"),
        ("root.a.user-settings.bob.weight", "0.5"),
    ]));
    let QueueKind::Leaf(a) = &c.queue("root.a").unwrap().kind else {
        panic!("leaf")
    };
    assert_eq!(a.user_weights.get("alice"), Some(&2.0));
    assert_eq!(a.user_weights.get("bob"), Some(&0.5));
    let props = with(&[
        ("root.a.minimum-user-limit-percent", "50"),
        ("root.a.user-settings.bob.weight", "3"),
    ]);
    one_error(&props, 4, "must be between 0 and 100 / 50 (= 2");
}

#[test]
fn root_needs_children() {
    let text = "<configuration>\n</configuration>\n";
    let Err(Diagnostics(d)) = parse_capacity(text, &ResourceTypes::default()) else {
        panic!("accepted")
    };
    assert!(
        d[0].message.contains("missing child queue names for root"),
        "{d:?}"
    );
    one_error(
        &[("root.queues", " , ")],
        0,
        "missing child queue names for root",
    );
}

#[test]
fn root_capacity_must_be_100() {
    one_error(
        &with(&[("root.capacity", "90")]),
        3,
        "Illegal capacity of 90 for queue root. Must be 100.0",
    );
}

#[test]
fn capacities_out_of_range_are_refused() {
    let props = [
        ("root.queues", "a,b"),
        ("root.a.capacity", "160"),
        ("root.b.capacity", "-60"),
    ];
    let errs = errors(&props);
    assert!(
        errs.iter().any(|e| e.line == 3
            && e.message
                .contains("Illegal capacity of 160 for queue root.a")),
        "{errs:#?}"
    );
    assert!(
        errs.iter()
            .any(|e| e.line == 4 && e.message.contains("Illegal capacity of -60")),
        "{errs:#?}"
    );
    one_error(
        &with(&[("root.a.maximum-capacity", "101")]),
        3,
        "Illegal maximum-capacity of 101",
    );
    one_error(
        &[
            ("root.queues", "a,b"),
            ("root.a.capacity", "20000w"),
            ("root.b.capacity", "1w"),
        ],
        1,
        "Illegal weight=20000 for queue=root.a",
    );
}

#[test]
fn children_percentages_sum_to_100_within_hadoops_precision() {
    ok(&[
        ("root.queues", "a,b"),
        ("root.a.capacity", "30"),
        ("root.b.capacity", "70.005"),
    ]);
    one_error(
        &[
            ("root.queues", "a,b"),
            ("root.a.capacity", "30"),
            ("root.b.capacity", "70.5"),
        ],
        0,
        "Illegal capacity sum of 1.005 for children of queue root",
    );
    one_error(
        &[("root.queues", "a,b"), ("root.a.capacity", "0")],
        0,
        "Illegal capacity sum of 0",
    );
}

#[test]
fn a_zero_sum_needs_a_zero_parent_or_the_allow_flag() {
    // A parent of capacity 0 with children of capacity 0 is valid (TestParentQueue).
    ok(&[
        ("root.queues", "a,p"),
        ("root.a.capacity", "100"),
        ("root.p.queues", "x"),
        ("root.p.x.capacity", "0"),
    ]);
    let positive_children = [
        ("root.queues", "a,p"),
        ("root.a.capacity", "100"),
        ("root.p.queues", "x"),
        ("root.p.x.capacity", "100"),
    ];
    one_error(
        &positive_children,
        2,
        "has zero capacity, but child queues have positive capacities",
    );
    let mut allowed = positive_children.to_vec();
    allowed.push(("root.p.allow-zero-capacity-sum", "true"));
    ok(&allowed);
    ok(&[
        ("root.queues", "a,b"),
        ("root.a.capacity", "0"),
        ("root.b.capacity", "0"),
        ("root.allow-zero-capacity-sum", "true"),
    ]);
}

#[test]
fn capacity_above_maximum_capacity_is_refused() {
    one_error(
        &with(&[("root.a.maximum-capacity", "50")]),
        3,
        "(capacity=0.6) > (maximum-capacity=0.5) for queue root.a",
    );
    // Absolute fractions: 50% of a parent capped at 20% against a child max of 5%.
    let props = [
        ("root.queues", "p,q"),
        ("root.p.capacity", "20"),
        ("root.q.capacity", "80"),
        ("root.p.maximum-capacity", "20"),
        ("root.p.queues", "x,y"),
        ("root.p.x.capacity", "50"),
        ("root.p.y.capacity", "50"),
        ("root.p.x.maximum-capacity", "49"),
    ];
    one_error(&props, 7, "(capacity=0.5) > (maximum-capacity=0.49)");
}

#[test]
fn modes_may_not_be_mixed_among_siblings() {
    one_error(
        &[
            ("root.queues", "a,b"),
            ("root.a.capacity", "50"),
            ("root.b.capacity", "[memory=1024,vcores=1]"),
        ],
        0,
        "mixed of weight mode, percentage and absolute mode",
    );
    one_error(
        &[
            ("root.queues", "a,b"),
            ("root.a.capacity", "50"),
            ("root.b.capacity", "1w"),
        ],
        0,
        "percentage (a); weight (b)",
    );
}

#[test]
fn absolute_children_need_an_absolute_parent() {
    one_error(
        &[
            ("root.queues", "p"),
            ("root.p.capacity", "100"),
            ("root.p.queues", "x"),
            ("root.p.x.capacity", "[memory=1024,vcores=1]"),
        ],
        2,
        "Parent=root.p: When absolute minResource is used",
    );
}

#[test]
fn absolute_minimums_and_maximums_are_checked() {
    let base = [
        ("root.queues", "p"),
        ("root.p.capacity", "[memory=8192,vcores=8]"),
        ("root.p.maximum-capacity", "[memory=16384,vcores=16]"),
        ("root.p.queues", "x,y"),
        ("root.p.x.capacity", "[memory=4096,vcores=4]"),
    ];
    let mut over_parent = base.to_vec();
    over_parent.push(("root.p.y.capacity", "[memory=8192,vcores=4]"));
    one_error(&over_parent, 3, "Parent Queues capacity: <memory:8192, vCores:8> is less than to its children:<memory:12288, vCores:8>");
    let mut min_over_max = base.to_vec();
    min_over_max.push(("root.p.y.capacity", "[memory=2048,vcores=2]"));
    min_over_max.push(("root.p.y.maximum-capacity", "[memory=1024,vcores=2]"));
    one_error(
        &min_over_max,
        6,
        "Min resource configuration <memory:2048, vCores:2> is greater than its max value",
    );
    let mut max_over_parent = base.to_vec();
    max_over_parent.push(("root.p.y.capacity", "[memory=2048,vcores=2]"));
    max_over_parent.push(("root.p.y.maximum-capacity", "[memory=32768,vcores=2]"));
    one_error(
        &max_over_parent,
        6,
        "is greater than parents max value:<memory:16384, vCores:16>",
    );
}

#[test]
fn duplicate_leaf_names_are_refused() {
    one_error(
        &[
            ("root.queues", "p,q"),
            ("root.p.capacity", "50"),
            ("root.q.capacity", "50"),
            ("root.p.queues", "x"),
            ("root.q.queues", "x"),
            ("root.p.x.capacity", "100"),
            ("root.q.x.capacity", "100"),
        ],
        4,
        "Two leaf queues were named x. Leaf queue names must be distinct",
    );
    one_error(
        &[("root.queues", "a,a"), ("root.a.capacity", "100")],
        0,
        "listed twice",
    );
}

#[test]
fn states_are_running_or_stopped_and_children_cannot_run_under_a_stopped_parent() {
    one_error(
        &with(&[("root.a.state", "PAUSED")]),
        3,
        "We can only use RUNNING or STOPPED",
    );
    one_error(
        &[
            ("root.queues", "p"),
            ("root.p.capacity", "100"),
            ("root.p.queues", "x"),
            ("root.p.x.capacity", "100"),
            ("root.p.state", "STOPPED"),
            ("root.p.x.state", "RUNNING"),
        ],
        5,
        "The parent queue:root.p cannot be STOPPED as the child queue:root.p.x is in RUNNING state.",
    );
}

#[test]
fn mappings_are_well_formed_and_name_leaves() {
    one_error(
        &with(&[("queue-mappings", "u:alice:a,x:bob:b")]),
        3,
        "Illegal queue mapping x:bob:b",
    );
    one_error(
        &with(&[("queue-mappings", "u:alice:c")]),
        3,
        "mapping contains invalid or non-leaf queue c",
    );
    one_error(
        &with(&[("queue-mappings", "u:alice:root")]),
        3,
        "non-leaf queue root",
    );
    ok(&with(&[(
        "queue-mappings",
        "u:alice:root.a,g:eng:b,u:%user:%primary_group",
    )]));
}

#[test]
fn bad_values_name_their_property() {
    one_error(
        &with(&[("root.a.user-limit-factor", "two")]),
        3,
        "'two' is not a number",
    );
    one_error(
        &with(&[("root.a.ordering-policy", "lifo")]),
        3,
        "Unable to construct ordering policy for: lifo",
    );
    one_error(
        &with(&[("resource-calculator", "Foo")]),
        3,
        "not a resource calculator",
    );
    one_error(
        &with(&[("maximum-am-resource-percent", "10")]),
        3,
        "not a fraction from 0 to 1",
    );
    one_error(
        &with(&[("root.a.maximum-allocation-mb", "lots")]),
        3,
        "'lots' is not a whole number",
    );
    one_error(
        &with(&[("root.a.maximum-allocation-vcores", "0")]),
        3,
        "'0' must be a positive amount",
    );
}

#[test]
fn every_problem_is_listed_at_once_in_file_order() {
    let errs = errors(&[
        ("root.queues", "a,b"),
        ("root.a.capacity", "150"),
        ("root.b.capacity", "x"),
        ("root.a.state", "on"),
        ("queue-mappings", "bad"),
    ]);
    let lines: Vec<u32> = errs.iter().map(|e| e.line).collect();
    // The sum of root's children is not judged while one of them is refused.
    assert_eq!(lines, [3, 4, 5, 6], "{errs:#?}");
}

#[test]
fn unknown_keys_are_warnings_that_say_why() {
    let (_, warnings) = ok(&with(&[
        ("root.a.capcity", "10"),
        ("root.c.capacity", "10"),
        ("maximum-aplications", "3"),
        ("root.minimum-user-limit-percent", "50"),
        ("root.a.accessible-node-labels.gpu.capcity", "10"),
        ("root.a.leaf-queue-template.capacity", "10"),
    ]));
    let said: Vec<(u32, &str)> = warnings
        .iter()
        .map(|w| (w.line, w.message.as_str()))
        .collect();
    assert_eq!(warnings.len(), 5, "{said:#?}");
    assert!(
        said.contains(&(
            5,
            "unknown property 'capcity' for queue root.a; ignored (is it misspelt?)"
        )),
        "{said:#?}"
    );
    assert!(
        said.iter().any(|(l, m)| *l == 6
            && m.contains("root.c is not listed in yarn.scheduler.capacity.root.queues")),
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|(l, m)| *l == 7 && m.contains("unknown Capacity Scheduler property")),
        "{said:#?}"
    );
    assert!(
        said.iter()
            .any(|(l, m)| *l == 8 && m.contains("has no effect on queue root, a parent")),
        "{said:#?}"
    );
    assert!(
        said.iter().any(|(l, m)| *l == 9
            && m.contains("unknown node-label setting 'accessible-node-labels.gpu.capcity'")),
        "{said:#?}"
    );
    assert!(warnings.iter().all(|w| w.severity == Severity::Warning));
}

#[test]
fn queues_deeper_than_the_limit_are_refused() {
    let mut names: Vec<(String, String)> = Vec::new();
    let mut path = "root".to_string();
    for _ in 0..crate::MAX_QUEUE_DEPTH {
        names.push((format!("{path}.queues"), "q".into()));
        path.push_str(".q");
        names.push((format!("{path}.capacity"), "100".into()));
    }
    let props: Vec<(&str, &str)> = names
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_str()))
        .collect();
    let errs = errors(&props);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    // root.q...q at level 100 lists a child at level 101: its queues property is the 199th.
    assert_eq!(errs[0].line, 2 * (crate::MAX_QUEUE_DEPTH as u32 - 1) + 2);
    assert!(
        errs[0].message.contains("at most 100 levels deep"),
        "{}",
        errs[0]
    );
    ok(&props[..props.len() - 2]);
}

#[test]
fn the_keys_of_hadoops_shipped_file_parse_without_warnings() {
    // The properties Hadoop's own conf/capacity-scheduler.xml sets, with its values.
    let (c, warnings) = ok(&[
        ("maximum-applications", "10000"),
        ("maximum-am-resource-percent", "0.1"),
        (
            "resource-calculator",
            "org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator",
        ),
        ("root.queues", "default"),
        ("root.default.capacity", "100"),
        ("root.default.user-limit-factor", "1"),
        ("root.default.maximum-capacity", "100"),
        ("root.default.state", "RUNNING"),
        ("root.default.acl_submit_applications", "*"),
        ("root.default.acl_administer_queue", "*"),
        ("root.default.acl_application_max_priority", "*"),
        ("root.default.maximum-application-lifetime", "-1"),
        ("root.default.default-application-lifetime", "-1"),
        ("node-locality-delay", "40"),
        ("rack-locality-additional-delay", "-1"),
        ("queue-mappings", ""),
        ("queue-mappings-override.enable", "false"),
        ("per-node-heartbeat.multiple-assignments-enabled", "true"),
        ("per-node-heartbeat.maximum-container-assignments", "100"),
        ("per-node-heartbeat.maximum-offswitch-assignments", "1"),
        ("application.fail-fast", "false"),
        ("workflow-priority-mappings", ""),
        ("workflow-priority-mappings-override.enable", "false"),
    ]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.globals, CapacityGlobals::default());
    let default = c.queue("root.default").unwrap();
    assert!(default.is_leaf() && default.state_configured);
    assert!(default.acl_submit_applications.everyone);
}

#[test]
fn a_property_set_twice_keeps_the_last_value_with_a_warning() {
    let (c, warnings) = ok(&with(&[("root.a.priority", "1"), ("root.a.priority", "2")]));
    assert_eq!(c.queue("root.a").unwrap().priority, 2);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, 6);
    assert!(
        warnings[0].message.contains("also at line 5"),
        "{}",
        warnings[0]
    );
}

#[test]
fn a_zero_minimum_user_limit_percent_bounds_no_weight() {
    let (c, _) = ok(&with(&[
        ("root.a.minimum-user-limit-percent", "0"),
        ("root.a.user-settings.bob.weight", "50"),
    ]));
    let QueueKind::Leaf(a) = &c.queue("root.a").unwrap().kind else {
        panic!("leaf")
    };
    assert_eq!(a.user_weights.get("bob"), Some(&50.0));
    one_error(
        &with(&[("root.a.minimum-user-limit-percent", "101")]),
        3,
        "not a percentage from 0 to 100",
    );
}

#[test]
fn a_text_that_is_not_a_configuration_is_refused_at_its_root() {
    let Err(Diagnostics(d)) = parse_capacity("<allocations/>", &ResourceTypes::default()) else {
        panic!("accepted")
    };
    assert_eq!((d.len(), d[0].line, d[0].column), (1, 1, 1), "{d:?}");
    assert!(d[0]
        .message
        .contains("capacity-scheduler.xml's root element must be <configuration>"));
    let Err(Diagnostics(d)) =
        parse_capacity("<configuration>\n<property>", &ResourceTypes::default())
    else {
        panic!("accepted")
    };
    assert!(d[0].message.starts_with("XML syntax error"), "{d:?}");
}

#[test]
fn max_parallel_apps_is_the_smallest_along_the_branch() {
    let (c, _) = ok(&[
        ("root.queues", "p,q"),
        ("root.p.capacity", "50"),
        ("root.q.capacity", "50"),
        ("root.p.queues", "x,y"),
        ("root.p.x.capacity", "50"),
        ("root.p.y.capacity", "50"),
        ("root.p.max-parallel-apps", "10"),
        ("root.p.x.max-parallel-apps", "20"),
        ("root.p.y.max-parallel-apps", "4"),
        ("max-parallel-apps", "50"),
    ]);
    let limit = |path: &str| c.effective_max_parallel_apps(c.index_of(path).unwrap());
    assert_eq!((limit("root.p.x"), limit("root.p.y")), (10, 4));
    assert_eq!(
        limit("root.q"),
        50,
        "the global key where no ancestor sets one"
    );
}

#[test]
fn yarn_site_keys_fill_in_under_the_file_which_wins() {
    let site = |name: &str, value: &str| (format!("{PREFIX}{name}"), value.to_string());
    let text = xml(&[("root.queues", "a,b"), ("root.a.capacity", "40")]);
    let from_site = [
        site("root.a.capacity", "90"), // the file's 40 wins
        site("root.b.capacity", "60"), // only yarn-site sets it
        site("root.b.user-limit-factor", "2"),
        (
            "yarn.scheduler.minimum-allocation-mb".to_string(),
            "512".to_string(),
        ), // not a CS key
    ];
    let (config, warnings) = parse_capacity_over_site(&text, &from_site, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(warnings.is_empty(), "{warnings:?}");
    let capacity = |path: &str| config.queue(path).map(|q| q.capacity.clone());
    assert_eq!(capacity("root.a"), Some(CapacityValue::Percent(40.0)));
    assert_eq!(capacity("root.b"), Some(CapacityValue::Percent(60.0)));

    // A bad value from yarn-site.xml names its property, with no line in the file.
    let bad = [site("root.b.capacity", "sixty")];
    let Err(Diagnostics(errs)) = parse_capacity_over_site(&text, &bad, &ResourceTypes::default())
    else {
        panic!("a capacity of 'sixty' is refused")
    };
    let e = errs
        .iter()
        .find(|d| d.path == format!("{PREFIX}root.b.capacity"))
        .unwrap_or_else(|| panic!("{errs:?}"));
    assert_eq!((e.line, e.column), (0, 0));
}

#[test]
fn a_reservable_leaf_gets_hadoops_reservation_defaults() {
    let (c, warnings) = ok(&with(&[("root.a.reservable", "true")]));
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(c.reservable.len(), 1);
    assert_eq!(
        c.reservable.get("root.a"),
        Some(&crate::reservation::ReservationQueueSettings::default())
    );
    assert!(ok(TWO).0.reservable.is_empty());
}

#[test]
fn reservation_keys_are_read_on_a_reservable_leaf() {
    use crate::reservation::{ReservationAgentKind, SharingPolicyKind};
    let (c, warnings) = ok(&with(&[
        ("root.a.reservable", "true"),
        (
            "root.a.reservation-agent",
            "org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.GreedyReservationAgent",
        ),
        (
            "root.a.reservation-policy",
            "org.apache.hadoop.yarn.server.resourcemanager.reservation.NoOverCommitPolicy",
        ),
        ("root.a.reservation-window", "3600000"),
        ("root.a.instantaneous-max-capacity", "50"),
        ("root.a.average-capacity", "1"),
        ("root.a.reservation-move-on-expiry", "false"),
        ("root.a.reservation-enforcement-window", "0"),
        ("root.a.show-reservations-as-queues", "true"),
    ]));
    assert!(warnings.is_empty(), "{warnings:?}");
    let s = &c.reservable["root.a"];
    assert_eq!(s.agent, ReservationAgentKind::Greedy);
    assert_eq!(s.policy, SharingPolicyKind::NoOverCommit);
    assert_eq!(s.window_ms, 3_600_000);
    assert_eq!(s.instantaneous_max_capacity, 50.0);
    // Percent, as Hadoop reads it: 1 is 1%, whatever its documentation says.
    assert_eq!(s.average_capacity, 1.0);
    assert!(!s.move_on_expiry);
    assert_eq!(s.enforcement_window_ms, 0);
    assert!(s.show_reservations_as_queues);
}

#[test]
fn bad_reservation_settings_name_their_property() {
    one_error(
        &with(&[("root.reservable", "true")]),
        3,
        "Only Leaf Queues can be reservable for root",
    );
    one_error(
        &with(&[("root.a.reservable", "true"), ("root.a.reservation-agent", "my.Agent")]),
        4,
        "unknown reservation agent class 'my.Agent'; Weft supports org.apache.hadoop.yarn.server.resourcemanager.reservation.planning.AlignedPlannerWithGreedy",
    );
    one_error(
        &with(&[
            ("root.a.reservable", "true"),
            ("root.a.reservation-window", "0"),
        ]),
        4,
        "0 is not a window",
    );
    one_error(
        &with(&[
            ("root.a.reservable", "true"),
            ("root.a.average-capacity", "-5"),
        ]),
        4,
        "-5 is not a percentage",
    );
    one_error(
        &with(&[
            ("root.a.reservable", "true"),
            ("root.a.reservation-enforcement-window", "-1"),
        ]),
        4,
        "-1 is negative",
    );
    one_error(
        &with(&[
            ("root.a.reservable", "true"),
            ("root.a.instantaneous-max-capacity", "half"),
        ]),
        4,
        "half",
    );
}

#[test]
fn reservation_keys_on_a_queue_that_is_not_reservable_are_warnings() {
    let (c, warnings) = ok(&with(&[("root.b.reservation-window", "1000")]));
    assert!(c.reservable.is_empty());
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0].line, 5);
    assert!(
        warnings[0]
            .message
            .contains("reservation-window has no effect: queue root.b is not reservable"),
        "{}",
        warnings[0]
    );
}

/// A managed parent's `leaf-queue-template.*` is read as a leaf's keys are (spec §3.13): its
/// capacity is mandatory, the other keys take a leaf's defaults; a created leaf gets the
/// template's capacity while the siblings fit in 100 percent, then 0 with the template's
/// application cap, and `auto-create-child-queue.max-queues` bounds the children.
#[test]
fn leaf_templates_are_read_and_create_leaves() {
    let managed = [
        ("root.queues", "a,p"),
        ("root.a.capacity", "50"),
        ("root.p.capacity", "50"),
        ("root.p.auto-create-child-queue.enabled", "true"),
        ("root.p.auto-create-child-queue.max-queues", "3"),
        ("root.p.leaf-queue-template.capacity", "40"),
        ("root.p.leaf-queue-template.user-limit-factor", "2"),
        ("root.p.leaf-queue-template.ordering-policy", "fair"),
    ];
    let (mut c, warnings) = ok(&managed);
    assert!(warnings.is_empty(), "template keys are known: {warnings:?}");
    let t = &c.leaf_templates["root.p"];
    assert_eq!(t.capacity, CapacityValue::Percent(40.0));
    assert_eq!(t.maximum_capacity, MaxCapacityValue::Percent(100.0));
    assert_eq!(t.max_queues, 3);
    assert_eq!(
        (t.settings.user_limit_factor, t.settings.ordering),
        (2.0, AppOrdering::Fair)
    );
    let alice = c.add_auto_created_leaf("root.p", "alice").expect("created");
    let bob = c.add_auto_created_leaf("root.p", "bob").expect("created");
    let carol = c.add_auto_created_leaf("root.p", "carol").expect("created");
    let q = |i: usize| &c.queues[i];
    assert_eq!(
        (q(alice).path.as_str(), q(alice).capacity.clone()),
        ("root.p.alice", CapacityValue::Percent(40.0))
    );
    assert_eq!(q(bob).capacity, CapacityValue::Percent(40.0));
    assert_eq!(
        q(carol).capacity,
        CapacityValue::Percent(0.0),
        "80 + 40 > 100"
    );
    let QueueKind::Leaf(l) = &q(carol).kind else {
        panic!("a leaf")
    };
    assert_eq!(
        l.maximum_applications,
        Some(2000),
        "10000 x 0.5 x 0.4, not 0"
    );
    assert_eq!(c.queues[c.index_of("root.p").unwrap()].children().len(), 3);
    assert_eq!(
        c.auto_created_leaves(),
        [
            ("root.p".to_string(), "alice".to_string()),
            ("root.p".into(), "bob".into()),
            ("root.p".into(), "carol".into())
        ]
    );
    let full = c.add_auto_created_leaf("root.p", "dave").unwrap_err();
    assert!(full.contains("Max Child Queue limit exceeded"), "{full}");
    assert!(
        c.add_auto_created_leaf("root.a", "x").is_err(),
        "a is no managed parent"
    );
    assert!(
        c.add_auto_created_leaf("root.p", "alice").is_err(),
        "exists"
    );

    let no_capacity: Vec<(&str, &str)> = managed
        .iter()
        .copied()
        .filter(|(k, _)| *k != "root.p.leaf-queue-template.capacity")
        .collect();
    let errs = errors(&no_capacity);
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert!(
        errs[0].message.contains("leaf-queue-template.capacity"),
        "{errs:#?}"
    );
}
