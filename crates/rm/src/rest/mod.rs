//! The REST API (port 8088) with Hadoop's paths, JSON shapes and `RemoteException` errors.
//! A refused request changes nothing.

mod json;

use std::collections::BTreeMap;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{json, Value};
use weft_rm_core::{AppState, RmError};
use weft_types::yarn_id::ApplicationId;

use crate::clock;
use crate::driver::{Driver, DriverError};

/// The user when a request names none (`user.name`), as Hadoop's static web user.
const ANONYMOUS: &str = "dr.who";

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Rest {
    pub(crate) driver: Driver,
    pub(crate) cluster_ts: u64,
    pub(crate) started_on: u64,
}

/// A `RemoteException` answer.
pub(crate) struct RestError {
    status: StatusCode,
    exception: &'static str,
    java: &'static str,
    message: String,
}

impl RestError {
    fn bad_request(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::BAD_REQUEST,
            exception: "BadRequestException",
            java: "org.apache.hadoop.yarn.webapp.BadRequestException",
            message: message.into(),
        }
    }
    fn not_found(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::NOT_FOUND,
            exception: "NotFoundException",
            java: "org.apache.hadoop.yarn.webapp.NotFoundException",
            message: message.into(),
        }
    }
    fn forbidden(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::FORBIDDEN,
            exception: "ForbiddenException",
            java: "org.apache.hadoop.yarn.webapp.ForbiddenException",
            message: message.into(),
        }
    }
    fn unavailable(message: impl Into<String>) -> RestError {
        RestError {
            status: StatusCode::SERVICE_UNAVAILABLE,
            exception: "YarnException",
            java: "org.apache.hadoop.yarn.exceptions.YarnException",
            message: message.into(),
        }
    }
}

impl From<DriverError> for RestError {
    fn from(e: DriverError) -> RestError {
        RestError::unavailable(e.to_string())
    }
}

impl From<RmError> for RestError {
    fn from(e: RmError) -> RestError {
        let m = e.to_string();
        match e {
            RmError::UnknownApp(id) => RestError::not_found(format!("app with id: {id} not found")),
            RmError::UnknownAttempt(_) | RmError::UnknownNode(_) => RestError::not_found(m),
            RmError::Forbidden(_) | RmError::InvalidToken(_) => RestError::forbidden(m),
            RmError::Corrupt(_) | RmError::Scheduler(_) => RestError::unavailable(m),
            _ => RestError::bad_request(m),
        }
    }
}

impl IntoResponse for RestError {
    fn into_response(self) -> Response {
        let body = json!({"RemoteException": {
            "exception": self.exception,
            "message": self.message,
            "javaClassName": self.java,
        }});
        (self.status, Json(body)).into_response()
    }
}

type Params = Query<BTreeMap<String, String>>;

fn user(q: &BTreeMap<String, String>) -> String {
    q.get("user.name")
        .filter(|u| !u.is_empty())
        .cloned()
        .unwrap_or_else(|| ANONYMOUS.to_string())
}

fn app_id(text: &str) -> Result<ApplicationId, RestError> {
    text.parse::<ApplicationId>()
        .map_err(|_| RestError::bad_request(format!("Invalid ApplicationId: {text}")))
}

fn body_json(body: &Bytes) -> Result<Value, RestError> {
    serde_json::from_slice(body).map_err(|e| RestError::bad_request(format!("malformed JSON: {e}")))
}

/// The router.
pub(crate) fn router(state: Rest) -> Router {
    Router::new()
        .route("/ws/v1/cluster", get(cluster_info))
        .route("/ws/v1/cluster/info", get(cluster_info))
        .route("/ws/v1/cluster/apps/new-application", post(new_application))
        .route("/ws/v1/cluster/apps", post(submit).get(list_apps))
        .route("/ws/v1/cluster/apps/{id}", get(get_app))
        .route(
            "/ws/v1/cluster/apps/{id}/state",
            get(get_state).put(put_state),
        )
        .route(
            "/ws/v1/cluster/apps/{id}/queue",
            get(get_queue).put(put_queue),
        )
        .route("/ws/v1/cluster/nodes", get(list_nodes))
        .route("/ws/v1/cluster/nodes/{id}", get(get_node))
        .fallback(|| async { RestError::not_found("no such resource") })
        .with_state(state)
}

