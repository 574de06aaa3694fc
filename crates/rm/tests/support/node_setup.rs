//! An RM in-process and a connection to its tracker port, for the NM protocol's tests.

use tokio::runtime::Runtime;
use tonic::transport::Channel;
use weft_proto::v1::resource_tracker_client::ResourceTrackerClient;
use weft_proto::v1::*;

/// The RM (assigning as many containers per heartbeat as fit), a channel to its tracker port
/// and a client on it.
pub(crate) struct NodeSetup {
    // Dropped in this order: the RM first, the runtime and the directory last.
    pub(crate) _rm: weft_rm::RunningRm,
    pub(crate) tracker: ResourceTrackerClient<Channel>,
    pub(crate) channel: Channel,
    /// The RM's tracker address (`host:port`).
    pub(crate) address: String,
    pub(crate) rt: Runtime,
    pub(crate) _dir: tempfile::TempDir,
}

impl NodeSetup {
    /// An RM with the `properties` lines added to its configuration's [properties] table, and
    /// the connection to it.
    pub(crate) fn start(properties: &str) -> NodeSetup {
        let dir = tempfile::tempdir().unwrap();
        let rt = super::runtime();
        let rm = super::start_rm_with(&rt, dir.path(), 100, properties);
        let address = rm.tracker.to_string();
        let channel = rt
            .block_on(
                tonic::transport::Endpoint::from_shared(format!("http://{address}"))
                    .unwrap()
                    .connect(),
            )
            .unwrap();
        NodeSetup {
            _rm: rm,
            tracker: ResourceTrackerClient::new(channel.clone()),
            channel,
            address,
            rt,
            _dir: dir,
        }
    }

    /// Registers a node of 8 GB and 8 vcores as `node_id`; the RM's answer.
    pub(crate) fn register(&mut self, node_id: &str) -> RegisterNodeManagerResponse {
        let request = RegisterNodeManagerRequest {
            node_id: node_id.to_string(),
            address: "127.0.0.1:1".to_string(),
            total_capability: Some(Resource::new(8 * 1024, 8)),
            ..Default::default()
        };
        self.rt
            .block_on(self.tracker.register_node_manager(request))
            .unwrap()
            .into_inner()
    }
}

/// A heartbeat of `node_id` with no containers.
pub(crate) fn beat(node_id: &str, secret: &str, response_id: i32) -> NodeHeartbeatRequest {
    NodeHeartbeatRequest {
        node_id: node_id.to_string(),
        response_id,
        node_secret: secret.to_string(),
        running_containers: Some(0),
        ..Default::default()
    }
}
