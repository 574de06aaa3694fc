//! ResourceDescription v1 from JSON (§3.2.1, §3.2.4): shape and form checks, every problem
//! named by its JSON pointer (and column, inside compact strings). Checks that need more than
//! one field or one demand are in `checks`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::ast::{
    DemandExpr, DemandRef, Field, Gang, Interval, LeaseLength, LowerBound, Outcome, Owner,
    ResourceDescription, ResourceRequest, Strategy, TimeExpr, UpperBound,
};
use crate::compact::{self, ColumnError, MAX_NESTING};
use crate::error::{child, DemandError};

/// The longest `Name` accepted, in characters.
pub const MAX_NAME_CHARS: usize = 256;

const TOP_FIELDS: [&str; 11] = [
    "DemandID",
    "Name",
    "ResourceRequest",
    "Gang",
    "Start",
    "Duration",
    "DeadLine",
    "Deadline",
    "OrderBy",
    "Strategy",
    "ClaimTimeout",
];
const REQUEST_FIELDS: [&str; 6] = [
    "capability",
    "num-containers",
    "priority",
    "resource-name",
    "relax-locality",
    "node-label-expression",
];
const CAPABILITY_FIELDS: [&str; 3] = ["memory", "vCores", "resources"];

/// One demand read from JSON, with its warnings.
pub(crate) struct ReadDemand {
    pub(crate) demand: ResourceDescription,
    pub(crate) warnings: Vec<DemandError>,
}

/// Collects the problems of one demand so that every field is reported, not only the first.
struct Reader {
    errors: Vec<DemandError>,
    warnings: Vec<DemandError>,
}

impl Reader {
    fn fail<T>(&mut self, error: DemandError) -> Option<T> {
        self.errors.push(error);
        None
    }

    fn column(&mut self, pointer: &str, error: ColumnError) {
        self.errors
            .push(DemandError::at_column(pointer, error.column, error.message));
    }
}

/// Reads one ResourceDescription object at `pointer`.
pub(crate) fn read_demand(value: &Value, pointer: &str) -> Result<ReadDemand, Vec<DemandError>> {
    let mut reader = Reader {
        errors: Vec::new(),
        warnings: Vec::new(),
    };
    let demand = read_fields(&mut reader, value, pointer);
    match demand {
        Some(demand) if reader.errors.is_empty() => Ok(ReadDemand {
            demand,
            warnings: reader.warnings,
        }),
        _ => Err(reader.errors),
    }
}

