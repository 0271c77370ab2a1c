//! A stochastic max-plus evaluator on moments: the "stochastic critical path" of a graph of
//! activities in which a node starts when the last of its predecessors has finished and then
//! lasts a random time of given mean and variance, independent of everything else:
//! `F_v = max_{u in pred(v)} F_u + D_v`.
//!
//! Each finish time is carried as a normal law (mean and variance); a maximum is taken
//! pairwise by Clark's formulas ([`clark_max`]), which are exact for two jointly normal
//! operands, and a duration is added exactly. What is approximate is (a) taking each partial
//! maximum as normal, as Clark's iteration does, and (b) what is assumed about the correlation
//! of the operands of a maximum, which [`Dependence`] chooses:
//!
//! - [`Dependence::Independent`]: operands are taken as independent. Two numbers per node,
//!   `O(edges)` work. Right when predecessors share no history; otherwise it overestimates the
//!   maximum (finish times sharing an ancestor are positively correlated, and for normals a
//!   positive correlation lowers the expected maximum), and the error compounds along the
//!   graph: after a barrier every rank carries the barrier's variance, which the next barrier
//!   then counts once per rank instead of once.
//! - [`Dependence::SharedAncestors`]: each finish time is kept in the linear canonical form of
//!   block-based statistical timing analysis, `F_v = mean_v + sum_j a_vj Z_j`, over independent
//!   standard normals `Z_j`, one per node (its duration, plus what the maximum that started it
//!   added beyond the linear part). Covariances are dot products, so the correlation that two
//!   operands get from a common ancestor is kept; a maximum gets the coefficients
//!   `Phi(alpha) a_x + Phi(-alpha) a_y` (Clark's eq. 6: this keeps every covariance with a third
//!   variable exact for jointly normal operands) and a private term for the variance left over
//!   (Visweswariah et al., "First-order incremental block-based statistical timing analysis",
//!   DAC 2004; Chang and Sapatnekar, ICCAD 2003). The cost is the number of terms a node
//!   carries, capped by `max_terms`: beyond the cap the smallest terms are folded into the
//!   node's private term, which keeps its variance and drops only the correlation they carried.
//!   A barrier's followers then share the barrier exactly: for `max_i (B + W_i)` the canonical
//!   form gives `E[B] + E[max W]` up to Clark's iteration error on the `W`.

use serde::Serialize;

use super::check;
use super::clark::{ClarkMax, Normal, clark_max};
use super::error::{AnalyticError, Result};

/// How [`StochasticMaxPlus`] treats the correlation of the finish times it takes a maximum of
/// (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Dependence {
    /// Operands of a maximum are independent: two numbers per node, biased high when they share
    /// ancestors.
    Independent,
    /// Correlation through shared ancestors, by the linear canonical form with at most
    /// `max_terms` (at least 1) terms per node.
    SharedAncestors {
        /// Most terms a node keeps; 64 or so is plenty for graphs whose correlation comes from
        /// the last few synchronisations.
        max_terms: usize,
    },
}

/// A node of a [`StochasticMaxPlus`] graph, in the order nodes were added.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct NodeId(u32);

