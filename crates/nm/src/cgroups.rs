//! Cgroup detection and per-container groups (v2 unified, v1 per-controller, or none).
//!
//! Detection prefers v2 when the unified hierarchy offers both `memory` and `cpu`; hybrid
//! machines whose unified mount only carries e.g. `hugetlb` fall back to the v1 `memory`
//! (and, if present, `cpu`) hierarchies. v1 groups live under the NodeManager's own cgroup
//! (`<mount>/<own path>/weft/<container>_nm<pid>`, see [`group_name`]) so they inherit
//! whatever limits its parent has;
//! v2 groups live under `<mount>/weft`, because a v2 group holding the NM process itself
//! could not also delegate controllers to children.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Name of the directory grouping all Weft containers inside a hierarchy.
const BASE: &str = "weft";

/// Errors creating or configuring a container's cgroup.
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// A cgroup file or directory could not be written.
    #[error("cgroup {path}: {source}")]
    Io {
        /// The file or directory involved.
        path: PathBuf,
        /// The underlying failure.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Which isolation the machine offers, found once at start-up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CgroupMode {
    /// Unified hierarchy with memory and cpu controllers; `base` is `<mount>/weft`.
    V2 {
        /// Parent directory of the per-container groups.
        base: PathBuf,
    },
    /// Legacy per-controller hierarchies; each path is the `weft` parent in that hierarchy.
    V1 {
        /// Parent of the per-container memory groups.
        memory: PathBuf,
        /// Parent of the per-container cpu groups, when the cpu controller is usable.
        cpu: Option<PathBuf>,
    },
    /// No usable cgroups: only the memory monitor enforces limits.
    None {
        /// Why cgroups are not used, for the start-up warning.
        reason: String,
    },
}

/// Limits applied to one container's group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Hard memory limit in bytes; 0 means unlimited.
    pub memory_bytes: u64,
    /// Virtual cores, turned into a cpu weight relative to other containers.
    pub vcores: u32,
}

impl CgroupMode {
    /// Probes the machine; never fails, returning `None` with the reason instead.
    pub fn detect() -> CgroupMode {
        let mountinfo = fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
        let own = fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
        let mounts = parse_mountinfo(&mountinfo);
        let v2_reason = match probe_v2(&mounts) {
            Ok(mode) => return mode,
            Err(reason) => reason,
        };
        match probe_v1(&mounts, &own) {
            Ok(mode) => mode,
            Err(v1_reason) => CgroupMode::None {
                reason: format!("{v2_reason}; {v1_reason}"),
            },
        }
    }

    /// The disabled mode, e.g. for `--no-cgroups`.
    pub fn disabled(reason: &str) -> CgroupMode {
        CgroupMode::None {
            reason: reason.to_string(),
        }
    }

    /// One line for the start-up log.
    pub fn describe(&self) -> String {
        match self {
            CgroupMode::V2 { base } => format!("cgroups v2 under {}", base.display()),
            CgroupMode::V1 { memory, cpu } => format!(
                "cgroups v1: memory under {}, cpu {}",
                memory.display(),
                cpu.as_ref()
                    .map(|c| format!("under {}", c.display()))
                    .unwrap_or_else(|| "not available".into())
            ),
            CgroupMode::None { reason } => format!("no cgroups ({reason})"),
        }
    }

    /// Creates and configures the container's group; `Ok(None)` when cgroups are off.
    pub fn create(
        &self,
        container_id: &str,
        limits: CgroupLimits,
    ) -> Result<Option<ContainerCgroup>, CgroupError> {
        let group = match self {
            CgroupMode::None { .. } => return Ok(None),
            CgroupMode::V2 { base } => {
                let dir = base.join(group_name(container_id));
                create_dir(&dir)?;
                let group = ContainerCgroup {
                    v2: true,
                    memory_dir: dir.clone(),
                    dirs: vec![dir.clone()],
                };
                if limits.memory_bytes > 0 {
                    write(&dir.join("memory.max"), &limits.memory_bytes.to_string())?;
                    // Without swap the limit is a real RSS limit; kernels without swap
                    // accounting lack the file, which is fine.
                    let _ = fs::write(dir.join("memory.swap.max"), "0");
                }
                let weight = (limits.vcores.max(1) as u64 * 100).clamp(1, 10_000);
                write(&dir.join("cpu.weight"), &weight.to_string())?;
                group
            }
            CgroupMode::V1 { memory, cpu } => {
                let mem_dir = memory.join(group_name(container_id));
                create_dir(&mem_dir)?;
                let mut group = ContainerCgroup {
                    v2: false,
                    memory_dir: mem_dir.clone(),
                    dirs: vec![mem_dir.clone()],
                };
                if limits.memory_bytes > 0 {
                    let bytes = limits.memory_bytes.to_string();
                    if let Err(e) = write(&mem_dir.join("memory.limit_in_bytes"), &bytes) {
                        group.remove_now();
                        return Err(e);
                    }
                    // memsw must be >= the memory limit, so it is written second; absent when
                    // swap accounting is off.
                    let _ = fs::write(mem_dir.join("memory.memsw.limit_in_bytes"), &bytes);
                }
                if let Some(cpu) = cpu {
                    let cpu_dir = cpu.join(group_name(container_id));
                    create_dir(&cpu_dir)?;
                    group.dirs.push(cpu_dir.clone());
                    // YARN's cgroups handler gives 1024 shares per vcore.
                    let shares = (limits.vcores.max(1) as u64 * 1024).max(2);
                    write(&cpu_dir.join("cpu.shares"), &shares.to_string())?;
                }
                group
            }
        };
        Ok(Some(group))
    }
}