async fn cluster_info(State(s): State<Rest>) -> Json<Value> {
    Json(json!({"clusterInfo": json::cluster_info(s.cluster_ts, s.started_on)}))
}

async fn new_application(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let (id, max) = s
        .driver
        .call(|core, now| (core.new_application(now), core.maximum_allocation()))
        .await?;
    Ok(Json(json!({
        "application-id": id.to_string(),
        "maximum-resource-capability": json::resource(max),
    })))
}

async fn submit(
    State(s): State<Rest>,
    Query(q): Params,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, RestError> {
    let (id, sub) = json::submission(&body, &user(&q)).map_err(RestError::bad_request)?;
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

async fn report(s: &Rest, text: &str) -> Result<weft_rm_core::AppReport, RestError> {
    let id = app_id(text)?;
    s.driver
        .call(move |core, _| core.app_report(&id))
        .await?
        .ok_or_else(|| RestError::not_found(format!("app with id: {text} not found")))
}

async fn get_app(State(s): State<Rest>, Path(id): Path<String>) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(
        json!({"app": json::app_info(&r, s.cluster_ts, clock::now())}),
    ))
}

async fn list_apps(State(s): State<Rest>, Query(q): Params) -> Result<Json<Value>, RestError> {
    let states: Option<Vec<String>> = q
        .get("states")
        .or_else(|| q.get("state"))
        .map(|v| v.split(',').map(|s| s.trim().to_uppercase()).collect());
    let limit = match q.get("limit") {
        Some(l) => match l.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => return Err(RestError::bad_request("limit value must be greater then 0")),
        },
        None => None,
    };
    let reports = s.driver.call(|core, _| core.app_reports()).await?;
    let now = clock::now();
    let apps: Vec<Value> = reports
        .iter()
        .filter(|r| {
            states
                .as_ref()
                .is_none_or(|st| st.iter().any(|x| x == json::state_name(r.state)))
        })
        .filter(|r| q.get("queue").is_none_or(|x| *x == r.queue))
        .filter(|r| q.get("user").is_none_or(|x| *x == r.user))
        .take(limit.unwrap_or(usize::MAX))
        .map(|r| json::app_info(r, s.cluster_ts, now))
        .collect();
    Ok(Json(json!({"apps": {"app": apps}})))
}

async fn get_state(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(json!({"state": json::state_name(r.state)})))
}

async fn put_state(
    State(s): State<Rest>,
    Path(text): Path<String>,
    Query(q): Params,
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
    let who = user(&q);
    let state = s
        .driver
        .call(move |core, now| core.kill(now, id, Some(&who)))
        .await??;
    if state == AppState::Killed {
        tracing::info!(app = %id, "application killed");
    }
    Ok(Json(json!({"state": json::state_name(state)})))
}

async fn get_queue(
    State(s): State<Rest>,
    Path(id): Path<String>,
) -> Result<Json<Value>, RestError> {
    let r = report(&s, &id).await?;
    Ok(Json(json!({"queue": r.queue})))
}

async fn put_queue(
    State(s): State<Rest>,
    Path(text): Path<String>,
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
        .call(move |core, now| core.move_app(now, id, &queue))
        .await??;
    tracing::info!(app = %id, queue = %moved, "application moved");
    Ok(Json(json!({"queue": moved})))
}

async fn list_nodes(State(s): State<Rest>, Query(q): Params) -> Result<Json<Value>, RestError> {
    let states: Option<Vec<String>> = q
        .get("states")
        .or_else(|| q.get("state"))
        .map(|v| v.split(',').map(|s| s.trim().to_uppercase()).collect());
    let nodes = s.driver.call(|core, _| core.node_infos()).await?;
    let nodes: Vec<Value> = nodes
        .iter()
        .filter(|n| {
            states
                .as_ref()
                .is_none_or(|st| st.iter().any(|x| x == n.state.as_str()))
        })
        .map(json::node_info)
        .collect();
    Ok(Json(json!({"nodes": {"node": nodes}})))
}

async fn get_node(State(s): State<Rest>, Path(id): Path<String>) -> Result<Json<Value>, RestError> {
    let nodes = s.driver.call(|core, _| core.node_infos()).await?;
    let node = nodes
        .iter()
        .find(|n| n.node_id == id)
        .ok_or_else(|| RestError::not_found(format!("nodeId, {id}, is not found")))?;
    Ok(Json(json!({"node": json::node_info(node)})))
}