impl NodeId {
    /// The node's index (0 for the first node added).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Finish times of a max-plus graph built in topological order (a node after its
/// predecessors), as normal laws.
///
/// ```
/// use parsim::analytic::{Dependence, StochasticMaxPlus};
///
/// // Two ranks after a common start of mean 10 and variance 9, each working 1 +- 1, then a
/// // barrier: E = 11 + sqrt(2) / sqrt(2 pi) exactly, which the shared form keeps.
/// let mut g = StochasticMaxPlus::new(Dependence::SharedAncestors { max_terms: 64 });
/// let start = g.add(&[], 10.0, 9.0).unwrap();
/// let a = g.add(&[start], 1.0, 1.0).unwrap();
/// let b = g.add(&[start], 1.0, 1.0).unwrap();
/// let barrier = g.add(&[a, b], 0.0, 0.0).unwrap();
/// let f = g.finish(barrier).unwrap();
/// assert!((f.mean - (11.0 + 1.0 / std::f64::consts::PI.sqrt())).abs() < 1e-12);
/// ```
#[derive(Debug, Clone)]
pub struct StochasticMaxPlus {
    dependence: Dependence,
    means: Vec<f64>,
    variances: Vec<f64>,
    /// `terms[starts[v]..starts[v + 1]]` are node `v`'s `(source, coefficient)` pairs, sorted
    /// by source (empty in [`Dependence::Independent`]).
    starts: Vec<usize>,
    terms: Vec<(u32, f64)>,
    /// Scratch for merging canonical forms.
    current: Vec<(u32, f64)>,
    merged: Vec<(u32, f64)>,
    /// Scratch space of [`truncate`].
    magnitudes: Vec<u64>,
}

impl StochasticMaxPlus {
    /// An empty graph.
    pub fn new(dependence: Dependence) -> StochasticMaxPlus {
        StochasticMaxPlus {
            dependence,
            means: Vec::new(),
            variances: Vec::new(),
            starts: vec![0],
            terms: Vec::new(),
            current: Vec::new(),
            merged: Vec::new(),
            magnitudes: Vec::new(),
        }
    }

    /// The dependence this graph was built with.
    pub fn dependence(&self) -> Dependence {
        self.dependence
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.means.len()
    }

    /// True before the first node.
    pub fn is_empty(&self) -> bool {
        self.means.is_empty()
    }

    /// Adds a node that starts at the maximum of the finish times of `predecessors` (at time 0
    /// when there are none; a predecessor listed twice counts once) and lasts a time of mean
    /// `mean` and variance `variance`, independent of everything else (variance 0: a constant).
    /// Returns its id; its finish time is [`StochasticMaxPlus::finish`].
    ///
    /// Errors: `InvalidParameter` for a non-finite mean, a negative or non-finite variance, a
    /// predecessor that is not a node of this graph, `max_terms == 0`, or more than `u32::MAX`
    /// nodes.
    pub fn add(&mut self, predecessors: &[NodeId], mean: f64, variance: f64) -> Result<NodeId> {
        let mean = check::finite("duration mean", mean)?;
        let variance = check::non_negative("duration variance", variance)?;
        let id = u32::try_from(self.len()).map_err(|_| invalid("number of nodes", f64::MAX))?;
        for p in predecessors {
            if p.index() >= self.len() {
                return Err(invalid("predecessor", p.0 as f64));
            }
        }
        let mut preds = predecessors.to_vec();
        preds.sort_unstable();
        preds.dedup();
        let (start_mean, start_var) = match self.dependence {
            Dependence::Independent => self.fold_independent(&preds)?,
            Dependence::SharedAncestors { max_terms } => {
                if max_terms == 0 {
                    return Err(invalid("max_terms", 0.0));
                }
                self.fold_shared(&preds, id, variance, max_terms)?
            }
        };
        self.means.push(start_mean + mean);
        self.variances.push(start_var + variance);
        self.starts.push(self.terms.len());
        Ok(NodeId(id))
    }

    /// The finish time of `node` as a normal law.
    ///
    /// Errors: `InvalidParameter` if `node` is not a node of this graph (an id from another
    /// graph).
    pub fn finish(&self, node: NodeId) -> Result<Normal> {
        self.known(node)?;
        Ok(self.normal(node))
    }

    fn normal(&self, node: NodeId) -> Normal {
        Normal {
            mean: self.means[node.index()],
            variance: self.variances[node.index()],
        }
    }

    fn known(&self, node: NodeId) -> Result<()> {
        if node.index() < self.len() {
            Ok(())
        } else {
            Err(invalid("node", f64::from(node.0)))
        }
    }

