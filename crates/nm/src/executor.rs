//! Runs containers as process groups, enforces memory limits and stops them cleanly.
//!
//! Each container gets a supervisor task that owns its `bash launch_container.sh` child and
//! waits for whichever comes first: the process exiting, a stop request (SIGTERM to the
//! whole tree, SIGKILL after the grace period) or the memory monitor finding the tree's RSS
//! over the limit (only for containers without a cgroup; the kernel enforces a cgroup's limit). Whatever ends the container, leftover processes of its group, tree and
//! cgroup are killed, so nothing outlives it.

use std::collections::BTreeMap;
use std::fs::File;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};

use crate::cgroups::{CgroupError, CgroupLimits, CgroupMode, ContainerCgroup};
use crate::exit::{self, human_bytes};
use crate::launch::{prepare, LaunchError, LaunchSpec, NodeLayout};
use crate::procfs;

/// How the executor runs containers on this node.
#[derive(Debug, Clone)]
pub struct ExecutorConfig {
    /// Directories and NM coordinates given to containers.
    pub layout: NodeLayout,
    /// The isolation found at start-up.
    pub cgroups: CgroupMode,
    /// Delay between SIGTERM and SIGKILL (YARN's `sleep-delay-before-sigkill.ms`).
    pub kill_grace: Duration,
    /// How often the memory monitor samples each container.
    pub monitor_interval: Duration,
}

impl ExecutorConfig {
    /// YARN's defaults: 250 ms before SIGKILL, memory sampled every 500 ms.
    pub fn new(layout: NodeLayout, cgroups: CgroupMode) -> Self {
        ExecutorConfig {
            layout,
            cgroups,
            kill_grace: Duration::from_millis(250),
            monitor_interval: Duration::from_millis(500),
        }
    }
}

/// Errors starting a container; when one is returned nothing of the container runs.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The container's files could not be prepared.
    #[error(transparent)]
    Launch(#[from] LaunchError),
    /// The container's cgroup could not be set up.
    #[error(transparent)]
    Cgroup(#[from] CgroupError),
    /// bash could not be started.
    #[error("cannot start container {container}: {source}")]
    Spawn {
        /// The container id.
        container: String,
        /// The underlying failure.
        source: io::Error,
    },
    /// A container with this id is already running here.
    #[error("container {0} is already running on this node")]
    AlreadyRunning(String),
}

/// How a container ended, in YARN's terms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// YARN `ContainerExitStatus` or the process's exit code (128+signal for signals).
    pub exit_status: i32,
    /// What happened, e.g. "killed: memory 1.2 GiB over limit 1 GiB ...".
    pub diagnostics: String,
}

#[derive(Debug, Clone)]
struct StopRequest {
    exit_status: i32,
    diagnostics: String,
}

/// A launched container; cheap to clone, valid after it completes.
#[derive(Debug, Clone)]
pub struct ContainerHandle {
    id: String,
    pid: u32,
    work_dir: PathBuf,
    log_dir: PathBuf,
    stop_tx: mpsc::UnboundedSender<StopRequest>,
    done: watch::Receiver<Option<Completion>>,
}

impl ContainerHandle {
    /// The container id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Pid of the container's bash, which is also its process group id.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The container's working directory.
    pub fn work_dir(&self) -> &std::path::Path {
        &self.work_dir
    }

    /// The directory holding its `stdout` and `stderr`.
    pub fn log_dir(&self) -> &std::path::Path {
        &self.log_dir
    }

    /// Asks for a graceful stop; the completion then carries `exit_status` and
    /// `diagnostics` (e.g. -105 "killed by the ApplicationMaster"). No-op once completed.
    pub fn stop(&self, exit_status: i32, diagnostics: &str) {
        let _ = self.stop_tx.send(StopRequest {
            exit_status,
            diagnostics: diagnostics.to_string(),
        });
    }

    /// The completion, if the container has ended.
    pub fn completion(&self) -> Option<Completion> {
        self.done.borrow().clone()
    }

