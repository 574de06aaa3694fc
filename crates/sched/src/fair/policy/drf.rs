//! The `drf` comparator (spec §5.2, Hadoop's DominantResourceFairnessPolicy).
//!
//! Hadoop has two comparators: one for exactly memory + vcores working in doubles, and a
//! general one for N resource types working in floats. We mirror both precisions; the
//! arithmetic is otherwise the same, and the N-type positional form reduces to the two-type
//! "dominant, then the other" form. Neediness uses each schedulable's own dominant resource
//! (the corrected form). Deliberate readings where Hadoop would produce NaN: a weight of 0 (or
//! NaN) makes every weighted share +inf, and any 0/0 ratio is 0.

use super::{ordered_bits, signum, weight_of, PolicyContext, SchedView, KEY_LEVELS};
use crate::lanes::MAX_RESOURCE_TYPES;
use std::cmp::Ordering;
use weft_types::MEMORY;

/// Levels 1-3 of spec §5.2 (start time and tie-break are applied by the caller).
pub(super) fn compare(a: &SchedView, b: &SchedView, ctx: &PolicyContext) -> Ordering {
    let (fa, fb) = (Facts::of(a, ctx), Facts::of(b, ctx));
    match (fa.needy, fb.needy) {
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => positional(&fa, &fb, &fa.weighted, &fb.weighted),
        (true, true) => positional(&fa, &fb, &fa.min_ratio, &fb.min_ratio),
    }
}

/// Compares `va` and `vb` position by position after ordering each side's resource types by
/// descending usage share; with two types that is "dominant, then the other".
fn positional(fa: &Facts, fb: &Facts, va: &Values, vb: &Values) -> Ordering {
    if fa.n == 2 {
        let (da, db) = (fa.dominant, fb.dominant);
        return signum(va[da] - vb[db]).then_with(|| signum(va[1 - da] - vb[1 - db]));
    }
    let (oa, ob) = (fa.by_share(), fb.by_share());
    for (&i, &j) in oa[..fa.n].iter().zip(&ob[..fb.n]) {
        let res = signum(va[i] - vb[j]);
        if res != Ordering::Equal {
            return res;
        }
    }
    Ordering::Equal
}

/// The key: [needy class, then the compared values in descending-usage-share order].
pub(super) fn key(v: &SchedView, ctx: &PolicyContext) -> [u64; KEY_LEVELS] {
    let f = Facts::of(v, ctx);
    let mut k = [0; KEY_LEVELS];
    k[0] = u64::from(!f.needy);
    let values = if f.needy { &f.min_ratio } else { &f.weighted };
    for (slot, &i) in k[1..].iter_mut().zip(&f.by_share()[..f.n]) {
        *slot = ordered_bits(values[i]);
    }
    k
}

type Values = [f64; MAX_RESOURCE_TYPES];

/// Everything the drf comparator derives from one schedulable.
struct Facts {
    /// Resource types in use.
    n: usize,
    /// Usage / cluster per type.
    share: Values,
    /// Share / weight per type (+inf for a zero weight).
    weighted: Values,
    /// Usage / min share per type.
    min_ratio: Values,
    /// The first type with the largest share (with two types: vcores only when strictly
    /// larger than memory, as in Hadoop's two-type comparator).
    dominant: usize,
    /// Usage of the dominant type below its min share.
    needy: bool,
}

impl Facts {
    fn of(v: &SchedView, ctx: &PolicyContext) -> Facts {
        let n = ctx.types();
        let p = Precision::of(n);
        let w = p.weight(weight_of(v));
        let mut f = Facts {
            n,
            share: [0.0; MAX_RESOURCE_TYPES],
            weighted: [0.0; MAX_RESOURCE_TYPES],
            min_ratio: [0.0; MAX_RESOURCE_TYPES],
            dominant: MEMORY,
            needy: false,
        };
        for i in 0..n {
            let u = p.int(v.usage.get(i));
            f.share[i] = p.div(u, p.int(ctx.cluster.get(i)));
            f.weighted[i] = if w == 0.0 {
                f64::INFINITY
            } else {
                p.div(f.share[i], w)
            };
            f.min_ratio[i] = p.div(u, p.int(v.min_share.get(i)));
            if f.share[i] > f.share[f.dominant] {
                f.dominant = i;
            }
        }
        f.needy = v.usage.get(f.dominant) < v.min_share.get(f.dominant);
        f
    }

    /// Type indices sorted by descending share, ties kept in index order (a stable sort, as
    /// Java's object sort is); only the first `n` entries are meaningful.
    fn by_share(&self) -> [usize; MAX_RESOURCE_TYPES] {
        let mut order: [usize; MAX_RESOURCE_TYPES] = std::array::from_fn(|i| i);
        order[..self.n].sort_by(|&i, &j| {
            self.share[j]
                .partial_cmp(&self.share[i])
                .unwrap_or(Ordering::Equal)
        });
        order
    }
}

/// The floating-point width Hadoop's comparator uses: doubles for exactly two types, floats
/// otherwise. Values are always carried as `f64`; in `Single` every operand and result is
/// rounded to `f32`, which gives the same results as computing in `f32` directly.
#[derive(Clone, Copy)]
enum Precision {
    Double,
    Single,
}

impl Precision {
    fn of(types: usize) -> Precision {
        if types == 2 {
            Precision::Double
        } else {
            Precision::Single
        }
    }

    fn int(self, x: i64) -> f64 {
        match self {
            Precision::Double => x as f64,
            Precision::Single => x as f32 as f64,
        }
    }

    fn weight(self, w: f64) -> f64 {
        match self {
            Precision::Double => w,
            Precision::Single => w as f32 as f64,
        }
    }

    /// `a / b` in this precision, with 0/0 (and inf/inf) read as 0.
    fn div(self, a: f64, b: f64) -> f64 {
        let q = match self {
            Precision::Double => a / b,
            Precision::Single => (a / b) as f32 as f64,
        };
        if q.is_nan() {
            0.0
        } else {
            q
        }
    }
}
