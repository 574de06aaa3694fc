//! Node-label keys on Capacity queues: inheritance and each load-time rule's message, at the
//! property it concerns.

use crate::capacity::{
    parse_capacity, AccessibleLabels, CapacityConfig, LabelCapacity, NodePartitions, PREFIX,
};
use crate::{Diagnostic, Diagnostics, Severity};
use weft_types::ResourceTypes;

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

/// Asserts exactly one error, at property `index` of `props`, containing `text`.
fn one_error(props: &[(&str, &str)], index: usize, text: &str) {
    let errs: Vec<Diagnostic> = match parse_capacity(&xml(props), &ResourceTypes::default()) {
        Ok((c, _)) => panic!("accepted: {c:?}"),
        Err(Diagnostics(d)) => d
            .into_iter()
            .filter(|d| d.severity == Severity::Error)
            .collect(),
    };
    assert_eq!(errs.len(), 1, "{errs:#?}");
    let e = &errs[0];
    assert_eq!(e.line, index as u32 + 2, "{e}");
    assert_eq!(e.path, format!("{PREFIX}{}", props[index].0), "{e}");
    assert!(e.message.contains(text), "{e}");
}

/// root.a (x at 100, DEFAULT 50) with leaves a1 (x 70) and a2 (x 30); root.b DEFAULT only.
const LABELED: &[(&str, &str)] = &[
    ("root.queues", "a,b"),
    ("root.a.capacity", "50"),
    ("root.b.capacity", "50"),
    ("root.accessible-node-labels.x.capacity", "100"),
    ("root.a.accessible-node-labels", "x"),
    ("root.a.accessible-node-labels.x.capacity", "100"),
    ("root.a.default-node-label-expression", "x"),
    ("root.a.queues", "a1,a2"),
    ("root.a.a1.capacity", "50"),
    ("root.a.a2.capacity", "50"),
    ("root.a.a1.accessible-node-labels.x.capacity", "70"),
    ("root.a.a1.accessible-node-labels.x.maximum-capacity", "80"),
    (
        "root.a.a1.accessible-node-labels.x.maximum-am-resource-percent",
        "0.5",
    ),
    ("root.a.a2.accessible-node-labels.x.capacity", "30"),
    ("root.b.accessible-node-labels", " "),
];

fn labeled_with(extra: &[(&'static str, &'static str)]) -> Vec<(&'static str, &'static str)> {
    LABELED.iter().chain(extra).copied().collect()
}

#[test]
fn labels_are_inherited_and_root_reaches_every_label() {
    let (c, warnings) = ok(LABELED);
    assert!(warnings.is_empty(), "{warnings:?}");
    let q = |p: &str| c.queue(p).expect(p);
    assert_eq!(q("root").labels.accessible, AccessibleLabels::Any);
    let only_x = AccessibleLabels::Only(["x".to_string()].into());
    assert_eq!(q("root.a").labels.accessible, only_x);
    // Unset: the parent's list and default expression.
    assert_eq!(q("root.a.a1").labels.accessible, only_x);
    assert_eq!(q("root.a.a1").labels.default_partition(), "x");
    assert_eq!(
        q("root.b").labels.accessible,
        AccessibleLabels::Only(Default::default())
    );
    assert!(q("root.b").labels.accessible.can_access(""));
    assert!(!q("root.b").labels.accessible.can_access("x"));
    assert_eq!(
        q("root.a.a1").labels.in_partition("x", false),
        LabelCapacity {
            capacity: 70.0,
            maximum_capacity: 80.0,
            maximum_am_resource_percent: Some(0.5),
        }
    );
    // Written for nothing: 0 and 100; without access: 0 and 0.
    assert_eq!(
        q("root.a.a2")
            .labels
            .in_partition("x", false)
            .maximum_capacity,
        100.0
    );
    assert_eq!(
        q("root.b").labels.in_partition("x", false).maximum_capacity,
        0.0
    );
    assert_eq!(q("root").labels.in_partition("x", true).capacity, 100.0);
    assert_eq!(c.partitions, NodePartitions::default());
}

