//! YARN's records and ApplicationClientProtocol messages as Hadoop's Java clients encode
//! them (packages `hadoop.yarn` and `hadoop.common`, Hadoop's field numbers), and their
//! conversions to `weft-types`: ids keep Hadoop's string forms through
//! [`weft_types::yarn_id`], resources are memory and vcores.

use thiserror::Error;
use weft_types::yarn_id::{ApplicationId, AttemptId, ContainerId};
use weft_types::Resource;

/// `hadoop.common`: the token message YARN records embed.
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
pub mod common {
    include!(concat!(env!("OUT_DIR"), "/hadoop.common.rs"));
}

/// `hadoop.yarn`: records and the client protocol's requests and responses.
#[allow(
    missing_docs,
    unreachable_pub,
    clippy::all,
    clippy::pedantic,
    clippy::nursery
)]
pub mod yarn {
    include!(concat!(env!("OUT_DIR"), "/hadoop.yarn.rs"));
}

use yarn::{
    ApplicationAttemptIdProto, ApplicationIdProto, ContainerIdProto, PriorityProto, ResourceProto,
};

/// The protocol name client → RM calls carry (`@ProtocolInfo` of Hadoop's PB interface).
pub const CLIENT_PROTOCOL: &str = "org.apache.hadoop.yarn.api.ApplicationClientProtocolPB";
/// The AM → RM protocol name (served in a later step; see docs/TODO.md).
pub const AM_PROTOCOL: &str = "org.apache.hadoop.yarn.api.ApplicationMasterProtocolPB";
/// The AM → NM protocol name (served in a later step; see docs/TODO.md).
pub const CONTAINER_MANAGEMENT_PROTOCOL: &str =
    "org.apache.hadoop.yarn.api.ContainerManagementProtocolPB";

/// An id a client sent that Weft cannot use.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum HadoopIdError {
    /// The message lacks the id.
    #[error("the request has no {0}")]
    Missing(&'static str),
    /// A field out of range (negative sequence numbers or timestamps).
    #[error("invalid {what}: {value}")]
    OutOfRange {
        /// Which field.
        what: &'static str,
        /// Its value.
        value: i64,
    },
}

/// `ApplicationIdProto` → `application_<ts>_<seq>`.
pub fn application_id(p: Option<&ApplicationIdProto>) -> Result<ApplicationId, HadoopIdError> {
    let p = p.ok_or(HadoopIdError::Missing("application id"))?;
    let ts = p.cluster_timestamp.unwrap_or_default();
    let seq = p.id.unwrap_or_default();
    Ok(ApplicationId {
        cluster_ts: u64::try_from(ts).map_err(|_| HadoopIdError::OutOfRange {
            what: "cluster timestamp",
            value: ts,
        })?,
        seq: u64::try_from(seq).map_err(|_| HadoopIdError::OutOfRange {
            what: "application sequence number",
            value: i64::from(seq),
        })?,
    })
}

/// `application_<ts>_<seq>` → `ApplicationIdProto` (values beyond Hadoop's int32 sequence and
/// int64 timestamp saturate; Weft's counters never get there).
pub fn application_id_proto(id: ApplicationId) -> ApplicationIdProto {
    ApplicationIdProto {
        id: Some(i32::try_from(id.seq).unwrap_or(i32::MAX)),
        cluster_timestamp: Some(i64::try_from(id.cluster_ts).unwrap_or(i64::MAX)),
    }
}

/// `ApplicationAttemptIdProto` → `appattempt_<ts>_<seq>_<n>`.
pub fn attempt_id(p: Option<&ApplicationAttemptIdProto>) -> Result<AttemptId, HadoopIdError> {
    let p = p.ok_or(HadoopIdError::Missing("application attempt id"))?;
    let app = application_id(p.application_id.as_ref())?;
    let n = p.attempt_id.unwrap_or_default();
    let attempt = u32::try_from(n).map_err(|_| HadoopIdError::OutOfRange {
        what: "attempt number",
        value: i64::from(n),
    })?;
    Ok(AttemptId { app, attempt })
}

/// `ContainerIdProto` → `container_<ts>_<seq>_<attempt>_<n>`: the number is the id's low 40
/// bits (the epoch above them is not used by Weft).
pub fn container_id(p: Option<&ContainerIdProto>) -> Result<ContainerId, HadoopIdError> {
    let p = p.ok_or(HadoopIdError::Missing("container id"))?;
    let attempt = attempt_id(p.app_attempt_id.as_ref())?;
    let raw = p.id.unwrap_or_default();
    let n = u64::try_from(raw).map_err(|_| HadoopIdError::OutOfRange {
        what: "container number",
        value: raw,
    })? & ((1 << 40) - 1);
    Ok(ContainerId {
        app: attempt.app,
        attempt: attempt.attempt,
        n,
    })
}

