//! Hadoop's ContainerManagementProtocol on a real NM registered with a real RM (both in
//! process, 127.0.0.1, ephemeral ports), called from Rust through `weft_hadoop_ipc`'s client
//! as Hadoop's NMClient calls it: connected as the attempt, container tokens whose password is
//! the RM's own token text. A valid start runs the command, a forged token is refused for that
//! container only, statuses and stops work, and a stopped container's process tree is gone.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_hadoop_ipc::client::{Client, ClientError};
use weft_hadoop_ipc::ErrorCode;
use weft_nm::{CgroupMode, NmConfig, NodeManager};
use weft_proto::auth::AmCredentials;
use weft_proto::hadoop::common::TokenProto;
use weft_proto::hadoop::yarn::{
    ContainerLaunchContextProto, ContainerStateProto, ContainerTypeProto,
    GetContainerStatusesRequestProto, GetContainerStatusesResponseProto,
    StartContainerRequestProto, StartContainersRequestProto, StartContainersResponseProto,
    StopContainersRequestProto, StopContainersResponseProto,
};
use weft_proto::hadoop::{container_id_proto, CONTAINER_MANAGEMENT_PROTOCOL};
use weft_proto::hadoop_tokens::{container_token, ContainerTokenContext};
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::{
    AllocateRequest, Container, RegisterApplicationMasterRequest, Resource, ResourceRequest,
};
use weft_rm::RmArgs;
use weft_tokens::{ContainerTokenIdentifier, MasterKey};
use weft_types::yarn_id::ContainerId;

const BOUND: Duration = Duration::from_secs(30);

async fn post(url: String, body: Option<Value>) -> Value {
    tokio::task::spawn_blocking(move || {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        let mut r = match body {
            Some(b) => agent.post(&url).send_json(&b),
            None => agent.post(&url).send_empty(),
        }
        .expect("the RM answers");
        assert!(r.status().is_success(), "{url}: {}", r.status());
        let text = r.body_mut().read_to_string().unwrap_or_default();
        serde_json::from_str(&text).unwrap_or(Value::Null)
    })
    .await
    .unwrap()
}

/// Polls (bounded) until `f` yields.
async fn eventually<T, F: std::future::Future<Output = Option<T>>>(
    what: &str,
    mut f: impl FnMut() -> F,
) -> T {
    let deadline = tokio::time::Instant::now() + BOUND;
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what} never happened"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The Hadoop container token the RM's AM protocol hands out for `weft_token` (the shared
/// convention of `weft_proto::hadoop_tokens`).
fn hadoop_token(weft_token: &str, node: &str) -> TokenProto {
    container_token(
        weft_token,
        &ContainerTokenContext {
            node,
            rm_identifier: 0,
            priority: 1,
            creation_ms: 0,
            container_type: ContainerTypeProto::Task,
        },
    )
    .expect("a well-formed Weft token")
}

fn start_request(token: TokenProto, command: &str) -> StartContainerRequestProto {
    StartContainerRequestProto {
        container_launch_context: Some(ContainerLaunchContextProto {
            command: vec![command.to_string()],
            ..Default::default()
        }),
        container_token: Some(token),
    }
}

fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(text) => !matches!(
            text.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next()),
            Some("Z") | Some("X")
        ),
        Err(_) => false,
    }
}

