//! The REST API (port 8088) with Hadoop's paths, JSON shapes and `RemoteException` errors,
//! plus Weft's admin refresh, its time-aware demands and its OpenAPI description. A refused request changes nothing.

mod apps;
pub(crate) mod auth;
mod capacity;
mod demands;
mod error;
mod filters;
mod json;
pub(crate) use json::log_url;
mod labels;
mod reservations;
mod scheduler;

use std::collections::BTreeMap;

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use serde_json::{json, Value};
use weft_types::yarn_id::ApplicationId;

use crate::driver::Driver;
use crate::reload;
use auth::Caller;
pub(crate) use error::RestError;

/// The OpenAPI 3 description of every endpoint below, served at `/openapi.json`.
const OPENAPI: &str = include_str!("openapi.json");

/// What the handlers share.
#[derive(Clone)]
pub(crate) struct Rest {
    pub(crate) driver: Driver,
    pub(crate) cluster_ts: u64,
    pub(crate) started_on: u64,
    /// On-demand allocation-file reloads (`admin/refresh-queues`).
    pub(crate) refresher: reload::Refresher,
}

type Params = Query<BTreeMap<String, String>>;

fn app_id(text: &str) -> Result<ApplicationId, RestError> {
    text.parse::<ApplicationId>()
        .map_err(|_| RestError::bad_request(format!("Invalid ApplicationId: {text}")))
}

/// A request body as JSON; an empty or malformed body is a 400.
fn body_json(body: &[u8]) -> Result<Value, RestError> {
    serde_json::from_slice(body).map_err(|e| RestError::bad_request(format!("malformed JSON: {e}")))
}

/// The router of `/ws/v1/**` and `/openapi.json`, with a JSON 404/405 for anything else.
pub(crate) fn router(state: Rest) -> Router {
    const C: &str = "/ws/v1/cluster";
    let r = |p: &str| format!("{C}{p}");
    Router::new()
        .route(C, get(cluster_info))
        .route(&r("/info"), get(cluster_info))
        .route(&r("/metrics"), get(metrics))
        .route(&r("/scheduler"), get(scheduler))
        .route(&r("/appstatistics"), get(apps::statistics))
        .route(&r("/apps/new-application"), post(apps::new_application))
        .route(&r("/apps"), post(apps::submit).get(apps::list))
        .route(&r("/apps/{id}"), get(apps::get_app))
        .route(
            &r("/apps/{id}/state"),
            get(apps::get_state).put(apps::put_state),
        )
        .route(
            &r("/apps/{id}/queue"),
            get(apps::get_queue).put(apps::put_queue),
        )
        .route(
            &r("/apps/{id}/priority"),
            get(apps::get_priority).put(apps::put_priority),
        )
        .route(&r("/apps/{id}/timeouts"), get(apps::timeouts))
        .route(&r("/apps/{id}/timeouts/{kind}"), get(apps::timeout))
        .route(&r("/apps/{id}/appattempts"), get(apps::attempts))
        .route(&r("/apps/{id}/appattempts/{aid}"), get(apps::attempt))
        .route(
            &r("/apps/{id}/appattempts/{aid}/containers"),
            get(apps::containers),
        )
        .route(
            &r("/apps/{id}/appattempts/{aid}/containers/{cid}"),
            get(apps::container),
        )
        .route(&r("/demands"), post(demands::submit).get(demands::list))
        .route(&r("/demands/plan"), post(demands::plan))
        .route(&r("/demands/{scope}/{id}"), get(demands::get_one))
        .route(&r("/demands/{scope}/{id}/state"), put(demands::put_state))
        .route(&r("/nodes"), get(list_nodes))
        .route(&r("/nodes/{id}"), get(get_node))
        .route(&r("/get-node-labels"), get(labels::get_node_labels))
        .route(&r("/add-node-labels"), post(labels::add_node_labels))
        .route(&r("/remove-node-labels"), post(labels::remove_node_labels))
        .route(&r("/get-node-to-labels"), get(labels::get_node_to_labels))
        .route(&r("/label-mappings"), get(labels::label_mappings))
        .route(
            &r("/replace-node-to-labels"),
            post(labels::replace_node_to_labels),
        )
        .route(
            &r("/nodes/{id}/get-labels"),
            get(labels::get_labels_on_node),
        )
        .route(
            &r("/nodes/{id}/replace-labels"),
            post(labels::replace_labels_on_node),
        )
        .route(
            &r("/delegation-token"),
            post(delegation_token).delete(delegation_token),
        )
        .route(&r("/delegation-token/expiration"), post(delegation_token))
        .route(
            &r("/reservation/new-reservation"),
            post(reservations::new_reservation),
        )
        .route(&r("/reservation/submit"), post(reservations::submit))
        .route(&r("/reservation/update"), post(reservations::update))
        .route(&r("/reservation/delete"), post(reservations::delete))
        .route(&r("/reservation/list"), get(reservations::list))
        .route(&r("/admin/refresh-queues"), put(refresh_queues))
        .route(&r("/admin/refresh-user-groups"), put(refresh_user_groups))
        .route(&r("/admin/allocation-file"), get(allocation_file))
        .route(&r("/admin/groups"), get(groups))
        .route("/openapi.json", get(openapi))
        .fallback(|| async { RestError::not_found("no such resource") })
        .method_not_allowed_fallback(|| async { RestError::method_not_allowed() })
        .layer(axum::middleware::from_fn(auth::set_cookie))
        .layer(axum::middleware::map_response(
            error::remote_exception_for_plain_errors,
        ))
        .with_state(state)
}

