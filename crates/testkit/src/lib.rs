//! Builders and helpers shared by Weft tests.
