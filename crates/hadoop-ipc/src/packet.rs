//! A request packet, classified by its call id (spec §2.6).

use prost::Message;
use thiserror::Error;

use crate::proto::{
    IpcConnectionContextProto, RequestHeaderProto, RpcRequestHeaderProto, RpcSaslProto,
};
use crate::wire::{split_delimited, CONNECTION_CONTEXT_CALL_ID, PING_CALL_ID, SASL_CALL_ID};

/// One packet a client sent (its length prefix already removed).
#[derive(Clone, Debug, PartialEq)]
pub enum Packet {
    /// SASL negotiation (call id -33).
    Sasl {
        /// The RPC header.
        header: RpcRequestHeaderProto,
        /// The SASL message.
        sasl: RpcSaslProto,
    },
    /// The connection context (call id -3): who calls, for which protocol.
    ConnectionContext {
        /// The RPC header.
        header: RpcRequestHeaderProto,
        /// The context.
        context: IpcConnectionContextProto,
    },
    /// A ping (call id -4): the client is still waiting; no reply.
    Ping,
    /// A call (call id ≥ 0).
    Call(Call),
}

/// A call: which method of which protocol, and its encoded request message.
#[derive(Clone, Debug, PartialEq)]
pub struct Call {
    /// The RPC header (call id, client id, retry count).
    pub header: RpcRequestHeaderProto,
    /// The method's name, e.g. `getNewApplication`.
    pub method: String,
    /// The protocol, e.g. `org.apache.hadoop.yarn.api.ApplicationClientProtocolPB`.
    pub protocol: String,
    /// The client's protocol version (1 for YARN's protocols).
    pub client_version: u64,
    /// The request message, encoded.
    pub request: Vec<u8>,
}

impl Call {
    /// The call id.
    pub fn id(&self) -> i32 {
        self.header.call_id
    }
}

/// Why a packet cannot be read. The connection is closed after one (its framing can no
/// longer be trusted); the server goes on.
#[derive(Debug, Error, PartialEq)]
pub enum PacketError {
    /// The RPC header does not decode.
    #[error("malformed RPC request header: {0}")]
    Header(String),
    /// The part after the header does not decode.
    #[error("malformed {what} in the packet of call {call_id}: {why}")]
    Body {
        /// The call id.
        call_id: i32,
        /// Which part.
        what: &'static str,
        /// The decoder's message.
        why: String,
    },
    /// Bytes after the last message.
    #[error("{extra} unexpected bytes after the last message of call {call_id}")]
    Trailing {
        /// The call id.
        call_id: i32,
        /// How many.
        extra: usize,
    },
    /// A negative call id Hadoop does not define for clients.
    #[error("call id {0} is not a call, a ping, SASL or the connection context")]
    UnknownCallId(i32),
    /// Not a protobuf-engine call.
    #[error("call {call_id} has RPC kind {kind}; only protocol buffers (2) are served")]
    RpcKind {
        /// The call id.
        call_id: i32,
        /// The kind sent.
        kind: i32,
    },
}

fn body<M: Message + Default>(
    call_id: i32,
    what: &'static str,
    input: &[u8],
) -> Result<(M, usize), PacketError> {
    let malformed = |why: String| PacketError::Body { call_id, what, why };
    let (bytes, rest) = split_delimited(input).map_err(|e| malformed(e.to_string()))?;
    let message = M::decode(bytes).map_err(|e| malformed(e.to_string()))?;
    Ok((message, rest.len()))
}

fn no_trailing(call_id: i32, extra: usize) -> Result<(), PacketError> {
    match extra {
        0 => Ok(()),
        extra => Err(PacketError::Trailing { call_id, extra }),
    }
}

impl Packet {
    /// Reads one packet.
    pub fn decode(frame: &[u8]) -> Result<Packet, PacketError> {
        let (header_bytes, rest) =
            split_delimited(frame).map_err(|e| PacketError::Header(e.to_string()))?;
        let header = RpcRequestHeaderProto::decode(header_bytes)
            .map_err(|e| PacketError::Header(e.to_string()))?;
        let call_id = header.call_id;
        match call_id {
            PING_CALL_ID => Ok(Packet::Ping),
            SASL_CALL_ID => {
                let (sasl, extra) = body(call_id, "SASL message", rest)?;
                no_trailing(call_id, extra)?;
                Ok(Packet::Sasl { header, sasl })
            }
            CONNECTION_CONTEXT_CALL_ID => {
                let (context, extra) = body(call_id, "connection context", rest)?;
                no_trailing(call_id, extra)?;
                Ok(Packet::ConnectionContext { header, context })
            }
            id if id < 0 => Err(PacketError::UnknownCallId(id)),
            _ => {
                // An absent kind is the default (builtin), which YARN never sends.
                let kind = header.rpc_kind.unwrap_or(0);
                if kind != crate::proto::RpcKindProto::RpcProtocolBuffer as i32 {
                    return Err(PacketError::RpcKind { call_id, kind });
                }
                let (request_header, extra) =
                    body::<RequestHeaderProto>(call_id, "request header", rest)?;
                let after = &rest[rest.len() - extra..];
                let (request, tail) = split_delimited(after).map_err(|e| PacketError::Body {
                    call_id,
                    what: "request message",
                    why: e.to_string(),
                })?;
                no_trailing(call_id, tail.len())?;
                Ok(Packet::Call(Call {
                    header,
                    method: request_header.method_name,
                    protocol: request_header.declaring_class_protocol_name,
                    client_version: request_header.client_protocol_version,
                    request: request.to_vec(),
                }))
            }
        }
    }
}
