//! Weft's framed transport on the RM (`weft_proto::frames` states the wire): the heartbeat and
//! Allocate streams' messages over a plain TCP connection on the same ports, without HTTP/2.
//! `shared_port` hands over connections that begin `W`; this module reads the preamble and the
//! opening frame, checks them, and then serves one request at a time, each answered exactly
//! as the gRPC stream answers it: heartbeats through `tracker::node_heartbeat` with the
//! stream's node pinning (`heartbeat_stream::same_node`), Allocates through
//! `allocate_stream::answer` after the same credential check at open
//! (`allocate_stream::authenticate`); shared connections, many attempts' Allocates on lanes
//! of one connection, in `framed_lanes`. A refusal is a frame with the gRPC path's code and
//! message, and ends the connection as it ends a gRPC call.
//!
//! Why: over gRPC about four fifths of the RM's CPU per message was the framework (tonic's
//! stream tasks, h2's connection task, a `writev` per reply). Here a connection is one task
//! that reads through a buffer it keeps (several requests in one `recv` when they queue),
//! decodes in place, and writes each answer with one `write` from a buffer it keeps.
//!
//! Bounds (every byte is untrusted): frames above tonic's decoding limit (`MAX_MESSAGE`) are
//! refused from their header; an opening frame is at most `MAX_OPEN`; the preamble and opening
//! come within `shared_port`'s first-byte timeout while holding an unsorted place; a
//! connection with no request for the gRPC stream's idle time is closed; at most
//! [`MAX_CONNECTIONS`] framed connections per port.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::{watch, Semaphore};
use tokio::time::Instant;
use tonic::Status;
use weft_proto::frames::{
    put_empty, put_error, put_frame, write_out, FrameError, FrameReader, FrameType, FramedOpen,
    Kind, MAX_MESSAGE, MAX_OPEN,
};
use weft_proto::v1::{
    AllocateRequest, AllocateResponse, NodeHeartbeatRequest, NodeHeartbeatResponse,
};
use weft_types::yarn_id::AttemptId;

use crate::am_service::AmService;
use crate::heartbeat_stream::same_node;
use crate::tracker::{node_heartbeat, Tracker};

/// Framed connections one port serves at once; more are refused (RESOURCE_EXHAUSTED). Above a
/// full cluster's NMs (12,000) or AMs on one port; the process's file limit binds first.
const MAX_CONNECTIONS: usize = 32_768;

/// One port's framed transport: what it serves, and its bounds.
pub(crate) struct FramedPort {
    /// `weft.resourcemanager.framed-transport.enabled`: off, every framed connection is
    /// refused as UNIMPLEMENTED (as gRPC refuses a service it does not serve), and clients
    /// fall back to the gRPC stream.
    enabled: bool,
    heartbeats: Option<Arc<Tracker>>,
    /// The AM service, and how long an Allocate connection may stay silent (the AM expiry).
    allocates: Option<(Arc<AmService>, Duration)>,
    connections: Arc<Semaphore>,
    stop: watch::Receiver<bool>,
}

/// A framed connection whose preamble and opening frame have arrived.
pub(crate) struct Opened {
    stream: TcpStream,
    reader: FrameReader,
    kind: Kind,
    open: FramedOpen,
}

impl FramedPort {
    /// The resource tracker port's: heartbeats.
    pub(crate) fn heartbeats(
        enabled: bool,
        tracker: Arc<Tracker>,
        stop: watch::Receiver<bool>,
    ) -> Self {
        FramedPort {
            enabled,
            heartbeats: Some(tracker),
            allocates: None,
            connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            stop,
        }
    }

    /// The AM port's: Allocates, a connection closed after `idle` without a request.
    pub(crate) fn allocates(
        enabled: bool,
        am: Arc<AmService>,
        idle: Duration,
        stop: watch::Receiver<bool>,
    ) -> Self {
        FramedPort {
            enabled,
            heartbeats: None,
            allocates: Some((am, idle)),
            connections: Arc::new(Semaphore::new(MAX_CONNECTIONS)),
            stop,
        }
    }

