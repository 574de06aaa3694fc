//! A real cluster for tests: `weft rm` and `weft nm` processes on 127.0.0.1 with ephemeral
//! ports, in a temporary directory. Every wait is bounded, and dropping a [`Cluster`] or a
//! [`Proc`] kills what it started, so a failing test leaves nothing running.

use std::fs::File;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::Duration;

use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::Value;

pub(crate) const WEFT: &str = env!("CARGO_BIN_EXE_weft");

/// How often waits poll.
const POLL: Duration = Duration::from_millis(100);

/// Polls `probe` until it returns `Some`, for at most `timeout`; panics with `what` otherwise.
/// Counts polls rather than reading the clock: a few ms of drift in a test timeout is harmless.
pub(crate) fn wait_for<T>(
    timeout: Duration,
    what: &str,
    mut probe: impl FnMut() -> Option<T>,
) -> T {
    let polls = (timeout.as_millis() / POLL.as_millis()).max(1);
    for _ in 0..polls {
        if let Some(v) = probe() {
            return v;
        }
        std::thread::sleep(POLL);
    }
    panic!("timed out after {timeout:?} waiting for {what}");
}

/// True while a process with this pid exists and is not a zombie.
pub(crate) fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // The state letter follows the command name in parentheses; Z is a zombie, X dead.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// A child process in its own process group, killed (the whole group) when dropped.
pub(crate) struct Proc {
    pub(crate) name: String,
    child: Child,
    pub(crate) log: PathBuf,
    done: Option<ExitStatus>,
    /// `weft up`: dropped with SIGTERM first, since it starts its daemons in process groups of
    /// their own, which a SIGKILL of its group would leave running.
    stop_gently: bool,
}

impl Proc {
    /// Starts `weft <args>` with stdout and stderr to `log`.
    pub(crate) fn spawn(name: &str, args: &[String], log: &Path) -> Proc {
        Proc::spawn_env(name, args, log, &[])
    }

    /// [`Proc::spawn`] with more environment variables (e.g. `HADOOP_USER_NAME`).
    pub(crate) fn spawn_env(name: &str, args: &[String], log: &Path, env: &[(&str, &str)]) -> Proc {
        let out = File::create(log).expect("log file");
        let err = out.try_clone().expect("log file");
        let child = Command::new(WEFT)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .spawn()
            .expect("spawn weft");
        Proc {
            name: name.to_string(),
            child,
            log: log.to_path_buf(),
            done: None,
            stop_gently: false,
        }
    }

    pub(crate) fn pid(&self) -> i32 {
        i32::try_from(self.child.id()).expect("pid")
    }

    pub(crate) fn signal(&self, sig: Signal) {
        let _ = kill(Pid::from_raw(self.pid()), sig);
    }

