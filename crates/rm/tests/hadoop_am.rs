//! Hadoop's ApplicationMasterProtocol over Hadoop IPC against a real RM in-process (127.0.0.1,
//! ephemeral ports, a fake NM whose heartbeats the test drives, so allocation happens exactly
//! when a heartbeat says): the AM identified by its attempt id, register, absolute asks,
//! response ids (a repeat gets the last answer, an older id is out of sync), NM and container
//! tokens, releases, completed statuses, the per-answer cap, finish; and Weft's gRPC AM
//! service still answering on the same port.

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use prost::Message;
use serde_json::json;
use support::{post, FakeNm};
use tokio::runtime::Runtime;
use weft_hadoop_ipc::client::{Client, ClientError};
use weft_hadoop_ipc::{exception, RpcError};
use weft_proto::hadoop::yarn::*;
use weft_proto::hadoop::{self as wire, AM_PROTOCOL, CLIENT_PROTOCOL};
use weft_proto::hadoop_tokens;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::{
    ContainerState, ContainerStatus, NodeAction, NodeHealthStatus, NodeHeartbeatRequest,
    RegisterNodeManagerRequest,
};
use weft_types::Resource;

/// The per-answer cap the RM is configured with.
const CAP: usize = 5;
/// Where the fake NM says it serves Hadoop's ContainerManagementProtocol: the NodeId AMs see.
const HADOOP_NODE: &str = "127.0.0.1:45454";
const INVALID_AM_REQUEST: &str =
    "org.apache.hadoop.yarn.exceptions.InvalidApplicationMasterRequestException";
const NOT_REGISTERED: &str =
    "org.apache.hadoop.yarn.exceptions.ApplicationMasterNotRegisteredException";

fn remote(e: ClientError) -> RpcError {
    match e {
        ClientError::Remote(e) => e,
        other => panic!("expected an exception from the RM, got {other}"),
    }
}

/// One node, one launched (not yet registered) AM, and a Hadoop IPC connection as it.
struct Setup {
    rt: Runtime,
    rm: weft_rm::RunningRm,
    nm: FakeNm,
    am: Client,
    attempt: String,
    app: String,
    tracker: ResourceTrackerClient<tonic::transport::Channel>,
    node_id: String,
    secret: String,
    /// The response id the next allocate carries.
    response_id: i32,
    _dir: tempfile::TempDir,
}

