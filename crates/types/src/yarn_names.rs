//! YARN's enum names as its REST API and CLI spell them (filters accept them, tools list them).

/// `YarnApplicationState`, in declaration order (the order YARN prints state sets in).
/// `NEW_SAVING` exists in YARN; Weft never reports it but accepts it wherever YARN does.
pub const YARN_APP_STATES: [&str; 8] = [
    "NEW",
    "NEW_SAVING",
    "SUBMITTED",
    "ACCEPTED",
    "RUNNING",
    "FINISHED",
    "FAILED",
    "KILLED",
];

/// `NodeState`, in declaration order.
pub const YARN_NODE_STATES: [&str; 8] = [
    "NEW",
    "RUNNING",
    "UNHEALTHY",
    "DECOMMISSIONED",
    "LOST",
    "REBOOTED",
    "DECOMMISSIONING",
    "SHUTDOWN",
];
