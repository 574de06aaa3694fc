//! How an AM's Allocate calls reach the RM: over Weft's framed transport ([`crate::frames`],
//! one plain TCP connection per attempt to the same port, its opening frame carrying the
//! credentials) when the RM offered it at registration (`framed_transport`), else over the
//! RM's Allocate stream (`AllocateStreams.Allocates`, one long-lived call per attempt) when it
//! offered that (`allocate_stream`), else one `Allocate` call each (Hadoop's RM speaks
//! another protocol; a Weft RM without either). The framed connection behaves as the stream
//! below does (refusals end it, a request it did not take up goes as a unary call); an RM that
//! refuses it as UNIMPLEMENTED gets the stream or unary calls from then on. Given shared
//! framed connections ([`AllocateLink::shared`], for a process hosting many AMs), the attempt
//! takes a lane of one before all of these ([`crate::shared_frames`]).
//!
//! The stream opens with the attempt's credentials as metadata (the RM checks them then, once)
//! and carries one request at a time: [`AllocateLink::allocate`] sends a request and waits for
//! its answer. Every answer and every refusal is the unary call's; a refusal ends the stream
//! (as it ends a unary call) and the next request opens a new one, as does a stream that
//! failed or whose answer a cancelled call left unread. The RM may end a stream between
//! requests (after a large answer, to free its buffer; or idle): a request it did not take up
//! goes as a unary call, and the next one opens a new stream. An RM that does not know the call (UNIMPLEMENTED) gets unary
//! calls from then on.

use std::sync::Arc;
use std::time::Duration;

use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::auth::AmCredentials;
use crate::call_stream::{self, OpenCall};
use crate::frames::{FramedCall, FramedOpen, Kind, MAX_MESSAGE};
use crate::shared_frames::{SharedAllocates, SharedLane};
use crate::v1::allocate_streams_client::AllocateStreamsClient;
use crate::v1::application_master_protocol_client::ApplicationMasterProtocolClient;
use crate::v1::{AllocateRequest, AllocateResponse};

type Open = OpenCall<AllocateRequest, AllocateResponse>;

/// One AM attempt's way of calling Allocate on one RM.
pub struct AllocateLink {
    unary: ApplicationMasterProtocolClient<Channel>,
    streams: Option<AllocateStreamsClient<Channel>>,
    credentials: AmCredentials,
    open: Option<Open>,
    /// The longest one call may take, when bounded.
    limit: Option<Duration>,
    /// The RM's address while it offers the framed transport.
    framed_address: Option<String>,
    framed: Option<FramedCall>,
    /// Shared framed connections to the RM while it offers the framed transport, and this
    /// attempt's lane on one.
    shared: Option<Arc<SharedAllocates>>,
    lane: Option<SharedLane>,
    /// The largest answer decoded.
    max_answer: usize,
}

impl AllocateLink {
    /// Allocate calls over `channel` as the attempt `credentials` name; over the stream when
    /// `stream_offered` (the registration answer's `allocate_stream`).
    pub fn new(channel: Channel, credentials: AmCredentials, stream_offered: bool) -> Self {
        AllocateLink {
            unary: ApplicationMasterProtocolClient::new(channel.clone()),
            streams: stream_offered.then(|| AllocateStreamsClient::new(channel)),
            credentials,
            open: None,
            limit: None,
            framed_address: None,
            framed: None,
            shared: None,
            lane: None,
            max_answer: MAX_MESSAGE,
        }
    }

    /// Allocates over the framed transport to `rm_address` (the port the channel dials) when
    /// `offered` (the register answer's `framed_transport`), before the stream or unary calls.
    pub fn framed(mut self, rm_address: &str, offered: bool) -> Self {
        self.framed_address = offered.then(|| rm_address.to_string());
        self
    }

    /// Whether calls go over the framed transport (until the RM refuses it as unimplemented).
    pub fn framing(&self) -> bool {
        self.framed_address.is_some()
    }

    /// Allocates on a lane of `connections` (shared framed connections to the RM's AM port,
    /// which bound their own answers' size) when `offered` (the register answer's
    /// `framed_transport`), before an own framed connection, the stream or unary calls.
    pub fn shared(mut self, connections: Arc<SharedAllocates>, offered: bool) -> Self {
        self.shared = offered.then_some(connections);
        self
    }

    /// Whether calls go on a lane of a shared connection (until the RM refuses it as
    /// unimplemented).
    pub fn sharing(&self) -> bool {
        self.shared.is_some()
    }

    /// Bounds each call (opening a stream included) to `limit`: DEADLINE_EXCEEDED after it, as
    /// a channel's timeout bounds a unary call (which does not bound a stream's messages).
    pub fn timeout(mut self, limit: Duration) -> Self {
        self.limit = Some(limit);
        self
    }

