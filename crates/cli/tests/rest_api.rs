//! The ResourceManager's REST API against a real cluster (`weft rm` + `weft nm` on 127.0.0.1,
//! ephemeral ports), with a real HTTP client: every endpoint, its JSON shape and values, and
//! the error paths (RemoteException with the right status, and nothing changed).
//! One cluster serves every check, so the whole file costs one cluster start.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

use harness::{wait_for, Cluster, Options, Proc};
use serde_json::{json, Value};

const MINUTE: Duration = Duration::from_secs(60);

/// A response: status, `Location` and `Set-Cookie` headers, JSON body (Null when not JSON).
struct Answer {
    status: u16,
    location: Option<String>,
    cookie: Option<String>,
    body: Value,
}

struct Client {
    base: String,
    agent: ureq::Agent,
}

impl Client {
    fn new(c: &Cluster) -> Client {
        Client {
            base: format!("http://{}", c.web),
            agent: ureq::Agent::config_builder()
                .http_status_as_error(false)
                .timeout_global(Some(Duration::from_secs(15)))
                .build()
                .into(),
        }
    }

    fn answer(r: Result<ureq::http::Response<ureq::Body>, ureq::Error>, what: &str) -> Answer {
        let mut r = r.unwrap_or_else(|e| panic!("{what}: {e}"));
        let status = r.status().as_u16();
        let location = r
            .headers()
            .get("location")
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        let cookie = r
            .headers()
            .get("set-cookie")
            .and_then(|h| h.to_str().ok())
            .map(str::to_string);
        let text = r.body_mut().read_to_string().unwrap_or_default();
        Answer {
            status,
            location,
            cookie,
            body: serde_json::from_str(&text).unwrap_or(Value::Null),
        }
    }

    fn get(&self, path: &str) -> Answer {
        let url = format!("{}{path}", self.base);
        Self::answer(self.agent.get(&url).call(), &format!("GET {url}"))
    }

    /// GET that must answer 200; the JSON body.
    fn ok(&self, path: &str) -> Value {
        let a = self.get(path);
        assert_eq!(a.status, 200, "GET {path}: {}", a.body);
        a.body
    }

    fn send(&self, method: &str, path: &str, body: &str) -> Answer {
        let url = format!("{}{path}", self.base);
        let what = format!("{method} {url}");
        let r = match method {
            "POST" => self
                .agent
                .post(&url)
                .content_type("application/json")
                .send(body),
            "PUT" => self
                .agent
                .put(&url)
                .content_type("application/json")
                .send(body),
            "DELETE" => self.agent.delete(&url).call(),
            other => panic!("no method {other}"),
        };
        Self::answer(r, &what)
    }

    fn put(&self, path: &str, body: &Value) -> Answer {
        self.send("PUT", path, &body.to_string())
    }

    /// PUT carrying only a `hadoop.auth` cookie to say who calls.
    fn put_with_cookie(&self, path: &str, body: &Value, cookie: &str) -> Answer {
        let url = format!("{}{path}", self.base);
        let r = self
            .agent
            .put(&url)
            .header("Cookie", cookie)
            .content_type("application/json")
            .send(body.to_string());
        Self::answer(r, &format!("PUT {url}"))
    }
}

/// Asserts a Hadoop `RemoteException` answer with this status and exception.
#[track_caller]
fn remote_exception(a: &Answer, status: u16, exception: &str) -> String {
    assert_eq!(a.status, status, "{}", a.body);
    let e = &a.body["RemoteException"];
    assert_eq!(e["exception"], exception, "{}", a.body);
    assert!(
        e["javaClassName"]
            .as_str()
            .is_some_and(|j| j.ends_with(exception)),
        "{}",
        a.body
    );
    e["message"].as_str().expect("message").to_string()
}

fn ids(apps: &Value) -> Vec<String> {
    let mut v: Vec<String> = apps["apps"]["app"]
        .as_array()
        .unwrap_or_else(|| panic!("apps.app list: {apps}"))
        .iter()
        .map(|a| a["id"].as_str().expect("id").to_string())
        .collect();
    v.sort();
    v
}

fn queue_names(q: &Value, out: &mut Vec<String>) {
    out.push(q["queueName"].as_str().expect("queueName").to_string());
    if let Some(children) = q["childQueues"]["queue"].as_array() {
        for c in children {
            queue_names(c, out);
        }
    }
}

