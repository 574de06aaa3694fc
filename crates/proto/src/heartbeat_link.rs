//! How an NM's heartbeats reach the RM: over Weft's framed transport ([`crate::frames`], one
//! plain TCP connection to the same port) when the RM offered it at registration
//! (`framed_transport`), else over the RM's heartbeat stream (`NodeHeartbeats.Heartbeats`, one
//! long-lived call) when it offered that, else one `NodeHeartbeat` call each (Hadoop's RM, or
//! a Weft RM without either). An RM that refuses the framed connection as UNIMPLEMENTED (the
//! transport turned off since the registration) gets the gRPC stream or unary calls from then
//! on, as one that does not know the stream gets unary calls.
//!
//! One heartbeat is in flight at a time: [`HeartbeatLink::beat`] sends a request and waits
//! for its answer, so the stream's outgoing queue holds at most one request. A stream that
//! fails, or whose answer a cancelled beat left unread, is dropped and the next beat opens a
//! new one; an RM that does not know the call (UNIMPLEMENTED) gets unary calls from then on.

use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::call_stream::{self, OpenCall};
use crate::frames::{FramedCall, FramedOpen, Kind, MAX_MESSAGE};
use crate::v1::node_heartbeats_client::NodeHeartbeatsClient;
use crate::v1::resource_tracker_client::ResourceTrackerClient;
use crate::v1::{NodeHeartbeatRequest, NodeHeartbeatResponse};

type Open = OpenCall<NodeHeartbeatRequest, NodeHeartbeatResponse>;

/// A node's way of heartbeating to one RM.
pub struct HeartbeatLink {
    unary: ResourceTrackerClient<Channel>,
    streams: Option<NodeHeartbeatsClient<Channel>>,
    open: Option<Open>,
    /// The RM's address while it offers the framed transport.
    framed_address: Option<String>,
    framed: Option<FramedCall>,
}

impl HeartbeatLink {
    /// Heartbeats over `channel`; over the stream when `stream_offered` (the registration
    /// answer's `heartbeat_stream`).
    pub fn new(channel: Channel, stream_offered: bool) -> Self {
        HeartbeatLink {
            unary: ResourceTrackerClient::new(channel.clone()),
            streams: stream_offered.then(|| NodeHeartbeatsClient::new(channel)),
            open: None,
            framed_address: None,
            framed: None,
        }
    }

    /// Heartbeats over the framed transport to `rm_address` (the port the channel dials) when
    /// `offered` (the registration answer's `framed_transport`), before the stream or unary
    /// calls.
    pub fn framed(mut self, rm_address: &str, offered: bool) -> Self {
        self.framed_address = offered.then(|| rm_address.to_string());
        self
    }

    /// Whether heartbeats go over the framed transport (until the RM refuses it as
    /// unimplemented).
    pub fn framing(&self) -> bool {
        self.framed_address.is_some()
    }

    /// Whether heartbeats go over the stream (until it fails as unimplemented).
    pub fn streaming(&self) -> bool {
        self.streams.is_some()
    }

    /// Sends one heartbeat and waits for its answer.
    pub async fn beat(
        &mut self,
        request: NodeHeartbeatRequest,
    ) -> Result<NodeHeartbeatResponse, Status> {
        if self.framed.as_ref().is_some_and(|call| !call.in_step()) {
            self.framed = None;
        }
        if self.framed_address.is_some() && self.framed.is_none() {
            self.framed = self.open_framed().await?;
        }
        if let Some(call) = &mut self.framed {
            let answer = match call.exchange(&request).await {
                Ok(Some(reply)) => return Ok(reply),
                Ok(None) => Err(Status::unavailable(
                    "the RM closed the framed heartbeat connection",
                )),
                Err(status) => Err(status),
            };
            self.framed = None;
            return answer;
        }
        if self.open.as_ref().is_some_and(|open| !open.in_step()) {
            self.open = None;
        }
        if self.streams.is_some() && self.open.is_none() {
            self.open = self.open_stream().await?;
        }
        let Some(open) = &mut self.open else {
            return self
                .unary
                .node_heartbeat(request)
                .await
                .map(tonic::Response::into_inner);
        };
        let answer = match open.exchange(request).await {
            Ok(Some(reply)) => return Ok(reply),
            Ok(None) => Err(Status::unavailable("the RM closed the heartbeat stream")),
            Err(status) => Err(status),
        };
        self.open = None;
        answer
    }

    /// Opens a framed connection; `None` (and the gRPC stream or unary calls from now on) when
    /// the RM does not serve it.
    async fn open_framed(&mut self) -> Result<Option<FramedCall>, Status> {
        let Some(address) = &self.framed_address else {
            return Ok(None);
        };
        match FramedCall::open(
            address,
            Kind::Heartbeats,
            &FramedOpen::default(),
            MAX_MESSAGE,
        )
        .await
        {
            Ok(call) => Ok(Some(call)),
            Err(status) if status.code() == Code::Unimplemented => {
                self.framed_address = None;
                Ok(None)
            }
            Err(status) => Err(status),
        }
    }

    /// Opens a stream; `None` (and unary calls from now on) when the RM does not serve it.
    async fn open_stream(&mut self) -> Result<Option<Open>, Status> {
        let Some(client) = &mut self.streams else {
            return Ok(None);
        };
        let (requests, outgoing) = call_stream::requests();
        match client.heartbeats(outgoing).await {
            Ok(response) => Ok(Some(OpenCall::new(requests, response.into_inner()))),
            Err(status) if status.code() == Code::Unimplemented => {
                self.streams = None;
                Ok(None)
            }
            Err(status) => Err(status),
        }
    }
}
