//! The global `yarn.scheduler.capacity.*` keys and the preemption policy's keys (spec §3.6,
//! §3.7, §3.11, §3.12, §8.1), with Hadoop's defaults.

use super::model::*;
use super::reader::Reader;
use super::PREFIX;

/// The preemption policy's prefix (read from the same configuration as the scheduler's keys).
pub(super) const PREEMPTION: &str = "yarn.resourcemanager.monitor.capacity.preemption.";

/// Global keys Hadoop reads that Weft knows but does not model (asynchronous scheduling's
/// tuning, multi-node placement, workflow priorities, the 3.4 mapping engine, auto-creation v2):
/// accepted without a warning.
const KNOWN_UNMODELED: &[&str] = &[
    "schedule-asynchronously.maximum-threads",
    "schedule-asynchronously.maximum-pending-backlogs",
    "schedule-asynchronously.scheduling-interval-ms",
    "multi-node-placement-enabled",
    "multi-node-sorting.policy.names",
    "workflow-priority-mappings",
    "workflow-priority-mappings-override.enable",
    "mapping-rule-format",
    "mapping-rule-json",
    "mapping-rule-json-file",
    "legacy-queue-mode.enabled",
    "auto-queue-creation-v2.queue-expiration-time",
    "ordering-policy.priority-utilization.underutilized-preemption.enabled",
    "ordering-policy.priority-utilization.underutilized-preemption.reserved-container-delay-ms",
    "ordering-policy.priority-utilization.underutilized-preemption.allow-move-reservation",
    "configuration.provider",
];

/// Preemption keys Hadoop reads that Weft keeps no field for yet.
const PREEMPTION_UNMODELED: &[&str] = &[
    "select_based_on_reserved_containers",
    "additional_res_balance_based_on_reserved_containers",
    "intra-queue-preemption.minimum-threshold",
    "intra-queue-preemption.max-allowable-limit",
    "intra-queue-preemption.preemption-order-policy",
    "intra-queue-preemption.conservative-drf",
    "preemption-to-balance-queue-after-satisfied.enabled",
    "preemption-to-balance-queue-after-satisfied.max-wait-before-kill",
];

/// Reads every global key.
pub(super) fn globals(r: &mut Reader) -> CapacityGlobals {
    let d = CapacityGlobals::default();
    let k = |suffix: &str| format!("{PREFIX}{suffix}");
    let mut g = CapacityGlobals {
        maximum_applications: r.int(&k("maximum-applications"), d.maximum_applications),
        maximum_am_resource_percent: r.float(
            &k("maximum-am-resource-percent"),
            d.maximum_am_resource_percent,
        ),
        global_queue_max_application: r.int(
            &k("global-queue-max-application"),
            d.global_queue_max_application,
        ),
        user_limit_factor: r.float(&k("user-limit-factor"), d.user_limit_factor),
        minimum_user_limit_percent: r.float(
            &k("minimum-user-limit-percent"),
            d.minimum_user_limit_percent,
        ),
        max_parallel_apps: r.int(&k("max-parallel-apps"), d.max_parallel_apps),
        user_max_parallel_apps: r.int(&k("user.max-parallel-apps"), d.user_max_parallel_apps),
        per_user_max_parallel_apps: per_user_max_parallel_apps(r),
        resource_calculator: resource_calculator(r),
        node_locality_delay: r.int(&k("node-locality-delay"), d.node_locality_delay),
        rack_locality_additional_delay: r.int(
            &k("rack-locality-additional-delay"),
            d.rack_locality_additional_delay,
        ),
        rack_locality_full_reset: r
            .bool(&k("rack-locality-full-reset"), d.rack_locality_full_reset),
        multiple_assignments_enabled: r.bool(
            &k("per-node-heartbeat.multiple-assignments-enabled"),
            d.multiple_assignments_enabled,
        ),
        maximum_container_assignments: r.int(
            &k("per-node-heartbeat.maximum-container-assignments"),
            d.maximum_container_assignments,
        ),
        maximum_offswitch_assignments: r.int(
            &k("per-node-heartbeat.maximum-offswitch-assignments"),
            d.maximum_offswitch_assignments,
        ),
        reservations_continue_look_all_nodes: r.bool(
            &k("reservations-continue-look-all-nodes"),
            d.reservations_continue_look_all_nodes,
        ),
        schedule_asynchronously: r.bool(
            &k("schedule-asynchronously.enable"),
            d.schedule_asynchronously,
        ),
        queue_mappings: queue_mappings(r),
        queue_mappings_override: r.bool(
            &k("queue-mappings-override.enable"),
            d.queue_mappings_override,
        ),
        lazy_preemption_enabled: r.bool(&k("lazy-preemption-enabled"), d.lazy_preemption_enabled),
        user_metrics_enabled: r.bool(&k("user-metrics.enable"), d.user_metrics_enabled),
        application_fail_fast: r.bool(&k("application.fail-fast"), d.application_fail_fast),
        auto_refresh_interval_ms: d.auto_refresh_interval_ms,
    };
    // Hadoop's documentation and code spell the auto-refresh interval differently (spec §13.4).
    for name in [
        "yarn.resourcemanager.queue.auto.refresh.monitoring-interval",
        &k("queue.auto.refresh.monitoring-interval"),
    ] {
        g.auto_refresh_interval_ms = r.long(name, g.auto_refresh_interval_ms);
    }
    if g.maximum_offswitch_assignments < 1 {
        r.warn(
            &k("per-node-heartbeat.maximum-offswitch-assignments"),
            format!(
                "{} is below 1; 1 is used, as Hadoop does",
                g.maximum_offswitch_assignments
            ),
        );
        g.maximum_offswitch_assignments = 1;
    }
    if g.maximum_applications < 0 {
        r.error(
            &k("maximum-applications"),
            format!("{} may not be negative", g.maximum_applications),
        );
    }
    if !(0.0..=1.0).contains(&g.maximum_am_resource_percent) {
        r.error(
            &k("maximum-am-resource-percent"),
            format!(
                "{} is not a fraction from 0 to 1 (0.1 means 10%)",
                g.maximum_am_resource_percent
            ),
        );
    }
    if !(0.0..=100.0).contains(&g.minimum_user_limit_percent) {
        r.error(
            &k("minimum-user-limit-percent"),
            format!(
                "{} is not a percentage from 0 to 100",
                g.minimum_user_limit_percent
            ),
        );
    }
    for name in KNOWN_UNMODELED {
        r.get(&k(name));
    }
    g
}

