//! `weft up`: a whole cluster on this machine — one RM and N NMs as child processes of this
//! binary — kept in the foreground and stopped in order (NMs first, then the RM) on Ctrl-C or
//! SIGTERM.
//!
//! The children get their own process group so that a terminal's Ctrl-C reaches only this
//! process, which then stops them in a deliberate order: NMs first (they kill their containers
//! and unregister), the RM last (so the NMs' goodbyes are heard).

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context};
use nix::sys::signal::{kill, Signal};
use nix::unistd::Pid;
use serde_json::{json, Value};
use tokio::process::{Child, Command};
use tokio::signal::unix::{signal, SignalKind};
use weft_sched::SchedulerKind;

/// How often the children's liveness and ready files are checked.
const POLL: Duration = Duration::from_millis(100);
/// How long a child has to exit after SIGTERM before it gets SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(10);

/// A fair-scheduler allocation file for a first cluster: three weighted queues under root, fair
/// sharing, and placement that honours the queue a submission names (else `default`).
const DEFAULT_ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<!-- Written by `weft up`. Edit freely: the RM reloads this file when it changes. -->
<allocations>
  <defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>
  <queue name="root">
    <queue name="default">
      <weight>1.0</weight>
    </queue>
    <queue name="prod">
      <weight>3.0</weight>
    </queue>
    <queue name="dev">
      <weight>1.0</weight>
      <maxRunningApps>10</maxRunningApps>
    </queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="default"/>
  </queuePlacementPolicy>
</allocations>
"#;

/// A capacity-scheduler.xml for a first cluster, as Hadoop ships it: one leaf, `default`, with
/// the whole cluster.
const DEFAULT_CAPACITY: &str = r#"<?xml version="1.0"?>
<!-- Written by `weft up`. Edit freely: the RM re-reads this file when it changes and on
     `weft rmadmin -refreshQueues` (a refresh Hadoop's rules refuse keeps the running queues). -->
<configuration>
  <property>
    <name>yarn.scheduler.capacity.root.queues</name>
    <value>default</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.capacity</name>
    <value>100</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.user-limit-factor</name>
    <value>1</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.maximum-capacity</name>
    <value>100</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.state</name>
    <value>RUNNING</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.acl_submit_applications</name>
    <value>*</value>
  </property>
  <property>
    <name>yarn.scheduler.capacity.root.default.acl_administer_queue</name>
    <value>*</value>
  </property>
</configuration>
"#;

/// The schedulers `weft up` can run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SchedulerChoice {
    /// Hadoop's Fair Scheduler, with an allocation file the RM reloads when it changes.
    Fair,
    /// Hadoop's FIFO scheduler: one queue (`default`), no allocation file.
    Fifo,
    /// Hadoop's Capacity Scheduler, with a capacity-scheduler.xml the RM reloads when it
    /// changes.
    Capacity,
}

impl SchedulerChoice {
    fn kind(self) -> SchedulerKind {
        match self {
            SchedulerChoice::Fair => SchedulerKind::Fair,
            SchedulerChoice::Fifo => SchedulerKind::Fifo,
            SchedulerChoice::Capacity => SchedulerKind::Capacity,
        }
    }
}

