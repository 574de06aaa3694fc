//! Stopping containers through their NMs (and the channels AM launches share): the stops the core asks for in one batch go out as
//! one `StopContainers` call per node and NM token (an attempt's containers on one node), over
//! a channel kept per node. The core asks only for AM containers (YARN's AMLauncher cleanup);
//! every other stop, and these too, travel in the node's next heartbeat reply, so a failed
//! call loses nothing.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tonic::transport::{Channel, Endpoint};
use weft_proto::auth::with_nm_token;
use weft_proto::v1::container_management_client::ContainerManagementClient;
use weft_proto::v1::StopContainersRequest;
use weft_types::yarn_id::ContainerId;

/// Bound on one stop call.
const STOP_TIMEOUT: Duration = Duration::from_secs(10);
/// Containers in one call at most (keeps each request small).
pub(crate) const STOP_BATCH: usize = 1_000;
/// Channels kept at most; past this the oldest is dropped (closing its connection). Each
/// kept channel holds a connection, a file at both ends: unbounded (one per node), at 12,000
/// nodes they and the NMs' own heartbeat connections passed a 20,000-file limit after four
/// minutes of rm-bench's preset, and AM launches failed ("tcp open error"). 4,096 keeps an
/// AM's node for its launch and its stop at the preset's ~100 launches a second.
const CHANNELS_KEPT: usize = 4_096;

/// Containers to stop on one node under one NM token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct StopBatch {
    pub(crate) address: String,
    pub(crate) nm_token: String,
    pub(crate) containers: Vec<ContainerId>,
}

/// Groups stops by node address and NM token, in the order first seen, each group cut into
/// batches of at most [`STOP_BATCH`] containers.
pub(crate) fn batches(
    stops: impl IntoIterator<Item = (String, String, ContainerId)>,
) -> Vec<StopBatch> {
    let mut groups: BTreeMap<(String, String), Vec<ContainerId>> = BTreeMap::new();
    for (address, nm_token, container) in stops {
        groups
            .entry((address, nm_token))
            .or_default()
            .push(container);
    }
    let mut out = Vec::new();
    for ((address, nm_token), containers) in groups {
        for chunk in containers.chunks(STOP_BATCH) {
            out.push(StopBatch {
                address: address.clone(),
                nm_token: nm_token.clone(),
                containers: chunk.to_vec(),
            });
        }
    }
    out
}

/// One lazily connected channel per NM address, shared by every stop call; at most
/// [`CHANNELS_KEPT`], the oldest dropped first.
#[derive(Clone, Default)]
pub(crate) struct NmChannels(Arc<Mutex<Kept>>);

/// The kept channels and the order they were made in.
#[derive(Default)]
struct Kept {
    by_address: HashMap<String, Channel>,
    oldest_first: VecDeque<String>,
}

impl Kept {
    fn get(&self, address: &str) -> Option<&Channel> {
        self.by_address.get(address)
    }

    fn keep(&mut self, address: &str, channel: Channel, bound: usize) {
        while self.by_address.len() >= bound.max(1) {
            let Some(oldest) = self.oldest_first.pop_front() else {
                break;
            };
            self.by_address.remove(&oldest);
        }
        self.by_address.insert(address.to_string(), channel);
        self.oldest_first.push_back(address.to_string());
    }
}

impl NmChannels {
    /// The channel to the NM at `address` (AM launches use it too: a connection per launch
    /// overflowed the NMs' accept backlogs at ~100 launches a second).
    pub(crate) fn channel(&self, address: &str) -> Result<Channel, String> {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(c) = map.get(address) {
            return Ok(c.clone());
        }
        let channel = Endpoint::from_shared(format!("http://{address}"))
            .map_err(|e| format!("bad NM address {address}: {e}"))?
            .connect_timeout(STOP_TIMEOUT)
            .timeout(STOP_TIMEOUT)
            .tcp_nodelay(true)
            .connect_lazy();
        map.keep(address, channel.clone(), CHANNELS_KEPT);
        Ok(channel)
    }

    /// Sends one batch (spawned: the driver does not wait for NMs).
    pub(crate) async fn stop(self, batch: StopBatch) {
        let result = async {
            let mut nm = ContainerManagementClient::new(self.channel(&batch.address)?);
            let request = with_nm_token(
                StopContainersRequest {
                    container_id: batch
                        .containers
                        .iter()
                        .map(ContainerId::to_string)
                        .collect(),
                },
                &batch.nm_token,
            )
            .map_err(|e| e.to_string())?;
            nm.stop_containers(request)
                .await
                .map_err(|s| s.message().to_string())
        }
        .await;
        if let Err(e) = result {
            tracing::debug!(address = %batch.address, containers = batch.containers.len(), error = %e,
                "stop through the NM failed; the heartbeat will carry it");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u64) -> ContainerId {
        format!("container_1_0001_01_{n:06}").parse().unwrap()
    }

    #[tokio::test]
    async fn channels_kept_are_bounded_and_the_oldest_goes_first() {
        let lazy = |port: u16| {
            Endpoint::from_shared(format!("http://127.0.0.1:{port}"))
                .unwrap()
                .connect_lazy()
        };
        let mut kept = Kept::default();
        for port in 1..=5 {
            kept.keep(&format!("n{port}:1"), lazy(port), 3);
        }
        assert_eq!(kept.by_address.len(), 3);
        assert_eq!(kept.oldest_first.len(), 3);
        assert!(kept.get("n1:1").is_none() && kept.get("n2:1").is_none());
        assert!(["n3:1", "n4:1", "n5:1"]
            .iter()
            .all(|a| kept.get(a).is_some()));
    }

    #[test]
    fn stops_group_per_node_and_token_in_bounded_batches() {
        let mut stops = Vec::new();
        for n in 1..=(STOP_BATCH as u64 + 5) {
            stops.push(("a:1".to_string(), "t1".to_string(), id(n)));
        }
        stops.push(("b:1".to_string(), "t1".to_string(), id(9_000)));
        stops.push(("a:1".to_string(), "t2".to_string(), id(9_001)));
        let b = batches(stops);
        assert_eq!(b.len(), 4, "{b:?}");
        assert_eq!(
            (b[0].address.as_str(), b[0].nm_token.as_str()),
            ("a:1", "t1")
        );
        assert_eq!(b[0].containers.len(), STOP_BATCH);
        assert_eq!(b[1].containers.len(), 5);
        assert_eq!(b[1].containers[0], id(STOP_BATCH as u64 + 1));
        assert_eq!(
            (
                b[2].address.as_str(),
                b[2].nm_token.as_str(),
                b[2].containers.clone()
            ),
            ("a:1", "t2", vec![id(9_001)])
        );
        assert_eq!(b[3].containers, vec![id(9_000)]);
        assert!(batches(Vec::new()).is_empty());
    }
}