fn per_user_max_parallel_apps(r: &mut Reader) -> std::collections::BTreeMap<String, i32> {
    let prefix = format!("{PREFIX}user.");
    let mut limits = std::collections::BTreeMap::new();
    for name in r.names_with_prefix(&prefix) {
        let Some(user) = name
            .strip_prefix(&prefix)
            .and_then(|u| u.strip_suffix(".max-parallel-apps"))
        else {
            continue;
        };
        if !user.is_empty() {
            let limit = r.int(&name, i32::MAX);
            limits.insert(user.to_string(), limit);
        }
    }
    limits
}

fn resource_calculator(r: &mut Reader) -> ResourceCalculator {
    let name = format!("{PREFIX}resource-calculator");
    let Some(value) = r.get(&name) else {
        return ResourceCalculator::Default;
    };
    match value.trim().rsplit('.').next().unwrap_or("") {
        "DefaultResourceCalculator" => ResourceCalculator::Default,
        "DominantResourceCalculator" => ResourceCalculator::Dominant,
        _ => {
            r.error(
                &name,
                format!(
                    "'{}' is not a resource calculator Weft knows (org.apache.hadoop.yarn.util.resource.DefaultResourceCalculator or DominantResourceCalculator)",
                    value.trim()
                ),
            );
            ResourceCalculator::Default
        }
    }
}

/// `u:<user>:<queue>` / `g:<group>:<queue>`, comma separated (spec §3.12).
fn queue_mappings(r: &mut Reader) -> Vec<QueueMapping> {
    let name = format!("{PREFIX}queue-mappings");
    let Some(value) = r.get(&name) else {
        return Vec::new();
    };
    let mut mappings = Vec::new();
    for entry in value.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let parts: Vec<&str> = entry.split(':').map(str::trim).collect();
        let kind = match parts.first() {
            Some(&"u") => Some(MappingKind::User),
            Some(&"g") => Some(MappingKind::Group),
            _ => None,
        };
        match (kind, parts.as_slice()) {
            (Some(kind), [_, source, queue]) if !source.is_empty() && !queue.is_empty() => {
                mappings.push(QueueMapping {
                    kind,
                    source: (*source).to_string(),
                    queue: (*queue).to_string(),
                });
            }
            _ => r.error(
                &name,
                format!("Illegal queue mapping {entry} (each entry is u:<user>:<queue> or g:<group>:<queue>)"),
            ),
        }
    }
    mappings
}

/// Reads the preemption policy's keys.
pub(super) fn preemption(r: &mut Reader) -> CapacityPreemption {
    let d = CapacityPreemption::default();
    let k = |suffix: &str| format!("{PREEMPTION}{suffix}");
    let p = CapacityPreemption {
        monitoring_interval_ms: r.long(&k("monitoring_interval"), d.monitoring_interval_ms),
        max_wait_before_kill_ms: r.long(&k("max_wait_before_kill"), d.max_wait_before_kill_ms),
        total_preemption_per_round: r.float(
            &k("total_preemption_per_round"),
            d.total_preemption_per_round,
        ),
        max_ignored_over_capacity: r
            .float(&k("max_ignored_over_capacity"), d.max_ignored_over_capacity),
        natural_termination_factor: r.float(
            &k("natural_termination_factor"),
            d.natural_termination_factor,
        ),
        observe_only: r.bool(&k("observe_only"), d.observe_only),
        intra_queue_enabled: r.bool(&k("intra-queue-preemption.enabled"), d.intra_queue_enabled),
        conservative_drf: r.bool(&k("conservative-drf"), d.conservative_drf),
    };
    if p.monitoring_interval_ms <= 0 {
        r.error(
            &k("monitoring_interval"),
            format!(
                "{} ms: the interval must be positive",
                p.monitoring_interval_ms
            ),
        );
    }
    for name in PREEMPTION_UNMODELED {
        r.get(&k(name));
    }
    p
}