/// `weft up` flags.
#[derive(clap::Args, Debug, Clone)]
pub(crate) struct UpArgs {
    /// How many NodeManagers to start.
    #[arg(long, default_value_t = 2)]
    nms: u32,
    /// Where the RM's state, the NMs' directories, the logs and the default allocation file
    /// live [default: ./weft-data, or $TMPDIR/weft-up-$USER when the current directory is not
    /// writable].
    #[arg(long = "data-dir")]
    data_dir: Option<PathBuf>,
    /// The Fair Scheduler allocation file [default: <data-dir>/fair-scheduler.xml, written
    /// with a few example queues when missing].
    #[arg(long)]
    allocations: Option<PathBuf>,
    /// The RM's scheduler [default: the one --rm-config or --yarn-site names, else fair].
    /// Under fifo no allocation file is written, handed over or watched.
    #[arg(long, value_enum)]
    scheduler: Option<SchedulerChoice>,
    /// Under the Capacity Scheduler, the directory holding capacity-scheduler.xml [default:
    /// --yarn-site's directory when it has one, else the data directory, where a file with
    /// one queue, default, at 100% is written when missing].
    #[arg(long = "conf-dir")]
    conf_dir: Option<PathBuf>,
    /// A TOML configuration file for the RM (see `weft rm --help`).
    #[arg(long = "rm-config")]
    rm_config: Option<PathBuf>,
    /// Hadoop's yarn-site.xml for the RM (the Fair Scheduler's yarn-site properties, e.g.
    /// examples/yarn-site.xml); --allocations still names the allocation file.
    #[arg(long = "yarn-site")]
    yarn_site: Option<PathBuf>,
    /// The address every daemon listens on.
    #[arg(long, default_value = "0.0.0.0")]
    host: String,
    /// The host name every daemon is known by: the NMs' node ids and web addresses (the web
    /// UI's log links) and the URLs printed here [default: --host, or 127.0.0.1 when --host
    /// listens everywhere]. Set it to a name other machines resolve to share the cluster.
    #[arg(long = "advertise-host")]
    advertise_host: Option<String>,
    /// Let every daemon pick a free port (the addresses are printed once they are up).
    #[arg(long = "ephemeral-ports")]
    ephemeral_ports: bool,
    /// The RM's Hadoop IPC client port (ApplicationClientProtocol: YarnClient, spark-submit).
    #[arg(long = "client-port", default_value_t = 8032)]
    client_port: u16,
    /// The RM's scheduler (AM service) port.
    #[arg(long = "scheduler-port", default_value_t = 8030)]
    scheduler_port: u16,
    /// The RM's resource-tracker port.
    #[arg(long = "tracker-port", default_value_t = 8031)]
    tracker_port: u16,
    /// The RM's web/REST port.
    #[arg(long = "web-port", default_value_t = 8088)]
    web_port: u16,
    /// NM i (from 0) serves containers on this port + 2i (8041, 8043, ...).
    #[arg(long = "nm-port-base", default_value_t = 8041)]
    nm_port_base: u16,
    /// NM i (from 0) serves its web service (container logs) on this port + 2i (8042,
    /// 8044, ...): interleaved with the container ports, so NM 0 keeps YARN's 8041/8042.
    #[arg(long = "nm-web-port-base", default_value_t = 8042)]
    nm_web_port_base: u16,
    /// Memory each NM offers, MB.
    #[arg(long = "nm-memory-mb", default_value_t = 8192)]
    nm_memory_mb: i64,
    /// Virtual cores each NM offers.
    #[arg(long = "nm-vcores", default_value_t = 8)]
    nm_vcores: i64,
    /// NM expiry in ms, passed to the RM.
    #[arg(long = "nm-expiry-ms")]
    nm_expiry_ms: Option<u64>,
    /// AM expiry in ms, passed to the RM.
    #[arg(long = "am-expiry-ms")]
    am_expiry_ms: Option<u64>,
    /// Do not use cgroups in the NMs (the memory monitor still enforces limits).
    #[arg(long = "no-cgroups")]
    no_cgroups: bool,
    /// How long to wait for the daemons to come up, in seconds.
    #[arg(long = "startup-timeout", default_value_t = 30)]
    startup_timeout: u64,
    /// Once the cluster is up, write its addresses and the daemons' pids here as JSON.
    #[arg(long = "ready-file")]
    ready_file: Option<PathBuf>,
}

/// One daemon this command started.
struct Daemon {
    name: String,
    child: Child,
    log: PathBuf,
}

impl Daemon {
    fn pid(&self) -> Option<Pid> {
        self.child
            .id()
            .and_then(|p| i32::try_from(p).ok())
            .map(Pid::from_raw)
    }

    /// Asks the daemon to stop (SIGTERM), unless it already has.
    fn terminate(&mut self) {
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        if let Some(pid) = self.pid() {
            let _ = kill(pid, Signal::SIGTERM);
        }
    }

    /// Waits (bounded) for the daemon to exit after [`Daemon::terminate`], then SIGKILLs it.
    async fn finish(&mut self) {
        match tokio::time::timeout(STOP_GRACE, self.child.wait()).await {
            Ok(Ok(status)) if status.success() => println!("{} stopped", self.name),
            Ok(Ok(status)) => println!("{} stopped ({})", self.name, describe(status)),
            Ok(Err(e)) => println!("{}: cannot wait for it: {e}", self.name),
            Err(_) => {
                println!(
                    "{} did not stop within {} s; killing it",
                    self.name,
                    STOP_GRACE.as_secs()
                );
                let _ = self.child.start_kill();
                let _ = tokio::time::timeout(STOP_GRACE, self.child.wait()).await;
            }
        }
    }
}

/// The daemons, in start order (RM first).
#[derive(Default)]
struct Cluster {
    daemons: Vec<Daemon>,
}

impl Cluster {
    /// The first daemon that has exited, with its status.
    fn exited(&mut self) -> Option<(usize, ExitStatus)> {
        self.daemons
            .iter_mut()
            .enumerate()
            .find_map(|(i, d)| d.child.try_wait().ok().flatten().map(|s| (i, s)))
    }

    /// NMs first (all asked at once, so they stop together), then the RM.
    async fn stop(&mut self) {
        let nms = self.daemons.len().min(1)..self.daemons.len();
        for d in &mut self.daemons[nms.clone()] {
            d.terminate();
        }
        for d in &mut self.daemons[nms] {
            d.finish().await;
        }
        if let Some(rm) = self.daemons.first_mut() {
            rm.terminate();
            rm.finish().await;
        }
    }
}

