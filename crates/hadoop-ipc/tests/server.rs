//! Spec §9.4 step 0 over loopback: a real listener answering SASL, ignoring pings, running
//! pipelined calls out of order, replying with exceptions, and closing only the connection
//! that sent something malformed.

use std::net::SocketAddr;
use std::time::Duration;

use prost::Message;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use weft_hadoop_ipc::client::{read_reply, request_header, Client, ClientError};
use weft_hadoop_ipc::proto::rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto};
use weft_hadoop_ipc::proto::rpc_sasl_proto::SaslState;
use weft_hadoop_ipc::proto::{
    IpcConnectionContextProto, RequestHeaderProto, RpcSaslProto, UserInformationProto,
};
use weft_hadoop_ipc::wire::{self, split_delimited, Encoded};
use weft_hadoop_ipc::{
    exception, serve, CallFuture, Caller, Dispatcher, ErrorCode, Limits, Protocol, RpcError,
};

const TEST_PROTOCOL: &str = "org.example.TestProtocolPB";

/// `echo` answers the request, `whoami` the caller, `slow` waits 300 ms, `fail` throws.
struct TestProtocol;

impl Protocol for TestProtocol {
    fn name(&self) -> &'static str {
        TEST_PROTOCOL
    }
    fn call(&self, caller: Caller, method: &str, request: Vec<u8>) -> CallFuture {
        let method = method.to_string();
        Box::pin(async move {
            match method.as_str() {
                "echo" => Ok(request),
                "whoami" => Ok(caller.user.into_bytes()),
                "slow" => {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    Ok(b"slow".to_vec())
                }
                "fail" => Err(RpcError::new(
                    exception::APPLICATION_NOT_FOUND,
                    "no such app",
                )),
                other => Err(RpcError::no_such_method(TEST_PROTOCOL, other)),
            }
        })
    }
}

struct Server {
    addr: SocketAddr,
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl Server {
    async fn start(limits: Limits) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, rx) = watch::channel(false);
        let dispatcher = Dispatcher::new().with(TestProtocol);
        let task = tokio::spawn(serve(listener, dispatcher, limits, rx));
        Server { addr, stop, task }
    }
    async fn stop(self) {
        self.stop.send_replace(true);
        tokio::time::timeout(Duration::from_secs(5), self.task)
            .await
            .expect("the server stops")
            .unwrap();
    }
}

/// A `prost` message holding raw bytes, for the test protocol's opaque payloads.
#[derive(Clone, PartialEq, Message)]
struct Raw {
    #[prost(bytes = "vec", tag = "1")]
    data: Vec<u8>,
}

fn call_packet(id: i32, method: &str, body: &[u8]) -> Vec<u8> {
    let header = request_header(id, b"0123456789abcdef", 0);
    let rh = RequestHeaderProto {
        method_name: method.to_string(),
        declaring_class_protocol_name: TEST_PROTOCOL.to_string(),
        client_protocol_version: 1,
    };
    wire::packet(&[&header, &rh, &Encoded(body)])
}

fn context_packet(user: &str) -> Vec<u8> {
    let header = request_header(-3, b"0123456789abcdef", -1);
    let context = IpcConnectionContextProto {
        user_info: Some(UserInformationProto {
            effective_user: Some(user.to_string()),
            real_user: None,
        }),
        protocol: Some(TEST_PROTOCOL.to_string()),
    };
    wire::packet(&[&header, &context])
}

fn body_of(rest: &[u8]) -> Vec<u8> {
    split_delimited(rest).unwrap().0.to_vec()
}

async fn reply(
    stream: &mut TcpStream,
) -> (weft_hadoop_ipc::proto::RpcResponseHeaderProto, Vec<u8>) {
    tokio::time::timeout(Duration::from_secs(5), read_reply(stream))
        .await
        .expect("a reply in time")
        .expect("a well-formed reply")
}

