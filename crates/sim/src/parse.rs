//! Scenario TOML -> [`Scenario`]: the document level (settings, properties, configuration,
//! groups, nodes) and the cross-checks over the whole timeline.

use crate::duration::parse_duration;
use crate::events::parse_event;
use crate::scenario::{
    Action, AllocationsSource, Driver, EmbeddedText, NodeSpec, Property, Scenario, ScenarioError,
};
use crate::toml_walk::{Ctx, Tbl, Val};
use std::collections::BTreeMap;
use toml::de::{DeTable, DeValue};
use toml::Spanned;
use weft_config::resource_string::{parse_quantity, quantity_type_names};
use weft_sched::{GroupMapping, SchedulerKind};
use weft_types::{Duration, Resource, ResourceTypes, Time};

const TOP_KEYS: &[&str] = &[
    "name",
    "scheduler",
    "driver",
    "heartbeat_interval",
    "update_interval",
    "seed",
    "end",
    "properties",
    "allocations",
    "allocations_file",
    "capacity",
    "groups",
    "nodes",
    "events",
];
const NODE_KEYS: &[&str] = &["host", "count", "rack", "resources", "label"];

/// The rack of a node that names none, as in Hadoop.
pub const DEFAULT_RACK: &str = "/default-rack";

/// Parses and validates a scenario file. `file` is the name used in messages.
///
/// Every problem is reported at once, each with its line and field. When the scenario names an
/// `allocations_file`, the result asks for it through [`Scenario::needed_file`].
pub fn parse_scenario(text: &str, file: &str) -> Result<Scenario, ScenarioError> {
    let mut ctx = Ctx::new(text);
    let fail = |ctx: Ctx| ScenarioError {
        file: file.to_string(),
        problems: ctx.problems,
    };
    let doc = match DeTable::parse(text) {
        Ok(doc) => doc,
        Err(e) => {
            let line = e.span().map_or(0, |s| ctx.line(s.start));
            ctx.problem(line, "", format!("not valid TOML: {}", e.message().trim()));
            return Err(fail(ctx));
        }
    };
    let doc_val: Val<'_> = Spanned::new(0..0, DeValue::Table(doc.into_inner()));
    let Some(root) = Tbl::of(&mut ctx, &doc_val, String::new()) else {
        return Err(fail(ctx));
    };
    // An unknown top-level key is ignored with a warning naming its line (issue 13 item 8);
    // unknown fields of nodes and events stay errors.
    root.warn_unknown_keys(&mut ctx, TOP_KEYS);

    let name = root.str(&mut ctx, "name").map(|(s, _)| s.to_string());
    let scheduler = check_scheduler(&mut ctx, &root);
    let driver = check_driver(&mut ctx, &root);
    let heartbeat_interval = interval(&mut ctx, &root, "heartbeat_interval", 1_000);
    let update_interval = interval(&mut ctx, &root, "update_interval", 500);
    let end = duration(&mut ctx, &root, "end").map(|(d, _)| Time(d.as_millis()));
    let seed = root
        .int(&mut ctx, "seed", 0, i64::MAX)
        .map_or(0, |(v, _)| v.unsigned_abs());
    let (properties, properties_line) = properties(&mut ctx, &root);
    // Under Capacity the configuration text is capacity-scheduler.xml, carried where Fair's
    // allocation file is (`Scenario::allocations`); `initial_config` reads it by kind.
    let allocations = if scheduler == SchedulerKind::Capacity {
        embedded(&mut ctx, &root, "capacity", text).map(AllocationsSource::Inline)
    } else {
        allocations(&mut ctx, &root, text)
    };
    let groups = groups(&mut ctx, &root);
    let resource_types = resource_types(&mut ctx, &root, &properties);

    let mut nodes = Vec::new();
    for (i, item) in array_items(&mut ctx, &root, "nodes") {
        if let Some(t) = Tbl::of(&mut ctx, item, format!("nodes[{i}]")) {
            nodes.extend(parse_nodes(&mut ctx, &t, &resource_types));
        }
    }
    let mut events = Vec::new();
    for (i, item) in array_items(&mut ctx, &root, "events") {
        if let Some(t) = Tbl::of(&mut ctx, item, format!("events[{i}]")) {
            if let Some(e) = parse_event(&mut ctx, &t, i, &resource_types, text) {
                events.push(e);
            }
        }
    }
    events.sort_by_key(|e| (e.at, e.index));
    check_hosts(&mut ctx, &nodes, &events);
    check_apps(&mut ctx, &events);
    check_driver_events(&mut ctx, driver, &events);

    if !ctx.problems.is_empty() {
        ctx.problems.sort_by_key(|p| p.line);
        return Err(fail(ctx));
    }
    ctx.warnings.sort_by_key(|p| p.line);
    Ok(Scenario {
        warnings: ctx.warnings,
        file: file.to_string(),
        name,
        heartbeat_interval,
        update_interval,
        seed,
        end,
        properties,
        properties_line,
        allocations,
        groups,
        nodes,
        events,
        resource_types,
        scheduler,
        driver,
    })
}

