//! Simulated NodeManagers: one light task each, sharing the bench's gRPC channels. A node
//! registers, then heartbeats its containers' states at the interval the RM asks for; a
//! container completes (exit 0) `container_ms` after it was launched, so the cluster churns.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{watch, Semaphore};
use tonic::transport::Channel;
use weft_proto::heartbeat_link::HeartbeatLink;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::{
    ContainerState, ContainerStatus, NmContainerStatus, NodeAction, NodeHealthStatus,
    NodeHeartbeatRequest, RegisterNodeManagerRequest, Resource,
};

use crate::shared::{describe, node_address, node_id, Shared};
use crate::stats::{Sample, Timeline};

/// YARN's exit status for a container that has not exited.
const EXIT_INVALID: i32 = -1000;
/// YARN's exit status for a container the RM had killed.
const EXIT_KILLED_BY_RM: i32 = -106;
/// Back-off between attempts to register again after a failure.
const RETRY: Duration = Duration::from_millis(200);
/// A heartbeat whose task woke this long after its due time was sent late by the bench.
pub(crate) const LATE: Duration = Duration::from_millis(100);

/// How one simulated node behaves.
#[derive(Clone, Debug)]
pub(crate) struct NodeSpec {
    /// Its index (node id `sim-nm-<index>:1`).
    pub(crate) index: usize,
    /// How many nodes there are (to spread the first heartbeats over one interval).
    pub(crate) of: usize,
    /// Memory, MB.
    pub(crate) memory_mb: i64,
    /// Virtual cores.
    pub(crate) vcores: i64,
    /// Its rack.
    pub(crate) rack: String,
    /// The bench's container-management port.
    pub(crate) cm_port: u16,
    /// Heartbeat interval forced by the bench; `None` follows the RM.
    pub(crate) heartbeat: Option<Duration>,
    /// How long a container runs (the mean, with `container_jitter`).
    pub(crate) container_run: Duration,
    /// Each container runs `container_run` x [1 - J, 1 + J), by a hash of its id.
    pub(crate) container_jitter: f64,
    /// The containers that first fill the node run a share of their length (`--start
    /// steady`): see [`first_fill_share`].
    pub(crate) stagger_first_fill: bool,
    /// An AM container's memory (MB) and vcores (its launch does not say).
    pub(crate) am_size: (i64, i64),
    /// Every running container in every heartbeat (YARN's NMs), not the changes and a count.
    pub(crate) full_statuses: bool,
    /// One NodeHeartbeat call per heartbeat even when the RM offers its heartbeat stream (or
    /// framed transport).
    pub(crate) unary_heartbeats: bool,
    /// The RM's resource tracker address (`host:port`) when the node takes the framed
    /// transport the RM offers (one connection per node, where gRPC shares a connection among
    /// many); `None` with `--grpc-streams` or `--unary-heartbeats`.
    pub(crate) framed_to: Option<String>,
}

/// What a node measured.
#[derive(Debug, Default)]
pub(crate) struct NodeResult {
    /// Every heartbeat's send time and latency.
    pub(crate) heartbeats: Vec<Sample>,
    /// Completions reported, by report time.
    pub(crate) completed: Timeline,
    /// Registrations after the first (RESYNC answers).
    pub(crate) resyncs: u64,
    /// The heartbeat interval the node used, ms.
    pub(crate) interval_ms: u64,
    /// Heartbeats the bench itself sent late (its task woke more than [`LATE`] after the due
    /// time: the bench's runtime was too busy), by due time.
    pub(crate) late: Timeline,
}

struct Running {
    id: String,
    /// Memory (MB) and vcores.
    size: (i64, i64),
    ends: Option<Instant>,
    /// A heartbeat carried its RUNNING status (any failed heartbeat makes the node register
    /// again, which clears this, so "sent" is "delivered").
    delivered: bool,
}

