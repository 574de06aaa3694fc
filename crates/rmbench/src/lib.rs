//! `weft rm-bench`: how many containers per second a real Weft RM allocates end to end.
//!
//! The bench starts `weft rm` as a child process (ephemeral ports, a temp data dir) or connects
//! to a running one, registers many lightweight simulated NodeManagers over the resource-tracker
//! gRPC service, submits one application through the REST API, receives the AM container launch
//! on its own ContainerManagement server, and then plays that AM with the credentials from the
//! launch: one greedy ask, Allocate calls back to back. Containers complete at their node's next
//! heartbeat (or after `--container-ms`), so the cluster keeps churning. The report gives the
//! allocation rate over a steady window, heartbeat and Allocate rates and latencies, and the
//! CPU the RM and the bench used, so what bounds the rate can be read off rather than guessed.
//!
//! With `--preset meituan [--scale F]` the bench plays seed 003's cluster instead (`fleet`):
//! the simulator's preset gives the nodes, the allocation file and the closed loop of apps,
//! and every app gets its own AM that asks, runs its tasks, finishes and is replaced; the
//! report is per minute (usage, validSchedule, latencies, RM CPU per heartbeat and per
//! allocation, RM memory) and says when the bench itself was the bottleneck.

mod am;
mod bench;
mod clock;
mod cm;
mod error;
mod fleet;
mod fleet_am;
mod fleet_report;
mod nm;
mod report;
mod rest;
mod rm_proc;
mod sampler;
mod shared;
mod stats;
mod timeline;

use std::path::PathBuf;
use std::time::Duration;

pub use bench::bench;
pub use error::BenchError;
pub use fleet::fleet;
pub use fleet_report::{CoreShare, FleetReport, MinuteRow};
pub use report::{Cpu, Report};
pub use stats::Percentiles;
pub use timeline::{DriverInterval, KindShare, Latency, SecondRow, TimelineReport};

/// `weft rm-bench` flags.
/// How a preset run's first containers end (`--start`).
#[derive(clap::ValueEnum, serde::Serialize, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Start {
    /// The first fill ends spread over one container length (a running cluster's state).
    #[default]
    Steady,
    /// The first fill runs whole lengths and ends together (waves).
    Cold,
}

