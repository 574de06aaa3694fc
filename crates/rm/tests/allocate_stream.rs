//! Weft's Allocate stream against a real RM in-process (127.0.0.1, ephemeral ports, a fake
//! NM): the registration offers it, Allocates on it are answered in order as the unary call
//! answers them (response ids, capped grants, NM tokens, refusals with the unary call's codes),
//! its credentials are checked when it opens, it speaks for its own attempt only, it is
//! refused once the attempt has ended, and an AM falls back to unary calls when the RM does
//! not serve it.

mod support;

use std::collections::BTreeSet;

use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use weft_proto::allocate_link::AllocateLink;
use weft_proto::auth::AmCredentials;
use weft_proto::v1::allocate_streams_client::AllocateStreamsClient;
use weft_proto::v1::*;

type Setup = support::am_setup::AmSetup;

/// The cap the RM is configured with.
const CAP: usize = 5;

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

/// The refusal of a call that must be refused.
fn refusal<T>(call: Result<T, tonic::Status>) -> tonic::Status {
    match call {
        Ok(_) => panic!("the RM accepted a stream it must refuse"),
        Err(status) => status,
    }
}

fn link(s: &Setup) -> AllocateLink {
    AllocateLink::new(
        s.channel.clone(),
        s.creds.clone(),
        s.registered.allocate_stream,
    )
}

