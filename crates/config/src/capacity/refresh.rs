//! Hadoop's refresh rules (spec §4.3) as a pure check between the running configuration and a
//! newly parsed one: what may not change while queues hold applications. The caller keeps the
//! running configuration when this refuses; nothing is applied here.

use super::model::*;
use super::validate::show;
use super::PREFIX;
use crate::{Diagnostic, Diagnostics, Severity};
use std::collections::BTreeMap;
use weft_types::{Resource, MEMORY, VCORES};

/// What the running scheduler knows that the files do not.
#[derive(Clone, Debug)]
pub struct RefreshContext<'a> {
    /// Applications (pending and running) per leaf, by full path; a leaf not listed has none.
    pub apps: &'a BTreeMap<String, u32>,
    /// The cluster's `yarn.scheduler.maximum-allocation-*`.
    pub cluster_maximum_allocation: Resource,
}

/// The state a queue of the running configuration is in: its configured state, except that a
/// stopped queue still holding applications is draining.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum LiveState {
    Running,
    Draining,
    Stopped,
}

impl LiveState {
    fn name(self) -> &'static str {
        match self {
            LiveState::Running => "RUNNING",
            LiveState::Draining => "DRAINING",
            LiveState::Stopped => "STOPPED",
        }
    }
}

/// Checks that `new` may replace `old`: queues removed or moved, leaves turned into parents,
/// managed parents, and maximum allocations (spec §4.3, §3.16). `Ok` means the new file may be
/// applied whole, with warnings about changes that only a restart applies (spec §4.2); `Err`
/// lists every refusal, each placed at the new file's property it concerns (or named with no
/// position when the new file has no such property).
pub fn check_refresh(
    old: &CapacityConfig,
    new: &CapacityConfig,
    context: &RefreshContext<'_>,
) -> Result<Vec<Diagnostic>, Diagnostics> {
    let mut refusals = Refusals {
        new,
        diags: Vec::new(),
    };
    let subtree_apps = subtree_apps(old, context.apps);
    let old_names = name_counts(old);
    let new_names = name_counts(new);
    for (i, q) in old.queues.iter().enumerate() {
        let state = live_state(q, subtree_apps[i]);
        let Some(n) = new.queue(&q.path) else {
            let moved_to = (old_names.get(q.name.as_str()) == Some(&1)
                && new_names.get(q.name.as_str()) == Some(&1))
            .then(|| new.queues.iter().find(|c| c.name == q.name))
            .flatten();
            let place = listing_key(new, &q.path);
            match moved_to {
                Some(to) => refusals.push(
                    &listing_key(new, &to.path),
                    format!("{} is moved from:{} to:{} after refresh, which is not allowed.", q.name, q.path, to.path),
                ),
                None if state != LiveState::Stopped => refusals.push(
                    &place,
                    format!(
                        "{} cannot be deleted from the capacity scheduler configuration, as the queue is not yet in stopped state. Current State : {}{}",
                        q.path,
                        state.name(),
                        apps_note(subtree_apps[i])
                    ),
                ),
                None => {}
            }
            continue;
        };
        if q.is_leaf() && !n.is_leaf() {
            let stopped = state == LiveState::Stopped
                || (n.state == QueueState::Stopped && subtree_apps[i] == 0);
            if !stopped {
                refusals.push(
                    &format!("{PREFIX}{}.queues", n.path),
                    format!(
                        "Can not convert the leaf queue: {} to parent queue since it is not yet in stopped state. Current State : {}{}",
                        q.path,
                        state.name(),
                        apps_note(subtree_apps[i])
                    ),
                );
            }
        }
        if !q.is_leaf() && !q.is_managed_parent() && n.is_managed_parent() {
            refusals.push(
                &format!("{PREFIX}{}.auto-create-child-queue.enabled", n.path),
                format!(
                    "Can not convert parent queue: {} to auto create enabled parent queue since it could have other pre-configured queues which is not supported",
                    q.path
                ),
            );
        }
        if q.is_managed_parent() && !n.is_managed_parent() {
            refusals.push(
                &format!("{PREFIX}{}.auto-create-child-queue.enabled", n.path),
                format!(
                    "Cannot convert auto create enabled parent queue: {} to leaf queue. Please check  parent queue's configuration {PREFIX}{}.auto-create-child-queue.enabled is set to true",
                    q.path, q.path
                ),
            );
        }
        if q.is_leaf() && n.is_leaf() {
            let cluster = context.cluster_maximum_allocation;
            let (was, will) = (
                effective_allocation(q, cluster),
                effective_allocation(n, cluster),
            );
            if will.memory_mb() < was.memory_mb() || will.vcores() < was.vcores() {
                refusals.push(
                    &allocation_key(new, n),
                    format!(
                        "Trying to reinitialize {} the maximum allocation size can not be decreased! Current setting: {}, trying to set it to: {}",
                        q.path,
                        show(&was),
                        show(&will)
                    ),
                );
            }
        }
    }
    refusals.diags.extend(
        check_maximum_allocations(new, context.cluster_maximum_allocation)
            .err()
            .map_or_else(Vec::new, |d| d.0),
    );
    if refusals.diags.is_empty() {
        Ok(startup_only_changes(old, new))
    } else {
        refusals.diags.sort_by_key(|d| (d.line, d.column));
        Err(Diagnostics(refusals.diags))
    }
}

