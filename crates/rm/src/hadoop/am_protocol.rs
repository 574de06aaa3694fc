//! `ApplicationMasterProtocol` (AM → RM) over Hadoop IPC: registerApplicationMaster,
//! allocate and finishApplicationMaster with YARN's semantics, on rm-core's `am_*` inputs (the
//! same ones Weft's gRPC AM service makes).
//!
//! **Who the AM is.** Hadoop's RM learns the attempt from the AMRMToken the AM authenticates
//! with over DIGEST-MD5: the token's user is the attempt id string. Weft's Hadoop IPC servers
//! are simple-auth only (wire spec §3.2), so the connection context's user stands for that
//! token's user: an AM connects as its attempt id (`appattempt_<ts>_<app>_<n>`, e.g. by running
//! its AMRMClient in `UserGroupInformation.createRemoteUser(attemptId).doAs`, or with
//! `HADOOP_USER_NAME` set to it). An AM that connects as its submitter instead (Spark's AM runs
//! as `SPARK_USER`, and holds no AMRMToken until Weft's NM writes one into its token file) is
//! taken for the one current attempt of that user's live applications whose AM container is
//! allocated, launched or registered; with none or several the call is refused
//! (AccessControlException saying which), since the user alone cannot tell them apart. Simple
//! auth trusts the claimed user either way, as it does on the client port. The attempt must
//! be its app's current, live one; anything else is refused with the exception Hadoop's
//! ApplicationMasterService throws in that case.
//!
//! **Per-attempt state** Hadoop keeps in its ApplicationMasterService and Weft keeps here, not
//! in rm-core (it is about the wire, and an RM restart loses it in Hadoop too, which makes the
//! AM re-register): whether the AM registered with this RM process, the response id and last
//! answer (a repeated call gets the last answer again; any other id is "out of sync"), and the
//! AM's ask table ([`AskTable`]).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use prost::Message;
use weft_hadoop_ipc::{decode_request, exception, CallFuture, Caller, Protocol, RpcError};
use weft_proto::hadoop::yarn::*;
use weft_proto::hadoop::{self as wire, AM_PROTOCOL};
use weft_proto::hadoop_tokens;
use weft_rm_core::{AllocateRequest, FinalStatus, RmError};
use weft_types::yarn_id::{AttemptId, ContainerId};
use weft_types::Time;

use super::am_records::{self, NodeDirectory};
use super::ask_table::AskTable;
use super::records;
use crate::driver::{Driver, DriverError};

/// The exception classes of this protocol beyond the shared ones.
mod class {
    pub(super) const INVALID_AM_REQUEST: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException";
    pub(super) const NOT_REGISTERED: &str =
        "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException";
    pub(super) const INVALID_RELEASE: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidContainerReleaseException";
    pub(super) const INVALID_BLACKLIST: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidResourceBlacklistRequestException";
}

/// One registered attempt's wire state.
struct Session {
    /// The response id the next allocate must carry (Hadoop's `lastResponse.responseId`).
    expected: i32,
    /// The last answer, encoded; a call one id behind gets it again.
    last: Vec<u8>,
    asks: AskTable,
}

/// The attempts registered with this RM process. An entry leaves when its AM finishes, and
/// entries of attempts that ended otherwise (AM crash, kill) are dropped at each registration,
/// so the map holds at most the live attempts.
type Sessions = Arc<Mutex<HashMap<AttemptId, Arc<tokio::sync::Mutex<Session>>>>>;

/// The protocol's handlers. Unknown methods fail with `RpcNoSuchMethodException`.
#[derive(Clone)]
pub(crate) struct AmProtocol {
    pub(crate) driver: Driver,
    /// The RM's cluster timestamp, Hadoop's `rmIdentifier` in container tokens.
    pub(crate) rm_identifier: i64,
    sessions: Sessions,
    /// (submitter, connection) → the attempt it was taken for (see the module doc).
    resolved: Arc<Mutex<HashMap<(String, SocketAddr), AttemptId>>>,
}

impl AmProtocol {
    pub(crate) fn new(driver: Driver, rm_identifier: i64) -> AmProtocol {
        AmProtocol {
            driver,
            rm_identifier,
            sessions: Sessions::default(),
            resolved: Arc::default(),
        }
    }
}