    /// `Cov(F_a, F_b)` as the graph carries it: the dot product of the canonical forms
    /// ([`Dependence::SharedAncestors`]); with [`Dependence::Independent`], the variance when
    /// `a == b` and 0 otherwise (what that mode assumes).
    ///
    /// Errors: `InvalidParameter` if a node is not of this graph.
    pub fn covariance(&self, a: NodeId, b: NodeId) -> Result<f64> {
        self.known(a)?;
        self.known(b)?;
        Ok(match self.dependence {
            Dependence::Independent if a == b => self.variances[a.index()],
            Dependence::Independent => 0.0,
            Dependence::SharedAncestors { .. } => dot(self.form(a.index()), self.form(b.index())),
        })
    }

    fn form(&self, v: usize) -> &[(u32, f64)] {
        &self.terms[self.starts[v]..self.starts[v + 1]]
    }

    /// The maximum of the predecessors' finish times, as independent normals.
    fn fold_independent(&self, preds: &[NodeId]) -> Result<(f64, f64)> {
        let Some((first, rest)) = preds.split_first() else {
            return Ok((0.0, 0.0));
        };
        let mut acc = self.normal(*first);
        for p in rest {
            let m = clark_max(acc, self.normal(*p), 0.0)?;
            acc = Normal {
                mean: m.mean,
                variance: m.variance,
            };
        }
        Ok((acc.mean, acc.variance))
    }

