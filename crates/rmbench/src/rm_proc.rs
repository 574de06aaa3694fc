//! The RM under test as a child process (`weft rm` on ephemeral ports with a temp data dir),
//! and CPU accounting read from `/proc`.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde::Deserialize;

use crate::error::BenchError;

/// How long the RM gets to write its ready file.
const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the RM gets to exit after SIGTERM before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(5);
/// Linux's USER_HZ: the unit of utime/stime in /proc (100 on every mainstream kernel).
const CLOCK_TICKS_PER_SEC: f64 = 100.0;

/// Where the RM listens.
#[derive(Clone, Debug, Deserialize)]
pub(crate) struct RmAddresses {
    /// The AM service (`host:port`).
    pub(crate) scheduler: String,
    /// The resource tracker (`host:port`).
    pub(crate) tracker: String,
    /// The REST API (`host:port`).
    pub(crate) web: String,
}

/// What the child RM's configuration sets.
#[derive(Clone, Debug)]
pub(crate) struct RmSetup {
    /// The `weft` binary to run as `<binary> rm ...`.
    pub(crate) binary: PathBuf,
    /// Heartbeat interval the RM hands the NMs.
    pub(crate) heartbeat_ms: u64,
    /// `yarn.scheduler.fair.assignmultiple`.
    pub(crate) assign_multiple: bool,
    /// `yarn.scheduler.fair.max.assign` (-1 = no limit); dynamic max-assign is off when set.
    pub(crate) max_assign: Option<i32>,
}

/// The configuration file the child RM is started with.
pub(crate) fn config_toml(setup: &RmSetup) -> String {
    let mut s = format!(
        "heartbeat_interval_ms = {}\n\
         # Simulated NMs are never silent on purpose; a slow bench must not look like dead nodes.\n\
         nm_expiry_ms = 600000\n\
         am_expiry_ms = 600000\n\
         [properties]\n\
         \"yarn.scheduler.fair.assignmultiple\" = {}\n",
        setup.heartbeat_ms, setup.assign_multiple
    );
    if let Some(max) = setup.max_assign {
        s.push_str(&format!(
            "\"yarn.scheduler.fair.dynamic.max.assign\" = false\n\
             \"yarn.scheduler.fair.max.assign\" = {max}\n"
        ));
    }
    s
}

/// A running `weft rm` child; terminated (SIGTERM, then SIGKILL) when dropped.
pub(crate) struct RmProcess {
    child: Child,
    /// Where it listens.
    pub(crate) addresses: RmAddresses,
    log: PathBuf,
    _dir: tempfile::TempDir,
}

impl RmProcess {
    /// Starts the RM and waits (bounded) for its ready file.
    pub(crate) fn start(setup: &RmSetup) -> Result<RmProcess, BenchError> {
        let dir = tempfile::Builder::new()
            .prefix("weft-rmbench-")
            .tempdir()
            .map_err(BenchError::io("cannot create a temp dir"))?;
        let config = dir.path().join("rm.toml");
        std::fs::write(&config, config_toml(setup))
            .map_err(BenchError::io(format!("cannot write {}", config.display())))?;
        let ready = dir.path().join("ready.json");
        let log = dir.path().join("rm.log");
        let log_file = std::fs::File::create(&log)
            .map_err(BenchError::io(format!("cannot create {}", log.display())))?;
        let log_err = log_file
            .try_clone()
            .map_err(BenchError::io("cannot duplicate the log file"))?;
        let child = Command::new(&setup.binary)
            .arg("rm")
            .arg("--config")
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--scheduler-address", "127.0.0.1:0"])
            .args(["--tracker-address", "127.0.0.1:0"])
            .args(["--web-address", "127.0.0.1:0"])
            .arg("--ready-file")
            .arg(&ready)
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err)
            .spawn()
            .map_err(|e| {
                BenchError::Rm(format!(
                    "cannot run {} rm: {e} (pass --rm-binary)",
                    setup.binary.display()
                ))
            })?;
        let mut rm = RmProcess {
            child,
            addresses: RmAddresses {
                scheduler: String::new(),
                tracker: String::new(),
                web: String::new(),
            },
            log,
            _dir: dir,
        };
        rm.addresses = rm.wait_ready(&ready)?;
        Ok(rm)
    }

    fn wait_ready(&mut self, ready: &Path) -> Result<RmAddresses, BenchError> {
        let deadline = crate::clock::now() + READY_TIMEOUT;
        loop {
            if let Ok(text) = std::fs::read_to_string(ready) {
                if let Ok(addresses) = serde_json::from_str::<RmAddresses>(&text) {
                    return Ok(addresses);
                }
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(BenchError::Rm(format!(
                    "exited with {status} before it was ready; its log ends:\n{}",
                    self.log_tail()
                )));
            }
            if crate::clock::now() > deadline {
                return Err(BenchError::Timeout(format!(
                    "the RM wrote no ready file within {READY_TIMEOUT:?}; its log ends:\n{}",
                    self.log_tail()
                )));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The child's process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the child has exited (it must not, during a run).
    pub(crate) fn exited(&mut self) -> Option<String> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.to_string()),
            _ => None,
        }
    }

    /// The last lines of the RM's log, for error messages.
    pub(crate) fn log_tail(&self) -> String {
        let mut text = String::new();
        if let Ok(mut f) = std::fs::File::open(&self.log) {
            let _ = f.read_to_string(&mut text);
        }
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(20)..].join("\n")
    }

    /// How long the RM's log is now, in bytes.
    pub(crate) fn log_len(&self) -> u64 {
        std::fs::metadata(&self.log).map_or(0, |m| m.len())
    }

    /// Log lines at WARN or ERROR level within the first `until` bytes (a clean run has none;
    /// what the bench's own shutdown provokes comes later and is left out).
    pub(crate) fn warnings(&self, until: u64) -> Vec<String> {
        let mut bytes = std::fs::read(&self.log).unwrap_or_default();
        bytes.truncate(usize::try_from(until).unwrap_or(usize::MAX));
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter(|l| l.contains(" WARN ") || l.contains(" ERROR "))
            .map(str::to_string)
            .collect()
    }
}

