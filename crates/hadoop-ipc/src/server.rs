//! The tokio listener: one task per connection reads packets in order and runs each call as
//! its own task (so calls pipeline and replies go out as they finish), one writer task per
//! connection sends the replies. Every resource a client can make the server hold is bounded
//! ([`Limits`]); anything malformed closes that connection only.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use prost::Message;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::tcp::OwnedReadHalf;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};

use crate::dispatch::{Caller, Dispatcher};
use crate::error::{exception, ErrorCode, RpcError};
use crate::packet::{Call, Packet};
use crate::proto::rpc_sasl_proto::SaslState;
use crate::proto::{RpcRequestHeaderProto, RpcSaslProto};
use crate::wire::{
    self, packet_length, parse_preamble, AuthProtocol, PreambleError, AUTHORIZATION_FAILED_CALL_ID,
    PREAMBLE_LEN, SASL_CALL_ID,
};

/// What one client can make the server hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The largest packet accepted. Hadoop's `ipc.maximum.data.length` is 128 MiB, sized for
    /// HDFS block reports; YARN's client, AM and NM requests are kilobytes (a Spark
    /// submission's launch context with its classpath and tokens stays well under 1 MiB), so
    /// 8 MiB leaves ample room while `max_connections` packets in memory stay bounded
    /// (2 GiB at the defaults, and only if every client sends the largest packet at once).
    pub max_packet_bytes: usize,
    /// Time a new connection has to send its 7-byte preamble.
    pub preamble_timeout: Duration,
    /// Time the rest of a packet may take once its length has arrived (a client writes each
    /// packet whole, so only a stalled or hostile peer hits it).
    pub packet_timeout: Duration,
    /// Open connections at once; a connection over the bound is closed at once.
    pub max_connections: usize,
    /// Calls of one connection running at once; the connection is not read while it has this
    /// many (back pressure instead of an unbounded queue).
    pub max_calls_in_flight: usize,
    /// A connection with no call running that sends nothing for this long is closed. Hadoop's
    /// clients close their own idle connections after 10 s
    /// (`ipc.client.connection.maxidletime`), and ping every 60 s while a call runs.
    pub idle_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_packet_bytes: 8 * 1024 * 1024,
            preamble_timeout: Duration::from_secs(10),
            packet_timeout: Duration::from_secs(30),
            max_connections: 256,
            max_calls_in_flight: 64,
            idle_timeout: Duration::from_secs(120),
        }
    }
}

