//! Spec §9.4 step 0 without a socket: the §2.8 capture decoded and re-encoded, call ids in
//! both directions, and the reply packets.

use prost::Message;
use weft_hadoop_ipc::packet::Packet;
use weft_hadoop_ipc::proto::rpc_response_header_proto::{RpcErrorCodeProto, RpcStatusProto};
use weft_hadoop_ipc::proto::RpcResponseHeaderProto;
use weft_hadoop_ipc::wire::{self, packet_length, parse_preamble, split_delimited};
use weft_hadoop_ipc::{AuthProtocol, FrameError, PreambleError, RpcError};

const PROTOCOL: &str = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";

/// The fixture's bytes (hex digits, `#` comments).
fn capture() -> Vec<u8> {
    let text = include_str!("data/get_applications_capture.hex");
    let digits: String = text
        .lines()
        .map(|l| l.split('#').next().unwrap_or(""))
        .flat_map(|l| l.split_whitespace())
        .collect();
    (0..digits.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&digits[i..i + 2], 16).expect("hex fixture"))
        .collect()
}

/// Splits the capture into its preamble and packets, through the server's own functions.
fn packets(bytes: &[u8]) -> ([u8; 7], Vec<&[u8]>) {
    let preamble: [u8; 7] = bytes[..7].try_into().unwrap();
    let mut rest = &bytes[7..];
    let mut out = Vec::new();
    while !rest.is_empty() {
        let len = packet_length(rest[..4].try_into().unwrap(), 1 << 20).unwrap();
        out.push(&rest[4..4 + len]);
        rest = &rest[4 + len..];
    }
    (preamble, out)
}

#[test]
fn the_captured_handshake_decodes_to_context_and_call() {
    let bytes = capture();
    let (preamble, frames) = packets(&bytes);
    let p = parse_preamble(&preamble).unwrap();
    assert_eq!((p.auth, p.service_class), (AuthProtocol::None, 0));
    assert_eq!(frames.len(), 2);
    assert_eq!((frames[0].len(), frames[1].len()), (92, 104));

    let Packet::ConnectionContext { header, context } = Packet::decode(frames[0]).unwrap() else {
        panic!("packet 1 is the connection context");
    };
    assert_eq!(header.call_id, -3);
    assert_eq!(header.retry_count, Some(-1));
    assert_eq!(header.client_id, (0x10u8..0x20).collect::<Vec<_>>());
    let user = context.user_info.unwrap();
    assert_eq!(user.effective_user.as_deref(), Some("root"));
    assert_eq!(context.protocol.as_deref(), Some(PROTOCOL));

    let Packet::Call(call) = Packet::decode(frames[1]).unwrap() else {
        panic!("packet 2 is a call");
    };
    assert_eq!((call.id(), call.header.retry_count), (0, Some(0)));
    assert_eq!(call.method, "getApplications");
    assert_eq!(call.protocol, PROTOCOL);
    assert_eq!(call.client_version, 1);
    assert!(
        call.request.is_empty(),
        "an empty GetApplicationsRequestProto"
    );
}

#[test]
fn the_captured_headers_re_encode_to_the_same_bytes() {
    let bytes = capture();
    let (_, frames) = packets(&bytes);
    for frame in frames {
        let (header_bytes, _) = split_delimited(frame).unwrap();
        let header = weft_hadoop_ipc::proto::RpcRequestHeaderProto::decode(header_bytes).unwrap();
        assert_eq!(header.encode_to_vec(), header_bytes);
    }
}

#[test]
fn request_call_ids_are_zigzag_and_reply_call_ids_unsigned() {
    // sint32: -3 is 5, -33 is 65, 0 is 0.
    for (id, byte) in [(-3, 0x05u8), (-4, 0x07), (-33, 0x41), (0, 0x00), (7, 0x0e)] {
        let h = weft_hadoop_ipc::client::request_header(id, &[], 0);
        let bytes = h.encode_to_vec();
        let at = bytes.iter().position(|b| *b == 0x18).unwrap();
        assert_eq!(bytes[at + 1], byte, "call id {id}");
    }
    // uint32: -33 goes out as 4294967263, a 5-byte varint.
    let h = wire::response_header(-33, &[], None, RpcStatusProto::Success);
    assert_eq!(h.call_id, 4_294_967_263);
    let bytes = h.encode_to_vec();
    assert_eq!(&bytes[..6], &[0x08, 0xdf, 0xff, 0xff, 0xff, 0x0f]);
}

