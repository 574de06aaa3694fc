//! `weft sim run --preset|--sls|--synth ...` and `weft sim bench`: production-scale runs of
//! the real scheduler, with CPS, validSchedule, fairness and an optional HTML report.

use crate::clock::WallClock;
use anyhow::{bail, Context};
use clap::{Args, ValueEnum};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use weft_sched::{SchedulerKind, WalkMode};
use weft_sim::presets::preset_with_pools;
use weft_sim::progress::Progress;
use weft_sim::report::render_report;
use weft_sim::scale::metrics::ScaleReport;
use weft_sim::scale::present::{comparison_rows, report_input, summary_rows};
use weft_sim::scale::{run_scale, workload_config_for, ScaleOptions};
use weft_sim::sls::{nodes_from_trace, parse_nodes_file, parse_sls_trace, SlsOptions};
use weft_sim::synth::{parse_synth, SynthOptions};
use weft_sim::workload::{AppSource, Workload};
use weft_sim::{parse_duration, CpuClock};
use weft_types::{Resource, Time};

/// Where a scale run's workload comes from (one of them).
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct WorkloadArgs {
    /// A Hadoop SLS JSON trace.
    #[arg(long, value_name = "TRACE")]
    pub(crate) sls: Option<PathBuf>,
    /// A Hadoop SLS synthetic workload description (SYNTH JSON).
    #[arg(long, value_name = "SYNTH")]
    pub(crate) synth: Option<PathBuf>,
    /// A built-in workload: meituan (seed 003's pressure), small, or preemption (seed 001's
    /// big job, then jobs in empty queues; preemption on).
    #[arg(long, value_name = "NAME")]
    pub(crate) preset: Option<String>,
    /// Shrink the preset's nodes, apps and queues by this factor.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) scale: f64,
    /// Split the preset's nodes and top-level queues into this many resource pools
    /// (meituan only; 0 = no pools).
    #[arg(long, default_value_t = 0)]
    pub(crate) pools: u32,
    /// An SLS nodes file (topology and node sizes) for --sls or --synth.
    #[arg(long, value_name = "NODES.json")]
    pub(crate) nodes: Option<PathBuf>,
    /// A fair-scheduler.xml for --sls or --synth (default: an empty allocation file).
    #[arg(long, value_name = "FILE")]
    pub(crate) allocations: Option<PathBuf>,
    /// Seed of the generator (presets, SYNTH).
    #[arg(long)]
    pub(crate) seed: Option<u64>,
    /// Stop at this virtual time (e.g. 30s, 2m) instead of the workload's end.
    #[arg(long, value_name = "DURATION")]
    pub(crate) end: Option<String>,
    /// Recompute aggregates and orders from scratch this often, in virtual time (e.g. 10s).
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) verify_every: String,
    /// The scheduler that runs the workload: fair (the allocation file as is) or capacity (the
    /// equivalent capacity-scheduler.xml: the same tree, capacities from the weights).
    #[arg(long, value_enum, default_value_t = ScaleScheduler::Fair)]
    pub(crate) scheduler: ScaleScheduler,
    /// Set a yarn-site property for the run, over the workload's own (repeatable), e.g.
    /// `--property yarn.scheduler.fair.preemption=true`.
    #[arg(long = "property", value_name = "NAME=VALUE")]
    pub(crate) properties: Vec<String>,
}

/// The schedulers a scale run can use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum ScaleScheduler {
    /// Hadoop's Fair Scheduler.
    #[default]
    Fair,
    /// Hadoop's Capacity Scheduler.
    Capacity,
}

impl ScaleScheduler {
    pub(crate) fn kind(self) -> SchedulerKind {
        match self {
            ScaleScheduler::Fair => SchedulerKind::Fair,
            ScaleScheduler::Capacity => SchedulerKind::Capacity,
        }
    }
}

impl WorkloadArgs {
    pub(crate) fn is_given(&self) -> bool {
        self.sls.is_some() || self.synth.is_some() || self.preset.is_some()
    }
}

/// Output options of a scale run.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct OutputArgs {
    /// Print one JSON summary object instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
    /// Write a self-contained HTML report into this directory.
    #[arg(long, value_name = "DIR")]
    pub(crate) report: Option<PathBuf>,
}

