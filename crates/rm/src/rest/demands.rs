//! Weft-only time-aware demands (spec §3.6), beside Hadoop's API: submit, list, one demand
//! with its timeline, kill, and the dry run that answers what a submission would get. A refused submission is a 400 naming every problem's JSON pointer
//! and column, and creates no demand.

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use weft_rm_core::{demand_state_name, DemandBatch, DemandPreview, DemandReport, DemandState};
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::auth::Caller;
use super::{app_id, body_json, Params, Rest, RestError};

const STATES: [DemandState; 7] = [
    DemandState::New,
    DemandState::Accepted,
    DemandState::Allocating,
    DemandState::Allocated,
    DemandState::Monitoring,
    DemandState::Finished,
    DemandState::Failed,
];

/// A demand as REST shows it; `now` gives the slack to its deadline.
pub(crate) fn demand_json(d: &DemandReport, now: Time) -> Value {
    let spec: Value = serde_json::from_str(&d.spec).unwrap_or(Value::Null);
    let slack = d
        .deadline
        .map(|at| i128::from(at.as_millis()) - i128::from(now.as_millis()));
    json!({
        "id": d.key,
        "application-id": d.application,
        "demand-id": d.demand_id,
        "user": d.user,
        "state": demand_state_name(d.state),
        "reason": d.reason.as_str(),
        "queue": d.queue,
        "reservation-id": d.reservation_id,
        "accepted-time": d.accepted_at.as_millis(),
        "planned-start": d.planned_start.map(Time::as_millis),
        "planned-end": d.planned_end.map(Time::as_millis),
        "earliest-start": d.earliest_start.as_millis(),
        "deadline": d.deadline.map(Time::as_millis),
        "first-allocation": d.first_allocation.map(Time::as_millis),
        "containers": {
            "requested": d.requested,
            "held": d.held,
            "allocated": d.allocated,
            "running": d.claimed.saturating_sub(d.completed),
            "completed": d.completed,
        },
        "missed-opportunities": d.missed_opportunities,
        "slack-ms": slack.map(|s| i64::try_from(s).unwrap_or(if s < 0 { i64::MIN } else { i64::MAX })),
        "timeline": d.timeline.iter().map(|t| json!({
            "state": demand_state_name(t.state),
            "reason": t.reason.as_str(),
            "detail": t.detail,
            "at": t.at.as_millis(),
        })).collect::<Vec<_>>(),
        "resource-description": spec,
    })
}

/// A submission's body (`{"application-id"?, "queue"?, "demands": [ResourceDescription…]}`),
/// shared by the submission and its dry run: the application, the queue, the demands.
fn read_submission(
    body: &Bytes,
) -> Result<(Option<ApplicationId>, Option<String>, Value), RestError> {
    let body = body_json(body)?;
    let Some(object) = body.as_object() else {
        return Err(RestError::bad_request(
            "the body must be an object with \"demands\"",
        ));
    };
    for key in object.keys() {
        if !["application-id", "queue", "demands"].contains(&key.as_str()) {
            return Err(RestError::bad_request(format!(
                "/{key}: unknown field; expected application-id, queue or demands"
            )));
        }
    }
    let application = match object.get("application-id") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(app_id(text)?),
        Some(other) => {
            return Err(RestError::bad_request(format!(
                "/application-id: expected a string, found {other}"
            )))
        }
    };
    let queue = match object.get("queue") {
        None | Some(Value::Null) => None,
        Some(Value::String(q)) => Some(q.clone()),
        Some(other) => {
            return Err(RestError::bad_request(format!(
                "/queue: expected a string, found {other}"
            )))
        }
    };
    let demands = object
        .get("demands")
        .cloned()
        .ok_or_else(|| RestError::bad_request("demands is required"))?;
    Ok((application, queue, demands))
}

