//! Hadoop's reservation REST API (`RMWebServices`: new-reservation, submit, update, delete,
//! list) over rm-core's reservation system, with Hadoop's JSON shapes and status codes: submit
//! answers 202 with an empty body (Hadoop's code; its documentation says 200), update and
//! delete 200 with Jersey's empty bean `{}`, refusals 400 with Hadoop's message (a reservation
//! ACL's refusal too, as Hadoop's `BadRequestException` wraps it). The caller is `user.name`
//! (or the authenticated user), `dr.who` without one.

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Map, Value};
use weft_rm_core::weft_plan::{
    parse_recurrence, Interpreter, Reservation, ReservationDefinition, ReservationId,
    ReservationRequest,
};
use weft_rm_core::ReservationQuery;
use weft_types::{Duration, Resource, Time};

use super::auth::Caller;
use super::{body_json, Params, Rest, RestError};

/// `POST /reservation/new-reservation`: 200 `{"reservation-id": ...}`; the body is ignored.
pub(crate) async fn new_reservation(State(s): State<Rest>) -> Result<Json<Value>, RestError> {
    let id = s.driver.call(|core, _| core.new_reservation()).await?;
    Ok(Json(json!({"reservation-id": id.to_string()})))
}

/// `POST /reservation/submit` with `{"queue", "reservation-id", "reservation-definition"}`.
pub(crate) async fn submit(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Response, RestError> {
    let body = body_json(&body)?;
    let obj = object(&body, "the request")?;
    let queue = text(obj, "queue")?.unwrap_or_default();
    let id = reservation_id(obj)?;
    let definition = definition(obj)?;
    s.driver
        .call(move |core, now| core.submit_reservation(now, &who, &queue, id, &definition))
        .await?
        .map_err(|e| RestError::bad_request(e.to_string()))?;
    Ok(StatusCode::ACCEPTED.into_response())
}

/// `POST /reservation/update` with `{"reservation-id", "reservation-definition"}`.
pub(crate) async fn update(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    let body = body_json(&body)?;
    let obj = object(&body, "the request")?;
    let id = reservation_id(obj)?;
    let definition = definition(obj)?;
    s.driver
        .call(move |core, now| core.update_reservation(now, &who, id, &definition))
        .await?
        .map_err(|e| RestError::bad_request(e.to_string()))?;
    Ok(Json(json!({})))
}

/// `POST /reservation/delete` with `{"reservation-id"}`.
pub(crate) async fn delete(
    State(s): State<Rest>,
    Caller(who): Caller,
    body: Bytes,
) -> Result<Json<Value>, RestError> {
    let body = body_json(&body)?;
    let id = reservation_id(object(&body, "the request")?)?;
    s.driver
        .call(move |core, now| core.delete_reservation(now, &who, id))
        .await?
        .map_err(|e| RestError::bad_request(e.to_string()))?;
    Ok(Json(json!({})))
}

/// `GET /reservation/list?queue=&reservation-id=&start-time=&end-time=&include-resource-allocations=`:
/// Hadoop's defaults are `default`, none, 0, unbounded (-1) and false.
pub(crate) async fn list(
    State(s): State<Rest>,
    Caller(who): Caller,
    params: Params,
) -> Result<Json<Value>, RestError> {
    let get = |k: &str| params.get(k).map(String::as_str).filter(|v| !v.is_empty());
    let number = |k: &str, default: i64| -> Result<i64, RestError> {
        get(k).map_or(Ok(default), |v| {
            v.parse()
                .map_err(|_| RestError::bad_request(format!("{k} '{v}' is not a number")))
        })
    };
    let id = get("reservation-id")
        .map(|v| {
            v.parse::<ReservationId>()
                .map_err(|e| RestError::bad_request(e.to_string()))
        })
        .transpose()?;
    let start = number("start-time", 0)?;
    let end = number("end-time", -1)?;
    let with_allocations = match get("include-resource-allocations") {
        None => false,
        Some(v) if v.eq_ignore_ascii_case("true") => true,
        Some(v) if v.eq_ignore_ascii_case("false") => false,
        Some(v) => {
            return Err(RestError::bad_request(format!(
                "include-resource-allocations '{v}' is not true or false"
            )))
        }
    };
    // Hadoop clamps a negative start to 0 and reads a negative end as unbounded.
    let query = ReservationQuery {
        queue: get("queue").unwrap_or("default").to_string(),
        id,
        start: Time(u64::try_from(start).unwrap_or(0)),
        end: u64::try_from(end).ok().map(Time),
    };
    let listed = s
        .driver
        .call(move |core, now| {
            core.list_reservations(&who, &query).map(|rs| {
                rs.into_iter()
                    .map(|r| {
                        let mut info = reservation_info(r, with_allocations, now);
                        // Weft's `weft-demand` (spec §3.6): the demand that made it.
                        if let Some(key) = core.demand_of_reservation(&r.id) {
                            info["weft-demand"] = Value::String(key);
                        }
                        info
                    })
                    .collect::<Vec<_>>()
            })
        })
        .await?
        .map_err(|e| RestError::bad_request(e.to_string()))?;
    Ok(Json(json!({"reservations": listed})))
}

/// One listed reservation (Hadoop's `ReservationInfo`), plus Weft's `weft-state` and planned
/// span (clients ignore unknown fields).
fn reservation_info(r: &Reservation, with_allocations: bool, now: Time) -> Value {
    let segments = r.allocation.nonzero_segments();
    let allocations: Vec<Value> = if with_allocations {
        segments
            .iter()
            .map(|s| {
                json!({
                    "resource": super::json::resource(s.value),
                    "startTime": s.start.0,
                    "endTime": s.end.0,
                })
            })
            .collect()
    } else {
        Vec::new()
    };
    let planned_start = segments.first().map_or(r.start, |s| s.start);
    let planned_end = segments.last().map_or(r.end, |s| s.end);
    let state = if now < r.start {
        "PENDING"
    } else if now < r.end {
        "ACTIVE"
    } else {
        "ENDED"
    };
    json!({
        "acceptance-time": r.acceptance_time.0,
        "user": r.user,
        "resource-allocations": allocations,
        "reservation-id": r.id.to_string(),
        "reservation-definition": definition_info(&r.definition),
        "weft-state": state,
        "weft-planned-start": planned_start.0,
        "weft-planned-end": planned_end.0,
    })
}

fn definition_info(d: &ReservationDefinition) -> Value {
    let requests: Vec<Value> = d
        .requests
        .iter()
        .map(|rr| {
            json!({
                "capability": super::json::resource(rr.capability),
                "min-concurrency": rr.concurrency,
                "num-containers": rr.num_containers,
                "duration": rr.duration.0,
            })
        })
        .collect();
    json!({
        "arrival": d.arrival.0,
        "deadline": d.deadline.0,
        "reservation-name": d.name,
        // Hadoop's list DAO never copies the priority back, so it always reads 0.
        "priority": 0,
        "recurrence-expression": d.recurrence.map_or(0, |p| p.0).to_string(),
        "reservation-requests": {
            "reservation-request-interpreter": d.interpreter.ordinal(),
            "reservation-request": requests,
        },
    })
}

fn object<'a>(v: &'a Value, what: &str) -> Result<&'a Map<String, Value>, RestError> {
    v.as_object()
        .ok_or_else(|| RestError::bad_request(format!("{what} must be a JSON object, got {v}")))
}