/// Hadoop's load-time rule that needs the cluster's settings (spec §4.1 item 10): no queue's
/// maximum allocation may exceed the cluster's `yarn.scheduler.maximum-allocation-*`.
pub fn check_maximum_allocations(
    config: &CapacityConfig,
    cluster: Resource,
) -> Result<(), Diagnostics> {
    let mut refusals = Refusals {
        new: config,
        diags: Vec::new(),
    };
    for q in &config.queues {
        let Some(own) = q.maximum_allocation else {
            continue;
        };
        let inherited = q.parent.and_then(|p| config.queues[p].maximum_allocation);
        if inherited == Some(own) {
            continue; // reported at the ancestor that sets it
        }
        let over = [MEMORY, VCORES]
            .iter()
            .any(|&i| own.get(i) != Resource::UNBOUNDED.get(i) && own.get(i) > cluster.get(i));
        if over {
            refusals.push(
                &allocation_key(config, q),
                format!(
                    "Queue maximum allocation cannot be larger than the cluster setting for queue {} max allocation per queue: {} cluster setting: {}",
                    q.path,
                    show(&effective_allocation_unclamped(q, cluster)),
                    show(&cluster)
                ),
            );
        }
    }
    if refusals.diags.is_empty() {
        Ok(())
    } else {
        Err(Diagnostics(refusals.diags))
    }
}

/// Settings Hadoop reads only when the scheduler starts: a refresh keeps the running value, and
/// says so.
fn startup_only_changes(old: &CapacityConfig, new: &CapacityConfig) -> Vec<Diagnostic> {
    let (was, will) = (&old.globals, &new.globals);
    let mut changed = Vec::new();
    if was.resource_calculator != will.resource_calculator {
        changed.push("resource-calculator");
    }
    if was.schedule_asynchronously != will.schedule_asynchronously {
        changed.push("schedule-asynchronously.enable");
    }
    changed
        .into_iter()
        .map(|suffix| {
            let name = format!("{PREFIX}{suffix}");
            let (line, column) = new.positions.get(&name).copied().unwrap_or((0, 0));
            Diagnostic {
                severity: Severity::Warning,
                line,
                column,
                path: name,
                message: "changed, but read only when the scheduler starts; the running value is kept until a restart".to_string(),
            }
        })
        .collect()
}

struct Refusals<'a> {
    new: &'a CapacityConfig,
    diags: Vec<Diagnostic>,
}

impl Refusals<'_> {
    fn push(&mut self, property: &str, message: String) {
        let (line, column) = self.new.positions.get(property).copied().unwrap_or((0, 0));
        self.diags.push(Diagnostic {
            severity: Severity::Error,
            line,
            column,
            path: property.to_string(),
            message,
        });
    }
}

fn live_state(q: &CsQueue, apps: u64) -> LiveState {
    match (q.state, apps) {
        (QueueState::Running, _) => LiveState::Running,
        (QueueState::Stopped, 0) => LiveState::Stopped,
        (QueueState::Stopped, _) => LiveState::Draining,
    }
}

fn apps_note(apps: u64) -> String {
    if apps == 0 {
        String::new()
    } else {
        format!(" ({apps} application(s) still in it)")
    }
}

/// Applications under each queue of `config` (its own if a leaf, its leaves' if a parent).
fn subtree_apps(config: &CapacityConfig, apps: &BTreeMap<String, u32>) -> Vec<u64> {
    let mut totals = vec![0u64; config.queues.len()];
    // Children come after their parent, so a reverse pass adds each queue into its parent.
    for i in (0..config.queues.len()).rev() {
        let q = &config.queues[i];
        if q.is_leaf() {
            totals[i] += u64::from(apps.get(&q.path).copied().unwrap_or(0));
        }
        if let Some(p) = q.parent {
            totals[p] += totals[i];
        }
    }
    totals
}

fn name_counts(config: &CapacityConfig) -> BTreeMap<&str, usize> {
    let mut counts = BTreeMap::new();
    for q in &config.queues {
        *counts.entry(q.name.as_str()).or_insert(0) += 1;
    }
    counts
}

/// The `queues` property of the nearest ancestor of `path` that `config` has (the list that no
/// longer names the queue, or that names it now).
fn listing_key(config: &CapacityConfig, path: &str) -> String {
    let mut parent = path;
    while let Some((up, _)) = parent.rsplit_once('.') {
        if config.queue(up).is_some() {
            return format!("{PREFIX}{up}.queues");
        }
        parent = up;
    }
    format!("{PREFIX}root.queues")
}

/// The property that sets `q`'s maximum allocation: its own, else the nearest ancestor's.
fn allocation_key(config: &CapacityConfig, q: &CsQueue) -> String {
    let mut at = Some(q);
    while let Some(queue) = at {
        for suffix in [
            "maximum-allocation",
            "maximum-allocation-mb",
            "maximum-allocation-vcores",
        ] {
            let name = format!("{PREFIX}{}.{suffix}", queue.path);
            if config.positions.contains_key(&name) {
                return name;
            }
        }
        at = queue.parent.map(|p| &config.queues[p]);
    }
    format!("{PREFIX}{}.maximum-allocation-mb", q.path)
}

/// The largest container `q` takes: its own maximum per type, capped by the cluster's.
fn effective_allocation(q: &CsQueue, cluster: Resource) -> Resource {
    q.maximum_allocation
        .map_or(cluster, |own| own.cw_min(cluster))
}

fn effective_allocation_unclamped(q: &CsQueue, cluster: Resource) -> Resource {
    let mut r = cluster;
    if let Some(own) = q.maximum_allocation {
        for i in [MEMORY, VCORES] {
            if own.get(i) != Resource::UNBOUNDED.get(i) {
                r.set(i, own.get(i));
            }
        }
    }
    r
}
