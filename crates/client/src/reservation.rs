//! `weft reservation new | submit FILE | update FILE | delete ID | list [--queue Q]`: Hadoop's
//! reservation REST API from the command line (Hadoop's `yarn` has no such verb). Each prints
//! what the RM answers; a refusal exits 255 with the RM's message.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use serde_json::{json, Value};

use crate::fmt;
use crate::rest::Connection;
use crate::{ClientError, Outcome, Verb};

const BASE: &str = "/ws/v1/cluster/reservation";

/// Reservations (Hadoop's ReservationSystem) of reservable queues.
#[derive(Args, Debug)]
pub struct ReservationArgs {
    #[command(subcommand)]
    #[allow(missing_docs)]
    pub command: ReservationCommand,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// What to do.
#[derive(Subcommand, Debug)]
pub enum ReservationCommand {
    /// Ask the RM for a new reservation id.
    New,
    /// Submit a reservation: FILE holds `{"queue", "reservation-id", "reservation-definition"}`
    /// as Hadoop's REST takes it.
    Submit {
        /// The JSON request.
        file: PathBuf,
    },
    /// Replace a reservation's definition: FILE holds `{"reservation-id",
    /// "reservation-definition"}`.
    Update {
        /// The JSON request.
        file: PathBuf,
    },
    /// Delete a reservation.
    Delete {
        /// The reservation id.
        id: String,
    },
    /// List a plan's reservations (overlapping the window, or the one id).
    List {
        /// The reservable queue (Hadoop's default: `default`).
        #[arg(long)]
        queue: Option<String>,
        /// Only this reservation (the window is then ignored).
        #[arg(long = "reservation-id")]
        reservation_id: Option<String>,
        /// Reservations ending after this time (ms).
        #[arg(long = "start-time")]
        start_time: Option<i64>,
        /// Reservations starting at or before this time (ms).
        #[arg(long = "end-time")]
        end_time: Option<i64>,
        /// Include each reservation's resources over time.
        #[arg(long)]
        allocations: bool,
    },
}

fn read_request(file: &Path) -> Result<Value, ClientError> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| ClientError::Usage(format!("cannot read {}: {e}", file.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| ClientError::Usage(format!("{}: not JSON: {e}", file.display())))
}

impl Verb for ReservationArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        match &self.command {
            ReservationCommand::New => {
                let answer = rm.post(&format!("{BASE}/new-reservation"), &[], None)?;
                if self.conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    let id = answer
                        .get("reservation-id")
                        .and_then(Value::as_str)
                        .ok_or_else(|| ClientError::BadAnswer {
                            url: rm.url(&format!("{BASE}/new-reservation")),
                            cause: format!("no reservation-id in {answer}"),
                        })?;
                    writeln!(out, "{id}")?;
                }
            }
            ReservationCommand::Submit { file } => {
                let request = read_request(file)?;
                rm.post(&format!("{BASE}/submit"), &[], Some(&request))?;
                let id = request
                    .get("reservation-id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                writeln!(out, "Reservation {id} accepted")?;
            }
            ReservationCommand::Update { file } => {
                let request = read_request(file)?;
                rm.post(&format!("{BASE}/update"), &[], Some(&request))?;
                let id = request
                    .get("reservation-id")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                writeln!(out, "Reservation {id} updated")?;
            }
            ReservationCommand::Delete { id } => {
                rm.post(
                    &format!("{BASE}/delete"),
                    &[],
                    Some(&json!({"reservation-id": id})),
                )?;
                writeln!(out, "Reservation {id} deleted")?;
            }
            ReservationCommand::List {
                queue,
                reservation_id,
                start_time,
                end_time,
                allocations,
            } => {
                let mut query: Vec<(&str, String)> = Vec::new();
                if let Some(q) = queue {
                    query.push(("queue", q.clone()));
                }
                if let Some(id) = reservation_id {
                    query.push(("reservation-id", id.clone()));
                }
                if let Some(t) = start_time {
                    query.push(("start-time", t.to_string()));
                }
                if let Some(t) = end_time {
                    query.push(("end-time", t.to_string()));
                }
                if *allocations {
                    query.push(("include-resource-allocations", "true".into()));
                }
                let answer = rm.get(&format!("{BASE}/list"), &query)?;
                if self.conn.json {
                    write!(out, "{}", fmt::json_text(&answer))?;
                } else {
                    write_table(out, &answer)?;
                }
            }
        }
        Ok(Outcome::Success)
    }
}

