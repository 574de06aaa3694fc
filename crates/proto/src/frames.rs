//! Weft's framed transport (`proto/weft/v1/framed.proto`): the heartbeat and Allocate streams'
//! messages over a plain TCP connection, without HTTP/2. Over gRPC most of the RM's CPU per
//! message went to the framework (tonic's stream tasks, h2's connection task, hpack, flow
//! control, and a `writev` per reply); here a message costs one read, a prost decode, a prost
//! encode into a buffer the connection keeps, and one write.
//!
//! The wire, stated once for both sides:
//! * the client's preamble: `WEFT`, [`VERSION`], a [`Kind`] byte;
//! * then frames both ways: a [`FrameType`] byte, a big-endian `u32` length, that many bytes
//!   (a prost message, or nothing for [`FrameType::Accepted`]);
//! * the client's first frame is its [`FramedOpen`]; the RM answers [`FrameType::Accepted`] or
//!   a [`FramedError`] (which ends the connection, as a refusal ends a gRPC call);
//! * then one request at a time ([`FrameType::Message`]), each answered in order by a message
//!   or a refusal.
//!
//! Bounds (every frame is untrusted): a frame longer than the reader's limit is refused from
//! its header alone, before any buffer grows for it, and the buffer grows only as the frame's
//! bytes arrive; a connection that closes inside a frame is [`FrameError::Truncated`].

use std::time::Duration;

use bytes::{Buf, BytesMut};
use prost::Message;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tonic::{Code, Status};

pub use crate::v1::{FramedError, FramedOpen};

/// The preamble's first four bytes. Its first byte is neither HTTP/2's (`P` of `PRI *
/// HTTP/2.0`) nor Hadoop IPC's (`h` of `hrpc`), so one byte tells the three apart.
pub const MAGIC: [u8; 4] = *b"WEFT";
/// The framing's version (the preamble's fifth byte).
pub const VERSION: u8 = 1;
/// Bytes in the preamble.
pub const PREAMBLE_LEN: usize = 6;
/// Bytes in a frame's header: its type and its length.
pub const HEADER_LEN: usize = 5;
/// The largest message either side reads unless told otherwise: tonic's default decoding
/// limit, which the RM's gRPC services keep, so both transports take the same requests.
pub const MAX_MESSAGE: usize = 4 * 1024 * 1024;
/// The largest opening frame the RM reads (an attempt id and its token).
pub const MAX_OPEN: usize = 4 * 1024;

/// Which stream a connection carries (the preamble's sixth byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// An NM's heartbeats (the resource tracker's port).
    Heartbeats = 1,
    /// An AM attempt's Allocates (the AM service's port).
    Allocates = 2,
    /// Many AM attempts' Allocates on one connection, each on its own lane
    /// ([`crate::shared_frames`]): for a process that hosts many AMs, as Hadoop's IPC client
    /// shares one connection among its callers.
    SharedAllocates = 3,
}

/// What a frame carries (its first byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrameType {
    /// A request (client) or its answer (RM).
    Message = 0,
    /// A refusal, [`FramedError`]; the RM closes the connection after it.
    Error = 1,
    /// The client's first frame, [`FramedOpen`].
    Open = 2,
    /// The RM took the opening frame; requests may follow.
    Accepted = 3,
    /// The client ends a lane of a shared connection ([`Kind::SharedAllocates`]); not
    /// answered.
    Close = 4,
}

impl FrameType {
    fn from_byte(byte: u8) -> Result<Self, FrameError> {
        match byte {
            0 => Ok(FrameType::Message),
            1 => Ok(FrameType::Error),
            2 => Ok(FrameType::Open),
            3 => Ok(FrameType::Accepted),
            4 => Ok(FrameType::Close),
            other => Err(FrameError::Type(other)),
        }
    }
}

