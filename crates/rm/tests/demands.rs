//! Weft's demand endpoints on a real RM (127.0.0.1, ephemeral ports): a valid demand is
//! accepted and listed with its timeline, an invalid one is a 400 naming its field and column
//! and creates nothing, a kill is answered 202 then 409, and the demands survive a restart.

use std::path::Path;
use std::time::Duration;

use clap::Parser;
use serde_json::Value;
use tokio::runtime::Runtime;
use weft_client::{DemandArgs, Outcome, Verb};
use weft_rm::{RmArgs, RunningRm};

fn runtime() -> Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

fn args(dir: &Path) -> RmArgs {
    RmArgs {
        data_dir: Some(dir.join("data")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ready_file: Some(dir.join("ready.json")),
        ..RmArgs::default()
    }
}

struct Http {
    agent: ureq::Agent,
    base: String,
}

impl Http {
    fn new(rm: &RunningRm) -> Http {
        Http {
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(10)))
                .build()
                .into(),
            base: format!("http://{}", rm.web),
        }
    }

    fn call(&self, method: &str, path: &str, body: Option<&str>) -> (u16, Value) {
        let url = format!("{}{path}", self.base);
        let result = match (method, body) {
            ("GET", _) => self.agent.get(&url).call(),
            ("POST", Some(b)) => self
                .agent
                .post(&url)
                .header("Content-Type", "application/json")
                .send(b),
            ("PUT", Some(b)) => self
                .agent
                .put(&url)
                .header("Content-Type", "application/json")
                .send(b),
            _ => panic!("unsupported call {method} {path}"),
        };
        let mut response = result.expect("the RM answers");
        let status = response.status().as_u16();
        let text = response.body_mut().read_to_string().unwrap_or_default();
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }
}

/// `weft demand ARGS --rm URL`: the verb's outcome and what it printed.
fn weft_demand(rm: &RunningRm, args: &[&str]) -> (Result<Outcome, String>, String) {
    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        demand: DemandArgs,
    }
    // The verbs ask as HADOOP_USER_NAME; this binary's only test sets it before any call.
    std::env::set_var("HADOOP_USER_NAME", "alice");
    let url = format!("http://{}", rm.web);
    let mut all = vec!["weft"];
    all.extend_from_slice(args);
    all.extend(["--rm", &url]);
    let cli = Cli::try_parse_from(all).expect("the verb parses");
    let mut out = Vec::new();
    let outcome = cli.demand.run(&mut out).map_err(|e| e.to_string());
    (outcome, String::from_utf8(out).expect("utf-8"))
}

const VALID: &str = r#"{"queue": "root.default", "demands": [
  {"DemandID": 1200, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 2}},
  {"DemandID": 1234, "ResourceRequest": {"capability": {"memory": 2048, "vCores": 1}, "num-containers": 8, "priority": 1},
   "OrderBy": 1200, "DeadLine": {"Time": "[, +20m]", "Strategy": "loose"}}]}"#;

const INVALID: &str = r#"{"demands": [
  {"DemandID": 7, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1},
   "Start": {"Time": "[NOW, +5x]"}}]}"#;