    /// Waits for the container to end.
    pub async fn wait(&self) -> Completion {
        let mut rx = self.done.clone();
        let result = rx.wait_for(Option::is_some).await.map(|c| c.clone());
        match result {
            Ok(Some(c)) => c,
            // The supervisor always publishes before it ends; this is a runtime shutdown.
            _ => Completion {
                exit_status: exit::ABORTED,
                diagnostics: "container supervisor ended without a result".into(),
            },
        }
    }
}

/// Launches and tracks this node's containers.
#[derive(Debug, Clone)]
pub struct Executor {
    cfg: Arc<ExecutorConfig>,
    live: Arc<Mutex<BTreeMap<String, ContainerHandle>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Executor {
    /// An executor with the given configuration.
    pub fn new(cfg: ExecutorConfig) -> Self {
        Executor {
            cfg: Arc::new(cfg),
            live: Arc::default(),
        }
    }

    /// The configuration in force.
    pub fn config(&self) -> &ExecutorConfig {
        &self.cfg
    }

    /// A running container by id.
    pub fn get(&self, id: &str) -> Option<ContainerHandle> {
        lock(&self.live).get(id).cloned()
    }

    /// Ids of the containers still running.
    pub fn running(&self) -> Vec<String> {
        lock(&self.live).keys().cloned().collect()
    }

    /// Prepares and starts a container. Must be called inside a Tokio runtime.
    pub fn launch(&self, spec: LaunchSpec) -> Result<ContainerHandle, ExecError> {
        crate::launch::validate(&spec)?;
        if lock(&self.live).contains_key(&spec.container_id) {
            return Err(ExecError::AlreadyRunning(spec.container_id));
        }
        let limits = CgroupLimits {
            memory_bytes: spec.memory_bytes,
            vcores: spec.vcores,
        };
        let cgroup = self.cfg.cgroups.create(&spec.container_id, limits)?;
        let procs = cgroup
            .as_ref()
            .map(ContainerCgroup::procs_files)
            .unwrap_or_default();
        match self.spawn(&spec, &procs) {
            Ok((child, prepared)) => Ok(self.supervise(spec, child, prepared, cgroup)),
            Err(e) => {
                if let Some(cg) = cgroup {
                    // Nothing ever joined the group, so removal cannot block.
                    tokio::spawn(async move { cg.remove().await });
                }
                Err(e)
            }
        }
    }

    fn spawn(
        &self,
        spec: &LaunchSpec,
        procs: &[PathBuf],
    ) -> Result<(Child, crate::launch::Prepared), ExecError> {
        let prepared = prepare(&self.cfg.layout, spec, procs)?;
        let open = |name: &str| {
            let path = prepared.log_dir.join(name);
            File::create(&path).map_err(|source| LaunchError::Io { path, source })
        };
        let stdout = open("stdout")?;
        let stderr = open("stderr")?;
        let child = Command::new("/bin/bash")
            .arg(&prepared.script)
            .current_dir(&prepared.work_dir)
            .stdin(Stdio::null())
            .stdout(stdout)
            .stderr(stderr)
            // Its own process group, so one killpg reaches everything it starts.
            .process_group(0)
            // Backstop only: the supervisor normally reaps the child itself.
            .kill_on_drop(true)
            .spawn()
            .map_err(|source| ExecError::Spawn {
                container: spec.container_id.clone(),
                source,
            })?;
        Ok((child, prepared))
    }

    fn supervise(
        &self,
        spec: LaunchSpec,
        child: Child,
        prepared: crate::launch::Prepared,
        cgroup: Option<ContainerCgroup>,
    ) -> ContainerHandle {
        let (stop_tx, stop_rx) = mpsc::unbounded_channel();
        let (done_tx, done) = watch::channel(None);
        // A child that already exited and was reaped has no id; its group is gone too.
        let pid = child.id().unwrap_or(0);
        let handle = ContainerHandle {
            id: spec.container_id.clone(),
            pid,
            work_dir: prepared.work_dir,
            log_dir: prepared.log_dir,
            stop_tx,
            done,
        };
        lock(&self.live).insert(spec.container_id.clone(), handle.clone());
        tracing::info!(container = %spec.container_id, pid, "container started");
        crate::leftovers::record(&self.cfg.layout.local_dir, &spec.container_id, pid as i32);
        let supervisor = Supervisor {
            id: spec.container_id,
            child,
            pgid: pid as i32,
            cgroup,
            limit: spec.memory_bytes,
            cfg: Arc::clone(&self.cfg),
            live: Arc::clone(&self.live),
        };
        tokio::spawn(supervisor.run(stop_rx, done_tx));
        handle
    }

    /// Stops every running container and waits (bounded) for them to end: used on NM
    /// shutdown so that no container process outlives the NodeManager.
    pub async fn shutdown(&self, exit_status: i32, diagnostics: &str) {
        let handles: Vec<ContainerHandle> = lock(&self.live).values().cloned().collect();
        for h in &handles {
            h.stop(exit_status, diagnostics);
        }
        let bound = self.cfg.kill_grace + Duration::from_secs(10);
        for h in &handles {
            if tokio::time::timeout(bound, h.wait()).await.is_err() {
                tracing::warn!(container = %h.id, "container did not stop in time");
            }
        }
    }
}

enum Outcome {
    Exited(io::Result<ExitStatus>),
    Stopped(StopRequest),
    OverMemory(u64),
}

struct Supervisor {
    id: String,
    child: Child,
    pgid: i32,
    cgroup: Option<ContainerCgroup>,
    limit: u64,
    cfg: Arc<ExecutorConfig>,
    live: Arc<Mutex<BTreeMap<String, ContainerHandle>>>,
}

impl Supervisor {
    async fn run(
        mut self,
        mut stop_rx: mpsc::UnboundedReceiver<StopRequest>,
        done_tx: watch::Sender<Option<Completion>>,
    ) {
        let outcome = self.watch(&mut stop_rx).await;
        // Whatever ended the container, nothing it started may outlive it.
        self.kill_all(Signal::SIGKILL);
        self.await_members_gone().await;
        let completion = self.classify(outcome);
        if let Some(cg) = &self.cgroup {
            cg.remove().await;
        }
        tracing::info!(
            container = %self.id,
            exit_status = completion.exit_status,
            diagnostics = %completion.diagnostics,
            "container completed"
        );
        lock(&self.live).remove(&self.id);
        crate::leftovers::forget(&self.cfg.layout.local_dir, &self.id);
        done_tx.send_replace(Some(completion));
    }

