//! The printer: a demand back to JSON, and time expressions to the seed's compact notation.
//! Reading what it prints gives the same tree (the property tests check it).

use serde_json::{json, Map, Value};

use crate::ast::{
    AbsTime, Anchor, DemandExpr, DemandRef, Field, Gang, Interval, LeaseLength, LowerBound, Owner,
    ResourceDescription, TimeExpr, UpperBound, Zone,
};

/// A demand as JSON, in ResourceDescription v1's shape.
pub fn to_json(demand: &ResourceDescription) -> Value {
    let mut object = Map::new();
    object.insert("DemandID".into(), json!(demand.demand_id));
    if let Some(name) = &demand.name {
        object.insert("Name".into(), json!(name));
    }
    object.insert("ResourceRequest".into(), request_json(demand));
    match demand.gang {
        Gang::Off => {}
        Gang::All => {
            object.insert("Gang".into(), json!(true));
        }
        Gang::Size(g) => {
            object.insert("Gang".into(), json!(g));
        }
    }
    if let Some(start) = &demand.start {
        object.insert("Start".into(), field_json(start, "Time", time_json));
    }
    if let Some(duration) = &demand.duration {
        object.insert(
            "Duration".into(),
            field_json(duration, "Time", |lease| match lease {
                LeaseLength::Length(ms) if duration.strategy.is_none() => json!(length(*ms)),
                LeaseLength::Length(ms) => json!(format!("[, +{}]", length(*ms))),
                LeaseLength::Interval(interval) => interval_json(interval),
            }),
        );
    }
    if let Some(deadline) = &demand.deadline {
        object.insert("DeadLine".into(), field_json(deadline, "Time", time_json));
    }
    if let Some(order) = &demand.order_by {
        object.insert("OrderBy".into(), field_json(order, "After", demand_json));
    }
    if let Some(strategy) = demand.strategy {
        object.insert("Strategy".into(), json!(strategy.as_str()));
    }
    if let Some(ms) = demand.claim_timeout {
        object.insert("ClaimTimeout".into(), json!(length(ms)));
    }
    Value::Object(object)
}

/// A demand as one line of JSON text.
pub fn to_json_string(demand: &ResourceDescription) -> String {
    to_json(demand).to_string()
}

fn request_json(demand: &ResourceDescription) -> Value {
    let request = &demand.request;
    let mut capability = Map::new();
    capability.insert("memory".into(), json!(request.memory_mb));
    capability.insert("vCores".into(), json!(request.vcores));
    if !request.resources.is_empty() {
        capability.insert("resources".into(), json!(request.resources));
    }
    let mut object = Map::new();
    object.insert("capability".into(), Value::Object(capability));
    object.insert("num-containers".into(), json!(request.num_containers));
    if let Some(priority) = request.priority {
        object.insert("priority".into(), json!(priority));
    }
    if let Some(name) = &request.resource_name {
        object.insert("resource-name".into(), json!(name));
    }
    if let Some(relax) = request.relax_locality {
        object.insert("relax-locality".into(), json!(relax));
    }
    if let Some(label) = &request.node_label_expression {
        object.insert("node-label-expression".into(), json!(label));
    }
    Value::Object(object)
}

fn field_json<T>(field: &Field<T>, key: &str, value: impl Fn(&T) -> Value) -> Value {
    match field.strategy {
        None => value(&field.value),
        Some(strategy) => json!({ key: value(&field.value), "Strategy": strategy.as_str() }),
    }
}

/// A time expression in the JSON structure (intervals as two-element arrays).
pub fn time_json(expr: &TimeExpr) -> Value {
    match expr {
        TimeExpr::Interval(interval) => interval_json(interval),
        TimeExpr::And(branches) => {
            json!({"AND": branches.iter().map(time_json).collect::<Vec<_>>()})
        }
        TimeExpr::Or(branches) => json!({"OR": branches.iter().map(time_json).collect::<Vec<_>>()}),
        TimeExpr::Not(inner) => json!({"NOT": time_json(inner)}),
    }
}

fn interval_json(interval: &Interval) -> Value {
    let from = match interval.from {
        None => Value::Null,
        Some(LowerBound::EpochMs(ms)) => json!(ms),
        Some(bound) => json!(lower(bound)),
    };
    let to = match interval.to {
        None => Value::Null,
        Some(UpperBound::EpochMs(ms)) => json!(ms),
        Some(bound) => json!(upper(bound)),
    };
    json!([from, to])
}

