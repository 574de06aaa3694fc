//! How an ApplicationMaster proves who it is, and where it finds the RM.
//!
//! The RM puts the attempt's secret token and the scheduler address into the AM container's
//! environment; the AM sends the attempt id and token with every `ApplicationMasterProtocol`
//! call as gRPC metadata, which the RM checks before touching any state.

use thiserror::Error;
use tonic::metadata::MetadataValue;

/// Metadata key carrying the application attempt id (`appattempt_<ts>_<seq>_<n>`).
pub const ATTEMPT_ID_METADATA: &str = "weft-attempt-id";
/// Metadata key carrying the attempt's secret token.
pub const AM_TOKEN_METADATA: &str = "weft-am-token";

/// Environment variable holding the AM's secret token.
pub const ENV_AM_TOKEN: &str = "WEFT_AM_TOKEN";
/// Environment variable holding `host:port` of the RM's ApplicationMasterProtocol service.
pub const ENV_RM_SCHEDULER_ADDRESS: &str = "WEFT_RM_SCHEDULER_ADDRESS";
/// Environment variable holding the container's own id (set by the NM, as in YARN).
pub const ENV_CONTAINER_ID: &str = "CONTAINER_ID";
/// Environment variable holding the attempt id (set by the RM for AM containers).
pub const ENV_APPLICATION_ATTEMPT_ID: &str = "APPLICATION_ATTEMPT_ID";

/// Metadata key carrying the NM token on ContainerManagement calls.
pub const NM_TOKEN_METADATA: &str = "weft-nm-token";

/// Wraps `message` in a request carrying `nm_token` (refused if it is not valid metadata).
pub fn with_nm_token<T>(
    message: T,
    nm_token: &str,
) -> Result<tonic::Request<T>, InvalidCredential> {
    let value: MetadataValue<_> = nm_token
        .parse()
        .map_err(|_| InvalidCredential { what: "NM token" })?;
    let mut request = tonic::Request::new(message);
    request.metadata_mut().insert(NM_TOKEN_METADATA, value);
    Ok(request)
}

/// The NM token a request carries, if any.
pub fn nm_token<T>(request: &tonic::Request<T>) -> Option<&str> {
    request
        .metadata()
        .get(NM_TOKEN_METADATA)
        .and_then(|v| v.to_str().ok())
}

/// An attempt id or token that cannot travel as gRPC metadata.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("{what} is not valid gRPC metadata (printable ASCII only)")]
pub struct InvalidCredential {
    /// Which value was rejected.
    pub what: &'static str,
}

/// The identity an AM presents on each call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AmCredentials {
    /// The application attempt id.
    pub attempt_id: String,
    /// The attempt's secret token.
    pub token: String,
}

impl AmCredentials {
    /// Wraps `message` in a request carrying these credentials.
    pub fn request<T>(&self, message: T) -> Result<tonic::Request<T>, InvalidCredential> {
        let attempt: MetadataValue<_> = self
            .attempt_id
            .parse()
            .map_err(|_| InvalidCredential { what: "attempt id" })?;
        let token: MetadataValue<_> = self
            .token
            .parse()
            .map_err(|_| InvalidCredential { what: "AM token" })?;
        let mut request = tonic::Request::new(message);
        request.metadata_mut().insert(ATTEMPT_ID_METADATA, attempt);
        request.metadata_mut().insert(AM_TOKEN_METADATA, token);
        Ok(request)
    }

    /// The credentials a request carries, if both keys are present and readable.
    pub fn from_request<T>(request: &tonic::Request<T>) -> Option<AmCredentials> {
        let get = |key: &str| {
            request
                .metadata()
                .get(key)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        };
        Some(AmCredentials {
            attempt_id: get(ATTEMPT_ID_METADATA)?,
            token: get(AM_TOKEN_METADATA)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_round_trip_through_metadata() {
        let creds = AmCredentials {
            attempt_id: "appattempt_1_0001_000001".to_string(),
            token: "s3cret".to_string(),
        };
        let request = creds.request(()).unwrap();
        assert_eq!(AmCredentials::from_request(&request), Some(creds));
        assert_eq!(AmCredentials::from_request(&tonic::Request::new(())), None);
    }

    #[test]
    fn nm_tokens_travel_as_metadata() {
        let request = with_nm_token((), "abc.def").unwrap();
        assert_eq!(nm_token(&request), Some("abc.def"));
        assert_eq!(nm_token(&tonic::Request::new(())), None);
        assert!(with_nm_token((), "a\nb").is_err());
    }

    #[test]
    fn control_characters_are_refused() {
        let creds = AmCredentials {
            attempt_id: "a\nb".to_string(),
            token: "t".to_string(),
        };
        assert_eq!(
            creds.request(()).unwrap_err(),
            InvalidCredential { what: "attempt id" }
        );
    }
}