fn describe(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt as _;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => Signal::try_from(sig)
            .map(|s| format!("killed by {s}"))
            .unwrap_or_else(|_| format!("killed by signal {sig}")),
        _ => status.to_string(),
    }
}

/// The last lines of a daemon's log, to show why it died.
fn tail(path: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let all: Vec<&str> = text.lines().collect();
    all[all.len().saturating_sub(lines)..].join("\n")
}

/// SIGINT or SIGTERM.
struct Signals {
    interrupt: tokio::signal::unix::Signal,
    terminate: tokio::signal::unix::Signal,
}

impl Signals {
    fn new() -> anyhow::Result<Signals> {
        Ok(Signals {
            interrupt: signal(SignalKind::interrupt()).context("cannot catch SIGINT")?,
            terminate: signal(SignalKind::terminate()).context("cannot catch SIGTERM")?,
        })
    }

    async fn recv(&mut self) -> &'static str {
        tokio::select! {
            _ = self.interrupt.recv() => "SIGINT",
            _ = self.terminate.recv() => "SIGTERM",
        }
    }
}

fn current_user() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("LOGNAME"))
        .ok()
        .filter(|u| !u.is_empty() && !u.contains('/'))
        .unwrap_or_else(|| "weft".to_string())
}

/// The data directory, created and made absolute: the NMs run containers from other working
/// directories, so every path handed to a daemon must not depend on this one's.
fn data_dir(given: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match given {
        Some(d) => {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
            d.to_path_buf()
        }
        None => {
            let local = PathBuf::from("weft-data");
            if std::fs::create_dir_all(&local).is_ok() {
                local
            } else {
                let tmp = std::env::temp_dir().join(format!("weft-up-{}", current_user()));
                std::fs::create_dir_all(&tmp)
                    .with_context(|| format!("cannot create {}", tmp.display()))?;
                tmp
            }
        }
    };
    std::fs::canonicalize(&dir).with_context(|| format!("cannot resolve {}", dir.display()))
}

fn absolute(path: &Path) -> anyhow::Result<PathBuf> {
    std::fs::canonicalize(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Where everything lives under the data directory.
struct Layout {
    root: PathBuf,
    ready: PathBuf,
    logs: PathBuf,
}

impl Layout {
    fn new(root: PathBuf) -> anyhow::Result<Layout> {
        let ready = root.join("ready");
        let logs = root.join("logs");
        for d in [&ready, &logs] {
            std::fs::create_dir_all(d).with_context(|| format!("cannot create {}", d.display()))?;
        }
        Ok(Layout { root, ready, logs })
    }

    /// A ready-file path, with any file a previous run left removed so it cannot be mistaken
    /// for this run's.
    fn fresh_ready_file(&self, name: &str) -> anyhow::Result<PathBuf> {
        let path = self.ready.join(format!("{name}.json"));
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e).with_context(|| format!("cannot remove {}", path.display())),
        }
        Ok(path)
    }

    fn log_file(&self, name: &str) -> anyhow::Result<(PathBuf, File)> {
        let path = self.logs.join(format!("{name}.log"));
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
            .with_context(|| format!("cannot open {}", path.display()))?;
        Ok((path, file))
    }
}

fn spawn(layout: &Layout, name: &str, log_name: &str, args: Vec<String>) -> anyhow::Result<Daemon> {
    let exe = std::env::current_exe().context("cannot find the weft binary")?;
    let (log, file) = layout.log_file(log_name)?;
    let err = file
        .try_clone()
        .with_context(|| format!("cannot open {}", log.display()))?;
    let mut cmd = Command::new(exe);
    cmd.args(&args)
        .stdin(Stdio::null())
        .stdout(file)
        .stderr(err)
        .process_group(0)
        .kill_on_drop(true);
    let child = cmd
        .spawn()
        .with_context(|| format!("cannot start the {name}"))?;
    Ok(Daemon {
        name: name.to_string(),
        child,
        log,
    })
}

/// Waits until `path` holds a JSON object, failing if the daemon exits first.
async fn wait_ready(daemon: &mut Daemon, path: &Path) -> anyhow::Result<Value> {
    loop {
        if let Ok(text) = std::fs::read_to_string(path) {
            // The daemon may be caught mid-write: only a whole object counts.
            if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(&text) {
                return Ok(v);
            }
        }
        if let Ok(Some(status)) = daemon.child.try_wait() {
            bail!(
                "the {} exited during startup ({}); last lines of {}:\n{}",
                daemon.name,
                describe(status),
                daemon.log.display(),
                tail(&daemon.log, 20)
            );
        }
        tokio::time::sleep(POLL).await;
    }
}

