//! The bytes on a Hadoop IPC connection: the preamble, 4-byte packet lengths, varint-delimited
//! messages, and the response packets the server writes.

use prost::Message;
use thiserror::Error;

use crate::error::RpcError;
use crate::proto::rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto};
use crate::proto::RpcResponseHeaderProto;

/// The preamble's length: `hrpc`, version, service class, auth protocol.
pub const PREAMBLE_LEN: usize = 7;
/// The IPC version this server speaks (Hadoop 2.x and 3.x).
pub const IPC_VERSION: u8 = 9;
/// Call id of the connection context packet.
pub const CONNECTION_CONTEXT_CALL_ID: i32 = -3;
/// Call id of a ping (no reply).
pub const PING_CALL_ID: i32 = -4;
/// Call id of SASL packets, both directions.
pub const SASL_CALL_ID: i32 = -33;
/// Call id of replies to failures that belong to no call (set-up, authorization, version).
pub const AUTHORIZATION_FAILED_CALL_ID: i32 = -1;

/// How the client means to authenticate (the preamble's last byte).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthProtocol {
    /// `0x00`: no SASL, the context comes next (simple auth).
    None,
    /// `0xDF` (-33): SASL negotiation comes next.
    Sasl,
}

/// A parsed connection preamble.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preamble {
    /// The service class (fair call queues only; ignored).
    pub service_class: u8,
    /// The auth protocol.
    pub auth: AuthProtocol,
}

/// Why a connection's first seven bytes are not a usable preamble.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum PreambleError {
    /// An HTTP request on the IPC port.
    #[error("an HTTP request arrived on the Hadoop IPC port")]
    Http,
    /// Not `hrpc`.
    #[error("not a Hadoop IPC preamble: {0:02x?}")]
    NotHadoop([u8; PREAMBLE_LEN]),
    /// Another IPC version.
    #[error("IPC version {0} is not supported (this server speaks version 9)")]
    Version(u8),
    /// An auth protocol byte other than NONE or SASL.
    #[error("unknown auth protocol byte 0x{0:02x} in the preamble")]
    AuthProtocol(u8),
}

/// Reads the preamble.
pub fn parse_preamble(bytes: &[u8; PREAMBLE_LEN]) -> Result<Preamble, PreambleError> {
    if bytes.starts_with(b"GET ") || bytes.starts_with(b"POST") || bytes.starts_with(b"HEAD") {
        return Err(PreambleError::Http);
    }
    if &bytes[..4] != b"hrpc" {
        return Err(PreambleError::NotHadoop(*bytes));
    }
    if bytes[4] != IPC_VERSION {
        return Err(PreambleError::Version(bytes[4]));
    }
    let auth = match bytes[6] {
        0x00 => AuthProtocol::None,
        0xDF => AuthProtocol::Sasl,
        other => return Err(PreambleError::AuthProtocol(other)),
    };
    Ok(Preamble {
        service_class: bytes[5],
        auth,
    })
}

/// Why a packet was refused before or while it was read.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum FrameError {
    /// A negative length.
    #[error("negative packet length {0}")]
    NegativeLength(i32),
    /// Larger than the server accepts.
    #[error("packet of {len} bytes exceeds the maximum of {max} bytes")]
    TooLarge {
        /// The announced length.
        len: usize,
        /// The bound.
        max: usize,
    },
    /// A zero-length packet (every packet holds at least a header).
    #[error("empty packet")]
    Empty,
}

/// The length a packet's 4-byte big-endian prefix announces, checked against `max`.
pub fn packet_length(prefix: [u8; 4], max: usize) -> Result<usize, FrameError> {
    let len = i32::from_be_bytes(prefix);
    if len < 0 {
        return Err(FrameError::NegativeLength(len));
    }
    let len = len as usize;
    if len == 0 {
        return Err(FrameError::Empty);
    }
    if len > max {
        return Err(FrameError::TooLarge { len, max });
    }
    Ok(len)
}

/// Why a varint-delimited message cannot be split off.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum DelimitedError {
    /// The length prefix is not a varint.
    #[error("bad length prefix: {0}")]
    Prefix(prost::DecodeError),
    /// The prefix announces more bytes than remain.
    #[error("message of {len} bytes announced, but only {remaining} remain")]
    Short {
        /// Announced.
        len: u64,
        /// Left in the packet.
        remaining: usize,
    },
}