#[test]
fn a_default_expression_the_queue_cannot_access_is_refused() {
    let props = labeled_with(&[("root.b.default-node-label-expression", "x")]);
    one_error(
        &props,
        props.len() - 1,
        "Invalid default label expression of  queue=root.b doesn't have permission to access all labels in default label expression. labelExpression of resource request=x. Queue labels=",
    );
}

#[test]
fn a_default_expression_names_one_label() {
    let props = labeled_with(&[("root.a.a1.default-node-label-expression", "x&amp;&amp;y")]);
    let index = props.len() - 1;
    let errs = match parse_capacity(&xml(&props), &ResourceTypes::default()) {
        Ok(_) => panic!("accepted"),
        Err(Diagnostics(d)) => d,
    };
    assert!(
        errs.iter().any(|e| e.line == index as u32 + 2
            && e.message
                .contains("a node label expression names one label")),
        "{errs:#?}"
    );
}

#[test]
fn sibling_capacities_in_a_label_sum_to_100() {
    let mut props = LABELED.to_vec();
    props[13] = ("root.a.a2.accessible-node-labels.x.capacity", "20");
    one_error(
        &props,
        7,
        "Illegal capacity sum of 0.9 for children of queue root.a for label=x. It should be either 0 or 1.0",
    );
}

#[test]
fn root_children_must_share_a_label_root_has() {
    let mut props = LABELED.to_vec();
    props[5] = ("root.a.accessible-node-labels.x.capacity", "40");
    one_error(
        &props,
        0,
        "Illegal capacity sum of 0.4 for children of queue root for label=x",
    );
}

#[test]
fn capacity_above_maximum_in_a_label_is_refused() {
    let mut props = LABELED.to_vec();
    props[11] = ("root.a.a1.accessible-node-labels.x.maximum-capacity", "60");
    one_error(
        &props,
        11,
        "Illegal queue capacity setting, (capacity=0.7) > (maximum-capacity=0.6) for queue root.a.a1. When label=[x]",
    );
}

#[test]
fn a_child_reaches_only_labels_its_parent_reaches() {
    let props = labeled_with(&[("root.a.a1.accessible-node-labels", "x,y")]);
    one_error(
        &props,
        props.len() - 1,
        "Some labels of child queue is not a subset of parent queue, these labels=[y]",
    );
    let props = labeled_with(&[("root.a.a1.accessible-node-labels", "*")]);
    one_error(
        &props,
        props.len() - 1,
        "Parent's accessible queue is not ANY(*), but child's accessible queue is *",
    );
}

#[test]
fn label_percentages_are_checked() {
    let props = labeled_with(&[("root.b.accessible-node-labels.y.capacity", "[memory=1024]")]);
    let index = props.len() - 1;
    let errs = match parse_capacity(&xml(&props), &ResourceTypes::default()) {
        Ok(_) => panic!("accepted"),
        Err(Diagnostics(d)) => d,
    };
    assert!(
        errs.iter().any(|e| e.line == index as u32 + 2
            && e.message
                .contains("is not a percentage (per-label capacities")),
        "{errs:#?}"
    );
    let mut props = LABELED.to_vec();
    props[12] = (
        "root.a.a1.accessible-node-labels.x.maximum-am-resource-percent",
        "2",
    );
    one_error(&props, 12, "2 is not a fraction from 0 to 1");
}

#[test]
fn settings_for_a_label_the_queue_cannot_access_are_warned_about() {
    let props = labeled_with(&[("root.a.accessible-node-labels.y.capacity", "100")]);
    let (_, warnings) = ok(&props);
    assert!(
        warnings.iter().any(|w| w.message
            == "queue root.a cannot access label y (accessible-node-labels is 'x'): its settings for the label have no effect"),
        "{warnings:#?}"
    );
}

#[test]
fn the_registry_maps_hosts_and_nms() {
    let p = NodePartitions {
        labels: vec!["x".into()],
        nodes: [
            ("h1".to_string(), "x".to_string()),
            ("h2:8041".to_string(), "x".to_string()),
        ]
        .into(),
    };
    assert_eq!(p.label_of("h1", 8041), "x");
    assert_eq!(p.label_of("H1:9", 9), "x");
    assert_eq!(p.label_of("h2", 8041), "x");
    assert_eq!(p.label_of("h2:8042", 8042), "");
    assert_eq!(p.label_of("h3", 0), "");
}
