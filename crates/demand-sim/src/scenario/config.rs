//! The RM core's configuration for a scenario: the scheduler's (the file's allocation text and
//! `[properties]`, read by `weft_sim::initial_config`) and the RM's own keys the file may set.

use weft_rm_core::{DemandStrategy, RmConfig};
use weft_sched::SchedulerConfig;
use weft_sim::Scenario;
use weft_types::Duration;

/// The RM keys a scenario's `[properties]` may set, each with the core field it fills.
const RM_KEYS: &[&str] = &[
    "weft.demand.default-strategy",
    "weft.demand.admit-unplanned",
    "weft.demand.am-lead",
    "yarn.resourcemanager.rm.container-allocation.expiry-interval-ms",
];

/// Builds the core's configuration; a bad value of an RM key names the key and its line.
pub(crate) fn rm_config(
    scenario: &Scenario,
    scheduler: SchedulerConfig,
) -> Result<RmConfig, String> {
    let mut config = RmConfig::new(scheduler);
    config.groups = scenario.groups.clone();
    config.token_secret = 0x5eed_5eed;
    config.scheduler_address = "sim:8030".into();
    // The virtual NMs and AMs heartbeat at every step and never go silent: YARN's expiries.
    config.nm_expiry = Duration::from_secs(600);
    config.am_expiry = Duration::from_secs(600);
    for p in scenario
        .properties
        .iter()
        .filter(|p| RM_KEYS.contains(&p.name.trim()))
    {
        let value = p.value.trim();
        let bad = |what: &str| {
            format!(
                "line {}, property {}: '{value}' is not {what}",
                p.line,
                p.name.trim()
            )
        };
        match p.name.trim() {
            "weft.demand.default-strategy" => {
                config.demand_default_strategy = match value {
                    "strict" => DemandStrategy::Strict,
                    "loose" => DemandStrategy::Loose,
                    _ => return Err(bad("strict or loose")),
                }
            }
            "weft.demand.admit-unplanned" => {
                config.demand_admit_unplanned = match value {
                    "true" => true,
                    "false" => false,
                    _ => return Err(bad("true or false")),
                }
            }
            "weft.demand.am-lead" => {
                config.demand_am_lead = millis(value).ok_or_else(|| bad("a duration"))?;
            }
            _ => {
                config.container_token_expiry =
                    millis(value).ok_or_else(|| bad("a duration in milliseconds"))?;
            }
        }
    }
    Ok(config)
}

/// Milliseconds as Hadoop writes them (a plain number), or a scenario duration ("30s").
fn millis(value: &str) -> Option<Duration> {
    match value.parse::<u64>() {
        Ok(ms) => Some(Duration::from_millis(ms)),
        Err(_) => weft_sim::parse_duration(value).ok(),
    }
}
