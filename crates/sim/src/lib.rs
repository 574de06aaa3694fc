//! The discrete-event simulator. Owned by the sim helper.
