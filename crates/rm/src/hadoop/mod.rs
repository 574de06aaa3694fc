//! Hadoop's own wire protocols on the RM, over Hadoop IPC (`weft-hadoop-ipc`):
//! ApplicationClientProtocol on `yarn.resourcemanager.address` (:8032), so Hadoop's Java
//! `YarnClient` (and spark-submit) can create, submit, watch, move and kill applications
//! and read the cluster's nodes, queues and metrics; ApplicationMasterProtocol on
//! `yarn.resourcemanager.scheduler.address` (:8030, shared with Weft's gRPC AM service and
//! framed transport: `crate::shared_port`), so
//! Hadoop's `AMRMClient` can register, allocate and finish. Every call goes through the
//! driver, as the REST handlers do; this module only converts (and keeps the AM protocol's
//! per-attempt wire state).
//!
//! * `client_protocol` — the client methods and their errors (Java exception classes).
//! * `am_protocol` — the AM methods, the attempt's identity, response ids.
//! * `am_records` — containers, NM and container tokens, statuses as the AM protocol's records.
//! * `ask_table` — AMRMClient's absolute asks per (priority, place, size) as rm-core's asks.
//! * `records` — Weft's reports as YARN's records (`ApplicationReportProto`, nodes, queues).
//! * `submission` — `ApplicationSubmissionContextProto` onto rm-core's `Submission`.

mod am_protocol;
mod am_records;
mod ask_table;
mod client_protocol;
mod records;
mod submission;

pub(crate) use am_protocol::AmProtocol;
pub(crate) use client_protocol::ClientProtocol;
