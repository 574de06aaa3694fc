//! A minimal Hadoop IPC client (simple auth, one call at a time), for Weft's own tests and
//! tools: Hadoop's Java client is the real judge of compatibility, this one checks our servers
//! from Rust without a JVM.

use std::net::SocketAddr;
use std::time::Duration;

use prost::Message;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::error::{ErrorCode, RpcError};
use crate::proto::rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto};
use crate::proto::{
    IpcConnectionContextProto, RequestHeaderProto, RpcKindProto, RpcRequestHeaderProto,
    RpcResponseHeaderProto, UserInformationProto,
};
use crate::wire::{self, split_delimited, CONNECTION_CONTEXT_CALL_ID};

/// Why a call got no answer.
#[derive(Debug, Error)]
pub enum ClientError {
    /// The connection failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// No reply in time.
    #[error("no reply within {0:?}")]
    Timeout(Duration),
    /// The reply does not decode.
    #[error("malformed reply: {0}")]
    Malformed(String),
    /// The server answered with an exception.
    #[error("{0}")]
    Remote(RpcError),
}

/// One connection speaking one protocol as one user.
pub struct Client {
    stream: TcpStream,
    protocol: String,
    client_id: Vec<u8>,
    next_call: i32,
    timeout: Duration,
}

impl Client {
    /// Connects, sends the preamble (auth NONE) and the connection context.
    pub async fn connect(
        addr: SocketAddr,
        user: &str,
        protocol: &str,
    ) -> Result<Client, ClientError> {
        let mut stream = TcpStream::connect(addr).await?;
        stream.set_nodelay(true)?;
        let client_id: Vec<u8> = (0u8..16).collect();
        let mut opening = b"hrpc\x09\x00\x00".to_vec();
        let header = request_header(CONNECTION_CONTEXT_CALL_ID, &client_id, -1);
        let context = IpcConnectionContextProto {
            user_info: Some(UserInformationProto {
                effective_user: Some(user.to_string()),
                real_user: None,
            }),
            protocol: Some(protocol.to_string()),
        };
        opening.extend(wire::packet(&[&header, &context]));
        stream.write_all(&opening).await?;
        Ok(Client {
            stream,
            protocol: protocol.to_string(),
            client_id,
            next_call: 0,
            timeout: Duration::from_secs(20),
        })
    }

    /// Calls `method` with `request`; the decoded response, or the server's exception as
    /// [`ClientError::Remote`].
    pub async fn call<Q: Message, R: Message + Default>(
        &mut self,
        method: &str,
        request: &Q,
    ) -> Result<R, ClientError> {
        let id = self.next_call;
        self.next_call += 1;
        let header = request_header(id, &self.client_id, 0);
        let request_header = RequestHeaderProto {
            method_name: method.to_string(),
            declaring_class_protocol_name: self.protocol.clone(),
            client_protocol_version: 1,
        };
        let packet = wire::packet(&[&header, &request_header, request]);
        self.stream.write_all(&packet).await?;
        let (reply, body) = tokio::time::timeout(self.timeout, read_reply(&mut self.stream))
            .await
            .map_err(|_| ClientError::Timeout(self.timeout))??;
        if reply.call_id != id as u32 {
            return Err(ClientError::Malformed(format!(
                "reply to call {} while waiting for {id}",
                reply.call_id
            )));
        }
        match RpcStatusProto::try_from(reply.status) {
            Ok(RpcStatusProto::Success) => {
                let (bytes, _) =
                    split_delimited(&body).map_err(|e| ClientError::Malformed(e.to_string()))?;
                R::decode(bytes).map_err(|e| ClientError::Malformed(e.to_string()))
            }
            _ => Err(ClientError::Remote(RpcError {
                class_name: reply.exception_class_name.unwrap_or_default(),
                message: reply.error_msg.unwrap_or_default(),
                code: error_code(reply.error_detail),
            })),
        }
    }
}

fn error_code(detail: Option<i32>) -> ErrorCode {
    match detail.and_then(|d| RpcErrorCodeProto::try_from(d).ok()) {
        Some(RpcErrorCodeProto::ErrorNoSuchMethod) => ErrorCode::NoSuchMethod,
        Some(RpcErrorCodeProto::ErrorNoSuchProtocol) => ErrorCode::NoSuchProtocol,
        Some(RpcErrorCodeProto::ErrorRpcServer) => ErrorCode::RpcServer,
        Some(RpcErrorCodeProto::FatalInvalidRpcHeader) => ErrorCode::InvalidRpcHeader,
        Some(RpcErrorCodeProto::FatalDeserializingRequest) => ErrorCode::DeserializingRequest,
        Some(RpcErrorCodeProto::FatalVersionMismatch) => ErrorCode::VersionMismatch,
        Some(RpcErrorCodeProto::FatalUnauthorized) => ErrorCode::Unauthorized,
        _ => ErrorCode::Application,
    }
}

/// A request header as Hadoop's client writes it.
pub fn request_header(call_id: i32, client_id: &[u8], retry_count: i32) -> RpcRequestHeaderProto {
    RpcRequestHeaderProto {
        rpc_kind: Some(RpcKindProto::RpcProtocolBuffer as i32),
        rpc_op: Some(0),
        call_id,
        client_id: client_id.to_vec(),
        retry_count: Some(retry_count),
        ..Default::default()
    }
}

/// Reads one reply packet: its header and the bytes after it.
pub async fn read_reply(
    stream: &mut TcpStream,
) -> Result<(RpcResponseHeaderProto, Vec<u8>), ClientError> {
    let mut prefix = [0u8; 4];
    stream.read_exact(&mut prefix).await?;
    let len = u32::from_be_bytes(prefix) as usize;
    let mut packet = vec![0u8; len];
    stream.read_exact(&mut packet).await?;
    let (header, rest) =
        split_delimited(&packet).map_err(|e| ClientError::Malformed(e.to_string()))?;
    let header = RpcResponseHeaderProto::decode(header)
        .map_err(|e| ClientError::Malformed(e.to_string()))?;
    Ok((header, rest.to_vec()))
}
