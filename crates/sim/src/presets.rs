//! Named synthetic workloads for `weft sim run|bench --preset NAME [--scale F]`.
//!
//! * `meituan`: the pressure of seed 003 (Meituan's Fair Scheduler work): 12,000 nodes of
//!   100 vcores / 400 GiB, 2,000 leaf queues, 10,000 apps running at once (closed loop),
//!   1-vcore 4 GiB containers of 40 s, demand always above capacity. See [`MeituanParams`].
//! * `small`: a quick mixed trace for demos: 100 nodes, 20 queues, 200 apps of varied sizes
//!   and durations arriving over a minute. See [`SmallParams`].
//! * `preemption`: seed 001's picture with preemption on: one big job takes the whole
//!   cluster, then jobs arrive in queues that were empty until then and can only get their
//!   share by preemption. See [`PreemptionParams`].
//!
//! `scale` shrinks nodes, apps and queues by the same factor (each at least 1), keeping the
//! per-node, per-app and per-queue shapes, so `--scale 0.05` is the same pressure on a cluster
//! of 600 nodes with 500 apps in 100 queues.

use thiserror::Error;
use weft_types::{Duration, Resource, ResourceTypes, Time};

use crate::workload::{AppPlan, AppSource, ClosedLoop, SplitMix64, Stage, TaskGroup};
use crate::workload::{Workload, WorkloadNode};

/// The preset names [`preset`] knows.
pub const PRESETS: &[&str] = &["meituan", "small", "preemption"];

/// A preset that cannot be built.
#[derive(Clone, Debug, PartialEq, Error)]
pub enum PresetError {
    /// No preset has this name.
    #[error("unknown preset '{name}' (known: {})", PRESETS.join(", "))]
    Unknown {
        /// The name asked for.
        name: String,
    },
    /// The scale factor is not a positive finite number.
    #[error("the scale must be a positive number, found {0}")]
    BadScale(f64),
    /// `--pools` asked of a preset that does not split into pools.
    #[error("the {name} preset has no resource pools (--pools goes with the meituan preset)")]
    PoolsUnsupported {
        /// The preset.
        name: String,
    },
    /// More pools than the (scaled) preset has nodes or leaf queues to give each one.
    #[error("{pools} resource pools need at least {pools} nodes and leaf queues; the preset at this scale has {nodes} nodes and {queues} queues")]
    TooManyPools {
        /// Pools asked for.
        pools: u32,
        /// Nodes at this scale.
        nodes: u32,
        /// Leaf queues at this scale.
        queues: u32,
    },
}

/// Builds the preset `name` at `scale` (1.0 = full size) with generator seed `seed`.
pub fn preset(name: &str, scale: f64, seed: u64) -> Result<Workload, PresetError> {
    preset_with_pools(name, scale, seed, 0)
}

/// [`preset`], with the nodes and top-level queues split into `pools` resource pools (0: no
/// pools; only `meituan` splits, see [`MeituanParams::pools`]).
pub fn preset_with_pools(
    name: &str,
    scale: f64,
    seed: u64,
    pools: u32,
) -> Result<Workload, PresetError> {
    if !(scale.is_finite() && scale > 0.0) {
        return Err(PresetError::BadScale(scale));
    }
    if pools > 0 && name != "meituan" {
        return Err(PresetError::PoolsUnsupported {
            name: name.to_string(),
        });
    }
    match name {
        "meituan" => {
            let params = MeituanParams::full().scaled(scale).with_pools(pools)?;
            Ok(params.workload(seed))
        }
        "small" => Ok(SmallParams::full().scaled(scale).workload(seed)),
        "preemption" => Ok(PreemptionParams::full().scaled(scale).workload(seed)),
        _ => Err(PresetError::Unknown {
            name: name.to_string(),
        }),
    }
}

