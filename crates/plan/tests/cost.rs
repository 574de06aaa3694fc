//! The admission cost figure of spec time-aware-demands §3.5 (target: one single-stage
//! reservation admitted in <= 1 ms median, <= 10 ms p99, with 1,000 live reservations over a
//! 24 h horizon at a 1 s step, on one core). Ignored by default: it measures, it does not
//! check. Run with `cargo test -p weft-plan --release --test cost -- --ignored --nocapture`.

#![allow(clippy::disallowed_methods)] // the stopwatch is the point of this file

use std::time::Instant;

use weft_plan::{
    AlignedPlannerWithGreedy, GreedyAgent, Interpreter, Plan, PlanConfig, ReservationAgent,
    ReservationDefinition, ReservationId, ReservationRequest,
};
use weft_types::{Duration, Resource, Time};

const HOUR: u64 = 3_600_000;

/// A fixed pseudo-random sequence (64-bit LCG), so every run measures the same plan.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }
}

fn definition(rng: &mut Lcg) -> ReservationDefinition {
    let arrival = rng.below(22 * HOUR);
    let duration = 600_000 + rng.below(HOUR);
    let slack = rng.below(2 * HOUR);
    ReservationDefinition {
        arrival: Time(arrival),
        deadline: Time(arrival + duration + slack + 1_000),
        name: String::new(),
        priority: 0,
        recurrence: None,
        interpreter: Interpreter::All,
        requests: vec![ReservationRequest {
            capability: Resource::new(1024 * (1 + rng.below(4) as i64), 1),
            num_containers: 1 + rng.below(20) as u32,
            concurrency: 1,
            duration: Duration(duration),
        }],
    }
}

fn measure(name: &str, agent: &dyn ReservationAgent) {
    let mut plan = Plan::new(
        PlanConfig::new("root.prod"),
        Resource::new(1024 * 2000, 2000),
    )
    .expect("valid plan");
    let mut rng = Lcg(17);
    let mut seq = 0;
    let mut live = 0;
    while live < 1000 {
        seq += 1;
        let id = ReservationId {
            cluster_timestamp: 1,
            sequence: seq,
        };
        if agent
            .create(
                &mut plan,
                id,
                &format!("u{}", seq % 10),
                &definition(&mut rng),
                Time(0),
            )
            .is_ok()
        {
            live += 1;
        }
    }
    let mut times = Vec::new();
    for _ in 0..200 {
        seq += 1;
        let id = ReservationId {
            cluster_timestamp: 1,
            sequence: seq,
        };
        let d = definition(&mut rng);
        let started = Instant::now();
        let accepted = agent.create(&mut plan, id, "probe", &d, Time(0)).is_ok();
        times.push(started.elapsed().as_secs_f64() * 1000.0);
        if accepted {
            plan.delete(&id).expect("just added");
        }
    }
    times.sort_by(f64::total_cmp);
    println!(
        "{name}: 1,000 live reservations, {} committed steps: admission median {:.3} ms, p99 {:.3} ms",
        plan.committed().step_count(),
        times[times.len() / 2],
        times[times.len() * 99 / 100]
    );
}

#[test]
#[ignore = "a measurement, not a check"]
fn admission_cost_with_1000_live_reservations() {
    measure("greedy", &GreedyAgent::default());
    measure("aligned", &AlignedPlannerWithGreedy::default());
}