/// A container's group name: its id and the NodeManager's process id. Container ids are unique
/// within one cluster only; NodeManagers of several clusters on one machine (tests, `weft up`
/// next to another cluster) share the `weft` directory, and one must never reuse or remove
/// another's group.
pub fn group_name(container_id: &str) -> String {
    format!("{container_id}_nm{}", std::process::id())
}

fn create_dir(dir: &Path) -> Result<(), CgroupError> {
    match fs::create_dir(dir) {
        Ok(()) => Ok(()),
        // A leftover of this very process (a container id launched twice): reuse it.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(io_err(dir)(e)),
    }
}

fn write(path: &Path, value: &str) -> Result<(), CgroupError> {
    fs::write(path, value).map_err(io_err(path))
}

/// One mounted hierarchy from `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    super_opts: Vec<String>,
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let left: Vec<&str> = left.split(' ').collect();
            let right: Vec<&str> = right.split(' ').collect();
            Some(Mount {
                root: left.get(3)?.to_string(),
                point: PathBuf::from(left.get(4)?),
                fstype: right.first()?.to_string(),
                super_opts: right.get(2)?.split(',').map(str::to_string).collect(),
            })
        })
        .filter(|m| m.fstype == "cgroup" || m.fstype == "cgroup2")
        .collect()
}

fn probe_v2(mounts: &[Mount]) -> Result<CgroupMode, String> {
    let Some(mount) = mounts.iter().find(|m| m.fstype == "cgroup2") else {
        return Err("no cgroup v2 hierarchy mounted".into());
    };
    let controllers =
        fs::read_to_string(mount.point.join("cgroup.controllers")).unwrap_or_default();
    let available: Vec<&str> = controllers.split_whitespace().collect();
    if !(available.contains(&"memory") && available.contains(&"cpu")) {
        return Err(format!(
            "cgroup v2 at {} offers [{}], not memory and cpu",
            mount.point.display(),
            available.join(" ")
        ));
    }
    let base = mount.point.join(BASE);
    let setup = || -> io::Result<()> {
        fs::write(mount.point.join("cgroup.subtree_control"), "+memory +cpu")?;
        match fs::create_dir(&base) {
            Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
            _ => {}
        }
        fs::write(base.join("cgroup.subtree_control"), "+memory +cpu")
    };
    setup().map_err(|e| format!("cgroup v2 at {} not writable: {e}", mount.point.display()))?;
    Ok(CgroupMode::V2 { base })
}

/// The NM's own group path in the v1 hierarchy carrying `controller`.
fn own_v1_path<'a>(own: &'a str, controller: &str) -> Option<&'a str> {
    own.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let _id = parts.next()?;
        let controllers = parts.next()?;
        let path = parts.next()?;
        controllers
            .split(',')
            .any(|c| c == controller)
            .then_some(path)
    })
}

/// `<mount point>/<own path relative to the mount's root>/weft` for a v1 controller.
fn v1_base(mounts: &[Mount], own: &str, controller: &str) -> Result<PathBuf, String> {
    let mount = mounts
        .iter()
        .find(|m| m.fstype == "cgroup" && m.super_opts.iter().any(|o| o == controller))
        .ok_or_else(|| format!("no cgroup v1 {controller} hierarchy mounted"))?;
    let path = own_v1_path(own, controller).unwrap_or("/");
    let relative = path
        .strip_prefix(mount.root.as_str())
        .unwrap_or(path)
        .trim_start_matches('/');
    let base = mount.point.join(relative).join(BASE);
    match fs::create_dir(&base) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => Err(format!(
            "cgroup v1 {controller} at {} not writable: {e}",
            base.display()
        )),
        _ => Ok(base),
    }
}

