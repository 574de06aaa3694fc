//! Capacity preemption end to end (issue 15 item 4): a real RM running the Capacity Scheduler
//! with the scheduling monitor on (yarn-site `yarn.resourcemanager.scheduler.monitor.enable`),
//! two NMs and two distributed-shell jobs as processes on 127.0.0.1. The first job fills the
//! cluster from `root.a`; the second arrives in `root.b` (guaranteed half the cluster); the
//! proportional policy takes containers back from the first (exit -102 on its AM's completions,
//! the processes killed by the NMs) through the path the Fair Scheduler's preemption uses, the
//! second job gets its guarantee and finishes while the first still runs, and the first asks
//! again for what it lost, so both succeed.

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::time::Duration;

use harness::{alive, read, wait_for, Cluster, Options};
use serde_json::Value;

/// a and b at 50% each; a's user may take the whole cluster (user-limit-factor 2); the AM
/// limits let each queue start its AM. A round every second, a kill one second after the
/// warning, each round taking the whole excess (natural termination 1, no per-round cap: the
/// default cap of 10% of 2 GB is smaller than one 256 MB container).
const QUEUES: &str = r#"<?xml version="1.0"?>
<configuration>
  <property><name>yarn.scheduler.capacity.root.queues</name><value>a,b</value></property>
  <property><name>yarn.scheduler.capacity.root.a.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.a.user-limit-factor</name><value>2</value></property>
  <property><name>yarn.scheduler.capacity.root.a.maximum-am-resource-percent</name><value>0.5</value></property>
  <property><name>yarn.scheduler.capacity.root.b.capacity</name><value>50</value></property>
  <property><name>yarn.scheduler.capacity.root.b.maximum-am-resource-percent</name><value>0.5</value></property>
  <property><name>yarn.resourcemanager.monitor.capacity.preemption.monitoring_interval</name><value>1000</value></property>
  <property><name>yarn.resourcemanager.monitor.capacity.preemption.max_wait_before_kill</name><value>1000</value></property>
  <property><name>yarn.resourcemanager.monitor.capacity.preemption.natural_termination_factor</name><value>1.0</value></property>
  <property><name>yarn.resourcemanager.monitor.capacity.preemption.total_preemption_per_round</name><value>1.0</value></property>
</configuration>
"#;

const PROPERTIES: &str = r#""yarn.resourcemanager.scheduler.monitor.enable" = "true""#;

const CONTAINER_MB: &str = "256";
/// How long each task of the first job runs: long enough that the second job can only finish
/// before it if it got containers the first job held.
const LONG_TASK_S: u64 = 40;

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

#[test]
fn an_over_capacity_queue_gives_back_to_a_starved_one_and_both_jobs_succeed() {
    let opts = Options {
        capacity: Some(QUEUES),
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

    // The second job gets its AM and three tasks (1024 MB, its guarantee) from containers the
    // first gives back, and finishes while the first job's original tasks still sleep.
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

    // What the first job lost: tasks only (an AM is taken only while a leaf's AMs exceed its
    // AM share), at most what b was owed: 1024 MB, four tasks.
    let lost = a_now["numNonAMContainerPreempted"]
        .as_i64()
        .expect("a count");
    assert!((1..=4).contains(&lost), "{a_now}");
    assert_eq!(a_now["numAMContainerPreempted"], 0, "{a_now}");
    assert_eq!(a_now["preemptedResourceMB"], lost * 256, "{a_now}");
    assert_eq!(c.app(&b)["numNonAMContainerPreempted"], 0);

    // Each preempted container ended with -102 for root.b, and its process is gone.
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

    // The first job asks again for what it lost and ends with every task done.
    let status = first.wait(Duration::from_secs(2 * LONG_TASK_S + 60));
    let out = first.output();
    assert!(status.success(), "first dshell failed:\n{out}");
    assert!(second.wait(Duration::from_secs(10)).success());
    assert_eq!(c.app(&a)["finalStatus"], "SUCCEEDED");
    assert!(
        out.contains(&format!(
            "7 of 7 containers succeeded, 0 failed; {lost} preempted and run again"
        )),
        "{out}"
    );
}