/// What is wrong with the bytes a peer sent.
#[derive(Debug, Error)]
pub enum FrameError {
    /// The preamble does not begin with [`MAGIC`].
    #[error("not Weft's framed transport: the preamble does not begin with WEFT")]
    BadMagic,
    /// A version this side does not speak.
    #[error("framed transport version {0} is not served (this side speaks {VERSION})")]
    Version(u8),
    /// An unknown [`Kind`].
    #[error("unknown framed connection kind {0}")]
    Kind(u8),
    /// An unknown [`FrameType`].
    #[error("unknown frame type {0}")]
    Type(u8),
    /// A frame longer than the reader takes.
    #[error("a frame of {len} bytes is above the limit of {max} bytes")]
    TooLarge {
        /// The length its header gave.
        len: usize,
        /// The reader's limit.
        max: usize,
    },
    /// The connection closed inside the preamble or a frame.
    #[error("the connection closed inside a frame")]
    Truncated,
    /// A shared connection's frame too short to name its lane.
    #[error("a frame of a shared connection is {0} bytes, too short for its lane")]
    NoLane(usize),
    /// The connection failed.
    #[error("the connection failed: {0}")]
    Io(#[from] std::io::Error),
}

/// The preamble of a connection of `kind`.
pub fn preamble(kind: Kind) -> [u8; PREAMBLE_LEN] {
    let [w, e, f, t] = MAGIC;
    [w, e, f, t, VERSION, kind as u8]
}

/// The kind of connection a preamble opens.
pub fn parse_preamble(bytes: &[u8; PREAMBLE_LEN]) -> Result<Kind, FrameError> {
    if bytes[..MAGIC.len()] != MAGIC {
        return Err(FrameError::BadMagic);
    }
    if bytes[4] != VERSION {
        return Err(FrameError::Version(bytes[4]));
    }
    match bytes[5] {
        1 => Ok(Kind::Heartbeats),
        2 => Ok(Kind::Allocates),
        3 => Ok(Kind::SharedAllocates),
        other => Err(FrameError::Kind(other)),
    }
}

/// A frame's type and length from its header, refused when longer than `max`.
pub fn parse_header(
    header: &[u8; HEADER_LEN],
    max: usize,
) -> Result<(FrameType, usize), FrameError> {
    let [ty, a, b, c, d] = *header;
    let frame_type = FrameType::from_byte(ty)?;
    let len = usize::try_from(u32::from_be_bytes([a, b, c, d])).unwrap_or(usize::MAX);
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    Ok((frame_type, len))
}

/// Appends `message` to `out` as one frame of `frame_type`.
pub fn put_frame(
    out: &mut Vec<u8>,
    frame_type: FrameType,
    message: &impl Message,
) -> Result<(), FrameError> {
    put_message(out, frame_type, None, message)
}

/// Appends `message` to `out` as one frame of `frame_type` on `lane` of a shared connection:
/// the payload begins with the lane's number ([`LANE_LEN`] bytes, big-endian).
pub fn put_lane_frame(
    out: &mut Vec<u8>,
    frame_type: FrameType,
    lane: u32,
    message: &impl Message,
) -> Result<(), FrameError> {
    put_message(out, frame_type, Some(lane), message)
}

fn put_message(
    out: &mut Vec<u8>,
    frame_type: FrameType,
    lane: Option<u32>,
    message: &impl Message,
) -> Result<(), FrameError> {
    let start = out.len();
    out.extend_from_slice(&[frame_type as u8, 0, 0, 0, 0]);
    if let Some(lane) = lane {
        out.extend_from_slice(&lane.to_be_bytes());
    }
    // Encoding into a Vec cannot run out of room; the length is taken from what was written,
    // so prost computes the message's length once.
    if message.encode(out).is_err() {
        out.truncate(start);
        return Err(FrameError::TooLarge {
            len: message.encoded_len(),
            max: u32::MAX as usize,
        });
    }
    let len = out.len() - start - HEADER_LEN;
    let Ok(len) = u32::try_from(len) else {
        out.truncate(start);
        return Err(FrameError::TooLarge {
            len,
            max: u32::MAX as usize,
        });
    };
    out[start + 1..start + HEADER_LEN].copy_from_slice(&len.to_be_bytes());
    Ok(())
}

/// Bytes a shared connection's frame spends on its lane's number.
pub const LANE_LEN: usize = 4;

/// Appends an empty frame of `frame_type` on `lane` (the RM's [`FrameType::Accepted`], the
/// client's [`FrameType::Close`]).
pub fn put_lane_empty(out: &mut Vec<u8>, frame_type: FrameType, lane: u32) {
    out.extend_from_slice(&[frame_type as u8, 0, 0, 0, LANE_LEN as u8]);
    out.extend_from_slice(&lane.to_be_bytes());
}

/// Appends `status` as a refusal frame on `lane` (which ends that lane only).
pub fn put_lane_error(out: &mut Vec<u8>, lane: u32, status: &Status) {
    let refusal = FramedError {
        code: status.code() as i32,
        message: status.message().to_string(),
    };
    // A refusal's message is a short text: it always fits a frame.
    let _ = put_lane_frame(out, FrameType::Error, lane, &refusal);
}

/// A shared connection's frame payload split into its lane and its message.
pub fn split_lane(payload: &[u8]) -> Result<(u32, &[u8]), FrameError> {
    match payload.split_first_chunk::<LANE_LEN>() {
        Some((lane, message)) => Ok((u32::from_be_bytes(*lane), message)),
        None => Err(FrameError::NoLane(payload.len())),
    }
}

/// Appends an empty frame of `frame_type` (the RM's [`FrameType::Accepted`]).
pub fn put_empty(out: &mut Vec<u8>, frame_type: FrameType) {
    out.extend_from_slice(&[frame_type as u8, 0, 0, 0, 0]);
}

/// Appends `status` as a refusal frame.
pub fn put_error(out: &mut Vec<u8>, status: &Status) {
    let refusal = FramedError {
        code: status.code() as i32,
        message: status.message().to_string(),
    };
    // A refusal's message is a short text: it always fits a frame.
    let _ = put_frame(out, FrameType::Error, &refusal);
}

/// The status a refusal frame carries (an undecodable one as INTERNAL, as tonic treats an
/// undecodable message).
pub fn error_status(payload: &[u8]) -> Status {
    match FramedError::decode(payload) {
        Ok(refusal) => Status::new(Code::from_i32(refusal.code), refusal.message),
        Err(e) => Status::internal(format!("undecodable refusal frame: {e}")),
    }
}

/// How much a reader asks the connection for at a time when it needs more.
const READ_CHUNK: usize = 8 * 1024;
/// A frame's buffer grows by at most this much per read: it follows the bytes that arrive,
/// not the length a header claims.
const GROW_STEP: usize = 64 * 1024;
/// A buffer grown past this for a large frame is dropped once empty (thousands of idle
/// connections would otherwise each keep their largest frame's buffer).
pub const KEEP_CAPACITY: usize = 64 * 1024;

/// Reads a connection's frames through one buffer kept for the connection's life: a read
/// takes whatever the connection has (several small frames in one `recv`), and a frame is
/// decoded from the buffer in place.
#[derive(Debug, Default)]
pub struct FrameReader {
    buf: BytesMut,
    /// Bytes of the frame last returned, dropped at the next read.
    returned: usize,
}

impl FrameReader {
    /// A reader with an empty buffer.
    pub fn new() -> Self {
        FrameReader {
            buf: BytesMut::with_capacity(READ_CHUNK),
            returned: 0,
        }
    }

