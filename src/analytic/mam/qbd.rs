//! Level-independent quasi-birth-death processes: `R` by logarithmic reduction, boundary
//! levels by linear level reduction, the matrix-geometric tail.

use super::dense::{Dense, singular, stationary};
use super::ph::{dot, invalid};
use crate::analytic::cost::within_budget;
use crate::analytic::error::{AnalyticError, Result};

/// Iteration cap of the logarithmic reduction (it converges quadratically: some 10 to 40
/// iterations even close to saturation).
pub const QBD_MAX_ITERATIONS: u32 = 100;

/// The logarithmic reduction stops when `max_i |1 - (G 1)_i|` is below this.
pub const QBD_TOLERANCE: f64 = 1e-13;

/// One boundary level of a [`Qbd`]: its local block, the block up to the next level, and
/// (for every level but the first) the block down to the previous one. Off-diagonal rates;
/// the diagonal of `local` makes each row of the level's generator sum to 0.
#[derive(Debug, Clone, PartialEq)]
pub struct QbdLevel {
    /// Transitions within the level (with the diagonal).
    pub local: Vec<Vec<f64>>,
    /// Transitions to the next level.
    pub up: Vec<Vec<f64>>,
    /// Transitions to the previous level (empty for level 0).
    pub down: Vec<Vec<f64>>,
}

/// A level-independent quasi-birth-death process (Neuts 1981, ch. 3; Latouche and
/// Ramaswami 1999, ch. 6): boundary levels `0 .. K - 1` ([`QbdLevel`]), then levels `K, K + 1,
/// ...` of `m` phases each with the blocks `a0` (up), `a1` (local) and `a2` (down); level `K`
/// goes down to level `K - 1` by `entry_down` (`m` rows, as many columns as level `K - 1` has
/// phases).
#[derive(Debug, Clone, PartialEq)]
pub struct Qbd {
    /// Levels `0 .. K - 1` (at least one).
    pub boundary: Vec<QbdLevel>,
    /// Level `K` to level `K - 1`.
    pub entry_down: Vec<Vec<f64>>,
    /// Up one level (`A0`).
    pub a0: Vec<Vec<f64>>,
    /// Within a level (`A1`).
    pub a1: Vec<Vec<f64>>,
    /// Down one level (`A2`), from level `K + 1` on.
    pub a2: Vec<Vec<f64>>,
}

/// The stationary distribution of a [`Qbd`]: `pi_k` on the boundary levels and
/// `pi_{K+n} = pi_K R^n`.
#[derive(Debug, Clone, PartialEq)]
pub struct QbdSolution {
    boundary: Vec<Vec<f64>>,
    first: Vec<f64>,
    r: Dense,
    /// `(I - R)^{-1}`.
    geometric: Dense,
    iterations: u32,
}

impl QbdSolution {
    /// `pi_k`, the probabilities of the phases of level `k`.
    pub fn level(&self, k: usize) -> Vec<f64> {
        let kk = self.boundary.len();
        if k < kk {
            return self.boundary[k].clone();
        }
        let mut v = self.first.clone();
        for _ in kk..k {
            v = self.r.left_mul(&v);
        }
        v
    }

    /// The probability of level `k`, `pi_k 1`.
    pub fn level_probability(&self, k: usize) -> f64 {
        self.level(k).iter().sum()
    }

    /// The mean level, `sum_k k pi_k 1`, the tail in closed form
    /// `pi_K (K (I - R)^{-1} + R (I - R)^{-2}) 1`.
    pub fn mean_level(&self) -> f64 {
        let kk = self.boundary.len();
        let head: f64 = self
            .boundary
            .iter()
            .enumerate()
            .map(|(k, p)| k as f64 * p.iter().sum::<f64>())
            .sum();
        let ones = vec![1.0; self.first.len()];
        let g1 = self.geometric.right_mul(&ones);
        let rg2 = self.r.right_mul(&self.geometric.right_mul(&g1));
        head + dot(&self.first, &g1) * kk as f64 + dot(&self.first, &rg2)
    }

    /// The probabilities of the repeating levels' phases summed over the levels `k >= K`,
    /// `pi_K (I - R)^{-1}`.
    pub fn tail_phases(&self) -> Vec<f64> {
        self.geometric.left_mul(&self.first)
    }

    /// The rate matrix `R`, minimal non-negative solution of `A0 + R A1 + R^2 A2 = 0`.
    pub fn r(&self) -> Vec<Vec<f64>> {
        self.r.to_rows()
    }

    /// Iterations the logarithmic reduction took.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }
}