impl Protocol for AmProtocol {
    fn name(&self) -> &'static str {
        AM_PROTOCOL
    }

    fn call(&self, caller: Caller, method: &str, request: Vec<u8>) -> CallFuture {
        let this = self.clone();
        let method = method.to_string();
        Box::pin(async move {
            let attempt = this.attempt_of(&caller).await?;
            match method.as_str() {
                "registerApplicationMaster" => this.register(attempt, &request).await,
                "allocate" => this.allocate(attempt, &request).await,
                "finishApplicationMaster" => this.finish(attempt, &request).await,
                other => Err(RpcError::no_such_method(AM_PROTOCOL, other)),
            }
        })
    }
}

/// The attempt a connection's user names, when it is an attempt id.
fn attempt_named(user: &str) -> Option<AttemptId> {
    user.parse::<AttemptId>().ok()
}

/// Connections already resolved from a submitter's name to an attempt, at most this many.
const MAX_RESOLVED: usize = 4096;

fn stopped(e: DriverError) -> RpcError {
    RpcError::yarn(e.to_string())
}

fn not_in_cache(attempt: AttemptId) -> RpcError {
    RpcError::new(
        class::INVALID_AM_REQUEST,
        format!("Application doesn't exist in cache {attempt}"),
    )
}

fn not_registered_for_allocate(attempt: AttemptId) -> RpcError {
    RpcError::new(
        class::NOT_REGISTERED,
        format!(
            "AM is not registered for known application attempt: {attempt} or RM had restarted after AM registered.  AM should re-register."
        ),
    )
}

/// Hadoop's `AMRMClientUtils.getNextResponseId`: 0 to `i32::MAX`, round and round.
fn next_response_id(id: i32) -> i32 {
    id.wrapping_add(1) & i32::MAX
}

/// rm-core's refusal of an AM call as the exception Hadoop's ApplicationMasterService throws.
fn remote(e: RmError, attempt: AttemptId) -> RpcError {
    let message = e.to_string();
    match e {
        RmError::UnknownAttempt(_) | RmError::InvalidToken(_) => RpcError::new(
            exception::APPLICATION_ATTEMPT_NOT_FOUND,
            format!("Application attempt {attempt} doesn't exist in ApplicationMasterService cache."),
        ),
        RmError::NotRegistered(_) => not_registered_for_allocate(attempt),
        RmError::AboveMaximum { .. } => RpcError::new(exception::INVALID_RESOURCE_REQUEST, message),
        RmError::UnknownContainer(c) => RpcError::new(
            class::INVALID_RELEASE,
            format!("Cannot release container : {c} not belonging to this application attempt : {attempt}"),
        ),
        RmError::InvalidRequest(m) if m.contains("blacklist") => {
            RpcError::new(class::INVALID_BLACKLIST, m)
        }
        RmError::InvalidRequest(m) if m.contains("AM container") => {
            RpcError::new(class::INVALID_RELEASE, m)
        }
        RmError::InvalidRequest(m) => RpcError::new(exception::INVALID_RESOURCE_REQUEST, m),
        _ => RpcError::yarn(message),
    }
}

/// What one call brings back from the driver: the core's answer with the node directory its
/// containers and tokens need, and the time.
struct Answer<T> {
    value: T,
    nodes: NodeDirectory,
    now: Time,
}

impl AmProtocol {
    fn session(&self, attempt: &AttemptId) -> Option<Arc<tokio::sync::Mutex<Session>>> {
        self.sessions
            .lock()
            .ok()
            .and_then(|s| s.get(attempt).cloned())
    }

