//! How an AM's Allocate calls reach the RM: over the RM's Allocate stream
//! (`AllocateStreams.Allocates`, one long-lived call per attempt) when the RM offered it at
//! registration (`allocate_stream`), else one `Allocate` call each (Hadoop's RM speaks
//! another protocol; a Weft RM without the stream).
//!
//! The stream opens with the attempt's credentials as metadata (the RM checks them then, once)
//! and carries one request at a time: [`AllocateLink::allocate`] sends a request and waits for
//! its answer. Every answer and every refusal is the unary call's; a refusal ends the stream
//! (as it ends a unary call) and the next request opens a new one, as does a stream that
//! failed or whose answer a cancelled call left unread. The RM may end a stream between
//! requests (after a large answer, to free its buffer; or idle): a request it did not take up
//! goes as a unary call, and the next one opens a new stream. An RM that does not know the call (UNIMPLEMENTED) gets unary
//! calls from then on.

use std::time::Duration;

use tonic::transport::Channel;
use tonic::{Code, Status};

use crate::auth::AmCredentials;
use crate::call_stream::{self, OpenCall};
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
        }
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