fn read_fields(reader: &mut Reader, value: &Value, pointer: &str) -> Option<ResourceDescription> {
    let Some(object) = value.as_object() else {
        return reader.fail(DemandError::at(
            pointer,
            format!(
                "a ResourceDescription must be an object, not {}",
                kind(value)
            ),
        ));
    };
    unknown_fields(reader, object, pointer, &TOP_FIELDS);
    if object.contains_key("DeadLine") && object.contains_key("Deadline") {
        reader.errors.push(DemandError::at(
            &child(pointer, "Deadline"),
            "DeadLine and its alias Deadline are both given; keep one",
        ));
    }
    let demand_id = match object.get("DemandID") {
        Some(v) => integer(reader, v, &child(pointer, "DemandID"), i64::MAX as u64),
        None => reader.fail(DemandError::at(pointer, "DemandID is required")),
    };
    let request = match object.get("ResourceRequest") {
        Some(v) => resource_request(reader, v, &child(pointer, "ResourceRequest")),
        None => reader.fail(DemandError::at(pointer, "ResourceRequest is required")),
    };
    let name = object.get("Name").and_then(|v| {
        let at = child(pointer, "Name");
        let text = string(reader, v, &at)?;
        if text.chars().count() > MAX_NAME_CHARS {
            return reader.fail(DemandError::at(
                &at,
                format!("Name is longer than {MAX_NAME_CHARS} characters"),
            ));
        }
        Some(text.to_owned())
    });
    let gang = object
        .get("Gang")
        .map(|v| gang(reader, v, &child(pointer, "Gang")));
    let strategy = object
        .get("Strategy")
        .and_then(|v| strategy(reader, v, &child(pointer, "Strategy")));
    let start = object
        .get("Start")
        .and_then(|v| time_field(reader, v, &child(pointer, "Start"), FieldKind::Start));
    let deadline_key = if object.contains_key("DeadLine") {
        "DeadLine"
    } else {
        if object.contains_key("Deadline") {
            reader.warnings.push(DemandError::at(
                &child(pointer, "Deadline"),
                "Deadline is read as DeadLine, the seed's spelling",
            ));
        }
        "Deadline"
    };
    let deadline = object.get(deadline_key).and_then(|v| {
        time_field(
            reader,
            v,
            &child(pointer, deadline_key),
            FieldKind::DeadLine,
        )
    });
    let duration = object
        .get("Duration")
        .and_then(|v| duration_field(reader, v, &child(pointer, "Duration")));
    let order_by = object
        .get("OrderBy")
        .and_then(|v| order_field(reader, v, &child(pointer, "OrderBy")));
    let claim_timeout = object.get("ClaimTimeout").and_then(|v| {
        let at = child(pointer, "ClaimTimeout");
        let text = string(reader, v, &at)?;
        compact::parse_length(text)
            .map_err(|e| reader.column(&at, e))
            .ok()
    });
    Some(ResourceDescription {
        demand_id: demand_id?,
        name,
        request: request?,
        gang: gang.flatten().unwrap_or_default(),
        start,
        duration,
        deadline,
        order_by,
        strategy,
        claim_timeout,
    })
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn unknown_fields(reader: &mut Reader, object: &Map<String, Value>, pointer: &str, known: &[&str]) {
    for key in object.keys() {
        if !known.contains(&key.as_str()) {
            reader.errors.push(DemandError::at(
                &child(pointer, key),
                format!(
                    "unknown field '{key}'; expected one of {}",
                    known.join(", ")
                ),
            ));
        }
    }
}

fn integer(reader: &mut Reader, value: &Value, pointer: &str, max: u64) -> Option<u64> {
    match value.as_u64() {
        Some(n) if n <= max => Some(n),
        _ => reader.fail(DemandError::at(
            pointer,
            format!("expected an integer from 0 to {max}, found {value}"),
        )),
    }
}

fn string<'v>(reader: &mut Reader, value: &'v Value, pointer: &str) -> Option<&'v str> {
    match value.as_str() {
        Some(text) => Some(text),
        None => reader.fail(DemandError::at(
            pointer,
            format!("expected a string, found {}", kind(value)),
        )),
    }
}

