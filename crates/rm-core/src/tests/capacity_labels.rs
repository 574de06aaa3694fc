//! The Capacity Scheduler over the node-label registry: labels and mappings made through the
//! admin interface reach the scheduler, a queue's apps run on its default label's nodes only,
//! and Hadoop's refusals hold (a label a queue lists cannot be removed, a node running
//! containers keeps its partition).

use weft_config::capacity::parse_capacity;
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};
use weft_types::{ResourceTypes, Time};

use super::*;
use crate::RmError;

/// root.a reaches gpu (all of it) and submits there; root.b reaches DEFAULT only.
fn labeled_core() -> RmCore {
    let props = [
        ("root.queues", "a,b"),
        ("root.a.capacity", "50"),
        ("root.b.capacity", "50"),
        ("root.accessible-node-labels.gpu.capacity", "100"),
        ("root.a.accessible-node-labels", "gpu"),
        ("root.a.accessible-node-labels.gpu.capacity", "100"),
        ("root.a.default-node-label-expression", "gpu"),
        ("root.b.accessible-node-labels", ","),
    ];
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    let (capacity, _) =
        parse_capacity(&xml, &ResourceTypes::default()).unwrap_or_else(|e| panic!("{e}"));
    let mut config = config("<allocations/>");
    config.scheduler = SchedulerConfig::Capacity(CapacitySchedulerConfig {
        capacity,
        properties: weft_config::SchedulerProperties {
            update_interval_ms: 0,
            ..Default::default()
        },
    });
    config.node_labels_enabled = true;
    let mut c = RmCore::new(config, TS, Time(0));
    register(&mut c, 0, "h1:1");
    register(&mut c, 0, "h2:1");
    drain(&mut c);
    c
}

fn submit_to(c: &mut RmCore, t: u64, user: &str, queue: &str) -> ApplicationId {
    let id = c.new_application(Time(t));
    c.submit(Time(t), id, submission(user, Some(queue)))
        .expect("submission taken");
    drain(c);
    id
}

#[test]
fn a_queues_apps_run_on_its_labels_nodes_once_the_registry_has_them() {
    let mut c = labeled_core();
    // The label is not in the cluster yet: Hadoop's refusal, the app ends FAILED.
    let early = submit_to(&mut c, 1, "alice", "a");
    let report = c.app_report(&early).expect("known app");
    assert!(
        report
            .diagnostics
            .contains("Invalid label resource request, cluster do not contain , label= gpu"),
        "{}",
        report.diagnostics
    );
    c.add_node_labels(&[("gpu".to_string(), true)])
        .expect("label added");
    c.replace_node_labels(Time(2), &[("h1".to_string(), vec!["gpu".to_string()])])
        .expect("h1 mapped");
    drain(&mut c);
    assert_eq!(c.node_label("h1:1").as_deref(), Some("gpu"));
    assert_eq!(c.scheduler().cluster_capacity().memory_mb(), 16384);
    let app = submit_to(&mut c, 3, "alice", "a");
    heartbeat(&mut c, 4, "h2:1");
    assert!(launches(&drain(&mut c)).is_empty(), "h2 is DEFAULT's");
    heartbeat(&mut c, 5, "h1:1");
    let launched = launches(&drain(&mut c));
    assert_eq!(launched.len(), 1, "the AM runs on h1");
    assert_eq!(launched[0].node_id, "h1:1");
    assert_eq!(
        c.scheduler().queue_name(weft_types::AppId(app.seq)),
        Some("root.a")
    );
    // b's apps stay off h1.
    submit_to(&mut c, 6, "bob", "b");
    heartbeat(&mut c, 7, "h1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "b cannot use gpu");
    heartbeat(&mut c, 8, "h2:1");
    assert_eq!(launches(&drain(&mut c))[0].node_id, "h2:1");
    // Hadoop's refusals: a listed label stays, and h1 keeps its partition while the AM runs.
    let e = c
        .remove_node_labels(&["gpu".to_string()])
        .expect_err("a uses gpu");
    assert!(
        matches!(&e, RmError::NodeLabels(m) if m == "Cannot remove label=gpu, because queue=a is using this label. Please remove label on queue before remove the label"),
        "{e}"
    );
    let e = c
        .replace_node_labels(Time(9), &[("h1".to_string(), vec![])])
        .expect_err("h1 runs the AM");
    assert!(
        e.to_string()
            .contains("node h1:1 runs containers in partition 'gpu'"),
        "{e}"
    );
    assert_eq!(c.node_label("h1:1").as_deref(), Some("gpu"));
    assert!(c.verify_scheduler().is_empty());
}
