//! Weft's Allocate stream (`AllocateStreams.Allocates`): one long-lived call per AM attempt
//! carries its Allocate calls, each answered in order exactly as the unary `Allocate` answers
//! it (`AmService::allocate_request` and `allocate_answer` around the same core call). A unary
//! Allocate costs the RM a HEADERS frame each way (hpack), a new HTTP/2 stream and a server
//! task; on the stream an Allocate is one DATA frame each way, read by the stream's one task.
//!
//! Identity: the call's metadata names the attempt and carries its token; the core checks
//! both when the stream opens (`RmCore::am_authenticate`) and the stream then speaks for that
//! attempt only: a request naming another (`attempt_id`) is refused (PermissionDenied). Each
//! request is checked as Hadoop checks an allocate on an authenticated connection: the
//! attempt must still be its app's current, live one (`RmCore::am_allocate_authenticated`);
//! the token is not compared again (Hadoop checks the AMRMToken when the connection
//! authenticates, not per call).
//!
//! Bounds: one request is read and answered at a time (nothing queues in the RM: the AM
//! waits for each answer), a message is bounded by tonic's decoding limit, a refusal ends the
//! stream (as it ends a unary call), so does an answer above [`LARGE_ANSWER`] (after it is
//! sent, so the encoder's buffer goes with the stream), and a stream silent for the AM expiry
//! is closed (its attempt has expired by then). The stream ends cleanly only between
//! requests, so an AM resends a request the ended stream did not answer.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use prost::Message;
use tonic::{Request, Response, Status, Streaming};
use weft_proto::v1::allocate_streams_server::AllocateStreams;
use weft_proto::v1::{AllocateRequest as WireAllocate, AllocateResponse as WireAllocateResponse};
use weft_types::yarn_id::AttemptId;

use crate::am_service::{credentials, AmService};
use crate::status::{driver_status, rm_status};

/// A stream ends (cleanly, between requests) after an answer larger than this: tonic keeps
/// the buffer a stream's answers are encoded in as large as the largest one for the stream's
/// life, and 2,500 AMs' streams held ~270 MB more than their unary calls (rm-bench, meituan
/// at 0.25). The AM opens a new stream for its next request (one more token check); large
/// answers are rare (a large grant's first calls).
const LARGE_ANSWER: usize = 64 * 1024;

/// The service, sharing the AM service's conversions and driver.
pub(crate) struct AllocateStreamService {
    pub(crate) am: Arc<AmService>,
    /// A stream with no request for this long is closed (the AM expiry).
    pub(crate) idle: Duration,
}

type Replies = Pin<Box<dyn Stream<Item = Result<WireAllocateResponse, Status>> + Send>>;

/// Where a stream is: reading requests for `attempt`, or done.
struct State {
    am: Arc<AmService>,
    requests: Streaming<WireAllocate>,
    attempt: AttemptId,
    idle: Duration,
    done: bool,
}

impl State {
    /// The answer to the next request; `None` when the AM closed the stream (or went idle),
    /// or after an error was sent (an error ends the call).
    async fn next(&mut self) -> Option<Result<WireAllocateResponse, Status>> {
        if self.done {
            return None;
        }
        let wire = match tokio::time::timeout(self.idle, self.requests.message()).await {
            Ok(Ok(Some(request))) => request,
            Ok(Ok(None)) | Err(_) => return None,
            Ok(Err(status)) => {
                self.done = true;
                return Some(Err(status));
            }
        };
        let reply = self.answer(wire).await;
        self.done = reply
            .as_ref()
            .map_or(true, |answer| answer.encoded_len() > LARGE_ANSWER);
        Some(reply)
    }

    async fn answer(&self, wire: WireAllocate) -> Result<WireAllocateResponse, Status> {
        answer(&self.am, self.attempt, wire).await
    }
}

/// One Allocate on an authenticated stream (this one or the framed transport's), answered as
/// the unary call answers it.
pub(crate) async fn answer(
    am: &AmService,
    attempt: AttemptId,
    wire: WireAllocate,
) -> Result<WireAllocateResponse, Status> {
    let (req, response_id) = am.allocate_request(&attempt, wire)?;
    let reply = am
        .driver
        .call_periodic_unordered(
            move |core, now| core.am_allocate_authenticated(now, attempt, req),
            crate::am_service::allocate_reveals_nothing,
        )
        .await
        .map_err(driver_status)?
        .map_err(|e| rm_status(&e))?;
    Ok(am.allocate_answer(reply, response_id))
}

/// The credentials check when a stream opens (this one or the framed transport's): the attempt
/// and its token, as the unary calls check them.
pub(crate) async fn authenticate(
    am: &AmService,
    attempt: AttemptId,
    token: String,
) -> Result<(), Status> {
    am.driver
        .call(move |core, _| core.am_authenticate(&attempt, &token))
        .await
        .map_err(driver_status)?
        .map_err(|e| rm_status(&e))
}

#[tonic::async_trait]
impl AllocateStreams for AllocateStreamService {
    type AllocatesStream = Replies;

    async fn allocates(
        &self,
        request: Request<Streaming<WireAllocate>>,
    ) -> Result<Response<Self::AllocatesStream>, Status> {
        let (attempt, token) = credentials(&request)?;
        authenticate(&self.am, attempt, token).await?;
        let state = State {
            am: Arc::clone(&self.am),
            requests: request.into_inner(),
            attempt,
            idle: self.idle,
            done: false,
        };
        let replies = futures_util::stream::unfold(state, |mut state| async move {
            let reply = state.next().await?;
            Some((reply, state))
        });
        Ok(Response::new(Box::pin(replies)))
    }
}
