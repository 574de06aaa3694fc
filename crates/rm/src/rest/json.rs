//! Hadoop's REST JSON shapes: the submission context in; `AppInfo`, attempts, containers,
//! nodes, `ClusterInfo` and `ClusterMetricsInfo` out. Unknown (null) fields are left out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value};
use weft_rm_core::{
    AppReport, AppState, AttemptReport, AttemptState, ClusterMetrics, ContainerReport, FinalStatus,
    LaunchContext, LocalResource, LocalResourceKind, NodeInfo, Submission,
};
use weft_types::yarn_id::{ApplicationId, ContainerId};
use weft_types::{Resource, Time};

/// YARN's name of an application state.
pub(crate) fn state_name(s: AppState) -> &'static str {
    match s {
        AppState::New => "NEW",
        AppState::Submitted => "SUBMITTED",
        AppState::Accepted => "ACCEPTED",
        AppState::Running => "RUNNING",
        AppState::Finished => "FINISHED",
        AppState::Failed => "FAILED",
        AppState::Killed => "KILLED",
    }
}

/// YARN's name of a final status.
pub(crate) fn final_name(s: FinalStatus) -> &'static str {
    match s {
        FinalStatus::Undefined => "UNDEFINED",
        FinalStatus::Succeeded => "SUCCEEDED",
        FinalStatus::Failed => "FAILED",
        FinalStatus::Killed => "KILLED",
    }
}

/// `{"memory": MB, "vCores": n}`.
pub(crate) fn resource(r: Resource) -> Value {
    json!({"memory": r.memory_mb(), "vCores": r.vcores()})
}

/// One value or a list of them (Jersey accepts both), as a list.
fn one_or_many(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

/// A Java map as Jersey writes it: `{"entry": [{"key": k, "value": v}, ...]}`.
fn entries<'a>(v: Option<&'a Value>, what: &str) -> Result<Vec<(String, &'a Value)>, String> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    one_or_many(v.get("entry"))
        .into_iter()
        .map(|e| {
            let key = e
                .get("key")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{what}: an entry has no string 'key'"))?;
            let value = e
                .get("value")
                .ok_or_else(|| format!("{what}: entry '{key}' has no 'value'"))?;
            Ok((key.to_string(), value))
        })
        .collect()
}

fn string(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(format!("'{key}' must be a string, got {other}")),
    }
}

fn int(obj: &Map<String, Value>, key: &str) -> Result<Option<i64>, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
            .map(Some)
            .ok_or_else(|| format!("'{key}' must be an integer, got {v}")),
    }
}

fn boolean(obj: &Map<String, Value>, key: &str) -> Result<bool, String> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("true") => Ok(true),
        Some(Value::String(s)) if s.eq_ignore_ascii_case("false") => Ok(false),
        Some(other) => Err(format!("'{key}' must be a boolean, got {other}")),
    }
}

fn launch_context(spec: Option<&Value>) -> Result<LaunchContext, String> {
    let mut ctx = LaunchContext::default();
    let Some(spec) = spec else {
        return Ok(ctx);
    };
    let commands = spec.get("commands").and_then(|c| c.get("command"));
    let parts: Vec<String> = one_or_many(commands)
        .into_iter()
        .map(|c| {
            c.as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("a command must be a string, got {c}"))
        })
        .collect::<Result<_, _>>()?;
    // YARN joins the parts into one shell line.
    if !parts.is_empty() {
        ctx.commands = vec![parts.join(" ")];
    }
    for (k, v) in entries(spec.get("environment"), "environment")? {
        let value = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        ctx.environment.insert(k, value);
    }
    for (k, v) in entries(spec.get("local-resources"), "local-resources")? {
        let url = v
            .get("resource")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("local resource '{k}' has no 'resource' URL"))?;
        let kind = match v.get("type").and_then(Value::as_str).unwrap_or("FILE") {
            t if t.eq_ignore_ascii_case("FILE") => LocalResourceKind::File,
            t if t.eq_ignore_ascii_case("ARCHIVE") => LocalResourceKind::Archive,
            t if t.eq_ignore_ascii_case("PATTERN") => LocalResourceKind::Pattern,
            t => return Err(format!("local resource '{k}' has unknown type '{t}'")),
        };
        ctx.local_resources.insert(
            k,
            LocalResource {
                url: url.to_string(),
                kind,
            },
        );
    }
    Ok(ctx)
}

