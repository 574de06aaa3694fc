//! Reservation ACLs (Hadoop's `ReservationsACLsManager` and `ClientRMService`'s
//! `checkReservationACLs`): with `yarn.acl.reservation-enable` on, a caller may submit to a
//! plan queue by its `aclSubmitReservations`, list by `aclListReservations`, update and delete
//! by `aclAdministerReservations`; the administer ACL also grants the other two, and the
//! reservation's own user may always update, delete and list it. An ACL the queue does not
//! set allows everyone (Hadoop's Fair manager: "Give access if acl is undefined for queue";
//! Capacity's default is `*`). Hadoop looks the ACLs up under the queue name as the request
//! gives it, which the Fair manager's full-name keys miss for a short name; Weft looks them up
//! under the plan queue's full name.

use weft_config::Acl;
use weft_plan::ReservationId;
use weft_sched::SchedulerConfig;

use crate::reservations::ReservationError;

/// The operation an ACL guards (Hadoop's `ReservationACL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReservationAcl {
    /// Submit reservations to the plan queue.
    Submit,
    /// List the plan queue's reservations.
    List,
    /// Update or delete them (and, implied, submit and list).
    Administer,
}

impl ReservationAcl {
    /// Hadoop's enum name, as its refusal names it.
    pub fn hadoop_name(self) -> &'static str {
        match self {
            ReservationAcl::Submit => "SUBMIT_RESERVATIONS",
            ReservationAcl::List => "LIST_RESERVATIONS",
            ReservationAcl::Administer => "ADMINISTER_RESERVATIONS",
        }
    }
}

/// The ACL `queue` (a full name) sets for `acl`, if any. Capacity's reservation ACL keys are
/// read but not modelled yet, so under Capacity every ACL is unset (allows everyone).
fn configured(config: &SchedulerConfig, queue: &str, acl: ReservationAcl) -> Option<Acl> {
    let SchedulerConfig::Fair(fair) = config else {
        return None;
    };
    let q = fair.allocations.queues.get(queue)?;
    match acl {
        ReservationAcl::Submit => q.acl_submit_reservations.clone(),
        ReservationAcl::List => q.acl_list_reservations.clone(),
        ReservationAcl::Administer => q.acl_administer_reservations.clone(),
    }
}

impl crate::RmCore {
    /// `checkReservationACLs`: whether `user` may do `acl` on the plan queue `queue` (full
    /// name), given the reservation's own user when the request names one.
    pub(crate) fn check_reservation_acl(
        &self,
        user: &str,
        acl: ReservationAcl,
        queue: &str,
        reservation: Option<&ReservationId>,
    ) -> Result<(), ReservationError> {
        if !self.config.reservation_acls_enabled {
            return Ok(());
        }
        let creator = reservation
            .and_then(|id| self.reservations().find(id))
            .map(|r| r.user.as_str());
        if creator == Some(user) {
            return Ok(());
        }
        let groups = self.groups_of(user);
        let allows = |a: ReservationAcl| {
            configured(&self.config.scheduler, queue, a).is_none_or(|acl| acl.allows(user, &groups))
        };
        if allows(acl) || allows(ReservationAcl::Administer) {
            return Ok(());
        }
        Err(ReservationError::AccessDenied {
            user: user.to_string(),
            operation: acl.hadoop_name(),
            queue: queue.to_string(),
        })
    }
}
