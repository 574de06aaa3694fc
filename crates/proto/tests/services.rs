//! The generated services work over a real socket: a tiny in-process server on 127.0.0.1:0 and
//! generated clients, every wait bounded.

use std::time::Duration;

use prost::Message;
use tonic::transport::server::TcpIncoming;
use tonic::{Request, Response, Status};
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::application_master_protocol_server::{
    ApplicationMasterProtocol, ApplicationMasterProtocolServer,
};
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::container_management_server::{ContainerManagement, ContainerManagementServer};
use weft_proto::v1::*;

const TOKEN: &str = "secret-token";

struct Am;

fn check(request: &Request<impl Sized>) -> Result<(), Status> {
    match AmCredentials::from_request(request) {
        Some(c) if c.token == TOKEN => Ok(()),
        Some(_) => Err(Status::permission_denied("bad AM token")),
        None => Err(Status::unauthenticated("no AM credentials")),
    }
}

#[tonic::async_trait]
impl ApplicationMasterProtocol for Am {
    async fn register_application_master(
        &self,
        request: Request<RegisterApplicationMasterRequest>,
    ) -> Result<Response<RegisterApplicationMasterResponse>, Status> {
        check(&request)?;
        Ok(Response::new(RegisterApplicationMasterResponse {
            maximum_capability: Some(Resource::new(8192, 8)),
            queue: "root.default".to_string(),
            ..Default::default()
        }))
    }

    async fn allocate(
        &self,
        request: Request<AllocateRequest>,
    ) -> Result<Response<AllocateResponse>, Status> {
        check(&request)?;
        let req = request.into_inner();
        // One container per asked container, so the test sees the ask arrive intact.
        let allocated = req
            .ask
            .iter()
            .flat_map(|a| (0..a.num_containers).map(move |n| (a, n)))
            .map(|(a, n)| Container {
                container_id: format!("container_1_0001_01_{:06}", n + 2),
                node_id: "127.0.0.1:8041".to_string(),
                resource: a.capability.clone(),
                priority: a.priority,
                ..Default::default()
            })
            .collect();
        Ok(Response::new(AllocateResponse {
            response_id: req.response_id + 1,
            allocated_containers: allocated,
            ..Default::default()
        }))
    }

    async fn finish_application_master(
        &self,
        request: Request<FinishApplicationMasterRequest>,
    ) -> Result<Response<FinishApplicationMasterResponse>, Status> {
        check(&request)?;
        let req = request.into_inner();
        Ok(Response::new(FinishApplicationMasterResponse {
            is_unregistered: req.final_application_status() == FinalApplicationStatus::Succeeded,
        }))
    }
}

struct Nm;

#[tonic::async_trait]
impl ContainerManagement for Nm {
    async fn start_containers(
        &self,
        request: Request<StartContainersRequest>,
    ) -> Result<Response<StartContainersResponse>, Status> {
        let mut out = StartContainersResponse::default();
        for r in request.into_inner().start_container_request {
            let has_command = r
                .container_launch_context
                .is_some_and(|c| !c.command.is_empty());
            if has_command {
                out.succeeded_requests.push(r.container_id);
            } else {
                out.failed_requests.push(ContainerExceptionMap {
                    container_id: r.container_id,
                    exception: "no command".to_string(),
                });
            }
        }
        Ok(Response::new(out))
    }

    async fn stop_containers(
        &self,
        request: Request<StopContainersRequest>,
    ) -> Result<Response<StopContainersResponse>, Status> {
        Ok(Response::new(StopContainersResponse {
            succeeded_requests: request.into_inner().container_id,
            failed_requests: vec![],
        }))
    }

    async fn get_container_statuses(
        &self,
        request: Request<GetContainerStatusesRequest>,
    ) -> Result<Response<GetContainerStatusesResponse>, Status> {
        let status = request
            .into_inner()
            .container_id
            .into_iter()
            .map(|id| ContainerStatus {
                container_id: id,
                state: ContainerState::Complete as i32,
                exit_status: 0,
                ..Default::default()
            })
            .collect();
        Ok(Response::new(GetContainerStatusesResponse {
            status,
            failed_requests: vec![],
        }))
    }
}