    /// Drops the frame last returned, and a large buffer once empty.
    fn release(&mut self) {
        self.buf.advance(self.returned);
        self.returned = 0;
        if self.buf.is_empty() && self.buf.capacity() > KEEP_CAPACITY {
            self.buf = BytesMut::with_capacity(READ_CHUNK);
        }
    }

    /// Reads more bytes into the buffer; false at the end of the connection.
    async fn fill<R: AsyncRead + Unpin>(
        &mut self,
        reader: &mut R,
        want: usize,
    ) -> Result<bool, FrameError> {
        if self.buf.capacity() - self.buf.len() < want.min(READ_CHUNK) {
            self.buf.reserve(want.clamp(READ_CHUNK, GROW_STEP));
        }
        Ok(reader.read_buf(&mut self.buf).await? > 0)
    }

    /// The connection's preamble. Cancel-safe.
    pub async fn preamble<R: AsyncRead + Unpin>(
        &mut self,
        reader: &mut R,
    ) -> Result<Kind, FrameError> {
        self.release();
        while self.buf.len() < PREAMBLE_LEN {
            if !self.fill(reader, PREAMBLE_LEN - self.buf.len()).await? {
                return Err(FrameError::Truncated);
            }
        }
        let mut bytes = [0u8; PREAMBLE_LEN];
        bytes.copy_from_slice(&self.buf[..PREAMBLE_LEN]);
        self.returned = PREAMBLE_LEN;
        parse_preamble(&bytes)
    }

