//! State the simulated NMs, the container-management server and the AM share: each node's
//! inbox of launched containers, the run's time origin, and the error log.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Error messages kept verbatim (the rest are only counted).
const KEPT_ERRORS: usize = 20;

/// A container an AM (or the RM, for the AM container) started on a simulated node.
#[derive(Clone, Debug)]
pub(crate) struct Launched {
    /// The container id.
    pub(crate) id: String,
    /// When it was started.
    pub(crate) at: Instant,
    /// It runs until the end of the run (the AM container).
    pub(crate) forever: bool,
    /// Its memory (MB) and vcores, when the launcher knows them (an AM's launch through the
    /// container manager does not: the node takes the preset's AM size).
    pub(crate) size: Option<(i64, i64)>,
}

/// What every task of the run shares.
pub(crate) struct Shared {
    /// When the run started; sample times count from here.
    pub(crate) origin: Instant,
    inboxes: Vec<Mutex<Vec<Launched>>>,
    /// Per node: AM containers whose process has exited (the AM unregistered).
    exits: Vec<Mutex<Vec<String>>>,
    errors: AtomicU64,
    kept: Mutex<Vec<String>>,
    /// Whether the measurement window has closed (see [`Shared::close_window`]).
    window_closed: AtomicBool,
    /// Requests sent while the window was open and not yet answered or abandoned.
    window_requests: AtomicU64,
}

/// A request sent while the measurement window was open, counted until dropped (answered or
/// abandoned): the run's teardown waits for these, so no sample the window measures is
/// answered during the storm the teardown itself makes.
pub(crate) struct WindowRequest<'a> {
    counted: Option<&'a AtomicU64>,
}