/// An attempt id as Hadoop encodes it.
pub fn attempt_id_proto(id: AttemptId) -> ApplicationAttemptIdProto {
    ApplicationAttemptIdProto {
        application_id: Some(application_id_proto(id.app)),
        attempt_id: Some(i32::try_from(id.attempt).unwrap_or(i32::MAX)),
    }
}

/// A container id as Hadoop encodes it: the deprecated app id is sent too, and the number
/// goes in the low 40 bits (epoch 0).
pub fn container_id_proto(id: ContainerId) -> ContainerIdProto {
    ContainerIdProto {
        app_id: Some(application_id_proto(id.app)),
        app_attempt_id: Some(attempt_id_proto(id.attempt_id())),
        id: Some(i64::try_from(id.n).unwrap_or(i64::MAX)),
    }
}

/// A resource's memory and vcores as Hadoop encodes them (the clients fall back to fields 1
/// and 2 when the resource map is absent).
pub fn resource_proto(r: Resource) -> ResourceProto {
    ResourceProto {
        memory: Some(r.memory_mb()),
        virtual_cores: Some(i32::try_from(r.vcores()).unwrap_or(i32::MAX)),
        resource_value_map: Vec::new(),
    }
}

/// A resource from Hadoop's message: memory and vcores, from fields 1 and 2 or from the
/// `memory-mb` / `vcores` entries of the resource map when those fields are absent.
pub fn resource(p: &ResourceProto) -> Resource {
    let from_map = |key: &str| {
        p.resource_value_map
            .iter()
            .find(|i| i.key == key)
            .and_then(|i| i.value)
    };
    let memory = p.memory.or_else(|| from_map("memory-mb")).unwrap_or(0);
    let vcores = p
        .virtual_cores
        .map(i64::from)
        .or_else(|| from_map("vcores"))
        .unwrap_or(0);
    Resource::new(memory, vcores)
}

/// A priority as Hadoop encodes it.
pub fn priority_proto(priority: i32) -> PriorityProto {
    PriorityProto {
        priority: Some(priority),
    }
}

/// A local resource's location as one URL, `scheme://host[:port]/path` (Hadoop's URL record in
/// parts; no scheme means `file`), and its type (none means FILE). `Err` says what is missing.
pub fn local_resource_location(
    r: &yarn::LocalResourceProto,
) -> Result<(String, yarn::LocalResourceTypeProto), &'static str> {
    let url = r.resource.as_ref().ok_or("has no URL")?;
    let path = url.file.as_deref().unwrap_or_default();
    if path.is_empty() {
        return Err("has no path");
    }
    let scheme = url.scheme.as_deref().unwrap_or("file");
    let host = url.host.as_deref().unwrap_or_default();
    let authority = match url.port {
        Some(p) if p > 0 => format!("{host}:{p}"),
        _ => host.to_string(),
    };
    let kind = r
        .r#type
        .and_then(|t| yarn::LocalResourceTypeProto::try_from(t).ok())
        .unwrap_or(yarn::LocalResourceTypeProto::File);
    Ok((format!("{scheme}://{authority}{path}"), kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_in_hadoops_string_form() {
        let app: ApplicationId = "application_1700000000000_0042".parse().unwrap();
        let p = application_id_proto(app);
        assert_eq!(
            (p.id, p.cluster_timestamp),
            (Some(42), Some(1_700_000_000_000))
        );
        assert_eq!(
            application_id(Some(&p)).unwrap().to_string(),
            "application_1700000000000_0042"
        );
        let c: ContainerId = "container_1700000000000_0042_01_000003".parse().unwrap();
        let p = container_id_proto(c);
        assert_eq!(p.id, Some(3));
        assert_eq!(p.app_attempt_id.unwrap().attempt_id, Some(1));
        assert_eq!(container_id(Some(&p)).unwrap(), c);
        assert_eq!(
            attempt_id(p.app_attempt_id.as_ref()).unwrap().to_string(),
            "appattempt_1700000000000_0042_000001"
        );
        assert_eq!(
            application_id(None),
            Err(HadoopIdError::Missing("application id"))
        );
        let negative = ApplicationIdProto {
            id: Some(-1),
            cluster_timestamp: Some(1),
        };
        assert!(application_id(Some(&negative))
            .unwrap_err()
            .to_string()
            .contains("-1"));
    }

    #[test]
    fn resources_read_the_fields_or_the_map() {
        let r = resource(&resource_proto(Resource::new(2048, 3)));
        assert_eq!((r.memory_mb(), r.vcores()), (2048, 3));
        let map_only = ResourceProto {
            memory: None,
            virtual_cores: None,
            resource_value_map: vec![
                yarn::ResourceInformationProto {
                    key: "memory-mb".into(),
                    value: Some(512),
                    ..Default::default()
                },
                yarn::ResourceInformationProto {
                    key: "vcores".into(),
                    value: Some(2),
                    ..Default::default()
                },
            ],
        };
        let r = resource(&map_only);
        assert_eq!((r.memory_mb(), r.vcores()), (512, 2));
    }
}