impl Setup {
    fn start() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let rt = support::runtime();
        let rm = support::start_rm(&rt, dir.path(), CAP);
        let (nm, nm_addr) = support::serve_fake_nm(&rt);
        let node_id = format!("127.0.0.1:{}", nm_addr.port());
        let mut tracker = rt
            .block_on(ResourceTrackerClient::connect(format!(
                "http://{}",
                rm.tracker
            )))
            .unwrap();
        let registered = rt
            .block_on(tracker.register_node_manager(RegisterNodeManagerRequest {
                node_id: node_id.clone(),
                address: nm_addr.to_string(),
                http_address: "127.0.0.1:8042".into(),
                hadoop_address: HADOOP_NODE.into(),
                total_capability: Some(weft_proto::v1::Resource::new(64 * 1024, 64)),
                ..Default::default()
            }))
            .unwrap()
            .into_inner();
        let mut s = Setup {
            am: rt
                .block_on(Client::connect(rm.scheduler, "nobody", AM_PROTOCOL))
                .unwrap(),
            rt,
            rm,
            nm,
            attempt: String::new(),
            app: String::new(),
            tracker,
            node_id,
            secret: registered.node_secret,
            response_id: 0,
            _dir: dir,
        };
        (s.app, s.attempt) = s.submit_and_launch();
        s.am =
            s.rt.block_on(Client::connect(s.rm.scheduler, &s.attempt, AM_PROTOCOL))
                .unwrap();
        s
    }

    /// Submits an application (over REST) and heartbeats until its AM is launched: its id
    /// and attempt.
    fn submit_and_launch(&mut self) -> (String, String) {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        let base = format!("http://{}/ws/v1/cluster/apps", self.rm.web);
        let app = post(&agent, &format!("{base}/new-application"), None);
        let app = app["application-id"].as_str().unwrap().to_string();
        post(
            &agent,
            &base,
            Some(json!({
                "application-id": app,
                "application-name": "hadoop-am",
                "queue": "root.default",
                "am-container-spec": {"commands": {"command": "sleep 100"}},
                "resource": {"memory": 1024, "vCores": 1},
            })),
        );
        let mut polls = 0; // bounded: at most 200 heartbeats
        loop {
            self.heartbeat(Vec::new());
            let launched = self.nm.started.lock().unwrap().iter().find_map(|l| {
                let env = &l.container_launch_context.as_ref()?.environment;
                let attempt = env.get("APPLICATION_ATTEMPT_ID")?;
                attempt
                    .contains(&app[app.find('_')?..])
                    .then(|| attempt.clone())
            });
            if let Some(attempt) = launched {
                return (app, attempt);
            }
            polls += 1;
            assert!(polls < 200, "the AM of {app} was never launched");
        }
    }

    /// A node heartbeat (with `statuses`) once the scheduler's update has seen the latest
    /// asks (Fair serves demand as of its last update).
    fn heartbeat(&mut self, statuses: Vec<ContainerStatus>) {
        std::thread::sleep(Duration::from_millis(100));
        let reply = self
            .rt
            .block_on(self.tracker.node_heartbeat(NodeHeartbeatRequest {
                node_id: self.node_id.clone(),
                node_secret: self.secret.clone(),
                container_statuses: statuses,
                node_health_status: Some(NodeHealthStatus {
                    is_node_healthy: true,
                    ..Default::default()
                }),
                ..Default::default()
            }))
            .unwrap()
            .into_inner();
        assert_ne!(reply.node_action, NodeAction::Resync as i32);
    }

    fn call<Q: Message, R: Message + Default>(
        &mut self,
        method: &str,
        request: &Q,
    ) -> Result<R, RpcError> {
        self.rt
            .block_on(self.am.call(method, request))
            .map_err(remote)
    }

    fn register(&mut self) -> Result<RegisterApplicationMasterResponseProto, RpcError> {
        self.call(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto {
                host: Some("am-host".into()),
                rpc_port: Some(4040),
                tracking_url: Some("http://am-host:4040".into()),
            },
        )
    }

    /// One allocate with the next response id.
    fn allocate(&mut self, req: AllocateRequestProto) -> AllocateResponseProto {
        let req = AllocateRequestProto {
            response_id: Some(self.response_id),
            ..req
        };
        let reply: AllocateResponseProto = self.call("allocate", &req).unwrap();
        assert_eq!(reply.response_id, Some(self.response_id + 1));
        self.response_id += 1;
        reply
    }

    /// `*` asks (priority, absolute total) of 1 GB / 1 vcore containers.
    fn ask(&mut self, asks: &[(i32, i32)]) -> AllocateResponseProto {
        self.allocate(AllocateRequestProto {
            ask: asks.iter().map(|&(p, n)| any_ask(p, 1024, n)).collect(),
            ..Default::default()
        })
    }

    /// Allocate calls without asks until one brings nothing: every container, and the size
    /// of each answer.
    fn collect(&mut self) -> (Vec<ContainerProto>, Vec<usize>, Vec<NmTokenProto>) {
        let (mut all, mut sizes, mut tokens) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..100 {
            let reply = self.ask(&[]);
            tokens.extend(reply.nm_tokens);
            if reply.allocated_containers.is_empty() {
                return (all, sizes, tokens);
            }
            sizes.push(reply.allocated_containers.len());
            all.extend(reply.allocated_containers);
        }
        panic!("the grant never ran out");
    }

    fn app_report(&mut self) -> ApplicationReportProto {
        let id: weft_types::yarn_id::ApplicationId = self.app.parse().unwrap();
        let mut client = self
            .rt
            .block_on(Client::connect(self.rm.client, "probe", CLIENT_PROTOCOL))
            .unwrap();
        let reply: GetApplicationReportResponseProto = self
            .rt
            .block_on(client.call(
                "getApplicationReport",
                &GetApplicationReportRequestProto {
                    application_id: Some(wire::application_id_proto(id)),
                },
            ))
            .unwrap();
        reply.application_report.unwrap()
    }
}

