//! Allocate against a real RM in-process (127.0.0.1, ephemeral ports, a fake NM): a large
//! grant is spread over calls of at most `weft.resourcemanager.am.allocate.max-containers`
//! containers, and asks are YARN's absolute outstanding totals per priority; a finished app's
//! ended containers stay in REST's attempt containers.

mod support;

use std::collections::BTreeSet;
use std::time::Duration;

use weft_proto::v1::*;

/// The cap the RM is configured with.
const CAP: usize = 5;

/// One node, one running AM.
type Setup = support::am_setup::AmSetup;

#[test]
fn a_large_grant_is_spread_over_capped_answers() {
    let mut s = Setup::start(CAP, "");
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
    let mut s = Setup::start(CAP, "");
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
    let mut s = Setup::start(CAP, "");
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

/// An app's ended containers stay in REST's attempt containers after it finishes: one the
/// node reported ended with its exit status and diagnostics, the rest ended by the finish,
/// each with its node and the node's web address and log link.
#[test]
fn rest_lists_the_ended_containers_of_a_finished_app() {
    let mut s = Setup::start(CAP, "");
    s.allocate(&[(1, 3)]);
    s.heartbeat();
    let mut ids = BTreeSet::new();
    assert_eq!(s.collect(&mut ids).iter().sum::<usize>(), 3);
    let failed = ids.first().cloned().unwrap();
    s.report_complete(&failed, 3, "exit code 3: boom");
    s.finish_succeeded();

    let attempt = &s.creds.attempt_id;
    let app = attempt
        .replacen("appattempt", "application", 1)
        .rsplit_once('_')
        .map(|(app, _)| app.to_string())
        .unwrap();
    let url = format!(
        "http://{}/ws/v1/cluster/apps/{app}/appattempts/{attempt}/containers",
        s.web
    );
    let list: serde_json::Value = support::agent()
        .get(&url)
        .call()
        .expect("the containers list")
        .body_mut()
        .read_json()
        .expect("JSON");
    let all = list
        .pointer("/containers/container")
        .and_then(serde_json::Value::as_array)
        .unwrap_or_else(|| panic!("{list}"));
    let of = |id: &str| {
        all.iter()
            .find(|c| c["containerId"] == id)
            .unwrap_or_else(|| panic!("{id} in {list}"))
    };
    for id in &ids {
        let c = of(id);
        assert_eq!(c["containerState"], "COMPLETE", "{c}");
        assert_eq!(c["nodeId"], s.node_id);
        assert_eq!(c["nodeHttpAddress"], support::am_setup::NM_WEB);
        assert!(
            c["logUrl"]
                .as_str()
                .is_some_and(|u| u.contains(id.as_str())),
            "{c}"
        );
        assert_eq!(c["allocatedMB"], 1024);
        assert_eq!(c["priority"], 1);
        assert!(c["finishedTime"].as_u64() > Some(0), "{c}");
        if *id == failed {
            assert_eq!(c["containerExitStatus"], 3);
            assert_eq!(c["diagnosticsInfo"], "exit code 3: boom");
        } else {
            assert_eq!(
                c["containerExitStatus"], -107,
                "killed after the app completed"
            );
            assert_eq!(
                c["diagnosticsInfo"],
                "Container killed on application completion"
            );
        }
    }
    assert_eq!(all.len(), 4, "the AM and three ended: {list}");
}
