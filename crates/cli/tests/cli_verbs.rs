//! The user's CLI verbs (`weft application`, `applicationattempt`, `container`, `node`,
//! `queue`, `rmadmin`, `logs`, `top`) run as the real `weft` binary against a real cluster,
//! with YARN's single-dash flags, checking tables, `--json`, exit codes and error messages.

// The harness serves several test files; this one uses only part of it.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::process::{Command, Output, Stdio};
use std::time::Duration;

use harness::{wait_for, Cluster, Options, ALLOCATIONS, WEFT};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);

/// What one `weft` run did.
struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Run {
    fn from(out: Output) -> Run {
        Run {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        }
    }

    /// Asserts success and returns stdout.
    fn ok(self, what: &str) -> String {
        assert_eq!(
            self.code,
            Some(0),
            "{what} failed:\nstdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self.stdout
    }

    fn json(self, what: &str) -> Value {
        let out = self.ok(what);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{what}: not JSON ({e}):\n{out}"))
    }
}

/// `weft <args>` with a clean environment for RM discovery, plus `env`.
fn weft_env(args: &[&str], env: &[(&str, &str)]) -> Run {
    let mut cmd = Command::new(WEFT);
    cmd.args(args)
        .env_remove("WEFT_RM")
        .env_remove("HADOOP_CONF_DIR")
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(cmd.output().expect("run weft"))
}

/// `weft <args> --rm <this cluster>`.
fn weft(c: &Cluster, args: &[&str]) -> Run {
    let rm = format!("http://{}", c.web);
    let mut all = args.to_vec();
    all.extend(["--rm", rm.as_str()]);
    weft_env(&all, &[])
}

/// The data row of `id` in a `-list` table, split on TABs and trimmed.
fn row(table: &str, id: &str) -> Vec<String> {
    table
        .lines()
        .find(|l| l.split('\t').next().is_some_and(|c| c.trim() == id))
        .unwrap_or_else(|| panic!("no row for {id} in:\n{table}"))
        .split('\t')
        .map(|c| c.trim().to_string())
        .collect()
}

/// Runs a dshell to completion and returns its application id.
fn finished_dshell(c: &Cluster, name: &str, command: &str) -> String {
    let mut d = c.dshell(
        name,
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-shell_command",
            command,
        ],
    );
    let id = c.submitted_app(&mut d);
    let status = d.wait(MINUTE);
    assert!(status.success(), "dshell {name} failed:\n{}", d.output());
    c.wait_app_state(&id, &["FINISHED"], MINUTE);
    id
}

