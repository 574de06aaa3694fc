//! The simulator's bounds on what a scenario or trace may ask for, so that no input file can
//! make a run allocate without bound or simulate for (practically) ever (docs/LIMITS.md).

/// The most containers one ask (or one trace task group) may ask for. Each asked container
/// holds its duration until it is allocated.
pub const MAX_ASK_COUNT: u32 = 1_000_000;

/// The longest time a scenario or trace may name (an event's `at`, a container's `duration`,
/// `end`, intervals): 30 days of simulated time. The run updates the scheduler every
/// `update_interval` until the last event or completion, so a longer time is a run that does
/// not end in practice.
pub const MAX_SIM_TIME_MS: u64 = 30 * 24 * 3_600_000;

/// `MAX_SIM_TIME_MS` as a scenario writes it.
pub(crate) const MAX_SIM_TIME_TEXT: &str = "720h (30 days)";

#[cfg(test)]
mod tests {
    use crate::parse_scenario;
    use crate::sls::{parse_sls_trace, SlsOptions};

    const SUBMIT: &str = "[[nodes]]\nhost = \"n\"\nresources = \"4096 mb, 4 vcores\"\n\
        [[events]]\nat = \"0s\"\ntype = \"submit\"\napp = \"a\"\nuser = \"u\"\n";

    fn refusal(text: &str) -> String {
        match parse_scenario(text, "s.toml") {
            Ok(_) => panic!("the scenario parsed"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn an_ask_for_more_containers_than_the_limit_is_refused_with_line_and_field() {
        // Line 9 is the ask's [[events]] header, its count on line 14.
        let text = format!(
            "{SUBMIT}[[events]]\nat = \"1s\"\ntype = \"ask\"\napp = \"a\"\n\
             resources = \"1024 mb, 1 vcores\"\ncount = 2147483647\n"
        );
        let e = refusal(&text);
        assert!(
            e.contains("line 14, field events[1].count: must be an integer from 1 to 1000000"),
            "{e}"
        );
    }

    #[test]
    fn times_beyond_the_limit_are_refused_with_line_and_field() {
        let text = format!(
            "{SUBMIT}[[events]]\nat = \"1s\"\ntype = \"ask\"\napp = \"a\"\n\
             resources = \"1024 mb, 1 vcores\"\ncount = 1\nduration = \"999999999999h\"\n"
        );
        let e = refusal(&text);
        assert!(
            e.contains("line 15, field events[1].duration: '999999999999h' is longer than the simulator allows (720h (30 days))"),
            "{e}"
        );
        let e = refusal(&format!("end = \"721h\"\n{SUBMIT}"));
        assert!(e.contains("line 1, field end: '721h' is longer"), "{e}");
        // The limit itself is allowed.
        parse_scenario(&format!("end = \"720h\"\n{SUBMIT}"), "s.toml").expect("30 days");
    }

    #[test]
    fn trace_tasks_beyond_the_limits_are_refused_naming_the_field() {
        let trace = |task: &str| {
            format!(
                "{{\"job.start.ms\": 0, \"job.end.ms\": 10, \"job.id\": \"j\", \"job.queue.name\": \"q\", \"job.user\": \"u\", \"job.tasks\": [{task}]}}"
            )
        };
        let e = parse_sls_trace(
            &trace("{\"count\": 2147483647, \"container.duration.ms\": 5}"),
            "t.json",
            &SlsOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("count") && e.contains("at most 1000000"), "{e}");
        let e = parse_sls_trace(
            &trace("{\"container.duration.ms\": 3600000000000000}"),
            "t.json",
            &SlsOptions::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("container.duration.ms") && e.contains("longer than the simulator allows"),
            "{e}"
        );
    }
}