/// True once the server has closed the connection (EOF on read).
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 256];
    loop {
        match tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

#[tokio::test]
async fn sasl_negotiation_switches_to_simple_and_the_call_runs_as_the_context_user() {
    let server = Server::start(Limits::default()).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut opening = b"hrpc\x09\x00\xdf".to_vec();
    let negotiate = RpcSaslProto {
        state: SaslState::Negotiate as i32,
        ..Default::default()
    };
    opening.extend(wire::packet(&[&request_header(-33, &[], -1), &negotiate]));
    s.write_all(&opening).await.unwrap();
    let (h, rest) = reply(&mut s).await;
    assert_eq!(h.call_id, (-33i32) as u32);
    assert_eq!(h.status, RpcStatusProto::Success as i32);
    let sasl = RpcSaslProto::decode(body_of(&rest).as_slice()).unwrap();
    assert_eq!(
        sasl.state,
        SaslState::Success as i32,
        "SUCCESS means: use simple auth"
    );

    let mut next = context_packet("alice");
    next.extend(call_packet(0, "whoami", &[]));
    s.write_all(&next).await.unwrap();
    let (h, rest) = reply(&mut s).await;
    assert_eq!((h.call_id, h.status), (0, RpcStatusProto::Success as i32));
    assert_eq!(h.client_id.as_deref(), Some(&b"0123456789abcdef"[..]));
    assert_eq!(body_of(&rest), b"alice");
    server.stop().await;
}

#[tokio::test]
async fn a_sasl_token_auth_is_refused_with_a_fatal_reply() {
    let server = Server::start(Limits::default()).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut opening = b"hrpc\x09\x00\xdf".to_vec();
    let initiate = RpcSaslProto {
        state: SaslState::Initiate as i32,
        auths: vec![weft_hadoop_ipc::proto::rpc_sasl_proto::SaslAuth {
            method: "TOKEN".into(),
            mechanism: "DIGEST-MD5".into(),
            ..Default::default()
        }],
        ..Default::default()
    };
    opening.extend(wire::packet(&[&request_header(-33, &[], -1), &initiate]));
    s.write_all(&opening).await.unwrap();
    let (h, _) = reply(&mut s).await;
    assert_eq!(h.status, RpcStatusProto::Fatal as i32);
    assert_eq!(
        h.exception_class_name.as_deref(),
        Some(exception::ACCESS_CONTROL)
    );
    assert!(h.error_msg.unwrap().contains("only SIMPLE"));
    assert!(closed(&mut s).await);
    server.stop().await;
}

#[tokio::test]
async fn pings_get_no_reply_and_pipelined_calls_answer_as_they_finish() {
    let server = Server::start(Limits::default()).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut bytes = b"hrpc\x09\x00\x00".to_vec();
    bytes.extend(context_packet("bob"));
    bytes.extend(wire::packet(&[&request_header(-4, &[], -1)]));
    bytes.extend(call_packet(0, "slow", &[]));
    bytes.extend(call_packet(
        1,
        "echo",
        &Raw {
            data: b"hi".to_vec(),
        }
        .encode_to_vec(),
    ));
    bytes.extend(wire::packet(&[&request_header(-4, &[], -1)]));
    s.write_all(&bytes).await.unwrap();
    let (first, rest) = reply(&mut s).await;
    assert_eq!(first.call_id, 1, "the fast call overtakes the slow one");
    assert_eq!(Raw::decode(body_of(&rest).as_slice()).unwrap().data, b"hi");
    let (second, rest) = reply(&mut s).await;
    assert_eq!(second.call_id, 0);
    assert_eq!(body_of(&rest), b"slow");
    // Nothing else: the pings were not answered.
    let mut buf = [0u8; 1];
    let more = tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf)).await;
    assert!(more.is_err(), "no reply to a ping");
    server.stop().await;
}