    /// The maximum of the predecessors in canonical form; pushes the new node's terms (its
    /// private term, source `id`, carries what each pairwise maximum added beyond the linear
    /// part, and the duration's variance).
    fn fold_shared(
        &mut self,
        preds: &[NodeId],
        id: u32,
        duration_var: f64,
        max_terms: usize,
    ) -> Result<(f64, f64)> {
        let mut current = std::mem::take(&mut self.current);
        let mut merged = std::mem::take(&mut self.merged);
        current.clear();
        let (mut mean, mut var) = (0.0, 0.0);
        if let Some((first, rest)) = preds.split_first() {
            current.extend_from_slice(self.form(first.index()));
            mean = self.means[first.index()];
            var = self.variances[first.index()];
            for p in rest {
                let other = self.form(p.index());
                let (om, ov) = (self.means[p.index()], self.variances[p.index()]);
                let m = clark_max_form((mean, var, &current), (om, ov, other), &mut merged)?;
                std::mem::swap(&mut current, &mut merged);
                settle(&mut current, id, m.variance);
                mean = m.mean;
                var = m.variance;
            }
        }
        add_private(&mut current, id, duration_var);
        truncate(&mut current, id, max_terms, &mut self.magnitudes);
        self.terms.extend_from_slice(&current);
        self.current = current;
        self.merged = merged;
        Ok((mean, var))
    }
}

/// Adds `variance` to the private term `(id, a)` at the end of `form` (creating it): the
/// canonical forms' private term, shared with the program's stochastic critical path.
pub(crate) fn add_private(form: &mut Vec<(u32, f64)>, id: u32, variance: f64) {
    if variance <= 0.0 {
        return;
    }
    match form.last_mut() {
        Some((source, a)) if *source == id => *a = (*a * *a + variance).sqrt(),
        _ => form.push((id, variance.sqrt())),
    }
}

/// Clark's maximum of two finish times in canonical form, `x` and `y` (mean, variance, terms
/// sorted by source): its moments and tightnesses, and in `out` its linear part, each term
/// weighted by the tightness of its side. What the maximum adds beyond that part is for the
/// caller to [`settle`].
pub(crate) fn clark_max_form(
    x: (f64, f64, &[(u32, f64)]),
    y: (f64, f64, &[(u32, f64)]),
    out: &mut Vec<(u32, f64)>,
) -> Result<ClarkMax> {
    let denominator = (x.1 * y.1).sqrt();
    let rho = if denominator > 0.0 {
        (dot(x.2, y.2) / denominator).clamp(-1.0, 1.0)
    } else {
        0.0
    };
    let m = clark_max(
        Normal {
            mean: x.0,
            variance: x.1,
        },
        Normal {
            mean: y.0,
            variance: y.1,
        },
        rho,
    )?;
    combine(x.2, m.tightness_x, y.2, m.tightness_y, out);
    Ok(m)
}

/// Makes the form of a maximum (its linear part from [`clark_max_form`]) carry the maximum's
/// `variance`: what the linear part lacks joins the private term of source `id`; a linear part
/// above it is scaled down to it.
pub(crate) fn settle(form: &mut Vec<(u32, f64)>, id: u32, variance: f64) {
    let linear: f64 = form.iter().map(|(_, a)| a * a).sum();
    if linear > variance {
        let shrink = (variance / linear).sqrt();
        form.iter_mut().for_each(|(_, a)| *a *= shrink);
    } else {
        add_private(form, id, variance - linear);
    }
}

/// Caps `form` (sorted by source, its private term of source `id` last if it has one) at
/// `max_terms` (at least 1) terms: the `max_terms - 1` shared terms of the largest magnitudes
/// stay, in source order (of equal magnitudes at the cut, those of the lower sources), and the
/// variance of the rest joins the private term. `magnitudes` is scratch space.
pub(crate) fn truncate(
    form: &mut Vec<(u32, f64)>,
    id: u32,
    max_terms: usize,
    magnitudes: &mut Vec<u64>,
) {
    if form.len() <= max_terms {
        return;
    }
    let own = match form.last() {
        Some(&(source, a)) if source == id => {
            form.pop();
            a * a
        }
        _ => 0.0,
    };
    let keep = max_terms - 1;
    let mut dropped = 0.0;
    if keep == 0 {
        dropped = form.iter().map(|(_, a)| a * a).sum();
        form.clear();
    } else if form.len() == keep + 1 {
        // one term too many (a node that added its own to a capped form): the smallest
        // magnitude goes, of equal ones the last in source order, as below
        let bits = |a: f64| a.abs().to_bits();
        let least = form.iter().map(|&(_, a)| bits(a)).min().unwrap_or_default();
        if let Some(at) = form.iter().rposition(|&(_, a)| bits(a) == least) {
            let (_, a) = form.remove(at);
            dropped = a * a;
        }
    } else if form.len() > keep {
        // the keep-th largest magnitude, found without sorting the form (by the bits of the
        // magnitudes, which order non-negative floats as their values do)
        magnitudes.clear();
        magnitudes.extend(form.iter().map(|(_, a)| a.abs().to_bits()));
        let at = magnitudes.len() - keep;
        let cut = f64::from_bits(*magnitudes.select_nth_unstable(at).1);
        let mut ties = keep - form.iter().filter(|(_, a)| a.abs() > cut).count();
        form.retain(|&(_, a)| {
            let m = a.abs();
            let kept = m > cut || (m == cut && ties > 0);
            if m == cut && kept {
                ties -= 1;
            }
            if !kept {
                dropped += a * a;
            }
            kept
        });
    }
    add_private(form, id, own + dropped);
}

fn invalid(what: &str, value: f64) -> AnalyticError {
    AnalyticError::InvalidParameter {
        what: what.to_owned(),
        value,
    }
}

/// `sum_j a_j b_j` over two forms sorted by source.
pub(crate) fn dot(a: &[(u32, f64)], b: &[(u32, f64)]) -> f64 {
    let (mut i, mut j, mut sum) = (0, 0, 0.0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                sum += a[i].1 * b[j].1;
                i += 1;
                j += 1;
            }
        }
    }
    sum
}

