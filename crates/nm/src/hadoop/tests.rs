use std::net::SocketAddr;

use weft_proto::hadoop::yarn::{
    ContainerTokenIdentifierProto, StringLocalResourceMapProto, StringStringMapProto, UrlProto,
};
use weft_proto::v1::MasterKey as WireKey;
use weft_tokens::{ContainerTokenIdentifier, MasterKey};

use super::*;

const NODE: &str = "h:1";

fn security() -> Security {
    let s = Security::new(NODE.into());
    s.learn(Some(&WireKey::from_key(&MasterKey::derive(5, 0))));
    s
}

fn container() -> ContainerId {
    "container_1700000000000_0003_01_000002".parse().unwrap()
}

fn attempt() -> AttemptId {
    "appattempt_1700000000000_0003_000001".parse().unwrap()
}

fn weft_token(id: ContainerId, node: &str, expiry_ms: u64, key: &MasterKey) -> String {
    ContainerTokenIdentifier {
        container: id,
        node_id: node.into(),
        user: "alice".into(),
        memory_mb: 256,
        vcores: 1,
        expiry_ms,
        key_id: 0,
    }
    .issue(key)
}

fn request(identifier_id: ContainerId, password: String) -> StartContainerRequestProto {
    let identifier = ContainerTokenIdentifierProto {
        container_id: Some(wire::container_id_proto(identifier_id)),
        ..Default::default()
    };
    StartContainerRequestProto {
        container_launch_context: None,
        container_token: Some(TokenProto {
            identifier: identifier.encode_to_vec(),
            password: password.into_bytes(),
            kind: "ContainerToken".into(),
            service: NODE.into(),
        }),
    }
}

#[test]
fn a_valid_token_grants_its_container() {
    let key = MasterKey::derive(5, 0);
    let req = request(container(), weft_token(container(), NODE, 2_000, &key));
    let (id, granted) = token_of(&security(), attempt(), &req, 1_000).unwrap();
    assert_eq!(id, container());
    assert_eq!(granted.user, "alice");
}

#[test]
fn forged_expired_foreign_and_mismatched_tokens_are_refused_with_hadoops_classes() {
    let key = MasterKey::derive(5, 0);
    let forged = request(
        container(),
        weft_token(container(), NODE, 2_000, &MasterKey::derive(6, 0)),
    );
    let (id, r) = token_of(&security(), attempt(), &forged, 1_000).unwrap_err();
    assert_eq!(id, Some(container()));
    assert!(matches!(r, Refusal::InvalidToken(_)), "{r:?}");

    let expired = request(container(), weft_token(container(), NODE, 500, &key));
    let (_, r) = token_of(&security(), attempt(), &expired, 1_000).unwrap_err();
    assert!(
        matches!(&r, Refusal::Denied(m) if m.contains("expired")),
        "{r:?}"
    );
    let f = refused(Some(container()), r);
    assert_eq!(
        f.exception.unwrap().class_name.as_deref(),
        Some(exception::YARN)
    );

    let other_node = request(container(), weft_token(container(), "g:1", 2_000, &key));
    let (_, r) = token_of(&security(), attempt(), &other_node, 1_000).unwrap_err();
    assert!(
        matches!(&r, Refusal::Denied(m) if m.contains("not this node")),
        "{r:?}"
    );

    let other: ContainerId = "container_1700000000000_0003_01_000009".parse().unwrap();
    let mismatched = request(container(), weft_token(other, NODE, 2_000, &key));
    let (_, r) = token_of(&security(), attempt(), &mismatched, 1_000).unwrap_err();
    assert!(matches!(r, Refusal::InvalidToken(_)), "{r:?}");

    let foreign: AttemptId = "appattempt_1700000000000_0004_000001".parse().unwrap();
    let good = request(container(), weft_token(container(), NODE, 2_000, &key));
    let (_, r) = token_of(&security(), foreign, &good, 1_000).unwrap_err();
    assert!(
        matches!(&r, Refusal::Denied(m) if m.contains("unauthorized")),
        "{r:?}"
    );

    let mut none = good.clone();
    none.container_token = None;
    let (id, r) = token_of(&security(), attempt(), &none, 1_000).unwrap_err();
    assert_eq!(id, None);
    let f = refused(id, r);
    assert_eq!(
        f.exception.unwrap().class_name.as_deref(),
        Some(INVALID_TOKEN)
    );
}

#[test]
fn the_caller_must_be_an_attempt() {
    let caller = |user: &str| Caller {
        user: user.into(),
        real_user: None,
        peer: SocketAddr::from(([127, 0, 0, 1], 1)),
    };
    assert_eq!(
        caller_attempt(&caller("appattempt_1700000000000_0003_000001")).unwrap(),
        attempt()
    );
    let e = caller_attempt(&caller("root")).unwrap_err();
    assert_eq!(e.class_name, exception::YARN);
}

#[test]
fn a_spark_like_launch_context_becomes_a_hadoop_quoted_launch_spec() {
    let key = MasterKey::derive(5, 0);
    let granted = security()
        .verify_container_token(&weft_token(container(), NODE, 2_000, &key), 1_000)
        .unwrap();
    let ctx = ContainerLaunchContextProto {
        local_resources: vec![StringLocalResourceMapProto {
            key: Some("__spark_conf__".into()),
            value: Some(LocalResourceProto {
                resource: Some(UrlProto {
                    scheme: Some("file".into()),
                    file: Some("/staging/__spark_conf__.zip".into()),
                    ..Default::default()
                }),
                r#type: Some(LocalResourceTypeProto::Archive as i32),
                timestamp: Some(1_700_000_000_123),
                ..Default::default()
            }),
        }],
        tokens: Some(b"HDTS".to_vec()),
        environment: vec![StringStringMapProto {
            key: Some("CLASSPATH".into()),
            value: Some("{{PWD}}<CPS>{{PWD}}/__spark_conf__".into()),
        }],
        command: vec!["{{JAVA_HOME}}/bin/java".into(), "-Xmx1g".into()],
        ..Default::default()
    };
    let spec = launch_spec(container(), &granted, &ctx).unwrap();
    assert_eq!(spec.user, "alice");
    assert_eq!(spec.memory_bytes, 256 << 20);
    assert_eq!(spec.command, "{{JAVA_HOME}}/bin/java -Xmx1g");
    assert!(spec.hadoop_quoting);
    assert_eq!(spec.tokens, b"HDTS");
    let conf = &spec.local_resources["__spark_conf__"];
    assert_eq!(conf.url, "file:///staging/__spark_conf__.zip");
    assert_eq!(conf.kind, ResourceKind::Archive);
    assert_eq!(conf.timestamp, Some(1_700_000_000_123));
    let mut empty = ctx.clone();
    empty.command.clear();
    assert!(launch_spec(container(), &granted, &empty).is_err());
}
