//! How refusals travel over gRPC.

use tonic::Status;
use weft_rm_core::RmError;

use crate::driver::DriverError;

/// The gRPC status of a refused input (the message says what was wrong).
pub(crate) fn rm_status(e: &RmError) -> Status {
    let m = e.to_string();
    match e {
        RmError::UnknownApp(_)
        | RmError::UnknownAttempt(_)
        | RmError::UnknownNode(_)
        | RmError::UnknownDemand(_) => Status::not_found(m),
        RmError::InvalidToken(_) | RmError::Rejected(_) | RmError::Forbidden(_) => {
            Status::permission_denied(m)
        }
        RmError::NotRegistered(_)
        | RmError::MoveRefused(_)
        | RmError::FinalState { .. }
        | RmError::DemandFinal { .. } => Status::failed_precondition(m),
        RmError::NotIssued(_)
        | RmError::AlreadySubmitted(_)
        | RmError::InvalidRequest(_)
        | RmError::AboveMaximum { .. }
        | RmError::UnknownContainer(_)
        | RmError::InvalidNode(_)
        | RmError::NodeLabels(_)
        | RmError::InvalidDemand(_) => Status::invalid_argument(m),
        RmError::Unsupported(_) => Status::unimplemented(m),
        RmError::Corrupt(_) | RmError::Scheduler(_) => Status::internal(m),
    }
}

/// The gRPC status when the driver gave no answer.
pub(crate) fn driver_status(e: DriverError) -> Status {
    Status::unavailable(e.to_string())
}
