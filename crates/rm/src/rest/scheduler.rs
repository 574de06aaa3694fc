//! `GET /ws/v1/cluster/scheduler` in the shape of the scheduler that runs. Fair: the queue
//! tree from a scheduler snapshot, with the per-queue limits the snapshot does not carry
//! (maxApps, maxAMShare, preemptability) taken from the allocation
//! config. FIFO: Hadoop's flat `fifoScheduler` object (its one queue and the nodes' memory).
//! Capacity: `rest::capacity`.

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};
use weft_config::{AllocationConfig, QueueConfig};
use weft_sched::{QueueSnapshot, SchedulerKind, Snapshot};
use weft_types::Resource;

use super::json::resource;

/// Everything the scheduler answer is built from, taken in one driver call.
pub(crate) struct SchedulerView {
    /// Which scheduler runs (the answer's shape).
    pub(crate) kind: SchedulerKind,
    /// The snapshot.
    pub(crate) snap: Snapshot,
    /// The allocation file in force.
    pub(crate) allocations: AllocationConfig,
    /// `yarn.scheduler.minimum-allocation-*`.
    pub(crate) min_allocation: Resource,
    /// `yarn.scheduler.maximum-allocation-*`.
    pub(crate) max_allocation: Resource,
    /// Capacity Scheduler: each queue's figures, root first (empty for other kinds).
    pub(crate) capacity: Vec<weft_sched::CapacityQueueDetails>,
    /// Capacity Scheduler: the capacity-scheduler.xml in force.
    pub(crate) capacity_file: Option<weft_config::capacity::CapacityConfig>,
}

/// Container and reservation figures of one queue's subtree.
#[derive(Default, Clone, Copy)]
pub(super) struct Counts {
    pub(super) pending: u64,
    pub(super) allocated: u64,
    pub(super) reserved: u64,
    reserved_res: Resource,
}

/// Whether `queue` is `ancestor` or below it.
fn within(queue: &str, ancestor: &str) -> bool {
    queue == ancestor
        || queue
            .strip_prefix(ancestor)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// Whether containers may be taken from the queue (Hadoop's `FSQueue.isPreemptable`: its own
/// `allowPreemptionFrom` and every ancestor's), as the scheduler resolved it; from the file
/// for a scheduler that reports no preemption settings.
pub(crate) fn effective_preemptable(q: &QueueSnapshot, allocations: &AllocationConfig) -> bool {
    match &q.starvation {
        Some(s) => s.preemptable,
        None => lineage(allocations, &q.name).all(|c| c.allow_preemption_from.unwrap_or(true)),
    }
}

/// The queue's config, then its ancestors' nearest first (`root.a.b`, `root.a`, `root`).
fn lineage<'a>(
    allocations: &'a AllocationConfig,
    name: &str,
) -> impl Iterator<Item = &'a QueueConfig> + 'a {
    let mut names = Vec::new();
    let mut cur = name.to_string();
    loop {
        names.push(cur.clone());
        match cur.rsplit_once('.') {
            Some((parent, _)) => cur = parent.to_string(),
            None => break,
        }
    }
    names
        .into_iter()
        .filter_map(move |n| allocations.queues.get(&n))
}

impl SchedulerView {
    pub(super) fn counts(&self, queue: &str) -> Counts {
        let mut c = Counts::default();
        let mut app_queue = BTreeMap::new();
        for a in &self.snap.apps {
            app_queue.insert(a.app, a.queue.as_str());
            if within(&a.queue, queue) {
                c.pending += a.pending_containers;
                c.allocated += a.running_containers as u64;
            }
        }
        for (app, size) in self.snap.nodes.iter().filter_map(|n| n.reserved) {
            if app_queue.get(&app).is_some_and(|q| within(q, queue)) {
                c.reserved += 1;
                c.reserved_res = c.reserved_res.saturating_add(size);
            }
        }
        c
    }

    /// The max share as YARN shows it: never more than the cluster.
    fn max_resources(&self, q: &QueueSnapshot) -> Resource {
        q.max_resources.cw_min(self.snap.cluster_capacity)
    }

