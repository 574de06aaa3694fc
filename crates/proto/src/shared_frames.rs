//! The client's side of a shared framed connection ([`Kind::SharedAllocates`]): many AM
//! attempts' Allocates over one TCP connection, each attempt on its own lane. A process that
//! hosts many AMs (a gateway, `weft rm-bench`) would otherwise need a connection per attempt,
//! and a cluster's worth of them passes the open-file limit of both ends; Hadoop's IPC client
//! shares one connection among its callers for the same reason.
//!
//! The wire, beside the framing of [`crate::frames`]:
//! * the preamble names [`Kind::SharedAllocates`]; the opening frame carries no credentials
//!   and the RM answers it with [`FrameType::Accepted`] (or a refusal that ends the
//!   connection, as for the other kinds);
//! * every later frame's payload begins with its lane's number ([`LANE_LEN`] bytes); a lane
//!   opens with an Open frame carrying its attempt's credentials, answered by Accepted or a
//!   refusal; then one request at a time, each answered in order by a message or a refusal; a
//!   refusal ends the lane only; the client ends a lane with a Close frame;
//! * lanes answer independently: one lane's slow answer holds no other lane's.
//!
//! One task per connection writes what the lanes queue (all that is queued in one write) and
//! hands each answer to the lane waiting for it. When the connection breaks, every waiting
//! lane gets UNAVAILABLE and the next lane opened dials a new connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use prost::Message;
use tokio::net::TcpStream;
use tokio::sync::{mpsc, oneshot};
use tonic::Status;

use crate::frames::{
    error_status, preamble, put_frame, put_lane_empty, put_lane_frame, split_lane, write_out,
    FrameError, FrameReader, FrameType, FramedOpen, Kind, LANE_LEN, MAX_OPEN,
};

/// Time the RM has to accept (or refuse) the connection or a lane.
const OPEN_TIMEOUT: Duration = Duration::from_secs(20);

/// What a lane is waiting for: the next frame on it, its type and payload (the lane's number
/// taken off).
type Waiter = oneshot::Sender<(FrameType, Vec<u8>)>;

/// Shared connections to one RM's AM port: lanes open on the current one, and a new one is
/// dialed when it has broken.
pub struct SharedAllocates {
    address: String,
    /// The largest answer a lane decodes.
    max_answer: usize,
    current: tokio::sync::Mutex<Option<Arc<Connection>>>,
    next_lane: AtomicU32,
}

/// One shared connection as its lanes see it.
struct Connection {
    outgoing: mpsc::UnboundedSender<Vec<u8>>,
    waiting: Mutex<HashMap<u32, Waiter>>,
    broken: AtomicBool,
}

impl Connection {
    /// Queues `frame` after registering `lane`'s wait for the answer.
    fn send(
        &self,
        lane: u32,
        frame: Vec<u8>,
    ) -> Result<oneshot::Receiver<(FrameType, Vec<u8>)>, Status> {
        let (tx, rx) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(lane, tx);
        if self.broken.load(Ordering::Acquire) || self.outgoing.send(frame).is_err() {
            self.waiting
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .remove(&lane);
            return Err(broken("it had closed"));
        }
        Ok(rx)
    }
}

/// A connection that broke under a lane: UNAVAILABLE, which callers retry as they retry an
/// unreachable RM.
fn broken(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the shared framed connection to the RM broke: {e}"))
}

impl SharedAllocates {
    /// Shared connections to the AM port at `address` (`host:port`), decoding answers up to
    /// `max_answer` bytes.
    pub fn new(address: &str, max_answer: usize) -> Self {
        SharedAllocates {
            address: address.to_string(),
            max_answer,
            current: tokio::sync::Mutex::new(None),
            next_lane: AtomicU32::new(1),
        }
    }

    /// Opens a lane for the attempt `open` names; the RM's refusal comes back as its status
    /// (UNIMPLEMENTED from an RM that does not serve shared connections).
    pub async fn open(&self, open: &FramedOpen) -> Result<SharedLane, Status> {
        let connection = self.connection().await?;
        let lane = self.next_lane.fetch_add(1, Ordering::Relaxed);
        let mut frame = Vec::new();
        put_lane_frame(&mut frame, FrameType::Open, lane, open)
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let answer = connection.send(lane, frame)?;
        // Until the RM accepts it, the lane closes when this call fails or is dropped: an
        // opening the RM takes up late would otherwise hold one of its lanes.
        let mut opening = SharedLane {
            connection,
            lane,
            waiting: true,
        };
        let opened = match tokio::time::timeout(OPEN_TIMEOUT, answer).await {
            Ok(Ok(opened)) => opened,
            Ok(Err(_)) => return Err(broken("it closed before the lane opened")),
            Err(_) => {
                return Err(Status::unavailable(format!(
                    "the RM at {} did not open a lane within {OPEN_TIMEOUT:?}",
                    self.address
                )))
            }
        };
        match opened {
            (FrameType::Accepted, _) => {
                opening.waiting = false;
                Ok(opening)
            }
            (FrameType::Error, payload) => Err(error_status(&payload)),
            (other, _) => Err(Status::internal(format!(
                "the RM answered a lane's opening with a {other:?} frame"
            ))),
        }
    }

    /// The current connection, dialed when there is none or it broke.
    async fn connection(&self) -> Result<Arc<Connection>, Status> {
        let mut current = self.current.lock().await;
        if let Some(connection) = current
            .as_ref()
            .filter(|c| !c.broken.load(Ordering::Acquire))
        {
            return Ok(Arc::clone(connection));
        }
        let connection = tokio::time::timeout(OPEN_TIMEOUT, self.dial())
            .await
            .map_err(|_| {
                Status::unavailable(format!(
                    "the RM at {} did not accept a shared framed connection within {OPEN_TIMEOUT:?}",
                    self.address
                ))
            })??;
        *current = Some(Arc::clone(&connection));
        Ok(connection)
    }