    /// The next whole frame, its type and payload (valid until the next call); `None` when the
    /// peer closed the connection between frames. A frame longer than `max` is refused from
    /// its header. Cancel-safe: a cancelled call loses nothing, the next one goes on.
    pub async fn next<R: AsyncRead + Unpin>(
        &mut self,
        reader: &mut R,
        max: usize,
    ) -> Result<Option<(FrameType, &[u8])>, FrameError> {
        self.release();
        let (frame_type, end) = loop {
            let missing = if self.buf.len() >= HEADER_LEN {
                let mut header = [0u8; HEADER_LEN];
                header.copy_from_slice(&self.buf[..HEADER_LEN]);
                let (frame_type, len) = parse_header(&header, max)?;
                let end = HEADER_LEN + len;
                if self.buf.len() >= end {
                    break (frame_type, end);
                }
                end - self.buf.len()
            } else {
                HEADER_LEN - self.buf.len()
            };
            if !self.fill(reader, missing).await? {
                return if self.buf.is_empty() {
                    Ok(None)
                } else {
                    Err(FrameError::Truncated)
                };
            }
        };
        self.returned = end;
        Ok(Some((frame_type, &self.buf[HEADER_LEN..end])))
    }

    /// Bytes buffered beyond the frame last returned (for tests).
    #[cfg(test)]
    fn buffered(&self) -> usize {
        self.buf.len() - self.returned
    }

    /// The buffer's capacity (for tests).
    #[cfg(test)]
    fn capacity(&self) -> usize {
        self.buf.capacity()
    }
}

/// Writes `out` (whole frames) in one call where the socket takes it, then empties it,
/// dropping its buffer if a large answer grew it.
pub async fn write_out<W: tokio::io::AsyncWrite + Unpin>(
    writer: &mut W,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    let written = writer.write_all(out).await;
    out.clear();
    if out.capacity() > KEEP_CAPACITY {
        *out = Vec::new();
    }
    written
}

/// The client's side of one framed connection: one request at a time, each answer read
/// before the next request goes (the heartbeat and Allocate links').
pub(crate) struct FramedCall {
    stream: TcpStream,
    reader: FrameReader,
    out: Vec<u8>,
    /// The largest answer this side decodes.
    max_answer: usize,
    /// A request went out whose answer has not been read.
    waiting: bool,
}

/// A connection that broke under the call: UNAVAILABLE, which callers retry as they retry an
/// unreachable RM.
fn broken(e: impl std::fmt::Display) -> Status {
    Status::unavailable(format!("the framed connection to the RM broke: {e}"))
}

/// A frame the client could not take: a too large one as tonic refuses a too large message.
fn unreadable(e: FrameError) -> Status {
    match e {
        FrameError::TooLarge { len, max } => Status::out_of_range(format!(
            "Error, decoded message length too large: found {len} bytes, the limit is: {max} bytes"
        )),
        FrameError::Io(e) => broken(e),
        FrameError::Truncated => broken("it closed inside a frame"),
        other => Status::internal(other.to_string()),
    }
}

/// Time the RM has to accept (or refuse) a connection's opening frame.
const OPEN_TIMEOUT: Duration = Duration::from_secs(20);

impl FramedCall {
    /// Connects to `address`, sends the preamble of `kind` and `open`, and waits for the RM's
    /// acceptance; the RM's refusal comes back as its status (UNIMPLEMENTED from an RM that
    /// does not serve the transport).
    pub(crate) async fn open(
        address: &str,
        kind: Kind,
        open: &FramedOpen,
        max_answer: usize,
    ) -> Result<FramedCall, Status> {
        let opening = async {
            let mut stream = TcpStream::connect(address).await.map_err(|e| {
                Status::unavailable(format!("cannot connect to the RM at {address}: {e}"))
            })?;
            // Each request is one small write the RM waits for: no Nagle delay.
            let _ = stream.set_nodelay(true);
            let mut out = Vec::with_capacity(READ_CHUNK);
            out.extend_from_slice(&preamble(kind));
            put_frame(&mut out, FrameType::Open, open).map_err(unreadable)?;
            write_out(&mut stream, &mut out).await.map_err(broken)?;
            let mut reader = FrameReader::new();
            match reader.next(&mut stream, max_answer).await {
                Ok(Some((FrameType::Accepted, _))) => {}
                Ok(Some((FrameType::Error, payload))) => return Err(error_status(payload)),
                Ok(Some((other, _))) => {
                    return Err(Status::internal(format!(
                        "the RM answered the opening frame with a {other:?} frame"
                    )))
                }
                Ok(None) => return Err(broken("the RM closed it before accepting it")),
                Err(e) => return Err(unreadable(e)),
            }
            Ok(FramedCall {
                stream,
                reader,
                out,
                max_answer,
                waiting: false,
            })
        };
        match tokio::time::timeout(OPEN_TIMEOUT, opening).await {
            Ok(result) => result,
            Err(_) => Err(Status::unavailable(format!(
                "the RM at {address} did not accept a framed connection within {OPEN_TIMEOUT:?}"
            ))),
        }
    }

