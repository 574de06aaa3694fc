//! The fuzz targets: the allocation-file parser, the yarn-site parser, the scenario and SLS
//! trace parsers, the REST API's JSON bodies and query strings, the gRPC request decoders
//! with the services behind them, the demand language (read, checked, resolved, printed
//! and read again), and the Hadoop IPC connection decoder (preamble, packet lengths,
//! headers, SASL, context and calls). Each returns its run's [`Report`].

use std::collections::BTreeMap;
use std::time::Duration;

use weft_proto::v1::*;
use weft_rm::fuzzing::{GrpcRequest, Harness};
use weft_types::ResourceTypes;

use crate::engine::{fuzz, Report};

/// Every target's name, in the order `run_all` runs them.
pub const TARGETS: [&str; 7] = [
    "alloc-file",
    "yarn-site",
    "scenario",
    "rest-json",
    "grpc",
    "demand-parse",
    "hadoop_ipc_frame",
];

/// Runs the named target for `budget`; `None` for an unknown name.
pub fn run(name: &str, budget: Duration, rng_seed: u64) -> Option<Report> {
    Some(match name {
        "alloc-file" => alloc_file(budget, rng_seed),
        "yarn-site" => yarn_site(budget, rng_seed),
        "scenario" => scenario(budget, rng_seed),
        "rest-json" => rest_json(budget, rng_seed),
        "grpc" => grpc(budget, rng_seed),
        "demand-parse" => demand_parse(budget, rng_seed),
        "hadoop_ipc_frame" => hadoop_ipc_frame(budget, rng_seed),
        _ => return None,
    })
}

fn text(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(bytes)
}

const XML_TOKENS: &[&str] = &[
    "<queue name=\"a\">",
    "</queue>",
    "<pool name=\"p\">",
    "<queue name=\"root\">",
    "<rule name=\"nestedUserQueue\">",
    "<rule name=\"user\"/>",
    "</rule>",
    "<maxResources>",
    "50%",
    "memory-mb=1,vcores=2",
    "<weight>",
    "</weight>",
    "&amp;",
    "&lt;",
    "<!DOCTYPE a [<!ENTITY e \"x\">]>",
    "&e;",
    "<![CDATA[",
    "]]>",
    "<!--",
    "-->",
    "<property><name>",
    "</name><value>",
    "</value></property>",
    "yarn.scheduler.fair.",
    "yarn.scheduler.maximum-allocation-mb",
];

fn alloc_file(budget: Duration, rng_seed: u64) -> Report {
    let seeds = vec![
        include_bytes!("../../../examples/fair-scheduler.xml").to_vec(),
        include_bytes!("../../config/tests/data/seed-000-example.xml").to_vec(),
        b"<allocations><queue name=\"a\"><queue name=\"b\"/></queue></allocations>".to_vec(),
    ];
    let types = ResourceTypes::with_custom(["gpu"]).unwrap_or_default();
    fuzz(
        "alloc-file",
        &seeds,
        XML_TOKENS,
        budget,
        rng_seed,
        |input| {
            let _ = weft_config::alloc_file::parse_allocations(&text(input), &types);
        },
    )
}

fn yarn_site(budget: Duration, rng_seed: u64) -> Report {
    let seeds = vec![
        include_bytes!("../../../examples/yarn-site.xml").to_vec(),
        b"<configuration><property><name>yarn.scheduler.fair.preemption</name><value>true</value></property></configuration>".to_vec(),
    ];
    fuzz("yarn-site", &seeds, XML_TOKENS, budget, rng_seed, |input| {
        let _ = weft_config::site::parse_site_xml(&text(input));
        // The same properties as pairs (the RM's TOML `[properties]` path).
        let s = text(input);
        let pairs: Vec<(&str, &str)> = s.lines().filter_map(|l| l.split_once('=')).collect();
        let _ = weft_config::site::from_pairs(pairs.iter().copied());
    })
}