/// Splits one varint-delimited message off the front of `input`: its bytes and the rest.
pub fn split_delimited(input: &[u8]) -> Result<(&[u8], &[u8]), DelimitedError> {
    let mut cursor = input;
    let len = prost::encoding::decode_varint(&mut cursor).map_err(DelimitedError::Prefix)?;
    let remaining = cursor.len();
    let len_usize = usize::try_from(len)
        .ok()
        .filter(|l| *l <= remaining)
        .ok_or(DelimitedError::Short { len, remaining })?;
    Ok(cursor.split_at(len_usize))
}

/// A whole packet (length prefix included) made of the given delimited messages.
pub fn packet(messages: &[&dyn DelimitedMessage]) -> Vec<u8> {
    let body: usize = messages.iter().map(|m| m.delimited_len()).sum();
    let mut out = Vec::with_capacity(4 + body);
    // A packet this server builds is far below 2 GiB (responses are bounded by what the
    // handlers return, which is bounded by the RM's state); saturate rather than wrap.
    out.extend_from_slice(&u32::try_from(body).unwrap_or(u32::MAX).to_be_bytes());
    for m in messages {
        m.write_delimited(&mut out);
    }
    out
}

/// A message that can be written varint-delimited (object-safe over prost's `Message`).
pub trait DelimitedMessage {
    /// Encoded length including the varint prefix.
    fn delimited_len(&self) -> usize;
    /// Appends the varint prefix and the message.
    fn write_delimited(&self, out: &mut Vec<u8>);
}

impl<M: Message> DelimitedMessage for M {
    fn delimited_len(&self) -> usize {
        let len = self.encoded_len();
        prost::encoding::encoded_len_varint(len as u64) + len
    }
    fn write_delimited(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot run out of room.
        let _ = self.encode_length_delimited(out);
    }
}

/// Pre-encoded message bytes (a handler's response), written delimited.
pub struct Encoded<'a>(pub &'a [u8]);

impl DelimitedMessage for Encoded<'_> {
    fn delimited_len(&self) -> usize {
        prost::encoding::encoded_len_varint(self.0.len() as u64) + self.0.len()
    }
    fn write_delimited(&self, out: &mut Vec<u8>) {
        prost::encoding::encode_varint(self.0.len() as u64, out);
        out.extend_from_slice(self.0);
    }
}

/// The header of a reply to `call_id`. Negative call ids go out as their unsigned 32-bit
/// value, as Hadoop's uint32 field carries them.
pub fn response_header(
    call_id: i32,
    client_id: &[u8],
    retry_count: Option<i32>,
    status: RpcStatusProto,
) -> RpcResponseHeaderProto {
    RpcResponseHeaderProto {
        call_id: call_id as u32,
        status: status as i32,
        server_ipc_version_num: Some(u32::from(IPC_VERSION)),
        client_id: (!client_id.is_empty()).then(|| client_id.to_vec()),
        retry_count,
        ..Default::default()
    }
}

/// A SUCCESS reply packet carrying `body` (an encoded response message).
pub fn success_packet(
    call_id: i32,
    client_id: &[u8],
    retry_count: Option<i32>,
    body: &[u8],
) -> Vec<u8> {
    let header = response_header(call_id, client_id, retry_count, RpcStatusProto::Success);
    packet(&[&header, &Encoded(body)])
}

/// An ERROR (the connection stays open) or FATAL (the server closes it) reply packet.
pub fn error_packet(
    call_id: i32,
    client_id: &[u8],
    retry_count: Option<i32>,
    fatal: bool,
    error: &RpcError,
) -> Vec<u8> {
    let status = if fatal {
        RpcStatusProto::Fatal
    } else {
        RpcStatusProto::Error
    };
    let mut header = response_header(call_id, client_id, retry_count, status);
    header.exception_class_name = Some(error.class_name.clone());
    header.error_msg = Some(error.message.clone());
    header.error_detail = Some(RpcErrorCodeProto::from(error.code) as i32);
    packet(&[&header])
}
