//! Fair Scheduler preemption end to end (issue 14): a real RM with preemption on and short
//! timeouts, two NMs and two distributed-shell jobs as processes on 127.0.0.1. One job fills the
//! cluster from `root.a`; a second one arrives in `root.b` and starves; the scheduler takes
//! containers back from the first (exit -102 on its AM's completions, the processes killed by
//! the NMs), the second gets its share and finishes while the first still runs, and the first
//! asks again for what it lost, so both succeed and no task is lost.

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::time::Duration;

use harness::{alive, read, wait_for, Cluster, Options};
use serde_json::Value;

/// `root.a` and `root.b` of equal weight; every queue is fair-share starved as soon as it is
/// below its whole fair share (timeout 1 s, threshold 1).
const ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <defaultFairSharePreemptionTimeout>1</defaultFairSharePreemptionTimeout>
  <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>
  <queue name="root">
    <queue name="a"/>
    <queue name="b"/>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="reject"/>
  </queuePlacementPolicy>
</allocations>
"#;

/// Preemption on above 10% utilization, a kill 1 s after the warning, a starved app looked at
/// again after 1 s. AM containers are left alone so the victims are the tasks (AM preemption
/// is covered by rm-core's tests).
const PROPERTIES: &str = r#""yarn.scheduler.fair.preemption" = "true"
"yarn.scheduler.fair.preemption.cluster-utilization-threshold" = "0.1"
"yarn.scheduler.fair.waitTimeBeforeKill" = "1000"
"yarn.scheduler.fair.waitTimeBeforeNextStarvationCheck" = "1000"
"yarn.scheduler.fair.am.preemption" = "false""#;

const CONTAINER_MB: &str = "256";
/// How long each task of the first job runs: long enough that the second job can only finish
/// before it if it got containers the first job held.
const LONG_TASK_S: u64 = 40;

/// The containers of `app` whose task ran to its end (they touched `<id>.done`).
fn done_files(work: &std::path::Path, app: &str) -> usize {
    let prefix = format!("container_{}", app.trim_start_matches("application_"));
    std::fs::read_dir(work)
        .map(|rd| {
            rd.filter_map(Result::ok)
                .filter_map(|e| e.file_name().into_string().ok())
                .filter(|n| n.starts_with(&prefix) && n.ends_with(".done"))
                .count()
        })
        .unwrap_or(0)
}

/// The ended containers of the app's first attempt, as REST lists them.
fn ended_containers(c: &Cluster, app: &str) -> Vec<Value> {
    let attempt = format!(
        "appattempt_{}_000001",
        app.trim_start_matches("application_")
    );
    let (status, v) = c.get(&format!(
        "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers"
    ));
    assert_eq!(status, 200, "{v}");
    v["containers"]["container"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|x| x["containerState"] == "COMPLETE")
        .collect()
}

/// A queue object of `/ws/v1/cluster/scheduler` by name.
fn queue<'a>(q: &'a Value, name: &str) -> Option<&'a Value> {
    if q["queueName"] == name {
        return Some(q);
    }
    q["childQueues"]["queue"]
        .as_array()?
        .iter()
        .find_map(|child| queue(child, name))
}

