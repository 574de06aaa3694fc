//! The JSON lines `weft sim run` prints (the shapes of the scenario-format contract).
//!
//! Objects are written field by field in a fixed order, so a line is byte-identical from run to
//! run and keys appear in the order the contract lists them (a map type would sort them).
//! Values go through `serde_json` so strings are escaped and numbers formatted as JSON wants.
//!
//! Output types beyond the contract's: `reserved` (a node reserved for an app), `moved` (a move
//! that succeeded), `killed` and `finished` (a kill or finish event took effect; the app's
//! containers then appear as `completed`), `ask_refused` (the scheduler refused an ask as
//! invalid) and `skipped` (an event for an app that is not running any more, e.g. rejected,
//! finished or killed: nothing was sent). `crates/sim/README.md` lists every line.

use serde::Serialize;
use weft_sched::{
    AppSnapshot, CapacityQueueDetails, NodeSnapshot, PoolStats, QueueSnapshot, Snapshot,
};
use weft_types::{AppId, NodeId, Resource, ResourceTypes};

/// A JSON object under construction; fields keep the order they are added in.
#[derive(Debug)]
pub struct Obj {
    buf: String,
    empty: bool,
}

impl Default for Obj {
    fn default() -> Self {
        Obj::new()
    }
}

impl Obj {
    /// An empty object.
    pub fn new() -> Obj {
        Obj {
            buf: String::from("{"),
            empty: true,
        }
    }

    /// An output line's object: `{"type": kind, "at_ms": at_ms, ...`.
    pub fn line(kind: &str, at_ms: u64) -> Obj {
        Obj::new().field("type", kind).field("at_ms", at_ms)
    }

    fn key(&mut self, name: &str) {
        if !self.empty {
            self.buf.push(',');
        }
        self.empty = false;
        push_json(&mut self.buf, name);
        self.buf.push(':');
    }

    /// Adds a field holding any serializable value.
    pub fn field(mut self, name: &str, value: impl Serialize) -> Obj {
        self.key(name);
        push_json(&mut self.buf, &value);
        self
    }

    /// Adds a field holding already-encoded JSON (a nested object or array).
    pub fn raw(mut self, name: &str, json: &str) -> Obj {
        self.key(name);
        self.buf.push_str(json);
        self
    }

    /// The encoded object.
    pub fn finish(mut self) -> String {
        self.buf.push('}');
        self.buf
    }
}

fn push_json(buf: &mut String, value: &(impl Serialize + ?Sized)) {
    // Serializing plain values into a string cannot fail; `null` keeps the line valid if it did.
    match serde_json::to_string(value) {
        Ok(s) => buf.push_str(&s),
        Err(_) => buf.push_str("null"),
    }
}

/// `{"memory_mb": m, "vcores": v, <custom type>: n, ...}`.
pub fn resource_json(types: &ResourceTypes, r: &Resource) -> String {
    let mut o = Obj::new();
    for i in 0..types.len() {
        o = o.field(types.output_name(i), r.get(i));
    }
    o.finish()
}

fn array(items: impl Iterator<Item = String>) -> String {
    let items: Vec<String> = items.collect();
    format!("[{}]", items.join(","))
}

/// How the runner names apps and nodes in outputs (the scenario's names, not ids).
pub trait Names {
    /// The scenario's name of an app.
    fn app(&self, app: AppId) -> String;
    /// The host of a node.
    fn node(&self, node: NodeId) -> String;
}

