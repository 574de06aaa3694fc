//! `weft demand submit FILE | plan FILE | list | status KEY | watch KEY | kill KEY`: Weft's time-aware demands (spec
//! §3.6; Hadoop has no such verb). A demand's key is `application_<ts>_<n>/<DemandID>`, or
//! `~<user>/<DemandID>` for one bound to no application.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::fmt::{self, int, list, text};
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

/// Time-aware demands: submit, plan (a dry run), list, status, watch, kill.
#[derive(Args, Debug)]
pub struct DemandArgs {
    #[command(subcommand)]
    #[allow(missing_docs)]
    pub command: DemandCommand,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// What to do with demands.
#[derive(Subcommand, Debug)]
pub enum DemandCommand {
    /// Submit the demands in FILE: a ResourceDescription, an array of them, or a whole body
    /// `{"application-id"?, "queue"?, "demands": [...]}`.
    Submit {
        /// The JSON file.
        file: PathBuf,
        /// The queue (for demands bound to no application).
        #[arg(long)]
        queue: Option<String>,
        /// Bind the demands to this application's allocation request ids.
        #[arg(long = "application-id", value_name = "ID")]
        application_id: Option<String>,
    },
    /// What the demands in FILE would get if submitted now (a dry run: nothing changes).
    Plan {
        /// The JSON file (as for `submit`).
        file: PathBuf,
        /// The queue (for demands bound to no application).
        #[arg(long)]
        queue: Option<String>,
        /// The application the demands would be bound to.
        #[arg(long = "application-id", value_name = "ID")]
        application_id: Option<String>,
    },
    /// List demands, optionally by state, queue or application.
    List {
        /// Only demands in this state (NEW, ACCEPTED, ALLOCATING, ALLOCATED, MONITORING,
        /// FINISHED, FAILED).
        #[arg(long)]
        state: Option<String>,
        /// Only demands of this queue.
        #[arg(long)]
        queue: Option<String>,
        /// Only demands of this application.
        #[arg(long = "application-id", value_name = "ID")]
        application_id: Option<String>,
    },
    /// One demand's report and timeline.
    Status {
        /// The demand's key.
        key: String,
    },
    /// Follow a demand: print each transition as it happens, until it ends (exit 0 when
    /// FINISHED, 255 when FAILED).
    Watch {
        /// The demand's key.
        key: String,
        /// How often to ask the RM, e.g. 1s, 500ms.
        #[arg(long, default_value = "1s", value_parser = crate::fmt::parse_interval)]
        interval: std::time::Duration,
        /// Give up after about this long (counted in intervals; exit 255), e.g. 10m; by default
        /// wait until the demand ends.
        #[arg(long, value_parser = crate::fmt::parse_interval)]
        timeout: Option<std::time::Duration>,
    },
    /// Kill a demand (its owner or an administrator).
    Kill {
        /// The demand's key.
        key: String,
    },
}

/// The REST path of a demand key, refusing what is not one.
fn demand_path(key: &str) -> Result<String, ClientError> {
    match key.split_once('/') {
        Some((scope, id))
            if !scope.is_empty() && !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) =>
        {
            Ok(format!("/ws/v1/cluster/demands/{scope}/{id}"))
        }
        _ => Err(ClientError::Usage(format!(
            "'{key}' is not a demand key; expected application_<ts>_<n>/<DemandID> or ~<user>/<DemandID>"
        ))),
    }
}