/// Serves `dispatcher`'s protocols on `listener` until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    dispatcher: Dispatcher,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) {
    let server = Connections::new(dispatcher, limits, stop.clone());
    loop {
        let accepted = tokio::select! {
            _ = stop.wait_for(|v| *v) => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((stream, peer)) => server.spawn(stream, peer),
            Err(e) => {
                // Out of descriptors and the like: wait a little rather than spin.
                tracing::warn!("Hadoop IPC accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// Serves connections accepted elsewhere, with [`serve`]'s bounds: for a listener shared
/// with another protocol, which hands over the connections that open with Hadoop's preamble
/// (`hrpc`). Clones share the connection bound.
#[derive(Clone)]
pub struct Connections {
    dispatcher: Arc<Dispatcher>,
    limits: Limits,
    permits: Arc<Semaphore>,
    stop: watch::Receiver<bool>,
}

impl Connections {
    /// Connections served by `dispatcher` until `stop` turns true.
    pub fn new(dispatcher: Dispatcher, limits: Limits, stop: watch::Receiver<bool>) -> Connections {
        Connections {
            dispatcher: Arc::new(dispatcher),
            limits,
            permits: Arc::new(Semaphore::new(limits.max_connections)),
            stop,
        }
    }

    /// Serves one accepted connection in its own task; one over the connection bound is
    /// closed at once.
    pub fn spawn(&self, stream: TcpStream, peer: SocketAddr) {
        let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() else {
            tracing::warn!(
                %peer,
                max = self.limits.max_connections,
                "Hadoop IPC connection refused: too many open connections"
            );
            return;
        };
        let _ = stream.set_nodelay(true);
        let dispatcher = Arc::clone(&self.dispatcher);
        let stop = self.stop.clone();
        let limits = self.limits;
        tokio::spawn(async move {
            if let Err(reason) = connection(stream, peer, dispatcher, limits, stop).await {
                tracing::info!(%peer, "Hadoop IPC connection closed: {reason}");
            }
            drop(permit);
        });
    }
}

/// Why a connection ended other than by the client closing it.
#[derive(Debug, thiserror::Error)]
enum Closed {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("no preamble within {0:?}")]
    PreambleTimeout(Duration),
    #[error("packet not received within {0:?}")]
    PacketTimeout(Duration),
    #[error("idle for {0:?}")]
    Idle(Duration),
    #[error("{0}")]
    Preamble(#[from] PreambleError),
    #[error("{0}")]
    Frame(#[from] wire::FrameError),
    #[error("{0}")]
    Packet(#[from] crate::packet::PacketError),
    #[error("{0}")]
    Protocol(String),
}

/// The connection's progress through SASL and the context.
struct Session {
    auth: AuthProtocol,
    sasl_done: bool,
    caller: Option<Caller>,
}

async fn connection(
    stream: TcpStream,
    peer: SocketAddr,
    dispatcher: Arc<Dispatcher>,
    limits: Limits,
    mut stop: watch::Receiver<bool>,
) -> Result<(), Closed> {
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut preamble = [0u8; PREAMBLE_LEN];
    tokio::time::timeout(limits.preamble_timeout, read.read_exact(&mut preamble))
        .await
        .map_err(|_| Closed::PreambleTimeout(limits.preamble_timeout))??;
    let preamble = match parse_preamble(&preamble) {
        Ok(p) => p,
        Err(PreambleError::Http) => {
            write.write_all(HTTP_ANSWER.as_bytes()).await?;
            return Err(PreambleError::Http.into());
        }
        Err(PreambleError::Version(v)) => {
            let error = RpcError {
                class_name: exception::VERSION_MISMATCH.to_string(),
                message: format!("Server IPC version 9 cannot communicate with client version {v}"),
                code: ErrorCode::VersionMismatch,
            };
            let reply = wire::error_packet(AUTHORIZATION_FAILED_CALL_ID, &[], None, true, &error);
            write.write_all(&reply).await?;
            return Err(PreambleError::Version(v).into());
        }
        Err(e) => return Err(e.into()),
    };

    let (tx, rx) = mpsc::channel::<Vec<u8>>(limits.max_calls_in_flight + 4);
    let writer = tokio::spawn(write_replies(write, rx));
    let in_flight = Arc::new(Semaphore::new(limits.max_calls_in_flight));
    let mut session = Session {
        auth: preamble.auth,
        sasl_done: false,
        caller: None,
    };
    let result = loop {
        // Waiting for the next packet's first byte is cancel-safe (`fill_buf` consumes
        // nothing), so the stop signal and the idle timeout may interrupt it.
        let waited = tokio::select! {
            _ = stop.wait_for(|v| *v) => break Ok(()),
            waited = tokio::time::timeout(limits.idle_timeout, read.fill_buf()) => waited,
        };
        match waited.map(|filled| filled.map(|bytes| bytes.is_empty())) {
            Err(_) if in_flight.available_permits() == limits.max_calls_in_flight => {
                break Err(Closed::Idle(limits.idle_timeout))
            }
            Err(_) => continue,
            Ok(Err(e)) => break Err(e.into()),
            Ok(Ok(true)) => break Ok(()),
            Ok(Ok(false)) => {}
        }
        let frame = match read_packet(&mut read, &limits).await {
            Ok(Some(frame)) => frame,
            Ok(None) => break Ok(()),
            Err(e) => break Err(e),
        };
        let packet = match Packet::decode(&frame) {
            Ok(p) => p,
            Err(e) => {
                let error = RpcError {
                    class_name: exception::SERVER.to_string(),
                    message: e.to_string(),
                    code: ErrorCode::InvalidRpcHeader,
                };
                let call_id = header_call_id(&frame).unwrap_or(AUTHORIZATION_FAILED_CALL_ID);
                let _ = tx
                    .send(wire::error_packet(call_id, &[], None, true, &error))
                    .await;
                break Err(e.into());
            }
        };
        match handle(&mut session, packet, peer, &tx, &in_flight, &dispatcher).await {
            Ok(()) => {}
            Err(refusal) => {
                let _ = tx
                    .send(wire::error_packet(
                        refusal.call_id,
                        &refusal.client_id,
                        None,
                        true,
                        &refusal.error,
                    ))
                    .await;
                break Err(Closed::Protocol(refusal.error.message));
            }
        }
    };
    drop(tx);
    // The writer ends once every running call has answered (each holds a sender).
    let _ = writer.await;
    result
}

/// A fatal refusal: the FATAL reply to send before closing.
struct Refusal {
    call_id: i32,
    client_id: Vec<u8>,
    error: RpcError,
}

fn refusal(header: &RpcRequestHeaderProto, code: ErrorCode, message: String) -> Refusal {
    let class = match code {
        ErrorCode::Unauthorized => exception::ACCESS_CONTROL,
        _ => exception::SERVER,
    };
    Refusal {
        call_id: header.call_id,
        client_id: header.client_id.clone(),
        error: RpcError {
            class_name: class.to_string(),
            message,
            code,
        },
    }
}

async fn handle(
    session: &mut Session,
    packet: Packet,
    peer: SocketAddr,
    tx: &mpsc::Sender<Vec<u8>>,
    in_flight: &Arc<Semaphore>,
    dispatcher: &Arc<Dispatcher>,
) -> Result<(), Refusal> {
    match packet {
        Packet::Ping => Ok(()),
        Packet::Sasl { header, sasl } => {
            if session.auth != AuthProtocol::Sasl || session.sasl_done {
                return Err(refusal(
                    &header,
                    ErrorCode::InvalidRpcHeader,
                    "SASL packet outside SASL negotiation".to_string(),
                ));
            }
            negotiate(session, &header, &sasl, tx).await
        }
        Packet::ConnectionContext { header, context } => {
            if session.auth == AuthProtocol::Sasl && !session.sasl_done {
                return Err(refusal(
                    &header,
                    ErrorCode::Unauthorized,
                    "connection context before SASL negotiation completed".to_string(),
                ));
            }
            if session.caller.is_some() {
                return Err(refusal(
                    &header,
                    ErrorCode::InvalidRpcHeader,
                    "a second connection context on one connection".to_string(),
                ));
            }
            let info = context.user_info.unwrap_or_default();
            let user = info.effective_user.unwrap_or_default();
            if user.is_empty() {
                return Err(refusal(
                    &header,
                    ErrorCode::Unauthorized,
                    "the connection context names no user (simple auth needs one)".to_string(),
                ));
            }
            session.caller = Some(Caller {
                user,
                real_user: info.real_user.filter(|u| !u.is_empty()),
                peer,
            });
            Ok(())
        }
        Packet::Call(call) => {
            let Some(caller) = session.caller.clone() else {
                return Err(refusal(
                    &call.header,
                    ErrorCode::InvalidRpcHeader,
                    format!("call {} before the connection context", call.id()),
                ));
            };
            // Closed only when the connection ends, so acquiring cannot fail.
            let Ok(permit) = Arc::clone(in_flight).acquire_owned().await else {
                return Ok(());
            };
            let tx = tx.clone();
            let dispatcher = Arc::clone(dispatcher);
            tokio::spawn(async move {
                let reply = run_call(&dispatcher, caller, call).await;
                let _ = tx.send(reply).await;
                drop(permit);
            });
            Ok(())
        }
    }
}

/// SASL on a simple-only server (spec §3.2): NEGOTIATE is answered SUCCESS ("switch to
/// simple"); an INITIATE that picks SIMPLE needs no answer; anything else is refused.
async fn negotiate(
    session: &mut Session,
    header: &RpcRequestHeaderProto,
    sasl: &RpcSaslProto,
    tx: &mpsc::Sender<Vec<u8>>,
) -> Result<(), Refusal> {
    match SaslState::try_from(sasl.state) {
        Ok(SaslState::Negotiate) => {
            let reply = RpcSaslProto {
                state: SaslState::Success as i32,
                ..Default::default()
            };
            let header = wire::response_header(
                SASL_CALL_ID,
                &[],
                None,
                crate::proto::rpc_response_header_proto::RpcStatusProto::Success,
            );
            let packet = wire::packet(&[&header, &reply]);
            let _ = tx.send(packet).await;
            session.sasl_done = true;
            Ok(())
        }
        Ok(SaslState::Initiate) if sasl.auths.first().is_some_and(|a| a.method == "SIMPLE") => {
            session.sasl_done = true;
            Ok(())
        }
        _ => {
            let offered: Vec<&str> = sasl.auths.iter().map(|a| a.method.as_str()).collect();
            Err(refusal(
                header,
                ErrorCode::Unauthorized,
                format!(
                    "this server accepts only SIMPLE authentication (SASL state {}, methods {:?})",
                    sasl.state, offered
                ),
            ))
        }
    }
}

async fn run_call(dispatcher: &Dispatcher, caller: Caller, call: Call) -> Vec<u8> {
    let Call {
        header,
        method,
        protocol,
        request,
        ..
    } = call;
    let result = dispatcher
        .dispatch(caller, &protocol, &method, request)
        .await;
    match result {
        Ok(body) => {
            wire::success_packet(header.call_id, &header.client_id, header.retry_count, &body)
        }
        Err(error) => {
            if error.code == ErrorCode::NoSuchMethod {
                // The calls a framework makes that Weft does not answer are what an operator
                // moving it over needs to see (and what the next compatibility work is).
                tracing::info!(protocol, method, "Hadoop IPC call not answered");
            } else {
                tracing::debug!(protocol, method, %error, "Hadoop IPC call failed");
            }
            wire::error_packet(
                header.call_id,
                &header.client_id,
                header.retry_count,
                false,
                &error,
            )
        }
    }
}

/// The next packet's bytes once its first byte has arrived; `None` when the client closed the
/// connection between packets. The whole packet must arrive within the packet timeout.
async fn read_packet(
    read: &mut BufReader<OwnedReadHalf>,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, Closed> {
    let whole = async {
        let mut prefix = [0u8; 4];
        match read.read_exact(&mut prefix).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(None),
            Err(e) => return Err(Closed::from(e)),
        }
        let len = packet_length(prefix, limits.max_packet_bytes)?;
        let mut frame = vec![0u8; len];
        read.read_exact(&mut frame).await?;
        Ok(Some(frame))
    };
    tokio::time::timeout(limits.packet_timeout, whole)
        .await
        .map_err(|_| Closed::PacketTimeout(limits.packet_timeout))?
}

/// The call id of a packet whose header decodes (for a FATAL reply to a bad body).
fn header_call_id(frame: &[u8]) -> Option<i32> {
    let (bytes, _) = wire::split_delimited(frame).ok()?;
    RpcRequestHeaderProto::decode(bytes).ok().map(|h| h.call_id)
}

async fn write_replies(
    mut write: tokio::net::tcp::OwnedWriteHalf,
    mut rx: mpsc::Receiver<Vec<u8>>,
) {
    while let Some(packet) = rx.recv().await {
        if write.write_all(&packet).await.is_err() {
            return;
        }
    }
    let _ = write.shutdown().await;
}

const HTTP_ANSWER: &str =
    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n\
This port speaks Hadoop IPC (RPC version 9), not HTTP. The ResourceManager's web UI and REST \
API are on its web address (yarn.resourcemanager.webapp.address).\r\n";
