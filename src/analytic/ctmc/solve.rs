//! The stationary distribution of an enumerated chain: its closed class, then a sparse LU
//! solve of the balance equations with one replaced by pinning a state, then normalised.

use faer::linalg::solvers::SolveCore;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut};

use super::{StateSpace, Stationary};
use crate::analytic::error::{AnalyticError, Result};

/// The largest residual `||pi Q||_1 / max_i q_i` (the largest exit rate) a solution may have;
/// a solve above it is refused with [`AnalyticError::NotConverged`].
pub const RESIDUAL_TOLERANCE: f64 = 1e-10;

/// The most steps of iterative refinement (one more solve with the same factors each) taken
/// while the residual is above `1e-14`.
pub const REFINEMENT_STEPS: u32 = 3;

/// The residual of the modified system (over its largest entry) below which no refinement is
/// tried.
const REFINE_ABOVE: f64 = 1e-14;

/// The closed classes of the transition graph: `Some(members)` of the one closed class
/// (`None` when every state is in it), or the refusal naming two of several.
fn closed_class<S: std::fmt::Debug>(space: &StateSpace<S>) -> Result<Option<Vec<u32>>> {
    let n = space.len();
    let components = strong_components(space);
    let count = components
        .iter()
        .map(|&c| c as usize + 1)
        .max()
        .unwrap_or(0);
    if count == 1 {
        return Ok(None);
    }
    let mut closed = vec![true; count];
    for (i, &c) in components.iter().enumerate() {
        if space.transitions(i).any(|(j, _)| components[j] != c) {
            closed[c as usize] = false;
        }
    }
    let closed_ids: Vec<usize> = (0..count).filter(|&c| closed[c]).collect();
    if let [only] = closed_ids[..] {
        return Ok(Some(
            (0..n as u32)
                .filter(|&i| components[i as usize] as usize == only)
                .collect(),
        ));
    }
    let example = |c: usize| {
        let i = components
            .iter()
            .position(|&k| k as usize == c)
            .expect("every component has a state");
        format!("{:?}", space.states()[i])
    };
    Err(AnalyticError::NotApplicable(format!(
        "the chain has {} closed classes reachable from the initial state (e.g. the classes \
         of {} and {}): its long-run distribution depends on which it enters, there is no \
         unique stationary distribution",
        closed_ids.len(),
        example(closed_ids[0]),
        example(closed_ids[1])
    )))
}

