//! Small dense row-major matrices for the matrix-analytic solvers: products, Kronecker
//! products, LU with partial pivoting, and the stationary vector of a generator.

use crate::analytic::error::{AnalyticError, Result};

/// A dense `rows x cols` matrix, row-major.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Dense {
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) data: Vec<f64>,
}

impl Dense {
    pub(super) fn zeros(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            data: vec![0.0; rows * cols],
        }
    }

    pub(super) fn identity(n: usize) -> Self {
        let mut m = Self::zeros(n, n);
        for i in 0..n {
            m.data[i * n + i] = 1.0;
        }
        m
    }

    /// From rows of equal length (checked by the caller).
    pub(super) fn from_rows(rows: &[Vec<f64>]) -> Self {
        let cols = rows.first().map_or(0, Vec::len);
        Self {
            rows: rows.len(),
            cols,
            data: rows.iter().flatten().copied().collect(),
        }
    }

    pub(super) fn to_rows(&self) -> Vec<Vec<f64>> {
        self.data
            .chunks(self.cols.max(1))
            .map(<[f64]>::to_vec)
            .collect()
    }

    pub(super) fn at(&self, i: usize, j: usize) -> f64 {
        self.data[i * self.cols + j]
    }

    pub(super) fn set(&mut self, i: usize, j: usize, v: f64) {
        self.data[i * self.cols + j] = v;
    }

    pub(super) fn mul(&self, other: &Self) -> Self {
        debug_assert_eq!(self.cols, other.rows);
        let mut out = Self::zeros(self.rows, other.cols);
        for i in 0..self.rows {
            let row = &mut out.data[i * other.cols..(i + 1) * other.cols];
            for k in 0..self.cols {
                let a = self.data[i * self.cols + k];
                if a != 0.0 {
                    let b = &other.data[k * other.cols..(k + 1) * other.cols];
                    for (r, &x) in row.iter_mut().zip(b) {
                        *r += a * x;
                    }
                }
            }
        }
        out
    }

    pub(super) fn add(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a + b)
    }

    pub(super) fn sub(&self, other: &Self) -> Self {
        self.zip(other, |a, b| a - b)
    }

    pub(super) fn scale(&self, k: f64) -> Self {
        Self {
            rows: self.rows,
            cols: self.cols,
            data: self.data.iter().map(|v| v * k).collect(),
        }
    }

    fn zip(&self, other: &Self, f: impl Fn(f64, f64) -> f64) -> Self {
        debug_assert_eq!((self.rows, self.cols), (other.rows, other.cols));
        Self {
            rows: self.rows,
            cols: self.cols,
            data: self
                .data
                .iter()
                .zip(&other.data)
                .map(|(&a, &b)| f(a, b))
                .collect(),
        }
    }

    /// The Kronecker product `self (x) other`.
    pub(super) fn kron(&self, other: &Self) -> Self {
        let mut out = Self::zeros(self.rows * other.rows, self.cols * other.cols);
        for i in 0..self.rows {
            for j in 0..self.cols {
                let a = self.at(i, j);
                if a == 0.0 {
                    continue;
                }
                for k in 0..other.rows {
                    for l in 0..other.cols {
                        out.set(i * other.rows + k, j * other.cols + l, a * other.at(k, l));
                    }
                }
            }
        }
        out
    }

    /// `self 1`: the row sums.
    pub(super) fn row_sums(&self) -> Vec<f64> {
        self.data
            .chunks(self.cols.max(1))
            .map(|r| r.iter().sum())
            .collect()
    }

    /// The row vector `x self`.
    pub(super) fn left_mul(&self, x: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.cols];
        for (i, &xi) in x.iter().enumerate() {
            if xi != 0.0 {
                for (o, &a) in out
                    .iter_mut()
                    .zip(&self.data[i * self.cols..(i + 1) * self.cols])
                {
                    *o += xi * a;
                }
            }
        }
        out
    }

    /// The column vector `self x`.
    pub(super) fn right_mul(&self, x: &[f64]) -> Vec<f64> {
        self.data
            .chunks(self.cols.max(1))
            .map(|r| r.iter().zip(x).map(|(a, b)| a * b).sum())
            .collect()
    }

    pub(super) fn transpose(&self) -> Self {
        let mut out = Self::zeros(self.cols, self.rows);
        for i in 0..self.rows {
            for j in 0..self.cols {
                out.set(j, i, self.at(i, j));
            }
        }
        out
    }

    /// The largest absolute row sum (infinity norm).
    pub(super) fn norm_inf(&self) -> f64 {
        self.data
            .chunks(self.cols.max(1))
            .map(|r| r.iter().map(|v| v.abs()).sum::<f64>())
            .fold(0.0, f64::max)
    }

    /// LU factors of a square matrix, or `None` when a pivot is below `1e-13` times the
    /// largest entry (singular to working precision).
    pub(super) fn lu(&self) -> Option<Lu> {
        debug_assert_eq!(self.rows, self.cols);
        let n = self.rows;
        let mut a = self.data.clone();
        let mut perm: Vec<usize> = (0..n).collect();
        let scale = a.iter().fold(0.0_f64, |m, v| m.max(v.abs()));
        if !(scale.is_finite() && scale > 0.0) {
            return None;
        }
        for col in 0..n {
            let pivot =
                (col..n).max_by(|&i, &j| a[i * n + col].abs().total_cmp(&a[j * n + col].abs()))?;
            if a[pivot * n + col].abs() < 1e-13 * scale {
                return None;
            }
            if pivot != col {
                for k in 0..n {
                    a.swap(col * n + k, pivot * n + k);
                }
                perm.swap(col, pivot);
            }
            let d = a[col * n + col];
            for row in col + 1..n {
                let f = a[row * n + col] / d;
                a[row * n + col] = f;
                if f != 0.0 {
                    for k in col + 1..n {
                        a[row * n + k] -= f * a[col * n + k];
                    }
                }
            }
        }
        Some(Lu { n, a, perm })
    }

    /// `self^{-1}`, or a `NotApplicable` naming `what` when it is singular.
    pub(super) fn inverse(&self, what: &str) -> Result<Self> {
        let lu = self.lu().ok_or_else(|| singular(what))?;
        Ok(lu.solve_right(&Self::identity(self.rows)))
    }
}

