//! The container executor against real processes (these run as root on the project machines).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use weft_nm::exit;
use weft_nm::{
    CgroupMode, Completion, ContainerHandle, Executor, ExecutorConfig, LaunchSpec,
    LocalResourceSpec, NodeLayout, ResourceKind,
};

const BOUND: Duration = Duration::from_secs(30);

fn executor(dir: &Path, cgroups: CgroupMode) -> Executor {
    let layout = NodeLayout {
        local_dir: dir.join("local"),
        log_dir: dir.join("logs"),
        nm_host: "node1.example".into(),
        nm_port: 8041,
        nm_http_port: 8042,
        java_home: Some("/opt/jdk-for-tests".into()),
        archive_limits: weft_nm::localize::Limits::default(),
    };
    Executor::new(ExecutorConfig::new(layout, cgroups))
}

fn spec(container: &str, command: &str) -> LaunchSpec {
    LaunchSpec {
        container_id: container.into(),
        app_id: "application_1700000000000_0001".into(),
        user: "alice".into(),
        command: command.into(),
        memory_bytes: 256 << 20,
        vcores: 1,
        ..LaunchSpec::default()
    }
}

async fn wait(h: &ContainerHandle) -> Completion {
    tokio::time::timeout(BOUND, h.wait())
        .await
        .expect("container did not finish in time")
}

/// Polls for a file written by the container (bounded).
async fn read_when_present(path: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path) {
            if text.ends_with('\n') {
                return text;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never appeared", path.display());
}

fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => !matches!(
            text.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next()),
            Some("Z") | Some("X")
        ),
        Err(_) => false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_gets_work_dir_environment_resources_and_logs() {
    let dir = tempfile::tempdir().unwrap();
    let resource = dir.path().join("input.txt");
    std::fs::write(&resource, "resource-content\n").unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let mut s = spec(
        "container_1700000000000_0001_01_000001",
        "echo to-stdout; echo to-stderr >&2; \
         echo \"$CONTAINER_ID|$APPLICATION_ID|$USER|$NM_HOST|$NM_PORT|$NM_HTTP_PORT|$LOCAL_DIRS|$LOG_DIRS|$PWD|$GREETING\" > env.txt; \
         cat input.txt > copied.txt; echo logged > <LOG_DIR>/extra.log",
    );
    s.env = BTreeMap::from([("GREETING".into(), "hello $USER".into())]);
    s.local_resources = BTreeMap::from([(
        "input.txt".into(),
        LocalResourceSpec::file(format!("file://{}", resource.display())),
    )]);
    let h = exec.launch(s).unwrap();
    let done = wait(&h).await;
    assert_eq!(
        done,
        Completion {
            exit_status: 0,
            diagnostics: String::new()
        }
    );

    let work = dir
        .path()
        .join("local/usercache/alice/appcache/application_1700000000000_0001/container_1700000000000_0001_01_000001");
    assert_eq!(h.work_dir(), work);
    let logs = dir
        .path()
        .join("logs/application_1700000000000_0001/container_1700000000000_0001_01_000001");
    let env = std::fs::read_to_string(work.join("env.txt")).unwrap();
    let expected = format!(
        "container_1700000000000_0001_01_000001|application_1700000000000_0001|alice|node1.example|8041|8042|{}|{}|{}|hello alice\n",
        work.parent().unwrap().display(),
        logs.display(),
        work.display()
    );
    assert_eq!(env, expected);
    assert_eq!(
        std::fs::read_to_string(work.join("copied.txt")).unwrap(),
        "resource-content\n"
    );
    assert!(work.join("launch_container.sh").exists());
    assert_eq!(
        std::fs::read_to_string(logs.join("stdout")).unwrap(),
        "to-stdout\n"
    );
    assert_eq!(
        std::fs::read_to_string(logs.join("stderr")).unwrap(),
        "to-stderr\n"
    );
    assert_eq!(
        std::fs::read_to_string(logs.join("extra.log")).unwrap(),
        "logged\n"
    );
    assert!(exec.running().is_empty());
}

