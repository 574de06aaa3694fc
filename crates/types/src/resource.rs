//! The resource vector: memory in MB, virtual cores, and further countable types (e.g. `gpu`).
//!
//! Arithmetic saturates instead of overflowing: Hadoop's own tests push values near `i64::MAX`
//! (an unbounded maximum is `i64::MAX` memory and `i32::MAX` vcores), and sums of such values must
//! clamp, never wrap.

use std::fmt;
use thiserror::Error;

/// How many resource types a vector can carry: memory, vcores and up to four custom types.
pub const MAX_RESOURCE_TYPES: usize = 6;
/// Index of memory (MB) in a resource vector.
pub const MEMORY: usize = 0;
/// Index of virtual cores in a resource vector.
pub const VCORES: usize = 1;

/// A vector of resource amounts, indexed by the positions a [`ResourceTypes`] registry gives.
///
/// It is `Copy` and fixed-size on purpose: the scheduler's hot path adds and compares these
/// millions of times per second, and a heap allocation per vector would dominate.
pub type Resource = Lanes<MAX_RESOURCE_TYPES>;

/// A resource vector of `N` lanes: memory, vcores, then `N - 2` custom types. Every crate uses
/// [`Resource`] (six lanes); the lane count is generic so that a scheduler core can keep its
/// hot objects in two lanes when the registry holds only memory and vcores (a six-lane vector
/// is 48 bytes, a two-lane one 16), converting with [`Lanes::narrow`] and [`Lanes::widen`] at
/// its boundary. `N` is at least 2.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Lanes<const N: usize> {
    values: [i64; N],
}

impl<const N: usize> Default for Lanes<N> {
    fn default() -> Self {
        Lanes::ZERO
    }
}

impl<const N: usize> Lanes<N> {
    /// All zeros (Hadoop's `Resources.none()`).
    pub const ZERO: Lanes<N> = Lanes { values: [0; N] };

    /// Every component at its maximum (Hadoop's `Resources.unbounded()`): `i64::MAX` for memory
    /// and custom types, `i32::MAX` for vcores, which Hadoop stores as an int.
    pub const UNBOUNDED: Lanes<N> = {
        let mut values = [i64::MAX; N];
        values[VCORES] = i32::MAX as i64;
        Lanes { values }
    };

    /// A vector with memory and vcores set and every custom type zero.
    pub const fn new(memory_mb: i64, vcores: i64) -> Lanes<N> {
        let mut values = [0; N];
        values[MEMORY] = memory_mb;
        values[VCORES] = vcores;
        Lanes { values }
    }

    /// A vector with every component set to `v` (vcores clamped to `i32::MAX`).
    pub fn splat(v: i64) -> Lanes<N> {
        let mut r = Lanes { values: [v; N] };
        r.values[VCORES] = v.min(i32::MAX as i64);
        r
    }

    /// Memory in MB.
    #[inline]
    pub fn memory_mb(&self) -> i64 {
        self.values[MEMORY]
    }

    /// Virtual cores.
    #[inline]
    pub fn vcores(&self) -> i64 {
        self.values[VCORES]
    }

    /// The amount of the type at `index`.
    #[inline]
    pub fn get(&self, index: usize) -> i64 {
        self.values[index]
    }

    /// Sets the amount of the type at `index`.
    #[inline]
    pub fn set(&mut self, index: usize, value: i64) {
        self.values[index] = value;
    }

    /// This vector with the type at `index` set to `value`.
    #[inline]
    pub fn with(mut self, index: usize, value: i64) -> Lanes<N> {
        self.values[index] = value;
        self
    }

    /// All components, in registry order.
    pub fn values(&self) -> &[i64; N] {
        &self.values
    }

    #[inline]
    fn zip(self, other: Lanes<N>, f: impl Fn(i64, i64) -> i64) -> Lanes<N> {
        let mut out = self;
        for (o, b) in out.values.iter_mut().zip(other.values) {
            *o = f(*o, b);
        }
        out
    }

    /// Component-wise sum, clamped at the `i64` limits.
    #[inline]
    pub fn saturating_add(self, other: Lanes<N>) -> Lanes<N> {
        self.zip(other, i64::saturating_add)
    }

    /// Component-wise difference, clamped at the `i64` limits.
    #[inline]
    pub fn saturating_sub(self, other: Lanes<N>) -> Lanes<N> {
        self.zip(other, i64::saturating_sub)
    }

    /// Component-wise sum, or `None` if any component overflows.
    pub fn checked_add(self, other: Lanes<N>) -> Option<Lanes<N>> {
        let mut out = self;
        for (o, b) in out.values.iter_mut().zip(other.values) {
            *o = o.checked_add(b)?;
        }
        Some(out)
    }