fn text(obj: &Map<String, Value>, key: &str) -> Result<Option<String>, RestError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(other) => Err(RestError::bad_request(format!(
            "'{key}' must be a string, got {other}"
        ))),
    }
}

/// An integer field; Jersey's mapped JSON writes numbers as strings, so both are read.
fn integer(obj: &Map<String, Value>, key: &str, within: &str) -> Result<Option<i64>, RestError> {
    match obj.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_i64()
            .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
            .map(Some)
            .ok_or_else(|| {
                RestError::bad_request(format!("{within}: '{key}' must be an integer, got {v}"))
            }),
    }
}

fn required(obj: &Map<String, Value>, key: &str, within: &str) -> Result<i64, RestError> {
    integer(obj, key, within)?
        .ok_or_else(|| RestError::bad_request(format!("{within}: '{key}' is missing")))
}

fn non_negative(v: i64, key: &str, within: &str) -> Result<u64, RestError> {
    u64::try_from(v).map_err(|_| {
        RestError::bad_request(format!("{within}: '{key}' must not be negative, got {v}"))
    })
}

fn count(obj: &Map<String, Value>, key: &str, within: &str) -> Result<u32, RestError> {
    let v = required(obj, key, within)?;
    u32::try_from(v).map_err(|_| {
        RestError::bad_request(format!(
            "{within}: '{key}' must be 0..{}, got {v}",
            u32::MAX
        ))
    })
}

