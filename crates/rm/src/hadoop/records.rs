//! Weft's reports as YARN's records, filled as Hadoop's clients expect (spec §4.2: Spark and
//! the Hadoop clients dereference several fields without null checks, so every listed field
//! is sent).

use std::collections::BTreeMap;

use weft_proto::hadoop::yarn::{
    ApplicationAttemptReportProto, ContainerReportProto, ContainerStateProto,
    YarnApplicationAttemptStateProto,
};
use weft_proto::hadoop::yarn::{
    ApplicationReportProto, ApplicationResourceUsageReportProto, FinalApplicationStatusProto,
    NodeIdProto, NodeReportProto, NodeStateProto, QueueInfoProto, QueueStateProto,
    YarnApplicationStateProto, YarnClusterMetricsProto,
};
use weft_proto::hadoop::{self as wire};
use weft_rm_core::{
    AppReport, AppState, AttemptReport, AttemptState, ClusterMetrics, ContainerReport, FinalStatus,
    LiveContainerState, NodeInfo, NodeState,
};
use weft_sched::QueueSnapshot;
use weft_types::{Resource, Time};

/// What a report needs beyond the app's own figures.
pub(super) struct ReportContext {
    /// The RM's web address (`host:port`), for the tracking URL before the AM sets one.
    pub(super) web: String,
    /// Resources of usable nodes, for the cluster usage percentage.
    pub(super) cluster_total: Resource,
}

pub(super) fn app_state(s: AppState) -> YarnApplicationStateProto {
    match s {
        AppState::New => YarnApplicationStateProto::New,
        AppState::Submitted => YarnApplicationStateProto::Submitted,
        AppState::Accepted => YarnApplicationStateProto::Accepted,
        AppState::Running => YarnApplicationStateProto::Running,
        AppState::Finished => YarnApplicationStateProto::Finished,
        AppState::Failed => YarnApplicationStateProto::Failed,
        AppState::Killed => YarnApplicationStateProto::Killed,
    }
}

fn final_status(s: FinalStatus) -> FinalApplicationStatusProto {
    match s {
        FinalStatus::Undefined => FinalApplicationStatusProto::AppUndefined,
        FinalStatus::Succeeded => FinalApplicationStatusProto::AppSucceeded,
        FinalStatus::Failed => FinalApplicationStatusProto::AppFailed,
        FinalStatus::Killed => FinalApplicationStatusProto::AppKilled,
    }
}

fn millis(t: Time) -> i64 {
    i64::try_from(t.as_millis()).unwrap_or(i64::MAX)
}

fn percent(part: i64, whole: i64) -> f32 {
    if whole <= 0 {
        0.0
    } else {
        (part as f64 * 100.0 / whole as f64) as f32
    }
}