fn field<'a>(v: &'a Value, key: &str, what: &str) -> anyhow::Result<&'a str> {
    v.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| anyhow!("the {what}'s ready file has no \"{key}\": {v}"))
}

/// Where one NM can be reached.
struct NodeAddresses {
    node_id: String,
    /// Its container-management service.
    address: String,
    /// Its web service (`host:port`).
    web: String,
    /// Its Hadoop ContainerManagementProtocol (`host:port`, NMClient's NodeId).
    hadoop: String,
}

/// Addresses of the running cluster.
struct Addresses {
    client: String,
    scheduler: String,
    tracker: String,
    web: String,
    /// Per NM.
    nodes: Vec<NodeAddresses>,
}

/// The host name the daemons advertise (see `--advertise-host`).
fn advertised_host(args: &UpArgs) -> String {
    match &args.advertise_host {
        Some(h) => h.clone(),
        None if args.host == "0.0.0.0" || args.host == "::" || args.host.is_empty() => {
            "127.0.0.1".to_string()
        }
        None => args.host.clone(),
    }
}

/// `addr` (`ip:port`) with its host replaced by the advertised one.
fn advertised(args: &UpArgs, addr: &str) -> String {
    match addr.rsplit_once(':') {
        Some((_, port)) => format!("{}:{port}", advertised_host(args)),
        None => addr.to_string(),
    }
}

fn port(args: &UpArgs, fixed: u16) -> String {
    let p = if args.ephemeral_ports { 0 } else { fixed };
    format!("{}:{p}", args.host)
}

/// NM `i`'s port counted from `base` (two ports per NM), or 0 with ephemeral ports.
fn nm_port(args: &UpArgs, base: u16, flag: &str, i: u32) -> anyhow::Result<u16> {
    if args.ephemeral_ports {
        return Ok(0);
    }
    u16::try_from(u32::from(base) + 2 * i)
        .map_err(|_| anyhow!("NM {i}'s port would be above 65535 (--{flag} {base})"))
}

/// Starts the RM, then the NMs, each waited for in turn.
async fn start(
    args: &UpArgs,
    layout: &Layout,
    scheduler: &Scheduler,
    cluster: &mut Cluster,
) -> anyhow::Result<Addresses> {
    let rm_ready = layout.fresh_ready_file("rm")?;
    let mut rm_args: Vec<String> = vec![
        "rm".into(),
        "--data-dir".into(),
        layout.root.join("rm").display().to_string(),
        "--client-address".into(),
        port(args, args.client_port),
        "--scheduler-address".into(),
        port(args, args.scheduler_port),
        "--tracker-address".into(),
        port(args, args.tracker_port),
        "--web-address".into(),
        port(args, args.web_port),
        "--ready-file".into(),
        rm_ready.display().to_string(),
        "--allocations-poll-ms".into(),
        "1000".into(),
    ];
    if let Some(path) = &scheduler.allocations {
        rm_args.extend(["--allocations".into(), path.display().to_string()]);
    }
    if let Some(dir) = &scheduler.conf_dir {
        rm_args.extend(["--conf-dir".into(), dir.display().to_string()]);
    }
    if args.scheduler.is_some() {
        rm_args.extend(["--scheduler".into(), scheduler.kind.short_name().into()]);
    }
    if let Some(c) = &args.rm_config {
        rm_args.extend(["--config".into(), absolute(c)?.display().to_string()]);
    }
    if let Some(y) = &args.yarn_site {
        rm_args.extend(["--yarn-site".into(), absolute(y)?.display().to_string()]);
    }
    if let Some(ms) = args.nm_expiry_ms {
        rm_args.extend(["--nm-expiry-ms".into(), ms.to_string()]);
    }
    if let Some(ms) = args.am_expiry_ms {
        rm_args.extend(["--am-expiry-ms".into(), ms.to_string()]);
    }
    cluster
        .daemons
        .push(spawn(layout, "ResourceManager", "rm", rm_args)?);
    let rm = wait_ready(&mut cluster.daemons[0], &rm_ready).await?;
    let client = field(&rm, "client", "RM")?.to_string();
    let scheduler = field(&rm, "scheduler", "RM")?.to_string();
    let tracker = field(&rm, "tracker", "RM")?.to_string();
    let web = field(&rm, "web", "RM")?.to_string();

    // Start every NM before waiting for any, so they come up together.
    let mut ready_files = Vec::new();
    for i in 0..args.nms {
        let ready = layout.fresh_ready_file(&format!("nm-{i}"))?;
        let cm_port = nm_port(args, args.nm_port_base, "nm-port-base", i)?;
        let web_port = nm_port(args, args.nm_web_port_base, "nm-web-port-base", i)?;
        let mut nm_args: Vec<String> = vec![
            "nm".into(),
            "--rm-tracker".into(),
            tracker.clone(),
            "--address".into(),
            format!("{}:{cm_port}", args.host),
            "--web-address".into(),
            format!("{}:{web_port}", args.host),
            // Hadoop's ContainerManagementProtocol on a free port, as Hadoop's default
            // `yarn.nodemanager.address` (the NM registers it with the RM).
            "--hadoop-address".into(),
            format!("{}:0", args.host),
            // One advertised host for every daemon: the NMs' web addresses then resolve
            // wherever the RM's does (the UI's log links), not only where the machine's host
            // name resolves.
            "--hostname".into(),
            advertised_host(args),
            "--data-dir".into(),
            layout.root.join(format!("nm-{i}")).display().to_string(),
            "--memory-mb".into(),
            args.nm_memory_mb.to_string(),
            "--vcores".into(),
            args.nm_vcores.to_string(),
            "--ready-file".into(),
            ready.display().to_string(),
        ];
        if args.no_cgroups {
            nm_args.push("--no-cgroups".into());
        }
        cluster.daemons.push(spawn(
            layout,
            &format!("NodeManager {i}"),
            &format!("nm-{i}"),
            nm_args,
        )?);
        ready_files.push(ready);
    }
    let mut nodes = Vec::new();
    for (i, ready) in ready_files.iter().enumerate() {
        let nm = wait_ready(&mut cluster.daemons[i + 1], ready).await?;
        nodes.push(NodeAddresses {
            node_id: field(&nm, "node_id", "NM")?.to_string(),
            address: field(&nm, "address", "NM")?.to_string(),
            web: field(&nm, "web", "NM")?.to_string(),
            hadoop: field(&nm, "hadoop", "NM")?.to_string(),
        });
    }
    Ok(Addresses {
        client,
        scheduler,
        tracker,
        web,
        nodes,
    })
}

