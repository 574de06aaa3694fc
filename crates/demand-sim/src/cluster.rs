//! The RM each configuration runs (§4.3): the Fair Scheduler with `root.prod` (weight 7) and
//! `root.adhoc` (weight 3); `root.prod` is a reservable plan queue for the Rayon and demand
//! configurations and a plain queue for the Fair baseline. The Capacity baseline runs the
//! Capacity Scheduler with prod 70 / adhoc 30.

use std::fmt;
use std::str::FromStr;

use serde::Serialize;
use weft_config::alloc_file::parse_allocations;
use weft_config::capacity::parse_capacity;
use weft_rm_core::RmConfig;
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig};
use weft_types::{Duration, ResourceTypes};

use crate::SimError;

/// One of the compared configurations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Configuration {
    /// Plain Fair: production jobs to `root.prod` at arrival, deadlines measured after the fact.
    Fair,
    /// Rayon-compatible: each production job an `R_ORDER_NO_GAP` reservation of two gangs
    /// (Hadoop's `createMRReservation`), its app submitted with the reservation id when the
    /// reservation is active; Hadoop's follower weights. A job whose reservation is refused
    /// runs without one, as in SLS.
    Rayon,
    /// Weft demands: maps and reduces as two demands (strict DeadLine, strict Start from
    /// arrival, Gang, reduces OrderBy maps) over the AM protocol; workflows as chained demands
    /// with loose deadlines. Admission is the core's as configured (`weft.demand.admit-unplanned`
    /// off): a job whose demands are refused runs as plain asks.
    Demands,
    /// As `Demands` with `weft.demand.admit-unplanned` on: strict demands that need a plan are
    /// admitted best-effort (no planner), their run-time strict rules still applying.
    DemandsUnplanned,
    /// §4.3's Capacity baseline: the Capacity Scheduler with `root.prod` at capacity 70 and
    /// `root.adhoc` at 30, both maximum 100, no plans; deadlines measured after the fact.
    Capacity,
}

impl Configuration {
    /// Every configuration, in the table's order.
    pub const ALL: [Configuration; 5] = [
        Configuration::Fair,
        Configuration::Rayon,
        Configuration::Demands,
        Configuration::DemandsUnplanned,
        Configuration::Capacity,
    ];

    /// The configurations a comparison runs unless told otherwise (`demands-unplanned` equals
    /// `demands` once plans exist, so it is asked for by name).
    pub const DEFAULT: [Configuration; 4] = [
        Configuration::Fair,
        Configuration::Capacity,
        Configuration::Rayon,
        Configuration::Demands,
    ];

    /// The name the CLI and the report use.
    pub fn name(self) -> &'static str {
        match self {
            Configuration::Fair => "fair",
            Configuration::Rayon => "rayon",
            Configuration::Demands => "demands",
            Configuration::DemandsUnplanned => "demands-unplanned",
            Configuration::Capacity => "capacity",
        }
    }

    /// Whether production jobs go through the planner's front door (a reservation or demands).
    pub fn plans(self) -> bool {
        !matches!(self, Configuration::Fair | Configuration::Capacity)
    }

    /// Whether production and workflow jobs are sent as demands.
    pub fn uses_demands(self) -> bool {
        matches!(
            self,
            Configuration::Demands | Configuration::DemandsUnplanned
        )
    }
}

impl fmt::Display for Configuration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Configuration {
    type Err = SimError;
    fn from_str(s: &str) -> Result<Configuration, SimError> {
        Configuration::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                SimError::Config(format!(
                    "unknown configuration '{s}'; known: {}",
                    Configuration::ALL.map(Configuration::name).join(", ")
                ))
            })
    }
}

/// The allocation file: `root.default` gets weight 0 so the plan queue's steady share is the
/// spec's 70% (the default queue would otherwise take a share it never uses).
fn allocation_xml(reservable: bool) -> String {
    let reservation = if reservable { "<reservation/>" } else { "" };
    format!(
        r#"<allocations>
  <queue name="default"><weight>0</weight></queue>
  <queue name="prod"><weight>7</weight>{reservation}</queue>
  <queue name="adhoc"><weight>3</weight></queue>
</allocations>"#
    )
}

