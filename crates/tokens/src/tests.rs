use super::*;

fn container() -> ContainerTokenIdentifier {
    ContainerTokenIdentifier {
        container: "container_1700000000000_0003_01_000002".parse().unwrap(),
        node_id: "h1:8041".into(),
        user: "alice".into(),
        memory_mb: 1024,
        vcores: 1,
        expiry_ms: 5_000,
        key_id: 0,
    }
}

fn nm() -> NmTokenIdentifier {
    NmTokenIdentifier {
        attempt: "appattempt_1700000000000_0003_000001".parse().unwrap(),
        node_id: "h1:8041".into(),
        user: "alice".into(),
        key_id: 0,
    }
}

fn ring(keys: &[MasterKey]) -> KeyRing {
    let mut r = KeyRing::default();
    for k in keys {
        r.learn(k.clone());
    }
    r
}

#[test]
fn issued_tokens_verify_and_say_what_they_grant() {
    let key = MasterKey::derive(42, 0);
    let r = ring(std::slice::from_ref(&key));
    let got = r.verify_container(&container().issue(&key), 4_999).unwrap();
    assert_eq!(
        got,
        ContainerTokenIdentifier {
            key_id: key.id,
            ..container()
        }
    );
    let got = r.verify_nm(&nm().issue(&key)).unwrap();
    assert_eq!(
        got.attempt.to_string(),
        "appattempt_1700000000000_0003_000001"
    );
    assert_eq!(got.key_id, key.id);
}

#[test]
fn tampered_forged_and_expired_tokens_are_refused() {
    let key = MasterKey::derive(42, 0);
    let r = ring(std::slice::from_ref(&key));
    let token = container().issue(&key);
    // Changing the memory in the identifier breaks the signature.
    let bigger = ContainerTokenIdentifier {
        memory_mb: 1 << 20,
        key_id: key.id,
        ..container()
    };
    let (_, mac) = token.split_once('.').unwrap();
    let forged = format!("{}.{mac}", codec::hex(&bigger.encode()));
    assert_eq!(
        r.verify_container(&forged, 0),
        Err(TokenError::BadSignature("container token"))
    );
    // A key from another seed (another RM) with the same id is not the same key.
    let other = MasterKey {
        id: key.id,
        secret: MasterKey::derive(43, 0).secret,
    };
    assert_eq!(
        r.verify_container(&container().issue(&other), 0),
        Err(TokenError::BadSignature("container token"))
    );
    assert_eq!(
        r.verify_container(&token, 5_001),
        Err(TokenError::Expired {
            expiry_ms: 5_000,
            now_ms: 5_001
        })
    );
    assert_eq!(
        r.verify_container("", 0),
        Err(TokenError::Missing("container token"))
    );
    for junk in ["abc", "zz.00", "00.00", &"a".repeat(MAX_TOKEN_LEN + 1)] {
        assert!(
            matches!(
                r.verify_container(junk, 0),
                Err(TokenError::Malformed { .. })
            ),
            "{junk:.20}"
        );
    }
}

#[test]
fn an_nm_token_is_not_a_container_token() {
    let key = MasterKey::derive(7, 0);
    let r = ring(std::slice::from_ref(&key));
    let nm_token = nm().issue(&key);
    assert!(matches!(
        r.verify_container(&nm_token, 0),
        Err(TokenError::Malformed { .. })
    ));
    assert!(matches!(
        r.verify_nm(&container().issue(&key)),
        Err(TokenError::Malformed { .. })
    ));
}

#[test]
fn the_ring_keeps_the_previous_key_through_one_roll() {
    let k0 = MasterKey::derive(9, 0);
    let k1 = MasterKey::derive(9, 1);
    let k2 = MasterKey::derive(9, 2);
    assert_ne!(k0.id, k1.id);
    assert_ne!(k0.secret, k1.secret);
    let old = nm().issue(&k0);
    let mut r = ring(&[k0.clone(), k1.clone()]);
    assert_eq!(r.current_id(), Some(k1.id));
    assert!(r.verify_nm(&old).is_ok());
    // Learning a held key again changes nothing.
    r.learn(k0.clone());
    assert_eq!(r.current_id(), Some(k1.id));
    assert!(r.verify_nm(&old).is_ok());
    r.learn(k2);
    assert!(matches!(
        r.verify_nm(&old),
        Err(TokenError::UnknownKey { key_id, .. }) if key_id == k0.id
    ));
    assert!(r.verify_nm(&nm().issue(&k1)).is_ok());
}

#[test]
fn an_empty_ring_says_the_node_has_not_registered() {
    let e = KeyRing::default()
        .verify_nm(&nm().issue(&MasterKey::derive(1, 0)))
        .unwrap_err();
    assert!(e.to_string().contains("has not registered"), "{e}");
}