/// The `driver` field: `scheduler` (the default) or `rm`.
fn check_driver(ctx: &mut Ctx, root: &Tbl<'_, '_>) -> Driver {
    match root.str(ctx, "driver") {
        None | Some(("scheduler", _)) => Driver::Scheduler,
        Some(("rm", _)) => Driver::Rm,
        Some((other, line)) => {
            ctx.problem(
                line,
                "driver",
                format!("unknown driver '{other}': expected scheduler or rm"),
            );
            Driver::Scheduler
        }
    }
}

/// Each event type (and submit field) belongs to the driver that can replay it: demands and
/// planned reservations need the RM core; the scheduler driver's other events are not
/// replayed by the RM driver (yet).
fn check_driver_events(ctx: &mut Ctx, driver: Driver, events: &[crate::scenario::ScheduledEvent]) {
    for e in events {
        let kind = e.action.type_name();
        let field = format!("events[{}].type", e.index);
        match driver {
            Driver::Scheduler if crate::events::RM_ONLY.contains(&kind) => ctx.problem(
                e.line,
                &field,
                format!("event type '{kind}' needs the RM core: add driver = \"rm\" at the top of the file"),
            ),
            Driver::Rm if !crate::events::RM_DRIVEN.contains(&kind) => ctx.problem(
                e.line,
                &field,
                format!(
                    "event type '{kind}' is not replayed by driver = \"rm\"; it replays: {}",
                    crate::events::RM_DRIVEN.join(", ")
                ),
            ),
            _ => {}
        }
        if driver == Driver::Scheduler {
            if let Action::Submit { demand, claim, .. } = &e.action {
                if demand.is_some() || !claim {
                    let which = if demand.is_some() { "demand" } else { "claim" };
                    ctx.problem(
                        e.line,
                        &format!("events[{}].{which}", e.index),
                        format!("a submit's `{which}` needs the RM core: add driver = \"rm\" at the top of the file"),
                    );
                }
            }
        }
    }
}

/// The `scheduler` field: fair (the default), capacity (with its `capacity` text) or fifo.
fn check_scheduler(ctx: &mut Ctx, root: &Tbl<'_, '_>) -> SchedulerKind {
    let (kind, line) = match root.str(ctx, "scheduler") {
        Some(v) => v,
        None => ("fair", root.line),
    };
    if kind != "capacity" {
        if let Some(v) = root.raw("capacity") {
            let l = ctx.line(v.span().start);
            ctx.problem(
                l,
                "capacity",
                "capacity-scheduler.xml text needs scheduler = \"capacity\"",
            );
        }
    }
    match kind {
        "fair" => SchedulerKind::Fair,
        "fifo" => {
            if let Some(v) = root
                .raw("allocations")
                .or_else(|| root.raw("allocations_file"))
            {
                let l = ctx.line(v.span().start);
                ctx.problem(
                    l,
                    "allocations",
                    "the FIFO scheduler has no queue configuration: an allocation file needs scheduler = \"fair\"",
                );
            }
            SchedulerKind::Fifo
        }
        "capacity" => {
            if let Some(v) = root
                .raw("allocations")
                .or_else(|| root.raw("allocations_file"))
            {
                let l = ctx.line(v.span().start);
                ctx.problem(
                    l,
                    "allocations",
                    "the Capacity Scheduler reads capacity-scheduler.xml: give it as capacity = '''...''' (an allocation file needs scheduler = \"fair\")",
                );
            }
            if root.raw("capacity").is_none() {
                ctx.problem(
                    line,
                    "capacity",
                    "scheduler = \"capacity\" needs the capacity-scheduler.xml text: capacity = '''<configuration>...</configuration>'''",
                );
            }
            SchedulerKind::Capacity
        }
        other => {
            ctx.problem(
                line,
                "scheduler",
                format!("unknown scheduler '{other}': expected fair, capacity or fifo"),
            );
            SchedulerKind::Fair
        }
    }
}

