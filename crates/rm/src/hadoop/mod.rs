//! Hadoop's own wire protocols on the RM, over Hadoop IPC (`weft-hadoop-ipc`): today
//! ApplicationClientProtocol on `yarn.resourcemanager.address` (:8032), so Hadoop's Java
//! `YarnClient` (and spark-submit) can create, submit, watch, move and kill applications
//! and read the cluster's nodes, queues and metrics. Every call goes through the driver, as
//! the REST handlers do; this module only converts.
//!
//! * `client_protocol` — the methods and their errors (Java exception classes).
//! * `records` — Weft's reports as YARN's records (`ApplicationReportProto`, nodes, queues).
//! * `submission` — `ApplicationSubmissionContextProto` onto rm-core's `Submission`.

mod client_protocol;
mod records;
mod submission;

pub(crate) use client_protocol::ClientProtocol;