/// A time expression in the seed's compact notation; `None` when it holds epoch milliseconds,
/// which only the JSON structure can carry.
pub fn to_compact(expr: &TimeExpr) -> Option<String> {
    match expr {
        TimeExpr::Interval(interval) => {
            if matches!(interval.from, Some(LowerBound::EpochMs(_)))
                || matches!(interval.to, Some(UpperBound::EpochMs(_)))
            {
                return None;
            }
            let from = interval.from.map(lower).unwrap_or_default();
            let to = interval.to.map(upper).unwrap_or_default();
            Some(format!("[{from}, {to}]"))
        }
        TimeExpr::And(branches) | TimeExpr::Or(branches) => {
            let keyword = if matches!(expr, TimeExpr::And(_)) {
                "AND"
            } else {
                "OR"
            };
            let parts = branches
                .iter()
                .map(to_compact)
                .collect::<Option<Vec<_>>>()?;
            Some(format!("{keyword}({})", parts.join(", ")))
        }
        TimeExpr::Not(inner) => Some(format!("NOT({})", to_compact(inner)?)),
    }
}

fn lower(bound: LowerBound) -> String {
    match bound {
        LowerBound::Anchor(anchor, offset) => {
            let name = match anchor {
                Anchor::Now => "NOW",
                Anchor::Start => "START",
            };
            if offset == 0 {
                name.to_owned()
            } else {
                format!("{name}+{}", length(offset))
            }
        }
        LowerBound::Absolute(time) => abs(time),
        LowerBound::EpochMs(ms) => ms.to_string(),
    }
}

fn upper(bound: UpperBound) -> String {
    match bound {
        UpperBound::Offset(ms) => format!("+{}", length(ms)),
        UpperBound::Absolute(time) => abs(time),
        UpperBound::EpochMs(ms) => ms.to_string(),
        UpperBound::Count(n) => format!("^{n}"),
    }
}

fn abs(time: AbsTime) -> String {
    let zone = match time.zone {
        None => String::new(),
        Some(Zone::Utc) => "Z".to_owned(),
        Some(Zone::Offset(minutes)) => {
            let sign = if minutes < 0 { '-' } else { '+' };
            let m = minutes.unsigned_abs();
            format!("{sign}{:02}:{:02}", m / 60, m % 60)
        }
    };
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}{zone}",
        time.year, time.month, time.day, time.hour, time.minute, time.second
    )
}

/// A length in the seed's units (`1h30m`, `45s`, `0s`). Lengths are whole seconds, since
/// every unit the grammar has is.
pub fn length(ms: u64) -> String {
    let seconds = ms / 1000;
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let mut text = String::new();
    if h > 0 {
        text.push_str(&format!("{h}h"));
    }
    if m > 0 {
        text.push_str(&format!("{m}m"));
    }
    if s > 0 || text.is_empty() {
        text.push_str(&format!("{s}s"));
    }
    text
}

/// An OrderBy expression in JSON.
pub fn demand_json(expr: &DemandExpr) -> Value {
    match expr {
        DemandExpr::Ref(reference) => reference_json(reference),
        DemandExpr::And(branches) => {
            json!({"AND": branches.iter().map(demand_json).collect::<Vec<_>>()})
        }
        DemandExpr::Or(branches) => {
            json!({"OR": branches.iter().map(demand_json).collect::<Vec<_>>()})
        }
        DemandExpr::Not(inner) => json!({"NOT": demand_json(inner)}),
    }
}

fn reference_json(reference: &DemandRef) -> Value {
    if reference.owner.is_none() && reference.outcome.is_none() {
        return json!(reference.demand);
    }
    json!(reference_text(reference))
}

/// `application_1_2/1200:ok`: the reference as the grammar's string form.
pub fn reference_text(reference: &DemandRef) -> String {
    let owner = match reference.owner {
        None => String::new(),
        Some(Owner::Application {
            cluster_timestamp,
            seq,
        }) => format!("application_{cluster_timestamp}_{seq}/"),
        Some(Owner::Reservation {
            cluster_timestamp,
            seq,
        }) => format!("reservation_{cluster_timestamp}_{seq}/"),
    };
    let outcome = reference
        .outcome
        .map(|o| format!(":{}", o.as_str()))
        .unwrap_or_default();
    format!("{owner}{}{outcome}", reference.demand)
}