#[test]
fn reports_on_a_finished_app_its_attempts_nodes_queues_and_logs() {
    let c = Cluster::start(1, 4096, &Options::default());
    let id = finished_dshell(&c, "done", "echo hello-from-cli-verbs");
    let node_id = c.nms[0].node_id.clone();

    // application -list: every state with ALL, the default (live states) hides it.
    let all = weft(&c, &["application", "-list", "-appStates", "ALL"]).ok("list ALL");
    assert!(
        all.starts_with("Total number of applications (application-types: [], states: [NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED] and tags: []):1\n"),
        "{all}"
    );
    let header: Vec<&str> = all
        .lines()
        .nth(1)
        .expect("header")
        .split('\t')
        .map(str::trim)
        .collect();
    assert_eq!(
        header,
        [
            "Application-Id",
            "Application-Name",
            "Application-Type",
            "User",
            "Queue",
            "State",
            "Final-State",
            "Progress",
            "Tracking-URL"
        ]
    );
    let r = row(&all, &id);
    assert_eq!(
        (r[5].as_str(), r[6].as_str()),
        ("FINISHED", "SUCCEEDED"),
        "{r:?}"
    );
    assert_eq!(r[2], "DISTRIBUTEDSHELL");
    let live = weft(&c, &["app", "-list"]).ok("list");
    assert!(live.starts_with("Total number of applications (application-types: [], states: [SUBMITTED, ACCEPTED, RUNNING] and tags: []):0\n"), "{live}");
    let finished = weft(
        &c,
        &[
            "application",
            "-list",
            "-appStates",
            "finished",
            "-appTypes",
            "distributedshell",
        ],
    )
    .ok("list FINISHED");
    assert!(finished.contains(&id), "{finished}");
    let other_type = weft(
        &c,
        &[
            "application",
            "-list",
            "-appStates",
            "ALL",
            "-appTypes",
            "SPARK",
        ],
    )
    .ok("list SPARK");
    assert!(!other_type.contains(&id), "{other_type}");
    let listed =
        weft(&c, &["application", "-list", "-appStates", "ALL", "--json"]).json("list --json");
    assert!(
        listed["apps"]["app"]
            .as_array()
            .expect("apps")
            .iter()
            .any(|a| a["id"] == id.as_str()),
        "{listed}"
    );

    // application -status.
    let status = weft(&c, &["application", "-status", &id]).ok("status");
    assert!(status.starts_with("Application Report : \n"), "{status}");
    for line in [
        format!("\tApplication-Id : {id}\n"),
        "\tState : FINISHED\n".to_string(),
        "\tFinal-State : SUCCEEDED\n".to_string(),
        "\tProgress : 100%\n".to_string(),
    ] {
        assert!(status.contains(&line), "missing {line:?} in:\n{status}");
    }
    let app = weft(&c, &["application", "-status", &id, "--json"]).json("status --json");
    assert_eq!(app["app"]["id"], id.as_str());

    // WEFT_RM is honoured without --rm, and so is yarn-site.xml in HADOOP_CONF_DIR.
    let url = format!("http://{}", c.web);
    let via_env = weft_env(&["application", "-status", &id], &[("WEFT_RM", &url)]).ok("WEFT_RM");
    assert!(via_env.contains("\tState : FINISHED\n"), "{via_env}");
    let conf = c.path("conf");
    std::fs::create_dir_all(&conf).expect("conf dir");
    std::fs::write(
        conf.join("yarn-site.xml"),
        format!("<configuration><property><name>yarn.resourcemanager.webapp.address</name><value>{}</value></property></configuration>", c.web),
    )
    .expect("yarn-site.xml");
    let conf_dir = conf.display().to_string();
    let via_site = weft_env(
        &["app", "-status", &id],
        &[("HADOOP_CONF_DIR", conf_dir.as_str())],
    )
    .ok("HADOOP_CONF_DIR");
    assert!(via_site.contains("\tState : FINISHED\n"), "{via_site}");

    // applicationattempt -list and -status.
    let attempts = weft(&c, &["applicationattempt", "-list", &id]).ok("attempt list");
    assert!(
        attempts.starts_with("Total number of application attempts :1\n"),
        "{attempts}"
    );
    let attempt = id.replacen("application_", "appattempt_", 1) + "_000001";
    let r = row(&attempts, &attempt);
    assert!(r[2].starts_with("container_"), "{r:?}");
    let report = weft(&c, &["applicationattempt", "-status", &attempt]).ok("attempt status");
    assert!(
        report.starts_with(&format!(
            "Application Attempt Report : \n\tApplicationAttempt-Id : {attempt}\n"
        )),
        "{report}"
    );
    assert!(
        report.contains(&format!("\tAMContainer : {}\n", r[2])),
        "{report}"
    );

    // The finished app's ended containers: REST lists the AM and the worker with their
    // start and finish times, exit status and log links; container -list shows them too.
    let (code, cs) = c.get(&format!(
        "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers"
    ));
    assert_eq!(code, 200, "{cs}");
    let list = cs["containers"]["container"]
        .as_array()
        .expect("containers");
    assert_eq!(list.len(), 2, "the AM and one worker: {cs}");
    for k in list {
        assert_eq!(k["containerState"], "COMPLETE", "{k}");
        assert_eq!(k["containerExitStatus"], 0, "{k}");
        let started = k["startedTime"].as_u64().expect("startedTime");
        let finished = k["finishedTime"].as_u64().expect("finishedTime");
        assert!(started > 1_600_000_000_000, "a real start time: {k}");
        assert!(finished >= started, "{k}");
        assert_eq!(k["elapsedTime"].as_u64(), Some(finished - started), "{k}");
        assert!(
            k["logUrl"]
                .as_str()
                .is_some_and(|u| u.contains("/containerlogs/container_")),
            "{k}"
        );
    }
    let worker = list[1]["containerId"]
        .as_str()
        .expect("worker id")
        .to_string();
    let (code, one) = c.get(&format!(
        "/ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers/{worker}"
    ));
    assert_eq!(code, 200, "{one}");
    assert_eq!(one["container"]["containerState"], "COMPLETE");
    let containers = weft(&c, &["container", "-list", &attempt]).ok("container list");
    assert!(
        containers.starts_with("Total number of containers :2\n"),
        "{containers}"
    );
    let r = row(&containers, &worker);
    assert_eq!(r[3], "COMPLETE", "{r:?}");
    assert_ne!(r[1], "N/A", "the start time is known: {r:?}");
    assert_ne!(r[2], "N/A", "the finish time is known: {r:?}");

    // node -list (RUNNING by default, -all for every state) and -status.
    for args in [&["node", "-list"][..], &["node", "-list", "-all"]] {
        let nodes = weft(&c, args).ok("node list");
        assert!(nodes.starts_with("Total Nodes:1\n"), "{args:?}: {nodes}");
        let r = row(&nodes, &node_id);
        assert_eq!(r[1], "RUNNING", "{r:?}");
    }
    let lost = weft(&c, &["node", "-list", "-states", "LOST"]).ok("node list LOST");
    assert!(lost.starts_with("Total Nodes:0\n"), "{lost}");
    let node = weft(&c, &["node", "-status", &node_id]).ok("node status");
    assert!(
        node.starts_with(&format!("Node Report : \n\tNode-Id : {node_id}\n")),
        "{node}"
    );
    assert!(node.contains("\tNode-State : RUNNING\n"), "{node}");
    assert!(node.contains("\tMemory-Capacity : 4096MB\n"), "{node}");
    let nodes = weft(&c, &["node", "-list", "-all", "--json"]).json("node --json");
    assert_eq!(nodes["nodes"]["node"][0]["id"], node_id.as_str());

    // queue -status by short name and by path.
    for name in ["default", "root.default"] {
        let q = weft(&c, &["queue", "-status", name]).ok("queue status");
        assert!(q.starts_with("Queue Information : \nQueue Name : default\n\tQueue Path : root.default\n\tState : RUNNING\n"), "{q}");
        // Hadoop's FSQueue.isPreemptable: allowPreemptionFrom (default true) of the queue and
        // its ancestors, whether or not yarn.scheduler.fair.preemption is on.
        assert!(q.contains("\tPreemption : enabled\n"), "{q}");
    }
    let q = weft(&c, &["queue", "-status", "prod", "--json"]).json("queue --json");
    assert_eq!(q["queueName"], "root.prod", "{q}");

    // queue -list: every queue in a boxed table, or a parent's children.
    let list = weft(&c, &["queue", "-list", "all"]).ok("queue -list all");
    assert!(list.starts_with("4 queues were found\n+"), "{list}");
    for path in ["root", "root.default", "root.prod", "root.dev"] {
        assert!(list.contains(&format!(" {path} ")), "{path} in:\n{list}");
    }
    let children = weft(&c, &["queue", "-list", "root"]).ok("queue -list root");
    assert!(children.starts_with("3 queues were found\n"), "{children}");
    let r = weft(&c, &["queue", "-list", "nosuch"]);
    assert_eq!(r.code, Some(255));

    // rmadmin -getGroups names the user's groups as the RM sees them (none mapped here);
    // -refreshNodes says why it has nothing to do.
    let g = weft(&c, &["rmadmin", "-getGroups", "alice"]).ok("getGroups");
    assert_eq!(g, "alice :\n");
    let r = weft(&c, &["rmadmin", "-refreshNodes"]);
    assert_eq!(r.code, Some(255));
    assert!(
        r.stderr
            .starts_with("refreshNodes: this ResourceManager has no include/exclude host lists"),
        "{}",
        r.stderr
    );

    // rmadmin -refreshQueues: silent; the new queue shows afterwards; a broken file is refused.
    let missing = weft(&c, &["queue", "-status", "analytics"]);
    assert_eq!(missing.code, Some(255));
    assert!(
        missing
            .stderr
            .contains("Cannot get queue from RM by queueName = analytics, please check."),
        "{}",
        missing.stderr
    );
    let allocations = c.path("fair-scheduler.xml");
    std::fs::write(
        &allocations,
        ALLOCATIONS.replace(
            "<queue name=\"dev\"/>",
            "<queue name=\"dev\"/>\n    <queue name=\"analytics\"/>",
        ),
    )
    .expect("allocations");
    let refresh = weft(&c, &["rmadmin", "-refreshQueues"]);
    assert_eq!(
        (
            refresh.code,
            refresh.stdout.as_str(),
            refresh.stderr.as_str()
        ),
        (Some(0), "", "")
    );
    let q = weft(&c, &["queue", "-status", "analytics"]).ok("new queue");
    assert!(q.contains("\tQueue Path : root.analytics\n"), "{q}");
    std::fs::write(&allocations, "<allocations><queue name=\"root\">").expect("broken allocations");
    let refused = weft(&c, &["rmadmin", "-refreshQueues"]);
    assert_eq!(refused.code, Some(255), "{}", refused.stderr);
    assert!(
        refused.stderr.starts_with("refreshQueues: ")
            && refused.stderr.contains("fair-scheduler.xml")
            && refused
                .stderr
                .ends_with("; the ResourceManager keeps the previous queue configuration\n"),
        "{}",
        refused.stderr
    );
    assert!(weft(&c, &["queue", "-status", "analytics"])
        .ok("queue kept")
        .contains("root.analytics"));

    // logs -applicationId: the container's stdout from the NM's web service.
    let logs = weft(&c, &["logs", "-applicationId", &id]).ok("logs");
    assert!(logs.contains("hello-from-cli-verbs\n"), "{logs}");
    assert!(
        logs.contains(&format!(" on {node_id}\nLogAggregationType: LOCAL\n")),
        "{logs}"
    );
    assert!(logs.contains("LogType:stdout\n"), "{logs}");
    assert!(logs.contains("End of LogType:stdout\n"), "{logs}");
    let only_stdout = weft(
        &c,
        &[
            "logs",
            "-applicationId",
            &id,
            "-log_files",
            "stdout",
            "-size",
            "-6",
        ],
    )
    .ok("logs tail");
    assert!(!only_stdout.contains("LogType:stderr"), "{only_stdout}");
    assert!(
        only_stdout.contains("LogContents:\nverbs\n"),
        "{only_stdout}"
    );
    let logs = weft(&c, &["logs", "-applicationId", &id, "--json"]).json("logs --json");
    let containers = logs["containers"].as_array().expect("containers");
    assert!(!containers.is_empty(), "{logs}");

    // Errors: an unknown application, an unreachable RM.
    let unknown = id.rsplit_once('_').expect("id").0.to_string() + "_9999";
    let r = weft(&c, &["application", "-status", &unknown]);
    assert_eq!(r.code, Some(255), "{}", r.stdout);
    // One sentence per problem, as YARN prints it (not YARN's and then the RM's).
    assert_eq!(
        r.stderr,
        format!("Application with id '{unknown}' doesn't exist in RM or Timeline Server.\n")
    );
    let r = weft(&c, &["application", "-kill", &unknown]);
    assert_eq!(r.code, Some(255));
    assert_eq!(
        (r.stdout.as_str(), r.stderr.as_str()),
        (
            format!("Application with id '{unknown}' doesn't exist in RM.\n").as_str(),
            ""
        )
    );
    let r = weft(&c, &["application", "-kill", &unknown, "--json"]);
    assert_eq!(r.code, Some(255));
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("kill --json");
    assert_eq!(v["apps"][0]["result"], "not found", "{v}");
    assert!(
        v["apps"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains(&unknown)),
        "the RM's answer names the full id: {v}"
    );
    let r = weft_env(&["application", "-list", "--rm", "127.0.0.1:1"], &[]);
    assert_ne!(r.code, Some(0));
    assert!(
        r.stderr
            .contains("cannot reach http://127.0.0.1:1/ws/v1/cluster/apps"),
        "{}",
        r.stderr
    );
    let r = weft_env(&["node", "-list"], &[("WEFT_RM", "http://127.0.0.1:1")]);
    assert!(
        r.code != Some(0) && r.stderr.contains("127.0.0.1:1"),
        "{}",
        r.stderr
    );
}

