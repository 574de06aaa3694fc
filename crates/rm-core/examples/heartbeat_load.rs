//! A deterministic load on `RmCore` alone, no network: `NODES` simulated NodeManagers
//! heartbeating once a simulated second (Weft's delta statuses: a RUNNING status once, then a
//! count), `APPS` AMs calling Allocate once a second, each app asking once for its tasks,
//! finishing when they have all completed and replaced by a new app so the count holds (the
//! shape of `weft rm-bench --preset meituan`, scaled down). Time is simulated, so two runs
//! of one build execute the same instructions: run it under
//! `valgrind --tool=callgrind` to count what the RM's own state machines cost per heartbeat
//! and per allocation, apart from the transport.
//!
//! It allocates through mimalloc, the RM's allocator (`crates/cli`): glibc's malloc costs
//! several times as many instructions per call, which would overstate what the core's
//! allocations cost the RM (loads measured before stop 34 ran on glibc's).
//!
//! `cargo build --release -p weft-rm-core --example heartbeat_load`, then
//! `target/release/examples/heartbeat_load [NODES APPS SECONDS TASKS]` (defaults 300 250 60
//! 40; TASKS is each app's containers). The full preset runs ~100 containers per node and
//! ~120 per app: `3000 2500 S 120` reaches that density at a quarter of its node count, which
//! is what makes rm-core's maps as deep as at full scale.
//!
//! Every 30 simulated seconds it prints the process's RSS to stderr: run with
//! `MIMALLOC_PURGE_DELAY=0` (freed pages leave at once) over simulated minutes, it shows
//! whether the core's memory settles as apps come and go (stop 35: `3000 2500 600 400`).

use std::collections::HashMap;

use weft_config::alloc_file::parse_allocations;
use weft_rm_core::{
    AllocateRequest, FinalStatus, NmContainerState, NmContainerStatus, NodeRegistration,
    NodeStatus, Output, ResourceAsk, RmConfig, RmCore, Submission,
};
use weft_sched::SchedulerConfig;
use weft_store::LaunchContext;
use weft_types::yarn_id::{AttemptId, ContainerId};
use weft_types::{Resource, ResourceTypes, Time};

/// The RM's allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const QUEUES: usize = 50;
const TASK_MS: u64 = 40_000;
/// The driver's tick.
const TICK_MS: u64 = 100;

struct SimNode {
    id: String,
    secret: String,
    /// Started since the last heartbeat: reported RUNNING once.
    started: Vec<ContainerId>,
    /// Running, with when each ends (`u64::MAX`: until stopped).
    running: Vec<(ContainerId, u64)>,
    /// Every running container is listed in the next heartbeat (`send_all_statuses`).
    list_all: bool,
}

struct SimApp {
    attempt: Option<AttemptId>,
    token: String,
    asked: bool,
    completed: u32,
}

struct Load {
    core: RmCore,
    nodes: Vec<SimNode>,
    node_index: HashMap<String, usize>,
    apps: Vec<SimApp>,
    next_queue: usize,
    /// Containers each app asks for.
    tasks_per_app: u32,
    heartbeats: u64,
    allocations: u64,
    finished: u64,
}

fn config() -> RmConfig {
    let queues: String = (0..QUEUES)
        .map(|q| format!("<queue name=\"q{q}\"/>"))
        .collect();
    let xml = format!("<allocations>{queues}</allocations>");
    let (allocations, _) = parse_allocations(&xml, &ResourceTypes::default())
        .unwrap_or_else(|e| panic!("the load's allocation file: {e}"));
    let properties = weft_config::SchedulerProperties {
        assign_multiple: true,
        max_assign: -1,
        ..Default::default()
    };
    let mut c = RmConfig::new(SchedulerConfig::fair(allocations, properties));
    c.token_secret = 0x5eed;
    c
}

