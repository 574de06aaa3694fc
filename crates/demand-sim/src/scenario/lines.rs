//! The output lines only the RM driver prints (docs/scenario-format.md, "driver = rm"), built
//! field by field in a fixed order like the scheduler runner's.

use std::collections::BTreeMap;

use weft_plan::{Reservation, ReservationId};
use weft_rm_core::{demand_state_name, exit, DemandReport, RmCore, RmError};
use weft_sim::output::{resource_json, snapshot_line, Names, Obj};
use weft_types::yarn_id::ApplicationId;
use weft_types::{AppId, NodeId, ResourceTypes, Time};

/// Transition reasons that are also told as a line of their own (spec §3.6's outputs).
const NOTED: &[&str] = &[
    "deadline_missed",
    "lease_overrun",
    "window_missed",
    "replanned",
];

pub(crate) fn rejected(t: u64, app: &str, reason: &str, code: Option<String>) -> String {
    Obj::line("rejected", t)
        .field("app", app)
        .field("reason", reason)
        .field("code", code)
        .finish()
}

/// The scheduler's code inside the RM's diagnostics ("... rejected by the scheduler (code): ...").
pub(crate) fn reject_code(diagnostics: &str) -> Option<String> {
    let rest = diagnostics.split_once("by the scheduler (")?.1;
    Some(rest.split_once(')')?.0.to_string())
}

pub(crate) fn skipped(t: u64, event: &str, app: &str, reason: &str) -> String {
    Obj::line("skipped", t)
        .field("event", event)
        .field("app", app)
        .field("reason", reason)
        .finish()
}

/// The status REST answers the same refusal with.
pub(crate) fn http_status(e: &RmError) -> u16 {
    match e {
        RmError::DemandFinal { .. } => 409,
        RmError::UnknownDemand(_) | RmError::UnknownApp(_) => 404,
        RmError::Forbidden(_) => 403,
        _ => 400,
    }
}

/// A refused demand's message: the demand language's own (pointer, column, reason), as in
/// REST's 400 body.
pub(crate) fn demand_error(e: &RmError) -> String {
    match e {
        RmError::InvalidDemand(why) => why.clone(),
        other => other.to_string(),
    }
}

/// YARN's exit status as the scheduler runner names it.
pub(crate) fn exit_name(status: i32) -> String {
    match status {
        exit::SUCCESS => "success".into(),
        exit::ABORTED => "released".into(),
        exit::PREEMPTED => "preempted".into(),
        exit::KILLED_BY_APPMASTER => "killed_by_am".into(),
        exit::KILLED_BY_RESOURCEMANAGER => "killed".into(),
        exit::KILLED_AFTER_APP_COMPLETION => "killed_after_app_completion".into(),
        other => format!("exit_{other}"),
    }
}

pub(crate) fn reservation_rejected(t: u64, name: &str, action: &str, reason: &str) -> String {
    Obj::line("reservation_rejected", t)
        .field("name", name)
        .field("action", action)
        .field("reason", reason)
        .finish()
}

pub(crate) fn reservation_accepted(
    t: u64,
    name: &str,
    action: &str,
    r: &Reservation,
    types: &ResourceTypes,
) -> String {
    Obj::line("reservation_accepted", t)
        .field("name", name)
        .field("action", action)
        .field("id", r.id.to_string())
        .field("start_ms", r.start.as_millis())
        .field("end_ms", r.end.as_millis())
        .raw("allocations", &allocations(r, types))
        .finish()
}

