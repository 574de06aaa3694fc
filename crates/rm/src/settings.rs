//! The RM's settings: command-line flags over a TOML file over yarn-site.xml over YARN's
//! defaults.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use thiserror::Error;
use weft_config::{SchedulerKind, SchedulerProperties};

use crate::RmArgs;

/// Why the settings could not be built.
#[derive(Debug, Error)]
pub enum SettingsError {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The TOML file is invalid.
    #[error("{path}: {message}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// yarn-site.xml is not valid XML or not a `<configuration>`.
    #[error("{path}: {message}")]
    Xml {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// A property has a bad value.
    #[error("invalid configuration: {0}")]
    Invalid(String),
}

/// The TOML configuration file (every key optional).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct TomlFile {
    client_address: Option<String>,
    scheduler_address: Option<String>,
    tracker_address: Option<String>,
    web_address: Option<String>,
    data_dir: Option<PathBuf>,
    allocations: Option<PathBuf>,
    yarn_site: Option<PathBuf>,
    conf_dir: Option<PathBuf>,
    nm_expiry_ms: Option<u64>,
    am_expiry_ms: Option<u64>,
    max_attempts: Option<u32>,
    heartbeat_interval_ms: Option<u64>,
    allocations_poll_ms: Option<u64>,
    am_recovery_grace_ms: Option<u64>,
    /// yarn-site property names and values, e.g. `"yarn.scheduler.maximum-allocation-mb" = "8192"`.
    #[serde(default)]
    properties: BTreeMap<String, toml::Value>,
}

