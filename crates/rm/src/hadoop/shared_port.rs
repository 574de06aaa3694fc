//! The AM port (`yarn.resourcemanager.scheduler.address`, YARN's 8030) serves both AM
//! protocols: Weft's gRPC ApplicationMasterProtocol (the distributed shell and Weft's own AMs)
//! and Hadoop's over Hadoop IPC (AMRMClient, Spark's AM).
//!
//! Why one port rather than a listener of its own: Hadoop's AMs find the AM service by that
//! one property, and Weft's AMs by `WEFT_RM_SCHEDULER_ADDRESS`, which the RM sets from the same
//! address; so the `yarn-site.xml` `weft up` writes for Hadoop clients keeps naming the port it
//! always named, the RM reading that file back binds it once, and a cluster serves Hadoop AMs
//! on the port YARN users expect without a Weft-only property. Nor the client listener
//! (:8032): then `yarn.resourcemanager.scheduler.address` would repeat the client address,
//! which the RM's own settings read as where to bind the gRPC service.
//!
//! The first byte tells the two apart: Hadoop's preamble begins `hrpc`, an HTTP/2 connection
//! (gRPC, prior knowledge, no TLS) the preface `PRI * HTTP/2.0`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};
use weft_hadoop_ipc::Connections;

/// Connections whose first byte has not arrived yet, at once; more wait in the backlog.
const MAX_UNSORTED: usize = 256;
/// Time a new connection has to send its first byte.
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which protocol a connection speaks, from its first byte.
fn is_hadoop_ipc(first: u8) -> bool {
    first == b'h'
}

/// Accepts on `listener` until `stop`, handing Hadoop IPC connections to `hadoop` and the
/// others to the gRPC server through `grpc`.
pub(crate) async fn serve(
    listener: TcpListener,
    hadoop: Connections,
    grpc: mpsc::Sender<std::io::Result<TcpStream>>,
    mut stop: watch::Receiver<bool>,
) {
    let unsorted = Arc::new(Semaphore::new(MAX_UNSORTED));
    loop {
        let Ok(permit) = Arc::clone(&unsorted).acquire_owned().await else {
            return;
        };
        let accepted = tokio::select! {
            _ = stop.wait_for(|v| *v) => return,
            accepted = listener.accept() => accepted,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(e) => {
                tracing::warn!("AM port accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let hadoop = hadoop.clone();
        let grpc = grpc.clone();
        tokio::spawn(async move {
            sort(stream, peer, &hadoop, &grpc).await;
            drop(permit);
        });
    }
}

async fn sort(
    stream: TcpStream,
    peer: SocketAddr,
    hadoop: &Connections,
    grpc: &mpsc::Sender<std::io::Result<TcpStream>>,
) {
    let mut first = [0u8; 1];
    match tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(1)) if is_hadoop_ipc(first[0]) => hadoop.spawn(stream, peer),
        Ok(Ok(1)) => {
            let _ = stream.set_nodelay(true);
            // The gRPC server has stopped when the channel is closed: the connection drops.
            let _ = grpc.send(Ok(stream)).await;
        }
        Ok(Ok(_)) => {} // closed before saying anything
        Ok(Err(e)) => tracing::info!(%peer, "AM port connection failed: {e}"),
        Err(_) => {
            tracing::info!(%peer, "AM port connection sent nothing within {FIRST_BYTE_TIMEOUT:?}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_byte_tells_hadoop_from_http2() {
        assert!(is_hadoop_ipc(b"hrpc"[0]));
        assert!(!is_hadoop_ipc(b"PRI * HTTP/2.0"[0]));
    }
}
