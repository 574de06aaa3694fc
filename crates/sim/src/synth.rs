//! Hadoop SLS synthetic workload descriptions (`-tracetype SYNTH`, `sls-format.md` §4),
//! sampled into app plans and a topology.
//!
//! The sampling follows the structure of Hadoop's `SynthTraceJobProducer` / `SynthJob`: per
//! job, a workload is picked by `workload_weight`, a submission time from that workload's
//! `time_distribution` (a bucket by weight, then a uniform whole second up to the next
//! bucket's time), and a job class by `class_weight`; jobs are then ordered by submission time
//! and named `<class_name>_<nnnnnn>`; per job and task kind the count, memory and vcores are
//! drawn once, and each task draws its own run time. `{val, std}` without `dist` is
//! log-normal, as in Hadoop, and a zero `std` means a sixth of the mean.
//!
//! Randomness comes from [`SplitMix64`] seeded by `rand_seed` (or [`SynthOptions::seed`]).
//! Hadoop uses `java.util.Random` through commons-math distributions; this reader does not
//! reproduce those streams bit for bit, so the same description and seed give the same
//! workload here every time, but not the jobs Hadoop's SLS would draw.
//!
//! Units: legacy `mtime_*` / `rtime_*` are seconds (as the format documents them); the generic
//! form's `time` is milliseconds. Samples are clamped: counts to >= 0, memory to >= 1024 MB and
//! vcores to >= 1 (Hadoop's `SynthJob` minimums), durations to >= 1 ms; and, as the
//! simulator's bounds (`crate::limits`), counts to at most 1,000,000 tasks per job and kind and
//! durations to at most 30 days.

mod sample;

use weft_types::{Duration, Resource, Time};

use crate::sls::json::{Ctx, Node, Source};
use crate::sls::{StageBuilder, TraceError, MAP_PRIORITY, REDUCE_PRIORITY};
use crate::workload::{AppPlan, SplitMix64, Stage, TaskGroup, WorkloadNode};
use sample::{check_weights, pick, Sample};

/// Choices SLS takes from its configuration rather than from the description.
#[derive(Clone, Debug, PartialEq)]
pub struct SynthOptions {
    /// AM container size (`yarn.sls.am.container.memory` / `.vcores`: 1024 MB, 1 vcore).
    pub am_resource: Resource,
    /// Size of each synthesized node (`yarn.sls.nm.memory.mb` / `.vcores`: 10240 MB, 10).
    pub node_resource: Resource,
    /// Overrides the description's `rand_seed`.
    pub seed: Option<u64>,
    /// Ask for each task on a node picked at random (node-local, relaxable), as SLS does;
    /// `false` asks anywhere.
    pub random_hosts: bool,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            am_resource: Resource::new(1024, 1),
            node_resource: Resource::new(10240, 10),
            seed: None,
            random_hosts: true,
        }
    }
}

/// Minimum memory of a synthesized container (Hadoop's `SynthJob.MIN_MEMORY`).
const MIN_MEMORY_MB: f64 = 1024.0;

/// Parses a SYNTH description and samples it: the jobs ordered by submission time, and the
/// `num_nodes` nodes in racks of `nodes_per_rack` named as SLS names them (`node<i>` in rack
/// `/rack<i mod racks>`). Without `num_nodes` the node list is empty and the caller must supply
/// a nodes file (tasks then ask anywhere).
pub fn parse_synth(
    text: &str,
    file: &str,
    options: &SynthOptions,
) -> Result<(Vec<AppPlan>, Vec<WorkloadNode>), TraceError> {
    let src = Source::new(text, file);
    let items = src.items()?;
    let [item] = items.as_slice() else {
        return Err(TraceError::file(
            file,
            format!(
                "a SYNTH description is one JSON object, found {} values",
                items.len()
            ),
        ));
    };
    let ctx = Ctx::whole(&src, item);
    let trace = read_trace(&ctx, &Node::root(&item.value))?;
    let nodes = synth_nodes(trace.num_nodes, trace.nodes_per_rack, options.node_resource);
    let seed = options.seed.unwrap_or(trace.seed);
    Ok((generate(&trace, seed, &nodes, options), nodes))
}