fn strategy(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Strategy> {
    match value.as_str() {
        Some("strict") => Some(Strategy::Strict),
        Some("loose") => Some(Strategy::Loose),
        _ => reader.fail(DemandError::at(
            pointer,
            format!("expected \"strict\" or \"loose\", found {value}"),
        )),
    }
}

fn gang(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Gang> {
    match value {
        Value::Bool(false) => Some(Gang::Off),
        Value::Bool(true) => Some(Gang::All),
        Value::Number(n) if n.as_u64().is_some_and(|g| g >= 1) => n.as_u64().map(Gang::Size),
        _ => reader.fail(DemandError::at(
            pointer,
            format!("expected true, false or a gang size of at least 1, found {value}"),
        )),
    }
}

fn resource_request(reader: &mut Reader, value: &Value, pointer: &str) -> Option<ResourceRequest> {
    let Some(object) = value.as_object() else {
        return reader.fail(DemandError::at(
            pointer,
            format!("expected an object, found {}", kind(value)),
        ));
    };
    unknown_fields(reader, object, pointer, &REQUEST_FIELDS);
    let capability = match object.get("capability") {
        Some(v) => capability(reader, v, &child(pointer, "capability")),
        None => reader.fail(DemandError::at(pointer, "capability is required")),
    };
    let num_containers = match object.get("num-containers") {
        Some(v) => {
            let at = child(pointer, "num-containers");
            match v.as_u64() {
                Some(n) if n >= 1 && n <= i64::MAX as u64 => Some(n),
                _ => reader.fail(DemandError::at(
                    &at,
                    format!("expected an integer of at least 1, found {v}"),
                )),
            }
        }
        None => reader.fail(DemandError::at(pointer, "num-containers is required")),
    };
    let priority =
        object
            .get("priority")
            .and_then(|v| match v.as_i64().and_then(|p| i32::try_from(p).ok()) {
                Some(p) => Some(p),
                None => reader.fail(DemandError::at(
                    &child(pointer, "priority"),
                    format!("expected a 32-bit integer, found {v}"),
                )),
            });
    let resource_name = object
        .get("resource-name")
        .and_then(|v| string(reader, v, &child(pointer, "resource-name")).map(str::to_owned));
    let relax_locality = object
        .get("relax-locality")
        .and_then(|v| match v.as_bool() {
            Some(b) => Some(b),
            None => reader.fail(DemandError::at(
                &child(pointer, "relax-locality"),
                format!("expected true or false, found {v}"),
            )),
        });
    let node_label_expression = object.get("node-label-expression").and_then(|v| {
        string(reader, v, &child(pointer, "node-label-expression")).map(str::to_owned)
    });
    let (memory_mb, vcores, resources) = capability?;
    Some(ResourceRequest {
        memory_mb,
        vcores,
        resources,
        num_containers: num_containers?,
        priority,
        resource_name,
        relax_locality,
        node_label_expression,
    })
}

type Capability = (u64, u64, BTreeMap<String, u64>);

fn capability(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Capability> {
    let Some(object) = value.as_object() else {
        return reader.fail(DemandError::at(
            pointer,
            format!("expected an object, found {}", kind(value)),
        ));
    };
    unknown_fields(reader, object, pointer, &CAPABILITY_FIELDS);
    let amount = |reader: &mut Reader, key: &str| match object.get(key) {
        Some(v) => integer(reader, v, &child(pointer, key), i64::MAX as u64),
        None => reader.fail(DemandError::at(pointer, format!("{key} is required"))),
    };
    let memory = amount(reader, "memory");
    let vcores = amount(reader, "vCores");
    let mut resources = BTreeMap::new();
    if let Some(v) = object.get("resources") {
        let at = child(pointer, "resources");
        match v.as_object() {
            Some(map) => {
                for (name, amount) in map {
                    if let Some(n) = integer(reader, amount, &child(&at, name), i64::MAX as u64) {
                        resources.insert(name.clone(), n);
                    }
                }
            }
            None => {
                reader.fail::<()>(DemandError::at(
                    &at,
                    format!("expected an object of amounts, found {}", kind(v)),
                ));
            }
        }
    }
    Some((memory?, vcores?, resources))
}

/// Which field a time expression belongs to: each allows different forms (§3.2.3's table).
#[derive(Clone, Copy, PartialEq, Eq)]
enum FieldKind {
    Start,
    DeadLine,
}

impl FieldKind {
    fn name(self) -> &'static str {
        match self {
            FieldKind::Start => "Start",
            FieldKind::DeadLine => "DeadLine",
        }
    }
}

fn time_field(
    reader: &mut Reader,
    value: &Value,
    pointer: &str,
    field: FieldKind,
) -> Option<Field<TimeExpr>> {
    if let Some(object) = value.as_object().filter(|o| o.contains_key("Time")) {
        unknown_fields(reader, object, pointer, &["Time", "Strategy"]);
        let strategy = object
            .get("Strategy")
            .and_then(|v| strategy(reader, v, &child(pointer, "Strategy")));
        let at = child(pointer, "Time");
        let expr = object
            .get("Time")
            .and_then(|v| time_expr(reader, v, &at, 0))?;
        check_time_form(reader, &expr, &at, field)?;
        return Some(Field {
            value: expr,
            strategy,
        });
    }
    let expr = time_expr(reader, value, pointer, 0)?;
    check_time_form(reader, &expr, pointer, field)?;
    Some(Field {
        value: expr,
        strategy: None,
    })
}

/// §3.2.3's table: Start takes everything but `START`; DeadLine one interval or an AND of
/// intervals, without counts.
fn check_time_form(
    reader: &mut Reader,
    expr: &TimeExpr,
    pointer: &str,
    field: FieldKind,
) -> Option<()> {
    let name = field.name();
    match (field, expr) {
        (_, TimeExpr::Interval(interval)) => check_interval_form(reader, interval, pointer, field),
        (FieldKind::Start, TimeExpr::And(branches) | TimeExpr::Or(branches)) => {
            let mut ok = Some(());
            for branch in branches {
                ok = ok.and(check_time_form(reader, branch, pointer, field));
            }
            ok
        }
        (FieldKind::Start, TimeExpr::Not(inner)) => check_time_form(reader, inner, pointer, field),
        (FieldKind::DeadLine, TimeExpr::And(branches)) => {
            let mut ok = Some(());
            for branch in branches {
                let form = match branch {
                    TimeExpr::Interval(interval) => {
                        check_interval_form(reader, interval, pointer, field)
                    }
                    _ => reader.fail(DemandError::at(
                        pointer,
                        format!("AND in {name} takes intervals only, not nested operators"),
                    )),
                };
                ok = ok.and(form);
            }
            ok
        }
        (FieldKind::DeadLine, TimeExpr::Or(_)) => reader.fail(DemandError::at(
            pointer,
            format!("OR is not allowed in {name}"),
        )),
        (FieldKind::DeadLine, TimeExpr::Not(_)) => reader.fail(DemandError::at(
            pointer,
            format!("NOT is not allowed in {name}"),
        )),
    }
}

fn check_interval_form(
    reader: &mut Reader,
    interval: &Interval,
    pointer: &str,
    field: FieldKind,
) -> Option<()> {
    let name = field.name();
    if field == FieldKind::Start {
        if let Some(LowerBound::Anchor(crate::ast::Anchor::Start, _)) = interval.from {
            return reader.fail(DemandError::at(
                pointer,
                "START cannot bound Start: it is the instant Start chooses",
            ));
        }
    }
    if field != FieldKind::Start && matches!(interval.to, Some(UpperBound::Count(_))) {
        return reader.fail(DemandError::at(
            pointer,
            format!("a count ^N is not allowed in {name}"),
        ));
    }
    Some(())
}

fn time_expr(reader: &mut Reader, value: &Value, pointer: &str, depth: usize) -> Option<TimeExpr> {
    if depth > MAX_NESTING {
        return reader.fail(DemandError::at(
            pointer,
            format!("expressions nest deeper than {MAX_NESTING} levels"),
        ));
    }
    match value {
        Value::String(text) => compact::parse_time_expr(text)
            .map_err(|e| reader.column(pointer, e))
            .ok(),
        Value::Array(_) => interval_array(reader, value, pointer).map(TimeExpr::Interval),
        Value::Object(object) => {
            let (key, inner) = single_operator(reader, object, pointer)?;
            let at = child(pointer, key);
            if key == "NOT" {
                return time_expr(reader, inner, &at, depth + 1).map(|e| TimeExpr::Not(Box::new(e)));
            }
            let items = operator_items(reader, inner, &at, key)?;
            let mut branches = Vec::with_capacity(items.len());
            let mut complete = true;
            for (i, item) in items.iter().enumerate() {
                match time_expr(reader, item, &child(&at, &i.to_string()), depth + 1) {
                    Some(branch) => branches.push(branch),
                    None => complete = false,
                }
            }
            if !complete {
                return None;
            }
            Some(if key == "AND" {
                TimeExpr::And(branches)
            } else {
                TimeExpr::Or(branches)
            })
        }
        _ => reader.fail(DemandError::at(
            pointer,
            format!(
                "expected an interval [T1, T2], a compact string or {{\"AND\"|\"OR\"|\"NOT\": …}}, found {}",
                kind(value)
            ),
        )),
    }
}

fn single_operator<'v>(
    reader: &mut Reader,
    object: &'v Map<String, Value>,
    pointer: &str,
) -> Option<(&'static str, &'v Value)> {
    let mut found = None;
    for key in object.keys() {
        match ["AND", "OR", "NOT"].iter().find(|k| **k == key) {
            Some(k) if found.is_none() => found = Some(*k),
            _ => {
                return reader.fail(DemandError::at(
                    &child(pointer, key),
                    format!(
                        "an operator object has exactly one key, AND, OR or NOT; found '{key}'"
                    ),
                ))
            }
        }
    }
    match found {
        Some(key) => object.get(key).map(|inner| (key, inner)),
        None => reader.fail(DemandError::at(
            pointer,
            "an empty object; expected one of AND, OR or NOT",
        )),
    }
}

fn operator_items<'v>(
    reader: &mut Reader,
    value: &'v Value,
    pointer: &str,
    key: &str,
) -> Option<&'v Vec<Value>> {
    match value.as_array() {
        Some(items) if !items.is_empty() => Some(items),
        Some(_) => reader.fail(DemandError::at(
            pointer,
            format!("{key} needs at least one branch"),
        )),
        None => reader.fail(DemandError::at(
            pointer,
            format!("{key} takes an array, found {}", kind(value)),
        )),
    }
}

