//! `weft nm`: command-line flags, machine resource detection and the process lifecycle.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use crate::cgroups::CgroupMode;
use crate::node::{NmConfig, NodeManager};

/// Flags of `weft nm`.
#[derive(Debug, Clone, clap::Args)]
pub struct NmArgs {
    /// The RM's resource tracker (host:port).
    #[arg(long = "rm-tracker", default_value = "127.0.0.1:8031")]
    pub rm_tracker: String,
    /// Where the container-management service listens (port 0: any free port).
    #[arg(long = "address", default_value = "0.0.0.0:8041")]
    pub address: SocketAddr,
    /// Where the web service (container logs, YARN's NM REST API) listens (port 0: any
    /// free port).
    #[arg(long = "web-address", default_value = "0.0.0.0:8042")]
    pub web_address: SocketAddr,
    /// Where Hadoop's ContainerManagementProtocol (Hadoop IPC, for Hadoop's NMClient and
    /// Spark) listens: `yarn.nodemanager.address`, whose Hadoop default is port 0 (any free
    /// port; the NM registers the one it got with the RM).
    #[arg(long = "hadoop-address", default_value = "0.0.0.0:0")]
    pub hadoop_address: SocketAddr,
    /// JAVA_HOME for containers whose launch context sets none (default: the NM's own
    /// JAVA_HOME, else the JDK of the `java` on PATH).
    #[arg(long = "java-home")]
    pub java_home: Option<PathBuf>,
    /// Host name in the node id (default: this machine's host name).
    #[arg(long = "hostname")]
    pub hostname: Option<String>,
    /// Memory offered to containers in MB (default: physical memory minus a reserve).
    #[arg(long = "memory-mb")]
    pub memory_mb: Option<i64>,
    /// Virtual cores offered to containers (default: the CPUs available).
    #[arg(long = "vcores")]
    pub vcores: Option<i64>,
    /// Rack reported to the RM.
    #[arg(long = "rack", default_value = "/default-rack")]
    pub rack: String,
    /// Root for the local and log directories when those are not given.
    #[arg(long = "data-dir")]
    pub data_dir: Option<PathBuf>,
    /// Container work directories (default: <data-dir>/local).
    #[arg(long = "local-dir")]
    pub local_dir: Option<PathBuf>,
    /// Container logs (default: <data-dir>/logs).
    #[arg(long = "log-dir")]
    pub log_dir: Option<PathBuf>,
    /// Write {"node_id", "address", "web"} as JSON here once the services listen.
    #[arg(long = "ready-file")]
    pub ready_file: Option<PathBuf>,
    /// Do not use cgroups even when available (the memory monitor still enforces limits).
    #[arg(long = "no-cgroups")]
    pub no_cgroups: bool,
    /// Milliseconds between SIGTERM and SIGKILL when stopping a container.
    #[arg(long = "sleep-delay-before-sigkill-ms", default_value_t = 250)]
    pub kill_grace_ms: u64,
}

/// Memory kept back for the OS and the daemons: a fifth of the machine, 512 MB to 4 GB.
fn reserve_mb(total_mb: i64) -> i64 {
    (total_mb / 5).clamp(512, 4096)
}

fn parse_meminfo_total_mb(text: &str) -> Option<i64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024)
}

/// Memory to offer when not configured.
fn detect_memory_mb() -> i64 {
    let total = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|t| parse_meminfo_total_mb(&t))
        .unwrap_or(8192 + 2048);
    (total - reserve_mb(total)).max(256)
}

/// Vcores to offer when not configured: one per available CPU, as YARN's detection does
/// with its default multiplier of 1 (no CPU is held back; the reserve is memory only).
fn detect_vcores() -> i64 {
    std::thread::available_parallelism()
        .map(|n| n.get() as i64)
        .unwrap_or(1)
}

/// JAVA_HOME as Hadoop passes it to containers (its env whitelist): the NM's own, else the
/// installation of the `java` on PATH (`<home>/bin/java`, links followed), so a machine
/// without JAVA_HOME still runs `{{JAVA_HOME}}/bin/java`.
fn detect_java_home() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("JAVA_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(home));
    }
    let path = std::env::var_os("PATH")?;
    let java = std::env::split_paths(&path)
        .map(|dir| dir.join("java"))
        .find(|p| p.is_file())?;
    let real = std::fs::canonicalize(java).ok()?;
    let home = real.parent()?.parent()?;
    Some(home.to_path_buf())
}

fn detect_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// Makes `path` absolute against the working directory without touching the file system.
/// Containers run elsewhere (their own work dir), so the launch script's path, LOCAL_DIRS
/// and LOG_DIRS must not depend on where the NM was started.
fn absolute(path: PathBuf) -> anyhow::Result<PathBuf> {
    std::path::absolute(&path).with_context(|| format!("cannot make {} absolute", path.display()))
}

fn config(args: &NmArgs) -> anyhow::Result<NmConfig> {
    let data_dir = absolute(
        args.data_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("weft-nm")),
    )?;
    let local_dir = absolute(
        args.local_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("local")),
    )?;
    let log_dir = absolute(
        args.log_dir
            .clone()
            .unwrap_or_else(|| data_dir.join("logs")),
    )?;
    let cgroups = if args.no_cgroups {
        CgroupMode::disabled("disabled by --no-cgroups")
    } else {
        CgroupMode::detect()
    };
    Ok(NmConfig {
        rm_tracker: args.rm_tracker.clone(),
        bind: args.address,
        hostname: args.hostname.clone().unwrap_or_else(detect_hostname),
        memory_mb: args.memory_mb.unwrap_or_else(detect_memory_mb),
        vcores: args.vcores.unwrap_or_else(detect_vcores),
        rack: args.rack.clone(),
        local_dir,
        log_dir,
        cgroups,
        kill_grace: Duration::from_millis(args.kill_grace_ms),
        monitor_interval: Duration::from_millis(500),
        web_bind: Some(args.web_address),
        hadoop_bind: Some(args.hadoop_address),
        java_home: args
            .java_home
            .clone()
            .or_else(detect_java_home)
            .map(|p| p.to_string_lossy().into_owned()),
    })
}