/// The nodes SLS synthesizes: `racks = max(1, nodes / nodes_per_rack)`, node `i` in rack
/// `i mod racks`.
fn synth_nodes(num_nodes: u32, nodes_per_rack: u32, capability: Resource) -> Vec<WorkloadNode> {
    let racks = (num_nodes / nodes_per_rack.max(1)).clamp(1, num_nodes.max(1));
    (0..num_nodes)
        .map(|i| WorkloadNode {
            host: format!("node{i}"),
            rack: format!("/rack{}", i % racks),
            capability,
        })
        .collect()
}

struct Trace {
    num_nodes: u32,
    nodes_per_rack: u32,
    num_jobs: u32,
    seed: u64,
    workloads: Vec<WorkloadDef>,
}

struct WorkloadDef {
    weight: f64,
    queue: String,
    classes: Vec<ClassDef>,
    /// (start second, weight) buckets.
    times: Vec<(u64, f64)>,
}

struct ClassDef {
    name: String,
    user: String,
    weight: f64,
    mapreduce: bool,
    tasks: Vec<TaskDef>,
}

struct TaskDef {
    reduce: bool,
    priority: i32,
    count: Sample,
    /// Run time draws are multiplied by this to get milliseconds.
    time_scale: f64,
    time: Sample,
    memory: Sample,
    vcores: Sample,
}

fn read_trace(ctx: &Ctx<'_, '_>, root: &Node<'_>) -> Result<Trace, TraceError> {
    root.object(ctx)?;
    let count = |key: &str, default: u32| -> Result<u32, TraceError> {
        match root.get(key) {
            None => Ok(default),
            Some(v) => {
                let n = v.non_negative(ctx)?;
                u32::try_from(n).map_err(|_| ctx.err(v.path(), format!("{n} is too large")))
            }
        }
    };
    let num_jobs = match root.get("num_jobs") {
        Some(_) => count("num_jobs", 0)?,
        None => return Err(ctx.missing(root, "num_jobs")),
    };
    let seed = match root.get("rand_seed") {
        // Java's seed is a signed long; keep its bits.
        Some(v) => v.int(ctx)? as u64,
        None => 0,
    };
    let Some(list) = root.get("workloads") else {
        return Err(ctx.missing(root, "workloads"));
    };
    let workloads = list
        .elements(ctx)?
        .iter()
        .map(|w| read_workload(ctx, w))
        .collect::<Result<Vec<_>, _>>()?;
    let weights: Vec<f64> = workloads.iter().map(|w| w.weight).collect();
    if workloads.is_empty() {
        return Err(ctx.err(list.path(), "no workloads"));
    }
    check_weights(ctx, list.path(), &weights)?;
    Ok(Trace {
        num_nodes: count("num_nodes", 0)?,
        nodes_per_rack: count("nodes_per_rack", 1)?,
        num_jobs,
        seed,
        workloads,
    })
}

