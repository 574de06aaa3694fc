//! Weft's framed transport against a real RM in-process (127.0.0.1, ephemeral ports): the
//! registration answers offer it, heartbeats and Allocates on it are answered as the gRPC
//! stream answers them, it refuses what the gRPC path refuses with the same codes (a wrong
//! node secret, a second node on one connection, bad AM credentials, a request naming
//! another attempt), it bounds frames, and the links fall back to the gRPC stream when the RM
//! turns it off. Shared connections carry many attempts' Allocates on lanes, each answered
//! and refused on its own.

mod support;

use prost::Message;
use std::sync::Arc;
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tonic::{Code, Status};
use weft_proto::allocate_link::AllocateLink;
use weft_proto::auth::AmCredentials;

use weft_proto::frames::{
    error_status, preamble, put_frame, put_lane_empty, put_lane_frame, split_lane, FrameReader,
    FrameType, FramedOpen, Kind, MAX_MESSAGE,
};
use weft_proto::heartbeat_link::HeartbeatLink;
use weft_proto::shared_frames::SharedAllocates;
use weft_proto::v1::*;

use support::node_setup::{beat, NodeSetup};

type Setup = support::am_setup::AmSetup;

/// A framed connection spoken by hand, to send what the links never send.
struct Raw {
    stream: TcpStream,
    reader: FrameReader,
}

impl Raw {
    /// Connects, sends the preamble and `open`; the RM's acceptance or refusal.
    async fn open(address: &str, kind: Kind, open: &FramedOpen) -> Result<Raw, Status> {
        let mut stream = TcpStream::connect(address).await.unwrap();
        let mut out = preamble(kind).to_vec();
        put_frame(&mut out, FrameType::Open, open).unwrap();
        stream.write_all(&out).await.unwrap();
        let mut raw = Raw {
            stream,
            reader: FrameReader::new(),
        };
        match raw.frame().await {
            Some((FrameType::Accepted, _)) => Ok(raw),
            Some((FrameType::Error, payload)) => Err(error_status(&payload)),
            other => panic!("the RM answered an opening with {other:?}"),
        }
    }

    /// The next frame, `None` when the RM closed the connection.
    async fn frame(&mut self) -> Option<(FrameType, Vec<u8>)> {
        self.reader
            .next(&mut self.stream, MAX_MESSAGE)
            .await
            .ok()
            .flatten()
            .map(|(frame_type, payload)| (frame_type, payload.to_vec()))
    }

    /// Sends `bytes` as they are and reads the answer.
    async fn send_bytes<Resp: Message + Default>(&mut self, bytes: &[u8]) -> Result<Resp, Status> {
        self.stream.write_all(bytes).await.unwrap();
        match self.frame().await {
            Some((FrameType::Message, payload)) => Ok(Resp::decode(payload.as_slice()).unwrap()),
            Some((FrameType::Error, payload)) => Err(error_status(&payload)),
            other => panic!("the RM answered a request with {other:?}"),
        }
    }

    async fn exchange<Req: Message, Resp: Message + Default>(
        &mut self,
        request: &Req,
    ) -> Result<Resp, Status> {
        let mut out = Vec::new();
        put_frame(&mut out, FrameType::Message, request).unwrap();
        self.send_bytes(&out).await
    }

    /// Whether the RM closed the connection (after a refusal).
    async fn closed(&mut self) -> bool {
        self.frame().await.is_none()
    }
}