/// `POST /demands/plan`, the dry run (§3.6): 200 with what each demand of the body would get
/// if submitted now (state, reason, planned start and end, the plan's headroom for the
/// caller over its window, and the reservations it would displace: always none, Weft's
/// agents never move a committed reservation). Changes nothing; an invalid body is the
/// submission's 400.
pub(crate) async fn plan(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Response, RestError> {
    let (application, queue, demands) = read_submission(&body)?;
    let previews = s
        .driver
        .call(move |core, now| {
            core.plan_demands(
                now,
                DemandBatch {
                    user: &who,
                    queue: queue.as_deref(),
                    application,
                    demands: &demands,
                    pointer: "/demands",
                },
            )
        })
        .await??;
    let listed: Vec<Value> = previews.iter().map(preview_json).collect();
    Ok((StatusCode::OK, Json(json!({"plan": {"demand": listed}}))).into_response())
}

fn preview_json(p: &DemandPreview) -> Value {
    json!({
        "id": p.key,
        "queue": p.queue,
        "state": demand_state_name(p.state),
        "reason": p.reason.as_str(),
        "detail": p.detail,
        "plan-queue": p.plan_queue,
        "planned-start": p.planned_start.map(Time::as_millis),
        "planned-end": p.planned_end.map(Time::as_millis),
        "headroom": p.headroom.map(|r| json!({"memory": r.memory_mb(), "vCores": r.vcores()})),
        "displaced": [],
    })
}

/// `POST /demands` with `{"application-id"?, "queue"?, "demands": [ResourceDescription…]}`:
/// 202 with the first demand's URL in `Location` and every new demand in the body; 400 when the
/// body is refused (nothing created) or when a demand failed at once (`not_reservable`,
/// `unplannable`, `quota`, `unpackable`: it is recorded FAILED and the message says why).
pub(crate) async fn submit(
    State(s): State<Rest>,
    Caller(who): Caller,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, RestError> {
    let (application, queue, demands) = read_submission(&body)?;
    let (reports, now) = s
        .driver
        .call(move |core, now| {
            let reports = core.submit_demands(
                now,
                DemandBatch {
                    user: &who,
                    queue: queue.as_deref(),
                    application,
                    demands: &demands,
                    pointer: "/demands",
                },
            );
            (reports, now)
        })
        .await?;
    let reports = reports?;
    let failed: Vec<String> = reports
        .iter()
        .filter(|r| r.state == DemandState::Failed)
        .map(|r| {
            let detail = r
                .timeline
                .last()
                .map(|t| t.detail.clone())
                .unwrap_or_default();
            format!("demand {} FAILED ({}): {detail}", r.key, r.reason.as_str())
        })
        .collect();
    for r in &reports {
        tracing::info!(demand = %r.key, state = demand_state_name(r.state), "demand submitted");
    }
    if !failed.is_empty() {
        return Err(RestError::bad_request(failed.join("; ")));
    }
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("localhost");
    let location = reports
        .first()
        .map(|r| format!("http://{host}/ws/v1/cluster/demands/{}", r.key))
        .unwrap_or_default();
    let listed: Vec<Value> = reports.iter().map(|r| demand_json(r, now)).collect();
    Ok((
        StatusCode::ACCEPTED,
        [(header::LOCATION, location)],
        Json(json!({"demands": {"demand": listed}})),
    )
        .into_response())
}

/// `GET /demands?state=&queue=&application-id=`.
pub(crate) async fn list(
    State(s): State<Rest>,
    Query(q): Params,
) -> Result<Json<Value>, RestError> {
    let state = match q.get("state").filter(|v| !v.is_empty()) {
        None => None,
        Some(name) => Some(
            STATES
                .into_iter()
                .find(|s| demand_state_name(*s).eq_ignore_ascii_case(name))
                .ok_or_else(|| {
                    RestError::bad_request(format!(
                        "state: unknown demand state '{name}'; expected one of {}",
                        STATES.map(demand_state_name).join(", ")
                    ))
                })?,
        ),
    };
    let queue = q.get("queue").filter(|v| !v.is_empty()).cloned();
    let application = match q.get("application-id").filter(|v| !v.is_empty()) {
        Some(text) => Some(app_id(text)?),
        None => None,
    };
    let (reports, now) = s
        .driver
        .call(move |core, now| (core.demands(state, queue.as_deref(), application), now))
        .await?;
    let listed: Vec<Value> = reports.iter().map(|r| demand_json(r, now)).collect();
    Ok(Json(json!({"demands": {"demand": listed}})))
}

/// `GET /demands/{scope}/{id}`: `scope` is the application id, or `~user` for a demand bound
/// to none.
pub(crate) async fn get_one(
    State(s): State<Rest>,
    Path((scope, id)): Path<(String, String)>,
) -> Result<Json<Value>, RestError> {
    let key = format!("{scope}/{id}");
    let lookup = key.clone();
    let (report, now) = s
        .driver
        .call(move |core, now| (core.demand(&lookup), now))
        .await?;
    let report = report.ok_or_else(|| RestError::not_found(format!("demand {key} not found")))?;
    Ok(Json(json!({"demand": demand_json(&report, now)})))
}

/// `PUT /demands/{scope}/{id}/state` with `{"state":"KILLED"}`: 202, or 409 when the demand
/// already ended.
pub(crate) async fn put_state(
    State(s): State<Rest>,
    Path((scope, id)): Path<(String, String)>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Response, RestError> {
    let v = body_json(&body)?;
    let target = v.get("state").and_then(Value::as_str).unwrap_or_default();
    if !target.eq_ignore_ascii_case("KILLED") {
        return Err(RestError::bad_request(
            "Only 'KILLED' is allowed as a target state.",
        ));
    }
    let key = format!("{scope}/{id}");
    let (report, now) = s
        .driver
        .call(move |core, now| (core.kill_demand(now, &key, &who), now))
        .await?;
    let report = report?;
    tracing::info!(demand = %report.key, "demand killed");
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({"demand": demand_json(&report, now)})),
    )
        .into_response())
}
