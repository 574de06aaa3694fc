//! How a call fails: the Java exception class a Hadoop client re-creates, its message, and
//! Hadoop's error code.

use crate::proto::rpc_response_header_proto::RpcErrorCodeProto;

/// Java exception class names clients re-create by reflection (they must be exact).
pub mod exception {
    /// The base of YARN's checked exceptions.
    pub const YARN: &str = "org.apache.hadoop.yarn.exceptions.YarnException";
    /// An application id the RM does not know.
    pub const APPLICATION_NOT_FOUND: &str =
        "org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException";
    /// An attempt id the RM does not know.
    pub const APPLICATION_ATTEMPT_NOT_FOUND: &str =
        "org.apache.hadoop.yarn.exceptions.ApplicationAttemptNotFoundException";
    /// A container id the RM does not know.
    pub const CONTAINER_NOT_FOUND: &str =
        "org.apache.hadoop.yarn.exceptions.ContainerNotFoundException";
    /// An ask or AM size the RM refuses.
    pub const INVALID_RESOURCE_REQUEST: &str =
        "org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException";
    /// A caller without the right (ACLs).
    pub const ACCESS_CONTROL: &str = "org.apache.hadoop.security.AccessControlException";
    /// Plain I/O failures (Hadoop's answer to an unknown queue in getQueueInfo).
    pub const IO: &str = "java.io.IOException";
    /// An unknown method of a known protocol.
    pub const NO_SUCH_METHOD: &str = "org.apache.hadoop.ipc.RpcNoSuchMethodException";
    /// A protocol this server does not serve.
    pub const NO_SUCH_PROTOCOL: &str = "org.apache.hadoop.ipc.RpcNoSuchProtocolException";
    /// A packet or header the server cannot read.
    pub const SERVER: &str = "org.apache.hadoop.ipc.RpcServerException";
    /// The client's IPC version is not 9.
    pub const VERSION_MISMATCH: &str = "org.apache.hadoop.ipc.RPC$VersionMismatch";
}

/// Hadoop's `RpcErrorCodeProto`, the detail of an ERROR or FATAL reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorCode {
    /// The handler threw (the usual case).
    Application,
    /// No such method.
    NoSuchMethod,
    /// No such protocol.
    NoSuchProtocol,
    /// The server failed (e.g. shutting down).
    RpcServer,
    /// A header the server cannot read (fatal).
    InvalidRpcHeader,
    /// A request body the server cannot read.
    DeserializingRequest,
    /// Wrong IPC version (fatal).
    VersionMismatch,
    /// Authentication refused (fatal).
    Unauthorized,
}

impl From<ErrorCode> for RpcErrorCodeProto {
    fn from(code: ErrorCode) -> RpcErrorCodeProto {
        match code {
            ErrorCode::Application => RpcErrorCodeProto::ErrorApplication,
            ErrorCode::NoSuchMethod => RpcErrorCodeProto::ErrorNoSuchMethod,
            ErrorCode::NoSuchProtocol => RpcErrorCodeProto::ErrorNoSuchProtocol,
            ErrorCode::RpcServer => RpcErrorCodeProto::ErrorRpcServer,
            ErrorCode::InvalidRpcHeader => RpcErrorCodeProto::FatalInvalidRpcHeader,
            ErrorCode::DeserializingRequest => RpcErrorCodeProto::FatalDeserializingRequest,
            ErrorCode::VersionMismatch => RpcErrorCodeProto::FatalVersionMismatch,
            ErrorCode::Unauthorized => RpcErrorCodeProto::FatalUnauthorized,
        }
    }
}

/// A failed call, as the client will see it: `RemoteException(class_name, message)`, which
/// YARN's proxies turn back into the named exception.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The Java exception class.
    pub class_name: String,
    /// Its message.
    pub message: String,
    /// Hadoop's error code.
    pub code: ErrorCode,
}

impl RpcError {
    /// A handler's failure with the given exception class.
    pub fn new(class_name: &str, message: impl Into<String>) -> RpcError {
        RpcError {
            class_name: class_name.to_string(),
            message: message.into(),
            code: ErrorCode::Application,
        }
    }

    /// A `YarnException`.
    pub fn yarn(message: impl Into<String>) -> RpcError {
        RpcError::new(exception::YARN, message)
    }

    /// An unknown method of `protocol`.
    pub fn no_such_method(protocol: &str, method: &str) -> RpcError {
        RpcError {
            class_name: exception::NO_SUCH_METHOD.to_string(),
            message: format!("Unknown method {method} called on {protocol} protocol."),
            code: ErrorCode::NoSuchMethod,
        }
    }

    /// A protocol this server does not serve.
    pub fn no_such_protocol(protocol: &str) -> RpcError {
        RpcError {
            class_name: exception::NO_SUCH_PROTOCOL.to_string(),
            message: format!("Unknown protocol: {protocol}"),
            code: ErrorCode::NoSuchProtocol,
        }
    }

    /// A request message that does not decode.
    pub fn bad_request(what: &str, why: impl std::fmt::Display) -> RpcError {
        RpcError {
            class_name: exception::SERVER.to_string(),
            message: format!("cannot decode the {what}: {why}"),
            code: ErrorCode::DeserializingRequest,
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class_name, self.message)
    }
}

impl std::error::Error for RpcError {}
