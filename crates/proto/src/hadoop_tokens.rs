//! Weft's container and NM tokens as Hadoop's `TokenProto`s, the one place both daemons read
//! the convention from (the RM's ApplicationMasterProtocol writes them, the NM's
//! ContainerManagementProtocol reads them back):
//!
//! | token | identifier | password | kind | service |
//! |---|---|---|---|---|
//! | container | `ContainerTokenIdentifierProto` (raw encoding) | UTF-8 of Weft's container token text | `ContainerToken` | the NM's `host:port` |
//! | NM | `NMTokenIdentifierProto` (raw encoding) | UTF-8 of Weft's NM token text | `NMToken` | the NM's `host:port` |
//!
//! The identifier is what Hadoop's Java code parses (NMClient reads the container id, node and
//! resource out of it); the password carries Weft's own signed token, which is what an NM
//! verifies (`weft_tokens::KeyRing`). Hadoop would put HMAC-SHA1(master key, identifier) there
//! and check it over DIGEST-MD5; Weft's servers are simple-auth only (wire spec §3), so the
//! password travels as data and the NM checks it as a Weft token, then checks that the
//! identifier names the same container (or attempt) as the verified token.

use prost::Message;
use thiserror::Error;
use weft_tokens::{read_container_token_unverified, read_nm_token_unverified, TokenError};
use weft_types::Resource;

use crate::hadoop::common::TokenProto;
use crate::hadoop::yarn::{
    ContainerTokenIdentifierProto, ContainerTypeProto, ExecutionTypeProto, NmTokenIdentifierProto,
    NmTokenProto, NodeIdProto,
};
use crate::hadoop::{attempt_id_proto, container_id_proto, priority_proto, resource_proto};

/// `TokenProto.kind` of a container token (Hadoop's `ContainerTokenIdentifier.KIND`).
pub const CONTAINER_TOKEN_KIND: &str = "ContainerToken";
/// `TokenProto.kind` of an NM token (Hadoop's `NMTokenIdentifier.KIND`).
pub const NM_TOKEN_KIND: &str = "NMToken";

/// Why a token could not be converted.
#[derive(Debug, Error)]
pub enum HadoopTokenError {
    /// Weft's token text does not read.
    #[error("{0}")]
    Weft(#[from] TokenError),
    /// The `TokenProto` is of another kind.
    #[error("expected a {expected} token, got kind {got:?}")]
    Kind {
        /// The kind wanted.
        expected: &'static str,
        /// The kind sent.
        got: String,
    },
    /// The password is not Weft's token text.
    #[error("the {0} token's password is not UTF-8 text")]
    Password(&'static str),
    /// The identifier does not decode.
    #[error("the {0} token's identifier does not decode: {1}")]
    Identifier(&'static str, prost::DecodeError),
}

/// `host:port` as a `NodeIdProto` (split at the last colon; a missing or bad port is 0).
pub fn node_id_proto(node: &str) -> NodeIdProto {
    let (host, port) = match node.rsplit_once(':') {
        Some((h, p)) => (h, p.parse::<i32>().unwrap_or(0)),
        None => (node, 0),
    };
    NodeIdProto {
        host: Some(host.to_string()),
        port: Some(port),
    }
}

/// What Hadoop's container token identifier says beyond Weft's own token.
#[derive(Clone, Debug)]
pub struct ContainerTokenContext<'a> {
    /// The NM's `host:port` on which it serves ContainerManagementProtocol (the container's
    /// NodeId, the identifier's `nmHostAddr` and the token's service).
    pub node: &'a str,
    /// The RM's identifier (its cluster timestamp), as Hadoop's RM stamps it.
    pub rm_identifier: i64,
    /// The priority of the ask the container satisfies.
    pub priority: i32,
    /// When it was allocated (epoch ms).
    pub creation_ms: i64,
    /// An AM container or a task.
    pub container_type: ContainerTypeProto,
}

/// A Hadoop container token for the container Weft's `weft_token` grants: the identifier's
/// container, submitter, resource, expiry and key come from the Weft token itself, so the two
/// halves cannot disagree.
pub fn container_token(
    weft_token: &str,
    ctx: &ContainerTokenContext<'_>,
) -> Result<TokenProto, HadoopTokenError> {
    let t = read_container_token_unverified(weft_token)?;
    let identifier = ContainerTokenIdentifierProto {
        container_id: Some(container_id_proto(t.container)),
        nm_host_addr: Some(ctx.node.to_string()),
        app_submitter: Some(t.user),
        resource: Some(resource_proto(Resource::new(t.memory_mb, t.vcores))),
        expiry_time_stamp: Some(i64::try_from(t.expiry_ms).unwrap_or(i64::MAX)),
        master_key_id: Some(key_id(t.key_id)),
        rm_identifier: Some(ctx.rm_identifier),
        priority: Some(priority_proto(ctx.priority)),
        creation_time: Some(ctx.creation_ms),
        container_type: Some(ctx.container_type as i32),
        execution_type: Some(ExecutionTypeProto::Guaranteed as i32),
        version: Some(0),
        allocation_request_id: Some(-1),
        ..Default::default()
    };
    Ok(TokenProto {
        identifier: identifier.encode_to_vec(),
        password: weft_token.as_bytes().to_vec(),
        kind: CONTAINER_TOKEN_KIND.to_string(),
        service: ctx.node.to_string(),
    })
}

/// A Hadoop NM token (with its NodeId, as `NMTokenProto` carries it) for the attempt and node
/// Weft's `weft_token` grants; `node` is the NM's ContainerManagementProtocol `host:port`.
pub fn nm_token(weft_token: &str, node: &str) -> Result<NmTokenProto, HadoopTokenError> {
    let t = read_nm_token_unverified(weft_token)?;
    let identifier = NmTokenIdentifierProto {
        app_attempt_id: Some(attempt_id_proto(t.attempt)),
        node_id: Some(node_id_proto(node)),
        app_submitter: Some(t.user),
        key_id: Some(key_id(t.key_id)),
    };
    Ok(NmTokenProto {
        node_id: Some(node_id_proto(node)),
        token: Some(TokenProto {
            identifier: identifier.encode_to_vec(),
            password: weft_token.as_bytes().to_vec(),
            kind: NM_TOKEN_KIND.to_string(),
            service: node.to_string(),
        }),
    })
}

/// Hadoop's key ids are int32; Weft's u32 ids wrap into them as Java would read the bits.
fn key_id(id: u32) -> i32 {
    i32::from_ne_bytes(id.to_ne_bytes())
}

/// The Weft token text a Hadoop token of `kind` carries as its password (to verify with
/// `weft_tokens::KeyRing`).
pub fn weft_token_text<'a>(
    token: &'a TokenProto,
    kind: &'static str,
) -> Result<&'a str, HadoopTokenError> {
    if token.kind != kind {
        return Err(HadoopTokenError::Kind {
            expected: kind,
            got: token.kind.clone(),
        });
    }
    std::str::from_utf8(&token.password).map_err(|_| HadoopTokenError::Password(kind))
}