#[derive(clap::Args, Debug, Clone)]
pub struct RmBenchArgs {
    /// The `weft` binary to start the RM with (`<binary> rm ...`); default: this executable.
    #[arg(long = "rm-binary", conflicts_with = "rm_scheduler")]
    pub rm_binary: Option<PathBuf>,
    /// Use a running RM: its AM service address (host:port). Needs --rm-tracker and --rm-web.
    #[arg(long = "rm-scheduler", requires_all = ["rm_tracker", "rm_web"])]
    pub rm_scheduler: Option<String>,
    /// A running RM's resource tracker address (host:port).
    #[arg(long = "rm-tracker", requires = "rm_scheduler")]
    pub rm_tracker: Option<String>,
    /// A running RM's REST address (host:port or URL).
    #[arg(long = "rm-web", requires = "rm_scheduler")]
    pub rm_web: Option<String>,
    /// A running RM's process id, to report its CPU.
    #[arg(long = "rm-pid", requires = "rm_scheduler")]
    pub rm_pid: Option<u32>,
    /// How many simulated NodeManagers.
    #[arg(long, default_value_t = 1000)]
    pub nms: usize,
    /// Memory of each simulated node, MB.
    #[arg(long = "node-memory-mb", default_value_t = 409_600)]
    pub node_memory_mb: i64,
    /// Virtual cores of each simulated node.
    #[arg(long = "node-vcores", default_value_t = 100)]
    pub node_vcores: i64,
    /// Memory of each container the app asks for, MB.
    #[arg(long = "container-memory-mb", default_value_t = 1024)]
    pub container_memory_mb: i64,
    /// Virtual cores of each container.
    #[arg(long = "container-vcores", default_value_t = 1)]
    pub container_vcores: i64,
    /// How long each container runs, ms (0: it completes at its node's next heartbeat).
    /// Default 0, or the preset's task duration with --preset.
    #[arg(long = "container-ms")]
    pub container_ms: Option<u64>,
    /// Spreads container run times over `container-ms` x [1 - J, 1 + J) (J in [0, 1), 0:
    /// every container runs exactly `container-ms`), each container's share fixed by a hash
    /// of its id, so the mean stays `container-ms`. With one length the preset's containers
    /// start and end in waves (all ~1.2M together every 40 s); a spread shows the steady
    /// state a real cluster's varied tasks reach.
    #[arg(long = "container-jitter", default_value_t = 0.0, value_parser = parse_jitter)]
    pub container_jitter: f64,
    /// With --preset, how the run starts. `steady` (the default) plays a cluster that has
    /// been running for a while: the containers that first fill each node (until it is
    /// full) end at times spread evenly over one container length, each after a share of
    /// it fixed by a hash of its id, and every later container runs its whole length.
    /// `cold`: every container runs whole from an empty cluster, so the cluster, filled in
    /// one second, turns over in waves (~1.2M containers ending together every 40 s at full
    /// scale), a thundering herd no single-core RM answers within 250 ms.
    #[arg(long, value_enum, default_value_t = Start::Steady)]
    pub start: Start,
    /// The measured window (after the warm-up), e.g. 20s, 500ms, 1m.
    #[arg(long, default_value = "20s", value_parser = parse_duration)]
    pub duration: Duration,
    /// Left out of the figures at the start, e.g. 5s.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub warmup: Duration,
    /// NM heartbeat interval, ms: configures the child RM, or overrides what a running RM asks.
    /// Default: the RM's (1000 for a child RM).
    #[arg(long = "heartbeat-ms")]
    pub heartbeat_ms: Option<u64>,
    /// Pause between the AM's Allocate calls, ms (0: call again as soon as the answer is in).
    /// Default 0, or 1000 (a YARN AM's heartbeat) with --preset.
    #[arg(long = "am-interval-ms")]
    pub am_interval_ms: Option<u64>,
    /// HTTP/2 connections the simulated NMs share to the resource tracker (0: one per
    /// 100 NMs; hundreds of small requests outstanding on one connection trip h2's
    /// flood protection in the RM's server, which then closes the connection).
    #[arg(long, default_value_t = 0)]
    pub connections: usize,
    /// With --preset: simulated NMs, and AMs, sharing one HTTP/2 connection, or AMs one shared
    /// framed connection when their own would pass the open-file limit (default 100;
    /// 1 gives each its own, as real NMs and AMs have, the framed transport's shape).
    #[arg(long = "per-connection", default_value_t = 100, value_parser = clap::value_parser!(u64).range(1..))]
    pub per_connection: u64,
    /// The queue to submit the app to.
    #[arg(long, default_value = "default")]
    pub queue: String,
    /// Child RM: leave `yarn.scheduler.fair.assignmultiple` off (one container per heartbeat).
    #[arg(long = "no-assign-multiple")]
    pub no_assign_multiple: bool,
    /// Child RM: `yarn.scheduler.fair.max.assign` (-1: no limit; turns dynamic max-assign off).
    /// An `--rm-property` naming `yarn.scheduler.fair.max.assign` or
    /// `yarn.scheduler.fair.dynamic.max.assign` replaces this flag (e.g. Hadoop's default
    /// `--rm-property yarn.scheduler.fair.dynamic.max.assign=true`).
    #[arg(long = "max-assign", default_value_t = -1, allow_hyphen_values = true)]
    pub max_assign: i32,
    /// Child RM: set a yarn-site property, over the preset's own (repeatable), e.g.
    /// `--rm-property weft.resourcemanager.scheduler.deferred-node-updates.enabled=false` to
    /// compare two settings with one binary.
    #[arg(long = "rm-property", value_name = "NAME=VALUE")]
    pub rm_properties: Vec<String>,
    /// Play a preset's cluster (`meituan`: seed 003's) instead of one greedy AM: its nodes,
    /// allocation file and closed loop of apps, each with its own AM.
    #[arg(long)]
    pub preset: Option<String>,
    /// The preset's scale (nodes, apps and queues times F).
    #[arg(long, default_value_t = 1.0, requires = "preset")]
    pub scale: f64,
    /// The preset's generator seed (tasks per app).
    #[arg(long, default_value_t = 1, requires = "preset")]
    pub seed: u64,
    /// Tasks per app as MIN-MAX instead of the preset's (e.g. for a short smoke run).
    #[arg(long = "tasks-per-app", value_parser = parse_range, requires = "preset")]
    pub tasks_per_app: Option<(u32, u32)>,
    /// How often usage and pending demand are observed for validSchedule, e.g. 5s.
    #[arg(long = "observe-every", default_value = "5s", value_parser = parse_duration)]
    pub observe_every: Duration,
    /// How often a preset run scrapes the RM's `/metrics` for the timeline's driver figures
    /// (each scrape is one driver job that every other call waits behind: ~7 ms at full
    /// scale since the RM's `/metrics` counts without per-app lists, 0.1-5 s before; 0 turns
    /// scraping off).
    #[arg(long = "scrape-every", default_value = "15s", value_parser = parse_duration)]
    pub scrape_every: Duration,
    /// Print a preset run's whole timeline (a row per second, the driver's intervals) to
    /// stderr; without it only the slowest seconds are printed there.
    #[arg(long = "timeline-text")]
    pub timeline_text: bool,
    /// Simulated NMs list every running container in every heartbeat, as YARN's NMs do,
    /// instead of Weft's changes and a running count (to measure what the deltas save).
    #[arg(long = "full-statuses")]
    pub full_statuses: bool,
    /// Simulated NMs make one NodeHeartbeat call per heartbeat even when the RM offers its
    /// framed transport or heartbeat stream (to measure what the stream saves, or to bench an RM as Hadoop's NMs
    /// would load it).
    #[arg(long = "unary-heartbeats")]
    pub unary_heartbeats: bool,
    /// AMs make one Allocate call per allocate even when the RM offers its Allocate stream
    /// (to measure what the stream saves, or to bench an RM as unary AMs would load it).
    #[arg(long = "unary-allocates")]
    pub unary_allocates: bool,
    /// Simulated NMs and AMs use the RM's gRPC streams even when it offers its framed
    /// transport (to measure what the framed transport saves with one RM binary).
    #[arg(long = "grpc-streams")]
    pub grpc_streams: bool,
    /// Put the RM on one CPU and the bench on another (sched_setaffinity on every thread), so
    /// neither's CPU is confused with the other's. Needs two CPUs.
    #[arg(long)]
    pub pin: bool,
    /// Worker threads of the RM the bench starts (its WEFT_RM_WORKER_THREADS) [default: the
    /// RM's own: the CPUs it may use, at most 2; one with --pin, which starts it on one CPU].
    #[arg(long = "rm-worker-threads")]
    pub rm_worker_threads: Option<usize>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
}