fn interval_array(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Interval> {
    let items = value.as_array()?;
    if items.len() != 2 {
        return reader.fail(DemandError::at(
            pointer,
            format!(
                "an interval has exactly two bounds [T1, T2], found {}",
                items.len()
            ),
        ));
    }
    let from_at = child(pointer, "0");
    let from = match &items[0] {
        Value::Null => Some(None),
        Value::String(text) => compact::parse_lower(text)
            .map_err(|e| reader.column(&from_at, e))
            .ok()
            .map(Some),
        Value::Number(_) => {
            integer(reader, &items[0], &from_at, u64::MAX).map(|ms| Some(LowerBound::EpochMs(ms)))
        }
        other => reader.fail(DemandError::at(
            &from_at,
            format!(
                "T1 is null, epoch milliseconds or a string, found {}",
                kind(other)
            ),
        )),
    };
    let to_at = child(pointer, "1");
    let to = match &items[1] {
        Value::Null => Some(None),
        Value::String(text) => compact::parse_upper(text)
            .map_err(|e| reader.column(&to_at, e))
            .ok()
            .map(Some),
        Value::Number(_) => {
            integer(reader, &items[1], &to_at, u64::MAX).map(|ms| Some(UpperBound::EpochMs(ms)))
        }
        other => reader.fail(DemandError::at(
            &to_at,
            format!(
                "T2 is null, epoch milliseconds or a string, found {}",
                kind(other)
            ),
        )),
    };
    Some(Interval {
        from: from?,
        to: to?,
    })
}

fn duration_field(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Field<LeaseLength>> {
    if let Some(object) = value.as_object() {
        if !object.contains_key("Time") {
            let key = object.keys().next().map(String::as_str).unwrap_or("");
            let what = if ["AND", "OR", "NOT"].contains(&key) {
                format!("{key} is not allowed in Duration")
            } else {
                "expected a length, an interval or {\"Time\": …, \"Strategy\": …}".to_owned()
            };
            return reader.fail(DemandError::at(pointer, what));
        }
        unknown_fields(reader, object, pointer, &["Time", "Strategy"]);
        let strategy = object
            .get("Strategy")
            .and_then(|v| strategy(reader, v, &child(pointer, "Strategy")));
        let at = child(pointer, "Time");
        let interval = object
            .get("Time")
            .and_then(|v| duration_interval(reader, v, &at))?;
        return Some(Field {
            value: lease(interval),
            strategy,
        });
    }
    if let Value::String(text) = value {
        if !compact::looks_like_expression(text) {
            return compact::parse_length(text)
                .map_err(|e| reader.column(pointer, e))
                .ok()
                .map(|ms| Field {
                    value: LeaseLength::Length(ms),
                    strategy: None,
                });
        }
    }
    let interval = duration_interval(reader, value, pointer)?;
    Some(Field {
        value: lease(interval),
        strategy: None,
    })
}

/// `[, +d]` is the length d from the field's anchor (START), written the long way: one tree
/// for both spellings, so printing and reading again gives the same demand.
fn lease(interval: Interval) -> LeaseLength {
    match interval {
        Interval {
            from: None,
            to: Some(UpperBound::Offset(ms)),
        } => LeaseLength::Length(ms),
        other => LeaseLength::Interval(other),
    }
}

fn duration_interval(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Interval> {
    let interval = match value {
        Value::Array(_) => interval_array(reader, value, pointer)?,
        Value::String(text) => {
            let trimmed = text.trim_start();
            if let Some(op) = ["AND", "OR", "NOT"]
                .iter()
                .find(|op| trimmed.starts_with(**op))
            {
                return reader.fail(DemandError::at(
                    pointer,
                    format!("{op} is not allowed in Duration"),
                ));
            }
            compact::parse_interval(text)
                .map_err(|e| reader.column(pointer, e))
                .ok()?
        }
        other => {
            return reader.fail(DemandError::at(
                pointer,
                format!("expected a length or one interval, found {}", kind(other)),
            ))
        }
    };
    if matches!(interval.to, Some(UpperBound::Count(_))) {
        return reader.fail(DemandError::at(
            pointer,
            "a count ^N is not allowed in Duration",
        ));
    }
    Some(interval)
}

fn order_field(reader: &mut Reader, value: &Value, pointer: &str) -> Option<Field<DemandExpr>> {
    if let Some(object) = value.as_object().filter(|o| o.contains_key("After")) {
        unknown_fields(reader, object, pointer, &["After", "Strategy"]);
        let strategy = object
            .get("Strategy")
            .and_then(|v| strategy(reader, v, &child(pointer, "Strategy")));
        let expr = object
            .get("After")
            .and_then(|v| demand_expr(reader, v, &child(pointer, "After"), 0))?;
        return Some(Field {
            value: expr,
            strategy,
        });
    }
    demand_expr(reader, value, pointer, 0).map(|value| Field {
        value,
        strategy: None,
    })
}

fn demand_expr(
    reader: &mut Reader,
    value: &Value,
    pointer: &str,
    depth: usize,
) -> Option<DemandExpr> {
    if depth > MAX_NESTING {
        return reader.fail(DemandError::at(
            pointer,
            format!("expressions nest deeper than {MAX_NESTING} levels"),
        ));
    }
    match value {
        Value::Number(_) => integer(reader, value, pointer, i64::MAX as u64).map(|demand| {
            DemandExpr::Ref(DemandRef {
                owner: None,
                demand,
                outcome: None,
            })
        }),
        Value::String(text) => match parse_demand_ref(text) {
            Ok(reference) => Some(DemandExpr::Ref(reference)),
            Err(e) => {
                reader.column(pointer, e);
                None
            }
        },
        Value::Object(object) => {
            let (key, inner) = single_operator(reader, object, pointer)?;
            let at = child(pointer, key);
            if key == "NOT" {
                return demand_expr(reader, inner, &at, depth + 1)
                    .map(|e| DemandExpr::Not(Box::new(e)));
            }
            let items = operator_items(reader, inner, &at, key)?;
            let mut branches = Vec::with_capacity(items.len());
            let mut complete = true;
            for (i, item) in items.iter().enumerate() {
                match demand_expr(reader, item, &child(&at, &i.to_string()), depth + 1) {
                    Some(branch) => branches.push(branch),
                    None => complete = false,
                }
            }
            if !complete {
                return None;
            }
            Some(if key == "AND" {
                DemandExpr::And(branches)
            } else {
                DemandExpr::Or(branches)
            })
        }
        other => reader.fail(DemandError::at(
            pointer,
            format!(
                "expected a DemandID, a reference string or {{\"AND\"|\"OR\"|\"NOT\": …}}, found {}",
                kind(other)
            ),
        )),
    }
}

/// `[owner "/"] digits [":" outcome]`.
pub(crate) fn parse_demand_ref(text: &str) -> Result<DemandRef, ColumnError> {
    let err = |column: usize, message: String| ColumnError { column, message };
    let (owner, rest, rest_column) = match text.find('/') {
        Some(slash) => {
            let owner_text = &text[..slash];
            let owner = parse_owner(owner_text).ok_or_else(|| {
                err(
                    1,
                    format!(
                        "'{owner_text}' is not an owner; expected application_<ts>_<n> or reservation_<ts>_<n>"
                    ),
                )
            })?;
            (
                Some(owner),
                &text[slash + 1..],
                text[..=slash].chars().count() + 1,
            )
        }
        None => (None, text, 1),
    };
    let (digits, outcome_text) = match rest.find(':') {
        Some(colon) => (&rest[..colon], Some(&rest[colon + 1..])),
        None => (rest, None),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        let bad = digits
            .chars()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(0);
        return Err(err(
            rest_column + bad,
            format!("expected a DemandID (digits) in '{text}'"),
        ));
    }
    let demand = digits
        .parse::<u64>()
        .ok()
        .filter(|n| *n <= i64::MAX as u64)
        .ok_or_else(|| err(rest_column, format!("DemandID {digits} is too large")))?;
    let outcome = match outcome_text {
        None => None,
        Some(word) => Some(match word {
            "ok" => Outcome::Ok,
            "any" => Outcome::Any,
            "failed" => Outcome::Failed,
            "started" => Outcome::Started,
            _ => {
                return Err(err(
                    rest_column + digits.chars().count() + 1,
                    format!("unknown outcome '{word}'; expected ok, any, failed or started"),
                ))
            }
        }),
    };
    Ok(DemandRef {
        owner,
        demand,
        outcome,
    })
}

fn parse_owner(text: &str) -> Option<Owner> {
    let (kind, rest) = if let Some(rest) = text.strip_prefix("application_") {
        (true, rest)
    } else {
        (false, text.strip_prefix("reservation_")?)
    };
    let (ts, seq) = rest.split_once('_')?;
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
            .then(|| s.parse::<u64>().ok())
            .flatten()
    };
    let (cluster_timestamp, seq) = (number(ts)?, number(seq)?);
    Some(if kind {
        Owner::Application {
            cluster_timestamp,
            seq,
        }
    } else {
        Owner::Reservation {
            cluster_timestamp,
            seq,
        }
    })
}