/// How to run this binary from the user's shell: `weft` when its directory is on `PATH`, else
/// its path (relative to `cwd` when inside it, e.g. `target/release/weft`); and, in that case,
/// the line that puts it on `PATH`.
pub(crate) fn command_name(
    exe: &Path,
    cwd: &Path,
    path_var: Option<&std::ffi::OsStr>,
) -> (String, Option<String>) {
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let on_path = path_var.is_some_and(|p| std::env::split_paths(p).any(|d| d == dir));
    if on_path && exe.file_name().is_some_and(|n| n == "weft") {
        return ("weft".to_string(), None);
    }
    let shown = match exe.strip_prefix(cwd) {
        Ok(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => exe.display().to_string(),
    };
    let hint = format!(
        "To type just `weft`: export PATH=\"{}:$PATH\"  (or: cargo install --path crates/cli)",
        dir.display()
    );
    (shown, Some(hint))
}

fn print_banner(
    args: &UpArgs,
    layout: &Layout,
    scheduler: &Scheduler,
    a: &Addresses,
    hadoop_conf: &Path,
) {
    let web = advertised(args, &a.web);
    println!("Weft cluster is up (data in {})", layout.root.display());
    println!("  ResourceManager");
    println!("    web/REST   http://{web}/cluster");
    println!(
        "    client     {}  (Hadoop IPC: YarnClient, spark-submit)",
        a.client
    );
    println!("    scheduler  {}  (ApplicationMasters)", a.scheduler);
    println!("    tracker    {}  (NodeManagers)", a.tracker);
    for (i, n) in a.nodes.iter().enumerate() {
        println!(
            "  NodeManager {i}  {}  at {}  ({} MB, {} vcores)",
            n.node_id, n.address, args.nm_memory_mb, args.nm_vcores
        );
        println!(
            "    web/logs   http://{}/ws/v1/node",
            advertised(args, &n.web)
        );
    }
    match (&scheduler.allocations, scheduler.kind) {
        (None, SchedulerKind::Capacity) => {
            println!("  scheduler    Capacity");
            if let Some(dir) = &scheduler.conf_dir {
                println!(
                    "  queues       {}  (reloaded when it changes)",
                    dir.join(weft_rm::CAPACITY_FILE).display()
                );
            }
        }
        (Some(path), _) => {
            println!("  scheduler    Fair");
            println!(
                "  allocations  {}  (reloaded when it changes)",
                path.display()
            );
        }
        (None, SchedulerKind::Fifo) => {
            println!(
                "  scheduler    FIFO  (one queue, default; no allocation file to write or watch)"
            )
        }
        (None, kind) => println!("  scheduler    {}  (no allocation file)", kind.short_name()),
    }
    println!("  logs         {}", layout.logs.display());
    println!("For Hadoop's own clients (YarnClient, spark-submit --master yarn):");
    println!("  export HADOOP_CONF_DIR={}", hadoop_conf.display());
    // The verbs find the RM at 127.0.0.1:8088 by default; anywhere else they need -rm.
    let rm = if web == "127.0.0.1:8088" {
        String::new()
    } else {
        format!("-rm http://{web} ")
    };
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("weft"));
    let cwd = std::env::current_dir().unwrap_or_default();
    let (weft, hint) = command_name(&exe, &cwd, std::env::var_os("PATH").as_deref());
    println!("Try, in another terminal:");
    println!("  {weft} dshell {rm}-num_containers 4 -shell_command hostname");
    println!("  {weft} application {rm}-list -appStates ALL");
    if let Some(hint) = hint {
        println!("{hint}");
    }
    println!("Press Ctrl-C to stop the cluster.");
}