/// The submission body for the file's contents and the flags.
fn submission(
    text: &str,
    file: &str,
    queue: Option<&str>,
    application: Option<&str>,
) -> Result<Value, ClientError> {
    let value: Value = serde_json::from_str(text).map_err(|e| {
        ClientError::Usage(format!(
            "{file}: not JSON at line {} column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let mut body = match value {
        Value::Object(ref o) if o.contains_key("demands") => value,
        other => json!({ "demands": other }),
    };
    if let Some(q) = queue {
        body["queue"] = json!(q);
    }
    if let Some(a) = application {
        body["application-id"] = json!(a);
    }
    Ok(body)
}

/// The submission body of FILE (as `submission` reads it) with the flags.
fn submission_file(
    file: &std::path::Path,
    queue: Option<&str>,
    application: Option<&str>,
) -> Result<Value, ClientError> {
    let shown = file.display().to_string();
    let text = std::fs::read_to_string(file)
        .map_err(|e| ClientError::Usage(format!("cannot read {shown}: {e}")))?;
    submission(&text, &shown, queue, application)
}

impl Verb for DemandArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let conn = &self.conn;
        match &self.command {
            DemandCommand::Submit {
                file,
                queue,
                application_id,
            } => {
                let body = submission_file(file, queue.as_deref(), application_id.as_deref())?;
                let answer = conn
                    .connect()?
                    .post("/ws/v1/cluster/demands", &[], Some(&body))?;
                if conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    write!(out, "{}", table(&list(&answer, "demands", "demand")))?;
                }
                Ok(Outcome::Success)
            }
            DemandCommand::Plan {
                file,
                queue,
                application_id,
            } => {
                let body = submission_file(file, queue.as_deref(), application_id.as_deref())?;
                let answer =
                    conn.connect()?
                        .post("/ws/v1/cluster/demands/plan", &[], Some(&body))?;
                if conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    write!(out, "{}", plan_table(&list(&answer, "plan", "demand")))?;
                }
                Ok(Outcome::Success)
            }
            DemandCommand::List {
                state,
                queue,
                application_id,
            } => {
                let mut query = Vec::new();
                for (name, value) in [
                    ("state", state),
                    ("queue", queue),
                    ("application-id", application_id),
                ] {
                    if let Some(v) = value {
                        query.push((name, v.clone()));
                    }
                }
                let rm = conn.connect()?;
                let answer = rm.get("/ws/v1/cluster/demands", &query)?;
                if conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    write!(out, "{}", table(&list(&answer, "demands", "demand")))?;
                }
                Ok(Outcome::Success)
            }
            DemandCommand::Status { key } => {
                let path = demand_path(key)?;
                let rm = conn.connect()?;
                let answer = match rm.get(&path, &[]) {
                    Ok(answer) => answer,
                    Err(e) if e.status() == Some(404) => {
                        eprintln!("Demand with key '{key}' doesn't exist in RM.");
                        return Ok(Outcome::Failed);
                    }
                    Err(e) => return Err(e),
                };
                if conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    write!(out, "{}", report(&answer["demand"]))?;
                }
                Ok(Outcome::Success)
            }
            DemandCommand::Watch {
                key,
                interval,
                timeout,
            } => watch(conn, key, *interval, *timeout, out),
            DemandCommand::Kill { key } => {
                let path = format!("{}/state", demand_path(key)?);
                let rm = conn.connect()?;
                match rm.put(&path, &json!({"state": "KILLED"})) {
                    Ok((_, answer)) => {
                        if conn.json {
                            write!(out, "{}", fmt::json_text(&answer))?;
                        } else {
                            writeln!(out, "Killed demand {key}")?;
                        }
                        Ok(Outcome::Success)
                    }
                    Err(e) if e.status() == Some(409) => {
                        eprintln!("{}", e.remote_message());
                        Ok(Outcome::Failed)
                    }
                    Err(e) => Err(e),
                }
            }
        }
    }
}

/// `watch`: polls the demand and prints each transition not printed yet, until its state is
/// final or `timeout` passes. The timeline only grows, so what was printed is a prefix of it.
fn watch(
    conn: &Connection,
    key: &str,
    interval: std::time::Duration,
    timeout: Option<std::time::Duration>,
    out: &mut dyn Write,
) -> Result<Outcome, ClientError> {
    let path = demand_path(key)?;
    let rm = conn.connect()?;
    // Time is counted in polls (this crate reads no clock): each wait is one interval.
    let polls_allowed =
        timeout.map(|limit| limit.as_millis().div_ceil(interval.as_millis().max(1)));
    let mut polls: u128 = 0;
    let mut printed = 0usize;
    loop {
        let answer = match rm.get(&path, &[]) {
            Ok(answer) => answer,
            Err(e) if e.status() == Some(404) => {
                eprintln!("Demand with key '{key}' doesn't exist in RM.");
                return Ok(Outcome::Failed);
            }
            Err(e) => return Err(e),
        };
        let demand = &answer["demand"];
        let timeline = fmt::items(demand.get("timeline"));
        for t in timeline.iter().skip(printed) {
            writeln!(out, "{}", transition_line(t))?;
        }
        printed = printed.max(timeline.len());
        out.flush()?;
        match text(demand, "state").as_str() {
            "FINISHED" => return Ok(Outcome::Success),
            "FAILED" => return Ok(Outcome::Failed),
            _ => {}
        }
        if polls_allowed.is_some_and(|allowed| polls >= allowed) {
            eprintln!(
                "demand {key} is still {} after {polls} waits of {interval:?}",
                text(demand, "state")
            );
            return Ok(Outcome::Failed);
        }
        polls += 1;
        std::thread::sleep(interval);
    }
}

