//! Hadoop Scheduler Load Simulator (SLS) inputs: JSON job traces and nodes files
//! (`sls-format.md` §2 and §5), turned into the workload model of [`crate::workload`].
//!
//! Sans-IO like the rest of the crate: every function takes the file's text and its name (for
//! error messages) and returns values.
//!
//! How SLS's simulated ApplicationMasters map onto [`AppPlan`] stages:
//! * `mapreduce` (the default): stage 1 holds the maps, stage 2 the reduces, because SLS's MR
//!   AM asks for reduces only once every map has finished.
//! * `stream`: one stage with every task (SLS's stream AM asks for all its containers at once).
//! * `dag`: one stage with every task. SLS's DAG AM holds each ask back by its
//!   `container.request.delay`; the workload model has no per-ask delay, so the delay is
//!   ignored and all asks go out together (a new `TaskGroup` field would be needed to honour it).
//!
//! AMs are managed (their container is allocated by the scheduler, as in SLS), sized by
//! `am.memory-mb` / `am.vcores` or [`SlsOptions::am_resource`].

mod error;
pub(crate) mod json;
mod nodes;

use std::collections::HashMap;

use weft_types::{Duration, Resource, ResourceTypes, Time};

pub use error::TraceError;
use json::{Ctx, Node, Source};
pub use nodes::{nodes_from_trace, parse_nodes_file, split_host};

use crate::workload::{AppPlan, Stage, TaskGroup};

/// Defaults SLS takes from `sls-runner.xml` when a trace leaves them out.
#[derive(Clone, Debug, PartialEq)]
pub struct SlsOptions {
    /// AM container size (`yarn.sls.am.container.memory` / `.vcores`: 1024 MB, 1 vcore).
    pub am_resource: Resource,
    /// Task container size (`yarn.sls.container.memory` / `.vcores`: 1024 MB, 1 vcore).
    pub container_resource: Resource,
    /// Resource types whose names are read as `am.<name>` and `container.<name>` fields
    /// (memory-mb and vcores always; custom types when registered).
    pub resource_types: ResourceTypes,
}

impl Default for SlsOptions {
    fn default() -> Self {
        SlsOptions {
            am_resource: Resource::new(1024, 1),
            container_resource: Resource::new(1024, 1),
            resource_types: ResourceTypes::default(),
        }
    }
}

/// Default priority of map asks (SLS's MR AM).
pub const MAP_PRIORITY: i32 = 20;
/// Default priority of reduce asks (SLS's MR AM).
pub const REDUCE_PRIORITY: i32 = 10;

/// Parses an SLS JSON trace: a sequence of concatenated job objects (not an array).
///
/// Fields are read as SLS reads them: numbers may be JSON numbers or strings holding them,
/// unknown fields are ignored, `job.count` replicates a job (replicas are named `<id>_<k>`),
/// and a task's duration is `container.duration.ms`, else legacy `duration.ms`, else
/// `container.end.ms - container.start.ms`; it must be positive. Identical tasks of one stage
/// (same priority, size, duration and host) are merged into one [`TaskGroup`].
///
/// Errors name the file, the job (1-based) with the line of the offending field, and the
/// field, e.g. `inputsls.json: job 2 (line 40): job.start.ms: expected a number, found "abc"`.
pub fn parse_sls_trace(
    text: &str,
    file: &str,
    options: &SlsOptions,
) -> Result<Vec<AppPlan>, TraceError> {
    let src = Source::new(text, file);
    let mut apps = Vec::new();
    for (i, item) in src.items()?.iter().enumerate() {
        let ctx = Ctx::new(&src, format!("job {}", i + 1), item);
        parse_job(&ctx, &Node::root(&item.value), i + 1, options, &mut apps)?;
    }
    Ok(apps)
}

/// What kind of simulated AM a job has (`am.type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum AmKind {
    MapReduce,
    Stream,
    Dag,
}