#[test]
fn heartbeats_over_the_framed_transport_are_answered_and_refused_as_over_grpc() {
    let mut s = NodeSetup::start("");
    let a = s.register("a-host:1");
    let b = s.register("b-host:1");
    let (rt, tracker) = (&s.rt, &mut s.tracker);
    let (channel, address) = (s.channel.clone(), s.address.clone());
    assert!(a.framed_transport, "Weft's RM offers the framed transport");

    // The NM's side: every beat on one connection, answered in order, and as the gRPC stream
    // answers the same beat.
    let mut link = HeartbeatLink::new(channel.clone(), a.heartbeat_stream)
        .framed(&address, a.framed_transport);
    let mut framed_replies = Vec::new();
    for response_id in 0..3 {
        let reply = rt
            .block_on(link.beat(beat("a-host:1", &a.node_secret, response_id)))
            .unwrap();
        assert_eq!(reply.response_id, response_id + 1);
        assert_eq!(reply.node_action, NodeAction::Normal as i32);
        assert!(link.framing());
        framed_replies.push(reply);
    }
    let mut grpc = HeartbeatLink::new(channel.clone(), true);
    let over_grpc = rt
        .block_on(grpc.beat(beat("a-host:1", &a.node_secret, 3)))
        .unwrap();
    let last = framed_replies.last().unwrap();
    assert_eq!(
        NodeHeartbeatResponse {
            response_id: last.response_id + 1,
            ..last.clone()
        },
        over_grpc,
        "the same answer over either transport"
    );

    // A wrong secret is refused as the unary call refuses it, and ends the connection.
    let refused = rt
        .block_on(link.beat(beat("a-host:1", "not-the-secret", 4)))
        .unwrap_err();
    let unary = rt
        .block_on(tracker.node_heartbeat(beat("a-host:1", "not-the-secret", 4)))
        .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    assert_eq!(refused.code(), unary.code());
    assert_eq!(refused.message(), unary.message());
    // The next beat opens a new connection.
    let reply = rt
        .block_on(link.beat(beat("a-host:1", &a.node_secret, 4)))
        .unwrap();
    assert_eq!(reply.response_id, 5);
    assert!(link.framing());

    rt.block_on(async {
        // One connection speaks for one node, even with the other node's own secret.
        let mut raw = Raw::open(&address, Kind::Heartbeats, &FramedOpen::default())
            .await
            .unwrap();
        let first: NodeHeartbeatResponse = raw
            .exchange(&beat("a-host:1", &a.node_secret, 10))
            .await
            .unwrap();
        assert_eq!(first.response_id, 11);
        let other = raw
            .exchange::<_, NodeHeartbeatResponse>(&beat("b-host:1", &b.node_secret, 0))
            .await
            .unwrap_err();
        assert_eq!(other.code(), Code::PermissionDenied, "{other:?}");
        assert!(other.message().contains("a-host:1"), "{other:?}");
        assert!(raw.closed().await, "a refusal ends the connection");

        // A frame above the limit is refused from its header, with tonic's code.
        let mut raw = Raw::open(&address, Kind::Heartbeats, &FramedOpen::default())
            .await
            .unwrap();
        let mut header = vec![FrameType::Message as u8];
        header.extend(u32::MAX.to_be_bytes());
        let too_large = raw
            .send_bytes::<NodeHeartbeatResponse>(&header)
            .await
            .unwrap_err();
        assert_eq!(too_large.code(), Code::OutOfRange, "{too_large:?}");

        // Garbage is refused as tonic refuses an undecodable message.
        let mut raw = Raw::open(&address, Kind::Heartbeats, &FramedOpen::default())
            .await
            .unwrap();
        let garbage = raw
            .send_bytes::<NodeHeartbeatResponse>(&[
                FrameType::Message as u8,
                0,
                0,
                0,
                2,
                0xff,
                0xff,
            ])
            .await
            .unwrap_err();
        assert_eq!(garbage.code(), Code::Internal, "{garbage:?}");

        // This port serves heartbeats only.
        let allocates = Raw::open(&address, Kind::Allocates, &FramedOpen::default())
            .await
            .err()
            .unwrap();
        assert_eq!(allocates.code(), Code::Unimplemented, "{allocates:?}");

        // Not Weft's preamble after the first byte: closed without an answer.
        let mut stream = TcpStream::connect(&address).await.unwrap();
        stream.write_all(b"WXYZ\x01\x01").await.unwrap();
        let mut reader = FrameReader::new();
        assert!(reader
            .next(&mut stream, MAX_MESSAGE)
            .await
            .ok()
            .flatten()
            .is_none());
    });

    // gRPC still works on the same port.
    let unary = rt
        .block_on(tracker.node_heartbeat(beat("b-host:1", &b.node_secret, 0)))
        .unwrap()
        .into_inner();
    assert_eq!(unary.response_id, 1);
}

