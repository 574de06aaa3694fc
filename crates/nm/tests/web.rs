//! The NodeManager's web service in-process: a container runs, then its app, its log files
//! and their contents are read over HTTP, bad and unknown ids get Hadoop's errors, and the
//! service stops with the NM. A fake RM hands the NM its key, so the test can start the
//! container with tokens.

use std::time::Duration;

mod common;

use common::*;
use serde_json::Value;
use weft_proto::v1::{
    ContainerLaunchContext, GetContainerStatusesRequest, Resource, StartContainerRequest,
    StartContainersRequest,
};

const WEB_APP: &str = "application_1700000000000_0001";
const CID: &str = "container_1700000000000_0001_01_000001";

fn get(base: &str, path: &str) -> (u16, String, String) {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = agent
        .get(&format!("http://{base}{path}"))
        .call()
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    let ctype = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = r.body_mut().read_to_string().unwrap_or_default();
    (r.status().as_u16(), ctype, body)
}

fn json(base: &str, path: &str) -> (u16, Value) {
    let (status, _, body) = get(base, path);
    let v = serde_json::from_str(&body).unwrap_or_else(|e| panic!("{path}: {e}: {body}"));
    (status, v)
}

fn remote_exception(base: &str, path: &str, status: u16, exception: &str) {
    let (got, v) = json(base, path);
    assert_eq!(got, status, "{path}: {v}");
    assert_eq!(v["RemoteException"]["exception"], exception, "{path}: {v}");
    assert!(v["RemoteException"]["message"].is_string(), "{path}: {v}");
    assert!(
        v["RemoteException"]["javaClassName"].is_string(),
        "{path}: {v}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_of_a_finished_container_are_served_safely() {
    let (nm, mut client, _events, dir) = started_nm(true).await;
    let node = nm.node_id().to_string();
    // A file next to the log root that no request may reach.
    std::fs::write(dir.path().join("secret"), "top secret").unwrap();
    let base = nm.web_address().expect("web service").to_string();

    let reply = client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![StartContainerRequest {
                    container_id: CID.into(),
                    application_id: WEB_APP.into(),
                    user: "alice".into(),
                    resource: Some(Resource::new(128, 1)),
                    container_launch_context: Some(ContainerLaunchContext {
                        command: vec![
                            "echo \"web port $NM_HTTP_PORT\"; echo 0123456789; echo oops >&2; \
                         ln -s ../../../secret <LOG_DIR>/escape"
                                .into(),
                        ],
                        ..Default::default()
                    }),
                    container_token: container_token(CID, &node),
                }],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.succeeded_requests, vec![CID.to_string()]);
    let mut done = false;
    for _ in 0..200 {
        let s = client
            .get_container_statuses(as_am(
                GetContainerStatusesRequest {
                    container_id: vec![CID.into()],
                },
                &node,
            ))
            .await
            .unwrap()
            .into_inner();
        if s.status.first().is_some_and(|s| s.exit_status == 0) {
            done = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(done, "the container did not finish");

    let base2 = base.clone();
    tokio::task::spawn_blocking(move || {
        let base = base2.as_str();
        let port = base.rsplit(':').next().unwrap();

        let (status, v) = json(base, "/ws/v1/node/info");
        assert_eq!(status, 200);
        assert_eq!(v["nodeInfo"]["nodeHostName"], "testhost");
        assert!(v["nodeInfo"]["id"]
            .as_str()
            .unwrap()
            .starts_with("testhost:"));
        assert_eq!(v["nodeInfo"]["totalPmemAllocatedContainersMB"], 4096);
        assert_eq!(
            json(base, "/ws/v1/node").1["nodeInfo"]["id"],
            v["nodeInfo"]["id"]
        );

        let (status, v) = json(base, &format!("/ws/v1/node/apps/{WEB_APP}"));
        assert_eq!(status, 200, "{v}");
        assert_eq!(v["app"]["id"], WEB_APP);
        assert_eq!(v["app"]["user"], "alice");
        assert_eq!(v["app"]["state"], "FINISHED");
        assert_eq!(v["app"]["containerids"], serde_json::json!([CID]));
        let (_, v) = json(base, "/ws/v1/node/apps");
        assert_eq!(v["apps"]["app"][0]["id"], WEB_APP);

        let (status, v) = json(base, "/ws/v1/node/containers");
        assert_eq!(status, 200);
        let c = &v["containers"]["container"][0];
        assert_eq!(c["id"], CID);
        assert_eq!(c["state"], "DONE");
        assert_eq!(c["exitCode"], 0);
        assert_eq!(
            c["containerLogFiles"],
            serde_json::json!(["stderr", "stdout"])
        );
        assert_eq!(
            c["containerLogsLink"],
            format!("http://{base}/node/containerlogs/{CID}/alice")
        );

        let (status, v) = json(base, &format!("/ws/v1/node/containers/{CID}/logs"));
        assert_eq!(status, 200, "{v}");
        let info = &v[0];
        assert_eq!(info["logAggregationType"], "LOCAL");
        assert_eq!(info["containerId"], CID);
        let stdout = format!("web port {port}\n0123456789\n");
        // The planted symlink leads out of the log dir: not listed.
        assert_eq!(
            info["containerLogInfo"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| (
                    f["fileName"].as_str().unwrap(),
                    f["fileSize"].as_str().unwrap()
                ))
                .collect::<Vec<_>>(),
            [
                ("stderr", "5"),
                ("stdout", stdout.len().to_string().as_str())
            ]
        );
        assert!(info["containerLogInfo"][0]["lastModifiedTime"]
            .as_str()
            .unwrap()
            .contains(" +0000 "));

        let (status, ctype, body) = get(base, &format!("/ws/v1/node/containerlogs/{CID}/stdout"));
        assert_eq!((status, body.as_str()), (200, stdout.as_str()));
        assert!(ctype.starts_with("text/plain"), "{ctype}");
        let tail = get(
            base,
            &format!("/ws/v1/node/containerlogs/{CID}/stdout?size=-5"),
        );
        assert_eq!(tail.2, "6789\n");
        let head = get(
            base,
            &format!("/ws/v1/node/containers/{CID}/logs/stdout?size=3"),
        );
        assert_eq!(head.2, "web");
        let page = get(base, &format!("/node/containerlogs/{CID}/alice")).2;
        assert!(
            page.contains("LogType:stderr\n") && page.contains("oops\n"),
            "{page}"
        );
        assert!(page.contains(&stdout), "{page}");
        assert!(!page.contains("top secret"), "{page}");

        let bad = "container_x";
        let unknown = "container_1700000000000_0003_01_000009";
        let logs = "/ws/v1/node/containerlogs";
        remote_exception(
            base,
            &format!("{logs}/{CID}/escape"),
            404,
            "NotFoundException",
        );
        remote_exception(
            base,
            &format!("{logs}/{CID}/..%2F..%2F..%2Fsecret"),
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            &format!("{logs}/{CID}/%2Fetc%2Fpasswd"),
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            &format!("{logs}/{CID}/nope"),
            404,
            "NotFoundException",
        );
        remote_exception(
            base,
            &format!("{logs}/{CID}/stdout?size=x"),
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            &format!("{logs}/{bad}/stdout"),
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            &format!("{logs}/{unknown}/stdout"),
            404,
            "NotFoundException",
        );
        remote_exception(
            base,
            &format!("/ws/v1/node/containers/{bad}/logs"),
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            &format!("/ws/v1/node/containers/{unknown}/logs"),
            404,
            "NotFoundException",
        );
        remote_exception(
            base,
            "/ws/v1/node/apps/application_1",
            400,
            "BadRequestException",
        );
        remote_exception(
            base,
            "/ws/v1/node/apps/application_1700000000000_0009",
            404,
            "NotFoundException",
        );
        remote_exception(base, "/ws/v1/node/nothing", 404, "NotFoundException");
    })
    .await
    .unwrap();

    // A log larger than the 256 MiB the NM once read into memory at most is streamed whole
    // (the chunk bound itself is checked in the NM's unit tests).
    let big = dir.path().join("logs").join(WEB_APP).join(CID).join("big");
    let len: u64 = (257 << 20) + 3;
    {
        use std::os::unix::fs::FileExt;
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(len).unwrap();
        f.write_at(b"end", len - 3).unwrap();
    }
    let base3 = base.clone();
    let (status, total, tail) = tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into();
        let url = format!("http://{base3}/node/containerlogs/{CID}/alice/big");
        let mut r = agent.get(&url).call().unwrap();
        let status = r.status().as_u16();
        let mut reader = r.body_mut().with_config().limit(u64::MAX).reader();
        let (mut total, mut tail, mut buf) = (0u64, Vec::new(), vec![0u8; 1 << 16]);
        loop {
            let n = std::io::Read::read(&mut reader, &mut buf).unwrap();
            if n == 0 {
                break;
            }
            total += n as u64;
            tail.extend_from_slice(&buf[..n]);
            let keep = tail.len().saturating_sub(3);
            tail.drain(..keep);
        }
        (status, total, tail)
    })
    .await
    .unwrap();
    assert_eq!((status, total, &tail[..]), (200, len, &b"end"[..]));

    nm.shutdown().await;
    let refused = std::net::TcpStream::connect(&base).is_err();
    assert!(refused, "the web service outlived the NM");
}