/// One transition: when, the state, the reason and its detail.
fn transition_line(t: &Value) -> String {
    let detail = text(t, "detail");
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    };
    format!(
        "{} {} {}{detail}",
        when(t, "at"),
        text(t, "state"),
        text(t, "reason")
    )
}

fn when(v: &Value, key: &str) -> String {
    match v.get(key).and_then(Value::as_u64) {
        Some(ms) => fmt::times_format(ms),
        None => "N/A".to_owned(),
    }
}

/// One line per demand.
fn table(demands: &[&Value]) -> String {
    let mut s = format!("Total number of demands:{}\n", demands.len());
    s.push_str(&format!(
        "{:>32}\t{:>10}\t{:>20}\t{:>16}\t{:>10}\t{:>28}\n",
        "Demand-Key", "State", "Reason", "Queue", "Allocated", "Deadline"
    ));
    for d in demands {
        let containers = &d["containers"];
        s.push_str(&format!(
            "{:>32}\t{:>10}\t{:>20}\t{:>16}\t{:>10}\t{:>28}\n",
            text(d, "id"),
            text(d, "state"),
            text(d, "reason"),
            text(d, "queue"),
            format!(
                "{}/{}",
                int(containers, "allocated"),
                int(containers, "requested")
            ),
            when(d, "deadline"),
        ));
    }
    s
}

/// The dry run: one line per demand with where it would go and why.
fn plan_table(demands: &[&Value]) -> String {
    let mut s = format!("Total number of demands:{}\n", demands.len());
    s.push_str(&format!(
        "{:>24}\t{:>10}\t{:>14}\t{:>28}\t{:>28}\t{:>22}\t{}\n",
        "Demand-Key", "State", "Reason", "Planned-Start", "Planned-End", "Headroom", "Detail"
    ));
    for d in demands {
        let headroom = match d.get("headroom") {
            Some(h) if h.is_object() => {
                format!("<memory:{}, vCores:{}>", int(h, "memory"), int(h, "vCores"))
            }
            _ => "N/A".to_owned(),
        };
        s.push_str(&format!(
            "{:>24}\t{:>10}\t{:>14}\t{:>28}\t{:>28}\t{:>22}\t{}\n",
            text(d, "id"),
            text(d, "state"),
            text(d, "reason"),
            when(d, "planned-start"),
            when(d, "planned-end"),
            headroom,
            text(d, "detail"),
        ));
    }
    s
}

