//! `weft application` (alias `app`): list, status, kill and move, as `yarn application`.

use std::io::Write;
use std::time::Duration;

use clap::{ArgGroup, Args};
use serde_json::{json, Value};

use crate::fmt::{self, int, java_set, list, num, text, text_or};
use crate::rest::{Connection, Rm};
use crate::{ClientError, Outcome, Verb};

pub(crate) use weft_types::YARN_APP_STATES as APP_STATES;
/// What `-list` shows without `-appStates`.
const DEFAULT_STATES: [&str; 3] = ["SUBMITTED", "ACCEPTED", "RUNNING"];
/// The states an application never leaves.
pub(crate) const FINAL_STATES: [&str; 3] = ["FINISHED", "FAILED", "KILLED"];
/// How long `-kill` waits for the RM to report the application KILLED.
const KILL_WAIT: Duration = Duration::from_secs(60);

/// Lists, reports on, kills and moves applications.
#[derive(Args, Debug)]
#[command(group(ArgGroup::new("action").required(true).args(["list", "status", "kill", "movetoqueue", "change_queue", "update_priority"])))]
pub struct ApplicationArgs {
    /// List applications (by default those SUBMITTED, ACCEPTED or RUNNING).
    #[arg(long)]
    pub list: bool,
    /// With -list: comma list of states to show; ALL for every state.
    #[arg(long = "appStates", value_name = "States", value_delimiter = ',')]
    pub app_states: Vec<String>,
    /// With -list: comma list of application types to show.
    #[arg(long = "appTypes", value_name = "Types", value_delimiter = ',')]
    pub app_types: Vec<String>,
    /// With -list: comma list of application tags to show.
    #[arg(long = "appTags", value_name = "Tags", value_delimiter = ',')]
    pub app_tags: Vec<String>,
    /// Print the report of an application.
    #[arg(long, value_name = "ApplicationId")]
    pub status: Option<String>,
    /// Kill one or more applications.
    #[arg(long, value_name = "ApplicationId", num_args = 1..)]
    pub kill: Vec<String>,
    /// Move an application to the queue given by -queue (deprecated form of -changeQueue).
    #[arg(long, value_name = "ApplicationId", requires = "queue")]
    pub movetoqueue: Option<String>,
    /// With -movetoqueue: the target queue.
    #[arg(long, value_name = "Queue")]
    pub queue: Option<String>,
    /// Move the application given by -appId to this queue.
    #[arg(long = "changeQueue", value_name = "Queue", requires = "app_id")]
    pub change_queue: Option<String>,
    /// Set the priority of the application given by -appId.
    #[arg(
        long = "updatePriority",
        value_name = "Priority",
        requires = "app_id",
        allow_negative_numbers = true
    )]
    pub update_priority: Option<i64>,
    /// With -changeQueue or -updatePriority: the application.
    #[arg(long = "appId", value_name = "ApplicationId")]
    pub app_id: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub conn: Connection,
}

impl Verb for ApplicationArgs {
    fn run(&self, out: &mut dyn Write) -> Result<Outcome, ClientError> {
        let rm = self.conn.connect()?;
        let json = self.conn.json;
        if self.list {
            let filter = ListFilter::new(&self.app_states, &self.app_types, &self.app_tags)?;
            return list_apps(&rm, &filter, json, out);
        }
        if let Some(id) = &self.status {
            return status(&rm, id, json, out);
        }
        if !self.kill.is_empty() {
            return kill(&rm, &self.kill, json, out);
        }
        if let (Some(p), Some(id)) = (self.update_priority, &self.app_id) {
            return update_priority(&rm, id, p, json, out);
        }
        match (&self.movetoqueue, &self.queue, &self.change_queue, &self.app_id) {
            (Some(id), Some(q), _, _) | (_, _, Some(q), Some(id)) => move_app(&rm, id, q, json, out),
            _ => Err(ClientError::Usage(
                "give -movetoqueue <ApplicationId> -queue <Queue> or -changeQueue <Queue> -appId <ApplicationId>".into(),
            )),
        }
    }
}

/// What `-list` asks for, normalised as YARN does (upper-cased states and types).
#[derive(Debug, PartialEq)]
pub(crate) struct ListFilter {
    /// States in declaration order.
    pub(crate) states: Vec<String>,
    /// Every state asked for (ALL): no state filter in the query.
    pub(crate) all: bool,
    pub(crate) types: Vec<String>,
    pub(crate) tags: Vec<String>,
}

