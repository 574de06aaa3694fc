//! The figures a run produces, as JSON and as text.

use std::fmt::Write as _;

use serde::Serialize;

use crate::stats::Percentiles;

/// CPU used over the steady window, in cores (CPU seconds per wall second).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Cpu {
    /// The RM process (unknown for an RM the bench did not start and was not given the pid of).
    pub rm_cores: Option<f64>,
    /// The bench process (simulated NMs + AM + gRPC clients).
    pub bench_cores: Option<f64>,
    /// The whole machine (everything, including other users).
    pub machine_cores: Option<f64>,
    /// Cores the machine has.
    pub machine_core_count: usize,
    /// The 1-minute load average when the window ended (others' work shows here).
    pub load_average: Option<f64>,
}

/// One run's results.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Report {
    /// Simulated NMs.
    pub nms: usize,
    /// HTTP/2 connections they shared to the resource tracker.
    pub connections: usize,
    /// Node capacity, MB and vcores.
    pub node_memory_mb: i64,
    /// Node vcores.
    pub node_vcores: i64,
    /// Container size, MB.
    pub container_memory_mb: i64,
    /// Container vcores.
    pub container_vcores: i64,
    /// How many containers fit on one node.
    pub slots_per_node: i64,
    /// How long a container runs, ms (0: until the node's next heartbeat).
    pub container_ms: u64,
    /// The heartbeat interval the NMs used (ms; the RM's unless forced).
    pub heartbeat_ms: u64,
    /// Warm-up left out of the figures, seconds.
    pub warmup_s: f64,
    /// The measured (steady) window, seconds.
    pub window_s: f64,
    /// Containers the AM received in the window.
    pub allocated: u64,
    /// The headline: containers allocated per second end to end over the window.
    pub containers_per_sec: f64,
    /// The most containers received in any 1-second window.
    pub peak_1s: u64,
    /// Containers received over the whole run, warm-up included.
    pub allocated_total: u64,
    /// Allocations per whole second from the first ask (warm-up included).
    pub per_second: Vec<u64>,
    /// Completions the NMs reported in the window.
    pub completions_reported: u64,
    /// Heartbeats sent in the window.
    pub heartbeats: u64,
    /// Heartbeats per second.
    pub heartbeats_per_sec: f64,
    /// Containers allocated per heartbeat (the RM assigns on node heartbeats).
    pub containers_per_heartbeat: f64,
    /// What the heartbeat rate allows at most: heartbeats/s x slots per node.
    pub heartbeat_bound_per_sec: f64,
    /// Allocate calls in the window.
    pub allocates: u64,
    /// Allocate calls per second.
    pub allocates_per_sec: f64,
    /// Containers per Allocate answer.
    pub containers_per_allocate: f64,
    /// Heartbeat round trips.
    pub heartbeat_latency: Percentiles,
    /// Allocate round trips.
    pub allocate_latency: Percentiles,
    /// Where the CPU went.
    pub cpu: Cpu,
    /// NM re-registrations (RESYNC or failed heartbeats).
    pub resyncs: u64,
    /// Containers on nodes the bench does not simulate.
    pub unroutable: u64,
    /// RPC and protocol errors over the whole run.
    pub errors: u64,
    /// The first few error messages.
    pub first_errors: Vec<String>,
    /// WARN/ERROR lines in the RM's log up to the end of the window (child RM only).
    pub rm_warnings: Vec<String>,
    /// How far the RM's log had got when the window ended, bytes.
    #[serde(skip)]
    pub rm_log_mark: Option<u64>,
}

fn cores(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_string(), |c| format!("{c:.2}"))
}

fn lat(p: &Percentiles) -> String {
    format!(
        "p50 {:.2} ms, p90 {:.2} ms, p99 {:.2} ms, max {:.2} ms ({} calls)",
        p.p50_ms, p.p90_ms, p.p99_ms, p.max_ms, p.count
    )
}

impl Report {
    /// A few lines for people.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} simulated NMs on {} connections ({} MB, {} vcores each = {} containers of {} MB/{} vcores), heartbeat {} ms, containers run {} ms",
            self.nms,
            self.connections,
            self.node_memory_mb,
            self.node_vcores,
            self.slots_per_node,
            self.container_memory_mb,
            self.container_vcores,
            self.heartbeat_ms,
            self.container_ms
        );
        let _ = writeln!(
            s,
            "containers allocated per second (end to end): {:.0} over {:.1} s after {:.1} s warm-up ({} containers); peak 1 s: {}",
            self.containers_per_sec, self.window_s, self.warmup_s, self.allocated, self.peak_1s
        );
        let _ = writeln!(
            s,
            "heartbeats: {:.0}/s, {:.1} containers per heartbeat; heartbeat bound (heartbeats/s x slots) {:.0}/s",
            self.heartbeats_per_sec, self.containers_per_heartbeat, self.heartbeat_bound_per_sec
        );
        let _ = writeln!(
            s,
            "allocate calls: {:.0}/s, {:.1} containers per answer",
            self.allocates_per_sec, self.containers_per_allocate
        );
        let _ = writeln!(s, "heartbeat latency: {}", lat(&self.heartbeat_latency));
        let _ = writeln!(s, "allocate latency:  {}", lat(&self.allocate_latency));
        let _ = writeln!(
            s,
            "CPU (cores): RM {}, bench {}, whole machine {} of {} (load average {})",
            cores(self.cpu.rm_cores),
            cores(self.cpu.bench_cores),
            cores(self.cpu.machine_cores),
            self.cpu.machine_core_count,
            cores(self.cpu.load_average)
        );
        let _ = writeln!(
            s,
            "completions reported by NMs: {}; resyncs: {}; errors: {}",
            self.completions_reported, self.resyncs, self.errors
        );
        for e in &self.first_errors {
            let _ = writeln!(s, "  error: {e}");
        }
        for w in self.rm_warnings.iter().take(10) {
            let _ = writeln!(s, "  RM log: {w}");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_carries_the_headline_and_unknown_cpu_reads_na() {
        let r = Report {
            nms: 3,
            containers_per_sec: 1234.4,
            errors: 1,
            first_errors: vec!["boom".into()],
            ..Report::default()
        };
        let t = r.text();
        assert!(t.contains("containers allocated per second (end to end): 1234"));
        assert!(t.contains("RM n/a"));
        assert!(t.contains("error: boom"));
        let json = serde_json::to_value(&r).unwrap();
        assert_eq!(json["nms"], 3);
        assert!(json["cpu"]["rm_cores"].is_null());
    }
}
