//! An existing YARN client library, unchanged, against Weft: the Python package
//! yarn-api-client (installed by scripts/install-test-deps into <workspace>/target/test-venv)
//! runs tests/python/yarn_api_client_check.py against a real cluster.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use harness::{Cluster, Options};

/// The harness's queues and `root.plan`, reservable (a plan of a quarter of the node: four
/// queues of weight 1), for the client's reservation calls.
const ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <queue name="root">
    <queue name="default"/>
    <queue name="prod"/>
    <queue name="dev"/>
    <queue name="plan"><reservation/></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="default"/>
  </queuePlacementPolicy>
</allocations>
"#;

fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn yarn_api_client_works_unchanged_against_weft() {
    let root = workspace();
    let python = root.join("target/test-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/install-test-deps (it installs yarn-api-client into target/test-venv)",
        python.display()
    );
    let installed = Command::new(&python)
        .args(["-c", "import yarn_api_client"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        installed,
        "yarn_api_client is not importable by {}: run scripts/install-test-deps",
        python.display()
    );
    let script = root.join("tests/python/yarn_api_client_check.py");

    // The sleeper AMs never register: a long AM expiry keeps them ACCEPTED however slow
    // the machine is.
    let opts = Options {
        am_expiry_ms: 600_000,
        allocations: ALLOCATIONS,
        ..Options::default()
    };
    let c = Cluster::start(1, 4096, &opts);
    let scratch = c.path("scratch");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let out = c.path("yarn-api-client.out");
    let log = std::fs::File::create(&out).expect("output file");
    let mut child = Command::new(&python)
        .arg(&script)
        .arg(format!("http://{}", c.web))
        .arg(&scratch)
        .stdin(Stdio::null())
        .stdout(log.try_clone().expect("output file"))
        .stderr(log)
        .spawn()
        .expect("start the yarn-api-client check");
    let output = || std::fs::read_to_string(&out).unwrap_or_default();
    // Bounded: a hung script is killed and its output shown.
    let status = (0..1800).find_map(|_| {
        let done = child.try_wait().expect("try_wait");
        if done.is_none() {
            std::thread::sleep(Duration::from_millis(100));
        }
        done
    });
    let Some(status) = status else {
        let _ = child.kill();
        let _ = child.wait();
        panic!(
            "the yarn-api-client check did not finish in 180 s:\n{}",
            output()
        );
    };
    assert!(
        status.success(),
        "yarn-api-client check failed ({status}):\n{}\nRM log:\n{}",
        output(),
        c.rm_logs()
    );
    assert!(
        output().contains("all yarn-api-client checks passed"),
        "{}",
        output()
    );
}