    /// Hadoop's `FSLeafQueue.computeMaxAMResource`: maxAMShare of the fair share, where a
    /// zero fair-share component is replaced by what the cluster could give the queue.
    fn am_max_resources(&self, q: &QueueSnapshot) -> Resource {
        if !q.leaf {
            return Resource::ZERO;
        }
        let share = self
            .allocations
            .queues
            .get(&q.name)
            .and_then(|c| c.max_am_share)
            .unwrap_or(self.allocations.queue_max_am_share_default);
        let available = self
            .snap
            .cluster_capacity
            .saturating_sub(self.snap.cluster_used);
        let cap = available.cw_min(self.max_resources(q));
        let mut base = q.fair_share;
        if base.memory_mb() == 0 {
            base = base.with(weft_types::MEMORY, cap.memory_mb());
        }
        if base.vcores() == 0 {
            base = base.with(weft_types::VCORES, cap.vcores());
        }
        if share < 0.0 {
            // -1 turns the AM limit off: the whole max share may run AMs.
            return self.max_resources(q);
        }
        base.mul_trunc(f64::from(share))
    }

    fn queue(&self, q: &QueueSnapshot) -> Value {
        let cfg = self.allocations.queues.get(&q.name);
        let max_apps = cfg
            .and_then(|c| c.max_running_apps)
            .unwrap_or(self.allocations.queue_max_apps_default);
        let preemptable = effective_preemptable(q, &self.allocations);
        let counts = self.counts(&q.name);
        let mut o = Map::new();
        if q.leaf {
            o.insert("type".into(), json!("fairSchedulerLeafQueueInfo"));
        }
        let fields = [
            ("maxApps", json!(max_apps)),
            ("minResources", resource(q.min_resources)),
            ("maxResources", resource(self.max_resources(q))),
            ("usedResources", resource(q.usage)),
            ("amUsedResources", resource(q.am_usage)),
            ("amMaxResources", resource(self.am_max_resources(q))),
            ("demandResources", resource(q.demand)),
            ("steadyFairResources", resource(q.steady_fair_share)),
            ("fairResources", resource(q.fair_share)),
            ("clusterResources", resource(self.snap.cluster_capacity)),
            ("reservedResources", resource(counts.reserved_res)),
            (
                "maxContainerAllocation",
                resource(q.max_container_allocation),
            ),
            ("pendingContainers", json!(counts.pending)),
            ("allocatedContainers", json!(counts.allocated)),
            ("reservedContainers", json!(counts.reserved)),
            ("queueName", json!(q.name)),
            ("schedulingPolicy", json!(q.policy)),
            ("weight", json!(q.weight)),
            ("preemptable", json!(preemptable)),
            // Weft-only: Hadoop keeps this QueueMetrics figure out of its REST queue objects.
            (
                "aggregateContainersPreempted",
                json!(q.preempted_containers),
            ),
        ];
        for (k, v) in fields {
            o.insert(k.into(), v);
        }
        if q.leaf {
            o.insert("numPendingApps".into(), json!(q.pending_apps));
            o.insert("numActiveApps".into(), json!(q.running_apps));
        } else {
            let children: Vec<Value> = self
                .snap
                .queues
                .iter()
                .filter(|c| {
                    c.name
                        .strip_prefix(q.name.as_str())
                        .and_then(|rest| rest.strip_prefix('.'))
                        .is_some_and(|rest| !rest.contains('.'))
                })
                .map(|c| self.queue(c))
                .collect();
            // A parent without children has a null list in YARN: left out.
            if !children.is_empty() {
                o.insert("childQueues".into(), json!({"queue": children}));
            }
        }
        Value::Object(o)
    }

    /// `{"scheduler": {"schedulerInfo": ...}}` in the running scheduler's shape.
    pub(crate) fn to_json(&self) -> Value {
        match self.kind {
            SchedulerKind::Fifo => self.fifo_json(),
            SchedulerKind::Fair => self.fair_json(),
            SchedulerKind::Capacity => self.capacity_json(),
        }
    }