fn scenario(budget: Duration, rng_seed: u64) -> Report {
    let seeds = vec![
        include_bytes!("../../../examples/quickstart.toml").to_vec(),
        include_bytes!("../../../examples/seed001-big-and-small.toml").to_vec(),
        include_bytes!("../../sim/tests/data/inputsls.json").to_vec(),
    ];
    let tokens = &[
        "[[events]]\n",
        "[[nodes]]\n",
        "at = \"1s\"\n",
        "type = \"ask\"\n",
        "count = 2147483647\n",
        "duration = \"999999999999h\"\n",
        "resources = \"1024 mb, 1 vcores, 1 gpu\"\n",
        "end = \"1h\"\n",
        "\"count\": 99999999999,",
        "\"container.duration.ms\": -1,",
        "\"job.tasks\": [{}],",
        "{",
        "}",
        "[",
        "]",
    ];
    let options = weft_sim::sls::SlsOptions::default();
    fuzz("scenario", &seeds, tokens, budget, rng_seed, |input| {
        let s = text(input);
        let _ = weft_sim::parse_scenario(&s, "fuzz.toml");
        let _ = weft_sim::sls::parse_sls_trace(&s, "fuzz.json", &options);
    })
}

/// The REST endpoints a fuzz input's first byte chooses; the rest is the body (or the query).
const REST_CALLS: &[(&str, &str)] = &[
    ("POST", "/ws/v1/cluster/apps"),
    ("PUT", "/ws/v1/cluster/apps/application_1_0001/state"),
    ("PUT", "/ws/v1/cluster/apps/application_1_0001/queue"),
    ("PUT", "/ws/v1/cluster/apps/application_1_0001/priority"),
    ("GET", "/ws/v1/cluster/apps?"),
    ("GET", "/ws/v1/cluster/nodes?"),
    ("GET", "/ws/v1/cluster/appstatistics?"),
    ("GET", ""),
    ("POST", "/ws/v1/cluster/demands"),
];

fn rest_seed(call: u8, body: &serde_json::Value) -> Vec<u8> {
    let mut seed = vec![call];
    seed.extend(body.to_string().into_bytes());
    seed
}