/// `status`: the demand's figures, then its timeline.
fn report(d: &Value) -> String {
    let containers = &d["containers"];
    let mut s = String::from("Demand Report : \n");
    let rows = [
        ("Demand-Key", text(d, "id")),
        ("Application-Id", text(d, "application-id")),
        ("Demand-Id", text(d, "demand-id")),
        ("User", text(d, "user")),
        ("Queue", text(d, "queue")),
        ("State", text(d, "state")),
        ("Reason", text(d, "reason")),
        ("Accepted-Time", when(d, "accepted-time")),
        ("Earliest-Start", when(d, "earliest-start")),
        ("Reservation-Id", text(d, "reservation-id")),
        ("Planned-Start", when(d, "planned-start")),
        ("Planned-End", when(d, "planned-end")),
        ("First-Allocation", when(d, "first-allocation")),
        ("Deadline", when(d, "deadline")),
        (
            "Containers",
            format!(
                "requested {}, held {}, allocated {}, running {}, completed {}",
                int(containers, "requested"),
                int(containers, "held"),
                int(containers, "allocated"),
                int(containers, "running"),
                int(containers, "completed")
            ),
        ),
        ("Missed-Opportunities", text(d, "missed-opportunities")),
    ];
    for (name, value) in rows {
        let value = if value.is_empty() {
            "N/A".to_owned()
        } else {
            value
        };
        s.push_str(&format!("\t{name} : {value}\n"));
    }
    s.push_str("\tTimeline :\n");
    for t in fmt::items(d.get("timeline")) {
        s.push_str(&format!("\t\t{}\n", transition_line(t)));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_of_demands_is_wrapped_and_a_whole_body_kept() {
        let body = submission(r#"[{"DemandID": 1}]"#, "f.json", Some("root.a"), None).unwrap();
        assert_eq!(
            body,
            json!({"demands": [{"DemandID": 1}], "queue": "root.a"})
        );
        let whole = r#"{"demands": {"DemandID": 1}, "queue": "root.b"}"#;
        let body = submission(whole, "f.json", None, Some("application_1_0001")).unwrap();
        assert_eq!(body["queue"], "root.b");
        assert_eq!(body["application-id"], "application_1_0001");
        let err = submission("{", "f.json", None, None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("f.json: not JSON at line 1 column 1"),
            "{err}"
        );
    }

    /// `watch` against an RM whose demand has already FINISHED: every transition printed
    /// once, in order, and exit 0 without waiting.
    #[test]
    fn watch_prints_the_timeline_and_ends_with_the_demand() {
        let body = json!({"demand": {"id": "~alice/3", "state": "FINISHED", "reason": "ok",
            "timeline": [{"state": "NEW", "reason": "submitted", "detail": "", "at": 0},
                         {"state": "ACCEPTED", "reason": "unconstrained", "detail": "", "at": 0},
                         {"state": "FINISHED", "reason": "ok", "detail": "2 of 2 completed", "at": 1000}]}})
        .to_string();
        let rm = crate::fake_rm::FakeRm::start(&[(
            "GET /ws/v1/cluster/demands/~alice/3",
            (200, body.as_str()),
        )]);
        #[derive(clap::Parser)]
        struct Cli {
            #[command(flatten)]
            demand: DemandArgs,
        }
        let cli = <Cli as clap::Parser>::try_parse_from([
            "weft",
            "watch",
            "~alice/3",
            "--interval",
            "10ms",
            "--rm",
            &rm.url,
        ])
        .expect("parses");
        let mut out = Vec::new();
        let outcome = cli.demand.run(&mut out).expect("answers");
        let text = String::from_utf8(out).expect("utf-8");
        assert_eq!(outcome, Outcome::Success, "{text}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].ends_with(" NEW submitted"), "{text}");
        assert!(
            lines[2].ends_with(" FINISHED ok (2 of 2 completed)"),
            "{text}"
        );
        assert_eq!(
            rm.requests.lock().expect("lock").len(),
            1,
            "one look sufficed"
        );
    }

    #[test]
    fn keys_become_paths_and_non_keys_are_refused() {
        assert_eq!(
            demand_path("~alice/12").unwrap(),
            "/ws/v1/cluster/demands/~alice/12"
        );
        assert_eq!(
            demand_path("application_1_0001/7").unwrap(),
            "/ws/v1/cluster/demands/application_1_0001/7"
        );
        for bad in ["12", "~alice/", "/3", "~alice/x"] {
            assert!(demand_path(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_status_report_shows_the_timeline_with_details() {
        let d = json!({"id": "~alice/1", "demand-id": 1, "user": "alice", "queue": "root.default",
            "state": "FAILED", "reason": "unpackable", "accepted-time": 0,
            "containers": {"requested": 5, "held": 2, "allocated": 0, "running": 0, "completed": 0},
            "missed-opportunities": 0,
            "timeline": [{"state": "NEW", "reason": "submitted", "detail": "", "at": 0},
                         {"state": "FAILED", "reason": "unpackable", "detail": "gang of 5 × 5120 MB cannot be packed on 4 nodes: at most 4 members", "at": 0}]});
        let text = report(&d);
        assert!(text.contains("\tState : FAILED\n"), "{text}");
        assert!(text.contains("\tApplication-Id : N/A\n"), "{text}");
        assert!(text.contains("\tReservation-Id : N/A\n"), "{text}");
        let planned =
            json!({"reservation-id": "reservation_1_0001", "planned-start": 1_700_000_600_000_u64});
        let text_planned = report(&planned);
        assert!(
            text_planned.contains("\tReservation-Id : reservation_1_0001\n"),
            "{text_planned}"
        );
        assert!(
            !text_planned.contains("\tPlanned-Start : N/A\n"),
            "{text_planned}"
        );
        assert!(
            text_planned.contains("\tPlanned-End : N/A\n"),
            "{text_planned}"
        );
        assert!(
            text.contains(
                "\tContainers : requested 5, held 2, allocated 0, running 0, completed 0\n"
            ),
            "{text}"
        );
        assert!(
            text.contains("N/A FAILED unpackable (gang of 5 × 5120 MB"),
            "{text}"
        );
        let listed = table(&[&d]);
        assert!(
            listed.starts_with("Total number of demands:1\n"),
            "{listed}"
        );
        assert!(listed.contains("0/5"), "{listed}");
    }
}
