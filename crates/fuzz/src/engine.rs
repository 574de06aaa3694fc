//! The mutational engine: seeds, mutations, a time budget, panics caught with their input.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::time::{Duration, Instant};

/// A deterministic xorshift generator, so that a run with the same seed repeats exactly.
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced: xorshift has no zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }
}

/// Mutates `input` in place with 1 to 8 random edits drawn from byte edits, slice repeats
/// (which amplify nesting), cuts, splices with `others` and the target's `tokens`.
pub fn mutate(rng: &mut Rng, input: &mut Vec<u8>, others: &[Vec<u8>], tokens: &[&str]) {
    const INTERESTING: &[&str] = &[
        "0",
        "-1",
        "2147483647",
        "2147483648",
        "-2147483649",
        "4294967296",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551616",
        "1e308",
        "1e999",
        "NaN",
        "",
        "\u{0}",
        "\u{202e}",
        "\u{ffff}",
    ];
    for _ in 0..1 + rng.below(8) {
        let len = input.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                input[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                input[i] = [0, 0xff, b'<', b'>', b'"', b'{', b'[', b'.', b'\n'][rng.below(9)];
            }
            2 => {
                let token = if tokens.is_empty() || rng.below(3) == 0 {
                    INTERESTING[rng.below(INTERESTING.len())]
                } else {
                    tokens[rng.below(tokens.len())]
                };
                let at = rng.below(len + 1);
                input.splice(at..at, token.bytes());
            }
            3 if len > 1 => {
                // Repeat a slice many times: deep nesting and long fields.
                let start = rng.below(len);
                let end = (start + 1 + rng.below(64)).min(len);
                let piece = input[start..end].to_vec();
                let times = [2, 10, 100, 1000, 20_000][rng.below(5)];
                let repeated: Vec<u8> = piece
                    .iter()
                    .copied()
                    .cycle()
                    .take(piece.len() * times)
                    .collect();
                input.splice(end..end, repeated);
            }
            4 if len > 0 => {
                let start = rng.below(len);
                let end = (start + 1 + rng.below(32)).min(len);
                input.drain(start..end);
            }
            5 if len > 0 => input.truncate(rng.below(len)),
            6 if !others.is_empty() => {
                let other = &others[rng.below(others.len())];
                if !other.is_empty() {
                    let from = rng.below(other.len());
                    let to = (from + 1 + rng.below(256)).min(other.len());
                    let at = rng.below(len + 1);
                    input.splice(at..at, other[from..to].iter().copied());
                }
            }
            7 if len > 1 => {
                // Swap two slices' order (moves closing tags and brackets around).
                let a = rng.below(len);
                let b = rng.below(len);
                input.swap(a, b);
            }
            _ => {
                let at = rng.below(len + 1);
                input.insert(at, rng.next_u64() as u8);
            }
        }
        // Keep inputs from growing without bound across edits.
        input.truncate(4 << 20);
    }
}

/// A crash: the panic message and the input that caused it.
#[derive(Clone, Debug)]
pub struct Crash {
    /// What the panic said.
    pub message: String,
    /// The input.
    pub input: Vec<u8>,
}

/// What one target's run did.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// The target's name.
    pub target: String,
    /// Inputs run (seeds included).
    pub executions: u64,
    /// Distinct crashes (by message), with the first input of each.
    pub crashes: Vec<Crash>,
}

/// The budget's stopwatch (the fuzzer is a test tool; nothing here is sans-IO).
#[allow(clippy::disallowed_methods)]
fn stopwatch() -> Instant {
    Instant::now()
}

/// Runs `target` on every seed, then on mutated seeds until `budget` has passed.
pub fn fuzz(
    name: &str,
    seeds: &[Vec<u8>],
    tokens: &[&str],
    budget: Duration,
    rng_seed: u64,
    mut target: impl FnMut(&[u8]),
) -> Report {
    let mut report = Report {
        target: name.to_string(),
        ..Report::default()
    };
    let mut rng = Rng::new(rng_seed);
    let previous_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {})); // a caught panic is reported below, not printed
    let start = stopwatch();
    let mut run = |input: Vec<u8>, report: &mut Report| {
        report.executions += 1;
        if let Err(payload) = catch_unwind(AssertUnwindSafe(|| target(&input))) {
            let message = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic without a message".to_string());
            if !report.crashes.iter().any(|c| c.message == message) {
                report.crashes.push(Crash { message, input });
            }
        }
    };
    for seed in seeds {
        run(seed.clone(), &mut report);
    }
    while start.elapsed() < budget && !seeds.is_empty() {
        let mut input = seeds[rng.below(seeds.len())].clone();
        mutate(&mut rng, &mut input, seeds, tokens);
        run(input, &mut report);
    }
    std::panic::set_hook(previous_hook);
    report
}