/// One line per reservation: id, user, state, start, end, name.
fn write_table(out: &mut dyn Write, answer: &Value) -> std::io::Result<()> {
    let listed = fmt::items(answer.get("reservations"));
    writeln!(out, "Total number of reservations:{}", listed.len())?;
    writeln!(
        out,
        "{:>32}\t{:>12}\t{:>8}\t{:>14}\t{:>14}\tName",
        "Reservation-Id", "User", "State", "Arrival", "Deadline"
    )?;
    for r in listed {
        let d = r.get("reservation-definition").unwrap_or(&Value::Null);
        let show = |v: Option<&Value>| match v {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        writeln!(
            out,
            "{:>32}\t{:>12}\t{:>8}\t{:>14}\t{:>14}\t{}",
            show(r.get("reservation-id")),
            show(r.get("user")),
            show(r.get("weft-state")),
            show(d.get("arrival")),
            show(d.get("deadline")),
            show(d.get("reservation-name")),
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake_rm::FakeRm;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: ReservationArgs,
    }

    fn run(url: &str, args: &[&str]) -> (Result<Outcome, ClientError>, String) {
        let mut all = vec!["weft"];
        all.extend_from_slice(args);
        all.extend(["--rm", url]);
        let cli = Cli::try_parse_from(all).expect("parses");
        let mut out = Vec::new();
        let r = cli.args.run(&mut out);
        (r, String::from_utf8(out).expect("utf-8"))
    }

    #[test]
    fn new_prints_the_id_and_submit_posts_the_file() {
        let rm = FakeRm::start(&[
            (
                "POST /ws/v1/cluster/reservation/new-reservation",
                (200, r#"{"reservation-id":"reservation_1_0001"}"#),
            ),
            ("POST /ws/v1/cluster/reservation/submit", (202, "")),
        ]);
        let (r, out) = run(&rm.url, &["new"]);
        assert!(matches!(r, Ok(Outcome::Success)));
        assert_eq!(out, "reservation_1_0001\n");
        let dir = tempfile::tempdir().expect("temp dir");
        let file = dir.path().join("r.json");
        std::fs::write(
            &file,
            r#"{"queue":"prod","reservation-id":"reservation_1_0001"}"#,
        )
        .expect("written");
        let (r, out) = run(&rm.url, &["submit", file.to_str().expect("utf-8")]);
        assert!(matches!(r, Ok(Outcome::Success)), "{r:?}");
        assert_eq!(out, "Reservation reservation_1_0001 accepted\n");
        assert!(rm
            .requests()
            .iter()
            .any(|l| l.starts_with("POST /ws/v1/cluster/reservation/submit")));
    }

    #[test]
    fn a_refusal_carries_the_servers_message_and_a_bad_file_names_itself() {
        let rm = FakeRm::start(&[(
            "POST /ws/v1/cluster/reservation/delete",
            (
                400,
                r#"{"RemoteException":{"exception":"BadRequestException","message":"The specified reservation with ID: reservation_1_0009 is unknown. Please try again with a valid reservation."}}"#,
            ),
        )]);
        let (r, _) = run(&rm.url, &["delete", "reservation_1_0009"]);
        let err = r.expect_err("refused").to_string();
        assert!(err.contains("reservation_1_0009 is unknown"), "{err}");
        let (r, _) = run(&rm.url, &["update", "/nonexistent/r.json"]);
        let err = r.expect_err("no file").to_string();
        assert!(err.contains("/nonexistent/r.json"), "{err}");
    }

    #[test]
    fn list_prints_one_line_per_reservation() {
        let rm = FakeRm::start(&[(
            "GET /ws/v1/cluster/reservation/list",
            (
                200,
                r#"{"reservations":[{"reservation-id":"reservation_1_0001","user":"alice","weft-state":"PENDING","reservation-definition":{"arrival":1000,"deadline":9000,"reservation-name":"etl"}}]}"#,
            ),
        )]);
        let (r, out) = run(&rm.url, &["list", "--queue", "prod"]);
        assert!(matches!(r, Ok(Outcome::Success)), "{r:?}");
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "Total number of reservations:1");
        assert!(lines[2].contains("reservation_1_0001") && lines[2].contains("alice"));
        assert!(
            lines[2].contains("PENDING") && lines[2].ends_with("etl"),
            "{}",
            lines[2]
        );
        assert!(
            rm.requests()[0].contains("queue=prod"),
            "{:?}",
            rm.requests()
        );
    }
}