struct Node {
    spec: NodeSpec,
    id: String,
    rm: ResourceTrackerClient<Channel>,
    /// How heartbeats go (set at each registration: over the RM's stream when it offers one).
    link: HeartbeatLink,
    channel: Channel,
    shared: Arc<Shared>,
    running: Vec<Running>,
    stopped: Vec<String>,
    /// Completions reported but not yet acknowledged (`containers_to_be_removed_from_nm`):
    /// as a YARN NM, the node reports them again until the RM says it has them.
    unacked: Vec<ContainerStatus>,
    response_id: i32,
    interval: Duration,
    result: NodeResult,
    /// The id of the latest container-token master key the RM sent (reported back, as an NM
    /// does, so the RM sends a key only when it changes).
    master_key_id: Option<u32>,
    /// The registration secret the RM returned: heartbeats carry it.
    secret: String,
    /// The RM asked for every running container in the next heartbeat.
    send_all: bool,
    /// The node's first fill is over (it was full once, or one container length has passed
    /// since its first launch): later containers run their whole length even with
    /// `stagger_first_fill`.
    first_fill_over: bool,
    /// When the first container was launched here.
    first_launch: Option<Instant>,
    /// Memory (MB) and vcores of the running containers.
    used: (i64, i64),
}

impl Node {
    fn registration(&self) -> RegisterNodeManagerRequest {
        RegisterNodeManagerRequest {
            node_id: self.id.clone(),
            address: node_address(self.spec.index, self.spec.cm_port)
                .map(|a| a.to_string())
                .unwrap_or_default(),
            http_address: String::new(),
            total_capability: Some(Resource::new(self.spec.memory_mb, self.spec.vcores)),
            rack: self.spec.rack.clone(),
            nm_version: "weft-rmbench".into(),
            container_statuses: self
                .running
                .iter()
                .map(|c| NmContainerStatus {
                    container_id: c.id.clone(),
                    container_state: ContainerState::Running as i32,
                    container_exit_status: EXIT_INVALID,
                    ..Default::default()
                })
                .collect(),
            running_applications: Vec::new(),
            node_secret: self.secret.clone(),
            hadoop_address: String::new(),
        }
    }

    /// Registers (retrying until `stop`); false when the run ended first.
    async fn register(&mut self, stop: &mut watch::Receiver<bool>) -> bool {
        loop {
            if *stop.borrow() {
                return false;
            }
            let result = tokio::select! {
                r = self.rm.register_node_manager(self.registration()) => r,
                _ = stop.wait_for(|s| *s) => return false,
            };
            match result {
                Ok(r) => {
                    let r = r.into_inner();
                    if r.node_action == NodeAction::Shutdown as i32 {
                        self.shared.error(format!(
                            "{}: the RM refused the registration: {}",
                            self.id, r.diagnostics_message
                        ));
                        return false;
                    }
                    let asked = u64::try_from(r.heartbeat_interval_ms).unwrap_or(0).max(1);
                    self.interval = self.spec.heartbeat.unwrap_or(Duration::from_millis(asked));
                    self.response_id = 0;
                    // The registration listed them, but the first heartbeat lists them too:
                    // what a new RM recorded from a registration is not tracked here.
                    for c in &mut self.running {
                        c.delivered = false;
                    }
                    self.master_key_id = r.container_token_master_key.map(|k| k.key_id);
                    self.secret = r.node_secret;
                    let stream = r.heartbeat_stream && !self.spec.unary_heartbeats;
                    self.link = HeartbeatLink::new(self.channel.clone(), stream).framed(
                        self.spec.framed_to.as_deref().unwrap_or_default(),
                        r.framed_transport && self.spec.framed_to.is_some(),
                    );
                    return true;
                }
                // Once the run is over, connections torn down by its end are not errors.
                Err(_) if *stop.borrow() => return false,
                Err(s) => {
                    self.shared
                        .error(format!("{}: register: {}", self.id, describe(&s)));
                    tokio::time::sleep(RETRY).await;
                }
            }
        }
    }

