//! Weft's heartbeat stream against a real RM in-process (127.0.0.1, ephemeral ports): the
//! registration offers it, heartbeats on it are answered in order as NodeHeartbeat answers
//! them, and it refuses what the unary call refuses (a wrong node secret) and a second node on
//! one stream.

mod support;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use weft_proto::heartbeat_link::HeartbeatLink;
use weft_proto::v1::node_heartbeats_client::NodeHeartbeatsClient;
use weft_proto::v1::*;

use support::node_setup::{beat, NodeSetup};

#[test]
fn heartbeats_on_the_stream_are_answered_in_order_and_checked_as_unary_ones() {
    let mut s = NodeSetup::start("");
    let a = s.register("a-host:1");
    let b = s.register("b-host:1");
    let (rt, tracker, channel) = (&s.rt, &mut s.tracker, s.channel.clone());
    assert!(a.heartbeat_stream, "Weft's RM offers the stream");

    // The NM's side: every beat on one stream, answered in order.
    let mut link = HeartbeatLink::new(channel.clone(), a.heartbeat_stream);
    for response_id in 0..3 {
        let reply = rt
            .block_on(link.beat(beat("a-host:1", &a.node_secret, response_id)))
            .unwrap();
        assert_eq!(reply.response_id, response_id + 1);
        assert_eq!(reply.node_action, NodeAction::Normal as i32);
        assert!(link.streaming());
    }

    // A wrong secret is refused as the unary call refuses it, and ends the stream.
    let refused = rt
        .block_on(link.beat(beat("a-host:1", "not-the-secret", 3)))
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");
    let unary = rt
        .block_on(tracker.node_heartbeat(beat("a-host:1", "not-the-secret", 3)))
        .unwrap_err();
    assert_eq!(unary.code(), refused.code());
    // The next beat opens a new stream.
    let reply = rt
        .block_on(link.beat(beat("a-host:1", &a.node_secret, 3)))
        .unwrap();
    assert_eq!(reply.response_id, 4);

    // One stream speaks for one node, even with the other node's own secret.
    let mut streams = NodeHeartbeatsClient::new(channel);
    let (tx, rx) = mpsc::channel(2);
    let mut replies = rt
        .block_on(streams.heartbeats(ReceiverStream::new(rx)))
        .unwrap()
        .into_inner();
    rt.block_on(tx.send(beat("a-host:1", &a.node_secret, 10)))
        .unwrap();
    let first = rt.block_on(replies.message()).unwrap().unwrap();
    assert_eq!(first.response_id, 11);
    rt.block_on(tx.send(beat("b-host:1", &b.node_secret, 0)))
        .unwrap();
    let other = rt.block_on(replies.message()).unwrap_err();
    assert_eq!(other.code(), tonic::Code::PermissionDenied, "{other:?}");
    assert!(other.message().contains("a-host:1"), "{other:?}");
}
