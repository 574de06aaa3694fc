//! Unmodified Spark (pyspark 4.3.0 from PyPI, its Hadoop 3.5.0 client) on `weft up`, with only
//! HADOOP_CONF_DIR pointing at Weft (issue 21 item 6): PySpark's pi example in cluster and
//! client mode; an app killed with Hadoop's YarnClient ends KILLED; an executor whose
//! container is killed is replaced and the job still succeeds.
//!
//! Needs `java`, `javac` and pyspark (installed once into `target/hadoop-venv`, see
//! `hadoop/support.rs`). The submits run one at a time (a lock): each starts two or three
//! JVMs and the CI machine has two cores.

#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "hadoop/support.rs"]
mod support;

use std::collections::BTreeSet;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;
use support::{compile_probe, pyspark_jars, require, run_bounded};

/// One Spark application at a time on this machine.
static ONE_SUBMIT: Mutex<()> = Mutex::new(());

/// How long a whole submit may take (the JVMs start slowly on a busy two-core machine).
const SUBMIT_LIMIT: Duration = Duration::from_secs(300);

/// A `weft up` cluster with pyspark's environment.
struct SparkEnv {
    dir: tempfile::TempDir,
    _up: harness::Proc,
    web: String,
    conf: String,
    spark_home: PathBuf,
    venv: PathBuf,
}

impl SparkEnv {
    fn start() -> SparkEnv {
        require("java");
        let jars = pyspark_jars();
        let spark_home = jars.parent().expect("pyspark's directory").to_path_buf();
        // <venv>/lib/python3.x/site-packages/pyspark/jars
        let venv = jars
            .ancestors()
            .nth(5)
            .expect("the venv holding pyspark")
            .to_path_buf();
        let dir = tempfile::tempdir().unwrap();
        let (up, ready) = harness::weft_up(dir.path(), &["--nms", "2", "--nm-memory-mb", "4096"]);
        SparkEnv {
            web: ready["web"].as_str().expect("the RM's web address").into(),
            conf: ready["hadoop_conf_dir"]
                .as_str()
                .expect("the ready file names hadoop-conf")
                .into(),
            _up: up,
            dir,
            spark_home,
            venv,
        }
    }

    /// `spark-submit --master yarn` of `script args` with the settings README gives, its
    /// output to `<dir>/<name>.out`.
    fn submit(&self, name: &str, mode: &str, script: &Path, args: &[&str]) -> Submit {
        let home = self.spark_home.display().to_string();
        let staging = self.dir.path().join("staging");
        let mut cmd = Command::new(self.venv.join("bin/spark-submit"));
        cmd.args(["--master", "yarn", "--deploy-mode", mode])
            .args(["--conf", &format!("spark.yarn.jars=local:{home}/jars/*")])
            .args([
                "--conf",
                &format!("spark.yarn.stagingDir=file://{}", staging.display()),
            ])
            .args(["--conf", "spark.yarn.populateHadoopClasspath=false"])
            .args(["--conf", "spark.yarn.maxAppAttempts=1"])
            .args(["--conf", "spark.executor.instances=1"])
            .args(["--conf", "spark.executor.memory=512m"])
            .args(["--conf", "spark.driver.memory=512m"])
            .args(["--conf", "spark.yarn.am.memory=512m"])
            .args(["--conf", "spark.ui.port=0"])
            .arg(script)
            .args(args)
            .env("HADOOP_CONF_DIR", &self.conf)
            .env("SPARK_HOME", &self.spark_home)
            .env("PYSPARK_PYTHON", self.venv.join("bin/python3"))
            .stdin(Stdio::null())
            .process_group(0);
        if std::env::var_os("JAVA_HOME").is_none() {
            if let Some(java_home) = java_home() {
                cmd.env("JAVA_HOME", java_home);
            }
        }
        let log = self.dir.path().join(format!("{name}.out"));
        let out = std::fs::File::create(&log).unwrap();
        let child = cmd
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("start spark-submit");
        Submit { child, log }
    }

    fn apps(&self) -> Vec<Value> {
        let (status, body) = harness::get_text(&self.web, "/ws/v1/cluster/apps");
        assert_eq!(status, 200, "{body}");
        let v: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
        v["apps"]["app"].as_array().cloned().unwrap_or_default()
    }

    fn app(&self, id: &str) -> Value {
        let (status, body) = harness::get_text(&self.web, &format!("/ws/v1/cluster/apps/{id}"));
        assert_eq!(status, 200, "{body}");
        serde_json::from_str::<Value>(&body).unwrap_or(Value::Null)["app"].clone()
    }