    /// The exit status, if the process has ended.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        if self.done.is_none() {
            self.done = self.child.try_wait().expect("try_wait");
        }
        self.done
    }

    /// Waits (bounded) for the process to end.
    pub(crate) fn wait(&mut self, timeout: Duration) -> ExitStatus {
        let name = self.name.clone();
        let log = self.log.clone();
        let what = format!("{name} to exit; its output:\n{}", read(&log));
        wait_for(timeout, &what, || self.try_status())
    }

    /// Everything the process wrote so far.
    pub(crate) fn output(&self) -> String {
        read(&self.log)
    }

    /// SIGKILL to the process and its group, and reap it.
    pub(crate) fn kill9(&mut self) {
        if self.try_status().is_none() {
            let _ = kill(Pid::from_raw(-self.pid()), Signal::SIGKILL);
            let _ = self.child.kill();
            self.done = self.child.wait().ok();
        }
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.stop_gently && self.try_status().is_none() {
            self.signal(Signal::SIGTERM);
            // Bounded: `weft up` gives each daemon a few seconds before it SIGKILLs it.
            for _ in 0..300 {
                if self.try_status().is_some() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.kill9();
    }
}

/// Starts `weft up` on 127.0.0.1 with ephemeral ports, its data and ready file in `dir`, plus
/// `extra` arguments; returns it and its ready file's JSON.
#[allow(dead_code)] // only the binaries that run `weft up`
pub(crate) fn weft_up(dir: &Path, extra: &[&str]) -> (Proc, Value) {
    let ready = dir.join("up.ready");
    let data = dir.join("data").display().to_string();
    let ready_arg = ready.display().to_string();
    let mut args: Vec<String> = [
        "up",
        "--ephemeral-ports",
        "--host",
        "127.0.0.1",
        "--data-dir",
        &data,
        "--ready-file",
        &ready_arg,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut up = Proc::spawn("weft up", &args, &dir.join("up.out"));
    up.stop_gently = true;
    let v = ready_json(&mut up, &ready);
    (up, v)
}

/// The command line of a lone `weft rm` (no cluster configuration): its store in `data`, every
/// address ephemeral on 127.0.0.1, then `extra`.
#[allow(dead_code)] // only the binaries that start a lone RM
pub(crate) fn lone_rm_args(data: &Path, extra: &[&str]) -> Vec<String> {
    let data = data.display().to_string();
    [
        "rm",
        "--data-dir",
        &data,
        "--client-address",
        "127.0.0.1:0",
        "--scheduler-address",
        "127.0.0.1:0",
        "--tracker-address",
        "127.0.0.1:0",
        "--web-address",
        "127.0.0.1:0",
    ]
    .iter()
    .chain(extra)
    .map(|s| s.to_string())
    .collect()
}

/// Starts a lone `weft rm` ([`lone_rm_args`]) with `env` added to its environment, its ready
/// file `<dir>/<name>.ready` and its output in `<dir>/<name>.log`, and waits until it is ready;
/// returns it and its ready file's JSON.
#[allow(dead_code)] // only the binaries that start a lone RM
pub(crate) fn start_lone_rm(
    dir: &Path,
    name: &str,
    data: &Path,
    extra: &[&str],
    env: &[(&str, &str)],
) -> (Proc, Value) {
    let ready = dir.join(format!("{name}.ready"));
    let ready_arg = ready.display().to_string();
    let mut args = lone_rm_args(data, &["--ready-file", &ready_arg]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut rm = Proc::spawn_env("RM", &args, &dir.join(format!("{name}.log")), env);
    let v = ready_json(&mut rm, &ready);
    (rm, v)
}

/// GET a path of the web server at `web` (host:port): (status, body); panics when unreachable.
#[allow(dead_code)] // only the binaries that read pages of a `weft up` cluster
pub(crate) fn get_text(web: &str, path: &str) -> (u16, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let url = format!("http://{web}{path}");
    let mut r = agent
        .get(&url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = r.status().as_u16();
    (status, r.body_mut().read_to_string().unwrap_or_default())
}

pub(crate) fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// Reads a daemon's ready file once it holds a whole JSON object.
pub(crate) fn ready_json(proc: &mut Proc, path: &Path) -> Value {
    let name = proc.name.clone();
    wait_for(
        Duration::from_secs(30),
        &format!("{name}'s ready file"),
        || {
            if let Some(status) = proc.try_status() {
                panic!(
                    "{name} exited during startup ({status}); output:\n{}",
                    proc.output()
                );
            }
            let text = std::fs::read_to_string(path).ok()?;
            serde_json::from_str::<Value>(&text)
                .ok()
                .filter(Value::is_object)
        },
    )
}

/// One NM of a [`Cluster`].
pub(crate) struct Nm {
    pub(crate) proc: Proc,
    pub(crate) node_id: String,
    /// Its command line (to start it again on the same directories).
    #[allow(dead_code)] // read by the tests that restart NMs only
    args: Vec<String>,
    #[allow(dead_code)]
    starts: usize,
}

/// An RM and its NMs in a temporary directory.
pub(crate) struct Cluster {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) rm: Option<Proc>,
    pub(crate) nms: Vec<Nm>,
    pub(crate) web: String,
    pub(crate) scheduler: String,
    pub(crate) tracker: String,
    rm_args: Vec<String>,
    rm_starts: usize,
}

/// What a test wants of its cluster.
pub(crate) struct Options {
    pub(crate) nm_expiry_ms: u64,
    pub(crate) am_expiry_ms: u64,
    /// Extra `--no-cgroups` for every NM.
    pub(crate) no_cgroups: bool,
    /// The allocation file the RM starts with.
    pub(crate) allocations: &'static str,
    /// More `"key" = "value"` lines for the RM's `[properties]` (yarn-site keys).
    pub(crate) rm_properties: &'static str,
    /// Run the Capacity Scheduler with this capacity-scheduler.xml (then `allocations` is
    /// not used).
    pub(crate) capacity: Option<&'static str>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            nm_expiry_ms: 3_000,
            am_expiry_ms: 60_000,
            no_cgroups: false,
            allocations: ALLOCATIONS,
            rm_properties: "",
            capacity: None,
        }
    }
}

/// Queues default, prod and dev under root; placement honours the named queue.
pub(crate) const ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <queue name="root">
    <queue name="default"/>
    <queue name="prod"/>
    <queue name="dev"/>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="default"/>
  </queuePlacementPolicy>
</allocations>
"#;

/// What the RM logs when its periodic verification finds the scheduler's state drifted.
const DRIFT_WARNING: &str = "differed from a recomputation from scratch";

/// Small containers allowed (64 MB steps; the Fair Scheduler's default increment is 1 GB), so
/// that tests can make memory limits and nodes small. The scheduler's state is verified every
/// 200 ms (production: every minute), so the verification runs throughout the integration
/// tests: a cluster that logged drift fails its test when it is dropped, and `metrics.rs` checks
/// the metrics.
const RM_CONFIG: &str = r#"[properties]
"yarn.scheduler.minimum-allocation-mb" = "64"
"yarn.scheduler.increment-allocation-mb" = "64"
"weft.scheduler.verify-interval-ms" = "200"
"#;

impl Cluster {
    /// Starts an RM (no NMs yet).
    pub(crate) fn rm_only(opts: &Options) -> Cluster {
        let dir = tempfile::Builder::new()
            .prefix("weft-cluster-")
            .tempdir()
            .expect("tempdir");
        let root = dir.path();
        std::fs::write(root.join("fair-scheduler.xml"), opts.allocations).expect("allocations");
        let rm_config = format!("{RM_CONFIG}{}\n", opts.rm_properties);
        std::fs::write(root.join("rm.toml"), rm_config).expect("rm config");
        let p = |name: &str| root.join(name).display().to_string();
        let mut rm_args: Vec<String> = [
            "rm",
            "--config",
            &p("rm.toml"),
            "--data-dir",
            &p("rm-data"),
            "--nm-expiry-ms",
            &opts.nm_expiry_ms.to_string(),
            "--am-expiry-ms",
            &opts.am_expiry_ms.to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        match opts.capacity {
            Some(xml) => {
                std::fs::write(root.join("capacity-scheduler.xml"), xml).expect("capacity file");
                rm_args.extend(["--scheduler".into(), "capacity".into()]);
                rm_args.extend(["--conf-dir".into(), root.display().to_string()]);
            }
            None => rm_args.extend(["--allocations".into(), p("fair-scheduler.xml")]),
        }
        let mut c = Cluster {
            dir,
            rm: None,
            nms: Vec::new(),
            web: String::new(),
            scheduler: String::new(),
            tracker: String::new(),
            rm_args,
            rm_starts: 0,
        };
        c.start_rm(["127.0.0.1:0", "127.0.0.1:0", "127.0.0.1:0"]);
        c
    }

    /// Starts an RM and `nms` NMs of `memory_mb` each, all registered.
    pub(crate) fn start(nms: usize, memory_mb: i64, opts: &Options) -> Cluster {
        let mut c = Cluster::rm_only(opts);
        for _ in 0..nms {
            c.add_nm(memory_mb, opts.no_cgroups);
        }
        c.wait_nodes_running(nms);
        c
    }

    pub(crate) fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    /// Starts the RM on the given scheduler, tracker and web addresses.
    fn start_rm(&mut self, addresses: [&str; 3]) {
        self.rm_starts += 1;
        let ready = self.path(&format!("rm-{}.ready", self.rm_starts));
        let mut args = self.rm_args.clone();
        for (flag, a) in ["--scheduler-address", "--tracker-address", "--web-address"]
            .iter()
            .zip(addresses)
        {
            args.extend([flag.to_string(), a.to_string()]);
        }
        args.extend(["--client-address".to_string(), "127.0.0.1:0".to_string()]);
        args.extend(["--ready-file".to_string(), ready.display().to_string()]);
        let log = self.path(&format!("rm-{}.log", self.rm_starts));
        let mut rm = Proc::spawn("RM", &args, &log);
        let v = ready_json(&mut rm, &ready);
        let field = |k: &str| v[k].as_str().expect("ready field").to_string();
        self.scheduler = field("scheduler");
        self.tracker = field("tracker");
        self.web = field("web");
        self.rm = Some(rm);
    }

    /// `kill -9` of the RM.
    pub(crate) fn kill9_rm(&mut self) {
        if let Some(mut rm) = self.rm.take() {
            rm.kill9();
        }
    }

    /// Starts the RM again on the same data directory and the same addresses (the NMs and
    /// AMs know only those).
    pub(crate) fn restart_rm(&mut self) {
        let (s, t, w) = (
            self.scheduler.clone(),
            self.tracker.clone(),
            self.web.clone(),
        );
        self.start_rm([&s, &t, &w]);
    }

    /// Everything every RM run logged.
    pub(crate) fn rm_logs(&self) -> String {
        (1..=self.rm_starts)
            .map(|i| read(&self.path(&format!("rm-{i}.log"))))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Starts an NM offering `memory_mb` and 8 vcores; returns its index.
    pub(crate) fn add_nm(&mut self, memory_mb: i64, no_cgroups: bool) -> usize {
        let i = self.nms.len();
        let data = self.path(&format!("nm-{i}"));
        let ready = self.path(&format!("nm-{i}.ready"));
        let mut args: Vec<String> = vec![
            "nm".into(),
            "--rm-tracker".into(),
            self.tracker.clone(),
            "--address".into(),
            "127.0.0.1:0".into(),
            "--web-address".into(),
            "127.0.0.1:0".into(),
            "--hostname".into(),
            "localhost".into(),
            "--data-dir".into(),
            data.display().to_string(),
            "--memory-mb".into(),
            memory_mb.to_string(),
            "--vcores".into(),
            "8".into(),
            "--ready-file".into(),
            ready.display().to_string(),
        ];
        if no_cgroups {
            args.push("--no-cgroups".into());
        }
        let mut proc = Proc::spawn(
            &format!("NM {i}"),
            &args,
            &self.path(&format!("nm-{i}.log")),
        );
        let v = ready_json(&mut proc, &ready);
        let node_id = v["node_id"].as_str().expect("node_id").to_string();
        self.nms.push(Nm {
            proc,
            node_id,
            args,
            starts: 1,
        });
        i
    }

    /// `kill -9` of NM `i` (its containers run on, orphaned), then the same NM again: same
    /// directories and container-management port, so the same node id.
    #[allow(dead_code)] // not every test binary restarts NMs
    pub(crate) fn kill9_and_restart_nm(&mut self, i: usize) {
        let nm = &mut self.nms[i];
        nm.proc.kill9();
        nm.starts += 1;
        let port = nm
            .node_id
            .rsplit_once(':')
            .expect("host:port")
            .1
            .to_string();
        let ready = self.dir.path().join(format!("nm-{i}-{}.ready", nm.starts));
        let mut args = nm.args.clone();
        let at = |args: &[String], flag: &str| args.iter().position(|a| a == flag).map(|p| p + 1);
        if let Some(p) = at(&args, "--address") {
            args[p] = format!("127.0.0.1:{port}");
        }
        if let Some(p) = at(&args, "--ready-file") {
            args[p] = ready.display().to_string();
        }
        let log = self.dir.path().join(format!("nm-{i}-{}.log", nm.starts));
        let mut proc = Proc::spawn(&format!("NM {i} (restarted)"), &args, &log);
        let v = ready_json(&mut proc, &ready);
        assert_eq!(v["node_id"], nm.node_id.as_str(), "the same node id");
        nm.proc = proc;
    }

    /// An HTTP agent that reports non-2xx statuses instead of failing.
    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into()
    }

    /// GET a REST path: (status, JSON body or Null).
    pub(crate) fn get(&self, path: &str) -> (u16, Value) {
        let url = format!("http://{}{path}", self.web);
        match Self::agent().get(&url).call() {
            Ok(mut r) => {
                let status = r.status().as_u16();
                let text = r.body_mut().read_to_string().unwrap_or_default();
                (status, serde_json::from_str(&text).unwrap_or(Value::Null))
            }
            Err(_) => (0, Value::Null),
        }
    }

    /// GET a path as text (e.g. `/metrics`): (status, body; 0 and empty when unreachable).
    #[allow(dead_code)] // not every test binary reads text pages
    pub(crate) fn get_text(&self, path: &str) -> (u16, String) {
        let url = format!("http://{}{path}", self.web);
        match Self::agent().get(&url).call() {
            Ok(mut r) => (
                r.status().as_u16(),
                r.body_mut().read_to_string().unwrap_or_default(),
            ),
            Err(_) => (0, String::new()),
        }
    }

    /// PUT JSON to a REST path: (status, JSON body or Null).
    pub(crate) fn put(&self, path: &str, body: &Value) -> (u16, Value) {
        let url = format!("http://{}{path}", self.web);
        let mut r = Self::agent()
            .put(&url)
            .send_json(body)
            .unwrap_or_else(|e| panic!("PUT {url}: {e}"));
        let status = r.status().as_u16();
        let text = r.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// The RM's `{"app": ...}` object for `id`.
    pub(crate) fn app(&self, id: &str) -> Value {
        let (status, v) = self.get(&format!("/ws/v1/cluster/apps/{id}"));
        assert_eq!(status, 200, "GET app {id}: {v}");
        v["app"].clone()
    }

    /// Waits until the app's state is one of `states`; returns the app object.
    pub(crate) fn wait_app_state(&self, id: &str, states: &[&str], timeout: Duration) -> Value {
        let mut last = Value::Null;
        let found = (0..(timeout.as_millis() / POLL.as_millis()).max(1)).find_map(|_| {
            let (status, v) = self.get(&format!("/ws/v1/cluster/apps/{id}"));
            if status == 200 && states.iter().any(|s| v["app"]["state"] == *s) {
                return Some(v["app"].clone());
            }
            last = v;
            std::thread::sleep(POLL);
            None
        });
        found.unwrap_or_else(|| {
            panic!(
                "timed out waiting for {id} to be {states:?}; last report: {last}\nRM logs:\n{}",
                self.rm_logs()
            )
        })
    }

    /// The RM's view of a node (`{"node": ...}` inner object), if it knows it.
    pub(crate) fn node(&self, node_id: &str) -> Option<Value> {
        let (status, v) = self.get("/ws/v1/cluster/nodes");
        if status != 200 {
            return None;
        }
        v["nodes"]["node"]
            .as_array()?
            .iter()
            .find(|n| n["id"] == node_id)
            .cloned()
    }

    /// Waits until `count` nodes are RUNNING.
    pub(crate) fn wait_nodes_running(&self, count: usize) {
        wait_for(
            Duration::from_secs(20),
            &format!("{count} RUNNING nodes"),
            || {
                let running = self
                    .nms
                    .iter()
                    .filter(|nm| {
                        self.node(&nm.node_id)
                            .is_some_and(|n| n["state"] == "RUNNING")
                    })
                    .count();
                (running >= count).then_some(())
            },
        );
    }

    /// Starts `weft dshell` against this cluster (in the background).
    pub(crate) fn dshell(&self, name: &str, args: &[&str]) -> Proc {
        let mut all: Vec<String> = vec![
            "dshell".into(),
            "-rm".into(),
            format!("http://{}", self.web),
            "-timeout".into(),
            "120000".into(),
        ];
        all.extend(args.iter().map(|s| s.to_string()));
        Proc::spawn(
            &format!("dshell {name}"),
            &all,
            &self.path(&format!("dshell-{name}.out")),
        )
    }

    /// The application id a dshell printed once it submitted.
    pub(crate) fn submitted_app(&self, dshell: &mut Proc) -> String {
        let name = dshell.name.clone();
        wait_for(
            Duration::from_secs(30),
            &format!("{name} to submit"),
            || {
                if let Some(status) = dshell.try_status() {
                    panic!(
                        "{name} exited ({status}) before submitting:\n{}",
                        dshell.output()
                    );
                }
                dshell
                    .output()
                    .lines()
                    .find_map(|l| l.strip_prefix("Submitted application "))
                    .and_then(|rest| rest.split_whitespace().next())
                    .map(str::to_string)
            },
        )
    }

    /// The pids the containers of a test recorded as `<dir>/*.pid`.
    pub(crate) fn recorded_pids(dir: &Path) -> Vec<i32> {
        let mut pids: Vec<i32> = std::fs::read_dir(dir)
            .map(|rd| {
                rd.filter_map(Result::ok)
                    .filter(|e| e.path().extension().is_some_and(|x| x == "pid"))
                    .filter_map(|e| read(&e.path()).trim().parse().ok())
                    .collect()
            })
            .unwrap_or_default();
        pids.sort_unstable();
        pids
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // NMs first and gently, so they stop their containers; then anything left is killed.
        for nm in &self.nms {
            if nm.proc.done.is_none() {
                nm.proc.signal(Signal::SIGTERM);
            }
        }
        for nm in &mut self.nms {
            let _ = (0..50).find(|_| {
                let done = nm.proc.try_status().is_some();
                if !done {
                    std::thread::sleep(POLL);
                }
                done
            });
            nm.proc.kill9();
        }
        self.kill9_rm();
        // Containers orphaned by an NM a test killed recorded their pids here.
        for pid in Cluster::recorded_pids(&self.path("work")) {
            if alive(pid) {
                let _ = kill(Pid::from_raw(pid), Signal::SIGKILL);
            }
        }
        // Every test is also a check of the scheduler's periodic verification: no drift.
        if !std::thread::panicking() {
            let drifted: Vec<String> = self
                .rm_logs()
                .lines()
                .filter(|l| l.contains(DRIFT_WARNING))
                .map(str::to_string)
                .collect();
            assert!(
                drifted.is_empty(),
                "the scheduler's state drifted:\n{}",
                drifted.join("\n")
            );
        }
    }
}

/// Live processes whose environment says they belong to application `app_id` (the NM gives
/// every container APPLICATION_ID), so a test can see that nothing of an app survives.
pub(crate) fn app_processes(app_id: &str) -> Vec<i32> {
    let needle = format!("APPLICATION_ID={app_id}");
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|var| var == needle.as_bytes()))
        })
        .filter(|pid| alive(*pid))
        .collect()
}