/// The submission's `reservation-id` (Hadoop's `ApplicationSubmissionContextInfo`), checked
/// as Hadoop's `ReservationId.parseReservationId` checks it and printed back in its form.
fn reservation_id(obj: &serde_json::Map<String, Value>) -> Result<Option<String>, String> {
    let Some(text) = string(obj, "reservation-id")?.filter(|s| !s.trim().is_empty()) else {
        return Ok(None);
    };
    let id = text
        .trim()
        .parse::<weft_rm_core::weft_plan::ReservationId>()
        .map_err(|e| format!("Invalid ReservationId: {text} ({e})"))?;
    Ok(Some(id.to_string()))
}

/// The submission's Weft-only `weft-demand` (spec §3.4, "The AM at a scheduled time"): one
/// ResourceDescription or an array of them, read by the core as `POST /demands` reads its
/// `demands`.
fn weft_demand(obj: &serde_json::Map<String, Value>) -> Result<Option<Value>, String> {
    match obj.get("weft-demand") {
        None | Some(Value::Null) => Ok(None),
        Some(v @ (Value::Object(_) | Value::Array(_))) => Ok(Some(v.clone())),
        Some(other) => Err(format!(
            "'weft-demand' must be a ResourceDescription or an array of them, found {other}"
        )),
    }
}

/// Reads `POST /ws/v1/cluster/apps`: the id and the submission as `user` makes it.
pub(crate) fn submission(body: &[u8], user: &str) -> Result<(ApplicationId, Submission), String> {
    let v: Value = serde_json::from_slice(body).map_err(|e| format!("malformed JSON: {e}"))?;
    let obj = v
        .as_object()
        .ok_or("the submission must be a JSON object")?;
    let id_text = string(obj, "application-id")?.ok_or("'application-id' is required")?;
    let id = id_text
        .parse::<ApplicationId>()
        .map_err(|e| format!("Invalid ApplicationId: {id_text} ({e})"))?;
    let resource = match obj.get("resource") {
        Some(r) if !r.is_null() => {
            let r = r.as_object().ok_or("'resource' must be an object")?;
            Resource::new(
                int(r, "memory")?.ok_or("'resource' needs 'memory'")?,
                int(r, "vCores")?.ok_or("'resource' needs 'vCores'")?,
            )
        }
        _ => Resource::new(1024, 1),
    };
    let max_attempts = int(obj, "max-app-attempts")?.unwrap_or(0);
    let tags = one_or_many(obj.get("application-tags").and_then(|t| t.get("tag")))
        .into_iter()
        .filter_map(Value::as_str)
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    let sub = Submission {
        name: string(obj, "application-name")?.unwrap_or_default(),
        user: user.to_string(),
        queue: string(obj, "queue")?.filter(|q| !q.trim().is_empty()),
        application_type: string(obj, "application-type")?
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "YARN".to_string()),
        tags,
        priority: int(obj, "priority")?.unwrap_or(0).clamp(0, i32::MAX as i64) as i32,
        max_attempts: max_attempts.clamp(0, u32::MAX as i64) as u32,
        am_resource: resource,
        unmanaged_am: boolean(obj, "unmanaged-AM")?,
        launch: launch_context(obj.get("am-container-spec"))?,
        reservation_id: reservation_id(obj)?,
        demand: weft_demand(obj)?,
    };
    Ok((id, sub))
}