    /// The statuses to report now (unacknowledged and new completions, then the still
    /// running) and how many completions are new.
    fn statuses(&mut self, now: Instant) -> (Vec<ContainerStatus>, usize) {
        for c in self.shared.take_launched(self.spec.index) {
            let size = c.size.unwrap_or(self.spec.am_size);
            let first = *self.first_launch.get_or_insert(c.at);
            self.first_fill_over |= c.at >= first + self.spec.container_run;
            let mut run = run_time(self.spec.container_run, self.spec.container_jitter, &c.id);
            if self.spec.stagger_first_fill && !self.first_fill_over && !c.forever {
                run = run.mul_f64(first_fill_share(&c.id));
            }
            self.used = (self.used.0 + size.0, self.used.1 + size.1);
            // Full once no other container of this size fits.
            self.first_fill_over |= !c.forever
                && (self.used.0 + size.0 > self.spec.memory_mb
                    || self.used.1 + size.1 > self.spec.vcores);
            let ends = (!c.forever).then(|| c.at + run);
            self.running.push(Running {
                id: c.id,
                size,
                ends,
                delivered: false,
            });
        }
        let exited = self.shared.take_exited(self.spec.index);
        if !exited.is_empty() {
            for c in &mut self.running {
                if exited.contains(&c.id) {
                    c.ends = Some(now);
                }
            }
        }
        let before = self.unacked.len();
        for id in self.stopped.drain(..) {
            let used = &mut self.used;
            self.running.retain(|c| {
                let ended = c.id == id;
                if ended {
                    *used = (used.0 - c.size.0, used.1 - c.size.1);
                }
                !ended
            });
            self.unacked.push(ContainerStatus {
                container_id: id,
                state: ContainerState::Complete as i32,
                exit_status: EXIT_KILLED_BY_RM,
                diagnostics: "Container killed by the ResourceManager".into(),
                capability: None,
            });
        }
        let mut running = Vec::with_capacity(self.running.len());
        let unacked = &mut self.unacked;
        let used = &mut self.used;
        let only_new = !self.spec.full_statuses && !std::mem::take(&mut self.send_all);
        self.running.retain_mut(|c| {
            let done = c.ends.is_some_and(|e| e <= now);
            if !done && only_new && c.delivered {
                return true;
            }
            c.delivered = true;
            let status = ContainerStatus {
                container_id: c.id.clone(),
                state: if done {
                    ContainerState::Complete
                } else {
                    ContainerState::Running
                } as i32,
                exit_status: if done { 0 } else { EXIT_INVALID },
                diagnostics: String::new(),
                capability: None,
            };
            if done {
                *used = (used.0 - c.size.0, used.1 - c.size.1);
                unacked.push(status);
            } else {
                running.push(status);
            }
            !done
        });
        let new = self.unacked.len() - before;
        let mut out = self.unacked.clone();
        out.append(&mut running);
        (out, new)
    }

    /// Forgets the completions the RM says it has recorded.
    fn acknowledge(&mut self, ids: &[String]) {
        if !ids.is_empty() {
            let acked: HashSet<&str> = ids.iter().map(String::as_str).collect();
            self.unacked
                .retain(|s| !acked.contains(s.container_id.as_str()));
        }
    }

