//! Container and NM tokens, as YARN issues them even in non-secure mode.
//!
//! * A **container token** ([`ContainerTokenIdentifier`], YARN's namesake) says which container
//!   may start on which node, for which user, with which memory and vcores, until when. The
//!   RM issues one per allocation; the NM refuses to start a container without a valid one.
//! * An **NM token** ([`NmTokenIdentifier`], YARN's `NMTokenIdentifier`) binds a caller of an
//!   NM's ContainerManagement service to one application attempt on one node: start, stop and
//!   status calls may touch only that application's containers.
//!
//! Both are an identifier signed with HMAC-SHA256 under a [`MasterKey`] that the RM rolls over
//! and hands to NMs at registration and in heartbeats. An NM keeps the latest two keys
//! ([`KeyRing`]) so tokens issued just before a roll stay valid, as YARN's
//! `NMContainerTokenSecretManager` keeps its previous key.
//!
//! The text form is `hex(identifier).hex(mac)`: printable ASCII, so it travels in protobuf
//! strings and gRPC metadata alike. Pure functions only: the caller passes the time.

mod codec;

use std::fmt;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use thiserror::Error;
use weft_types::yarn_id::{AttemptId, ContainerId};

use codec::{Reader, Writer};

type HmacSha256 = Hmac<Sha256>;

/// Tokens longer than this are refused before decoding (real ones are a few hundred bytes).
pub const MAX_TOKEN_LEN: usize = 4096;

/// Domain tags: a container token can never pass as an NM token or the other way round.
const CONTAINER_TAG: &[u8; 4] = b"WCT1";
const NM_TAG: &[u8; 4] = b"WNT1";

/// Why a token was refused. Messages name what is wrong, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TokenError {
    /// No token was presented.
    #[error("no {0} was presented")]
    Missing(&'static str),
    /// The text is not a token of the expected kind.
    #[error("malformed {kind}: {why}")]
    Malformed {
        /// Which kind of token was expected.
        kind: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// Signed under a key this node does not hold (too old, or from another RM).
    #[error("{kind} was signed with master key {key_id}, which this node does not know (current keys: {known})")]
    UnknownKey {
        /// Which kind of token.
        kind: &'static str,
        /// The key id the token names.
        key_id: u32,
        /// The key ids the node holds.
        known: String,
    },
    /// The signature does not match the identifier.
    #[error("{0} has an invalid signature")]
    BadSignature(&'static str),
    /// The container token's expiry has passed.
    #[error("container token expired at {expiry_ms} (now {now_ms}, epoch ms)")]
    Expired {
        /// When it expired.
        expiry_ms: u64,
        /// The time it was checked.
        now_ms: u64,
    },
}

/// A master key: an id that travels in tokens and a 256-bit secret that never does.
#[derive(Clone, PartialEq, Eq)]
pub struct MasterKey {
    /// The key's id, named by every token it signs.
    pub id: u32,
    /// The HMAC key.
    pub secret: [u8; 32],
}

impl fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MasterKey")
            .field("id", &self.id)
            .field("secret", &"<redacted>")
            .finish()
    }
}

fn hmac(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = match HmacSha256::new_from_slice(key) {
        Ok(m) => m,
        Err(_) => unreachable!("HMAC takes keys of any length"),
    };
    for p in parts {
        mac.update(p);
    }
    mac.finalize().into_bytes().into()
}

impl MasterKey {
    /// The `serial`-th key of an RM whose secret seed is `seed`. Keys are derived (HMAC of the
    /// seed) rather than drawn, so the sans-IO RM core needs no RNG; knowing one key tells
    /// nothing of the next. Ids start at a seed-dependent base, so keys of two RM runs do
    /// not share ids.
    pub fn derive(seed: u128, serial: u32) -> MasterKey {
        let seed = seed.to_be_bytes();
        let base = hmac(&seed, &[b"weft master key id"]);
        let base = u32::from_be_bytes([base[0], base[1], base[2], base[3]]);
        MasterKey {
            id: base.wrapping_add(serial),
            secret: hmac(&seed, &[b"weft master key", &serial.to_be_bytes()]),
        }
    }

    fn sign(&self, identifier: Vec<u8>) -> String {
        Signer::new(self).sign(identifier)
    }

    fn verifies(&self, identifier: &[u8], mac: &[u8]) -> bool {
        match HmacSha256::new_from_slice(&self.secret) {
            Ok(mut m) => {
                m.update(identifier);
                // Constant-time comparison.
                m.verify_slice(mac).is_ok()
            }
            Err(_) => false,
        }
    }
}

