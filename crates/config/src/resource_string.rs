//! Hadoop's resource string syntaxes (spec §14.3). Owned by the config helper.