fn probe_v1(mounts: &[Mount], own: &str) -> Result<CgroupMode, String> {
    let memory = v1_base(mounts, own, "memory")?;
    let cpu = match v1_base(mounts, own, "cpu") {
        Ok(cpu) => Some(cpu),
        Err(reason) => {
            tracing::warn!("cpu isolation off: {reason}");
            None
        }
    };
    Ok(CgroupMode::V1 { memory, cpu })
}

/// One container's group(s); the memory group is the one holding the OOM counters.
#[derive(Debug, Clone)]
pub struct ContainerCgroup {
    v2: bool,
    memory_dir: PathBuf,
    dirs: Vec<PathBuf>,
}

impl ContainerCgroup {
    /// The `cgroup.procs` files a process must be written to, one per hierarchy.
    pub fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Moves a process into every hierarchy of the container.
    pub fn add_pid(&self, pid: u32) -> Result<(), CgroupError> {
        for file in self.procs_files() {
            write(&file, &pid.to_string())?;
        }
        Ok(())
    }

    /// Pids currently in the container's memory group.
    pub fn pids(&self) -> Vec<i32> {
        fs::read_to_string(self.memory_dir.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// How many processes the kernel's OOM killer has ended in this group.
    pub fn oom_kills(&self) -> u64 {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        let text = fs::read_to_string(self.memory_dir.join(file)).unwrap_or_default();
        let kills = keyed_value(&text, "oom_kill");
        if kills > 0 || self.v2 {
            return kills;
        }
        // Kernels before 4.13 lack v1's oom_kill counter; hitting the limit under OOM is the
        // closest signal left.
        keyed_value(&text, "under_oom")
    }

    /// Peak memory use of the group, when the kernel records it.
    pub fn peak_bytes(&self) -> Option<u64> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        fs::read_to_string(self.memory_dir.join(file))
            .ok()
            .and_then(|t| t.trim().parse().ok())
    }

    /// Removes the group directories, waiting briefly for dying processes to leave them.
    pub async fn remove(&self) {
        for dir in &self.dirs {
            for attempt in 0..40 {
                match fs::remove_dir(dir) {
                    Ok(()) => break,
                    Err(e) if e.kind() == io::ErrorKind::NotFound => break,
                    Err(e) if attempt == 39 => {
                        tracing::warn!("could not remove cgroup {}: {e}", dir.display())
                    }
                    Err(_) => tokio::time::sleep(Duration::from_millis(25)).await,
                }
            }
        }
    }

    fn remove_now(&self) {
        for dir in &self.dirs {
            let _ = fs::remove_dir(dir);
        }
    }
}

/// Reads `key N` from a flat-keyed cgroup file; 0 when absent.
fn keyed_value(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|line| {
            let (k, v) = line.split_once(' ')?;
            (k == key).then(|| v.trim().parse().ok()).flatten()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HYBRID: &str = "\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
35 31 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:36 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
";

    #[test]
    fn mountinfo_keeps_cgroup_mounts_with_their_controllers() {
        let mounts = parse_mountinfo(HYBRID);
        assert_eq!(mounts.len(), 3);
        assert_eq!(mounts[1].point, PathBuf::from("/sys/fs/cgroup/memory"));
        assert!(mounts[1].super_opts.contains(&"memory".to_string()));
        assert_eq!(mounts[2].fstype, "cgroup2");
    }

    #[test]
    fn own_path_is_found_per_controller() {
        let own = "4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n";
        assert_eq!(own_v1_path(own, "memory"), Some("/process_api/abc"));
        assert_eq!(own_v1_path(own, "cpu"), Some("/"));
        assert_eq!(own_v1_path(own, "pids"), None);
    }

    #[test]
    fn keyed_values_parse_oom_counters() {
        let v1 = "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n";
        assert_eq!(keyed_value(v1, "oom_kill"), 3);
        assert_eq!(keyed_value(v1, "missing"), 0);
        let v2 = "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\n";
        assert_eq!(keyed_value(v2, "oom_kill"), 1);
    }

    #[test]
    fn disabled_mode_creates_nothing() {
        let mode = CgroupMode::disabled("--no-cgroups");
        let limits = CgroupLimits {
            memory_bytes: 1 << 20,
            vcores: 1,
        };
        assert!(mode.create("container_1", limits).unwrap().is_none());
        assert!(mode.describe().contains("--no-cgroups"));
    }
}
