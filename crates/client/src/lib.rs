//! The user's side of Weft: `weft application`, `node`, `queue`, `logs`, `top` and friends.
//!
//! Every verb talks only to the ResourceManager's REST API (and, for `logs`, to the
//! NodeManagers' web services), so the same commands work against Weft and against a real YARN
//! ResourceManager. Tables follow `yarn`'s printf layouts (shared/spec/yarn-cli.md); `--json`
//! prints the RM's JSON instead, for scripts.
//!
//! | verb | REST calls |
//! |---|---|
//! | `application -list/-status/-kill/-movetoqueue/-changeQueue/-updatePriority` | `/apps`, `/apps/{id}`, `PUT /apps/{id}/state`, `/queue`, `/priority` |
//! | `applicationattempt -list/-status` | `/apps/{id}/appattempts[/{attempt}]` |
//! | `container -list/-status` | `/apps/{id}/appattempts/{attempt}/containers[/{cid}]` |
//! | `node -list [-all/-states/-showDetails]`, `-status` | `/nodes`, `/nodes/{id}` |
//! | `queue -status`, `queue -list all\|PARENT` | `/scheduler` (fair, capacity or fifo shape) |
//! | `rmadmin -refreshQueues`, `-getGroups [user]` | `PUT /ws/v1/cluster/admin/refresh-queues`, `GET /ws/v1/cluster/admin/groups` (Weft only); `-refreshNodes` explains that there are no host lists |
//! | `logs -applicationId` | `/nodes`, then each NM's `/ws/v1/node/apps/{id}`, `/containers/{cid}/logs`, `/containerlogs/{cid}/{file}` |
//! | `top` | `/info`, `/metrics`, `/apps?states=RUNNING,ACCEPTED` |
//! | `reservation new\|submit FILE\|update FILE\|delete ID\|list` (Weft only: `yarn` has none) | `POST /reservation/new-reservation\|submit\|update\|delete`, `GET /reservation/list` |
//! | `demand submit FILE\|plan FILE\|list\|status KEY\|watch KEY\|kill KEY` (Weft only) | `POST /demands`, `POST /demands/plan`, `GET /demands`, `GET /demands/{scope}/{id}`, `PUT …/state` |
//!
//! The RM is found by [`resolve_rm`]: `--rm`, then `$WEFT_RM`, then yarn-site.xml in
//! `$HADOOP_CONF_DIR`, then [`DEFAULT_RM`]. Exit status: 0, or 255 (YARN's -1) with the reason
//! on stderr.

mod address;
mod application;
mod attempt;
mod cluster;
mod demand;
mod error;
mod fmt;
mod logs;
mod node;
mod queue;
mod reservation;
mod rest;
mod rmadmin;
mod top;

use std::io::Write;
use std::process::ExitCode;

pub use address::{normalize_url, resolve_rm, rm_from_site_xml, DEFAULT_RM};
pub use application::ApplicationArgs;
pub use attempt::{AttemptArgs, ContainerArgs};
pub use cluster::ClusterArgs;
pub use demand::{DemandArgs, DemandCommand};
pub use error::ClientError;
pub use logs::LogsArgs;
pub use node::NodeArgs;
pub use queue::QueueArgs;
pub use reservation::{ReservationArgs, ReservationCommand};
pub use rest::{login_user, Connection, Rm};
pub use rmadmin::RmAdminArgs;
pub use top::TopArgs;

/// How a verb ended when it did not fail outright: YARN's tools return -1 (255 in the shell)
/// after printing their own message for "not found"-style outcomes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Exit 0.
    Success,
    /// The verb already explained the problem; exit 255.
    Failed,
}

/// A CLI verb: runs against the RM and writes its report to `out`.
pub trait Verb {
    /// Runs the verb. Messages about partial failures go to stderr; `out` gets the report.
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError>;
}

/// Runs a verb with stdout as its output and turns the result into the process exit status
/// (0 on success, 255 like YARN's -1 otherwise, with the error on stderr).
pub fn main(verb: &dyn Verb) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let result = verb.run(&mut out);
    let _ = out.flush();
    match result {
        Ok(Outcome::Success) => ExitCode::SUCCESS,
        Ok(Outcome::Failed) => ExitCode::from(255),
        // The reader went away (`weft logs ... | head`): nothing left to tell anyone.
        Err(ClientError::Io(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(255)
        }
    }
}

#[cfg(test)]
mod fake_rm;

#[cfg(test)]
mod tests {
    //! Verbs end to end against canned answers shaped like a real YARN RM's, and the flags.
    use super::*;
    use crate::fake_rm::FakeRm;
    use clap::Parser;

    #[derive(Parser)]
    enum Cli {
        Application(ApplicationArgs),
        Logs(LogsArgs),
        Queue(QueueArgs),
        Rmadmin(RmAdminArgs),
        Node(NodeArgs),
        Top(TopArgs),
    }

