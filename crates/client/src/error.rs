//! What can go wrong talking to the RM, each naming the URL involved.

/// A client failure. Display texts are what the user sees after `error: `.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// No HTTP answer at all (connection refused, DNS, timeout).
    #[error("cannot reach {url}: {cause}")]
    Unreachable {
        /// The URL tried.
        url: String,
        /// The transport error.
        cause: String,
    },
    /// The server answered with Hadoop's `RemoteException` JSON.
    #[error("{url} answered {status} {exception}: {message}")]
    Remote {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// `RemoteException.exception`, e.g. `NotFoundException`.
        exception: String,
        /// `RemoteException.message`.
        message: String,
    },
    /// A non-2xx answer without a `RemoteException` body.
    #[error("{url} answered HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Http {
        /// The URL asked.
        url: String,
        /// The HTTP status.
        status: u16,
        /// The start of the body, if any.
        body: String,
    },
    /// A 2xx answer that is not the JSON expected.
    #[error("{url}: unexpected answer: {cause}")]
    BadAnswer {
        /// The URL asked.
        url: String,
        /// What was wrong with it.
        cause: String,
    },
    /// A bad RM address or configuration (flag, WEFT_RM, yarn-site.xml).
    #[error("{0}")]
    Config(String),
    /// A bad command line the argument parser could not catch.
    #[error("{0}")]
    Usage(String),
    /// Writing the report failed (e.g. a closed pipe).
    #[error("writing output: {0}")]
    Io(#[from] std::io::Error),
}

impl ClientError {
    /// The HTTP status of an answered request, if this error is one.
    pub fn status(&self) -> Option<u16> {
        match self {
            ClientError::Remote { status, .. } | ClientError::Http { status, .. } => Some(*status),
            _ => None,
        }
    }

    /// The RM's own message (RemoteException message or the body), else the whole text.
    pub fn remote_message(&self) -> String {
        match self {
            ClientError::Remote { message, .. } => message.clone(),
            ClientError::Http { body, status, .. } if !body.is_empty() => {
                format!("HTTP {status}: {body}")
            }
            other => other.to_string(),
        }
    }
}
