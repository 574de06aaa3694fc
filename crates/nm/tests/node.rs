//! The NodeManager in-process against a fake resource tracker: register, heartbeat,
//! container management, completion reporting and acknowledgement, RESYNC, RM-driven
//! cleanup and shutdown.

mod common;

use std::path::Path;
use std::time::Duration;

use common::*;
use tokio::sync::mpsc;
use tonic::Code;
use weft_nm::{CgroupMode, NmConfig, NodeManager};
use weft_proto::auth::with_nm_token;
use weft_proto::exit_status;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::{
    ContainerLaunchContext, ContainerState, ContainerStatus, GetContainerStatusesRequest, Resource,
    StartContainerRequest, StartContainersRequest, StopContainersRequest,
};
use weft_tokens::{ContainerTokenIdentifier, MasterKey};

fn status_of<'a>(statuses: &'a [ContainerStatus], id: &str) -> Option<&'a ContainerStatus> {
    statuses.iter().find(|s| s.container_id == id)
}

async fn heartbeat_with_completed(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    id: &str,
) -> ContainerStatus {
    next_matching(rx, &format!("COMPLETE status of {id}"), |e| match e {
        Event::Heartbeat(hb) => status_of(&hb.container_statuses, id)
            .filter(|s| s.state == ContainerState::Complete as i32)
            .cloned(),
        _ => None,
    })
    .await
}

fn start_request(id: &str, node: &str, command: &str) -> StartContainerRequest {
    StartContainerRequest {
        container_id: id.into(),
        application_id: APP.into(),
        user: "alice".into(),
        resource: Some(Resource::new(128, 1)),
        container_launch_context: Some(ContainerLaunchContext {
            command: vec![command.into()],
            ..Default::default()
        }),
        container_token: container_token(id, node),
    }
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|t| {
        !matches!(
            t.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next()),
            Some("Z") | Some("X")
        )
    })
}