/// Which walk the scheduler uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Default)]
pub(crate) enum Algorithm {
    /// The incrementally maintained candidate orders (production).
    #[default]
    Fast,
    /// The textbook walk: sort every level, recompute usage.
    Reference,
    /// Both, one after the other on the same workload; the reference leg is limited to
    /// --reference-end of virtual time and the fast path is also measured over that window.
    Both,
}

/// `weft sim bench` flags.
#[derive(Args, Clone, Debug)]
pub(crate) struct BenchArgs {
    /// The workload (default: --preset meituan).
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Fast path, reference walk, or both for a ratio.
    #[arg(long, value_enum, default_value_t = Algorithm::Fast)]
    pub(crate) algorithm: Algorithm,
    /// Virtual time the reference leg of --algorithm both simulates.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub(crate) reference_end: String,
    /// Print one JSON summary object.
    #[arg(long)]
    pub(crate) json: bool,
}

/// `weft sim compare-preemption` flags.
#[derive(Args, Clone, Debug)]
pub(crate) struct CompareArgs {
    /// The workload (default: --preset preemption).
    #[command(flatten)]
    pub(crate) workload: WorkloadArgs,
    /// Print one JSON object (each strategy's full report) instead of the table.
    #[arg(long)]
    pub(crate) json: bool,
}

/// The strategies `compare-preemption` runs, in column order.
const STRATEGIES: [&str; 2] = ["targeted", "global"];

/// Sets a yarn-site property of the workload, replacing any value it had.
fn set_property(w: &mut Workload, name: &str, value: &str) {
    w.properties.retain(|(k, _)| k != name);
    w.properties.push((name.to_string(), value.to_string()));
}

/// `weft sim compare-preemption`: the same workload once per preemption strategy, with
/// preemption on, and their preemption figures side by side.
pub(crate) fn compare_preemption(args: &CompareArgs) -> anyhow::Result<()> {
    let mut workload = args.workload.clone();
    if !workload.is_given() {
        workload.preset = Some("preemption".to_string());
    }
    if workload.scheduler != ScaleScheduler::Fair {
        bail!("compare-preemption compares the Fair Scheduler's preemption strategies: --scheduler fair only");
    }
    let (w, allocations_name) = load_workload(&workload)?;
    let mut runs = Vec::new();
    for strategy in STRATEGIES {
        let mut leg = w.clone();
        set_property(&mut leg, "yarn.scheduler.fair.preemption", "true");
        set_property(
            &mut leg,
            "weft.scheduler.fair.preemption.strategy",
            strategy,
        );
        let m = measure(
            &leg,
            &allocations_name,
            SchedulerKind::Fair,
            WalkMode::Fast,
            &workload.verify_every,
            None,
            strategy,
        )?;
        if m.report.drift > 0 {
            bail!(
                "{strategy}: verification found {} drifts, e.g. {:?}",
                m.report.drift,
                m.report.drift_examples
            );
        }
        runs.push((strategy, m));
    }
    if args.json {
        let mut by_strategy = serde_json::Map::new();
        for (strategy, m) in &runs {
            by_strategy.insert(strategy.to_string(), summary_json(m, None)?);
        }
        println!(
            "{}",
            serde_json::json!({ "workload": w.name, "strategies": by_strategy })
        );
        return Ok(());
    }
    println!("workload: {}", w.name);
    let reports: Vec<(&str, &ScaleReport)> = runs.iter().map(|(s, m)| (*s, &m.report)).collect();
    print_columns(&comparison_rows(&reports));
    Ok(())
}

/// Rows of a label and one value per column, aligned.
fn print_columns(rows: &[(String, Vec<String>)]) {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let columns = rows.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let col_width: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .filter_map(|(_, v)| v.get(i).map(String::len))
                .max()
                .unwrap_or(0)
        })
        .collect();
    for (k, values) in rows {
        let mut line = format!("{k:<width$}");
        for (v, w) in values.iter().zip(&col_width) {
            line.push_str(&format!("  {v:>w$}"));
        }
        println!("{}", line.trim_end());
    }
}

