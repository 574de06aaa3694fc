//! An in-process RM running the Capacity Scheduler on 127.0.0.1 with ephemeral ports: it reads
//! capacity-scheduler.xml from its configuration directory over yarn-site's Capacity keys,
//! refuses to start on a bad file, and refreshes the queues with Hadoop's rules (a refused
//! refresh keeps the running queues).

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_rm::{RmArgs, RunningRm};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

const CS_CLASS: &str =
    "org.apache.hadoop.yarn.server.resourcemanager.scheduler.capacity.CapacityScheduler";

/// A Hadoop configuration file of `yarn.scheduler.capacity.*` pairs (`other` as they are).
fn conf(capacity: &[(&str, &str)], other: &[(&str, &str)]) -> String {
    let mut xml = String::from("<?xml version=\"1.0\"?>\n<configuration>\n");
    for (name, value) in capacity {
        xml.push_str(&format!(
            "  <property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    for (name, value) in other {
        xml.push_str(&format!(
            "  <property><name>{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    xml
}

/// RM flags with the configuration in `dir/conf` (yarn-site.xml naming the Capacity
/// Scheduler, with `site` among its properties).
fn args(dir: &Path, site: &[(&str, &str)]) -> RmArgs {
    let conf_dir = dir.join("conf");
    std::fs::create_dir_all(&conf_dir).unwrap();
    let yarn_site = conf_dir.join("yarn-site.xml");
    let mut other = vec![("yarn.resourcemanager.scheduler.class", CS_CLASS)];
    other.extend_from_slice(site);
    std::fs::write(&yarn_site, conf(&[], &other)).unwrap();
    RmArgs {
        yarn_site: Some(yarn_site),
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        allocations_poll_ms: Some(60_000),
        ..RmArgs::default()
    }
}

fn write_capacity(dir: &Path, props: &[(&str, &str)]) {
    std::fs::write(
        dir.join("conf").join("capacity-scheduler.xml"),
        conf(props, &[]),
    )
    .unwrap();
}

/// One REST call: (status, JSON body).
fn call(rm: &RunningRm, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{}{path}", rm.web);
    let result = match (method, body) {
        ("GET", _) => agent.get(&url).call(),
        ("POST", None) => agent.post(&url).send_empty(),
        ("POST", Some(b)) => agent.post(&url).send_json(b),
        ("PUT", Some(b)) => agent.put(&url).send_json(b),
        ("PUT", None) => agent.put(&url).send_empty(),
        _ => panic!("unsupported call {method} {path}"),
    };
    let mut r = result.expect("the RM answers");
    let text = r.body_mut().read_to_string().unwrap_or_default();
    (
        r.status().as_u16(),
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

fn submit(rm: &RunningRm, queue: &str, user: &str) -> String {
    let (status, v) = call(rm, "POST", "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200, "{v}");
    let id = v["application-id"].as_str().unwrap().to_string();
    let submission = json!({
        "application-id": id,
        "application-name": "t",
        "queue": queue,
        "am-container-spec": {"commands": {"command": "sleep 100"}},
        "resource": {"memory": 1024, "vCores": 1},
    });
    let (status, v) = call(
        rm,
        "POST",
        &format!("/ws/v1/cluster/apps?user.name={user}"),
        Some(submission),
    );
    assert_eq!(status, 202, "{v}");
    id
}

#[test]
fn a_bad_or_missing_capacity_file_stops_the_rm_naming_the_file_line_and_property() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = args(dir.path(), &[]);
    let missing = rt
        .block_on(weft_rm::start(a.clone()))
        .err()
        .expect("no capacity-scheduler.xml: refused");
    let text = format!("{missing:#}");
    assert!(text.contains("conf/capacity-scheduler.xml"), "{text}");
    assert!(text.contains("--conf-dir"), "{text}");

    // Line 4 is the second property (line 1 the XML declaration, line 2 <configuration>).
    write_capacity(
        dir.path(),
        &[("root.queues", "a"), ("root.a.capacity", "all of it")],
    );
    let bad = rt
        .block_on(weft_rm::start(a))
        .err()
        .expect("a bad capacity is refused");
    let text = format!("{bad:#}");
    assert!(text.contains("capacity-scheduler.xml"), "{text}");
    assert!(text.contains("line 4, column 3"), "{text}");
    assert!(
        text.contains("yarn.scheduler.capacity.root.a.capacity"),
        "{text}"
    );
}

#[test]
fn a_queue_maximum_allocation_above_yarn_sites_is_refused_at_startup() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = args(
        dir.path(),
        &[("yarn.scheduler.maximum-allocation-mb", "4096")],
    );
    write_capacity(
        dir.path(),
        &[
            ("root.queues", "a"),
            ("root.a.capacity", "100"),
            ("root.a.maximum-allocation-mb", "8192"),
        ],
    );
    let e = rt
        .block_on(weft_rm::start(a))
        .err()
        .expect("8192 MB is above the cluster's 4096");
    let text = format!("{e:#}");
    assert!(
        text.contains(
            "Queue maximum allocation cannot be larger than the cluster setting for queue root.a"
        ),
        "{text}"
    );
    assert!(
        text.contains("yarn.scheduler.capacity.root.a.maximum-allocation-mb"),
        "{text}"
    );
}

#[test]
fn the_rm_runs_capacity_from_its_conf_dir_and_refreshes_with_hadoops_rules() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    // yarn-site.xml sets b's capacity and a's; the file's a wins.
    let a = args(
        dir.path(),
        &[
            ("yarn.scheduler.capacity.root.a.capacity", "10"),
            ("yarn.scheduler.capacity.root.b.capacity", "50"),
            ("yarn.cluster.max-application-priority", "10"),
        ],
    );
    write_capacity(
        dir.path(),
        &[("root.queues", "a,b"), ("root.a.capacity", "50")],
    );
    let rm = rt.block_on(weft_rm::start(a)).expect("the RM starts");
    let id = submit(&rm, "a", "alice");
    let (_, v) = call(&rm, "GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(v["app"]["queue"], "root.a", "{v}");

    // Hadoop's capacityScheduler answer: root flattened into schedulerInfo, leaves typed.
    let (status, before) = call(&rm, "GET", "/ws/v1/cluster/scheduler", None);
    assert_eq!(status, 200, "{before}");
    let info = &before["scheduler"]["schedulerInfo"];
    assert_eq!(info["type"], "capacityScheduler", "{info}");
    assert_eq!(info["queueName"], "root");
    assert_eq!(info["capacity"], 100.0);
    assert_eq!(info["numApplications"], 1);
    let queues = info["queues"]["queue"].as_array().expect("root's children");
    let a = &queues[0];
    assert_eq!(
        (&a["queueName"], &a["queuePath"], &a["type"]),
        (
            &json!("a"),
            &json!("root.a"),
            &json!("capacitySchedulerLeafQueueInfo")
        )
    );
    assert_eq!(
        a["capacity"], 50.0,
        "the file's 50 wins over yarn-site's 10"
    );
    assert_eq!(
        queues[1]["capacity"], 50.0,
        "b's capacity comes from yarn-site.xml"
    );
    assert_eq!(a["state"], "RUNNING");
    assert_eq!(
        (
            &a["numApplications"],
            &a["userLimit"],
            &a["userLimitFactor"]
        ),
        (&json!(1), &json!(100), &json!(1.0))
    );
    // No node yet: the app waits for activation.
    assert_eq!(a["numPendingApplications"], 1, "{a}");
    assert_eq!(
        a["capacities"]["queueCapacitiesByPartition"][0]["partitionName"], "",
        "{a}"
    );

    // A refresh deleting a (RUNNING, with alice's app) is refused and keeps the queues.
    write_capacity(
        dir.path(),
        &[("root.queues", "b"), ("root.b.capacity", "100")],
    );
    let (status, v) = call(&rm, "PUT", "/ws/v1/cluster/admin/refresh-queues", None);
    assert_eq!(status, 400, "{v}");
    let (_, after) = call(&rm, "GET", "/ws/v1/cluster/scheduler", None);
    assert_eq!(after, before, "a refused refresh changes no queue");
    // The web UI says so on every page until a good file loads.
    let (status, page) = call(&rm, "GET", "/cluster/scheduler", None);
    assert_eq!(status, 200);
    let page = page.as_str().unwrap_or_default().to_string();
    assert!(
        page.contains("<strong>Queue configuration refused</strong>"),
        "{page}"
    );
    assert!(page.contains("cannot be deleted"), "{page}");
    assert!(
        v.to_string().contains(
            "root.a cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : RUNNING"
        ),
        "{v}"
    );
    let id2 = submit(&rm, "a", "bob");
    let (_, v) = call(&rm, "GET", &format!("/ws/v1/cluster/apps/{id2}"), None);
    assert_eq!(v["app"]["queue"], "root.a", "a still takes apps: {v}");
    assert_eq!(v["app"]["state"], "ACCEPTED", "{v}");

    // Stopping a is accepted: it drains (it has apps) and takes no new one.
    write_capacity(
        dir.path(),
        &[
            ("root.queues", "a,b"),
            ("root.a.capacity", "50"),
            ("root.a.state", "STOPPED"),
        ],
    );
    let (status, v) = call(&rm, "PUT", "/ws/v1/cluster/admin/refresh-queues", None);
    assert_eq!(status, 200, "{v}");
    let (_, v) = call(&rm, "GET", "/ws/v1/cluster/scheduler", None);
    let a = &v["scheduler"]["schedulerInfo"]["queues"]["queue"][0];
    assert_eq!(
        (&a["queueName"], &a["state"]),
        (&json!("a"), &json!("DRAINING")),
        "{a}"
    );
    let id3 = submit(&rm, "a", "carol");
    let (_, v) = call(&rm, "GET", &format!("/ws/v1/cluster/apps/{id3}"), None);
    assert_eq!(v["app"]["state"], "FAILED", "{v}");
    assert!(
        v["app"]["diagnostics"]
            .as_str()
            .is_some_and(|d| d.contains("Queue root.a is STOPPED")),
        "{v}"
    );

    // The Capacity Scheduler takes a new priority, capped at the cluster's maximum.
    let (status, v) = call(
        &rm,
        "PUT",
        &format!("/ws/v1/cluster/apps/{id}/priority?user.name=alice"),
        Some(json!({"priority": 42})),
    );
    assert_eq!((status, &v), (200, &json!({"priority": 10})));
    rt.block_on(rm.stop());
}

/// The queue an app is in, from the apps API.
fn queue_of(rm: &RunningRm, app: &str) -> String {
    let (status, v) = call(rm, "GET", &format!("/ws/v1/cluster/apps/{app}"), None);
    assert_eq!(status, 200, "{v}");
    v["app"]["queue"].as_str().unwrap_or_default().to_string()
}

/// The groups the RM maps `user` to (`rmadmin -getGroups`).
fn groups_of(rm: &RunningRm, user: &str) -> Value {
    let (status, v) = call(
        rm,
        "GET",
        &format!("/ws/v1/cluster/admin/groups?user={user}"),
        None,
    );
    assert_eq!(status, 200, "{v}");
    v["groups"]["groups"].clone()
}

/// Queue mappings in the daemon read the users' groups the way Hadoop's default mapping does:
/// the static overrides first, then the passwd and group databases (here files of the test's
/// own, named by Weft's keys), cached until `-refreshUserToGroupsMappings`.
#[test]
fn group_mappings_place_apps_by_the_groups_the_rm_resolves() {
    let dir = tempfile::tempdir().unwrap();
    let passwd = dir.path().join("passwd");
    let group = dir.path().join("group");
    std::fs::write(&passwd, "bob:x:1001:1001::/home/bob:/bin/sh\n").unwrap();
    std::fs::write(&group, "bob:x:1001:\neng:x:2000:bob\nops:x:2001:\n").unwrap();
    let rt = runtime();
    let a = args(
        dir.path(),
        &[
            (
                "hadoop.user.group.static.mapping.overrides",
                "alice=ops;dr.who=;",
            ),
            (
                "weft.security.group.mapping.passwd-file",
                passwd.to_str().unwrap(),
            ),
            (
                "weft.security.group.mapping.group-file",
                group.to_str().unwrap(),
            ),
        ],
    );
    write_capacity(
        dir.path(),
        &[
            ("root.queues", "default,eng,ops"),
            ("root.default.capacity", "40"),
            ("root.eng.capacity", "30"),
            ("root.ops.capacity", "30"),
            ("queue-mappings", "g:eng:eng,g:ops:ops"),
        ],
    );
    let rm = rt.block_on(weft_rm::start(a)).expect("the RM starts");
    // bob's groups come from the files: his primary group, then eng, which maps him.
    assert_eq!(groups_of(&rm, "bob"), json!(["bob", "eng"]));
    let first = submit(&rm, "default", "bob");
    assert_eq!(queue_of(&rm, &first), "root.eng");
    // alice's come from the static overrides (she is in no file).
    assert_eq!(groups_of(&rm, "alice"), json!(["ops"]));
    let hers = submit(&rm, "default", "alice");
    assert_eq!(queue_of(&rm, &hers), "root.ops");
    // bob moves from eng to ops in the files: the RM keeps its cached answer (300 s) ...
    std::fs::write(&group, "bob:x:1001:\neng:x:2000:\nops:x:2001:bob\n").unwrap();
    let second = submit(&rm, "default", "bob");
    assert_eq!(queue_of(&rm, &second), "root.eng");
    // ... until an administrator refreshes the mappings (the shipped yarn.admin.acl is *).
    let (status, v) = call(
        &rm,
        "PUT",
        "/ws/v1/cluster/admin/refresh-user-groups?user.name=admin",
        Some(json!({})),
    );
    assert_eq!(status, 200, "{v}");
    let third = submit(&rm, "default", "bob");
    assert_eq!(queue_of(&rm, &third), "root.ops");
    assert_eq!(groups_of(&rm, "bob"), json!(["bob", "ops"]));
    // A user the files do not know has no groups; a g: mapping then fails the submission as
    // Hadoop's group service does.
    let (status, v) = call(&rm, "POST", "/ws/v1/cluster/apps/new-application", None);
    assert_eq!(status, 200, "{v}");
    let id = v["application-id"].as_str().unwrap().to_string();
    let (status, v) = call(
        &rm,
        "POST",
        "/ws/v1/cluster/apps?user.name=mallory",
        Some(json!({
            "application-id": id,
            "application-name": "t",
            "am-container-spec": {"commands": {"command": "sleep 100"}},
            "resource": {"memory": 1024, "vCores": 1},
        })),
    );
    assert_eq!(status, 202, "{v}");
    let (_, report) = call(&rm, "GET", &format!("/ws/v1/cluster/apps/{id}"), None);
    assert_eq!(report["app"]["state"], "FAILED", "{report}");
    let diagnostics = report["app"]["diagnostics"].as_str().unwrap_or_default();
    assert!(
        diagnostics.contains("No groups found for user mallory"),
        "{diagnostics}"
    );
    rt.block_on(rm.stop());
}

/// A move under the Capacity Scheduler goes through the REST API to the scheduler: a leaf that
/// takes the app accepts it (the apps API then names the new leaf), a parent or a full leaf
/// refuses it with Hadoop's reason and the app stays where it was (spec §7.5).
#[test]
fn moves_between_leaves_reach_the_capacity_scheduler() {
    let dir = tempfile::tempdir().unwrap();
    let rt = runtime();
    let a = args(dir.path(), &[]);
    write_capacity(
        dir.path(),
        &[
            ("root.queues", "a,b,full,p"),
            ("root.a.capacity", "40"),
            ("root.b.capacity", "40"),
            ("root.full.capacity", "10"),
            ("root.full.maximum-applications", "1"),
            ("root.p.capacity", "10"),
            ("root.p.queues", "x"),
            ("root.p.x.capacity", "100"),
        ],
    );
    let rm = rt.block_on(weft_rm::start(a)).expect("the RM starts");
    let id = submit(&rm, "a", "alice");
    submit(&rm, "full", "bob");
    let move_to = |queue: &str| {
        call(
            &rm,
            "PUT",
            &format!("/ws/v1/cluster/apps/{id}/queue?user.name=alice"),
            Some(json!({"queue": queue})),
        )
    };
    let (status, v) = move_to("b");
    assert_eq!(status, 200, "{v}");
    assert_eq!(queue_of(&rm, &id), "root.b");
    let (status, v) = move_to("p");
    assert!(status >= 400, "{status} {v}");
    assert!(v.to_string().contains("is not a Leaf Queue"), "{v}");
    let (status, v) = move_to("full");
    assert!(status >= 400, "{status} {v}");
    assert!(
        v.to_string()
            .contains("Queue root.full already has 1 applications"),
        "{v}"
    );
    assert_eq!(
        queue_of(&rm, &id),
        "root.b",
        "a refused move changes nothing"
    );
    let (_, v) = call(&rm, "GET", "/ws/v1/cluster/scheduler", None);
    let queues = &v["scheduler"]["schedulerInfo"]["queues"]["queue"];
    assert_eq!(
        (&queues[0]["numApplications"], &queues[1]["numApplications"]),
        (&json!(0), &json!(1)),
        "{v}"
    );
    rt.block_on(rm.stop());
}