fn seconds(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `ApplicationReportProto` with every field clients read.
pub(super) fn app_report(r: &AppReport, ctx: &ReportContext) -> ApplicationReportProto {
    let attempt = r.current_attempt.as_ref();
    let (host, rpc_port) = match attempt.and_then(|a| a.am_rpc.clone()) {
        Some((host, port)) => (host, i32::try_from(port).unwrap_or(-1)),
        None => ("N/A".to_string(), -1),
    };
    let rm_page = format!("http://{}/cluster/app/{}", ctx.web, r.id);
    let usage = ApplicationResourceUsageReportProto {
        num_used_containers: Some(i32::try_from(r.running_containers).unwrap_or(i32::MAX)),
        num_reserved_containers: Some(0),
        used_resources: Some(wire::resource_proto(r.allocated)),
        reserved_resources: Some(wire::resource_proto(Resource::ZERO)),
        needed_resources: Some(wire::resource_proto(r.allocated)),
        memory_seconds: Some(seconds(r.aggregate.memory_mb_seconds)),
        vcore_seconds: Some(seconds(r.aggregate.vcore_seconds)),
        queue_usage_percentage: Some(0.0),
        cluster_usage_percentage: Some(percent(
            r.allocated.memory_mb(),
            ctx.cluster_total.memory_mb(),
        )),
        preempted_memory_seconds: Some(seconds(r.preemption.memory_mb_seconds)),
        preempted_vcore_seconds: Some(seconds(r.preemption.vcore_seconds)),
    };
    ApplicationReportProto {
        application_id: Some(wire::application_id_proto(r.id)),
        user: Some(r.user.clone()),
        queue: Some(r.queue.clone()),
        name: Some(r.name.clone()),
        host: Some(host),
        rpc_port: Some(rpc_port),
        yarn_application_state: Some(app_state(r.state) as i32),
        tracking_url: Some(r.tracking_url.clone().unwrap_or_else(|| rm_page.clone())),
        original_tracking_url: Some(r.tracking_url.clone().unwrap_or_else(|| "N/A".into())),
        diagnostics: Some(r.diagnostics.clone()),
        start_time: Some(millis(r.submit_time)),
        finish_time: Some(r.finish_time.map_or(0, millis)),
        final_application_status: Some(final_status(r.final_status) as i32),
        app_resource_usage: Some(usage),
        current_application_attempt_id: attempt.map(|a| wire::attempt_id_proto(a.id)),
        progress: Some(r.progress),
        application_type: Some(r.application_type.clone()),
        application_tags: r.tags.iter().cloned().collect(),
        unmanaged_application: Some(false),
        priority: Some(wire::priority_proto(r.priority)),
        launch_time: Some(r.launch_time.map_or(0, millis)),
        submit_time: Some(millis(r.submit_time)),
        ..Default::default()
    }
}

fn attempt_state(s: AttemptState) -> YarnApplicationAttemptStateProto {
    use YarnApplicationAttemptStateProto as P;
    match s {
        AttemptState::New => P::AppAttemptNew,
        AttemptState::Submitted => P::AppAttemptSubmitted,
        AttemptState::Scheduled => P::AppAttemptScheduled,
        AttemptState::Allocated => P::AppAttemptAllocated,
        AttemptState::Launched => P::AppAttemptLaunched,
        AttemptState::Running => P::AppAttemptRunning,
        AttemptState::Finishing => P::AppAttemptFinishing,
        AttemptState::Finished => P::AppAttemptFinished,
        AttemptState::Failed => P::AppAttemptFailed,
        AttemptState::Killed => P::AppAttemptKilled,
    }
}

/// `ApplicationAttemptReportProto`; `tracking_url` is the app's, for its current attempt.
pub(super) fn attempt_report(
    a: &AttemptReport,
    tracking_url: Option<&str>,
) -> ApplicationAttemptReportProto {
    let (host, rpc_port) = match &a.am_rpc {
        Some((host, port)) => (host.clone(), i32::try_from(*port).unwrap_or(-1)),
        None => ("N/A".to_string(), -1),
    };
    ApplicationAttemptReportProto {
        application_attempt_id: Some(wire::attempt_id_proto(a.id)),
        host: Some(host),
        rpc_port: Some(rpc_port),
        tracking_url: Some(tracking_url.unwrap_or("N/A").to_string()),
        original_tracking_url: Some(tracking_url.unwrap_or("N/A").to_string()),
        diagnostics: Some(a.diagnostics.clone()),
        yarn_application_attempt_state: Some(attempt_state(a.state) as i32),
        am_container_id: a.am_container.map(wire::container_id_proto),
        start_time: Some(millis(a.start_time)),
        finish_time: Some(a.finish_time.map_or(0, millis)),
    }
}

/// `ContainerReportProto`, with the NM log page of the container for `user`.
pub(super) fn container_report(c: &ContainerReport, user: &str) -> ContainerReportProto {
    let (host, port) = split_node_id(&c.node_id);
    let state = match c.state {
        LiveContainerState::Allocated | LiveContainerState::Acquired => ContainerStateProto::CNew,
        LiveContainerState::Running => ContainerStateProto::CRunning,
        LiveContainerState::Complete => ContainerStateProto::CComplete,
    };
    ContainerReportProto {
        container_id: Some(wire::container_id_proto(c.id)),
        resource: Some(wire::resource_proto(c.resource)),
        node_id: Some(NodeIdProto {
            host: Some(host),
            port: Some(port),
        }),
        priority: Some(wire::priority_proto(c.priority)),
        creation_time: Some(millis(c.start_time)),
        finish_time: Some(c.finish_time.map_or(0, millis)),
        diagnostics_info: Some(c.diagnostics.clone()),
        log_url: c
            .node_http_address
            .as_deref()
            .map(|http| crate::rest::log_url(http, &c.id, user)),
        container_exit_status: Some(c.exit_status.unwrap_or(weft_rm_core::exit::INVALID)),
        container_state: Some(state as i32),
        node_http_address: c.node_http_address.as_ref().map(|h| format!("http://{h}")),
    }
}

/// `host:port` split at its last colon (a NodeId's two fields).
fn split_node_id(node_id: &str) -> (String, i32) {
    match node_id.rsplit_once(':') {
        Some((h, p)) => (h.to_string(), p.parse::<i32>().unwrap_or(0)),
        None => (node_id.to_string(), 0),
    }
}

/// YARN's node state for Weft's.
pub(super) fn node_state(s: NodeState) -> NodeStateProto {
    match s {
        NodeState::Running => NodeStateProto::NsRunning,
        NodeState::Unhealthy => NodeStateProto::NsUnhealthy,
        NodeState::Lost => NodeStateProto::NsLost,
        NodeState::Decommissioned => NodeStateProto::NsDecommissioned,
        NodeState::Shutdown => NodeStateProto::NsShutdown,
    }
}

/// `NodeReportProto`: the NodeId is the node's `host:port` split at its last colon.
pub(super) fn node_report(n: &NodeInfo) -> NodeReportProto {
    let (host, port) = split_node_id(&n.node_id);
    NodeReportProto {
        node_id: Some(NodeIdProto {
            host: Some(host),
            port: Some(port),
        }),
        http_address: Some(n.http_address.clone()),
        rack_name: Some(n.rack.clone()),
        used: Some(wire::resource_proto(n.used)),
        capability: Some(wire::resource_proto(n.capability)),
        num_containers: Some(i32::try_from(n.containers).unwrap_or(i32::MAX)),
        node_state: Some(node_state(n.state) as i32),
        health_report: Some(n.health_report.clone()),
        last_health_report_time: Some(millis(n.last_heartbeat)),
        node_labels: n.label.iter().cloned().collect(),
    }
}

/// `YarnClusterMetricsProto`; like Hadoop's, `num_node_managers` counts the active NMs.
pub(super) fn cluster_metrics(m: &ClusterMetrics) -> YarnClusterMetricsProto {
    let n = |v: u64| Some(i32::try_from(v).unwrap_or(i32::MAX));
    YarnClusterMetricsProto {
        num_node_managers: n(m.active_nodes),
        num_decommissioned_nms: n(m.decommissioned_nodes),
        num_active_nms: n(m.active_nodes),
        num_lost_nms: n(m.lost_nodes),
        num_unhealthy_nms: n(m.unhealthy_nodes),
        num_rebooted_nms: Some(0),
        num_decommissioning_nms: Some(0),
        num_shutdown_nms: n(m.shutdown_nodes),
    }
}

/// What `queue_info` reads besides the queue snapshots.
pub(super) struct QueueContext<'a> {
    /// The cluster's resources.
    pub(super) cluster: Resource,
    /// `fairScheduler`, `capacityScheduler` or `fifoScheduler` (Hadoop's schedulerType).
    pub(super) scheduler_type: &'static str,
    /// Capacity Scheduler queues: (capacity, maximum capacity, used capacity) as fractions.
    pub(super) capacities: &'a BTreeMap<String, (f32, f32, f32)>,
    /// The reports of a leaf's apps (empty unless the client asked for them).
    pub(super) apps: &'a dyn Fn(&str) -> Vec<ApplicationReportProto>,
}

