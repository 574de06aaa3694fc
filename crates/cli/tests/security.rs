//! Attacks on a real cluster (`weft rm` and `weft nm` processes on 127.0.0.1, ephemeral
//! ports), each refused: what issue 18 found an outsider or a careless user could do.

#[path = "cluster/harness.rs"]
#[allow(dead_code)]
mod harness;

use std::time::Duration;

use harness::{Cluster, Options};
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::{
    ContainerLaunchContext, Resource, StartContainerRequest, StartContainersRequest,
    StopContainersRequest,
};

const MINUTE: Duration = Duration::from_secs(60);

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// The NM's container-management address from its node id (`localhost:<port>`).
fn cm_address(node_id: &str) -> String {
    let port = node_id.rsplit_once(':').expect("host:port").1;
    format!("http://127.0.0.1:{port}")
}

#[test]
fn an_nm_starts_and_stops_only_what_the_rm_granted() {
    let c = Cluster::start(1, 4096, &Options::default());
    let work = c.path("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let marker = work.join("intruder.ran");
    let rt = runtime();
    let address = cm_address(&c.nms[0].node_id);
    rt.block_on(async {
        let mut nm = tokio::time::timeout(MINUTE, ContainerManagementClient::connect(address))
            .await
            .expect("connect in time")
            .expect("connect");
        // An invented container with a 1 TB ask and no tokens at all.
        let start = StartContainersRequest {
            start_container_request: vec![StartContainerRequest {
                container_id: "container_1700000000000_0001_01_000009".into(),
                application_id: "application_1700000000000_0001".into(),
                user: "root".into(),
                resource: Some(Resource::new(1 << 20, 1)),
                container_launch_context: Some(ContainerLaunchContext {
                    command: vec![format!("id > {}", marker.display())],
                    ..Default::default()
                }),
                container_token: String::new(),
            }],
        };
        let err = nm.start_containers(start).await.unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::Unauthenticated,
            "{}",
            err.message()
        );
        let err = nm
            .stop_containers(StopContainersRequest {
                container_id: vec!["container_1700000000000_0001_01_000001".into()],
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::Unauthenticated,
            "{}",
            err.message()
        );
    });
    std::thread::sleep(Duration::from_millis(500));
    assert!(!marker.exists(), "the NM ran a container nobody granted");

    // The RM's AM launch and the AM's own starts carry valid tokens.
    let cmd = format!("touch {}/$CONTAINER_ID.ran", work.display());
    let mut d = c.dshell(
        "granted",
        &[
            "-num_containers",
            "2",
            "-container_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let status = d.wait(MINUTE);
    assert!(status.success(), "dshell failed:\n{}", d.output());
    let ran = std::fs::read_dir(&work)
        .expect("work dir")
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().ends_with(".ran"))
        .count();
    assert_eq!(ran, 2, "{}", d.output());
}

/// The pids the containers recorded as `<work>/*.pid`.
fn wait_pids(c: &Cluster, n: usize) -> Vec<i32> {
    let work = c.path("work");
    harness::wait_for(MINUTE, &format!("{n} running containers"), || {
        let pids = Cluster::recorded_pids(&work);
        (pids.len() >= n && pids.iter().all(|p| harness::alive(*p))).then_some(pids)
    })
}

#[test]
fn after_an_rm_and_nm_restart_a_lost_am_is_retried_at_once_and_leftovers_die() {
    // A 10-minute AM expiry, as YARN's default: the retry must not wait for it.
    let opts = Options {
        am_expiry_ms: 600_000,
        ..Options::default()
    };
    let mut c = Cluster::start(1, 4096, &opts);
    let work = c.path("work");
    std::fs::create_dir_all(&work).expect("work dir");
    let cmd = format!(
        "echo $$ > {}/$CONTAINER_ID.pid; exec sleep 300",
        work.display()
    );
    let mut d = c.dshell(
        "long",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-shell_command",
            &cmd,
        ],
    );
    let id = c.submitted_app(&mut d);
    let pids = wait_pids(&c, 1);
    let first = c.wait_app_state(&id, &["RUNNING"], MINUTE)["currentAppAttemptId"].clone();

    // Both daemons die; the containers (the AM and the task) run on, orphaned.
    c.kill9_rm();
    c.kill9_and_restart_nm(0);
    // The restarted NM killed what its previous run left.
    harness::wait_for(
        Duration::from_secs(10),
        "the leftover container to die",
        || (!harness::alive(pids[0])).then_some(()),
    );
    c.restart_rm();
    c.wait_nodes_running(1);
    // The AM's node re-registered without the AM: attempt 2 starts within 30 s, not after
    // the 10-minute expiry.
    let next = harness::wait_for(Duration::from_secs(30), "a second attempt", || {
        let app = c.app(&id);
        (app["currentAppAttemptId"] != first).then_some(app)
    });
    assert!(
        next["currentAppAttemptId"]
            .as_str()
            .is_some_and(|a| a.ends_with("_000002")),
        "{next}"
    );
    let (_, attempts) = c.get(&format!("/ws/v1/cluster/apps/{id}/appattempts"));
    assert_eq!(
        attempts["appAttempts"]["appAttempt"][0]["appAttemptState"], "FAILED",
        "{attempts}"
    );
}

#[test]
fn a_fake_nm_cannot_take_over_redirect_or_remove_a_live_node() {
    use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
    use weft_proto::v1::{
        NodeHeartbeatRequest, RegisterNodeManagerRequest, UnRegisterNodeManagerRequest,
    };
    let mut c = Cluster::start(1, 4096, &Options::default());
    let node = c.nms[0].node_id.clone();
    let rt = runtime();
    rt.block_on(async {
        let mut rm = tokio::time::timeout(
            MINUTE,
            ResourceTrackerClient::connect(format!("http://{}", c.tracker)),
        )
        .await
        .expect("connect in time")
        .expect("connect");
        let err = rm
            .register_node_manager(RegisterNodeManagerRequest {
                node_id: node.clone(),
                address: "127.0.0.1:1".into(),
                total_capability: Some(Resource::new(1 << 30, 10_000)),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::PermissionDenied,
            "{}",
            err.message()
        );
        let err = rm
            .node_heartbeat(NodeHeartbeatRequest {
                node_id: node.clone(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::PermissionDenied,
            "{}",
            err.message()
        );
        let err = rm
            .un_register_node_manager(UnRegisterNodeManagerRequest {
                node_id: node.clone(),
                node_secret: "guess".into(),
            })
            .await
            .unwrap_err();
        assert_eq!(
            err.code(),
            tonic::Code::PermissionDenied,
            "{}",
            err.message()
        );
    });
    let n = c.node(&node).expect("the node");
    assert_eq!(n["state"], "RUNNING", "{n}");
    assert_eq!(n["totalResource"]["memory"], 4096, "{n}");
    // The real NM still heartbeats, and runs what it is given.
    let mut d = c.dshell(
        "after",
        &[
            "-num_containers",
            "1",
            "-container_memory",
            "128",
            "-shell_command",
            "true",
        ],
    );
    assert!(d.wait(MINUTE).success(), "{}", d.output());
    // The NM itself, restarted while the RM still holds its node, takes the id back with the
    // secret it kept.
    c.kill9_and_restart_nm(0);
    harness::wait_for(
        Duration::from_secs(20),
        "the restarted NM to register",
        || {
            c.nms[0]
                .proc
                .output()
                .contains("registered with the RM")
                .then_some(())
        },
    );
}