fn rest_json(budget: Duration, rng_seed: u64) -> Report {
    let Ok(mut rm) = Harness::new() else {
        return Report {
            target: "rest-json".into(),
            crashes: vec![crate::engine::Crash {
                message: "the in-process RM could not start".into(),
                input: Vec::new(),
            }],
            ..Report::default()
        };
    };
    // One app to kill, move and reprioritize.
    let _ = rm.http("POST", "/ws/v1/cluster/apps/new-application", b"");
    let submission = serde_json::json!({
        "application-id": "application_1_0001",
        "application-name": "fuzz",
        "application-type": "YARN",
        "queue": "default",
        "priority": 0,
        "application-tags": ["a", "b"],
        "max-app-attempts": 2,
        "unmanaged-AM": false,
        "keep-containers-across-application-attempts": false,
        "am-container-spec": {
            "commands": {"command": "sleep 1"},
            "environment": {"entry": [{"key": "A", "value": "1"}]},
            "local-resources": {"entry": [{"key": "f", "value": {"resource": "file:///tmp/x", "type": "FILE", "visibility": "APPLICATION", "size": 1, "timestamp": 1}}]},
        },
        "resource": {"memory": 1024, "vCores": 1},
    });
    let _ = rm.http(
        "POST",
        "/ws/v1/cluster/apps",
        submission.to_string().as_bytes(),
    );
    let seeds = vec![
        rest_seed(0, &submission),
        rest_seed(1, &serde_json::json!({"state": "KILLED"})),
        rest_seed(2, &serde_json::json!({"queue": "root.a.b"})),
        rest_seed(3, &serde_json::json!({"priority": 1})),
        [vec![4], b"states=RUNNING,ACCEPTED&limit=5&user=u&applicationTags=a&startedTimeBegin=1&deSelects=resourceRequests".to_vec()].concat(),
        [vec![5], b"states=RUNNING,LOST".to_vec()].concat(),
        [vec![6], b"states=ACCEPTED&applicationTypes=YARN".to_vec()].concat(),
        [vec![7], b"/ws/v1/cluster/scheduler".to_vec()].concat(),
        [vec![7], b"/cluster/apps".to_vec()].concat(),
        [
            vec![8],
            b"{\"queue\": \"root.default\", \"demands\": ".to_vec(),
            include_bytes!("../../demand-lang/tests/data/example-d.json").to_vec(),
            b"}".to_vec(),
        ]
        .concat(),
        rest_seed(
            8,
            &serde_json::json!({"application-id": "application_1_0001", "demands": [
                {"DemandID": 3, "ResourceRequest": {"capability": {"memory": 1, "vCores": 1}, "num-containers": 2},
                 "Start": "OR([NOW, +5m], [NOW, ^3])", "Gang": 2}]}),
        ),
    ];
    let tokens = &[
        "{", "}", "[", "]", "\"", ":", ",", "null", "true", "[[[[[[[[", "{\"a\":", "\\u0000",
        "\\ud800", "%", "%00", "&", "=", "..",
    ];
    fuzz("rest-json", &seeds, tokens, budget, rng_seed, |input| {
        let Some((&call, body)) = input.split_first() else {
            return;
        };
        let (method, path) = REST_CALLS[usize::from(call) % REST_CALLS.len()];
        match method {
            "GET" => {
                let uri = format!("{path}{}", text(body));
                let _ = rm.http("GET", &uri, b"");
            }
            _ => {
                let _ = rm.http(method, path, body);
            }
        }
    })
}

fn grpc_seed(kind: u8, message: impl prost::Message) -> Vec<u8> {
    let mut seed = vec![kind];
    seed.extend(message.encode_to_vec());
    seed
}

fn grpc(budget: Duration, rng_seed: u64) -> Report {
    let Ok(mut rm) = Harness::new() else {
        return Report {
            target: "grpc".into(),
            crashes: vec![crate::engine::Crash {
                message: "the in-process RM could not start".into(),
                input: Vec::new(),
            }],
            ..Report::default()
        };
    };
    let resource = Resource {
        memory_mb: 8192,
        vcores: 8,
        custom: BTreeMap::from([("gpu".to_string(), 1)])
            .into_iter()
            .collect(),
    };
    let status = ContainerStatus {
        container_id: "container_1_0001_01_000001".into(),
        state: ContainerState::Running as i32,
        exit_status: 0,
        diagnostics: "d".into(),
        capability: Some(resource.clone()),
    };
    let seeds = vec![
        grpc_seed(
            0,
            RegisterNodeManagerRequest {
                node_id: "h:1".into(),
                total_capability: Some(resource.clone()),
                rack: "/r".into(),
                ..Default::default()
            },
        ),
        grpc_seed(
            1,
            NodeHeartbeatRequest {
                node_id: "h:1".into(),
                response_id: 1,
                container_statuses: vec![status],
                keep_alive_applications: vec!["application_1_0001".into()],
                ..Default::default()
            },
        ),
        grpc_seed(
            2,
            UnRegisterNodeManagerRequest {
                node_id: "h:1".into(),
                ..Default::default()
            },
        ),
        grpc_seed(
            3,
            RegisterApplicationMasterRequest {
                host: "h".into(),
                rpc_port: 1,
                tracking_url: "http://x".into(),
            },
        ),
        grpc_seed(
            4,
            AllocateRequest {
                ask: vec![ResourceRequest {
                    priority: 1,
                    resource_name: "*".into(),
                    capability: Some(resource),
                    num_containers: 3,
                    relax_locality: Some(true),
                    ..Default::default()
                }],
                release: vec!["container_1_0001_01_000002".into()],
                response_id: 1,
                progress: 0.5,
                ..Default::default()
            },
        ),
        grpc_seed(
            5,
            FinishApplicationMasterRequest {
                final_application_status: 1,
                diagnostics: "done".into(),
                tracking_url: String::new(),
            },
        ),
    ];
    fuzz("grpc", &seeds, &[], budget, rng_seed, |input| {
        let Some((&kind, bytes)) = input.split_first() else {
            return;
        };
        let kind = GrpcRequest::ALL[usize::from(kind) % GrpcRequest::ALL.len()];
        rm.grpc(kind, bytes);
    })
}

