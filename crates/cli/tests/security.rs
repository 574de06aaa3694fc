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
