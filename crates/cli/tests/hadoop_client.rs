//! Hadoop's own YarnClient (the 3.5.0 client jars pyspark 4.3.0 bundles), unmodified, against
//! `weft up` (wire spec §9.4 step 1): a Java probe compiled with the machine's JDK talks to the
//! RM over Hadoop IPC with only HADOOP_CONF_DIR pointing at Weft: cluster metrics, the app
//! list, a new application's id, ApplicationNotFoundException for an unknown id, node reports,
//! the default queue, an app whose AM is a shell command reaching a terminal state, and the
//! SASL → simple fallback of a caller holding a token.
//!
//! Needs `java` and `javac` (Debian's openjdk-17-jdk-headless; scripts/install-test-deps
//! installs it) and pyspark's jars, which this test installs once into
//! `target/hadoop-venv` (`pip install pyspark==4.3.0`: about 460 MB of jars).

#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "hadoop/support.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{compile_probe, pyspark_jars, require, run_bounded};

#[test]
fn hadoops_yarn_client_talks_to_weft_up() {
    require("java");
    require("javac");
    let jars = pyspark_jars();
    let classpath = format!("{}/*", jars.display());
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    compile_probe(
        "YarnClientProbe.java",
        &classpath,
        &classes,
        &dir.path().join("javac.out"),
    );

    let (_up, ready) = harness::weft_up(dir.path(), &["--nms", "1", "--nm-memory-mb", "4096"]);
    let conf = ready["hadoop_conf_dir"]
        .as_str()
        .expect("the ready file names hadoop-conf");
    let client = ready["client"]
        .as_str()
        .expect("the ready file names the client address");
    let yarn_site = std::fs::read_to_string(Path::new(conf).join("yarn-site.xml")).unwrap();
    assert!(
        yarn_site.contains(&format!("<value>{client}</value>")),
        "{yarn_site}"
    );

    let (passed, output) = run_bounded(
        Command::new("java")
            .arg("-Xmx256m")
            .arg("-cp")
            .arg(format!("{classpath}:{}:{conf}", classes.display()))
            .arg("YarnClientProbe")
            .env("HADOOP_CONF_DIR", conf)
            .env("HADOOP_USER_NAME", "probe-user"),
        Duration::from_secs(180),
        &dir.path().join("probe.out"),
    );
    let shown: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("OK ") || l.starts_with("FAIL ") || l.contains("Exception"))
        .take(60)
        .collect();
    assert!(
        passed && output.contains("PROBE PASSED"),
        "the probe failed:\n{}",
        shown.join("\n")
    );
    for check in [
        "cluster-metrics nodeManagers=1 active=1",
        "get-applications count=0",
        "unknown-application org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException",
        "cluster-nodes count=1",
        "queue-info name=default state=RUNNING",
        "get-applications-filtered count=1",
        "attempts count=1",
        "sasl-fallback count=1",
    ] {
        assert!(
            output.contains(&format!("OK {check}")),
            "no `OK {check}` in:\n{}",
            shown.join("\n")
        );
    }
    let created = output
        .lines()
        .find_map(|l| l.strip_prefix("OK create-application "))
        .expect("a created application");
    let app = created.split_whitespace().next().unwrap_or_default();
    assert!(
        app.starts_with("application_") && app.ends_with("_0001"),
        "{created}"
    );
    let terminal = output
        .lines()
        .find_map(|l| l.strip_prefix("OK terminal-state "))
        .expect("a terminal state");
    // The AM command never registers, so its attempt fails when it exits (Hadoop's RM does the
    // same); the report says so, with the submitter, queue and type Hadoop's client sent.
    for part in [
        "FAILED final=FAILED",
        "user=probe-user",
        "queue=root.default",
        "type=PROBE",
        "finished=true",
        "exited with status 0",
    ] {
        assert!(terminal.contains(part), "`{part}` not in: {terminal}");
    }
    let am = output
        .lines()
        .find_map(|l| l.strip_prefix("OK containers "))
        .expect("the AM container's report");
    assert!(
        am.contains("state=COMPLETE") && am.contains("exit=0"),
        "{am}"
    );
    // The AM's command ran with the environment the client sent.
    let logs = dir.path().join("data/nm-0/logs").join(app);
    let stdout = std::fs::read_dir(&logs)
        .unwrap_or_else(|e| panic!("{}: {e}", logs.display()))
        .filter_map(Result::ok)
        .map(|c| harness::read(&c.path().join("stdout")))
        .collect::<String>();
    assert!(
        stdout.contains("hello from YarnClient"),
        "AM stdout: {stdout:?}"
    );

    // Launch fidelity (wire spec §9.4 step 2): the AM's environment, its resources under
    // their link names, the markers expanded, `tmp/` and the token file.
    let container_logs = std::fs::read_dir(&logs)
        .unwrap()
        .filter_map(Result::ok)
        .map(|c| c.path())
        .find(|p| p.join("env.txt").is_file())
        .expect("the AM wrote env.txt into its log dir");
    let env_text = harness::read(&container_logs.join("env.txt"));
    let env: std::collections::BTreeMap<&str, &str> =
        env_text.lines().filter_map(|l| l.split_once('=')).collect();
    let container = container_logs
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    assert_eq!(
        env.get("CONTAINER_ID"),
        Some(&container.as_str()),
        "{env_text}"
    );
    let pwd = harness::read(&container_logs.join("pwd.txt"));
    let pwd = pwd.trim();
    assert!(
        pwd.ends_with(&format!("/appcache/{app}/{container}")),
        "{pwd}"
    );
    assert_eq!(env.get("PWD"), Some(&pwd));
    assert!(
        env.get("LOCAL_DIRS")
            .is_some_and(|d| d.ends_with(&format!("/appcache/{app}"))),
        "{env_text}"
    );
    assert_eq!(
        env.get("LOG_DIRS").map(Path::new),
        Some(container_logs.as_path()),
        "{env_text}"
    );
    for name in [
        "NM_HOST",
        "NM_PORT",
        "NM_HTTP_PORT",
        "JAVA_HOME",
        "USER",
        "HOME",
    ] {
        assert!(
            env.get(name).is_some_and(|v| !v.is_empty()),
            "no {name} in {env_text}"
        );
    }
    assert!(
        Path::new(env["JAVA_HOME"]).join("bin/java").exists(),
        "JAVA_HOME={}",
        env["JAVA_HOME"]
    );
    assert_eq!(
        env.get("PROBE_CLASSPATH").copied(),
        Some(format!("{pwd}:{pwd}/conf.link").as_str()),
        "{env_text}"
    );
    assert_eq!(
        harness::read(&container_logs.join("file.txt")),
        "file resource\n"
    );
    assert_eq!(
        harness::read(&container_logs.join("archive.txt")),
        "archive resource\n"
    );
    assert_eq!(harness::read(&container_logs.join("tokens.txt")), "HDTS");
}
