//! Hadoop's reservation-system settings as both schedulers' files write them: the agent,
//! sharing-policy and replanner class names (global elements in fair-scheduler.xml, per-queue
//! keys in capacity-scheduler.xml) and a reservable queue's settings.
//!
//! Class names are Hadoop's, so existing files work unchanged; the pre-2.8 package of the agent
//! and the replanner (directly under `reservation`, before they moved to `reservation.planning`)
//! is accepted too. An unknown class is an error that lists the names Weft supports (spec
//! time-aware-demands §3.5), since Weft cannot load a Java class.

const PACKAGE: &str = "org.apache.hadoop.yarn.server.resourcemanager.reservation";

/// Which agent places reservations in a plan (`reservation-agent`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReservationAgentKind {
    /// `GreedyReservationAgent`.
    Greedy,
    /// `AlignedPlannerWithGreedy`, Hadoop's default for both schedulers.
    AlignedPlannerWithGreedy,
}

/// Which sharing policy checks a plan's reservations (`reservation-policy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SharingPolicyKind {
    /// `CapacityOverTimePolicy`, the default.
    CapacityOverTime,
    /// `NoOverCommitPolicy`.
    NoOverCommit,
}

/// Which replanner repairs a plan whose capacity shrank (`reservation-planner`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplannerKind {
    /// `SimpleCapacityReplanner`, the default and the only one Hadoop ships.
    SimpleCapacity,
}

impl ReservationAgentKind {
    /// Hadoop's class name.
    pub fn class_name(self) -> String {
        match self {
            ReservationAgentKind::Greedy => format!("{PACKAGE}.planning.GreedyReservationAgent"),
            ReservationAgentKind::AlignedPlannerWithGreedy => {
                format!("{PACKAGE}.planning.AlignedPlannerWithGreedy")
            }
        }
    }

    /// From a class name as a configuration file writes it.
    pub fn from_class_name(name: &str) -> Result<ReservationAgentKind, String> {
        let kinds = [
            ReservationAgentKind::AlignedPlannerWithGreedy,
            ReservationAgentKind::Greedy,
        ];
        let legacy_greedy = format!("{PACKAGE}.GreedyReservationAgent");
        if name.trim() == legacy_greedy {
            return Ok(ReservationAgentKind::Greedy);
        }
        find(name, "reservation agent", &kinds, |k| k.class_name())
    }
}

impl SharingPolicyKind {
    /// Hadoop's class name.
    pub fn class_name(self) -> String {
        match self {
            SharingPolicyKind::CapacityOverTime => format!("{PACKAGE}.CapacityOverTimePolicy"),
            SharingPolicyKind::NoOverCommit => format!("{PACKAGE}.NoOverCommitPolicy"),
        }
    }

    /// From a class name as a configuration file writes it.
    pub fn from_class_name(name: &str) -> Result<SharingPolicyKind, String> {
        let kinds = [
            SharingPolicyKind::CapacityOverTime,
            SharingPolicyKind::NoOverCommit,
        ];
        find(name, "reservation policy", &kinds, |k| k.class_name())
    }
}

impl ReplannerKind {
    /// Hadoop's class name.
    pub fn class_name(self) -> String {
        match self {
            ReplannerKind::SimpleCapacity => format!("{PACKAGE}.planning.SimpleCapacityReplanner"),
        }
    }

    /// From a class name as a configuration file writes it.
    pub fn from_class_name(name: &str) -> Result<ReplannerKind, String> {
        if name.trim() == format!("{PACKAGE}.SimpleCapacityReplanner") {
            return Ok(ReplannerKind::SimpleCapacity);
        }
        find(
            name,
            "reservation planner",
            &[ReplannerKind::SimpleCapacity],
            |k| k.class_name(),
        )
    }
}

fn find<K: Copy>(
    name: &str,
    what: &str,
    kinds: &[K],
    class_name: impl Fn(K) -> String,
) -> Result<K, String> {
    let name = name.trim();
    kinds
        .iter()
        .copied()
        .find(|k| class_name(*k) == name)
        .ok_or_else(|| {
            let supported: Vec<String> = kinds.iter().map(|k| class_name(*k)).collect();
            format!(
                "unknown {what} class '{name}'; Weft supports {}",
                supported.join(", ")
            )
        })
}