/// A queue's `QueueInfoProto`, with its children when asked (`recursive` for the whole
/// subtree). Under the Fair Scheduler (and FIFO) capacities are fractions of the cluster and
/// the current capacity is usage over the fair share, as Hadoop's FSQueue reports them; under
/// the Capacity Scheduler they are the queue's configured and used capacities.
pub(super) fn queue_info(
    queues: &[QueueSnapshot],
    at: usize,
    ctx: &QueueContext<'_>,
    children: bool,
    recursive: bool,
) -> QueueInfoProto {
    let q = &queues[at];
    let cluster = ctx.cluster;
    let fraction = |r: Resource| {
        if cluster.memory_mb() <= 0 {
            0.0
        } else {
            (r.memory_mb() as f64 / cluster.memory_mb() as f64).min(1.0) as f32
        }
    };
    let current = if q.fair_share.memory_mb() > 0 {
        (q.usage.memory_mb() as f64 / q.fair_share.memory_mb() as f64) as f32
    } else {
        0.0
    };
    let short = q.name.rsplit('.').next().unwrap_or(&q.name).to_string();
    let child_queues = if children {
        direct_children(queues, at)
            .map(|c| queue_info(queues, c, ctx, recursive, recursive))
            .collect()
    } else {
        Vec::new()
    };
    let (capacity, maximum, current) = ctx.capacities.get(&q.name).copied().unwrap_or((
        fraction(q.steady_fair_share),
        fraction(q.max_resources),
        current,
    ));
    QueueInfoProto {
        queue_name: Some(short),
        queue_path: Some(q.name.clone()),
        capacity: Some(capacity),
        maximum_capacity: Some(maximum),
        current_capacity: Some(current),
        state: Some(QueueStateProto::QRunning as i32),
        child_queues,
        applications: if q.leaf {
            (ctx.apps)(&q.name)
        } else {
            Vec::new()
        },
        weight: Some(q.weight as f32),
        scheduler_type: Some(ctx.scheduler_type.into()),
        min_resource_memory: Some(q.min_resources.memory_mb()),
        min_resource_v_core: Some(i32::try_from(q.min_resources.vcores()).unwrap_or(i32::MAX)),
        max_resource_memory: Some(q.max_resources.memory_mb()),
        max_resource_v_core: Some(i32::try_from(q.max_resources.vcores()).unwrap_or(i32::MAX)),
        steady_fair_share_memory: Some(q.steady_fair_share.memory_mb()),
        steady_fair_share_v_core: Some(
            i32::try_from(q.steady_fair_share.vcores()).unwrap_or(i32::MAX),
        ),
        preemption_disabled: Some(q.starvation.is_none()),
        ..Default::default()
    }
}

/// The indexes of `at`'s direct children (the snapshot lists queues depth-first).
fn direct_children(queues: &[QueueSnapshot], at: usize) -> impl Iterator<Item = usize> + '_ {
    let prefix = format!("{}.", queues[at].name);
    queues
        .iter()
        .enumerate()
        .filter(move |(_, q)| {
            q.name
                .strip_prefix(&prefix)
                .is_some_and(|rest| !rest.contains('.'))
        })
        .map(|(i, _)| i)
}