impl ListFilter {
    pub(crate) fn new(
        states: &[String],
        types: &[String],
        tags: &[String],
    ) -> Result<ListFilter, ClientError> {
        let asked: Vec<String> = states
            .iter()
            .map(|s| s.trim().to_uppercase())
            .filter(|s| !s.is_empty())
            .collect();
        if let Some(bad) = asked
            .iter()
            .find(|s| *s != "ALL" && !APP_STATES.contains(&s.as_str()))
        {
            return Err(ClientError::Usage(format!(
                "The application state {bad} is invalid.\nThe valid application state can be one of the following: ALL,{}",
                APP_STATES.join(",")
            )));
        }
        let all = asked.iter().any(|s| s == "ALL");
        let states = if all {
            APP_STATES.iter().map(|s| s.to_string()).collect()
        } else if asked.is_empty() {
            DEFAULT_STATES.iter().map(|s| s.to_string()).collect()
        } else {
            APP_STATES
                .iter()
                .filter(|s| asked.iter().any(|a| a == *s))
                .map(|s| s.to_string())
                .collect()
        };
        let uniq = |items: &[String], upper: bool| {
            let mut v: Vec<String> = Vec::new();
            for t in items.iter().map(|t| t.trim()).filter(|t| !t.is_empty()) {
                let t = if upper {
                    t.to_uppercase()
                } else {
                    t.to_string()
                };
                if !v.contains(&t) {
                    v.push(t);
                }
            }
            v
        };
        Ok(ListFilter {
            states,
            all,
            types: uniq(types, true),
            tags: uniq(tags, false),
        })
    }

    fn query(&self) -> Vec<(&'static str, String)> {
        let mut q = Vec::new();
        if !self.all {
            q.push(("states", self.states.join(",")));
        }
        if !self.types.is_empty() {
            q.push(("applicationTypes", self.types.join(",")));
        }
        if !self.tags.is_empty() {
            q.push(("applicationTags", self.tags.join(",")));
        }
        q
    }

    /// Filters again on this side: an RM may ignore a query parameter it does not know.
    pub(crate) fn matches(&self, app: &Value) -> bool {
        let state = text(app, "state").to_uppercase();
        let kind = text(app, "applicationType");
        let app_tags = text(app, "applicationTags");
        (self.all || self.states.contains(&state))
            && (self.types.is_empty() || self.types.iter().any(|t| t.eq_ignore_ascii_case(&kind)))
            && (self.tags.is_empty()
                || app_tags
                    .split(',')
                    .any(|a| self.tags.iter().any(|t| t.eq_ignore_ascii_case(a.trim()))))
    }
}

fn list_apps(
    rm: &Rm,
    filter: &ListFilter,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome, ClientError> {
    let answer = rm.get("/ws/v1/cluster/apps", &filter.query())?;
    let mut apps: Vec<Value> = list(&answer, "apps", "app")
        .into_iter()
        .filter(|a| filter.matches(a))
        .cloned()
        .collect();
    apps.sort_by_key(|a| text(a, "id"));
    if json {
        write!(out, "{}", fmt::json_text(&json!({"apps": {"app": apps}})))?;
    } else {
        write!(out, "{}", app_table(filter, &apps))?;
    }
    Ok(Outcome::Success)
}

/// The `-list` output: the total line, the header and one row per application.
pub(crate) fn app_table(filter: &ListFilter, apps: &[Value]) -> String {
    let mut s = format!(
        "Total number of applications (application-types: {}, states: {} and tags: {}):{}\n",
        java_set(&filter.types),
        java_set(&filter.states),
        java_set(&filter.tags),
        apps.len()
    );
    let row = |c: [&str; 9]| {
        format!(
            "{:>30}\t{:>20}\t{:>20}\t{:>10}\t{:>10}\t{:>18}\t{:>18}\t{:>15}\t{:>35}\n",
            c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8]
        )
    };
    s += &row([
        "Application-Id",
        "Application-Name",
        "Application-Type",
        "User",
        "Queue",
        "State",
        "Final-State",
        "Progress",
        "Tracking-URL",
    ]);
    for a in apps {
        s += &row([
            &text(a, "id"),
            &text(a, "name"),
            &text(a, "applicationType"),
            &text(a, "user"),
            &text(a, "queue"),
            &text(a, "state"),
            &text(a, "finalStatus"),
            &fmt::progress(num(a, "progress")),
            &text_or(a, "trackingUrl", "N/A"),
        ]);
    }
    s
}

