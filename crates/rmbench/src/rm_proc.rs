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

/// The RM a run drives: a running one named by `--rm-scheduler`, `--rm-tracker` and `--rm-web`
/// (its pid from `--rm-pid`, if given), or a child started with `setup` (its `binary` replaced
/// by `--rm-binary` or this executable). The child, if any, is returned for the run to watch.
pub(crate) fn target_rm(
    args: &crate::RmBenchArgs,
    setup: impl FnOnce(PathBuf) -> RmSetup,
) -> Result<(RmAddresses, Option<u32>, Option<RmProcess>), BenchError> {
    match (&args.rm_scheduler, &args.rm_tracker, &args.rm_web) {
        (Some(scheduler), Some(tracker), Some(web)) => Ok((
            RmAddresses {
                scheduler: scheduler.clone(),
                tracker: tracker.clone(),
                web: web.clone(),
            },
            args.rm_pid,
            None,
        )),
        (None, None, None) => {
            let binary = match &args.rm_binary {
                Some(b) => b.clone(),
                None => std::env::current_exe()
                    .map_err(BenchError::io("cannot find this executable"))?,
            };
            let rm = RmProcess::start(&setup(binary))?;
            Ok((rm.addresses.clone(), Some(rm.pid()), Some(rm)))
        }
        _ => Err(BenchError::Args(
            "a running RM needs --rm-scheduler, --rm-tracker and --rm-web".into(),
        )),
    }
}

/// A run's result as the caller should see it: an error if the child RM died during the run
/// (with its log's tail), the run's own error with the child's log tail appended, or the
/// result itself.
pub(crate) fn checked_against_child<T>(
    child: &mut Option<RmProcess>,
    result: Result<T, BenchError>,
) -> Result<T, BenchError> {
    if let Some((status, tail)) = child
        .as_mut()
        .and_then(|c| c.exited().map(|s| (s, c.log_tail())))
    {
        return Err(BenchError::Rm(format!(
            "exited with {status} during the run; its log ends:\n{tail}"
        )));
    }
    result.map_err(|e| match child {
        Some(c) => BenchError::Rm(format!("{e}\nthe RM's log ends:\n{}", c.log_tail())),
        None => e,
    })
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
    /// The allocation file's text (fair-scheduler.xml), if the run brings one.
    pub(crate) allocations_xml: Option<String>,
    /// More yarn-site properties (a preset's), written after the ones above.
    pub(crate) properties: Vec<(String, String)>,
    /// The RM's worker threads (passed as WEFT_RM_WORKER_THREADS, which RMs that predate it
    /// ignore, so `--rm-binary` can still run them); `None` leaves the RM's default.
    pub(crate) worker_threads: Option<usize>,
    /// Start the RM bound to this CPU (`--pin`), so it sizes its runtime for one CPU from the
    /// start (binding it only later leaves it with threads for two).
    pub(crate) cpu: Option<usize>,
}

/// A TOML basic string holding `text` (quotes, backslashes and control characters escaped).
fn toml_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `yarn.scheduler.fair.max.assign`.
pub(crate) const MAX_ASSIGN: &str = "yarn.scheduler.fair.max.assign";
/// `yarn.scheduler.fair.dynamic.max.assign`.
pub(crate) const DYNAMIC_MAX_ASSIGN: &str = "yarn.scheduler.fair.dynamic.max.assign";