    async fn watch(&mut self, stop_rx: &mut mpsc::UnboundedReceiver<StopRequest>) -> Outcome {
        let mut tick = tokio::time::interval(self.cfg.monitor_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            let stop = tokio::select! {
                status = self.child.wait() => return Outcome::Exited(status),
                Some(req) = stop_rx.recv() => req,
                _ = tick.tick(), if self.limit > 0 => {
                    // With a cgroup the kernel enforces the limit on the memory it charges;
                    // the tree's RSS sum counts shared pages once per process and can pass
                    // the limit while the group is within it, so it only judges without one.
                    let usage = if self.cgroup.is_some() {
                        0
                    } else {
                        let pgid = self.pgid;
                        tokio::task::spawn_blocking(move || procfs::tree_rss(pgid, pgid))
                            .await
                            .unwrap_or(0)
                    };
                    if usage > self.limit {
                        self.kill_all(Signal::SIGKILL);
                        let _ = self.child.wait().await;
                        return Outcome::OverMemory(usage);
                    }
                    // The kernel may have killed one process of a pipeline while the rest
                    // lingers; the container has failed, so end it now rather than later.
                    if self.cgroup.as_ref().is_some_and(|cg| cg.oom_kills() > 0) {
                        self.kill_all(Signal::SIGKILL);
                        let status = self.child.wait().await;
                        return Outcome::Exited(status);
                    }
                    continue;
                }
            };
            self.terminate().await;
            return Outcome::Stopped(stop);
        }
    }