async fn read_pid(path: &Path) -> i32 {
    for _ in 0..400 {
        if let Ok(t) = std::fs::read_to_string(path) {
            if let Ok(pid) = t.trim().parse() {
                return pid;
            }
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never written", path.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn register_heartbeat_start_complete_resync_and_shutdown() {
    let (rm, mut events, script) = fake_tracker().await;
    let dir = tempfile::tempdir().unwrap();
    let nm = NodeManager::start(NmConfig {
        rm_tracker: rm.to_string(),
        bind: "127.0.0.1:0".parse().unwrap(),
        hostname: "testhost".into(),
        memory_mb: 4096,
        vcores: 4,
        rack: "/rack-a".into(),
        local_dir: dir.path().join("local"),
        log_dir: dir.path().join("logs"),
        cgroups: CgroupMode::disabled("test"),
        kill_grace: Duration::from_millis(250),
        monitor_interval: Duration::from_millis(100),
        web_bind: Some("127.0.0.1:0".parse().unwrap()),
        hadoop_bind: None,
        java_home: None,
    })
    .await
    .unwrap();

    // Registration carries the node's identity and capacity.
    let reg = next_matching(&mut events, "registration", |e| match e {
        Event::Registered(r) => Some(r),
        _ => None,
    })
    .await;
    assert_eq!(reg.node_id, format!("testhost:{}", nm.address().port()));
    assert_eq!(reg.node_id, nm.node_id());
    assert_eq!(reg.address, nm.address().to_string());
    let web = nm.web_address().expect("web service");
    assert!(
        web.starts_with("127.0.0.1:") && !web.ends_with(":0"),
        "{web}"
    );
    assert_eq!(reg.http_address, web);
    assert_eq!(reg.total_capability, Some(Resource::new(4096, 4)));
    assert_eq!(reg.rack, "/rack-a");
    assert!(reg.container_statuses.is_empty());
    // The key from the registration reply is held (and named in heartbeats) before any call.
    let hb = next_matching(&mut events, "first heartbeat", |e| match e {
        Event::Heartbeat(hb) => Some(hb),
        _ => None,
    })
    .await;
    assert_eq!(hb.last_known_master_key_id, Some(key().id));

    let node = nm.node_id().to_string();
    let mut client = ContainerManagementClient::connect(format!("http://{}", nm.address()))
        .await
        .unwrap();

    // Malformed as a whole: a clear error.
    let err = client
        .start_containers(as_am(StartContainersRequest::default(), &node))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::InvalidArgument);

    // One good and one bad container in the same request.
    let c1 = "container_1700000000000_0001_01_000001";
    let mut bad = start_request("container_1700000000000_0001_01_000099", &node, "true");
    bad.application_id = "application_1700000000000_0002".into();
    let reply = client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![start_request(c1, &node, "echo hi > out.txt"), bad],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.succeeded_requests, vec![c1.to_string()]);
    assert_eq!(reply.failed_requests.len(), 1);
    assert!(reply.failed_requests[0]
        .exception
        .contains("does not match"));

    // Its completion arrives in a heartbeat and the file it wrote is there.
    let done = heartbeat_with_completed(&mut events, c1).await;
    assert_eq!(done.exit_status, 0);
    assert_eq!(done.capability, Some(Resource::new(128, 1)));
    let work = dir
        .path()
        .join(format!("local/usercache/alice/appcache/{APP}/{c1}"));
    assert_eq!(
        std::fs::read_to_string(work.join("out.txt")).unwrap(),
        "hi\n"
    );

    // Starting the same container again is refused; the refused one never ran.
    let again = client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![start_request(c1, &node, "true")],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert!(again.succeeded_requests.is_empty());
    let statuses = client
        .get_container_statuses(as_am(
            GetContainerStatusesRequest {
                container_id: vec![c1.into(), "container_1700000000000_0001_01_000099".into()],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(statuses.status.len(), 1);
    assert_eq!(statuses.failed_requests.len(), 1);

    // Once the RM acknowledges it, it is no longer reported.
    script.lock().unwrap().acknowledge = vec![c1.into()];
    let mut quiet = 0;
    while quiet < 2 {
        let hb = next_matching(&mut events, "heartbeat", |e| match e {
            Event::Heartbeat(hb) => Some(hb),
            _ => None,
        })
        .await;
        if status_of(&hb.container_statuses, c1).is_none() {
            quiet += 1;
        } else {
            assert_eq!(quiet, 0, "an acknowledged completion was reported again");
        }
    }

    // A running container survives a RESYNC and is reported at re-registration.
    let c2 = "container_1700000000000_0001_01_000002";
    let reply = client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![start_request(c2, &node, "echo $$ > pid; sleep 300")],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(reply.succeeded_requests, vec![c2.to_string()]);
    let c2_pid = read_pid(
        &dir.path()
            .join(format!("local/usercache/alice/appcache/{APP}/{c2}/pid")),
    )
    .await;
    // Its RUNNING status goes out once; later heartbeats leave it out and count it, until the
    // RM asks for every status.
    next_matching(&mut events, "c2's RUNNING status", |e| match e {
        Event::Heartbeat(hb) => status_of(&hb.container_statuses, c2).map(|_| ()),
        _ => None,
    })
    .await;
    for _ in 0..2 {
        let hb = next_matching(&mut events, "heartbeat", |e| match e {
            Event::Heartbeat(hb) => Some(hb),
            _ => None,
        })
        .await;
        assert!(status_of(&hb.container_statuses, c2).is_none(), "{hb:?}");
        assert_eq!(hb.running_containers, Some(1));
    }
    script.lock().unwrap().send_all_next = true;
    next_matching(
        &mut events,
        "c2's status after the RM asked for all",
        |e| match e {
            Event::Heartbeat(hb) => status_of(&hb.container_statuses, c2).map(|_| ()),
            _ => None,
        },
    )
    .await;
    script.lock().unwrap().resync_next = true;
    let rereg = next_matching(&mut events, "re-registration", |e| match e {
        Event::Registered(r) => Some(r),
        _ => None,
    })
    .await;
    let running: Vec<_> = rereg
        .container_statuses
        .iter()
        .filter(|s| s.container_state == ContainerState::Running as i32)
        .map(|s| s.container_id.clone())
        .collect();
    assert_eq!(running, vec![c2.to_string()]);
    assert_eq!(rereg.running_applications, vec![APP.to_string()]);
    assert!(alive(c2_pid));
    // A new RM learns of it from the registration, and the first heartbeat reports it again.
    let first = next_matching(
        &mut events,
        "first heartbeat after re-registering",
        |e| match e {
            Event::Heartbeat(hb) => Some(hb),
            _ => None,
        },
    )
    .await;
    assert!(
        status_of(&first.container_statuses, c2).is_some(),
        "{first:?}"
    );

    // The AM stops it (an unknown id beside it fails alone).
    let stop = client
        .stop_containers(as_am(
            StopContainersRequest {
                container_id: vec![c2.into(), "container_1700000000000_0001_01_000077".into()],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(stop.succeeded_requests, vec![c2.to_string()]);
    assert_eq!(stop.failed_requests.len(), 1);
    let done = heartbeat_with_completed(&mut events, c2).await;
    assert_eq!(done.exit_status, exit_status::KILLED_BY_APPMASTER);
    assert!(!alive(c2_pid));

    // The RM asks for a container to be cleaned up.
    let c3 = "container_1700000000000_0001_01_000003";
    client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![start_request(c3, &node, "sleep 300")],
            },
            &node,
        ))
        .await
        .unwrap();
    script.lock().unwrap().cleanup_next = vec![c3.into()];
    let done = heartbeat_with_completed(&mut events, c3).await;
    assert_eq!(done.exit_status, exit_status::KILLED_BY_RESOURCEMANAGER);

    // Shutdown stops what still runs and unregisters.
    let c4 = "container_1700000000000_0001_01_000004";
    client
        .start_containers(as_am(
            StartContainersRequest {
                start_container_request: vec![start_request(
                    c4,
                    &node,
                    "echo $$ > pid; sleep 300 & sleep 300",
                )],
            },
            &node,
        ))
        .await
        .unwrap();
    let c4_pid = read_pid(
        &dir.path()
            .join(format!("local/usercache/alice/appcache/{APP}/{c4}/pid")),
    )
    .await;
    let node_id = node.clone();
    tokio::time::timeout(Duration::from_secs(20), nm.shutdown())
        .await
        .unwrap();
    let gone = next_matching(&mut events, "unregistration", |e| match e {
        Event::Unregistered(id) => Some(id),
        _ => None,
    })
    .await;
    assert_eq!(gone, node_id);
    assert!(!alive(c4_pid), "container outlived the NodeManager");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn container_calls_need_valid_tokens_and_touch_only_their_app() {
    let (nm, mut client, _events, dir) = started_nm(false).await;
    let node = nm.node_id().to_string();
    let c1 = "container_1700000000000_0001_01_000002";
    let marker = dir.path().join("ran");
    let cmd = format!("touch {}; sleep 300", marker.display());

    // No NM token, or one signed with another key, or one for another node: nothing runs.
    let err = client
        .start_containers(one(start_request(c1, &node, &cmd)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{}", err.message());
    let forged = nm_token_of(ATTEMPT, &node, &MasterKey::derive(78, 0));
    let err = client
        .start_containers(with_nm_token(one(start_request(c1, &node, &cmd)), &forged).unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::Unauthenticated, "{}", err.message());
    let elsewhere = nm_token_of(ATTEMPT, "otherhost:1", &key());
    let err = client
        .start_containers(with_nm_token(one(start_request(c1, &node, &cmd)), &elsewhere).unwrap())
        .await
        .unwrap_err();
    assert_eq!(err.code(), Code::PermissionDenied, "{}", err.message());

    // With a valid NM token, each bad container token is refused with its reason.
    let refused = |reply: weft_proto::v1::StartContainersResponse| {
        assert!(reply.succeeded_requests.is_empty());
        reply.failed_requests[0].exception.clone()
    };
    let mut invented = start_request(c1, &node, &cmd);
    invented.container_token.clear();
    let e = refused(
        client
            .start_containers(as_am(one(invented), &node))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(e.contains("no container token"), "{e}");
    let mut huge = start_request(c1, &node, &cmd);
    huge.resource = Some(Resource::new(1 << 20, 1));
    let e = refused(
        client
            .start_containers(as_am(one(huge), &node))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(e.contains("grants <memory:128"), "{e}");
    let mut expired = start_request(c1, &node, &cmd);
    expired.container_token = ContainerTokenIdentifier {
        container: c1.parse().unwrap(),
        node_id: node.clone(),
        user: "alice".into(),
        memory_mb: 128,
        vcores: 1,
        expiry_ms: now_ms() - 1,
        key_id: 0,
    }
    .issue(&key());
    let e = refused(
        client
            .start_containers(as_am(one(expired), &node))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(e.contains("expired"), "{e}");
    let other_app = "container_1700000000000_0002_01_000002";
    let mut theirs = start_request(other_app, &node, &cmd);
    theirs.application_id = "application_1700000000000_0002".into();
    let e = refused(
        client
            .start_containers(as_am(one(theirs), &node))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(e.contains("another application"), "{e}");
    let mut as_root = start_request(c1, &node, &cmd);
    as_root.user = "root".into();
    let e = refused(
        client
            .start_containers(as_am(one(as_root), &node))
            .await
            .unwrap()
            .into_inner(),
    );
    assert!(e.contains("issued to alice"), "{e}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!marker.exists(), "a refused container ran");

    // The real thing starts once; its token cannot start it again.
    let ok = client
        .start_containers(as_am(one(start_request(c1, &node, &cmd)), &node))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(ok.succeeded_requests, vec![c1.to_string()]);

    // Another application's NM token can neither stop nor query it.
    let app2 = nm_token_of("appattempt_1700000000000_0002_000001", &node, &key());
    let stop = client
        .stop_containers(
            with_nm_token(
                StopContainersRequest {
                    container_id: vec![c1.into()],
                },
                &app2,
            )
            .unwrap(),
        )
        .await
        .unwrap()
        .into_inner();
    assert!(stop.succeeded_requests.is_empty());
    assert!(stop.failed_requests[0]
        .exception
        .contains("another application"));
    let status = client
        .get_container_statuses(
            with_nm_token(
                GetContainerStatusesRequest {
                    container_id: vec![c1.into()],
                },
                &app2,
            )
            .unwrap(),
        )
        .await
        .unwrap()
        .into_inner();
    assert!(status.status.is_empty());
    let mine = client
        .get_container_statuses(as_am(
            GetContainerStatusesRequest {
                container_id: vec![c1.into()],
            },
            &node,
        ))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(mine.status[0].state, ContainerState::Running as i32);
    tokio::time::timeout(Duration::from_secs(20), nm.shutdown())
        .await
        .unwrap();
}

/// A process group standing in for a container a crashed NM left behind.
fn orphan_group() -> std::process::Child {
    use std::os::unix::process::CommandExt;
    std::process::Command::new("sleep")
        .arg("300")
        .process_group(0)
        .spawn()
        .unwrap()
}

fn start_time(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(19).unwrap().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_nm_kills_containers_a_previous_run_left_behind() {
    let (nm, mut client, _events, dir) = started_nm(false).await;
    let node = nm.node_id().to_string();
    let records = dir.path().join("local/nm-containers");

    // While a container runs its process group is on record; when it ends the record goes.
    let c1 = "container_1700000000000_0001_01_000002";
    client
        .start_containers(as_am(one(start_request(c1, &node, "sleep 300")), &node))
        .await
        .unwrap();
    let record = records.join(c1);
    let text = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(t) = std::fs::read_to_string(&record) {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("a record of the running container");
    let pgid: u32 = text.split_whitespace().next().unwrap().parse().unwrap();
    assert_eq!(text.split_whitespace().nth(1).unwrap(), start_time(pgid));
    tokio::time::timeout(Duration::from_secs(20), nm.shutdown())
        .await
        .unwrap();
    assert!(!record.exists(), "the record outlived its container");

    // Records left by a run that died: a live group is killed, a recycled pid is not.
    let mut left = orphan_group();
    let mut innocent = orphan_group();
    std::fs::create_dir_all(&records).unwrap();
    let c2 = "container_1700000000000_0001_01_000003";
    std::fs::write(
        records.join(c2),
        format!("{} {}\n", left.id(), start_time(left.id())),
    )
    .unwrap();
    std::fs::write(
        records.join("container_1700000000000_0001_01_000004"),
        format!("{} 1\n", innocent.id()),
    )
    .unwrap();
    let (rm, _events2, _script) = fake_tracker().await;
    let nm = NodeManager::start(NmConfig {
        rm_tracker: rm.to_string(),
        bind: "127.0.0.1:0".parse().unwrap(),
        hostname: "testhost".into(),
        memory_mb: 4096,
        vcores: 4,
        rack: "/rack-a".into(),
        local_dir: dir.path().join("local"),
        log_dir: dir.path().join("logs"),
        cgroups: CgroupMode::disabled("test"),
        kill_grace: Duration::from_millis(250),
        monitor_interval: Duration::from_millis(100),
        web_bind: None,
        hadoop_bind: None,
        java_home: None,
    })
    .await
    .unwrap();
    let status = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(s) = left.try_wait().unwrap() {
                return s;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the leftover was killed");
    assert!(!status.success());
    assert!(
        innocent.try_wait().unwrap().is_none(),
        "a recycled pid was killed"
    );
    assert!(std::fs::read_dir(&records).unwrap().next().is_none());
    innocent.kill().unwrap();
    let _ = innocent.wait();
    tokio::time::timeout(Duration::from_secs(20), nm.shutdown())
        .await
        .unwrap();
}
