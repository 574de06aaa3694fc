//! Weft's wire protocols: gRPC services modelled one-to-one on YARN's.
//!
//! * [`v1::resource_tracker_server`] / [`v1::resource_tracker_client`]: NodeManagers register
//!   with the RM, heartbeat container statuses and learn what to stop (YARN's `ResourceTracker`);
//!   [`v1::node_heartbeats_server`]: Weft's heartbeat stream, one call per NM
//!   ([`heartbeat_link`] is the NM's side).
//! * [`v1::application_master_protocol_server`] / [`v1::application_master_protocol_client`]:
//!   ApplicationMasters register, ask for containers and finish (YARN's
//!   `ApplicationMasterProtocol`). Calls are authenticated with [`auth`] metadata.
//!   [`v1::allocate_streams_server`]: Weft's Allocate stream, one call per AM attempt
//!   ([`allocate_link`] is the AM's side).
//! * [`frames`]: Weft's framed transport, the heartbeat and Allocate streams' messages over a
//!   plain TCP connection on the same ports (no HTTP/2), which both links prefer when the RM
//!   offers it.
//! * [`v1::container_management_server`] / [`v1::container_management_client`]: AMs and the
//!   RM start, stop and query containers on an NM (YARN's `ContainerManagementProtocol`).
//!
//! * [`hadoop`]: YARN's own messages as Hadoop's clients send them over Hadoop IPC (see
//!   `weft-hadoop-ipc`), with their id and resource conversions; [`hadoop_tokens`]: Weft's
//!   container and NM tokens as Hadoop's `TokenProto`s (the RM writes, the NM reads).
//!
//! This crate holds the only conversions between wire types and `weft-types` ([`resource`]),
//! so other crates never hand-map protobuf fields.

pub mod allocate_link;
pub mod auth;
mod call_stream;
pub mod exit_status;
pub mod frames;
pub mod hadoop;
pub mod hadoop_tokens;
pub mod heartbeat_link;
pub mod master_key;
pub mod resource;
pub mod shared_frames;

/// The generated messages, enums, clients and servers of package `weft.v1`.
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
pub mod v1 {
    tonic::include_proto!("weft.v1");
}

pub use resource::ResourceError;