fn parse_job(
    ctx: &Ctx<'_, '_>,
    job: &Node<'_>,
    number: usize,
    options: &SlsOptions,
    out: &mut Vec<AppPlan>,
) -> Result<(), TraceError> {
    if job.value().is_array() {
        return Err(ctx.err(
            job.path(),
            "expected a job object, found a list (an SLS trace is a sequence of objects, not an array)",
        ));
    }
    job.object(ctx)?;
    let required = |key: &str| job.get(key).ok_or_else(|| ctx.missing(job, key));
    let start = required("job.start.ms")?.non_negative(ctx)?;
    let queue = required("job.queue.name")?.text(ctx)?;
    let user = match job.get("job.user") {
        Some(u) => u.text(ctx)?,
        None => "default".to_string(),
    };
    let id = match job.get("job.id") {
        Some(v) => v.text(ctx)?,
        None => format!("job{number}"),
    };
    let count = match job.get("job.count") {
        Some(v) => v.int(ctx)?.max(1),
        None => 1,
    };
    let kind = match job.get_any(&["am.type", "yarn.sls.am.type"]) {
        None => AmKind::MapReduce,
        Some(v) => match v.text(ctx)?.trim().to_ascii_lowercase().as_str() {
            "mapreduce" => AmKind::MapReduce,
            "stream" => AmKind::Stream,
            "dag" => AmKind::Dag,
            other => {
                return Err(ctx.err(
                    v.path(),
                    format!("unknown AM type \"{other}\" (expected mapreduce, stream or dag)"),
                ))
            }
        },
    };
    let am = sized(
        ctx,
        job,
        "am.",
        options.am_resource,
        &options.resource_types,
    )?;
    let stages = parse_tasks(ctx, job, kind, options)?;
    let plan = AppPlan {
        submit: Time(start),
        name: id,
        user,
        queue: Some(queue),
        am: Some(am),
        stages,
    };
    if count == 1 {
        out.push(plan);
    } else {
        for k in 1..=count {
            out.push(AppPlan {
                name: format!("{}_{k}", plan.name),
                ..plan.clone()
            });
        }
    }
    Ok(())
}

/// A resource read from `<prefix><type name>` fields over `default`.
fn sized(
    ctx: &Ctx<'_, '_>,
    obj: &Node<'_>,
    prefix: &str,
    default: Resource,
    types: &ResourceTypes,
) -> Result<Resource, TraceError> {
    let mut r = default;
    for index in 0..types.len() {
        if let Some(v) = obj.get(&format!("{prefix}{}", types.name(index))) {
            let amount = v.non_negative(ctx)?;
            r.set(index, i64::try_from(amount).unwrap_or(i64::MAX));
        }
    }
    Ok(r)
}

/// Key of a [`TaskGroup`]: tasks equal in all of these are merged.
type GroupKey = (i32, Resource, u64, Option<String>);

/// Groups of one stage, in order of first appearance; identical tasks are merged.
#[derive(Default)]
pub(crate) struct StageBuilder {
    pub(crate) groups: Vec<TaskGroup>,
    index: HashMap<GroupKey, usize>,
}

impl StageBuilder {
    /// True when no task was added.
    pub(crate) fn is_empty(&self) -> bool {
        self.groups.is_empty()
    }

    /// Adds `group`, merging it into an equal group (all but the count) if there is one.
    pub(crate) fn add(&mut self, group: TaskGroup) {
        let key = (
            group.priority,
            group.resource,
            group.duration.as_millis(),
            group.host.clone(),
        );
        match self.index.get(&key) {
            Some(&i) => {
                let g = &mut self.groups[i];
                g.count = g.count.saturating_add(group.count);
            }
            None => {
                self.index.insert(key, self.groups.len());
                self.groups.push(group);
            }
        }
    }
}

fn parse_tasks(
    ctx: &Ctx<'_, '_>,
    job: &Node<'_>,
    kind: AmKind,
    options: &SlsOptions,
) -> Result<Vec<Stage>, TraceError> {
    let Some(list) = job.get("job.tasks") else {
        return Err(ctx.missing(job, "job.tasks"));
    };
    let tasks = list.elements(ctx)?;
    if tasks.is_empty() {
        return Err(ctx.err(list.path(), "the job has no tasks (SLS rejects such jobs)"));
    }
    let mut maps = StageBuilder::default();
    let mut reduces = StageBuilder::default();
    for task in &tasks {
        task.object(ctx)?;
        let kind_field = task.get("container.type");
        let task_type = match &kind_field {
            Some(v) => v.text(ctx)?,
            None => "map".to_string(),
        };
        let is_reduce = task_type == "reduce";
        if kind == AmKind::MapReduce && !is_reduce && task_type != "map" {
            let path = kind_field.as_ref().map_or(task.path(), |v| v.path());
            return Err(ctx.err(
                path,
                format!("a mapreduce job's tasks are \"map\" or \"reduce\", found \"{task_type}\""),
            ));
        }
        let group = parse_task(ctx, task, is_reduce, options)?;
        if kind == AmKind::MapReduce && is_reduce {
            reduces.add(group);
        } else {
            maps.add(group);
        }
    }
    Ok([maps, reduces]
        .into_iter()
        .filter(|s| !s.is_empty())
        .map(|s| Stage { groups: s.groups })
        .collect())
}