    async fn dial(&self) -> Result<Arc<Connection>, Status> {
        let address = &self.address;
        let mut stream = TcpStream::connect(address).await.map_err(|e| {
            Status::unavailable(format!("cannot connect to the RM at {address}: {e}"))
        })?;
        // Each request is one small write the RM waits for: no Nagle delay.
        let _ = stream.set_nodelay(true);
        let mut out = Vec::from(preamble(Kind::SharedAllocates));
        put_frame(&mut out, FrameType::Open, &FramedOpen::default())
            .map_err(|e| Status::internal(e.to_string()))?;
        write_out(&mut stream, &mut out).await.map_err(broken)?;
        let mut reader = FrameReader::new();
        match reader.next(&mut stream, MAX_OPEN).await {
            Ok(Some((FrameType::Accepted, _))) => {}
            Ok(Some((FrameType::Error, payload))) => return Err(error_status(payload)),
            Ok(Some((other, _))) => {
                return Err(Status::internal(format!(
                    "the RM answered a shared connection's opening with a {other:?} frame"
                )))
            }
            Ok(None) => return Err(broken("the RM closed it before accepting it")),
            Err(e) => return Err(broken(e)),
        }
        let (outgoing, queued) = mpsc::unbounded_channel();
        let connection = Arc::new(Connection {
            outgoing,
            waiting: Mutex::new(HashMap::new()),
            broken: AtomicBool::new(false),
        });
        tokio::spawn(carry(
            stream,
            reader,
            queued,
            Arc::downgrade(&connection),
            self.max_answer.saturating_add(LANE_LEN),
        ));
        Ok(connection)
    }
}

/// The connection's task: writes what lanes queue, hands answers to the lanes waiting for
/// them, and ends when the connection breaks or every handle on it is gone (it holds none
/// itself, so that its sender of queued frames goes with the last).
async fn carry(
    mut stream: TcpStream,
    mut reader: FrameReader,
    mut queued: mpsc::UnboundedReceiver<Vec<u8>>,
    connection: Weak<Connection>,
    max_frame: usize,
) {
    let mut out = Vec::new();
    loop {
        tokio::select! {
            frame = queued.recv() => {
                let Some(frame) = frame else { break };
                out.extend_from_slice(&frame);
                while let Ok(frame) = queued.try_recv() {
                    out.extend_from_slice(&frame);
                }
                if write_out(&mut stream, &mut out).await.is_err() {
                    break;
                }
            }
            frame = reader.next(&mut stream, max_frame) => {
                let (frame_type, payload) = match frame {
                    Ok(Some(frame)) => frame,
                    Ok(None) | Err(_) => break,
                };
                let Ok((lane, message)) = split_lane(payload) else {
                    break;
                };
                let Some(connection) = connection.upgrade() else {
                    break;
                };
                let waiter = connection
                    .waiting
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&lane);
                // An answer nobody waits for any more (its call was cancelled) is dropped.
                if let Some(waiter) = waiter {
                    let _ = waiter.send((frame_type, message.to_vec()));
                }
            }
        }
    }
    if let Some(connection) = connection.upgrade() {
        connection.broken.store(true, Ordering::Release);
        // Every waiting lane learns of the break (its sender dropped).
        connection
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }
}

/// One attempt's lane on a shared connection: one request at a time. Dropping it closes the
/// lane.
pub struct SharedLane {
    connection: Arc<Connection>,
    lane: u32,
    /// A request went out whose answer has not been read.
    waiting: bool,
}

impl SharedLane {
    /// Whether the next answer on the lane is the next request's: not when an exchange was
    /// abandoned after its request went out.
    pub fn in_step(&self) -> bool {
        !self.waiting
    }

    /// Sends `request` and waits for its answer. An error means the lane is over (refused by
    /// the RM, or the connection broke: UNAVAILABLE): the caller drops it and opens another.
    pub async fn exchange<Req: Message, Resp: Message + Default>(
        &mut self,
        request: &Req,
    ) -> Result<Resp, Status> {
        let mut frame = Vec::new();
        put_lane_frame(&mut frame, FrameType::Message, self.lane, request).map_err(
            |e| match e {
                FrameError::TooLarge { len, max } => Status::out_of_range(format!(
                    "a request of {len} bytes is above the framing's limit of {max} bytes"
                )),
                other => Status::internal(other.to_string()),
            },
        )?;
        self.waiting = true;
        let answer = self.connection.send(self.lane, frame)?;
        let (frame_type, payload) = answer
            .await
            .map_err(|_| broken("it closed before the answer came"))?;
        match frame_type {
            FrameType::Message => {
                let answer = Resp::decode(payload.as_slice())
                    .map_err(|e| Status::internal(format!("undecodable answer: {e}")))?;
                self.waiting = false;
                Ok(answer)
            }
            FrameType::Error => Err(error_status(&payload)),
            other => Err(Status::internal(format!(
                "the RM answered a request with a {other:?} frame"
            ))),
        }
    }
}

impl Drop for SharedLane {
    fn drop(&mut self) {
        let mut frame = Vec::with_capacity(9);
        put_lane_empty(&mut frame, FrameType::Close, self.lane);
        self.connection
            .waiting
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.lane);
        let _ = self.connection.outgoing.send(frame);
    }
}
