//! Applying property entries to [`SchedulerProperties`], then the startup validation.

use super::{units, Entry};
use crate::alloc_file::values;
use crate::{
    Diagnostic, PreemptionStrategy, ReservationEnforcement, SchedulerKind, SchedulerProperties,
    Severity,
};
use std::collections::BTreeMap;
use weft_types::{ResourceTypes, MAX_RESOURCE_TYPES, MEMORY, VCORES};

const FAIR: &str = "yarn.scheduler.fair.";
const TYPES: &str = "yarn.resource-types";
const AM_PREEMPTION: &str = "yarn.scheduler.fair.am.preemption.";
const SCHEDULER_CLASS: &str = "yarn.resourcemanager.scheduler.class";
const PREEMPTION_STRATEGY: &str = "weft.scheduler.fair.preemption.strategy";
const RESERVATION_ENFORCE: &str = "weft.reservation.enforce";
const PACKABILITY_CHECK: &str = "weft.reservation.packability-check";
const ACCEPT_EARLY_SUBMISSION: &str = "weft.reservation.accept-early-submission";
const NM_HEARTBEAT_INTERVAL: &str = "yarn.resourcemanager.nodemanagers.heartbeat-interval-ms";

/// Hadoop properties under the warned prefixes that Weft knows but does not model; they are
/// accepted without a warning.
const KNOWN_UNMODELED: &[&str] = &[
    "yarn.scheduler.fair.migration.mode",
    "yarn.scheduler.fair.event-log-enabled",
    "yarn.scheduler.fair.event-log-dir",
    "yarn.scheduler.include-port-in-node-name",
    "yarn.scheduler.configuration.store.class",
    "yarn.resource-types.memory-mb.units",
    "yarn.resource-types.vcores.units",
];

struct Applier {
    props: SchedulerProperties,
    diags: Vec<Diagnostic>,
    positions: BTreeMap<String, (u32, u32)>,
}

impl Applier {
    fn diag(&mut self, severity: Severity, name: &str, message: String) {
        let (line, column) = self.positions.get(name).copied().unwrap_or((0, 0));
        self.diags.push(Diagnostic {
            severity,
            line,
            column,
            path: name.to_string(),
            message,
        });
    }

    fn error(&mut self, name: &str, message: String) {
        self.diag(Severity::Error, name, message);
    }

    fn warn(&mut self, name: &str, message: String) {
        self.diag(Severity::Warning, name, message);
    }
}

/// Applies every entry (the last of duplicates wins) and validates the result.
pub(super) fn apply(entries: Vec<Entry>) -> (SchedulerProperties, Vec<Diagnostic>) {
    let mut a = Applier {
        props: SchedulerProperties::default(),
        diags: Vec::new(),
        positions: BTreeMap::new(),
    };
    let mut latest: BTreeMap<String, String> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for e in entries {
        if let Some(&(line, _)) = a.positions.get(&e.name) {
            a.positions.insert(e.name.clone(), e.pos);
            let at = if line > 0 {
                format!(" (also at line {line})")
            } else {
                String::new()
            };
            a.warn(
                &e.name,
                format!("set more than once{at}; the last value is used"),
            );
        } else {
            a.positions.insert(e.name.clone(), e.pos);
            order.push(e.name.clone());
        }
        latest.insert(e.name, e.value);
    }

    if let Some(list) = latest.get(TYPES) {
        a.props.resource_types = resource_types(&mut a, list);
    }
    let types = a.props.resource_types.clone();
    let mut per_type: [[Option<i64>; MAX_RESOURCE_TYPES]; 3] = [[None; MAX_RESOURCE_TYPES]; 3];
    for name in &order {
        let value = latest.get(name).map(String::as_str).unwrap_or("");
        if name == TYPES {
            continue;
        }
        if let Some(rest) = name.strip_prefix("yarn.resource-types.") {
            per_type_property(&mut a, &types, name, rest, value, &mut per_type);
            continue;
        }
        set(&mut a, name, value);
    }
    let [min, max, inc] = per_type;
    override_with(
        &mut a,
        &types,
        min,
        "minimum-allocation",
        "yarn.scheduler.minimum-allocation",
    );
    override_with(
        &mut a,
        &types,
        max,
        "maximum-allocation",
        "yarn.scheduler.maximum-allocation",
    );
    override_with(
        &mut a,
        &types,
        inc,
        "increment-allocation",
        "yarn.scheduler.increment-allocation",
    );
    validate(&mut a, &types);
    (a.props, a.diags)
}