fn write_ready(
    path: &Path,
    a: &Addresses,
    hadoop_conf: &Path,
    cluster: &Cluster,
) -> anyhow::Result<()> {
    let pid = |i: usize| cluster.daemons.get(i).and_then(|d| d.child.id());
    let nodes: Vec<Value> = a
        .nodes
        .iter()
        .enumerate()
        .map(|(i, n)| {
            json!({"node_id": n.node_id, "address": n.address, "web": n.web, "hadoop": n.hadoop, "pid": pid(i + 1)})
        })
        .collect();
    let v = json!({
        "client": a.client,
        "hadoop_conf_dir": hadoop_conf,
        "web": a.web,
        "scheduler": a.scheduler,
        "tracker": a.tracker,
        "rm_pid": pid(0),
        "nodes": nodes,
    });
    std::fs::write(path, v.to_string()).with_context(|| format!("cannot write {}", path.display()))
}

/// What ended the foreground wait.
enum End {
    Signal(&'static str),
    Died(usize, ExitStatus),
}

/// The scheduler the RM runs and the queue file `up` hands it.
struct Scheduler {
    kind: SchedulerKind,
    /// Only the Fair Scheduler has one.
    allocations: Option<PathBuf>,
    /// Only the Capacity Scheduler has one: the directory of its capacity-scheduler.xml.
    conf_dir: Option<PathBuf>,
}

/// The scheduler kind: the flag, else what the RM's configuration files name (so a yarn-site
/// naming FifoScheduler gets no allocation file either), else fair.
fn scheduler_kind(args: &UpArgs) -> anyhow::Result<SchedulerKind> {
    if let Some(choice) = args.scheduler {
        return Ok(choice.kind());
    }
    let rm = weft_rm::RmArgs {
        config: args.rm_config.clone(),
        yarn_site: args.yarn_site.clone(),
        ..weft_rm::RmArgs::default()
    };
    let settings = weft_rm::Settings::load(&rm).context("the RM's configuration")?;
    Ok(settings.properties.scheduler_kind)
}

/// Decides the scheduler; under fair, writes the default allocation file when there is none,
/// under capacity the default capacity-scheduler.xml.
fn scheduler(args: &UpArgs, layout: &Layout) -> anyhow::Result<Scheduler> {
    let kind = scheduler_kind(args)?;
    if kind != SchedulerKind::Capacity {
        if let Some(dir) = &args.conf_dir {
            bail!(
                "--conf-dir {} names where capacity-scheduler.xml lives, but the scheduler is {}, which reads none",
                dir.display(),
                kind.short_name()
            );
        }
    }
    if kind != SchedulerKind::Fair {
        if let Some(path) = &args.allocations {
            bail!(
                "--allocations {} names a Fair Scheduler allocation file, but the scheduler is {}, which takes none",
                path.display(),
                kind.short_name()
            );
        }
        return Ok(Scheduler {
            kind,
            allocations: None,
            conf_dir: (kind == SchedulerKind::Capacity)
                .then(|| capacity_dir(args, layout))
                .transpose()?,
        });
    }
    let path = match &args.allocations {
        Some(path) => absolute(path)?,
        None => {
            let path = layout.root.join("fair-scheduler.xml");
            // An existing file is the user's (perhaps edited) configuration: keep it.
            if !path.exists() {
                std::fs::write(&path, DEFAULT_ALLOCATIONS)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            path
        }
    };
    Ok(Scheduler {
        kind,
        allocations: Some(path),
        conf_dir: None,
    })
}

/// Where capacity-scheduler.xml is read: `--conf-dir`, else --yarn-site's directory when it
/// holds one, else the data directory, where the default file is written when missing (an
/// existing one is the user's, perhaps edited: kept).
fn capacity_dir(args: &UpArgs, layout: &Layout) -> anyhow::Result<PathBuf> {
    if let Some(dir) = &args.conf_dir {
        return absolute(dir);
    }
    if let Some(site) = &args.yarn_site {
        let dir = absolute(site)?
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default();
        if dir.join(weft_rm::CAPACITY_FILE).exists() {
            return Ok(dir);
        }
    }
    let path = layout.root.join(weft_rm::CAPACITY_FILE);
    if !path.exists() {
        std::fs::write(&path, DEFAULT_CAPACITY)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(layout.root.clone())
}

async fn up(args: UpArgs) -> anyhow::Result<()> {
    let mut signals = Signals::new()?;
    let layout = Layout::new(data_dir(args.data_dir.as_deref())?)?;
    let scheduler = scheduler(&args, &layout)?;

    let mut cluster = Cluster::default();
    let startup = tokio::time::timeout(
        Duration::from_secs(args.startup_timeout),
        start(&args, &layout, &scheduler, &mut cluster),
    );
    let started = tokio::select! {
        r = startup => match r {
            Ok(r) => r,
            Err(_) => Err(anyhow!(
                "the cluster did not come up within {} s (logs in {})",
                args.startup_timeout,
                layout.logs.display()
            )),
        },
        sig = signals.recv() => Err(anyhow!("{sig} during startup")),
    };
    let addresses = match started {
        Ok(a) => a,
        Err(e) => {
            cluster.stop().await;
            return Err(e);
        }
    };
    let hadoop_conf = crate::up_hadoop_conf::write(
        &layout.root,
        &crate::up_hadoop_conf::RmAddresses {
            client: &advertised(&args, &addresses.client),
            scheduler: &advertised(&args, &addresses.scheduler),
            tracker: &advertised(&args, &addresses.tracker),
            web: &advertised(&args, &addresses.web),
        },
    );
    let hadoop_conf = match hadoop_conf {
        Ok(dir) => dir,
        Err(e) => {
            cluster.stop().await;
            return Err(e);
        }
    };
    print_banner(&args, &layout, &scheduler, &addresses, &hadoop_conf);
    if let Some(path) = &args.ready_file {
        if let Err(e) = write_ready(path, &addresses, &hadoop_conf, &cluster) {
            cluster.stop().await;
            return Err(e);
        }
    }

    // Only a queue file has reloads to tell of.
    let stop_watching = Arc::new(AtomicBool::new(false));
    let has_queue_file = scheduler.allocations.is_some() || scheduler.conf_dir.is_some();
    let watcher = has_queue_file.then(|| {
        tokio::task::spawn_blocking({
            let web = addresses.web.clone();
            let stop = Arc::clone(&stop_watching);
            move || crate::up_reloads::watch(web, stop)
        })
    });
    let end = loop {
        tokio::select! {
            sig = signals.recv() => break End::Signal(sig),
            _ = tokio::time::sleep(POLL) => {
                if let Some((i, status)) = cluster.exited() {
                    break End::Died(i, status);
                }
            }
        }
    };
    stop_watching.store(true, Ordering::Relaxed);
    if let Some(watcher) = watcher {
        let _ = watcher.await;
    }
    match end {
        End::Signal(sig) => {
            println!("{sig} received: stopping the cluster");
            cluster.stop().await;
            println!("Cluster stopped");
            Ok(())
        }
        End::Died(i, status) => {
            let d = &cluster.daemons[i];
            let message = format!(
                "the {} exited unexpectedly ({}); last lines of {}:\n{}",
                d.name,
                describe(status),
                d.log.display(),
                tail(&d.log, 20)
            );
            eprintln!("{message}");
            println!("Stopping the rest of the cluster");
            cluster.stop().await;
            Err(anyhow!(message))
        }
    }
}

/// Runs `weft up` until Ctrl-C or SIGTERM (success) or a daemon's unexpected exit (failure).
pub(crate) fn run(args: UpArgs) -> anyhow::Result<()> {
    if args.nms == 0 {
        bail!("--nms must be at least 1");
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(up(args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_command_is_one_the_shell_can_run() {
        let exe = Path::new("/src/weft/target/release/weft");
        // Run from the checkout: the relative path, and how to put it on PATH.
        let (cmd, hint) = command_name(exe, Path::new("/src/weft"), Some("/usr/bin".as_ref()));
        assert_eq!(cmd, "target/release/weft");
        let hint = hint.expect("a PATH hint");
        assert!(
            hint.contains("export PATH=\"/src/weft/target/release:$PATH\""),
            "{hint}"
        );
        // From elsewhere: the absolute path.
        let (cmd, _) = command_name(exe, Path::new("/home/u"), None);
        assert_eq!(cmd, "/src/weft/target/release/weft");
        // Already on PATH: just `weft`, no hint.
        let path = std::env::join_paths(["/usr/bin", "/src/weft/target/release"]).unwrap();
        let (cmd, hint) = command_name(exe, Path::new("/home/u"), Some(path.as_os_str()));
        assert_eq!((cmd.as_str(), hint), ("weft", None));
    }

    #[test]
    fn every_daemon_advertises_one_host() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            up: UpArgs,
        }
        let parse = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("up").chain(argv.iter().copied()))
                .unwrap()
                .up
        };
        let args = parse(&[]);
        assert_eq!(advertised_host(&args), "127.0.0.1", "listening everywhere");
        assert_eq!(advertised(&args, "0.0.0.0:8042"), "127.0.0.1:8042");
        let args = parse(&["--host", "10.0.0.5"]);
        assert_eq!(advertised_host(&args), "10.0.0.5");
        let args = parse(&["--advertise-host", "gw.example", "--host", "0.0.0.0"]);
        assert_eq!(advertised(&args, "127.0.0.1:8088"), "gw.example:8088");
    }

    #[test]
    fn only_the_fair_scheduler_gets_an_allocation_file() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            up: UpArgs,
        }
        let parse = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("up").chain(argv.iter().copied()))
                .unwrap()
                .up
        };
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().to_path_buf()).unwrap();
        let written = dir.path().join("fair-scheduler.xml");

        let fifo = scheduler(&parse(&["--scheduler", "fifo"]), &layout).unwrap();
        assert_eq!(fifo.kind, SchedulerKind::Fifo);
        assert_eq!(fifo.allocations, None);
        assert!(!written.exists(), "no file is written for FIFO");

        let e = scheduler(
            &parse(&["--scheduler", "fifo", "--allocations", "mine.xml"]),
            &layout,
        )
        .err()
        .expect("an allocation file for FIFO is refused");
        assert!(
            e.to_string().contains(
                "--allocations mine.xml names a Fair Scheduler allocation file, but the scheduler is fifo"
            ),
            "{e}"
        );

        // By default: fair, with the example file written once.
        let fair = scheduler(&parse(&[]), &layout).unwrap();
        assert_eq!(fair.kind, SchedulerKind::Fair);
        assert_eq!(fair.allocations.as_deref(), Some(written.as_path()));
        assert_eq!(
            std::fs::read_to_string(&written).unwrap(),
            DEFAULT_ALLOCATIONS
        );

        // A yarn-site.xml naming FifoScheduler is followed when no flag is given.
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            "<configuration><property><name>yarn.resourcemanager.scheduler.class</name>\
             <value>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler</value>\
             </property></configuration>",
        )
        .unwrap();
        let from_site =
            scheduler(&parse(&["--yarn-site", site.to_str().unwrap()]), &layout).unwrap();
        assert_eq!(from_site.kind, SchedulerKind::Fifo);
        assert_eq!(from_site.allocations, None);
    }

    #[test]
    fn the_capacity_scheduler_gets_hadoops_default_file_or_the_users() {
        use clap::Parser;
        #[derive(Parser)]
        struct Cli {
            #[command(flatten)]
            up: UpArgs,
        }
        let parse = |argv: &[&str]| {
            Cli::try_parse_from(std::iter::once("up").chain(argv.iter().copied()))
                .unwrap()
                .up
        };
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path().join("data")).unwrap();
        let cs = scheduler(&parse(&["--scheduler", "capacity"]), &layout).unwrap();
        assert_eq!(cs.kind, SchedulerKind::Capacity);
        assert_eq!(cs.allocations, None);
        assert_eq!(cs.conf_dir.as_deref(), Some(layout.root.as_path()));
        let written = std::fs::read_to_string(layout.root.join("capacity-scheduler.xml")).unwrap();
        let (config, warnings) =
            weft_config::capacity::parse_capacity(&written, &Default::default()).unwrap();
        assert!(warnings.is_empty(), "{warnings:?}");
        let leaves: Vec<&str> = config.leaves().map(|q| q.path.as_str()).collect();
        assert_eq!(leaves, ["root.default"]);
        assert_eq!(
            config.queue("root.default").map(|q| q.capacity.clone()),
            Some(weft_config::capacity::CapacityValue::Percent(100.0))
        );

        // The user's directory is handed over as it is, and nothing is written there.
        let mine = dir.path().join("conf");
        std::fs::create_dir(&mine).unwrap();
        let conf = mine.to_str().unwrap();
        let cs = scheduler(
            &parse(&["--scheduler", "capacity", "--conf-dir", conf]),
            &layout,
        )
        .unwrap();
        assert_eq!(cs.conf_dir.as_deref(), Some(mine.as_path()));
        assert!(!mine.join("capacity-scheduler.xml").exists());

        let e = scheduler(
            &parse(&["--scheduler", "fair", "--conf-dir", conf]),
            &layout,
        )
        .err()
        .expect("a configuration directory for fair is refused");
        assert!(
            e.to_string()
                .contains("the scheduler is fair, which reads none"),
            "{e}"
        );
    }
}