    /// Reads a connection's preamble and opening frame; `None` when the connection was
    /// refused or closed (the caller bounds the time).
    pub(crate) async fn open(&self, mut stream: TcpStream) -> Option<Opened> {
        let mut reader = FrameReader::new();
        let kind = match reader.preamble(&mut stream).await {
            Ok(kind) => Ok(kind),
            // Not this transport after all, or gone: nobody to answer.
            Err(FrameError::BadMagic | FrameError::Truncated | FrameError::Io(_)) => return None,
            // A version or kind this RM does not know: a newer client falls back.
            Err(e) => Err(Status::unimplemented(e.to_string())),
        };
        // The opening frame is read before any refusal: closing a socket with unread bytes
        // resets it, and the client could lose the refusal.
        let open = match reader.next(&mut stream, MAX_OPEN).await {
            Ok(Some((FrameType::Open, payload))) => FramedOpen::decode(payload)
                .map_err(|e| Status::internal(format!("undecodable opening frame: {e}"))),
            Ok(Some((other, _))) => Err(Status::invalid_argument(format!(
                "a framed connection begins with an Open frame, not {other:?}"
            ))),
            Ok(None) | Err(FrameError::Truncated | FrameError::Io(_)) => return None,
            Err(e) => Err(Status::invalid_argument(e.to_string())),
        };
        let kind = match kind {
            Ok(kind) => kind,
            Err(status) => {
                refuse(&mut stream, &status).await;
                return None;
            }
        };
        let served = match kind {
            Kind::Heartbeats => self.heartbeats.is_some(),
            Kind::Allocates | Kind::SharedAllocates => self.allocates.is_some(),
        };
        let refusal = if !self.enabled {
            Some(Status::unimplemented(
                "this RM does not serve the framed transport \
                 (weft.resourcemanager.framed-transport.enabled = false)",
            ))
        } else if !served {
            Some(Status::unimplemented(format!(
                "this port does not serve framed {kind:?} connections"
            )))
        } else {
            None
        };
        match (refusal, open) {
            (Some(status), _) | (None, Err(status)) => {
                refuse(&mut stream, &status).await;
                None
            }
            (None, Ok(open)) => Some(Opened {
                stream,
                reader,
                kind,
                open,
            }),
        }
    }

    /// Serves an opened connection until it closes, goes idle, is refused or the RM stops.
    pub(crate) async fn serve(&self, opened: Opened) {
        let Opened {
            mut stream,
            reader,
            kind,
            open,
        } = opened;
        let Ok(_place) = Arc::clone(&self.connections).try_acquire_owned() else {
            let busy = Status::resource_exhausted(format!(
                "the RM serves at most {MAX_CONNECTIONS} framed connections on this port"
            ));
            refuse(&mut stream, &busy).await;
            return;
        };
        let stop = self.stop.clone();
        match (kind, &self.heartbeats, &self.allocates) {
            (Kind::Heartbeats, Some(tracker), _) => {
                let answers = Heartbeats {
                    tracker: Arc::clone(tracker),
                    node: None,
                };
                if let Some(connection) = Connection::accept(stream, reader).await {
                    connection
                        .serve(answers, crate::heartbeat_stream::IDLE, stop)
                        .await;
                }
            }
            (Kind::Allocates, _, Some((am, idle))) => {
                let attempt = match allocate_credentials(&open) {
                    Ok((attempt, token)) => {
                        match crate::allocate_stream::authenticate(am, attempt, token).await {
                            Ok(()) => attempt,
                            Err(status) => return refuse(&mut stream, &status).await,
                        }
                    }
                    Err(status) => return refuse(&mut stream, &status).await,
                };
                let answers = Allocates {
                    am: Arc::clone(am),
                    attempt,
                };
                if let Some(connection) = Connection::accept(stream, reader).await {
                    connection.serve(answers, *idle, stop).await;
                }
            }
            // The opening frame names no attempt: each lane's does.
            (Kind::SharedAllocates, _, Some((am, idle))) => {
                crate::framed_lanes::serve(stream, reader, Arc::clone(am), *idle, stop).await;
            }
            // `open` refused kinds this port does not serve.
            _ => {}
        }
    }
}

/// The attempt an Allocate connection's opening frame names, with the gRPC path's refusals
/// (`am_service::credentials`): PERMISSION_DENIED without credentials, INVALID_ARGUMENT for an
/// attempt id that does not parse.
pub(crate) fn allocate_credentials(open: &FramedOpen) -> Result<(AttemptId, String), Status> {
    if open.attempt_id.is_empty() || open.am_token.is_empty() {
        return Err(Status::permission_denied(
            "missing AM credentials: the opening frame carries the attempt id and AM token",
        ));
    }
    let attempt = open
        .attempt_id
        .parse::<AttemptId>()
        .map_err(|e| Status::invalid_argument(e.to_string()))?;
    Ok((attempt, open.am_token.clone()))
}

/// Writes `status` as a refusal frame and closes the connection.
pub(crate) async fn refuse(stream: &mut TcpStream, status: &Status) {
    let mut out = Vec::new();
    put_error(&mut out, status);
    let _ = write_out(stream, &mut out).await;
    let _ = stream.shutdown().await;
}

