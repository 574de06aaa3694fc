//! The NodeManager web service on a real cluster: found through the RM's `nodeHTTPAddress`,
//! it lists a finished dshell app's containers and their log files, serves their contents
//! (whole, or a tail with `?size=-N`), and answers bad and unknown ids and path-traversal
//! attempts with Hadoop's `RemoteException`. `weft up` gives each NM its own web address.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

use harness::{Cluster, Options};
use serde_json::Value;

const MINUTE: Duration = Duration::from_secs(60);
const MARKER: &str = "weft-nm-web-marker-0123456789";

fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into()
}

/// GET `http://{base}{path}`: (status, content type, body).
fn get(base: &str, path: &str) -> (u16, String, String) {
    let url = format!("http://{base}{path}");
    let mut r = agent()
        .get(&url)
        .call()
        .unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    (r.status().as_u16(), ctype, body)
}

fn get_json(base: &str, path: &str) -> (u16, Value) {
    let (status, _, body) = get(base, path);
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body:?}"));
    (status, v)
}

fn assert_remote_exception(base: &str, path: &str, status: u16, exception: &str) {
    let (got, v) = get_json(base, path);
    assert_eq!(got, status, "{path}: {v}");
    let e = &v["RemoteException"];
    assert_eq!(e["exception"], exception, "{path}: {v}");
    assert!(e["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
    assert!(
        e["javaClassName"]
            .as_str()
            .is_some_and(|j| j.ends_with(exception)),
        "{v}"
    );
}

#[test]
fn container_logs_are_served_by_the_node_manager() {
    let c = Cluster::start(1, 4096, &Options::default());
    let cmd = format!("echo {MARKER}");
    let mut d = c.dshell(
        "echo",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let app = c.submitted_app(&mut d);
    let status = d.wait(MINUTE);
    assert!(status.success(), "dshell failed:\n{}", d.output());

    // The RM knows where the node's web service is.
    let node = c.node(&c.nms[0].node_id).expect("the node");
    let base = node["nodeHTTPAddress"]
        .as_str()
        .expect("nodeHTTPAddress")
        .to_string();
    assert!(
        base.starts_with("127.0.0.1:") && !base.ends_with(":0"),
        "{node}"
    );

    let (status, v) = get_json(&base, "/ws/v1/node/info");
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["nodeInfo"]["id"], c.nms[0].node_id);

    // The finished app's containers: the AM (000001) and the two shell containers.
    let (status, v) = get_json(&base, &format!("/ws/v1/node/apps/{app}"));
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["app"]["id"], app.as_str());
    let ids: Vec<String> = v["app"]["containerids"]
        .as_array()
        .expect("containerids")
        .iter()
        .map(|c| c.as_str().expect("id").to_string())
        .collect();
    assert_eq!(ids.len(), 3, "{v}");
    assert!(ids[0].ends_with("_000001"), "{ids:?}");
    let shell = &ids[1..];

    let expected = format!("{MARKER}\n");
    for cid in shell {
        let (status, v) = get_json(&base, &format!("/ws/v1/node/containers/{cid}/logs"));
        assert_eq!(status, 200, "{v}");
        let info = &v.as_array().expect("a list of ContainerLogsInfo")[0];
        assert_eq!(info["containerId"], cid.as_str());
        assert_eq!(info["nodeId"], c.nms[0].node_id);
        assert_eq!(info["logAggregationType"], "LOCAL");
        let files: Vec<(String, String)> = info["containerLogInfo"]
            .as_array()
            .expect("containerLogInfo")
            .iter()
            .map(|f| {
                assert!(f["lastModifiedTime"].is_string(), "{f}");
                (
                    f["fileName"].as_str().expect("fileName").to_string(),
                    f["fileSize"].as_str().expect("fileSize").to_string(),
                )
            })
            .collect();
        assert_eq!(
            files,
            [
                ("stderr".to_string(), "0".to_string()),
                ("stdout".to_string(), expected.len().to_string())
            ],
            "{v}"
        );

        let (status, ctype, body) = get(&base, &format!("/ws/v1/node/containerlogs/{cid}/stdout"));
        assert_eq!(status, 200);
        assert!(ctype.starts_with("text/plain"), "{ctype}");
        assert_eq!(body, expected);
        let (_, _, tail) = get(
            &base,
            &format!("/ws/v1/node/containerlogs/{cid}/stdout?size=-5"),
        );
        assert_eq!(tail, "6789\n");
    }

    // Errors never reveal anything outside a container's log directory.
    let cid = &shell[0];
    let logs = "/ws/v1/node/containerlogs";
    for traversal in [
        format!("{logs}/{cid}/..%2F..%2F..%2Fnm-0.ready"),
        format!("{logs}/{cid}/%2Fetc%2Fpasswd"),
        format!("{logs}/{cid}/%2E%2E"),
    ] {
        assert_remote_exception(&base, &traversal, 400, "BadRequestException");
    }
    let unknown = format!("container_{}_01_000042", &app["application_".len()..]);
    let other_app = "application_1700000000000_9999";
    for (path, status, exception) in [
        (format!("{logs}/{cid}/nope"), 404, "NotFoundException"),
        (format!("{logs}/{unknown}/stdout"), 404, "NotFoundException"),
        (
            format!("{logs}/container_bogus/stdout"),
            400,
            "BadRequestException",
        ),
        (
            format!("{logs}/{cid}/stdout?size=ten"),
            400,
            "BadRequestException",
        ),
        (
            format!("/ws/v1/node/containers/{unknown}/logs"),
            404,
            "NotFoundException",
        ),
        (
            "/ws/v1/node/containers/bogus/logs".to_string(),
            400,
            "BadRequestException",
        ),
        (
            format!("/ws/v1/node/apps/{other_app}"),
            404,
            "NotFoundException",
        ),
        (
            "/ws/v1/node/apps/application_x".to_string(),
            400,
            "BadRequestException",
        ),
    ] {
        assert_remote_exception(&base, &path, status, exception);
    }
}

#[test]
fn weft_up_gives_every_node_manager_a_web_address() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut up, v) = harness::weft_up(dir.path(), &["--nms", "2", "--nm-memory-mb", "1024"]);
    let nodes = v["nodes"].as_array().expect("nodes");
    assert_eq!(nodes.len(), 2, "{v}");
    let out = up.output();
    let mut webs = Vec::new();
    for n in nodes {
        let web = n["web"].as_str().expect("web").to_string();
        assert!(out.contains(&format!("http://{web}/ws/v1/node")), "{out}");
        let (status, info) = get_json(&web, "/ws/v1/node");
        assert_eq!(status, 200, "{info}");
        assert_eq!(info["nodeInfo"]["id"], n["node_id"]);
        webs.push(web);
    }
    assert_ne!(webs[0], webs[1]);
    up.signal(nix::sys::signal::Signal::SIGTERM);
    assert!(up.wait(MINUTE).success(), "{}", up.output());
}
