//! Weft's heartbeat stream (`NodeHeartbeats.Heartbeats`): one long-lived call per NM carries
//! its heartbeats, each answered in order exactly as `NodeHeartbeat` answers it
//! (`tracker::node_heartbeat`: the node secret checked on every message by the core). A unary
//! heartbeat costs the RM a HEADERS frame each way (hpack), a new HTTP/2 stream and a server
//! task; on the stream a heartbeat is one DATA frame each way, read by the stream's one task.
//!
//! Bounds: one request is read and answered at a time (nothing queues in the RM: the NM waits
//! for each answer), a message is bounded by tonic's decoding limit, a stream speaks for the
//! node of its first message only, and a stream that stays silent for [`IDLE`] is closed.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use tonic::{Request, Response, Status, Streaming};
use weft_proto::v1::node_heartbeats_server::NodeHeartbeats;
use weft_proto::v1::{NodeHeartbeatRequest, NodeHeartbeatResponse};

use crate::tracker::{node_heartbeat, Tracker};

/// A stream with no message for this long is closed (YARN's default NM expiry: the node is
/// lost by then anyway; the NM opens a new stream when it comes back).
pub(crate) const IDLE: Duration = Duration::from_secs(600);

/// The service, sharing the resource tracker's state.
pub(crate) struct HeartbeatStreams {
    pub(crate) tracker: Arc<Tracker>,
}

type Replies = Pin<Box<dyn Stream<Item = Result<NodeHeartbeatResponse, Status>> + Send>>;

/// Where a stream is: reading requests for `node` (unknown until the first), or done.
struct State {
    tracker: Arc<Tracker>,
    requests: Streaming<NodeHeartbeatRequest>,
    node: Option<String>,
    done: bool,
}

impl State {
    /// The answer to the next request; `None` when the NM closed the stream (or went idle),
    /// or after an error was sent (an error ends the call).
    async fn next(&mut self) -> Option<Result<NodeHeartbeatResponse, Status>> {
        if self.done {
            return None;
        }
        let request = match tokio::time::timeout(IDLE, self.requests.message()).await {
            Ok(Ok(Some(request))) => request,
            Ok(Ok(None)) | Err(_) => return None,
            Ok(Err(status)) => {
                self.done = true;
                return Some(Err(status));
            }
        };
        if let Err(status) = same_node(&mut self.node, &request.node_id) {
            self.done = true;
            return Some(Err(status));
        }
        let reply = node_heartbeat(&self.tracker, request).await;
        self.done = reply.is_err();
        Some(reply)
    }
}

/// Pins a stream to the node of its first request: a later request naming another node is
/// refused (each node has its own stream and secret; the secret is checked per message too).
pub(crate) fn same_node(pinned: &mut Option<String>, node: &str) -> Result<(), Status> {
    match pinned {
        Some(first) if first != node => Err(Status::permission_denied(format!(
            "this heartbeat stream belongs to node {first}, not {node}"
        ))),
        Some(_) => Ok(()),
        None => {
            *pinned = Some(node.to_string());
            Ok(())
        }
    }
}

#[tonic::async_trait]
impl NodeHeartbeats for HeartbeatStreams {
    type HeartbeatsStream = Replies;

    async fn heartbeats(
        &self,
        request: Request<Streaming<NodeHeartbeatRequest>>,
    ) -> Result<Response<Self::HeartbeatsStream>, Status> {
        let state = State {
            tracker: Arc::clone(&self.tracker),
            requests: request.into_inner(),
            node: None,
            done: false,
        };
        let replies = futures_util::stream::unfold(state, |mut state| async move {
            let reply = state.next().await?;
            Some((reply, state))
        });
        Ok(Response::new(Box::pin(replies)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_speaks_for_the_node_of_its_first_request_only() {
        let mut pinned = None;
        assert!(same_node(&mut pinned, "n1:1").is_ok());
        assert!(same_node(&mut pinned, "n1:1").is_ok());
        let refused = same_node(&mut pinned, "n2:1").unwrap_err();
        assert_eq!(refused.code(), tonic::Code::PermissionDenied);
        assert_eq!(pinned.as_deref(), Some("n1:1"));
    }
}