    /// One heartbeat; `Ok(false)` when the run ended while it was in flight.
    async fn heartbeat(&mut self, stop: &mut watch::Receiver<bool>) -> Result<bool, ()> {
        let now = crate::clock::now();
        let (statuses, completed) = self.statuses(now);
        let request = NodeHeartbeatRequest {
            node_id: self.id.clone(),
            response_id: self.response_id,
            container_statuses: statuses,
            node_health_status: Some(NodeHealthStatus {
                is_node_healthy: true,
                ..Default::default()
            }),
            keep_alive_applications: Vec::new(),
            last_known_master_key_id: self.master_key_id,
            node_secret: self.secret.clone(),
            running_containers: (!self.spec.full_statuses)
                .then(|| u32::try_from(self.running.len()).unwrap_or(u32::MAX)),
        };
        // Counted until this heartbeat is answered: the run's teardown waits for it.
        let (at_ms, in_window) = self.shared.sending();
        let result = tokio::select! {
            r = self.link.beat(request) => r,
            _ = stop.wait_for(|s| *s) => return Ok(false),
        };
        drop(in_window);
        let micros = u32::try_from(now.elapsed().as_micros()).unwrap_or(u32::MAX);
        self.result.heartbeats.push(Sample { at_ms, micros });
        let reply = match result {
            Ok(r) => r,
            // Once the run is over, connections torn down by its end are not errors.
            Err(_) if *stop.borrow() => return Ok(false),
            Err(s) => {
                self.shared
                    .error(format!("{}: heartbeat: {}", self.id, describe(&s)));
                return Err(());
            }
        };
        self.result.completed.add(at_ms, completed as u64);
        self.response_id = reply.response_id;
        if let Some(k) = &reply.container_token_master_key {
            self.master_key_id = Some(k.key_id);
        }
        self.send_all = reply.send_all_statuses;
        self.stopped.extend(reply.containers_to_cleanup);
        self.acknowledge(&reply.containers_to_be_removed_from_nm);
        if reply.node_action == NodeAction::Resync as i32 {
            return Err(());
        }
        if reply.node_action == NodeAction::Shutdown as i32 {
            self.shared
                .error(format!("{}: the RM told the node to shut down", self.id));
            return Err(());
        }
        if reply.next_heartbeat_interval_ms > 0 && self.spec.heartbeat.is_none() {
            let ms = u64::try_from(reply.next_heartbeat_interval_ms).unwrap_or(1000);
            self.interval = Duration::from_millis(ms);
        }
        Ok(true)
    }
}

/// What a node needs from the run to start.
pub(crate) struct Start {
    /// Signalled once the node has registered.
    pub(crate) registered: tokio::sync::mpsc::Sender<()>,
    /// Bounds how many nodes register at once: thousands of streams opened on one HTTP/2
    /// connection in the same instant trip the server's stream limits (the connection is
    /// then torn down), and real NMs do not all start in the same millisecond anyway.
    pub(crate) gate: Arc<Semaphore>,
    /// Turns true when the run ends.
    pub(crate) stop: watch::Receiver<bool>,
}

/// `mean` x [1 - jitter, 1 + jitter), the point fixed by a hash of the container id (so a
/// run's lengths do not depend on timing).
fn run_time(mean: Duration, jitter: f64, id: &str) -> Duration {
    if jitter <= 0.0 {
        return mean;
    }
    mean.mul_f64(1.0 - jitter + 2.0 * jitter * id_unit(id, b""))
}

/// The share of its length a container of a node's first fill runs, in (0, 1], fixed by a
/// hash of its id (salted, so it does not follow the jitter's point). Spread evenly, the
/// first fill ends at the rate a cluster that has run for a while turns over at (a
/// container's remaining time, seen at a random moment, is even over its length when
/// lengths are equal), and every later container, run whole, keeps that phase.
fn first_fill_share(id: &str) -> f64 {
    1.0 - id_unit(id, b"first fill")
}