    /// Parses `args` (double-dash form, as `yarn_style_args` hands them on) with `--rm url`.
    fn run(url: &str, args: &[&str]) -> (Result<Outcome, ClientError>, String) {
        let mut all = vec!["weft"];
        all.extend_from_slice(args);
        all.extend(["--rm", url]);
        let cli = Cli::try_parse_from(all).expect("parses");
        let verb: &dyn Verb = match &cli {
            Cli::Application(a) => a,
            Cli::Logs(a) => a,
            Cli::Queue(a) => a,
            Cli::Rmadmin(a) => a,
            Cli::Node(a) => a,
            Cli::Top(a) => a,
        };
        let mut out = Vec::new();
        let r = verb.run(&mut out);
        (r, String::from_utf8(out).expect("utf-8"))
    }

    #[test]
    fn flags_parse_as_yarn_spells_them() {
        let parse = |args: &[&str]| Cli::try_parse_from([&["weft"], args].concat());
        match parse(&["application", "--list", "--appStates", "RUNNING,FINISHED"]) {
            Ok(Cli::Application(a)) => assert_eq!(a.app_states, ["RUNNING", "FINISHED"]),
            _ => panic!("application -list"),
        }
        match parse(&["application", "--kill", "a", "b", "--json"]) {
            Ok(Cli::Application(a)) => assert!(a.kill == ["a", "b"] && a.conn.json),
            _ => panic!("application -kill"),
        }
        match parse(&[
            "logs",
            "--applicationId",
            "a",
            "--size",
            "-10",
            "--log_files",
            "stdout,stderr",
        ]) {
            Ok(Cli::Logs(l)) => {
                assert_eq!((l.size, l.log_files.len()), (Some(-10), 2));
            }
            _ => panic!("logs"),
        }
        match parse(&["top", "--once"]) {
            Ok(Cli::Top(t)) => assert_eq!(t.delay, 3),
            _ => panic!("top"),
        }
        assert!(
            parse(&["application", "--list", "--status", "a"]).is_err(),
            "one action"
        );
        assert!(
            parse(&["application", "--changeQueue", "q"]).is_err(),
            "needs -appId"
        );
        assert!(parse(&["rmadmin"]).is_err(), "needs -refreshQueues");
        assert!(parse(&["logs"]).is_err(), "needs -applicationId");
        assert!(parse(&["queue"]).is_err(), "needs -status");
    }