/// `n * scale` rounded, at least 1.
fn scale_count(n: u32, scale: f64) -> u32 {
    let v = (f64::from(n) * scale).round();
    if v < 1.0 {
        1
    } else if v > f64::from(u32::MAX) {
        u32::MAX
    } else {
        v as u32
    }
}

/// Zero-padded decimal width for numbers below `n`.
fn width(n: u32) -> usize {
    n.saturating_sub(1).max(1).to_string().len()
}

/// A queue tree: `parents` parent queues under root, `queues` leaves spread over them as evenly
/// as possible (parent `p` gets its leaves in one block). Returns the leaves' full names.
pub fn leaf_queues(parents: u32, queues: u32) -> Vec<String> {
    let parents = parents.clamp(1, queues.max(1));
    let (pw, per, extra) = (width(parents), queues / parents, queues % parents);
    let mut names = Vec::with_capacity(queues as usize);
    for p in 0..parents {
        let leaves = per + u32::from(p < extra);
        let lw = width(leaves);
        for l in 0..leaves {
            names.push(format!("root.p{p:0pw$}.q{l:0lw$}"));
        }
    }
    names
}

/// The pool (0-based) of item `i` of `n` split into `pools` consecutive blocks.
fn block_of(i: u32, n: u32, pools: u32) -> u32 {
    (u64::from(i) * u64::from(pools) / u64::from(n.max(1))) as u32
}

/// The name of pool `k` of `pools` (zero-padded, so no pool name prefixes another).
pub fn pool_name(k: u32, pools: u32) -> String {
    format!("pool{k:0w$}", w = width(pools))
}

/// [`leaf_queues`] with each parent `p` renamed `pool<k>_p<p>`, where pool `k` takes the
/// `k`-th block of parents (so the name-prefix rule binds it to pool `k`).
pub fn pooled_leaf_queues(parents: u32, queues: u32, pools: u32) -> Vec<String> {
    let parents = parents.clamp(1, queues.max(1));
    leaf_queues(parents, queues)
        .into_iter()
        .map(|leaf| {
            let rest = leaf.strip_prefix("root.p").unwrap_or(&leaf);
            let (number, tail) = rest.split_once('.').unwrap_or((rest, ""));
            let p: u32 = number.parse().unwrap_or(0);
            let pool = pool_name(block_of(p, parents, pools), pools);
            format!("root.{pool}_p{number}.{tail}")
        })
        .collect()
}

/// `xml` (an allocation file from [`allocations_for`]) with a `<resourcePools>` block: `pools`
/// pools, pool `k` holding the `k`-th block of `hosts`.
pub fn with_resource_pools(xml: &str, pools: u32, hosts: &[&str]) -> String {
    let n = hosts.len() as u32;
    let mut block = String::from("  <resourcePools>\n");
    for k in 0..pools {
        block.push_str(&format!(
            "    <resourcePool name=\"{}\">\n",
            pool_name(k, pools)
        ));
        for (i, host) in hosts.iter().enumerate() {
            if block_of(i as u32, n, pools) == k {
                block.push_str(&format!("      <host>{host}</host>\n"));
            }
        }
        block.push_str("    </resourcePool>\n");
    }
    block.push_str("  </resourcePools>\n");
    match xml.split_once("<allocations>\n") {
        Some((head, tail)) => format!("{head}<allocations>\n{block}{tail}"),
        None => xml.to_string(),
    }
}

