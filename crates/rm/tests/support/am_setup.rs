//! An RM in-process with one node (a fake NM) and one registered AM, for the AM protocol's
//! tests.

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;
use tokio::runtime::Runtime;
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::*;

use super::post;

/// The web address the node registers with.
pub(crate) const NM_WEB: &str = "nm-host:8042";

/// One node, one running AM; `allocate` sends asks and returns the reply.
pub(crate) struct AmSetup {
    pub(crate) rt: Runtime,
    pub(crate) am: ApplicationMasterProtocolClient<tonic::transport::Channel>,
    /// The connection to the RM's AM port.
    pub(crate) channel: tonic::transport::Channel,
    /// The AM's registration answer.
    pub(crate) registered: RegisterApplicationMasterResponse,
    pub(crate) creds: AmCredentials,
    pub(crate) tracker: ResourceTrackerClient<tonic::transport::Channel>,
    pub(crate) node_id: String,
    pub(crate) secret: String,
    /// The RM's web address.
    pub(crate) web: String,
    /// The RM's AM port (`host:port`).
    pub(crate) scheduler: String,
    pub(crate) _rm: weft_rm::RunningRm,
    pub(crate) _dir: tempfile::TempDir,
}

impl AmSetup {
    /// An RM answering Allocate with at most `cap` containers, with the `properties` lines
    /// added to its configuration's [properties] table.
    pub(crate) fn start(cap: usize, properties: &str) -> AmSetup {
        let dir = tempfile::tempdir().unwrap();
        let rt = super::runtime();
        let rm = super::start_rm_with(&rt, dir.path(), cap, properties);
        let (nm, nm_addr) = super::serve_fake_nm(&rt);
        let node_id = format!("nm-host:{}", nm_addr.port());
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
                http_address: NM_WEB.to_string(),
                total_capability: Some(Resource::new(64 * 1024, 64)),
                ..Default::default()
            }))
            .unwrap()
            .into_inner();
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        let base = format!("http://{}/ws/v1/cluster/apps", rm.web);
        let app = post(&agent, &format!("{base}/new-application"), None);
        let id = app["application-id"].as_str().unwrap().to_string();
        post(
            &agent,
            &base,
            Some(json!({
                "application-id": id,
                "application-name": "t",
                "queue": "root.default",
                "am-container-spec": {"commands": {"command": "sleep 100"}},
                "resource": {"memory": 1024, "vCores": 1},
            })),
        );
        let channel = rt
            .block_on(
                tonic::transport::Endpoint::from_shared(format!("http://{}", rm.scheduler))
                    .unwrap()
                    .connect(),
            )
            .unwrap();
        let am = ApplicationMasterProtocolClient::new(channel.clone());
        let mut s = AmSetup {
            rt,
            am,
            channel,
            registered: RegisterApplicationMasterResponse::default(),
            creds: AmCredentials {
                attempt_id: String::new(),
                token: String::new(),
            },
            tracker,
            node_id,
            secret: registered.node_secret,
            web: rm.web.to_string(),
            scheduler: rm.scheduler.to_string(),
            _rm: rm,
            _dir: dir,
        };
        let mut polls = 0; // bounded: at most 200 heartbeats
        let launch = loop {
            s.heartbeat();
            if let Some(l) = nm.started.lock().unwrap().first().cloned() {
                break l;
            }
            polls += 1;
            assert!(polls < 200, "the AM was never launched");
            std::thread::sleep(Duration::from_millis(50));
        };
        let env = launch.container_launch_context.unwrap().environment;
        s.creds = AmCredentials {
            attempt_id: env["APPLICATION_ATTEMPT_ID"].clone(),
            token: env["WEFT_AM_TOKEN"].clone(),
        };
        let register = s
            .creds
            .request(RegisterApplicationMasterRequest::default())
            .unwrap();
        s.registered =
            s.rt.block_on(s.am.register_application_master(register))
                .unwrap()
                .into_inner();
        s
    }

    /// A node heartbeat once the scheduler's update has seen the latest asks (Fair serves
    /// demand as of its last update).
    pub(crate) fn heartbeat(&mut self) {
        std::thread::sleep(Duration::from_millis(150));
        let reply = self
            .rt
            .block_on(self.tracker.node_heartbeat(NodeHeartbeatRequest {
                node_id: self.node_id.clone(),
                node_secret: self.secret.clone(),
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

    /// A node heartbeat reporting container `id` complete with `exit_status` and
    /// `diagnostics`.
    pub(crate) fn report_complete(&mut self, id: &str, exit_status: i32, diagnostics: &str) {
        let reply = self
            .rt
            .block_on(self.tracker.node_heartbeat(NodeHeartbeatRequest {
                node_id: self.node_id.clone(),
                node_secret: self.secret.clone(),
                container_statuses: vec![ContainerStatus {
                    container_id: id.to_string(),
                    state: ContainerState::Complete as i32,
                    exit_status,
                    diagnostics: diagnostics.to_string(),
                    capability: None,
                }],
                ..Default::default()
            }))
            .unwrap()
            .into_inner();
        assert_ne!(reply.node_action, NodeAction::Resync as i32);
    }

    /// The AM unregisters (FinishApplicationMaster), its final status SUCCEEDED.
    pub(crate) fn finish_succeeded(&mut self) {
        let finish = self
            .creds
            .request(FinishApplicationMasterRequest {
                final_application_status: FinalApplicationStatus::Succeeded as i32,
                ..Default::default()
            })
            .unwrap();
        self.rt
            .block_on(self.am.finish_application_master(finish))
            .unwrap();
    }

    /// Sends `asks` (priority, total) of 1 GB / 1 vcore containers anywhere.
    pub(crate) fn allocate(&mut self, asks: &[(i32, i32)]) -> AllocateResponse {
        let ask = asks
            .iter()
            .map(|&(priority, total)| ResourceRequest {
                priority,
                resource_name: "*".into(),
                capability: Some(Resource::new(1024, 1)),
                num_containers: total,
                relax_locality: Some(true),
                ..Default::default()
            })
            .collect();
        let request = self
            .creds
            .request(AllocateRequest {
                ask,
                ..Default::default()
            })
            .unwrap();
        self.rt
            .block_on(self.am.allocate(request))
            .unwrap()
            .into_inner()
    }

    /// Allocate calls without asks until one brings nothing; the size of each answer.
    pub(crate) fn collect(&mut self, ids: &mut BTreeSet<String>) -> Vec<usize> {
        let mut sizes = Vec::new();
        for _ in 0..100 {
            let reply = self.allocate(&[]);
            let n = reply.allocated_containers.len();
            if n == 0 {
                return sizes;
            }
            for c in reply.allocated_containers {
                assert!(
                    ids.insert(c.container_id.clone()),
                    "{} twice",
                    c.container_id
                );
            }
            sizes.push(n);
        }
        panic!("the grant never ran out");
    }
}
