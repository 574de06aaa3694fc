//! The scheduler configuration a scenario describes: its properties and allocation file,
//! parsed by `weft-config`, with every diagnostic placed back in the scenario file.

use crate::scenario::{AllocationsSource, Problem, Scenario, ScenarioError};
use weft_config::alloc_file::{parse_allocations_with, AllocationOptions};
use weft_config::capacity::parse_capacity;
use weft_config::{site, AllocationConfig, Diagnostic, Severity};
use weft_sched::{CapacitySchedulerConfig, SchedulerConfig, SchedulerKind};
use weft_types::ResourceTypes;

/// The initial configuration and the warnings its texts produced (each a full sentence that
/// names where it comes from, for standard error).
#[derive(Clone, Debug)]
pub struct InitialConfig {
    /// The configuration to start the scheduler with.
    pub config: SchedulerConfig,
    /// Warnings (unknown elements, deprecated properties...).
    pub warnings: Vec<String>,
}

/// Builds the initial configuration. An invalid one fails with every problem, each naming the
/// line and column inside the embedded text and (for inline text) the scenario line.
///
/// Fails too when the scenario's `allocations_file` was not provided
/// ([`Scenario::provide_file`]).
pub fn initial_config(scenario: &Scenario) -> Result<InitialConfig, ScenarioError> {
    let mut problems = Vec::new();
    let mut warnings: Vec<String> = scenario.warnings.iter().map(Problem::to_string).collect();
    let pairs = scenario
        .properties
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_str()));
    let mut properties = match site::from_pairs(pairs) {
        Ok((props, warns)) => {
            warnings.extend(
                warns
                    .iter()
                    .map(|d| property_problem(scenario, d).to_string()),
            );
            Some(props)
        }
        Err(diags) => {
            problems.extend(diags.0.iter().map(|d| property_problem(scenario, d)));
            None
        }
    };
    if let Some(props) = &mut properties {
        // The scenario's `scheduler` field names the kind (a class property must agree).
        let class_set = scenario
            .properties
            .iter()
            .any(|p| p.name.trim() == "yarn.resourcemanager.scheduler.class");
        if class_set && props.scheduler_kind != scenario.scheduler {
            problems.push(Problem {
                line: scenario.properties_line,
                field: "yarn.resourcemanager.scheduler.class".to_string(),
                message: format!(
                    "names the {} scheduler but the scenario's scheduler field is '{}'",
                    props.scheduler_kind.short_name(),
                    scenario.scheduler.short_name()
                ),
            });
        }
        props.scheduler_kind = scenario.scheduler;
        // The scenario's registry is a superset: yarn.resource-types first, then the types its
        // amounts mention.
        props.resource_types = scenario.resource_types.clone();
    }
    let options = AllocationOptions {
        no_terminal_rule_check: properties
            .as_ref()
            .is_some_and(|p| p.no_terminal_rule_check),
    };
    let types = properties.as_ref().map_or_else(
        || scenario.resource_types.clone(),
        |p| p.resource_types.clone(),
    );
    if scenario.scheduler == SchedulerKind::Capacity {
        return capacity_config(scenario, properties, &types, problems, warnings);
    }
    let allocations = match &scenario.allocations {
        None => Some(AllocationConfig::default()),
        Some(source) => {
            let (text, place) = match source {
                AllocationsSource::Inline(e) => {
                    (Some(e.text.as_str()), Place::Inline(e.first_line))
                }
                AllocationsSource::File { path, text, .. } => {
                    (text.as_deref(), Place::File(path.clone()))
                }
            };
            match text {
                None => {
                    let line = match source {
                        AllocationsSource::File { line, .. } => *line,
                        AllocationsSource::Inline(e) => e.key_line,
                    };
                    problems.push(Problem {
                        line,
                        field: "allocations_file".to_string(),
                        message: "the file was not read".to_string(),
                    });
                    None
                }
                Some(text) => match parse_allocations_with(text, &types, options) {
                    Ok((config, warns)) => {
                        warnings.extend(warns.iter().map(|d| place.problem(d).to_string()));
                        Some(config)
                    }
                    Err(diags) => {
                        problems.extend(
                            diags
                                .0
                                .iter()
                                .filter(|d| d.severity == Severity::Error)
                                .map(|d| place.problem(d)),
                        );
                        if diags.0.iter().all(|d| d.severity != Severity::Error) {
                            problems.extend(diags.0.iter().map(|d| place.problem(d)));
                        }
                        None
                    }
                },
            }
        }
    };
    match (properties, allocations) {
        (Some(properties), Some(allocations)) if problems.is_empty() => Ok(InitialConfig {
            config: SchedulerConfig::from_site(properties, allocations).map_err(|e| {
                ScenarioError {
                    file: scenario.file.clone(),
                    problems: vec![Problem {
                        line: 0,
                        field: "scheduler".to_string(),
                        message: e.to_string(),
                    }],
                }
            })?,
            warnings: warnings
                .into_iter()
                .map(|w| format!("{}: {w}", scenario.file))
                .collect(),
        }),
        _ => Err(ScenarioError {
            file: scenario.file.clone(),
            problems,
        }),
    }
}