/// An optional duration field.
pub(crate) fn duration(ctx: &mut Ctx, t: &Tbl<'_, '_>, key: &str) -> Option<(Duration, u32)> {
    let value = t.raw(key)?;
    if !value.get_ref().is_str() {
        let line = ctx.line(value.span().start);
        let found = value.get_ref().type_str();
        ctx.problem(
            line,
            &t.path_of(key),
            format!("expected a duration string such as \"500ms\", \"1s\", \"2m\" or \"1h\", found {found}"),
        );
        return None;
    }
    let (text, line) = t.str(ctx, key)?;
    match parse_duration(text) {
        Ok(d) if d.as_millis() > crate::limits::MAX_SIM_TIME_MS => {
            ctx.problem(
                line,
                &t.path_of(key),
                format!(
                    "'{text}' is longer than the simulator allows ({})",
                    crate::limits::MAX_SIM_TIME_TEXT
                ),
            );
            None
        }
        Ok(d) => Some((d, line)),
        Err(e) => {
            ctx.problem(line, &t.path_of(key), e);
            None
        }
    }
}

fn interval(ctx: &mut Ctx, t: &Tbl<'_, '_>, key: &str, default_ms: u64) -> Duration {
    match duration(ctx, t, key) {
        Some((d, line)) if d.as_millis() == 0 => {
            ctx.problem(line, key, "must be longer than 0");
            Duration::from_millis(default_ms)
        }
        Some((d, _)) => d,
        None => Duration::from_millis(default_ms),
    }
}

fn properties(ctx: &mut Ctx, root: &Tbl<'_, '_>) -> (Vec<Property>, u32) {
    let Some(v) = root.raw("properties") else {
        return (Vec::new(), 0);
    };
    let Some(t) = Tbl::of(ctx, v, "properties".to_string()) else {
        return (Vec::new(), 0);
    };
    let mut entries: Vec<_> = t.map.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    let mut out = Vec::new();
    for (k, v) in entries {
        let line = ctx.line(k.span().start);
        if let Some(why) = ignored_property(k.get_ref()) {
            ctx.warn(line, &t.path_of(k.get_ref()), why);
            continue;
        }
        let value = match v.get_ref() {
            DeValue::String(s) => s.to_string(),
            DeValue::Boolean(b) => b.to_string(),
            DeValue::Integer(i) => match i64::from_str_radix(i.as_str(), i.radix()) {
                Ok(n) => n.to_string(),
                Err(_) => i.as_str().to_string(),
            },
            DeValue::Float(f) => f.as_str().to_string(),
            other => {
                let found = other.type_str();
                ctx.problem(
                    line,
                    &t.path_of(k.get_ref()),
                    format!("expected a string, found {found}"),
                );
                continue;
            }
        };
        out.push(Property {
            name: k.get_ref().to_string(),
            value,
            line,
        });
    }
    (out, t.line)
}

/// Why a `[properties]` key is ignored, if it is: a scenario key written after the
/// `[properties]` header (TOML puts it inside the table), or a name that is neither a YARN
/// property nor one of Weft's own (`weft.*`, such as `weft.scheduler.fair.preemption.strategy`).
/// Unknown `yarn.scheduler.*` names are weft-config's to report; other `yarn.*` names are
/// yarn-site properties the scheduler does not read, ignored as Hadoop's scheduler ignores them.
fn ignored_property(name: &str) -> Option<String> {
    if TOP_KEYS.contains(&name) {
        return Some(format!(
            "'{name}' is a top-level scenario key, but it is written after the [properties] \
             header, so TOML puts it inside [properties], where it is ignored: move it above the \
             first [table] header"
        ));
    }
    if !name.starts_with("yarn.") && !name.starts_with("weft.") {
        return Some(
            "not a YARN or Weft property (their names start with 'yarn.' or 'weft.'); ignored"
                .to_string(),
        );
    }
    None
}

