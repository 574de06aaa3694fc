//! One `[[events]]` table -> [`ScheduledEvent`], with the fields its `type` allows.

use crate::parse::{duration, embedded, resource, DEFAULT_RACK};
use crate::scenario::{
    Action, NodeSpec, ReserveInterpreter, ReserveRequest, ReserveSpec, ScheduledEvent,
};
use crate::toml_walk::{Ctx, Tbl};
use weft_sched::ContainerAsk;
use weft_types::{ResourceTypes, Time};

const TYPES: &[&str] = &[
    "submit",
    "ask",
    "release",
    "cancel",
    "finish",
    "kill",
    "move",
    "add_node",
    "remove_node",
    "reload",
    "snapshot",
    "blacklist",
    "gang",
    "gang_cancel",
    "reservation",
    "reserve",
    "reservation_update",
    "reservation_delete",
    "demand",
    "demand_kill",
];

/// Event types only the RM driver replays (`driver = "rm"`).
pub(crate) const RM_ONLY: &[&str] = &[
    "reserve",
    "reservation_update",
    "reservation_delete",
    "demand",
    "demand_kill",
];

/// Event types the RM driver replays; the others need the scheduler driver.
pub(crate) const RM_DRIVEN: &[&str] = &[
    "submit",
    "ask",
    "finish",
    "kill",
    "remove_node",
    "snapshot",
    "reserve",
    "reservation_update",
    "reservation_delete",
    "demand",
    "demand_kill",
];

/// The fields each event type allows (besides `at` and `type`).
fn fields(kind: &str) -> &'static [&'static str] {
    match kind {
        "submit" => &[
            "app",
            "user",
            "queue",
            "am",
            "priority",
            "app_type",
            "reservation",
            "label",
            "demand",
            "claim",
        ],
        "ask" => &[
            "app",
            "resources",
            "count",
            "priority",
            "hosts",
            "racks",
            "relax_locality",
            "duration",
        ],
        "release" => &["app", "count", "priority"],
        "cancel" => &["app", "priority", "count"],
        "finish" => &["app"],
        "kill" => &["app", "user"],
        "move" => &["app", "queue"],
        "add_node" => &["host", "rack", "resources", "label"],
        "remove_node" => &["host"],
        "reload" => &["allocations", "capacity"],
        "blacklist" => &["app", "add", "remove"],
        "gang" => &[
            "app",
            "gang",
            "resources",
            "count",
            "priority",
            "hold_timeout",
            "style",
            "duration",
        ],
        "gang_cancel" => &["app", "gang"],
        "reserve" | "reservation_update" => &[
            "name",
            "queue",
            "user",
            "arrival",
            "deadline",
            "interpreter",
            "requests",
            "recurrence",
        ],
        "reservation_delete" => &["name", "user"],
        "demand" => &["app", "demand", "duration"],
        "demand_kill" => &["app", "demand", "user"],
        "reservation" => &[
            "queue",
            "id",
            "start",
            "end",
            "resources",
            "gang",
            "move_on_expiry",
        ],
        _ => &[],
    }
}

const PRIORITY_RANGE: (i64, i64) = (i32::MIN as i64, i32::MAX as i64);
const COUNT_RANGE: (i64, i64) = (1, crate::limits::MAX_ASK_COUNT as i64);
const GANG_SIZE_RANGE: (i64, i64) = (1, weft_sched::MAX_GANG_SIZE as i64);
const GANG_ID_RANGE: (i64, i64) = (0, i64::MAX);
/// A gang's hold timeout when the file names none (YuniKorn's placeholder timeout).
const DEFAULT_HOLD_TIMEOUT_MS: u64 = 15 * 60 * 1000;