/// `[{"start_ms", "end_ms", "resources"}]`: where the reservation holds what.
fn allocations(r: &Reservation, types: &ResourceTypes) -> String {
    let items: Vec<String> = r
        .allocation
        .nonzero_segments()
        .iter()
        .map(|s| {
            Obj::new()
                .field("start_ms", s.start.as_millis())
                .field("end_ms", s.end.as_millis())
                .raw("resources", &resource_json(types, &s.value))
                .finish()
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// The `demand_state` line of transition `i`, then its note line when its reason is one of
/// §3.6's (`deadline_missed`, `lease_overrun`, `window_missed`, `replanned`) and the demand
/// did not fail with it.
pub(crate) fn demand_state(
    app: &str,
    report: &DemandReport,
    i: usize,
    reservation_names: &BTreeMap<String, String>,
) -> Vec<String> {
    let Some(step) = report.timeline.get(i) else {
        return Vec::new();
    };
    let at = step.at.as_millis();
    let from = i
        .checked_sub(1)
        .and_then(|p| report.timeline.get(p))
        .map(|p| demand_state_name(p.state));
    let to = demand_state_name(step.state);
    let reason = step.reason.as_str();
    let mut line = Obj::line("demand_state", at)
        .field("app", app)
        .field("demand", report.demand_id)
        .field("from", from)
        .field("to", to)
        .field("reason", reason);
    if !step.detail.is_empty() {
        line = line.field("detail", &step.detail);
    }
    if matches!(reason, "planned" | "deferred" | "replanned") {
        let reservation = report.reservation_id.as_ref();
        line = line
            .field(
                "planned_start_ms",
                report.planned_start.map(Time::as_millis),
            )
            .field("planned_end_ms", report.planned_end.map(Time::as_millis))
            .field("reservation", reservation)
            .field(
                "reservation_name",
                reservation.and_then(|id| reservation_names.get(id)),
            );
    }
    if reason == "missed_opportunity" || report.missed_opportunities > 0 {
        line = line.field("missed_opportunities", report.missed_opportunities);
    }
    let mut lines = vec![line.finish()];
    if NOTED.contains(&reason) && to != "FAILED" {
        let mut note = Obj::line(reason, at)
            .field("app", app)
            .field("demand", report.demand_id)
            .field("state", to);
        if !step.detail.is_empty() {
            note = note.field("detail", &step.detail);
        }
        lines.push(note.finish());
    }
    lines
}

/// `[{"queue", "weight", "min_share", "max_share"}]`: the plan queue's leaves as the
/// scheduler's plan follower sized them (its reservations' leaves and `<plan>-default`).
pub(crate) fn entitlements(plan: &str, s: &weft_sched::Snapshot, types: &ResourceTypes) -> String {
    let prefix = format!("{plan}.");
    let items: Vec<String> = s
        .queues
        .iter()
        .filter(|q| q.leaf && q.name.starts_with(&prefix))
        .map(|q| {
            Obj::new()
                .field("queue", &q.name)
                .field("weight", q.weight)
                .raw("min_share", &resource_json(types, &q.min_resources))
                .raw("max_share", &resource_json(types, &q.max_resources))
                .finish()
        })
        .collect();
    format!("[{}]", items.join(","))
}

/// Scenario names of the scheduler's apps (its `AppId` is the application's sequence).
struct RunNames<'a> {
    apps: &'a BTreeMap<ApplicationId, String>,
}

impl Names for RunNames<'_> {
    fn app(&self, app: AppId) -> String {
        self.apps
            .iter()
            .find(|(id, _)| id.seq == app.0)
            .map_or_else(|| app.to_string(), |(_, name)| name.clone())
    }

    fn node(&self, node: NodeId) -> String {
        node.to_string()
    }
}

/// The scheduler runner's `snapshot` line, plus `plans`: each plan queue's `capacity` and
/// `committed_now`, and its reservations (`id`, `name`, `user`, `start_ms`, `end_ms`,
/// `reserved_now`).
pub(crate) fn snapshot(
    t: u64,
    core: &mut RmCore,
    types: &ResourceTypes,
    apps: &BTreeMap<ApplicationId, String>,
    reservations: &BTreeMap<String, ReservationId>,
) -> String {
    let snap = core.scheduler_snapshot();
    let names = RunNames { apps };
    let line = snapshot_line(t, &snap, &[], None, types, &names);
    let now = Time(t);
    let by_id: BTreeMap<String, &String> = reservations
        .iter()
        .map(|(name, id)| (id.to_string(), name))
        .collect();
    let system = core.reservations();
    let plans: Vec<String> = system
        .queues()
        .filter_map(|q| {
            let plan = system.plan(q)?;
            let items: Vec<String> = plan
                .reservations()
                .map(|r| {
                    let id = r.id.to_string();
                    Obj::new()
                        .field("name", by_id.get(&id))
                        .field("id", &id)
                        .field("user", &r.user)
                        .field("start_ms", r.start.as_millis())
                        .field("end_ms", r.end.as_millis())
                        .raw("reserved_now", &resource_json(types, &r.at(now)))
                        .finish()
                })
                .collect();
            Some(
                Obj::new()
                    .field("queue", q)
                    .raw(
                        "capacity",
                        &resource_json(types, &plan.capacity().value_at(now)),
                    )
                    .raw(
                        "committed_now",
                        &resource_json(types, &plan.committed().value_at(now)),
                    )
                    .raw("reservations", &format!("[{}]", items.join(",")))
                    .finish(),
            )
        })
        .collect();
    match line.strip_suffix('}') {
        Some(head) => format!("{head},\"plans\":[{}]}}", plans.join(",")),
        None => line,
    }
}
