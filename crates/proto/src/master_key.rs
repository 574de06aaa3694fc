//! Conversions between the wire [`MasterKey`](crate::v1::MasterKey) and
//! [`weft_tokens::MasterKey`].

use thiserror::Error;

use crate::v1;

/// A wire master key whose secret is not 32 bytes.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("master key {key_id} has a {len}-byte secret; 32 bytes expected")]
pub struct BadMasterKey {
    /// The key's id.
    pub key_id: u32,
    /// The secret's length as sent.
    pub len: usize,
}

impl v1::MasterKey {
    /// The wire form of `key`.
    pub fn from_key(key: &weft_tokens::MasterKey) -> v1::MasterKey {
        v1::MasterKey {
            key_id: key.id,
            secret: key.secret.to_vec(),
        }
    }

    /// The key this message carries.
    pub fn to_key(&self) -> Result<weft_tokens::MasterKey, BadMasterKey> {
        let secret: [u8; 32] = self
            .secret
            .as_slice()
            .try_into()
            .map_err(|_| BadMasterKey {
                key_id: self.key_id,
                len: self.secret.len(),
            })?;
        Ok(weft_tokens::MasterKey {
            id: self.key_id,
            secret,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_short_secrets_are_refused() {
        let key = weft_tokens::MasterKey::derive(3, 1);
        assert_eq!(v1::MasterKey::from_key(&key).to_key(), Ok(key));
        let short = v1::MasterKey {
            key_id: 9,
            secret: vec![1, 2, 3],
        };
        assert_eq!(short.to_key(), Err(BadMasterKey { key_id: 9, len: 3 }));
    }
}