impl Drop for RmProcess {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = kill(Pid::from_raw(pid), Signal::SIGTERM);
        }
        let deadline = crate::clock::now() + STOP_GRACE;
        while crate::clock::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// CPU seconds (user + system) a process has used so far, from `/proc/<pid>/stat`.
pub(crate) fn process_cpu_seconds(pid: &str) -> Option<f64> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: fields count from after it.
    let rest = &text[text.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3 of the full line, utime 14 and stime 15.
    let utime: f64 = fields.get(11)?.parse().ok()?;
    let stime: f64 = fields.get(12)?.parse().ok()?;
    Some((utime + stime) / CLOCK_TICKS_PER_SEC)
}

/// Busy and total CPU seconds of the whole machine so far, from `/proc/stat`.
pub(crate) fn machine_cpu_seconds() -> Option<(f64, f64)> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let values: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|v| v.parse().ok())
        .collect();
    let total: f64 = values.iter().sum();
    // idle and iowait are the 4th and 5th values.
    let idle = values.get(3).copied().unwrap_or(0.0) + values.get(4).copied().unwrap_or(0.0);
    Some((
        (total - idle) / CLOCK_TICKS_PER_SEC,
        total / CLOCK_TICKS_PER_SEC,
    ))
}

/// The 1-minute load average, from `/proc/loadavg`.
pub(crate) fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_turns_on_assign_multiple_without_a_limit() {
        let setup = RmSetup {
            binary: PathBuf::from("weft"),
            heartbeat_ms: 250,
            assign_multiple: true,
            max_assign: Some(-1),
        };
        let text = config_toml(&setup);
        assert!(text.contains("heartbeat_interval_ms = 250\n"));
        assert!(text.contains("\"yarn.scheduler.fair.assignmultiple\" = true"));
        assert!(text.contains("\"yarn.scheduler.fair.max.assign\" = -1"));
        assert!(text.contains("\"yarn.scheduler.fair.dynamic.max.assign\" = false"));
        let plain = config_toml(&RmSetup {
            max_assign: None,
            ..setup
        });
        assert!(!plain.contains("max.assign"));
    }

    #[test]
    fn own_cpu_time_is_readable_and_grows() {
        let before = process_cpu_seconds("self").unwrap();
        let start = crate::clock::now();
        let mut x = 0u64;
        while start.elapsed() < Duration::from_millis(300) {
            x = x.wrapping_mul(31).wrapping_add(7);
        }
        std::hint::black_box(x);
        let after = process_cpu_seconds("self").unwrap();
        assert!(after > before, "{before} -> {after}");
        let (busy, total) = machine_cpu_seconds().unwrap();
        assert!(busy > 0.0 && total >= busy);
        assert!(load_average().is_some_and(|l| l >= 0.0));
    }
}
