//! What the Hadoop client tests share: pyspark's jars (Hadoop's 3.5.0 client) installed once
//! into `target/hadoop-venv`, the JDK check, compiling a probe, and running a process with a
//! bound.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

const PYSPARK: &str = "pyspark==4.3.0";

/// `<workspace>/target`.
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory")
        .to_path_buf()
}

fn jars_in(venv: &Path) -> Option<PathBuf> {
    let lib = std::fs::read_dir(venv.join("lib")).ok()?;
    lib.filter_map(Result::ok)
        .map(|e| e.path().join("site-packages/pyspark/jars"))
        .find(|j| j.join("hadoop-client-api-3.5.0.jar").is_file())
}

/// pyspark's jar directory, installed into `target/hadoop-venv` on first use. An interrupted
/// install (no `installed` marker) is removed and redone.
pub(crate) fn pyspark_jars() -> PathBuf {
    let venv = target_dir().join("hadoop-venv");
    let marker = venv.join("installed");
    if marker.is_file() {
        if let Some(jars) = jars_in(&venv) {
            return jars;
        }
    }
    let _ = std::fs::remove_dir_all(&venv);
    let run = |cmd: &mut Command, what: &str| {
        let status = cmd.status().unwrap_or_else(|e| {
            panic!("cannot run {what}: {e} (python3 with venv and pip is needed)")
        });
        assert!(status.success(), "{what} failed ({status})");
    };
    run(
        Command::new("python3").arg("-m").arg("venv").arg(&venv),
        "python3 -m venv",
    );
    run(
        Command::new(venv.join("bin/pip")).args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-cache-dir",
            PYSPARK,
        ]),
        &format!("pip install {PYSPARK}"),
    );
    let jars = jars_in(&venv).expect("pyspark installed its jars");
    std::fs::write(&marker, PYSPARK).expect("write the install marker");
    eprintln!("installed {PYSPARK} into {}", venv.display());
    jars
}

pub(crate) fn require(tool: &str) {
    let found = Command::new(tool)
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "`{tool}` is not on PATH: install a JDK 17 (Debian: openjdk-17-jdk-headless; scripts/install-test-deps does it)"
    );
}

/// Runs `cmd` to its end, killing it after `limit` (counted in polls, as the harness's waits
/// are); (success, stdout + stderr).
pub(crate) fn run_bounded(cmd: &mut Command, limit: Duration, out: &Path) -> (bool, String) {
    let file = std::fs::File::create(out).unwrap();
    let mut child = cmd
        .stdout(file.try_clone().unwrap())
        .stderr(file)
        .spawn()
        .expect("start java");
    const POLL: Duration = Duration::from_millis(100);
    let mut polls = limit.as_millis() / POLL.as_millis();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if polls == 0 {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        polls -= 1;
        std::thread::sleep(POLL);
    };
    let text = std::fs::read_to_string(out).unwrap_or_default();
    (status.is_some_and(|s| s.success()), text)
}

/// Compiles `crates/cli/tests/hadoop/<source>` against `classpath` into `classes`.
pub(crate) fn compile_probe(source: &str, classpath: &str, classes: &Path, log: &Path) {
    std::fs::create_dir_all(classes).unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/hadoop")
        .join(source);
    let (compiled, out) = run_bounded(
        Command::new("javac")
            .arg("-d")
            .arg(classes)
            .arg("-cp")
            .arg(classpath)
            .arg(&source),
        Duration::from_secs(180),
        log,
    );
    assert!(compiled, "javac failed:\n{out}");
}