#[test]
fn the_success_reply_matches_what_the_client_accepted() {
    // Spec §2.8: {1: callId, 2: SUCCESS, 3: 9, 7: clientId} and an empty response (0x00);
    // the retry count is echoed as Hadoop's server does.
    let client: Vec<u8> = (0x10u8..0x20).collect();
    let packet = wire::success_packet(0, &client, Some(0), &[]);
    let mut expected = vec![0x08, 0x00, 0x10, 0x00, 0x18, 0x09, 0x3a, 0x10];
    expected.extend(&client);
    expected.extend([0x40, 0x00]);
    let mut whole = (expected.len() as u32 + 2).to_be_bytes().to_vec();
    whole.push(expected.len() as u8);
    whole.extend(&expected);
    whole.push(0x00);
    assert_eq!(packet, whole);
}

#[test]
fn an_error_reply_names_the_java_exception() {
    let error = RpcError::new(
        weft_hadoop_ipc::exception::APPLICATION_NOT_FOUND,
        "application_1_0001 does not exist",
    );
    let packet = wire::error_packet(3, b"id", Some(0), false, &error);
    let len = u32::from_be_bytes(packet[..4].try_into().unwrap()) as usize;
    assert_eq!(len, packet.len() - 4);
    let (header, rest) = split_delimited(&packet[4..]).unwrap();
    assert!(
        rest.is_empty(),
        "an ERROR reply carries no response message"
    );
    let h = RpcResponseHeaderProto::decode(header).unwrap();
    assert_eq!(h.call_id, 3);
    assert_eq!(h.status, RpcStatusProto::Error as i32);
    assert_eq!(
        h.exception_class_name.as_deref(),
        Some("org.apache.hadoop.yarn.exceptions.ApplicationNotFoundException")
    );
    assert_eq!(
        h.error_msg.as_deref(),
        Some("application_1_0001 does not exist")
    );
    assert_eq!(
        h.error_detail,
        Some(RpcErrorCodeProto::ErrorApplication as i32)
    );
    assert_eq!(h.client_id.as_deref(), Some(&b"id"[..]));
}

#[test]
fn preambles_and_lengths_are_checked() {
    assert_eq!(parse_preamble(b"GET / H"), Err(PreambleError::Http));
    assert_eq!(
        parse_preamble(b"hrpc\x08\x00\x00"),
        Err(PreambleError::Version(8))
    );
    assert_eq!(
        parse_preamble(b"hrpc\x09\x00\x01"),
        Err(PreambleError::AuthProtocol(1))
    );
    assert!(matches!(
        parse_preamble(b"xxxx\x09\x00\x00"),
        Err(PreambleError::NotHadoop(_))
    ));
    assert_eq!(
        parse_preamble(b"hrpc\x09\x00\xdf").unwrap().auth,
        AuthProtocol::Sasl
    );
    assert_eq!(
        packet_length((-1i32).to_be_bytes(), 100),
        Err(FrameError::NegativeLength(-1))
    );
    assert_eq!(
        packet_length(101u32.to_be_bytes(), 100),
        Err(FrameError::TooLarge { len: 101, max: 100 })
    );
    assert_eq!(
        packet_length(0u32.to_be_bytes(), 100),
        Err(FrameError::Empty)
    );
    assert_eq!(packet_length(100u32.to_be_bytes(), 100), Ok(100));
}

#[test]
fn malformed_packets_are_errors_not_panics() {
    let bytes = capture();
    let (_, frames) = packets(&bytes);
    let call = frames[1];
    // Truncated anywhere: an error naming the part.
    for cut in 0..call.len() {
        assert!(Packet::decode(&call[..cut]).is_err(), "cut at {cut}");
    }
    // A trailing byte after the request message.
    let mut longer = call.to_vec();
    longer.push(0);
    let e = Packet::decode(&longer).unwrap_err();
    assert!(e.to_string().contains("1 unexpected bytes"), "{e}");
    // A negative call id Hadoop does not define.
    let h = weft_hadoop_ipc::client::request_header(-7, &[], 0);
    let e = Packet::decode(&wire::packet(&[&h])[4..]).unwrap_err();
    assert!(e.to_string().contains("call id -7"), "{e}");
    // A ping is a header alone.
    let h = weft_hadoop_ipc::client::request_header(-4, &[], -1);
    assert_eq!(Packet::decode(&wire::packet(&[&h])[4..]), Ok(Packet::Ping));
}