fn write_ready_file(path: &Path, nm: &NodeManager) -> anyhow::Result<()> {
    let json = serde_json::json!({
        "node_id": nm.node_id(),
        "address": nm.address().to_string(),
        "web": nm.web_address().unwrap_or_default(),
        "hadoop": nm.hadoop_address().map(|a| a.to_string()).unwrap_or_default(),
    });
    // Written aside and renamed, so a reader never sees half a file.
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, json.to_string()).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("writing {}", path.display()))
}

async fn terminated() -> anyhow::Result<()> {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("installing the SIGTERM handler")?;
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM received"),
        r = tokio::signal::ctrl_c() => {
            r.context("installing the SIGINT handler")?;
            tracing::info!("SIGINT received");
        }
    }
    Ok(())
}

/// Runs the NodeManager until SIGTERM/SIGINT (or the RM says SHUTDOWN), then stops every
/// container and unregisters.
pub fn run(args: NmArgs) -> anyhow::Result<()> {
    let _ = tracing_subscriber::fmt().with_target(false).try_init();
    let cfg = config(&args)?;
    if let CgroupMode::None { reason } = &cfg.cgroups {
        tracing::warn!(
            "container isolation without cgroups: {reason}; memory limits are enforced by \
             the process-tree monitor only and CPU is not limited"
        );
    } else {
        tracing::info!("container isolation: {}", cfg.cgroups.describe());
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("building the Tokio runtime")?;
    runtime.block_on(async move {
        let nm = NodeManager::start(cfg).await?;
        if let Some(path) = &args.ready_file {
            write_ready_file(path, &nm)?;
        }
        let outcome = tokio::select! {
            r = terminated() => r,
            _ = nm.rm_requested_shutdown() => Ok(()),
        };
        nm.shutdown().await;
        outcome
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        nm: NmArgs,
    }

    #[test]
    fn defaults_follow_yarn_ports_and_rack() {
        let cli = Cli::try_parse_from(["nm"]).unwrap();
        assert_eq!(cli.nm.rm_tracker, "127.0.0.1:8031");
        assert_eq!(cli.nm.address.port(), 8041);
        assert_eq!(cli.nm.web_address.to_string(), "0.0.0.0:8042");
        assert_eq!(cli.nm.hadoop_address.to_string(), "0.0.0.0:0");
        assert_eq!(cli.nm.rack, "/default-rack");
        assert_eq!(cli.nm.kill_grace_ms, 250);
        assert!(!cli.nm.no_cgroups);
    }

    #[test]
    fn flags_set_directories_and_resources() {
        let cli = Cli::try_parse_from([
            "nm",
            "--address",
            "127.0.0.1:0",
            "--web-address",
            "127.0.0.1:0",
            "--memory-mb",
            "2048",
            "--vcores",
            "3",
            "--data-dir",
            "/d",
            "--log-dir",
            "/l",
            "--no-cgroups",
            "--hadoop-address",
            "127.0.0.1:0",
            "--java-home",
            "/opt/jdk",
        ])
        .unwrap();
        let cfg = config(&cli.nm).unwrap();
        assert_eq!((cfg.memory_mb, cfg.vcores), (2048, 3));
        assert_eq!(cfg.hadoop_bind, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(cfg.java_home.as_deref(), Some("/opt/jdk"));
        assert_eq!(cfg.web_bind, Some("127.0.0.1:0".parse().unwrap()));
        assert_eq!(cfg.local_dir, PathBuf::from("/d/local"));
        assert_eq!(cfg.log_dir, PathBuf::from("/l"));
        assert!(matches!(cfg.cgroups, CgroupMode::None { .. }));
    }

    #[test]
    fn relative_directories_become_absolute() {
        let cli = Cli::try_parse_from([
            "nm",
            "--data-dir",
            "rel/data",
            "--log-dir",
            "rel-logs",
            "--no-cgroups",
        ])
        .unwrap();
        let cfg = config(&cli.nm).unwrap();
        let cwd = std::env::current_dir().unwrap();
        assert_eq!(cfg.local_dir, cwd.join("rel/data/local"));
        assert_eq!(cfg.log_dir, cwd.join("rel-logs"));

        let cli = Cli::try_parse_from(["nm", "--local-dir", "./work", "--no-cgroups"]).unwrap();
        let cfg = config(&cli.nm).unwrap();
        assert!(cfg.local_dir.is_absolute(), "{}", cfg.local_dir.display());
        assert!(cfg.local_dir.ends_with("work"));
        assert!(cfg.log_dir.is_absolute(), "{}", cfg.log_dir.display());
    }

    #[test]
    fn detected_memory_keeps_a_reserve() {
        assert_eq!(
            parse_meminfo_total_mb("MemTotal:  16384000 kB\n"),
            Some(16000)
        );
        assert_eq!(reserve_mb(16000), 3200);
        assert_eq!(reserve_mb(1000), 512);
        assert_eq!(reserve_mb(64000), 4096);
        assert!(detect_memory_mb() >= 256);
        assert!(detect_vcores() >= 1);
    }
}
