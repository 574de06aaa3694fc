//! Reloading the allocation file: polled when it changes (as Hadoop's
//! `AllocationFileLoaderService` does) and on demand (`PUT /ws/v1/cluster/admin/refresh-queues`,
//! `weft rmadmin -refreshQueues`). A bad file is refused with its file and line; the old queues
//! stay.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
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

/// What the allocation-file reloads did so far: shown as a banner on every web UI page while
/// the file on disk is refused, exported in `/metrics`, and served at
/// `GET /ws/v1/cluster/admin/allocation-file` (which `weft up` polls to tell its terminal).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ReloadStatus {
    /// The allocation file, if the RM has one.
    pub(crate) file: Option<PathBuf>,
    /// When the file was last read (at startup or a reload), epoch ms.
    pub(crate) last_attempt_ms: u64,
    /// When the file last loaded successfully, epoch ms.
    pub(crate) last_success_ms: u64,
    /// Why the last read was refused; `None` once a good file loads.
    pub(crate) error: Option<String>,
    /// Refused reloads since the RM started.
    pub(crate) errors_total: u64,
}

impl ReloadStatus {
    /// The status of an RM that has just loaded `file` (or runs without one) at `now_ms`.
    pub(crate) fn loaded_at_start(file: Option<PathBuf>, now_ms: u64) -> ReloadStatus {
        ReloadStatus {
            file,
            last_attempt_ms: now_ms,
            last_success_ms: now_ms,
            error: None,
            errors_total: 0,
        }
    }
}

/// The shared, updatable [`ReloadStatus`].
#[derive(Clone, Debug, Default)]
pub(crate) struct ReloadLog(Arc<Mutex<ReloadStatus>>);

impl ReloadLog {
    pub(crate) fn new(status: ReloadStatus) -> ReloadLog {
        ReloadLog(Arc::new(Mutex::new(status)))
    }

    /// A copy of the status now.
    pub(crate) fn status(&self) -> ReloadStatus {
        // A poisoned lock still holds a whole status (every update is one assignment).
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn record(&self, now_ms: u64, outcome: Result<(), String>) {
        let mut s = self.0.lock().unwrap_or_else(|e| e.into_inner());
        s.last_attempt_ms = now_ms;
        match outcome {
            Ok(()) => {
                s.last_success_ms = now_ms;
                s.error = None;
            }
            Err(e) => {
                s.errors_total += 1;
                s.error = Some(e);
            }
        }
    }
}

/// A refresh request to a watcher, answered once the reload is applied or refused.
type Request = oneshot::Sender<Result<PathBuf, RefreshError>>;

/// The REST side of on-demand refreshes: a line to the allocation-file watcher, if the RM has
/// an allocation file, and what the reloads did.
#[derive(Clone, Default)]
pub(crate) struct Refresher {
    requests: Option<mpsc::Sender<Request>>,
    log: ReloadLog,
}

/// The watcher's side of a [`Refresher`].
pub(crate) struct Requests(mpsc::Receiver<Request>);

/// A connected refresher and the requests it sends, for [`watch_file`], sharing `log`.
pub(crate) fn refresh_channel(log: ReloadLog) -> (Refresher, Requests) {
    let (tx, rx) = mpsc::channel(4);
    let refresher = Refresher {
        requests: Some(tx),
        log,
    };
    (refresher, Requests(rx))
}

impl Refresher {
    /// A refresher for an RM without an allocation file (nothing to re-read).
    pub(crate) fn without_file(log: ReloadLog) -> Refresher {
        Refresher {
            requests: None,
            log,
        }
    }

    /// What the reloads did so far.
    pub(crate) fn status(&self) -> ReloadStatus {
        self.log.status()
    }

    /// Re-reads the allocation file now.
    pub(crate) async fn refresh(&self) -> Result<Refreshed, RefreshError> {
        let Some(tx) = &self.requests else {
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

/// Records a reload's outcome in `log` (a refusal the RM could not even try, because it is
/// stopping, is not the file's fault and is not counted).
fn note(log: &ReloadLog, result: &Result<(), RefreshError>) {
    let now_ms = crate::clock::now().as_millis();
    match result {
        Ok(()) => log.record(now_ms, Ok(())),
        Err(RefreshError::Invalid(e)) => log.record(now_ms, Err(e.clone())),
        Err(RefreshError::Unavailable(_)) => {}
    }
}

/// Polls `path` every `every` until `stop`; each change is parsed and, if valid, swapped in.
/// Also serves the on-demand refreshes of its [`Refresher`]; every outcome goes to `log`.
pub(crate) async fn watch_file(
    path: PathBuf,
    every: Duration,
    props: SchedulerProperties,
    driver: Driver,
    Requests(mut requests): Requests,
    log: ReloadLog,
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
            note(&log, &result);
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
        let result = apply(&path, &props, &driver).await;
        note(&log, &result);
        match result {
            Ok(()) => tracing::info!(file = %path.display(), "allocation file reloaded"),
            Err(e) => {
                tracing::error!(error = %e, "allocation file refused; keeping the old queues")
            }
        }
    }
}
