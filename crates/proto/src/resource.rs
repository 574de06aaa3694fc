//! Conversions between the wire [`Resource`](crate::v1::Resource) and
//! [`weft_types::Resource`].
//!
//! Memory and vcores map to the fixed [`MEMORY`] and [`VCORES`] indices; custom types travel by
//! name and need the cluster's [`ResourceTypes`] registry to find their index.

use crate::v1;
use thiserror::Error;
use weft_types::{ResourceTypes, MEMORY, VCORES};

/// A wire resource that does not fit the cluster's resource model.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum ResourceError {
    /// The message names a custom type the cluster does not declare.
    #[error("unknown resource type '{0}'")]
    UnknownType(String),
    /// A component is negative.
    #[error("resource type '{name}' has negative amount {value}")]
    Negative {
        /// The type's name.
        name: String,
        /// The amount sent.
        value: i64,
    },
}

impl v1::Resource {
    /// A wire resource with memory and vcores only.
    pub fn new(memory_mb: i64, vcores: i64) -> v1::Resource {
        v1::Resource {
            memory_mb,
            vcores,
            custom: Default::default(),
        }
    }

    /// The wire form of `r`; custom types with a zero amount are left out.
    pub fn from_types(r: &weft_types::Resource, types: &ResourceTypes) -> v1::Resource {
        let custom = (2..types.len())
            .filter(|&i| r.get(i) != 0)
            .map(|i| (types.name(i).to_string(), r.get(i)))
            .collect();
        v1::Resource {
            memory_mb: r.memory_mb(),
            vcores: r.vcores(),
            custom,
        }
    }

    /// The domain form, refusing unknown custom types and negative amounts (input from the
    /// network must not be able to put a negative allocation into the scheduler).
    pub fn to_types(&self, types: &ResourceTypes) -> Result<weft_types::Resource, ResourceError> {
        let check = |name: &str, value: i64| {
            if value < 0 {
                Err(ResourceError::Negative {
                    name: name.to_string(),
                    value,
                })
            } else {
                Ok(value)
            }
        };
        let mut out = weft_types::Resource::new(
            check("memory-mb", self.memory_mb)?,
            check("vcores", self.vcores)?,
        );
        for (name, value) in &self.custom {
            let index = types
                .index_of(name)
                .ok_or_else(|| ResourceError::UnknownType(name.clone()))?;
            // A custom map entry naming memory or vcores would silently override the fixed
            // fields; the fixed fields are authoritative.
            if index == MEMORY || index == VCORES {
                continue;
            }
            out.set(index, check(name, *value)?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_types::Resource;

    #[test]
    fn round_trips_memory_vcores_and_custom_types() {
        let types = ResourceTypes::with_custom(["gpu", "fpga"]).unwrap();
        let r = Resource::new(2048, 3).with(2, 1);
        let wire = v1::Resource::from_types(&r, &types);
        assert_eq!(wire.memory_mb, 2048);
        assert_eq!(wire.vcores, 3);
        assert_eq!(wire.custom.len(), 1);
        assert_eq!(wire.custom.get("gpu"), Some(&1));
        assert_eq!(wire.to_types(&types), Ok(r));
    }

    #[test]
    fn unknown_types_and_negative_amounts_are_refused() {
        let types = ResourceTypes::default();
        let mut wire = v1::Resource::new(1024, 1);
        wire.custom.insert("gpu".to_string(), 1);
        assert_eq!(
            wire.to_types(&types),
            Err(ResourceError::UnknownType("gpu".to_string()))
        );
        assert!(matches!(
            v1::Resource::new(-1, 1).to_types(&types),
            Err(ResourceError::Negative { .. })
        ));
    }
}