/// The node labels the scenario's nodes carry (those added by events too): the registry a
/// Capacity Scheduler reads, as the RM's `-addToClusterNodeLabels` and `-replaceLabelsOnNode`
/// would make it.
pub(crate) fn node_partitions(scenario: &Scenario) -> weft_config::capacity::NodePartitions {
    let added = scenario.events.iter().filter_map(|e| match &e.action {
        crate::scenario::Action::AddNode(n) => Some(n),
        _ => None,
    });
    let mut out = weft_config::capacity::NodePartitions::default();
    for n in scenario.nodes.iter().chain(added) {
        if let Some(label) = &n.label {
            out.nodes.insert(n.host.to_ascii_lowercase(), label.clone());
            if !out.labels.contains(label) {
                out.labels.push(label.clone());
            }
        }
    }
    out.labels.sort();
    out
}

/// The Capacity Scheduler's initial configuration: the scenario's `capacity` text parsed as
/// capacity-scheduler.xml, each problem placed at its line in the scenario file.
fn capacity_config(
    scenario: &Scenario,
    properties: Option<weft_config::SchedulerProperties>,
    types: &ResourceTypes,
    mut problems: Vec<Problem>,
    mut warnings: Vec<String>,
) -> Result<InitialConfig, ScenarioError> {
    let mut capacity = None;
    match &scenario.allocations {
        Some(AllocationsSource::Inline(e)) => {
            let place = Place::Capacity(e.first_line);
            match parse_capacity(&e.text, types) {
                Ok((mut config, warns)) => {
                    warnings.extend(warns.iter().map(|d| place.problem(d).to_string()));
                    config.partitions = node_partitions(scenario);
                    capacity = Some(config);
                }
                Err(diags) => problems.extend(
                    diags
                        .0
                        .iter()
                        .filter(|d| d.severity == Severity::Error)
                        .map(|d| place.problem(d)),
                ),
            }
        }
        Some(AllocationsSource::File { line, .. }) => problems.push(Problem {
            line: *line,
            field: "capacity".to_string(),
            message: "the capacity-scheduler.xml text must be given inline (capacity = '''...''')"
                .to_string(),
        }),
        None => problems.push(Problem {
            line: 0,
            field: "capacity".to_string(),
            message: "scheduler = \"capacity\" needs the capacity-scheduler.xml text".to_string(),
        }),
    }
    match (properties, capacity) {
        (Some(properties), Some(capacity)) if problems.is_empty() => Ok(InitialConfig {
            config: SchedulerConfig::Capacity(CapacitySchedulerConfig {
                capacity,
                properties,
            }),
            warnings: warnings
                .into_iter()
                .map(|w| format!("{}: {w}", scenario.file))
                .collect(),
        }),
        _ => Err(ScenarioError {
            file: scenario.file.clone(),
            problems,
        }),
    }
}

/// Parses a `reload` event's allocation text; the error is the diagnostics' text.
pub fn parse_reload(
    text: &str,
    types: &ResourceTypes,
    options: AllocationOptions,
) -> Result<AllocationConfig, String> {
    parse_allocations_with(text, types, options)
        .map(|(config, _warnings)| config)
        .map_err(|d| d.to_string().replace('\n', "; "))
}

/// Where an allocation text came from, to place its diagnostics.
enum Place {
    /// Inline; its first line is this scenario line.
    Inline(u32),
    /// A separate file.
    File(String),
    /// Inline capacity-scheduler.xml; its first line is this scenario line.
    Capacity(u32),
}

impl Place {
    fn problem(&self, d: &Diagnostic) -> Problem {
        let message = match self {
            Place::Inline(first) if d.line > 0 => format!(
                "allocations (line {} of the scenario file): {d}",
                first + d.line - 1
            ),
            Place::Inline(_) => format!("allocations: {d}"),
            Place::File(path) => format!("allocations_file {path}: {d}"),
            Place::Capacity(first) if d.line > 0 => format!(
                "capacity (line {} of the scenario file): {d}",
                first + d.line - 1
            ),
            Place::Capacity(_) => format!("capacity: {d}"),
        };
        Problem {
            line: 0,
            field: String::new(),
            message,
        }
    }
}

/// A property diagnostic, placed at the property it names (or at `[properties]`).
fn property_problem(scenario: &Scenario, d: &Diagnostic) -> Problem {
    let named = scenario
        .properties
        .iter()
        .find(|p| d.path == p.name || d.message.contains(&p.name));
    match named {
        Some(p) => Problem {
            line: p.line,
            field: format!("properties.\"{}\"", p.name),
            message: if d.path == p.name {
                d.message.clone()
            } else {
                d.to_string()
            },
        },
        None => Problem {
            line: scenario.properties_line,
            field: "properties".to_string(),
            message: d.to_string(),
        },
    }
}