/// Builds the workload the flags describe, and the name of its allocation text.
pub(crate) fn load_workload(args: &WorkloadArgs) -> anyhow::Result<(Workload, String)> {
    let sources = [
        args.sls.is_some(),
        args.synth.is_some(),
        args.preset.is_some(),
    ];
    if sources.iter().filter(|s| **s).count() != 1 {
        bail!("give exactly one of --sls TRACE, --synth SYNTH or --preset NAME");
    }
    if args.pools > 0 && args.scheduler != ScaleScheduler::Fair {
        bail!("--pools goes with --scheduler fair (resource pools are a Fair Scheduler feature)");
    }
    if let Some(name) = &args.preset {
        if args.nodes.is_some() || args.allocations.is_some() {
            bail!("--nodes and --allocations go with --sls or --synth, not --preset");
        }
        let mut w = preset_with_pools(name, args.scale, args.seed.unwrap_or(0), args.pools)?;
        apply_end(&mut w, args)?;
        apply_properties(&mut w, args)?;
        return Ok((w, format!("the {name} preset's allocation file")));
    }
    if args.pools > 0 {
        bail!("--pools goes with --preset meituan");
    }
    let default_node = Resource::new(10240, 10);
    let (plans, mut nodes, name) = if let Some(path) = &args.sls {
        let text = read(path)?;
        let shown = path.display().to_string();
        let plans = parse_sls_trace(&text, &shown, &SlsOptions::default())?;
        (plans, Vec::new(), shown)
    } else if let Some(path) = &args.synth {
        let text = read(path)?;
        let shown = path.display().to_string();
        let options = SynthOptions {
            seed: args.seed,
            ..SynthOptions::default()
        };
        let (plans, nodes) = parse_synth(&text, &shown, &options)?;
        (plans, nodes, shown)
    } else {
        bail!("no workload given");
    };
    if let Some(path) = &args.nodes {
        let text = read(path)?;
        nodes = parse_nodes_file(&text, &path.display().to_string(), default_node)?;
    }
    if nodes.is_empty() {
        nodes = nodes_from_trace(&plans, default_node);
    }
    let allocations_xml = match &args.allocations {
        Some(path) => Some(read(path)?),
        None => None,
    };
    let allocations_name = args.allocations.as_ref().map_or_else(
        || "the empty allocation file".to_string(),
        |p| p.display().to_string(),
    );
    let mut w = Workload {
        name: Path::new(&name)
            .file_name()
            .map_or_else(|| name.clone(), |f| f.to_string_lossy().into_owned()),
        nodes,
        allocations_xml,
        properties: Vec::new(),
        resource_types: weft_types::ResourceTypes::default(),
        heartbeat_interval: weft_types::Duration::from_millis(1000),
        update_interval: weft_types::Duration::from_millis(500),
        end: None,
        apps: AppSource::Trace(plans),
    };
    apply_end(&mut w, args)?;
    apply_properties(&mut w, args)?;
    Ok((w, allocations_name))
}

/// The `--property NAME=VALUE` flags, each replacing the workload's own value. The values are
/// checked with the workload's other properties when the scheduler is built.
fn apply_properties(w: &mut Workload, args: &WorkloadArgs) -> anyhow::Result<()> {
    for given in &args.properties {
        let Some((name, value)) = given.split_once('=') else {
            bail!(
                "--property {given}: expected NAME=VALUE, e.g. yarn.scheduler.fair.preemption=true"
            );
        };
        let name = name.trim();
        if name.is_empty() {
            bail!("--property {given}: the property name is empty");
        }
        set_property(w, name, value.trim());
    }
    Ok(())
}