/// A point in [0, 1) from an FNV-1a hash of `salt` then `id`, finished with SplitMix64's
/// mixer: FNV-1a alone barely moves its top bits when only an id's last characters differ
/// (a node's containers), which left their points bunched.
fn id_unit(id: &str, salt: &[u8]) -> f64 {
    let mut hash = salt
        .iter()
        .chain(id.as_bytes())
        .fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
            (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
        });
    hash = (hash ^ (hash >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash = (hash ^ (hash >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^= hash >> 31;
    (hash >> 11) as f64 / (1u64 << 53) as f64
}

/// Runs one simulated node until the run stops.
pub(crate) async fn run(
    spec: NodeSpec,
    channel: Channel,
    shared: Arc<Shared>,
    start: Start,
) -> NodeResult {
    let Start {
        registered,
        gate,
        mut stop,
    } = start;
    let mut node = Node {
        id: node_id(spec.index),
        spec,
        rm: ResourceTrackerClient::new(channel.clone()),
        link: HeartbeatLink::new(channel.clone(), false),
        channel,
        shared,
        running: Vec::new(),
        stopped: Vec::new(),
        unacked: Vec::new(),
        response_id: 0,
        master_key_id: None,
        secret: String::new(),
        send_all: false,
        first_fill_over: false,
        first_launch: None,
        used: (0, 0),
        interval: Duration::from_secs(1),
        result: NodeResult::default(),
    };
    let permit = gate.acquire_owned().await;
    if !node.register(&mut stop).await {
        return node.result;
    }
    drop(permit);
    node.result.interval_ms = u64::try_from(node.interval.as_millis()).unwrap_or(u64::MAX);
    let _ = registered.send(()).await;
    drop(registered);
    // Spread the nodes over one interval, as independent NMs would be.
    let offset = node
        .interval
        .mul_f64(node.spec.index as f64 / node.spec.of.max(1) as f64);
    let mut next = tokio::time::Instant::now() + offset;
    loop {
        // Only a beat that was waited for can be late by the bench's fault: one already due
        // when the previous round trip ended was held up by the RM.
        let waited = next > tokio::time::Instant::now();
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {}
            _ = stop.wait_for(|s| *s) => break,
        }
        if waited && next.elapsed() > LATE {
            let due_ms = node
                .shared
                .now_ms()
                .saturating_sub(u64::try_from(next.elapsed().as_millis()).unwrap_or(u64::MAX));
            node.result.late.add(due_ms, 1);
        }
        // A node that falls behind skips the missed beats instead of bunching them up.
        next = (next + node.interval).max(tokio::time::Instant::now());
        match node.heartbeat(&mut stop).await {
            Ok(true) => continue,
            Ok(false) => break,
            Err(()) if *stop.borrow() => break,
            Err(()) => {}
        }
        node.result.resyncs += 1;
        if !node.register(&mut stop).await {
            break;
        }
    }
    node.result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node that lists every running container in every heartbeat (YARN's NMs).
    fn node(run_ms: u64) -> Node {
        let mut n = delta_node(run_ms);
        n.spec.full_statuses = true;
        n
    }

    /// A node that reports changes and a running count (Weft's NMs).
    fn delta_node(run_ms: u64) -> Node {
        let channel = Channel::from_static("http://127.0.0.1:1").connect_lazy();
        Node {
            spec: NodeSpec {
                index: 0,
                of: 1,
                memory_mb: 1024,
                vcores: 1,
                rack: "/default-rack".into(),
                cm_port: 1,
                heartbeat: None,
                container_run: Duration::from_millis(run_ms),
                container_jitter: 0.0,
                stagger_first_fill: false,
                am_size: (1024, 1),
                full_statuses: false,
                unary_heartbeats: false,
                framed_to: None,
            },
            id: node_id(0),
            rm: ResourceTrackerClient::new(channel.clone()),
            link: HeartbeatLink::new(channel.clone(), false),
            channel,
            shared: Arc::new(Shared::new(1)),
            running: Vec::new(),
            stopped: Vec::new(),
            unacked: Vec::new(),
            response_id: 0,
            master_key_id: None,
            secret: String::new(),
            send_all: false,
            first_fill_over: false,
            first_launch: None,
            used: (0, 0),
            interval: Duration::from_secs(1),
            result: NodeResult::default(),
        }
    }

    fn launched(id: &str, forever: bool) -> crate::shared::Launched {
        crate::shared::Launched {
            id: id.into(),
            at: crate::clock::now(),
            forever,
            size: None,
        }
    }

    #[tokio::test]
    async fn containers_complete_after_their_run_time_and_the_am_never_does() {
        let mut n = node(0);
        n.shared
            .launch(0, [launched("c1", false), launched("am", true)]);
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (2, 1));
        assert_eq!(s[0].container_id, "c1");
        assert_eq!(s[0].state, ContainerState::Complete as i32);
        assert_eq!(s[0].exit_status, 0);
        assert_eq!(s[1].container_id, "am");
        assert_eq!(s[1].state, ContainerState::Running as i32);
        // A completion is reported again until the RM acknowledges it; the AM keeps running.
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (2, 0));
        assert_eq!(s[0].container_id, "c1");
        n.acknowledge(&["c1".to_string(), "unknown".to_string()]);
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (1, 0));
        assert_eq!(s[0].container_id, "am");
        assert_eq!(n.registration().container_statuses.len(), 1);
    }

    /// An AM container runs until its AM exits, then completes (exit 0) at the next
    /// heartbeat; other nodes' exits do not touch it.
    #[tokio::test]
    async fn an_am_container_completes_once_its_am_has_exited() {
        let mut n = node(0);
        n.shared.launch(0, [launched("am", true)]);
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (1, 0));
        n.shared.exited(1, "am".into());
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s[0].state, new), (ContainerState::Running as i32, 0));
        n.shared.exited(0, "am".into());
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!(new, 1);
        assert_eq!(s[0].state, ContainerState::Complete as i32);
        assert_eq!(s[0].exit_status, 0);
        assert!(n.running.is_empty());
    }

    #[tokio::test]
    async fn long_containers_run_until_due_and_stops_end_them() {
        let mut n = node(60_000);
        n.shared
            .launch(0, [launched("c1", false), launched("c2", false)]);
        let (s, _) = n.statuses(crate::clock::now());
        assert!(s.iter().all(|s| s.state == ContainerState::Running as i32));
        n.stopped.push("c2".into());
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (2, 1));
        assert_eq!(s[0].container_id, "c2");
        assert_eq!(s[0].exit_status, EXIT_KILLED_BY_RM);
        assert_eq!(s[1].state, ContainerState::Running as i32);
        n.acknowledge(&["c2".to_string()]);
        let later = crate::clock::now() + Duration::from_secs(61);
        let (s, new) = n.statuses(later);
        assert_eq!((s.len(), new), (1, 1));
        assert_eq!(s[0].container_id, "c1");
        assert_eq!(s[0].state, ContainerState::Complete as i32);
        assert!(n.running.is_empty());
    }

    #[tokio::test]
    async fn delta_reports_carry_a_running_status_once_until_the_rm_asks_for_all() {
        let mut n = delta_node(60_000);
        n.shared
            .launch(0, [launched("c1", false), launched("c2", false)]);
        let (s, _) = n.statuses(crate::clock::now());
        assert_eq!(s.len(), 2, "new containers are reported");
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (0, 0), "then left out while they run");
        n.stopped.push("c2".into());
        let (s, new) = n.statuses(crate::clock::now());
        assert_eq!((s.len(), new), (1, 1), "a completion is a change");
        assert_eq!(s[0].container_id, "c2");
        // The RM's count differed: the next heartbeat lists every running container (and the
        // unacknowledged completion), the one after goes back to changes only.
        n.send_all = true;
        let (s, _) = n.statuses(crate::clock::now());
        let ids: Vec<&str> = s.iter().map(|s| s.container_id.as_str()).collect();
        assert_eq!(ids, ["c2", "c1"]);
        let (s, _) = n.statuses(crate::clock::now());
        let ids: Vec<&str> = s.iter().map(|s| s.container_id.as_str()).collect();
        assert_eq!(ids, ["c2"]);
    }

    /// With a staggered first fill, the containers that fill the node end after a share of
    /// their length (spread over it: some in its first quarter, some in its last); once the
    /// node has been full, new containers run their whole length, even after some ended.
    #[tokio::test]
    async fn a_staggered_first_fill_ends_spread_then_containers_run_whole() {
        let mut n = delta_node(40_000);
        (n.spec.memory_mb, n.spec.vcores) = (400 * 1024, 100);
        n.spec.stagger_first_fill = true;
        let start = crate::clock::now();
        let task = |id: &str| crate::shared::Launched {
            size: Some((4096, 1)),
            ..launched(id, false)
        };
        let ids: Vec<String> = (0..100)
            .map(|i| format!("container_1_0001_01_{i:06}"))
            .collect();
        // Filled over two heartbeats: the second half is still part of the first fill.
        n.shared.launch(0, ids[..50].iter().map(|id| task(id)));
        n.statuses(start);
        assert!(!n.first_fill_over);
        n.shared.launch(0, ids[50..].iter().map(|id| task(id)));
        n.statuses(start);
        assert!(n.first_fill_over, "a full node's first fill is over");
        assert_eq!(n.used, (100 * 4096, 100));
        let ends: Vec<f64> = n
            .running
            .iter()
            .filter_map(|c| c.ends)
            .map(|e| e.saturating_duration_since(start).as_secs_f64())
            .collect();
        assert_eq!(ends.len(), 100);
        assert!(ends.iter().all(|e| *e > 0.0 && *e <= 40.5), "{ends:?}");
        assert!(ends.iter().filter(|e| **e < 10.0).count() > 10, "{ends:?}");
        assert!(ends.iter().filter(|e| **e > 30.0).count() > 10);
        let (_, new) = n.statuses(start + Duration::from_secs(20));
        assert!(new > 0);
        assert_eq!(
            n.used.1,
            100 - new as i64,
            "ended containers free their room"
        );
        n.shared.launch(0, [task("later")]);
        n.statuses(start + Duration::from_secs(20));
        let later = n
            .running
            .iter()
            .find(|c| c.id == "later")
            .and_then(|c| c.ends);
        let run = later.map(|e| e.saturating_duration_since(crate::clock::now()));
        assert!(run.is_some_and(|r| r > Duration::from_secs(39)), "{run:?}");
        // A node never filled ends its first fill one container length after its first
        // launch; a cold start (the flag off) runs every container whole.
        let mut sparse = delta_node(40_000);
        (sparse.spec.memory_mb, sparse.spec.vcores) = (400 * 1024, 100);
        sparse.spec.stagger_first_fill = true;
        sparse.shared.launch(0, [task("a")]);
        sparse.statuses(start);
        assert!(!sparse.first_fill_over);
        let mut late = task("b");
        late.at = start + Duration::from_secs(41);
        sparse.shared.launch(0, [late]);
        sparse.statuses(start + Duration::from_secs(41));
        assert!(sparse.first_fill_over);
        let mut cold = delta_node(40_000);
        cold.shared.launch(0, [task(&ids[0])]);
        cold.statuses(start);
        let end = cold.running[0]
            .ends
            .map(|e| e.saturating_duration_since(start));
        assert!(end.is_some_and(|r| r >= Duration::from_secs(40)), "{end:?}");
    }

    /// Jittered run times stay within the spread, average about the mean, depend only on
    /// the id, and without jitter every container runs the mean.
    #[test]
    fn jittered_run_times_spread_around_the_mean() {
        let mean = Duration::from_millis(40_000);
        let runs: Vec<Duration> = (0..2_000)
            .map(|i| run_time(mean, 0.5, &format!("container_1_0001_01_{i:06}")))
            .collect();
        assert!(runs
            .iter()
            .all(|r| *r >= mean.mul_f64(0.5) && *r < mean.mul_f64(1.5)));
        let avg = runs.iter().map(Duration::as_secs_f64).sum::<f64>() / runs.len() as f64;
        assert!((avg - 40.0).abs() < 1.0, "mean {avg}");
        assert!(runs.iter().any(|r| *r < mean.mul_f64(0.7)));
        assert!(runs.iter().any(|r| *r > mean.mul_f64(1.3)));
        assert_eq!(run_time(mean, 0.5, "c1"), run_time(mean, 0.5, "c1"));
        assert_eq!(run_time(mean, 0.0, "c1"), mean);
    }
}