/// The configuration file the child RM is started with.
pub(crate) fn config_toml(setup: &RmSetup, allocations: Option<&Path>) -> String {
    let mut s = String::new();
    if let Some(path) = allocations {
        s.push_str(&format!(
            "allocations = {}\n",
            toml_string(&path.display().to_string())
        ));
    }
    s.push_str(&format!(
        "heartbeat_interval_ms = {}\n\
         # Simulated NMs are never silent on purpose; a slow bench must not look like dead nodes.\n\
         nm_expiry_ms = 600000\n\
         am_expiry_ms = 600000\n\
         [properties]\n\
         \"yarn.scheduler.fair.assignmultiple\" = {}\n",
        setup.heartbeat_ms, setup.assign_multiple
    ));
    if let Some(max) = setup.max_assign {
        s.push_str(&format!(
            "\"{DYNAMIC_MAX_ASSIGN}\" = false\n\
             \"{MAX_ASSIGN}\" = {max}\n"
        ));
    }
    for (name, value) in &setup.properties {
        let set_above = name == "yarn.scheduler.fair.assignmultiple"
            || (setup.max_assign.is_some() && (name == MAX_ASSIGN || name == DYNAMIC_MAX_ASSIGN));
        if !set_above {
            s.push_str(&format!("{} = {}\n", toml_string(name), toml_string(value)));
        }
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
        let allocations = match &setup.allocations_xml {
            Some(xml) => {
                let path = dir.path().join("fair-scheduler.xml");
                std::fs::write(&path, xml)
                    .map_err(BenchError::io(format!("cannot write {}", path.display())))?;
                Some(path)
            }
            None => None,
        };
        let config = dir.path().join("rm.toml");
        std::fs::write(&config, config_toml(setup, allocations.as_deref()))
            .map_err(BenchError::io(format!("cannot write {}", config.display())))?;
        let ready = dir.path().join("ready.json");
        let log = dir.path().join("rm.log");
        let log_file = std::fs::File::create(&log)
            .map_err(BenchError::io(format!("cannot create {}", log.display())))?;
        let log_err = log_file
            .try_clone()
            .map_err(BenchError::io("cannot duplicate the log file"))?;
        let mut command = Command::new(&setup.binary);
        command
            .arg("rm")
            .arg("--config")
            .arg(&config)
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .args(["--client-address", "127.0.0.1:0"])
            .args(["--scheduler-address", "127.0.0.1:0"])
            .args(["--tracker-address", "127.0.0.1:0"])
            .args(["--web-address", "127.0.0.1:0"])
            .arg("--ready-file")
            .arg(&ready)
            .envs(
                setup
                    .worker_threads
                    .map(|n| ("WEFT_RM_WORKER_THREADS", n.to_string())),
            )
            .stdin(Stdio::null())
            .stdout(log_file)
            .stderr(log_err);
        let child = spawn_on(&mut command, setup.cpu).map_err(|e| {
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

/// A process's resident memory now and its peak so far (`VmRSS`, `VmHWM` in
/// `/proc/<pid>/status`), in bytes.
pub(crate) fn process_memory(pid: &str) -> Option<(u64, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| -> Option<u64> {
        let line = text.lines().find(|l| l.starts_with(name))?;
        let kib: u64 = line[name.len()..]
            .trim()
            .trim_end_matches("kB")
            .trim()
            .parse()
            .ok()?;
        Some(kib * 1024)
    };
    Some((field("VmRSS:")?, field("VmHWM:")?))
}

/// Spawns `command`, bound to `cpu` when given: a child starts with its parent thread's
/// binding, so this thread is bound while it spawns and then given its binding back.
fn spawn_on(command: &mut Command, cpu: Option<usize>) -> std::io::Result<Child> {
    use nix::sched::{sched_getaffinity, sched_setaffinity, CpuSet};
    let Some(cpu) = cpu else {
        return command.spawn();
    };
    let this_thread = Pid::from_raw(0);
    let own = sched_getaffinity(this_thread).map_err(std::io::Error::from)?;
    let mut set = CpuSet::new();
    set.set(cpu).map_err(std::io::Error::from)?;
    sched_setaffinity(this_thread, &set).map_err(std::io::Error::from)?;
    let child = command.spawn();
    sched_setaffinity(this_thread, &own).map_err(std::io::Error::from)?;
    child
}

/// Binds every thread of process `pid` (`self` for this one) to CPU `cpu`: threads started
/// later inherit their creator's binding, so this holds for the rest of the run.
pub(crate) fn pin_process(pid: &str, cpu: usize) -> Result<(), BenchError> {
    use nix::sched::{sched_setaffinity, CpuSet};
    let mut set = CpuSet::new();
    set.set(cpu)
        .map_err(|e| BenchError::Args(format!("cannot pin to CPU {cpu}: {e}")))?;
    let tasks = format!("/proc/{pid}/task");
    let entries =
        std::fs::read_dir(&tasks).map_err(BenchError::io(format!("cannot list {tasks}")))?;
    for entry in entries {
        let entry = entry.map_err(BenchError::io(format!("cannot list {tasks}")))?;
        let Some(tid) = entry
            .file_name()
            .to_str()
            .and_then(|t| t.parse::<i32>().ok())
        else {
            continue;
        };
        // A thread may end between the listing and the call; that is no failure.
        match sched_setaffinity(Pid::from_raw(tid), &set) {
            Ok(()) | Err(nix::errno::Errno::ESRCH) => {}
            Err(e) => {
                return Err(BenchError::Args(format!(
                    "cannot pin thread {tid} of process {pid} to CPU {cpu}: {e}"
                )))
            }
        }
    }
    Ok(())
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
            allocations_xml: None,
            worker_threads: None,
            properties: vec![
                ("yarn.scheduler.fair.max.assign".into(), "7".into()),
                (
                    "yarn.scheduler.fair.update-interval-ms".into(),
                    "500".into(),
                ),
            ],
            cpu: None,
        };
        let text = config_toml(&setup, Some(Path::new("/tmp/a \"b\".xml")));
        assert!(text.starts_with("allocations = \"/tmp/a \\\"b\\\".xml\"\n"));
        assert!(text.contains("\"yarn.scheduler.fair.update-interval-ms\" = \"500\"\n"));
        assert!(
            !text.contains("= \"7\""),
            "the bench's own max.assign wins: {text}"
        );
        let parsed: toml::Table = toml::from_str(&text).unwrap();
        assert_eq!(parsed["allocations"].as_str(), Some("/tmp/a \"b\".xml"));
        assert!(text.contains("heartbeat_interval_ms = 250\n"));
        assert!(text.contains("\"yarn.scheduler.fair.assignmultiple\" = true"));
        assert!(text.contains("\"yarn.scheduler.fair.max.assign\" = -1"));
        assert!(text.contains("\"yarn.scheduler.fair.dynamic.max.assign\" = false"));
        let plain = config_toml(
            &RmSetup {
                max_assign: None,
                properties: Vec::new(),
                ..setup
            },
            None,
        );
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
        let (rss, peak) = process_memory("self").unwrap();
        assert!(rss > 0 && peak >= rss, "{rss} {peak}");
    }
}