/// Parses one event; `None` when it has problems (already recorded in `ctx`).
pub(crate) fn parse_event(
    ctx: &mut Ctx,
    t: &Tbl<'_, '_>,
    index: usize,
    types: &ResourceTypes,
    source: &str,
) -> Option<ScheduledEvent> {
    let before = ctx.problems.len();
    let kind = t.req_str(ctx, "type").map(|(k, _)| k);
    if let Some(k) = kind {
        if TYPES.contains(&k) {
            let mut allowed = vec!["at", "type"];
            allowed.extend_from_slice(fields(k));
            t.check_keys(ctx, &allowed);
        } else {
            let line = t.raw("type").map_or(t.line, |v| ctx.line(v.span().start));
            ctx.problem(
                line,
                &t.path_of("type"),
                format!(
                    "unknown event type '{k}'; expected one of: {}",
                    TYPES.join(", ")
                ),
            );
        }
    }
    let at = match duration(ctx, t, "at") {
        Some((d, _)) => Some(Time(d.as_millis())),
        None => {
            if t.raw("at").is_none() {
                t.missing(ctx, "at");
            }
            None
        }
    };
    let action = match kind {
        Some(k) if TYPES.contains(&k) => action(ctx, t, k, types, source),
        _ => None,
    };
    if ctx.problems.len() > before {
        return None;
    }
    Some(ScheduledEvent {
        at: at?,
        index,
        line: t.line,
        action: action?,
    })
}

