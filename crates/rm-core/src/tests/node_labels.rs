//! The node-label registry: the allocation file's pools and the admin labels and mappings,
//! their refusals, the pool reload a mapping makes, and persistence.

use super::*;

const POOLS: &str = r#"<allocations>
  <resourcePools>
    <resourcePool name="pa"><host>h1</host></resourcePool>
    <resourcePool name="pb"/>
    <resourcePool name="pc"/>
  </resourcePools>
  <queue name="pa_q"/>
  <queue name="pb_q"/>
  <queue name="pc_q"/>
</allocations>"#;

fn pools_config() -> RmConfig {
    let mut c = config(POOLS);
    c.node_labels_enabled = true;
    c
}

/// A core with pools pa = {h1}, pb and pc (no hosts), and NMs h1:1, h2:1, h3:1.
fn pooled_core() -> RmCore {
    let mut c = RmCore::new(pools_config(), TS, Time(0));
    for n in ["h1:1", "h2:1", "h3:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c
}

/// Nodes and the labels to give them.
type Mapping = Vec<(String, Vec<String>)>;

fn map(node: &str, labels: &[&str]) -> Mapping {
    vec![(
        node.to_string(),
        labels.iter().map(|l| l.to_string()).collect(),
    )]
}

fn labels_of(c: &RmCore) -> Vec<(String, Option<String>)> {
    c.node_infos()
        .into_iter()
        .map(|n| (n.node_id, n.label))
        .collect()
}

#[test]
fn the_files_pools_are_labels_and_place_their_hosts() {
    let c = pooled_core();
    let names: Vec<(String, bool, &str)> = c
        .node_labels()
        .into_iter()
        .map(|l| (l.name, l.exclusive, l.source.as_str()))
        .collect();
    assert_eq!(
        names,
        [
            ("pa".to_string(), true, "allocation-file"),
            ("pb".to_string(), true, "allocation-file"),
            ("pc".to_string(), true, "allocation-file"),
        ]
    );
    assert_eq!(c.node_label("h1:1").as_deref(), Some("pa"));
    assert_eq!(c.node_label("h2:1"), None);
    assert_eq!(c.queue_partition("root.pb_q").as_deref(), Some("pb"));
    assert_eq!(c.queue_partition("pa_q").as_deref(), Some("pa"));
    assert_eq!(c.queue_partition("root.default"), None);
}

#[test]
fn mapping_a_node_moves_it_into_the_pool_and_keeps_running_containers() {
    let mut c = pooled_core();
    c.replace_node_labels(Time(10), &map("h2:1", &["pb"]))
        .expect("h2 maps into pb, which lists no hosts");
    let out = drain(&mut c);
    assert!(writes(&out).iter().any(|w| matches!(w,
        Write::NodeLabels(r) if r.mappings == [("h2:1".to_string(), "pb".to_string())])));
    assert_eq!(c.node_label("h2:1").as_deref(), Some("pb"));
    // An app of pb_q runs on h2 only: h3's heartbeat gives it nothing, h2's launches its AM.
    let app = c.new_application(Time(20));
    c.submit(Time(20), app, submission("alice", Some("pb_q")))
        .expect("pb has a host now");
    drain(&mut c);
    heartbeat(&mut c, 30, "h3:1");
    assert!(launches(&drain(&mut c)).is_empty(), "h3 is in DEFAULT");
    heartbeat(&mut c, 40, "h2:1");
    let launched = launches(&drain(&mut c));
    assert_eq!(launched.len(), 1);
    // Moving h2 to pc is a pool reload: the AM keeps running there (foreign), nothing stops.
    c.replace_node_labels(Time(50), &map("h2", &["pc"]))
        .expect("a whole host maps too");
    let out = drain(&mut c);
    assert!(
        stops(&out).is_empty() && pending_stops(&c).is_empty(),
        "a host move keeps its containers"
    );
    assert_eq!(c.node_label("h2:1").as_deref(), Some("pc"));
    let used = c
        .node_infos()
        .into_iter()
        .find(|n| n.node_id == "h2:1")
        .map(|n| n.used);
    assert_eq!(used, Some(Resource::new(1024, 1)), "the AM still holds h2");
    // Clearing the label returns h2 to DEFAULT.
    c.replace_node_labels(Time(60), &map("h2", &[]))
        .expect("clearing is allowed");
    drain(&mut c);
    assert_eq!(c.node_label("h2:1"), None);
    assert!(
        c.scheduler().verify().is_empty(),
        "{:?}",
        c.scheduler().verify()
    );
}

/// Resource-pools spec §10: a container left in pool pc by a host move is stopped once pc's
/// `foreignContainerTimeout` (30 s) has passed since the move, with YARN's PREEMPTED status
/// and the host-move diagnostic; nothing stops before.
#[test]
fn a_foreign_container_is_stopped_at_its_pools_timeout() {
    let xml = POOLS.replace(
        r#"<resourcePool name="pc"/>"#,
        r#"<resourcePool name="pc"><foreignContainerTimeout>30</foreignContainerTimeout></resourcePool>"#,
    );
    let mut config = config(&xml);
    config.node_labels_enabled = true;
    let mut c = RmCore::new(config, TS, Time(0));
    for n in ["h1:1", "h2:1", "h3:1"] {
        register(&mut c, 0, n);
    }
    drain(&mut c);
    c.replace_node_labels(Time(10), &map("h2:1", &["pb"]))
        .expect("h2 maps into pb");
    drain(&mut c);
    let app = c.new_application(Time(20));
    c.submit(Time(20), app, submission("alice", Some("pb_q")))
        .expect("pb has a host");
    drain(&mut c);
    heartbeat(&mut c, 40, "h2:1");
    let launched = launches(&drain(&mut c));
    assert_eq!(launched.len(), 1, "the AM runs on h2");
    c.replace_node_labels(Time(50), &map("h2", &["pc"]))
        .expect("h2 moves to pc");
    drain(&mut c);
    assert!(pending_stops(&c).is_empty(), "nothing stops at the move");
    let foreign: Vec<(String, Resource)> = c
        .scheduler()
        .pool_stats()
        .into_iter()
        .map(|p| (p.name, p.foreign_used))
        .collect();
    assert!(
        foreign.contains(&("pc".to_string(), Resource::new(1024, 1))),
        "{foreign:?}"
    );
    assert_eq!(c.poll_timeout(), Some(Time(30_050)), "30 s after the move");
    c.timeout(Time(30_050));
    let out = drain(&mut c);
    assert_eq!(stops(&out), [launched[0].container], "the NM stops it");
    let ended = c
        .container_reports(&app)
        .expect("known app")
        .into_iter()
        .find(|r| r.id == launched[0].container)
        .map(|r| (r.exit_status, r.diagnostics));
    assert_eq!(
        ended,
        Some((
            Some(crate::model::exit::PREEMPTED),
            "host h2 moved from resource pool pb to pc".to_string()
        ))
    );
    assert!(
        c.scheduler().verify().is_empty(),
        "{:?}",
        c.scheduler().verify()
    );
}

/// Resource-pools spec §6, scenario A4: an app of a pool whose listed hosts are all down is
/// accepted and says why it waits; once a host of the pool is up and runs its AM, it no
/// longer does.
#[test]
fn an_app_of_a_pool_without_active_nodes_says_why_it_waits() {
    let xml = POOLS.replace(
        r#"<resourcePool name="pb"/>"#,
        r#"<resourcePool name="pb"><host>h9</host></resourcePool>"#,
    );
    let mut c = RmCore::new(config(&xml), TS, Time(0));
    register(&mut c, 0, "h1:1");
    drain(&mut c);
    let app = c.new_application(Time(10));
    c.submit(Time(10), app, submission("alice", Some("pb_q")))
        .expect("pb lists a host: accepted");
    drain(&mut c);
    heartbeat(&mut c, 20, "h1:1");
    assert!(launches(&drain(&mut c)).is_empty(), "h1 is in pa");
    let diagnostics = |c: &RmCore| c.app_report(&app).expect("known app").diagnostics;
    assert_eq!(
        diagnostics(&c),
        "waiting: resource pool pb has 0 active nodes"
    );
    register(&mut c, 30, "h9:1");
    drain(&mut c);
    heartbeat(&mut c, 40, "h9:1");
    assert_eq!(launches(&drain(&mut c)).len(), 1, "the AM runs on h9");
    assert_eq!(diagnostics(&c), "");
}

#[test]
fn bad_mappings_are_refused_and_change_nothing() {
    let mut c = pooled_core();
    c.add_node_labels(&[("lend".to_string(), false), ("gpu".to_string(), true)])
        .expect("admin labels");
    drain(&mut c);
    let before = labels_of(&c);
    let cases: [(Mapping, &str); 7] = [
        (map("h9:1", &["pb"]), "unknown node h9:1"),
        (map("h2:1", &["nope"]), "unknown node label nope"),
        (map("h2:1", &["lend"]), "node label lend is non-exclusive"),
        (
            map("h1:1", &["pb"]),
            "host h1:1 belongs to resource pool pa defined in the allocation file",
        ),
        (
            map("h2:1", &["pa"]),
            "label pa is owned by the allocation file",
        ),
        (map("h2:1", &["pb", "pc"]), "at most one partition"),
        (
            map("h2:1", &["gpu"]),
            "node label gpu is not a resource pool of the allocation file",
        ),
    ];
    for (mapping, expected) in cases {
        let e = c
            .replace_node_labels(Time(5), &mapping)
            .expect_err("refused");
        assert!(e.to_string().contains(expected), "{e} vs {expected}");
        assert!(drain(&mut c).is_empty(), "a refusal writes nothing");
        assert_eq!(labels_of(&c), before);
    }
    // One bad entry refuses the whole batch.
    let mut batch = map("h2:1", &["pb"]);
    batch.extend(map("h9:1", &["pc"]));
    assert!(c.replace_node_labels(Time(6), &batch).is_err());
    assert_eq!(labels_of(&c), before);
}

#[test]
fn labels_are_added_and_removed_with_the_files_labels_protected() {
    let mut c = pooled_core();
    c.add_node_labels(&[("gpu".to_string(), true)])
        .expect("added");
    c.add_node_labels(&[("gpu".to_string(), true)])
        .expect("adding it again is a no-op");
    let e = c
        .add_node_labels(&[("gpu".to_string(), false)])
        .expect_err("exclusivity is fixed");
    assert!(
        e.to_string().contains("Exclusivity cannot be modified"),
        "{e}"
    );
    let e = c
        .add_node_labels(&[("pa".to_string(), true)])
        .expect_err("the file's");
    assert!(
        e.to_string().contains("owned by the allocation file"),
        "{e}"
    );
    let e = c
        .add_node_labels(&[("bad.name".to_string(), true)])
        .expect_err("invalid");
    assert!(e.to_string().contains("not a valid node label"), "{e}");
    let e = c
        .remove_node_labels(&["pb".to_string()])
        .expect_err("the file's");
    assert!(
        e.to_string()
            .contains("label pb is owned by the allocation file"),
        "{e}"
    );
    let e = c
        .remove_node_labels(&["ssd".to_string()])
        .expect_err("unknown");
    assert_eq!(
        e.to_string(),
        "Node label=ssd to be removed doesn't existed in cluster node labels collection."
    );
    let names =
        |c: &RmCore| -> Vec<String> { c.node_labels().into_iter().map(|l| l.name).collect() };
    assert_eq!(names(&c), ["gpu", "pa", "pb", "pc"]);
    c.remove_node_labels(&["gpu".to_string()]).expect("removed");
    assert_eq!(names(&c), ["pa", "pb", "pc"]);
}

#[test]
fn mutations_need_node_labels_enabled() {
    let mut cfg = pools_config();
    cfg.node_labels_enabled = false;
    let mut c = RmCore::new(cfg, TS, Time(0));
    register(&mut c, 0, "h2:1");
    drain(&mut c);
    for e in [
        c.add_node_labels(&[("gpu".to_string(), true)]).unwrap_err(),
        c.remove_node_labels(&["gpu".to_string()]).unwrap_err(),
        c.replace_node_labels(Time(1), &map("h2:1", &["pb"]))
            .unwrap_err(),
    ] {
        assert_eq!(e.to_string(), NODE_LABELS_DISABLED);
    }
    assert_eq!(c.node_labels().len(), 3, "reads work regardless");
}

#[test]
fn the_admin_part_survives_a_restart() {
    let mut c = pooled_core();
    c.add_node_labels(&[("gpu".to_string(), true)])
        .expect("added");
    c.replace_node_labels(Time(10), &map("h2:1", &["pb"]))
        .expect("mapped");
    drain(&mut c);
    let before = labels_of(&c);
    let r = RmCore::recover(pools_config(), stored(), 0, Time(100)).expect("recovers");
    assert_eq!(r.node_label("h2:1").as_deref(), Some("pb"));
    assert!(r.node_labels().iter().any(|l| l.name == "gpu"));
    let mut r = r;
    for n in ["h1:1", "h2:1", "h3:1"] {
        register(&mut r, 100, n);
    }
    assert_eq!(labels_of(&r), before);
}

#[test]
fn a_refused_reload_keeps_the_old_file_and_the_mappings() {
    let mut c = pooled_core();
    c.replace_node_labels(Time(10), &map("h2:1", &["pb"]))
        .expect("mapped");
    let app = c.new_application(Time(20));
    c.submit(Time(20), app, submission("alice", Some("pb_q")))
        .expect("pb has a host");
    drain(&mut c);
    // A file without pb, while pb_q has an app: refused, nothing changes.
    let without_pb = config(
        r#"<allocations>
  <resourcePools>
    <resourcePool name="pa"><host>h1</host></resourcePool>
    <resourcePool name="pc"/>
  </resourcePools>
  <queue name="pa_q"/>
  <queue name="pb_q"/>
</allocations>"#,
    )
    .scheduler;
    let e = c
        .reload(Time(30), without_pb)
        .expect_err("pb still has an app");
    assert!(
        e.to_string()
            .contains("cannot remove resource pool pb: queue root.pb_q (1 application) still has applications"),
        "{e}"
    );
    assert_eq!(c.node_label("h2:1").as_deref(), Some("pb"));
    assert_eq!(c.queue_partition("pb_q").as_deref(), Some("pb"));
    assert!(c.node_labels().iter().any(|l| l.name == "pb"));
}