fn parse_task(
    ctx: &Ctx<'_, '_>,
    task: &Node<'_>,
    is_reduce: bool,
    options: &SlsOptions,
) -> Result<TaskGroup, TraceError> {
    let (rack, host) = match task.get("container.host") {
        Some(h) => {
            let (rack, host) = split_host(&h.text(ctx)?);
            if host.is_empty() {
                return Err(ctx.err(h.path(), "the host name is empty"));
            }
            (Some(rack), Some(host))
        }
        None => (None, None),
    };
    let priority = match task.get("container.priority") {
        Some(p) => {
            let v = p.int(ctx)?;
            i32::try_from(v)
                .map_err(|_| ctx.err(p.path(), format!("{v} is out of range for a priority")))?
        }
        None if is_reduce => REDUCE_PRIORITY,
        None => MAP_PRIORITY,
    };
    let count = match task.get("count") {
        Some(c) => {
            let v = c.int(ctx)?.max(1);
            u32::try_from(v)
                .ok()
                .filter(|&n| n <= crate::limits::MAX_ASK_COUNT)
                .ok_or_else(|| {
                    ctx.err(
                        c.path(),
                        format!(
                            "{v} containers are too many for one task (at most {})",
                            crate::limits::MAX_ASK_COUNT
                        ),
                    )
                })?
        }
        None => 1,
    };
    let resource = sized(
        ctx,
        task,
        "container.",
        options.container_resource,
        &options.resource_types,
    )?;
    Ok(TaskGroup {
        priority,
        resource,
        count,
        duration: Duration::from_millis(bounded_duration(ctx, task)?),
        host,
        rack,
    })
}

/// [`duration`], refused beyond the simulator's longest time.
fn bounded_duration(ctx: &Ctx<'_, '_>, task: &Node<'_>) -> Result<u64, TraceError> {
    let ms = duration(ctx, task)?;
    if ms > crate::limits::MAX_SIM_TIME_MS {
        let field = task
            .get_any(&["container.duration.ms", "duration.ms"])
            .or_else(|| task.get("container.end.ms"));
        let message = format!(
            "a task of {ms} ms is longer than the simulator allows ({})",
            crate::limits::MAX_SIM_TIME_TEXT
        );
        return Err(match &field {
            Some(f) => ctx.err(f.path(), message),
            None => ctx.err(task.path(), message),
        });
    }
    Ok(ms)
}