/// A reservable queue's settings, with Hadoop's defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct ReservationQueueSettings {
    /// `reservation-agent` (default `AlignedPlannerWithGreedy`).
    pub agent: ReservationAgentKind,
    /// `reservation-policy` (default `CapacityOverTimePolicy`).
    pub policy: SharingPolicyKind,
    /// `reservation-planner` (default `SimpleCapacityReplanner`).
    pub planner: ReplannerKind,
    /// `reservation-window` in ms (default 86,400,000): the average share's window.
    pub window_ms: i64,
    /// `instantaneous-max-capacity` in percent (default 100): Hadoop divides by 100, so 1 here
    /// is 1%, not 100% as Hadoop's documentation says.
    pub instantaneous_max_capacity: f32,
    /// `average-capacity` in percent (default 100), read as the previous one.
    pub average_capacity: f32,
    /// `reservation-move-on-expiry` (default true): an ended reservation's apps move to the
    /// plan's default queue instead of being killed.
    pub move_on_expiry: bool,
    /// `reservation-enforcement-window` in ms (default 3,600,000): how far ahead the
    /// replanner looks.
    pub enforcement_window_ms: i64,
    /// `show-reservations-as-queues` (default false).
    pub show_reservations_as_queues: bool,
}

impl Default for ReservationQueueSettings {
    fn default() -> Self {
        ReservationQueueSettings {
            agent: ReservationAgentKind::AlignedPlannerWithGreedy,
            policy: SharingPolicyKind::CapacityOverTime,
            planner: ReplannerKind::SimpleCapacity,
            window_ms: 86_400_000,
            instantaneous_max_capacity: 100.0,
            average_capacity: 100.0,
            move_on_expiry: true,
            enforcement_window_ms: 3_600_000,
            show_reservations_as_queues: false,
        }
    }
}

impl ReservationQueueSettings {
    /// The settings of a reservable queue (`<reservation/>`) in a Fair allocation file: the
    /// file's global agent, policy and planner, Hadoop's defaults for the rest (the Fair file
    /// has no element for them).
    pub fn for_fair(config: &crate::AllocationConfig) -> ReservationQueueSettings {
        let defaults = ReservationQueueSettings::default();
        ReservationQueueSettings {
            agent: config.reservation_agent.unwrap_or(defaults.agent),
            policy: config.reservation_policy.unwrap_or(defaults.policy),
            planner: config.reservation_planner.unwrap_or(defaults.planner),
            ..defaults
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names_round_trip_and_legacy_packages_are_accepted() {
        for k in [
            ReservationAgentKind::Greedy,
            ReservationAgentKind::AlignedPlannerWithGreedy,
        ] {
            assert_eq!(
                ReservationAgentKind::from_class_name(&k.class_name()),
                Ok(k)
            );
        }
        assert_eq!(
            ReservationAgentKind::from_class_name(
                "org.apache.hadoop.yarn.server.resourcemanager.reservation.GreedyReservationAgent"
            ),
            Ok(ReservationAgentKind::Greedy)
        );
        assert_eq!(
            SharingPolicyKind::from_class_name(
                " org.apache.hadoop.yarn.server.resourcemanager.reservation.NoOverCommitPolicy "
            ),
            Ok(SharingPolicyKind::NoOverCommit)
        );
        assert_eq!(
            ReplannerKind::from_class_name(
                "org.apache.hadoop.yarn.server.resourcemanager.reservation.SimpleCapacityReplanner"
            ),
            Ok(ReplannerKind::SimpleCapacity)
        );
    }

    #[test]
    fn an_unknown_class_lists_the_supported_ones() {
        let err = SharingPolicyKind::from_class_name("my.Policy").unwrap_err();
        assert_eq!(
            err,
            "unknown reservation policy class 'my.Policy'; Weft supports \
             org.apache.hadoop.yarn.server.resourcemanager.reservation.CapacityOverTimePolicy, \
             org.apache.hadoop.yarn.server.resourcemanager.reservation.NoOverCommitPolicy"
        );
    }
}
