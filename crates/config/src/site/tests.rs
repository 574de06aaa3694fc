//! Property names, values, warnings and the startup validation.

use super::*;
use crate::SchedulerKind;
use weft_types::Resource;

fn ok(pairs: &[(&str, &str)]) -> (SchedulerProperties, Vec<Diagnostic>) {
    from_pairs(pairs.iter().copied()).unwrap_or_else(|e| panic!("{e}"))
}

fn errors(pairs: &[(&str, &str)]) -> Vec<String> {
    match from_pairs(pairs.iter().copied()) {
        Err(Diagnostics(d)) => d
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .map(|d| d.to_string())
            .collect(),
        Ok(p) => panic!("accepted: {p:?}"),
    }
}

#[test]
fn defaults_without_properties() {
    let (p, w) = ok(&[]);
    assert_eq!(p, SchedulerProperties::default());
    assert!(w.is_empty());
}

#[test]
fn fair_scheduler_properties_are_read() {
    let (p, w) = ok(&[
        ("yarn.scheduler.fair.preemption", "TRUE"),
        ("yarn.scheduler.fair.assignmultiple", " true "),
        ("yarn.scheduler.fair.max.assign", "3"),
        ("yarn.scheduler.fair.user-as-default-queue", "false"),
        ("yarn.scheduler.fair.allow-undeclared-pools", "false"),
        (
            "yarn.scheduler.fair.preemption.cluster-utilization-threshold",
            "0.7",
        ),
        ("yarn.scheduler.fair.waitTimeBeforeKill", "2000"),
        ("yarn.scheduler.fair.update-interval-ms", "250"),
        ("yarn.scheduler.fair.locality.threshold.node", "0.5"),
        ("yarn.scheduler.fair.am.preemption.root.a", "false"),
        ("yarn.scheduler.fair.no-terminal-rule.check", "true"),
        ("yarn.scheduler.maximum-allocation-mb", "16384"),
        ("yarn.scheduler.maximum-allocation-vcores", "16"),
        ("yarn.scheduler.fair.allocation.file", "/etc/hadoop/fs.xml"),
        ("yarn.nodemanager.resource.memory-mb", "whatever"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert!(p.preemption && p.assign_multiple && p.no_terminal_rule_check);
    assert!(!p.user_as_default_queue && !p.allow_undeclared_pools);
    assert_eq!(p.max_assign, 3);
    assert_eq!(p.preemption_cluster_utilization_threshold, 0.7);
    assert_eq!(p.wait_time_before_kill_ms, 2000);
    assert_eq!(p.update_interval_ms, 250);
    assert_eq!(p.locality_threshold_node, 0.5);
    assert_eq!(p.am_preemption.get("root.a"), Some(&false));
    assert!(!p.am_preemption_enabled("root.a"));
    assert!(
        p.am_preemption_enabled("root.b"),
        "the global default is true"
    );
    assert_eq!(p.maximum_allocation.memory_mb(), 16384);
    assert_eq!(p.maximum_allocation.vcores(), 16);
    assert_eq!(p.allocation_file, "/etc/hadoop/fs.xml");
}

#[test]
fn out_of_range_values_are_corrected_with_warnings() {
    let (p, w) = ok(&[
        ("yarn.scheduler.fair.update-interval-ms", "-5"),
        ("yarn.scheduler.fair.locality.threshold.rack", "1.5"),
    ]);
    assert_eq!(p.update_interval_ms, 500);
    assert_eq!(p.locality_threshold_rack, 1.0);
    assert_eq!(w.len(), 2);
    assert!(w.iter().all(|d| d.severity == Severity::Warning));
}

#[test]
fn unknown_names_warn_only_under_scheduler_prefixes() {
    let (_, w) = ok(&[
        ("yarn.scheduler.fair.preemtion", "true"),
        ("yarn.resource-types.gpu.maximum-allocation", "4"),
        ("yarn.resourcemanager.address", "x"),
        ("fs.defaultFS", "hdfs://x"),
    ]);
    let paths: Vec<&str> = w.iter().map(|d| d.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            "yarn.scheduler.fair.preemtion",
            "yarn.resource-types.gpu.maximum-allocation"
        ]
    );
}

#[test]
fn bad_values_are_errors_naming_the_property() {
    let e = errors(&[
        ("yarn.scheduler.fair.preemption", "yes"),
        ("yarn.scheduler.fair.max.assign", "many"),
    ]);
    assert_eq!(
        e,
        [
            "yarn.scheduler.fair.preemption: 'yes' is not a boolean: expected true or false",
            "yarn.scheduler.fair.max.assign: 'many' is not a whole number",
        ]
    );
}

#[test]
fn resource_types_and_per_type_allocations() {
    let (p, w) = ok(&[
        ("yarn.resource-types", "gpu, fpga"),
        ("yarn.resource-types.gpu.maximum-allocation", "4"),
        ("yarn.resource-types.gpu.increment-allocation", "2"),
        ("yarn.resource-types.memory-mb.increment-allocation", "1 Gi"),
        ("yarn.scheduler.increment-allocation-mb", "7"),
        ("yarn.resource-types.vcores.increment-allocation", "3"),
    ]);
    assert_eq!(p.resource_types.index_of("gpu"), Some(2));
    assert_eq!(p.resource_types.index_of("fpga"), Some(3));
    assert_eq!(p.maximum_allocation.get(2), 4);
    assert_eq!(p.increment_allocation.get(2), 2);
    // The per-type property wins over the older one, with a warning.
    assert_eq!(p.increment_allocation.memory_mb(), 1024);
    assert_eq!(p.increment_allocation.vcores(), 3);
    assert_eq!(w.len(), 1, "{w:?}");
    assert!(w[0]
        .message
        .contains("overrides yarn.scheduler.increment-allocation-mb"));
}

#[test]
fn too_many_resource_types_is_an_error() {
    let e = errors(&[("yarn.resource-types", "a,b,c,d,e")]);
    assert_eq!(e.len(), 1);
    assert!(e[0].starts_with("yarn.resource-types: resource type 'e' cannot be added"));
}

#[test]
fn startup_validation() {
    let e = errors(&[
        ("yarn.scheduler.minimum-allocation-mb", "-1"),
        ("yarn.scheduler.minimum-allocation-vcores", "8"),
        ("yarn.scheduler.increment-allocation-mb", "0"),
    ]);
    assert_eq!(e.len(), 3, "{e:?}");
    assert!(e[0].starts_with(
        "yarn.scheduler.minimum-allocation-mb: the minimum allocation -1 MB is negative"
    ));
    assert!(e[1].starts_with(
        "yarn.scheduler.increment-allocation-mb: the increment 0 MB must be positive"
    ));
    assert!(e[2].contains("minimum allocation 8 vcores is above the maximum allocation 4 vcores"));
}

#[test]
fn site_xml_is_read_with_positions() {
    let text = r#"<?xml version="1.0"?>
<configuration>
  <property>
    <name>yarn.scheduler.fair.preemption</name>
    <value>true</value>
  </property>
  <property>
    <name>yarn.scheduler.fair.max.assign</name>
    <value>lots</value>
  </property>
</configuration>
"#;
    let e = parse_site_xml(text).unwrap_err();
    assert_eq!(e.0.len(), 1);
    assert_eq!(
        e.0[0].to_string(),
        "line 7, column 3: yarn.scheduler.fair.max.assign: 'lots' is not a whole number"
    );
    let ok_text = text.replace("lots", "2");
    let (p, w) = parse_site_xml(&ok_text).unwrap();
    assert!(p.preemption);
    assert_eq!(p.max_assign, 2);
    assert!(w.is_empty());
    assert_eq!(p.minimum_allocation, Resource::new(1024, 1));
}

#[test]
fn site_xml_structure_errors() {
    let e = parse_site_xml("<allocations/>").unwrap_err();
    assert!(e.0[0].message.contains("must be <configuration>"));
    let e =
        parse_site_xml("<configuration>\n<property><value>1</value></property>\n</configuration>")
            .unwrap_err();
    assert_eq!(
        e.0[0].to_string(),
        "line 2, column 1: property 1: the property has no <name>"
    );
    let e = parse_site_xml("<configuration>\n<property>\n</configuration>").unwrap_err();
    assert!(
        e.0[0].to_string().starts_with(
            "line 3, column 1: XML syntax error: closing tag </configuration> does not match"
        ),
        "{}",
        e.0[0]
    );
}

#[test]
fn the_scheduler_class_takes_hadoops_class_names_and_short_names() {
    let class = "yarn.resourcemanager.scheduler.class";
    assert_eq!(ok(&[]).0.scheduler_kind, SchedulerKind::Fair);
    for (value, kind) in [
        (
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler",
            SchedulerKind::Fifo,
        ),
        (
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler",
            SchedulerKind::Capacity,
        ),
        (
            "org.apache.hadoop.yarn.server.resourcemanager.scheduler.fair.FairScheduler",
            SchedulerKind::Fair,
        ),
        (" FIFO ", SchedulerKind::Fifo),
        ("capacity", SchedulerKind::Capacity),
    ] {
        let (p, w) = ok(&[(class, value)]);
        assert_eq!(p.scheduler_kind, kind, "{value}");
        assert!(w.is_empty(), "{w:?}");
    }
    let errs = errors(&[(class, "org.example.MyScheduler")]);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(
        errs[0].contains(class) && errs[0].contains("unknown scheduler 'org.example.MyScheduler'"),
        "{errs:?}"
    );
}

#[test]
fn am_preemption_queue_entry_wins_over_the_global_switch() {
    let (p, w) = ok(&[
        ("yarn.scheduler.fair.am.preemption", "false"),
        ("yarn.scheduler.fair.am.preemption.root.a.b", "true"),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert!(!p.am_preemption_default);
    assert!(p.am_preemption_enabled("root.a.b"));
    assert!(
        !p.am_preemption_enabled("root.a"),
        "no entry: the global switch"
    );
    assert!(
        !p.am_preemption_enabled("root.a.b.c"),
        "entries are exact names, not prefixes"
    );
}

#[test]
fn am_preemption_global_switch_must_be_a_boolean() {
    let e = errors(&[("yarn.scheduler.fair.am.preemption", "sometimes")]);
    assert_eq!(
        e,
        ["yarn.scheduler.fair.am.preemption: 'sometimes' is not a boolean: expected true or false"]
    );
}

#[test]
fn preemption_strategy_and_interval_are_read_and_a_bad_strategy_is_named() {
    let (p, w) = ok(&[]);
    assert!(w.is_empty());
    assert_eq!(p.preemption_strategy, crate::PreemptionStrategy::Targeted);
    assert_eq!(p.preemption_interval_ms, 5000);
    assert_eq!(p.node_heartbeat_interval_ms, 1000);
    let (p, w) = ok(&[
        ("weft.scheduler.fair.preemption.strategy", " Global "),
        ("yarn.scheduler.fair.preemptionInterval", "2500"),
        (
            "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
            "250",
        ),
    ]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(p.preemption_strategy, crate::PreemptionStrategy::Global);
    assert_eq!(p.preemption_interval_ms, 2500);
    assert_eq!(p.node_heartbeat_interval_ms, 250);
    let e = errors(&[(
        "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
        "often",
    )]);
    assert_eq!(e.len(), 1, "{e:?}");
    let e = errors(&[("weft.scheduler.fair.preemption.strategy", "greedy")]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("weft.scheduler.fair.preemption.strategy") && e[0].contains("greedy"),
        "{e:?}"
    );
}

#[test]
fn reservation_enforcement_is_hadoops_unless_guarantee_is_asked_for() {
    let (p, _) = ok(&[]);
    assert_eq!(
        p.reservation_enforcement,
        crate::ReservationEnforcement::Hadoop
    );
    let (p, w) = ok(&[("weft.reservation.enforce", " Guarantee ")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(
        p.reservation_enforcement,
        crate::ReservationEnforcement::Guarantee
    );
    let e = errors(&[("weft.reservation.enforce", "strict")]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("weft.reservation.enforce") && e[0].contains("strict"),
        "{e:?}"
    );
}

#[test]
fn the_packability_check_is_on_unless_turned_off() {
    let (p, _) = ok(&[]);
    assert!(p.reservation_packability_check);
    let (p, w) = ok(&[("weft.reservation.packability-check", " FALSE ")]);
    assert!(w.is_empty(), "{w:?}");
    assert!(!p.reservation_packability_check);
    let (p, _) = ok(&[("weft.reservation.packability-check", "true")]);
    assert!(p.reservation_packability_check);
    let e = errors(&[("weft.reservation.packability-check", "off")]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("weft.reservation.packability-check") && e[0].contains("'off'"),
        "{e:?}"
    );
}

#[test]
fn early_submission_is_refused_unless_turned_on() {
    let (p, _) = ok(&[]);
    assert!(!p.reservation_accept_early_submission);
    let (p, w) = ok(&[("weft.reservation.accept-early-submission", " True ")]);
    assert!(w.is_empty(), "{w:?}");
    assert!(p.reservation_accept_early_submission);
    let (p, _) = ok(&[("weft.reservation.accept-early-submission", "false")]);
    assert!(!p.reservation_accept_early_submission);
    let e = errors(&[("weft.reservation.accept-early-submission", "yes")]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("weft.reservation.accept-early-submission") && e[0].contains("'yes'"),
        "{e:?}"
    );
}

#[test]
fn the_cluster_max_application_priority_is_read() {
    let (p, _) = ok(&[]);
    assert_eq!(p.max_application_priority, 0);
    let (p, w) = ok(&[("yarn.cluster.max-application-priority", "10")]);
    assert!(w.is_empty(), "{w:?}");
    assert_eq!(p.max_application_priority, 10);
    let e = errors(&[("yarn.cluster.max-application-priority", "high")]);
    assert_eq!(e.len(), 1, "{e:?}");
    assert!(
        e[0].contains("yarn.cluster.max-application-priority"),
        "{e:?}"
    );
}