/// A container token's Hadoop identifier.
pub fn container_token_identifier(
    token: &TokenProto,
) -> Result<ContainerTokenIdentifierProto, HadoopTokenError> {
    ContainerTokenIdentifierProto::decode(token.identifier.as_slice())
        .map_err(|e| HadoopTokenError::Identifier(CONTAINER_TOKEN_KIND, e))
}

/// An NM token's Hadoop identifier.
pub fn nm_token_identifier(token: &TokenProto) -> Result<NmTokenIdentifierProto, HadoopTokenError> {
    NmTokenIdentifierProto::decode(token.identifier.as_slice())
        .map_err(|e| HadoopTokenError::Identifier(NM_TOKEN_KIND, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_tokens::{ContainerTokenIdentifier, KeyRing, MasterKey, NmTokenIdentifier};

    #[test]
    fn a_container_token_carries_hadoops_identifier_and_weft_s_token() {
        let key = MasterKey::derive(7, 1);
        let container = "container_1700000000000_0004_01_000002".parse().unwrap();
        let weft = ContainerTokenIdentifier {
            container,
            node_id: "127.0.0.1:45454".into(),
            user: "alice".into(),
            memory_mb: 1024,
            vcores: 2,
            expiry_ms: 1_700_000_600_000,
            key_id: 0,
        }
        .issue(&key);
        let ctx = ContainerTokenContext {
            node: "127.0.0.1:45454",
            rm_identifier: 1_700_000_000_000,
            priority: 1,
            creation_ms: 1_700_000_000_500,
            container_type: ContainerTypeProto::Task,
        };
        let token = container_token(&weft, &ctx).unwrap();
        assert_eq!(
            (token.kind.as_str(), token.service.as_str()),
            ("ContainerToken", "127.0.0.1:45454")
        );
        let id = container_token_identifier(&token).unwrap();
        assert_eq!(
            crate::hadoop::container_id(id.container_id.as_ref()).unwrap(),
            container
        );
        assert_eq!(id.nm_host_addr(), "127.0.0.1:45454");
        assert_eq!(id.app_submitter(), "alice");
        let r = id.resource.clone().unwrap();
        assert_eq!((r.memory, r.virtual_cores), (Some(1024), Some(2)));
        assert_eq!(id.expiry_time_stamp(), 1_700_000_600_000);
        assert_eq!(id.master_key_id(), key_id(key.id));
        assert_eq!(id.container_type(), ContainerTypeProto::Task);
        // The password verifies as the Weft token it is.
        let mut ring = KeyRing::default();
        ring.learn(key);
        let text = weft_token_text(&token, CONTAINER_TOKEN_KIND).unwrap();
        assert_eq!(ring.verify_container(text, 0).unwrap().container, container);
        assert!(weft_token_text(&token, NM_TOKEN_KIND).is_err());
    }

    #[test]
    fn an_nm_token_names_its_node_and_attempt() {
        let key = MasterKey::derive(7, 2);
        let attempt = "appattempt_1700000000000_0004_000001".parse().unwrap();
        let weft = NmTokenIdentifier {
            attempt,
            node_id: "127.0.0.1:45454".into(),
            user: "alice".into(),
            key_id: 0,
        }
        .issue(&key);
        let nm = nm_token(&weft, "127.0.0.1:45454").unwrap();
        let node = nm.node_id.unwrap();
        assert_eq!((node.host(), node.port()), ("127.0.0.1", 45454));
        let token = nm.token.unwrap();
        assert_eq!(
            (token.kind.as_str(), token.service.as_str()),
            ("NMToken", "127.0.0.1:45454")
        );
        let id = nm_token_identifier(&token).unwrap();
        assert_eq!(
            crate::hadoop::attempt_id(id.app_attempt_id.as_ref()).unwrap(),
            attempt
        );
        assert_eq!(id.app_submitter(), "alice");
        let mut ring = KeyRing::default();
        ring.learn(key);
        let text = weft_token_text(&token, NM_TOKEN_KIND).unwrap();
        assert_eq!(ring.verify_nm(text).unwrap().attempt, attempt);
        // A container token's text is not an NM token.
        assert!(nm_token("not a token", "h:1").is_err());
    }
}