fn any_ask(priority: i32, memory: i64, total: i32) -> ResourceRequestProto {
    ResourceRequestProto {
        priority: Some(wire::priority_proto(priority)),
        resource_name: Some("*".into()),
        capability: Some(wire::resource_proto(Resource::new(memory, 1))),
        num_containers: Some(total),
        relax_locality: Some(true),
        ..Default::default()
    }
}

fn ids(containers: &[ContainerProto]) -> BTreeSet<String> {
    containers
        .iter()
        .map(|c| wire::container_id(c.id.as_ref()).unwrap().to_string())
        .collect()
}

#[test]
fn an_am_registers_asks_absolute_totals_and_finishes() {
    let mut s = Setup::start();
    // Before registering, allocate and finish say so, as Hadoop's RM does.
    let early = s
        .call::<_, AllocateResponseProto>("allocate", &AllocateRequestProto::default())
        .unwrap_err();
    assert_eq!(early.class_name, NOT_REGISTERED, "{early}");
    assert!(early.message.contains("AM should re-register"), "{early}");
    // A caller that is not an attempt is refused.
    let mut stranger =
        s.rt.block_on(Client::connect(s.rm.scheduler, "alice", AM_PROTOCOL))
            .unwrap();
    let refused = remote(
        s.rt.block_on(stranger.call::<_, RegisterApplicationMasterResponseProto>(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto::default(),
        ))
        .unwrap_err(),
    );
    assert_eq!(refused.class_name, exception::ACCESS_CONTROL, "{refused}");

    let registered = s.register().unwrap();
    assert_eq!(registered.queue.as_deref(), Some("root.default"));
    let max = wire::resource(registered.maximum_capability.as_ref().unwrap());
    assert!(max.memory_mb() >= 1024, "{max:?}");
    assert_eq!(
        registered.scheduler_resource_types,
        vec![
            SchedulerResourceTypes::Memory as i32,
            SchedulerResourceTypes::Cpu as i32
        ]
    );
    let types: Vec<&str> = registered
        .resource_types
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(types, ["memory-mb", "vcores"]);
    let again = s.register().unwrap_err();
    assert_eq!(again.class_name, INVALID_AM_REQUEST, "{again}");
    assert!(again.message.contains("already registered"), "{again}");
    assert_eq!(s.app_report().yarn_application_state, Some(5), "RUNNING");

    // Ask 3 and lower the total to 1 before any node heartbeat: 1 comes.
    assert!(s.ask(&[(1, 3)]).allocated_containers.is_empty());
    s.ask(&[(1, 1)]);
    s.heartbeat(Vec::new());
    let (first, _, tokens) = s.collect();
    assert_eq!(first.len(), 1, "the lowered total, not the first");
    // The container as Hadoop's AMRMClient and NMClient read it, with the NM token of its
    // node (once: the node's token is not sent again).
    let c = &first[0];
    assert_eq!(c.priority.and_then(|p| p.priority), Some(1));
    let node = c.node_id.as_ref().unwrap();
    assert_eq!(format!("{}:{}", node.host(), node.port()), HADOOP_NODE);
    assert_eq!(c.node_http_address.as_deref(), Some("127.0.0.1:8042"));
    let token = c.container_token.as_ref().unwrap();
    assert_eq!(token.kind, hadoop_tokens::CONTAINER_TOKEN_KIND);
    assert_eq!(token.service, HADOOP_NODE);
    let identifier = hadoop_tokens::container_token_identifier(token).unwrap();
    assert_eq!(identifier.container_id, c.id);
    assert_eq!(identifier.nm_host_addr(), HADOOP_NODE);
    assert!(hadoop_tokens::weft_token_text(token, hadoop_tokens::CONTAINER_TOKEN_KIND).is_ok());
    assert_eq!(tokens.len(), 1, "{tokens:?}");
    let nm_node = tokens[0].node_id.as_ref().unwrap();
    assert_eq!(
        format!("{}:{}", nm_node.host(), nm_node.port()),
        HADOOP_NODE
    );
    let nm = tokens[0].token.as_ref().unwrap();
    assert_eq!(nm.service, HADOOP_NODE);
    assert_eq!(nm.kind, hadoop_tokens::NM_TOKEN_KIND);
    assert_eq!(
        hadoop_tokens::nm_token_identifier(nm)
            .unwrap()
            .app_attempt_id
            .map(|a| wire::attempt_id(Some(&a)).unwrap().to_string()),
        Some(s.attempt.clone())
    );

    // Once allocated, the RM's copy is zero: a total of 1 asks for exactly one more.
    s.ask(&[(1, 1)]);
    s.heartbeat(Vec::new());
    let (second, _, tokens) = s.collect();
    assert_eq!(second.len(), 1);
    assert!(tokens.is_empty(), "the node's NM token went out already");
    s.heartbeat(Vec::new());
    assert!(s.collect().0.is_empty(), "nothing more is outstanding");

    // A large grant comes over answers of at most CAP containers.
    s.ask(&[(2, 12)]);
    s.heartbeat(Vec::new());
    let (big, sizes, _) = s.collect();
    assert_eq!(sizes, vec![CAP, CAP, 2]);
    assert_eq!(ids(&big).len(), 12);

    // Releases and completions come back as completed statuses.
    let released = first[0].id.unwrap();
    let reply = s.allocate(AllocateRequestProto {
        release: vec![released],
        ..Default::default()
    });
    let mut completed = reply.completed_container_statuses;
    let exited = wire::container_id(second[0].id.as_ref()).unwrap();
    s.heartbeat(vec![ContainerStatus {
        container_id: exited.to_string(),
        state: ContainerState::Complete as i32,
        exit_status: 3,
        diagnostics: "exit 3".into(),
        capability: None,
    }]);
    for _ in 0..20 {
        if completed.len() >= 2 {
            break;
        }
        completed.extend(s.ask(&[]).completed_container_statuses);
        s.heartbeat(Vec::new());
    }
    let status_of = |id: &ContainerIdProto| {
        completed
            .iter()
            .find(|c| c.container_id.as_ref() == Some(id))
            .unwrap_or_else(|| panic!("no status for {id:?} in {completed:?}"))
    };
    let r = status_of(&released);
    assert_eq!(r.state, Some(ContainerStateProto::CComplete as i32));
    assert_eq!(
        r.exit_status,
        Some(-100),
        "ABORTED, as Hadoop reports a release"
    );
    let e = status_of(second[0].id.as_ref().unwrap());
    assert_eq!(
        (e.exit_status, e.diagnostics.as_deref()),
        (Some(3), Some("exit 3"))
    );

    // Finish: FINISHED with the AM's final status; a repeated finish is still "unregistered"
    // (AMRMClient loops until it is); the attempt takes no more calls.
    let finished: FinishApplicationMasterResponseProto = s
        .call(
            "finishApplicationMaster",
            &FinishApplicationMasterRequestProto {
                diagnostics: Some("done".into()),
                tracking_url: None,
                final_application_status: Some(FinalApplicationStatusProto::AppSucceeded as i32),
            },
        )
        .unwrap();
    assert_eq!(finished.is_unregistered, Some(true));
    let report = s.app_report();
    assert_eq!(report.yarn_application_state, Some(6), "FINISHED");
    assert_eq!(report.final_application_status, Some(1), "SUCCEEDED");
    let repeated: FinishApplicationMasterResponseProto = s
        .call(
            "finishApplicationMaster",
            &FinishApplicationMasterRequestProto::default(),
        )
        .unwrap();
    assert_eq!(repeated.is_unregistered, Some(true));
    let after = s
        .call::<_, AllocateResponseProto>(
            "allocate",
            &AllocateRequestProto {
                response_id: Some(s.response_id),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        after.class_name,
        exception::APPLICATION_ATTEMPT_NOT_FOUND,
        "{after}"
    );
}

#[test]
fn response_ids_repeat_the_last_answer_and_refuse_older_ones() {
    let mut s = Setup::start();
    s.register().unwrap();
    s.ask(&[(1, 2)]);
    s.heartbeat(Vec::new());
    let answer = s.ask(&[]);
    assert_eq!(answer.allocated_containers.len(), 2);
    // The AM lost that answer and sends the same call again: the same answer, not new work.
    let repeat: AllocateResponseProto = s
        .call(
            "allocate",
            &AllocateRequestProto {
                response_id: Some(s.response_id - 1),
                ..Default::default()
            },
        )
        .unwrap();
    assert_eq!(repeat, answer);
    // Further behind: out of sync, in the words Hadoop's AMRMClientRelayer parses to resync.
    let old = s
        .call::<_, AllocateResponseProto>(
            "allocate",
            &AllocateRequestProto {
                response_id: Some(s.response_id - 2),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(old.class_name, INVALID_AM_REQUEST, "{old}");
    assert!(
        old.message.contains(&format!(
            " expect responseId to be {} but get {}",
            s.response_id,
            s.response_id - 2
        )),
        "{old}"
    );
    // The sequence carries on where it was.
    assert!(s.ask(&[]).allocated_containers.is_empty());
    // Asks that cannot be one total are refused whole, with Hadoop's exception.
    let refused = s
        .call::<_, AllocateResponseProto>(
            "allocate",
            &AllocateRequestProto {
                ask: vec![any_ask(4, 1024, 1), any_ask(4, 2048, 1)],
                response_id: Some(s.response_id),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(refused.class_name, exception::INVALID_RESOURCE_REQUEST);
    assert!(refused.message.contains("priority 4"), "{refused}");
    let too_big = s
        .call::<_, AllocateResponseProto>(
            "allocate",
            &AllocateRequestProto {
                ask: vec![any_ask(5, 1 << 30, 1)],
                response_id: Some(s.response_id),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(too_big.class_name, exception::INVALID_RESOURCE_REQUEST);
    // A release of another application's container.
    let foreign = wire::container_id_proto(
        "container_1_0999_01_000002"
            .parse::<weft_types::yarn_id::ContainerId>()
            .unwrap(),
    );
    let release = s
        .call::<_, AllocateResponseProto>(
            "allocate",
            &AllocateRequestProto {
                release: vec![foreign],
                response_id: Some(s.response_id),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(
        release.class_name, "org.apache.hadoop.yarn.exceptions.InvalidContainerReleaseException",
        "{release}"
    );
}

#[test]
fn weft_s_grpc_am_service_shares_the_port() {
    let s = Setup::start();
    let mut grpc =
        s.rt.block_on(ApplicationMasterProtocolClient::connect(format!(
            "http://{}",
            s.rm.scheduler
        )))
        .unwrap();
    // No Weft AM credentials: the gRPC service itself refuses, so it answered.
    let refused =
        s.rt.block_on(grpc.register_application_master(
            weft_proto::v1::RegisterApplicationMasterRequest::default(),
        ))
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");
}

#[test]
fn an_am_connecting_as_its_submitter_is_taken_for_its_one_running_attempt() {
    let mut s = Setup::start();
    let user = s.app_report().user.unwrap();
    // As Spark's AM connects: the submitter's name, not the attempt's.
    s.am =
        s.rt.block_on(Client::connect(s.rm.scheduler, &user, AM_PROTOCOL))
            .unwrap();
    s.register().unwrap();
    s.ask(&[(1, 1)]);
    s.heartbeat(Vec::new());
    assert_eq!(s.collect().0.len(), 1);
    // A second application of the same user with its AM running: a new connection as the
    // user cannot say which it is; the first connection stays its attempt's.
    let (_, second) = s.submit_and_launch();
    let mut ambiguous =
        s.rt.block_on(Client::connect(s.rm.scheduler, &user, AM_PROTOCOL))
            .unwrap();
    let refused = remote(
        s.rt.block_on(ambiguous.call::<_, RegisterApplicationMasterResponseProto>(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto::default(),
        ))
        .unwrap_err(),
    );
    assert_eq!(refused.class_name, exception::ACCESS_CONTROL, "{refused}");
    assert!(
        refused.message.contains("has 2 applications") && refused.message.contains(&second),
        "{refused}"
    );
    assert!(s.ask(&[]).allocated_containers.is_empty());
    // The attempt id still names the second one.
    let mut named =
        s.rt.block_on(Client::connect(s.rm.scheduler, &second, AM_PROTOCOL))
            .unwrap();
    let registered: RegisterApplicationMasterResponseProto =
        s.rt.block_on(named.call(
            "registerApplicationMaster",
            &RegisterApplicationMasterRequestProto::default(),
        ))
        .unwrap();
    assert_eq!(registered.queue.as_deref(), Some("root.default"));
}