    /// Hadoop's `FifoSchedulerInfo` (capacity-scheduler spec §10.4): the one queue's capacity
    /// (1.0) and used fraction of the cluster's memory (0.0 on an empty cluster, where old
    /// Hadoop versions emit NaN), the allocation bounds and the nodes' memory in MB.
    fn fifo_json(&self) -> Value {
        let snap = &self.snap;
        let memory = |r: Resource| r.memory_mb();
        let total: i64 = snap.nodes.iter().map(|n| memory(n.capacity)).sum();
        let used: i64 = snap.nodes.iter().map(|n| memory(n.used)).sum();
        let available: i64 = snap
            .nodes
            .iter()
            .map(|n| memory(n.capacity.saturating_sub(n.used)))
            .sum();
        let containers: usize = snap.apps.iter().map(|a| a.running_containers).sum();
        let used_capacity = if total > 0 {
            used as f64 / total as f64
        } else {
            0.0
        };
        json!({"scheduler": {"schedulerInfo": {
            "type": "fifoScheduler",
            "capacity": 1.0,
            "usedCapacity": used_capacity,
            "qstate": "RUNNING",
            "minQueueMemoryCapacity": self.min_allocation.memory_mb(),
            "maxQueueMemoryCapacity": self.max_allocation.memory_mb(),
            "numNodes": snap.nodes.len(),
            "usedNodeCapacity": used,
            "availNodeCapacity": available,
            "totalNodeCapacity": total,
            "numContainers": containers,
        }}})
    }