    /// Limits the size of an answer this link decodes (tonic's default is 4 MiB; a large grant
    /// is bigger).
    pub fn max_decoding_message_size(mut self, limit: usize) -> Self {
        self.unary = self.unary.max_decoding_message_size(limit);
        self.max_answer = limit;
        self.streams = self
            .streams
            .map(|client| client.max_decoding_message_size(limit));
        self
    }

    /// Whether calls go over the stream (until it fails as unimplemented).
    pub fn streaming(&self) -> bool {
        self.streams.is_some()
    }

    /// Sends one Allocate request and waits for its answer.
    pub async fn allocate(&mut self, request: AllocateRequest) -> Result<AllocateResponse, Status> {
        let Some(limit) = self.limit else {
            return self.call(request).await;
        };
        match tokio::time::timeout(limit, self.call(request)).await {
            Ok(answer) => answer,
            Err(_) => Err(Status::deadline_exceeded(format!(
                "no Allocate answer within {limit:?}"
            ))),
        }
    }

    async fn call(&mut self, request: AllocateRequest) -> Result<AllocateResponse, Status> {
        if self.lane.as_ref().is_some_and(|lane| !lane.in_step()) {
            self.lane = None;
        }
        if self.shared.is_some() && self.lane.is_none() {
            self.lane = self.open_lane().await?;
        }
        if let Some(lane) = &mut self.lane {
            // A refusal or a broken connection ends the lane; the next call opens another.
            return match lane.exchange(&request).await {
                Ok(reply) => Ok(reply),
                Err(status) => {
                    self.lane = None;
                    Err(status)
                }
            };
        }
        if self.framed.as_ref().is_some_and(|call| !call.in_step()) {
            self.framed = None;
        }
        if self.framed_address.is_some() && self.framed.is_none() {
            self.framed = self.open_framed().await?;
        }
        if let Some(call) = &mut self.framed {
            // As on the stream: a request the RM did not take up (it closed the connection
            // between requests) goes as a unary call, the next one opens a new connection.
            return match call.exchange(&request).await {
                Ok(Some(reply)) => Ok(reply),
                Ok(None) => {
                    self.framed = None;
                    self.unary(request).await
                }
                Err(status) => {
                    self.framed = None;
                    Err(status)
                }
            };
        }
        if self.open.as_ref().is_some_and(|open| !open.in_step()) {
            self.open = None;
        }
        if self.streams.is_some() && self.open.is_none() {
            self.open = self.open_stream().await?;
        }
        let Some(open) = &mut self.open else {
            return self.unary(request).await;
        };
        // The RM ends a stream between requests (after a large answer, or idle), without
        // taking up a request sent meanwhile: that one goes as a unary call, and the next
        // request opens a new stream.
        match open.exchange(request.clone()).await {
            Ok(Some(reply)) => Ok(reply),
            Ok(None) => {
                self.open = None;
                self.unary(request).await
            }
            Err(status) => {
                self.open = None;
                Err(call_stream::broken_as_unavailable(status))
            }
        }
    }

    async fn unary(&mut self, request: AllocateRequest) -> Result<AllocateResponse, Status> {
        let request = self
            .credentials
            .request(request)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        self.unary
            .allocate(request)
            .await
            .map(tonic::Response::into_inner)
    }

    /// Closes the open stream, if any (before the AM unregisters: the RM's side of the stream
    /// ends with it); a later call opens a new one.
    pub fn close(&mut self) {
        self.open = None;
        self.framed = None;
        self.lane = None;
    }

    /// Opens a lane with the attempt's credentials; `None` (and an own framed connection,
    /// the stream or unary calls from now on) when the RM does not serve shared connections.
    async fn open_lane(&mut self) -> Result<Option<SharedLane>, Status> {
        let Some(connections) = &self.shared else {
            return Ok(None);
        };
        let open = FramedOpen {
            attempt_id: self.credentials.attempt_id.clone(),
            am_token: self.credentials.token.clone(),
        };
        match connections.open(&open).await {
            Ok(lane) => Ok(Some(lane)),
            Err(status) if status.code() == Code::Unimplemented => {
                self.shared = None;
                Ok(None)
            }
            Err(status) => Err(status),
        }
    }

    /// Opens a framed connection with the attempt's credentials; `None` (and the stream or
    /// unary calls from now on) when the RM does not serve it.
    async fn open_framed(&mut self) -> Result<Option<FramedCall>, Status> {
        let Some(address) = &self.framed_address else {
            return Ok(None);
        };
        let open = FramedOpen {
            attempt_id: self.credentials.attempt_id.clone(),
            am_token: self.credentials.token.clone(),
        };
        match FramedCall::open(address, Kind::Allocates, &open, self.max_answer).await {
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
        let call = self
            .credentials
            .request(outgoing)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        match client.allocates(call).await {
            Ok(response) => Ok(Some(OpenCall::new(requests, response.into_inner()))),
            Err(status) if status.code() == Code::Unimplemented => {
                self.streams = None;
                Ok(None)
            }
            Err(status) => Err(status),
        }
    }
}
