//! Reloading the allocation file when it changes (polled, as Hadoop's
//! `AllocationFileLoaderService` does). A bad file is logged and refused; the old queues stay.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tokio::sync::watch;
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

/// Polls `path` every `every` until `stop`; each change is parsed and, if valid, swapped in.
pub(crate) async fn watch_file(
    path: PathBuf,
    every: Duration,
    props: SchedulerProperties,
    driver: Driver,
    mut stop: watch::Receiver<bool>,
) {
    let mut last = stamp(&path);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
        let now = stamp(&path);
        if now == last {
            continue;
        }
        last = now;
        match load(&path, &props) {
            Ok(allocations) => {
                let config = SchedulerConfig {
                    allocations,
                    properties: props.clone(),
                };
                match driver.call(move |core, now| core.reload(now, config)).await {
                    Ok(Ok(())) => {
                        tracing::info!(file = %path.display(), "allocation file reloaded")
                    }
                    Ok(Err(e)) => {
                        tracing::error!(file = %path.display(), error = %e, "allocation file refused; keeping the old queues")
                    }
                    Err(e) => tracing::error!(error = %e, "reload not applied"),
                }
            }
            Err(e) => {
                tracing::error!(error = %e, "allocation file refused; keeping the old queues")
            }
        }
    }
}