    /// Component-wise difference, or `None` if any component overflows.
    pub fn checked_sub(self, other: Lanes<N>) -> Option<Lanes<N>> {
        let mut out = self;
        for (o, b) in out.values.iter_mut().zip(other.values) {
            *o = o.checked_sub(b)?;
        }
        Some(out)
    }

    /// Each component multiplied by `n`, clamped.
    #[inline]
    pub fn saturating_mul(self, n: i64) -> Lanes<N> {
        let mut out = self;
        for v in out.values.iter_mut() {
            *v = v.saturating_mul(n);
        }
        out
    }

    /// Component-wise minimum (Hadoop's `componentwiseMin`).
    #[inline]
    pub fn cw_min(self, other: Lanes<N>) -> Lanes<N> {
        self.zip(other, i64::min)
    }

    /// Component-wise maximum (Hadoop's `componentwiseMax`).
    #[inline]
    pub fn cw_max(self, other: Lanes<N>) -> Lanes<N> {
        self.zip(other, i64::max)
    }

    /// Every component floored at zero.
    #[inline]
    pub fn clamp_non_negative(self) -> Lanes<N> {
        self.cw_max(Lanes::ZERO)
    }

    /// True when every component of `self` is at most the matching component of `other`.
    #[inline]
    pub fn fits_in(&self, other: &Lanes<N>) -> bool {
        self.values
            .iter()
            .zip(other.values.iter())
            .all(|(a, b)| a <= b)
    }

    /// True when every component is zero (Hadoop's `Resources.isNone`).
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.values.iter().all(|v| *v == 0)
    }

    /// True when some component is above zero.
    #[inline]
    pub fn any_positive(&self) -> bool {
        self.values.iter().any(|v| *v > 0)
    }

    /// Each component multiplied by `f` and truncated toward zero (Java's `(long)` cast:
    /// saturating at the limits, NaN becomes 0).
    pub fn mul_trunc(self, f: f64) -> Lanes<N> {
        let mut out = self;
        for v in out.values.iter_mut() {
            *v = (*v as f64 * f) as i64;
        }
        out
    }

    /// Each component multiplied by `f` and rounded up.
    pub fn mul_ceil(self, f: f64) -> Lanes<N> {
        let mut out = self;
        for v in out.values.iter_mut() {
            *v = (*v as f64 * f).ceil() as i64;
        }
        out
    }

    /// The same amounts in `M` lanes, or `None` when a lane at `M` or above is not zero (a
    /// custom type the narrower vector cannot carry: refused, never dropped).
    pub fn narrow<const M: usize>(self) -> Option<Lanes<M>> {
        if self.values.iter().skip(M).any(|v| *v != 0) {
            return None;
        }
        let mut out = Lanes::<M>::ZERO;
        for (o, v) in out.values.iter_mut().zip(self.values) {
            *o = v;
        }
        Some(out)
    }

    /// The same amounts in `M >= N` lanes, the added ones zero.
    pub fn widen<const M: usize>(self) -> Lanes<M> {
        const { assert!(M >= N, "widen cannot drop lanes: use narrow") };
        let mut out = Lanes::<M>::ZERO;
        out.values[..N].copy_from_slice(&self.values);
        out
    }
}

impl<const N: usize> fmt::Debug for Lanes<N> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<memory:{}, vCores:{}", self.memory_mb(), self.vcores())?;
        for (i, v) in self.values.iter().enumerate().skip(2) {
            if *v != 0 {
                write!(f, ", r{i}:{v}")?;
            }
        }
        write!(f, ">")
    }
}

/// The registry of resource type names, mapping each to its index in a [`Resource`].
///
/// Index 0 is always `memory-mb` and index 1 `vcores`; custom types (Hadoop's
/// `yarn.resource-types`) follow in declaration order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceTypes {
    names: Vec<String>,
}

/// More custom resource types were declared than a [`Resource`] can carry.
#[derive(Debug, Error, PartialEq, Eq)]
#[error("resource type '{name}' cannot be added: at most {max} resource types are supported")]
pub struct TooManyResourceTypes {
    /// The type that did not fit.
    pub name: String,
    /// The limit.
    pub max: usize,
}

impl Default for ResourceTypes {
    fn default() -> Self {
        ResourceTypes {
            names: vec!["memory-mb".to_string(), "vcores".to_string()],
        }
    }
}

