//! Resource pools end to end (issue 16): `weft up --nms 4` as real processes on 127.0.0.1 with
//! ephemeral ports, an allocation file of two pools of two NMs each (`blue` lists its two NMs;
//! `green` lists none and gets two by `weft rmadmin -replaceLabelsOnNode`), distributed-shell
//! jobs in each pool's queue that run only on their pool's NMs, a job in a queue bound to no
//! pool refused, and a node moved to another pool as REST and the web UI show. Every wait is
//! bounded; the harness kills what it started.

// The harness serves several test files; this one uses only part of it.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use harness::{wait_for, Proc};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

/// The queues; no pools yet (the NMs' ids are known only once they are up).
const QUEUES: &str = r#"  <queue name="blue_q"/>
  <queue name="green_q"/>
  <queue name="adhoc"/>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
"#;

/// Small containers, node labels changeable through rmadmin and REST.
const RM_CONFIG: &str = r#"[properties]
"yarn.scheduler.minimum-allocation-mb" = "64"
"yarn.scheduler.increment-allocation-mb" = "64"
"yarn.node-labels.enabled" = "true"
"weft.scheduler.verify-interval-ms" = "200"
"#;

/// `weft up --nms 4` (1 GB NMs); returns it and its ready file's JSON.
fn up(dir: &Path) -> (Proc, Value) {
    let alloc = dir.join("fair-scheduler.xml");
    std::fs::write(&alloc, format!("<allocations>\n{QUEUES}</allocations>\n")).unwrap();
    let rm_config = dir.join("rm.toml");
    std::fs::write(&rm_config, RM_CONFIG).unwrap();
    let (alloc, rm_config) = (alloc.display().to_string(), rm_config.display().to_string());
    harness::weft_up(
        dir,
        &[
            "--nms",
            "4",
            "--nm-memory-mb",
            "1024",
            "--allocations",
            &alloc,
            "--rm-config",
            &rm_config,
        ],
    )
}