/// What an `AppInfo` needs beyond the app's own report.
pub(crate) struct AppContext {
    /// The RM's cluster timestamp.
    pub(crate) cluster_ts: u64,
    /// Now, for `elapsedTime`.
    pub(crate) now: Time,
    /// Resources of usable nodes, for `clusterUsagePercentage`.
    pub(crate) cluster_total: Resource,
    /// Node id -> NM web address (only nodes that announced one).
    pub(crate) node_http: BTreeMap<String, String>,
    /// Leaf queue -> what `queueUsagePercentage` divides by (the fair share; Capacity: the
    /// queue's effective capacity).
    pub(crate) queue_fair: BTreeMap<String, Resource>,
    /// Leaf queue -> its resource pool (queues in one), the partition its apps run in.
    pub(crate) queue_pool: BTreeMap<String, String>,
}

/// `part / whole` in percent of memory (YARN's usage percentages are memory-based); 0 when
/// there is no whole.
fn percent(part: Resource, whole: Resource) -> f64 {
    if whole.memory_mb() <= 0 {
        0.0
    } else {
        part.memory_mb() as f64 * 100.0 / whole.memory_mb() as f64
    }
}

/// The NM log page of a container, as YARN links it.
pub(crate) fn log_url(node_http: &str, container: &ContainerId, user: &str) -> String {
    format!("http://{node_http}/node/containerlogs/{container}/{user}")
}

/// The `timeouts` object: Weft sets no application lifetimes, so LIFETIME is unlimited.
pub(crate) fn timeout_info() -> Value {
    json!({"type": "LIFETIME", "expiryTime": "UNLIMITED", "remainingTimeInSeconds": -1})
}

/// `AppInfo` (the object inside `{"app": ...}`); `deselects` drops field groups
/// (`deSelects` of `/apps`).
pub(crate) fn app_info(r: &AppReport, ctx: &AppContext, deselects: &BTreeSet<String>) -> Value {
    let started = r.submit_time.as_millis();
    let finished = r.finish_time.map_or(0, Time::as_millis);
    let elapsed = if finished > 0 {
        finished.saturating_sub(started)
    } else {
        ctx.now.as_millis().saturating_sub(started)
    };
    let tracking_ui = match r.state {
        AppState::Running => "ApplicationMaster",
        s if s.is_final() => "History",
        _ => "UNASSIGNED",
    };
    let queue_fair = ctx
        .queue_fair
        .get(&r.queue)
        .copied()
        .unwrap_or(Resource::ZERO);
    let mut o = json!({
        "id": r.id.to_string(),
        "user": r.user,
        "name": r.name,
        "queue": r.queue,
        "state": state_name(r.state),
        "finalStatus": final_name(r.final_status),
        "progress": f64::from(r.progress) * 100.0,
        "trackingUI": tracking_ui,
        "diagnostics": r.diagnostics,
        "clusterId": ctx.cluster_ts,
        "applicationType": r.application_type,
        "applicationTags": r.tags.iter().cloned().collect::<Vec<_>>().join(","),
        "priority": r.priority,
        "startedTime": started,
        "launchTime": r.launch_time.map_or(0, Time::as_millis),
        "finishedTime": finished,
        "elapsedTime": elapsed,
        "allocatedMB": r.allocated.memory_mb(),
        "allocatedVCores": r.allocated.vcores(),
        "reservedMB": 0,
        "reservedVCores": 0,
        "runningContainers": r.running_containers,
        "memorySeconds": r.aggregate.memory_mb_seconds,
        "vcoreSeconds": r.aggregate.vcore_seconds,
        "queueUsagePercentage": percent(r.allocated, queue_fair),
        "clusterUsagePercentage": percent(r.allocated, ctx.cluster_total),
        "preemptedResourceMB": r.preemption.resource.memory_mb(),
        "preemptedResourceVCores": r.preemption.resource.vcores(),
        "numNonAMContainerPreempted": r.preemption.non_am_containers,
        "numAMContainerPreempted": r.preemption.am_containers,
        "preemptedMemorySeconds": r.preemption.memory_mb_seconds,
        "preemptedVcoreSeconds": r.preemption.vcore_seconds,
        "logAggregationStatus": "DISABLED",
        "unmanagedApplication": false,
    });
    let Some(map) = o.as_object_mut() else {
        return o;
    };
    // An app's partition is its queue's resource pool (resource-pools spec §6), for the AM too.
    let partition = ctx.queue_pool.get(&r.queue).map_or("", String::as_str);
    if !deselects.contains("appNodeLabelExpression") {
        map.insert("appNodeLabelExpression".into(), json!(partition));
    }
    if !deselects.contains("amNodeLabelExpression") {
        map.insert("amNodeLabelExpression".into(), json!(partition));
    }
    if !deselects.contains("timeouts") {
        map.insert("timeouts".into(), json!({"timeout": [timeout_info()]}));
    }
    if let Some(url) = &r.tracking_url {
        if tracking_ui != "UNASSIGNED" {
            map.insert("trackingUrl".into(), json!(url));
        }
    }
    if let Some(a) = &r.current_attempt {
        map.insert("currentAppAttemptId".into(), json!(a.id.to_string()));
        if let Some(node) = &a.am_node {
            map.insert("masterNodeId".into(), json!(node));
            if let Some(http) = ctx.node_http.get(node) {
                map.insert("amHostHttpAddress".into(), json!(http));
                if let Some(c) = &a.am_container {
                    map.insert("amContainerLogs".into(), json!(log_url(http, c, &r.user)));
                }
            }
        }
        if let Some(c) = &a.am_container {
            map.insert("amContainerId".into(), json!(c.to_string()));
        }
        if let Some((host, port)) = &a.am_rpc {
            map.insert("amRPCAddress".into(), json!(format!("{host}:{port}")));
        }
    }
    o
}