fn action(
    ctx: &mut Ctx,
    t: &Tbl<'_, '_>,
    kind: &str,
    types: &ResourceTypes,
    source: &str,
) -> Option<Action> {
    let owned = |v: Option<(&str, u32)>| v.map(|(s, _)| s.to_string());
    let priority = |ctx: &mut Ctx| {
        t.int(ctx, "priority", PRIORITY_RANGE.0, PRIORITY_RANGE.1)
            .and_then(|(p, _)| i32::try_from(p).ok())
    };
    let count = |ctx: &mut Ctx| {
        t.int(ctx, "count", COUNT_RANGE.0, COUNT_RANGE.1)
            .and_then(|(c, _)| u32::try_from(c).ok())
    };
    let app = |ctx: &mut Ctx| owned(t.req_str(ctx, "app"));
    Some(match kind {
        "submit" => {
            // Every field is read before any `?`, so all of its problems are reported.
            let app = app(ctx);
            let user = owned(t.req_str(ctx, "user"));
            Action::Submit {
                queue: owned(t.str(ctx, "queue")),
                am: resource(ctx, t, "am", types, false),
                priority: priority(ctx).unwrap_or(0),
                app_type: owned(t.str(ctx, "app_type")),
                reservation: owned(t.str(ctx, "reservation")),
                label: owned(t.str(ctx, "label")),
                demand: match t.raw("demand") {
                    Some(_) => Some(demand_json(ctx, t)?),
                    None => None,
                },
                claim: t.bool(ctx, "claim").is_none_or(|(b, _)| b),
                app: app?,
                user: user?,
            }
        }
        "ask" => {
            // Every field is read before any `?`, so all of its problems are reported.
            let app = app(ctx);
            let resources = resource(ctx, t, "resources", types, true);
            if t.raw("count").is_none() {
                t.missing(ctx, "count");
            }
            let count = count(ctx);
            let priority = priority(ctx).unwrap_or(0);
            let hosts = t.str_list(ctx, "hosts").map(|(l, _)| l).unwrap_or_default();
            let racks = t.str_list(ctx, "racks").map(|(l, _)| l).unwrap_or_default();
            let relax_locality = t.bool(ctx, "relax_locality").is_none_or(|(b, _)| b);
            let duration = duration(ctx, t, "duration").map(|(d, _)| d);
            Action::Ask {
                app: app?,
                ask: ContainerAsk {
                    priority,
                    resources: resources?,
                    count: count?,
                    hosts,
                    racks,
                    relax_locality,
                    tag: weft_sched::AskTag::NONE,
                },
                duration,
            }
        }
        "release" => {
            let app = app(ctx);
            if t.raw("count").is_none() {
                t.missing(ctx, "count");
            }
            Action::Release {
                app: app?,
                count: count(ctx)?,
                priority: priority(ctx),
            }
        }
        "cancel" => Action::Cancel {
            app: app(ctx)?,
            priority: priority(ctx),
            count: count(ctx),
        },
        "finish" => Action::Finish { app: app(ctx)? },
        "kill" => Action::Kill {
            app: app(ctx)?,
            user: owned(t.str(ctx, "user")),
        },
        "move" => {
            let app = app(ctx);
            let queue = owned(t.req_str(ctx, "queue"));
            Action::Move {
                app: app?,
                queue: queue?,
            }
        }
        "add_node" => {
            let host = owned(t.req_str(ctx, "host"));
            let rack = owned(t.str(ctx, "rack")).unwrap_or_else(|| DEFAULT_RACK.to_string());
            let label = crate::parse::node_label(ctx, t);
            Action::AddNode(NodeSpec {
                host: host?,
                rack,
                resources: resource(ctx, t, "resources", types, true)?,
                label,
                line: t.line,
            })
        }
        "remove_node" => Action::RemoveNode {
            host: owned(t.req_str(ctx, "host"))?,
        },
        "reload" => {
            if let Some(v) = t.raw("capacity") {
                let line = ctx.line(v.span().start);
                ctx.problem(
                    line,
                    &t.path_of("capacity"),
                    "reloading capacity-scheduler.xml (refreshQueues) is not implemented yet",
                );
                return None;
            }
            if t.raw("allocations").is_none() {
                t.missing(ctx, "allocations");
                return None;
            }
            Action::Reload {
                allocations: embedded(ctx, t, "allocations", source)?,
            }
        }
        "blacklist" => {
            let app = app(ctx);
            let add = t.str_list(ctx, "add").map(|(l, _)| l).unwrap_or_default();
            let remove = t
                .str_list(ctx, "remove")
                .map(|(l, _)| l)
                .unwrap_or_default();
            if add.is_empty() && remove.is_empty() {
                ctx.problem(
                    t.line,
                    &t.path_of("add"),
                    "a blacklist event lists hosts or racks to `add`, to `remove`, or both",
                );
                return None;
            }
            if let Some(bad) = add.iter().find(|n| *n == "*" || n.trim().is_empty()) {
                let line = t.raw("add").map_or(t.line, |v| ctx.line(v.span().start));
                ctx.problem(
                    line,
                    &t.path_of("add"),
                    format!("'{bad}' cannot be blacklisted: name a host or a rack"),
                );
                return None;
            }
            Action::Blacklist {
                app: app?,
                add,
                remove,
            }
        }
        "gang" => {
            // Every field is read before any `?`, so all of its problems are reported.
            let app = app(ctx);
            let gang = t.int(ctx, "gang", GANG_ID_RANGE.0, GANG_ID_RANGE.1);
            if t.raw("gang").is_none() {
                t.missing(ctx, "gang");
            }
            let resources = resource(ctx, t, "resources", types, true);
            if t.raw("count").is_none() {
                t.missing(ctx, "count");
            }
            let size = t
                .int(ctx, "count", GANG_SIZE_RANGE.0, GANG_SIZE_RANGE.1)
                .and_then(|(c, _)| u32::try_from(c).ok());
            let priority = priority(ctx).unwrap_or(0);
            let hold_timeout = match t.raw("hold_timeout") {
                None => Some(weft_types::Duration::from_millis(DEFAULT_HOLD_TIMEOUT_MS)),
                Some(_) => duration(ctx, t, "hold_timeout").map(|(d, _)| d),
            };
            let style = match t.str(ctx, "style") {
                None | Some(("soft", _)) => Some(weft_sched::GangStyle::Soft),
                Some(("hard", _)) => Some(weft_sched::GangStyle::Hard),
                Some((other, line)) => {
                    ctx.problem(
                        line,
                        &t.path_of("style"),
                        format!("unknown gang style '{other}'; expected soft or hard"),
                    );
                    None
                }
            };
            let duration = duration(ctx, t, "duration").map(|(d, _)| d);
            Action::Gang {
                app: app?,
                ask: weft_sched::GangAsk {
                    gang: gang.and_then(|(g, _)| u64::try_from(g).ok())?,
                    priority,
                    resources: resources?,
                    size: size?,
                    hold_timeout: Some(hold_timeout?),
                    style: style?,
                    tag: weft_sched::AskTag::NONE,
                },
                duration,
            }
        }
        "gang_cancel" => {
            let app = app(ctx);
            if t.raw("gang").is_none() {
                t.missing(ctx, "gang");
            }
            let gang = t.int(ctx, "gang", GANG_ID_RANGE.0, GANG_ID_RANGE.1);
            Action::GangCancel {
                app: app?,
                gang: gang.and_then(|(g, _)| u64::try_from(g).ok())?,
            }
        }
        "reservation" => {
            // Every field is read before any `?`, so all of its problems are reported.
            let queue = owned(t.req_str(ctx, "queue"));
            let id = owned(t.req_str(ctx, "id"));
            let start = duration(ctx, t, "start").map(|(d, _)| Time(d.as_millis()));
            let end = duration(ctx, t, "end").map(|(d, _)| Time(d.as_millis()));
            for key in ["start", "end"] {
                if t.raw(key).is_none() {
                    t.missing(ctx, key);
                }
            }
            let resources = resource(ctx, t, "resources", types, true);
            let gang = t.bool(ctx, "gang").is_some_and(|(b, _)| b);
            let move_on_expiry = t.bool(ctx, "move_on_expiry").is_none_or(|(b, _)| b);
            if let (Some(s), Some(e)) = (start, end) {
                if e <= s {
                    ctx.problem(
                        t.line,
                        &t.path_of("end"),
                        "a reservation ends after it starts",
                    );
                    return None;
                }
            }
            let (start, end, resources) = (start?, end?, resources?);
            Action::Reservation {
                queue: queue?,
                move_on_expiry,
                reservation: weft_sched::PlannedReservation {
                    id: id?,
                    start,
                    end,
                    steps: vec![(start, resources)],
                    gang,
                },
            }
        }
        "reserve" => Action::Reserve(reserve_spec(ctx, t, types)?),
        "reservation_update" => Action::ReservationUpdate(reserve_spec(ctx, t, types)?),
        "reservation_delete" => {
            let name = owned(t.req_str(ctx, "name"));
            let user = owned(t.req_str(ctx, "user"));
            Action::ReservationDelete {
                name: name?,
                user: user?,
            }
        }
        "demand" => {
            let app = app(ctx);
            if t.raw("demand").is_none() {
                t.missing(ctx, "demand");
            }
            let demand = t.raw("demand").and_then(|_| demand_json(ctx, t));
            let duration = duration(ctx, t, "duration").map(|(d, _)| d);
            Action::Demand {
                app: app?,
                demand: demand?,
                duration,
            }
        }
        "demand_kill" => {
            let app = app(ctx);
            if t.raw("demand").is_none() {
                t.missing(ctx, "demand");
            }
            let demand = t.int(ctx, "demand", 0, i64::MAX);
            Action::DemandKill {
                app: app?,
                demand: demand.and_then(|(d, _)| u64::try_from(d).ok())?,
                user: owned(t.str(ctx, "user")),
            }
        }
        _ => Action::Snapshot,
    })
}

