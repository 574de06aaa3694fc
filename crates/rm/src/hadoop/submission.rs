//! An `ApplicationSubmissionContextProto` onto rm-core's [`Submission`]: the same fields the
//! REST submission fills, read from Hadoop's message.

use std::collections::BTreeMap;

use weft_hadoop_ipc::{exception, RpcError};
use weft_proto::hadoop::yarn::{
    ApplicationSubmissionContextProto, LocalResourceProto, LocalResourceTypeProto,
};
use weft_proto::hadoop::{self as wire};
use weft_rm_core::{LaunchContext, LocalResource, LocalResourceKind, Submission};
use weft_types::yarn_id::ApplicationId;
use weft_types::Resource;

/// The id and the submission `user` makes; a clear error for anything Weft cannot run.
pub(super) fn from_context(
    ctx: &ApplicationSubmissionContextProto,
    user: &str,
) -> Result<(ApplicationId, Submission), RpcError> {
    let id = wire::application_id(ctx.application_id.as_ref())
        .map_err(|e| RpcError::yarn(format!("submitApplication: {e}")))?;
    let am_resource = am_resource(ctx)?;
    let launch = match &ctx.am_container_spec {
        Some(clc) => LaunchContext {
            // Hadoop's command is a list of tokens making one shell command line.
            commands: if clc.command.is_empty() {
                Vec::new()
            } else {
                vec![clc.command.join(" ")]
            },
            environment: clc
                .environment
                .iter()
                .filter_map(|e| Some((e.key.clone()?, e.value.clone().unwrap_or_default())))
                .collect(),
            local_resources: local_resources(&clc.local_resources)?,
            tokens: clc.tokens.clone().unwrap_or_default(),
            // Hadoop clients (Spark's escapeForShell) quote for Hadoop's launch script.
            hadoop_quoting: true,
        },
        None => LaunchContext::default(),
    };
    let tags = ctx
        .application_tags
        .iter()
        .map(|t| t.trim().to_lowercase())
        .filter(|t| !t.is_empty())
        .collect();
    let queue = ctx.queue().trim();
    let sub = Submission {
        name: ctx.application_name().to_string(),
        user: user.to_string(),
        queue: (!queue.is_empty()).then(|| queue.to_string()),
        application_type: match ctx.application_type().trim() {
            "" => "YARN".to_string(),
            t => t.to_string(),
        },
        tags,
        priority: ctx
            .priority
            .as_ref()
            .and_then(|p| p.priority)
            .unwrap_or(0)
            .max(0),
        max_attempts: u32::try_from(ctx.max_app_attempts()).unwrap_or(0),
        am_resource,
        unmanaged_am: ctx.unmanaged_am(),
        launch,
        // Hadoop's `reservation_id` (field 15) is not in the vendored protos yet.
        reservation_id: None,
        demand: None,
    };
    Ok((id, sub))
}

/// The AM's size: the ANY request of `am_container_resource_request` (what Hadoop uses when
/// it is set), else `resource`.
fn am_resource(ctx: &ApplicationSubmissionContextProto) -> Result<Resource, RpcError> {
    let from_request = ctx
        .am_container_resource_request
        .iter()
        .find(|r| matches!(r.resource_name.as_deref(), None | Some("*")))
        .or_else(|| ctx.am_container_resource_request.first())
        .and_then(|r| r.capability.as_ref());
    match from_request.or(ctx.resource.as_ref()) {
        Some(r) => {
            let r = wire::resource(r);
            if r.memory_mb() <= 0 || r.vcores() <= 0 {
                return Err(RpcError::new(
                    exception::INVALID_RESOURCE_REQUEST,
                    format!(
                        "Invalid resource request: the AM container needs positive memory and vcores, got <memory:{}, vCores:{}>",
                        r.memory_mb(),
                        r.vcores()
                    ),
                ));
            }
            Ok(r)
        }
        None => Err(RpcError::new(
            exception::INVALID_RESOURCE_REQUEST,
            "Invalid resource request: the submission sets neither resource nor am_container_resource_request for the AM container",
        )),
    }
}

fn local_resources(
    entries: &[weft_proto::hadoop::yarn::StringLocalResourceMapProto],
) -> Result<BTreeMap<String, LocalResource>, RpcError> {
    let mut out = BTreeMap::new();
    for entry in entries {
        let Some(name) = entry.key.clone().filter(|k| !k.is_empty()) else {
            return Err(RpcError::yarn(
                "submitApplication: a local resource has no link name",
            ));
        };
        let Some(value) = &entry.value else {
            return Err(RpcError::yarn(format!(
                "submitApplication: local resource {name} has no value"
            )));
        };
        out.insert(name.clone(), local_resource(&name, value)?);
    }
    Ok(out)
}