async fn cluster_info(State(s): State<Rest>) -> Json<Value> {
    Json(json!({"clusterInfo": json::cluster_info(s.cluster_ts, s.started_on)}))
}

async fn metrics(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let m = s.driver.call(|core, now| core.cluster_metrics(now)).await?;
    Ok(Json(json!({"clusterMetrics": json::cluster_metrics(&m)})))
}

async fn scheduler(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let view = s
        .driver
        .call(|core, _| scheduler::SchedulerView {
            kind: core.scheduler().kind(),
            min_allocation: core.scheduler().config().properties().minimum_allocation,
            max_allocation: core.maximum_allocation(),
            snap: core.scheduler_snapshot(),
            allocations: core
                .scheduler()
                .config()
                .allocations()
                .cloned()
                .unwrap_or_default(),
            capacity: core.scheduler().capacity_details(),
            capacity_file: match core.scheduler().config() {
                weft_sched::SchedulerConfig::Capacity(c) => Some(c.capacity.clone()),
                _ => None,
            },
        })
        .await?;
    Ok(Json(view.to_json()))
}

async fn list_nodes(State(s): State<Rest>, Query(q): Params) -> Result<Json<Value>, RestError> {
    let states = filters::node_states(&q)?;
    let nodes = s.driver.call(|core, _| core.node_infos()).await?;
    let nodes: Vec<Value> = nodes
        .iter()
        .filter(|n| {
            states
                .as_ref()
                .is_none_or(|st| st.contains(n.state.as_str()))
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

async fn delegation_token() -> RestError {
    RestError::forbidden(
        "Delegation tokens can only be managed over Kerberos (SPNEGO) authentication, \
         which this ResourceManager does not use",
    )
}

/// Refuses (403) a caller outside `yarn.admin.acl`; `what` completes "may not ...".
async fn require_admin(s: &Rest, who: &str, what: &str) -> Result<(), RestError> {
    let user = who.to_string();
    if s.driver.call(move |core, _| core.is_admin(&user)).await? {
        Ok(())
    } else {
        Err(RestError::forbidden(format!(
            "user {who} is not in yarn.admin.acl and may not {what}"
        )))
    }
}

/// `PUT admin/refresh-queues`: only for `yarn.admin.acl` (as `yarn rmadmin -refreshQueues`).
async fn refresh_queues(
    State(s): State<Rest>,
    Caller(who): Caller,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "refresh the queues").await?;
    match s.refresher.refresh().await {
        Ok(reload::Refreshed::File(path)) => Ok(Json(json!({
            "refreshQueues": {"reloaded": true, "allocationFile": path.display().to_string()}
        }))),
        Ok(reload::Refreshed::NoFile) => Ok(Json(json!({"refreshQueues": {"reloaded": false}}))),
        Err(reload::RefreshError::Invalid(m)) => Err(RestError::bad_request(m)),
        Err(reload::RefreshError::Unavailable(m)) => Err(RestError::unavailable(m)),
    }
}

/// `PUT admin/refresh-user-groups`: only for `yarn.admin.acl` (as `yarn rmadmin
/// -refreshUserToGroupsMappings`): every user's groups are looked up again on their next
/// request.
async fn refresh_user_groups(
    State(s): State<Rest>,
    Caller(who): Caller,
) -> Result<Json<Value>, RestError> {
    require_admin(&s, &who, "refresh the user-to-groups mappings").await?;
    s.driver.refresh_groups();
    Ok(Json(
        json!({"refreshUserToGroupsMappings": {"refreshed": true}}),
    ))
}

/// `GET /admin/allocation-file`: what the allocation-file reloads did (Weft's own; `weft up`
/// polls it to show refused reloads in its terminal).
async fn allocation_file(State(s): State<Rest>) -> Json<Value> {
    let st = s.refresher.status();
    Json(json!({"allocationFile": {
        "path": st.file.map(|p| p.display().to_string()),
        "loaded": st.error.is_none(),
        "error": st.error,
        "lastAttemptTime": st.last_attempt_ms,
        "lastSuccessTime": st.last_success_ms,
        "errorCount": st.errors_total,
    }}))
}

/// `GET /admin/groups?user=U`: the groups the RM maps `U` to (`weft rmadmin -getGroups`).
async fn groups(State(s): State<Rest>, Query(q): Params) -> Result<Json<Value>, RestError> {
    let user = q
        .get("user")
        .filter(|u| !u.is_empty())
        .cloned()
        .ok_or_else(|| RestError::bad_request("the user query parameter is required"))?;
    s.driver.ensure_groups(&user).await?;
    let who = user.clone();
    let groups = s.driver.call(move |core, _| core.groups_of(&who)).await?;
    Ok(Json(json!({"groups": {"user": user, "groups": groups}})))
}

async fn openapi() -> Response {
    (
        StatusCode::OK,
        [(header::CONTENT_TYPE, "application/json")],
        OPENAPI,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every route of [`router`], as OpenAPI paths: the document must describe each.
    const ROUTES: [&str; 42] = [
        "/ws/v1/cluster",
        "/ws/v1/cluster/info",
        "/ws/v1/cluster/metrics",
        "/ws/v1/cluster/scheduler",
        "/ws/v1/cluster/appstatistics",
        "/ws/v1/cluster/apps/new-application",
        "/ws/v1/cluster/apps",
        "/ws/v1/cluster/apps/{appid}",
        "/ws/v1/cluster/apps/{appid}/state",
        "/ws/v1/cluster/apps/{appid}/queue",
        "/ws/v1/cluster/apps/{appid}/priority",
        "/ws/v1/cluster/apps/{appid}/timeouts",
        "/ws/v1/cluster/apps/{appid}/timeouts/{type}",
        "/ws/v1/cluster/apps/{appid}/appattempts",
        "/ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}",
        "/ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}/containers",
        "/ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}/containers/{containerid}",
        "/ws/v1/cluster/demands",
        "/ws/v1/cluster/demands/plan",
        "/ws/v1/cluster/demands/{scope}/{demandid}",
        "/ws/v1/cluster/demands/{scope}/{demandid}/state",
        "/ws/v1/cluster/nodes",
        "/ws/v1/cluster/nodes/{nodeid}",
        "/ws/v1/cluster/get-node-labels",
        "/ws/v1/cluster/add-node-labels",
        "/ws/v1/cluster/remove-node-labels",
        "/ws/v1/cluster/get-node-to-labels",
        "/ws/v1/cluster/label-mappings",
        "/ws/v1/cluster/replace-node-to-labels",
        "/ws/v1/cluster/nodes/{nodeid}/get-labels",
        "/ws/v1/cluster/nodes/{nodeid}/replace-labels",
        "/ws/v1/cluster/delegation-token",
        "/ws/v1/cluster/delegation-token/expiration",
        "/ws/v1/cluster/reservation/new-reservation",
        "/ws/v1/cluster/reservation/submit",
        "/ws/v1/cluster/reservation/update",
        "/ws/v1/cluster/reservation/delete",
        "/ws/v1/cluster/reservation/list",
        "/ws/v1/cluster/admin/refresh-queues",
        "/ws/v1/cluster/admin/allocation-file",
        "/ws/v1/cluster/admin/groups",
        "/openapi.json",
    ];

    #[test]
    fn the_openapi_document_describes_every_route() {
        let doc: Value = serde_json::from_str(OPENAPI).expect("valid JSON");
        assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
        let paths = doc["paths"].as_object().expect("paths");
        for r in ROUTES {
            assert!(paths.contains_key(r), "{r} is not documented");
        }
        assert_eq!(
            paths.len(),
            ROUTES.len(),
            "documented paths that do not exist"
        );
        let refresh = &paths["/ws/v1/cluster/admin/refresh-queues"];
        assert!(refresh.get("put").is_some());
        assert!(refresh["put"]["responses"].get("400").is_some());
    }

    #[test]
    fn remote_exceptions_have_hadoops_shape() {
        let e = RestError::not_found("app with id: x not found");
        let resp = e.into_response();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
    }
}