impl RmBenchArgs {
    /// The child RM's yarn-site properties: `base` (a preset's) with each `--rm-property`
    /// replacing a value of the same name or added after them.
    pub(crate) fn rm_properties(
        &self,
        mut base: Vec<(String, String)>,
    ) -> Result<Vec<(String, String)>, BenchError> {
        for given in &self.rm_properties {
            let Some((name, value)) = given.split_once('=') else {
                return Err(BenchError::Args(format!(
                    "--rm-property {given}: expected NAME=VALUE"
                )));
            };
            let name = name.trim();
            if name.is_empty() {
                return Err(BenchError::Args(format!(
                    "--rm-property {given}: the property name is empty"
                )));
            }
            base.retain(|(k, _)| k != name);
            base.push((name.to_string(), value.trim().to_string()));
        }
        Ok(base)
    }

    /// Whether an `--rm-property` names one of `names`.
    pub(crate) fn sets_rm_property(&self, names: &[&str]) -> bool {
        self.rm_properties.iter().any(|given| {
            given
                .split_once('=')
                .is_some_and(|(name, _)| names.contains(&name.trim()))
        })
    }

    /// The worker threads asked of a child RM (`None`: the RM sizes its runtime from the CPUs
    /// it may use, one when `--pin` starts it bound to its CPU).
    pub(crate) fn rm_worker_threads(&self) -> Option<usize> {
        self.rm_worker_threads
    }
}

/// Reads `MIN-MAX` (or a single number) as an inclusive range of positive counts.
pub fn parse_range(s: &str) -> Result<(u32, u32), String> {
    let (lo, hi) = s.split_once('-').unwrap_or((s, s));
    let parse = |v: &str| {
        v.trim()
            .parse::<u32>()
            .map_err(|_| format!("'{s}' is not a range of counts (e.g. 200-600)"))
    };
    let (lo, hi) = (parse(lo)?, parse(hi)?);
    if lo == 0 || lo > hi {
        return Err(format!("'{s}': need 1 <= MIN <= MAX"));
    }
    Ok((lo, hi))
}