/// The text of a string field embedded in the scenario, with the line its first line is on.
pub(crate) fn embedded(
    ctx: &mut Ctx,
    t: &Tbl<'_, '_>,
    key: &str,
    source: &str,
) -> Option<EmbeddedText> {
    let (text, key_line) = t.str(ctx, key)?;
    let start = t.raw(key).map_or(0, |v| v.span().start);
    let raw = source.get(start..).unwrap_or("");
    // TOML drops the newline right after an opening triple quote.
    let first_line = if raw.starts_with("'''") || raw.starts_with("\"\"\"") {
        let after = &raw[3..];
        if after.starts_with('\n') || after.starts_with("\r\n") {
            key_line + 1
        } else {
            key_line
        }
    } else {
        key_line
    };
    Some(EmbeddedText {
        text: text.to_string(),
        first_line,
        key_line,
    })
}

fn allocations(ctx: &mut Ctx, root: &Tbl<'_, '_>, source: &str) -> Option<AllocationsSource> {
    let inline = embedded(ctx, root, "allocations", source);
    let file = root.str(ctx, "allocations_file");
    match (inline, file) {
        (Some(_), Some((_, line))) => {
            ctx.problem(
                line,
                "allocations_file",
                "give either allocations or allocations_file, not both",
            );
            None
        }
        (Some(text), None) => Some(AllocationsSource::Inline(text)),
        (None, Some((path, line))) => Some(AllocationsSource::File {
            path: path.to_string(),
            line,
            text: None,
        }),
        (None, None) => None,
    }
}

fn groups(ctx: &mut Ctx, root: &Tbl<'_, '_>) -> GroupMapping {
    let mut out = GroupMapping::new();
    let Some(v) = root.raw("groups") else {
        return out;
    };
    let Some(t) = Tbl::of(ctx, v, "groups".to_string()) else {
        return out;
    };
    let users: Vec<String> = t.map.keys().map(|k| k.get_ref().to_string()).collect();
    for user in users {
        if let Some((list, _)) = t.str_list(ctx, &user) {
            out.insert(user, list);
        }
    }
    out
}

fn array_items<'a, 'i>(ctx: &mut Ctx, root: &Tbl<'a, 'i>, key: &str) -> Vec<(usize, &'a Val<'i>)> {
    let Some(v) = root.raw(key) else {
        return Vec::new();
    };
    match v.get_ref() {
        DeValue::Array(items) => items.iter().enumerate().collect(),
        other => {
            let line = ctx.line(v.span().start);
            let found = other.type_str();
            ctx.problem(
                line,
                key,
                format!("expected an array of tables ([[{key}]]), found {found}"),
            );
            Vec::new()
        }
    }
}

/// Memory, vcores, the types of `yarn.resource-types`, then every other type a node or event
/// amount mentions, so that "2 gpu" works without declaring `gpu` first.
fn resource_types(ctx: &mut Ctx, root: &Tbl<'_, '_>, props: &[Property]) -> ResourceTypes {
    let mut names: Vec<(String, u32)> = Vec::new();
    for p in props.iter().filter(|p| p.name == "yarn.resource-types") {
        names.extend(
            p.value
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| (s.to_string(), p.line)),
        );
    }
    for list in ["nodes", "events"] {
        let Some(DeValue::Array(items)) = root.raw(list).map(|v| v.get_ref()) else {
            continue;
        };
        for item in items.iter() {
            let Some(t) = item.get_ref().as_table() else {
                continue;
            };
            for key in ["resources", "am"] {
                if let Some(v) = t.get(key) {
                    if let Some(s) = v.get_ref().as_str() {
                        let line = ctx.line(v.span().start);
                        names.extend(quantity_type_names(s).into_iter().map(|n| (n, line)));
                    }
                }
            }
        }
    }
    let mut types = ResourceTypes::default();
    for (name, line) in names {
        if let Err(e) = types.register(&name) {
            ctx.problem(line, "", e.to_string());
            break;
        }
    }
    types
}

/// A resource amount field; `required` reports its absence.
pub(crate) fn resource(
    ctx: &mut Ctx,
    t: &Tbl<'_, '_>,
    key: &str,
    types: &ResourceTypes,
    required: bool,
) -> Option<Resource> {
    let (text, line) = if required {
        t.req_str(ctx, key)?
    } else {
        t.str(ctx, key)?
    };
    match parse_quantity(text, types) {
        Ok(r) => Some(r),
        Err(e) => {
            ctx.problem(
                line,
                &t.path_of(key),
                format!("'{text}' is not a resource: {e}"),
            );
            None
        }
    }
}

