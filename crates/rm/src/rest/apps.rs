//! `/ws/v1/cluster/apps/**` and `/appstatistics`: listing with filters, one app, its state
//! (kill), queue (move), priority, timeouts, attempts and containers, new-application and
//! submission.

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use weft_rm_core::{AppReport, AppState, RmCore};
use weft_sched::SchedulerKind;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::Time;

use super::auth::Caller;
use super::filters::{self, AppFilter, APP_STATES};
use super::json::{self, AppContext};
use super::{app_id, body_json, Params, Rest, RestError};

/// Node id -> NM web address, for nodes that announced one.
fn node_http(core: &RmCore) -> BTreeMap<String, String> {
    core.node_infos()
        .into_iter()
        .filter(|n| !n.http_address.is_empty())
        .map(|n| (n.node_id, n.http_address))
        .collect()
}

fn context(core: &RmCore, now: Time) -> AppContext {
    let mut queue_fair = BTreeMap::new();
    let mut queue_pool = BTreeMap::new();
    core.scheduler().visit_leaf_queues(|q| {
        queue_fair.insert(q.name.to_string(), q.app_usage_basis);
        if !q.pool.is_empty() {
            queue_pool.insert(q.name.to_string(), q.pool.to_string());
        }
    });
    AppContext {
        cluster_ts: core.cluster_timestamp(),
        now,
        cluster_total: core.cluster_resources().0,
        node_http: node_http(core),
        queue_fair,
        queue_pool,
    }
}

fn unknown_app(text: &str) -> RestError {
    RestError::not_found(format!("app with id: {text} not found"))
}

/// The report of the app named in the path: 400 for a malformed id, 404 for an unknown one.
async fn report(s: &Rest, text: &str) -> Result<AppReport, RestError> {
    let id = app_id(text)?;
    s.driver
        .call(move |core, _| core.app_report(&id))
        .await?
        .ok_or_else(|| unknown_app(text))
}

/// `GET /apps`.
pub(crate) async fn list(
    State(s): State<Rest>,
    Query(q): Params,
) -> Result<Json<Value>, RestError> {
    let filter = AppFilter::parse(&q)?;
    let (reports, ctx) = s
        .driver
        .call(|core, now| (core.app_reports(), context(core, now)))
        .await?;
    let matching: Vec<&AppReport> = reports.iter().filter(|r| filter.matches(r)).collect();
    let apps: Vec<Value> = filters::limited(&matching, filter.limit)
        .iter()
        .map(|r| json::app_info(r, &ctx, &filter.deselects))
        .collect();
    Ok(Json(json!({"apps": {"app": apps}})))
}

/// `GET /apps/{id}`.
pub(crate) async fn get_app(
    State(s): State<Rest>,
    Path(text): Path<String>,
) -> Result<Json<Value>, RestError> {
    let id = app_id(&text)?;
    let (r, ctx) = s
        .driver
        .call(move |core, now| (core.app_report(&id), context(core, now)))
        .await?;
    let r = r.ok_or_else(|| unknown_app(&text))?;
    Ok(Json(
        json!({"app": json::app_info(&r, &ctx, &Default::default())}),
    ))
}

/// `POST /apps/new-application`: the body is ignored (clients send none, or an empty one).
pub(crate) async fn new_application(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let (id, max) = s
        .driver
        .call(|core, now| (core.new_application(now), core.maximum_allocation()))
        .await?;
    Ok(Json(json!({
        "application-id": id.to_string(),
        "maximum-resource-capability": json::resource(max),
    })))
}

/// `POST /apps`: 202 with the app's URL in `Location`, empty body.
pub(crate) async fn submit(
    State(s): State<Rest>,
    Caller(who): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, RestError> {
    let (id, sub) = json::submission(&body, &who).map_err(RestError::bad_request)?;
    s.driver
        .call(move |core, now| core.submit(now, id, sub))
        .await??;
    tracing::info!(app = %id, "application submitted");
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let location = format!("http://{host}/ws/v1/cluster/apps/{id}");
    Ok((StatusCode::ACCEPTED, [(header::LOCATION, location)]).into_response())
}

/// `GET /apps/{id}/state`.
pub(crate) async fn get_state(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(json!({"state": json::state_name(r.state)})))
}

/// `PUT /apps/{id}/state` with `{"state":"KILLED"}`: kills as `user.name`, checked against the
/// queue's `aclAdministerApps` (403 when refused, and the app keeps running).
pub(crate) async fn put_state(
    State(s): State<Rest>,
    Path(text): Path<String>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    let id = app_id(&text)?;
    let v = body_json(&body)?;
    let target = v.get("state").and_then(Value::as_str).unwrap_or_default();
    if !target.eq_ignore_ascii_case("KILLED") {
        return Err(RestError::bad_request(
            "Only 'KILLED' is allowed as a target state.",
        ));
    }
    let state = s
        .driver
        .call(move |core, now| core.kill(now, id, Some(&who)))
        .await??;
    if state == AppState::Killed {
        tracing::info!(app = %id, "application killed");
    }
    Ok(Json(json!({"state": json::state_name(state)})))
}