/// A fair-scheduler.xml declaring `leaves` (full names `root.<parent>.<leaf>`) with weight 1
/// and no limits: no maxResources, unlimited running apps (Hadoop's default), and
/// `queueMaxAMShareDefault` -1 so the AM share never holds an app back.
pub fn allocations_for(leaves: &[String]) -> String {
    let mut xml = String::from(
        "<?xml version=\"1.0\"?>\n<allocations>\n  \
         <queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>\n  \
         <defaultQueueSchedulingPolicy>fair</defaultQueueSchedulingPolicy>\n",
    );
    let mut open_parent: Option<&str> = None;
    for full in leaves {
        let rest = full.strip_prefix("root.").unwrap_or(full);
        let (parent, leaf) = rest.split_once('.').unwrap_or(("", rest));
        if open_parent != Some(parent) {
            if open_parent.is_some_and(|p| !p.is_empty()) {
                xml.push_str("  </queue>\n");
            }
            if !parent.is_empty() {
                xml.push_str(&format!(
                    "  <queue name=\"{parent}\" type=\"parent\">\n    <weight>1.0</weight>\n"
                ));
            }
            open_parent = Some(parent);
        }
        let indent = if parent.is_empty() { "  " } else { "    " };
        xml.push_str(&format!(
            "{indent}<queue name=\"{leaf}\"><weight>1.0</weight></queue>\n"
        ));
    }
    if open_parent.is_some_and(|p| !p.is_empty()) {
        xml.push_str("  </queue>\n");
    }
    xml.push_str("</allocations>\n");
    xml
}

/// Nodes `node<i>` of `capability` in racks `/rack<j>` of `per_rack` consecutive nodes.
pub fn cluster(nodes: u32, per_rack: u32, capability: Resource) -> Vec<WorkloadNode> {
    let per_rack = per_rack.max(1);
    let (nw, rw) = (width(nodes), width(nodes.div_ceil(per_rack)));
    (0..nodes)
        .map(|i| WorkloadNode {
            host: format!("node{i:0nw$}"),
            rack: format!("/rack{:0rw$}", i / per_rack),
            capability,
        })
        .collect()
}