/// Everything the daemon needs to start.
#[derive(Clone, Debug)]
pub struct Settings {
    /// Hadoop IPC ApplicationClientProtocol listen address (`yarn.resourcemanager.address`,
    /// :8032).
    pub client_address: String,
    /// AM service listen address (`yarn.resourcemanager.scheduler.address`, :8030).
    pub scheduler_address: String,
    /// Resource tracker listen address (`yarn.resourcemanager.resource-tracker.address`, :8031).
    pub tracker_address: String,
    /// REST listen address (`yarn.resourcemanager.webapp.address`, :8088).
    pub web_address: String,
    /// Where the state store lives.
    pub data_dir: PathBuf,
    /// The allocation file, if any (reloaded when it changes).
    pub allocations: Option<PathBuf>,
    /// Under the Capacity Scheduler, its capacity-scheduler.xml (in the configuration
    /// directory; reloaded when it changes and on refreshQueues).
    pub capacity_file: Option<PathBuf>,
    /// yarn-site's (and the TOML's) Capacity Scheduler keys, read under `capacity_file`.
    pub capacity_site: Vec<(String, String)>,
    /// The scheduler's yarn-site properties.
    pub properties: SchedulerProperties,
    /// NM expiry (`yarn.nm.liveness-monitor.expiry-interval-ms`, 600000).
    pub nm_expiry_ms: u64,
    /// AM expiry (`yarn.am.liveness-monitor.expiry-interval-ms`, 600000).
    pub am_expiry_ms: u64,
    /// `yarn.resourcemanager.am.max-attempts` (2).
    pub max_attempts: u32,
    /// Heartbeat interval told to NMs (`yarn.resourcemanager.nodemanagers.heartbeat-interval-ms`).
    pub heartbeat_interval_ms: u64,
    /// How often the allocation file's modification time is checked.
    pub allocations_poll_ms: u64,
    /// `yarn.admin.acl` (Hadoop's default `*`): cluster administrators.
    pub admin_acl: weft_config::Acl,
    /// `yarn.node-labels.enabled` (false): whether node labels may be changed through rmadmin
    /// and REST.
    pub node_labels_enabled: bool,
    /// `yarn.acl.reservation-enable` (false): whether reservation ACLs are checked. Hadoop
    /// also needs `yarn.acl.enable`; Weft's queue ACLs are always on, so this one switch
    /// decides.
    pub reservation_acls_enabled: bool,
    /// `yarn.resourcemanager.max-completed-applications` (1000).
    pub max_completed_apps: usize,
    /// `yarn.resourcemanager.state-store.max-completed-applications` (the in-memory limit).
    pub store_max_completed_apps: usize,
    /// `weft.resourcemanager.am.allocate.max-containers` (Weft's own, 10,000): at most this
    /// many allocated containers and this many completions in one Allocate answer.
    pub allocate_max_containers: usize,
    /// `weft.resourcemanager.ended-containers.max-total` (Weft's own, 1,000,000): ended
    /// containers kept for reports across all applications (each keeps at most 1,000);
    /// at the bound completed applications' records go first, oldest completed first.
    pub ended_containers_kept_total: usize,
    /// `weft.resourcemanager.store.cache-mb` (Weft's own, 64): the state store's page cache
    /// (redb's default, 1 GiB, would fill with the pages the RM writes and never reads).
    pub store_cache_bytes: usize,
    /// `weft.resourcemanager.am.allocate-stream.enabled` (Weft's own, true): whether the RM
    /// serves Weft's Allocate stream (`AllocateStreams.Allocates`) and offers it to AMs at
    /// registration; off, Weft's AMs make one Allocate call each.
    pub allocate_stream: bool,
    /// `weft.resourcemanager.scheduler.deferred-node-updates.enabled` (Weft's own, true):
    /// whether a node's heartbeat is answered once its statuses are taken in, the
    /// scheduler's pass over the node following between calls
    /// (`RmCore::node_heartbeat_deferred`); off, each heartbeat runs its pass before it is
    /// answered.
    pub deferred_node_updates: bool,
    /// `weft.resourcemanager.framed-transport.enabled` (Weft's own, true): whether the RM
    /// serves Weft's framed transport (heartbeats on the resource tracker port, Allocates on
    /// the AM port: the streams' messages without HTTP/2) and offers it at registration; off,
    /// framed connections are refused as UNIMPLEMENTED and Weft's NMs and AMs use the gRPC
    /// streams.
    pub framed_transport: bool,
    /// How often the scheduler's state is verified and repaired
    /// (`weft.scheduler.verify-interval-ms`, 60000; 0 = never).
    pub verify_interval_ms: u64,
    /// After a restart, how long a recovered AM may go unreported by every node before its
    /// attempt fails (`am_recovery_grace_ms`, Weft's own; 10000).
    pub am_recovery_grace_ms: u64,
    /// The time-aware demands' keys (`weft.demand.*`).
    pub demands: crate::demand_settings::DemandSettings,
    /// The user -> groups mapping (`hadoop.security.group.mapping` and its keys).
    pub(crate) groups: crate::groups::GroupSettings,
    /// What the configuration asked for and the RM does not do, for the log (e.g. an
    /// allocation file named in yarn-site.xml while the FIFO scheduler runs).
    pub notes: Vec<String>,
}