/// A `--container-jitter` value: a fraction in [0, 1).
fn parse_jitter(text: &str) -> Result<f64, String> {
    let j: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number"))?;
    if (0.0..1.0).contains(&j) {
        Ok(j)
    } else {
        Err(format!("{j} is outside [0, 1)"))
    }
}

/// Reads `20s`, `500ms`, `2m` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (number, unit) = match s.find(|c: char| !c.is_ascii_digit() && c != '.') {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{s}' is not a duration (e.g. 20s, 500ms, 1m)"))?;
    let seconds = match unit {
        "ms" => value / 1000.0,
        "s" => value,
        "m" | "min" => value * 60.0,
        _ => return Err(format!("'{s}': unknown unit '{unit}' (ms, s or m)")),
    };
    Duration::try_from_secs_f64(seconds).map_err(|e| format!("'{s}': {e}"))
}

/// Runs the benchmark and prints its report (text, or JSON with `--json`).
pub fn run(args: RmBenchArgs) -> anyhow::Result<()> {
    if args.preset.is_some() {
        let report = fleet(&args)?;
        if args.timeline_text {
            eprint!("{}", report.timeline.text());
        } else {
            eprint!("{}", report.timeline.summary());
        }
        if args.json {
            println!("{}", serde_json::to_string_pretty(&report)?);
        } else {
            print!("{}", report.text());
        }
        return Ok(());
    }
    let report = bench(&args)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print!("{}", report.text());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        bench: RmBenchArgs,
    }

    #[test]
    fn rm_properties_replace_the_presets_values_or_add_to_them() {
        let cli = Cli::try_parse_from(["x", "--rm-property", "a=2", "--rm-property", " c = 3 "])
            .expect("parses");
        let base = vec![
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "1".to_string()),
        ];
        let got = cli.bench.rm_properties(base).expect("valid");
        let pairs: Vec<(&str, &str)> = got.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        assert_eq!(pairs, [("b", "1"), ("a", "2"), ("c", "3")]);
        for bad in ["novalue", "=3"] {
            let cli = Cli::try_parse_from(["x", "--rm-property", bad]).expect("parses");
            let err = cli.bench.rm_properties(Vec::new()).unwrap_err().to_string();
            assert!(err.contains(bad), "{err}");
        }
    }

    #[test]
    fn an_rm_property_naming_max_assign_is_seen() {
        let cli = Cli::try_parse_from([
            "x",
            "--rm-property",
            " yarn.scheduler.fair.dynamic.max.assign = true",
        ])
        .expect("parses");
        let names = [
            "yarn.scheduler.fair.max.assign",
            "yarn.scheduler.fair.dynamic.max.assign",
        ];
        assert!(cli.bench.sets_rm_property(&names));
        let cli = Cli::try_parse_from(["x", "--rm-property", "a=1"]).expect("parses");
        assert!(!cli.bench.sets_rm_property(&names));
    }

    #[test]
    fn durations_read_common_units() {
        assert_eq!(parse_duration("20s"), Ok(Duration::from_secs(20)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1.5"), Ok(Duration::from_millis(1500)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("3h").is_err());
    }

    #[test]
    fn ranges_read_min_max_or_one_number() {
        assert_eq!(parse_range("200-600"), Ok((200, 600)));
        assert_eq!(parse_range("3"), Ok((3, 3)));
        assert!(parse_range("0-2").is_err());
        assert!(parse_range("5-2").is_err());
        assert!(parse_range("a-b").is_err());
    }

    #[test]
    fn defaults_and_a_running_rm_need_all_three_addresses() {
        let a = Cli::parse_from(["b"]).bench;
        assert_eq!(a.nms, 1000);
        assert_eq!(a.duration, Duration::from_secs(20));
        assert_eq!(a.max_assign, -1);
        assert!(a.heartbeat_ms.is_none());
        assert!(Cli::try_parse_from(["b", "--rm-scheduler", "h:1"]).is_err());
        let a = Cli::parse_from([
            "b",
            "--rm-scheduler",
            "h:1",
            "--rm-tracker",
            "h:2",
            "--rm-web",
            "h:3",
            "--max-assign",
            "-1",
        ])
        .bench;
        assert_eq!(a.rm_tracker.as_deref(), Some("h:2"));
        assert!(Cli::try_parse_from(["b", "--rm-binary", "w", "--rm-scheduler", "h:1"]).is_err());
    }
}