    /// The one application submitted to this cluster, once the RM reports it `state`.
    fn wait_app_in(&self, state: &str, submit: &mut Submit) -> String {
        harness::wait_for(SUBMIT_LIMIT, &format!("the Spark app {state}"), || {
            assert!(
                submit.child.try_wait().unwrap().is_none(),
                "spark-submit ended early:\n{}",
                submit.output()
            );
            self.apps()
                .into_iter()
                .find(|a| a["state"] == state)
                .and_then(|a| a["id"].as_str().map(String::from))
        })
    }

    /// What a container of `app` wrote to `file` (`<data-dir>/nm-*/logs/<app>/<container>/`).
    fn container_log(&self, app: &str, container: &str, file: &str) -> String {
        let data = self.dir.path().join("data");
        let nms = std::fs::read_dir(&data).expect("the data dir");
        nms.filter_map(Result::ok)
            .map(|e| e.path().join("logs").join(app).join(container).join(file))
            .find(|p| p.is_file())
            .map(|p| harness::read(&p))
            .unwrap_or_default()
    }
}

/// The JDK the `java` on PATH belongs to (spark-submit's scripts want JAVA_HOME or `java`).
fn java_home() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    let java = std::env::split_paths(&path)
        .map(|d| d.join("java"))
        .find(|j| j.is_file())?;
    let real = std::fs::canonicalize(java).ok()?;
    Some(real.parent()?.parent()?.to_path_buf())
}

/// A running spark-submit, killed (its process group) when dropped.
struct Submit {
    child: Child,
    log: PathBuf,
}

impl Submit {
    fn output(&self) -> String {
        harness::read(&self.log)
    }

    /// Waits (bounded) for spark-submit to end; (success, output).
    fn finish(&mut self) -> (bool, String) {
        let status = harness::wait_for(SUBMIT_LIMIT, "spark-submit to end", || {
            self.child.try_wait().unwrap()
        });
        (status.success(), self.output())
    }
}

impl Drop for Submit {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            if let Ok(pid) = i32::try_from(self.child.id()) {
                let _ = kill(Pid::from_raw(-pid), Signal::SIGKILL);
            }
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

fn pi_example(env: &SparkEnv) -> PathBuf {
    env.spark_home.join("examples/src/main/python/pi.py")
}

fn slow_pi() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/hadoop/slow_pi.py")
}

/// The lines worth showing when a check fails.
fn excerpt(output: &str) -> String {
    let lines: Vec<&str> = output
        .lines()
        .filter(|l| {
            l.contains("ERROR")
                || l.contains("Exception")
                || l.contains("status")
                || l.contains("Pi is")
        })
        .take(60)
        .collect();
    lines.join("\n")
}

/// The container id in a process's environment, when it belongs to `app`.
fn container_of(pid: i32) -> Option<String> {
    let env = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    env.split(|b| *b == 0)
        .find_map(|var| var.strip_prefix(b"CONTAINER_ID="))
        .map(|id| String::from_utf8_lossy(id).into_owned())
}

/// The containers of `app` with live processes.
fn live_containers(app: &str) -> BTreeSet<String> {
    harness::app_processes(app)
        .into_iter()
        .filter_map(container_of)
        .collect()
}

fn am_container(app: &str) -> String {
    format!(
        "container_{}_01_000001",
        app.trim_start_matches("application_")
    )
}

#[test]
fn pyspark_pi_runs_in_cluster_mode() {
    let _one = ONE_SUBMIT.lock().unwrap_or_else(|e| e.into_inner());
    let env = SparkEnv::start();
    let mut submit = env.submit("cluster", "cluster", &pi_example(&env), &["4"]);
    let (ok, output) = submit.finish();
    assert!(ok, "spark-submit failed:\n{}", excerpt(&output));
    assert!(
        output.contains("final status: SUCCEEDED"),
        "{}",
        excerpt(&output)
    );
    let apps = env.apps();
    assert_eq!(apps.len(), 1, "{apps:?}");
    let app = apps[0]["id"].as_str().expect("the app's id");
    assert_eq!(apps[0]["state"], "FINISHED", "{:?}", apps[0]);
    assert_eq!(apps[0]["finalStatus"], "SUCCEEDED", "{:?}", apps[0]);
    let driver = env.container_log(app, &am_container(app), "stdout");
    assert!(
        driver.contains("Pi is roughly 3.1"),
        "the driver's stdout:\n{driver}"
    );
}

#[test]
fn pyspark_pi_runs_in_client_mode() {
    let _one = ONE_SUBMIT.lock().unwrap_or_else(|e| e.into_inner());
    let env = SparkEnv::start();
    let mut submit = env.submit("client", "client", &pi_example(&env), &["4"]);
    let (ok, output) = submit.finish();
    assert!(ok, "spark-submit failed:\n{}", excerpt(&output));
    assert!(output.contains("Pi is roughly 3.1"), "{}", excerpt(&output));
    // The AM was given its proxy base, so Spark's AmIpFilter has a valid proxy URI.
    assert!(
        !output.contains("does not appear to be a valid URL"),
        "{}",
        excerpt(&output)
    );
    let apps = env.apps();
    assert_eq!(apps.len(), 1, "{apps:?}");
    let app = apps[0]["id"].as_str().expect("the app's id");
    let report = harness::wait_for(Duration::from_secs(30), "the app FINISHED", || {
        let a = env.app(app);
        (a["state"] == "FINISHED").then_some(a)
    });
    assert_eq!(report["finalStatus"], "SUCCEEDED", "{report:?}");
}

