//! A Hadoop IPC server (RPC protocol version 9, the protobuf engine), as Hadoop's Java clients
//! speak it: the 7-byte connection preamble, the connection context, length-prefixed packets
//! of varint-delimited protobufs, call and response headers, ERROR replies that carry a Java
//! exception class name, ping, pipelined calls, and SASL negotiation down to simple auth (the
//! server is simple-only, which every client accepts when Kerberos is off).
//!
//! What is protocol-independent lives here; a daemon registers a [`Protocol`] per Hadoop
//! protocol name with a [`Dispatcher`] and runs [`serve`]. The wire rules follow
//! `shared/spec/hadoop-wire-compat.md` §2-§3.
//!
//! * [`wire`] — the preamble, packet lengths, delimited messages and response encoding (pure
//!   functions, shared by the server and the fuzz target).
//! * [`packet`] — a request packet classified by its call id: SASL, connection context,
//!   ping, or a call.
//! * [`error`] — [`RpcError`], the Java exception a call fails with.
//! * [`dispatch`] — (protocol, method) → handler.
//! * [`server`] — the tokio listener with its bounds ([`Limits`]).
//! * [`client`] — a minimal client for Weft's own tests (simple auth, one call at a time).

pub mod client;
pub mod dispatch;
pub mod error;
pub mod packet;
pub mod server;
pub mod wire;

/// Hadoop's IPC messages (package `hadoop.common`), generated from `proto/`.
#[allow(missing_docs, unreachable_pub, clippy::all)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
}

pub use dispatch::{decode_request, CallFuture, Caller, Dispatcher, Protocol};
pub use error::{exception, ErrorCode, RpcError};
pub use packet::{Call, Packet, PacketError};
pub use server::{serve, Connections, Limits};
pub use wire::{AuthProtocol, FrameError, Preamble, PreambleError};