/// A master key ready to sign many tokens: the HMAC state after the key's pad blocks is kept,
/// so each token hashes only its identifier (the RM signs a container token, and often an NM
/// token, per allocation; the key's two pad blocks were a third of each signature's hashing).
#[derive(Clone)]
pub struct Signer {
    key_id: u32,
    keyed: HmacSha256,
}

impl Signer {
    /// A signer for `key`.
    pub fn new(key: &MasterKey) -> Signer {
        let keyed = match HmacSha256::new_from_slice(&key.secret) {
            Ok(m) => m,
            Err(_) => unreachable!("HMAC takes keys of any length"),
        };
        Signer {
            key_id: key.id,
            keyed,
        }
    }

    /// The id of the key it signs with.
    pub fn key_id(&self) -> u32 {
        self.key_id
    }

    /// `hex(identifier).hex(mac)`, made in the identifier's buffer (one allocation per
    /// token; the writers size it for the whole text).
    fn sign(&self, identifier: Vec<u8>) -> String {
        let mut mac = self.keyed.clone();
        mac.update(&identifier);
        let mac: [u8; 32] = mac.finalize().into_bytes().into();
        let mut token = identifier;
        token.reserve_exact(codec::token_len(token.len()).saturating_sub(token.len()));
        codec::hex_in_place(&mut token);
        token.push(b'.');
        codec::push_hex(&mut token, &mac);
        codec::ascii(token)
    }
}

impl fmt::Debug for Signer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Signer")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

/// A secret only the holder of `seed` can compute, for `purpose` and `serial` (64 hex digits):
/// how the RM makes per-registration node secrets without an RNG.
pub fn derive_secret(seed: u128, purpose: &str, serial: u64) -> String {
    codec::hex(&hmac(
        &seed.to_be_bytes(),
        &[purpose.as_bytes(), b"\0", &serial.to_be_bytes()],
    ))
}

/// 32 bytes only the holder of `seed` can compute, for `purpose`: keys the RM needs beside its
/// tokens (the node-id index's hash key) without an RNG.
pub fn derive_key(seed: u128, purpose: &str) -> [u8; 32] {
    hmac(&seed.to_be_bytes(), &[purpose.as_bytes()])
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// What a container token grants (YARN's `ContainerTokenIdentifier`, the fields Weft uses).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ContainerTokenIdentifier {
    /// The container.
    pub container: ContainerId,
    /// The node it was allocated on (`host:port`).
    pub node_id: String,
    /// The application's submitter: the container runs as this user.
    pub user: String,
    /// Memory in MB.
    pub memory_mb: i64,
    /// Virtual cores.
    pub vcores: i64,
    /// The container may not start after this (epoch ms).
    pub expiry_ms: u64,
    /// The master key that signed it.
    pub key_id: u32,
}

/// A container token's fields, borrowed: how the RM mints one per allocation without copying
/// the node's and the user's names into an owned [`ContainerTokenIdentifier`] first. The
/// token is the one the identifier with these fields issues.
#[derive(Clone, Copy, Debug)]
pub struct ContainerTokenFields<'a> {
    /// The container.
    pub container: ContainerId,
    /// The node it was allocated on (`host:port`).
    pub node_id: &'a str,
    /// The application's submitter.
    pub user: &'a str,
    /// Memory in MB.
    pub memory_mb: i64,
    /// Virtual cores.
    pub vcores: i64,
    /// The container may not start after this (epoch ms).
    pub expiry_ms: u64,
}

impl ContainerTokenFields<'_> {
    fn encode(&self, key_id: u32) -> Vec<u8> {
        let container = self.container.text();
        let len = 4
            + 4
            + codec::field_len(container.as_bytes())
            + codec::field_len(self.node_id.as_bytes())
            + codec::field_len(self.user.as_bytes())
            + 3 * 8;
        let mut w = Writer::new(CONTAINER_TAG, len);
        w.u32(key_id);
        w.text(container.as_bytes());
        w.str(self.node_id);
        w.str(self.user);
        w.i64(self.memory_mb);
        w.i64(self.vcores);
        w.u64(self.expiry_ms);
        w.finish()
    }

    /// The token, signed with the signer's key.
    pub fn issue_with(&self, signer: &Signer) -> String {
        signer.sign(self.encode(signer.key_id))
    }
}