/// YARN's `YarnApplicationAttemptState` name.
pub(crate) fn attempt_state_name(s: AttemptState) -> String {
    format!("{s:?}").to_uppercase()
}

/// One element of `appAttempts.appAttempt` (the RM's `AppAttemptInfo`).
pub(crate) fn attempt_info(
    a: &AttemptReport,
    user: &str,
    node_http: &BTreeMap<String, String>,
) -> Value {
    let node = a.am_node.clone().unwrap_or_default();
    let http = a
        .am_node
        .as_ref()
        .and_then(|n| node_http.get(n))
        .cloned()
        .unwrap_or_default();
    let logs = match (&a.am_container, http.is_empty()) {
        (Some(c), false) => log_url(&http, c, user),
        _ => String::new(),
    };
    json!({
        "id": a.id.attempt,
        "appAttemptId": a.id.to_string(),
        "startTime": a.start_time.as_millis(),
        "finishedTime": a.finish_time.map_or(0, Time::as_millis),
        "containerId": a.am_container.map(|c| c.to_string()).unwrap_or_default(),
        "nodeHttpAddress": http,
        "nodeId": node,
        "logsLink": logs,
        "blacklistedNodes": "",
        "nodesBlacklistedBySystem": "",
        "exportPorts": "",
        "appAttemptState": attempt_state_name(a.state),
    })
}

/// `{"appAttempt": ...}` of one attempt (server-common `AppAttemptInfo`); unknown fields are
/// left out rather than nulled.
pub(crate) fn attempt_detail(a: &AttemptReport, tracking_url: Option<&str>) -> Value {
    let mut o = json!({
        "appAttemptId": a.id.to_string(),
        "appAttemptState": attempt_state_name(a.state),
        "diagnosticsInfo": a.diagnostics,
        "startedTime": a.start_time.as_millis(),
        "finishedTime": a.finish_time.map_or(0, Time::as_millis),
    });
    let Some(map) = o.as_object_mut() else {
        return o;
    };
    if let Some((host, port)) = &a.am_rpc {
        map.insert("host".into(), json!(host));
        map.insert("rpcPort".into(), json!(port));
    }
    if let Some(url) = tracking_url {
        map.insert("trackingUrl".into(), json!(url));
        map.insert("originalTrackingUrl".into(), json!(url));
    }
    if let Some(c) = &a.am_container {
        map.insert("amContainerId".into(), json!(c.to_string()));
    }
    o
}

