//! Who may do what on this node's ContainerManagement service (YARN's
//! `ContainerManagerImpl` authorization): every call presents an NM token for one application
//! attempt on this node; a start also presents the container token of the allocation. Keys
//! come from the RM at registration and in heartbeats.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use tonic::Status;
use weft_proto::v1::{MasterKey as WireKey, StartContainerRequest};
use weft_tokens::{ContainerTokenIdentifier, KeyRing, NmTokenIdentifier, TokenError};
use weft_types::yarn_id::{ApplicationId, ContainerId};

/// Why a container call is refused, in the two kinds Hadoop's NM distinguishes: a token that
/// does not verify (`SecretManager.InvalidToken`) and anything else (`YarnException`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The container token is missing, malformed, unknown or forged.
    InvalidToken(String),
    /// The token is valid but does not allow this (expired, another node or application,
    /// already used).
    Denied(String),
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::InvalidToken(m) | Refusal::Denied(m) => f.write_str(m),
        }
    }
}

impl From<Refusal> for String {
    fn from(r: Refusal) -> String {
        r.to_string()
    }
}

/// The node's keys and the containers started under tokens not yet expired. Clones share.
#[derive(Debug, Clone)]
pub(crate) struct Security {
    node_id: String,
    keys: Arc<RwLock<KeyRing>>,
    /// Container -> its token's expiry: a container token starts its container once.
    started: Arc<Mutex<BTreeMap<ContainerId, u64>>>,
}

impl Security {
    pub(crate) fn new(node_id: String) -> Security {
        Security {
            node_id,
            keys: Arc::default(),
            started: Arc::default(),
        }
    }

    /// Takes in a key the RM sent (a malformed one is logged and ignored).
    pub(crate) fn learn(&self, key: Option<&WireKey>) {
        let Some(key) = key else { return };
        match key.to_key() {
            Ok(key) => {
                let id = key.id;
                let mut ring = self.keys.write().unwrap_or_else(PoisonError::into_inner);
                if ring.current_id() != Some(id) {
                    ring.learn(key);
                    tracing::info!(key_id = id, "learned a container-token master key");
                }
            }
            Err(e) => tracing::warn!("ignoring a master key from the RM: {e}"),
        }
    }

    /// The latest key id held, for heartbeats.
    pub(crate) fn current_key_id(&self) -> Option<u32> {
        self.keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .current_id()
    }

    /// The caller's NM token, checked: signed by a key this node holds and issued for it.
    pub(crate) fn caller(&self, token: Option<&str>) -> Result<NmTokenIdentifier, Status> {
        let ring = self.keys.read().unwrap_or_else(PoisonError::into_inner);
        let id = ring.verify_nm(token.unwrap_or_default()).map_err(|e| {
            Status::unauthenticated(format!("{e} (send it as weft-nm-token metadata)"))
        })?;
        if id.node_id != self.node_id {
            return Err(Status::permission_denied(format!(
                "the NM token was issued for node {}, not this node ({})",
                id.node_id, self.node_id
            )));
        }
        Ok(id)
    }

    /// Checks a container token's signature, key and expiry, and that it is for this node.
    pub(crate) fn verify_container_token(
        &self,
        token: &str,
        now_ms: u64,
    ) -> Result<ContainerTokenIdentifier, Refusal> {
        let granted = self
            .keys
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .verify_container(token, now_ms)
            .map_err(|e| match e {
                TokenError::Expired { .. } => Refusal::Denied(e.to_string()),
                other => Refusal::InvalidToken(other.to_string()),
            })?;
        if granted.node_id != self.node_id {
            return Err(Refusal::Denied(format!(
                "the container token is for node {}, not this node ({})",
                granted.node_id, self.node_id
            )));
        }
        Ok(granted)
    }

    /// A caller of `caller` (an attempt's application) may start only its own containers.
    pub(crate) fn authorize_app(
        caller: &impl std::fmt::Display,
        caller_app: ApplicationId,
        granted: &ContainerTokenIdentifier,
    ) -> Result<(), Refusal> {
        if granted.container.app != caller_app {
            return Err(Refusal::Denied(format!(
                "unauthorized: the NM token of {caller} cannot start container {} of another application",
                granted.container
            )));
        }
        Ok(())
    }

    /// Records a start, so the container's token cannot start it again.
    pub(crate) fn record_start(
        &self,
        granted: &ContainerTokenIdentifier,
        now_ms: u64,
    ) -> Result<(), Refusal> {
        let mut started = self.started.lock().unwrap_or_else(PoisonError::into_inner);
        started.retain(|_, expiry| *expiry >= now_ms);
        if started.contains_key(&granted.container) {
            return Err(Refusal::Denied(format!(
                "container {} was already started with this token",
                granted.container
            )));
        }
        started.insert(granted.container, granted.expiry_ms);
        Ok(())
    }

    /// Checks a start request against its container token and the caller's NM token; returns
    /// what the token grants (the user and size the container gets). Records the container so
    /// its token cannot start it again.
    pub(crate) fn authorize_start(
        &self,
        caller: &NmTokenIdentifier,
        req: &StartContainerRequest,
        now_ms: u64,
    ) -> Result<ContainerTokenIdentifier, String> {
        let granted = self.verify_container_token(&req.container_token, now_ms)?;
        if granted.container.to_string() != req.container_id {
            return Err(format!(
                "the container token is for {}, not {}",
                granted.container, req.container_id
            ));
        }
        Security::authorize_app(&caller.attempt, caller.attempt.app, &granted)?;
        if let Some(r) = &req.resource {
            if (r.memory_mb, r.vcores) != (granted.memory_mb, granted.vcores) {
                return Err(format!(
                    "the request asks for <memory:{}, vCores:{}> but the container token grants <memory:{}, vCores:{}>",
                    r.memory_mb, r.vcores, granted.memory_mb, granted.vcores
                ));
            }
        }
        if !req.user.is_empty() && req.user != granted.user {
            return Err(format!(
                "the request names user {} but the container token was issued to {}",
                req.user, granted.user
            ));
        }
        self.record_start(&granted, now_ms)?;
        Ok(granted)
    }

    /// Whether the caller may stop or query `container` (only its own application's).
    pub(crate) fn authorize_access(
        &self,
        caller: &NmTokenIdentifier,
        container: &str,
    ) -> Result<(), String> {
        let id: ContainerId = container.parse().map_err(|e| format!("{e}"))?;
        Security::authorize_app_access(&caller.attempt, caller.attempt.app, id)
    }

    /// Whether a caller of `caller_app` may stop or query container `id`.
    pub(crate) fn authorize_app_access(
        caller: &impl std::fmt::Display,
        caller_app: ApplicationId,
        id: ContainerId,
    ) -> Result<(), String> {
        if id.app != caller_app {
            return Err(format!(
                "unauthorized: the NM token of {caller} cannot touch container {id} of another application"
            ));
        }
        Ok(())
    }
}
