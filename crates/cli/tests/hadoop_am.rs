//! Hadoop's own AMRMClient (the 3.5.0 client jars pyspark 4.3.0 bundles), unmodified, as the
//! ApplicationMaster of an application on `weft up` (wire spec §9.4 step 3): a
//! Java probe submits itself through YarnClient, and as the AM (run by Weft's NM, finding the
//! RM through HADOOP_CONF_DIR's `yarn.resourcemanager.scheduler.address`) registers, gets 2
//! containers at priority 1 with the NM token of their node, starts one with Hadoop's NMClient
//! on Weft's NM (`exit 3`), releases the other, sees both completed (exit 3 and -100), and
//! unregisters SUCCEEDED; the app ends FINISHED/SUCCEEDED. That is §9.4 step 3 whole.
//!
//! The AM runs as the AM of a submitted app rather than as an unmanaged AM because Weft
//! refuses unmanaged AMs (rm-core, as over REST), and because that is how Spark's AM will run.
//!
//! Needs what `hadoop_client.rs` needs (a JDK 17 and pyspark's jars in `target/hadoop-venv`).

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
fn hadoops_amrm_client_runs_an_am_on_weft_up() {
    require("java");
    require("javac");
    let jars = pyspark_jars();
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    compile_probe(
        "AmProbe.java",
        &format!("{}/*", jars.display()),
        &classes,
        &dir.path().join("javac.out"),
    );

    let (_up, ready) = harness::weft_up(dir.path(), &["--nms", "1", "--nm-memory-mb", "4096"]);
    let conf = ready["hadoop_conf_dir"]
        .as_str()
        .expect("the ready file names hadoop-conf");
    let scheduler = ready["scheduler"]
        .as_str()
        .expect("the ready file names the AM port");
    let yarn_site = std::fs::read_to_string(Path::new(conf).join("yarn-site.xml")).unwrap();
    assert!(
        yarn_site.contains(&format!(
            "<name>yarn.resourcemanager.scheduler.address</name>\n    <value>{scheduler}</value>"
        )),
        "{yarn_site}"
    );

    let classpath = format!("{}/*:{}:{conf}", jars.display(), classes.display());
    let (passed, output) = run_bounded(
        Command::new("java")
            .arg("-Xmx256m")
            .arg("-cp")
            .arg(&classpath)
            .arg("AmProbe")
            .arg("client")
            // As Spark writes it: the NM expands it with the JAVA_HOME it gives containers.
            .arg("{{JAVA_HOME}}/bin/java")
            .arg(&classpath)
            .env("HADOOP_CONF_DIR", conf)
            .env("HADOOP_USER_NAME", "probe-user"),
        Duration::from_secs(240),
        &dir.path().join("probe.out"),
    );
    let app = output
        .lines()
        .find_map(|l| l.strip_prefix("OK submitted "))
        .unwrap_or_else(|| panic!("no application submitted:\n{output}"))
        .trim()
        .to_string();
    let logs = dir.path().join("data/nm-0/logs").join(&app);
    let am_stdout = std::fs::read_dir(&logs)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|c| harness::read(&c.path().join("stdout")))
                .collect::<String>()
        })
        .unwrap_or_default();
    let shown = |text: &str| -> String {
        text.lines()
            .filter(|l| l.contains("OK ") || l.contains("FAIL ") || l.contains("Exception"))
            .take(60)
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert!(
        passed && output.contains("PROBE PASSED"),
        "the client failed:\n{}\nAM:\n{}",
        shown(&output),
        shown(&am_stdout)
    );
    for step in [
        "AM OK registered",
        "AM OK allocated count=2 priority=1 nmtokens=1",
        "AM OK started",
        "AM OK released",
        "AM OK exited",
        "AM OK unregistered SUCCEEDED",
    ] {
        assert!(
            am_stdout.contains(step),
            "no `{step}` in the AM's stdout:\n{}",
            shown(&am_stdout)
        );
    }
    let released = am_stdout
        .lines()
        .find_map(|l| l.strip_prefix("AM OK released "))
        .unwrap_or_default();
    assert!(
        released.contains("state=COMPLETE") && released.contains("exit=-100"),
        "{released}"
    );
    let exited = am_stdout
        .lines()
        .find_map(|l| l.strip_prefix("AM OK exited "))
        .unwrap_or_default();
    assert!(
        exited.contains("state=COMPLETE") && exited.contains("exit=3"),
        "{exited}"
    );
    assert!(
        am_stdout.contains("token=ContainerToken"),
        "{}",
        shown(&am_stdout)
    );
    let final_line = output
        .lines()
        .find_map(|l| l.strip_prefix("OK final "))
        .unwrap_or_default();
    assert!(final_line.starts_with("FINISHED SUCCEEDED"), "{final_line}");
    // Shown with --nocapture: what the AM and its client saw.
    eprintln!("{}\n{}", shown(&am_stdout), shown(&output));
}