#[test]
fn a_heartbeat_link_falls_back_to_the_grpc_stream_when_the_rm_turns_framing_off() {
    let mut s = NodeSetup::start("\"weft.resourcemanager.framed-transport.enabled\" = false\n");
    let a = s.register("a-host:1");
    let (rt, channel, address) = (&s.rt, s.channel.clone(), s.address.clone());
    assert!(!a.framed_transport, "not offered");
    assert!(a.heartbeat_stream);
    // A link told the transport is there (an offer from before a restart) finds it refused as
    // unimplemented and carries on over the gRPC stream.
    let mut link = HeartbeatLink::new(channel, a.heartbeat_stream).framed(&address, true);
    assert!(link.framing());
    for response_id in 0..2 {
        let reply = rt
            .block_on(link.beat(beat("a-host:1", &a.node_secret, response_id)))
            .unwrap();
        assert_eq!(reply.response_id, response_id + 1);
        assert!(!link.framing(), "the gRPC stream from now on");
        assert!(link.streaming());
    }
    let refused = rt
        .block_on(Raw::open(
            &address,
            Kind::Heartbeats,
            &FramedOpen::default(),
        ))
        .err()
        .unwrap();
    assert_eq!(refused.code(), Code::Unimplemented, "{refused:?}");
}

fn ask(priority: i32, total: i32) -> ResourceRequest {
    ResourceRequest {
        priority,
        resource_name: "*".into(),
        capability: Some(Resource::new(1024, 1)),
        num_containers: total,
        relax_locality: Some(true),
        ..Default::default()
    }
}

/// The sizes of three answers after a grant of 7 (capped at 5 per answer), their ids checked.
fn capped_grant(s: &Setup, link: &mut AllocateLink, first_id: i32) -> Vec<usize> {
    let mut sizes = Vec::new();
    for response_id in first_id..first_id + 3 {
        let reply =
            s.rt.block_on(link.allocate(AllocateRequest {
                response_id,
                ..Default::default()
            }))
            .unwrap();
        assert_eq!(reply.response_id, response_id + 1);
        sizes.push(reply.allocated_containers.len());
    }
    sizes
}

/// Releasing an unknown container is refused over `link` as the unary call refuses it.
fn refused_as_unary(s: &Setup, link: &mut AllocateLink) {
    let unknown = AllocateRequest {
        release: vec!["container_1_0001_01_000099".into()],
        ..Default::default()
    };
    let unary =
        s.rt.block_on(
            s.am.clone()
                .allocate(s.creds.request(unknown.clone()).unwrap()),
        )
        .unwrap_err();
    let refused = s.rt.block_on(link.allocate(unknown)).unwrap_err();
    assert_eq!(refused.code(), unary.code(), "{refused:?} / {unary:?}");
    assert_eq!(refused.message(), unary.message());
}