/// Checks that `m` is `rows x cols` with finite entries, non-negative off the diagonal
/// (everywhere when `off_block`).
fn block(what: &str, m: &[Vec<f64>], rows: usize, cols: usize, off_block: bool) -> Result<Dense> {
    if m.len() != rows || m.iter().any(|r| r.len() != cols) {
        return Err(invalid(
            &format!("QBD block {what}: not {rows} x {cols}"),
            m.len() as f64,
        ));
    }
    for (i, r) in m.iter().enumerate() {
        for (j, &v) in r.iter().enumerate() {
            if !v.is_finite() || (v < 0.0 && (off_block || i != j)) {
                return Err(invalid(&format!("QBD block {what} entry ({i}, {j})"), v));
            }
        }
    }
    Ok(Dense::from_rows(m))
}

/// Each row of the blocks side by side must sum to 0 (within `1e-9` of the row's largest rate).
fn generator_rows(what: &str, blocks: &[&Dense]) -> Result<()> {
    for i in 0..blocks[0].rows {
        let (mut sum, mut largest) = (0.0, 0.0_f64);
        for b in blocks {
            for j in 0..b.cols {
                sum += b.at(i, j);
                largest = largest.max(b.at(i, j).abs());
            }
        }
        if sum.abs() > 1e-9 * largest {
            return Err(invalid(&format!("QBD {what} row {i} sum (must be 0)"), sum));
        }
    }
    Ok(())
}

/// The stationary distribution of `model` (Latouche and Ramaswami, "A logarithmic reduction
/// algorithm for quasi-birth-death processes", J. Appl. Prob. 30, 1993; their book, 1999,
/// 8.4 and 10.2).
///
/// 1. Stability: with `a` the stationary vector of `A = A0 + A1 + A2`, the process is positive
///    recurrent iff the drift `a A0 1 < a A2 1` (Neuts 1981, Thm. 3.1.1); refused with
///    `Unstable` and `rho = a A0 1 / a A2 1` otherwise.
/// 2. `G` (minimal solution of `A2 + A1 G + A0 G^2 = 0`) by logarithmic reduction until
///    `|1 - G 1| <` [`QBD_TOLERANCE`] (`NotConverged` after [`QBD_MAX_ITERATIONS`]), then
///    `R = A0 (-(A1 + A0 G))^{-1}`.
/// 3. Level `K`: `N_K = A1 + R A2`; boundary levels down to 0 by
///    `N_k = L_k - U_k N_{k+1}^{-1} D_{k+1}`, `pi_0 N_0 = 0`, `pi_{k+1} = -pi_k U_k
///    N_{k+1}^{-1}`; normalised with the tail `pi_K (I - R)^{-1} 1`.
///
/// Errors: `InvalidParameter` for blocks of the wrong shapes, negative rates off the
/// diagonal, rows not summing to 0; `Unstable`; `NotConverged`; `NotApplicable` for a
/// singular block (phases that cannot leave) or a repeating part with no unique phase
/// law; `TooCostly` when `(K + 200) m^3` operations are over the budget.
pub fn qbd(model: &Qbd) -> Result<QbdSolution> {
    let m = model.a1.len();
    if m == 0 || model.boundary.is_empty() {
        return Err(invalid(
            "QBD levels (need phases and a boundary level)",
            m as f64,
        ));
    }
    let kk = model.boundary.len();
    let work = (kk as f64 + 200.0) * (m as f64).powi(3);
    within_budget(work, || {
        format!("a QBD of {m} phases per level and {kk} boundary levels")
    })?;
    let a0 = block("A0", &model.a0, m, m, true)?;
    let a1 = block("A1", &model.a1, m, m, false)?;
    let a2 = block("A2", &model.a2, m, m, true)?;
    generator_rows("A0 + A1 + A2", &[&a0, &a1, &a2])?;
    // sizes of the boundary levels and their blocks
    let sizes: Vec<usize> = model.boundary.iter().map(|l| l.local.len()).collect();
    let size_after = |k: usize| if k + 1 < kk { sizes[k + 1] } else { m };
    let mut locals = Vec::with_capacity(kk);
    let mut ups = Vec::with_capacity(kk);
    let mut downs = Vec::with_capacity(kk + 1);
    for (k, level) in model.boundary.iter().enumerate() {
        let n = sizes[k];
        let name = |b: &str| format!("{b} of level {k}");
        let local = block(&name("local"), &level.local, n, n, false)?;
        let up = block(&name("up"), &level.up, n, size_after(k), true)?;
        if k == 0 {
            generator_rows(&name("blocks"), &[&local, &up])?;
            downs.push(Dense::zeros(n, 0));
        } else {
            let down = block(&name("down"), &level.down, n, sizes[k - 1], true)?;
            generator_rows(&name("blocks"), &[&down, &local, &up])?;
            downs.push(down);
        }
        locals.push(local);
        ups.push(up);
    }
    let entry = block("entry_down", &model.entry_down, m, sizes[kk - 1], true)?;
    generator_rows("level K blocks", &[&entry, &a1, &a0])?;
    downs.push(entry);

    // 1. drift
    let a = stationary(
        &a0.add(&a1).add(&a2),
        "the QBD's repeating phase process A0 + A1 + A2",
    )?;
    let ones = vec![1.0; m];
    let up_rate = dot(&a0.left_mul(&a), &ones);
    let down_rate = dot(&a2.left_mul(&a), &ones);
    if up_rate >= down_rate {
        return Err(AnalyticError::Unstable {
            what: format!("QBD (drift: up {up_rate}, down {down_rate})"),
            rho: up_rate / down_rate,
        });
    }

    // 2. G by logarithmic reduction, then R
    let (g, iterations) = log_reduction(&a0, &a1, &a2)?;
    let u = a1.add(&a0.mul(&g));
    let r = a0.mul(&u.scale(-1.0).inverse("-(A1 + A0 G)")?);

    // 3. linear level reduction of the boundary
    let mut n_inv = Vec::with_capacity(kk + 1); // N_k^{-1} for k = 1 ..= K, last first
    let mut n = a1.add(&r.mul(&a2));
    for k in (0..kk).rev() {
        let inv = n.inverse("a QBD level's block N")?;
        let next = locals[k].sub(&ups[k].mul(&inv).mul(&downs[k + 1]));
        n_inv.push(inv);
        n = next;
    }
    n_inv.reverse();
    let mut levels = vec![stationary(&n, "the QBD's level 0 after reduction")?];
    for k in 0..kk {
        let next = n_inv[k].left_mul(&ups[k].left_mul(&levels[k]));
        levels.push(next.into_iter().map(|v| (-v).max(0.0)).collect());
    }
    let first = levels.pop().unwrap_or_default();
    let geometric = Dense::identity(m).sub(&r).inverse("I - R")?;
    let total: f64 = levels.iter().flatten().sum::<f64>() + dot(&geometric.left_mul(&first), &ones);
    if !(total.is_finite() && total > 0.0) {
        return Err(singular("the QBD's normalisation"));
    }
    Ok(QbdSolution {
        boundary: levels
            .into_iter()
            .map(|l| l.into_iter().map(|v| v / total).collect())
            .collect(),
        first: first.into_iter().map(|v| v / total).collect(),
        r,
        geometric,
        iterations,
    })
}