/// The scheduler properties of a heartbeat-driven Fair Scheduler that fills a node in one
/// heartbeat: `assignmultiple` on with `dynamic.max.assign` off and `max.assign` -1
/// (unlimited), continuous scheduling and preemption off, and the update period.
pub fn fill_node_properties(update: Duration) -> Vec<(String, String)> {
    [
        ("yarn.scheduler.fair.assignmultiple", "true".to_string()),
        (
            "yarn.scheduler.fair.dynamic.max.assign",
            "false".to_string(),
        ),
        ("yarn.scheduler.fair.max.assign", "-1".to_string()),
        (
            "yarn.scheduler.fair.continuous-scheduling-enabled",
            "false".to_string(),
        ),
        ("yarn.scheduler.fair.preemption", "false".to_string()),
        (
            "yarn.scheduler.fair.update-interval-ms",
            update.as_millis().to_string(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// Seed 003's pressure, every knob visible.
///
/// Choices (the seed does not fix them):
/// * Scheduling is heartbeat-driven (Meituan ran continuous scheduling; Weft's driver has
///   node heartbeats only) with `assignmultiple` on, `dynamic.max.assign` off and
///   `max.assign` -1, so each heartbeat may fill its node: the scheduler, not the heartbeat
///   rate, is what limits allocation speed, as with a continuous-scheduling thread.
/// * AMs are managed, 1 vcore / 4 GiB like the tasks, as SLS's simulated AMs are; they hold
///   under 1% of the cluster, and `queueMaxAMShareDefault` is -1 so they are never refused.
/// * Tasks per app are uniform in 200..=600. The cluster runs about 120 containers per app
///   (1.2M / 10,000), so every app starts with more demand than its share, total demand is
///   about 3.3 times capacity, and apps of up to ~240 tasks finish within the 2-minute run
///   and are replaced (the closed loop), so replacement is exercised.
#[derive(Clone, Debug, PartialEq)]
pub struct MeituanParams {
    /// Nodes.
    pub nodes: u32,
    /// Each node's resources.
    pub node: Resource,
    /// Nodes per rack.
    pub nodes_per_rack: u32,
    /// Leaf queues.
    pub queues: u32,
    /// Parent queues the leaves are spread over.
    pub parents: u32,
    /// Apps running at once.
    pub apps: u32,
    /// AM size (`None` = unmanaged AMs).
    pub am: Option<Resource>,
    /// Task container size.
    pub container: Resource,
    /// Tasks per app, uniform in this inclusive range.
    pub tasks_per_app: (u32, u32),
    /// Each task's run time.
    pub task_duration: Duration,
    /// Node heartbeat period.
    pub heartbeat: Duration,
    /// Fair-share update period.
    pub update: Duration,
    /// Run length.
    pub end: Duration,
    /// Resource pools (0: none). Pool `k` (`pool<k>`, zero-padded) holds the `k`-th block of
    /// consecutive nodes and of parent queues; each parent is named `pool<k>_p<i>`, so the
    /// spec's name-prefix rule binds it (and its leaves) to its pool.
    pub pools: u32,
}

impl MeituanParams {
    /// Full size: 12,000 nodes, 2,000 queues (50 parents x 40 leaves), 10,000 apps.
    pub fn full() -> MeituanParams {
        MeituanParams {
            nodes: 12_000,
            node: Resource::new(400 * 1024, 100),
            nodes_per_rack: 40,
            queues: 2_000,
            parents: 50,
            apps: 10_000,
            am: Some(Resource::new(4096, 1)),
            container: Resource::new(4096, 1),
            tasks_per_app: (200, 600),
            task_duration: Duration::from_secs(40),
            heartbeat: Duration::from_secs(1),
            update: Duration::from_millis(500),
            end: Duration::from_secs(120),
            pools: 0,
        }
    }

    /// The same, split into `pools` resource pools: parents are raised to `pools` when fewer
    /// (every pool gets at least one top-level queue). Refused when there are fewer nodes or
    /// leaf queues than pools.
    pub fn with_pools(&self, pools: u32) -> Result<MeituanParams, PresetError> {
        if pools > self.nodes || pools > self.queues {
            return Err(PresetError::TooManyPools {
                pools,
                nodes: self.nodes,
                queues: self.queues,
            });
        }
        Ok(MeituanParams {
            pools,
            parents: self.parents.max(pools),
            ..self.clone()
        })
    }

    /// Nodes, apps and queues times `scale` (each at least 1); parents shrink so that leaves
    /// per parent stay about the same.
    pub fn scaled(&self, scale: f64) -> MeituanParams {
        let queues = scale_count(self.queues, scale);
        let per_parent = self.queues.div_ceil(self.parents.max(1)).max(1);
        MeituanParams {
            nodes: scale_count(self.nodes, scale),
            apps: scale_count(self.apps, scale),
            queues,
            parents: queues.div_ceil(per_parent),
            ..self.clone()
        }
    }

    /// The workload: nodes, allocation file, properties, and the closed loop of apps spread
    /// round robin over the leaves (app `n` in leaf `n mod queues`, user `u<leaf>`).
    pub fn workload(&self, seed: u64) -> Workload {
        let nodes = cluster(self.nodes, self.nodes_per_rack, self.node);
        let (leaves, allocations_xml) = if self.pools == 0 {
            let leaves = leaf_queues(self.parents, self.queues);
            let xml = allocations_for(&leaves);
            (leaves, xml)
        } else {
            let leaves = pooled_leaf_queues(self.parents, self.queues, self.pools);
            let hosts: Vec<&str> = nodes.iter().map(|n| n.host.as_str()).collect();
            let xml = with_resource_pools(&allocations_for(&leaves), self.pools, &hosts);
            (leaves, xml)
        };
        let users = (0..leaves.len()).map(|i| format!("u{i}")).collect();
        let ms = self.task_duration.as_millis();
        Workload {
            name: "meituan".to_string(),
            nodes,
            allocations_xml: Some(allocations_xml),
            properties: fill_node_properties(self.update),
            resource_types: ResourceTypes::default(),
            heartbeat_interval: self.heartbeat,
            update_interval: self.update,
            end: Some(Time::ZERO + self.end),
            apps: AppSource::ClosedLoop(ClosedLoop {
                concurrent: self.apps,
                queues: leaves,
                users,
                am: self.am,
                container: self.container,
                tasks_per_app: self.tasks_per_app,
                task_duration_ms: (ms, ms),
                priority: 1,
                initial_spread: Duration::from_millis(0),
                seed,
            }),
        }
    }
}

/// A small mixed workload for demos: a trace of MapReduce-like apps of varied sizes.
#[derive(Clone, Debug, PartialEq)]
pub struct SmallParams {
    /// Nodes.
    pub nodes: u32,
    /// Each node's resources.
    pub node: Resource,
    /// Nodes per rack.
    pub nodes_per_rack: u32,
    /// Leaf queues.
    pub queues: u32,
    /// Parent queues.
    pub parents: u32,
    /// Apps in the trace.
    pub apps: u32,
    /// Submissions are spread uniformly over this window.
    pub arrival_window: Duration,
}

impl SmallParams {
    /// 100 nodes of 16 vcores / 64 GiB in racks of 20, 20 queues under 4 parents, 200 apps
    /// arriving over 60 s.
    pub fn full() -> SmallParams {
        SmallParams {
            nodes: 100,
            node: Resource::new(64 * 1024, 16),
            nodes_per_rack: 20,
            queues: 20,
            parents: 4,
            apps: 200,
            arrival_window: Duration::from_secs(60),
        }
    }

    /// Nodes, apps and queues times `scale` (each at least 1).
    pub fn scaled(&self, scale: f64) -> SmallParams {
        let queues = scale_count(self.queues, scale);
        let per_parent = self.queues.div_ceil(self.parents.max(1)).max(1);
        SmallParams {
            nodes: scale_count(self.nodes, scale),
            apps: scale_count(self.apps, scale),
            queues,
            parents: queues.div_ceil(per_parent),
            ..self.clone()
        }
    }

    /// The workload: apps with a map stage (5-50 tasks of 1-4 GiB, 1-2 vcores, 5-30 s) and,
    /// for two apps in three, a reduce stage (1-10 tasks of 2-8 GiB, 1-4 vcores, 10-40 s);
    /// the run ends when every app has finished.
    pub fn workload(&self, seed: u64) -> Workload {
        let leaves = leaf_queues(self.parents, self.queues);
        let mut rng = SplitMix64::new(seed);
        let window = self.arrival_window.as_millis();
        let mut submits: Vec<u64> = (0..self.apps).map(|_| rng.range_u64(0, window)).collect();
        submits.sort_unstable();
        let apps = submits
            .into_iter()
            .enumerate()
            .map(|(n, submit)| small_app(n, submit, &leaves, &mut rng))
            .collect();
        let update = Duration::from_millis(500);
        Workload {
            name: "small".to_string(),
            nodes: cluster(self.nodes, self.nodes_per_rack, self.node),
            allocations_xml: Some(allocations_for(&leaves)),
            properties: fill_node_properties(update),
            resource_types: ResourceTypes::default(),
            heartbeat_interval: Duration::from_secs(1),
            update_interval: update,
            end: None,
            apps: AppSource::Trace(apps),
        }
    }
}

/// Seed 001's picture with preemption on, for comparing the strategies
/// (`weft sim compare-preemption --preset preemption`).
///
/// `queues` leaves of weight 1 under root, all empty at first. At 0 s a big job in the first
/// leaf asks for more than the cluster (`big_tasks` long tasks), so it takes every node. Then,
/// every `arrival_gap`, a job arrives in the next leaf (`small_tasks` shorter tasks, sizes
/// drawn from the seed); each new leaf's fair share is now taken by the big job and comes back
/// only by preemption (or when the big job's tasks end). Fair-share preemption after
/// `fair_timeout` with threshold 1 (both strategies aim at the full share; global's 2.7 rule
/// does in any case), `waitTimeBeforeKill` `wait_before_kill`, the preemption interval and
/// utilization threshold at Hadoop's defaults. The run ends when every job has finished.
#[derive(Clone, Debug, PartialEq)]
pub struct PreemptionParams {
    /// Nodes.
    pub nodes: u32,
    /// Each node's resources.
    pub node: Resource,
    /// Leaf queues (the first holds the big job, each other one job that arrives later).
    pub queues: u32,
    /// Tasks of the big job (all in one stage).
    pub big_tasks: u32,
    /// How long each of its tasks runs.
    pub big_task_duration: Duration,
    /// Tasks of each later job, uniform in this inclusive range.
    pub small_tasks: (u32, u32),
    /// How long each of their tasks runs, uniform in this inclusive range (seconds).
    pub small_task_secs: (u64, u64),
    /// Time between two arrivals (the first arrives one gap after the big job).
    pub arrival_gap: Duration,
    /// Every task's size.
    pub container: Resource,
    /// `fairSharePreemptionTimeout` of every queue.
    pub fair_timeout: Duration,
    /// `yarn.scheduler.fair.waitTimeBeforeKill`.
    pub wait_before_kill: Duration,
}

impl PreemptionParams {
    /// 100 nodes of 16 vcores / 64 GiB, 4 leaves; a big job of 4,000 tasks of 2 minutes
    /// (2.5 times the cluster's 1,600 containers), then three jobs of 300-500 tasks of 20-40 s,
    /// 30 s apart; fair-share timeout 10 s, 5 s from warning to kill.
    pub fn full() -> PreemptionParams {
        PreemptionParams {
            nodes: 100,
            node: Resource::new(64 * 1024, 16),
            queues: 4,
            big_tasks: 4_000,
            big_task_duration: Duration::from_secs(120),
            small_tasks: (300, 500),
            small_task_secs: (20, 40),
            arrival_gap: Duration::from_secs(30),
            container: Resource::new(4096, 1),
            fair_timeout: Duration::from_secs(10),
            wait_before_kill: Duration::from_secs(5),
        }
    }

    /// Nodes and task counts times `scale` (each at least 1), so the pressure stays the same.
    pub fn scaled(&self, scale: f64) -> PreemptionParams {
        PreemptionParams {
            nodes: scale_count(self.nodes, scale),
            big_tasks: scale_count(self.big_tasks, scale),
            small_tasks: (
                scale_count(self.small_tasks.0, scale),
                scale_count(self.small_tasks.1, scale),
            ),
            ..self.clone()
        }
    }

    /// The allocation file: the leaves with weight 1 and the preemption timeout.
    fn allocations(&self, leaves: &[String]) -> String {
        let mut xml = String::from("<?xml version=\"1.0\"?>\n<allocations>\n");
        xml.push_str("  <queueMaxAMShareDefault>-1.0</queueMaxAMShareDefault>\n");
        xml.push_str(&format!(
            "  <defaultFairSharePreemptionTimeout>{}</defaultFairSharePreemptionTimeout>\n",
            self.fair_timeout.as_millis() / 1000
        ));
        xml.push_str(
            "  <defaultFairSharePreemptionThreshold>1.0</defaultFairSharePreemptionThreshold>\n",
        );
        for full in leaves {
            let leaf = full.strip_prefix("root.").unwrap_or(full);
            xml.push_str(&format!(
                "  <queue name=\"{leaf}\"><weight>1.0</weight></queue>\n"
            ));
        }
        xml.push_str("</allocations>\n");
        xml
    }

    /// The workload (see the type's description).
    pub fn workload(&self, seed: u64) -> Workload {
        let queues = self.queues.max(1);
        let leaves: Vec<String> = (0..queues).map(|i| format!("root.q{i}")).collect();
        let mut rng = SplitMix64::new(seed);
        let task = |count: u32, duration: Duration, priority: i32| TaskGroup {
            priority,
            resource: self.container,
            count,
            duration,
            host: None,
            rack: None,
        };
        let mut apps = vec![AppPlan {
            submit: Time::ZERO,
            name: "big".to_string(),
            user: "u0".to_string(),
            queue: Some(leaves[0].clone()),
            am: Some(Resource::new(1024, 1)),
            stages: vec![Stage {
                groups: vec![task(self.big_tasks, self.big_task_duration, 20)],
            }],
        }];
        for (i, leaf) in leaves.iter().enumerate().skip(1) {
            let count =
                rng.range_u64(u64::from(self.small_tasks.0), u64::from(self.small_tasks.1)) as u32;
            let secs = rng.range_u64(self.small_task_secs.0, self.small_task_secs.1);
            apps.push(AppPlan {
                submit: Time::ZERO + Duration::from_millis(self.arrival_gap.as_millis() * i as u64),
                name: format!("job{i}"),
                user: format!("u{i}"),
                queue: Some(leaf.clone()),
                am: Some(Resource::new(1024, 1)),
                stages: vec![Stage {
                    groups: vec![task(count, Duration::from_secs(secs), 20)],
                }],
            });
        }
        let update = Duration::from_millis(500);
        let mut properties = fill_node_properties(update);
        properties.retain(|(k, _)| k != "yarn.scheduler.fair.preemption");
        properties.push(("yarn.scheduler.fair.preemption".into(), "true".into()));
        properties.push((
            "yarn.scheduler.fair.waitTimeBeforeKill".into(),
            self.wait_before_kill.as_millis().to_string(),
        ));
        Workload {
            name: "preemption".to_string(),
            nodes: cluster(self.nodes, 20, self.node),
            allocations_xml: Some(self.allocations(&leaves)),
            properties,
            resource_types: ResourceTypes::default(),
            heartbeat_interval: Duration::from_secs(1),
            update_interval: update,
            end: None,
            apps: AppSource::Trace(apps),
        }
    }
}

fn small_app(n: usize, submit: u64, leaves: &[String], rng: &mut SplitMix64) -> AppPlan {
    let mut group =
        |count: (u64, u64), gib: (u64, u64), vcores: (u64, u64), secs: (u64, u64), priority| {
            TaskGroup {
                priority,
                resource: Resource::new(
                    (rng.range_u64(gib.0, gib.1) * 1024) as i64,
                    rng.range_u64(vcores.0, vcores.1) as i64,
                ),
                count: rng.range_u64(count.0, count.1) as u32,
                duration: Duration::from_secs(rng.range_u64(secs.0, secs.1)),
                host: None,
                rack: None,
            }
        };
    let mut stages = vec![Stage {
        groups: vec![group((5, 50), (1, 4), (1, 2), (5, 30), 20)],
    }];
    if n % 3 != 2 {
        stages.push(Stage {
            groups: vec![group((1, 10), (2, 8), (1, 4), (10, 40), 10)],
        });
    }
    AppPlan {
        submit: Time(submit),
        name: format!("app{n}"),
        user: format!("u{}", n % 7),
        queue: leaves.get(n % leaves.len().max(1)).cloned(),
        am: Some(Resource::new(1024, 1)),
        stages,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_spread_evenly_over_parents() {
        let q = leaf_queues(3, 100);
        assert_eq!(q.len(), 100);
        assert_eq!(q[0], "root.p0.q00");
        assert_eq!(q.iter().filter(|n| n.starts_with("root.p0.")).count(), 34);
        assert_eq!(q.iter().filter(|n| n.starts_with("root.p2.")).count(), 33);
        let full = leaf_queues(50, 2000);
        assert_eq!(full[2000 - 1], "root.p49.q39");
        let mut sorted = full.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted.len(), 2000);
    }

    #[test]
    fn bad_names_and_scales_are_refused() {
        assert!(matches!(
            preset("nope", 1.0, 0),
            Err(PresetError::Unknown { .. })
        ));
        assert_eq!(
            preset("meituan", 0.0, 0).unwrap_err(),
            PresetError::BadScale(0.0)
        );
        assert!(preset("meituan", f64::NAN, 0).is_err());
    }

    #[test]
    fn the_preemption_preset_starts_one_big_job_then_fills_empty_queues_later() {
        let w = preset("preemption", 1.0, 7).expect("known preset");
        let AppSource::Trace(apps) = &w.apps else {
            panic!("a trace");
        };
        assert_eq!(apps.len(), 4);
        assert_eq!(apps[0].submit, Time::ZERO);
        assert_eq!(apps[0].task_count(), 4000);
        let submits: Vec<u64> = apps.iter().map(|a| a.submit.as_millis()).collect();
        assert_eq!(submits, [0, 30_000, 60_000, 90_000]);
        let queues: Vec<&str> = apps.iter().filter_map(|a| a.queue.as_deref()).collect();
        assert_eq!(queues, ["root.q0", "root.q1", "root.q2", "root.q3"]);
        assert!(apps[1..]
            .iter()
            .all(|a| (300..=500).contains(&a.task_count())));
        let on = |k: &str| {
            w.properties
                .iter()
                .rev()
                .find(|(p, _)| p == k)
                .map(|(_, v)| v.as_str())
        };
        assert_eq!(on("yarn.scheduler.fair.preemption"), Some("true"));
        assert_eq!(on("yarn.scheduler.fair.waitTimeBeforeKill"), Some("5000"));
        let xml = w.allocations_xml.as_deref().unwrap_or("");
        assert!(
            xml.contains("<defaultFairSharePreemptionTimeout>10<"),
            "{xml}"
        );
        // Scaled, the pressure stays: the big job still asks 2.5 times the cluster.
        let p = PreemptionParams::full().scaled(0.1);
        assert_eq!((p.nodes, p.big_tasks, p.small_tasks), (10, 400, (30, 50)));
    }

    #[test]
    fn pools_split_nodes_and_parents_in_blocks_bound_by_prefix() {
        let w = preset_with_pools("meituan", 0.01, 0, 4).expect("meituan splits");
        let xml = w.allocations_xml.as_deref().unwrap_or("");
        let (config, warnings) =
            weft_config::alloc_file::parse_allocations(xml, &ResourceTypes::default())
                .expect("the pooled file parses");
        assert!(warnings.is_empty(), "{warnings:?}");
        let pools = config.resource_pools.expect("pools declared");
        let names: Vec<&str> = pools.pools.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["pool0", "pool1", "pool2", "pool3"]);
        // 120 nodes: 30 per pool, in order.
        let counts: Vec<usize> = pools.pools.iter().map(|p| p.hosts.len()).collect();
        assert_eq!(counts, [30, 30, 30, 30]);
        assert_eq!(pools.pool_of_node("node030", 0), Some("pool1"));
        // 20 leaves: parents raised to 4, one per pool; every leaf bound to its parent's pool.
        let AppSource::ClosedLoop(ref lp) = w.apps else {
            panic!("a closed loop");
        };
        assert_eq!(lp.queues.len(), 20);
        for (i, q) in lp.queues.iter().enumerate() {
            let expected = format!("pool{}", i / 5);
            assert_eq!(
                pools.binding(q).map(|b| b.pool()),
                Some(expected.as_str()),
                "{q}"
            );
        }
        assert_eq!(
            preset_with_pools("small", 1.0, 0, 2).unwrap_err(),
            PresetError::PoolsUnsupported {
                name: "small".to_string()
            }
        );
        assert!(matches!(
            preset_with_pools("meituan", 0.0001, 0, 2),
            Err(PresetError::TooManyPools { pools: 2, .. })
        ));
    }

    #[test]
    fn tiny_scales_keep_one_of_everything() {
        let p = MeituanParams::full().scaled(1e-9);
        assert_eq!((p.nodes, p.apps, p.queues, p.parents), (1, 1, 1, 1));
    }
}