fn states(list: &Value) -> Vec<(String, String, String)> {
    list["demands"]["demand"]
        .as_array()
        .expect("a demand list")
        .iter()
        .map(|d| {
            (
                d["id"].as_str().unwrap_or_default().to_owned(),
                d["state"].as_str().unwrap_or_default().to_owned(),
                d["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[test]
fn demands_are_submitted_refused_killed_and_kept_across_a_restart() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let rt = runtime();
    let rm = rt
        .block_on(weft_rm::start(args(dir.path())))
        .expect("the RM starts");
    let http = Http::new(&rm);

    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands?user.name=alice",
        Some(VALID),
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(
        states(&body),
        [
            ("~alice/1200".into(), "ALLOCATING".into(), "eligible".into()),
            (
                "~alice/1234".into(),
                "ACCEPTED".into(),
                "waiting_order".into()
            ),
        ]
    );

    let metrics = http
        .agent
        .get(format!("{}/metrics", http.base))
        .call()
        .expect("/metrics answers")
        .body_mut()
        .read_to_string()
        .unwrap_or_default();
    for line in [
        "weft_demands{state=\"ACCEPTED\",reason=\"waiting_order\"} 1",
        "weft_demands{state=\"ALLOCATING\",reason=\"eligible\"} 1",
        "weft_demand_deadline_total{outcome=\"hit\"} 0",
        "weft_demand_deadline_total{outcome=\"miss\"} 0",
        "weft_claim_expired_total 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "{line} not in:\n{metrics}"
        );
    }

    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands?user.name=alice",
        Some(INVALID),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["RemoteException"]["message"],
        "invalid demand: /demands/0/Start/Time: column 9: unknown unit 'x'; expected h, m or s"
    );

    let (status, list) = http.call("GET", "/ws/v1/cluster/demands", None);
    assert_eq!(status, 200);
    assert_eq!(
        states(&list).len(),
        2,
        "the refused demand was not created: {list}"
    );
    let (_, waiting) = http.call("GET", "/ws/v1/cluster/demands?state=ACCEPTED", None);
    assert_eq!(states(&waiting).len(), 1);

    let (status, one) = http.call("GET", "/ws/v1/cluster/demands/~alice/1234", None);
    assert_eq!(status, 200, "{one}");
    let demand = &one["demand"];
    assert_eq!(demand["containers"]["requested"], 8);
    assert_eq!(demand["resource-description"]["OrderBy"], 1200);
    let timeline: Vec<&str> = demand["timeline"]
        .as_array()
        .expect("a timeline")
        .iter()
        .filter_map(|t| t["state"].as_str())
        .collect();
    assert_eq!(timeline, ["NEW", "ACCEPTED"]);

    let kill = r#"{"state": "KILLED"}"#;
    let (status, body) = http.call(
        "PUT",
        "/ws/v1/cluster/demands/~alice/1200/state?user.name=alice",
        Some(kill),
    );
    assert_eq!(status, 202, "{body}");
    assert_eq!(body["demand"]["reason"], "killed");
    let (status, body) = http.call(
        "PUT",
        "/ws/v1/cluster/demands/~alice/1200/state?user.name=alice",
        Some(kill),
    );
    assert_eq!(status, 409, "{body}");
    let (status, _) = http.call("GET", "/ws/v1/cluster/demands/~alice/99", None);
    assert_eq!(status, 404);

    let (outcome, printed) = weft_demand(&rm, &["status", "~alice/1234"]);
    assert_eq!(outcome, Ok(Outcome::Success));
    assert!(printed.contains("\tState : ALLOCATING\n"), "{printed}");
    assert!(printed.contains("ACCEPTED waiting_order"), "{printed}");
    let file = dir.path().join("demand.json");
    std::fs::write(
        &file,
        r#"{"DemandID": 5, "ResourceRequest": {"capability": {"memory": 512, "vCores": 1}, "num-containers": 1}}"#,
    )
    .expect("write the demand file");
    let path = file.to_string_lossy().into_owned();
    let (outcome, printed) = weft_demand(&rm, &["submit", &path, "--queue", "root.default"]);
    assert_eq!(outcome, Ok(Outcome::Success), "{printed}");
    assert!(
        printed.starts_with("Total number of demands:1\n"),
        "{printed}"
    );
    std::fs::write(&file, r#"{"DemandID": 6}"#).expect("write the demand file");
    let (outcome, _) = weft_demand(&rm, &["submit", &path]);
    let err = outcome.expect_err("a demand without ResourceRequest is refused");
    assert!(
        err.contains("400") && err.contains("ResourceRequest is required"),
        "{err}"
    );
    let (outcome, printed) = weft_demand(&rm, &["list", "--state", "FAILED"]);
    assert_eq!(outcome, Ok(Outcome::Success));
    assert!(
        printed.contains("~alice/1200") && !printed.contains("~alice/5"),
        "{printed}"
    );
    let (outcome, _) = weft_demand(&rm, &["kill", "~alice/1200"]);
    assert_eq!(
        outcome,
        Ok(Outcome::Failed),
        "a FAILED demand cannot be killed again (409)"
    );
    let (outcome, _) = weft_demand(&rm, &["status", "~alice/404"]);
    assert_eq!(outcome, Ok(Outcome::Failed));
    // `watch` on the killed demand prints its whole timeline and ends at once, 255 for FAILED.
    let (outcome, printed) = weft_demand(&rm, &["watch", "~alice/1200", "--timeout", "30s"]);
    assert_eq!(outcome, Ok(Outcome::Failed), "{printed}");
    let watched: Vec<&str> = printed.lines().collect();
    assert_eq!(watched.len(), 4, "{printed}");
    assert!(watched[0].ends_with(" NEW submitted"), "{printed}");
    assert!(watched[3].contains(" FAILED killed"), "{printed}");
    let (_, before) = http.call("GET", "/ws/v1/cluster/demands", None);
    rt.block_on(rm.stop());

    let rm = rt
        .block_on(weft_rm::start(args(dir.path())))
        .expect("the RM restarts");
    let http = Http::new(&rm);
    let (status, after) = http.call("GET", "/ws/v1/cluster/demands", None);
    assert_eq!(status, 200);
    assert_eq!(
        states(&after),
        [
            ("~alice/1200".into(), "FAILED".into(), "killed".into()),
            ("~alice/1234".into(), "ALLOCATING".into(), "eligible".into()),
            ("~alice/5".into(), "ALLOCATING".into(), "eligible".into()),
        ],
        "the loose successor went on when its predecessor was killed, and all survive"
    );
    for i in 0..3 {
        let was = &before["demands"]["demand"][i];
        let is = &after["demands"]["demand"][i];
        for field in [
            "timeline",
            "resource-description",
            "accepted-time",
            "user",
            "queue",
        ] {
            assert_eq!(is[field], was[field], "demand {i}: {field}");
        }
    }
    rt.block_on(rm.stop());
}

/// The dry run (`POST /demands/plan`, `weft demand plan`): what a batch would get, with
/// nothing created. `root.default` is under no reservable queue, so 1200 would be ACCEPTED
/// `unconstrained`, 1234 `waiting_order` behind it (in the same batch), and a strict Start
/// with a Duration FAILED `not_reservable`; afterwards the RM holds no demand, and the real
/// submission of the same batch gets what the dry run said.
#[test]
fn a_dry_run_answers_what_a_submission_would_get_and_creates_nothing() {
    let dir = tempfile::tempdir().expect("a temp dir");
    let rt = runtime();
    let rm = rt
        .block_on(weft_rm::start(args(dir.path())))
        .expect("the RM starts");
    let http = Http::new(&rm);
    let strict = r#"{"queue": "root.default", "demands": [
      {"DemandID": 9, "ResourceRequest": {"capability": {"memory": 1024, "vCores": 1}, "num-containers": 1},
       "Start": {"Time": "[NOW+10m, +5m]", "Strategy": "strict"}, "Duration": "30m"}]}"#;

    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands/plan?user.name=alice",
        Some(VALID),
    );
    assert_eq!(status, 200, "{body}");
    let previews: Vec<(String, String, String)> = body["plan"]["demand"]
        .as_array()
        .expect("a preview list")
        .iter()
        .map(|d| {
            assert_eq!(d["displaced"], serde_json::json!([]), "{d}");
            (
                d["id"].as_str().unwrap_or_default().to_owned(),
                d["state"].as_str().unwrap_or_default().to_owned(),
                d["reason"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        previews,
        [
            (
                "~alice/1200".into(),
                "ACCEPTED".into(),
                "unconstrained".into()
            ),
            (
                "~alice/1234".into(),
                "ACCEPTED".into(),
                "waiting_order".into()
            ),
        ]
    );
    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands/plan?user.name=alice",
        Some(strict),
    );
    assert_eq!(status, 200, "{body}");
    let preview = &body["plan"]["demand"][0];
    assert_eq!(
        (&preview["state"], &preview["reason"]),
        (&"FAILED".into(), &"not_reservable".into())
    );
    assert_eq!(preview["plan-queue"], Value::Null);
    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands/plan?user.name=alice",
        Some(INVALID),
    );
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["RemoteException"]["message"],
        "invalid demand: /demands/0/Start/Time: column 9: unknown unit 'x'; expected h, m or s"
    );

    let (status, list) = http.call("GET", "/ws/v1/cluster/demands", None);
    assert_eq!(status, 200);
    assert!(
        states(&list).is_empty(),
        "the dry runs created nothing: {list}"
    );

    let file = dir.path().join("strict.json");
    std::fs::write(&file, strict).expect("write the file");
    let file = file.to_str().expect("a UTF-8 path");
    let (outcome, printed) = weft_demand(&rm, &["plan", file]);
    assert_eq!(outcome, Ok(Outcome::Success), "{printed}");
    assert!(
        printed.starts_with("Total number of demands:1\n"),
        "{printed}"
    );
    let line = printed.lines().nth(2).expect("a demand line");
    for word in [
        "~alice/9",
        "FAILED",
        "not_reservable",
        "under no reservable queue",
    ] {
        assert!(line.contains(word), "{word} not in {line}");
    }

    let (status, body) = http.call(
        "POST",
        "/ws/v1/cluster/demands?user.name=alice",
        Some(VALID),
    );
    assert_eq!(status, 202, "{body}");
    let submitted = states(&body);
    assert_eq!(submitted[1], previews[1], "1234 as the dry run said");
    rt.block_on(rm.stop());
}
