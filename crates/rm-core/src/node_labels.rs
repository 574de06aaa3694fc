//! The node-label registry (resource-pools spec §11): one registry of exclusive partitions,
//! fed by the allocation file (its resource pools) and by the admin interfaces (rmadmin and
//! REST: labels added, nodes mapped), the latter persisted in the store.
//!
//! Ownership: a pool the allocation file declares is the file's, and so is its membership
//! when the file lists its hosts; those parts are read through every interface but changed
//! only by editing the file. An admin may map nodes into a file pool that lists no hosts, and
//! move such nodes between such pools or back to DEFAULT: the scheduler then gets the file's
//! pools with those hosts added, as a reload (running containers stay, marked foreign where
//! their node left their app's pool). Without `<resourcePools>`, the Fair Scheduler ignores
//! labels, as Hadoop's does; the registry still records them. The Capacity Scheduler gets the
//! admin labels and mappings themselves (`CapacityConfig::partitions`) on every change, as a
//! reload: its queues reach labels through `accessible-node-labels`.

use std::collections::BTreeMap;

use weft_config::capacity::{AccessibleLabels, NodePartitions};
use weft_config::pools::{check_pool_name, PoolHost, ResourcePools};
use weft_sched::SchedulerConfig;
use weft_store::{NodeLabelsRecord, Write};
use weft_types::Time;

use crate::core::RmCore;
use crate::RmError;

/// Hadoop's refusal while `yarn.node-labels.enabled` is off.
pub const NODE_LABELS_DISABLED: &str =
    "Node-label-based scheduling is disabled. Please check yarn.node-labels.enabled";

/// The admin part of the registry.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct NodeLabels {
    /// Labels added through the admin interfaces: name -> exclusive.
    labels: BTreeMap<String, bool>,
    /// Nodes mapped through them: `host` (every NM of it) or `host:port` -> label.
    mappings: BTreeMap<String, String>,
}

/// Where a label is defined.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelSource {
    /// A resource pool of the allocation file.
    AllocationFile,
    /// Added by rmadmin or REST.
    Admin,
}

impl LabelSource {
    /// The spec's name for it (`allocation-file`, `admin`).
    pub fn as_str(self) -> &'static str {
        match self {
            LabelSource::AllocationFile => "allocation-file",
            LabelSource::Admin => "admin",
        }
    }
}

/// One cluster node label.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeLabelInfo {
    /// Its name.
    pub name: String,
    /// Whether it is an exclusive partition.
    pub exclusive: bool,
    /// Where it is defined.
    pub source: LabelSource,
}

impl NodeLabels {
    pub(crate) fn from_record(record: &NodeLabelsRecord) -> NodeLabels {
        NodeLabels {
            labels: record.labels.iter().cloned().collect(),
            mappings: record.mappings.iter().cloned().collect(),
        }
    }

    fn record(&self) -> NodeLabelsRecord {
        NodeLabelsRecord {
            labels: self.labels.iter().map(|(n, e)| (n.clone(), *e)).collect(),
            mappings: self
                .mappings
                .iter()
                .map(|(n, l)| (n.clone(), l.clone()))
                .collect(),
        }
    }

    /// The admin label of the NM `node_id` (`host:port`): its own mapping, else its host's.
    fn mapped_label(&self, node_id: &str) -> Option<&str> {
        let host = host_part(node_id);
        self.mappings
            .get(node_id)
            .or_else(|| self.mappings.get(host))
            .map(String::as_str)
    }

    /// `file` with the admin mappings that apply to it (into file pools that list no hosts,
    /// for nodes the file does not place) added to the pools' hosts.
    fn effective_pools(&self, file: &ResourcePools) -> ResourcePools {
        let mut pools = file.clone();
        for (node, label) in &self.mappings {
            let Some(entry) = pool_host(node) else {
                continue;
            };
            if file_places(file, &entry) {
                continue;
            }
            if let Some(p) = pools.pools.iter_mut().find(|p| &p.name == label) {
                let file_lists_hosts = file.pool(label).is_some_and(|f| !f.hosts.is_empty());
                if !file_lists_hosts {
                    p.hosts.push(entry);
                }
            }
        }
        pools
    }

    /// The registry as the Capacity Scheduler reads it: the exclusive labels and the nodes
    /// mapped to them.
    fn partitions(&self) -> NodePartitions {
        NodePartitions {
            labels: self
                .labels
                .iter()
                .filter(|(_, exclusive)| **exclusive)
                .map(|(name, _)| name.clone())
                .collect(),
            nodes: self
                .mappings
                .iter()
                .filter(|(_, label)| self.labels.get(*label) == Some(&true))
                .map(|(node, label)| (node.to_ascii_lowercase(), label.clone()))
                .collect(),
        }
    }
}

