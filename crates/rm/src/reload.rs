//! Reloading the allocation file: polled when it changes (as Hadoop's
//! `AllocationFileLoaderService` does) and on demand (`PUT /ws/v1/cluster/admin/refresh-queues`,
//! `weft rmadmin -refreshQueues`). A bad file is refused with its file and line; the old queues
//! stay.

use std::path::{Path, PathBuf};
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

/// The REST side of on-demand refreshes: a line to the allocation-file watcher, if the RM has
/// an allocation file.
#[derive(Clone, Default)]
pub(crate) struct Refresher(Option<mpsc::Sender<Request>>);

/// The watcher's side of a [`Refresher`].
pub(crate) struct Requests(mpsc::Receiver<Request>);

/// A connected refresher and the requests it sends, for [`watch_file`].
pub(crate) fn refresh_channel() -> (Refresher, Requests) {
    let (tx, rx) = mpsc::channel(4);
    (Refresher(Some(tx)), Requests(rx))
}

impl Refresher {
    /// Re-reads the allocation file now.
    pub(crate) async fn refresh(&self) -> Result<Refreshed, RefreshError> {
        let Some(tx) = &self.0 else {
            return Ok(Refreshed::NoFile);
        };
        let stopping = || RefreshError::Unavailable("the ResourceManager is shutting down".into());
        let (reply, answer) = oneshot::channel();
        tx.send(reply).await.map_err(|_| stopping())?;
        answer.await.map_err(|_| stopping())?.map(Refreshed::File)
    }
}

/// Parses `path` and, if valid, swaps it into the core.
async fn apply(
    path: &Path,
    props: &SchedulerProperties,
    driver: &Driver,
) -> Result<(), RefreshError> {
    let allocations = load(path, props).map_err(RefreshError::Invalid)?;
    let config = SchedulerConfig::fair(allocations, props.clone());
    match driver.call(move |core, now| core.reload(now, config)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(RefreshError::Invalid(format!("{}: {e}", path.display()))),
        Err(e) => Err(RefreshError::Unavailable(e.to_string())),
    }
}

/// Polls `path` every `every` until `stop`; each change is parsed and, if valid, swapped in.
/// Also serves the on-demand refreshes of its [`Refresher`].
pub(crate) async fn watch_file(
    path: PathBuf,
    every: Duration,
    props: SchedulerProperties,
    driver: Driver,
    Requests(mut requests): Requests,
    mut stop: watch::Receiver<bool>,
) {
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
}
