//! One port, several protocols, told apart by each connection's first byte. The AM port
//! (`yarn.resourcemanager.scheduler.address`, YARN's 8030) serves Weft's gRPC
//! ApplicationMasterProtocol (the distributed shell and Weft's own AMs), Hadoop's over Hadoop
//! IPC (AMRMClient, Spark's AM) and Weft's framed transport for Allocates (`framed`); the
//! resource tracker port (8031) serves the gRPC resource tracker and heartbeat stream and the
//! framed transport for heartbeats.
//!
//! Why one AM port rather than a listener of its own per protocol: Hadoop's AMs find the AM
//! service by that one property, and Weft's AMs by `WEFT_RM_SCHEDULER_ADDRESS`, which the RM
//! sets from the same address; so the `yarn-site.xml` `weft up` writes for Hadoop clients keeps
//! naming the port it always named, the RM reading that file back binds it once, and a cluster
//! serves Hadoop AMs on the port YARN users expect without a Weft-only property. Nor the
//! client listener (:8032): then `yarn.resourcemanager.scheduler.address` would repeat the
//! client address, which the RM's own settings read as where to bind the gRPC service. The
//! framed transport shares the ports for the same reason: nothing new to configure or open.
//!
//! The first byte tells them apart: Hadoop's preamble begins `hrpc`, the framed transport's
//! `WEFT`, an HTTP/2 connection (gRPC, prior knowledge, no TLS) the preface `PRI * HTTP/2.0`.
//! A connection still unsorted holds one of [`MAX_UNSORTED`] places, for at most
//! [`FIRST_BYTE_TIMEOUT`] (a framed one until its preamble and opening frame are in).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, Semaphore};
use weft_hadoop_ipc::Connections;

use crate::framed::FramedPort;

/// Connections whose first byte has not arrived yet, at once; more wait in the backlog. Each
/// holds a task and a small read buffer; a whole cluster's NMs connect in the same second
/// when the RM starts (12,000 in rm-bench's preset), and with 256 places the sorting lagged
/// the connections behind the NMs' 20 s connect bound while the first allocations kept the
/// RM's core busy.
const MAX_UNSORTED: usize = 4096;
/// Time a new connection has to send its first byte (a framed one: its preamble and opening
/// frame).
const FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which protocol a connection speaks.
#[derive(Debug, PartialEq, Eq)]
enum Protocol {
    HadoopIpc,
    Framed,
    Http2,
}

/// Which protocol a connection speaks, from its first byte.
fn protocol(first: u8) -> Protocol {
    match first {
        b'h' => Protocol::HadoopIpc,
        _ if first == weft_proto::frames::MAGIC[0] => Protocol::Framed,
        _ => Protocol::Http2,
    }
}

/// Where a port's connections go.
pub(crate) struct Routes {
    /// The port, for logs.
    pub(crate) name: &'static str,
    /// Hadoop IPC connections, on the AM port; elsewhere they go to the gRPC server, which
    /// closes them.
    pub(crate) hadoop: Option<Connections>,
    /// Weft's framed transport.
    pub(crate) framed: Arc<FramedPort>,
    /// The gRPC server's connections (closed channel: the server has stopped).
    pub(crate) grpc: mpsc::Sender<std::io::Result<TcpStream>>,
}

/// Accepts on `listener` until `stop`, handing each connection to its protocol's server.
pub(crate) async fn serve(listener: TcpListener, routes: Routes, mut stop: watch::Receiver<bool>) {
    let routes = Arc::new(routes);
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
                tracing::warn!("{} accept failed: {e}", routes.name);
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let routes = Arc::clone(&routes);
        tokio::spawn(async move {
            let framed = sort(stream, peer, &routes).await;
            drop(permit);
            if let Some(opened) = framed {
                routes.framed.serve(opened).await;
            }
        });
    }
}

/// Hands the connection to its server; a framed connection whose opening arrived in time is
/// returned, to be served once it no longer holds an unsorted place.
async fn sort(
    stream: TcpStream,
    peer: SocketAddr,
    routes: &Routes,
) -> Option<crate::framed::Opened> {
    // Every protocol here answers small requests the peer waits for: no Nagle delay.
    let _ = stream.set_nodelay(true);
    let mut first = [0u8; 1];
    let name = routes.name;
    match tokio::time::timeout(FIRST_BYTE_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(1)) => match (protocol(first[0]), &routes.hadoop) {
            (Protocol::HadoopIpc, Some(hadoop)) => hadoop.spawn(stream, peer),
            (Protocol::Framed, _) => {
                match tokio::time::timeout(FIRST_BYTE_TIMEOUT, routes.framed.open(stream)).await {
                    Ok(opened) => return opened,
                    Err(_) => tracing::info!(
                        %peer,
                        "{name} framed connection sent no opening within {FIRST_BYTE_TIMEOUT:?}"
                    ),
                }
            }
            _ => {
                // The gRPC server has stopped when the channel is closed: the connection drops.
                let _ = routes.grpc.send(Ok(stream)).await;
            }
        },
        Ok(Ok(_)) => {} // closed before saying anything
        Ok(Err(e)) => tracing::info!(%peer, "{name} connection failed: {e}"),
        Err(_) => {
            tracing::info!(%peer, "{name} connection sent nothing within {FIRST_BYTE_TIMEOUT:?}")
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_byte_tells_hadoop_framed_and_http2_apart() {
        assert_eq!(protocol(b"hrpc"[0]), Protocol::HadoopIpc);
        assert_eq!(protocol(b"PRI * HTTP/2.0"[0]), Protocol::Http2);
        assert_eq!(
            protocol(weft_proto::frames::preamble(weft_proto::frames::Kind::Heartbeats)[0]),
            Protocol::Framed
        );
    }
}
