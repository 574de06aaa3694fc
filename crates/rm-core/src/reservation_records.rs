//! Reservations to and from the store's records (`weft_store::ReservationRecord`), which keep
//! memory and vcores only, like every other record of the store.

use weft_plan::{
    Interpreter, Reservation, ReservationDefinition, ReservationId, ReservationRequest, Skyline,
};
use weft_store::{
    AllocationRecord, ReservationDefinitionRecord, ReservationRecord, ReservationRequestRecord,
    ResourceRecord,
};
use weft_types::{Duration, Resource, Time};

/// The record of `reservation`, held in `queue`'s plan.
pub(crate) fn to_record(queue: &str, reservation: &Reservation) -> ReservationRecord {
    let d = &reservation.definition;
    ReservationRecord {
        id: reservation.id.to_string(),
        queue: queue.to_string(),
        user: reservation.user.clone(),
        acceptance_time: reservation.acceptance_time.0,
        start: reservation.start.0,
        end: reservation.end.0,
        definition: ReservationDefinitionRecord {
            arrival: d.arrival.0,
            deadline: d.deadline.0,
            name: d.name.clone(),
            priority: d.priority,
            recurrence_ms: d.recurrence.map(|p| p.0),
            interpreter: d.interpreter.ordinal(),
            requests: d
                .requests
                .iter()
                .map(|r| ReservationRequestRecord {
                    capability: resource_record(r.capability),
                    num_containers: r.num_containers,
                    concurrency: r.concurrency,
                    duration_ms: r.duration.0,
                })
                .collect(),
        },
        allocation: reservation
            .allocation
            .nonzero_segments()
            .into_iter()
            .map(|s| AllocationRecord {
                start: s.start.0,
                end: s.end.0,
                resource: resource_record(s.value),
            })
            .collect(),
    }
}

/// The reservation a record holds, or what is wrong with it.
pub(crate) fn from_record(record: &ReservationRecord) -> Result<Reservation, String> {
    let id: ReservationId = record.id.parse().map_err(|e| format!("{e}"))?;
    let def = &record.definition;
    let interpreter = [
        Interpreter::Any,
        Interpreter::All,
        Interpreter::Order,
        Interpreter::OrderNoGap,
    ]
    .into_iter()
    .find(|i| i.ordinal() == def.interpreter)
    .ok_or_else(|| format!("interpreter {} is not 0..3", def.interpreter))?;
    let mut allocation = Skyline::new();
    for step in &record.allocation {
        allocation
            .add(Time(step.start), Time(step.end), resource(step.resource))
            .map_err(|e| format!("allocation [{}, {}): {e}", step.start, step.end))?;
    }
    Ok(Reservation {
        id,
        user: record.user.clone(),
        definition: ReservationDefinition {
            arrival: Time(def.arrival),
            deadline: Time(def.deadline),
            name: def.name.clone(),
            priority: def.priority,
            recurrence: def.recurrence_ms.map(Duration),
            interpreter,
            requests: def
                .requests
                .iter()
                .map(|r| ReservationRequest {
                    capability: resource(r.capability),
                    num_containers: r.num_containers,
                    concurrency: r.concurrency,
                    duration: Duration(r.duration_ms),
                })
                .collect(),
        },
        start: Time(record.start),
        end: Time(record.end),
        allocation,
        acceptance_order: 0,
        acceptance_time: Time(record.acceptance_time),
    })
}

fn resource_record(r: Resource) -> ResourceRecord {
    ResourceRecord {
        memory_mb: u64::try_from(r.memory_mb()).unwrap_or(0),
        vcores: u32::try_from(r.get(1)).unwrap_or(0),
    }
}

fn resource(r: ResourceRecord) -> Resource {
    Resource::new(
        i64::try_from(r.memory_mb).unwrap_or(i64::MAX),
        i64::from(r.vcores),
    )
}