    fn end_session(&self, attempt: &AttemptId) {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(attempt);
        }
        if let Ok(mut r) = self.resolved.lock() {
            r.retain(|_, a| a != attempt);
        }
    }

    /// The attempt a call is for (see the module doc): the attempt the user names, else the
    /// submitter's one attempt with an AM, remembered for the connection.
    async fn attempt_of(&self, caller: &Caller) -> Result<AttemptId, RpcError> {
        if let Some(attempt) = attempt_named(&caller.user) {
            return Ok(attempt);
        }
        let key = (caller.user.clone(), caller.peer);
        if let Some(a) = self.resolved.lock().ok().and_then(|r| r.get(&key).copied()) {
            return Ok(a);
        }
        let user = caller.user.clone();
        let found = self
            .driver
            .call(move |core, _| core.am_attempts_of_user(&user))
            .await
            .map_err(stopped)?;
        let refuse = |why: String| {
            RpcError::new(
                exception::ACCESS_CONTROL,
                format!(
                    "the ApplicationMasterProtocol caller '{}' {why}: an AM connects as its attempt id (appattempt_<cluster ts>_<app>_<attempt>, the user of Hadoop's AMRMToken) or as the submitter of an application with exactly one AM",
                    caller.user
                ),
            )
        };
        match found.as_slice() {
            [one] => {
                if let Ok(mut r) = self.resolved.lock() {
                    if r.len() >= MAX_RESOLVED {
                        r.clear();
                    }
                    r.insert(key, *one);
                }
                Ok(*one)
            }
            [] => Err(refuse(
                "is not an application attempt and has no application whose AM is running".into(),
            )),
            many => Err(refuse(format!(
                "is not an application attempt and has {} applications whose AM is running ({})",
                many.len(),
                many.iter()
                    .take(5)
                    .map(AttemptId::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ))),
        }
    }
}

impl AmProtocol {
    async fn register(&self, attempt: AttemptId, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: RegisterApplicationMasterRequestProto =
            decode_request("registerApplicationMaster", request)?;
        if self.session(&attempt).is_some() {
            return Err(RpcError::new(
                class::INVALID_AM_REQUEST,
                format!("Application Master is already registered : {}", attempt.app),
            ));
        }
        let host = req.host.unwrap_or_default();
        let port = u32::try_from(req.rpc_port.unwrap_or(0)).unwrap_or(0);
        let url = req.tracking_url;
        let known: Vec<AttemptId> = self
            .sessions
            .lock()
            .map(|s| s.keys().copied().collect())
            .unwrap_or_default();
        let (answer, live) = self
            .driver
            .call(move |core, now| {
                let live: Vec<AttemptId> = known
                    .into_iter()
                    .filter(|a| core.live_attempt_token(a).is_some())
                    .collect();
                let value = match core.live_attempt_token(&attempt) {
                    None => Err(not_in_cache(attempt)),
                    Some(token) => core
                        .am_register(now, attempt, &token, &host, port, url)
                        .map_err(|e| remote(e, attempt)),
                };
                let nodes = NodeDirectory::of(core);
                (Answer { value, nodes, now }, live)
            })
            .await
            .map_err(stopped)?;
        let reply = answer.value?;
        let session = Session {
            expected: 0,
            last: AllocateResponseProto {
                response_id: Some(0),
                ..Default::default()
            }
            .encode_to_vec(),
            asks: AskTable::default(),
        };
        if let Ok(mut s) = self.sessions.lock() {
            s.retain(|a, _| live.contains(a));
            s.insert(attempt, Arc::new(tokio::sync::Mutex::new(session)));
        }
        tracing::info!(%attempt, "AM registered over Hadoop IPC");
        let a = &answer.nodes;
        Ok(RegisterApplicationMasterResponseProto {
            maximum_capability: Some(wire::resource_proto(reply.maximum_capability)),
            queue: Some(reply.queue),
            containers_from_previous_attempts: reply
                .running_containers
                .iter()
                .map(|c| am_records::container(c, a, answer.now, self.rm_identifier))
                .collect(),
            nm_tokens_from_previous_attempts: am_records::nm_tokens(&reply.nm_tokens, a),
            scheduler_resource_types: vec![
                SchedulerResourceTypes::Memory as i32,
                SchedulerResourceTypes::Cpu as i32,
            ],
            // What the AM's client re-initializes its resource types from (Hadoop 3 sends
            // the cluster's; Weft schedules memory and vcores).
            resource_types: vec![
                ResourceTypeInfoProto {
                    name: "memory-mb".into(),
                    units: Some("Mi".into()),
                    r#type: Some(ResourceTypesProto::Countable as i32),
                },
                ResourceTypeInfoProto {
                    name: "vcores".into(),
                    units: Some(String::new()),
                    r#type: Some(ResourceTypesProto::Countable as i32),
                },
            ],
            ..Default::default()
        }
        .encode_to_vec())
    }

