//! ApplicationClientProtocol over Hadoop IPC against the RM in-process (127.0.0.1, ephemeral
//! ports), with Weft's own Hadoop IPC client: every answered method, the exceptions Hadoop's
//! clients re-create, the ACLs and placement the REST API applies.

use std::path::Path;

use weft_hadoop_ipc::client::{Client, ClientError};
use weft_hadoop_ipc::{exception, RpcError};
use weft_proto::hadoop::yarn::*;
use weft_proto::hadoop::{self as wire, CLIENT_PROTOCOL};
use weft_rm::{RmArgs, RunningRm};
use weft_types::Resource;

const ALLOCATIONS: &str = r#"<allocations>
  <queue name="root">
    <aclSubmitApps> </aclSubmitApps>
    <aclAdministerApps> </aclAdministerApps>
    <queue name="default"><aclSubmitApps>*</aclSubmitApps></queue>
    <queue name="other"><aclSubmitApps>*</aclSubmitApps></queue>
    <queue name="restricted"><aclSubmitApps>alice</aclSubmitApps></queue>
  </queue>
</allocations>"#;

async fn start(dir: &Path) -> RunningRm {
    let alloc = dir.join("fair-scheduler.xml");
    std::fs::write(&alloc, ALLOCATIONS).unwrap();
    let config = dir.join("rm.toml");
    std::fs::write(&config, "[properties]\n\"yarn.admin.acl\" = \"admin\"\n").unwrap();
    let args = RmArgs {
        config: Some(config),
        allocations: Some(alloc),
        data_dir: Some(dir.join("data")),
        client_address: Some("127.0.0.1:0".into()),
        scheduler_address: Some("127.0.0.1:0".into()),
        tracker_address: Some("127.0.0.1:0".into()),
        web_address: Some("127.0.0.1:0".into()),
        ..RmArgs::default()
    };
    weft_rm::start(args).await.unwrap()
}

async fn client(rm: &RunningRm, user: &str) -> Client {
    Client::connect(rm.client, user, CLIENT_PROTOCOL)
        .await
        .unwrap()
}

fn remote(e: ClientError) -> RpcError {
    match e {
        ClientError::Remote(e) => e,
        other => panic!("expected an exception from the RM, got {other}"),
    }
}

fn submission(id: &ApplicationIdProto, queue: &str, memory: i64) -> SubmitApplicationRequestProto {
    SubmitApplicationRequestProto {
        application_submission_context: Some(ApplicationSubmissionContextProto {
            application_id: Some(*id),
            application_name: Some("probe".into()),
            queue: Some(queue.into()),
            am_container_spec: Some(ContainerLaunchContextProto {
                command: vec!["/bin/true".into()],
                ..Default::default()
            }),
            resource: Some(wire::resource_proto(Resource::new(memory, 1))),
            application_type: Some("SPARK".into()),
            application_tags: vec!["Probe".into()],
            max_app_attempts: Some(1),
            ..Default::default()
        }),
    }
}

async fn new_app(c: &mut Client) -> GetNewApplicationResponseProto {
    c.call("getNewApplication", &GetNewApplicationRequestProto {})
        .await
        .unwrap()
}

async fn report(
    c: &mut Client,
    id: &ApplicationIdProto,
) -> Result<ApplicationReportProto, ClientError> {
    let r: GetApplicationReportResponseProto = c
        .call(
            "getApplicationReport",
            &GetApplicationReportRequestProto {
                application_id: Some(*id),
            },
        )
        .await?;
    Ok(r.application_report.expect("a report"))
}