fn read_workload(ctx: &Ctx<'_, '_>, w: &Node<'_>) -> Result<WorkloadDef, TraceError> {
    w.object(ctx)?;
    let weight = match w.get("workload_weight") {
        Some(v) => v.float(ctx)?,
        None => return Err(ctx.missing(w, "workload_weight")),
    };
    let queue = match w.get("queue_name") {
        Some(v) => v.text(ctx)?,
        None => return Err(ctx.missing(w, "queue_name")),
    };
    let Some(class_list) = w.get("job_classes") else {
        return Err(ctx.missing(w, "job_classes"));
    };
    let classes = class_list
        .elements(ctx)?
        .iter()
        .map(|c| read_class(ctx, c))
        .collect::<Result<Vec<_>, _>>()?;
    if classes.is_empty() {
        return Err(ctx.err(class_list.path(), "no job classes"));
    }
    let class_weights: Vec<f64> = classes.iter().map(|c| c.weight).collect();
    check_weights(ctx, class_list.path(), &class_weights)?;
    let Some(time_list) = w.get("time_distribution") else {
        return Err(ctx.missing(w, "time_distribution"));
    };
    let mut times = Vec::new();
    for t in time_list.elements(ctx)? {
        t.object(ctx)?;
        let time = t.get("time").ok_or_else(|| ctx.missing(&t, "time"))?;
        let weight = t.get("weight").ok_or_else(|| ctx.missing(&t, "weight"))?;
        times.push((time.non_negative(ctx)?, weight.float(ctx)?));
    }
    let time_weights: Vec<f64> = times.iter().map(|t| t.1).collect();
    check_weights(ctx, time_list.path(), &time_weights)?;
    Ok(WorkloadDef {
        weight,
        queue,
        classes,
        times,
    })
}

fn read_class(ctx: &Ctx<'_, '_>, c: &Node<'_>) -> Result<ClassDef, TraceError> {
    c.object(ctx)?;
    let text_or = |key: &str, default: &str| -> Result<String, TraceError> {
        c.get(key).map_or(Ok(default.to_string()), |v| v.text(ctx))
    };
    let weight = match c.get("class_weight") {
        Some(v) => v.float(ctx)?,
        None => return Err(ctx.missing(c, "class_weight")),
    };
    let am_type = text_or("type", "mapreduce")?.to_ascii_lowercase();
    let tasks = match c.get("tasks") {
        Some(list) => list
            .elements(ctx)?
            .iter()
            .map(|t| read_task(ctx, t))
            .collect::<Result<Vec<_>, _>>()?,
        None => legacy_tasks(ctx, c)?,
    };
    Ok(ClassDef {
        name: text_or("class_name", "class")?,
        user: text_or("user_name", "default")?,
        weight,
        mapreduce: am_type == "mapreduce",
        tasks,
    })
}

/// The generic form: `{type, priority, count, time (ms), max_memory, max_vcores}`.
fn read_task(ctx: &Ctx<'_, '_>, t: &Node<'_>) -> Result<TaskDef, TraceError> {
    t.object(ctx)?;
    let task_type = match t.get("type") {
        Some(v) => v.text(ctx)?,
        None => "map".to_string(),
    };
    let reduce = task_type == "reduce";
    let priority = match t.get("priority") {
        Some(p) => {
            let v = p.int(ctx)?;
            i32::try_from(v).map_err(|_| ctx.err(p.path(), format!("{v} is out of range")))?
        }
        None if reduce => REDUCE_PRIORITY,
        None => MAP_PRIORITY,
    };
    let sample = |key: &str, default: f64| -> Result<Sample, TraceError> {
        t.get(key)
            .map_or(Ok(Sample::Const(default)), |v| Sample::parse(ctx, &v))
    };
    Ok(TaskDef {
        reduce,
        priority,
        count: sample("count", 1.0)?,
        time_scale: 1.0,
        time: match t.get("time") {
            Some(v) => Sample::parse(ctx, &v)?,
            None => return Err(ctx.missing(t, "time")),
        },
        memory: sample("max_memory", MIN_MEMORY_MB)?,
        vcores: sample("max_vcores", 1.0)?,
    })
}

