//! Calls routed by (protocol name, method name) to the daemon's handlers.

use std::collections::HashMap;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use prost::Message;

use crate::error::RpcError;

/// Who makes a call: the connection context's user (with simple auth, the caller's identity).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The effective user.
    pub user: String,
    /// The real user when a proxy user acts for `user`.
    pub real_user: Option<String>,
    /// The client's address.
    pub peer: SocketAddr,
}

/// A handler's answer: the encoded response message, or the exception to send.
pub type CallFuture = Pin<Box<dyn Future<Output = Result<Vec<u8>, RpcError>> + Send>>;

/// One Hadoop protocol's handlers.
pub trait Protocol: Send + Sync + 'static {
    /// The protocol name calls carry (`declaringClassProtocolName`), e.g.
    /// `org.apache.hadoop.yarn.api.ApplicationClientProtocolPB`.
    fn name(&self) -> &'static str;
    /// Runs `method` on the encoded `request`. An unknown method answers
    /// [`RpcError::no_such_method`].
    fn call(&self, caller: Caller, method: &str, request: Vec<u8>) -> CallFuture;
}

/// The protocols one listener serves.
#[derive(Clone, Default)]
pub struct Dispatcher {
    protocols: HashMap<&'static str, Arc<dyn Protocol>>,
}

impl Dispatcher {
    /// No protocols yet.
    pub fn new() -> Dispatcher {
        Dispatcher::default()
    }

    /// Adds a protocol (a second one of the same name replaces the first).
    pub fn with(mut self, protocol: impl Protocol) -> Dispatcher {
        self.protocols.insert(protocol.name(), Arc::new(protocol));
        self
    }

    /// The names served.
    pub fn protocols(&self) -> Vec<&'static str> {
        let mut names: Vec<_> = self.protocols.keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Routes one call.
    pub fn dispatch(
        &self,
        caller: Caller,
        protocol: &str,
        method: &str,
        request: Vec<u8>,
    ) -> CallFuture {
        match self.protocols.get(protocol) {
            Some(p) => p.call(caller, method, request),
            None => {
                let error = RpcError::no_such_protocol(protocol);
                Box::pin(async move { Err(error) })
            }
        }
    }
}

/// Decodes a request message, or the error that says which one did not decode.
pub fn decode_request<M: Message + Default>(method: &str, bytes: &[u8]) -> Result<M, RpcError> {
    M::decode(bytes).map_err(|e| RpcError::bad_request(&format!("{method} request"), e))
}