#[test]
fn allocates_over_the_framed_transport_are_answered_and_refused_as_over_grpc() {
    let mut s = Setup::start(5, "");
    assert!(
        s.registered.framed_transport,
        "Weft's RM offers the framed transport"
    );
    let mut link = AllocateLink::new(
        s.channel.clone(),
        s.creds.clone(),
        s.registered.allocate_stream,
    )
    .framed(&s.scheduler, s.registered.framed_transport);
    let first =
        s.rt.block_on(link.allocate(AllocateRequest {
            ask: vec![ask(1, 7)],
            response_id: 7,
            ..Default::default()
        }))
        .unwrap();
    assert!(link.framing());
    assert_eq!(first.response_id, 8, "the request's id plus one");
    assert_eq!(first.num_cluster_nodes, 1);
    s.heartbeat();
    // The grant comes capped per answer, as over gRPC.
    assert_eq!(capped_grant(&s, &mut link, 8), vec![5, 2, 0]);
    assert!(link.framing());

    // A refusal has the unary call's code and message and ends the connection; the next call
    // opens another.
    refused_as_unary(&s, &mut link);
    let reply =
        s.rt.block_on(link.allocate(AllocateRequest {
            response_id: 41,
            ..Default::default()
        }))
        .unwrap();
    assert_eq!(reply.response_id, 42);
    assert!(link.framing());

    let scheduler = s.scheduler.clone();
    let creds = s.creds.clone();
    s.rt.block_on(async {
        let open = |creds: &AmCredentials| FramedOpen {
            attempt_id: creds.attempt_id.clone(),
            am_token: creds.token.clone(),
        };
        // The credentials are checked when the connection opens, with the gRPC path's codes.
        let forged = AmCredentials {
            token: "not-the-token".into(),
            ..creds.clone()
        };
        let refused = Raw::open(&scheduler, Kind::Allocates, &open(&forged))
            .await
            .err()
            .unwrap();
        assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
        let other_app = AmCredentials {
            attempt_id: "appattempt_1_9999_000001".into(),
            ..creds.clone()
        };
        let refused = Raw::open(&scheduler, Kind::Allocates, &open(&other_app))
            .await
            .err()
            .unwrap();
        assert_eq!(refused.code(), Code::NotFound, "{refused:?}");
        let bare = Raw::open(&scheduler, Kind::Allocates, &FramedOpen::default())
            .await
            .err()
            .unwrap();
        assert_eq!(bare.code(), Code::PermissionDenied, "{bare:?}");
        let unparsable = Raw::open(
            &scheduler,
            Kind::Allocates,
            &FramedOpen {
                attempt_id: "not-an-attempt".into(),
                am_token: "t".into(),
            },
        )
        .await
        .err()
        .unwrap();
        assert_eq!(unparsable.code(), Code::InvalidArgument, "{unparsable:?}");
        // This port serves Allocates only.
        let heartbeats = Raw::open(&scheduler, Kind::Heartbeats, &FramedOpen::default())
            .await
            .err()
            .unwrap();
        assert_eq!(heartbeats.code(), Code::Unimplemented, "{heartbeats:?}");

        // A connection speaks for its attempt only.
        let mut raw = Raw::open(&scheduler, Kind::Allocates, &open(&creds))
            .await
            .unwrap();
        let own: AllocateResponse = raw
            .exchange(&AllocateRequest {
                attempt_id: creds.attempt_id.clone(),
                response_id: 1,
                ..Default::default()
            })
            .await
            .unwrap();
        assert_eq!(own.response_id, 2);
        let other = raw
            .exchange::<_, AllocateResponse>(&AllocateRequest {
                attempt_id: "appattempt_1_0001_000002".into(),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(other.code(), Code::PermissionDenied, "{other:?}");
        assert!(raw.closed().await);
    });

    // Once the attempt has ended, its Allocates are refused as unary ones are.
    s.finish_succeeded();
    let after =
        s.rt.block_on(link.allocate(AllocateRequest::default()))
            .unwrap_err();
    let unary =
        s.rt.block_on(s.am.allocate(s.creds.request(AllocateRequest::default()).unwrap()))
            .unwrap_err();
    assert_eq!(after.code(), Code::NotFound, "{after:?}");
    assert_eq!(after.code(), unary.code());
}

#[test]
fn an_allocate_link_falls_back_to_the_grpc_stream_when_the_rm_turns_framing_off() {
    let s = Setup::start(
        5,
        "\"weft.resourcemanager.framed-transport.enabled\" = false\n",
    );
    assert!(!s.registered.framed_transport, "not offered");
    assert!(s.registered.allocate_stream);
    let mut link =
        AllocateLink::new(s.channel.clone(), s.creds.clone(), true).framed(&s.scheduler, true);
    assert!(link.framing());
    let reply =
        s.rt.block_on(link.allocate(AllocateRequest {
            ask: vec![ask(1, 3)],
            response_id: 3,
            ..Default::default()
        }))
        .unwrap();
    assert_eq!(reply.response_id, 4);
    assert!(!link.framing(), "the gRPC stream from now on");
    assert!(link.streaming());
}

/// A frame on a lane of a shared connection, spoken by hand.
fn lane_frame(frame_type: FrameType, lane: u32, message: &impl Message) -> Vec<u8> {
    let mut out = Vec::new();
    put_lane_frame(&mut out, frame_type, lane, message).unwrap();
    out
}

/// Sends `bytes` (lane frames) on a shared connection and reads the next frame: its type,
/// lane and message.
async fn lane_call(raw: &mut Raw, bytes: &[u8]) -> (FrameType, u32, Vec<u8>) {
    raw.stream.write_all(bytes).await.unwrap();
    let (frame_type, payload) = raw.frame().await.expect("an answer");
    let (lane, message) = split_lane(&payload).unwrap();
    (frame_type, lane, message.to_vec())
}

#[test]
fn many_attempts_allocate_on_lanes_of_one_shared_connection() {
    let mut s = Setup::start(5, "");
    assert!(s.registered.framed_transport);
    let lanes = Arc::new(SharedAllocates::new(&s.scheduler, MAX_MESSAGE));
    let link = |s: &Setup| {
        AllocateLink::new(s.channel.clone(), s.creds.clone(), true)
            .shared(Arc::clone(&lanes), s.registered.framed_transport)
    };
    // Two links of the attempt on lanes of one connection, answered each on its own.
    let (mut first, mut second) = (link(&s), link(&s));
    let (a, b) = s.rt.block_on(async {
        tokio::join!(
            first.allocate(AllocateRequest {
                ask: vec![ask(1, 7)],
                response_id: 10,
                ..Default::default()
            }),
            second.allocate(AllocateRequest {
                response_id: 20,
                ..Default::default()
            }),
        )
    });
    assert_eq!(a.unwrap().response_id, 11);
    assert_eq!(b.unwrap().response_id, 21);
    assert!(first.sharing() && second.sharing());
    s.heartbeat();
    // The grant comes capped per answer, as over gRPC and an own framed connection.
    assert_eq!(capped_grant(&s, &mut first, 11), vec![5, 2, 0]);

    // A refusal has the unary call's code and message and ends that lane only.
    refused_as_unary(&s, &mut first);
    let reply =
        s.rt.block_on(second.allocate(AllocateRequest {
            response_id: 30,
            ..Default::default()
        }))
        .unwrap();
    assert_eq!(reply.response_id, 31, "the other lane goes on");
    let reply =
        s.rt.block_on(first.allocate(AllocateRequest {
            response_id: 40,
            ..Default::default()
        }))
        .unwrap();
    assert_eq!(reply.response_id, 41, "the refused link opened a new lane");

    // A forged token is refused when its lane opens, with the gRPC path's code.
    let forged = AmCredentials {
        token: "not-the-token".into(),
        ..s.creds.clone()
    };
    let mut bad =
        AllocateLink::new(s.channel.clone(), forged, true).shared(Arc::clone(&lanes), true);
    let refused =
        s.rt.block_on(bad.allocate(AllocateRequest::default()))
            .unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");

    // What the links never send, by hand: a lane that is not open, a second request before
    // the first is answered, a lane opened twice, and a frame too short to name its lane.
    let scheduler = s.scheduler.clone();
    let creds = s.creds.clone();
    s.rt.block_on(async {
        let open = FramedOpen {
            attempt_id: creds.attempt_id.clone(),
            am_token: creds.token.clone(),
        };
        let mut raw = Raw::open(&scheduler, Kind::SharedAllocates, &FramedOpen::default())
            .await
            .unwrap();
        let request = AllocateRequest {
            response_id: 5,
            ..Default::default()
        };
        let (frame_type, lane, message) =
            lane_call(&mut raw, &lane_frame(FrameType::Message, 3, &request)).await;
        assert_eq!((frame_type, lane), (FrameType::Error, 3));
        assert_eq!(error_status(&message).code(), Code::InvalidArgument);

        let (frame_type, lane, _) =
            lane_call(&mut raw, &lane_frame(FrameType::Open, 1, &open)).await;
        assert_eq!((frame_type, lane), (FrameType::Accepted, 1));
        let (frame_type, lane, message) =
            lane_call(&mut raw, &lane_frame(FrameType::Open, 1, &open)).await;
        assert_eq!(
            (frame_type, lane),
            (FrameType::Error, 1),
            "opened twice: refused, and ended"
        );
        assert_eq!(error_status(&message).code(), Code::InvalidArgument);

        let (frame_type, lane, _) =
            lane_call(&mut raw, &lane_frame(FrameType::Open, 2, &open)).await;
        assert_eq!((frame_type, lane), (FrameType::Accepted, 2));
        // Both requests arrive in one read: the second is taken while the first is with the
        // driver, and is refused; the lane ends, and the first's answer goes to nobody.
        let mut two = lane_frame(FrameType::Message, 2, &request);
        two.extend(lane_frame(FrameType::Message, 2, &request));
        let (frame_type, lane, message) = lane_call(&mut raw, &two).await;
        assert_eq!((frame_type, lane), (FrameType::Error, 2));
        assert_eq!(error_status(&message).code(), Code::InvalidArgument);
        // A refused lane's number opens again.
        let (frame_type, lane, _) =
            lane_call(&mut raw, &lane_frame(FrameType::Open, 1, &open)).await;
        assert_eq!((frame_type, lane), (FrameType::Accepted, 1));
        let (frame_type, lane, message) =
            lane_call(&mut raw, &lane_frame(FrameType::Message, 1, &request)).await;
        assert_eq!((frame_type, lane), (FrameType::Message, 1));
        assert_eq!(
            AllocateResponse::decode(message.as_slice())
                .unwrap()
                .response_id,
            6
        );

        // A lane closed with a request in flight and opened again at once: the old request's
        // answer goes to nobody, the new opening's lane gets only its own.
        let (frame_type, lane, _) =
            lane_call(&mut raw, &lane_frame(FrameType::Open, 7, &open)).await;
        assert_eq!((frame_type, lane), (FrameType::Accepted, 7));
        let stale = AllocateRequest {
            response_id: 60,
            ..Default::default()
        };
        let mut again = lane_frame(FrameType::Message, 7, &stale);
        put_lane_empty(&mut again, FrameType::Close, 7);
        again.extend(lane_frame(FrameType::Open, 7, &open));
        let (frame_type, lane, _) = lane_call(&mut raw, &again).await;
        assert_eq!((frame_type, lane), (FrameType::Accepted, 7));
        let fresh = AllocateRequest {
            response_id: 70,
            ..Default::default()
        };
        let (frame_type, lane, message) =
            lane_call(&mut raw, &lane_frame(FrameType::Message, 7, &fresh)).await;
        assert_eq!((frame_type, lane), (FrameType::Message, 7));
        assert_eq!(
            AllocateResponse::decode(message.as_slice())
                .unwrap()
                .response_id,
            71,
            "the answer to the new opening's request, not the closed one's"
        );

        raw.stream.write_all(&[0, 0, 0, 0, 2, 0, 1]).await.unwrap();
        let (frame_type, payload) = raw.frame().await.unwrap();
        assert_eq!(frame_type, FrameType::Error, "too short for its lane");
        assert_eq!(error_status(&payload).code(), Code::InvalidArgument);
        assert!(raw.closed().await, "and the connection ends");
    });
}
