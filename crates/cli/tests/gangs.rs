//! Gang asks end to end (issue 17 item 6, time-aware-demands spec §3.3 "Gang delivery at run
//! time"): a real RM and two NMs on 127.0.0.1, a distributed-shell job filling half the cluster,
//! then `weft dshell --gang 4`: its gang of 4 finds room for only 3, so the RM holds those 3
//! (counted as the app's usage, never handed to the AM: no task starts), and when the first
//! job ends the AM gets all 4 containers in one Allocate reply.

// Each test binary uses part of the shared harness.
#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;

use std::path::{Path, PathBuf};
use std::time::Duration;

use harness::{alive, wait_for, Cluster, Options};

const CONTAINER_MB: &str = "256";
/// How long the first job's tasks run: the gang waits for them.
const FIRST_TASK_S: u64 = 20;

/// Every file named `stdout` below `dir` (the NMs' container logs).
fn stdout_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(Result::ok) {
        let p = e.path();
        if p.is_dir() {
            stdout_files(&p, out);
        } else if p.file_name().is_some_and(|n| n == "stdout") {
            out.push(p);
        }
    }
}

/// The AM's log of `app`: the container stdout under the app's directory that says the AM
/// registered.
fn am_log(c: &Cluster, app: &str) -> String {
    let mut files = Vec::new();
    stdout_files(c.dir.path(), &mut files);
    files
        .iter()
        .filter(|p| p.to_string_lossy().contains(app))
        .map(|p| std::fs::read_to_string(p).unwrap_or_default())
        .find(|text| text.contains("registered"))
        .unwrap_or_default()
}

