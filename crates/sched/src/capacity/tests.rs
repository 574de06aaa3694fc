//! Unit tests of the Capacity rules: the spec's worked figures through the engine.