/// `host` of `host:port` (the whole text when it has no port).
fn host_part(node: &str) -> &str {
    match node.rsplit_once(':') {
        Some((host, port)) if port.parse::<u16>().is_ok() => host,
        _ => node,
    }
}

/// `host` or `host:port` as a pool's host entry (host lower-cased, as the file's are).
fn pool_host(node: &str) -> Option<PoolHost> {
    let (host, port) = match node.rsplit_once(':') {
        Some((host, port)) => (host, Some(port.parse::<u16>().ok()?)),
        None => (node, None),
    };
    if host.is_empty() {
        return None;
    }
    Some(PoolHost {
        host: host.to_ascii_lowercase(),
        port,
    })
}

/// Whether a `<host>` of the allocation file covers `entry` (a bare host entry is covered by
/// any entry for its host).
fn file_places(file: &ResourcePools, entry: &PoolHost) -> bool {
    file.pools.iter().any(|p| {
        p.hosts.iter().any(|h| {
            h.host.eq_ignore_ascii_case(&entry.host)
                && (entry.port.is_none() || h.port.is_none() || h.port == entry.port)
        })
    })
}

/// The file pool whose `<host>` list places `entry`.
fn file_pool_of<'a>(file: &'a ResourcePools, entry: &PoolHost) -> Option<&'a str> {
    file.pools
        .iter()
        .find(|p| {
            p.hosts.iter().any(|h| {
                h.host.eq_ignore_ascii_case(&entry.host)
                    && (entry.port.is_none() || h.port.is_none() || h.port == entry.port)
            })
        })
        .map(|p| p.name.as_str())
}

fn refused(message: impl Into<String>) -> RmError {
    RmError::NodeLabels(message.into())
}

impl RmCore {
    /// The allocation file's resource pools (`None`: no `<resourcePools>`, or not Fair).
    fn file_pools(&self) -> Option<&ResourcePools> {
        self.config.scheduler.allocations()?.resource_pools.as_ref()
    }

    /// The scheduler configuration the registry gives the scheduler: the allocation file's,
    /// with the admin-mapped hosts in their pools.
    pub(crate) fn effective_scheduler_config(&self) -> SchedulerConfig {
        let mut config = self.config.scheduler.clone();
        match &mut config {
            SchedulerConfig::Fair(fair) => {
                if let Some(file) = &fair.allocations.resource_pools {
                    fair.allocations.resource_pools = Some(self.labels.effective_pools(file));
                }
            }
            SchedulerConfig::Capacity(cs) => cs.capacity.partitions = self.labels.partitions(),
            SchedulerConfig::Fifo(_) => {}
        }
        config
    }

    /// Whether the scheduler reads the registry's labels themselves (the Capacity Scheduler).
    fn scheduler_takes_labels(&self) -> bool {
        matches!(self.config.scheduler, SchedulerConfig::Capacity(_))
    }

    /// Hands the scheduler the registry as `next` would make it (the Capacity Scheduler, or
    /// the Fair Scheduler's pools); on a refusal the registry stays as it was.
    fn apply_labels(&mut self, now: Time, next: NodeLabels) -> Result<(), RmError> {
        let previous = std::mem::replace(&mut self.labels, next);
        if self.scheduler_takes_labels() || self.file_pools().is_some() {
            let config = self.effective_scheduler_config();
            if let Err(e) = self
                .sched
                .handle(now, weft_sched::Event::Reload(Box::new(config)))
            {
                self.labels = previous;
                return Err(e.into());
            }
            self.drain(now);
        }
        self.persist(vec![Write::NodeLabels(self.labels.record())]);
        Ok(())
    }

    /// Hadoop's refusal to remove a label a Capacity queue lists in its
    /// `accessible-node-labels`.
    fn check_label_unused(&self, label: &str) -> Result<(), RmError> {
        let SchedulerConfig::Capacity(cs) = &self.config.scheduler else {
            return Ok(());
        };
        let user = cs.capacity.queues.iter().find(
            |q| matches!(&q.labels.accessible, AccessibleLabels::Only(l) if l.contains(label)),
        );
        match user {
            Some(q) => Err(refused(format!(
                "Cannot remove label={label}, because queue={} is using this label. Please remove label on queue before remove the label",
                q.name
            ))),
            None => Ok(()),
        }
    }

    /// Every cluster node label, sorted by name: the file's pools and the admin labels.
    pub fn node_labels(&self) -> Vec<NodeLabelInfo> {
        let mut all: BTreeMap<String, NodeLabelInfo> = BTreeMap::new();
        for (name, exclusive) in &self.labels.labels {
            all.insert(
                name.clone(),
                NodeLabelInfo {
                    name: name.clone(),
                    exclusive: *exclusive,
                    source: LabelSource::Admin,
                },
            );
        }
        if let Some(file) = self.file_pools() {
            for p in &file.pools {
                all.insert(
                    p.name.clone(),
                    NodeLabelInfo {
                        name: p.name.clone(),
                        exclusive: p.exclusive,
                        source: LabelSource::AllocationFile,
                    },
                );
            }
        }
        all.into_values().collect()
    }

