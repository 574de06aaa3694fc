use super::*;
use std::collections::HashMap;

fn am_args(cmd: &str) -> DshellAmArgs {
    DshellAmArgs {
        shell_command: Some(cmd.to_string()),
        shell_script: None,
        shell_args: vec![],
        shell_env: vec!["A=1=2".to_string()],
        num_containers: 2,
        container_memory: 64,
        container_vcores: 1,
        shell_cmd_priority: 0,
        gang: None,
        demand_hex: None,
    }
}

#[test]
fn launch_context_runs_the_command_under_bash_c() {
    let ctx = am_args("echo 'hi' > out").launch_context();
    assert_eq!(ctx.command, vec!["bash", "-c", r"'echo '\''hi'\'' > out'"]);
    // The NM joins the words with spaces and runs the line with bash: check the round trip.
    let line = ctx.command.join(" ");
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("set -- {line}; printf %s \"$3\""))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "echo 'hi' > out");
    assert_eq!(ctx.environment.get("A").map(String::as_str), Some("1=2"));
    assert!(ctx.local_resources.is_empty());
}

#[test]
fn a_script_is_localized_and_run_with_its_args() {
    let mut a = am_args("unused");
    a.shell_command = None;
    a.shell_script = Some("/abs/job.sh".to_string());
    a.shell_args = vec!["x y".to_string()];
    assert_eq!(a.container_command(), "bash ExecScript.sh 'x y'");
    let ctx = a.launch_context();
    assert_eq!(ctx.local_resources["ExecScript.sh"].resource, "/abs/job.sh");
}

fn lookup(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
    let map: HashMap<String, String> = pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    move |k| map.get(k).cloned()
}

#[test]
fn the_attempt_is_derived_from_container_id() {
    let env = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "127.0.0.1:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "container_1700000000000_0007_02_000001"),
        ("USER", "alice"),
    ]))
    .unwrap();
    assert_eq!(env.scheduler_address, "127.0.0.1:8030");
    assert_eq!(
        env.credentials.attempt_id,
        "appattempt_1700000000000_0007_000002"
    );
    assert_eq!(env.credentials.token, "tok");
    assert_eq!(env.application_id, "application_1700000000000_0007");
    assert_eq!(env.user, "alice");
}

#[test]
fn an_explicit_attempt_id_wins_and_missing_variables_are_named() {
    let env = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "rm:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("APPLICATION_ATTEMPT_ID", "appattempt_5_0001_000003"),
        ("CONTAINER_ID", "container_5_0001_01_000001"),
    ]))
    .unwrap();
    assert_eq!(env.credentials.attempt_id, "appattempt_5_0001_000003");

    let err = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "container_5_0001_01_000001"),
    ]))
    .unwrap_err();
    assert!(
        err.to_string().contains("WEFT_RM_SCHEDULER_ADDRESS"),
        "{err}"
    );
    let err = AmEnvironment::from_lookup(lookup(&[
        ("WEFT_RM_SCHEDULER_ADDRESS", "rm:8030"),
        ("WEFT_AM_TOKEN", "tok"),
        ("CONTAINER_ID", "garbage"),
    ]))
    .unwrap_err();
    assert!(format!("{err:#}").contains("CONTAINER_ID"), "{err:#}");
}

mod in_process {
    //! The AM against an in-process fake RM and NM over loopback gRPC.

    use super::super::*;
    use std::sync::{Arc, Mutex};
    use tonic::transport::server::TcpIncoming;
    use tonic::{Request, Response, Status};
    use weft_proto::v1::application_master_protocol_server::{
        ApplicationMasterProtocol, ApplicationMasterProtocolServer,
    };
    use weft_proto::v1::container_management_server::{
        ContainerManagement, ContainerManagementServer,
    };
    use weft_proto::v1::*;