/// One container (server-common `ContainerInfo`). The core keeps no container start times,
/// so the time fields are 0 ("not known"), as YARN shows for containers not started yet.
pub(crate) fn container_info(c: &ContainerReport, user: &str) -> Value {
    let mut o = json!({
        "containerId": c.id.to_string(),
        "allocatedMB": c.resource.memory_mb(),
        "allocatedVCores": c.resource.vcores(),
        "assignedNodeId": c.node_id,
        "nodeId": c.node_id,
        "priority": c.priority,
        "startedTime": c.start_time.as_millis(),
        "finishedTime": c.finish_time.map_or(0, |t| t.as_millis()),
        // Ended containers only: a live one's elapsed time would need a clock read here.
        "elapsedTime": c
            .finish_time
            .map_or(0, |t| t.as_millis().saturating_sub(c.start_time.as_millis())),
        "diagnosticsInfo": c.diagnostics,
        "containerExitStatus": c.exit_status.unwrap_or(0),
        "containerState": c.state.container_state(),
    });
    if let (Some(map), Some(http)) = (o.as_object_mut(), &c.node_http_address) {
        map.insert("nodeHttpAddress".into(), json!(http));
        map.insert("logUrl".into(), json!(log_url(http, &c.id, user)));
    }
    o
}

/// `ClusterMetricsInfo` (the object inside `{"clusterMetrics": ...}`).
pub(crate) fn cluster_metrics(m: &ClusterMetrics) -> Value {
    let pct = |used: i64, total: i64| {
        if total <= 0 {
            0
        } else {
            (used as f64 * 100.0 / total as f64) as i64
        }
    };
    json!({
        "appsSubmitted": m.apps_submitted,
        "appsCompleted": m.apps_completed,
        "appsPending": m.apps_pending,
        "appsRunning": m.apps_running,
        "appsFailed": m.apps_failed,
        "appsKilled": m.apps_killed,
        "reservedMB": m.reserved.memory_mb(),
        "availableMB": m.available.memory_mb(),
        "allocatedMB": m.allocated.memory_mb(),
        "pendingMB": m.pending.memory_mb(),
        "reservedVirtualCores": m.reserved.vcores(),
        "availableVirtualCores": m.available.vcores(),
        "allocatedVirtualCores": m.allocated.vcores(),
        "pendingVirtualCores": m.pending.vcores(),
        "containersAllocated": m.containers_allocated,
        "containersReserved": m.containers_reserved,
        "containersPending": m.containers_pending,
        "totalMB": m.total.memory_mb(),
        "totalVirtualCores": m.total.vcores(),
        "utilizedMBPercent": pct(m.allocated.memory_mb(), m.total.memory_mb()),
        "utilizedVirtualCoresPercent": pct(m.allocated.vcores(), m.total.vcores()),
        "totalNodes": m.total_nodes,
        "lostNodes": m.lost_nodes,
        "unhealthyNodes": m.unhealthy_nodes,
        "decommissioningNodes": 0,
        "decommissionedNodes": m.decommissioned_nodes,
        "rebootedNodes": 0,
        "activeNodes": m.active_nodes,
        "shutdownNodes": m.shutdown_nodes,
    })
}