fn find_queue<'a>(q: &'a Value, name: &str) -> Option<&'a Value> {
    if q["queueName"] == name {
        return Some(q);
    }
    q["childQueues"]["queue"]
        .as_array()?
        .iter()
        .find_map(|c| find_queue(c, name))
}

/// The allocation file the refresh installs: an admin-only root, alice administering dev,
/// and a new queue.
const ACL_ALLOCATIONS: &str = r#"<?xml version="1.0"?>
<allocations>
  <queue name="root">
    <aclAdministerApps>admin</aclAdministerApps>
    <queue name="default"/>
    <queue name="prod"/>
    <queue name="dev"><aclAdministerApps>carol</aclAdministerApps></queue>
    <queue name="ops"><maxRunningApps>3</maxRunningApps></queue>
  </queue>
  <queuePlacementPolicy>
    <rule name="specified" create="false"/>
    <rule name="default" queue="default"/>
  </queuePlacementPolicy>
</allocations>
"#;

/// A submission with the whole launch context: a local resource (a script), environment,
/// a command, resource, queue, type, attempts, tags and priority.
fn submission(id: &str, script_url: &str, out: &str) -> Value {
    json!({
        "application-id": id,
        "application-name": "rest-sleeper",
        "queue": "root.prod",
        "priority": 3,
        "am-container-spec": {
            "local-resources": {"entry": [{"key": "run.sh", "value": {
                "resource": script_url, "type": "FILE", "visibility": "APPLICATION",
                "size": 0, "timestamp": 0}}]},
            "environment": {"entry": [{"key": "MODE", "value": "from-rest"}, {"key": "OUT", "value": out}]},
            "commands": {"command": ["bash", "run.sh"]}
        },
        "unmanaged-AM": false,
        "max-app-attempts": 1,
        "resource": {"memory": 256, "vCores": 1},
        "application-type": "SPARK",
        "keep-containers-across-application-attempts": false,
        "application-tags": {"tag": ["Nightly", "etl"]}
    })
}