impl Load {
    fn new(nodes: usize, apps: usize, tasks_per_app: u32) -> Load {
        let mut load = Load {
            core: RmCore::new(config(), 1_700_000_000_000, Time(0)),
            nodes: Vec::new(),
            node_index: HashMap::new(),
            apps: Vec::new(),
            next_queue: 0,
            tasks_per_app,
            heartbeats: 0,
            allocations: 0,
            finished: 0,
        };
        for i in 0..nodes {
            let id = format!("node{i:05}.example:45454");
            load.core
                .node_register(
                    Time(0),
                    NodeRegistration {
                        node_id: id.clone(),
                        address: id.clone(),
                        http_address: String::new(),
                        hadoop_address: String::new(),
                        capability: Resource::new(409_600, 100),
                        rack: format!("/rack{}", i / 40),
                        containers: Vec::new(),
                        secret: String::new(),
                    },
                )
                .unwrap_or_else(|e| panic!("registration: {e}"));
            let secret = load.core.node_secret(&id).unwrap_or_default();
            load.node_index.insert(id.clone(), i);
            load.nodes.push(SimNode {
                id,
                secret,
                started: Vec::new(),
                running: Vec::new(),
                list_all: false,
            });
        }
        for slot in 0..apps {
            load.apps.push(SimApp {
                attempt: None,
                token: String::new(),
                asked: false,
                completed: 0,
            });
            load.submit(Time(0), slot);
        }
        load.outputs(Time(0));
        load
    }

    fn submit(&mut self, now: Time, _slot: usize) {
        let id = self.core.new_application(now);
        let queue = format!("root.q{}", self.next_queue % QUEUES);
        self.next_queue += 1;
        let sub = Submission {
            name: "load".into(),
            user: "load".into(),
            queue: Some(queue),
            application_type: "YARN".into(),
            am_resource: Resource::new(2048, 1),
            launch: LaunchContext {
                commands: vec!["am".into()],
                ..LaunchContext::default()
            },
            ..Submission::default()
        };
        self.core
            .submit(now, id, sub)
            .unwrap_or_else(|e| panic!("submission: {e}"));
    }

    /// Carries out the core's outputs: AM launches start on their nodes and register.
    fn outputs(&mut self, now: Time) {
        while let Some(o) = self.core.poll_output() {
            let Output::LaunchAm(launch) = o else {
                continue;
            };
            if let Some(&n) = self.node_index.get(&launch.node_id) {
                self.nodes[n].started.push(launch.container);
                self.nodes[n].running.push((launch.container, u64::MAX));
            }
            let token = launch.launch.environment["WEFT_AM_TOKEN"].clone();
            self.core
                .am_register(now, launch.attempt, &token, "amhost", 4000, None)
                .unwrap_or_else(|e| panic!("AM registration: {e}"));
            let slot = self
                .apps
                .iter()
                .position(|a| a.attempt.is_none())
                .unwrap_or_else(|| panic!("a free app slot for {}", launch.attempt));
            self.apps[slot] = SimApp {
                attempt: Some(launch.attempt),
                token,
                asked: false,
                completed: 0,
            };
        }
    }

    fn heartbeat(&mut self, now: Time, n: usize) {
        let node = &mut self.nodes[n];
        let mut containers: Vec<NmContainerStatus> = Vec::new();
        let ms = now.as_millis();
        let listed = if node.list_all {
            node.running.iter().map(|r| r.0).collect()
        } else {
            std::mem::take(&mut node.started)
        };
        node.started.clear();
        node.list_all = false;
        for c in listed {
            containers.push(status(c, NmContainerState::Running, 0));
        }
        node.running.retain(|&(c, end)| {
            if end <= ms {
                containers.push(status(c, NmContainerState::Complete, 0));
                false
            } else {
                true
            }
        });
        let running = u32::try_from(node.running.len()).unwrap_or(u32::MAX);
        let reply = self
            .core
            .node_heartbeat(
                now,
                &node.id,
                NodeStatus {
                    healthy: true,
                    health_report: String::new(),
                    containers,
                    last_key_id: Some(1),
                    secret: node.secret.clone(),
                    running_containers: Some(running),
                },
            )
            .unwrap_or_else(|e| panic!("heartbeat: {e}"));
        self.heartbeats += 1;
        let node = &mut self.nodes[n];
        node.running
            .retain(|(c, _)| !reply.containers_to_stop.contains(c));
        node.list_all = reply.send_all_statuses;
        self.outputs(now);
    }