fn reservation_id(obj: &Map<String, Value>) -> Result<Option<ReservationId>, RestError> {
    text(obj, "reservation-id")?
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<ReservationId>()
                .map_err(|e| RestError::bad_request(e.to_string()))
        })
        .transpose()
}

/// One value or a list of them (Jersey writes a one-element list as the bare element).
fn one_or_many(v: Option<&Value>) -> Vec<&Value> {
    match v {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(Value::Null) | None => Vec::new(),
        Some(other) => vec![other],
    }
}

/// Hadoop's `ReservationDefinitionInfo`, as `RMWebServices.createReservationSubmissionRequest`
/// reads it.
fn definition(obj: &Map<String, Value>) -> Result<ReservationDefinition, RestError> {
    const WHERE: &str = "reservation-definition";
    let d = match obj.get(WHERE) {
        None | Some(Value::Null) => {
            return Err(RestError::bad_request(
                "Missing reservation definition. Please try again by specifying a reservation definition.",
            ))
        }
        Some(v) => object(v, WHERE)?,
    };
    let arrival = non_negative(required(d, "arrival", WHERE)?, "arrival", WHERE)?;
    let deadline = non_negative(required(d, "deadline", WHERE)?, "deadline", WHERE)?;
    let name = text(d, "reservation-name")?.unwrap_or_default();
    let priority = integer(d, "priority", WHERE)?.unwrap_or(0);
    let priority = i32::try_from(priority).map_err(|_| {
        RestError::bad_request(format!("{WHERE}: 'priority' {priority} is out of range"))
    })?;
    let recurrence = match d.get("recurrence-expression") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => {
            parse_recurrence(s).map_err(|e| RestError::bad_request(e.to_string()))?
        }
        Some(Value::Number(n)) => {
            parse_recurrence(&n.to_string()).map_err(|e| RestError::bad_request(e.to_string()))?
        }
        Some(other) => {
            return Err(RestError::bad_request(format!(
                "{WHERE}: 'recurrence-expression' must be a string, got {other}"
            )))
        }
    };
    const REQUESTS: &str = "reservation-requests";
    let (interpreter, requests) = match d.get(REQUESTS) {
        None | Some(Value::Null) => (Interpreter::All, Vec::new()),
        Some(v) => {
            let rr = object(v, REQUESTS)?;
            let ordinal = integer(rr, "reservation-request-interpreter", REQUESTS)?.unwrap_or(1);
            let interpreter = [
                Interpreter::Any,
                Interpreter::All,
                Interpreter::Order,
                Interpreter::OrderNoGap,
            ]
            .into_iter()
            .find(|i| i64::from(i.ordinal()) == ordinal)
            .ok_or_else(|| {
                RestError::bad_request(format!(
                    "{REQUESTS}: 'reservation-request-interpreter' must be 0 (R_ANY), 1 (R_ALL), 2 (R_ORDER) or 3 (R_ORDER_NO_GAP), got {ordinal}"
                ))
            })?;
            let stages = one_or_many(rr.get("reservation-request"))
                .into_iter()
                .enumerate()
                .map(|(i, v)| stage(v, &format!("reservation-request[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            (interpreter, stages)
        }
    };
    Ok(ReservationDefinition {
        arrival: Time(arrival),
        deadline: Time(deadline),
        name,
        priority,
        recurrence,
        interpreter,
        requests,
    })
}

fn stage(v: &Value, within: &str) -> Result<ReservationRequest, RestError> {
    let r = object(v, within)?;
    let capability = match r.get("capability") {
        Some(c) => {
            let c = object(c, &format!("{within}.capability"))?;
            let place = format!("{within}.capability");
            Resource::new(
                required(c, "memory", &place)?,
                required(c, "vCores", &place)?,
            )
        }
        None => {
            return Err(RestError::bad_request(format!(
                "{within}: 'capability' is missing"
            )))
        }
    };
    let duration = non_negative(required(r, "duration", within)?, "duration", within)?;
    Ok(ReservationRequest {
        capability,
        num_containers: count(r, "num-containers", within)?,
        concurrency: integer(r, "min-concurrency", within)?.map_or(Ok(1), |v| {
            u32::try_from(v).map_err(|_| {
                RestError::bad_request(format!("{within}: 'min-concurrency' {v} is out of range"))
            })
        })?,
        duration: Duration(duration),
    })
}