#[tokio::test]
async fn errors_name_the_exception_and_leave_the_connection_usable() {
    let server = Server::start(Limits::default()).await;
    let mut client = Client::connect(server.addr, "carol", TEST_PROTOCOL)
        .await
        .unwrap();
    let e = client
        .call::<Raw, Raw>("fail", &Raw::default())
        .await
        .unwrap_err();
    let ClientError::Remote(e) = e else {
        panic!("{e}")
    };
    assert_eq!(e.class_name, exception::APPLICATION_NOT_FOUND);
    assert_eq!(e.code, ErrorCode::Application);
    let e = client
        .call::<Raw, Raw>("nope", &Raw::default())
        .await
        .unwrap_err();
    let ClientError::Remote(e) = e else {
        panic!("{e}")
    };
    assert_eq!(e.class_name, exception::NO_SUCH_METHOD);
    assert_eq!(e.code, ErrorCode::NoSuchMethod);
    let ok: Raw = client
        .call(
            "echo",
            &Raw {
                data: b"still here".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(ok.data, b"still here");

    let mut other = Client::connect(server.addr, "carol", "org.example.OtherPB")
        .await
        .unwrap();
    let e = other
        .call::<Raw, Raw>("echo", &Raw::default())
        .await
        .unwrap_err();
    let ClientError::Remote(e) = e else {
        panic!("{e}")
    };
    assert_eq!(e.class_name, exception::NO_SUCH_PROTOCOL);
    server.stop().await;
}

#[tokio::test]
async fn malformed_input_closes_that_connection_and_the_server_goes_on() {
    let limits = Limits {
        max_packet_bytes: 1024,
        ..Limits::default()
    };
    let server = Server::start(limits).await;
    // A header that is not protobuf: a FATAL reply, then the connection closes.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut bytes = b"hrpc\x09\x00\x00".to_vec();
    bytes.extend([0, 0, 0, 3, 2, 0xff, 0xff]);
    s.write_all(&bytes).await.unwrap();
    let (h, _) = reply(&mut s).await;
    assert_eq!(h.status, RpcStatusProto::Fatal as i32);
    assert_eq!(
        h.error_detail,
        Some(RpcErrorCodeProto::FatalInvalidRpcHeader as i32)
    );
    assert!(closed(&mut s).await);
    // An oversized length: closed without reading it.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut bytes = b"hrpc\x09\x00\x00".to_vec();
    bytes.extend(1025u32.to_be_bytes());
    s.write_all(&bytes).await.unwrap();
    assert!(closed(&mut s).await);
    // A call before the context.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut bytes = b"hrpc\x09\x00\x00".to_vec();
    bytes.extend(call_packet(0, "echo", &[]));
    s.write_all(&bytes).await.unwrap();
    let (h, _) = reply(&mut s).await;
    assert_eq!(h.status, RpcStatusProto::Fatal as i32);
    assert!(h
        .error_msg
        .unwrap()
        .contains("before the connection context"));
    // A wrong version gets Hadoop's FATAL version mismatch.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"hrpc\x07\x00\x00").await.unwrap();
    let (h, _) = reply(&mut s).await;
    assert_eq!(h.call_id, (-1i32) as u32);
    assert_eq!(
        h.error_detail,
        Some(RpcErrorCodeProto::FatalVersionMismatch as i32)
    );
    // HTTP on the IPC port gets a plain-text answer.
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    s.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
    let mut text = String::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), s.read_to_string(&mut text)).await;
    assert!(text.contains("Hadoop IPC"), "{text}");
    // After all that, a good client is served.
    let mut client = Client::connect(server.addr, "dave", TEST_PROTOCOL)
        .await
        .unwrap();
    let ok: Raw = client
        .call(
            "echo",
            &Raw {
                data: b"ok".to_vec(),
            },
        )
        .await
        .unwrap();
    assert_eq!(ok.data, b"ok");
    server.stop().await;
}

#[tokio::test]
async fn a_silent_connection_is_dropped_and_connections_are_bounded() {
    let limits = Limits {
        preamble_timeout: Duration::from_millis(200),
        max_connections: 1,
        ..Limits::default()
    };
    let server = Server::start(limits).await;
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    // While the silent one holds the only slot, another connection is closed at once.
    let mut second = TcpStream::connect(server.addr).await.unwrap();
    assert!(closed(&mut second).await);
    assert!(
        closed(&mut silent).await,
        "closed after the preamble timeout"
    );
    // The slot is free again.
    let mut client = Client::connect(server.addr, "erin", TEST_PROTOCOL)
        .await
        .unwrap();
    let ok: Raw = client.call("echo", &Raw::default()).await.unwrap();
    assert_eq!(ok, Raw::default());
    server.stop().await;
}

#[tokio::test]
async fn an_idle_connection_is_closed_but_not_while_a_call_runs() {
    let limits = Limits {
        idle_timeout: Duration::from_millis(150),
        ..Limits::default()
    };
    let server = Server::start(limits).await;
    let mut s = TcpStream::connect(server.addr).await.unwrap();
    let mut bytes = b"hrpc\x09\x00\x00".to_vec();
    bytes.extend(context_packet("frank"));
    // The slow call (300 ms) outlasts the idle timeout: its reply still arrives.
    bytes.extend(call_packet(0, "slow", &[]));
    s.write_all(&bytes).await.unwrap();
    let (h, _) = reply(&mut s).await;
    assert_eq!((h.call_id, h.status), (0, RpcStatusProto::Success as i32));
    // Then nothing is sent: the server closes the connection.
    assert!(closed(&mut s).await);
    server.stop().await;
}