/// A launch as Hadoop's NM runs one: Spark-escaped arguments survive Hadoop's quoting, the
/// markers expand, the archive is unpacked under its link name, `tmp/` and the token file
/// exist, and the whitelisted JAVA_HOME is there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hadoop_launch_context_runs_as_hadoops_nm_runs_it() {
    let dir = tempfile::tempdir().unwrap();
    let zip = dir.path().join("conf.zip");
    let status = std::process::Command::new("python3")
        .args([
            "-c",
            "import sys, zipfile\nwith zipfile.ZipFile(sys.argv[1], 'w') as z: z.writestr('inner/app.conf', 'conf-content\\n')",
        ])
        .arg(&zip)
        .status()
        .unwrap();
    assert!(status.success());
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    // `printf '%s|' ARGS`; the second argument is Spark's escapeForShell of `a$b "c"`.
    let mut s = spec(
        "container_1700000000000_0001_01_000011",
        r#"printf '%s|' 'x y' 'a\$b \"c\"' {{JAVA_HOME}} {{PWD}}<CPS>tail 1><LOG_DIR>/args.txt; cat __conf__/inner/app.conf > conf.txt; test -d tmp && test -f $HADOOP_TOKEN_FILE_LOCATION && echo \"$CLASSPATH|$JVM_PID\" > env.txt"#,
    );
    s.hadoop_quoting = true;
    s.tokens = b"HDTS\x00".to_vec();
    s.env = BTreeMap::from([("CLASSPATH".into(), "{{PWD}}<CPS>{{PWD}}/__conf__".into())]);
    s.local_resources = BTreeMap::from([(
        "__conf__".into(),
        LocalResourceSpec {
            url: format!("file://{}", zip.display()),
            kind: ResourceKind::Archive,
            pattern: None,
            timestamp: None,
        },
    )]);
    let h = exec.launch(s).unwrap();
    let done = wait(&h).await;
    let logs = h.log_dir().to_path_buf();
    assert_eq!(
        done.exit_status,
        0,
        "{:?}",
        std::fs::read_to_string(logs.join("stderr"))
    );
    let work = h.work_dir().to_path_buf();
    assert_eq!(
        std::fs::read_to_string(logs.join("args.txt")).unwrap(),
        format!("x y|a$b \"c\"|/opt/jdk-for-tests|{}:tail|", work.display())
    );
    assert_eq!(
        std::fs::read_to_string(work.join("conf.txt")).unwrap(),
        "conf-content\n"
    );
    let env = std::fs::read_to_string(work.join("env.txt")).unwrap();
    let (classpath, pid) = env.trim().split_once('|').unwrap();
    assert_eq!(classpath, format!("{0}:{0}/__conf__", work.display()));
    assert_eq!(pid.parse::<u32>().unwrap(), h.pid());
    assert_eq!(
        std::fs::read(work.join("container_tokens")).unwrap(),
        b"HDTS\x00"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_command_reports_its_exit_code() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let h = exec
        .launch(spec("container_1700000000000_0001_01_000002", "exit 7"))
        .unwrap();
    let done = wait(&h).await;
    assert_eq!(done.exit_status, 7);
    assert_eq!(done.diagnostics, "exited with code 7");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kills_the_whole_tree_even_when_sigterm_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let h = exec
        .launch(spec(
            "container_1700000000000_0001_01_000003",
            "trap '' TERM; sleep 300 & echo $! > child.pid; while true; do sleep 0.1; done",
        ))
        .unwrap();
    let child: i32 = read_when_present(&h.work_dir().join("child.pid"))
        .await
        .trim()
        .parse()
        .unwrap();
    assert!(process_alive(child));
    assert!(process_alive(h.pid() as i32));
    let started = tokio::time::Instant::now();
    h.stop(
        exit::KILLED_BY_APPMASTER,
        "killed: stopped by the ApplicationMaster",
    );
    let done = wait(&h).await;
    assert_eq!(done.exit_status, exit::KILLED_BY_APPMASTER);
    assert_eq!(done.diagnostics, "killed: stopped by the ApplicationMaster");
    // SIGTERM was ignored, so only the SIGKILL after the grace period ended it.
    assert!(started.elapsed() >= Duration::from_millis(250));
    assert!(
        !process_alive(child),
        "background sleep {child} survived the stop"
    );
    assert!(!process_alive(h.pid() as i32));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_processes_do_not_outlive_a_finished_container() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let h = exec
        .launch(spec(
            "container_1700000000000_0001_01_000004",
            "sleep 300 & echo $! > child.pid; exit 0",
        ))
        .unwrap();
    let done = wait(&h).await;
    assert_eq!(done.exit_status, 0);
    let child: i32 = std::fs::read_to_string(h.work_dir().join("child.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !process_alive(child),
        "background sleep {child} outlived its container"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_stops_every_container() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let a = exec
        .launch(spec("container_1700000000000_0001_01_000005", "sleep 300"))
        .unwrap();
    let b = exec
        .launch(spec(
            "container_1700000000000_0001_01_000006",
            "sleep 300 & sleep 300",
        ))
        .unwrap();
    assert_eq!(exec.running().len(), 2);
    tokio::time::timeout(
        BOUND,
        exec.shutdown(exit::ABORTED, "killed: NodeManager shutting down"),
    )
    .await
    .unwrap();
    for h in [&a, &b] {
        assert_eq!(h.completion().unwrap().exit_status, exit::ABORTED);
        assert!(!process_alive(h.pid() as i32));
    }
    assert!(exec.running().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_start_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    assert!(exec.launch(spec("../../escape", "true")).is_err());
    let mut s = spec("container_1700000000000_0001_01_000007", "true");
    s.local_resources
        .insert("x".into(), LocalResourceSpec::file("hdfs://nn:8020/x"));
    let err = exec.launch(s).unwrap_err().to_string();
    assert!(err.contains("file://"), "{err}");
    assert!(exec.running().is_empty());
    let h = exec
        .launch(spec("container_1700000000000_0001_01_000008", "sleep 300"))
        .unwrap();
    let dup = exec.launch(spec("container_1700000000000_0001_01_000008", "true"));
    assert!(matches!(dup, Err(weft_nm::ExecError::AlreadyRunning(_))));
    h.stop(
        exit::KILLED_BY_RESOURCEMANAGER,
        "killed by the ResourceManager",
    );
    assert_eq!(wait(&h).await.exit_status, exit::KILLED_BY_RESOURCEMANAGER);
}

/// Holds ~200 MiB in `tail` until the subshell's sleep ends, far past a 50 MiB limit.
const HOG: &str = "(head -c 200M /dev/zero; sleep 30) | tail";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_monitor_kills_a_container_over_its_limit() {
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), CgroupMode::disabled("test"));
    let mut s = spec("container_1700000000000_0001_01_000009", HOG);
    s.memory_bytes = 50 << 20;
    let h = exec.launch(s).unwrap();
    let done = wait(&h).await;
    assert_eq!(done.exit_status, exit::KILLED_EXCEEDED_PMEM, "{done:?}");
    assert!(done.diagnostics.starts_with("killed: memory "), "{done:?}");
    assert!(done.diagnostics.contains("over limit 50 MiB"), "{done:?}");
    assert!(done.diagnostics.contains("memory monitor"), "{done:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cgroup_limit_kills_a_container_over_its_limit() {
    let mode = CgroupMode::detect();
    if let CgroupMode::None { reason } = &mode {
        println!("NOTE: skipping the cgroup memory test, no usable cgroups: {reason}");
        return;
    }
    println!("cgroup mode: {}", mode.describe());
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), mode.clone());
    let id = "container_1700000000000_0001_01_000010";
    let mut s = spec(id, HOG);
    s.memory_bytes = 50 << 20;
    let h = exec.launch(s).unwrap();
    let done = wait(&h).await;
    assert_eq!(done.exit_status, exit::KILLED_EXCEEDED_PMEM, "{done:?}");
    assert!(done.diagnostics.starts_with("killed: memory "), "{done:?}");
    assert!(done.diagnostics.contains("over limit 50 MiB"), "{done:?}");
    assert!(done.diagnostics.contains("OOM killer"), "{done:?}");
    let group = match &mode {
        CgroupMode::V1 { memory, .. } => memory.join(id),
        CgroupMode::V2 { base } => base.join(id),
        CgroupMode::None { .. } => unreachable!(),
    };
    assert!(!group.exists(), "{} was not removed", group.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cgroup_container_runs_inside_its_group() {
    let mode = CgroupMode::detect();
    if let CgroupMode::None { reason } = &mode {
        println!("NOTE: skipping, no usable cgroups: {reason}");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let exec = executor(dir.path(), mode);
    let id = "container_1700000000000_0001_01_000011";
    let h = exec
        .launch(spec(id, "cat /proc/self/cgroup > cg.txt"))
        .unwrap();
    assert_eq!(wait(&h).await.exit_status, 0);
    let cg = std::fs::read_to_string(h.work_dir().join("cg.txt")).unwrap();
    let memory_line = cg
        .lines()
        .find(|l| l.contains(":memory:") || l.starts_with("0::"))
        .unwrap();
    assert!(
        memory_line.ends_with(&format!("/weft/{}", weft_nm::cgroups::group_name(id))),
        "{cg}"
    );
}
