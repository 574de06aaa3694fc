//! Placement rules (spec §12) and queue-name rules (spec §15). Owned by the placement helper.