    /// The file's pools with the admin-mapped hosts added (`None`: no resource pools).
    pub(crate) fn effective_pools(&self) -> Option<ResourcePools> {
        self.file_pools().map(|f| self.labels.effective_pools(f))
    }

    /// The partition of the NM `node_id` (`host:port`; `None`: DEFAULT), given
    /// [`RmCore::effective_pools`]: with resource pools, the pool the scheduler puts it in;
    /// without, its admin label (which the Fair Scheduler ignores, as Hadoop's does).
    pub(crate) fn node_label_in(
        &self,
        pools: Option<&ResourcePools>,
        node_id: &str,
    ) -> Option<String> {
        match pools {
            Some(pools) => {
                let entry = pool_host(node_id)?;
                pools
                    .pool_of_node(&entry.host, entry.port.unwrap_or(0))
                    .map(str::to_string)
            }
            None => self.labels.mapped_label(node_id).map(str::to_string),
        }
    }

    /// The partition of the NM `node_id` (see `node_label_in`).
    pub fn node_label(&self, node_id: &str) -> Option<String> {
        self.node_label_in(self.effective_pools().as_ref(), node_id)
    }

    /// The partition of `queue` (its resource pool; `None`: DEFAULT, or no pools).
    pub fn queue_partition(&self, queue: &str) -> Option<String> {
        let full = if queue == "root" || queue.starts_with("root.") {
            queue.to_string()
        } else {
            format!("root.{queue}")
        };
        self.file_pools()?
            .binding(&full)
            .map(|b| b.pool().to_string())
    }

    fn check_labels_enabled(&self) -> Result<(), RmError> {
        if self.config.node_labels_enabled {
            Ok(())
        } else {
            Err(refused(NODE_LABELS_DISABLED))
        }
    }

    /// `-addToClusterNodeLabels` / `add-node-labels`: adds labels (name, exclusive). A label
    /// that exists with the same exclusivity is left as it is. Refused as a whole when any
    /// name is invalid, declared by the allocation file, or exists with the other exclusivity.
    pub fn add_node_labels(&mut self, labels: &[(String, bool)]) -> Result<(), RmError> {
        let now = self.latest;
        self.check_labels_enabled()?;
        if labels.is_empty() {
            return Err(refused("no node labels given to add"));
        }
        let mut next = self.labels.clone();
        for (name, exclusive) in labels {
            check_pool_name(name)
                .map_err(|why| refused(why.replace("resource pool name", "node label")))?;
            if self.file_pools().is_some_and(|f| f.pool(name).is_some()) {
                return Err(refused(format!(
                    "label {name} is owned by the allocation file (it declares resource pool {name})"
                )));
            }
            match next.labels.get(name) {
                Some(e) if e != exclusive => {
                    return Err(refused(format!(
                        "Exclusivity cannot be modified for an existing label with name {name}"
                    )))
                }
                _ => {
                    next.labels.insert(name.clone(), *exclusive);
                }
            }
        }
        self.apply_labels(now, next)
    }

    /// `-removeFromClusterNodeLabels` / `remove-node-labels`: removes admin labels and the
    /// mappings to them. Refused as a whole for an unknown label or one the file declares.
    pub fn remove_node_labels(&mut self, names: &[String]) -> Result<(), RmError> {
        let now = self.latest;
        self.check_labels_enabled()?;
        if names.is_empty() {
            return Err(refused("no node labels given to remove"));
        }
        let mut next = self.labels.clone();
        for name in names {
            if self.file_pools().is_some_and(|f| f.pool(name).is_some()) {
                return Err(refused(format!(
                    "label {name} is owned by the allocation file; remove resource pool {name} from fair-scheduler.xml and run yarn rmadmin -refreshQueues"
                )));
            }
            self.check_label_unused(name)?;
            if next.labels.remove(name).is_none() {
                return Err(refused(format!(
                    "Node label={name} to be removed doesn't existed in cluster node labels collection."
                )));
            }
            next.mappings.retain(|_, l| l != name);
        }
        // Admin labels are never in the Fair Scheduler's pools (mapping into one is refused
        // while the file has pools); the Capacity Scheduler loses the partition (refused while
        // it runs apps).
        if self.file_pools().is_some() {
            self.commit_labels(next);
            return Ok(());
        }
        self.apply_labels(now, next)
    }