/// The capacity-scheduler.xml of §4.2 (prod 70, adhoc 30, both maximum 100). Four settings
/// differ from Hadoop's defaults, each so that the baseline is the same cluster as Fair's:
/// * `resource-calculator` DominantResourceCalculator: Hadoop's default calculator counts
///   memory only, so it packs a node's 128 GiB with 1 GiB / 1 vcore tasks, over 3 times its
///   32 vcores (measured here before this setting), where Fair never passes a node's vcores;
/// * `user-limit-factor` lets one user reach the queue's maximum (with the default 1 a
///   queue's single user stops at its capacity, and every kind of job here has one user);
/// * `maximum-am-resource-percent` 0.5, Fair's default `maxAMShare` (the default 0.1 would cap
///   the best-effort queue at a few dozen AMs, and every best-effort job has one);
/// * `maximum-offswitch-assignments` 100 (Hadoop's 1 assigns one container per node
///   heartbeat to asks without locality, all of them here: Fair runs with `assignmultiple`).
fn capacity_xml() -> String {
    let props = [
        ("root.queues", "prod,adhoc"),
        ("root.prod.capacity", "70"),
        ("root.prod.maximum-capacity", "100"),
        ("root.prod.user-limit-factor", "2"),
        ("root.adhoc.capacity", "30"),
        ("root.adhoc.maximum-capacity", "100"),
        ("root.adhoc.user-limit-factor", "4"),
        ("maximum-am-resource-percent", "0.5"),
        ("per-node-heartbeat.maximum-offswitch-assignments", "100"),
        (
            "resource-calculator",
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator",
        ),
    ];
    let mut xml = String::from("<configuration>\n");
    for (name, value) in props {
        xml.push_str(&format!(
            "<property><name>yarn.scheduler.capacity.{name}</name><value>{value}</value></property>\n"
        ));
    }
    xml.push_str("</configuration>\n");
    xml
}

fn scheduler_config(configuration: Configuration) -> Result<SchedulerConfig, SimError> {
    if configuration == Configuration::Capacity {
        let (capacity, _) = parse_capacity(&capacity_xml(), &ResourceTypes::default())
            .map_err(|e| SimError::Config(format!("capacity-scheduler.xml: {e}")))?;
        return Ok(SchedulerConfig::Capacity(CapacitySchedulerConfig {
            capacity,
            properties: weft_config::SchedulerProperties::default(),
        }));
    }
    let xml = allocation_xml(configuration.plans());
    let (allocations, _) = parse_allocations(&xml, &ResourceTypes::default())
        .map_err(|e| SimError::Config(format!("allocation file: {e}")))?;
    // Assign several containers per heartbeat (Hadoop's default assigns one, which caps a
    // 64-node cluster at 64 containers a second, far below the workload's rate).
    // Rayon-compatible means Hadoop's answers: Hadoop admits a gang on the plan's aggregate
    // alone, so Weft's packability check (spec §3.3 item 5) is off for that configuration.
    let properties = weft_config::SchedulerProperties {
        assign_multiple: true,
        reservation_packability_check: configuration != Configuration::Rayon,
        ..Default::default()
    };
    Ok(SchedulerConfig::fair(allocations, properties))
}

/// The RM's configuration for `configuration`.
pub(crate) fn rm_config(configuration: Configuration) -> Result<RmConfig, SimError> {
    let mut config = RmConfig::new(scheduler_config(configuration)?);
    config.token_secret = 0x5eed_5eed;
    config.scheduler_address = "sim:8030".into();
    // Virtual NMs and AMs never go silent; keep YARN's expiries.
    config.nm_expiry = Duration::from_secs(600);
    config.am_expiry = Duration::from_secs(600);
    config.demand_admit_unplanned = configuration == Configuration::DemandsUnplanned;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::{rm_config, Configuration};

    #[test]
    fn only_the_rayon_configuration_answers_gangs_on_the_aggregate_as_hadoop_does() {
        let check = |c| {
            rm_config(c)
                .expect("a valid configuration")
                .scheduler
                .properties()
                .reservation_packability_check
        };
        assert!(!check(Configuration::Rayon));
        assert!(check(Configuration::Demands));
        assert!(check(Configuration::Fair));
    }
}