async fn list(c: &mut Client, req: GetApplicationsRequestProto) -> Vec<String> {
    let r: GetApplicationsResponseProto = c.call("getApplications", &req).await.unwrap();
    r.applications
        .iter()
        .map(|a| {
            wire::application_id(a.application_id.as_ref())
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_protocol_creates_submits_reports_moves_and_kills() {
    let dir = tempfile::tempdir().unwrap();
    let rm = start(dir.path()).await;
    let mut bob = client(&rm, "bob").await;

    let m: GetClusterMetricsResponseProto = bob
        .call("getClusterMetrics", &GetClusterMetricsRequestProto {})
        .await
        .unwrap();
    let m = m.cluster_metrics.unwrap();
    assert_eq!((m.num_node_managers, m.num_active_nms), (Some(0), Some(0)));

    let created = new_app(&mut bob).await;
    let id = created.application_id.unwrap();
    let text = wire::application_id(Some(&id)).unwrap().to_string();
    assert!(
        text.starts_with("application_") && text.ends_with("_0001"),
        "{text}"
    );
    assert!(created.maximum_capability.unwrap().memory.unwrap() > 0);

    let _: SubmitApplicationResponseProto = bob
        .call("submitApplication", &submission(&id, "root.default", 512))
        .await
        .unwrap();
    // A retried submission of the same id is answered as a success, as Hadoop's RM does.
    let _: SubmitApplicationResponseProto = bob
        .call("submitApplication", &submission(&id, "root.default", 512))
        .await
        .unwrap();

    let r = report(&mut bob, &id).await.unwrap();
    assert_eq!(r.application_id, Some(id));
    assert_eq!(r.user.as_deref(), Some("bob"));
    assert_eq!(r.queue.as_deref(), Some("root.default"));
    assert_eq!(r.name.as_deref(), Some("probe"));
    assert_eq!(r.application_type.as_deref(), Some("SPARK"));
    assert_eq!(r.application_tags, vec!["probe".to_string()]);
    assert_eq!((r.host.as_deref(), r.rpc_port), (Some("N/A"), Some(-1)));
    let state = r.yarn_application_state.unwrap();
    assert!(
        [
            YarnApplicationStateProto::Submitted as i32,
            YarnApplicationStateProto::Accepted as i32
        ]
        .contains(&state),
        "state {state}"
    );
    assert_eq!(
        r.final_application_status,
        Some(FinalApplicationStatusProto::AppUndefined as i32)
    );
    assert!(r.start_time.unwrap() > 0 && r.submit_time == r.start_time);
    assert_eq!(r.finish_time, Some(0));
    assert!(r
        .tracking_url
        .unwrap()
        .ends_with(&format!("/cluster/app/{text}")));
    assert!(r.app_resource_usage.is_some() && r.priority.is_some());
    assert!(r.diagnostics.is_some() && r.progress.is_some());

    // An unknown id is Hadoop's ApplicationNotFoundException; the connection goes on.
    let mut unknown = id;
    unknown.id = Some(999);
    let e = remote(report(&mut bob, &unknown).await.unwrap_err());
    assert_eq!(e.class_name, exception::APPLICATION_NOT_FOUND);
    assert!(e.message.contains("_0999"), "{}", e.message);

    // Filters.
    let all = GetApplicationsRequestProto::default();
    assert_eq!(list(&mut bob, all.clone()).await, vec![text.clone()]);
    let only = |f: fn(&mut GetApplicationsRequestProto)| {
        let mut r = all.clone();
        f(&mut r);
        r
    };
    assert_eq!(
        list(
            &mut bob,
            only(|r| r.application_types = vec!["spark".into()])
        )
        .await
        .len(),
        1
    );
    assert!(list(
        &mut bob,
        only(|r| r.application_types = vec!["MAPREDUCE".into()])
    )
    .await
    .is_empty());
    assert!(list(&mut bob, only(|r| r.users = vec!["alice".into()]))
        .await
        .is_empty());
    assert_eq!(
        list(&mut bob, only(|r| r.queues = vec!["default".into()]))
            .await
            .len(),
        1
    );
    assert!(list(
        &mut bob,
        only(|r| r.application_states = vec![YarnApplicationStateProto::Finished as i32])
    )
    .await
    .is_empty());
    assert_eq!(
        list(
            &mut bob,
            only(|r| r.application_tags = vec!["PROBE".into()])
        )
        .await
        .len(),
        1
    );
    assert!(list(&mut bob, only(|r| r.finish_begin = Some(1)))
        .await
        .is_empty());
    let mut alice = client(&rm, "alice").await;
    assert!(list(
        &mut alice,
        only(|r| r.scope = Some(ApplicationsRequestScopeProto::Own as i32))
    )
    .await
    .is_empty());
    assert_eq!(list(&mut alice, all.clone()).await.len(), 1);

    // Queues: the short name as YarnClient sends it, children and apps when asked.
    let q: GetQueueInfoResponseProto = bob
        .call(
            "getQueueInfo",
            &GetQueueInfoRequestProto {
                queue_name: Some("default".into()),
                include_applications: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let q = q.queue_info.unwrap();
    assert_eq!(q.queue_name.as_deref(), Some("default"));
    assert_eq!(q.queue_path.as_deref(), Some("root.default"));
    assert_eq!(q.state, Some(QueueStateProto::QRunning as i32));
    assert_eq!(q.applications.len(), 1);
    let root: GetQueueInfoResponseProto = bob
        .call(
            "getQueueInfo",
            &GetQueueInfoRequestProto {
                queue_name: Some("root".into()),
                include_child_queues: Some(true),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let children: Vec<_> = root
        .queue_info
        .unwrap()
        .child_queues
        .iter()
        .filter_map(|c| c.queue_name.clone())
        .collect();
    assert_eq!(children, ["default", "other", "restricted"]);
    let e = remote(
        bob.call::<_, GetQueueInfoResponseProto>(
            "getQueueInfo",
            &GetQueueInfoRequestProto {
                queue_name: Some("nope".into()),
                ..Default::default()
            },
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::IO);

    let nodes: GetClusterNodesResponseProto = bob
        .call("getClusterNodes", &GetClusterNodesRequestProto::default())
        .await
        .unwrap();
    assert!(nodes.node_reports.is_empty(), "no NM in this test");

    // Moves check the owner's submit ACL on the target, kills the caller's right.
    let move_to = |queue: &str| MoveApplicationAcrossQueuesRequestProto {
        application_id: id,
        target_queue: queue.into(),
    };
    let e = remote(
        bob.call::<_, MoveApplicationAcrossQueuesResponseProto>(
            "moveApplicationAcrossQueues",
            &move_to("restricted"),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::ACCESS_CONTROL, "{}", e.message);
    let _: MoveApplicationAcrossQueuesResponseProto = bob
        .call("moveApplicationAcrossQueues", &move_to("other"))
        .await
        .unwrap();
    assert_eq!(
        report(&mut bob, &id).await.unwrap().queue.as_deref(),
        Some("root.other")
    );

    let kill = KillApplicationRequestProto {
        application_id: Some(id),
        diagnostics: None,
    };
    let e = remote(
        alice
            .call::<_, KillApplicationResponseProto>("forceKillApplication", &kill)
            .await
            .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::ACCESS_CONTROL, "{}", e.message);
    let killed: KillApplicationResponseProto =
        bob.call("forceKillApplication", &kill).await.unwrap();
    assert_eq!(killed.is_kill_completed, Some(true));
    let r = report(&mut bob, &id).await.unwrap();
    assert_eq!(
        r.yarn_application_state,
        Some(YarnApplicationStateProto::Killed as i32)
    );
    assert_eq!(
        r.final_application_status,
        Some(FinalApplicationStatusProto::AppKilled as i32)
    );
    assert!(r.finish_time.unwrap() > 0);

    // Attempts and containers of the killed app; unknown ones are Hadoop's typed exceptions.
    let attempts: GetApplicationAttemptsResponseProto = bob
        .call(
            "getApplicationAttempts",
            &GetApplicationAttemptsRequestProto {
                application_id: Some(id),
            },
        )
        .await
        .unwrap();
    assert_eq!(attempts.application_attempts.len(), 1);
    let attempt = attempts.application_attempts[0]
        .application_attempt_id
        .unwrap();
    assert_eq!(attempt.attempt_id, Some(1));
    let one: GetApplicationAttemptReportResponseProto = bob
        .call(
            "getApplicationAttemptReport",
            &GetApplicationAttemptReportRequestProto {
                application_attempt_id: Some(attempt),
            },
        )
        .await
        .unwrap();
    assert_eq!(
        one.application_attempt_report
            .unwrap()
            .yarn_application_attempt_state,
        Some(YarnApplicationAttemptStateProto::AppAttemptKilled as i32)
    );
    let containers: GetContainersResponseProto = bob
        .call(
            "getContainers",
            &GetContainersRequestProto {
                application_attempt_id: Some(attempt),
            },
        )
        .await
        .unwrap();
    assert!(
        containers.containers.is_empty(),
        "no NM, so no container was allocated"
    );
    let mut other_attempt = attempt;
    other_attempt.attempt_id = Some(7);
    let e = remote(
        bob.call::<_, GetContainersResponseProto>(
            "getContainers",
            &GetContainersRequestProto {
                application_attempt_id: Some(other_attempt),
            },
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::APPLICATION_ATTEMPT_NOT_FOUND);
    let e = remote(
        bob.call::<_, GetContainerReportResponseProto>(
            "getContainerReport",
            &GetContainerReportRequestProto {
                container_id: Some(ContainerIdProto {
                    app_id: Some(id),
                    app_attempt_id: Some(attempt),
                    id: Some(1),
                }),
            },
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::CONTAINER_NOT_FOUND);

    // Refusals: too large an AM, a queue the user may not submit to, an unknown method.
    let big = new_app(&mut bob).await;
    let e = remote(
        bob.call::<_, SubmitApplicationResponseProto>(
            "submitApplication",
            &submission(
                big.application_id.as_ref().unwrap(),
                "root.default",
                1 << 40,
            ),
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(
        e.class_name,
        exception::INVALID_RESOURCE_REQUEST,
        "{}",
        e.message
    );
    // A placement refusal (here the submit ACL) is Hadoop's: the call succeeds and the app
    // ends FAILED with the reason in its diagnostics.
    let denied = new_app(&mut bob).await.application_id.unwrap();
    let _: SubmitApplicationResponseProto = bob
        .call(
            "submitApplication",
            &submission(&denied, "root.restricted", 512),
        )
        .await
        .unwrap();
    let r = report(&mut bob, &denied).await.unwrap();
    assert_eq!(
        r.yarn_application_state,
        Some(YarnApplicationStateProto::Failed as i32)
    );
    assert!(r.diagnostics.unwrap().contains("cannot submit"));
    let e = remote(
        bob.call::<_, GetClusterMetricsResponseProto>(
            "getDelegationToken",
            &GetClusterMetricsRequestProto {},
        )
        .await
        .unwrap_err(),
    );
    assert_eq!(e.class_name, exception::NO_SUCH_METHOD);
    let after: GetClusterMetricsResponseProto = bob
        .call("getClusterMetrics", &GetClusterMetricsRequestProto {})
        .await
        .unwrap();
    assert!(
        after.cluster_metrics.is_some(),
        "the connection is still usable"
    );
    rm.stop().await;
}