const DEMAND_TOKENS: &[&str] = &[
    "[NOW, +5m]",
    "[, +20m]",
    "[NOW+10m, ^3]",
    "[26-11-22 02:00:00, 2026-11-22T02:30:00+05:30]",
    "AND(",
    "OR(",
    "NOT(",
    ")",
    "{\"AND\": [",
    "{\"OR\": [",
    "{\"NOT\": ",
    "]}",
    "\"Strategy\": \"strict\"",
    "\"Gang\": 7,",
    "\"OrderBy\": {\"After\": \"application_1_0001/1200:started\"},",
    "\"Duration\": \"99999999999999h\",",
    "^18446744073709551615",
    "+18446744073709551615s",
    "9223372036854775808",
    "START",
];

/// The demand language: a document is read and checked; one that passes is resolved at a
/// fixed `now`, printed, and read again, which must give the same demands.
fn demand_parse(budget: Duration, rng_seed: u64) -> Report {
    use weft_demand_lang::{parse_document, print::to_json, resolve, window::Clock, Strategy};
    let seeds = vec![
        include_bytes!("../../demand-lang/tests/data/example-3.2.1.json").to_vec(),
        include_bytes!("../../demand-lang/tests/data/example-b.json").to_vec(),
        include_bytes!("../../demand-lang/tests/data/example-d.json").to_vec(),
    ];
    let exists = |_: &weft_demand_lang::DemandRef| true;
    fuzz(
        "demand-parse",
        &seeds,
        DEMAND_TOKENS,
        budget,
        rng_seed,
        |input| {
            let Ok(submission) = parse_document(&text(input), Strategy::Loose, &exists) else {
                return;
            };
            let clock = Clock {
                now: 1_795_305_600_000,
                offset_minutes: 60,
            };
            let printed: Vec<serde_json::Value> = submission
                .demands
                .iter()
                .map(|demand| {
                    let _ = resolve(demand, "", clock, Strategy::Strict);
                    to_json(demand)
                })
                .collect();
            let again = weft_demand_lang::parse_value(
                &serde_json::Value::Array(printed),
                "",
                Strategy::Loose,
                &exists,
            );
            match again {
                Ok(read) if read.demands == submission.demands => {}
                other => panic!("printing changed the demands: {other:?}"),
            }
        },
    )
}