fn apply_end(w: &mut Workload, args: &WorkloadArgs) -> anyhow::Result<()> {
    if let Some(end) = &args.end {
        let d = parse_duration(end).map_err(|e| anyhow::anyhow!("--end: {e}"))?;
        w.end = Some(Time::ZERO + d);
    }
    Ok(())
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// One measured run: the report, and the wall time of the whole run (simulator included).
pub(crate) struct Measured {
    pub(crate) report: ScaleReport,
    /// The scheduler that ran.
    pub(crate) scheduler: SchedulerKind,
    pub(crate) wall_seconds: f64,
}

/// Runs `workload` once with `walk`, showing progress on a terminal.
pub(crate) fn measure(
    workload: &Workload,
    allocations_name: &str,
    scheduler: SchedulerKind,
    walk: WalkMode,
    verify_every: &str,
    end_override: Option<Time>,
    label: &str,
) -> anyhow::Result<Measured> {
    let prepared = workload_config_for(workload, allocations_name, scheduler)?;
    for w in &prepared.warnings {
        eprintln!("warning: {w}");
    }
    let (workload, config) = (&prepared.workload, prepared.config);
    let verify =
        parse_duration(verify_every).map_err(|e| anyhow::anyhow!("--verify-every: {e}"))?;
    let options = ScaleOptions {
        walk,
        verify_every: (verify.as_millis() > 0).then_some(verify),
        end_override,
        ..ScaleOptions::default()
    };
    let end = end_override.or(workload.end).map_or(0, Time::as_millis);
    let mut bar = Progress::new(end, std::io::stderr().is_terminal() && end > 0);
    let mut wall = WallClock::start();
    let started = wall.now_nanos();
    let mut scheduler_clock = WallClock::start();
    let report = run_scale(
        workload,
        config,
        &mut scheduler_clock,
        &options,
        &mut |now, _| {
            if let Some(line) = bar.update(now.as_millis(), label) {
                eprint!("{line}");
            }
        },
    )?;
    if let Some(line) = bar.finish() {
        eprint!("{line}");
    }
    let wall_seconds = (wall.now_nanos() - started) as f64 / 1e9;
    Ok(Measured {
        report,
        scheduler,
        wall_seconds,
    })
}

/// `weft sim run` on a trace or preset.
pub(crate) fn run(
    workload: &WorkloadArgs,
    output: &OutputArgs,
    walk: WalkMode,
) -> anyhow::Result<()> {
    let (w, allocations_name) = load_workload(workload)?;
    let m = measure(
        &w,
        &allocations_name,
        workload.scheduler.kind(),
        walk,
        &workload.verify_every,
        None,
        "simulating",
    )?;
    let extra = extra_rows(&m);
    if output.json {
        println!("{}", summary_json(&m, None)?);
    } else {
        print_rows(
            &summary_rows(&m.report)
                .into_iter()
                .chain(extra.clone())
                .collect::<Vec<_>>(),
        );
    }
    if let Some(dir) = &output.report {
        let title = format!("weft sim: {}", w.name);
        write_report(dir, &report_input(&m.report, &title, &extra))?;
        if !output.json {
            println!("report: {}", dir.join("index.html").display());
        }
    }
    if m.report.drift > 0 {
        bail!(
            "verification found {} drifts, e.g. {:?}",
            m.report.drift,
            m.report.drift_examples
        );
    }
    Ok(())
}

/// `weft sim bench`.
pub(crate) fn bench(args: &BenchArgs) -> anyhow::Result<()> {
    let mut workload = args.workload.clone();
    if !workload.is_given() {
        workload.preset = Some("meituan".to_string());
    }
    let (w, allocations_name) = load_workload(&workload)?;
    let verify = &workload.verify_every;
    let result = match args.algorithm {
        Algorithm::Fast => {
            let m = measure(
                &w,
                &allocations_name,
                workload.scheduler.kind(),
                WalkMode::Fast,
                verify,
                None,
                "fast path",
            )?;
            summary_json(&m, None)?
        }
        Algorithm::Reference => {
            let m = measure(
                &w,
                &allocations_name,
                workload.scheduler.kind(),
                WalkMode::Reference,
                verify,
                None,
                "reference",
            )?;
            summary_json(&m, None)?
        }
        Algorithm::Both => {
            let window = parse_duration(&args.reference_end)
                .map_err(|e| anyhow::anyhow!("--reference-end: {e}"))?;
            let end = Some(Time::ZERO + window);
            let fast = measure(
                &w,
                &allocations_name,
                workload.scheduler.kind(),
                WalkMode::Fast,
                verify,
                None,
                "fast path",
            )?;
            let fast_window = measure(
                &w,
                &allocations_name,
                workload.scheduler.kind(),
                WalkMode::Fast,
                verify,
                end,
                "fast, window",
            )?;
            let reference = measure(
                &w,
                &allocations_name,
                workload.scheduler.kind(),
                WalkMode::Reference,
                verify,
                end,
                "reference",
            )?;
            if fast_window.report.allocations != reference.report.allocations {
                bail!(
                    "the fast path and the reference walk disagree over the first {}: {} vs {} allocations",
                    args.reference_end,
                    fast_window.report.allocations,
                    reference.report.allocations
                );
            }
            let comparison = serde_json::json!({
                "window_ms": window.as_millis(),
                "fast_cps": fast_window.report.cps,
                "reference_cps": reference.report.cps,
                "speedup": if reference.report.cps > 0.0 { fast_window.report.cps / reference.report.cps } else { 0.0 },
                "fast_scheduler_seconds": fast_window.report.scheduler_seconds,
                "reference_scheduler_seconds": reference.report.scheduler_seconds,
                "allocations": reference.report.allocations,
            });
            summary_json(&fast, Some(comparison))?
        }
    };
    if args.json {
        println!("{result}");
    } else {
        println!("{}", serde_json::to_string_pretty(&result)?);
    }
    Ok(())
}

fn extra_rows(m: &Measured) -> Vec<(String, String)> {
    vec![
        (
            "scheduler".to_string(),
            m.scheduler.short_name().to_string(),
        ),
        ("wall time".to_string(), format!("{:.2} s", m.wall_seconds)),
        (
            "simulator overhead".to_string(),
            format!(
                "{:.2} s",
                (m.wall_seconds - m.report.scheduler_seconds).max(0.0)
            ),
        ),
        (
            "peak RSS".to_string(),
            peak_rss_mb().map_or_else(|| "unknown".to_string(), |v| format!("{v:.0} MiB")),
        ),
    ]
}

fn summary_json(
    m: &Measured,
    comparison: Option<serde_json::Value>,
) -> anyhow::Result<serde_json::Value> {
    let mut v = serde_json::to_value(&m.report)?;
    if let Some(obj) = v.as_object_mut() {
        obj.insert("scheduler".into(), m.scheduler.short_name().into());
        obj.insert("wall_seconds".into(), m.wall_seconds.into());
        obj.insert(
            "simulator_overhead_seconds".into(),
            (m.wall_seconds - m.report.scheduler_seconds)
                .max(0.0)
                .into(),
        );
        obj.insert(
            "peak_rss_mb".into(),
            peak_rss_mb().map_or(serde_json::Value::Null, Into::into),
        );
        if let Some(c) = comparison {
            obj.insert("reference_comparison".into(), c);
        }
    }
    Ok(v)
}

fn print_rows(rows: &[(String, String)]) {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        println!("{k:<width$}  {v}");
    }
}