    /// SIGTERM to the tree, then SIGKILL once the grace period is over.
    async fn terminate(&mut self) {
        self.kill_all(Signal::SIGTERM);
        let _ = tokio::time::timeout(self.cfg.kill_grace, self.child.wait()).await;
        self.kill_all(Signal::SIGKILL);
        let _ = tokio::time::timeout(Duration::from_secs(5), self.child.wait()).await;
    }

    /// Signals the process group, every descendant (some may have left the group) and every
    /// process in the container's cgroup (some may have left the tree).
    fn kill_all(&self, signal: Signal) {
        if self.pgid <= 1 {
            return;
        }
        let _ = killpg(Pid::from_raw(self.pgid), signal);
        for p in procfs::container_tree(self.pgid, self.pgid) {
            let _ = kill(Pid::from_raw(p.pid), signal);
        }
        if let Some(cg) = &self.cgroup {
            for pid in cg.pids() {
                let _ = kill(Pid::from_raw(pid), signal);
            }
        }
    }

    fn members_alive(&self) -> bool {
        let mut pids: Vec<i32> = procfs::container_tree(self.pgid, self.pgid)
            .iter()
            .map(|p| p.pid)
            .collect();
        if let Some(cg) = &self.cgroup {
            pids.extend(cg.pids());
        }
        pids.into_iter().any(procfs::is_alive)
    }

    async fn await_members_gone(&self) {
        if self.pgid <= 1 {
            return;
        }
        for _ in 0..80 {
            if !self.members_alive() {
                return;
            }
            self.kill_all(Signal::SIGKILL);
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        tracing::warn!(container = %self.id, "processes still present after SIGKILL");
    }

    fn classify(&self, outcome: Outcome) -> Completion {
        let limit = human_bytes(self.limit);
        match outcome {
            Outcome::Stopped(req) => Completion {
                exit_status: req.exit_status,
                diagnostics: req.diagnostics,
            },
            Outcome::OverMemory(usage) => Completion {
                exit_status: exit::KILLED_EXCEEDED_PMEM,
                diagnostics: format!(
                    "killed: memory {} over limit {limit} (process tree RSS seen by the NodeManager's memory monitor)",
                    human_bytes(usage)
                ),
            },
            Outcome::Exited(status) => {
                if let Some(cg) = self.cgroup.as_ref().filter(|cg| cg.oom_kills() > 0) {
                    let peak = cg.peak_bytes().map(human_bytes).unwrap_or_else(|| "?".into());
                    return Completion {
                        exit_status: exit::KILLED_EXCEEDED_PMEM,
                        diagnostics: format!(
                            "killed: memory over limit {limit} (the cgroup's OOM killer ended a process; peak usage {peak})"
                        ),
                    };
                }
                match status {
                    Ok(status) => exit_completion(status),
                    Err(e) => Completion {
                        exit_status: exit::INVALID,
                        diagnostics: format!("could not wait for the container process: {e}"),
                    },
                }
            }
        }
    }
}

fn exit_completion(status: ExitStatus) -> Completion {
    if let Some(code) = status.code() {
        let diagnostics = if code == 0 {
            String::new()
        } else {
            format!("exited with code {code}")
        };
        return Completion {
            exit_status: code,
            diagnostics,
        };
    }
    let signal = status.signal().unwrap_or(0);
    let name = Signal::try_from(signal)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| signal.to_string());
    Completion {
        exit_status: 128 + signal,
        diagnostics: format!("terminated by signal {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_and_signals_map_like_yarn() {
        assert_eq!(exit_completion(ExitStatus::from_raw(0)).exit_status, 0);
        let failed = exit_completion(ExitStatus::from_raw(3 << 8));
        assert_eq!(failed.exit_status, 3);
        assert_eq!(failed.diagnostics, "exited with code 3");
        let killed = exit_completion(ExitStatus::from_raw(9));
        assert_eq!(killed.exit_status, 137);
        assert_eq!(killed.diagnostics, "terminated by signal SIGKILL");
    }
}