fn resource_types(a: &mut Applier, list: &str) -> ResourceTypes {
    let mut types = ResourceTypes::default();
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        if name == "memory-mb" || name == "vcores" {
            a.warn(
                TYPES,
                format!("'{name}' is always a resource type and need not be listed"),
            );
            continue;
        }
        if let Err(e) = types.register(name) {
            a.error(TYPES, e.to_string());
        }
    }
    types
}

/// `yarn.resource-types.<type>.{minimum,maximum,increment}-allocation`.
fn per_type_property(
    a: &mut Applier,
    types: &ResourceTypes,
    name: &str,
    rest: &str,
    value: &str,
    per_type: &mut [[Option<i64>; MAX_RESOURCE_TYPES]; 3],
) {
    let kinds = [
        "minimum-allocation",
        "maximum-allocation",
        "increment-allocation",
    ];
    let found = kinds.iter().enumerate().find_map(|(k, suffix)| {
        rest.strip_suffix(suffix)
            .and_then(|t| t.strip_suffix('.'))
            .map(|t| (k, t))
    });
    let Some((kind, type_name)) = found else {
        if !KNOWN_UNMODELED.contains(&name) && !name.ends_with(".units") {
            a.warn(
                name,
                "not a resource-type property Weft knows; ignored".to_string(),
            );
        }
        return;
    };
    let Some(index) = types.index_of(type_name).filter(|_| type_name != "memory") else {
        a.warn(
            name,
            format!("'{type_name}' is not a declared resource type (see {TYPES}); ignored"),
        );
        return;
    };
    match units::amount(value, index == MEMORY) {
        Ok(v) => per_type[kind][index] = Some(v),
        Err(msg) => a.error(name, msg),
    }
}

/// Per-type properties win over the older `yarn.scheduler.*-mb` / `-vcores` ones, as in Hadoop.
fn override_with(
    a: &mut Applier,
    types: &ResourceTypes,
    values: [Option<i64>; MAX_RESOURCE_TYPES],
    suffix: &str,
    old_prefix: &str,
) {
    for (index, v) in values.iter().enumerate() {
        let Some(v) = *v else { continue };
        let old = match index {
            MEMORY => Some(format!("{old_prefix}-mb")),
            VCORES => Some(format!("{old_prefix}-vcores")),
            _ => None,
        };
        let new_name = format!("{TYPES}.{}.{suffix}", types.name(index));
        if let Some(old) = old.filter(|o| a.positions.contains_key(o)) {
            a.warn(&new_name, format!("overrides {old}"));
        }
        let target = match suffix {
            "minimum-allocation" => &mut a.props.minimum_allocation,
            "maximum-allocation" => &mut a.props.maximum_allocation,
            _ => &mut a.props.increment_allocation,
        };
        target.set(index, v);
    }
}