/// The `snapshot` line.
///
/// Each app's `state` is `running` when runnable and `pending` when it waits for
/// maxRunningApps; `am_running` says whether its AM container runs. Each node carries
/// `reserved`: `null` or `{"app": .., "resources": ..}`. Queues carry `configured` (declared
/// in the allocation file rather than created by placement). Under the Fair Scheduler, queues
/// also carry `preemptable`, `min_share_starvation` and `preempted_containers` (containers
/// preempted from the queue's apps, its subtree's for a parent), apps `starvation` (fair-share plus
/// min-share starvation, preemption spec part E) and `starved` (Hadoop's `isStarved`). Under
/// the Capacity Scheduler (`capacity` non-empty, one entry per queue by name), queues carry
/// Hadoop's capacity figures as percentages, `state`, and for leaves `users` and `user_limit`
/// (scenario-format.md), plus `am_limit` and `max_applications`. With resource pools
/// (`pools` given), the line adds `partitions` (each pool's `name`, `""` for DEFAULT, with
/// `exclusive`, `nodes`, `capacity`, `used`, `pending`, `foreign_used` and `utilization`,
/// the larger of the memory and vcores fractions used) and each queue and node its
/// `partition` (`""`: DEFAULT; root, which spans every pool, is in DEFAULT).
pub fn snapshot_line(
    at_ms: u64,
    s: &Snapshot,
    capacity: &[CapacityQueueDetails],
    pools: Option<&SnapshotPools<'_>>,
    types: &ResourceTypes,
    names: &dyn Names,
) -> String {
    let res = |r: &Resource| resource_json(types, r);
    let cluster = Obj::new()
        .raw("capacity", &res(&s.cluster_capacity))
        .raw("used", &res(&s.cluster_used))
        .raw("pending", &res(&s.cluster_pending))
        .finish();
    let queues = array(s.queues.iter().map(|q| {
        let json = queue_json(q, &res);
        let json = match capacity.iter().find(|c| c.name == q.name) {
            Some(c) => with_capacity(json, c, &res),
            None => json,
        };
        match pools.and_then(|p| (p.queue_pool)(&q.name)) {
            Some(pool) => splice(json, &Obj::new().field("partition", pool).finish()),
            None => json,
        }
    }));
    let apps = array(s.apps.iter().map(|a| app_json(a, &res, names)));
    let nodes = array(s.nodes.iter().map(|n| {
        let json = node_json(n, &res, names);
        match pools.and_then(|p| (p.node_pool)(n.node)) {
            Some(pool) => splice(json, &Obj::new().field("partition", pool).finish()),
            None => json,
        }
    }));
    let line = Obj::line("snapshot", at_ms)
        .raw("cluster", &cluster)
        .raw("queues", &queues)
        .raw("apps", &apps)
        .raw("nodes", &nodes);
    match pools {
        Some(p) => line
            .raw(
                "partitions",
                &array(p.stats.iter().map(|s| partition_json(s, &res))),
            )
            .finish(),
        None => line.finish(),
    }
}

/// What a snapshot shows of resource pools.
pub struct SnapshotPools<'a> {
    /// Each pool's figures (`Scheduler::pool_stats`).
    pub stats: &'a [PoolStats],
    /// A node's pool name.
    pub node_pool: &'a dyn Fn(NodeId) -> Option<String>,
    /// A queue's pool name (by full name).
    pub queue_pool: &'a dyn Fn(&str) -> Option<String>,
}

fn partition_json(p: &PoolStats, res: &dyn Fn(&Resource) -> String) -> String {
    let fraction = |i: usize| {
        let capacity = p.capacity.get(i);
        if capacity > 0 {
            p.used.get(i) as f64 / capacity as f64
        } else {
            0.0
        }
    };
    Obj::new()
        .field("name", &p.name)
        .field("exclusive", true)
        .field("nodes", p.nodes)
        .raw("capacity", &res(&p.capacity))
        .raw("used", &res(&p.used))
        .raw("pending", &res(&p.pending))
        .raw("foreign_used", &res(&p.foreign_used))
        .field("utilization", fraction(0).max(fraction(1)))
        .finish()
}

/// `json` (an object) with the fields of `extra` (an object) added at its end.
fn splice(json: String, extra: &str) -> String {
    match (json.strip_suffix('}'), extra.strip_prefix('{')) {
        (Some(head), Some(tail)) if tail != "}" => format!("{head},{tail}"),
        _ => json,
    }
}

/// `json` (a queue object) with the Capacity Scheduler's figures added at its end (DEFAULT's;
/// with node labels, `by_partition` lists them in each label the queue can access).
fn with_capacity(
    json: String,
    c: &CapacityQueueDetails,
    res: &dyn Fn(&Resource) -> String,
) -> String {
    let obj = capacity_figures(c, res);
    let obj = if c.by_partition.is_empty() {
        obj
    } else {
        let labeled = array(c.by_partition.iter().map(|(label, p)| {
            capacity_figures(p, res)
                .field("partition", label)
                .raw("used", &res(&p.used))
                .finish()
        }));
        obj.raw("by_partition", &labeled)
    };
    splice(json, &obj.finish())
}