fn write_report(dir: &Path, input: &weft_sim::report::ReportInput) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    for (name, contents) in render_report(input) {
        let path = dir.join(name);
        std::fs::write(&path, contents)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok(())
}

/// The process's peak resident set (VmHWM), in MiB, where /proc has it.
fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small_with(properties: &[&str]) -> anyhow::Result<Workload> {
        let args = WorkloadArgs {
            preset: Some("small".to_string()),
            scale: 0.1,
            verify_every: "10s".to_string(),
            properties: properties.iter().map(|p| p.to_string()).collect(),
            ..WorkloadArgs::default()
        };
        load_workload(&args).map(|(w, _)| w)
    }

    #[test]
    fn pools_under_capacity_are_refused_by_name() {
        let args = WorkloadArgs {
            preset: Some("meituan".to_string()),
            scale: 0.01,
            pools: 2,
            scheduler: ScaleScheduler::Capacity,
            verify_every: "10s".to_string(),
            ..WorkloadArgs::default()
        };
        let e = load_workload(&args).expect_err("pools are a Fair feature");
        assert!(
            e.to_string().contains("--pools goes with --scheduler fair"),
            "{e}"
        );
    }

    #[test]
    fn property_flags_replace_the_workloads_own_values_and_bad_ones_are_named() {
        let w = small_with(&[
            "yarn.scheduler.fair.preemption=true",
            " yarn.scheduler.fair.update-interval-ms = 250",
        ])
        .expect("valid flags");
        let value = |name: &str| {
            let found: Vec<&str> = w
                .properties
                .iter()
                .filter(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
                .collect();
            found
        };
        assert_eq!(value("yarn.scheduler.fair.preemption"), ["true"]);
        assert_eq!(
            value("yarn.scheduler.fair.update-interval-ms"),
            ["250"],
            "one value, the flag's"
        );
        let e = small_with(&["yarn.scheduler.fair.preemption"]).expect_err("no '='");
        assert!(e.to_string().contains("expected NAME=VALUE"), "{e}");
        let e = small_with(&["=true"]).expect_err("no name");
        assert!(e.to_string().contains("name is empty"), "{e}");
    }
}
