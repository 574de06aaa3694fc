//! `weft applicationattempt` and `weft container`: attempts of an application and the
//! containers of an attempt, from `/apps/{id}/appattempts[/{attempt}[/containers[/{cid}]]]`.

use std::io::Write;

use clap::{ArgGroup, Args};
use serde_json::{json, Value};

use crate::fmt::{self, int, list, text, text_or};
use crate::rest::{Connection, Rm};
use crate::{ClientError, Outcome, Verb};

/// Lists the attempts of an application or reports on one attempt.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["list", "status"])))]
pub struct AttemptArgs {
    /// List the attempts of this application.
    #[arg(long, value_name = "ApplicationId")]
    pub list: Option<String>,
    /// Print the report of this attempt.
    #[arg(long, value_name = "ApplicationAttemptId")]
    pub status: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// Lists the containers of an attempt or reports on one container.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["list", "status"])))]
pub struct ContainerArgs {
    /// List the containers of this application attempt.
    #[arg(long, value_name = "ApplicationAttemptId")]
    pub list: Option<String>,
    /// Print the report of this container.
    #[arg(long, value_name = "ContainerId")]
    pub status: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

/// `appattempt_<ts>_<seq>_<n>` → `application_<ts>_<seq>`.
pub(crate) fn app_of_attempt(attempt: &str) -> Result<String, ClientError> {
    let parts: Vec<&str> = attempt.split('_').collect();
    match parts.as_slice() {
        ["appattempt", ts, seq, n] if all_digits(&[ts, seq, n]) => {
            Ok(format!("application_{ts}_{seq}"))
        }
        _ => Err(ClientError::Usage(format!(
            "Invalid ApplicationAttemptId: {attempt}"
        ))),
    }
}

/// `container_[e<epoch>_]<ts>_<seq>_<attempt>_<n>` → `appattempt_<ts>_<seq>_<attempt, 6 digits>`.
pub(crate) fn attempt_of_container(container: &str) -> Result<String, ClientError> {
    let parts: Vec<&str> = container.split('_').collect();
    let rest = match parts.as_slice() {
        ["container", epoch, rest @ ..] if epoch.starts_with('e') && rest.len() == 4 => rest,
        ["container", rest @ ..] if rest.len() == 4 => rest,
        _ => &[][..],
    };
    match rest {
        [ts, seq, attempt, n] if all_digits(&[ts, seq, attempt, n]) => {
            let attempt: u64 = attempt.parse().unwrap_or(0);
            Ok(format!("appattempt_{ts}_{seq}_{attempt:06}"))
        }
        _ => Err(ClientError::Usage(format!(
            "Invalid ContainerId: {container}"
        ))),
    }
}

fn all_digits(parts: &[&&str]) -> bool {
    parts
        .iter()
        .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

impl Verb for AttemptArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        if let Some(app) = &self.list {
            let attempts = attempts(&rm, app)?;
            if self.conn.json {
                let v = json!({"appAttempts": {"appAttempt": attempts}});
                write!(out, "{}", fmt::json_text(&v))?;
            } else {
                write!(out, "{}", attempt_table(&attempts))?;
            }
            return Ok(Outcome::Success);
        }
        let Some(id) = &self.status else {
            return Err(ClientError::Usage("give -list or -status".into()));
        };
        match attempt(&rm, id)? {
            Some(a) if self.conn.json => {
                write!(out, "{}", fmt::json_text(&json!({"appAttempt": a})))?
            }
            Some(a) => write!(out, "{}", attempt_report(&a))?,
            None => {
                eprintln!(
                    "Application Attempt with id '{id}' doesn't exist in RM or Timeline Server."
                );
                return Ok(Outcome::Failed);
            }
        }
        Ok(Outcome::Success)
    }
}

/// The attempts of `app`, each completed from the per-attempt resource when the list lacks
/// the attempt's state (Hadoop's list DAO has no state before 3.x).
fn attempts(rm: &Rm, app: &str) -> Result<Vec<Value>, ClientError> {
    let v = rm.get(&format!("/ws/v1/cluster/apps/{app}/appattempts"), &[])?;
    let mut out = Vec::new();
    for a in list(&v, "appAttempts", "appAttempt") {
        let mut a = a.clone();
        let id = text(&a, "appAttemptId");
        if text(&a, "appAttemptState").is_empty() && !id.is_empty() {
            let detail = rm.get(&format!("/ws/v1/cluster/apps/{app}/appattempts/{id}"), &[]);
            if let (Ok(d), Some(map)) = (detail, a.as_object_mut()) {
                let d = d.get("appAttempt").cloned().unwrap_or(d);
                for key in ["appAttemptState", "trackingUrl", "host", "rpcPort"] {
                    if let Some(x) = d.get(key) {
                        map.entry(key).or_insert_with(|| x.clone());
                    }
                }
            }
        }
        out.push(a);
    }
    Ok(out)
}

/// One attempt in the per-attempt shape (`appAttemptState`, `amContainerId`, `host`, ...);
/// from the list when the RM has no per-attempt resource. `None` when unknown.
fn attempt(rm: &Rm, id: &str) -> Result<Option<Value>, ClientError> {
    let app = app_of_attempt(id)?;
    match rm.get(&format!("/ws/v1/cluster/apps/{app}/appattempts/{id}"), &[]) {
        Ok(v) => return Ok(Some(v.get("appAttempt").cloned().unwrap_or(v))),
        Err(e) if e.status() == Some(404) || e.status() == Some(405) => {}
        Err(e) => return Err(e),
    }
    let all = match attempts(rm, &app) {
        Ok(all) => all,
        Err(e) if e.status() == Some(404) => {
            eprintln!("{e}");
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    Ok(all.into_iter().find(|a| text(a, "appAttemptId") == id))
}

/// The `applicationattempt -list` output.
pub(crate) fn attempt_table(attempts: &[Value]) -> String {
    let row = |c: [&str; 4]| format!("{:>30}\t{:>20}\t{:>35}\t{:>35}\n", c[0], c[1], c[2], c[3]);
    let mut s = format!("Total number of application attempts :{}\n", attempts.len());
    s += &row([
        "ApplicationAttempt-Id",
        "State",
        "AM-Container-Id",
        "Tracking-URL",
    ]);
    for a in attempts {
        s += &row([
            &text(a, "appAttemptId"),
            &text_or(a, "appAttemptState", "N/A"),
            &am_container(a),
            &text_or(a, "trackingUrl", "N/A"),
        ]);
    }
    s
}

/// The AM container of an attempt in either DAO's field name.
fn am_container(a: &Value) -> String {
    let c = text(a, "amContainerId");
    if c.is_empty() {
        text_or(a, "containerId", "N/A")
    } else {
        c
    }
}

/// The `applicationattempt -status` report.
pub(crate) fn attempt_report(a: &Value) -> String {
    let node = text(a, "nodeId");
    let host = text(a, "host");
    let host = if host.is_empty() {
        node.rsplit_once(':')
            .map_or(node.as_str(), |(h, _)| h)
            .to_string()
    } else {
        host
    };
    let diagnostics = {
        let d = text(a, "diagnosticsInfo");
        if d.is_empty() {
            text(a, "diagnostics")
        } else {
            d
        }
    };
    format!(
        "Application Attempt Report : \n\tApplicationAttempt-Id : {}\n\tState : {}\n\tAMContainer : {}\n\tTracking-URL : {}\n\tRPC Port : {}\n\tAM Host : {}\n\tDiagnostics : {}\n",
        text(a, "appAttemptId"),
        text_or(a, "appAttemptState", "N/A"),
        am_container(a),
        text_or(a, "trackingUrl", "N/A"),
        text_or(a, "rpcPort", "-1"),
        if host.is_empty() { "N/A".to_string() } else { host },
        diagnostics
    )
}

impl Verb for ContainerArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        if let Some(attempt) = &self.list {
            let containers = containers(&rm, attempt)?;
            if self.conn.json {
                let v = json!({"containers": {"container": containers}});
                write!(out, "{}", fmt::json_text(&v))?;
            } else {
                write!(out, "{}", container_table(&containers))?;
            }
            return Ok(Outcome::Success);
        }
        let Some(id) = &self.status else {
            return Err(ClientError::Usage("give -list or -status".into()));
        };
        match container(&rm, id)? {
            Some(c) if self.conn.json => {
                write!(out, "{}", fmt::json_text(&json!({"container": c})))?
            }
            Some(c) => write!(out, "{}", container_report(&c))?,
            None => {
                eprintln!("Container with id '{id}' doesn't exist in RM or Timeline Server.");
                return Ok(Outcome::Failed);
            }
        }
        Ok(Outcome::Success)
    }
}

fn containers_path(attempt: &str) -> Result<String, ClientError> {
    let app = app_of_attempt(attempt)?;
    Ok(format!(
        "/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers"
    ))
}

fn containers(rm: &Rm, attempt: &str) -> Result<Vec<Value>, ClientError> {
    let v = rm.get(&containers_path(attempt)?, &[])?;
    Ok(list(&v, "containers", "container")
        .into_iter()
        .cloned()
        .collect())
}

fn container(rm: &Rm, id: &str) -> Result<Option<Value>, ClientError> {
    let path = containers_path(&attempt_of_container(id)?)?;
    match rm.get(&format!("{path}/{id}"), &[]) {
        Ok(v) => Ok(Some(v.get("container").cloned().unwrap_or(v))),
        Err(e) if e.status() == Some(404) => {
            eprintln!("{e}");
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// A node's HTTP address as YARN's container reports print it (with the scheme).
fn http_address(c: &Value) -> String {
    let a = text(c, "nodeHttpAddress");
    if a.is_empty() || a.contains("://") {
        a
    } else {
        format!("http://{a}")
    }
}

fn container_host(c: &Value) -> String {
    let h = text(c, "assignedNodeId");
    if h.is_empty() {
        text(c, "nodeId")
    } else {
        h
    }
}

/// The `container -list` output.
pub(crate) fn container_table(containers: &[Value]) -> String {
    let row = |c: [&str; 7]| {
        format!(
            "{:>30}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>20}\t{:>35}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6]
        )
    };
    let mut s = format!("Total number of containers :{}\n", containers.len());
    s += &row([
        "Container-Id",
        "Start Time",
        "Finish Time",
        "State",
        "Host",
        "Node Http Address",
        "LOG-URL",
    ]);
    for c in containers {
        s += &row([
            &text(c, "containerId"),
            &fmt::times_format(int(c, "startedTime")),
            &fmt::times_format(int(c, "finishedTime")),
            &text(c, "containerState"),
            &container_host(c),
            &http_address(c),
            &text_or(c, "logUrl", "N/A"),
        ]);
    }
    s
}

/// The `container -status` report.
pub(crate) fn container_report(c: &Value) -> String {
    format!(
        "Container Report : \n\tContainer-Id : {}\n\tStart-Time : {}\n\tFinish-Time : {}\n\tState : {}\n\tLOG-URL : {}\n\tHost : {}\n\tNodeHttpAddress : {}\n\tDiagnostics : {}\n",
        text(c, "containerId"),
        int(c, "startedTime"),
        int(c, "finishedTime"),
        text(c, "containerState"),
        text_or(c, "logUrl", "N/A"),
        container_host(c),
        http_address(c),
        text_or(c, "diagnosticsInfo", "null"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_map_to_their_parents() {
        assert_eq!(
            app_of_attempt("appattempt_1700000000000_0007_000001").expect("ok"),
            "application_1700000000000_0007"
        );
        assert!(app_of_attempt("application_1700000000000_0007").is_err());
        assert_eq!(
            attempt_of_container("container_1700000000000_0007_01_000002").expect("ok"),
            "appattempt_1700000000000_0007_000001"
        );
        assert_eq!(
            attempt_of_container("container_e17_1700000000000_0007_02_000001").expect("ok"),
            "appattempt_1700000000000_0007_000002"
        );
        assert!(attempt_of_container("container_x_1_2").is_err());
    }

    #[test]
    fn attempt_list_and_report() {
        let a = json!({
            "id": 1, "appAttemptId": "appattempt_1700000000000_0007_000001",
            "containerId": "container_1700000000000_0007_01_000001", "nodeId": "nm-1:45454",
            "appAttemptState": "RUNNING"
        });
        let t = attempt_table(std::slice::from_ref(&a));
        assert_eq!(
            t,
            "Total number of application attempts :1\n         ApplicationAttempt-Id\t               State\t                    AM-Container-Id\t                       Tracking-URL\nappattempt_1700000000000_0007_000001\t             RUNNING\tcontainer_1700000000000_0007_01_000001\t                                N/A\n"
        );
        let r = attempt_report(&a);
        assert_eq!(
            r,
            "Application Attempt Report : \n\tApplicationAttempt-Id : appattempt_1700000000000_0007_000001\n\tState : RUNNING\n\tAMContainer : container_1700000000000_0007_01_000001\n\tTracking-URL : N/A\n\tRPC Port : -1\n\tAM Host : nm-1\n\tDiagnostics : \n"
        );
    }

    #[test]
    fn container_list_and_report() {
        let c = json!({
            "containerId": "container_1700000000000_0007_01_000002",
            "startedTime": 1700000000123u64, "finishedTime": 0, "containerState": "RUNNING",
            "assignedNodeId": "nm-1:45454", "nodeHttpAddress": "nm-1:8042",
            "logUrl": "http://nm-1:8042/node/containerlogs/container_1700000000000_0007_01_000002/alice"
        });
        let t = container_table(std::slice::from_ref(&c));
        let second = t.lines().nth(2).expect("row");
        let cols: Vec<&str> = second.split('\t').map(str::trim).collect();
        assert_eq!(
            cols,
            [
                "container_1700000000000_0007_01_000002",
                "Tue Nov 14 22:13:20 +0000 2023",
                "N/A",
                "RUNNING",
                "nm-1:45454",
                "http://nm-1:8042",
                "http://nm-1:8042/node/containerlogs/container_1700000000000_0007_01_000002/alice"
            ]
        );
        assert!(t.starts_with(
            "Total number of containers :1\n                  Container-Id\t          Start Time\t"
        ));
        let r = container_report(&c);
        assert!(r.starts_with("Container Report : \n\tContainer-Id : container_1700000000000_0007_01_000002\n\tStart-Time : 1700000000123\n\tFinish-Time : 0\n\tState : RUNNING\n"), "{r}");
        assert!(
            r.ends_with(
                "\tHost : nm-1:45454\n\tNodeHttpAddress : http://nm-1:8042\n\tDiagnostics : null\n"
            ),
            "{r}"
        );
    }
}