fn get(web: &str, path: &str) -> Value {
    let (status, text) = harness::get_text(web, path);
    assert_eq!(status, 200, "GET {path}: {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// Runs a client verb against the RM at `web` to its end.
fn weft(web: &str, args: &[&str]) -> std::process::Output {
    let rm = format!("http://{web}");
    std::process::Command::new(harness::WEFT)
        .args(args)
        .args(["--rm", rm.as_str()])
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run weft")
}

fn ok(out: &std::process::Output, what: &str) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A dshell job of `n` 256 MB tasks of one second in `queue`.
fn dshell(dir: &Path, web: &str, name: &str, queue: &str, n: u32) -> Proc {
    let n = n.to_string();
    let args: Vec<String> = [
        "dshell",
        "-rm",
        &format!("http://{web}"),
        "-timeout",
        "120000",
        "-queue",
        queue,
        "-master_memory",
        "256",
        "-container_memory",
        "256",
        "-num_containers",
        &n,
        "-shell_command",
        "sleep 1",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    Proc::spawn(
        &format!("dshell {name}"),
        &args,
        &dir.join(format!("dshell-{name}.out")),
    )
}

/// The application id a dshell printed once it submitted.
fn submitted_app(dshell: &mut Proc) -> String {
    wait_for(MINUTE, "the dshell to submit", || {
        dshell
            .output()
            .lines()
            .find_map(|l| l.strip_prefix("Submitted application "))
            .and_then(|rest| rest.split_whitespace().next())
            .map(str::to_string)
            .or_else(|| {
                let status = dshell.try_status()?;
                panic!("dshell exited ({status}) early:\n{}", dshell.output())
            })
    })
}

fn wait_final(web: &str, app: &str) -> Value {
    wait_for(Duration::from_secs(90), &format!("{app} to end"), || {
        let v = get(web, &format!("/ws/v1/cluster/apps/{app}"));
        let state = v["app"]["state"].as_str().unwrap_or("").to_string();
        ["FINISHED", "FAILED", "KILLED"]
            .contains(&state.as_str())
            .then(|| v["app"].clone())
    })
}

/// The NMs every container of the app's first attempt ran on, its AM's included.
fn nodes_used(web: &str, app: &str) -> BTreeSet<String> {
    let attempt = format!(
        "appattempt_{}_000001",
        app.trim_start_matches("application_")
    );
    let a = get(web, &format!("/ws/v1/cluster/apps/{app}/appattempts"));
    let mut nodes: BTreeSet<String> = a["appAttempts"]["appAttempt"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x["nodeId"].as_str().map(str::to_string))
        .collect();
    let c = get(
        web,
        &format!("/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers"),
    );
    let containers = c["containers"]["container"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(containers.len() >= 4, "the AM and 3 tasks: {c}");
    nodes.extend(
        containers
            .iter()
            .filter_map(|x| x["nodeId"].as_str().map(str::to_string)),
    );
    nodes
}

#[test]
fn pools_confine_apps_to_their_nodes_refuse_unbound_queues_and_move_nodes() {
    let dir = tempfile::Builder::new()
        .prefix("weft-pools-")
        .tempdir()
        .unwrap();
    let (mut up, v) = up(dir.path());
    let web = v["web"].as_str().expect("web").to_string();
    let nodes: Vec<String> = v["nodes"]
        .as_array()
        .expect("nodes")
        .iter()
        .map(|n| n["node_id"].as_str().expect("node id").to_string())
        .collect();
    assert_eq!(nodes.len(), 4);
    let entry = |id: &str| format!("<host>{id}</host>");

    // blue lists NM 0 and 1; green and spare list none (an admin maps their nodes).
    let pools = format!(
        "<allocations>\n  <resourcePools>\n    <resourcePool name=\"blue\">{}{}</resourcePool>\n    <resourcePool name=\"green\"/>\n    <resourcePool name=\"spare\"/>\n  </resourcePools>\n{QUEUES}</allocations>\n",
        entry(&nodes[0]),
        entry(&nodes[1]),
    );
    std::fs::write(dir.path().join("fair-scheduler.xml"), pools).unwrap();
    ok(&weft(&web, &["rmadmin", "-refreshQueues"]), "refreshQueues");
    let mapping = format!("{}=green {}=green", nodes[2], nodes[3]);
    ok(
        &weft(&web, &["rmadmin", "-replaceLabelsOnNode", &mapping]),
        "replaceLabelsOnNode",
    );
    // The file owns blue's membership: a refusal on stderr, exit 255, nothing changed.
    let refused = weft(
        &web,
        &[
            "rmadmin",
            "-replaceLabelsOnNode",
            &format!("{}=green", nodes[0]),
        ],
    );
    assert_eq!(refused.status.code(), Some(255));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains(&format!(
            "replaceLabelsOnNode: host {} belongs to resource pool blue defined in the allocation file",
            nodes[0]
        )),
        "{stderr}"
    );
    let listed = ok(&weft(&web, &["cluster", "-lnl"]), "cluster -lnl");
    assert_eq!(
        listed.trim(),
        "Node Labels: <blue:exclusivity=true>,<green:exclusivity=true>,<spare:exclusivity=true>"
    );

    // One job per pool, at once: each runs only on its pool's two NMs.
    let mut blue = dshell(dir.path(), &web, "blue", "blue_q", 6);
    let mut green = dshell(dir.path(), &web, "green", "green_q", 6);
    let blue_app = submitted_app(&mut blue);
    let green_app = submitted_app(&mut green);
    for (app, proc, pool) in [
        (&blue_app, &mut blue, &nodes[0..2]),
        (&green_app, &mut green, &nodes[2..4]),
    ] {
        let done = wait_final(&web, app);
        assert_eq!(
            done["finalStatus"],
            "SUCCEEDED",
            "{done}\n{}",
            proc.output()
        );
        assert_eq!(
            done["appNodeLabelExpression"],
            done["queue"]
                .as_str()
                .map(|q| {
                    if q.contains("blue") {
                        "blue"
                    } else {
                        "green"
                    }
                })
                .unwrap_or("")
        );
        let used = nodes_used(&web, app);
        assert!(
            used.iter().all(|n| pool.contains(n)),
            "{app} ran on {used:?}, its pool is {pool:?}"
        );
        assert!(proc.wait(MINUTE).success(), "{}", proc.output());
    }

    // A queue bound to no pool: refused with the spec's message.
    let mut adhoc = dshell(dir.path(), &web, "adhoc", "adhoc", 1);
    let adhoc_app = submitted_app(&mut adhoc);
    let failed = wait_final(&web, &adhoc_app);
    assert_eq!(failed["state"], "FAILED", "{failed}");
    let diagnostics = failed["diagnostics"].as_str().unwrap_or("");
    assert!(
        diagnostics.contains(
            "to queue root.adhoc rejected: queue root.adhoc is not bound to any resource pool (resource pools: blue, green, spare)"
        ),
        "{diagnostics}"
    );
    adhoc.wait(MINUTE);

    // NM 3 moves from green to spare; REST shows it.
    ok(
        &weft(
            &web,
            &[
                "rmadmin",
                "-replaceLabelsOnNode",
                &format!("{}=spare", nodes[3]),
            ],
        ),
        "move to spare",
    );
    let n3 = get(&web, &format!("/ws/v1/cluster/nodes/{}", nodes[3]));
    assert_eq!(n3["node"]["nodeLabels"], serde_json::json!(["spare"]));
    let green_nodes = get(&web, "/ws/v1/cluster/label-mappings?labels=green");
    assert_eq!(
        green_nodes["labelsToNodesInfo"]["labelsToNodes"]["green"]["nodes"],
        serde_json::json!([nodes[2]])
    );
    let map = get(&web, "/ws/v1/cluster/get-node-to-labels");
    let labels = &map["nodeToLabelsInfo"]["nodeToLabels"];
    for (node, label) in [
        (&nodes[0], "blue"),
        (&nodes[1], "blue"),
        (&nodes[2], "green"),
        (&nodes[3], "spare"),
    ] {
        assert_eq!(
            labels[node.as_str()]["nodeLabelInfo"][0]["name"],
            label,
            "{map}"
        );
    }
    // The web UI's nodes page shows each node's pool.
    let (status, page) = harness::get_text(&web, "/cluster/nodes");
    assert_eq!(status, 200);
    let row = page
        .split("<tr")
        .find(|r| r.contains(nodes[3].as_str()))
        .unwrap_or_else(|| panic!("a row for {}: {page}", nodes[3]));
    assert!(row.contains(">spare<"), "{row}");
    // The node-labels page: Hadoop's columns, a row per pool and one for DEFAULT.
    let (status, page) = harness::get_text(&web, "/cluster/nodelabels");
    assert_eq!(status, 200);
    let row_of = |label: &str| {
        page.split("<tr")
            .find(|r| r.contains(&format!(">{label}<")))
            .unwrap_or_else(|| panic!("a row for {label}: {page}"))
            .to_string()
    };
    for (label, count, memory, vcores) in [
        ("blue", 2, 2048, 16),
        ("green", 1, 1024, 8),
        ("spare", 1, 1024, 8),
        ("&lt;DEFAULT_PARTITION&gt;", 0, 0, 0),
    ] {
        let row = row_of(label);
        assert!(row.contains("Exclusive Partition"), "{row}");
        assert!(row.contains(&format!("\">{count}</a>")), "{row}");
        assert!(
            row.contains(&format!("&lt;memory:{memory}, vCores:{vcores}&gt;")),
            "{row}"
        );
    }

    // /metrics per pool: nodes and capacity as the node-labels page counts them.
    let (status, metrics) = harness::get_text(&web, "/metrics");
    assert_eq!(status, 200);
    for line in [
        "weft_pool_nodes{pool=\"blue\"} 2\n",
        "weft_pool_nodes{pool=\"spare\"} 1\n",
        "weft_pool_nodes{pool=\"<DEFAULT_PARTITION>\"} 0\n",
        "weft_pool_capacity{pool=\"green\",resource=\"memory-mb\"} 1024\n",
        "weft_pool_foreign_allocated{pool=\"spare\",resource=\"memory-mb\"} 0\n",
    ] {
        assert!(
            metrics.contains(line),
            "{line:?} not in /metrics:\n{metrics}"
        );
    }
    for family in ["weft_pool_allocated", "weft_pool_pending"] {
        assert!(
            metrics.contains(&format!("# TYPE {family} gauge\n")),
            "{family}"
        );
    }
    // The scheduler page: one section per pool with its queues.
    let (status, page) = harness::get_text(&web, "/cluster/scheduler");
    assert_eq!(status, 200);
    for (pool, queue) in [("blue", "root.blue_q"), ("green", "root.green_q")] {
        let start = page
            .find(&format!("data-pool=\"{pool}\""))
            .unwrap_or_else(|| panic!("a section for {pool}: {page}"));
        let end = start + page[start..].find("</section>").expect("section end");
        assert!(
            page[start..end].contains(&format!("data-queue=\"{queue}\"")),
            "{queue} in {pool}'s section"
        );
    }

    up.signal(nix::sys::signal::Signal::SIGTERM);
    up.wait(MINUTE);
}
