//! Demands to and from their store records: what §3.4's persistence keeps (the spec, every
//! transition with its absolute time, START and the counts). Windows and deadlines are not
//! stored: they are resolved again from the spec and the stored acceptance time, so timers
//! come back exactly as they were.

use weft_demand_lang::window::Clock;
use weft_demand_lang::{parse_document, resolve, Strategy};
use weft_store::{DemandRecord, DemandTransitionRecord};
use weft_types::yarn_id::ApplicationId;
use weft_types::Time;

use super::DemandTransition;
use super::{Demand, DemandReason, Scope};
use crate::{RmCore, RmError};

pub(crate) fn to_record(d: &Demand) -> DemandRecord {
    DemandRecord {
        key: d.key.clone(),
        user: d.user.clone(),
        queue: d.queue.clone(),
        spec: d.spec_json.clone(),
        accepted_at_ms: d.accepted_at.as_millis(),
        timeline: d
            .timeline
            .iter()
            .map(|t| DemandTransitionRecord {
                state: t.state,
                reason: t.reason.as_str().to_owned(),
                detail: t.detail.clone(),
                at_ms: t.at.as_millis(),
            })
            .collect(),
        first_allocation_ms: d.first_allocation.map(Time::as_millis),
        missed_opportunities: d.missed,
        allocated: d.allocated,
        claimed: d.claimed,
        completed: d.completed,
        am_asks: d.am.as_ref().map(|am| am.placement.clone()),
        plan: d.plan.as_ref().map(super::planning::DemandPlan::to_record),
        containers: if d.state().is_final() {
            Vec::new()
        } else {
            super::containers::to_records(&d.containers)
        },
    }
}

fn scope_of(key: &str) -> Option<(Scope, u64)> {
    let (scope, id) = key.rsplit_once('/')?;
    let id = id.parse::<u64>().ok()?;
    let scope = match scope.strip_prefix('~') {
        Some(user) => Scope::User(user.to_owned()),
        None => Scope::App(scope.parse::<ApplicationId>().ok()?),
    };
    Some((scope, id))
}

fn from_record(
    record: &DemandRecord,
    default: Strategy,
    offset_minutes: i16,
) -> Result<Demand, String> {
    let (scope, id) = scope_of(&record.key).ok_or("its key names no application or user")?;
    let submission = parse_document(&record.spec, default, &|_| true)
        .map_err(|e| format!("its spec does not read: {e}"))?;
    let spec = submission
        .demands
        .into_iter()
        .next()
        .ok_or("its spec holds no demand")?;
    if spec.demand_id != id {
        return Err(format!("its spec is demand {}", spec.demand_id));
    }
    let clock = Clock {
        now: record.accepted_at_ms,
        offset_minutes,
    };
    let times = resolve(&spec, "", clock, default).map_err(|e| {
        let problems: Vec<String> = e.iter().map(ToString::to_string).collect();
        format!("its times do not resolve: {}", problems.join("; "))
    })?;
    let mut timeline = Vec::with_capacity(record.timeline.len());
    for t in &record.timeline {
        let reason = DemandReason::from_name(&t.reason)
            .ok_or_else(|| format!("unknown reason '{}'", t.reason))?;
        timeline.push(DemandTransition {
            state: t.state,
            reason,
            detail: t.detail.clone(),
            at: Time(t.at_ms),
        });
    }
    if timeline.is_empty() {
        return Err("its timeline is empty".to_owned());
    }
    let plan = record
        .plan
        .as_ref()
        .map(super::planning::DemandPlan::from_record)
        .transpose()?;
    Ok(Demand {
        key: record.key.clone(),
        scope,
        user: record.user.clone(),
        queue: record.queue.clone(),
        spec,
        spec_json: record.spec.clone(),
        accepted_at: Time(record.accepted_at_ms),
        times,
        timeline,
        first_allocation: record.first_allocation_ms.map(Time),
        missed: record.missed_opportunities,
        allocated: record.allocated,
        claimed: record.claimed,
        completed: record.completed,
        am: record
            .am_asks
            .clone()
            .map(|placement| super::am_path::AmAsks {
                placement,
                ..Default::default()
            }),
        plan,
        containers: super::containers::from_records(record)?,
    })
}

impl RmCore {
    /// Puts the stored demands back (after the apps, so an app's demands find it), then runs
    /// their timers at `now`: whatever came due while the RM was down happens now.
    pub(crate) fn restore_demands(
        &mut self,
        now: Time,
        records: &[DemandRecord],
    ) -> Result<(), RmError> {
        let default = self.config.demand_default_strategy;
        let offset = self.config.demand_timezone_minutes;
        for record in records {
            let demand = from_record(record, default, offset)
                .map_err(|why| RmError::Corrupt(format!("demand {}: {why}", record.key)))?;
            self.demands.by_key.insert(record.key.clone(), demand);
        }
        // Before the timers: a demand failing at once still finds its containers when their
        // NMs report them.
        self.expect_demand_containers();
        self.advance_demands(now);
        // The scheduler lost every ask: the AM demands still ALLOCATING ask again for what
        // they lack (held gang members were never launched, so a gang starts over).
        let keys: Vec<String> = self
            .demands
            .by_key
            .iter()
            .filter(|(_, d)| d.am.is_some())
            .map(|(k, _)| k.clone())
            .collect();
        for key in keys {
            self.sync_demand_asks(now, &key);
        }
        Ok(())
    }
}