async fn read_pid(path: &Path) -> i32 {
    eventually("the container's pid file", move || async move {
        std::fs::read_to_string(path)
            .ok()
            .filter(|t| t.ends_with('\n'))
            .and_then(|t| t.trim().parse().ok())
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nmclient_calls_start_query_and_stop_containers_with_rm_issued_tokens() {
    let dir = tempfile::tempdir().unwrap();
    let rm = weft_rm::start(RmArgs {
        data_dir: Some(dir.path().join("rm")),
        scheduler_address: Some("127.0.0.1:0".into()),
        client_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ..RmArgs::default()
    })
    .await
    .unwrap();
    let nm = NodeManager::start(NmConfig {
        rm_tracker: rm.tracker.to_string(),
        bind: "127.0.0.1:0".parse().unwrap(),
        hostname: "127.0.0.1".into(),
        memory_mb: 4096,
        vcores: 4,
        rack: "/default-rack".into(),
        local_dir: dir.path().join("nm/local"),
        log_dir: dir.path().join("nm/logs"),
        cgroups: CgroupMode::disabled("test"),
        kill_grace: Duration::from_millis(250),
        monitor_interval: Duration::from_millis(100),
        web_bind: None,
        hadoop_bind: Some("127.0.0.1:0".parse().unwrap()),
        java_home: None,
    })
    .await
    .unwrap();
    let hadoop = nm.hadoop_address().expect("the NM serves Hadoop IPC");
    let hadoop_node = format!("127.0.0.1:{}", hadoop.port());

    // An app whose AM (on this NM) hands the test its credentials, then waits.
    let am_file = dir.path().join("am.txt");
    let base = format!("http://{}/ws/v1/cluster/apps", rm.web);
    let app = post(format!("{base}/new-application"), None).await;
    let app_id = app["application-id"].as_str().unwrap().to_string();
    post(
        base.clone(),
        Some(json!({
            "application-id": app_id,
            "application-name": "nmproto",
            "am-container-spec": {"commands": {"command": format!(
                "echo \"$APPLICATION_ATTEMPT_ID $WEFT_AM_TOKEN\" > {}; sleep 300",
                am_file.display()
            )}},
            "resource": {"memory": 256, "vCores": 1},
        })),
    )
    .await;
    let am_path = am_file.as_path();
    let (attempt_id, am_token) = eventually("the AM's credentials", move || async move {
        let text = std::fs::read_to_string(am_path).ok()?;
        let (a, t) = text.trim().split_once(' ')?;
        Some((a.to_string(), t.to_string()))
    })
    .await;
    let creds = AmCredentials {
        attempt_id: attempt_id.clone(),
        token: am_token,
    };
    let mut am = ApplicationMasterProtocolClient::connect(format!("http://{}", rm.scheduler))
        .await
        .unwrap();
    am.register_application_master(
        creds
            .request(RegisterApplicationMasterRequest::default())
            .unwrap(),
    )
    .await
    .unwrap();
    let ask = vec![ResourceRequest {
        priority: 1,
        resource_name: "*".into(),
        capability: Some(Resource::new(256, 1)),
        num_containers: 1,
        relax_locality: Some(true),
        ..Default::default()
    }];
    let mut asks = ask;
    let mut polls = 0; // bounded: 300 allocate calls, 100 ms apart
    let container: Container = loop {
        let request = AllocateRequest {
            ask: std::mem::take(&mut asks),
            ..Default::default()
        };
        let reply = am.allocate(creds.request(request).unwrap()).await.unwrap();
        if let Some(c) = reply.into_inner().allocated_containers.pop() {
            break c;
        }
        polls += 1;
        assert!(polls < 300, "no container was allocated");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let id: ContainerId = container.container_id.parse().unwrap();

    // NMClient connects as the attempt, always.
    let mut client = Client::connect(hadoop, &attempt_id, CONTAINER_MANAGEMENT_PROTOCOL)
        .await
        .unwrap();
    let pid_file = dir.path().join("child.pid");
    // Hadoop's quoting: `\$!` reaches the container's own shell as `$!`.
    let command = format!("sleep 300 & echo \\$! > {}; wait", pid_file.display());
    let forged_id = ContainerId {
        n: id.n + 100,
        ..id
    };
    let forged_text = ContainerTokenIdentifier {
        container: forged_id,
        node_id: nm.node_id().to_string(),
        user: "mallory".into(),
        memory_mb: 256,
        vcores: 1,
        expiry_ms: u64::MAX,
        key_id: 0,
    }
    .issue(&MasterKey::derive(4242, 0));
    let started: StartContainersResponseProto = client
        .call(
            "startContainers",
            &StartContainersRequestProto {
                start_container_request: vec![
                    start_request(
                        hadoop_token(&container.container_token, &hadoop_node),
                        &command,
                    ),
                    start_request(hadoop_token(&forged_text, &hadoop_node), "true"),
                ],
            },
        )
        .await
        .unwrap();
    assert_eq!(started.succeeded_requests, vec![container_id_proto(id)]);
    assert_eq!(started.failed_requests.len(), 1, "{started:?}");
    let failed = &started.failed_requests[0];
    assert_eq!(failed.container_id, Some(container_id_proto(forged_id)));
    let exception = failed.exception.clone().unwrap();
    assert_eq!(
        exception.class_name.as_deref(),
        Some("org.apache.hadoop.security.token.SecretManager$InvalidToken")
    );
    // The same token cannot start its container twice.
    let again: StartContainersResponseProto = client
        .call(
            "startContainers",
            &StartContainersRequestProto {
                start_container_request: vec![start_request(
                    hadoop_token(&container.container_token, &hadoop_node),
                    "true",
                )],
            },
        )
        .await
        .unwrap();
    assert!(again.succeeded_requests.is_empty());
    assert_eq!(again.failed_requests.len(), 1);

    let child = read_pid(&pid_file).await;
    assert!(process_alive(child));
    let query = GetContainerStatusesRequestProto {
        container_id: vec![container_id_proto(id)],
    };
    let statuses: GetContainerStatusesResponseProto =
        client.call("getContainerStatuses", &query).await.unwrap();
    assert_eq!(statuses.status.len(), 1, "{statuses:?}");
    assert_eq!(
        statuses.status[0].state,
        Some(ContainerStateProto::CRunning as i32)
    );

    // Another application's attempt sees and stops nothing of this one.
    let stranger = format!(
        "appattempt_{}_{:04}_000001",
        id.app.cluster_ts,
        id.app.seq + 1
    );
    let mut other = Client::connect(hadoop, &stranger, CONTAINER_MANAGEMENT_PROTOCOL)
        .await
        .unwrap();
    let denied: StopContainersResponseProto = other
        .call(
            "stopContainers",
            &StopContainersRequestProto {
                container_id: vec![container_id_proto(id)],
            },
        )
        .await
        .unwrap();
    assert!(denied.succeeded_requests.is_empty());
    let m = denied.failed_requests[0].exception.clone().unwrap();
    assert!(m.message.unwrap().contains("unauthorized"));
    assert!(process_alive(child));

    let stopped: StopContainersResponseProto = client
        .call(
            "stopContainers",
            &StopContainersRequestProto {
                container_id: vec![container_id_proto(id)],
            },
        )
        .await
        .unwrap();
    assert_eq!(stopped.succeeded_requests, vec![container_id_proto(id)]);
    let mut polls = 0; // bounded: 300 queries, 100 ms apart
    let status = loop {
        let mut reply: GetContainerStatusesResponseProto =
            client.call("getContainerStatuses", &query).await.unwrap();
        if let Some(s) = reply
            .status
            .pop()
            .filter(|s| s.state == Some(ContainerStateProto::CComplete as i32))
        {
            break s;
        }
        polls += 1;
        assert!(polls < 300, "the stopped container never completed");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(status.exit_status, Some(-105));
    assert!(
        !process_alive(child),
        "the container's child {child} survived"
    );

    // Calls the NM does not serve answer Hadoop's no-such-method error; the connection lives.
    let err = client
        .call::<_, StopContainersResponseProto>("signalToContainer", &query)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, ClientError::Remote(e) if e.code == ErrorCode::NoSuchMethod),
        "{err}"
    );
    let _: GetContainerStatusesResponseProto =
        client.call("getContainerStatuses", &query).await.unwrap();

    nm.shutdown().await;
    rm.stop().await;
}
