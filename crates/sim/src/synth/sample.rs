//! SYNTH's sampled values (`{val}`, `{val, std}`, `{val, std, dist}`, `{discrete, weights}`)
//! and weighted choices, drawn from [`SplitMix64`].

use crate::sls::json::{Ctx, Node};
use crate::sls::TraceError;
use crate::workload::SplitMix64;

/// A value description, ready to draw from.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Sample {
    /// Always this value.
    Const(f64),
    /// Normal with this mean and standard deviation.
    Normal { mean: f64, std: f64 },
    /// Log-normal with this mean and standard deviation (of the value, not of its log).
    LogNormal { mu: f64, sigma: f64 },
    /// One of `values`, picked by `weights`.
    Discrete { values: Vec<f64>, weights: Vec<f64> },
}

impl Sample {
    /// A distribution as Hadoop's `SynthUtils` builds it: a zero `std` means `mean / 6`, and a
    /// non-positive mean (for which Hadoop has no distribution and fails) gives 0.
    pub(crate) fn distribution(mean: f64, std: f64, lognormal: bool) -> Sample {
        if mean <= 0.0 {
            return Sample::Const(0.0);
        }
        let std = if std == 0.0 { mean / 6.0 } else { std.abs() };
        if lognormal {
            // For X ~ LogNormal(mu, sigma): sigma^2 = ln(1 + Var/E^2), mu = ln E - sigma^2 / 2.
            let sigma_sq = (std * std / (mean * mean)).ln_1p();
            Sample::LogNormal {
                mu: mean.ln() - 0.5 * sigma_sq,
                sigma: sigma_sq.sqrt(),
            }
        } else {
            Sample::Normal { mean, std }
        }
    }

    /// Reads `{val}`, `{val, std[, dist]}` (dist `LOGNORM`, Hadoop's default, or `NORM`),
    /// `{discrete[, weights]}`, or a bare number (a constant).
    pub(crate) fn parse(ctx: &Ctx<'_, '_>, node: &Node<'_>) -> Result<Sample, TraceError> {
        if node.value().is_number() || node.value().is_string() {
            return Ok(Sample::Const(node.float(ctx)?));
        }
        node.object(ctx)?;
        if let Some(val) = node.get("val") {
            let val = val.float(ctx)?;
            let Some(std) = node.get("std") else {
                return Ok(Sample::Const(val));
            };
            let std = std.float(ctx)?;
            let lognormal = match node.get("dist") {
                None => true,
                Some(d) => match d.text(ctx)?.trim().to_ascii_uppercase().as_str() {
                    "LOGNORM" => true,
                    "NORM" => false,
                    other => {
                        return Err(ctx.err(
                            d.path(),
                            format!("unknown distribution \"{other}\" (expected LOGNORM or NORM)"),
                        ))
                    }
                },
            };
            return Ok(Sample::distribution(val, std, lognormal));
        }
        let Some(discrete) = node.get("discrete") else {
            return Err(ctx.err(
                node.path(),
                "a sampled value needs \"val\" (with optional \"std\" and \"dist\") or \"discrete\"",
            ));
        };
        let values = discrete
            .elements(ctx)?
            .iter()
            .map(|v| v.float(ctx))
            .collect::<Result<Vec<_>, _>>()?;
        let weights = match node.get("weights") {
            None => vec![1.0; values.len()],
            Some(w) => {
                let weights = w
                    .elements(ctx)?
                    .iter()
                    .map(|v| v.float(ctx))
                    .collect::<Result<Vec<_>, _>>()?;
                if weights.len() != values.len() {
                    return Err(ctx.err(
                        w.path(),
                        format!(
                            "{} weights for {} discrete values",
                            weights.len(),
                            values.len()
                        ),
                    ));
                }
                weights
            }
        };
        check_weights(ctx, discrete.path(), &weights)?;
        Ok(Sample::Discrete { values, weights })
    }

    /// One draw.
    pub(crate) fn draw(&self, rng: &mut SplitMix64) -> f64 {
        match self {
            Sample::Const(v) => *v,
            Sample::Normal { mean, std } => rng.normal(*mean, *std),
            Sample::LogNormal { mu, sigma } => rng.normal(*mu, *sigma).exp(),
            Sample::Discrete { values, weights } => values[pick(weights, rng)],
        }
    }
}

/// Rejects weight lists no choice can be made from (empty, negative, or all zero), which
/// Hadoop would fail on mid-run.
pub(crate) fn check_weights(
    ctx: &Ctx<'_, '_>,
    path: &[crate::sls::json::Seg],
    weights: &[f64],
) -> Result<(), TraceError> {
    if weights.iter().any(|w| *w < 0.0) {
        return Err(ctx.err(path, "weights must not be negative"));
    }
    if weights.iter().sum::<f64>() <= 0.0 {
        return Err(ctx.err(path, "at least one weight must be positive"));
    }
    Ok(())
}

/// Index picked with probability proportional to its weight (Hadoop's `getWeighted`: the
/// first index whose running sum exceeds a uniform draw scaled by the total).
pub(crate) fn pick(weights: &[f64], rng: &mut SplitMix64) -> usize {
    let total: f64 = weights.iter().sum();
    let target = rng.next_f64() * total;
    let mut sum = 0.0;
    for (i, w) in weights.iter().enumerate() {
        sum += w;
        if sum > target {
            return i;
        }
    }
    // Rounding can leave the target at the total: take the last positive weight.
    weights.iter().rposition(|w| *w > 0.0).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lognormal_matches_the_requested_mean() {
        let s = Sample::distribution(10.0, 2.0, true);
        let mut rng = SplitMix64::new(3);
        let n = 20_000;
        let mean = (0..n).map(|_| s.draw(&mut rng)).sum::<f64>() / f64::from(n);
        assert!((9.8..10.2).contains(&mean), "{mean}");
    }

    #[test]
    fn zero_std_defaults_to_a_sixth_of_the_mean_and_bad_means_to_zero() {
        assert_eq!(
            Sample::distribution(6.0, 0.0, false),
            Sample::Normal {
                mean: 6.0,
                std: 1.0
            }
        );
        assert_eq!(Sample::distribution(0.0, 1.0, true), Sample::Const(0.0));
    }

    #[test]
    fn pick_follows_weights_and_skips_zero_weights() {
        let mut rng = SplitMix64::new(9);
        let mut hits = [0u32; 3];
        for _ in 0..10_000 {
            hits[pick(&[1.0, 0.0, 3.0], &mut rng)] += 1;
        }
        assert_eq!(hits[1], 0);
        assert!((2300..2700).contains(&hits[0]), "{hits:?}");
    }
}