    #[derive(Default)]
    struct Fake {
        nm_address: String,
        /// Container ids the NM refuses to start.
        refuse: Vec<String>,
        next: u64,
        started: Vec<String>,
        reported: usize,
        released: Vec<String>,
        asks: Vec<i32>,
        finish: Option<(FinalApplicationStatus, String)>,
        registrations: u32,
        /// Answer the first allocate with FAILED_PRECONDITION, as a restarted RM does.
        not_registered_once: bool,
    }

    #[derive(Clone)]
    struct Svc(Arc<Mutex<Fake>>);

    fn check<T>(r: &Request<T>) -> Result<(), Status> {
        match AmCredentials::from_request(r) {
            Some(c) if c.token == "tok" && c.attempt_id == "appattempt_9_0001_000001" => Ok(()),
            _ => Err(Status::permission_denied("bad credentials")),
        }
    }

    #[tonic::async_trait]
    impl ApplicationMasterProtocol for Svc {
        async fn register_application_master(
            &self,
            r: Request<RegisterApplicationMasterRequest>,
        ) -> Result<Response<RegisterApplicationMasterResponse>, Status> {
            check(&r)?;
            self.0.lock().unwrap().registrations += 1;
            Ok(Response::new(RegisterApplicationMasterResponse {
                maximum_capability: Some(Resource::new(1024, 4)),
                ..Default::default()
            }))
        }

        async fn allocate(
            &self,
            r: Request<AllocateRequest>,
        ) -> Result<Response<AllocateResponse>, Status> {
            check(&r)?;
            let req = r.into_inner();
            let mut f = self.0.lock().unwrap();
            if f.not_registered_once {
                f.not_registered_once = false;
                return Err(Status::failed_precondition("attempt not registered"));
            }
            f.released.extend(req.release);
            let mut reply = AllocateResponse {
                response_id: req.response_id + 1,
                ..Default::default()
            };
            for ask in req.ask {
                f.asks.push(ask.num_containers);
                assert_eq!(ask.capability, Some(Resource::new(1024, 1)), "clamped");
                // One more than asked, as an RM racing the ask may do.
                for _ in 0..=ask.num_containers {
                    f.next += 1;
                    reply.allocated_containers.push(Container {
                        container_id: format!("container_9_0001_01_{:06}", f.next + 1),
                        node_id: "fake-node:1".to_string(),
                        node_address: f.nm_address.clone(),
                        resource: ask.capability.clone(),
                        ..Default::default()
                    });
                }
            }
            let done: Vec<String> = f.started[f.reported..].to_vec();
            f.reported = f.started.len();
            for id in done {
                // The first container exits 0, every other one 3.
                let code = if id.ends_with("000002") { 0 } else { 3 };
                reply.completed_container_statuses.push(ContainerStatus {
                    container_id: id,
                    state: ContainerState::Complete as i32,
                    exit_status: code,
                    diagnostics: String::new(),
                    capability: None,
                });
            }
            Ok(Response::new(reply))
        }

        async fn finish_application_master(
            &self,
            r: Request<FinishApplicationMasterRequest>,
        ) -> Result<Response<FinishApplicationMasterResponse>, Status> {
            check(&r)?;
            let req = r.into_inner();
            self.0.lock().unwrap().finish = Some((req.final_application_status(), req.diagnostics));
            Ok(Response::new(FinishApplicationMasterResponse {
                is_unregistered: true,
            }))
        }
    }

    #[tonic::async_trait]
    impl ContainerManagement for Svc {
        async fn start_containers(
            &self,
            r: Request<StartContainersRequest>,
        ) -> Result<Response<StartContainersResponse>, Status> {
            let mut f = self.0.lock().unwrap();
            let mut out = StartContainersResponse::default();
            for s in r.into_inner().start_container_request {
                assert_eq!(s.application_id, "application_9_0001");
                let ctx = s.container_launch_context.unwrap_or_default();
                assert_eq!(ctx.command[..2], ["bash".to_string(), "-c".to_string()]);
                if f.refuse.contains(&s.container_id) {
                    out.failed_requests.push(ContainerExceptionMap {
                        container_id: s.container_id,
                        exception: "no such user".to_string(),
                    });
                } else {
                    f.started.push(s.container_id.clone());
                    out.succeeded_requests.push(s.container_id);
                }
            }
            Ok(Response::new(out))
        }