impl ContainerTokenIdentifier {
    fn fields(&self) -> ContainerTokenFields<'_> {
        ContainerTokenFields {
            container: self.container,
            node_id: &self.node_id,
            user: &self.user,
            memory_mb: self.memory_mb,
            vcores: self.vcores,
            expiry_ms: self.expiry_ms,
        }
    }

    fn encode(&self) -> Vec<u8> {
        self.fields().encode(self.key_id)
    }

    fn decode(bytes: &[u8]) -> Result<ContainerTokenIdentifier, String> {
        let mut r = Reader::new(bytes, CONTAINER_TAG)?;
        let key_id = r.u32()?;
        let container = r.str()?.parse::<ContainerId>().map_err(|e| e.to_string())?;
        let id = ContainerTokenIdentifier {
            key_id,
            container,
            node_id: r.str()?,
            user: r.str()?,
            memory_mb: r.i64()?,
            vcores: r.i64()?,
            expiry_ms: r.u64()?,
        };
        r.end()?;
        Ok(id)
    }

    /// Signs this identifier with `key` (its `key_id` becomes the key's id).
    pub fn issue(mut self, key: &MasterKey) -> String {
        self.key_id = key.id;
        key.sign(self.encode())
    }

    /// [`Self::issue`] with a key's [`Signer`] (for many tokens under one key).
    pub fn issue_with(mut self, signer: &Signer) -> String {
        self.key_id = signer.key_id;
        signer.sign(self.encode())
    }
}

/// What an NM token grants (YARN's `NMTokenIdentifier`): one attempt's access to one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NmTokenIdentifier {
    /// The application attempt.
    pub attempt: AttemptId,
    /// The node (`host:port`).
    pub node_id: String,
    /// The application's submitter.
    pub user: String,
    /// The master key that signed it.
    pub key_id: u32,
}

/// An NM token's fields, borrowed (as [`ContainerTokenFields`] for container tokens).
#[derive(Clone, Copy, Debug)]
pub struct NmTokenFields<'a> {
    /// The application attempt.
    pub attempt: AttemptId,
    /// The node (`host:port`).
    pub node_id: &'a str,
    /// The application's submitter.
    pub user: &'a str,
}

impl NmTokenFields<'_> {
    fn encode(&self, key_id: u32) -> Vec<u8> {
        let attempt = self.attempt.text();
        let len = 4
            + 4
            + codec::field_len(attempt.as_bytes())
            + codec::field_len(self.node_id.as_bytes())
            + codec::field_len(self.user.as_bytes());
        let mut w = Writer::new(NM_TAG, len);
        w.u32(key_id);
        w.text(attempt.as_bytes());
        w.str(self.node_id);
        w.str(self.user);
        w.finish()
    }

    /// The token, signed with the signer's key.
    pub fn issue_with(&self, signer: &Signer) -> String {
        signer.sign(self.encode(signer.key_id))
    }
}

impl NmTokenIdentifier {
    fn encode(&self) -> Vec<u8> {
        NmTokenFields {
            attempt: self.attempt,
            node_id: &self.node_id,
            user: &self.user,
        }
        .encode(self.key_id)
    }

    fn decode(bytes: &[u8]) -> Result<NmTokenIdentifier, String> {
        let mut r = Reader::new(bytes, NM_TAG)?;
        let key_id = r.u32()?;
        let attempt = r.str()?.parse::<AttemptId>().map_err(|e| e.to_string())?;
        let id = NmTokenIdentifier {
            key_id,
            attempt,
            node_id: r.str()?,
            user: r.str()?,
        };
        r.end()?;
        Ok(id)
    }

    /// Signs this identifier with `key` (its `key_id` becomes the key's id).
    pub fn issue(mut self, key: &MasterKey) -> String {
        self.key_id = key.id;
        key.sign(self.encode())
    }

    /// [`Self::issue`] with a key's [`Signer`] (for many tokens under one key).
    pub fn issue_with(mut self, signer: &Signer) -> String {
        self.key_id = signer.key_id;
        signer.sign(self.encode())
    }
}

/// The keys a node accepts: the one it learned last and the one before (YARN's current and
/// previous master keys).
#[derive(Clone, Debug, Default)]
pub struct KeyRing {
    current: Option<MasterKey>,
    previous: Option<MasterKey>,
}

