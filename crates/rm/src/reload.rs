//! Reloading the allocation file: polled when it changes (as Hadoop's
//! `AllocationFileLoaderService` does) and on demand (`PUT /ws/v1/cluster/admin/refresh-queues`,
//! `weft rmadmin -refreshQueues`). A bad file is refused with its file and line; the old queues
//! stay.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use tokio::sync::{mpsc, oneshot, watch};
use weft_config::{AllocationConfig, SchedulerProperties};
use weft_sched::SchedulerConfig;

use crate::driver::Driver;

/// Reads and validates an allocation file.
pub(crate) fn load(path: &Path, props: &SchedulerProperties) -> Result<AllocationConfig, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let (config, warnings) =
        weft_config::alloc_file::parse_allocations(&text, &props.resource_types)
            .map_err(|d| format!("{}: {d}", path.display()))?;
    for w in warnings {
        tracing::warn!(file = %path.display(), "{w}");
    }
    Ok(config)
}

fn stamp(path: &Path) -> Option<(SystemTime, u64)> {
    let m = std::fs::metadata(path).ok()?;
    Some((m.modified().ok()?, m.len()))
}

/// Why an on-demand refresh did not apply; the old queues stay in every case.
#[derive(Debug, thiserror::Error)]
pub(crate) enum RefreshError {
    /// The file is unreadable or invalid (the message names the file and line).
    #[error("{0}")]
    Invalid(String),
    /// The RM is stopping or could not record the change.
    #[error("{0}")]
    Unavailable(String),
}

/// What an on-demand refresh applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refreshed {
    /// The allocation file was re-read and swapped in.
    File(PathBuf),
    /// The RM runs without an allocation file: nothing to re-read.
    NoFile,
}

/// A refresh request to a watcher, answered once the reload is applied or refused.
type Request = oneshot::Sender<Result<PathBuf, RefreshError>>;

/// The running watchers, by the cluster timestamp of their RM, newest last. The REST state is
/// built where the allocation path is not at hand, so a watcher announces itself here and the
/// REST handler finds it by the cluster timestamp both know (`u64` token: which registration).
static WATCHERS: Mutex<Vec<(u64, u64, mpsc::Sender<Request>)>> = Mutex::new(Vec::new());
static NEXT_TOKEN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn register(cluster_ts: u64, tx: mpsc::Sender<Request>) -> u64 {
    let token = NEXT_TOKEN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Ok(mut w) = WATCHERS.lock() {
        w.push((cluster_ts, token, tx));
    }
    token
}

fn unregister(token: u64) {
    if let Ok(mut w) = WATCHERS.lock() {
        w.retain(|(_, t, _)| *t != token);
    }
}

fn watcher_of(cluster_ts: u64) -> Option<mpsc::Sender<Request>> {
    let w = WATCHERS.lock().ok()?;
    w.iter()
        .rev()
        .find(|(ts, _, _)| *ts == cluster_ts)
        .map(|(_, _, tx)| tx.clone())
}

/// Re-reads the allocation file of the RM with this cluster timestamp now.
pub(crate) async fn refresh(cluster_ts: u64) -> Result<Refreshed, RefreshError> {
    let Some(tx) = watcher_of(cluster_ts) else {
        return Ok(Refreshed::NoFile);
    };
    let (reply, answer) = oneshot::channel();
    tx.send(reply)
        .await
        .map_err(|_| RefreshError::Unavailable("the ResourceManager is shutting down".into()))?;
    answer
        .await
        .map_err(|_| RefreshError::Unavailable("the ResourceManager is shutting down".into()))?
        .map(Refreshed::File)
}

/// Parses `path` and, if valid, swaps it into the core.
async fn apply(
    path: &Path,
    props: &SchedulerProperties,
    driver: &Driver,
) -> Result<(), RefreshError> {
    let allocations = load(path, props).map_err(RefreshError::Invalid)?;
    let config = SchedulerConfig {
        allocations,
        properties: props.clone(),
    };
    match driver.call(move |core, now| core.reload(now, config)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(RefreshError::Invalid(format!("{}: {e}", path.display()))),
        Err(e) => Err(RefreshError::Unavailable(e.to_string())),
    }
}

/// Polls `path` every `every` until `stop`; each change is parsed and, if valid, swapped in.
/// Also serves on-demand refreshes ([`refresh`]) for its RM.
pub(crate) async fn watch_file(
    path: PathBuf,
    every: Duration,
    props: SchedulerProperties,
    driver: Driver,
    mut stop: watch::Receiver<bool>,
) {
    let (tx, mut requests) = mpsc::channel::<Request>(4);
    let token = match driver.call(|core, _| core.cluster_timestamp()).await {
        Ok(ts) => Some(register(ts, tx)),
        Err(_) => None,
    };
    let mut last = stamp(&path);
    loop {
        // The select only picks what woke us: its output holds a `watch::Ref`, which must
        // not live across the awaits below.
        let request = tokio::select! {
            _ = tokio::time::sleep(every) => None,
            _ = stop.wait_for(|s| *s) => break,
            Some(reply) = requests.recv() => Some(reply),
        };
        if let Some(reply) = request {
            last = stamp(&path);
            let result = apply(&path, &props, &driver).await;
            match &result {
                Ok(()) => {
                    tracing::info!(file = %path.display(), "allocation file refreshed on request")
                }
                Err(e) => tracing::error!(error = %e, "refresh refused; keeping the old queues"),
            }
            let _ = reply.send(result.map(|()| path.clone()));
            continue;
        }
        let now = stamp(&path);
        if now == last {
            continue;
        }
        last = now;
        match apply(&path, &props, &driver).await {
            Ok(()) => tracing::info!(file = %path.display(), "allocation file reloaded"),
            Err(e) => {
                tracing::error!(error = %e, "allocation file refused; keeping the old queues")
            }
        }
    }
    if let Some(token) = token {
        unregister(token);
    }
}