/// The `demand` field: a string holding the ResourceDescription JSON (one object or an
/// array), `'''...'''` in the file. Only its JSON syntax is checked here (the message names
/// the line inside the file); what the demand language makes of it is the RM's answer at run
/// time, as REST's would be (a `demand_refused` line).
fn demand_json(ctx: &mut Ctx, t: &Tbl<'_, '_>) -> Option<serde_json::Value> {
    let (text, line) = t.str(ctx, "demand")?;
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v @ (serde_json::Value::Object(_) | serde_json::Value::Array(_))) => Some(v),
        Ok(_) => {
            ctx.problem(
                line,
                &t.path_of("demand"),
                "a demand is a ResourceDescription JSON object or an array of them",
            );
            None
        }
        Err(e) => {
            // A multi-line literal's text starts on the key's line when the opening quotes
            // end the line (TOML drops that newline), so JSON line L is file line key + L.
            let inner = u32::try_from(e.line()).unwrap_or(0);
            ctx.problem(line + inner, &t.path_of("demand"), format!("not JSON: {e}"));
            None
        }
    }
}

/// A `reserve` or `reservation_update` event's definition.
fn reserve_spec(ctx: &mut Ctx, t: &Tbl<'_, '_>, types: &ResourceTypes) -> Option<ReserveSpec> {
    // Every field is read before any `?`, so all of its problems are reported.
    let owned = |v: Option<(&str, u32)>| v.map(|(s, _)| s.to_string());
    let name = owned(t.req_str(ctx, "name"));
    let queue = owned(t.req_str(ctx, "queue"));
    let user = owned(t.req_str(ctx, "user"));
    for key in ["arrival", "deadline", "requests"] {
        if t.raw(key).is_none() {
            t.missing(ctx, key);
        }
    }
    let arrival = duration(ctx, t, "arrival").map(|(d, _)| Time(d.as_millis()));
    let deadline = duration(ctx, t, "deadline").map(|(d, _)| Time(d.as_millis()));
    let recurrence = duration(ctx, t, "recurrence").map(|(d, _)| d);
    let interpreter = match t.str(ctx, "interpreter") {
        None | Some(("all", _)) => Some(ReserveInterpreter::All),
        Some(("any", _)) => Some(ReserveInterpreter::Any),
        Some(("order", _)) => Some(ReserveInterpreter::Order),
        Some(("order_no_gap", _)) => Some(ReserveInterpreter::OrderNoGap),
        Some((other, line)) => {
            ctx.problem(
                line,
                &t.path_of("interpreter"),
                format!("unknown interpreter '{other}'; expected all, any, order or order_no_gap"),
            );
            None
        }
    };
    let mut requests = Some(Vec::new());
    if let Some(v) = t.raw("requests") {
        match v.get_ref() {
            toml::de::DeValue::Array(items) if !items.is_empty() => {
                for (i, item) in items.iter().enumerate() {
                    let path = format!("{}[{i}]", t.path_of("requests"));
                    let r = Tbl::of(ctx, item, path).and_then(|r| reserve_request(ctx, &r, types));
                    match (r, requests.as_mut()) {
                        (Some(r), Some(all)) => all.push(r),
                        _ => requests = None,
                    }
                }
            }
            _ => {
                let line = ctx.line(v.span().start);
                ctx.problem(
                    line,
                    &t.path_of("requests"),
                    "expected a non-empty array of tables, e.g. [{resources = \"1024 mb, 1 vcores\", count = 1, duration = \"60s\"}]",
                );
                requests = None;
            }
        }
    }
    Some(ReserveSpec {
        name: name?,
        queue: queue?,
        user: user?,
        arrival: arrival?,
        deadline: deadline?,
        interpreter: interpreter?,
        requests: requests?,
        recurrence,
    })
}

/// One stage of a reservation: `{resources, count, gang?, duration}`.
fn reserve_request(
    ctx: &mut Ctx,
    r: &Tbl<'_, '_>,
    types: &ResourceTypes,
) -> Option<ReserveRequest> {
    r.check_keys(ctx, &["resources", "count", "gang", "duration"]);
    let resources = resource(ctx, r, "resources", types, true);
    for key in ["count", "duration"] {
        if r.raw(key).is_none() {
            r.missing(ctx, key);
        }
    }
    let count = r
        .int(ctx, "count", COUNT_RANGE.0, COUNT_RANGE.1)
        .and_then(|(c, _)| u32::try_from(c).ok());
    let gang = match r.raw("gang") {
        None => Some(1),
        Some(_) => r
            .int(ctx, "gang", GANG_SIZE_RANGE.0, GANG_SIZE_RANGE.1)
            .and_then(|(g, _)| u32::try_from(g).ok()),
    };
    let duration = duration(ctx, r, "duration").map(|(d, _)| d);
    Some(ReserveRequest {
        resources: resources?,
        count: count?,
        gang: gang?,
        duration: duration?,
    })
}
