//! Hadoop's refresh rules for capacity-scheduler.xml (spec §4.3): each refusal names the
//! property of the new file it concerns, with its line and column; allowed changes pass.

use std::collections::BTreeMap;
use weft_config::capacity::{
    check_maximum_allocations, check_refresh, parse_capacity, CapacityConfig, RefreshContext,
    PREFIX,
};
use weft_config::Diagnostics;
use weft_types::{Resource, ResourceTypes};

/// A file with one property per line: property `i` (0-based) is on line `i + 2`.
fn parse(props: &[(&str, &str)]) -> CapacityConfig {
    let mut text = String::from("<configuration>\n");
    for (name, value) in props {
        text.push_str(&format!(
            "<property><name>{PREFIX}{name}</name><value>{value}</value></property>\n"
        ));
    }
    text.push_str("</configuration>\n");
    match parse_capacity(&text, &ResourceTypes::default()) {
        Ok((config, _)) => config,
        Err(e) => panic!("{e}"),
    }
}

const CLUSTER_MAX: Resource = Resource::new(8192, 4);

fn check(
    old: &CapacityConfig,
    new: &CapacityConfig,
    apps: &[(&str, u32)],
) -> Result<(), Diagnostics> {
    check_with_warnings(old, new, apps).map(|warnings| assert!(warnings.is_empty(), "{warnings:?}"))
}

fn check_with_warnings(
    old: &CapacityConfig,
    new: &CapacityConfig,
    apps: &[(&str, u32)],
) -> Result<Vec<weft_config::Diagnostic>, Diagnostics> {
    let apps: BTreeMap<String, u32> = apps.iter().map(|(q, n)| ((*q).to_string(), *n)).collect();
    check_refresh(
        old,
        new,
        &RefreshContext {
            apps: &apps,
            cluster_maximum_allocation: CLUSTER_MAX,
        },
    )
}

/// Asserts one refusal at property `index` of `props` (the new file), containing `text`.
fn refused(result: Result<(), Diagnostics>, props: &[(&str, &str)], index: usize, text: &str) {
    let Err(Diagnostics(d)) = result else {
        panic!("the refresh was allowed")
    };
    assert_eq!(d.len(), 1, "{d:#?}");
    assert_eq!((d[0].line, d[0].column), (index as u32 + 2, 1), "{}", d[0]);
    assert_eq!(d[0].path, format!("{PREFIX}{}", props[index].0), "{}", d[0]);
    assert!(d[0].message.contains(text), "{}", d[0]);
}

const AB: &[(&str, &str)] = &[
    ("root.queues", "a,b"),
    ("root.a.capacity", "50"),
    ("root.b.capacity", "50"),
];
const A_ONLY: &[(&str, &str)] = &[("root.queues", "a"), ("root.a.capacity", "100")];

#[test]
fn capacities_states_and_limits_may_change() {
    let new = parse(&[
        ("root.queues", "a,b,c"),
        ("root.a.capacity", "20"),
        ("root.b.capacity", "30"),
        ("root.c.capacity", "50"),
        ("root.a.user-limit-factor", "3"),
        ("root.b.state", "STOPPED"),
        ("root.a.maximum-allocation-mb", "8192"),
    ]);
    assert_eq!(
        check(&parse(AB), &new, &[("root.a", 4), ("root.b", 2)]),
        Ok(())
    );
}

#[test]
fn a_running_queue_cannot_be_removed() {
    refused(check(&parse(AB), &parse(A_ONLY), &[]), A_ONLY, 0, "root.b cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING");
}

#[test]
fn a_stopped_queue_with_apps_is_draining_and_cannot_be_removed_until_empty() {
    let stopped: Vec<(&str, &str)> = AB
        .iter()
        .copied()
        .chain([("root.b.state", "STOPPED")])
        .collect();
    let old = parse(&stopped);
    refused(
        check(&old, &parse(A_ONLY), &[("root.b", 1)]),
        A_ONLY,
        0,
        "Current State : DRAINING (1 application(s) still in it)",
    );
    assert_eq!(check(&old, &parse(A_ONLY), &[("root.a", 3)]), Ok(()));
}

#[test]
fn a_parent_is_removable_only_when_its_whole_subtree_is_stopped() {
    let old = parse(&[
        ("root.queues", "a,p"),
        ("root.a.capacity", "50"),
        ("root.p.capacity", "50"),
        ("root.p.queues", "x"),
        ("root.p.x.capacity", "100"),
        ("root.p.state", "STOPPED"),
    ]);
    assert_eq!(check(&old, &parse(A_ONLY), &[]), Ok(()));
    let Err(Diagnostics(d)) = check(&old, &parse(A_ONLY), &[("root.p.x", 2)]) else {
        panic!("allowed")
    };
    let paths: Vec<&str> = d
        .iter()
        .map(|d| d.message.split(' ').next().unwrap_or(""))
        .collect();
    assert_eq!(paths, ["root.p", "root.p.x"], "{d:#?}");
}

#[test]
fn a_queue_cannot_move_to_another_parent() {
    let old = parse(&[
        ("root.queues", "p,q"),
        ("root.p.capacity", "50"),
        ("root.q.capacity", "50"),
        ("root.p.queues", "x,y"),
        ("root.p.x.capacity", "50"),
        ("root.p.y.capacity", "50"),
        ("root.p.x.state", "STOPPED"),
        // root.q becomes x's parent: a stopped empty leaf may.
        ("root.q.state", "STOPPED"),
    ]);
    let new_props = [
        ("root.queues", "p,q"),
        ("root.p.capacity", "50"),
        ("root.q.capacity", "50"),
        ("root.p.queues", "y"),
        ("root.p.y.capacity", "100"),
        ("root.q.queues", "x"),
        ("root.q.x.capacity", "100"),
    ];
    refused(
        check(&old, &parse(&new_props), &[]),
        &new_props,
        5,
        "x is moved from:root.p.x to:root.q.x after refresh, which is not allowed.",
    );
}