#[test]
fn allocates_on_the_stream_are_answered_as_unary_ones() {
    let mut s = Setup::start(CAP, "");
    assert!(s.registered.allocate_stream, "Weft's RM offers the stream");
    let mut link = link(&s);
    let mut on_stream = |s: &mut Setup, request: AllocateRequest| {
        let answer = s.rt.block_on(link.allocate(request));
        assert!(link.streaming());
        answer
    };

    let first = on_stream(
        &mut s,
        AllocateRequest {
            ask: vec![ask(1, 12)],
            response_id: 7,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(first.response_id, 8, "the request's id plus one");
    assert!(first.allocated_containers.is_empty());
    assert_eq!(first.num_cluster_nodes, 1);
    s.heartbeat();

    // The grant comes over stream and unary calls alike, capped per answer, each container
    // once, with an NM token for the node in the first answer that brings one there.
    let mut ids = BTreeSet::new();
    let mut sizes = Vec::new();
    let mut tokens = 0;
    for call in 0..6 {
        let reply = if call % 2 == 0 {
            on_stream(
                &mut s,
                AllocateRequest {
                    response_id: call,
                    ..Default::default()
                },
            )
            .unwrap()
        } else {
            s.allocate(&[])
        };
        if call % 2 == 0 {
            assert_eq!(reply.response_id, call + 1);
        }
        tokens += reply.nm_tokens.len();
        for c in &reply.allocated_containers {
            assert_eq!(c.node_id, s.node_id);
            assert!(
                ids.insert(c.container_id.clone()),
                "{} twice",
                c.container_id
            );
        }
        sizes.push(reply.allocated_containers.len());
    }
    assert_eq!(
        sizes,
        vec![CAP, CAP, 2, 0, 0, 0],
        "12 containers over capped answers"
    );
    assert_eq!(tokens, 1, "one NM token for the one node");

    // A refusal has the unary call's code and ends the stream; the next call opens another.
    let unknown = AllocateRequest {
        release: vec!["container_1_0001_01_000099".into()],
        ..Default::default()
    };
    let unary =
        s.rt.block_on(s.am.allocate(s.creds.request(unknown.clone()).unwrap()))
            .unwrap_err();
    let streamed = on_stream(&mut s, unknown).unwrap_err();
    assert_eq!(streamed.code(), unary.code(), "{streamed:?} / {unary:?}");
    assert_eq!(streamed.message(), unary.message());
    let reply = on_stream(
        &mut s,
        AllocateRequest {
            response_id: 41,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(reply.response_id, 42);

    // Once the attempt has ended its stream is refused as a unary call is.
    s.finish_succeeded();
    let after = on_stream(&mut s, AllocateRequest::default()).unwrap_err();
    let unary =
        s.rt.block_on(s.am.allocate(s.creds.request(AllocateRequest::default()).unwrap()))
            .unwrap_err();
    assert_eq!(after.code(), tonic::Code::NotFound, "{after:?}");
    assert_eq!(after.code(), unary.code());
}

#[test]
fn a_stream_is_checked_when_it_opens_and_speaks_for_its_attempt_only() {
    let s = Setup::start(CAP, "");
    let mut streams = AllocateStreamsClient::new(s.channel.clone());
    let open = |streams: &mut AllocateStreamsClient<_>, creds: &AmCredentials| {
        let (tx, rx) = mpsc::channel(2);
        let call = creds.request(ReceiverStream::new(rx)).unwrap();
        s.rt.block_on(streams.allocates(call))
            .map(|r| (tx, r.into_inner()))
    };

    // The token is checked when the stream opens, with the unary call's codes.
    let forged = AmCredentials {
        token: "not-the-token".into(),
        ..s.creds.clone()
    };
    let refused = refusal(open(&mut streams, &forged));
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused:?}");
    let other_app = AmCredentials {
        attempt_id: "appattempt_1_9999_000001".into(),
        ..s.creds.clone()
    };
    let refused = refusal(open(&mut streams, &other_app));
    assert_eq!(refused.code(), tonic::Code::NotFound, "{refused:?}");
    let mut bare = streams.clone();
    let (_tx, rx) = mpsc::channel::<AllocateRequest>(1);
    let refused = refusal(s.rt.block_on(bare.allocates(ReceiverStream::new(rx))));
    assert_eq!(refused.code(), tonic::Code::PermissionDenied);

    // A request naming its own attempt is answered; one naming another is refused and ends
    // the stream.
    let (tx, mut replies) = open(&mut streams, &s.creds).expect("opens");
    s.rt.block_on(tx.send(AllocateRequest {
        attempt_id: s.creds.attempt_id.clone(),
        response_id: 1,
        ..Default::default()
    }))
    .unwrap();
    let reply = s.rt.block_on(replies.message()).unwrap().unwrap();
    assert_eq!(reply.response_id, 2);
    s.rt.block_on(tx.send(AllocateRequest {
        attempt_id: "appattempt_1_0001_000002".into(),
        ..Default::default()
    }))
    .unwrap();
    let other = s.rt.block_on(replies.message()).unwrap_err();
    assert_eq!(other.code(), tonic::Code::PermissionDenied, "{other:?}");
    assert!(other.message().contains(&s.creds.attempt_id), "{other:?}");

    // The unary call refuses a request naming another attempt than its credentials the same way.
    let mut am = s.am.clone();
    let unary =
        s.rt.block_on(
            am.allocate(
                s.creds
                    .request(AllocateRequest {
                        attempt_id: "appattempt_1_0001_000002".into(),
                        ..Default::default()
                    })
                    .unwrap(),
            ),
        )
        .unwrap_err();
    assert_eq!(unary.code(), tonic::Code::PermissionDenied);
}

#[test]
fn an_am_falls_back_to_unary_calls_when_the_rm_serves_no_stream() {
    let mut s = Setup::start(
        CAP,
        "\"weft.resourcemanager.am.allocate-stream.enabled\" = false\n",
    );
    assert!(!s.registered.allocate_stream, "not offered");
    // A link told the stream is there finds it unimplemented and carries on with unary calls.
    let mut link = AllocateLink::new(s.channel.clone(), s.creds.clone(), true);
    assert!(link.streaming());
    let reply =
        s.rt.block_on(link.allocate(AllocateRequest {
            ask: vec![ask(1, 3)],
            response_id: 3,
            ..Default::default()
        }))
        .unwrap();
    assert!(!link.streaming(), "unary from now on");
    assert_eq!(reply.response_id, 4);
    s.heartbeat();
    let reply =
        s.rt.block_on(link.allocate(AllocateRequest::default()))
            .unwrap();
    assert_eq!(reply.allocated_containers.len(), 3);
}