/// A `LocalResourceProto` as the `file://` URL the NM localizes (spec §5.2: only `file` is
/// fetched today; other schemes are kept, and the NM fails the container naming them).
fn local_resource(name: &str, r: &LocalResourceProto) -> Result<LocalResource, RpcError> {
    let (url, kind) = weft_proto::hadoop::local_resource_location(r).map_err(|what| {
        RpcError::yarn(format!("submitApplication: local resource {name} {what}"))
    })?;
    let kind = match kind {
        LocalResourceTypeProto::Archive => LocalResourceKind::Archive,
        LocalResourceTypeProto::Pattern => LocalResourceKind::Pattern,
        LocalResourceTypeProto::File => LocalResourceKind::File,
    };
    Ok(LocalResource { url, kind })
}

#[cfg(test)]
mod tests {
    use weft_proto::hadoop::yarn::*;

    use super::*;

    fn context() -> ApplicationSubmissionContextProto {
        ApplicationSubmissionContextProto {
            application_id: Some(wire::application_id_proto(
                "application_1700000000000_0007".parse().unwrap(),
            )),
            application_name: Some("pi".into()),
            queue: Some("root.default".into()),
            priority: Some(wire::priority_proto(3)),
            am_container_spec: Some(ContainerLaunchContextProto {
                local_resources: vec![StringLocalResourceMapProto {
                    key: Some("__app__.jar".into()),
                    value: Some(LocalResourceProto {
                        resource: Some(UrlProto {
                            scheme: Some("file".into()),
                            file: Some("/staging/app.jar".into()),
                            ..Default::default()
                        }),
                        r#type: Some(LocalResourceTypeProto::Archive as i32),
                        ..Default::default()
                    }),
                }],
                environment: vec![StringStringMapProto {
                    key: Some("CLASSPATH".into()),
                    value: Some("{{PWD}}<CPS>*".into()),
                }],
                tokens: Some(b"HDTS\x01".to_vec()),
                command: vec![
                    "{{JAVA_HOME}}/bin/java".into(),
                    "-Xmx512m".into(),
                    "Main".into(),
                ],
                ..Default::default()
            }),
            max_app_attempts: Some(1),
            resource: Some(wire::resource_proto(Resource::new(512, 1))),
            application_type: Some("SPARK".into()),
            application_tags: vec!["Nightly".into()],
            ..Default::default()
        }
    }

    #[test]
    fn a_spark_like_context_maps_onto_the_submission() {
        let (id, s) = from_context(&context(), "alice").unwrap();
        assert_eq!(id.to_string(), "application_1700000000000_0007");
        assert_eq!((s.user.as_str(), s.name.as_str()), ("alice", "pi"));
        assert_eq!(s.queue.as_deref(), Some("root.default"));
        assert_eq!((s.priority, s.max_attempts), (3, 1));
        assert_eq!(s.am_resource, Resource::new(512, 1));
        assert_eq!(s.application_type, "SPARK");
        assert!(s.tags.contains("nightly"));
        assert_eq!(
            s.launch.commands,
            vec!["{{JAVA_HOME}}/bin/java -Xmx512m Main".to_string()]
        );
        assert_eq!(s.launch.environment["CLASSPATH"], "{{PWD}}<CPS>*");
        let jar = &s.launch.local_resources["__app__.jar"];
        assert_eq!(jar.url, "file:///staging/app.jar");
        assert_eq!(jar.kind, LocalResourceKind::Archive);
        assert!(s.launch.hadoop_quoting);
        assert_eq!(s.launch.tokens, b"HDTS\x01".to_vec());
    }

    #[test]
    fn the_am_request_wins_over_resource_and_bad_sizes_are_refused() {
        let mut ctx = context();
        ctx.am_container_resource_request = vec![ResourceRequestProto {
            resource_name: Some("*".into()),
            capability: Some(wire::resource_proto(Resource::new(1024, 2))),
            num_containers: Some(1),
            ..Default::default()
        }];
        assert_eq!(
            from_context(&ctx, "u").unwrap().1.am_resource,
            Resource::new(1024, 2)
        );
        ctx.am_container_resource_request.clear();
        ctx.resource = None;
        let e = from_context(&ctx, "u").unwrap_err();
        assert_eq!(e.class_name, exception::INVALID_RESOURCE_REQUEST);
        ctx.resource = Some(wire::resource_proto(Resource::new(0, 1)));
        assert!(from_context(&ctx, "u")
            .unwrap_err()
            .message
            .contains("positive"));
        let mut ctx = context();
        ctx.application_id = None;
        assert!(from_context(&ctx, "u")
            .unwrap_err()
            .message
            .contains("application id"));
    }
}