#[test]
fn a_starved_queue_takes_containers_back_and_both_jobs_succeed() {
    let opts = Options {
        allocations: ALLOCATIONS,
        rm_properties: PROPERTIES,
        ..Options::default()
    };
    // 2 x 1024 MB: the first job's AM and 7 tasks of 256 MB fill it exactly.
    let c = Cluster::start(2, 1024, &opts);
    let work = c.path("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let w = work.display();

    let long = format!(
        "echo $$ > {w}/$CONTAINER_ID.pid; sleep {LONG_TASK_S}; touch {w}/$CONTAINER_ID.done"
    );
    let mut first = c.dshell(
        "first",
        &[
            "-queue",
            "root.a",
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "7",
            "-shell_command",
            &long,
        ],
    );
    let a = c.submitted_app(&mut first);
    // Every task of the first job runs: the cluster is full.
    let started = wait_for(Duration::from_secs(60), "7 running tasks", || {
        let pids = Cluster::recorded_pids(&work);
        (pids.len() >= 7 && pids.iter().all(|p| alive(*p))).then_some(pids)
    });
    assert_eq!(c.app(&a)["allocatedMB"], 2048, "{}", c.app(&a));

    let short = format!("sleep 1; touch {w}/$CONTAINER_ID.done");
    let mut second = c.dshell(
        "second",
        &[
            "-queue",
            "root.b",
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "3",
            "-shell_command",
            &short,
        ],
    );
    let b = c.submitted_app(&mut second);

    // The second job gets its share (its AM and 3 tasks: 1024 MB, the fair share of root.b)
    // and finishes while the first job's original tasks are still sleeping.
    let b_done = c.wait_app_state(
        &b,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(35),
    );
    assert_eq!(
        b_done["finalStatus"],
        "SUCCEEDED",
        "{b_done}\nsecond dshell:\n{}",
        second.output()
    );
    let a_now = c.app(&a);
    assert_eq!(
        a_now["state"], "RUNNING",
        "the first job still runs: {a_now}"
    );

    // What the first job lost: tasks only, never below its fair share of 1024 MB (its AM and
    // three tasks), so between 1 and 4 containers of 256 MB.
    let lost = a_now["numNonAMContainerPreempted"]
        .as_i64()
        .expect("a count");
    assert!((1..=4).contains(&lost), "{a_now}");
    assert_eq!(a_now["numAMContainerPreempted"], 0, "{a_now}");
    assert_eq!(a_now["preemptedResourceMB"], lost * 256, "{a_now}");
    assert_eq!(a_now["preemptedResourceVCores"], lost, "{a_now}");
    assert!(
        a_now["preemptedMemorySeconds"].as_i64().unwrap_or(0) > 0,
        "{a_now}"
    );
    assert_eq!(c.app(&b)["numNonAMContainerPreempted"], 0);

    // Each preempted container ended with -102, saying for which queue, and its process is
    // gone (the NM stopped it: SIGTERM, then SIGKILL).
    let preempted: Vec<Value> = ended_containers(&c, &a)
        .into_iter()
        .filter(|x| x["containerExitStatus"] == -102)
        .collect();
    assert_eq!(preempted.len() as i64, lost, "{preempted:?}");
    for x in &preempted {
        assert_eq!(
            x["diagnosticsInfo"], "Container preempted by scheduler for queue root.b",
            "{x}"
        );
        let id = x["containerId"].as_str().expect("an id");
        let pid: i32 = read(&work.join(format!("{id}.pid")))
            .trim()
            .parse()
            .expect("the preempted task recorded its pid");
        wait_for(
            Duration::from_secs(10),
            &format!("{id}'s process to be killed"),
            || (!alive(pid)).then_some(()),
        );
    }
    let killed = started.iter().filter(|p| !alive(**p)).count();
    assert!(killed as i64 >= lost, "{killed} of the first tasks ended");

    // Operators see it: the victim queue and root count the kills, root.b none.
    let (status, s) = c.get("/ws/v1/cluster/scheduler");
    assert_eq!(status, 200, "{s}");
    let root = &s["scheduler"]["schedulerInfo"]["rootQueue"];
    let count = |name: &str| queue(root, name).map(|q| q["aggregateContainersPreempted"].clone());
    assert_eq!(count("root"), Some(lost.into()), "{root}");
    assert_eq!(count("root.a"), Some(lost.into()), "{root}");
    assert_eq!(count("root.b"), Some(0.into()), "{root}");
    assert_eq!(
        queue(root, "root.a").map(|q| q["preemptable"].clone()),
        Some(true.into())
    );

    // The web UI: the app page's totals, the scheduler page's per-queue count.
    let (status, page) = c.get_text(&format!("/cluster/app/{a}"));
    assert_eq!(status, 200);
    assert!(
        page.contains(&format!(
            "<dt>Containers preempted</dt><dd>{lost} non-AM · 0 AM</dd>"
        )),
        "{page}"
    );
    let (_, page) = c.get_text("/cluster/scheduler");
    let row = page
        .split("<tr class=\"queue leaf\" data-queue=\"root.a\"")
        .nth(1)
        .and_then(|rest| rest.split("</tr>").next())
        .unwrap_or_else(|| panic!("no root.a row:\n{page}"));
    assert!(
        row.ends_with(&format!("<td>yes</td><td class=\"num\">{lost}</td>")),
        "{row}"
    );

    // The first job asks again for what it lost and ends with every task done.
    let status = first.wait(Duration::from_secs(2 * LONG_TASK_S + 60));
    let out = first.output();
    assert!(status.success(), "first dshell failed:\n{out}");
    assert!(second.wait(Duration::from_secs(10)).success());
    let a_end = c.app(&a);
    assert_eq!(a_end["finalStatus"], "SUCCEEDED", "{a_end}");
    assert!(
        out.contains(&format!(
            "7 of 7 containers succeeded, 0 failed; {lost} preempted and run again"
        )),
        "{out}"
    );
    assert_eq!(
        done_files(&work, &a),
        7,
        "every task of the first job ran to its end"
    );
    assert_eq!(done_files(&work, &b), 3, "every task of the second job ran");

    // `application -status` prints Hadoop's line with the same figures.
    let status = std::process::Command::new(harness::WEFT)
        .args([
            "application",
            "-status",
            &a,
            "--rm",
            &format!("http://{}", c.web),
        ])
        .env_remove("WEFT_RM")
        .env_remove("HADOOP_CONF_DIR")
        .output()
        .expect("run weft application -status");
    let report = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{report}");
    assert!(
        report.contains(&format!(
            "\tAggregate Resource Preempted : {} MB-seconds, {} vcore-seconds\n",
            a_end["preemptedMemorySeconds"], a_end["preemptedVcoreSeconds"]
        )),
        "{report}"
    );

    let (_, metrics) = c.get_text("/metrics");
    assert!(
        metrics.contains(&format!(
            "weft_queue_containers_preempted_total{{queue=\"root.a\"}} {lost}\n"
        )),
        "{metrics}"
    );
}