/// SLS's precedence: explicit duration, legacy duration, then end minus start.
fn duration(ctx: &Ctx<'_, '_>, task: &Node<'_>) -> Result<u64, TraceError> {
    if let Some(d) = task.get_any(&["container.duration.ms", "duration.ms"]) {
        let v = d.int(ctx)?;
        return u64::try_from(v).ok().filter(|&v| v > 0).ok_or_else(|| {
            ctx.err(
                d.path(),
                format!("the duration must be positive, found {v}"),
            )
        });
    }
    match (task.get("container.start.ms"), task.get("container.end.ms")) {
        (Some(s), Some(e)) => {
            let (start, end) = (s.int(ctx)?, e.int(ctx)?);
            u64::try_from(end.saturating_sub(start))
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| {
                    ctx.err(
                        e.path(),
                        format!("the task ends at {end}, not after its start at {start}"),
                    )
                })
        }
        _ => Err(ctx.err(
            task.path(),
            "the task has no duration: give container.duration.ms, or container.start.ms and container.end.ms",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<AppPlan>, TraceError> {
        parse_sls_trace(text, "t.json", &SlsOptions::default())
    }

    #[test]
    fn maps_and_reduces_become_two_stages_with_merged_groups() {
        let text = r#"{"job.start.ms": 5, "job.queue.name": "q", "am.memory-mb": 2048,
          "job.tasks": [
            {"container.host": "/r1/h1", "container.duration.ms": 100, "count": 2},
            {"container.host": "/r1/h1", "duration.ms": 100},
            {"container.type": "reduce", "container.start.ms": 10, "container.end.ms": 30,
             "container.memory-mb": 4096, "container.vcores": 2}
          ]}"#;
        let apps = parse(text).unwrap();
        assert_eq!(apps.len(), 1);
        let a = &apps[0];
        assert_eq!(
            (a.submit, a.user.as_str(), a.name.as_str()),
            (Time(5), "default", "job1")
        );
        assert_eq!(a.am, Some(Resource::new(2048, 1)));
        assert_eq!(a.stages.len(), 2);
        let m = &a.stages[0].groups;
        assert_eq!(m.len(), 1);
        assert_eq!((m[0].count, m[0].priority), (3, MAP_PRIORITY));
        assert_eq!(
            (m[0].host.as_deref(), m[0].rack.as_deref()),
            (Some("h1"), Some("/r1"))
        );
        let r = &a.stages[1].groups[0];
        assert_eq!(
            (r.priority, r.resource, r.duration),
            (REDUCE_PRIORITY, Resource::new(4096, 2), Duration(20))
        );
        assert_eq!(r.host, None);
    }

    #[test]
    fn job_count_replicates_and_stream_jobs_are_one_stage() {
        let text = r#"{"job.start.ms": 0, "job.queue.name": "q", "job.id": "j", "job.count": 3,
           "am.type": "stream",
           "job.tasks": [{"container.type": "reduce", "duration.ms": 5}, {"duration.ms": 5}]}"#;
        let apps = parse(text).unwrap();
        let names: Vec<_> = apps.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["j_1", "j_2", "j_3"]);
        assert_eq!(apps[0].stages.len(), 1);
        assert_eq!(apps[0].stages[0].groups.len(), 2);
    }

    #[test]
    fn dag_jobs_ask_everything_in_one_stage_and_custom_types_are_read() {
        let text = r#"{"job.start.ms": 0, "job.queue.name": "q", "yarn.sls.am.type": "dag",
           "job.tasks": [
             {"container.duration.ms": 5, "container.request.delay": 100, "container.gpu": 2},
             {"container.type": "reduce", "container.duration.ms": 5, "container.request.delay": 0}
           ]}"#;
        let mut options = SlsOptions::default();
        let gpu = options.resource_types.register("gpu").unwrap();
        let apps = parse_sls_trace(text, "d.json", &options).unwrap();
        assert_eq!(apps[0].stages.len(), 1);
        let g = &apps[0].stages[0].groups;
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].resource.get(gpu), 2);
        assert_eq!(g[1].priority, REDUCE_PRIORITY);
    }

    #[test]
    fn a_list_of_jobs_is_refused_with_a_hint() {
        let e = parse("[{\"job.start.ms\": 0}]").unwrap_err();
        assert!(e.to_string().contains("not an array"), "{e}");
        assert_eq!(parse("").unwrap(), Vec::new());
    }

    #[test]
    fn errors_name_job_line_and_field() {
        let text = "{\"job.start.ms\": 0, \"job.queue.name\": \"q\", \"job.tasks\": [{\"duration.ms\": 1}]}\n{\n  \"job.queue.name\": \"q\",\n  \"job.start.ms\": \"abc\"\n}";
        let e = parse(text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: job 2 (line 4): job.start.ms: expected a number, found \"abc\""
        );
        let e = parse("{\"job.start.ms\": 1,\n \"job.tasks\": []}").unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: job 1 (line 1): job.queue.name: missing (it is required)"
        );
        let text = "{\"job.start.ms\": 1, \"job.queue.name\": \"q\", \"job.tasks\": [\n {\"duration.ms\": 1},\n {\"container.start.ms\": 9,\n  \"container.end.ms\": 9}]}";
        let e = parse(text).unwrap_err();
        assert_eq!(
            e.to_string(),
            "t.json: job 1 (line 4): job.tasks[1].container.end.ms: the task ends at 9, not after its start at 9"
        );
        let e = parse("{\"job.start.ms\": 1, \"job.queue.name\": \"q\", \"job.tasks\": [{\"container.type\": \"x\", \"duration.ms\": 1}]}").unwrap_err();
        assert!(e.to_string().contains("job.tasks[0].container.type"), "{e}");
        let e = parse("{\"job.start.ms\": 1, \"job.queue.name\": \"q\", \"am.type\": \"spark\"}")
            .unwrap_err();
        assert!(
            e.to_string().contains("am.type: unknown AM type \"spark\""),
            "{e}"
        );
    }
}
