//! Hadoop's own NMClient (the 3.5.0 client jars pyspark 4.3.0 bundles), unmodified, against a
//! NodeManager of `weft up`: it starts a container the RM allocated, with the container token
//! in the form the RM's AM protocol hands out (`weft_proto::hadoop_tokens`), reads its status
//! and stops it; a forged token is refused with the exception NMClient rethrows. The
//! allocation itself goes through Weft's gRPC AM protocol here, which the AM whose command
//! hands the test its credentials makes possible.
//!
//! Needs `java`, `javac` and pyspark's jars (installed once into `target/hadoop-venv`, see
//! `hadoop/support.rs`).

#[allow(dead_code)]
#[path = "cluster/harness.rs"]
mod harness;
#[allow(dead_code)]
#[path = "hadoop/support.rs"]
mod support;

use std::process::Command;
use std::time::Duration;

use serde_json::{json, Value};
use support::{compile_probe, pyspark_jars, require, run_bounded};
use weft_proto::auth::AmCredentials;
use weft_proto::hadoop::yarn::ContainerTypeProto;
use weft_proto::hadoop_tokens::{container_token, ContainerTokenContext};
use weft_proto::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use weft_proto::v1::{
    AllocateRequest, Container, RegisterApplicationMasterRequest, Resource, ResourceRequest,
};

fn post(url: &str, body: Option<Value>) -> Value {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut r = match body {
        Some(b) => agent.post(url).send_json(&b),
        None => agent.post(url).send_empty(),
    }
    .expect("the RM answers");
    assert!(r.status().is_success(), "{url}: {}", r.status());
    let text = r.body_mut().read_to_string().unwrap_or_default();
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Registers as the app's AM and allocates one 1 GB container (bounded polling).
async fn allocate_one(scheduler: &str, creds: &AmCredentials) -> Container {
    let mut am = ApplicationMasterProtocolClient::connect(format!("http://{scheduler}"))
        .await
        .expect("the AM service answers");
    am.register_application_master(
        creds
            .request(RegisterApplicationMasterRequest::default())
            .unwrap(),
    )
    .await
    .expect("registered");
    let mut ask = vec![ResourceRequest {
        priority: 1,
        resource_name: "*".into(),
        capability: Some(Resource::new(1024, 1)),
        num_containers: 1,
        relax_locality: Some(true),
        ..Default::default()
    }];
    for _ in 0..300 {
        let request = AllocateRequest {
            ask: std::mem::take(&mut ask),
            ..Default::default()
        };
        let reply = am
            .allocate(creds.request(request).unwrap())
            .await
            .expect("allocate");
        if let Some(c) = reply.into_inner().allocated_containers.pop() {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("no container was allocated");
}

#[test]
fn hadoops_nm_client_starts_queries_and_stops_a_container_on_a_weft_nm() {
    require("java");
    require("javac");
    let jars = pyspark_jars();
    let classpath = format!("{}/*", jars.display());
    let dir = tempfile::tempdir().unwrap();
    let classes = dir.path().join("classes");
    compile_probe(
        "NmClientProbe.java",
        &classpath,
        &classes,
        &dir.path().join("javac.out"),
    );

    let (_up, ready) = harness::weft_up(dir.path(), &["--nms", "1", "--nm-memory-mb", "4096"]);
    let web = ready["web"].as_str().expect("the RM's web address");
    let scheduler = ready["scheduler"].as_str().expect("the AM service");
    let conf = ready["hadoop_conf_dir"].as_str().expect("hadoop-conf");
    let nm_hadoop = ready["nodes"][0]["hadoop"]
        .as_str()
        .expect("the NM's Hadoop address")
        .to_string();
    assert!(nm_hadoop.starts_with("127.0.0.1:"), "{nm_hadoop}");

    // An app whose AM hands the test its credentials, then waits.
    let creds_file = dir.path().join("am.txt");
    let base = format!("http://{web}/ws/v1/cluster/apps");
    let app = post(&format!("{base}/new-application"), None);
    let app_id = app["application-id"].as_str().unwrap().to_string();
    post(
        &base,
        Some(json!({
            "application-id": app_id,
            "application-name": "nmclient-probe",
            "am-container-spec": {"commands": {"command": format!(
                "echo \"$APPLICATION_ATTEMPT_ID $WEFT_AM_TOKEN\" > {}.tmp; mv {0}.tmp {0}; sleep 300",
                creds_file.display()
            )}},
            "resource": {"memory": 1024, "vCores": 1},
        })),
    );
    let text = harness::wait_for(Duration::from_secs(60), "the AM's credentials", || {
        std::fs::read_to_string(&creds_file).ok()
    });
    let (attempt_id, token) = text.trim().split_once(' ').expect("attempt and token");
    let creds = AmCredentials {
        attempt_id: attempt_id.to_string(),
        token: token.to_string(),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let container = runtime.block_on(allocate_one(scheduler, &creds));
    let hadoop_token = container_token(
        &container.container_token,
        &ContainerTokenContext {
            node: &nm_hadoop,
            rm_identifier: 0,
            priority: 1,
            creation_ms: 0,
            container_type: ContainerTypeProto::Task,
        },
    )
    .expect("the RM's token reads");
    let size = container.resource.clone().unwrap_or_default();

    let marker = dir.path().join("nmclient-marker.txt");
    let (passed, output) = run_bounded(
        Command::new("java")
            .arg("-Xmx256m")
            .arg("-cp")
            .arg(format!("{classpath}:{}:{conf}", classes.display()))
            .arg("NmClientProbe")
            .arg(&nm_hadoop)
            .arg(&container.container_id)
            .arg(hex(&hadoop_token.identifier))
            .arg(&container.container_token)
            .arg(size.memory_mb.to_string())
            .arg(size.vcores.to_string())
            .arg(&marker)
            .env("HADOOP_CONF_DIR", conf),
        Duration::from_secs(180),
        &dir.path().join("probe.out"),
    );
    let shown: Vec<&str> = output
        .lines()
        .filter(|l| l.starts_with("OK ") || l.starts_with("FAIL ") || l.contains("Exception"))
        .take(60)
        .collect();
    assert!(
        passed && output.contains("PROBE PASSED"),
        "the probe failed:\n{}",
        shown.join("\n")
    );
    let forged = output
        .lines()
        .find_map(|l| l.strip_prefix("OK forged-token "))
        .expect("the forged token's refusal");
    assert!(
        forged.starts_with("org.apache.hadoop.security.token.SecretManager$InvalidToken"),
        "{forged}"
    );
    assert!(
        output.contains(&format!("OK start-container {}", container.container_id)),
        "{}",
        shown.join("\n")
    );
    assert!(
        output.contains("OK status state=RUNNING"),
        "{}",
        shown.join("\n")
    );
    assert!(
        output.contains("OK stop-container state=COMPLETE exit=-105"),
        "{}",
        shown.join("\n")
    );
    assert_eq!(harness::read(&marker), "started-by-nmclient\n");
}