#[test]
fn a_gang_of_4_with_room_for_3_waits_then_gets_all_4_at_once() {
    // 2 x 1024 MB. The first job (AM + 3 tasks of 256 MB) takes half; the gang job's AM takes
    // 256 MB more, which leaves room for 3 of the gang's 4 members.
    let c = Cluster::start(2, 1024, &Options::default());
    let first_work = c.path("first");
    let gang_work = c.path("gang");
    std::fs::create_dir_all(&first_work).expect("work dir");
    std::fs::create_dir_all(&gang_work).expect("work dir");

    let long = format!(
        "echo $$ > {}/$CONTAINER_ID.pid; sleep {FIRST_TASK_S}",
        first_work.display()
    );
    let mut first = c.dshell(
        "first",
        &[
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "3",
            "-shell_command",
            &long,
        ],
    );
    let a = c.submitted_app(&mut first);
    wait_for(Duration::from_secs(60), "the first job's 3 tasks", || {
        let pids = Cluster::recorded_pids(&first_work);
        (pids.len() >= 3 && pids.iter().all(|p| alive(*p))).then_some(())
    });

    let short = format!("echo $$ > {}/$CONTAINER_ID.pid", gang_work.display());
    let mut gang = c.dshell(
        "gang",
        &[
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "4",
            "--gang",
            "4",
            "-shell_command",
            &short,
        ],
    );
    let g = c.submitted_app(&mut gang);
    // The RM holds the 3 members that have room: the app uses its AM and them (1024 MB)...
    wait_for(Duration::from_secs(60), "the gang's 3 held members", || {
        (c.app(&g)["allocatedMB"] == 1024).then_some(())
    });
    // ... while the first job still runs, and the AM has been given none of them.
    assert_eq!(c.app(&a)["state"], "RUNNING", "{}", c.app(&a));
    assert!(
        Cluster::recorded_pids(&gang_work).is_empty(),
        "a gang task started before the gang was complete"
    );
    assert!(
        !am_log(&c, &g).contains("Received"),
        "the AM got containers before the gang was complete:\n{}",
        am_log(&c, &g)
    );

    // The first job ends; its room completes the gang, and all 4 come in one reply.
    let a_done = c.wait_app_state(
        &a,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(
        a_done["finalStatus"],
        "SUCCEEDED",
        "{a_done}\n{}",
        first.output()
    );
    let g_done = c.wait_app_state(
        &g,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(
        g_done["finalStatus"],
        "SUCCEEDED",
        "{g_done}\n{}",
        gang.output()
    );
    assert_eq!(Cluster::recorded_pids(&gang_work).len(), 4);
    let log = am_log(&c, &g);
    assert!(
        log.contains("Asked for 1 gang(s) of 4 containers"),
        "the AM log:\n{log}"
    );
    let replies: Vec<&str> = log.lines().filter(|l| l.starts_with("Received ")).collect();
    assert_eq!(
        replies,
        vec!["Received 4 container(s) in one reply"],
        "the AM log:\n{log}"
    );
}

/// How long the first job's tasks run in the restart test: the RM is killed and started
/// again while they run and the gang holds.
const FIRST_TASK_RESTART_S: u64 = 45;

/// C18 (time-aware-demands spec §5): as above, but the RM is killed with `kill -9` while
/// the 3 members are held, and started again. Held members were never launched, so the
/// restarted RM holds nothing; it asks for the gang again (the attempt's record kept it) once
/// the NMs are back and re-acquires the 3 members; the AM, resyncing, is told the RM still
/// owes the gang and asks for none of it as ordinary containers; when room appears all 4
/// come in one reply.
#[test]
fn a_gang_held_when_the_rm_is_killed_is_reacquired_and_delivered_whole() {
    let mut c = Cluster::start(2, 1024, &Options::default());
    let first_work = c.path("first");
    let gang_work = c.path("gang");
    std::fs::create_dir_all(&first_work).expect("work dir");
    std::fs::create_dir_all(&gang_work).expect("work dir");
    let long = format!(
        "echo $$ > {}/$CONTAINER_ID.pid; sleep {FIRST_TASK_RESTART_S}",
        first_work.display()
    );
    let mut first = c.dshell(
        "first",
        &[
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "3",
            "-shell_command",
            &long,
        ],
    );
    let a = c.submitted_app(&mut first);
    wait_for(Duration::from_secs(60), "the first job's 3 tasks", || {
        let pids = Cluster::recorded_pids(&first_work);
        (pids.len() >= 3 && pids.iter().all(|p| alive(*p))).then_some(())
    });
    let short = format!("echo $$ > {}/$CONTAINER_ID.pid", gang_work.display());
    let mut gang = c.dshell(
        "gang",
        &[
            "-master_memory",
            CONTAINER_MB,
            "-container_memory",
            CONTAINER_MB,
            "-num_containers",
            "4",
            "--gang",
            "4",
            "-shell_command",
            &short,
        ],
    );
    let g = c.submitted_app(&mut gang);
    wait_for(Duration::from_secs(60), "the gang's 3 held members", || {
        (c.app(&g)["allocatedMB"] == 1024).then_some(())
    });

    c.kill9_rm();
    std::thread::sleep(Duration::from_millis(500));
    c.restart_rm();
    c.wait_nodes_running(2);
    // Held again: the AM (recovered, 256 MB) and 3 members.
    let held_again = (0..120).any(|_| {
        std::thread::sleep(Duration::from_millis(500));
        c.app(&g)["allocatedMB"] == 1024
    });
    assert!(
        held_again,
        "the gang's 3 members are not held again: {}\nthe AM log:\n{}\n{}",
        c.app(&g),
        am_log(&c, &g),
        c.rm_logs()
    );
    assert_eq!(c.app(&a)["state"], "RUNNING", "{}", c.app(&a));
    assert!(
        Cluster::recorded_pids(&gang_work).is_empty(),
        "a gang task started before the gang was complete"
    );

    let a_done = c.wait_app_state(
        &a,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(120),
    );
    assert_eq!(
        a_done["finalStatus"],
        "SUCCEEDED",
        "{a_done}\n{}",
        first.output()
    );
    let g_done = c.wait_app_state(
        &g,
        &["FINISHED", "FAILED", "KILLED"],
        Duration::from_secs(90),
    );
    assert_eq!(
        g_done["finalStatus"],
        "SUCCEEDED",
        "{g_done}\n{}\n{}",
        gang.output(),
        c.rm_logs()
    );
    assert_eq!(Cluster::recorded_pids(&gang_work).len(), 4);
    let log = am_log(&c, &g);
    assert!(
        log.contains("The RM still asks for 1 gang(s) of this attempt (4 containers)"),
        "the AM resynced and was told the RM owes the gang; the AM log:\n{log}"
    );
    let replies: Vec<&str> = log.lines().filter(|l| l.starts_with("Received ")).collect();
    assert_eq!(
        replies,
        vec!["Received 4 container(s) in one reply"],
        "the AM log:\n{log}"
    );
}
