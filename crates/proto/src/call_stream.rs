//! One request at a time over a long-lived bidirectional call: what the heartbeat and Allocate
//! links share. The caller sends a request and waits for its answer, so the call's outgoing
//! queue holds at most one request; a call that fails, or whose answer was never read (the
//! caller's future was dropped in between), is not used again.

use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::Stream;
use tokio::sync::mpsc;
use tonic::{Code, Status, Streaming};

/// The requests of an open call, as the call sends them.
pub(crate) struct Outgoing<T>(mpsc::Receiver<T>);

impl<T> Stream for Outgoing<T> {
    type Item = T;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

/// Where the requests of a call about to open go (one at a time), and the stream the call
/// sends them from.
pub(crate) fn requests<T>() -> (mpsc::Sender<T>, Outgoing<T>) {
    let (tx, rx) = mpsc::channel(1);
    (tx, Outgoing(rx))
}

/// An open call: where requests go, and where their answers come from.
pub(crate) struct OpenCall<Req, Resp> {
    requests: mpsc::Sender<Req>,
    replies: Streaming<Resp>,
    /// A request went out whose answer has not been read.
    waiting: bool,
}

impl<Req, Resp> OpenCall<Req, Resp> {
    pub(crate) fn new(requests: mpsc::Sender<Req>, replies: Streaming<Resp>) -> Self {
        OpenCall {
            requests,
            replies,
            waiting: false,
        }
    }

    /// Whether the next answer on the call is the next request's: not when an exchange was
    /// abandoned after its request went out.
    pub(crate) fn in_step(&self) -> bool {
        !self.waiting
    }

    /// Sends `request` and reads its answer; `None` when the call had ended without taking
    /// the request up (the RM ends a call only between requests: the request never left, or
    /// the RM closed the call before reading it). An error or `None` means the call is over
    /// (the RM's error ends it): the caller drops it and opens another for the next request.
    pub(crate) async fn exchange(&mut self, request: Req) -> Result<Option<Resp>, Status> {
        self.waiting = true;
        if self.requests.send(request).await.is_err() {
            return Ok(None);
        }
        let reply = self.replies.message().await?;
        self.waiting = reply.is_none();
        Ok(reply)
    }
}

/// A failure of the call itself (the connection reset or closed, the RM gone: no answer from
/// the RM's handler) as UNAVAILABLE, which callers retry as they retry an unreachable RM; the
/// RM's own refusals keep their codes. The RM never refuses with UNKNOWN or CANCELLED, and
/// tonic words its HTTP/2 failures "h2 protocol error" and "protocol error".
pub(crate) fn broken_as_unavailable(status: Status) -> Status {
    let broken = matches!(status.code(), Code::Unknown | Code::Cancelled)
        || (status.code() == Code::Internal && status.message().contains("protocol error"));
    if broken {
        Status::unavailable(format!("the call broke: {}", status.message()))
    } else {
        status
    }
}
