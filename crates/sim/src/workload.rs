//! The production-scale workload model: what a trace (SLS, SYNTH) or the synthetic generator
//! turns into, and what the scale driver (`crate::scale`) replays through the scheduler.
//!
//! Unlike a scenario file, a workload does not script every event: it describes nodes and
//! applications, and simulated ApplicationMasters ask for their tasks stage by stage, run each
//! container for its duration and finish when their last stage is done.

use weft_types::{Duration, Resource, ResourceTypes, Time};

/// Everything a scale run needs besides the scheduler's configuration.
#[derive(Clone, Debug)]
pub struct Workload {
    /// A name for reports (the trace's file name or the preset's name).
    pub name: String,
    /// The nodes, all joining at time 0.
    pub nodes: Vec<WorkloadNode>,
    /// The allocation file text (fair-scheduler.xml); `None` = an empty allocation file.
    pub allocations_xml: Option<String>,
    /// yarn-site properties as (name, value) pairs, applied over Hadoop's defaults.
    pub properties: Vec<(String, String)>,
    /// Resource types the workload's amounts use (memory and vcores at least).
    pub resource_types: ResourceTypes,
    /// Each node heartbeats at this period.
    pub heartbeat_interval: Duration,
    /// Period of the scheduler's update.
    pub update_interval: Duration,
    /// When the run stops; `None` = when every application has finished.
    pub end: Option<Time>,
    /// Where applications come from.
    pub apps: AppSource,
}

/// One node.
#[derive(Clone, Debug, PartialEq)]
pub struct WorkloadNode {
    /// Host name (asks name it for node-local placement).
    pub host: String,
    /// Rack path, e.g. `/default-rack`.
    pub rack: String,
    /// Total resources.
    pub capability: Resource,
}

/// Where applications come from.
#[derive(Clone, Debug)]
pub enum AppSource {
    /// A fixed list (a trace): each app is submitted at its `submit` time.
    Trace(Vec<AppPlan>),
    /// A closed loop: `concurrent` apps from the start, each finished app replaced at once by a
    /// new one, so the number of running apps holds.
    ClosedLoop(ClosedLoop),
}

/// A simulated application: who submits it where, its AM, and its tasks in stages.
#[derive(Clone, Debug, PartialEq)]
pub struct AppPlan {
    /// Submission time.
    pub submit: Time,
    /// A name for outputs (the trace's job id, or a generated one).
    pub name: String,
    /// The submitting user.
    pub user: String,
    /// The queue asked for (`None` lets the placement rules decide).
    pub queue: Option<String>,
    /// The AM container's size; `None` = an unmanaged AM (asks right after acceptance).
    pub am: Option<Resource>,
    /// Stages, asked one after the other: stage k+1 is asked when every container of stage k
    /// has completed (MapReduce's maps then reduces).
    pub stages: Vec<Stage>,
}

impl AppPlan {
    /// Containers over all stages (the AM excluded).
    pub fn task_count(&self) -> u64 {
        self.stages
            .iter()
            .flat_map(|s| s.groups.iter())
            .map(|g| u64::from(g.count))
            .sum()
    }
}

/// One stage: groups of identical containers asked together.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Stage {
    /// The stage's asks.
    pub groups: Vec<TaskGroup>,
}

/// `count` containers of one size and priority, each running for `duration`.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskGroup {
    /// Request priority (lower is served first).
    pub priority: i32,
    /// Each container's size.
    pub resource: Resource,
    /// How many containers.
    pub count: u32,
    /// How long each container runs once allocated.
    pub duration: Duration,
    /// Preferred host (node-local ask, relaxed to rack and any), if the trace names one.
    pub host: Option<String>,
    /// The preferred host's rack, when `host` is given.
    pub rack: Option<String>,
}

/// A closed-loop application source: deterministic for a given seed.
#[derive(Clone, Debug)]
pub struct ClosedLoop {
    /// Apps running at once.
    pub concurrent: u32,
    /// The leaf queues apps are spread over (round robin by app number).
    pub queues: Vec<String>,
    /// Users, assigned round robin by app number.
    pub users: Vec<String>,
    /// AM size; `None` = unmanaged AMs.
    pub am: Option<Resource>,
    /// Each app's container size.
    pub container: Resource,
    /// Containers per app: uniform in `[min, max]`.
    pub tasks_per_app: (u32, u32),
    /// Container run time: uniform in `[min, max]` ms.
    pub task_duration_ms: (u64, u64),
    /// Request priority of the tasks.
    pub priority: i32,
    /// Spread the initial submissions uniformly over this window (0 = all at time 0).
    pub initial_spread: Duration,
    /// Seed of the generator.
    pub seed: u64,
}

impl ClosedLoop {
    /// The `n`-th application (0-based), submitted at `now`. The same `n` and seed always give
    /// the same plan.
    pub fn app(&self, n: u64, now: Time) -> AppPlan {
        let mut rng = SplitMix64::new(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let idx = |len: usize| (n % len.max(1) as u64) as usize;
        let count = rng.range_u64(
            u64::from(self.tasks_per_app.0),
            u64::from(self.tasks_per_app.1),
        );
        let duration = rng.range_u64(self.task_duration_ms.0, self.task_duration_ms.1);
        AppPlan {
            submit: now,
            name: format!("app{n}"),
            user: self
                .users
                .get(idx(self.users.len()))
                .cloned()
                .unwrap_or_else(|| "user".to_string()),
            queue: self.queues.get(idx(self.queues.len())).cloned(),
            am: self.am,
            stages: vec![Stage {
                groups: vec![TaskGroup {
                    priority: self.priority,
                    resource: self.container,
                    count: u32::try_from(count).unwrap_or(u32::MAX),
                    duration: Duration::from_millis(duration),
                    host: None,
                    rack: None,
                }],
            }],
        }
    }
}

/// A small, fast, well-mixed deterministic generator (Steele et al.'s SplitMix64), so the
/// simulator needs no RNG crate and the same seed gives the same workload everywhere.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)`.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in `[lo, hi]` (inclusive; `hi < lo` gives `lo`).
    pub fn range_u64(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        lo + self.next_u64() % span
    }

    /// A normal sample (Box-Muller) with mean `mean` and standard deviation `std`.
    pub fn normal(&mut self, mean: f64, std: f64) -> f64 {
        let u1 = self.next_f64().max(f64::MIN_POSITIVE);
        let u2 = self.next_f64();
        mean + std * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_loop_apps_are_deterministic_and_within_bounds() {
        let cl = ClosedLoop {
            concurrent: 10,
            queues: vec!["root.a".into(), "root.b".into()],
            users: vec!["u1".into()],
            am: None,
            container: Resource::new(4096, 1),
            tasks_per_app: (5, 9),
            task_duration_ms: (1000, 2000),
            priority: 1,
            initial_spread: Duration::from_millis(0),
            seed: 7,
        };
        for n in 0..100 {
            let a = cl.app(n, Time::ZERO);
            assert_eq!(a, cl.app(n, Time::ZERO));
            let tasks = a.task_count();
            assert!((5..=9).contains(&tasks), "{tasks}");
            let d = a.stages[0].groups[0].duration.as_millis();
            assert!((1000..=2000).contains(&d), "{d}");
            assert_eq!(
                a.queue.as_deref(),
                Some(["root.a", "root.b"][(n % 2) as usize])
            );
        }
    }

    #[test]
    fn splitmix_is_spread() {
        let mut r = SplitMix64::new(1);
        let mean = (0..10_000).map(|_| r.next_f64()).sum::<f64>() / 10_000.0;
        assert!((0.48..0.52).contains(&mean), "{mean}");
    }
}