/// Reads one application; the inner `Err` holds the RM's answer when it does not know the
/// application (404). Callers print YARN's one sentence for it (the RM's answer says the same
/// again); `--json` output carries the RM's answer.
fn get_app(rm: &Rm, id: &str) -> Result<Result<Value, String>, ClientError> {
    match rm.get(&format!("/ws/v1/cluster/apps/{id}"), &[]) {
        Ok(v) => Ok(Ok(v.get("app").cloned().unwrap_or(v))),
        Err(e) if e.status() == Some(404) => Ok(Err(e.to_string())),
        Err(e) => Err(e),
    }
}

fn status(rm: &Rm, id: &str, json: bool, out: &mut dyn Write) -> Result<Outcome, ClientError> {
    let app = match get_app(rm, id)? {
        Ok(app) => app,
        Err(_) => {
            eprintln!("Application with id '{id}' doesn't exist in RM or Timeline Server.");
            return Ok(Outcome::Failed);
        }
    };
    if json {
        write!(out, "{}", fmt::json_text(&json!({ "app": app })))?;
    } else {
        write!(out, "{}", app_report(&app))?;
    }
    Ok(Outcome::Success)
}

/// The `-status` report.
pub(crate) fn app_report(a: &Value) -> String {
    // The AM's RPC address is host:port; before an AM registers YARN shows N/A and -1.
    let rpc = text(a, "amRPCAddress");
    let (am_host, rpc_port) = match rpc.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => (h.to_string(), p.to_string()),
        _ => {
            let http = text(a, "amHostHttpAddress");
            let host = http.rsplit_once(':').map_or(http.as_str(), |(h, _)| h);
            let host = if host.is_empty() { "N/A" } else { host };
            (host.to_string(), "-1".to_string())
        }
    };
    let timeouts = list(a, "timeouts", "timeout");
    let timeout_lines: Vec<String> = if timeouts.is_empty() {
        vec!["\tTimeoutType : LIFETIME\tExpiryTime : UNLIMITED\tRemainingTime : -1seconds".into()]
    } else {
        timeouts
            .iter()
            .map(|t| {
                format!(
                    "\tTimeoutType : {}\tExpiryTime : {}\tRemainingTime : {}seconds",
                    text_or(t, "type", "LIFETIME"),
                    text_or(t, "expiryTime", "UNLIMITED"),
                    fmt::signed(t, "remainingTimeInSeconds")
                )
            })
            .collect()
    };
    let lines = [
        "Application Report : ".to_string(),
        format!("\tApplication-Id : {}", text(a, "id")),
        format!("\tApplication-Name : {}", text(a, "name")),
        format!("\tApplication-Type : {}", text(a, "applicationType")),
        format!("\tUser : {}", text(a, "user")),
        format!("\tQueue : {}", text(a, "queue")),
        format!("\tApplication Priority : {}", text_or(a, "priority", "0")),
        format!("\tStart-Time : {}", int(a, "startedTime")),
        format!("\tLaunch-Time : {}", int(a, "launchTime")),
        format!("\tFinish-Time : {}", int(a, "finishedTime")),
        format!("\tProgress : {}", fmt::progress(num(a, "progress"))),
        format!("\tState : {}", text(a, "state")),
        format!("\tFinal-State : {}", text(a, "finalStatus")),
        format!("\tTracking-URL : {}", text_or(a, "trackingUrl", "N/A")),
        format!("\tRPC Port : {rpc_port}"),
        format!("\tAM Host : {am_host}"),
        format!(
            "\tAggregate Resource Allocation : {} MB-seconds, {} vcore-seconds",
            int(a, "memorySeconds"),
            int(a, "vcoreSeconds")
        ),
        format!(
            "\tAggregate Resource Preempted : {} MB-seconds, {} vcore-seconds",
            int(a, "preemptedMemorySeconds"),
            int(a, "preemptedVcoreSeconds")
        ),
        format!(
            "\tLog Aggregation Status : {}",
            text_or(a, "logAggregationStatus", "N/A")
        ),
        format!("\tDiagnostics : {}", text(a, "diagnostics")),
        format!(
            "\tUnmanaged Application : {}",
            text_or(a, "unmanagedApplication", "false")
        ),
        format!(
            "\tApplication Node Label Expression : {}",
            text_or(a, "appNodeLabelExpression", "<Not set>")
        ),
        format!(
            "\tAM container Node Label Expression : {}",
            text_or(a, "amNodeLabelExpression", "<DEFAULT_PARTITION>")
        ),
    ];
    let mut s = lines.join("\n");
    s.push('\n');
    for l in timeout_lines {
        s += &l;
        s.push('\n');
    }
    s
}

fn is_final(app: &Value) -> bool {
    FINAL_STATES.contains(&text(app, "state").to_uppercase().as_str())
}