/// The legacy flat form: `mtasks_avg/stddev`, `mtime_avg/stddev` (s),
/// `map_max_memory_avg/stddev`, ... and the same for reduces. As in Hadoop, each pair is a
/// log-normal distribution and an absent field reads as 0.
fn legacy_tasks(ctx: &Ctx<'_, '_>, c: &Node<'_>) -> Result<Vec<TaskDef>, TraceError> {
    let num =
        |key: &str| -> Result<f64, TraceError> { c.get(key).map_or(Ok(0.0), |v| v.float(ctx)) };
    let dist = |avg: &str, std: &str| -> Result<Sample, TraceError> {
        Ok(Sample::distribution(num(avg)?, num(std)?, true))
    };
    let mut tasks = Vec::new();
    for (reduce, tasks_key, time_key, kind, priority) in [
        (false, "mtasks", "mtime", "map", MAP_PRIORITY),
        (true, "rtasks", "rtime", "reduce", REDUCE_PRIORITY),
    ] {
        tasks.push(TaskDef {
            reduce,
            priority,
            count: dist(&format!("{tasks_key}_avg"), &format!("{tasks_key}_stddev"))?,
            time_scale: 1000.0,
            time: dist(&format!("{time_key}_avg"), &format!("{time_key}_stddev"))?,
            memory: dist(
                &format!("{kind}_max_memory_avg"),
                &format!("{kind}_max_memory_stddev"),
            )?,
            vcores: dist(
                &format!("{kind}_max_vcores_avg"),
                &format!("{kind}_max_vcores_stddev"),
            )?,
        });
    }
    Ok(tasks)
}

/// Rounds a draw to a whole number at least `min` (NaN and negatives become `min`).
fn whole(x: f64, min: f64) -> f64 {
    let r = x.round();
    if r.is_nan() || r < min {
        min
    } else {
        r
    }
}

fn generate(
    trace: &Trace,
    seed: u64,
    nodes: &[WorkloadNode],
    options: &SynthOptions,
) -> Vec<AppPlan> {
    let mut rng = SplitMix64::new(seed);
    // Hosts get their own stream so that turning placement off leaves the jobs unchanged.
    let mut host_rng = SplitMix64::new(seed ^ 0xA076_1D64_78BD_642F);
    let workload_weights: Vec<f64> = trace.workloads.iter().map(|w| w.weight).collect();
    let mut stories: Vec<(u64, &WorkloadDef, &ClassDef)> = (0..trace.num_jobs)
        .map(|_| {
            let w = &trace.workloads[pick(&workload_weights, &mut rng)];
            let submit_ms = submission_second(w, &mut rng).saturating_mul(1000);
            let weights: Vec<f64> = w.classes.iter().map(|c| c.weight).collect();
            (submit_ms, w, &w.classes[pick(&weights, &mut rng)])
        })
        .collect();
    stories.sort_by_key(|s| s.0);
    stories
        .into_iter()
        .enumerate()
        .map(|(i, (submit_ms, w, class))| {
            let mut stages = [StageBuilder::default(), StageBuilder::default()];
            for task in &class.tasks {
                let count = whole(task.count.draw(&mut rng), 0.0)
                    .min(f64::from(crate::limits::MAX_ASK_COUNT))
                    as u64;
                let memory = whole(task.memory.draw(&mut rng), MIN_MEMORY_MB) as i64;
                let vcores = whole(task.vcores.draw(&mut rng), 1.0) as i64;
                let stage = usize::from(class.mapreduce && task.reduce);
                for _ in 0..count {
                    let ms = whole(task.time.draw(&mut rng) * task.time_scale, 1.0)
                        .min(crate::limits::MAX_SIM_TIME_MS as f64)
                        as u64;
                    let node = (options.random_hosts && !nodes.is_empty()).then(|| {
                        let last = nodes.len() as u64 - 1;
                        &nodes[host_rng.range_u64(0, last) as usize]
                    });
                    stages[stage].add(TaskGroup {
                        priority: task.priority,
                        resource: Resource::new(memory, vcores),
                        count: 1,
                        duration: Duration::from_millis(ms),
                        host: node.map(|n| n.host.clone()),
                        rack: node.map(|n| n.rack.clone()),
                    });
                }
            }
            AppPlan {
                submit: Time(submit_ms),
                name: format!("{}_{i:06}", class.name),
                user: class.user.clone(),
                queue: Some(w.queue.clone()),
                am: Some(options.am_resource),
                stages: stages
                    .into_iter()
                    .filter(|s| !s.is_empty())
                    .map(|s| Stage { groups: s.groups })
                    .collect(),
            }
        })
        .collect()
}

