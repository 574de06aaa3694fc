//! Query filters of `/apps`, `/appstatistics` and `/nodes`, validated as Hadoop's
//! `RMWebServices` does: a bad value is a 400, never an empty answer.

use std::collections::{BTreeMap, BTreeSet};

use weft_rm_core::AppReport;
use weft_types::Time;

use super::error::RestError;
use super::json::{final_name, state_name};

pub(crate) use weft_types::YARN_APP_STATES as APP_STATES;

const FINAL_STATUSES: [&str; 5] = ["UNDEFINED", "SUCCEEDED", "FAILED", "KILLED", "ENDED"];

use weft_types::YARN_NODE_STATES as NODE_STATES;

/// Field groups `deSelects` may drop.
const DESELECTABLE: [&str; 5] = [
    "resourceRequests",
    "timeouts",
    "appNodeLabelExpression",
    "amNodeLabelExpression",
    "resourceInfo",
];

type Query = BTreeMap<String, String>;

/// The comma-separated, trimmed, non-empty items of a parameter (absent: `None`).
fn list(q: &Query, key: &str) -> Option<Vec<String>> {
    q.get(key).map(|v| {
        v.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect()
    })
}

/// Upper-cased application states from `states` (or the older single `state`), each checked.
pub(crate) fn app_states(q: &Query) -> Result<Option<BTreeSet<String>>, RestError> {
    let Some(items) = list(q, "states").or_else(|| list(q, "state")) else {
        return Ok(None);
    };
    let mut out = BTreeSet::new();
    for s in items {
        let up = s.to_uppercase();
        if !APP_STATES.contains(&up.as_str()) {
            return Err(RestError::bad_request(format!(
                "Invalid application-state {s} specified. It should be one of {}",
                APP_STATES.join(", ")
            )));
        }
        out.insert(up);
    }
    Ok(if out.is_empty() { None } else { Some(out) })
}

/// Upper-cased node states from `states` (or `state`), each checked.
pub(crate) fn node_states(q: &Query) -> Result<Option<BTreeSet<String>>, RestError> {
    let Some(items) = list(q, "states").or_else(|| list(q, "state")) else {
        return Ok(None);
    };
    let mut out = BTreeSet::new();
    for s in items {
        let up = s.to_uppercase();
        if !NODE_STATES.contains(&up.as_str()) {
            return Err(RestError::bad_request(format!(
                "Invalid node state {s} specified. It should be one of {}",
                NODE_STATES.join(", ")
            )));
        }
        out.insert(up);
    }
    Ok(if out.is_empty() { None } else { Some(out) })
}

/// Lower-cased `applicationTypes`.
pub(crate) fn app_types(q: &Query) -> Option<BTreeSet<String>> {
    list(q, "applicationTypes")
        .map(|v| {
            v.into_iter()
                .map(|t| t.to_lowercase())
                .collect::<BTreeSet<_>>()
        })
        .filter(|s| !s.is_empty())
}

fn time(q: &Query, key: &str) -> Result<Option<u64>, RestError> {
    let Some(v) = q.get(key) else {
        return Ok(None);
    };
    let n: i64 = v
        .trim()
        .parse()
        .map_err(|_| RestError::bad_request(format!("{key} must be a number, got '{v}'")))?;
    u64::try_from(n)
        .map(Some)
        .map_err(|_| RestError::bad_request(format!("{key} must be greater than 0")))
}

/// An inclusive time window; begin defaults to 0 and end to forever.
fn window(q: &Query, begin: &str, end: &str) -> Result<Option<(u64, u64)>, RestError> {
    let (b, e) = (time(q, begin)?, time(q, end)?);
    if b.is_none() && e.is_none() {
        return Ok(None);
    }
    let (b, e) = (b.unwrap_or(0), e.unwrap_or(u64::MAX));
    if b > e {
        return Err(RestError::bad_request(format!(
            "{begin} must be less than or equal to {end}"
        )));
    }
    Ok(Some((b, e)))
}

/// The filters of `GET /apps`, combined with AND.
#[derive(Debug, Default)]
pub(crate) struct AppFilter {
    states: Option<BTreeSet<String>>,
    final_status: Option<String>,
    user: Option<String>,
    queue: Option<String>,
    name: Option<String>,
    types: Option<BTreeSet<String>>,
    tags: Option<BTreeSet<String>>,
    started: Option<(u64, u64)>,
    finished: Option<(u64, u64)>,
    /// At most this many apps.
    pub(crate) limit: Option<usize>,
    /// Field groups to leave out of each app.
    pub(crate) deselects: BTreeSet<String>,
}