fn set(a: &mut Applier, name: &str, value: &str) {
    let p = &mut a.props;
    let result: Result<(), String> = if let Some(queue) = name.strip_prefix(AM_PREEMPTION) {
        boolean(value).map(|v| {
            p.am_preemption.insert(queue.to_string(), v);
        })
    } else if name == SCHEDULER_CLASS {
        SchedulerKind::parse(value).map(|kind| p.scheduler_kind = kind)
    } else if name == PREEMPTION_STRATEGY {
        PreemptionStrategy::parse(value).map(|s| p.preemption_strategy = s)
    } else if name == RESERVATION_ENFORCE {
        ReservationEnforcement::parse(value).map(|e| p.reservation_enforcement = e)
    } else if name == PACKABILITY_CHECK {
        boolean(value).map(|v| p.reservation_packability_check = v)
    } else if name == ACCEPT_EARLY_SUBMISSION {
        boolean(value).map(|v| p.reservation_accept_early_submission = v)
    } else if name == NM_HEARTBEAT_INTERVAL {
        values::long(value).map(|v| p.node_heartbeat_interval_ms = v)
    } else if name == "yarn.cluster.max-application-priority" {
        values::int(value).map(|v| p.max_application_priority = v)
    } else if name == "yarn.resourcemanager.scheduler.monitor.enable" {
        boolean(value).map(|v| p.scheduler_monitor_enabled = v)
    } else if name == "yarn.resourcemanager.scheduler.monitor.policies" {
        p.scheduler_monitor_policies = value
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        Ok(())
    } else {
        let key = match name.strip_prefix(FAIR) {
            Some(short) => short,
            None if name.starts_with("yarn.scheduler.") => name,
            None => "",
        };
        match key {
            "allocation.file" => {
                p.allocation_file = value.trim().to_string();
                Ok(())
            }
            "allow-undeclared-pools" => boolean(value).map(|v| p.allow_undeclared_pools = v),
            "user-as-default-queue" => boolean(value).map(|v| p.user_as_default_queue = v),
            "preemption" => boolean(value).map(|v| p.preemption = v),
            "am.preemption" => boolean(value).map(|v| p.am_preemption_default = v),
            "preemption.cluster-utilization-threshold" => {
                values::float(value).map(|v| p.preemption_cluster_utilization_threshold = v)
            }
            "waitTimeBeforeKill" => {
                values::int(value).map(|v| p.wait_time_before_kill_ms = v.into())
            }
            "waitTimeBeforeNextStarvationCheck" => {
                values::long(value).map(|v| p.wait_time_before_next_starvation_check_ms = v)
            }
            "preemptionInterval" => values::long(value).map(|v| p.preemption_interval_ms = v),
            "assignmultiple" => boolean(value).map(|v| p.assign_multiple = v),
            "dynamic.max.assign" => boolean(value).map(|v| p.dynamic_max_assign = v),
            "max.assign" => values::int(value).map(|v| p.max_assign = v),
            "sizebasedweight" => boolean(value).map(|v| p.size_based_weight = v),
            "update-interval-ms" => values::long(value).map(|v| p.update_interval_ms = v),
            "reservable-nodes" => values::float(value).map(|v| p.reservable_nodes = v),
            "locality.threshold.node" => {
                values::float(value).map(|v| p.locality_threshold_node = v)
            }
            "locality.threshold.rack" => {
                values::float(value).map(|v| p.locality_threshold_rack = v)
            }
            "locality-delay-node-ms" => values::long(value).map(|v| p.locality_delay_node_ms = v),
            "locality-delay-rack-ms" => values::long(value).map(|v| p.locality_delay_rack_ms = v),
            "continuous-scheduling-enabled" => {
                boolean(value).map(|v| p.continuous_scheduling_enabled = v)
            }
            "continuous-scheduling-sleep-ms" => {
                values::int(value).map(|v| p.continuous_scheduling_sleep_ms = v.into())
            }
            "no-terminal-rule.check" => boolean(value).map(|v| p.no_terminal_rule_check = v),
            "yarn.scheduler.minimum-allocation-mb" => {
                values::long(value).map(|v| p.minimum_allocation.set(MEMORY, v))
            }
            "yarn.scheduler.minimum-allocation-vcores" => {
                values::int(value).map(|v| p.minimum_allocation.set(VCORES, v.into()))
            }
            "yarn.scheduler.maximum-allocation-mb" => {
                values::long(value).map(|v| p.maximum_allocation.set(MEMORY, v))
            }
            "yarn.scheduler.maximum-allocation-vcores" => {
                values::int(value).map(|v| p.maximum_allocation.set(VCORES, v.into()))
            }
            "yarn.scheduler.increment-allocation-mb" => {
                values::long(value).map(|v| p.increment_allocation.set(MEMORY, v))
            }
            "yarn.scheduler.increment-allocation-vcores" => {
                values::int(value).map(|v| p.increment_allocation.set(VCORES, v.into()))
            }
            "yarn.scheduler.reservation-threshold.increment-multiple" => {
                values::float(value).map(|v| p.reservation_threshold_increment_multiple = v)
            }
            _ => {
                let warned = name.starts_with("yarn.scheduler.") || name.starts_with(TYPES);
                let ignored =
                    KNOWN_UNMODELED.contains(&name) || name.starts_with("yarn.scheduler.capacity.");
                if warned && !ignored {
                    a.warn(
                        name,
                        "unknown scheduler property; ignored (is it misspelt?)".to_string(),
                    );
                }
                return;
            }
        }
    };
    if let Err(msg) = result {
        a.error(name, msg);
        return;
    }
    adjust(a, name);
}