/// `GET /apps/{id}/queue`.
pub(crate) async fn get_queue(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(json!({"queue": r.queue})))
}

/// `PUT /apps/{id}/queue` with `{"queue":"root.x"}`: moves a live app as `user.name` (403 when
/// the caller may not modify the app or its owner may not submit to the target).
pub(crate) async fn put_queue(
    State(s): State<Rest>,
    Path(text): Path<String>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    let id = app_id(&text)?;
    let v = body_json(&body)?;
    let Some(queue) = v.get("queue").and_then(Value::as_str).map(str::to_string) else {
        return Err(RestError::bad_request(
            "the body must be {\"queue\": \"<queue name>\"}",
        ));
    };
    let moved = s
        .driver
        .call(move |core, now| core.move_app(now, id, &queue, Some(&who)))
        .await??;
    tracing::info!(app = %id, queue = %moved, "application moved");
    Ok(Json(json!({"queue": moved})))
}

/// `GET /apps/{id}/priority`.
pub(crate) async fn get_priority(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(json!({"priority": r.priority})))
}

/// `PUT /apps/{id}/priority`: the Capacity Scheduler takes the new priority (capped at
/// `yarn.cluster.max-application-priority`, as Hadoop's); the Fair Scheduler orders apps by
/// fairness and the FIFO scheduler by submission (neither by priority, as in Hadoop), so they
/// refuse a change with a clear 400 naming the scheduler.
pub(crate) async fn put_priority(
    State(s): State<Rest>,
    Path(id): Path<String>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    let v = body_json(&body)?;
    let Some(wanted) = v.get("priority").and_then(Value::as_i64) else {
        return Err(RestError::bad_request(
            "the body must be {\"priority\": <integer>}",
        ));
    };
    if i64::from(r.priority) == wanted {
        return Ok(Json(json!({"priority": r.priority})));
    }
    let scheduler = match s.driver.call(|core, _| core.scheduler().kind()).await? {
        SchedulerKind::Fifo => "FIFO scheduler (which serves applications in submission order)",
        SchedulerKind::Fair => "Fair Scheduler",
        SchedulerKind::Capacity => {
            let priority = i32::try_from(wanted).map_err(|_| {
                RestError::bad_request(format!("priority {wanted} is out of range"))
            })?;
            let app = r.id;
            let now_in_force = s
                .driver
                .call(move |core, now| core.update_priority(now, app, priority, Some(&who)))
                .await??;
            tracing::info!(app = %app, priority = now_in_force, "application priority changed");
            return Ok(Json(json!({"priority": now_in_force})));
        }
    };
    Err(RestError::bad_request(format!(
        "Changing the priority of {} is not supported: Weft's {scheduler} keeps the \
         priority given at submission ({})",
        r.id, r.priority
    )))
}

/// `GET /apps/{id}/timeouts`.
pub(crate) async fn timeouts(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    report(&s, &id).await?;
    Ok(Json(
        json!({"timeouts": {"timeout": [json::timeout_info()]}}),
    ))
}

/// `GET /apps/{id}/timeouts/{type}`: only `LIFETIME` exists.
pub(crate) async fn timeout(
    State(s): State<Rest>,
    Path((id, kind)): Path<(String, String)>,
) -> Result<Json<Value>, RestError> {
    report(&s, &id).await?;
    if !kind.eq_ignore_ascii_case("LIFETIME") {
        return Err(RestError::bad_request(format!(
            "Invalid timeout type {kind}; the only type is LIFETIME"
        )));
    }
    Ok(Json(json!({"timeout": json::timeout_info()})))
}

/// An attempt id from the path, which must belong to `app`.
fn attempt_id(app: ApplicationId, text: &str) -> Result<AttemptId, RestError> {
    let id = text
        .parse::<AttemptId>()
        .map_err(|_| RestError::bad_request(format!("Invalid AppAttemptId: {text}")))?;
    if id.app != app {
        return Err(RestError::bad_request(format!(
            "{text} is not an attempt of {app}"
        )));
    }
    Ok(id)
}

/// `GET /apps/{id}/appattempts`.
pub(crate) async fn attempts(
    State(s): State<Rest>,
    Path(text): Path<String>,
) -> Result<Json<Value>, RestError> {
    let id = app_id(&text)?;
    let (found, http) = s
        .driver
        .call(move |core, _| {
            let found = core.app_report(&id).zip(core.attempt_reports(&id));
            (found, node_http(core))
        })
        .await?;
    let (r, attempts) = found.ok_or_else(|| unknown_app(&text))?;
    let list: Vec<Value> = attempts
        .iter()
        .map(|a| json::attempt_info(a, &r.user, &http))
        .collect();
    Ok(Json(json!({"appAttempts": {"appAttempt": list}})))
}