/// `NodeInfo` (the object inside `{"node": ...}`).
pub(crate) fn node_info(n: &NodeInfo) -> Value {
    let host = n
        .node_id
        .rsplit_once(':')
        .map_or(n.node_id.as_str(), |(h, _)| h);
    let avail = n.capability.saturating_sub(n.used);
    json!({
        "rack": n.rack,
        "state": n.state.as_str(),
        "id": n.node_id,
        "nodeHostName": host,
        "nodeHTTPAddress": n.http_address,
        "lastHealthUpdate": n.last_heartbeat.as_millis(),
        "version": env!("CARGO_PKG_VERSION"),
        "healthReport": n.health_report,
        "healthStatus": if n.state == weft_rm_core::NodeState::Unhealthy { "Unhealthy" } else { "Healthy" },
        "numContainers": n.containers,
        "usedMemoryMB": n.used.memory_mb(),
        "availMemoryMB": avail.memory_mb(),
        "usedVirtualCores": n.used.vcores(),
        "availableVirtualCores": avail.vcores(),
        "numRunningOpportContainers": 0,
        "usedMemoryOpportGB": 0,
        "usedVirtualCoresOpport": 0,
        "numQueuedContainers": 0,
        "nodeLabels": n.label.iter().collect::<Vec<_>>(),
        "usedResource": resource(n.used),
        "availableResource": resource(avail),
        "totalResource": resource(n.capability),
    })
}

/// `ClusterInfo` (the object inside `{"clusterInfo": ...}`).
pub(crate) fn cluster_info(cluster_ts: u64, started_on: u64) -> Value {
    let version = env!("CARGO_PKG_VERSION");
    // Tools pick API features from the Hadoop version: announce the one Weft's API follows,
    // and Weft's own version in the build strings.
    let build = format!("{HADOOP_API_VERSION} from weft {version}");
    let built_on = option_env!("WEFT_BUILD_DATE").unwrap_or("unknown");
    json!({
        "id": cluster_ts,
        "startedOn": started_on,
        "state": "STARTED",
        "haState": "ACTIVE",
        "rmStateStoreName": "weft_store::RedbStore",
        "resourceManagerVersion": HADOOP_API_VERSION,
        "resourceManagerBuildVersion": build,
        "resourceManagerVersionBuiltOn": built_on,
        "hadoopVersion": HADOOP_API_VERSION,
        "hadoopBuildVersion": build,
        "hadoopVersionBuiltOn": built_on,
        "haZooKeeperConnectionState": "ResourceManager HA is not enabled.",
    })
}