    /// Whether the next answer on the connection is the next request's: not when an exchange
    /// was abandoned after its request went out.
    pub(crate) fn in_step(&self) -> bool {
        !self.waiting
    }

    /// Sends `request` and reads its answer; `None` when the RM had closed the connection
    /// between requests without taking this one up. An error or `None` means the connection
    /// is over: the caller drops it and opens another for the next request.
    pub(crate) async fn exchange<Req: Message, Resp: Message + Default>(
        &mut self,
        request: &Req,
    ) -> Result<Option<Resp>, Status> {
        self.waiting = true;
        put_frame(&mut self.out, FrameType::Message, request).map_err(unreadable)?;
        if write_out(&mut self.stream, &mut self.out).await.is_err() {
            // Closed by the RM (between requests, the only place it closes one cleanly).
            return Ok(None);
        }
        match self.reader.next(&mut self.stream, self.max_answer).await {
            Ok(Some((FrameType::Message, payload))) => {
                let answer = Resp::decode(payload)
                    .map_err(|e| Status::internal(format!("undecodable answer: {e}")))?;
                self.waiting = false;
                Ok(Some(answer))
            }
            Ok(Some((FrameType::Error, payload))) => Err(error_status(payload)),
            Ok(Some((other, _))) => Err(Status::internal(format!(
                "the RM answered a request with a {other:?} frame"
            ))),
            Ok(None) => Ok(None),
            Err(e) => Err(unreadable(e)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::v1::NodeHeartbeatRequest;

    fn frames_of(messages: &[NodeHeartbeatRequest]) -> Vec<u8> {
        let mut out = Vec::new();
        for m in messages {
            put_frame(&mut out, FrameType::Message, m).unwrap();
        }
        out
    }

    fn beat(node: &str, response_id: i32) -> NodeHeartbeatRequest {
        NodeHeartbeatRequest {
            node_id: node.to_string(),
            response_id,
            node_secret: "s".repeat(32),
            ..Default::default()
        }
    }

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    #[test]
    fn the_first_byte_is_neither_http2s_nor_hadoop_ipcs() {
        assert_ne!(MAGIC[0], b'P');
        assert_ne!(MAGIC[0], b'h');
        assert_eq!(
            parse_preamble(&preamble(Kind::Heartbeats)).unwrap(),
            Kind::Heartbeats
        );
        assert_eq!(
            parse_preamble(&preamble(Kind::Allocates)).unwrap(),
            Kind::Allocates
        );
        assert_eq!(
            parse_preamble(&preamble(Kind::SharedAllocates)).unwrap(),
            Kind::SharedAllocates
        );
    }

    #[test]
    fn lane_frames_carry_their_lane_before_the_message() {
        let mut out = Vec::new();
        put_lane_frame(&mut out, FrameType::Message, 7, &beat("a:1", 3)).unwrap();
        put_lane_empty(&mut out, FrameType::Close, 70_000);
        put_lane_error(&mut out, 9, &Status::not_found("gone"));
        let mut wire: &[u8] = &out;
        let mut reader = FrameReader::new();
        block_on(async {
            let (frame_type, payload) = reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
            assert_eq!(frame_type, FrameType::Message);
            let (lane, message) = split_lane(payload).unwrap();
            assert_eq!(lane, 7);
            assert_eq!(
                NodeHeartbeatRequest::decode(message).unwrap(),
                beat("a:1", 3)
            );
            let (frame_type, payload) = reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
            assert_eq!(frame_type, FrameType::Close);
            assert_eq!(split_lane(payload).unwrap(), (70_000, &[][..]));
            let (frame_type, payload) = reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
            assert_eq!(frame_type, FrameType::Error);
            let (lane, message) = split_lane(payload).unwrap();
            assert_eq!(lane, 9);
            assert_eq!(error_status(message).code(), Code::NotFound);
        });
        assert!(matches!(split_lane(&[0, 1, 2]), Err(FrameError::NoLane(3))));
    }

    #[test]
    fn bad_preambles_are_refused() {
        assert!(matches!(
            parse_preamble(b"PRI * "),
            Err(FrameError::BadMagic)
        ));
        assert!(matches!(
            parse_preamble(b"WEFT\x02\x01"),
            Err(FrameError::Version(2))
        ));
        assert!(matches!(
            parse_preamble(b"WEFT\x01\x09"),
            Err(FrameError::Kind(9))
        ));
        let mut bytes: &[u8] = b"hrpc\x09\x00";
        let mut reader = FrameReader::new();
        assert!(matches!(
            block_on(reader.preamble(&mut bytes)),
            Err(FrameError::BadMagic)
        ));
        let mut short: &[u8] = b"WEF";
        assert!(matches!(
            block_on(FrameReader::new().preamble(&mut short)),
            Err(FrameError::Truncated)
        ));
    }

    #[test]
    fn frames_round_trip_several_to_a_read() {
        let sent = [beat("a:1", 1), beat("a:1", 2), beat("a:1", 3)];
        let mut bytes = Vec::from(preamble(Kind::Heartbeats));
        bytes.extend(frames_of(&sent));
        let mut wire: &[u8] = &bytes;
        let mut reader = FrameReader::new();
        block_on(async {
            assert_eq!(reader.preamble(&mut wire).await.unwrap(), Kind::Heartbeats);
            for expected in &sent {
                let (frame_type, payload) =
                    reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
                assert_eq!(frame_type, FrameType::Message);
                assert_eq!(&NodeHeartbeatRequest::decode(payload).unwrap(), expected);
            }
            assert_eq!(reader.buffered(), 0);
            // The connection ends between frames: a clean end.
            assert!(reader.next(&mut wire, MAX_MESSAGE).await.unwrap().is_none());
        });
    }

    #[test]
    fn an_oversized_length_is_refused_from_the_header_without_allocating_it() {
        // A header claiming 4 GiB, then nothing: refused at once, the buffer never grows.
        let mut wire: &[u8] = &[0, 0xff, 0xff, 0xff, 0xff];
        let mut reader = FrameReader::new();
        let refused = block_on(reader.next(&mut wire, MAX_MESSAGE)).unwrap_err();
        assert!(
            matches!(refused, FrameError::TooLarge { len, max } if len == u32::MAX as usize && max == MAX_MESSAGE),
            "{refused:?}"
        );
        assert!(reader.capacity() <= READ_CHUNK, "{}", reader.capacity());
        // One byte over the limit is refused too; exactly the limit is not.
        let mut header = [0u8; HEADER_LEN];
        header[1..].copy_from_slice(&101u32.to_be_bytes());
        assert!(matches!(
            parse_header(&header, 100),
            Err(FrameError::TooLarge { len: 101, max: 100 })
        ));
        assert_eq!(
            parse_header(&header, 101).unwrap(),
            (FrameType::Message, 101)
        );
    }

    #[test]
    fn a_frame_s_buffer_grows_with_the_bytes_that_arrive_not_the_header_s_claim() {
        // A header claiming 3 MiB and 10 bytes of it, then the end: the buffer stays small.
        let mut bytes = vec![0u8, 0, 0x30, 0, 0];
        bytes.extend([7u8; 10]);
        let mut wire: &[u8] = &bytes;
        let mut reader = FrameReader::new();
        let truncated = block_on(reader.next(&mut wire, MAX_MESSAGE)).unwrap_err();
        assert!(matches!(truncated, FrameError::Truncated), "{truncated:?}");
        assert!(reader.capacity() <= 2 * GROW_STEP, "{}", reader.capacity());
    }

    #[test]
    fn truncated_frames_and_headers_are_told_from_a_clean_end() {
        let whole = frames_of(&[beat("a:1", 1)]);
        for cut in 1..whole.len() {
            let mut wire: &[u8] = &whole[..cut];
            let mut reader = FrameReader::new();
            let result = block_on(reader.next(&mut wire, MAX_MESSAGE));
            assert!(
                matches!(result, Err(FrameError::Truncated)),
                "cut at {cut}: {result:?}"
            );
        }
        let mut empty: &[u8] = &[];
        assert!(block_on(FrameReader::new().next(&mut empty, MAX_MESSAGE))
            .unwrap()
            .is_none());
    }

    #[test]
    fn unknown_frame_types_are_refused() {
        let mut wire: &[u8] = &[9, 0, 0, 0, 0];
        let mut reader = FrameReader::new();
        let result = block_on(reader.next(&mut wire, MAX_MESSAGE));
        assert!(matches!(result, Err(FrameError::Type(9))), "{result:?}");
    }

    #[test]
    fn refusals_carry_the_grpc_code_and_message() {
        let mut out = Vec::new();
        put_error(&mut out, &Status::permission_denied("wrong secret"));
        let mut wire: &[u8] = &out;
        let mut reader = FrameReader::new();
        let (frame_type, payload) = block_on(reader.next(&mut wire, MAX_MESSAGE))
            .unwrap()
            .unwrap();
        assert_eq!(frame_type, FrameType::Error);
        let status = error_status(payload);
        assert_eq!(status.code(), Code::PermissionDenied);
        assert_eq!(status.message(), "wrong secret");
    }

    #[test]
    fn a_large_frame_s_buffers_are_dropped_once_done() {
        let large = NodeHeartbeatRequest {
            node_id: "x".repeat(3 * KEEP_CAPACITY),
            ..Default::default()
        };
        let bytes = frames_of(&[large.clone(), beat("a:1", 1)]);
        let mut wire: &[u8] = &bytes;
        let mut reader = FrameReader::new();
        block_on(async {
            let (_, payload) = reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
            assert_eq!(NodeHeartbeatRequest::decode(payload).unwrap(), large);
            let (_, payload) = reader.next(&mut wire, MAX_MESSAGE).await.unwrap().unwrap();
            assert_eq!(
                NodeHeartbeatRequest::decode(payload).unwrap(),
                beat("a:1", 1)
            );
            assert!(reader.next(&mut wire, MAX_MESSAGE).await.unwrap().is_none());
        });
        assert!(reader.capacity() <= KEEP_CAPACITY, "{}", reader.capacity());
        let mut out = bytes;
        let mut sink = Vec::new();
        block_on(write_out(&mut sink, &mut out)).unwrap();
        assert!(out.is_empty() && out.capacity() <= KEEP_CAPACITY);
        assert_eq!(
            sink.len(),
            5 + large.encoded_len() + 5 + beat("a:1", 1).encoded_len()
        );
    }
}