/// `out = x a + y b` over two forms sorted by source (terms of coefficient zero left out).
pub(crate) fn combine(
    a: &[(u32, f64)],
    x: f64,
    b: &[(u32, f64)],
    y: f64,
    out: &mut Vec<(u32, f64)>,
) {
    // (a local vector: its length and capacity stay in registers through the merge)
    let mut o = std::mem::take(out);
    o.clear();
    o.reserve(a.len() + b.len());
    let mut put = |term: (u32, f64)| {
        if term.1 != 0.0 {
            o.push(term);
        }
    };
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        let ((s, u), (t, v)) = (a[i], b[j]);
        if s < t {
            put((s, x * u));
            i += 1;
        } else if t < s {
            put((t, y * v));
            j += 1;
        } else {
            put((s, x * u + y * v));
            i += 1;
            j += 1;
        }
    }
    a[i..].iter().for_each(|&(s, u)| put((s, x * u)));
    b[j..].iter().for_each(|&(t, v)| put((t, y * v)));
    *out = o;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::expected_max_iid_normal;
    use crate::analytic::mva::tests::close;
    use rand_distr::{Distribution, StandardNormal};

    const SHARED: Dependence = Dependence::SharedAncestors { max_terms: 256 };

    /// Mean and variance of `samples` draws of `f`.
    fn monte_carlo(
        samples: usize,
        seed: u64,
        mut f: impl FnMut(&mut dyn FnMut() -> f64) -> f64,
    ) -> (f64, f64) {
        let mut rng = crate::rng::stream(seed, 0, 0);
        let mut z = move || -> f64 { StandardNormal.sample(&mut rng) };
        let (mut s1, mut s2) = (0.0, 0.0);
        for _ in 0..samples {
            let v = f(&mut z);
            s1 += v;
            s2 += v * v;
        }
        let mean = s1 / samples as f64;
        (mean, s2 / samples as f64 - mean * mean)
    }

    #[test]
    fn sums_are_exact_and_a_diamond_keeps_its_common_ancestor() {
        for dependence in [Dependence::Independent, SHARED] {
            let mut g = StochasticMaxPlus::new(dependence);
            let a = g.add(&[], 2.0, 1.0).unwrap();
            let b = g.add(&[a], 3.0, 4.0).unwrap();
            let c = g.add(&[b, b], 0.5, 0.0).unwrap();
            assert_eq!(
                g.finish(c).unwrap(),
                Normal {
                    mean: 5.5,
                    variance: 5.0
                }
            );
        }
        // D = A + 1 + max(e1, e2): E = 11 + 1/sqrt(pi), Var = 9 + 1 - 1/pi
        let pi = std::f64::consts::PI;
        let diamond = |dependence| {
            let mut g = StochasticMaxPlus::new(dependence);
            let a = g.add(&[], 10.0, 9.0).unwrap();
            let b = g.add(&[a], 1.0, 1.0).unwrap();
            let c = g.add(&[a], 1.0, 1.0).unwrap();
            let d = g.add(&[b, c], 0.0, 0.0).unwrap();
            (g.finish(d).unwrap(), g.covariance(a, d).unwrap())
        };
        let (shared, cov) = diamond(SHARED);
        assert!(
            close(shared.mean, 11.0 + 1.0 / pi.sqrt(), 1e-14),
            "{shared:?}"
        );
        assert!(close(shared.variance, 10.0 - 1.0 / pi, 1e-13), "{shared:?}");
        assert!(close(cov, 9.0, 1e-13));
        // independent operands of variance 10: 11 + sqrt(20) phi(0) = 12.78
        let (independent, cov) = diamond(Dependence::Independent);
        assert!(close(
            independent.mean,
            11.0 + (20.0 / (2.0 * pi)).sqrt(),
            1e-14
        ));
        assert_eq!(cov, 0.0);
    }

    /// `ranks` ranks, `steps` steps of work `N(1, sd^2)` each, a barrier after every step.
    fn barrier_program(dependence: Dependence, ranks: usize, steps: usize, sd: f64) -> Normal {
        let mut g = StochasticMaxPlus::new(dependence);
        let mut barrier = g.add(&[], 0.0, 0.0).unwrap();
        let mut work = Vec::with_capacity(ranks);
        for _ in 0..steps {
            work.clear();
            for _ in 0..ranks {
                work.push(g.add(&[barrier], 1.0, sd * sd).unwrap());
            }
            barrier = g.add(&work, 0.0, 0.0).unwrap();
        }
        g.finish(barrier).unwrap()
    }

    #[test]
    fn barriers_share_their_past_and_independence_overcounts_it() {
        let (ranks, steps, sd) = (16, 10, 0.2);
        // exact: the barrier times add, each the max of 16 i.i.d. N(1, 0.04)
        let one = expected_max_iid_normal(ranks as u64, 1.0, sd).unwrap();
        let (exact_mean, exact_var) = (steps as f64 * one.mean, steps as f64 * one.variance);
        let (mc_mean, _) = monte_carlo(50_000, 11, |z| {
            (0..steps)
                .map(|_| (0..ranks).map(|_| 1.0 + sd * z()).fold(f64::MIN, f64::max))
                .sum()
        });
        assert!(
            close(mc_mean, exact_mean, 2e-4),
            "{mc_mean} vs {exact_mean}"
        );
        let shared = barrier_program(SHARED, ranks, steps, sd);
        // only Clark's iteration error on the 16 work times: 0.006 sd per barrier
        assert!(
            close(shared.mean, exact_mean, 1e-3),
            "{shared:?} vs {exact_mean}"
        );
        assert!(shared.variance < exact_var && shared.variance > 0.75 * exact_var);
        // independent: the ranks' start (the last barrier) is counted as independent noise in
        // each of them, so every barrier overstates the spread it takes the maximum of: the
        // random part (E - steps) is 13% high, the variance 9 times too small
        let independent = barrier_program(Dependence::Independent, ranks, steps, sd);
        let excess = |m: f64| m - steps as f64;
        assert!(
            excess(independent.mean) > 1.1 * excess(exact_mean),
            "{independent:?}"
        );
        assert!(independent.variance < 0.2 * exact_var, "{independent:?}");
        // a cap of one term keeps nothing shared: exactly the independent evaluation
        let capped = barrier_program(
            Dependence::SharedAncestors { max_terms: 1 },
            ranks,
            steps,
            sd,
        );
        assert!(close(capped.mean, independent.mean, 1e-12), "{capped:?}");
        assert!(
            close(capped.variance, independent.variance, 1e-9),
            "{capped:?}"
        );
    }

    #[test]
    fn a_ring_stencil_against_monte_carlo() {
        // rank i at step s waits for itself and its two ring neighbours at step s - 1, then
        // works N(1, 0.3^2); 8 ranks, 12 steps. Correlation comes from overlapping pasts.
        let (ranks, steps, sd) = (8usize, 12usize, 0.3);
        let run = |dependence| {
            let mut g = StochasticMaxPlus::new(dependence);
            let mut prev: Vec<NodeId> = (0..ranks)
                .map(|_| g.add(&[], 1.0, sd * sd).unwrap())
                .collect();
            for _ in 1..steps {
                prev = (0..ranks)
                    .map(|i| {
                        let preds = [
                            prev[(i + ranks - 1) % ranks],
                            prev[i],
                            prev[(i + 1) % ranks],
                        ];
                        g.add(&preds, 1.0, sd * sd).unwrap()
                    })
                    .collect();
            }
            let end = g.add(&prev, 0.0, 0.0).unwrap();
            g.finish(end).unwrap()
        };
        let (mc_mean, mc_var) = monte_carlo(40_000, 5, |z| {
            let mut t: Vec<f64> = (0..ranks).map(|_| 1.0 + sd * z()).collect();
            for _ in 1..steps {
                t = (0..ranks)
                    .map(|i| {
                        let start = t[(i + ranks - 1) % ranks].max(t[i]).max(t[(i + 1) % ranks]);
                        start + 1.0 + sd * z()
                    })
                    .collect();
            }
            t.into_iter().fold(f64::MIN, f64::max)
        });
        let shared = run(SHARED);
        let independent = run(Dependence::Independent);
        let shared_err = (shared.mean - mc_mean).abs() / mc_mean;
        let independent_err = (independent.mean - mc_mean).abs() / mc_mean;
        // measured: Monte Carlo 15.882 (standard error 0.003), shared 16.187 (+1.9%, Clark's
        // normal approximation of 3-way maxima compounded over 12 steps; variance 0.22
        // against 0.36), independent 16.535 (+4.1%, variance 0.066)
        assert!(
            shared_err < 0.025,
            "shared {shared:?} vs {mc_mean} (var {mc_var})"
        );
        assert!(
            independent_err > 2.0 * shared_err,
            "{independent:?} {shared:?} {mc_mean}"
        );
        assert!(shared.variance > 2.0 * independent.variance);
    }

    #[test]
    fn refuses_bad_input() {
        let mut g = StochasticMaxPlus::new(SHARED);
        assert!(g.add(&[], f64::NAN, 0.0).is_err());
        assert!(g.add(&[], 0.0, -1.0).is_err());
        assert!(g.add(&[NodeId(3)], 0.0, 1.0).is_err());
        assert!(g.is_empty());
        let a = g.add(&[], 1.0, 1.0).unwrap();
        assert!(g.finish(NodeId(1)).is_err());
        assert!(g.covariance(a, NodeId(5)).is_err());
        let mut h = StochasticMaxPlus::new(Dependence::SharedAncestors { max_terms: 0 });
        assert!(h.add(&[], 0.0, 1.0).is_err());
    }

    #[test]
    fn a_capped_form_keeps_its_largest_terms_in_source_order_and_its_variance() {
        let variance = |f: &[(u32, f64)]| f.iter().map(|(_, a)| a * a).sum::<f64>();
        // shared terms of sources 1..=6, the private term of source 9 last
        let form = vec![
            (1, 0.5),
            (2, -2.0),
            (3, 1.0),
            (4, 1.0),
            (5, 3.0),
            (6, 1.0),
            (9, 0.25),
        ];
        let mut capped = form.clone();
        truncate(&mut capped, 9, 5, &mut Vec::new());
        // the four largest shared terms: 3.0 and -2.0, then two of the three at 1.0, the
        // lower sources 3 and 4; sources 1 and 6 join the private term
        let own = (0.25_f64 * 0.25 + 0.5 * 0.5 + 1.0).sqrt();
        assert_eq!(
            capped,
            vec![(2, -2.0), (3, 1.0), (4, 1.0), (5, 3.0), (9, own)]
        );
        assert!((variance(&capped) - variance(&form)).abs() < 1e-12);
        // within the cap: unchanged; a cap of one keeps only the private term
        let mut same = form.clone();
        truncate(&mut same, 9, 7, &mut Vec::new());
        assert_eq!(same, form);
        let mut one = form.clone();
        truncate(&mut one, 9, 1, &mut Vec::new());
        assert_eq!(one.len(), 1);
        assert_eq!(one[0].0, 9);
        assert!((variance(&one) - variance(&form)).abs() < 1e-12);
    }

    #[test]
    fn a_form_one_term_over_its_cap_drops_its_last_smallest_term_as_a_longer_one_would() {
        // six shared terms (the smallest magnitude, 0.5, at sources 2 and 5) and the private
        // term of source 9: a cap of 6 keeps five shared terms, dropping one
        let form = vec![
            (1, 1.0),
            (2, -0.5),
            (3, 2.0),
            (4, 0.75),
            (5, 0.5),
            (7, 1.5),
            (9, 0.25),
        ];
        let mut capped = form.clone();
        truncate(&mut capped, 9, 6, &mut Vec::new());
        // of the two at 0.5, the later source (5) goes: its variance joins the private term
        let own = (0.25_f64 * 0.25 + 0.5 * 0.5).sqrt();
        assert_eq!(
            capped,
            vec![(1, 1.0), (2, -0.5), (3, 2.0), (4, 0.75), (7, 1.5), (9, own)]
        );
        // the choice the selection of a form two over its cap makes: of three at 0.5, the
        // lowest source (2) stays
        let mut longer = form.clone();
        longer.insert(6, (8, 0.5));
        truncate(&mut longer, 9, 6, &mut Vec::new());
        let own = (0.25_f64 * 0.25 + 0.5 * 0.5 + 0.5 * 0.5).sqrt();
        assert_eq!(
            longer,
            vec![(1, 1.0), (2, -0.5), (3, 2.0), (4, 0.75), (7, 1.5), (9, own)]
        );
    }
}