/// The Hadoop release whose REST API Weft's follows.
pub(crate) const HADOOP_API_VERSION: &str = "3.3.6";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn submission_in_hadoops_shape() {
        let body = br#"{
          "application-id": "application_1700000000000_0008",
          "application-name": "sleep-test",
          "queue": "root.default",
          "am-container-spec": {
            "local-resources": {"entry": {"key": "run.sh", "value": {"resource": "file:///srv/run.sh", "type": "FILE"}}},
            "environment": {"entry": [{"key": "MODE", "value": "test"}]},
            "commands": {"command": ["bash", "run.sh"]}
          },
          "max-app-attempts": 3,
          "resource": {"memory": 2048, "vCores": 2},
          "application-tags": {"tag": "Smoke"}
        }"#;
        let (id, s) = submission(body, "alice").unwrap();
        assert_eq!(id.seq, 8);
        assert_eq!((s.user.as_str(), s.name.as_str()), ("alice", "sleep-test"));
        assert_eq!(s.queue.as_deref(), Some("root.default"));
        assert_eq!(s.launch.commands, vec!["bash run.sh".to_string()]);
        assert_eq!(s.launch.environment["MODE"], "test");
        assert_eq!(s.launch.local_resources["run.sh"].url, "file:///srv/run.sh");
        assert_eq!((s.max_attempts, s.am_resource), (3, Resource::new(2048, 2)));
        assert_eq!(s.application_type, "YARN");
        assert!(s.tags.contains("smoke"));
    }

    #[test]
    fn bad_submissions_say_why() {
        for (body, needle) in [
            (&b"{not json"[..], "malformed JSON"),
            (b"[]", "JSON object"),
            (b"{}", "application-id"),
            (br#"{"application-id":"app_1"}"#, "Invalid ApplicationId"),
            (br#"{"application-id":"application_1_0001","resource":{"memory":"x","vCores":1}}"#, "memory"),
            (br#"{"application-id":"application_1_0001","am-container-spec":{"local-resources":{"entry":[{"key":"a"}]}}}"#, "value"),
        ] {
            let e = submission(body, "u").unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
    }

    fn report(state: AppState) -> AppReport {
        let id = ApplicationId {
            cluster_ts: 7,
            seq: 1,
        };
        let attempt = weft_types::yarn_id::AttemptId {
            app: id,
            attempt: 1,
        };
        AppReport {
            id,
            name: "n".into(),
            user: "alice".into(),
            queue: "root.a".into(),
            state,
            final_status: FinalStatus::Undefined,
            diagnostics: String::new(),
            application_type: "YARN".into(),
            tags: ["x".to_string(), "a".to_string()].into(),
            priority: 0,
            progress: 0.5,
            submit_time: Time(1_000),
            launch_time: None,
            finish_time: None,
            current_attempt: Some(AttemptReport {
                id: attempt,
                state: AttemptState::Running,
                am_container: Some(ContainerId {
                    app: id,
                    attempt: 1,
                    n: 1,
                }),
                am_node: Some("h:1".into()),
                am_rpc: None,
                start_time: Time(1_000),
                finish_time: None,
                diagnostics: String::new(),
            }),
            allocated: Resource::new(1024, 1),
            running_containers: 1,
            tracking_url: Some("http://am/".into()),
            aggregate: Default::default(),
            preemption: Default::default(),
        }
    }

    fn ctx(node_http: &[(&str, &str)]) -> AppContext {
        AppContext {
            cluster_ts: 7,
            now: Time(4_000),
            cluster_total: Resource::new(4096, 4),
            node_http: node_http
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            queue_fair: [("root.a".to_string(), Resource::new(2048, 2))].into(),
            queue_pool: BTreeMap::new(),
        }
    }

    #[test]
    fn app_info_carries_the_preemption_figures_with_hadoops_names() {
        let mut r = report(AppState::Running);
        r.preemption = weft_rm_core::PreemptionReport {
            resource: Resource::new(3072, 3),
            am_containers: 1,
            non_am_containers: 2,
            memory_mb_seconds: 61_440,
            vcore_seconds: 60,
        };
        let o = app_info(&r, &ctx(&[]), &BTreeSet::new());
        assert_eq!(o["preemptedResourceMB"], 3072);
        assert_eq!(o["preemptedResourceVCores"], 3);
        assert_eq!(o["numAMContainerPreempted"], 1);
        assert_eq!(o["numNonAMContainerPreempted"], 2);
        assert_eq!(o["preemptedMemorySeconds"], 61_440);
        assert_eq!(o["preemptedVcoreSeconds"], 60);
    }

    #[test]
    fn app_info_leaves_out_what_is_not_known() {
        let accepted = app_info(&report(AppState::Accepted), &ctx(&[]), &BTreeSet::new());
        assert_eq!(accepted["trackingUI"], "UNASSIGNED");
        assert!(accepted.get("trackingUrl").is_none());
        assert!(accepted.get("amContainerLogs").is_none());
        assert!(accepted.get("amHostHttpAddress").is_none());
        assert!(accepted.get("amRPCAddress").is_none());
        assert_eq!(accepted["masterNodeId"], "h:1");
        assert_eq!(accepted["applicationTags"], "a,x");
        assert_eq!(accepted["progress"], 50.0);
        assert_eq!(accepted["elapsedTime"], 3_000);
        assert_eq!(accepted["clusterUsagePercentage"], 25.0);
        assert_eq!(accepted["queueUsagePercentage"], 50.0);
        let running = app_info(
            &report(AppState::Running),
            &ctx(&[("h:1", "h:8042")]),
            &["timeouts".to_string()].into(),
        );
        assert_eq!(running["trackingUI"], "ApplicationMaster");
        assert_eq!(running["trackingUrl"], "http://am/");
        assert_eq!(running["amHostHttpAddress"], "h:8042");
        assert_eq!(
            running["amContainerLogs"],
            "http://h:8042/node/containerlogs/container_7_0001_01_000001/alice"
        );
        assert!(running.get("timeouts").is_none());
        assert!(accepted.get("timeouts").is_some());
    }
}