#[test]
fn a_spark_app_killed_with_hadoops_client_ends_killed() {
    let _one = ONE_SUBMIT.lock().unwrap_or_else(|e| e.into_inner());
    require("javac");
    let env = SparkEnv::start();
    let classpath = format!("{}/jars/*", env.spark_home.display());
    let classes = env.dir.path().join("classes");
    compile_probe(
        "KillProbe.java",
        &classpath,
        &classes,
        &env.dir.path().join("javac.out"),
    );
    // 120 partitions of a second each: minutes of work, killed within seconds.
    let mut submit = env.submit("killed", "cluster", &slow_pi(), &["120", "1"]);
    let app = env.wait_app_in("RUNNING", &mut submit);
    // Kill it mid-job: once an executor runs beside the AM.
    harness::wait_for(SUBMIT_LIMIT, "an executor's container", || {
        (live_containers(&app).len() >= 2).then_some(())
    });
    let (killed, probe) = run_bounded(
        Command::new("java")
            .arg("-Xmx128m")
            .arg("-cp")
            .arg(format!("{classpath}:{}:{}", classes.display(), env.conf))
            .arg("KillProbe")
            .arg(&app)
            .env("HADOOP_CONF_DIR", &env.conf),
        Duration::from_secs(120),
        &env.dir.path().join("kill.out"),
    );
    assert!(killed, "the kill probe failed:\n{probe}");
    assert!(
        probe.contains(&format!("KILLED {app} state=KILLED")),
        "{probe}"
    );
    let report = env.app(&app);
    assert_eq!(report["state"], "KILLED", "{report:?}");
    assert_eq!(report["finalStatus"], "KILLED", "{report:?}");
    let (ok, output) = submit.finish();
    assert!(!ok, "spark-submit succeeded on a killed app:\n{output}");
    assert!(output.contains("KILLED"), "{}", excerpt(&output));
    assert!(!output.contains("Pi is roughly"), "{}", excerpt(&output));
    harness::wait_for(
        Duration::from_secs(60),
        "the app's processes to end",
        || harness::app_processes(&app).is_empty().then_some(()),
    );
}

#[test]
fn a_killed_executor_is_replaced_and_the_job_succeeds() {
    let _one = ONE_SUBMIT.lock().unwrap_or_else(|e| e.into_inner());
    let env = SparkEnv::start();
    // 30 partitions of a second each on one executor core: the kill lands mid-job.
    let mut submit = env.submit("executor-killed", "cluster", &slow_pi(), &["30", "1"]);
    let app = env.wait_app_in("RUNNING", &mut submit);
    let am = am_container(&app);
    let executor = harness::wait_for(SUBMIT_LIMIT, "an executor's container", || {
        live_containers(&app).into_iter().find(|c| *c != am)
    });
    // Once its JVM is up (its tasks then run), kill every process of the container.
    harness::wait_for(SUBMIT_LIMIT, "the executor's JVM", || {
        harness::app_processes(&app)
            .into_iter()
            .filter(|pid| container_of(*pid).as_deref() == Some(executor.as_str()))
            .any(|pid| {
                std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| {
                    String::from_utf8_lossy(&c).contains("YarnCoarseGrainedExecutorBackend")
                })
            })
            .then_some(())
    });
    std::thread::sleep(Duration::from_secs(3));
    for pid in harness::app_processes(&app) {
        if container_of(pid).as_deref() == Some(executor.as_str()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
        }
    }
    let replacement = harness::wait_for(SUBMIT_LIMIT, "a replacement executor", || {
        assert!(
            submit.child.try_wait().unwrap().is_none(),
            "spark-submit ended before a replacement:\n{}",
            excerpt(&submit.output())
        );
        live_containers(&app)
            .into_iter()
            .find(|c| *c != am && *c != executor)
    });
    assert!(replacement > executor, "{replacement} after {executor}");
    let (ok, output) = submit.finish();
    assert!(ok, "spark-submit failed:\n{}", excerpt(&output));
    assert!(
        output.contains("final status: SUCCEEDED"),
        "{}",
        excerpt(&output)
    );
    let driver = env.container_log(&app, &am, "stderr");
    assert!(
        driver.contains(&executor),
        "the driver never saw {executor} end:\n{}",
        excerpt(&driver)
    );
    let stdout = env.container_log(&app, &am, "stdout");
    assert!(stdout.contains("Pi is roughly 3.1"), "{stdout}");
}
