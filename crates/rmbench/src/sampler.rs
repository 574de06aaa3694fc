//! What the timeline samples while the run lasts: the bench's counters and both processes'
//! CPU and memory each second, and the RM's `/metrics` every few seconds (a scrape builds a
//! view of the whole RM through its driver, so it is not taken every second at full scale;
//! its own latency and size are reported so its cost can be read off).

use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use crate::rest::Rest;
use crate::shared::Shared;
use crate::timeline::{parse_driver_counters, Scrape, Tick};

/// The largest `/metrics` answer read (2,000 queues' families are a few MB).
const METRICS_LIMIT: u64 = 256 << 20;
/// Ticks (and scrapes) kept at most (a week of seconds); later ones are dropped, not the run.
const MAX_TICKS: usize = 7 * 24 * 3600;

/// What the samplers collected.
#[derive(Default)]
pub(crate) struct Samples {
    pub(crate) ticks: Mutex<Vec<Tick>>,
    pub(crate) scrapes: Mutex<Vec<Scrape>>,
    pub(crate) scrape_failures: Mutex<u64>,
}

impl Samples {
    /// Takes what was collected so far.
    pub(crate) fn take(&self) -> (Vec<Tick>, Vec<Scrape>, u64) {
        let ticks = std::mem::take(&mut *self.ticks.lock().unwrap_or_else(PoisonError::into_inner));
        let scrapes =
            std::mem::take(&mut *self.scrapes.lock().unwrap_or_else(PoisonError::into_inner));
        let failures = *self
            .scrape_failures
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        (ticks, scrapes, failures)
    }
}

/// Calls `read` every second until `stop`, keeping what it returns.
pub(crate) fn ticker<F>(
    samples: Arc<Samples>,
    read: F,
    mut stop: watch::Receiver<bool>,
) -> JoinHandle<()>
where
    F: Fn() -> Tick + Send + 'static,
{
    tokio::spawn(async move {
        let mut every = tokio::time::interval(Duration::from_secs(1));
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = every.tick() => {}
                _ = stop.wait_for(|s| *s) => break,
            }
            let tick = read();
            let mut ticks = samples.ticks.lock().unwrap_or_else(PoisonError::into_inner);
            if ticks.len() < MAX_TICKS {
                ticks.push(tick);
            }
        }
    })
}

/// Scrapes the RM's `/metrics` every `every` until `stop` (one scrape at a time: a slow
/// answer delays the next rather than piling scrapes onto a busy RM).
pub(crate) fn scraper(
    samples: Arc<Samples>,
    rest: Arc<Rest>,
    shared: Arc<Shared>,
    every: Duration,
    mut stop: watch::Receiver<bool>,
) -> JoinHandle<()> {
    tokio::spawn(async move {
        let mut next = tokio::time::interval(every);
        next.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                _ = next.tick() => {}
                _ = stop.wait_for(|s| *s) => break,
            }
            let at_ms = shared.now_ms();
            let client = Arc::clone(&rest);
            let answer = tokio::task::spawn_blocking(move || {
                let sent = crate::clock::now();
                let text = client.get_text("metrics", "/metrics", METRICS_LIMIT);
                (text, sent.elapsed())
            })
            .await;
            match answer {
                Ok((Ok(text), took)) => {
                    let scrape = Scrape {
                        at_ms,
                        took_ms: took.as_secs_f64() * 1000.0,
                        bytes: text.len(),
                        driver: parse_driver_counters(&text),
                    };
                    let mut scrapes = samples
                        .scrapes
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner);
                    if scrapes.len() < MAX_TICKS {
                        scrapes.push(scrape);
                    }
                }
                Ok((Err(e), _)) => {
                    *samples
                        .scrape_failures
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) += 1;
                    if !*stop.borrow() {
                        shared.error(format!("scraping the RM's /metrics: {e}"));
                    }
                }
                Err(e) => {
                    *samples
                        .scrape_failures
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner) += 1;
                    shared.error(format!("scraping the RM's /metrics: {e}"));
                }
            }
        }
    })
}