/// The strongly connected component of each state (Tarjan's algorithm without recursion);
/// components are numbered from 0 in the order they are completed.
fn strong_components<S>(space: &StateSpace<S>) -> Vec<u32> {
    const NONE: u32 = u32::MAX;
    let n = space.len();
    let mut order = vec![NONE; n];
    let mut low = vec![0_u32; n];
    let mut component = vec![NONE; n];
    let mut stack: Vec<u32> = Vec::new();
    // (state, position of the next transition to follow)
    let mut calls: Vec<(u32, usize)> = Vec::new();
    let mut next_order = 0_u32;
    let mut next_component = 0_u32;
    for root in 0..n {
        if order[root] != NONE {
            continue;
        }
        calls.push((root as u32, space.row_start[root]));
        order[root] = next_order;
        low[root] = next_order;
        next_order += 1;
        stack.push(root as u32);
        while let Some(&mut (v, ref mut edge)) = calls.last_mut() {
            let v = v as usize;
            if *edge < space.row_start[v + 1] {
                let w = space.targets[*edge] as usize;
                *edge += 1;
                if order[w] == NONE {
                    order[w] = next_order;
                    low[w] = next_order;
                    next_order += 1;
                    stack.push(w as u32);
                    calls.push((w as u32, space.row_start[w]));
                } else if component[w] == NONE {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                let parent = parent as usize;
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                while let Some(w) = stack.pop() {
                    component[w as usize] = next_component;
                    if w as usize == v {
                        break;
                    }
                }
                next_component += 1;
            }
        }
    }
    component
}

impl<S: Clone + Eq + std::hash::Hash + std::fmt::Debug> StateSpace<S> {
    /// The stationary distribution: on the chain's one closed class reachable from the
    /// initial state (every other state transient, probability 0), refused with
    /// [`AnalyticError::NotApplicable`] when there are several, with
    /// [`AnalyticError::NotConverged`] when the residual stays above [`RESIDUAL_TOLERANCE`]
    /// (see the [module](super) doc).
    pub fn stationary(self) -> Result<Stationary<S>> {
        let members = closed_class(&self)?;
        let n = self.len();
        // local index of each state in the class (u32::MAX for transient states)
        let (local, m) = match &members {
            None => (None, n),
            Some(members) => {
                let mut local = vec![u32::MAX; n];
                for (k, &i) in members.iter().enumerate() {
                    local[i as usize] = k as u32;
                }
                (Some(local), members.len())
            }
        };
        let global = |k: usize| members.as_ref().map_or(k, |g| g[k] as usize);
        let to_local = |j: usize| local.as_ref().map_or(j, |l| l[j] as usize);
        let x = if m == 1 {
            vec![1.0]
        } else {
            solve_balance(&self, m, global, to_local)?
        };
        let mut pi = match &members {
            None => x,
            Some(members) => {
                let mut pi = vec![0.0; n];
                for (k, &i) in members.iter().enumerate() {
                    pi[i as usize] = x[k];
                }
                pi
            }
        };
        // roundoff may leave tiny negative probabilities: none is a probability
        for p in &mut pi {
            *p = p.max(0.0);
        }
        let total: f64 = pi.iter().sum();
        for p in &mut pi {
            *p /= total;
        }
        let residual = residual(&self, &pi);
        if residual.is_nan() || residual > RESIDUAL_TOLERANCE {
            return Err(AnalyticError::NotConverged {
                method: "sparse LU of the balance equations".to_owned(),
                iterations: REFINEMENT_STEPS,
                residual,
            });
        }
        Ok(Stationary::new(self, pi, residual, n - m))
    }
}

/// `||pi Q||_1` over the largest exit rate.
fn residual<S>(space: &StateSpace<S>, pi: &[f64]) -> f64 {
    let mut flow = vec![0.0; space.len()];
    let mut largest = 0.0_f64;
    for (i, &p) in pi.iter().enumerate() {
        let exit = space.exit_rate(i);
        largest = largest.max(exit);
        flow[i] -= p * exit;
        for (j, rate) in space.transitions(i) {
            flow[j] += p * rate;
        }
    }
    let total: f64 = flow.iter().map(|f| f.abs()).sum();
    if largest > 0.0 {
        total / largest
    } else {
        total
    }
}

/// The value the pinned state's probability is given before normalising when 1 overflows
/// another state's (their ratios beyond `f64::MAX`); the states far less likely then underflow
/// to 0, as they would once normalised.
const SMALL_PIN: f64 = 1e-290;

/// Solves `A x = p e_0` where `A` is `Q^T` of the `m` states of a closed class with its first
/// equation replaced by `x_0 = p` (the first state pinned: a dense row of ones for the
/// normalisation would make the factors dense), `p` 1 or [`SMALL_PIN`] if 1 overflows;
/// refined while the residual of this system allows. The caller normalises.
fn solve_balance<S>(
    space: &StateSpace<S>,
    m: usize,
    global: impl Fn(usize) -> usize,
    to_local: impl Fn(usize) -> usize,
) -> Result<Vec<f64>> {
    // column c of A is row c of Q (the rates out of c at their targets' rows, minus the exit
    // rate at row c) without its row 0, and column 0 has a 1 at row 0. Indices are usize:
    // with u32 ones faer's symbolic LU overflows its bounds on the factors at 1e6 states.
    let nnz = m
        + (0..m)
            .map(|c| space.transitions(global(c)).count())
            .sum::<usize>();
    let mut col_start: Vec<usize> = Vec::with_capacity(m + 1);
    let mut rows: Vec<usize> = Vec::with_capacity(nnz);
    let mut values: Vec<f64> = Vec::with_capacity(nnz);
    let mut column: Vec<(usize, f64)> = Vec::new();
    col_start.push(0);
    for c in 0..m {
        let g = global(c);
        column.clear();
        column.push((c, if c == 0 { 1.0 } else { -space.exit_rate(g) }));
        for (j, rate) in space.transitions(g) {
            let r = to_local(j);
            if r != 0 {
                column.push((r, rate));
            }
        }
        column.sort_unstable_by_key(|&(r, _)| r);
        for &(r, v) in &column {
            rows.push(r);
            values.push(v);
        }
        col_start.push(rows.len());
    }
    let symbolic = SymbolicSparseColMatRef::new_checked(m, m, &col_start, None, &rows);
    let a = SparseColMatRef::new(symbolic, &values);
    let lu = a.sp_lu().map_err(|e| {
        AnalyticError::NotApplicable(format!(
            "the sparse LU of the balance equations failed: {e}"
        ))
    })?;
    let largest = values.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
    let solve = |pin: f64| {
        let mut x = vec![0.0; m];
        x[0] = pin;
        lu.solve_in_place_with_conj(Conj::No, MatMut::from_column_major_slice_mut(&mut x, m, 1));
        // iterative refinement: r = p e_0 - A x, x += A^-1 r
        for _ in 0..REFINEMENT_STEPS {
            let mut r = vec![0.0; m];
            r[0] = pin;
            for (c, &xc) in x.iter().enumerate() {
                let column = col_start[c]..col_start[c + 1];
                for (&row, &value) in rows[column.clone()].iter().zip(&values[column]) {
                    r[row] -= value * xc;
                }
            }
            let scale = largest * x.iter().fold(0.0_f64, |a, v| a.max(v.abs()));
            let size = r.iter().map(|v| v.abs()).sum::<f64>() / scale;
            if size.is_nan() || size <= REFINE_ABOVE {
                break;
            }
            lu.solve_in_place_with_conj(
                Conj::No,
                MatMut::from_column_major_slice_mut(&mut r, m, 1),
            );
            for (xi, di) in x.iter_mut().zip(&r) {
                *xi += di;
            }
        }
        x
    };
    let finite = |x: &[f64]| x.iter().all(|v| v.is_finite());
    let mut x = solve(1.0);
    if !finite(&x) {
        x = solve(SMALL_PIN);
    }
    if !finite(&x) {
        return Err(AnalyticError::NotApplicable(
            "the stationary probabilities span more than double precision holds".to_owned(),
        ));
    }
    Ok(x)
}