    #[test]
    fn an_empty_yarn_app_list_is_null() {
        let rm = FakeRm::start(&[("GET /ws/v1/cluster/apps", (200, r#"{"apps":null}"#))]);
        let (r, out) = run(&rm.url, &["application", "--list"]);
        assert_eq!(r.expect("runs"), Outcome::Success);
        assert!(out.ends_with("):0\n                Application-Id\t    Application-Name\t    Application-Type\t      User\t     Queue\t             State\t       Final-State\t       Progress\t                       Tracking-URL\n"), "{out}");
        assert_eq!(
            rm.requests(),
            ["GET /ws/v1/cluster/apps?states=SUBMITTED%2CACCEPTED%2CRUNNING"]
        );
    }

    #[test]
    fn kill_waits_for_the_killed_state() {
        let rm = FakeRm::start(&[
            (
                "GET /ws/v1/cluster/apps/application_1_0001",
                (
                    200,
                    r#"{"app":{"id":"application_1_0001","state":"RUNNING"}}"#,
                ),
            ),
            (
                "PUT /ws/v1/cluster/apps/application_1_0001/state",
                (202, r#"{"state":"RUNNING"}"#),
            ),
            (
                "GET /ws/v1/cluster/apps/application_1_0001/state",
                (200, r#"{"state":"KILLED"}"#),
            ),
        ]);
        let (r, out) = run(&rm.url, &["application", "--kill", "application_1_0001"]);
        assert_eq!(r.expect("runs"), Outcome::Success);
        assert_eq!(out, "Killing application application_1_0001\n");
        let reqs = rm.requests();
        assert!(
            reqs[1].starts_with("PUT /ws/v1/cluster/apps/application_1_0001/state"),
            "{reqs:?}"
        );
        assert_eq!(
            reqs.last().map(String::as_str),
            Some("GET /ws/v1/cluster/apps/application_1_0001/state")
        );
    }

    #[test]
    fn update_priority_reports_a_capped_value() {
        let rm = FakeRm::start(&[(
            "PUT /ws/v1/cluster/apps/application_1_0001/priority",
            (200, r#"{"priority":10}"#),
        )]);
        let args = [
            "application",
            "--updatePriority",
            "10",
            "--appId",
            "application_1_0001",
        ];
        let (r, out) = run(&rm.url, &args);
        assert_eq!(r.expect("runs"), Outcome::Success);
        assert_eq!(out, "Updating priority of an application application_1_0001\nSuccessfully updated the application application_1_0001 with priority '10'\n");
        let (_, out) = run(
            &rm.url,
            &[
                "application",
                "--updatePriority",
                "99",
                "--appId",
                "application_1_0001",
            ],
        );
        assert!(out.ends_with("to cluster max priority OR keeping old priority as application is in final states\n"), "{out}");
    }

    #[test]
    fn refresh_queues_on_an_rm_without_the_endpoint_fails() {
        // A real YARN RM: Jersey's HTML 404 for a path it does not serve.
        let rm = FakeRm::start(&[]);
        let (r, out) = run(&rm.url, &["rmadmin", "--refreshQueues"]);
        assert_eq!(r.expect("runs"), Outcome::Failed);
        assert_eq!(out, "");
        let ok = FakeRm::start(&[("PUT /ws/v1/cluster/admin/refresh-queues", (200, "{}"))]);
        let (r, out) = run(&ok.url, &["rmadmin", "--refreshQueues"]);
        assert_eq!((r.expect("runs"), out.as_str()), (Outcome::Success, ""));
    }

    #[test]
    fn logs_from_an_nm_with_other_json_wrappings() {
        let rm = FakeRm::start(&[
            (
                "GET /ws/v1/cluster/apps/application_1_0001",
                (
                    200,
                    r#"{"app":{"id":"application_1_0001","state":"FINISHED"}}"#,
                ),
            ),
            (
                "GET /ws/v1/cluster/nodes",
                (
                    200,
                    r#"{"nodes":{"node":{"id":"nm-1:45454","state":"RUNNING","nodeHTTPAddress":"{url}"}}}"#,
                ),
            ),
            (
                "GET /ws/v1/node/apps/application_1_0001",
                (
                    200,
                    r#"{"app":{"containerids":"container_1_0001_01_000002"}}"#,
                ),
            ),
            (
                "GET /ws/v1/node/containers/container_1_0001_01_000002/logs",
                (
                    200,
                    r#"{"containerLogsInfo":{"containerLogInfo":{"fileName":"stdout","fileSize":"3","lastModifiedTime":"then"},"logAggregationType":"LOCAL"}}"#,
                ),
            ),
            (
                "GET /ws/v1/node/containerlogs/container_1_0001_01_000002/stdout",
                (200, "hi\n"),
            ),
        ]);
        let (r, out) = run(
            &rm.url,
            &[
                "logs",
                "--applicationId",
                "application_1_0001",
                "--size",
                "-3",
            ],
        );
        assert_eq!(r.expect("runs"), Outcome::Success, "{out}");
        assert!(
            out.starts_with(
                "Container: container_1_0001_01_000002 on nm-1:45454\nLogAggregationType: LOCAL\n"
            ),
            "{out}"
        );
        assert!(
            out.contains("LogLength:3\nLogContents:\nhi\nEnd of LogType:stdout\n"),
            "{out}"
        );
        assert!(rm.requests().iter().any(
            |r| r == "GET /ws/v1/node/containerlogs/container_1_0001_01_000002/stdout?size=-3"
        ));
        let (r, _) = run(
            &rm.url,
            &[
                "logs",
                "--applicationId",
                "application_1_0001",
                "--containerId",
                "container_1_0001_01_000009",
            ],
        );
        assert_eq!(r.expect("runs"), Outcome::Failed, "no such container");
    }

    #[test]
    fn unknown_things_fail_with_yarns_exit() {
        let rm = FakeRm::start(&[
            (
                "GET /ws/v1/cluster/apps/application_1_0002",
                (
                    404,
                    r#"{"RemoteException":{"exception":"NotFoundException","message":"app with id: application_1_0002 not found","javaClassName":"x"}}"#,
                ),
            ),
            (
                "GET /ws/v1/cluster/nodes/nm-9:1",
                (
                    404,
                    r#"{"RemoteException":{"exception":"NotFoundException","message":"nodeId, nm-9:1, is not found","javaClassName":"x"}}"#,
                ),
            ),
            (
                "GET /ws/v1/cluster/scheduler",
                (
                    200,
                    r#"{"scheduler":{"schedulerInfo":{"type":"fifoScheduler","capacity":1.0,"usedCapacity":0.0}}}"#,
                ),
            ),
            (
                "GET /ws/v1/cluster/apps",
                (
                    400,
                    r#"{"RemoteException":{"exception":"BadRequestException","message":"Invalid application-state X","javaClassName":"x"}}"#,
                ),
            ),
        ]);
        let (r, _) = run(&rm.url, &["application", "--status", "application_1_0002"]);
        assert_eq!(r.expect("runs"), Outcome::Failed);
        let (r, _) = run(&rm.url, &["node", "--status", "nm-9:1"]);
        assert_eq!(r.expect("runs"), Outcome::Failed);
        let (r, _) = run(&rm.url, &["queue", "--status", "nosuch"]);
        assert_eq!(r.expect("runs"), Outcome::Failed);
        let (r, out) = run(&rm.url, &["queue", "--status", "default"]);
        assert_eq!(r.expect("runs"), Outcome::Success);
        assert!(out.contains("\tQueue Path : root.default\n"), "{out}");
        let (r, _) = run(&rm.url, &["application", "--list", "--appTags", "x"]);
        let e = r.expect_err("the RM refused");
        assert!(e.to_string().contains("Invalid application-state X"), "{e}");
    }
}