/// Splits `id.mac` and decodes the identifier half, checking nothing else.
fn identifier_of<T>(
    kind: &'static str,
    token: &str,
    decode: impl Fn(&[u8]) -> Result<T, String>,
) -> Result<(T, Vec<u8>, Vec<u8>), TokenError> {
    let malformed = |why: String| TokenError::Malformed { kind, why };
    if token.is_empty() {
        return Err(TokenError::Missing(kind));
    }
    if token.len() > MAX_TOKEN_LEN {
        return Err(malformed(format!(
            "{} bytes, more than the {MAX_TOKEN_LEN} allowed",
            token.len()
        )));
    }
    let (id_hex, mac_hex) = token
        .split_once('.')
        .ok_or_else(|| malformed("no '.' between identifier and signature".into()))?;
    let identifier = codec::unhex(id_hex).map_err(malformed)?;
    let mac = codec::unhex(mac_hex).map_err(malformed)?;
    let value = decode(&identifier).map_err(malformed)?;
    Ok((value, identifier, mac))
}

/// Reads what a container token says **without checking its signature or expiry**: for the
/// RM relaying a token it just issued into another form (Hadoop's `ContainerTokenIdentifier`
/// carries the same fields), never for trusting one ([`KeyRing::verify_container`] does that).
pub fn read_container_token_unverified(
    token: &str,
) -> Result<ContainerTokenIdentifier, TokenError> {
    identifier_of("container token", token, ContainerTokenIdentifier::decode).map(|(id, ..)| id)
}

/// Reads what an NM token says **without checking its signature**, as
/// [`read_container_token_unverified`] does for container tokens.
pub fn read_nm_token_unverified(token: &str) -> Result<NmTokenIdentifier, TokenError> {
    identifier_of("NM token", token, NmTokenIdentifier::decode).map(|(id, ..)| id)
}

/// Splits `id.mac`, decodes both halves and finds the key the identifier names.
fn open<'a, T>(
    ring: &'a KeyRing,
    kind: &'static str,
    token: &str,
    decode: impl Fn(&[u8]) -> Result<T, String>,
    key_id: impl Fn(&T) -> u32,
) -> Result<T, TokenError> {
    let (value, identifier, mac) = identifier_of(kind, token, decode)?;
    let wanted = key_id(&value);
    let key: &'a MasterKey = ring.get(wanted).ok_or_else(|| TokenError::UnknownKey {
        kind,
        key_id: wanted,
        known: ring.ids(),
    })?;
    if !key.verifies(&identifier, &mac) {
        return Err(TokenError::BadSignature(kind));
    }
    Ok(value)
}

impl KeyRing {
    /// Learns a key from the RM. A new id becomes current and the old current becomes
    /// previous; a key already held changes nothing.
    pub fn learn(&mut self, key: MasterKey) {
        if self.current.as_ref() == Some(&key) {
            return;
        }
        if self.previous.as_ref() == Some(&key) {
            return;
        }
        self.previous = self.current.replace(key);
    }

    /// The id of the latest key learned, to tell the RM in heartbeats.
    pub fn current_id(&self) -> Option<u32> {
        self.current.as_ref().map(|k| k.id)
    }

    /// Whether the ring holds any key (an NM that never registered holds none).
    pub fn is_empty(&self) -> bool {
        self.current.is_none()
    }

    fn get(&self, id: u32) -> Option<&MasterKey> {
        [&self.current, &self.previous]
            .into_iter()
            .flatten()
            .find(|k| k.id == id)
    }

    fn ids(&self) -> String {
        let ids: Vec<String> = [&self.current, &self.previous]
            .into_iter()
            .flatten()
            .map(|k| k.id.to_string())
            .collect();
        if ids.is_empty() {
            "none, the node has not registered with the RM".to_string()
        } else {
            ids.join(", ")
        }
    }

    /// Checks a container token's signature and expiry; returns what it grants.
    pub fn verify_container(
        &self,
        token: &str,
        now_ms: u64,
    ) -> Result<ContainerTokenIdentifier, TokenError> {
        let id = open(
            self,
            "container token",
            token,
            ContainerTokenIdentifier::decode,
            |t| t.key_id,
        )?;
        if now_ms > id.expiry_ms {
            return Err(TokenError::Expired {
                expiry_ms: id.expiry_ms,
                now_ms,
            });
        }
        Ok(id)
    }

    /// Checks an NM token's signature; returns what it grants.
    pub fn verify_nm(&self, token: &str) -> Result<NmTokenIdentifier, TokenError> {
        open(self, "NM token", token, NmTokenIdentifier::decode, |t| {
            t.key_id
        })
    }
}

#[cfg(test)]
mod tests;