/// How many apps `GET /apps` lists without a `limit` parameter (the newest ones).
pub(crate) const DEFAULT_APP_LIST_LIMIT: usize = 1000;

/// The part of `matching` (in id order) a listing returns: an explicit limit keeps the first
/// matches, as Hadoop's does; without one the answer is bounded too (Hadoop has no default),
/// keeping the newest [`DEFAULT_APP_LIST_LIMIT`].
pub(crate) fn limited<T>(matching: &[T], limit: Option<usize>) -> &[T] {
    match limit {
        Some(limit) => &matching[..limit.min(matching.len())],
        None => &matching[matching.len().saturating_sub(DEFAULT_APP_LIST_LIMIT)..],
    }
}

impl AppFilter {
    /// Reads and checks every filter parameter.
    pub(crate) fn parse(q: &Query) -> Result<AppFilter, RestError> {
        let final_status = match q.get("finalStatus").map(|s| s.trim().to_uppercase()) {
            Some(f) if !FINAL_STATUSES.contains(&f.as_str()) => {
                return Err(RestError::bad_request(format!(
                    "Invalid final status {f} specified. It should be one of {}",
                    FINAL_STATUSES.join(", ")
                )))
            }
            other => other.filter(|f| !f.is_empty()),
        };
        let limit = match q.get("limit") {
            Some(l) => match l.trim().parse::<i64>() {
                Ok(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => return Err(RestError::bad_request("limit value must be greater then 0")),
            },
            None => None,
        };
        let mut deselects = BTreeSet::new();
        for d in list(q, "deSelects").unwrap_or_default() {
            let Some(known) = DESELECTABLE.iter().find(|k| k.eq_ignore_ascii_case(&d)) else {
                return Err(RestError::bad_request(format!(
                    "Invalid deSelects string {d}; valid values are {}",
                    DESELECTABLE.join(", ")
                )));
            };
            deselects.insert(known.to_string());
        }
        let text = |key: &str| {
            q.get(key)
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
        };
        Ok(AppFilter {
            states: app_states(q)?,
            final_status,
            user: text("user"),
            queue: text("queue"),
            name: text("name"),
            types: app_types(q),
            tags: list(q, "applicationTags")
                .map(|v| {
                    v.into_iter()
                        .map(|t| t.to_lowercase())
                        .collect::<BTreeSet<_>>()
                })
                .filter(|s| !s.is_empty()),
            started: window(q, "startedTimeBegin", "startedTimeEnd")?,
            finished: window(q, "finishedTimeBegin", "finishedTimeEnd")?,
            limit,
            deselects,
        })
    }

    /// Whether `r` passes every filter.
    pub(crate) fn matches(&self, r: &AppReport) -> bool {
        let within = |w: Option<(u64, u64)>, t: u64| w.is_none_or(|(b, e)| b <= t && t <= e);
        self.states
            .as_ref()
            .is_none_or(|s| s.contains(state_name(r.state)))
            && self
                .final_status
                .as_ref()
                .is_none_or(|f| f == final_name(r.final_status))
            && self.user.as_ref().is_none_or(|u| *u == r.user)
            && self.queue.as_ref().is_none_or(|q| queue_matches(q, &r.queue))
            && self.name.as_ref().is_none_or(|n| *n == r.name)
            && self
                .types
                .as_ref()
                .is_none_or(|t| t.contains(&r.application_type.to_lowercase()))
            && self
                .tags
                .as_ref()
                .is_none_or(|t| r.tags.iter().any(|x| t.contains(&x.to_lowercase())))
            && within(self.started, r.submit_time.as_millis())
            // A running app has no finish time: a finish window excludes it, as in YARN.
            && (self.finished.is_none()
                || r
                    .finish_time
                    .is_some_and(|t| within(self.finished, Time::as_millis(t))))
    }
}

/// A `queue` filter names the full queue (`root.a.b`) or leaves out `root.`.
fn queue_matches(wanted: &str, queue: &str) -> bool {
    wanted == queue || queue.strip_prefix("root.") == Some(wanted)
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_rm_core::{AppState, FinalStatus};
    use weft_types::yarn_id::ApplicationId;
    use weft_types::Resource;

    fn q(pairs: &[(&str, &str)]) -> Query {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn app(seq: u64, state: AppState, submit: u64, finish: Option<u64>) -> AppReport {
        AppReport {
            id: ApplicationId { cluster_ts: 1, seq },
            name: format!("app{seq}"),
            user: "alice".into(),
            queue: "root.alice".into(),
            state,
            final_status: if state == AppState::Killed {
                FinalStatus::Killed
            } else {
                FinalStatus::Undefined
            },
            diagnostics: String::new(),
            application_type: "MAPREDUCE".into(),
            tags: ["etl".to_string()].into(),
            priority: 0,
            progress: 0.0,
            submit_time: Time(submit),
            launch_time: None,
            finish_time: finish.map(Time),
            current_attempt: None,
            allocated: Resource::ZERO,
            running_containers: 0,
            tracking_url: None,
            aggregate: Default::default(),
            preemption: Default::default(),
        }
    }

    #[test]
    fn every_filter_narrows() {
        let running = app(1, AppState::Running, 100, None);
        let killed = app(2, AppState::Killed, 200, Some(300));
        let pass =
            |pairs: &[(&str, &str)], r: &AppReport| AppFilter::parse(&q(pairs)).unwrap().matches(r);
        assert!(pass(&[], &running));
        assert!(pass(&[("states", "running,accepted")], &running));
        assert!(!pass(&[("states", "KILLED")], &running));
        assert!(pass(&[("state", "killed")], &killed));
        assert!(pass(&[("finalStatus", "killed")], &killed));
        assert!(!pass(&[("finalStatus", "SUCCEEDED")], &killed));
        assert!(!pass(&[("user", "bob")], &running));
        assert!(pass(&[("queue", "root.alice")], &running));
        assert!(pass(&[("queue", "alice")], &running));
        assert!(!pass(&[("queue", "root.bob")], &running));
        assert!(pass(&[("applicationTypes", "spark, mapreduce")], &running));
        assert!(!pass(&[("applicationTypes", "spark")], &running));
        assert!(pass(&[("applicationTags", "x,ETL")], &running));
        assert!(!pass(&[("applicationTags", "x")], &running));
        assert!(pass(&[("name", "app1")], &running));
        assert!(pass(
            &[("startedTimeBegin", "100"), ("startedTimeEnd", "150")],
            &running
        ));
        assert!(!pass(&[("startedTimeBegin", "101")], &running));
        assert!(pass(&[("finishedTimeEnd", "300")], &killed));
        assert!(!pass(&[("finishedTimeBegin", "301")], &killed));
        assert!(!pass(&[("finishedTimeBegin", "0")], &running));
    }

    #[test]
    fn bad_filters_are_400s() {
        for pairs in [
            &[("states", "RUNNING,SLEEPING")][..],
            &[("finalStatus", "GREAT")],
            &[("limit", "0")],
            &[("limit", "x")],
            &[("startedTimeBegin", "-1")],
            &[("startedTimeBegin", "abc")],
            &[("finishedTimeBegin", "10"), ("finishedTimeEnd", "5")],
            &[("deSelects", "everything")],
        ] {
            let e = AppFilter::parse(&q(pairs)).unwrap_err();
            assert_eq!(e.status, axum::http::StatusCode::BAD_REQUEST, "{pairs:?}");
        }
        assert!(node_states(&q(&[("states", "BUSY")])).is_err());
        assert_eq!(
            node_states(&q(&[("states", "running,lost")]))
                .unwrap()
                .unwrap()
                .len(),
            2
        );
        let ids: Vec<usize> = (0..DEFAULT_APP_LIST_LIMIT + 5).collect();
        assert_eq!(limited(&ids, None).len(), DEFAULT_APP_LIST_LIMIT);
        assert_eq!(
            limited(&ids, None)[0],
            5,
            "the newest are listed by default"
        );
        assert_eq!(limited(&ids, Some(3)), &[0, 1, 2]);
        assert_eq!(limited(&ids[..2], Some(3)), &[0, 1]);
        assert_eq!(limited(&ids[..2], None), &[0, 1]);
        let f = AppFilter::parse(&q(&[("limit", "2"), ("deSelects", "timeouts")])).unwrap();
        assert_eq!(f.limit, Some(2));
        assert!(f.deselects.contains("timeouts"));
    }
}
