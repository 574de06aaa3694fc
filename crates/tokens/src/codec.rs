//! The identifiers' byte layout: a 4-byte tag, then fixed-width big-endian integers and
//! strings prefixed with their u16 length; and the hex text form.

pub(crate) struct Writer(Vec<u8>);

impl Writer {
    /// A writer for an identifier of about `len` bytes, with room for the token's whole text
    /// (`hex(identifier).hex(mac)`, made in this buffer: [`hex_in_place`]).
    pub(crate) fn new(tag: &[u8; 4], len: usize) -> Writer {
        let mut bytes = Vec::with_capacity(token_len(len));
        bytes.extend_from_slice(tag);
        Writer(bytes)
    }
    pub(crate) fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    pub(crate) fn i64(&mut self, v: i64) {
        self.0.extend_from_slice(&v.to_be_bytes());
    }
    /// Strings longer than u16::MAX bytes are cut (ids, node names and user names never are).
    pub(crate) fn str(&mut self, s: &str) {
        self.text(s.as_bytes());
    }
    /// Text given as its bytes (an id's `IdText`, made without a formatter or a `String`:
    /// the RM writes one per token, one or two tokens per allocation), as [`Writer::str`].
    pub(crate) fn text(&mut self, text: &[u8]) {
        let bytes = &text[..text.len().min(u16::MAX as usize)];
        self.0
            .extend_from_slice(&(bytes.len() as u16).to_be_bytes());
        self.0.extend_from_slice(bytes);
    }
    pub(crate) fn finish(self) -> Vec<u8> {
        self.0
    }
}

/// The length of a token's text whose identifier has `identifier` bytes.
pub(crate) fn token_len(identifier: usize) -> usize {
    identifier * 2 + 1 + 64
}

/// The length of a field [`Writer::str`] writes for `text`.
pub(crate) fn field_len(text: &[u8]) -> usize {
    2 + text.len().min(u16::MAX as usize)
}

pub(crate) struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    pub(crate) fn new(bytes: &'a [u8], tag: &[u8; 4]) -> Result<Reader<'a>, String> {
        match bytes.strip_prefix(tag.as_slice()) {
            Some(rest) => Ok(Reader { rest }),
            None => Err("not a token of this kind".to_string()),
        }
    }
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < n {
            return Err("the identifier is truncated".to_string());
        }
        let (head, tail) = self.rest.split_at(n);
        self.rest = tail;
        Ok(head)
    }
    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }
    pub(crate) fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_be_bytes(self.array()?))
    }
    pub(crate) fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_be_bytes(self.array()?))
    }
    pub(crate) fn i64(&mut self) -> Result<i64, String> {
        Ok(i64::from_be_bytes(self.array()?))
    }
    pub(crate) fn str(&mut self) -> Result<String, String> {
        let len = u16::from_be_bytes(self.array()?) as usize;
        let bytes = self.take(len)?;
        String::from_utf8(bytes.to_vec()).map_err(|_| "a field is not UTF-8".to_string())
    }
    pub(crate) fn end(&self) -> Result<(), String> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(format!(
                "{} unexpected bytes after the identifier",
                self.rest.len()
            ))
        }
    }
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    let mut s = Vec::with_capacity(bytes.len() * 2);
    push_hex(&mut s, bytes);
    ascii(s)
}

/// Each byte's two hex digits.
const HEX_PAIRS: [[u8; 2]; 256] = {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut pairs = [[0u8; 2]; 256];
    let mut b = 0;
    while b < 256 {
        pairs[b] = [DIGITS[b >> 4], DIGITS[b & 15]];
        b += 1;
    }
    pairs
};

/// Appends `bytes` in hex (tokens are minted per container: one buffer, no temporaries; the
/// buffer is sized once and each byte's digits come from a table, a tenth of the
/// instructions of pushing digit by digit).
pub(crate) fn push_hex(s: &mut Vec<u8>, bytes: &[u8]) {
    let start = s.len();
    s.resize(start + bytes.len() * 2, 0);
    for (pair, b) in s[start..].chunks_exact_mut(2).zip(bytes) {
        pair.copy_from_slice(&HEX_PAIRS[usize::from(*b)]);
    }
}

/// Replaces `buf`'s bytes by their hex digits, in place: a token's identifier becomes the
/// first half of its text in the identifier's own buffer, without a second allocation.
/// Worked from the back a block at a time (each block copied out first): the digits of the
/// bytes at `start..end` land at `2 * start..2 * end`, never before `start`, so they only
/// overwrite bytes already turned into digits.
pub(crate) fn hex_in_place(buf: &mut Vec<u8>) {
    const BLOCK: usize = 64;
    let len = buf.len();
    buf.resize(len * 2, 0);
    let mut end = len;
    while end > 0 {
        let start = end.saturating_sub(BLOCK);
        let mut block = [0u8; BLOCK];
        let block = &mut block[..end - start];
        block.copy_from_slice(&buf[start..end]);
        for (pair, b) in buf[2 * start..2 * end]
            .chunks_exact_mut(2)
            .zip(block.iter())
        {
            pair.copy_from_slice(&HEX_PAIRS[usize::from(*b)]);
        }
        end = start;
    }
}

/// Text made of ASCII bytes only (hex digits and dots).
pub(crate) fn ascii(bytes: Vec<u8>) -> String {
    String::from_utf8(bytes).unwrap_or_else(|_| unreachable!("hex digits and dots are ASCII"))
}

pub(crate) fn unhex(text: &str) -> Result<Vec<u8>, String> {
    if !text.len().is_multiple_of(2) {
        return Err("odd number of hex digits".to_string());
    }
    let digit = |c: u8| -> Result<u8, String> {
        match c {
            b'0'..=b'9' => Ok(c - b'0'),
            b'a'..=b'f' => Ok(c - b'a' + 10),
            b'A'..=b'F' => Ok(c - b'A' + 10),
            _ => Err(format!("'{}' is not a hex digit", c.escape_ascii())),
        }
    };
    text.as_bytes()
        .chunks(2)
        .map(|p| Ok((digit(p[0])? << 4) | digit(p[1])?))
        .collect()
}