fn read(path: &Path) -> Result<String, SettingsError> {
    std::fs::read_to_string(path).map_err(|source| SettingsError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// The `<property>` name/value pairs of a yarn-site.xml.
fn site_pairs(path: &Path) -> Result<Vec<(String, String)>, SettingsError> {
    let text = read(path)?;
    let xml = |message: String| SettingsError::Xml {
        path: path.to_path_buf(),
        message,
    };
    let doc = roxmltree::Document::parse(&text).map_err(|e| xml(e.to_string()))?;
    let root = doc.root_element();
    if root.tag_name().name() != "configuration" {
        return Err(xml(format!(
            "the root element is <{}>, expected <configuration>",
            root.tag_name().name()
        )));
    }
    let mut pairs = Vec::new();
    for p in root.children().filter(|c| c.has_tag_name("property")) {
        let child = |tag: &str| {
            p.children()
                .find(|c| c.has_tag_name(tag))
                .and_then(|c| c.text())
                .map(|t| t.trim().to_string())
        };
        if let (Some(name), Some(value)) = (child("name"), child("value")) {
            pairs.push((name, value));
        }
    }
    Ok(pairs)
}

/// The yarn-site property naming the scheduler.
const SCHEDULER_CLASS: &str = "yarn.resourcemanager.scheduler.class";
/// The yarn-site property naming the Fair Scheduler's allocation file.
const ALLOCATION_FILE: &str = "yarn.scheduler.fair.allocation.file";

/// The allocation file the RM loads: the one named by a flag or the TOML (`given`), else by
/// yarn-site.xml (`site`). Only the Fair Scheduler has one: the FIFO scheduler refuses a file
/// given to Weft, and ignores (with a note) one yarn-site.xml names, as Hadoop's FIFO
/// scheduler never reads it.
fn allocations(
    kind: SchedulerKind,
    given: Option<PathBuf>,
    site: Option<PathBuf>,
    notes: &mut Vec<String>,
) -> Result<Option<PathBuf>, SettingsError> {
    if kind == SchedulerKind::Fair {
        return Ok(given.or(site));
    }
    if let Some(path) = given {
        return Err(SettingsError::Invalid(format!(
            "the allocation file {} is the Fair Scheduler's; the {} scheduler takes none (drop --allocations / allocations, or run the fair scheduler)",
            path.display(),
            kind.short_name()
        )));
    }
    if let Some(path) = site {
        notes.push(format!(
            "{ALLOCATION_FILE} ({}) is ignored: the {} scheduler has no allocation file",
            path.display(),
            kind.short_name()
        ));
    }
    Ok(None)
}

/// The Capacity Scheduler's file name in the configuration directory (as Hadoop's).
pub const CAPACITY_FILE: &str = "capacity-scheduler.xml";

/// The configuration directory (Hadoop's `HADOOP_CONF_DIR`, where capacity-scheduler.xml
/// lives): the one given, else the directory of yarn-site.xml, else of the TOML file, else the
/// current directory.
/// A yarn-site address as Hadoop reads it: `${yarn.resourcemanager.hostname}` replaced by the
/// RM host, and the default port added when the value has none.
fn site_address(value: &str, rm_host: &str, port: u16) -> String {
    let value = value
        .trim()
        .replace("${yarn.resourcemanager.hostname}", rm_host);
    if value.contains(':') {
        value
    } else {
        format!("{value}:{port}")
    }
}

fn conf_dir(given: Option<&Path>, yarn_site: Option<&Path>, toml: Option<&Path>) -> PathBuf {
    let parent = |p: &Path| {
        p.parent()
            .filter(|d| !d.as_os_str().is_empty())
            .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
    };
    match (given, yarn_site, toml) {
        (Some(dir), _, _) => dir.to_path_buf(),
        (None, Some(site), _) => parent(site),
        (None, None, Some(toml)) => parent(toml),
        (None, None, None) => PathBuf::from("."),
    }
}

impl Settings {
    /// Builds the settings from the flags and the files they name.
    pub fn load(args: &RmArgs) -> Result<Settings, SettingsError> {
        let toml_file = match &args.config {
            Some(path) => {
                toml::from_str::<TomlFile>(&read(path)?).map_err(|e| SettingsError::Toml {
                    path: path.clone(),
                    message: e.to_string(),
                })?
            }
            None => TomlFile::default(),
        };
        let mut pairs: BTreeMap<String, String> = BTreeMap::new();
        if let Some(site) = args.yarn_site.as_ref().or(toml_file.yarn_site.as_ref()) {
            pairs.extend(site_pairs(site)?);
        }
        for (k, v) in &toml_file.properties {
            let v = match v {
                toml::Value::String(s) => s.clone(),
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::Float(f) => f.to_string(),
                toml::Value::Boolean(b) => b.to_string(),
                _ => {
                    return Err(SettingsError::Invalid(format!(
                        "property {k} must be a string, number or boolean"
                    )))
                }
            };
            pairs.insert(k.clone(), v);
        }
        if let Some(kind) = &args.scheduler {
            pairs.insert(SCHEDULER_CLASS.to_string(), kind.clone());
        }
        let (properties, _warnings) =
            weft_config::site::from_pairs(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
                .map_err(|d| SettingsError::Invalid(d.to_string()))?;
        let num = |key: &str| -> Result<Option<u64>, SettingsError> {
            pairs
                .get(key)
                .map(|v| {
                    v.parse::<u64>().map_err(|_| {
                        SettingsError::Invalid(format!("{key}: '{v}' is not a number"))
                    })
                })
                .transpose()
        };
        // Hadoop's addresses default to `${yarn.resourcemanager.hostname}:<port>`, and a
        // yarn-site value may name that variable or leave the port out.
        let rm_host = pairs
            .get("yarn.resourcemanager.hostname")
            .map(|h| h.trim().to_string())
            .filter(|h| !h.is_empty())
            .unwrap_or_else(|| "0.0.0.0".to_string());
        let addr = |flag: &Option<String>, toml: &Option<String>, key: &str, port: u16| {
            flag.clone()
                .or_else(|| toml.clone())
                .or_else(|| pairs.get(key).map(|v| site_address(v, &rm_host, port)))
                .unwrap_or_else(|| format!("{rm_host}:{port}"))
        };
        let mut notes = Vec::new();
        let allocations = allocations(
            properties.scheduler_kind,
            args.allocations.clone().or(toml_file.allocations),
            pairs.get(ALLOCATION_FILE).map(PathBuf::from),
            &mut notes,
        )?;
        let (capacity_file, capacity_site) = if properties.scheduler_kind == SchedulerKind::Capacity
        {
            let dir = conf_dir(
                args.conf_dir.as_deref().or(toml_file.conf_dir.as_deref()),
                args.yarn_site.as_deref().or(toml_file.yarn_site.as_deref()),
                args.config.as_deref(),
            );
            let site = pairs
                .iter()
                .filter(|(k, _)| weft_config::capacity::is_capacity_property(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (Some(dir.join(CAPACITY_FILE)), site)
        } else {
            (None, Vec::new())
        };
        let max_attempts = match toml_file.max_attempts {
            Some(n) => n,
            None => num("yarn.resourcemanager.am.max-attempts")?.map_or(2, |n| n as u32),
        };
        if max_attempts == 0 {
            return Err(SettingsError::Invalid(
                "yarn.resourcemanager.am.max-attempts must be at least 1".into(),
            ));
        }
        let admin_acl =
            weft_config::Acl::parse(pairs.get("yarn.admin.acl").map_or("*", String::as_str));
        let flag_or = |key: &str, default: bool| match pairs.get(key).map(|v| v.trim()) {
            None => Ok(default),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
            Some(v) => Err(SettingsError::Invalid(format!(
                "{key}: '{v}' is not true or false"
            ))),
        };
        let node_labels_enabled = flag_or("yarn.node-labels.enabled", false)?;
        let reservation_acls_enabled = flag_or("yarn.acl.reservation-enable", false)?;
        let allocate_stream = flag_or("weft.resourcemanager.am.allocate-stream.enabled", true)?;
        let deferred_node_updates = flag_or(
            "weft.resourcemanager.scheduler.deferred-node-updates.enabled",
            true,
        )?;
        let framed_transport = flag_or("weft.resourcemanager.framed-transport.enabled", true)?;
        let count = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        let max_completed_apps = num("yarn.resourcemanager.max-completed-applications")?
            .map_or(weft_rm_core::DEFAULT_MAX_COMPLETED_APPS, count);
        let store_max_completed_apps =
            num("yarn.resourcemanager.state-store.max-completed-applications")?
                .map_or(max_completed_apps, count);
        let allocate_max_containers = match num("weft.resourcemanager.am.allocate.max-containers")?
        {
            None => weft_rm_core::DEFAULT_ALLOCATE_MAX_CONTAINERS,
            Some(0) => {
                return Err(SettingsError::Invalid(
                    "weft.resourcemanager.am.allocate.max-containers must be at least 1".into(),
                ))
            }
            Some(n) => count(n),
        };
        let ended_containers_kept_total = num("weft.resourcemanager.ended-containers.max-total")?
            .map_or(weft_rm_core::DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL, count);
        let store_cache_bytes = num("weft.resourcemanager.store.cache-mb")?
            .map_or(weft_store::DEFAULT_CACHE_BYTES, |mb| {
                count(mb).saturating_mul(1024 * 1024)
            });
        let demands = crate::demand_settings::DemandSettings::read(&pairs)?;
        let groups = crate::groups::GroupSettings::read(&pairs)?;
        Ok(Settings {
            groups,
            notes,
            demands,
            allocate_max_containers,
            ended_containers_kept_total,
            store_cache_bytes,
            allocate_stream,
            deferred_node_updates,
            framed_transport,
            admin_acl,
            node_labels_enabled,
            reservation_acls_enabled,
            max_completed_apps,
            store_max_completed_apps,
            am_recovery_grace_ms: toml_file.am_recovery_grace_ms.unwrap_or(10_000),
            client_address: addr(
                &args.client_address,
                &toml_file.client_address,
                "yarn.resourcemanager.address",
                8032,
            ),
            scheduler_address: addr(
                &args.scheduler_address,
                &toml_file.scheduler_address,
                "yarn.resourcemanager.scheduler.address",
                8030,
            ),
            tracker_address: addr(
                &args.tracker_address,
                &toml_file.tracker_address,
                "yarn.resourcemanager.resource-tracker.address",
                8031,
            ),
            web_address: addr(
                &args.web_address,
                &toml_file.web_address,
                "yarn.resourcemanager.webapp.address",
                8088,
            ),
            data_dir: args
                .data_dir
                .clone()
                .or(toml_file.data_dir)
                .unwrap_or_else(|| PathBuf::from("weft-rm-data")),
            allocations,
            capacity_file,
            capacity_site,
            properties,
            nm_expiry_ms: args
                .nm_expiry_ms
                .or(toml_file.nm_expiry_ms)
                .or(num("yarn.nm.liveness-monitor.expiry-interval-ms")?)
                .unwrap_or(600_000),
            am_expiry_ms: args
                .am_expiry_ms
                .or(toml_file.am_expiry_ms)
                .or(num("yarn.am.liveness-monitor.expiry-interval-ms")?)
                .unwrap_or(600_000),
            max_attempts,
            heartbeat_interval_ms: toml_file
                .heartbeat_interval_ms
                .or(num(
                    "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms",
                )?)
                .unwrap_or(1000),
            allocations_poll_ms: args
                .allocations_poll_ms
                .or(toml_file.allocations_poll_ms)
                .unwrap_or(5000),
            verify_interval_ms: num(crate::verification::INTERVAL_PROPERTY)?
                .unwrap_or(crate::verification::DEFAULT_INTERVAL_MS),
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn hadoop_style_addresses_take_the_rm_hostname_and_default_ports() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            r#"<configuration>
              <property><name>yarn.resourcemanager.hostname</name><value>127.0.0.2</value></property>
              <property><name>yarn.resourcemanager.scheduler.address</name><value>${yarn.resourcemanager.hostname}:9030</value></property>
              <property><name>yarn.resourcemanager.webapp.address</name><value>127.0.0.3</value></property>
            </configuration>"#,
        )
        .unwrap();
        let args = crate::RmArgs {
            yarn_site: Some(site),
            ..Default::default()
        };
        let s = super::Settings::load(&args).unwrap();
        assert_eq!(
            s.client_address, "127.0.0.2:8032",
            "the default port on the RM host"
        );
        assert_eq!(
            s.scheduler_address, "127.0.0.2:9030",
            "the variable expanded"
        );
        assert_eq!(s.web_address, "127.0.0.3:8088", "the default port added");
        assert_eq!(s.tracker_address, "127.0.0.2:8031");
    }

    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        rm: RmArgs,
    }

    fn args(extra: &[&str]) -> RmArgs {
        Cli::parse_from(std::iter::once("rm").chain(extra.iter().copied())).rm
    }

    #[test]
    fn defaults_are_yarns() {
        let s = Settings::load(&args(&[])).unwrap();
        assert_eq!(s.scheduler_address, "0.0.0.0:8030");
        assert_eq!(s.tracker_address, "0.0.0.0:8031");
        assert_eq!(s.web_address, "0.0.0.0:8088");
        assert_eq!(
            (s.nm_expiry_ms, s.am_expiry_ms, s.max_attempts),
            (600_000, 600_000, 2)
        );
        assert_eq!(s.verify_interval_ms, 60_000);
    }

    #[test]
    fn the_memory_bounds_have_defaults_and_yarn_site_keys() {
        let s = Settings::load(&args(&[])).unwrap();
        assert_eq!(
            (s.ended_containers_kept_total, s.store_cache_bytes),
            (
                weft_rm_core::DEFAULT_ENDED_CONTAINERS_KEPT_TOTAL,
                weft_store::DEFAULT_CACHE_BYTES
            )
        );
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            r#"<configuration>
              <property><name>weft.resourcemanager.ended-containers.max-total</name><value>5000</value></property>
              <property><name>weft.resourcemanager.store.cache-mb</name><value>8</value></property>
            </configuration>"#,
        )
        .unwrap();
        let s = Settings::load(&RmArgs {
            yarn_site: Some(site),
            ..Default::default()
        })
        .unwrap();
        assert_eq!(
            (s.ended_containers_kept_total, s.store_cache_bytes),
            (5000, 8 * 1024 * 1024)
        );
    }

    #[test]
    fn flags_over_toml_over_yarn_site() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            r#"<configuration>
              <property><name>yarn.resourcemanager.webapp.address</name><value>127.0.0.1:1</value></property>
              <property><name>yarn.nm.liveness-monitor.expiry-interval-ms</name><value>7000</value></property>
              <property><name>yarn.scheduler.maximum-allocation-mb</name><value>4096</value></property>
              <property><name>yarn.resourcemanager.am.max-attempts</name><value>4</value></property>
            </configuration>"#,
        )
        .unwrap();
        let toml = dir.path().join("rm.toml");
        std::fs::write(
            &toml,
            format!(
                "yarn_site = {:?}\nweb_address = \"127.0.0.1:2\"\nam_expiry_ms = 3000\n[properties]\n\"yarn.scheduler.maximum-allocation-vcores\" = 2\n\"weft.scheduler.verify-interval-ms\" = 0\n",
                site.display().to_string()
            ),
        )
        .unwrap();
        let s = Settings::load(&args(&[
            "--config",
            toml.to_str().unwrap(),
            "--am-expiry-ms",
            "1000",
        ]))
        .unwrap();
        assert_eq!(s.web_address, "127.0.0.1:2");
        assert_eq!(
            (s.nm_expiry_ms, s.am_expiry_ms, s.max_attempts),
            (7000, 1000, 4)
        );
        assert_eq!(s.properties.maximum_allocation.memory_mb(), 4096);
        assert_eq!(s.properties.maximum_allocation.vcores(), 2);
        assert_eq!(s.verify_interval_ms, 0, "0 turns the verification off");
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let toml = dir.path().join("rm.toml");
        std::fs::write(&toml, "no_such_key = 1\n").unwrap();
        let e = Settings::load(&args(&["--config", toml.to_str().unwrap()])).unwrap_err();
        assert!(e.to_string().contains("no_such_key"), "{e}");
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(&site, "<configuration><property><name>yarn.scheduler.maximum-allocation-mb</name><value>lots</value></property></configuration>").unwrap();
        let e = Settings::load(&args(&["--yarn-site", site.to_str().unwrap()])).unwrap_err();
        assert!(e.to_string().contains("maximum-allocation-mb"), "{e}");
        std::fs::write(&site, "<configuration><property><name>weft.scheduler.verify-interval-ms</name><value>often</value></property></configuration>").unwrap();
        let e = Settings::load(&args(&["--yarn-site", site.to_str().unwrap()])).unwrap_err();
        assert!(
            e.to_string()
                .contains("weft.scheduler.verify-interval-ms: 'often' is not a number"),
            "{e}"
        );
        let e = Settings::load(&args(&["--yarn-site", "/nonexistent/yarn-site.xml"])).unwrap_err();
        assert!(matches!(e, SettingsError::Read { .. }), "{e}");
    }

    #[test]
    fn the_scheduler_flag_wins_and_fifo_takes_no_allocation_file() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            r#"<configuration>
              <property><name>yarn.resourcemanager.scheduler.class</name><value>org.apache.hadoop.yarn.server.resourcemanager.scheduler.fifo.FifoScheduler</value></property>
              <property><name>yarn.scheduler.fair.allocation.file</name><value>/etc/fair.xml</value></property>
            </configuration>"#,
        )
        .unwrap();
        let site = site.to_str().unwrap();
        // yarn-site.xml's FIFO ignores the allocation file it also names, and says so.
        let s = Settings::load(&args(&["--yarn-site", site])).unwrap();
        assert_eq!(s.properties.scheduler_kind, SchedulerKind::Fifo);
        assert_eq!(s.allocations, None);
        assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
        assert!(s.notes[0].contains("/etc/fair.xml"), "{:?}", s.notes);
        // The flag is over yarn-site.xml; under fair the file is loaded.
        let s = Settings::load(&args(&["--yarn-site", site, "--scheduler", "fair"])).unwrap();
        assert_eq!(s.properties.scheduler_kind, SchedulerKind::Fair);
        assert_eq!(s.allocations, Some(PathBuf::from("/etc/fair.xml")));
        assert!(s.notes.is_empty());
        let s = Settings::load(&args(&["--scheduler", "fifo"])).unwrap();
        assert_eq!(s.properties.scheduler_kind, SchedulerKind::Fifo);
        // An allocation file given to the FIFO scheduler is a mistake, refused.
        let e =
            Settings::load(&args(&["--scheduler", "fifo", "--allocations", "a.xml"])).unwrap_err();
        assert!(
            e.to_string().contains(
                "the allocation file a.xml is the Fair Scheduler's; the fifo scheduler takes none"
            ),
            "{e}"
        );
        let e = Settings::load(&args(&["--scheduler", "lottery"])).unwrap_err();
        assert!(e.to_string().contains("unknown scheduler 'lottery'"), "{e}");
    }

    #[test]
    fn the_capacity_file_is_in_the_conf_dir_with_yarn_sites_capacity_keys() {
        let dir = tempfile::tempdir().unwrap();
        let site = dir.path().join("yarn-site.xml");
        std::fs::write(
            &site,
            r#"<configuration>
              <property><name>yarn.resourcemanager.scheduler.class</name><value>capacity</value></property>
              <property><name>yarn.scheduler.capacity.root.queues</name><value>a</value></property>
              <property><name>yarn.scheduler.maximum-allocation-mb</name><value>4096</value></property>
            </configuration>"#,
        )
        .unwrap();
        let site = site.to_str().unwrap();
        // By default, beside yarn-site.xml; only the Capacity keys are carried over.
        let s = Settings::load(&args(&["--yarn-site", site])).unwrap();
        assert_eq!(s.properties.scheduler_kind, SchedulerKind::Capacity);
        assert_eq!(
            s.capacity_file,
            Some(dir.path().join("capacity-scheduler.xml"))
        );
        assert_eq!(
            s.capacity_site,
            vec![(
                "yarn.scheduler.capacity.root.queues".to_string(),
                "a".to_string()
            )]
        );
        assert_eq!(s.allocations, None);
        // --conf-dir wins; no file for the other schedulers.
        let s = Settings::load(&args(&["--yarn-site", site, "--conf-dir", "/etc/hadoop"])).unwrap();
        assert_eq!(
            s.capacity_file,
            Some(PathBuf::from("/etc/hadoop/capacity-scheduler.xml"))
        );
        let s = Settings::load(&args(&["--yarn-site", site, "--scheduler", "fair"])).unwrap();
        assert_eq!((s.capacity_file, s.capacity_site.len()), (None, 0));
        // Without any file named, the current directory.
        let s = Settings::load(&args(&["--scheduler", "capacity"])).unwrap();
        assert_eq!(
            s.capacity_file,
            Some(PathBuf::from("./capacity-scheduler.xml"))
        );
    }
}
