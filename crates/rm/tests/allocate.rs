//! Allocate against a real RM in-process (127.0.0.1, ephemeral ports, a fake NM): a large
//! grant is spread over calls of at most `weft.resourcemanager.am.allocate.max-containers`
//! containers, and asks are YARN's absolute outstanding totals per priority.

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use serde_json::json;
use support::post;
use tokio::runtime::Runtime;
use weft_proto::auth::AmCredentials;
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::*;

/// The cap the RM is configured with.
const CAP: usize = 5;

/// One node, one running AM; `allocate` sends asks and returns the reply.
struct Setup {
    rt: Runtime,
    am: ApplicationMasterProtocolClient<tonic::transport::Channel>,
    creds: AmCredentials,
    tracker: ResourceTrackerClient<tonic::transport::Channel>,
    node_id: String,
    secret: String,
    /// The RM's web address.
    web: String,
    _rm: weft_rm::RunningRm,
    _dir: tempfile::TempDir,
}

impl Setup {
    fn start() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let rt = support::runtime();
        let rm = support::start_rm(&rt, dir.path(), CAP);
        let (nm, nm_addr) = support::serve_fake_nm(&rt);
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
        let am = rt
            .block_on(ApplicationMasterProtocolClient::connect(format!(
                "http://{}",
                rm.scheduler
            )))
            .unwrap();
        let mut s = Setup {
            rt,
            am,
            creds: AmCredentials {
                attempt_id: String::new(),
                token: String::new(),
            },
            tracker,
            node_id,
            secret: registered.node_secret,
            web: rm.web.to_string(),
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
        s.rt.block_on(s.am.register_application_master(register))
            .unwrap();
        s
    }

    /// A node heartbeat once the scheduler's update has seen the latest asks (Fair serves
    /// demand as of its last update).
    fn heartbeat(&mut self) {
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

    /// Sends `asks` (priority, total) of 1 GB / 1 vcore containers anywhere.
    fn allocate(&mut self, asks: &[(i32, i32)]) -> AllocateResponse {
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
    fn collect(&mut self, ids: &mut BTreeSet<String>) -> Vec<usize> {
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

#[test]
fn a_large_grant_is_spread_over_capped_answers() {
    let mut s = Setup::start();
    assert!(s.allocate(&[(1, 12)]).allocated_containers.is_empty());
    s.heartbeat();
    let mut ids = BTreeSet::new();
    assert_eq!(
        s.collect(&mut ids),
        vec![CAP, CAP, 2],
        "12 containers over answers of at most {CAP}"
    );
    assert_eq!(ids.len(), 12);
}

#[test]
fn asks_are_absolute_totals_per_priority() {
    let mut s = Setup::start();
    let mut ids = BTreeSet::new();
    // A lower total replaces a higher one: 4 outstanding, not 14.
    s.allocate(&[(2, 10)]);
    s.allocate(&[(2, 4)]);
    s.heartbeat();
    assert_eq!(s.collect(&mut ids).iter().sum::<usize>(), 4);
    // The same total sent twice is still that total.
    s.allocate(&[(3, 3)]);
    s.allocate(&[(3, 3)]);
    s.heartbeat();
    assert_eq!(s.collect(&mut ids).iter().sum::<usize>(), 3);
    // Once allocated, the RM's copy is zero: a new total asks for that many more; zero
    // withdraws what is outstanding.
    s.allocate(&[(2, 2)]);
    s.allocate(&[(3, 5)]);
    s.allocate(&[(3, 0)]);
    s.heartbeat();
    assert_eq!(s.collect(&mut ids).iter().sum::<usize>(), 2);
    assert_eq!(ids.len(), 9);
    // Two sizes at one priority cannot be one total.
    let mut bad = AllocateRequest::default();
    for size in [1024, 2048] {
        bad.ask.push(ResourceRequest {
            priority: 4,
            resource_name: "*".into(),
            capability: Some(Resource::new(size, 1)),
            num_containers: 1,
            ..Default::default()
        });
    }
    let refused =
        s.rt.block_on(s.am.allocate(s.creds.request(bad).unwrap()))
            .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::InvalidArgument, "{refused:?}");
    assert!(refused.message().contains("priority 4"), "{refused:?}");
}

/// Demands over the AM protocol (issue 17 item 5): a gang demand that finds room for 7 of its
/// 8 members holds them (the demands list's `held`), while a demand given by its `*` ask comes
/// back tagged with its DemandID; a bad description is refused naming the field.
#[test]
fn demands_come_back_tagged_and_a_holding_gang_shows_held() {
    let mut s = Setup::start();
    let send = |s: &mut Setup, demands: Vec<DemandRequest>| {
        let request = s
            .creds
            .request(AllocateRequest {
                demands,
                ..Default::default()
            })
            .unwrap();
        s.rt.block_on(s.am.allocate(request))
    };
    // 64 GB, the AM has 1: seven 8 GB members fit now, the eighth does not.
    let gang = DemandRequest {
        description: r#"{"DemandID": 7, "Gang": true, "ResourceRequest": {"capability": {"memory": 8192, "vCores": 1}, "num-containers": 8, "priority": 3}}"#.into(),
        asks: Vec::new(),
    };
    let plain = DemandRequest {
        description: r#"{"DemandID": 8, "Name": "from its ask"}"#.into(),
        asks: vec![ResourceRequest {
            priority: 4,
            resource_name: "*".into(),
            capability: Some(Resource::new(1024, 1)),
            num_containers: 1,
            ..Default::default()
        }],
    };
    let reply = send(&mut s, vec![gang, plain])
        .expect("admitted")
        .into_inner();
    let states: Vec<(u64, String)> = reply
        .demand_updates
        .iter()
        .map(|u| (u.demand_id, u.state.clone()))
        .collect();
    assert_eq!(
        states,
        vec![(7, "ALLOCATING".to_string()), (8, "ALLOCATING".to_string())]
    );
    s.heartbeat();
    let reply = s.allocate(&[]);
    let tagged: Vec<(Option<u64>, i64, i32)> = reply
        .allocated_containers
        .iter()
        .map(|c| (c.demand_id, c.allocation_request_id, c.priority))
        .collect();
    assert_eq!(tagged, vec![(Some(8), 8, 4)], "only the ordinary demand's");
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let list: serde_json::Value = agent
        .get(format!("http://{}/ws/v1/cluster/demands", s.web))
        .call()
        .expect("the demands list")
        .body_mut()
        .read_json()
        .expect("JSON");
    let demand = |id: u64| {
        list.pointer("/demands/demand")
            .and_then(serde_json::Value::as_array)
            .and_then(|all| all.iter().find(|d| d["demand-id"] == id).cloned())
            .unwrap_or_else(|| panic!("demand {id} in {list}"))
    };
    assert_eq!(demand(7)["state"], "ALLOCATING");
    assert_eq!(demand(7)["containers"]["held"], 7, "{}", demand(7));
    assert_eq!(demand(7)["containers"]["allocated"], 0);
    assert_eq!(demand(8)["state"], "ALLOCATED");
    assert_eq!(demand(8)["containers"]["held"], 0);
    let bad = DemandRequest {
        description: "{".into(),
        asks: Vec::new(),
    };
    let err = send(&mut s, vec![bad]).unwrap_err();
    assert_eq!(err.code(), tonic::Code::InvalidArgument);
    assert!(
        err.message()
            .starts_with("demands[0].description: not JSON"),
        "{}",
        err.message()
    );
}