/// `G` by the logarithmic reduction of Latouche and Ramaswami (1993), continuous time
/// (their book, Algorithm 8.4 on the uniformised or, as here, the `(-A1)^{-1}`-scaled
/// blocks).
fn log_reduction(a0: &Dense, a1: &Dense, a2: &Dense) -> Result<(Dense, u32)> {
    let m = a1.rows;
    let minus_a1 = a1.scale(-1.0).lu().ok_or_else(|| singular("A1"))?;
    let mut b0 = minus_a1.solve_right(a0); // up
    let mut b2 = minus_a1.solve_right(a2); // down
    let mut g = b2.clone();
    let mut t = b0.clone();
    let identity = Dense::identity(m);
    let mut residual = f64::INFINITY;
    for it in 1..=QBD_MAX_ITERATIONS {
        let u = b0.mul(&b2).add(&b2.mul(&b0));
        let lu = identity
            .sub(&u)
            .lu()
            .ok_or_else(|| singular("I - U in the logarithmic reduction"))?;
        let nb0 = lu.solve_right(&b0.mul(&b0));
        let nb2 = lu.solve_right(&b2.mul(&b2));
        g = g.add(&t.mul(&nb2));
        t = t.mul(&nb0);
        b0 = nb0;
        b2 = nb2;
        residual = g
            .row_sums()
            .iter()
            .map(|s| (1.0 - s).abs())
            .fold(0.0, f64::max);
        if residual < QBD_TOLERANCE || t.norm_inf() < QBD_TOLERANCE {
            return Ok((g, it));
        }
        if !residual.is_finite() {
            break;
        }
    }
    Err(AnalyticError::NotConverged {
        method: "QBD logarithmic reduction".to_owned(),
        iterations: QBD_MAX_ITERATIONS,
        residual,
    })
}