/// `GET /apps/{id}/appattempts/{aid}`.
pub(crate) async fn attempt(
    State(s): State<Rest>,
    Path((text, aid)): Path<(String, String)>,
) -> Result<Json<Value>, RestError> {
    let id = app_id(&text)?;
    let attempt = attempt_id(id, &aid)?;
    let found = s
        .driver
        .call(move |core, _| core.app_report(&id).zip(core.attempt_reports(&id)))
        .await?;
    let (r, attempts) = found.ok_or_else(|| unknown_app(&text))?;
    let a = attempts
        .iter()
        .find(|a| a.id == attempt)
        .ok_or_else(|| RestError::not_found(format!("appattempt with id: {aid} not found")))?;
    // The app's tracking URL belongs to its current attempt only.
    let current = r.current_attempt.as_ref().is_some_and(|c| c.id == a.id);
    let url = r.tracking_url.as_deref().filter(|_| current);
    Ok(Json(json!({"appAttempt": json::attempt_detail(a, url)})))
}

/// The containers of an attempt (live and recently ended), with the app's user (for log links).
async fn attempt_containers(
    s: &Rest,
    text: &str,
    aid: &str,
) -> Result<(String, Vec<weft_rm_core::ContainerReport>), RestError> {
    let id = app_id(text)?;
    let attempt = attempt_id(id, aid)?;
    let found = s
        .driver
        .call(move |core, _| {
            let user = core.app_report(&id).map(|r| r.user)?;
            let known = core
                .attempt_reports(&id)
                .is_some_and(|all| all.iter().any(|a| a.id == attempt));
            Some((user, known, core.container_reports(&id).unwrap_or_default()))
        })
        .await?;
    let (user, known, containers) = found.ok_or_else(|| unknown_app(text))?;
    if !known {
        return Err(RestError::not_found(format!(
            "appattempt with id: {aid} not found"
        )));
    }
    let mine = containers
        .into_iter()
        .filter(|c| c.attempt == attempt)
        .collect();
    Ok((user, mine))
}

/// `GET /apps/{id}/appattempts/{aid}/containers`.
pub(crate) async fn containers(
    State(s): State<Rest>,
    Path((text, aid)): Path<(String, String)>,
) -> Result<Json<Value>, RestError> {
    let (user, list) = attempt_containers(&s, &text, &aid).await?;
    let list: Vec<Value> = list
        .iter()
        .map(|c| json::container_info(c, &user))
        .collect();
    Ok(Json(json!({"containers": {"container": list}})))
}

/// `GET /apps/{id}/appattempts/{aid}/containers/{cid}`.
pub(crate) async fn container(
    State(s): State<Rest>,
    Path((text, aid, cid)): Path<(String, String, String)>,
) -> Result<Json<Value>, RestError> {
    let wanted = cid
        .parse::<ContainerId>()
        .map_err(|_| RestError::bad_request(format!("Invalid ContainerId: {cid}")))?;
    let (user, list) = attempt_containers(&s, &text, &aid).await?;
    let c = list
        .iter()
        .find(|c| c.id == wanted)
        .ok_or_else(|| RestError::not_found(format!("container with id: {cid} not found")))?;
    Ok(Json(json!({"container": json::container_info(c, &user)})))
}

/// `GET /appstatistics`: one item per asked state (all by default), for at most one type.
pub(crate) async fn statistics(
    State(s): State<Rest>,
    Query(q): Params,
) -> Result<Json<Value>, RestError> {
    let states = filters::app_states(&q)?
        .unwrap_or_else(|| APP_STATES.iter().map(|s| s.to_string()).collect());
    let types = filters::app_types(&q).unwrap_or_default();
    if types.len() > 1 {
        return Err(RestError::bad_request(format!(
            "# of applicationTypes = {}, we temporarily support at most one applicationType",
            types.len()
        )));
    }
    let kind = types.into_iter().next();
    let reports = s.driver.call(|core, _| core.app_reports()).await?;
    let mut counts: BTreeMap<&str, u64> = BTreeMap::new();
    for r in &reports {
        if kind
            .as_ref()
            .is_none_or(|k| *k == r.application_type.to_lowercase())
        {
            *counts.entry(json::state_name(r.state)).or_default() += 1;
        }
    }
    // YARN's order of states, not the alphabet.
    let items: Vec<Value> = APP_STATES
        .iter()
        .filter(|st| states.contains(**st))
        .map(|st| {
            json!({
                "state": st,
                "type": kind.as_deref().unwrap_or("*"),
                "count": counts.get(st).copied().unwrap_or(0),
            })
        })
        .collect();
    Ok(Json(json!({"appStatInfo": {"statItem": items}})))
}