    /// `-replaceLabelsOnNode` / `replace-labels` / `replace-node-to-labels`: for each node
    /// (`host` for all its NMs, or `host:port`), its label (`None`: DEFAULT). With resource
    /// pools this moves nodes between pools: a pool reload, running containers kept. Refused
    /// as a whole, changing nothing, for an unknown node or label, a non-exclusive label,
    /// more than one label, a node the allocation file places, a pool whose hosts the file
    /// lists, or (with pools) a label that is not one of the file's pools.
    pub fn replace_node_labels(
        &mut self,
        now: Time,
        mapping: &[(String, Vec<String>)],
    ) -> Result<(), RmError> {
        self.check_labels_enabled()?;
        if mapping.is_empty() {
            return Err(refused("no node-to-labels mapping given"));
        }
        let mut next = self.labels.clone();
        for (node, labels) in mapping {
            let node = node.trim();
            let entry = pool_host(node).ok_or_else(|| {
                refused(format!("invalid node '{node}': expected host or host:port"))
            })?;
            self.check_node_known(node, &entry)?;
            let label = match labels.as_slice() {
                [] => None,
                [one] if one.trim().is_empty() => None,
                [one] => Some(one.trim().to_string()),
                many => {
                    return Err(refused(format!(
                        "node {node} was given {} labels ({}); a node has at most one partition",
                        many.len(),
                        many.join(", ")
                    )))
                }
            };
            if let Some(file) = self.file_pools() {
                if let Some(pool) = file_pool_of(file, &entry) {
                    return Err(refused(format!(
                        "host {node} belongs to resource pool {pool} defined in the allocation file; edit fair-scheduler.xml and run yarn rmadmin -refreshQueues"
                    )));
                }
            }
            if let Some(label) = &label {
                self.check_label_mappable(label)?;
            }
            let key = match entry.port {
                Some(p) => format!("{}:{p}", entry.host),
                None => entry.host.clone(),
            };
            if entry.port.is_some() && next.mappings.contains_key(&entry.host) {
                return Err(refused(format!(
                    "host {} is mapped as a whole; replace the labels of {} (every NM on it) instead of {node}",
                    entry.host, entry.host
                )));
            }
            if entry.port.is_none() {
                // A whole-host mapping replaces the host's per-NM ones.
                let prefix = format!("{}:", entry.host);
                next.mappings.retain(|k, _| !k.starts_with(&prefix));
            }
            match label {
                Some(l) => next.mappings.insert(key, l),
                None => next.mappings.remove(&key),
            };
        }
        self.apply_labels(now, next)
    }

    fn check_node_known(&self, node: &str, entry: &PoolHost) -> Result<(), RmError> {
        let known = self.nodes.values().any(|n| match entry.port {
            Some(_) => n.id.eq_ignore_ascii_case(node),
            None => host_part(&n.id).eq_ignore_ascii_case(&entry.host),
        });
        if known {
            Ok(())
        } else {
            Err(refused(format!(
                "unknown node {node}: no NodeManager has registered as it"
            )))
        }
    }

    fn check_label_mappable(&self, label: &str) -> Result<(), RmError> {
        let file = self.file_pools();
        if let Some(pool) = file.and_then(|f| f.pool(label)) {
            if !pool.hosts.is_empty() {
                return Err(refused(format!(
                    "label {label} is owned by the allocation file: resource pool {label} lists its hosts there; edit fair-scheduler.xml and run yarn rmadmin -refreshQueues"
                )));
            }
            return Ok(());
        }
        match self.labels.labels.get(label) {
            None => Err(refused(format!(
                "unknown node label {label}: add it with -addToClusterNodeLabels first"
            ))),
            Some(false) => Err(refused(format!(
                "node label {label} is non-exclusive; Weft's partitions (resource pools, Capacity node labels) are exclusive only"
            ))),
            Some(true) if file.is_some() => Err(refused(format!(
                "node label {label} is not a resource pool of the allocation file; with resource pools, nodes map only to the file's pools (declare <resourcePool name=\"{label}\"/>)"
            ))),
            Some(true) => Ok(()),
        }
    }

    fn commit_labels(&mut self, next: NodeLabels) {
        self.labels = next;
        self.persist(vec![Write::NodeLabels(self.labels.record())]);
    }

    /// After a restart: the stored admin part, handed to the scheduler when it maps nodes.
    pub(crate) fn restore_node_labels(
        &mut self,
        now: Time,
        record: &NodeLabelsRecord,
    ) -> Result<(), RmError> {
        self.labels = NodeLabels::from_record(record);
        let capacity_labels = self.scheduler_takes_labels() && !self.labels.labels.is_empty();
        if capacity_labels || (self.file_pools().is_some() && !self.labels.mappings.is_empty()) {
            let config = self.effective_scheduler_config();
            self.sched
                .handle(now, weft_sched::Event::Reload(Box::new(config)))?;
        }
        Ok(())
    }
}