/// A whole Hadoop IPC connection's bytes as the server reads them: the preamble, then
/// length-prefixed packets, each classified (SASL, context, ping, call), and each call handed
/// to the RM's ApplicationClientProtocol (an in-process RM). Every input must end in a value
/// or an error, never a panic, and a decoded call must name its method.
fn hadoop_ipc_frame(budget: Duration, rng_seed: u64) -> Report {
    use prost::Message as _;
    use weft_hadoop_ipc::client::request_header;
    use weft_hadoop_ipc::proto::{
        IpcConnectionContextProto, RequestHeaderProto, RpcSaslProto, UserInformationProto,
    };
    use weft_hadoop_ipc::wire::{self, packet_length, parse_preamble, Encoded};
    use weft_hadoop_ipc::Packet;
    use weft_proto::hadoop::yarn as y;

    const PROTOCOL: &str = weft_proto::hadoop::CLIENT_PROTOCOL;
    let Ok(mut rm) = Harness::new() else {
        return Report {
            target: "hadoop_ipc_frame".into(),
            crashes: vec![crate::engine::Crash {
                message: "the in-process RM could not start".into(),
                input: Vec::new(),
            }],
            ..Report::default()
        };
    };
    let client_id: Vec<u8> = (0u8..16).collect();
    let context = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some("root".into()),
            real_user: None,
        }),
        protocol: Some(PROTOCOL.into()),
    };
    let call = |id: i32, method: &str, body: Vec<u8>| {
        let header = RequestHeaderProto {
            method_name: method.into(),
            declaring_class_protocol_name: PROTOCOL.into(),
            client_protocol_version: 1,
        };
        wire::packet(&[&request_header(id, &client_id, 0), &header, &Encoded(&body)])
    };
    let app = y::ApplicationIdProto {
        id: Some(1),
        cluster_timestamp: Some(1),
    };
    let submit = y::SubmitApplicationRequestProto {
        application_submission_context: Some(y::ApplicationSubmissionContextProto {
            application_id: Some(app),
            queue: Some("default".into()),
            resource: Some(weft_proto::hadoop::resource_proto(
                weft_types::Resource::new(512, 1),
            )),
            am_container_spec: Some(y::ContainerLaunchContextProto {
                command: vec!["true".into()],
                ..Default::default()
            }),
            ..Default::default()
        }),
    };
    let mut plain = b"hrpc\x09\x00\x00".to_vec();
    plain.extend(wire::packet(&[
        &request_header(-3, &client_id, -1),
        &context,
    ]));
    plain.extend(call(0, "getApplications", Vec::new()));
    plain.extend(wire::packet(&[&request_header(-4, &client_id, -1)]));
    plain.extend(call(1, "getNewApplication", Vec::new()));
    plain.extend(call(2, "submitApplication", submit.encode_to_vec()));
    let report = y::GetApplicationReportRequestProto {
        application_id: Some(app),
    };
    plain.extend(call(3, "getApplicationReport", report.encode_to_vec()));
    let queue = y::GetQueueInfoRequestProto {
        queue_name: Some("root".into()),
        include_child_queues: Some(true),
        include_applications: Some(true),
        recursive: Some(true),
        ..Default::default()
    };
    plain.extend(call(4, "getQueueInfo", queue.encode_to_vec()));
    let kill = y::KillApplicationRequestProto {
        application_id: Some(app),
        diagnostics: None,
    };
    plain.extend(call(5, "forceKillApplication", kill.encode_to_vec()));
    let mut sasl = b"hrpc\x09\x00\xdf".to_vec();
    let negotiate = RpcSaslProto {
        state: 1,
        ..Default::default()
    };
    sasl.extend(wire::packet(&[&request_header(-33, &[], -1), &negotiate]));
    let seeds = vec![plain, sasl];
    fuzz(
        "hadoop_ipc_frame",
        &seeds,
        &[
            "hrpc",
            "getApplications",
            "moveApplicationAcrossQueues",
            "getClusterNodes",
            "getClusterMetrics",
            "root.default",
            "SIMPLE",
            "TOKEN",
        ],
        budget,
        rng_seed,
        |input| {
            let Some((preamble, mut rest)) = input.split_first_chunk::<7>() else {
                return;
            };
            if parse_preamble(preamble).is_err() {
                return;
            }
            while let Some((prefix, after)) = rest.split_first_chunk::<4>() {
                let Ok(len) = packet_length(*prefix, 1 << 20) else {
                    return;
                };
                let Some(frame) = after.get(..len) else {
                    return;
                };
                if let Ok(Packet::Call(call)) = Packet::decode(frame) {
                    assert!(call.id() >= 0, "a call with a negative id");
                    let _ = rm.hadoop_client(&call.method, &call.request);
                }
                rest = &after[len..];
            }
        },
    )
}