impl ResourceTypes {
    /// A registry with memory, vcores and the given custom types.
    pub fn with_custom<'a>(
        custom: impl IntoIterator<Item = &'a str>,
    ) -> Result<ResourceTypes, TooManyResourceTypes> {
        let mut types = ResourceTypes::default();
        for name in custom {
            types.register(name)?;
        }
        Ok(types)
    }

    /// Adds a custom type (or finds it) and returns its index.
    pub fn register(&mut self, name: &str) -> Result<usize, TooManyResourceTypes> {
        if let Some(i) = self.index_of(name) {
            return Ok(i);
        }
        if self.names.len() >= MAX_RESOURCE_TYPES {
            return Err(TooManyResourceTypes {
                name: name.to_string(),
                max: MAX_RESOURCE_TYPES,
            });
        }
        self.names.push(name.to_string());
        Ok(self.names.len() - 1)
    }

    /// The index of a type by its Hadoop name (`memory-mb`, `memory`, `vcores`, or a custom name).
    pub fn index_of(&self, name: &str) -> Option<usize> {
        match name {
            "memory-mb" | "memory" => Some(MEMORY),
            "vcores" => Some(VCORES),
            _ => self.names.iter().position(|n| n == name),
        }
    }

    /// How many types are registered (at least 2).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Always false: memory and vcores are always present.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The Hadoop name of the type at `index`.
    pub fn name(&self, index: usize) -> &str {
        &self.names[index]
    }

    /// The key used for the type in JSON outputs: `memory_mb`, `vcores`, or the custom name.
    pub fn output_name(&self, index: usize) -> &str {
        match index {
            MEMORY => "memory_mb",
            _ => &self.names[index],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn unbounded_sums_saturate_instead_of_wrapping() {
        let sum = Resource::UNBOUNDED.saturating_add(Resource::new(1, 1));
        assert_eq!(sum.memory_mb(), i64::MAX);
        assert_eq!(sum.vcores(), i32::MAX as i64 + 1);
        let big = Resource::new(i64::MAX - 5, 0).saturating_add(Resource::new(i64::MAX - 5, 0));
        assert_eq!(big.memory_mb(), i64::MAX);
        let low = Resource::new(i64::MIN + 1, 0).saturating_sub(Resource::new(10, 0));
        assert_eq!(low.memory_mb(), i64::MIN);
    }

    #[test]
    fn fits_in_requires_every_component() {
        let node = Resource::new(4096, 4).with(2, 1);
        assert!(Resource::new(4096, 4).fits_in(&node));
        assert!(!Resource::new(4097, 1).fits_in(&node));
        assert!(!Resource::new(1, 1).with(2, 2).fits_in(&node));
    }

    #[test]
    fn multiplication_truncates_or_rounds_up() {
        let r = Resource::new(1000, 3);
        assert_eq!(r.mul_trunc(0.5), Resource::new(500, 1));
        assert_eq!(r.mul_ceil(0.5), Resource::new(500, 2));
        assert_eq!(Resource::UNBOUNDED.mul_trunc(2.0).memory_mb(), i64::MAX);
    }

    #[test]
    fn narrowing_refuses_a_custom_lane_and_widening_restores_the_vector() {
        let plain = Resource::new(4096, 4);
        let two: Lanes<2> = plain.narrow().unwrap();
        assert_eq!(two, Lanes::<2>::new(4096, 4));
        assert_eq!(two.widen::<MAX_RESOURCE_TYPES>(), plain);
        assert_eq!(plain.with(5, 1).narrow::<2>(), None);
        assert_eq!(
            Lanes::<2>::UNBOUNDED.widen::<MAX_RESOURCE_TYPES>().get(2),
            0
        );
        assert_eq!(std::mem::size_of::<Lanes<2>>(), 16);
    }

    #[test]
    fn registry_places_custom_types_after_memory_and_vcores() {
        let mut types = ResourceTypes::with_custom(["gpu"]).unwrap();
        assert_eq!(types.index_of("gpu"), Some(2));
        assert_eq!(types.index_of("memory-mb"), Some(MEMORY));
        assert_eq!(types.output_name(MEMORY), "memory_mb");
        for i in 0..3 {
            types.register(&format!("t{i}")).unwrap();
        }
        assert!(types.register("one-too-many").is_err());
    }

    proptest! {
        #[test]
        fn add_then_sub_round_trips_away_from_the_limits(a in -1_000_000i64..1_000_000, b in -1_000_000i64..1_000_000) {
            let x = Resource::new(a, b);
            let y = Resource::new(b, a);
            prop_assert_eq!(x.saturating_add(y).saturating_sub(y), x);
        }

        #[test]
        fn cw_min_fits_in_both(a in any::<i64>(), b in any::<i64>(), c in any::<i64>(), d in any::<i64>()) {
            let x = Resource::new(a, b);
            let y = Resource::new(c, d);
            let m = x.cw_min(y);
            prop_assert!(m.fits_in(&x) && m.fits_in(&y));
        }
    }
}