fn kill(rm: &Rm, ids: &[String], json: bool, out: &mut dyn Write) -> Result<Outcome, ClientError> {
    let mut results = Vec::new();
    let mut found = 0;
    for id in ids {
        let app = match get_app(rm, id)? {
            Ok(app) => app,
            Err(rm_says) => {
                if !json {
                    writeln!(out, "Application with id '{id}' doesn't exist in RM.")?;
                }
                results.push(json!({"id": id, "result": "not found", "message": rm_says}));
                continue;
            }
        };
        found += 1;
        if is_final(&app) {
            if !json {
                writeln!(out, "Application {id} has already finished ")?;
            }
            results.push(json!({"id": id, "result": "already finished", "state": app["state"]}));
            continue;
        }
        if !json {
            writeln!(out, "Killing application {id}")?;
            out.flush()?;
        }
        let state = kill_and_wait(rm, id)?;
        eprintln!("Killed application {id}");
        results.push(json!({"id": id, "result": "killed", "state": state}));
    }
    if json {
        write!(out, "{}", fmt::json_text(&json!({ "apps": results })))?;
    }
    Ok(if found == 0 {
        Outcome::Failed
    } else {
        Outcome::Success
    })
}

/// PUTs the KILLED state, then polls until the RM reports a final state (it answers 202 while
/// the kill is in progress).
fn kill_and_wait(rm: &Rm, id: &str) -> Result<String, ClientError> {
    let path = format!("/ws/v1/cluster/apps/{id}/state");
    let (_, answer) = rm.put(&path, &json!({"state": "KILLED"}))?;
    let mut state = text(&answer, "state");
    let polls = KILL_WAIT.as_millis() / 200;
    for _ in 0..polls {
        if FINAL_STATES.contains(&state.as_str()) {
            return Ok(state);
        }
        std::thread::sleep(Duration::from_millis(200));
        state = text(&rm.get(&path, &[])?, "state");
    }
    Err(ClientError::BadAnswer {
        url: rm.url(&path),
        cause: format!(
            "application {id} still {state} {} s after the kill",
            KILL_WAIT.as_secs()
        ),
    })
}