fn capacity_figures(c: &CapacityQueueDetails, res: &dyn Fn(&Resource) -> String) -> Obj {
    let mut obj = Obj::new()
        .field("capacity", c.capacity)
        .field("max_capacity", c.max_capacity)
        .field("absolute_capacity", c.absolute_capacity)
        .field("absolute_max_capacity", c.absolute_max_capacity)
        .field("used_capacity", c.used_capacity)
        .field("absolute_used_capacity", c.absolute_used_capacity)
        .field("state", c.state);
    if let Some(limit) = &c.user_limit {
        let users = array(c.users.iter().map(|u| {
            Obj::new()
                .field("user", &u.user)
                .raw("usage", &res(&u.usage))
                .field("running_apps", u.running_apps)
                .field("pending_apps", u.pending_apps)
                .raw("user_limit", &res(&u.user_limit))
                .finish()
        }));
        obj = obj.raw("users", &users).raw("user_limit", &res(limit));
    }
    if let Some(am) = &c.am_limit {
        obj = obj.raw("am_limit", &res(am));
    }
    if let Some(n) = c.max_applications {
        obj = obj.field("max_applications", n);
    }
    obj
}

fn queue_json(q: &QueueSnapshot, res: &dyn Fn(&Resource) -> String) -> String {
    let obj = Obj::new()
        .field("name", &q.name)
        .field("leaf", q.leaf)
        .field("policy", q.policy)
        .field("weight", q.weight)
        .raw("fair_share", &res(&q.fair_share))
        .raw("steady_fair_share", &res(&q.steady_fair_share))
        .raw("usage", &res(&q.usage))
        .raw("demand", &res(&q.demand))
        .raw("min_resources", &res(&q.min_resources))
        .raw("max_resources", &res(&q.max_resources))
        .raw("am_usage", &res(&q.am_usage))
        .field("running_apps", q.running_apps)
        .field("pending_apps", q.pending_apps)
        .field("configured", q.configured);
    match &q.starvation {
        Some(s) => obj
            .field("preemptable", s.preemptable)
            .raw("min_share_starvation", &res(&s.min_share_starvation))
            .field("preempted_containers", q.preempted_containers)
            .finish(),
        None => obj.finish(),
    }
}

fn app_json(a: &AppSnapshot, res: &dyn Fn(&Resource) -> String, names: &dyn Names) -> String {
    let obj = Obj::new()
        .field("app", names.app(a.app))
        .field("queue", &a.queue)
        .field("user", &a.user)
        .field("state", if a.runnable { "running" } else { "pending" })
        .field("runnable", a.runnable)
        .raw("usage", &res(&a.usage))
        .raw("demand", &res(&a.demand))
        .raw("fair_share", &res(&a.fair_share))
        .field("running_containers", a.running_containers)
        .field("pending_containers", a.pending_containers)
        .field("am_running", a.am_running);
    match &a.starvation {
        Some(s) => obj
            .raw(
                "starvation",
                &res(&s
                    .fair_share_starvation
                    .saturating_add(s.min_share_starvation)),
            )
            .field("starved", s.starved)
            .finish(),
        None => obj.finish(),
    }
}

fn node_json(n: &NodeSnapshot, res: &dyn Fn(&Resource) -> String, names: &dyn Names) -> String {
    let reserved = match &n.reserved {
        Some((app, r)) => Obj::new()
            .field("app", names.app(*app))
            .raw("resources", &res(r))
            .finish(),
        None => "null".to_string(),
    };
    Obj::new()
        .field("host", &n.host)
        .field("rack", &n.rack)
        .raw("capacity", &res(&n.capacity))
        .raw("used", &res(&n.used))
        .raw("reserved", &reserved)
        .finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_keep_field_order_and_escape_strings() {
        let line = Obj::line("rejected", 5)
            .field("app", "a\"1")
            .field("reason", "no")
            .finish();
        assert_eq!(
            line,
            r#"{"type":"rejected","at_ms":5,"app":"a\"1","reason":"no"}"#
        );
    }

    #[test]
    fn resources_name_custom_types() {
        let types = ResourceTypes::with_custom(["gpu"]).unwrap();
        let r = Resource::new(1024, 2).with(2, 1);
        assert_eq!(
            resource_json(&types, &r),
            r#"{"memory_mb":1024,"vcores":2,"gpu":1}"#
        );
    }
}
