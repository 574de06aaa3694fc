//! Log contents as HTTP bodies read and sent in chunks of at most [`CHUNK`] bytes, so a
//! request for a file of any size holds one chunk in memory, not the file.

use std::io::{self, Seek, SeekFrom};
use std::pin::Pin;

use axum::body::Bytes;
use futures_util::stream::{self, Stream, StreamExt};
use tokio::io::AsyncReadExt;

use super::logs::OpenLog;

/// The most a log body holds in memory at once, per request.
pub(crate) const CHUNK: usize = 64 << 10;

/// A stream of body chunks.
pub(crate) type Chunks = Pin<Box<dyn Stream<Item = io::Result<Bytes>> + Send>>;

/// The next chunk (at most [`CHUNK`] bytes) of the `left` bytes still to send; `None` at
/// the end of the part, or early if the file shrank meanwhile.
async fn next_chunk(file: &mut tokio::fs::File, left: &mut u64) -> io::Result<Option<Bytes>> {
    if *left == 0 {
        return Ok(None);
    }
    let want = usize::try_from(*left).map_or(CHUNK, |l| l.min(CHUNK));
    let mut buf = vec![0u8; want];
    let n = file.read(&mut buf).await?;
    if n == 0 {
        *left = 0;
        return Ok(None);
    }
    buf.truncate(n);
    *left -= n as u64;
    Ok(Some(Bytes::from(buf)))
}

/// The part of an open log the request selected, as chunks.
pub(crate) fn chunks(log: OpenLog) -> io::Result<Chunks> {
    let OpenLog {
        mut file,
        offset,
        count,
        ..
    } = log;
    file.seek(SeekFrom::Start(offset))?;
    let state = (tokio::fs::File::from_std(file), count);
    Ok(Box::pin(stream::unfold(
        state,
        |(mut file, mut left)| async move {
            match next_chunk(&mut file, &mut left).await {
                Ok(Some(chunk)) => Some((Ok(chunk), (file, left))),
                Ok(None) => None,
                // Report the error once, then end.
                Err(e) => Some((Err(e), (file, 0))),
            }
        },
    )))
}

/// Fixed text, as a one-chunk stream.
pub(crate) fn text(s: String) -> Chunks {
    Box::pin(stream::once(async move { Ok(Bytes::from(s)) }))
}

/// Several streams one after the other.
pub(crate) fn concat(parts: Vec<Chunks>) -> Chunks {
    Box::pin(stream::iter(parts).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::web::logs::LogRoot;

    #[tokio::test]
    async fn a_large_log_streams_completely_in_bounded_chunks() {
        let tmp = tempfile::tempdir().unwrap();
        let cid = "container_1700000000000_0007_01_000002";
        let dir = tmp.path().join("application_1700000000000_0007").join(cid);
        std::fs::create_dir_all(&dir).unwrap();
        let content: Vec<u8> = (0..(3 * CHUNK + 123)).map(|i| (i % 251) as u8).collect();
        std::fs::write(dir.join("stdout"), &content).unwrap();
        let logs = LogRoot::new(tmp.path().to_path_buf());
        for (size, expected) in [
            (None, &content[..]),
            (
                Some(-(CHUNK as i64 + 5)),
                &content[content.len() - CHUNK - 5..],
            ),
            (Some(7), &content[..7]),
        ] {
            let mut s = chunks(logs.open(cid, "stdout", size).unwrap()).unwrap();
            let mut got = Vec::new();
            let mut pieces = 0;
            while let Some(chunk) = s.next().await {
                let chunk = chunk.unwrap();
                assert!(chunk.len() <= CHUNK, "a chunk of {} bytes", chunk.len());
                got.extend_from_slice(&chunk);
                pieces += 1;
            }
            assert_eq!(got, expected, "size {size:?}");
            assert_eq!(pieces, expected.len().div_ceil(CHUNK), "size {size:?}");
        }
    }
}
