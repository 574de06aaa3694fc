//! `weft up` tells its terminal when the RM refuses an edited allocation file (and when a good
//! one loads again): otherwise the refusal would only be in `rm.log`, and the user would wonder
//! why the new queues never appear. It polls the RM's `GET /ws/v1/cluster/admin/allocation-file`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;

/// How often the RM is asked (the RM itself checks the file every second under `weft up`).
const EVERY: Duration = Duration::from_secs(1);
const STATUS: &str = "/ws/v1/cluster/admin/allocation-file";

/// What the terminal has been told so far.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    errors: u64,
    last_success: u64,
    refused: bool,
    /// Whether any answer was read yet (the first one sets the baseline silently, unless the
    /// file is already refused).
    started: bool,
}

/// The line to print for a new answer of the status endpoint, if it says something new.
pub(crate) fn news(seen: &mut Seen, answer: &Value) -> Option<String> {
    let a = answer.get("allocationFile")?;
    let errors = a.get("errorCount").and_then(Value::as_u64).unwrap_or(0);
    let last_success = a
        .get("lastSuccessTime")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let loaded = a.get("loaded").and_then(Value::as_bool).unwrap_or(true);
    let path = a
        .get("path")
        .and_then(Value::as_str)
        .unwrap_or("the allocation file");
    // The Capacity Scheduler's file is no allocation file: say what it is.
    let what = if path.ends_with("capacity-scheduler.xml") {
        "Queue configuration"
    } else {
        "Allocation file"
    };
    let first = !seen.started;
    let newly_refused = !loaded && (errors > seen.errors || first);
    let newly_loaded = loaded && last_success > seen.last_success && !first;
    let was_refused = seen.refused;
    *seen = Seen {
        errors,
        last_success,
        refused: !loaded,
        started: true,
    };
    if newly_refused {
        let why = a
            .get("error")
            .and_then(Value::as_str)
            .unwrap_or("no reason given");
        Some(format!(
            "{what} refused: {why}\n  The ResourceManager keeps the previous queues; fix {path} (it is re-read when it changes) or run `weft rmadmin -refreshQueues`."
        ))
    } else if newly_loaded && was_refused {
        Some(format!(
            "{what} {path} loaded: the new queues are in force."
        ))
    } else if newly_loaded {
        Some(format!("{what} {path} reloaded."))
    } else {
        None
    }
}

/// Polls the RM at `web` (`host:port`) until `stop` is set, printing news to stdout. Runs on a
/// blocking thread: the client is synchronous.
pub(crate) fn watch(web: String, stop: Arc<AtomicBool>) {
    let rm = weft_client::Rm::new(format!("http://{web}"), None);
    let mut seen = Seen::default();
    while !stop.load(Ordering::Relaxed) {
        // An RM that does not answer (stopping, restarting) has nothing to report; its death
        // is `weft up`'s main loop's business.
        if let Ok(answer) = rm.get(STATUS, &[]) {
            if let Some(line) = news(&mut seen, &answer) {
                println!("{line}");
            }
        }
        std::thread::sleep(EVERY);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(loaded: bool, errors: u64, success: u64) -> Value {
        json!({"allocationFile": {
            "path": "/d/fair-scheduler.xml",
            "loaded": loaded,
            "error": (!loaded).then_some("/d/fair-scheduler.xml: line 4, column 3: unexpected end"),
            "lastAttemptTime": success.max(errors),
            "lastSuccessTime": success,
            "errorCount": errors,
        }})
    }

    #[test]
    fn refusals_and_recoveries_are_told_once_each() {
        let mut seen = Seen::default();
        assert_eq!(news(&mut seen, &status(true, 0, 10)), None, "the baseline");
        assert_eq!(news(&mut seen, &status(true, 0, 10)), None, "nothing new");
        let refused = news(&mut seen, &status(false, 1, 10)).expect("a refusal");
        assert!(
            refused.starts_with(
                "Allocation file refused: /d/fair-scheduler.xml: line 4, column 3: unexpected end\n"
            ),
            "{refused}"
        );
        assert!(refused.contains("keeps the previous queues"), "{refused}");
        assert_eq!(news(&mut seen, &status(false, 1, 10)), None, "told once");
        let again = news(&mut seen, &status(false, 2, 10)).expect("a second refusal");
        assert!(again.starts_with("Allocation file refused"), "{again}");
        assert_eq!(
            news(&mut seen, &status(true, 2, 20)).as_deref(),
            Some("Allocation file /d/fair-scheduler.xml loaded: the new queues are in force.")
        );
        assert_eq!(
            news(&mut seen, &status(true, 2, 30)).as_deref(),
            Some("Allocation file /d/fair-scheduler.xml reloaded.")
        );
    }

    #[test]
    fn the_capacity_schedulers_file_is_called_the_queue_configuration() {
        let mut seen = Seen::default();
        let answer = json!({"allocationFile": {
            "path": "/c/capacity-scheduler.xml",
            "loaded": false,
            "error": "/c/capacity-scheduler.xml: root.a cannot be deleted",
            "lastSuccessTime": 10,
            "errorCount": 1,
        }});
        let line = news(&mut seen, &answer).expect("told");
        assert!(
            line.starts_with("Queue configuration refused: /c/capacity-scheduler.xml: root.a cannot be deleted\n"),
            "{line}"
        );
        assert!(line.contains("fix /c/capacity-scheduler.xml"), "{line}");
    }

    #[test]
    fn a_file_already_refused_at_the_first_answer_is_told() {
        let mut seen = Seen::default();
        let line = news(&mut seen, &status(false, 1, 10)).expect("told");
        assert!(line.starts_with("Allocation file refused"), "{line}");
        assert_eq!(news(&mut seen, &json!({"other": 1})), None, "not a status");
    }
}