impl Drop for WindowRequest<'_> {
    fn drop(&mut self) {
        if let Some(open) = self.counted {
            open.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Shared {
    /// State for `nodes` simulated NMs.
    pub(crate) fn new(nodes: usize) -> Shared {
        Shared {
            origin: crate::clock::now(),
            inboxes: (0..nodes).map(|_| Mutex::new(Vec::new())).collect(),
            exits: (0..nodes).map(|_| Mutex::new(Vec::new())).collect(),
            errors: AtomicU64::new(0),
            kept: Mutex::new(Vec::new()),
            window_closed: AtomicBool::new(false),
            window_requests: AtomicU64::new(0),
        }
    }

    /// Milliseconds since the origin.
    pub(crate) fn now_ms(&self) -> u64 {
        u64::try_from(self.origin.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// A request about to be sent: its send time (ms since the origin) and its place among
    /// the window's open requests. The time is read after the request is counted, so a
    /// request not counted (the window had closed) has a time at or after the window's end.
    pub(crate) fn sending(&self) -> (u64, WindowRequest<'_>) {
        self.window_requests.fetch_add(1, Ordering::SeqCst);
        let counted = if self.window_closed.load(Ordering::SeqCst) {
            self.window_requests.fetch_sub(1, Ordering::SeqCst);
            None
        } else {
            Some(&self.window_requests)
        };
        (self.now_ms(), WindowRequest { counted })
    }

    /// Ends the measurement window: returns its end (ms since the origin); requests sent
    /// from now on are not counted by [`Shared::window_requests_open`].
    pub(crate) fn close_window(&self) -> u64 {
        let end = self.now_ms();
        self.window_closed.store(true, Ordering::SeqCst);
        end
    }

    /// Requests sent inside the window still waiting for their answer.
    pub(crate) fn window_requests_open(&self) -> u64 {
        self.window_requests.load(Ordering::SeqCst)
    }

    /// Hands containers to node `index`; its next heartbeat picks them up.
    pub(crate) fn launch(&self, index: usize, containers: impl IntoIterator<Item = Launched>) {
        if let Some(inbox) = self.inboxes.get(index) {
            if let Ok(mut inbox) = inbox.lock() {
                inbox.extend(containers);
            }
        }
    }

    /// Takes node `index`'s newly launched containers.
    pub(crate) fn take_launched(&self, index: usize) -> Vec<Launched> {
        self.inboxes
            .get(index)
            .and_then(|inbox| inbox.lock().ok().map(|mut v| std::mem::take(&mut *v)))
            .unwrap_or_default()
    }

    /// The AM in container `id` on node `index` has exited (a YARN AM's process ends once it
    /// has unregistered); the node reports the container complete at its next heartbeat.
    pub(crate) fn exited(&self, index: usize, id: String) {
        if let Some(Ok(mut exits)) = self.exits.get(index).map(Mutex::lock) {
            exits.push(id);
        }
    }

    /// Takes node `index`'s exited AM containers.
    pub(crate) fn take_exited(&self, index: usize) -> Vec<String> {
        self.exits
            .get(index)
            .and_then(|exits| exits.lock().ok().map(|mut v| std::mem::take(&mut *v)))
            .unwrap_or_default()
    }

    /// Records an error (counted; the first few kept verbatim).
    pub(crate) fn error(&self, message: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut kept) = self.kept.lock() {
            if kept.len() < KEPT_ERRORS {
                kept.push(message);
            }
        }
    }

    /// How many errors so far, and the first few.
    pub(crate) fn errors(&self) -> (u64, Vec<String>) {
        let kept = self.kept.lock().map(|k| k.clone()).unwrap_or_default();
        (self.errors.load(Ordering::Relaxed), kept)
    }
}

/// A gRPC status with its code and the chain of causes under it (a bare "transport error"
/// says nothing).
pub(crate) fn describe(status: &tonic::Status) -> String {
    let mut out = format!("{:?}: {}", status.code(), status.message());
    let mut cause = std::error::Error::source(status);
    while let Some(c) = cause {
        out.push_str(&format!(": {c}"));
        cause = c.source();
    }
    out
}

/// The node id of simulated NM `index` (`sim-nm-00042:1`, YARN's `host:port` shape).
pub(crate) fn node_id(index: usize) -> String {
    format!("sim-nm-{index:05}:1")
}

/// The index in a node id made by [`node_id`].
pub(crate) fn node_index(node_id: &str) -> Option<usize> {
    node_id
        .strip_prefix("sim-nm-")?
        .split(':')
        .next()?
        .parse()
        .ok()
}

/// First loopback address handed to simulated NMs (127.0.0.1 is left to everything else).
const FIRST_NODE_IP: u32 = 0x7f01_0001; // 127.1.0.1

/// The address simulated NM `index` registers for its container manager: a distinct loopback
/// IP per node on the one shared port, so the server can tell from the address a connection
/// arrived on which node the RM meant (the whole 127.0.0.0/8 is local on Linux).
pub(crate) fn node_address(index: usize, port: u16) -> Option<SocketAddr> {
    let offset = u32::try_from(index).ok()?;
    let ip = FIRST_NODE_IP.checked_add(offset)?;
    (ip < 0x8000_0000).then(|| SocketAddr::from((Ipv4Addr::from(ip), port)))
}

/// The node index a connection to `local` (the server side of it) was meant for.
pub(crate) fn index_of_address(local: SocketAddr) -> Option<usize> {
    match local {
        SocketAddr::V4(v4) => {
            let ip = u32::from(*v4.ip());
            let offset = ip.checked_sub(FIRST_NODE_IP)?;
            usize::try_from(offset).ok()
        }
        SocketAddr::V6(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_ids_and_addresses_round_trip() {
        assert_eq!(node_id(42), "sim-nm-00042:1");
        assert_eq!(node_index(&node_id(42)), Some(42));
        assert_eq!(node_index(&node_id(123_456)), Some(123_456));
        assert_eq!(node_index("host:8041"), None);
        let a = node_address(300, 9000).unwrap();
        assert_eq!(a.to_string(), "127.1.1.45:9000");
        assert_eq!(index_of_address(a), Some(300));
        assert_eq!(index_of_address("127.0.0.1:9000".parse().unwrap()), None);
        assert!(node_address(usize::MAX, 1).is_none());
    }

    #[test]
    fn inboxes_hand_containers_over_once() {
        let shared = Shared::new(2);
        let c = Launched {
            id: "c1".into(),
            at: crate::clock::now(),
            forever: false,
            size: None,
        };
        shared.launch(1, [c.clone()]);
        shared.launch(7, [c]);
        assert!(shared.take_launched(0).is_empty());
        assert_eq!(shared.take_launched(1).len(), 1);
        assert!(shared.take_launched(1).is_empty());
        for i in 0..30 {
            shared.error(format!("e{i}"));
        }
        let (n, kept) = shared.errors();
        assert_eq!(n, 30);
        assert_eq!(kept.len(), KEPT_ERRORS);
    }

    #[test]
    fn the_window_counts_requests_sent_before_it_closed_until_they_end() {
        let shared = Shared::new(1);
        let (_, first) = shared.sending();
        let (_, second) = shared.sending();
        assert_eq!(shared.window_requests_open(), 2);
        drop(first);
        assert_eq!(shared.window_requests_open(), 1);
        let end = shared.close_window();
        let (at, late) = shared.sending();
        assert!(
            at >= end,
            "a request not counted is sent after the window's end"
        );
        assert_eq!(
            shared.window_requests_open(),
            1,
            "sent after the close: not counted"
        );
        drop(second);
        assert_eq!(shared.window_requests_open(), 0);
        drop(late);
        assert_eq!(shared.window_requests_open(), 0);
    }
}