    async fn allocate(&self, attempt: AttemptId, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: AllocateRequestProto = decode_request("allocate", request)?;
        let Some(session) = self.session(&attempt) else {
            let live = self
                .driver
                .call(move |core, _| core.live_attempt_token(&attempt).is_some())
                .await
                .map_err(stopped)?;
            return Err(if live {
                not_registered_for_allocate(attempt)
            } else {
                remote(RmError::UnknownAttempt(attempt.to_string()), attempt)
            });
        };
        // One call of an attempt at a time, as Hadoop locks per attempt: the id check, the
        // core's answer and the stored answer go together.
        let mut session = session.lock().await;
        let sent = req.response_id.unwrap_or(0);
        if next_response_id(sent) == session.expected {
            return Ok(session.last.clone());
        }
        if sent != session.expected {
            return Err(RpcError::new(
                class::INVALID_AM_REQUEST,
                format!(
                    "Invalid responseId in AllocateRequest from application attempt: {attempt} expect responseId to be {} but get {sent}",
                    session.expected
                ),
            ));
        }
        if !req.scheduling_requests.is_empty() {
            return Err(RpcError::new(
                exception::INVALID_RESOURCE_REQUEST,
                "scheduling requests (placement constraints) are not supported by Weft: ask with resource requests",
            ));
        }
        let (asks_after, asks) = session
            .asks
            .apply(&req.ask)
            .map_err(|e| RpcError::new(exception::INVALID_RESOURCE_REQUEST, e.0))?;
        let releases = req
            .release
            .iter()
            .map(|c| wire::container_id(Some(c)))
            .collect::<Result<Vec<ContainerId>, _>>()
            .map_err(|e| RpcError::new(class::INVALID_RELEASE, e.to_string()))?;
        let blacklist = req.blacklist_request.clone().unwrap_or_default();
        let core_request = AllocateRequest {
            asks,
            releases,
            blacklist_additions: blacklist.blacklist_additions,
            blacklist_removals: blacklist.blacklist_removals,
            progress: progress(req.progress),
            // Hadoop's AM protocol has no gang asks (YARN-624 never landed): Weft's own field.
            gangs: Vec::new(),
            // Nor demands: on Hadoop's wire they come through REST (time-aware-demands §3.6).
            demands: Vec::new(),
            kill_demands: Vec::new(),
            complete_demands: Vec::new(),
        };
        let answer = self
            .driver
            .call_periodic(move |core, now| {
                let value = match core.live_attempt_token(&attempt) {
                    None => Err(RmError::UnknownAttempt(attempt.to_string())),
                    Some(token) => core.am_allocate(now, attempt, &token, core_request),
                };
                let nodes = NodeDirectory::of(core);
                Answer { value, nodes, now }
            })
            .await
            .map_err(stopped)?;
        let reply = match answer.value {
            Ok(r) => r,
            Err(e) => {
                if matches!(e, RmError::UnknownAttempt(_)) {
                    drop(session);
                    self.end_session(&attempt);
                }
                return Err(remote(e, attempt));
            }
        };
        let a = &answer.nodes;
        let expected = next_response_id(session.expected);
        let response = AllocateResponseProto {
            response_id: Some(expected),
            allocated_containers: reply
                .allocated
                .iter()
                .map(|c| am_records::container(c, a, answer.now, self.rm_identifier))
                .collect(),
            completed_container_statuses: reply
                .completed
                .iter()
                .map(am_records::completed_status)
                .collect(),
            limit: Some(wire::resource_proto(reply.headroom)),
            updated_nodes: reply
                .updated_nodes
                .iter()
                .map(|n| NodeReportProto {
                    node_id: Some(hadoop_tokens::node_id_proto(a.address(&n.node_id))),
                    http_address: Some(a.http(&n.node_id).to_string()),
                    node_state: Some(records::node_state(n.state) as i32),
                    ..Default::default()
                })
                .collect(),
            num_cluster_nodes: Some(i32::try_from(reply.cluster_nodes).unwrap_or(i32::MAX)),
            preempt: am_records::preemption_message(&reply.preempt),
            nm_tokens: am_records::nm_tokens(&reply.nm_tokens, a),
            update_errors: req
                .update_requests
                .into_iter()
                .map(|u| UpdateContainerErrorProto {
                    reason: Some("container updates are not supported by Weft".into()),
                    update_request: Some(u),
                    current_container_version: Some(0),
                })
                .collect(),
            ..Default::default()
        };
        let encoded = response.encode_to_vec();
        session.expected = expected;
        session.last = encoded.clone();
        session.asks = asks_after;
        Ok(encoded)
    }

