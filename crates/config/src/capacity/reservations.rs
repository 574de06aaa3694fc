//! The reservation system's per-queue keys (Hadoop's `ReservationSchedulerConfiguration` as
//! `CapacitySchedulerConfiguration` reads it): `reservable` and, on a reservable leaf, its
//! agent, policy, planner, window, shares, expiry and enforcement settings.

use std::collections::BTreeMap;

use super::model::CsQueue;
use super::reader::Reader;
use super::PREFIX;
use crate::reservation::{
    ReplannerKind, ReservationAgentKind, ReservationQueueSettings, SharingPolicyKind,
};

/// The keys read on a reservable queue (besides `reservable`).
pub(super) const QUEUE_KEYS: &[&str] = &[
    "reservation-agent",
    "reservation-policy",
    "reservation-planner",
    "reservation-window",
    "instantaneous-max-capacity",
    "average-capacity",
    "reservation-move-on-expiry",
    "reservation-enforcement-window",
    "show-reservations-as-queues",
];

/// Reads `reservable` on every queue and the settings of the reservable ones. A reservable
/// queue with children is an error (Hadoop refuses it with the same words).
pub(super) fn read(
    r: &mut Reader,
    queues: &[CsQueue],
) -> BTreeMap<String, ReservationQueueSettings> {
    let mut out = BTreeMap::new();
    for q in queues {
        let key = |suffix: &str| format!("{PREFIX}{}.{suffix}", q.path);
        if !r.bool(&key("reservable"), false) {
            continue;
        }
        if !q.is_leaf() {
            r.error(
                &key("reservable"),
                format!("Only Leaf Queues can be reservable for {}", q.path),
            );
            continue;
        }
        out.insert(q.path.clone(), settings(r, &key));
    }
    out
}

fn settings(r: &mut Reader, key: &dyn Fn(&str) -> String) -> ReservationQueueSettings {
    let defaults = ReservationQueueSettings::default();
    ReservationQueueSettings {
        agent: class(
            r,
            &key("reservation-agent"),
            defaults.agent,
            ReservationAgentKind::from_class_name,
        ),
        policy: class(
            r,
            &key("reservation-policy"),
            defaults.policy,
            SharingPolicyKind::from_class_name,
        ),
        planner: class(
            r,
            &key("reservation-planner"),
            defaults.planner,
            ReplannerKind::from_class_name,
        ),
        window_ms: positive_ms(r, &key("reservation-window"), defaults.window_ms),
        instantaneous_max_capacity: percent(
            r,
            &key("instantaneous-max-capacity"),
            defaults.instantaneous_max_capacity,
        ),
        average_capacity: percent(r, &key("average-capacity"), defaults.average_capacity),
        move_on_expiry: r.bool(&key("reservation-move-on-expiry"), defaults.move_on_expiry),
        enforcement_window_ms: non_negative_ms(
            r,
            &key("reservation-enforcement-window"),
            defaults.enforcement_window_ms,
        ),
        show_reservations_as_queues: r.bool(
            &key("show-reservations-as-queues"),
            defaults.show_reservations_as_queues,
        ),
    }
}

fn class<K: Copy>(
    r: &mut Reader,
    name: &str,
    default: K,
    parse: impl Fn(&str) -> Result<K, String>,
) -> K {
    let Some(value) = r.get(name) else {
        return default;
    };
    match parse(&value) {
        Ok(k) => k,
        Err(e) => {
            r.error(name, e);
            default
        }
    }
}

/// A window: Hadoop divides by it, so it must be positive.
fn positive_ms(r: &mut Reader, name: &str, default: i64) -> i64 {
    let was_set = r.is_set(name);
    let v = r.long(name, default);
    if was_set && !r.has_error(name) && v <= 0 {
        r.error(
            name,
            format!("{v} is not a window; write a positive number of milliseconds"),
        );
        return default;
    }
    v
}

fn non_negative_ms(r: &mut Reader, name: &str, default: i64) -> i64 {
    let was_set = r.is_set(name);
    let v = r.long(name, default);
    if was_set && !r.has_error(name) && v < 0 {
        r.error(
            name,
            format!("{v} is negative; write a number of milliseconds (0 turns replanning off)"),
        );
        return default;
    }
    v
}

/// A share in percent (50 is half, as Hadoop divides these by 100).
fn percent(r: &mut Reader, name: &str, default: f32) -> f32 {
    let was_set = r.is_set(name);
    let v = r.float(name, default);
    if was_set && !r.has_error(name) && !(v.is_finite() && v >= 0.0) {
        r.error(
            name,
            format!("{v} is not a percentage; write a number of percent >= 0 (50 is half)"),
        );
        return default;
    }
    v
}