/// What a connection's requests are answered by.
trait Answers {
    type Request: Message + Default;
    type Response: Message;
    fn answer(
        &mut self,
        request: Self::Request,
    ) -> impl Future<Output = Result<Self::Response, Status>> + Send;
}

/// An NM's heartbeats: pinned to the node of the first, each answered as NodeHeartbeat does.
struct Heartbeats {
    tracker: Arc<Tracker>,
    node: Option<String>,
}

impl Answers for Heartbeats {
    type Request = NodeHeartbeatRequest;
    type Response = NodeHeartbeatResponse;

    async fn answer(
        &mut self,
        request: NodeHeartbeatRequest,
    ) -> Result<NodeHeartbeatResponse, Status> {
        same_node(&mut self.node, &request.node_id)?;
        node_heartbeat(&self.tracker, request).await
    }
}

/// An AM attempt's Allocates, its credentials checked at open.
struct Allocates {
    am: Arc<AmService>,
    attempt: AttemptId,
}

impl Answers for Allocates {
    type Request = AllocateRequest;
    type Response = AllocateResponse;

    fn answer(
        &mut self,
        request: AllocateRequest,
    ) -> impl Future<Output = Result<AllocateResponse, Status>> + Send {
        crate::allocate_stream::answer(&self.am, self.attempt, request)
    }
}

/// An accepted connection: its socket, its read buffer and its write buffer.
struct Connection {
    stream: TcpStream,
    reader: FrameReader,
    out: Vec<u8>,
}

/// The status of a request frame the RM cannot take (tonic's words for a too large one).
pub(crate) fn unreadable(e: &FrameError) -> Option<Status> {
    match e {
        FrameError::TooLarge { len, max } => Some(Status::out_of_range(format!(
            "Error, decoded message length too large: found {len} bytes, the limit is: {max} bytes"
        ))),
        FrameError::Type(_) | FrameError::NoLane(_) => {
            Some(Status::invalid_argument(e.to_string()))
        }
        // The connection broke: nobody to answer.
        _ => None,
    }
}

impl Connection {
    /// Tells the client its opening was taken; `None` when the connection broke.
    async fn accept(mut stream: TcpStream, reader: FrameReader) -> Option<Connection> {
        let mut out = Vec::with_capacity(1024);
        put_empty(&mut out, FrameType::Accepted);
        write_out(&mut stream, &mut out).await.ok()?;
        Some(Connection {
            stream,
            reader,
            out,
        })
    }

    async fn refuse(&mut self, status: &Status) {
        put_error(&mut self.out, status);
        let _ = write_out(&mut self.stream, &mut self.out).await;
        let _ = self.stream.shutdown().await;
    }

    /// Reads and answers requests one at a time until the client closes, `idle` passes
    /// without a request, a refusal, or the RM stops.
    async fn serve<A: Answers>(
        mut self,
        mut answers: A,
        idle: Duration,
        mut stop: watch::Receiver<bool>,
    ) {
        // One timer for the connection's life, moved only when it fires early (a timer per
        // read would register and clear a timer-wheel entry per message).
        let mut last_request = Instant::now();
        let idle_timer = tokio::time::sleep(idle);
        tokio::pin!(idle_timer);
        let stopped = stop.wait_for(|stopped| *stopped);
        tokio::pin!(stopped);
        loop {
            let frame = loop {
                tokio::select! {
                    biased;
                    frame = self.reader.next(&mut self.stream, MAX_MESSAGE) => break frame,
                    () = &mut idle_timer => {
                        if last_request.elapsed() >= idle {
                            return;
                        }
                        idle_timer.as_mut().reset(last_request + idle);
                    }
                    _ = &mut stopped => return,
                }
            };
            let request = match frame {
                Ok(Some((FrameType::Message, payload))) => A::Request::decode(payload)
                    .map_err(|e| Status::internal(format!("failed to decode the request: {e}"))),
                Ok(Some((other, _))) => Err(Status::invalid_argument(format!(
                    "expected a request frame, not {other:?}"
                ))),
                Ok(None) => return,
                Err(e) => match unreadable(&e) {
                    Some(status) => Err(status),
                    None => return,
                },
            };
            last_request = Instant::now();
            let answer = match request {
                Ok(request) => answers.answer(request).await,
                Err(status) => Err(status),
            };
            match answer {
                Ok(reply) => {
                    if let Err(e) = put_frame(&mut self.out, FrameType::Message, &reply) {
                        let status = Status::internal(format!("cannot frame the answer: {e}"));
                        return self.refuse(&status).await;
                    }
                    if write_out(&mut self.stream, &mut self.out).await.is_err() {
                        return;
                    }
                }
                Err(status) => return self.refuse(&status).await,
            }
        }
    }
}