    async fn finish(&self, attempt: AttemptId, request: &[u8]) -> Result<Vec<u8>, RpcError> {
        let req: FinishApplicationMasterRequestProto =
            decode_request("finishApplicationMaster", request)?;
        let status = match req.final_application_status() {
            FinalApplicationStatusProto::AppSucceeded | FinalApplicationStatusProto::AppEnded => {
                FinalStatus::Succeeded
            }
            FinalApplicationStatusProto::AppFailed => FinalStatus::Failed,
            FinalApplicationStatusProto::AppKilled => FinalStatus::Killed,
            FinalApplicationStatusProto::AppUndefined => FinalStatus::Undefined,
        };
        let registered = self.session(&attempt).is_some();
        let diagnostics = req.diagnostics.unwrap_or_default();
        let url = req.tracking_url;
        let done = self
            .driver
            .call(move |core, now| {
                // Hadoop answers "unregistered" once the app's final state is stored, so an
                // AM repeating its finish call (AMRMClient loops until it is told so) ends.
                let ended = core
                    .app_report(&attempt.app)
                    .filter(|r| r.state.is_final())
                    .is_some_and(|r| r.current_attempt.is_some_and(|t| t.id == attempt));
                if ended {
                    return Ok(());
                }
                let Some(token) = core.live_attempt_token(&attempt) else {
                    return Err(not_in_cache(attempt));
                };
                if !registered {
                    return Err(RpcError::new(
                        class::NOT_REGISTERED,
                        format!(
                            "Application Master is trying to unregister before registering for: {}",
                            attempt.app
                        ),
                    ));
                }
                core.am_finish(now, attempt, &token, status, &diagnostics, url)
                    .map_err(|e| match e {
                        RmError::InvalidRequest(m) => RpcError::new(class::INVALID_AM_REQUEST, m),
                        other => remote(other, attempt),
                    })
            })
            .await
            .map_err(stopped)?;
        done?;
        self.end_session(&attempt);
        tracing::info!(%attempt, ?status, "AM unregistered over Hadoop IPC");
        Ok(FinishApplicationMasterResponseProto {
            is_unregistered: Some(true),
        }
        .encode_to_vec())
    }
}

/// The AM's progress as Hadoop's ApplicationMasterService filters it: NaN, negative and
/// negative infinity are 0, above 1 (and infinity) is 1.
fn progress(sent: Option<f32>) -> f32 {
    match sent {
        Some(p) if p.is_nan() => 0.0,
        Some(p) => p.clamp(0.0, 1.0),
        None => 0.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn response_ids_wrap_as_hadoops() {
        assert_eq!(next_response_id(0), 1);
        assert_eq!(next_response_id(-1), 0);
        assert_eq!(next_response_id(i32::MAX), 0);
    }

    #[test]
    fn progress_is_filtered_as_hadoop_does() {
        assert_eq!(progress(Some(f32::NAN)), 0.0);
        assert_eq!(progress(Some(f32::NEG_INFINITY)), 0.0);
        assert_eq!(progress(Some(-0.5)), 0.0);
        assert_eq!(progress(Some(0.25)), 0.25);
        assert_eq!(progress(Some(f32::INFINITY)), 1.0);
        assert_eq!(progress(None), 0.0);
    }

    #[test]
    fn a_user_that_is_an_attempt_id_names_it() {
        assert_eq!(
            attempt_named("appattempt_1700000000000_0001_000001")
                .unwrap()
                .to_string(),
            "appattempt_1700000000000_0001_000001"
        );
        assert_eq!(attempt_named("alice"), None);
    }
}