#[test]
fn a_leaf_becomes_a_parent_only_when_stopped_and_empty() {
    let new_props = [
        ("root.queues", "a,b"),
        ("root.a.capacity", "50"),
        ("root.b.capacity", "50"),
        ("root.b.queues", "x"),
        ("root.b.x.capacity", "100"),
    ];
    let new = parse(&new_props);
    refused(check(&parse(AB), &new, &[]), &new_props, 3, "Can not convert the leaf queue: root.b to parent queue since it is not yet in stopped state. Current State : RUNNING");
    let stopped: Vec<(&str, &str)> = AB
        .iter()
        .copied()
        .chain([("root.b.state", "STOPPED")])
        .collect();
    assert_eq!(check(&parse(&stopped), &new, &[]), Ok(()));
    refused(
        check(&parse(&stopped), &new, &[("root.b", 2)]),
        &new_props,
        3,
        "Current State : DRAINING (2 application(s) still in it)",
    );
}

#[test]
fn a_parent_may_become_a_leaf() {
    let old = parse(&[
        ("root.queues", "a,p"),
        ("root.a.capacity", "50"),
        ("root.p.capacity", "50"),
        ("root.p.queues", "x"),
        ("root.p.x.capacity", "100"),
        ("root.p.x.state", "STOPPED"),
    ]);
    let new = parse(&[
        ("root.queues", "a,p"),
        ("root.a.capacity", "50"),
        ("root.p.capacity", "50"),
    ]);
    assert_eq!(check(&old, &new, &[]), Ok(()));
}

#[test]
fn managed_parents_cannot_be_converted_either_way() {
    let managed = [
        ("root.queues", "a,m"),
        ("root.a.capacity", "50"),
        ("root.m.capacity", "50"),
        ("root.m.auto-create-child-queue.enabled", "true"),
        ("root.m.leaf-queue-template.capacity", "10"),
    ];
    let plain_parent = [
        ("root.queues", "a,m"),
        ("root.a.capacity", "50"),
        ("root.m.capacity", "50"),
        ("root.m.queues", "x"),
        ("root.m.x.capacity", "100"),
        ("root.m.x.state", "STOPPED"),
    ];
    refused(
        check(&parse(&plain_parent), &parse(&managed), &[]),
        &managed,
        3,
        "Can not convert parent queue: root.m to auto create enabled parent queue",
    );
    let Err(Diagnostics(d)) = check(&parse(&managed), &parse(&plain_parent), &[]) else {
        panic!("allowed")
    };
    assert_eq!(d.len(), 1, "{d:#?}");
    assert!(
        d[0].message
            .contains("Cannot convert auto create enabled parent queue: root.m to leaf queue"),
        "{}",
        d[0]
    );
}

#[test]
fn a_leafs_maximum_allocation_may_grow_but_not_shrink() {
    let old = parse(&[
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        ("root.a.maximum-allocation-mb", "4096"),
    ]);
    let grown = parse(&[
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        ("root.a.maximum-allocation-mb", "8192"),
    ]);
    assert_eq!(check(&old, &grown, &[]), Ok(()));
    let shrunk_props = [
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        ("root.a.maximum-allocation-vcores", "2"),
    ];
    refused(
        check(&parse(A_ONLY), &parse(&shrunk_props), &[]),
        &shrunk_props,
        2,
        "Trying to reinitialize root.a the maximum allocation size can not be decreased! Current setting: <memory:8192, vCores:4>, trying to set it to: <memory:8192, vCores:2>",
    );
}

#[test]
fn a_maximum_allocation_above_the_clusters_is_refused() {
    let props = [
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        ("root.a.maximum-allocation-mb", "16384"),
    ];
    let config = parse(&props);
    let Err(Diagnostics(d)) = check_maximum_allocations(&config, CLUSTER_MAX) else {
        panic!("allowed")
    };
    assert_eq!((d.len(), d[0].line), (1, 4), "{d:#?}");
    assert!(
        d[0].message.contains(
            "Queue maximum allocation cannot be larger than the cluster setting for queue root.a"
        ),
        "{}",
        d[0]
    );
    assert!(
        check(&parse(A_ONLY), &config, &[]).is_err(),
        "a refresh applies the same rule"
    );
}

#[test]
fn every_refusal_is_listed() {
    let Err(Diagnostics(d)) = check(
        &parse(&[
            ("root.queues", "a,b,c"),
            ("root.a.capacity", "50"),
            ("root.b.capacity", "25"),
            ("root.c.capacity", "25"),
        ]),
        &parse(A_ONLY),
        &[],
    ) else {
        panic!("allowed")
    };
    assert_eq!(d.len(), 2, "{d:#?}");
}

#[test]
fn a_startup_only_setting_changed_by_a_refresh_is_a_warning() {
    let props = [
        ("root.queues", "a"),
        ("root.a.capacity", "100"),
        (
            "resource-calculator",
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        ),
    ];
    let warnings =
        check_with_warnings(&parse(A_ONLY), &parse(&props), &[]).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(
        (warnings[0].line, warnings[0].severity),
        (4, weft_config::Severity::Warning)
    );
    assert!(
        warnings[0]
            .message
            .contains("read only when the scheduler starts"),
        "{}",
        warnings[0]
    );
}