    fn allocate(&mut self, now: Time, slot: usize) {
        let Some(attempt) = self.apps[slot].attempt else {
            return;
        };
        let app = &mut self.apps[slot];
        let mut req = AllocateRequest::default();
        if !app.asked {
            app.asked = true;
            req.asks.push(ResourceAsk {
                priority: 1,
                resource: Resource::new(4096, 1),
                count: self.tasks_per_app,
                hosts: Vec::new(),
                racks: Vec::new(),
                relax_locality: true,
            });
        }
        let token = app.token.clone();
        let reply = self
            .core
            .am_allocate(now, attempt, &token, req)
            .unwrap_or_else(|e| panic!("allocate: {e}"));
        let end = now.as_millis() + TASK_MS;
        for c in &reply.allocated {
            self.allocations += 1;
            if let Some(&n) = self.node_index.get(&c.node_id) {
                self.nodes[n].started.push(c.id);
                self.nodes[n].running.push((c.id, end));
            }
        }
        let app = &mut self.apps[slot];
        app.completed += u32::try_from(reply.completed.len()).unwrap_or(u32::MAX);
        if app.completed >= self.tasks_per_app {
            self.core
                .am_finish(now, attempt, &token, FinalStatus::Succeeded, "", None)
                .unwrap_or_else(|e| panic!("finish: {e}"));
            self.finished += 1;
            // The AM exits once unregistered.
            let am = self.nodes.iter().position(|n| {
                n.running
                    .iter()
                    .any(|r| r.0.app == attempt.app && r.1 == u64::MAX)
            });
            if let Some(n) = am {
                for r in &mut self.nodes[n].running {
                    if r.0.app == attempt.app && r.1 == u64::MAX {
                        r.1 = now.as_millis();
                    }
                }
            }
            self.apps[slot].attempt = None;
            self.submit(now, slot);
        }
        self.outputs(now);
    }

    /// One simulated second: every node heartbeats and every AM calls, interleaved evenly,
    /// with the driver's ticks between them.
    fn second(&mut self, s: u64) {
        let steps = self.nodes.len().max(self.apps.len()).max(1) as u64;
        let mut next_tick = s * 1000;
        for i in 0..steps {
            let now = Time(s * 1000 + i * 1000 / steps);
            while next_tick <= now.as_millis() {
                self.core.tick(Time(next_tick));
                self.outputs(Time(next_tick));
                next_tick += TICK_MS;
            }
            if (i as usize) < self.nodes.len() {
                self.heartbeat(now, i as usize);
            }
            if (i as usize) < self.apps.len() {
                self.allocate(now, i as usize);
            }
        }
    }
}

fn status(c: ContainerId, state: NmContainerState, exit: i32) -> NmContainerStatus {
    NmContainerStatus {
        container: c,
        state,
        exit_status: exit,
        diagnostics: String::new(),
        resource: Resource::ZERO,
    }
}

/// The process's resident memory, from `/proc/self/status` (0 where there is none).
fn resident_mib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|text| {
            text.lines()
                .find_map(|line| line.strip_prefix("VmRSS:"))
                .and_then(|kb| kb.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

fn arg(i: usize, default: u64) -> u64 {
    std::env::args()
        .nth(i)
        .map(|a| {
            a.parse()
                .unwrap_or_else(|e| panic!("argument {i} '{a}': {e}"))
        })
        .unwrap_or(default)
}

fn main() {
    let nodes = arg(1, 300) as usize;
    let apps = arg(2, 250) as usize;
    let seconds = arg(3, 60);
    let tasks = u32::try_from(arg(4, 40)).unwrap_or_else(|e| panic!("TASKS: {e}"));
    let mut load = Load::new(nodes, apps, tasks);
    for s in 1..=seconds {
        load.second(s);
        if s % 30 == 0 {
            // The trend of the process's memory over simulated minutes (run it with
            // MIMALLOC_PURGE_DELAY=0 so freed pages leave the RSS at once).
            eprintln!(
                "second {s}: rss {} MiB, apps finished {}",
                resident_mib(),
                load.finished
            );
        }
    }
    let live: usize = load.nodes.iter().map(|n| n.running.len()).sum();
    println!(
        "nodes {nodes} apps {apps} seconds {seconds} tasks {tasks}: heartbeats {} allocations {} apps finished {} containers live at the end {live}",
        load.heartbeats, load.allocations, load.finished
    );
}