#[test]
fn moves_kills_and_watches_a_running_app() {
    let c = Cluster::start(1, 4096, &Options::default());
    let mut d = c.dshell(
        "sleepy",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-queue",
            "nosuch",
            "-shell_command",
            "exec sleep 300",
        ],
    );
    let id = c.submitted_app(&mut d);
    // No queue nosuch: the placement rules put the app in root.default, and dshell says so.
    assert!(
        d.output().contains(&format!(
            "Submitted application {id} to queue root.default (asked for nosuch; the placement rules chose root.default)\n"
        )),
        "{}",
        d.output()
    );
    c.wait_app_state(&id, &["RUNNING"], MINUTE);

    // The default -list shows running apps.
    let live = weft(&c, &["application", "-list"]).ok("list");
    assert_eq!(row(&live, &id)[5], "RUNNING", "{live}");

    // container -list of the running attempt: the AM and (once allocated) the worker.
    let attempt = id.replacen("application_", "appattempt_", 1) + "_000001";
    let containers = wait_for(MINUTE, "two containers", || {
        let out = weft(&c, &["container", "-list", &attempt]).ok("container list");
        out.starts_with("Total number of containers :2\n")
            .then_some(out)
    });
    let am = id.replacen("application_", "container_", 1) + "_01_000001";
    let r = row(&containers, &am);
    assert_eq!(r[3], "RUNNING", "{r:?}");
    assert_eq!(r[4], c.nms[0].node_id, "{r:?}");
    let status = weft(&c, &["container", "-status", &am]).ok("container status");
    assert!(
        status.starts_with(&format!("Container Report : \n\tContainer-Id : {am}\n")),
        "{status}"
    );

    // -movetoqueue, then the -changeQueue form back.
    let moved = weft(&c, &["application", "-movetoqueue", &id, "-queue", "prod"]).ok("move");
    assert_eq!(
        moved,
        format!("Moving application {id} to queue prod\nSuccessfully completed move.\n")
    );
    assert_eq!(c.app(&id)["queue"], "root.prod");
    let moved = weft(&c, &["application", "-changeQueue", "dev", "-appId", &id]).ok("changeQueue");
    assert!(moved.ends_with("Successfully completed move.\n"), "{moved}");
    assert_eq!(c.app(&id)["queue"], "root.dev");
    let refused = weft(
        &c,
        &["application", "-movetoqueue", &id, "-queue", "root.nosuch"],
    );
    assert_eq!(refused.code, Some(255));
    assert!(refused.stderr.contains("error: "), "{}", refused.stderr);
    assert_eq!(c.app(&id)["queue"], "root.dev");

    // top --once: one plain frame with the app's row; the queue filter hides it elsewhere.
    let frame = weft(&c, &["top", "--once"]).ok("top");
    assert!(frame.starts_with("YARN top - "), "{frame}");
    assert!(
        frame.contains("NodeManager(s): 1 total, 1 active,"),
        "{frame}"
    );
    assert!(frame.contains("APPLICATIONID USER"), "{frame}");
    assert!(
        frame
            .lines()
            .any(|l| l.trim_start().starts_with(&id) && l.contains("root.dev")),
        "{frame}"
    );
    assert!(!frame.contains('\x1b'), "batch mode has no escape codes");
    let filtered = weft(&c, &["top", "--once", "-queues", "prod"]).ok("top -queues");
    assert!(!filtered.contains(&id), "{filtered}");
    let top = weft(&c, &["top", "--once", "--json"]).json("top --json");
    assert_eq!(top["apps"][0]["id"], id.as_str(), "{top}");

    // -updatePriority: the RM's answer decides which of YARN's two messages shows; an RM
    // that refuses (Weft's Fair Scheduler keeps the submitted priority) is an error naming it.
    let r = weft(&c, &["application", "-updatePriority", "5", "-appId", &id]);
    assert!(
        r.stdout
            .starts_with(&format!("Updating priority of an application {id}\n")),
        "{}",
        r.stdout
    );
    match r.code {
        Some(0) => {
            let capped = r.stdout.contains("to cluster max priority");
            assert_eq!(c.app(&id)["priority"] == 5, !capped, "{}", r.stdout);
        }
        Some(255) => {
            assert!(
                r.stderr
                    .contains(&format!("/apps/{id}/priority answered 400")),
                "{}",
                r.stderr
            );
            assert_eq!(c.app(&id)["priority"], 0);
        }
        other => panic!("exit {other:?}: {}", r.stderr),
    }

    // -kill, then again: already finished.
    let killed = weft(&c, &["application", "-kill", &id]);
    assert_eq!(killed.code, Some(0), "{}", killed.stderr);
    assert_eq!(killed.stdout, format!("Killing application {id}\n"));
    assert!(
        killed.stderr.contains(&format!("Killed application {id}")),
        "{}",
        killed.stderr
    );
    assert_eq!(c.app(&id)["state"], "KILLED");
    let again = weft(&c, &["application", "-kill", &id]).ok("kill again");
    assert_eq!(again, format!("Application {id} has already finished \n"));
    let json = weft(&c, &["application", "-kill", &id, "--json"]).json("kill --json");
    assert_eq!(json["apps"][0]["result"], "already finished", "{json}");
    let _ = d.wait(MINUTE);
}