        async fn stop_containers(
            &self,
            _: Request<StopContainersRequest>,
        ) -> Result<Response<StopContainersResponse>, Status> {
            Err(Status::unimplemented("not used"))
        }

        async fn get_container_statuses(
            &self,
            _: Request<GetContainerStatusesRequest>,
        ) -> Result<Response<GetContainerStatusesResponse>, Status> {
            Err(Status::unimplemented("not used"))
        }
    }

    /// Runs the AM for `n` containers against the fakes; returns its result and the fake state.
    async fn run(n: u32, refuse: &[&str]) -> (anyhow::Result<()>, Arc<Mutex<Fake>>) {
        run_with(n, refuse, false).await
    }

    async fn run_with(
        n: u32,
        refuse: &[&str],
        not_registered_once: bool,
    ) -> (anyhow::Result<()>, Arc<Mutex<Fake>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let state = Arc::new(Mutex::new(Fake {
            nm_address: addr.clone(),
            refuse: refuse.iter().map(|s| s.to_string()).collect(),
            not_registered_once,
            ..Default::default()
        }));
        let svc = Svc(state.clone());
        let server = tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(ApplicationMasterProtocolServer::new(svc.clone()))
                .add_service(ContainerManagementServer::new(svc))
                .serve_with_incoming(TcpIncoming::from(listener)),
        );
        let mut args = super::am_args("true");
        args.num_containers = n;
        args.container_memory = 4096;
        let env = AmEnvironment::from_lookup(super::lookup(&[
            ("WEFT_RM_SCHEDULER_ADDRESS", &addr),
            ("WEFT_AM_TOKEN", "tok"),
            ("CONTAINER_ID", "container_9_0001_01_000001"),
        ]))
        .unwrap();
        let result = tokio::time::timeout(Duration::from_secs(20), Am::run(args, env))
            .await
            .expect("the AM did not finish in time");
        server.abort();
        (result, state)
    }

    #[tokio::test]
    async fn one_good_container_succeeds_and_the_surplus_is_released() {
        let (result, state) = run(1, &[]).await;
        result.unwrap();
        let f = state.lock().unwrap();
        assert_eq!(f.asks, vec![1]);
        assert_eq!(f.started, vec!["container_9_0001_01_000002".to_string()]);
        assert_eq!(f.released, vec!["container_9_0001_01_000003".to_string()]);
        let (status, diag) = f.finish.clone().unwrap();
        assert_eq!(status, FinalApplicationStatus::Succeeded);
        assert!(diag.contains("container_9_0001_01_000002 on fake-node:1: success"));
    }

    #[tokio::test]
    async fn a_failing_exit_and_a_refused_start_fail_the_application() {
        let (result, state) = run(3, &["container_9_0001_01_000004"]).await;
        let err = result.unwrap_err();
        assert!(
            err.to_string()
                .contains("1 of 3 containers succeeded, 2 failed"),
            "{err}"
        );
        let f = state.lock().unwrap();
        assert!(f
            .released
            .contains(&"container_9_0001_01_000004".to_string()));
        assert!(f
            .released
            .contains(&"container_9_0001_01_000005".to_string()));
        let (status, diag) = f.finish.clone().unwrap();
        assert_eq!(status, FinalApplicationStatus::Failed);
        assert!(
            diag.contains("container_9_0001_01_000003 on fake-node:1: exit code 3"),
            "{diag}"
        );
        assert!(diag.contains("failed to start: no such user"), "{diag}");
    }

    #[tokio::test]
    async fn an_unregistered_reply_makes_the_am_register_again_and_resend_its_ask() {
        let (result, state) = run_with(1, &[], true).await;
        result.unwrap();
        let f = state.lock().unwrap();
        assert_eq!(f.registrations, 2);
        assert_eq!(f.asks, vec![1], "the refused call's ask is sent again");
    }
}