    /// `{"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": ...}}}`.
    fn fair_json(&self) -> Value {
        let root = self
            .snap
            .queues
            .iter()
            .find(|q| q.name == "root")
            .map(|q| self.queue(q))
            .unwrap_or(Value::Null);
        json!({"scheduler": {"schedulerInfo": {"type": "fairScheduler", "rootQueue": root}}})
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_sched::{AppSnapshot, NodeSnapshot};
    use weft_types::{AppId, NodeId, ResourceTypes};

    fn queue(name: &str, leaf: bool, fair: Resource) -> QueueSnapshot {
        QueueSnapshot {
            name: name.into(),
            leaf,
            policy: "fair",
            weight: 1.0,
            fair_share: fair,
            steady_fair_share: Resource::new(4096, 4),
            usage: Resource::new(2048, 2),
            demand: Resource::new(3072, 3),
            min_resources: Resource::ZERO,
            max_resources: Resource::UNBOUNDED,
            am_usage: Resource::new(1024, 1),
            running_apps: 1,
            pending_apps: 0,
            configured: true,
            max_container_allocation: Resource::new(8192, 4),
            starvation: None,
            preempted_containers: 0,
        }
    }

    #[test]
    fn the_tree_nests_children_and_marks_leaves() {
        let xml = r#"<allocations>
            <queue name="a"><maxRunningApps>7</maxRunningApps><maxAMShare>0.5</maxAMShare>
              <queue name="b"><allowPreemptionFrom>false</allowPreemptionFrom></queue></queue>
            <queue name="c"/></allocations>"#;
        let (allocations, _) =
            weft_config::alloc_file::parse_allocations(xml, &ResourceTypes::default()).unwrap();
        let cluster = Resource::new(8192, 8);
        let view = SchedulerView {
            snap: Snapshot {
                cluster_capacity: cluster,
                cluster_used: Resource::new(2048, 2),
                cluster_pending: Resource::ZERO,
                queues: vec![
                    queue("root", false, cluster),
                    queue("root.a", false, cluster),
                    queue("root.a.b", true, Resource::new(4096, 4)),
                    queue("root.c", true, Resource::ZERO),
                ],
                apps: vec![AppSnapshot {
                    app: AppId(1),
                    queue: "root.a.b".into(),
                    user: "u".into(),
                    runnable: true,
                    usage: Resource::new(2048, 2),
                    demand: Resource::new(3072, 3),
                    fair_share: Resource::new(4096, 4),
                    running_containers: 2,
                    pending_containers: 1,
                    am_running: true,
                    starvation: None,
                }],
                nodes: vec![NodeSnapshot {
                    node: NodeId(0),
                    host: "h".into(),
                    rack: "/r".into(),
                    capacity: cluster,
                    used: Resource::new(2048, 2),
                    reserved: Some((AppId(1), Resource::new(1024, 1))),
                }],
            },
            allocations,
            kind: SchedulerKind::Fair,
            min_allocation: Resource::new(1024, 1),
            max_allocation: Resource::new(8192, 4),
            capacity: Vec::new(),
            capacity_file: None,
        };
        let v = view.to_json();
        let root = &v["scheduler"]["schedulerInfo"]["rootQueue"];
        assert_eq!(v["scheduler"]["schedulerInfo"]["type"], "fairScheduler");
        assert!(root.get("type").is_none(), "parents carry no type");
        assert_eq!(root["maxResources"], json!({"memory": 8192, "vCores": 8}));
        assert_eq!(root["allocatedContainers"], 2);
        let a = &root["childQueues"]["queue"][0];
        assert_eq!(a["queueName"], "root.a");
        assert_eq!(a["maxApps"], 7);
        let b = &a["childQueues"]["queue"][0];
        assert_eq!(b["type"], "fairSchedulerLeafQueueInfo");
        assert!(b.get("childQueues").is_none());
        // allowPreemptionFrom=false on b, read from the file when the snapshot has no
        // preemption settings.
        assert_eq!(b["preemptable"], false);
        assert_eq!(a["preemptable"], true);
        assert_eq!(b["aggregateContainersPreempted"], 0);
        assert_eq!(b["pendingContainers"], 1);
        assert_eq!(b["reservedContainers"], 1);
        assert_eq!(b["reservedResources"], json!({"memory": 1024, "vCores": 1}));
        assert_eq!(b["numActiveApps"], 1);
        assert_eq!(
            b["maxContainerAllocation"],
            json!({"memory": 8192, "vCores": 4})
        );
        // Default maxAMShare 0.5 of a 4096/4 fair share.
        assert_eq!(b["amMaxResources"], json!({"memory": 2048, "vCores": 2}));
        let c = &root["childQueues"]["queue"][1];
        assert_eq!(c["queueName"], "root.c");
        assert_eq!(c["reservedContainers"], 0);
        // Idle queue: the AM limit falls back to what is available (6144/6) times 0.5.
        assert_eq!(c["amMaxResources"], json!({"memory": 3072, "vCores": 3}));
    }

    fn fifo_view(nodes: Vec<NodeSnapshot>, apps: Vec<AppSnapshot>) -> SchedulerView {
        let capacity = nodes
            .iter()
            .fold(Resource::ZERO, |t, n| t.saturating_add(n.capacity));
        let used = nodes
            .iter()
            .fold(Resource::ZERO, |t, n| t.saturating_add(n.used));
        SchedulerView {
            kind: SchedulerKind::Fifo,
            snap: Snapshot {
                cluster_capacity: capacity,
                cluster_used: used,
                cluster_pending: Resource::ZERO,
                queues: vec![
                    queue("root", false, Resource::ZERO),
                    queue("root.default", true, Resource::ZERO),
                ],
                apps,
                nodes,
            },
            allocations: AllocationConfig::default(),
            min_allocation: Resource::new(512, 1),
            max_allocation: Resource::new(8192, 4),
            capacity: Vec::new(),
            capacity_file: None,
        }
    }

    fn node(id: u32, capacity_mb: i64, used_mb: i64) -> NodeSnapshot {
        NodeSnapshot {
            node: NodeId(id),
            host: format!("h{id}"),
            rack: "/r".into(),
            capacity: Resource::new(capacity_mb, 8),
            // FIFO checks memory only: a node's vcores may be over its capacity.
            used: Resource::new(used_mb, 12),
            reserved: None,
        }
    }

    fn app(id: u64, running: usize) -> AppSnapshot {
        AppSnapshot {
            app: AppId(id),
            queue: "root.default".into(),
            user: "u".into(),
            runnable: true,
            usage: Resource::new(1024 * running as i64, running as i64),
            demand: Resource::ZERO,
            fair_share: Resource::ZERO,
            running_containers: running,
            pending_containers: 0,
            am_running: true,
            starvation: None,
        }
    }

    #[test]
    fn fifo_has_hadoops_flat_shape() {
        // Two 16 GB nodes with 3 GB and 1 GB used by three containers of two apps.
        let view = fifo_view(
            vec![node(0, 16_384, 3072), node(1, 16_384, 1024)],
            vec![app(1, 1), app(2, 2)],
        );
        assert_eq!(
            view.to_json(),
            json!({"scheduler": {"schedulerInfo": {
                "type": "fifoScheduler",
                "capacity": 1.0,
                "usedCapacity": 0.125,
                "qstate": "RUNNING",
                "minQueueMemoryCapacity": 512,
                "maxQueueMemoryCapacity": 8192,
                "numNodes": 2,
                "usedNodeCapacity": 4096,
                "availNodeCapacity": 28_672,
                "totalNodeCapacity": 32_768,
                "numContainers": 3,
            }}})
        );
    }

    #[test]
    fn preemptable_and_the_preempted_count_come_from_the_scheduler() {
        // The file says nothing; the scheduler's effective flag wins.
        let (allocations, _) =
            weft_config::alloc_file::parse_allocations("<allocations/>", &ResourceTypes::default())
                .unwrap();
        let settings = |preemptable| weft_sched::QueueStarvation {
            min_share_preemption_timeout_ms: i64::MAX,
            fair_share_preemption_timeout_ms: 1_000,
            fair_share_preemption_threshold: 0.5,
            preemptable,
            at_min_share_since: None,
            min_share_starvation: Resource::ZERO,
            fair_share_starvation: Resource::ZERO,
        };
        let mut root = queue("root", false, Resource::new(8192, 8));
        root.starvation = Some(settings(true));
        root.preempted_containers = 5;
        let mut a = queue("root.a", true, Resource::new(4096, 4));
        a.starvation = Some(settings(false));
        a.preempted_containers = 5;
        let view = SchedulerView {
            snap: Snapshot {
                cluster_capacity: Resource::new(8192, 8),
                cluster_used: Resource::ZERO,
                cluster_pending: Resource::ZERO,
                queues: vec![root, a],
                apps: Vec::new(),
                nodes: Vec::new(),
            },
            allocations,
            kind: SchedulerKind::Fair,
            min_allocation: Resource::new(1024, 1),
            max_allocation: Resource::new(8192, 4),
            capacity: Vec::new(),
            capacity_file: None,
        };
        let v = view.to_json();
        let root = &v["scheduler"]["schedulerInfo"]["rootQueue"];
        let a = &root["childQueues"]["queue"][0];
        assert_eq!(root["preemptable"], true);
        assert_eq!(a["preemptable"], false);
        assert_eq!(root["aggregateContainersPreempted"], 5);
        assert_eq!(a["aggregateContainersPreempted"], 5);
    }

    #[test]
    fn an_empty_fifo_cluster_is_zero_used_not_nan() {
        let v = fifo_view(Vec::new(), Vec::new()).to_json();
        let info = &v["scheduler"]["schedulerInfo"];
        assert_eq!(info["usedCapacity"], 0.0);
        assert_eq!(info["numNodes"], 0);
        assert_eq!(info["totalNodeCapacity"], 0);
        assert!(info.get("queueName").is_none() && info.get("rootQueue").is_none());
    }

    #[test]
    fn the_openapi_document_knows_every_fifo_field() {
        let doc: Value = serde_json::from_str(crate::rest::OPENAPI).expect("valid JSON");
        let schemas = &doc["components"]["schemas"];
        let documented: Vec<&String> = schemas["FifoSchedulerInfo"]["properties"]
            .as_object()
            .expect("FifoSchedulerInfo")
            .keys()
            .collect();
        let v = fifo_view(vec![node(0, 1024, 0)], Vec::new()).to_json();
        let emitted: Vec<&String> = v["scheduler"]["schedulerInfo"]
            .as_object()
            .expect("schedulerInfo")
            .keys()
            .collect();
        let (mut documented, mut emitted) = (documented, emitted);
        documented.sort();
        emitted.sort();
        assert_eq!(documented, emitted);
        let mapping = &schemas["Scheduler"]["properties"]["scheduler"]["properties"]
            ["schedulerInfo"]["discriminator"]["mapping"];
        assert_eq!(
            mapping["fifoScheduler"],
            "#/components/schemas/FifoSchedulerInfo"
        );
    }
}