/// A bucket of the time distribution by weight, then a uniform whole second in
/// `[start, next bucket's start)` (the bucket's start when it is the last or not earlier).
fn submission_second(w: &WorkloadDef, rng: &mut SplitMix64) -> u64 {
    let weights: Vec<f64> = w.times.iter().map(|t| t.1).collect();
    let i = pick(&weights, rng);
    let start = w.times[i].0;
    let end = w.times.get(i + 1).map_or(start, |t| t.0);
    if end > start {
        start + rng.range_u64(0, end - start - 1)
    } else {
        start
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GENERIC: &str = r#"{
      "num_nodes": 6, "nodes_per_rack": 2, "num_jobs": 4, "rand_seed": 7,
      "workloads": [{
        "workload_name": "w", "workload_weight": 1, "queue_name": "q",
        "time_distribution": [{"time": 10, "weight": 1}, {"time": 20, "weight": 0}],
        "job_classes": [{
          "class_name": "c", "class_weight": 1, "type": "mapreduce",
          "tasks": [
            {"type": "map", "priority": 5, "count": {"val": 3}, "time": {"val": 1500},
             "max_memory": {"val": 2048}, "max_vcores": {"val": 2}},
            {"type": "reduce", "count": {"val": 1}, "time": {"val": 100, "std": 10, "dist": "NORM"},
             "max_memory": {"val": 10}}
          ]}]}]}"#;

    #[test]
    fn generic_tasks_become_stages_of_sampled_containers() {
        let opts = SynthOptions {
            random_hosts: false,
            ..SynthOptions::default()
        };
        let (apps, nodes) = parse_synth(GENERIC, "g.json", &opts).unwrap();
        assert_eq!(nodes.len(), 6);
        assert_eq!(nodes[3].host, "node3");
        assert_eq!(nodes[3].rack, "/rack0");
        assert_eq!(apps.len(), 4);
        for (i, a) in apps.iter().enumerate() {
            assert_eq!(a.name, format!("c_{i:06}"));
            assert!((10_000..20_000).contains(&a.submit.0), "{:?}", a.submit);
            assert_eq!(a.submit.0 % 1000, 0);
            assert_eq!(a.stages.len(), 2);
            let m = &a.stages[0].groups;
            assert_eq!(m.len(), 1);
            assert_eq!((m[0].count, m[0].priority), (3, 5));
            assert_eq!(m[0].resource, Resource::new(2048, 2));
            assert_eq!(m[0].duration, Duration(1500));
            let r = &a.stages[1].groups[0];
            // Memory below Hadoop's 1024 MB minimum is raised to it.
            assert_eq!(
                (r.priority, r.resource),
                (REDUCE_PRIORITY, Resource::new(1024, 1))
            );
        }
        assert!(apps.windows(2).all(|w| w[0].submit <= w[1].submit));
    }

    #[test]
    fn a_seed_override_changes_the_draws_and_the_same_seed_repeats_them() {
        let opts = |seed| SynthOptions {
            seed: Some(seed),
            ..SynthOptions::default()
        };
        let a = parse_synth(GENERIC, "g.json", &opts(1)).unwrap();
        let b = parse_synth(GENERIC, "g.json", &opts(1)).unwrap();
        assert_eq!(a.0, b.0);
        let c = parse_synth(GENERIC, "g.json", &opts(2)).unwrap();
        assert_ne!(a.0, c.0);
    }

    #[test]
    fn errors_point_at_the_field() {
        let text = "{\"num_jobs\": 1,\n \"workloads\": [{\"workload_weight\": \"x\"}]}";
        let e = parse_synth(text, "s.json", &SynthOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json:2: workloads[0].workload_weight: expected a number, found \"x\""
        );
        let e = parse_synth("{\"workloads\": []}", "s.json", &SynthOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "s.json:1: num_jobs: missing (it is required)"
        );
    }
}
