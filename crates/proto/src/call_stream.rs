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

    /// Sends `request` and reads its answer. An error means the call is over (the RM's error
    /// ends it, as does a closed call): the caller drops it and opens another for the next
    /// request. `what` names the call in the error.
    pub(crate) async fn exchange(&mut self, request: Req, what: &str) -> Result<Resp, Status> {
        self.waiting = true;
        if self.requests.send(request).await.is_err() {
            return Err(Status::unavailable(format!("the {what} has closed")));
        }
        match self.replies.message().await {
            Ok(Some(reply)) => {
                self.waiting = false;
                Ok(reply)
            }
            Ok(None) => Err(Status::unavailable(format!("the RM closed the {what}"))),
            Err(status) => Err(status),
        }
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