/// `NotApplicable` for a singular matrix.
pub(super) fn singular(what: &str) -> AnalyticError {
    AnalyticError::NotApplicable(format!("{what} is singular"))
}

/// The LU factors `P A = L U` of a square matrix.
pub(super) struct Lu {
    n: usize,
    a: Vec<f64>,
    perm: Vec<usize>,
}

impl Lu {
    /// `x` with `A x = b` for a column `b`.
    pub(super) fn solve(&self, b: &[f64]) -> Vec<f64> {
        let n = self.n;
        let mut x: Vec<f64> = self.perm.iter().map(|&p| b[p]).collect();
        for i in 0..n {
            let s: f64 = (0..i).map(|k| self.a[i * n + k] * x[k]).sum();
            x[i] -= s;
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| self.a[i * n + k] * x[k]).sum();
            x[i] = (x[i] - s) / self.a[i * n + i];
        }
        x
    }

    /// `A^{-1} B` for a matrix `B`, column by column.
    pub(super) fn solve_right(&self, b: &Dense) -> Dense {
        let bt = b.transpose();
        let mut out = Dense::zeros(b.cols, self.n);
        for (j, col) in bt.data.chunks(self.n).enumerate() {
            out.data[j * self.n..(j + 1) * self.n].copy_from_slice(&self.solve(col));
        }
        out.transpose()
    }
}

/// The stationary row vector `x` of a generator (or of `P - I` for a stochastic `P`):
/// `x Q = 0`, `x 1 = 1`, solved with the last equation replaced by the normalisation.
/// `NotApplicable` naming `what` when it is not unique (the system is singular).
pub(super) fn stationary(q: &Dense, what: &str) -> Result<Vec<f64>> {
    let n = q.rows;
    let mut a = q.transpose();
    for j in 0..n {
        a.set(n - 1, j, 1.0);
    }
    let mut b = vec![0.0; n];
    b[n - 1] = 1.0;
    let lu = a.lu().ok_or_else(|| {
        AnalyticError::NotApplicable(format!("{what} has no unique stationary vector"))
    })?;
    let x = lu.solve(&b);
    // round-off may leave tiny negatives
    Ok(x.into_iter().map(|v| v.max(0.0)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverse_kron_and_stationary() {
        let a = Dense::from_rows(&[vec![4.0, 1.0], vec![2.0, 3.0]]);
        let inv = a.inverse("a").unwrap();
        let i = a.mul(&inv);
        assert!(i.sub(&Dense::identity(2)).norm_inf() < 1e-15);
        let k = a.kron(&Dense::identity(2));
        assert_eq!(k.at(2, 0), 2.0);
        assert_eq!(k.at(3, 1), 2.0);
        assert_eq!(k.at(0, 1), 0.0);
        // two-state generator: stationary (b, a)/(a + b)
        let q = Dense::from_rows(&[vec![-1.0, 1.0], vec![3.0, -3.0]]);
        let x = stationary(&q, "q").unwrap();
        assert!((x[0] - 0.75).abs() < 1e-15 && (x[1] - 0.25).abs() < 1e-15);
        assert!(
            Dense::from_rows(&[vec![1.0, 2.0], vec![2.0, 4.0]])
                .lu()
                .is_none()
        );
    }
}