#[test]
fn debug_output_hides_the_secret() {
    let key = MasterKey::derive(1, 0);
    let shown = format!("{key:?}");
    assert!(shown.contains("redacted"));
    assert!(!shown.contains(&format!("{:?}", key.secret)), "{shown}");
}

#[test]
fn unverified_reads_give_the_fields_of_any_well_formed_token() {
    let key = MasterKey::derive(3, 5);
    let c = container().issue(&key);
    let read = read_container_token_unverified(&c).unwrap();
    assert_eq!(read.container, container().container);
    assert_eq!(read.key_id, key.id);
    let n = nm().issue(&key);
    assert_eq!(read_nm_token_unverified(&n).unwrap().attempt, nm().attempt);
    // Kinds stay apart, and garbage is refused, as in verification.
    assert!(read_nm_token_unverified(&c).is_err());
    assert!(read_container_token_unverified("zz.00").is_err());
}

#[test]
fn a_signer_issues_the_tokens_its_key_issues() {
    let key = MasterKey::derive(42, 3);
    let signer = Signer::new(&key);
    assert_eq!(signer.key_id(), key.id);
    let token = container().issue_with(&signer);
    assert_eq!(token, container().issue(&key));
    assert_eq!(nm().issue_with(&signer), nm().issue(&key));
    // The text form: hex(identifier).hex(mac), and it verifies.
    let (id, mac) = token.split_once('.').unwrap();
    assert_eq!(
        id,
        codec::hex(
            &ContainerTokenIdentifier {
                key_id: key.id,
                ..container()
            }
            .encode()
        )
    );
    assert_eq!(mac.len(), 64);
    let r = ring(std::slice::from_ref(&key));
    assert_eq!(r.verify_container(&token, 0).unwrap().key_id, key.id);
    // The key's own signature, computed from scratch (not through a signer).
    let identifier = nm().issue(&key);
    let (id, mac) = identifier.split_once('.').unwrap();
    let expected = hmac(&key.secret, &[&codec::unhex(id).unwrap()]);
    assert_eq!(mac, codec::hex(&expected));
}

#[test]
fn the_token_text_is_stable_and_the_borrowed_fields_issue_it() {
    // The exact tokens of stop 32's encoder: a faster encoder must not change a byte (NMs
    // of the previous build verify what this one issues).
    const CONTAINER: &str = "57435431f86f8ef40026636f6e7461696e65725f313730303030303030303030305f303030335f30315f303030303032000768313a383034310005616c696365000000000000040000000000000000010000000000001388.d7c150a7aac78ed1bdb8863b51806430c5e971a4769b2e52cf14ce4f2b0b6c19";
    const NM: &str = "574e5431f86f8ef40024617070617474656d70745f313730303030303030303030305f303030335f303030303031000768313a383034310005616c696365.da842d65bc5937ffede9e330daceb390ffbcba31c18660e7b6d1462729f6bbaf";
    let key = MasterKey::derive(42, 3);
    let signer = Signer::new(&key);
    assert_eq!(container().issue(&key), CONTAINER);
    assert_eq!(nm().issue(&key), NM);
    // The same fields borrowed from an identifier, as a caller holding them elsewhere passes them.
    let c = container();
    let fields = c.fields();
    assert_eq!(fields.issue_with(&signer), CONTAINER);
    let n = nm();
    let fields = NmTokenFields {
        attempt: n.attempt,
        node_id: &n.node_id,
        user: &n.user,
    };
    assert_eq!(fields.issue_with(&signer), NM);
    assert_eq!(codec::hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
}

#[test]
fn hex_in_place_gives_the_hex_of_every_length() {
    // Every byte value, against the digits written one at a time.
    let all: Vec<u8> = (0..=255).collect();
    let by_hand: String = all.iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(codec::hex(&all), by_hand);
    let mut buf = all.clone();
    codec::hex_in_place(&mut buf);
    assert_eq!(codec::ascii(buf), by_hand);
    // Blocks of 64 are worked from the back: lengths around and across the block edges.
    for len in [0, 1, 2, 63, 64, 65, 127, 128, 129, 300] {
        let bytes: Vec<u8> = (0..len).map(|i| (i * 37 + 11) as u8).collect();
        let by_hand: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(codec::hex(&bytes), by_hand, "length {len}");
        let mut buf = bytes.clone();
        codec::hex_in_place(&mut buf);
        assert_eq!(codec::ascii(buf), by_hand, "length {len}");
    }
    // A token's buffer is sized once: hex, the dot and the signature fit without growing.
    let c = container();
    let fields = c.fields();
    let identifier = fields.encode(7);
    assert_eq!(identifier.capacity(), codec::token_len(identifier.len()));
}