/// One `[[nodes]]` entry, expanded to its hosts.
fn parse_nodes(ctx: &mut Ctx, t: &Tbl<'_, '_>, types: &ResourceTypes) -> Vec<NodeSpec> {
    t.check_keys(ctx, NODE_KEYS);
    let host = t.req_str(ctx, "host");
    let count = t.int(ctx, "count", 1, 100_000).map_or(1, |(c, _)| c);
    let rack = t.str(ctx, "rack").map_or(DEFAULT_RACK, |(r, _)| r);
    let resources = resource(ctx, t, "resources", types, true);
    let label = node_label(ctx, t);
    let (Some((host, _)), Some(resources)) = (host, resources) else {
        return Vec::new();
    };
    let spec = |host: String| NodeSpec {
        host,
        rack: rack.to_string(),
        resources,
        label: label.clone(),
        line: t.line,
    };
    if count == 1 {
        vec![spec(host.to_string())]
    } else {
        (1..=count).map(|i| spec(format!("{host}{i}"))).collect()
    }
}

/// A node's `label` (a Capacity Scheduler node label): a valid label name, `None` when unset.
pub(crate) fn node_label(ctx: &mut Ctx, t: &Tbl<'_, '_>) -> Option<String> {
    let (label, line) = t.str(ctx, "label")?;
    if let Err(why) = weft_config::pools::check_pool_name(label) {
        ctx.problem(
            line,
            &t.path_of("label"),
            why.replace("resource pool name", "node label"),
        );
        return None;
    }
    Some(label.to_string())
}

/// Hosts are unique among live nodes; a removed host must be live.
fn check_hosts(ctx: &mut Ctx, nodes: &[NodeSpec], events: &[crate::scenario::ScheduledEvent]) {
    let mut live: BTreeMap<&str, u32> = BTreeMap::new();
    for n in nodes {
        if let Some(first) = live.insert(&n.host, n.line) {
            ctx.problem(
                n.line,
                "nodes",
                format!("duplicate host '{}' (also at line {first})", n.host),
            );
        }
    }
    for e in events {
        let field = format!("events[{}].host", e.index);
        match &e.action {
            Action::AddNode(n) => {
                if let Some(first) = live.insert(&n.host, e.line) {
                    ctx.problem(
                        e.line,
                        &field,
                        format!("host '{}' is already in the cluster (line {first})", n.host),
                    );
                }
            }
            Action::RemoveNode { host } if live.remove(host.as_str()).is_none() => {
                ctx.problem(
                    e.line,
                    &field,
                    format!("no node '{host}' is in the cluster at this time"),
                );
            }
            _ => {}
        }
    }
}

/// Every app is submitted once, before any other event names it.
fn check_apps(ctx: &mut Ctx, events: &[crate::scenario::ScheduledEvent]) {
    let mut submitted: BTreeMap<&str, u32> = BTreeMap::new();
    for e in events {
        let field = format!("events[{}].app", e.index);
        match &e.action {
            Action::Submit { app, .. } => {
                if let Some(first) = submitted.insert(app, e.line) {
                    ctx.problem(
                        e.line,
                        &field,
                        format!("app '{app}' is submitted twice (first at line {first})"),
                    );
                }
            }
            Action::Ask { app, .. }
            | Action::Release { app, .. }
            | Action::Cancel { app, .. }
            | Action::Finish { app }
            | Action::Kill { app, .. }
            | Action::Move { app, .. }
            | Action::Blacklist { app, .. }
            | Action::Demand { app, .. }
            | Action::DemandKill { app, .. }
                if !submitted.contains_key(app.as_str()) =>
            {
                let later = events.iter().find_map(|o| match &o.action {
                    Action::Submit { app: a, .. } if a == app => Some(o.line),
                    _ => None,
                });
                let hint = match later {
                    Some(l) => format!("; its submit (line {l}) comes later"),
                    None => "; no event submits it".to_string(),
                };
                ctx.problem(
                    e.line,
                    &field,
                    format!("app '{app}' is not submitted before this event{hint}"),
                );
            }
            _ => {}
        }
    }
}