fn move_app(
    rm: &Rm,
    id: &str,
    queue: &str,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome, ClientError> {
    let app = match get_app(rm, id)? {
        Ok(app) => app,
        Err(rm_says) => {
            if json {
                let v = json!({"id": id, "result": "not found", "message": rm_says});
                write!(out, "{}", fmt::json_text(&v))?;
            } else {
                writeln!(out, "Application with id '{id}' doesn't exist in RM.")?;
            }
            return Ok(Outcome::Failed);
        }
    };
    if is_final(&app) {
        if json {
            write!(
                out,
                "{}",
                fmt::json_text(
                    &json!({"id": id, "result": "already finished", "queue": app["queue"]})
                )
            )?;
        } else {
            writeln!(out, "Application {id} has already finished ")?;
        }
        return Ok(Outcome::Success);
    }
    if !json {
        writeln!(out, "Moving application {id} to queue {queue}")?;
        out.flush()?;
    }
    let (_, answer) = rm.put(
        &format!("/ws/v1/cluster/apps/{id}/queue"),
        &json!({ "queue": queue }),
    )?;
    if json {
        write!(out, "{}", fmt::json_text(&answer))?;
    } else {
        writeln!(out, "Successfully completed move.")?;
    }
    Ok(Outcome::Success)
}

fn update_priority(
    rm: &Rm,
    id: &str,
    priority: i64,
    json: bool,
    out: &mut dyn Write,
) -> Result<Outcome, ClientError> {
    if !json {
        writeln!(out, "Updating priority of an application {id}")?;
        out.flush()?;
    }
    let (_, answer) = rm.put(
        &format!("/ws/v1/cluster/apps/{id}/priority"),
        &json!({ "priority": priority }),
    )?;
    if json {
        write!(out, "{}", fmt::json_text(&answer))?;
    } else if fmt::signed(&answer, "priority") == priority {
        writeln!(
            out,
            "Successfully updated the application {id} with priority '{priority}'"
        )?;
    } else {
        // The RM capped it at the cluster maximum or kept it (final state), as YARN reports.
        writeln!(out, "Updated priority of an application  {id} to cluster max priority OR keeping old priority as application is in final states")?;
    }
    Ok(Outcome::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn sample_app() -> Value {
        json!({
            "id": "application_1700000000000_0007", "user": "alice", "name": "wordcount",
            "queue": "default", "state": "RUNNING", "finalStatus": "UNDEFINED", "progress": 42.5,
            "trackingUrl": "http://nm-1:41235/", "applicationType": "YARN",
            "applicationTags": "nightly,etl", "priority": 0, "startedTime": 1700000100000u64,
            "launchTime": 1700000101000u64, "finishedTime": 0, "amRPCAddress": "nm-1:41234",
            "memorySeconds": 266240, "vcoreSeconds": 130, "logAggregationStatus": "NOT_START",
            "diagnostics": "", "unmanagedApplication": false, "amNodeLabelExpression": ""
        })
    }

    #[test]
    fn list_table_matches_yarn() {
        let f = ListFilter::new(&[], &[], &[]).expect("filter");
        let table = app_table(&f, &[sample_app()]);
        let expected = "Total number of applications (application-types: [], states: [SUBMITTED, ACCEPTED, RUNNING] and tags: []):1\n                Application-Id\t    Application-Name\t    Application-Type\t      User\t     Queue\t             State\t       Final-State\t       Progress\t                       Tracking-URL\napplication_1700000000000_0007\t           wordcount\t                YARN\t     alice\t   default\t           RUNNING\t         UNDEFINED\t          42.5%\t                 http://nm-1:41235/\n";
        assert_eq!(table, expected);
    }

    #[test]
    fn list_filter_normalises_like_yarn() {
        let f = ListFilter::new(
            &strings(&["running", "FINISHED", "accepted"]),
            &strings(&["yarn", "Spark"]),
            &[],
        )
        .expect("filter");
        assert_eq!(f.states, strings(&["ACCEPTED", "RUNNING", "FINISHED"]));
        assert_eq!(f.types, strings(&["YARN", "SPARK"]));
        assert_eq!(
            f.query(),
            vec![
                ("states", "ACCEPTED,RUNNING,FINISHED".to_string()),
                ("applicationTypes", "YARN,SPARK".to_string())
            ]
        );
        let all = ListFilter::new(&strings(&["ALL"]), &[], &[]).expect("filter");
        assert!(all.all && all.query().is_empty());
        assert_eq!(all.states.len(), 8);
        let e = ListFilter::new(&strings(&["BOGUS"]), &[], &[]).expect_err("invalid");
        assert!(e
            .to_string()
            .starts_with("The application state BOGUS is invalid."));
        let mut app = sample_app();
        assert!(f.matches(&app));
        app["applicationType"] = json!("MAPREDUCE");
        assert!(!f.matches(&app));
        let tagged = ListFilter::new(&[], &[], &strings(&["ETL"])).expect("filter");
        assert!(tagged.matches(&sample_app()));
        let other = ListFilter::new(&[], &[], &strings(&["x"])).expect("filter");
        assert!(!other.matches(&sample_app()));
    }

    #[test]
    fn status_report_says_what_preemption_took() {
        let mut app = sample_app();
        app["preemptedMemorySeconds"] = json!(61_440);
        app["preemptedVcoreSeconds"] = json!(60);
        let r = app_report(&app);
        assert!(
            r.contains("\n\tAggregate Resource Preempted : 61440 MB-seconds, 60 vcore-seconds\n"),
            "{r}"
        );
    }

    #[test]
    fn status_report_matches_yarn() {
        let r = app_report(&sample_app());
        let expected = "Application Report : \n\tApplication-Id : application_1700000000000_0007\n\tApplication-Name : wordcount\n\tApplication-Type : YARN\n\tUser : alice\n\tQueue : default\n\tApplication Priority : 0\n\tStart-Time : 1700000100000\n\tLaunch-Time : 1700000101000\n\tFinish-Time : 0\n\tProgress : 42.5%\n\tState : RUNNING\n\tFinal-State : UNDEFINED\n\tTracking-URL : http://nm-1:41235/\n\tRPC Port : 41234\n\tAM Host : nm-1\n\tAggregate Resource Allocation : 266240 MB-seconds, 130 vcore-seconds\n\tAggregate Resource Preempted : 0 MB-seconds, 0 vcore-seconds\n\tLog Aggregation Status : NOT_START\n\tDiagnostics : \n\tUnmanaged Application : false\n\tApplication Node Label Expression : <Not set>\n\tAM container Node Label Expression : <DEFAULT_PARTITION>\n\tTimeoutType : LIFETIME\tExpiryTime : UNLIMITED\tRemainingTime : -1seconds\n";
        assert_eq!(r, expected);
        let mut pending = sample_app();
        pending
            .as_object_mut()
            .expect("object")
            .remove("amRPCAddress");
        let r = app_report(&pending);
        assert!(r.contains("\tRPC Port : -1\n\tAM Host : N/A\n"), "{r}");
    }
}