#[test]
fn every_endpoint_answers_with_hadoops_shapes_and_errors() {
    // The sleeper AMs never register: a long AM expiry keeps them ACCEPTED however slow
    // the machine is.
    let opts = Options {
        am_expiry_ms: 600_000,
        ..Options::default()
    };
    let c = Cluster::start(1, 4096, &opts);
    let api = Client::new(&c);
    let node_id = c.nms[0].node_id.clone();

    // --- cluster info, OpenAPI --------------------------------------------------------------
    let info = api.ok("/ws/v1/cluster");
    assert_eq!(info, api.ok("/ws/v1/cluster/info"));
    let ci = &info["clusterInfo"];
    assert_eq!(ci["state"], "STARTED");
    assert_eq!(ci["haState"], "ACTIVE");
    assert_eq!(ci["resourceManagerVersion"], "3.3.6");
    assert_eq!(ci["hadoopVersion"], "3.3.6");
    assert!(ci["id"].as_u64().is_some_and(|id| id > 1_600_000_000_000));
    assert!(ci["startedOn"].as_u64() >= ci["id"].as_u64());
    for k in [
        "rmStateStoreName",
        "resourceManagerBuildVersion",
        "resourceManagerVersionBuiltOn",
        "hadoopBuildVersion",
        "haZooKeeperConnectionState",
    ] {
        assert!(ci[k].as_str().is_some_and(|s| !s.is_empty()), "{k}: {ci}");
    }
    let cluster_ts = ci["id"].as_u64().unwrap();
    let doc = api.ok("/openapi.json");
    assert!(doc["openapi"].as_str().unwrap().starts_with("3."));
    for p in [
        "/ws/v1/cluster/apps",
        "/ws/v1/cluster/scheduler",
        "/ws/v1/cluster/admin/refresh-queues",
    ] {
        assert!(doc["paths"].get(p).is_some(), "{p} not in openapi.json");
    }

    // --- nodes -------------------------------------------------------------------------------
    let nodes = api.ok("/ws/v1/cluster/nodes");
    let list = nodes["nodes"]["node"].as_array().expect("nodes.node");
    assert_eq!(list.len(), 1);
    let n = &list[0];
    assert_eq!(n["id"], node_id.as_str());
    assert_eq!(n["state"], "RUNNING");
    assert_eq!(n["nodeHostName"], "localhost");
    assert_eq!(n["totalResource"], json!({"memory": 4096, "vCores": 8}));
    assert_eq!(n["availMemoryMB"], 4096);
    let http = n["nodeHTTPAddress"].as_str().unwrap_or_default();
    assert!(
        http.rsplit_once(':')
            .is_some_and(|(_, p)| p.parse::<u16>().is_ok_and(|p| p > 0)),
        "{n}"
    );
    assert!(n["lastHealthUpdate"].as_u64().is_some_and(|t| t > 0));
    assert_eq!(
        api.ok("/ws/v1/cluster/nodes?states=running")["nodes"]["node"]
            .as_array()
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        api.ok("/ws/v1/cluster/nodes?states=LOST,DECOMMISSIONED")["nodes"]["node"],
        json!([])
    );
    remote_exception(
        &api.get("/ws/v1/cluster/nodes?states=BUSY"),
        400,
        "BadRequestException",
    );
    let one = api.ok(&format!("/ws/v1/cluster/nodes/{node_id}"));
    assert_eq!(one["node"]["id"], node_id.as_str());
    let m = remote_exception(
        &api.get("/ws/v1/cluster/nodes/nosuch:1"),
        404,
        "NotFoundException",
    );
    assert!(m.contains("nosuch:1") && m.contains("is not found"), "{m}");

    // --- metrics and scheduler before any app --------------------------------------------------
    let m0 = api.ok("/ws/v1/cluster/metrics")["clusterMetrics"].clone();
    assert_eq!(m0["totalMB"], 4096);
    assert_eq!(m0["totalVirtualCores"], 8);
    assert_eq!(m0["availableMB"], 4096);
    assert_eq!(
        (m0["activeNodes"].as_u64(), m0["totalNodes"].as_u64()),
        (Some(1), Some(1))
    );
    assert_eq!(m0["appsSubmitted"], 0);
    let sched = api.ok("/ws/v1/cluster/scheduler");
    let info = &sched["scheduler"]["schedulerInfo"];
    assert_eq!(info["type"], "fairScheduler");
    let root = &info["rootQueue"];
    let mut names = Vec::new();
    queue_names(root, &mut names);
    for q in ["root", "root.default", "root.prod", "root.dev"] {
        assert!(names.contains(&q.to_string()), "{q} missing from {names:?}");
    }
    assert!(root.get("type").is_none(), "parents have no type: {root}");
    assert_eq!(
        root["clusterResources"],
        json!({"memory": 4096, "vCores": 8})
    );
    let dev = find_queue(root, "root.dev").unwrap();
    assert_eq!(dev["type"], "fairSchedulerLeafQueueInfo");
    assert!(dev.get("childQueues").is_none());
    // Equal weights: each of the three leaves' steady share is a third of the cluster.
    let steady = dev["steadyFairResources"]["memory"].as_i64().unwrap();
    assert!((1365..=1366).contains(&steady), "{dev}");
    assert_eq!(dev["maxResources"], json!({"memory": 4096, "vCores": 8}));
    assert_eq!(
        dev["maxContainerAllocation"],
        json!({"memory": 8192, "vCores": 4})
    );
    assert_eq!(dev["schedulingPolicy"], "fair");
    assert_eq!(dev["maxApps"], i32::MAX);
    for k in [
        "minResources",
        "usedResources",
        "amUsedResources",
        "amMaxResources",
        "demandResources",
        "fairResources",
        "reservedResources",
    ] {
        assert!(dev[k]["memory"].is_i64(), "{k}: {dev}");
    }
    for k in [
        "numActiveApps",
        "numPendingApps",
        "pendingContainers",
        "allocatedContainers",
        "reservedContainers",
        "preemptable",
    ] {
        assert!(dev.get(k).is_some(), "{k}: {dev}");
    }

    // --- new-application with an empty body --------------------------------------------------
    let a = api.send("POST", "/ws/v1/cluster/apps/new-application", "");
    assert_eq!(a.status, 200, "{}", a.body);
    let app1 = a.body["application-id"].as_str().expect("id").to_string();
    assert!(
        app1.starts_with(&format!("application_{cluster_ts}_")),
        "{app1}"
    );
    assert_eq!(
        a.body["maximum-resource-capability"],
        json!({"memory": 8192, "vCores": 4})
    );
    remote_exception(
        &api.get(&format!("/ws/v1/cluster/apps/{app1}")),
        404,
        "NotFoundException",
    );

    // --- submission with the whole launch context -------------------------------------------------
    let work = c.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let script = c.path("run.sh");
    std::fs::write(&script, "echo \"$MODE\" > \"$OUT\"\nexec sleep 300\n").unwrap();
    let out = work.join("mode.txt");
    let body = submission(
        &app1,
        &format!("file://{}", script.display()),
        &out.display().to_string(),
    );
    let a = api.send(
        "POST",
        "/ws/v1/cluster/apps?user.name=alice",
        &body.to_string(),
    );
    assert_eq!(a.status, 202, "{}", a.body);
    assert!(
        a.location
            .as_deref()
            .is_some_and(|l| l.ends_with(&format!("/ws/v1/cluster/apps/{app1}"))),
        "{:?}",
        a.location
    );
    // The AM ran the localized script with the environment it was given.
    wait_for(MINUTE, "the REST app's AM to write its file", || {
        std::fs::read_to_string(&out)
            .ok()
            .filter(|s| s.trim() == "from-rest")
    });
    // Submitting the same id again is refused and changes nothing.
    let again = api.send(
        "POST",
        "/ws/v1/cluster/apps?user.name=bob",
        &body.to_string(),
    );
    remote_exception(&again, 400, "BadRequestException");
    let app = api.ok(&format!("/ws/v1/cluster/apps/{app1}"))["app"].clone();
    assert_eq!(app["id"], app1.as_str());
    assert_eq!(app["user"], "alice");
    assert_eq!(app["name"], "rest-sleeper");
    assert_eq!(app["queue"], "root.prod");
    assert_eq!(app["applicationType"], "SPARK");
    assert_eq!(app["applicationTags"], "etl,nightly");
    assert_eq!(app["priority"], 3);
    assert_eq!(app["finalStatus"], "UNDEFINED");
    assert_eq!(app["clusterId"], cluster_ts);
    // Its AM never registers: accepted, no tracking URL yet (left out, not null).
    assert_eq!(app["state"], "ACCEPTED");
    assert_eq!(app["trackingUI"], "UNASSIGNED");
    assert!(app.get("trackingUrl").is_none(), "{app}");
    assert_eq!(app["finishedTime"], 0);
    assert_eq!(app["diagnostics"].as_str().map(|_| ()), Some(()));
    assert_eq!(app["unmanagedApplication"], false);
    assert_eq!(app["masterNodeId"], node_id.as_str());
    assert_eq!(
        app["timeouts"]["timeout"][0],
        json!({"type": "LIFETIME", "expiryTime": "UNLIMITED", "remainingTimeInSeconds": -1})
    );

    // --- a running app (dshell: a real AM) and a failing one ------------------------------------
    let mut dshell: Proc = c.dshell(
        "running",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-queue",
            "default",
            "-shell_command",
            "sleep 300",
        ],
    );
    let app2 = c.submitted_app(&mut dshell);
    let running = c.wait_app_state(&app2, &["RUNNING"], MINUTE);
    assert_eq!(running["trackingUI"], "ApplicationMaster");
    assert_eq!(running["applicationType"], "DISTRIBUTEDSHELL");
    wait_for(MINUTE, "the dshell worker container", || {
        let a = api.ok(&format!("/ws/v1/cluster/apps/{app2}"))["app"].clone();
        (a["runningContainers"].as_u64() >= Some(2)).then_some(())
    });
    let failing = api.send("POST", "/ws/v1/cluster/apps/new-application", "");
    let app3 = failing.body["application-id"].as_str().unwrap().to_string();
    let a = api.send(
        "POST",
        "/ws/v1/cluster/apps?user.name=alice",
        &json!({
            "application-id": app3,
            "application-name": "fails",
            "queue": "root.dev",
            "max-app-attempts": 1,
            "resource": {"memory": 128, "vCores": 1},
            "application-type": "batch",
            "am-container-spec": {"commands": {"command": "exit 3"}}
        })
        .to_string(),
    );
    assert_eq!(a.status, 202, "{}", a.body);
    let failed = c.wait_app_state(&app3, &["FAILED"], MINUTE);
    assert_eq!(failed["finalStatus"], "FAILED");
    assert!(failed["finishedTime"].as_u64() >= failed["startedTime"].as_u64());
    assert_eq!(failed["trackingUI"], "History");
    let t3 = failed["finishedTime"].as_u64().unwrap();

    // --- /apps filters ---------------------------------------------------------------------------
    let all = ids(&api.ok("/ws/v1/cluster/apps"));
    let mut expected = vec![app1.clone(), app2.clone(), app3.clone()];
    expected.sort();
    assert_eq!(all, expected);
    let f = |q: &str| ids(&api.ok(&format!("/ws/v1/cluster/apps?{q}")));
    assert_eq!(f("states=RUNNING"), vec![app2.clone()]);
    assert_eq!(f("states=accepted%2Crunning").len(), 2);
    assert_eq!(f("state=FAILED"), vec![app3.clone()]);
    assert_eq!(f("finalStatus=FAILED"), vec![app3.clone()]);
    assert_eq!(f("user=alice"), vec![app1.clone(), app3.clone()]);
    assert_eq!(f("queue=root.prod"), vec![app1.clone()]);
    assert_eq!(f("queue=dev"), vec![app3.clone()]);
    assert_eq!(f("name=fails"), vec![app3.clone()]);
    assert_eq!(f("applicationTypes=spark,BATCH").len(), 2);
    assert_eq!(f("applicationTypes=distributedshell"), vec![app2.clone()]);
    assert_eq!(f("applicationTags=etl"), vec![app1.clone()]);
    assert_eq!(f("applicationTags=nope"), Vec::<String>::new());
    assert_eq!(f("limit=1").len(), 1);
    assert_eq!(
        f(&format!("finishedTimeBegin={t3}&finishedTimeEnd={t3}")),
        vec![app3.clone()]
    );
    assert_eq!(
        f(&format!("startedTimeBegin={}", t3 + 3_600_000)),
        Vec::<String>::new()
    );
    assert_eq!(
        f("startedTimeBegin=0&startedTimeEnd=9999999999999").len(),
        3
    );
    assert_eq!(f("states=RUNNING&user=alice"), Vec::<String>::new());
    let lean = api.ok("/ws/v1/cluster/apps?deSelects=timeouts,amNodeLabelExpression");
    assert!(lean["apps"]["app"][0].get("timeouts").is_none(), "{lean}");
    assert!(lean["apps"]["app"][0]
        .get("amNodeLabelExpression")
        .is_none());
    assert!(lean["apps"]["app"][0]
        .get("appNodeLabelExpression")
        .is_some());
    for bad in [
        "states=SLEEPING",
        "finalStatus=GREAT",
        "limit=0",
        "limit=ten",
        "startedTimeBegin=-5",
        "finishedTimeBegin=10&finishedTimeEnd=5",
        "deSelects=everything",
    ] {
        let a = api.get(&format!("/ws/v1/cluster/apps?{bad}"));
        remote_exception(&a, 400, "BadRequestException");
    }

    // --- appstatistics -----------------------------------------------------------------------------
    let stats = api.ok("/ws/v1/cluster/appstatistics?states=accepted,running,failed,killed");
    let items = stats["appStatInfo"]["statItem"].as_array().unwrap();
    let count = |st: &str| {
        items
            .iter()
            .find(|i| i["state"] == st)
            .map(|i| (i["type"].clone(), i["count"].as_u64().unwrap()))
    };
    assert_eq!(items.len(), 4);
    assert_eq!(count("ACCEPTED"), Some((json!("*"), 1)));
    assert_eq!(count("RUNNING"), Some((json!("*"), 1)));
    assert_eq!(count("FAILED"), Some((json!("*"), 1)));
    assert_eq!(count("KILLED"), Some((json!("*"), 0)));
    let all_states = api.ok("/ws/v1/cluster/appstatistics");
    assert_eq!(
        all_states["appStatInfo"]["statItem"]
            .as_array()
            .map(Vec::len),
        Some(8)
    );
    let spark = api.ok("/ws/v1/cluster/appstatistics?applicationTypes=SPARK&states=ACCEPTED");
    assert_eq!(
        spark["appStatInfo"]["statItem"],
        json!([{"state": "ACCEPTED", "type": "spark", "count": 1}])
    );
    remote_exception(
        &api.get("/ws/v1/cluster/appstatistics?applicationTypes=a,b"),
        400,
        "BadRequestException",
    );
    remote_exception(
        &api.get("/ws/v1/cluster/appstatistics?states=nap"),
        400,
        "BadRequestException",
    );

    // --- metrics and scheduler with apps -------------------------------------------------------------
    let m = api.ok("/ws/v1/cluster/metrics")["clusterMetrics"].clone();
    assert_eq!(m["appsSubmitted"], 3);
    assert_eq!(m["appsPending"], 1);
    assert_eq!(m["appsRunning"], 1);
    assert_eq!(m["appsFailed"], 1);
    assert_eq!(
        (m["appsKilled"].as_u64(), m["appsCompleted"].as_u64()),
        (Some(0), Some(0))
    );
    let allocated = m["allocatedMB"].as_i64().unwrap();
    assert!(allocated >= 256 + 128, "{m}");
    assert_eq!(m["availableMB"].as_i64().unwrap() + allocated, 4096);
    assert!(m["containersAllocated"].as_u64() >= Some(3), "{m}");
    let sched = api.ok("/ws/v1/cluster/scheduler");
    let root = &sched["scheduler"]["schedulerInfo"]["rootQueue"];
    let prod = find_queue(root, "root.prod").unwrap();
    assert_eq!(prod["numActiveApps"], 1);
    assert_eq!(prod["usedResources"], json!({"memory": 256, "vCores": 1}));
    assert_eq!(prod["amUsedResources"], json!({"memory": 256, "vCores": 1}));
    assert_eq!(prod["allocatedContainers"], 1);
    assert_eq!(root["usedResources"]["memory"], allocated);
    assert!(
        find_queue(root, "root.default").unwrap()["fairResources"]["memory"].as_i64() > Some(0)
    );

    // --- attempts and containers ----------------------------------------------------------------------
    let attempts = api.ok(&format!("/ws/v1/cluster/apps/{app2}/appattempts"));
    let list = attempts["appAttempts"]["appAttempt"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    let at = &list[0];
    assert_eq!(at["id"], 1);
    let aid = at["appAttemptId"].as_str().unwrap().to_string();
    assert_eq!(aid, app2.replace("application_", "appattempt_") + "_000001");
    assert_eq!(at["nodeId"], node_id.as_str());
    assert_eq!(at["appAttemptState"], "RUNNING");
    let am_cid = at["containerId"].as_str().unwrap().to_string();
    assert!(am_cid.ends_with("_01_000001"), "{at}");
    let detail =
        api.ok(&format!("/ws/v1/cluster/apps/{app2}/appattempts/{aid}"))["appAttempt"].clone();
    assert_eq!(detail["appAttemptId"], aid.as_str());
    assert_eq!(detail["appAttemptState"], "RUNNING");
    assert_eq!(detail["amContainerId"], am_cid.as_str());
    assert!(
        detail["host"].is_string() && detail["rpcPort"].is_u64(),
        "{detail}"
    );
    let cs = api.ok(&format!(
        "/ws/v1/cluster/apps/{app2}/appattempts/{aid}/containers"
    ));
    let cl = cs["containers"]["container"].as_array().unwrap();
    assert_eq!(cl.len(), 2, "{cs}");
    assert_eq!(cl[0]["containerId"], am_cid.as_str());
    assert_eq!(cl[0]["assignedNodeId"], node_id.as_str());
    let worker = cl[1]["containerId"].as_str().unwrap().to_string();
    assert_eq!(cl[1]["allocatedMB"], 128);
    let one = api.ok(&format!(
        "/ws/v1/cluster/apps/{app2}/appattempts/{aid}/containers/{worker}"
    ));
    assert_eq!(one["container"]["containerId"], worker.as_str());
    let a404 = aid.replace("_000001", "_000002");
    remote_exception(
        &api.get(&format!("/ws/v1/cluster/apps/{app2}/appattempts/{a404}")),
        404,
        "NotFoundException",
    );
    remote_exception(
        &api.get(&format!("/ws/v1/cluster/apps/{app2}/appattempts/attempt_x")),
        400,
        "BadRequestException",
    );
    let other_attempt = app1.replace("application_", "appattempt_") + "_000001";
    remote_exception(
        &api.get(&format!(
            "/ws/v1/cluster/apps/{app2}/appattempts/{other_attempt}"
        )),
        400,
        "BadRequestException",
    );
    let gone = worker.replace("_000002", "_000099");
    remote_exception(
        &api.get(&format!(
            "/ws/v1/cluster/apps/{app2}/appattempts/{aid}/containers/{gone}"
        )),
        404,
        "NotFoundException",
    );
    let failed_attempts = api.ok(&format!("/ws/v1/cluster/apps/{app3}/appattempts"));
    let fa = &failed_attempts["appAttempts"]["appAttempt"][0];
    assert_eq!(fa["appAttemptState"], "FAILED");
    assert!(fa["finishedTime"].as_u64() > Some(0), "{fa}");

    // --- state, queue, priority, timeouts ---------------------------------------------------------------
    let base1 = format!("/ws/v1/cluster/apps/{app1}");
    assert_eq!(
        api.ok(&format!("{base1}/state")),
        json!({"state": "ACCEPTED"})
    );
    assert_eq!(
        api.ok(&format!("{base1}/queue")),
        json!({"queue": "root.prod"})
    );
    assert_eq!(api.ok(&format!("{base1}/priority")), json!({"priority": 3}));
    let p = api.put(&format!("{base1}/priority"), &json!({"priority": 5}));
    remote_exception(&p, 400, "BadRequestException");
    assert_eq!(api.ok(&format!("{base1}/priority")), json!({"priority": 3}));
    assert_eq!(
        api.put(&format!("{base1}/priority"), &json!({"priority": 3}))
            .status,
        200
    );
    let t = api.ok(&format!("{base1}/timeouts"));
    assert_eq!(t["timeouts"]["timeout"][0]["type"], "LIFETIME");
    assert_eq!(
        api.ok(&format!("{base1}/timeouts/LIFETIME"))["timeout"]["expiryTime"],
        "UNLIMITED"
    );
    remote_exception(
        &api.get(&format!("{base1}/timeouts/NAP")),
        400,
        "BadRequestException",
    );
    let moved = api.put(&format!("{base1}/queue"), &json!({"queue": "root.dev"}));
    assert_eq!(
        (moved.status, moved.body.clone()),
        (200, json!({"queue": "root.dev"}))
    );
    let refused = api.put(&format!("{base1}/queue"), &json!({"queue": "root.nosuch"}));
    remote_exception(&refused, 400, "BadRequestException");
    assert_eq!(
        api.ok(&format!("{base1}/queue")),
        json!({"queue": "root.dev"})
    );
    let bad = api.send("PUT", &format!("{base1}/queue"), "{not json");
    remote_exception(&bad, 400, "BadRequestException");

    // --- admin refresh-queues: a new file applies at once; a bad one is refused ----------------------
    std::fs::write(c.path("fair-scheduler.xml"), ACL_ALLOCATIONS).unwrap();
    let r = api.put("/ws/v1/cluster/admin/refresh-queues", &json!({}));
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.body["refreshQueues"]["reloaded"], true);
    let root_after =
        api.ok("/ws/v1/cluster/scheduler")["scheduler"]["schedulerInfo"]["rootQueue"].clone();
    let ops = find_queue(&root_after, "root.ops").expect("root.ops after the refresh");
    assert_eq!(ops["maxApps"], 3);
    std::fs::write(
        c.path("fair-scheduler.xml"),
        "<allocations>\n  <queue name=\"broken\">\n    <maxRunningApps>lots</maxRunningApps>\n  </queue>\n</allocations>\n",
    )
    .unwrap();
    let r = api.put("/ws/v1/cluster/admin/refresh-queues", &json!({}));
    let msg = remote_exception(&r, 400, "BadRequestException");
    assert!(
        msg.contains("fair-scheduler.xml") && msg.contains("line 3"),
        "{msg}"
    );
    let root_kept =
        api.ok("/ws/v1/cluster/scheduler")["scheduler"]["schedulerInfo"]["rootQueue"].clone();
    assert!(
        find_queue(&root_kept, "root.ops").is_some(),
        "old queues kept"
    );
    assert!(find_queue(&root_kept, "root.broken").is_none());

    // --- kill: ACL-checked, refused kills change nothing ----------------------------------------------
    let k = api.put(
        &format!("{base1}/state?user.name=mallory"),
        &json!({"state": "KILLED"}),
    );
    remote_exception(&k, 403, "ForbiddenException");
    assert_eq!(
        api.ok(&format!("{base1}/state")),
        json!({"state": "ACCEPTED"})
    );
    let k = api.put(
        &format!("{base1}/state?user.name=carol"),
        &json!({"state": "RUNNING"}),
    );
    let m = remote_exception(&k, 400, "BadRequestException");
    assert!(m.contains("KILLED"), "{m}");
    let k = api.send("PUT", &format!("{base1}/state?user.name=carol"), "{");
    remote_exception(&k, 400, "BadRequestException");
    assert_eq!(
        api.ok(&format!("{base1}/state")),
        json!({"state": "ACCEPTED"})
    );
    // Pseudo authentication: `user.name` answers set a hadoop.auth cookie; a request with
    // only that cookie acts as its user.
    let mallory = api.get("/ws/v1/cluster/info?user.name=mallory");
    let set = mallory.cookie.expect("a hadoop.auth cookie for user.name");
    assert!(set.starts_with("hadoop.auth=\"u=mallory&"), "{set}");
    assert!(api.get("/ws/v1/cluster/info").cookie.is_none());
    let as_mallory = set.split(';').next().unwrap().to_string();
    let k = api.put_with_cookie(
        &format!("{base1}/state"),
        &json!({"state": "KILLED"}),
        &as_mallory,
    );
    remote_exception(&k, 403, "ForbiddenException");
    assert_eq!(
        api.ok(&format!("{base1}/state")),
        json!({"state": "ACCEPTED"})
    );
    // carol administers root.dev, where app1 now is; her cookie is enough.
    let carol = api
        .get("/ws/v1/cluster/info?user.name=carol")
        .cookie
        .unwrap();
    let as_carol = carol.split(';').next().unwrap().to_string();
    let k = api.put_with_cookie(
        &format!("{base1}/state"),
        &json!({"state": "KILLED"}),
        &as_carol,
    );
    assert_eq!(
        (k.status, k.body.clone()),
        (200, json!({"state": "KILLED"}))
    );
    let killed = api.ok(&base1)["app"].clone();
    assert_eq!(killed["finalStatus"], "KILLED");
    assert!(
        killed["diagnostics"].as_str().unwrap().contains("carol"),
        "{killed}"
    );
    // Killing again is a no-op answered with the final state; moving a finished app is refused.
    let k = api.put(
        &format!("{base1}/state?user.name=carol"),
        &json!({"state": "KILLED"}),
    );
    assert_eq!(
        (k.status, k.body.clone()),
        (200, json!({"state": "KILLED"}))
    );
    remote_exception(
        &api.put(&format!("{base1}/queue"), &json!({"queue": "root.prod"})),
        400,
        "BadRequestException",
    );
    let k = api.put(
        &format!("/ws/v1/cluster/apps/{app2}/state?user.name=admin"),
        &json!({"state": "KILLED"}),
    );
    assert_eq!(k.status, 200, "{}", k.body);
    let _ = dshell.wait(MINUTE);
    let m = api.ok("/ws/v1/cluster/metrics")["clusterMetrics"].clone();
    assert_eq!(
        (m["appsKilled"].as_u64(), m["appsRunning"].as_u64()),
        (Some(2), Some(0))
    );
    assert_eq!(f("states=KILLED").len(), 2);

    // --- malformed ids, unknown things, other errors --------------------------------------------------
    let m = remote_exception(
        &api.get("/ws/v1/cluster/apps/application_bad"),
        400,
        "BadRequestException",
    );
    assert!(m.contains("application_bad"), "{m}");
    let unknown = format!("application_{cluster_ts}_9999");
    let m = remote_exception(
        &api.get(&format!("/ws/v1/cluster/apps/{unknown}")),
        404,
        "NotFoundException",
    );
    assert!(
        m.contains(&format!("app with id: {unknown} not found")),
        "{m}"
    );
    for sub in ["state", "queue", "priority", "appattempts", "timeouts"] {
        remote_exception(
            &api.get(&format!("/ws/v1/cluster/apps/{unknown}/{sub}")),
            404,
            "NotFoundException",
        );
    }
    remote_exception(
        &api.put(
            &format!("/ws/v1/cluster/apps/{unknown}/state"),
            &json!({"state": "KILLED"}),
        ),
        404,
        "NotFoundException",
    );
    remote_exception(
        &api.send("POST", "/ws/v1/cluster/apps", "{\"application-id\": "),
        400,
        "BadRequestException",
    );
    remote_exception(
        &api.send(
            "POST",
            "/ws/v1/cluster/apps",
            &json!({"application-name": "no id"}).to_string(),
        ),
        400,
        "BadRequestException",
    );
    for (method, path) in [
        ("POST", "/ws/v1/cluster/delegation-token"),
        ("DELETE", "/ws/v1/cluster/delegation-token"),
        ("POST", "/ws/v1/cluster/delegation-token/expiration"),
    ] {
        remote_exception(
            &api.send(method, path, "{\"renewer\":\"u\"}"),
            403,
            "ForbiddenException",
        );
    }
    remote_exception(&api.get("/ws/v1/cluster/nothing"), 404, "NotFoundException");
    assert_eq!(api.send("DELETE", "/ws/v1/cluster/apps", "").status, 405);
    // Nothing above changed the apps.
    assert_eq!(ids(&api.ok("/ws/v1/cluster/apps")), expected);
    assert_eq!(
        api.ok("/ws/v1/cluster/metrics")["clusterMetrics"]["appsSubmitted"],
        3
    );
}