/// Hadoop's corrections of out-of-range values, each reported as a warning.
fn adjust(a: &mut Applier, name: &str) {
    let p = &mut a.props;
    match name.strip_prefix(FAIR).unwrap_or("") {
        "update-interval-ms" if p.update_interval_ms < 0 => {
            let was = p.update_interval_ms;
            p.update_interval_ms = 500;
            a.warn(
                name,
                format!("{was} is negative; the default 500 ms is used"),
            );
        }
        "locality.threshold.node" if p.locality_threshold_node > 1.0 => {
            p.locality_threshold_node = 1.0;
            a.warn(name, "above 1; 1.0 is used".to_string());
        }
        "locality.threshold.rack" if p.locality_threshold_rack > 1.0 => {
            p.locality_threshold_rack = 1.0;
            a.warn(name, "above 1; 1.0 is used".to_string());
        }
        _ => {}
    }
}

/// Hadoop's `getBoolean` reads "true"/"false" in any case; anything else is refused here
/// rather than silently replaced by the default.
fn boolean(value: &str) -> Result<bool, String> {
    let t = value.trim();
    if t.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if t.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err(format!("'{t}' is not a boolean: expected true or false"))
    }
}

/// The startup validation of spec §14.4: allocation minimums, maximums and increments.
fn validate(a: &mut Applier, types: &ResourceTypes) {
    let (min, max, inc) = (
        a.props.minimum_allocation,
        a.props.maximum_allocation,
        a.props.increment_allocation,
    );
    for index in 0..types.len() {
        let (unit, min_key, max_key, inc_key) = match index {
            MEMORY => (
                " MB",
                "yarn.scheduler.minimum-allocation-mb".to_string(),
                "yarn.scheduler.maximum-allocation-mb".to_string(),
                "yarn.scheduler.increment-allocation-mb".to_string(),
            ),
            VCORES => (
                " vcores",
                "yarn.scheduler.minimum-allocation-vcores".to_string(),
                "yarn.scheduler.maximum-allocation-vcores".to_string(),
                "yarn.scheduler.increment-allocation-vcores".to_string(),
            ),
            _ => {
                let t = types.name(index);
                (
                    "",
                    format!("{TYPES}.{t}.minimum-allocation"),
                    format!("{TYPES}.{t}.maximum-allocation"),
                    format!("{TYPES}.{t}.increment-allocation"),
                )
            }
        };
        // Name the property actually set: the per-type one wins when both are.
        let pick = |a: &Applier, old: String, kind: &str| {
            let new = format!("{TYPES}.{}.{kind}", types.name(index));
            if a.positions.contains_key(&new) {
                new
            } else {
                old
            }
        };
        let min_key = pick(a, min_key, "minimum-allocation");
        let max_key = pick(a, max_key, "maximum-allocation");
        let inc_key = pick(a, inc_key, "increment-allocation");
        let (lo, hi, step) = (min.get(index), max.get(index), inc.get(index));
        if lo < 0 {
            a.error(
                &min_key,
                format!("the minimum allocation {lo}{unit} is negative"),
            );
        } else if lo > hi {
            let key = if a.positions.contains_key(&min_key) {
                min_key
            } else {
                max_key.clone()
            };
            a.error(
                &key,
                format!("the minimum allocation {lo}{unit} is above the maximum allocation {hi}{unit} ({max_key})"),
            );
        }
        if step <= 0 {
            a.error(
                &inc_key,
                format!("the increment {step}{unit} must be positive"),
            );
        }
    }
}