#[test]
fn messages_round_trip_through_protobuf_bytes() {
    let mut launch = ContainerLaunchContext {
        command: vec!["bash".to_string(), "-c".to_string(), "echo hi".to_string()],
        ..Default::default()
    };
    launch.environment.insert("A".to_string(), "1".to_string());
    launch.local_resources.insert(
        "job.jar".to_string(),
        LocalResource {
            resource: "file:///tmp/job.jar".to_string(),
            size: 42,
            r#type: LocalResourceType::Archive as i32,
            ..Default::default()
        },
    );
    let msg = StartContainersRequest {
        start_container_request: vec![StartContainerRequest {
            container_id: "container_1_0001_01_000002".to_string(),
            application_id: "application_1_0001".to_string(),
            user: "alice".to_string(),
            resource: Some(Resource::new(1024, 2)),
            container_launch_context: Some(launch),
            container_token: String::new(),
        }],
    };
    let bytes = msg.encode_to_vec();
    let back = StartContainersRequest::decode(bytes.as_slice()).unwrap();
    assert_eq!(back, msg);
    let lr = &back.start_container_request[0]
        .container_launch_context
        .as_ref()
        .unwrap()
        .local_resources["job.jar"];
    assert_eq!(lr.r#type(), LocalResourceType::Archive);

    // Unset relax_locality must stay distinguishable from false (YARN's default is true).
    let ask = ResourceRequest::default();
    let ask = ResourceRequest::decode(ask.encode_to_vec().as_slice()).unwrap();
    assert_eq!(ask.relax_locality, None);
}

#[tokio::test]
async fn services_answer_over_loopback() {
    tokio::time::timeout(Duration::from_secs(20), async {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let server = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(ApplicationMasterProtocolServer::new(Am))
                .add_service(ContainerManagementServer::new(Nm))
                .serve_with_incoming(TcpIncoming::from(listener)),
        );
        let url = format!("http://{addr}");
        let mut am = ApplicationMasterProtocolClient::connect(url.clone())
            .await
            .unwrap();
        let creds = AmCredentials {
            attempt_id: "appattempt_1_0001_000001".to_string(),
            token: TOKEN.to_string(),
        };

        let reg = am
            .register_application_master(
                creds
                    .request(RegisterApplicationMasterRequest::default())
                    .unwrap(),
            )
            .await
            .unwrap()
            .into_inner();
        assert_eq!(reg.queue, "root.default");
        assert_eq!(reg.maximum_capability, Some(Resource::new(8192, 8)));

        let bad = AmCredentials {
            token: "wrong".to_string(),
            ..creds.clone()
        };
        let err = am
            .allocate(bad.request(AllocateRequest::default()).unwrap())
            .await
            .unwrap_err();
        assert_eq!(err.code(), tonic::Code::PermissionDenied);

        let alloc = am
            .allocate(
                creds
                    .request(AllocateRequest {
                        response_id: 4,
                        ask: vec![ResourceRequest {
                            priority: 1,
                            resource_name: "*".to_string(),
                            capability: Some(Resource::new(512, 1)),
                            num_containers: 3,
                            ..Default::default()
                        }],
                        ..Default::default()
                    })
                    .unwrap(),
            )
            .await
            .unwrap()
            .into_inner();
        assert_eq!(alloc.response_id, 5);
        assert_eq!(alloc.allocated_containers.len(), 3);
        assert_eq!(
            alloc.allocated_containers[2].resource,
            Some(Resource::new(512, 1))
        );

        let mut nm = ContainerManagementClient::connect(url).await.unwrap();
        let started = nm
            .start_containers(StartContainersRequest {
                start_container_request: vec![
                    StartContainerRequest {
                        container_id: "c1".to_string(),
                        container_launch_context: Some(ContainerLaunchContext {
                            command: vec!["true".to_string()],
                            ..Default::default()
                        }),
                        ..Default::default()
                    },
                    StartContainerRequest {
                        container_id: "c2".to_string(),
                        ..Default::default()
                    },
                ],
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(started.succeeded_requests, vec!["c1".to_string()]);
        assert_eq!(started.failed_requests[0].container_id, "c2");

        let fin = am
            .finish_application_master(
                creds
                    .request(FinishApplicationMasterRequest {
                        final_application_status: FinalApplicationStatus::Succeeded as i32,
                        ..Default::default()
                    })
                    .unwrap(),
            )
            .await
            .unwrap()
            .into_inner();
        assert!(fin.is_unregistered);
        server.abort();
    })
    .await
    .expect("the loopback exchange took too long");
}
