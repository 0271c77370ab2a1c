//! Adaptive Gauss-Kronrod (7-15) integration on a finite interval.

use super::error::{AnalyticError, Result};

/// Kronrod 15-point nodes on `[-1, 1]` (non-negative half, descending); odd indices are the
/// Gauss 7-point nodes (Piessens et al., QUADPACK, 1983, routine QK15).
const XGK: [f64; 8] = [
    0.991_455_371_120_812_6,
    0.949_107_912_342_758_5,
    0.864_864_423_359_769_1,
    0.741_531_185_599_394_4,
    0.586_087_235_467_691_1,
    0.405_845_151_377_397_2,
    0.207_784_955_007_898_5,
    0.0,
];
/// Kronrod weights for [`XGK`].
const WGK: [f64; 8] = [
    0.022_935_322_010_529_22,
    0.063_092_092_629_978_55,
    0.104_790_010_322_250_2,
    0.140_653_259_715_525_9,
    0.169_004_726_639_267_9,
    0.190_350_578_064_785_4,
    0.204_432_940_075_298_9,
    0.209_482_141_084_727_8,
];
/// Gauss weights for the nodes `XGK[1], XGK[3], XGK[5], XGK[7]`.
const WG: [f64; 4] = [
    0.129_484_966_168_869_7,
    0.279_705_391_489_276_7,
    0.381_830_050_505_118_9,
    0.417_959_183_673_469_4,
];

/// One subinterval with its Kronrod estimate and error estimate `|K15 - G7|`.
#[derive(Debug, Clone, Copy)]
struct Segment {
    a: f64,
    b: f64,
    value: f64,
    error: f64,
}

fn rule(f: &mut dyn FnMut(f64) -> Result<f64>, a: f64, b: f64) -> Result<Segment> {
    let centre = 0.5 * (a + b);
    let half = 0.5 * (b - a);
    let mut kronrod = 0.0;
    let mut gauss = 0.0;
    for (i, (&x, &w)) in XGK.iter().zip(&WGK).enumerate() {
        let pair = if x == 0.0 {
            f(centre)?
        } else {
            f(centre - half * x)? + f(centre + half * x)?
        };
        kronrod += w * pair;
        if i % 2 == 1 {
            gauss += WG[i / 2] * pair;
        }
    }
    Ok(Segment {
        a,
        b,
        value: kronrod * half,
        error: ((kronrod - gauss) * half).abs(),
    })
}

/// `int_a^b f(x) dx` to a relative accuracy `rel_tol`, bisecting the subinterval with the
/// largest error estimate until the summed estimate meets the tolerance.
///
/// Errors: whatever `f` returns; `NotConverged` after `max_segments` subintervals or if the
/// result is not finite.
pub(crate) fn integrate(
    f: &mut dyn FnMut(f64) -> Result<f64>,
    a: f64,
    b: f64,
    rel_tol: f64,
    max_segments: u32,
) -> Result<f64> {
    integrate_to(f, a, b, rel_tol, 0.0, max_segments)
}

/// [`integrate`] stopping as soon as the summed error estimate is below
/// `max(rel_tol |value|, abs_tol)`: for a piece of a larger integral whose own value may be
/// too small for a relative tolerance to be met above rounding noise.
pub(crate) fn integrate_to(
    f: &mut dyn FnMut(f64) -> Result<f64>,
    a: f64,
    b: f64,
    rel_tol: f64,
    abs_tol: f64,
    max_segments: u32,
) -> Result<f64> {
    let mut segments = vec![rule(f, a, b)?];
    loop {
        let value: f64 = segments.iter().map(|s| s.value).sum();
        let error: f64 = segments.iter().map(|s| s.error).sum();
        if !value.is_finite() || !error.is_finite() {
            return Err(not_converged(segments.len(), error));
        }
        if error <= (rel_tol * value.abs()).max(abs_tol) || error == 0.0 {
            return Ok(value);
        }
        if segments.len() >= max_segments as usize {
            return Err(not_converged(segments.len(), error));
        }
        let worst = (0..segments.len())
            .max_by(|&i, &j| segments[i].error.total_cmp(&segments[j].error))
            .unwrap_or(0);
        let s = segments.swap_remove(worst);
        let mid = 0.5 * (s.a + s.b);
        segments.push(rule(f, s.a, mid)?);
        segments.push(rule(f, mid, s.b)?);
    }
}

fn not_converged(segments: usize, error: f64) -> AnalyticError {
    AnalyticError::NotConverged {
        method: "adaptive Gauss-Kronrod quadrature".into(),
        iterations: u32::try_from(segments).unwrap_or(u32::MAX),
        residual: error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_integrate_polynomials_exactly() {
        // K15 is exact to degree 22, G7 to degree 13: one segment, error estimate ~0.
        for p in [0, 1, 2, 5, 13] {
            let mut f = |x: f64| Ok(x.powi(p));
            let s = rule(&mut f, 0.0, 1.0).unwrap();
            assert!(
                (s.value - 1.0 / f64::from(p + 1)).abs() < 1e-15,
                "degree {p}"
            );
            assert!(s.error < 1e-15);
        }
        let mut f = |x: f64| Ok(x.powi(22));
        let s = rule(&mut f, -1.0, 1.0).unwrap();
        assert!((s.value - 2.0 / 23.0).abs() < 1e-15);
    }

    #[test]
    fn adaptive_handles_a_kink_and_reports_failure() {
        let mut f = |x: f64| Ok((x - 0.3).abs());
        let v = integrate(&mut f, 0.0, 1.0, 1e-12, 1000).unwrap();
        assert!((v - (0.045 + 0.245)).abs() < 1e-12);
        let mut g = |x: f64| Ok(1.0 / x);
        assert!(integrate(&mut g, 0.0, 1.0, 1e-12, 50).is_err());
        // an absolute floor ends it once the error is below the floor
        let mut h = |x: f64| Ok(x.sqrt());
        let v = integrate_to(&mut h, 0.0, 1.0, 0.0, 1e-6, 1000).unwrap();
        assert!((v - 2.0 / 3.0).abs() < 1e-6);
    }
}
