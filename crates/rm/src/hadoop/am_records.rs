//! Weft's answers as ApplicationMasterProtocol's records: containers with their Hadoop
//! container tokens, NM tokens, completed statuses and the preemption message, each node named
//! by the address Hadoop's AMs dial.

use std::collections::HashMap;

use weft_proto::hadoop::yarn::*;
use weft_proto::hadoop::{self as wire};
use weft_proto::hadoop_tokens::{self, ContainerTokenContext};
use weft_rm_core::{AllocatedContainer, CompletedContainer, NmToken, NodeInfo, RmCore};
use weft_types::yarn_id::ContainerId;
use weft_types::Time;

/// Where an AM dials a node's ContainerManagementProtocol, which is also the container's
/// `NodeId` and the NM token's node: the Hadoop address the NM registered
/// (`yarn.nodemanager.address`); while an NM serves no Hadoop IPC (it registers that address
/// empty), its Weft node id, so AMRMClient still gets a well-formed NodeId.
fn hadoop_node_address(node: &NodeInfo) -> String {
    if node.hadoop_address.is_empty() {
        node.node_id.clone()
    } else {
        node.hadoop_address.clone()
    }
}

/// What containers and tokens need from the node table: each Weft node id's Hadoop address
/// and web address.
pub(super) struct NodeDirectory(HashMap<String, (String, String)>);

impl NodeDirectory {
    pub(super) fn of(core: &RmCore) -> NodeDirectory {
        NodeDirectory(
            core.node_infos()
                .iter()
                .map(|n| {
                    (
                        n.node_id.clone(),
                        (hadoop_node_address(n), n.http_address.clone()),
                    )
                })
                .collect(),
        )
    }

    pub(super) fn address<'a>(&'a self, node_id: &'a str) -> &'a str {
        self.0.get(node_id).map_or(node_id, |(a, _)| a.as_str())
    }

    pub(super) fn http<'a>(&'a self, node_id: &str) -> &'a str {
        self.0.get(node_id).map_or("", |(_, h)| h.as_str())
    }
}

/// A container as Hadoop's AMRMClient reads it, with its Hadoop container token.
pub(super) fn container(
    c: &AllocatedContainer,
    a: &NodeDirectory,
    now: Time,
    rm_identifier: i64,
) -> ContainerProto {
    let node = a.address(&c.node_id);
    let ctx = ContainerTokenContext {
        node,
        rm_identifier,
        priority: c.priority,
        creation_ms: i64::try_from(now.as_millis()).unwrap_or(i64::MAX),
        container_type: ContainerTypeProto::Task,
    };
    let container_token = match hadoop_tokens::container_token(&c.token, &ctx) {
        Ok(t) => Some(t),
        Err(e) => {
            // The core issued it a moment ago; a token that does not read is a bug.
            tracing::error!(container = %c.id, "cannot relay the container token: {e}");
            None
        }
    };
    let http = a.http(&c.node_id);
    ContainerProto {
        id: Some(wire::container_id_proto(c.id)),
        node_id: Some(hadoop_tokens::node_id_proto(node)),
        node_http_address: Some(http.to_string()),
        resource: Some(wire::resource_proto(c.resource)),
        priority: Some(wire::priority_proto(c.priority)),
        container_token,
        execution_type: Some(ExecutionTypeProto::Guaranteed as i32),
        allocation_request_id: Some(-1),
        version: Some(0),
        ..Default::default()
    }
}

/// NM tokens as Hadoop's `NMTokenProto`s, naming each node by its Hadoop address.
pub(super) fn nm_tokens(tokens: &[NmToken], a: &NodeDirectory) -> Vec<NmTokenProto> {
    tokens
        .iter()
        .filter_map(
            |t| match hadoop_tokens::nm_token(&t.token, a.address(&t.node_id)) {
                Ok(p) => Some(p),
                Err(e) => {
                    tracing::error!(node = %t.node_id, "cannot relay the NM token: {e}");
                    None
                }
            },
        )
        .collect()
}

pub(super) fn completed_status(c: &CompletedContainer) -> ContainerStatusProto {
    ContainerStatusProto {
        container_id: Some(wire::container_id_proto(c.id)),
        state: Some(ContainerStateProto::CComplete as i32),
        diagnostics: Some(c.diagnostics.clone()),
        exit_status: Some(c.exit_status),
        execution_type: Some(ExecutionTypeProto::Guaranteed as i32),
        ..Default::default()
    }
}

/// The containers the scheduler will take back, as a strict contract; left out while nothing
/// is marked (as Weft's gRPC service does; AMs treat an absent and an empty contract alike).
pub(super) fn preemption_message(marked: &[ContainerId]) -> Option<PreemptionMessageProto> {
    (!marked.is_empty()).then(|| PreemptionMessageProto {
        strict_contract: Some(StrictPreemptionContractProto {
            container: marked
                .iter()
                .map(|c| PreemptionContainerProto {
                    id: Some(wire::container_id_proto(*c)),
                })
                .collect(),
        }),
        contract: None,
    })
}
