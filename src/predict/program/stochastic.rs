//! The stochastic evaluation of a program: the expected makespan of its activity graph
//! (`super::graph`) with every random duration at its law, not at its mean. At every place
//! ranks meet, the time is the expected maximum of what reaches it, `E[max] >= max E`, which the
//! mean-value evaluation leaves out.
//!
//! **Exact: maxima at synchronisations ([`exact`]).** Each node's finish time is kept as a
//! max-plus form over independent random variables, `T = max_k (sum_{v in S_k} V_v + a_k)`
//! (a term per set of draws a path to the node crosses), which a maximum merges and a duration
//! extends (`max(x, y) + d = max(x + d, y + d)`) without approximation. Nodes are taken in the
//! order of their mean-value times. When the ranks synchronise (an ideal barrier, the last
//! round of a recursive-doubling allreduce, a dissemination barrier, any collective after which
//! every live clock is the same form up to a constant), the terms share a common part `C` and
//! differ by independent rests `R_k`, and nothing else alive refers to the rests: the form is
//! replaced by `C + M`, `M = max_k (R_k + a_k)` a new variable independent of everything alive,
//! whose law is the product of the rests' distribution functions and whose moments are exact
//! ([`crate::analytic::max_moments`]). So a compute followed by a barrier, repeated, is the sum
//! of the steps' exact expected maxima (`H_P` times the mean for exponential compute, `a + (b -
//! a) P / (P + 1)` for uniform), and so is a compute followed by any collective whose rounds
//! end with every rank waiting for all. It fails, saying why, where ranks are coupled only
//! through neighbours (a path's draws are shared by partial maxima that never meet in one
//! synchronisation), where a rank's time between synchronisations is a sum whose law is not
//! computed (`super::laws`), or where the forms grow beyond [`max_terms`] paths.
//!
//! **Bounds ([`level_bound`]).** Below, the mean-value critical path (Jensen). Above, the
//! bulk-synchronous relaxation: number the graph's levels so that a node is one level after any
//! predecessor of another rank; then `T <= sum_l max_r S_{r,l}`, `S_{r,l}` the sum of rank
//! `r`'s durations at level `l`, independent across ranks, so `E[T] <= sum_l E[max_r S_{r,l}]`
//! exactly computed (the sum over steps of the expected maxima, for a ring or halo exchange).
//! Both hold when nothing can be shared (no queueing anywhere).
//!
//! **Approximation ([`clark`]).** Where the exact composition fails, the stochastic critical
//! path: each finish time a normal law in the linear canonical form over the nodes' durations
//! (shared ancestors kept), maxima by Clark's formulas (as [`crate::analytic::StochasticMaxPlus`]).

use std::hash::{Hash, Hasher};
use std::rc::Rc;

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

use super::graph::{Duration, Graph, NONE};
use super::laws::{self, Maximum, Sum};
use crate::analytic::canonical::{add_private, clark_max_form, settle, truncate};
use crate::analytic::cost::{allowance, budget_text, scaled};
use crate::analytic::{MaxMoments, Normal};
use crate::metrics::name::{Figure, Subject};

/// The most terms (paths with different draws) a form may have, beyond the ranks' number:
/// forms grow like this only where ranks are coupled without synchronising.
const EXTRA_TERMS: usize = 256;

/// The most terms a form of a program of `ranks` ranks may have.
pub fn max_terms(ranks: u32) -> usize {
    2 * ranks as usize + EXTRA_TERMS
}

/// What the exact evaluation found.
#[derive(Clone, Debug)]
pub struct Exact {
    /// The makespan's mean and variance.
    pub makespan: MaxMoments,
    /// Per rank: its mean finish time.
    pub finish: Vec<f64>,
    /// Synchronisations whose maximum was composed exactly (each a new variable).
    pub synchronisations: usize,
}

/// One term of a form: the sum of the variables `vars` (sorted) plus `shift`.
#[derive(Clone, Debug, PartialEq)]
struct Term {
    vars: Vec<u32>,
    shift: f64,
}

/// A variable of the exact evaluation: a node's random duration, or a composed maximum.
#[derive(Debug)]
enum VarLaw<'p> {
    Draw(u32),
    Max(Rc<Maximum<'p>>),
}

#[derive(Debug)]
struct Var<'p> {
    law: VarLaw<'p>,
    /// Live forms that contain it.
    refs: u32,
}

struct Composer<'g, 'p> {
    g: &'g Graph<'p>,
    vars: Vec<Var<'p>>,
    forms: Vec<Option<Vec<Term>>>,
    remaining: Vec<u32>,
    /// Live nodes by the signature of their form.
    sigs: FxHashMap<u64, FxHashSet<u32>>,
    sig_of: Vec<u64>,
    /// Relative shifts are compared in multiples of this (absorbs the rounding of sums).
    quantum: f64,
    max_terms: usize,
    synchronisations: usize,
    /// Variables handled in forms so far (against [`EXACT_WORK`]).
    work: u64,
    /// Nodes visited so far.
    visited: usize,
    /// [`EXACT_WORK`] times the budget factor in force.
    budget: f64,
}

/// Most variables (summed over the forms' terms, times the terms compared where they share
/// variables) the exact
/// composition handles before it refuses as too costly (a fraction of a second on one core).
pub const EXACT_WORK: u64 = 10_000_000;

/// The exact expected makespan (and each rank's expected finish) of the graph, or why it
/// cannot be composed exactly (see the module documentation).
pub fn exact(g: &Graph<'_>) -> Result<Exact, String> {
    let ranks = g.chains.len() as u32;
    let horizon = g.time.iter().copied().fold(0.0, f64::max);
    let mut c = Composer {
        g,
        vars: Vec::new(),
        forms: vec![None; g.len()],
        remaining: g.successors(),
        sigs: FxHashMap::default(),
        sig_of: vec![0; g.len()],
        quantum: 1e-11 * horizon.max(f64::MIN_POSITIVE),
        max_terms: max_terms(ranks),
        synchronisations: 0,
        work: 0,
        visited: 0,
        budget: scaled(EXACT_WORK as f64),
    };
    let finals = g.finals();
    for &f in &finals {
        c.remaining[f as usize] += 1;
    }
    let mut order: Vec<u32> = (0..g.len() as u32).collect();
    order.sort_by(|&a, &b| {
        g.time[a as usize]
            .total_cmp(&g.time[b as usize])
            .then(a.cmp(&b))
    });
    for v in order {
        c.visited += 1;
        c.visit(v)?;
    }
    let mut finish = Vec::with_capacity(finals.len());
    let mut all: Vec<Term> = Vec::new();
    for &f in &finals {
        let form = c.forms[f as usize]
            .as_ref()
            .ok_or("a rank's last activity was lost")?;
        finish.push(c.expect(form)?.mean);
        all.extend(form.iter().cloned());
    }
    let sink = merge(all);
    Ok(Exact {
        makespan: c.expect(&sink)?,
        finish,
        synchronisations: c.synchronisations,
    })
}

/// Terms with equal variables merged (the largest shift kept), sorted by variables.
fn merge(mut terms: Vec<Term>) -> Vec<Term> {
    terms.sort_by(|a, b| a.vars.cmp(&b.vars));
    let mut out: Vec<Term> = Vec::with_capacity(terms.len());
    for t in terms {
        match out.last_mut() {
            Some(last) if last.vars == t.vars => last.shift = last.shift.max(t.shift),
            _ => out.push(t),
        }
    }
    out
}

/// True when every element of `a` (sorted) is in `b` (sorted).
fn subset(a: &[u32], b: &[u32]) -> bool {
    if a.len() > b.len() {
        return false;
    }
    let mut j = 0;
    for x in a {
        while j < b.len() && b[j] < *x {
            j += 1;
        }
        if j == b.len() || b[j] != *x {
            return false;
        }
        j += 1;
    }
    true
}

/// Drops the terms another term dominates (a superset of its variables, all non-negative,
/// and a shift at least as large); with the work done, in variables compared.
fn prune(terms: Vec<Term>) -> (Vec<Term>, u64) {
    let size: u64 = terms.iter().map(|t| t.vars.len() as u64 + 1).sum();
    if terms.len() < 2 {
        return (terms, size);
    }
    let (_, rests) = split(&terms);
    if disjoint(&rests) {
        // only a term with nothing beyond the common part can be dominated (merged terms
        // have different variables, so there is at most one), by any term of a shift at
        // least as large
        let Some(bare) = rests.iter().position(Vec::is_empty) else {
            return (terms, size);
        };
        let shift = terms[bare].shift;
        let dominated = terms
            .iter()
            .enumerate()
            .any(|(j, o)| j != bare && o.shift >= shift);
        let mut terms = terms;
        if dominated {
            terms.remove(bare);
        }
        return (terms, size);
    }
    let work = size * terms.len() as u64;
    let keep: Vec<bool> = (0..terms.len())
        .map(|i| {
            !terms.iter().enumerate().any(|(j, o)| {
                j != i && o.shift >= terms[i].shift && subset(&terms[i].vars, &o.vars)
            })
        })
        .collect();
    let kept = terms
        .into_iter()
        .zip(keep)
        .filter_map(|(t, k)| k.then_some(t))
        .collect();
    (kept, work)
}

/// The variables every term has, and each term's others.
fn split(form: &[Term]) -> (Vec<u32>, Vec<Vec<u32>>) {
    let mut common = form[0].vars.clone();
    for t in &form[1..] {
        common.retain(|v| t.vars.binary_search(v).is_ok());
    }
    let rests = form
        .iter()
        .map(|t| {
            t.vars
                .iter()
                .copied()
                .filter(|v| common.binary_search(v).is_err())
                .collect()
        })
        .collect();
    (common, rests)
}

/// True when no variable is in two of the rests.
fn disjoint(rests: &[Vec<u32>]) -> bool {
    let mut seen: FxHashMap<u32, ()> = FxHashMap::default();
    rests
        .iter()
        .flatten()
        .all(|v| seen.insert(*v, ()).is_none())
}

impl<'p> Composer<'_, 'p> {
    fn visit(&mut self, v: u32) -> Result<(), String> {
        let preds = self.g.preds(v);
        let mut terms: Vec<Term> = Vec::new();
        if preds.is_empty() {
            terms.push(Term {
                vars: Vec::new(),
                shift: 0.0,
            });
        }
        for &p in preds {
            let pi = p as usize;
            self.remaining[pi] -= 1;
            if self.remaining[pi] == 0 {
                let form = self.forms[pi]
                    .take()
                    .ok_or("an activity's predecessor was lost")?;
                self.unregister(p, &form);
                terms.extend(form);
            } else {
                let form = self.forms[pi]
                    .as_ref()
                    .ok_or("an activity's predecessor was lost")?;
                terms.extend(form.iter().cloned());
            }
        }
        let mut form = merge(terms);
        match self.g.duration[v as usize] {
            Duration::Fixed(c) => form.iter_mut().for_each(|t| t.shift += c),
            Duration::Random(i) => {
                let id = self.vars.len() as u32;
                self.vars.push(Var {
                    law: VarLaw::Draw(i),
                    refs: 0,
                });
                form.iter_mut().for_each(|t| t.vars.push(id));
            }
        }
        let (form, work) = prune(form);
        self.work += work;
        if self.work as f64 > self.budget {
            return Err(format!(
                "too costly: more than {} variables to compare in the max-plus forms (the budget) after {} of {} activities; {}",
                budget_text(self.budget),
                self.visited,
                self.g.len(),
                estimate(
                    self.work,
                    self.visited,
                    self.g.len(),
                    self.work as f64 / self.visited.max(1) as f64,
                    EXACT_WORK
                )
            ));
        }
        if form.len() > self.max_terms {
            return Err(format!(
                "the ranks are coupled without synchronising all of them (a time reached by more than {} paths with different random durations)",
                self.max_terms
            ));
        }
        if self.remaining[v as usize] == 0 {
            return Ok(());
        }
        self.register(v, form);
        self.collapse(v)
    }

    fn distinct_vars(form: &[Term]) -> Vec<u32> {
        let mut all: Vec<u32> = form.iter().flat_map(|t| t.vars.iter().copied()).collect();
        all.sort_unstable();
        all.dedup();
        all
    }

    fn signature(&self, form: &[Term]) -> u64 {
        let top = form
            .iter()
            .map(|t| t.shift)
            .fold(f64::NEG_INFINITY, f64::max);
        let mut h = FxHasher::default();
        for t in form {
            t.vars.hash(&mut h);
            (((top - t.shift) / self.quantum).round() as i64).hash(&mut h);
        }
        h.finish()
    }

    fn register(&mut self, v: u32, form: Vec<Term>) {
        for x in Self::distinct_vars(&form) {
            self.vars[x as usize].refs += 1;
        }
        let sig = self.signature(&form);
        self.sig_of[v as usize] = sig;
        self.sigs.entry(sig).or_default().insert(v);
        self.forms[v as usize] = Some(form);
    }

    fn unregister(&mut self, v: u32, form: &[Term]) {
        for x in Self::distinct_vars(form) {
            self.vars[x as usize].refs -= 1;
        }
        let sig = self.sig_of[v as usize];
        if let Some(list) = self.sigs.get_mut(&sig) {
            list.remove(&v);
            if list.is_empty() {
                self.sigs.remove(&sig);
            }
        }
    }

    /// The law of the sum of `vars` plus `shift`.
    fn sum(&self, vars: &[u32], shift: f64) -> Sum<'p> {
        let mut s = Sum {
            shift,
            ..Sum::default()
        };
        for &x in vars {
            match &self.vars[x as usize].law {
                VarLaw::Draw(i) => {
                    let (c, p) = laws::piece(&self.g.laws[*i as usize]);
                    s.shift += c;
                    if let Some(p) = p {
                        s.add(p);
                    }
                }
                VarLaw::Max(m) => s.maxima.push(Rc::clone(m)),
            }
        }
        s
    }

    /// A key equal for rests of equal law.
    fn key(&self, vars: &[u32], shift: f64) -> (Vec<u64>, i64) {
        let mut k: Vec<u64> = vars
            .iter()
            .map(|&x| match &self.vars[x as usize].law {
                VarLaw::Draw(i) => u64::from(*i),
                VarLaw::Max(_) => (1 << 40) + u64::from(x),
            })
            .collect();
        k.sort_unstable();
        (k, (shift / self.quantum).round() as i64)
    }

    /// The rests' sums with their multiplicities, shifts relative to the largest.
    fn grouped(&self, form: &[Term], rests: &[Vec<u32>], top: f64) -> Vec<(Sum<'p>, u64)> {
        let mut index: FxHashMap<(Vec<u64>, i64), usize> = FxHashMap::default();
        let mut out: Vec<(Sum<'p>, u64)> = Vec::new();
        for (t, rest) in form.iter().zip(rests) {
            let shift = t.shift - top;
            let key = self.key(rest, shift);
            match index.get(&key) {
                Some(&i) => out[i].1 += 1,
                None => {
                    index.insert(key, out.len());
                    out.push((self.sum(rest, shift), 1));
                }
            }
        }
        out
    }

    fn var_moments(&self, x: u32) -> Result<(f64, f64), String> {
        Ok(match &self.vars[x as usize].law {
            VarLaw::Draw(i) => {
                let law = &self.g.laws[*i as usize];
                (law.mean(), law.variance())
            }
            VarLaw::Max(m) => {
                let mm = m.moments()?;
                (mm.mean, mm.variance)
            }
        })
    }

    /// The mean and variance of a form.
    fn expect(&self, form: &[Term]) -> Result<MaxMoments, String> {
        let (common, rests) = split(form);
        let (mut mean, mut variance) = (0.0, 0.0);
        for &x in &common {
            let (m, v) = self.var_moments(x)?;
            mean += m;
            variance += v;
        }
        let top = form
            .iter()
            .map(|t| t.shift)
            .fold(f64::NEG_INFINITY, f64::max);
        if form.len() == 1 {
            mean += top;
        } else {
            if !disjoint(&rests) {
                return Err("ranks reach the end through partial maxima that share random durations (coupled through neighbours, not one synchronisation)".to_owned());
            }
            let m = laws::max_moments(&self.grouped(form, &rests, top))?;
            mean += m.mean + top;
            variance += m.variance;
        }
        Ok(MaxMoments {
            mean,
            second_moment: variance + mean * mean,
            variance,
        })
    }

    /// Replaces node `v`'s form and every live form equal to it up to a constant by the common
    /// part plus a new variable, their maximum, when nothing else alive refers to the rests.
    fn collapse(&mut self, v: u32) -> Result<(), String> {
        let form = self.forms[v as usize].as_ref().expect("registered");
        if form.len() < 2 {
            return Ok(());
        }
        let (common, rests) = split(form);
        if !disjoint(&rests) {
            return Ok(());
        }
        let sig = self.sig_of[v as usize];
        let live = self.sigs.get(&sig).map_or(0, FxHashSet::len) as u32;
        if rests
            .iter()
            .flatten()
            .any(|&x| self.vars[x as usize].refs != live)
        {
            return Ok(());
        }
        let top = form
            .iter()
            .map(|t| t.shift)
            .fold(f64::NEG_INFINITY, f64::max);
        let maximum = Maximum::new(self.grouped(form, &rests, top), self.quantum)?;
        let id = self.vars.len() as u32;
        self.vars.push(Var {
            law: VarLaw::Max(Rc::new(maximum)),
            refs: 0,
        });
        self.synchronisations += 1;
        let mut vars = common;
        vars.push(id);
        let mut equal: Vec<u32> = self
            .sigs
            .get(&sig)
            .map(|l| l.iter().copied().collect())
            .unwrap_or_default();
        equal.sort_unstable();
        for w in equal {
            let old = self.forms[w as usize].take().expect("registered");
            let shift = old
                .iter()
                .map(|t| t.shift)
                .fold(f64::NEG_INFINITY, f64::max);
            self.unregister(w, &old);
            self.register(
                w,
                vec![Term {
                    vars: vars.clone(),
                    shift,
                }],
            );
        }
        Ok(())
    }
}

/// The bulk-synchronous upper bound on the expected makespan (see the module documentation),
/// valid when no resource can be shared.
pub fn level_bound(g: &Graph<'_>) -> Result<f64, String> {
    let n = g.len();
    let mut level = vec![0_u32; n];
    // per (level, rank): the constant and the random laws of the rank's durations there
    let mut parts: FxHashMap<(u32, u32), (f64, Vec<u32>)> = FxHashMap::default();
    for v in 0..n as u32 {
        let owner = g.owner[v as usize];
        let l = g
            .preds(v)
            .iter()
            .map(|&p| level[p as usize] + u32::from(g.owner[p as usize] != owner))
            .max()
            .unwrap_or(0);
        level[v as usize] = l;
        if owner == NONE {
            // the root and barrier releases last nothing
            continue;
        }
        let e = parts.entry((l, owner)).or_default();
        match g.duration[v as usize] {
            Duration::Fixed(c) => e.0 += c,
            Duration::Random(i) => e.1.push(i),
        }
    }
    // per level, the multiset of (laws, constant) compositions
    let mut levels: std::collections::BTreeMap<u32, Vec<(Vec<u32>, f64)>> = Default::default();
    for ((l, _), (c, mut laws)) in parts {
        laws.sort_unstable();
        levels.entry(l).or_default().push((laws, c));
    }
    let mut cache: FxHashMap<u64, f64> = FxHashMap::default();
    let mut total = 0.0;
    for (_, mut ranks) in levels {
        ranks.sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut h = FxHasher::default();
        for (laws, c) in &ranks {
            laws.hash(&mut h);
            c.to_bits().hash(&mut h);
        }
        let key = h.finish();
        if let Some(e) = cache.get(&key) {
            total += e;
            continue;
        }
        let e = level_max(g, &ranks)?;
        cache.insert(key, e);
        total += e;
    }
    Ok(total)
}

/// `E[max_r S_r]` for the ranks' sums at one level; where a sum's law is not computed, the
/// bound `max of sums <= sum of maxima` over its parts.
fn level_max(g: &Graph<'_>, ranks: &[(Vec<u32>, f64)]) -> Result<f64, String> {
    let sum = |laws: &[u32], c: f64| {
        let mut s = Sum {
            shift: c,
            ..Sum::default()
        };
        for &i in laws {
            let (k, p) = laws::piece(&g.laws[i as usize]);
            s.shift += k;
            if let Some(p) = p {
                s.add(p);
            }
        }
        s
    };
    // (the ranks come sorted: equal compositions are neighbours)
    let mut terms: Vec<(Sum<'_>, u64)> = Vec::new();
    for (k, (laws, c)) in ranks.iter().enumerate() {
        if k > 0 && ranks[k - 1].0 == *laws && ranks[k - 1].1 == *c {
            if let Some((_, m)) = terms.last_mut() {
                *m += 1;
            }
        } else {
            terms.push((sum(laws, *c), 1));
        }
    }
    if laws::total_cost(&terms).is_ok()
        && let Ok(m) = laws::max_moments(&terms)
    {
        return Ok(m.mean);
    }
    // max_r sum_i Y_ri <= sum_i max_r Y_ri: one slot per part, in each rank's order
    let width = ranks.iter().map(|(l, _)| l.len()).max().unwrap_or(0);
    let mut bound = ranks.iter().map(|(_, c)| *c).fold(0.0, f64::max);
    for i in 0..width {
        let slot: Vec<(Sum<'_>, u64)> = ranks
            .iter()
            .map(|(l, _)| (l.get(i).map_or_else(Sum::default, |&x| sum(&[x], 0.0)), 1))
            .collect();
        bound += laws::max_moments(&slot)?.mean;
    }
    Ok(bound)
}

/// What the stochastic critical path found.
#[derive(Clone, Debug)]
pub struct Approximate {
    /// The makespan as a normal law.
    pub makespan: Normal,
    /// Per rank: its mean finish time.
    pub finish: Vec<f64>,
}

/// Most terms a finish time keeps in its canonical form; beyond them the smallest are folded
/// into the node's private term (its variance kept, the correlation it carried dropped, which
/// biases the maxima up).
pub const CLARK_TERMS: usize = 512;

/// Most canonical-form terms the stochastic critical path combines before it refuses as too
/// costly, the nodes times their forms' lengths (about 0.1 s on one core of this project's
/// 2-core Xeon: 5 ns a term, `parsim analyze --budget 6
/// validation/prog_halo_allreduce_torus_p64.toml`). It refuses sooner when the work of the
/// activities left, at the rate of the last [`CLARK_WINDOW`], would take it over.
pub const CLARK_WORK: u64 = 20_000_000;

/// Activities between two estimates of the stochastic critical path's whole work.
pub const CLARK_WINDOW: u32 = 1024;

/// A finish time in canonical form: `mean + sum_j a_j Z_j` over independent unit sources `Z_j`
/// (one per node: its duration and what its maximum added beyond the linear part), sorted by
/// source, and its variance.
#[derive(Clone, Debug)]
struct Canonical {
    mean: f64,
    variance: f64,
    terms: Vec<(u32, f64)>,
}

/// The stochastic critical path of the graph by Clark's maxima with shared ancestors kept
/// (the linear canonical form of [`crate::analytic::StochasticMaxPlus`], with at most [`CLARK_TERMS`] terms a
/// node and only the live nodes' forms in memory), each node's duration given by its law's
/// mean and variance plus `extra[v]` (a mean delay the graph leaves out, such as queueing;
/// empty: none).
pub fn clark(g: &Graph<'_>, extra: &[f64]) -> Result<Approximate, String> {
    clark_marked(g, extra, &[]).map(|(x, _)| x)
}

/// [`clark`], and the expected maximum of each set of nodes in `marks`, folded as the
/// makespan's are (the ranks' nodes at the end of each iteration of a loop, for
/// [`super::periodic`]).
pub(super) fn clark_marked(
    g: &Graph<'_>,
    extra: &[f64],
    marks: &[Vec<u32>],
) -> Result<(Approximate, Vec<f64>), String> {
    let mut remaining = g.successors();
    let finals = g.finals();
    for &f in &finals {
        remaining[f as usize] += 1;
    }
    // (node, set) for every marked node, in the order the nodes are taken
    let mut ends: Vec<(u32, usize)> = marks
        .iter()
        .enumerate()
        .flat_map(|(j, set)| set.iter().map(move |&v| (v, j)))
        .collect();
    ends.sort_unstable();
    let mut next_end = 0;
    let mut marked: Vec<Option<Canonical>> = vec![None; marks.len()];
    let mut forms: Vec<Option<Canonical>> = vec![None; g.len()];
    let (mut work, mut window) = (0_u64, 0_u64);
    let budget = scaled(CLARK_WORK as f64);
    let mut magnitudes = Vec::new();
    // the terms of forms no longer live, for the next ones (no allocation per maximum)
    let mut spare: Vec<Vec<(u32, f64)>> = Vec::new();
    let empty = |spare: &mut Vec<Vec<(u32, f64)>>| {
        let mut terms = spare.pop().unwrap_or_default();
        terms.clear();
        terms
    };
    const LOST: &str = "an activity's predecessor was lost";
    for v in 0..g.len() as u32 {
        let preds = g.preds(v);
        // the maximum of the predecessors' forms, taken from them where they are live (the
        // first one's copied only when it is the only one)
        let mut acc: Option<Canonical> = None;
        let mut first: Option<usize> = None;
        for &p in preds {
            let pi = p as usize;
            remaining[pi] -= 1;
            let other = forms[pi].as_ref().ok_or(LOST)?;
            let base = match (&acc, first) {
                (Some(a), _) => a,
                (None, Some(f)) => forms[f].as_ref().ok_or(LOST)?,
                (None, None) => {
                    first = Some(pi);
                    continue;
                }
            };
            let mut terms = empty(&mut spare);
            let m = clark_max_form(
                (base.mean, base.variance, &base.terms),
                (other.mean, other.variance, &other.terms),
                &mut terms,
            )
            .map_err(clark_failed)?;
            settle(&mut terms, v, m.variance);
            let max = Canonical {
                mean: m.mean,
                variance: m.variance,
                terms,
            };
            spare.extend(acc.replace(max).map(|old| old.terms));
            for q in [first.take(), Some(pi)].into_iter().flatten() {
                if remaining[q] == 0 {
                    spare.extend(forms[q].take().map(|f| f.terms));
                }
            }
        }
        let mut acc = match (acc, first) {
            (Some(acc), _) => acc,
            (None, Some(f)) if remaining[f] == 0 => forms[f].take().ok_or(LOST)?,
            (None, Some(f)) => {
                let form = forms[f].as_ref().ok_or(LOST)?;
                let mut terms = empty(&mut spare);
                terms.extend_from_slice(&form.terms);
                Canonical {
                    mean: form.mean,
                    variance: form.variance,
                    terms,
                }
            }
            (None, None) => Canonical {
                mean: 0.0,
                variance: 0.0,
                terms: empty(&mut spare),
            },
        };
        let variance = g.variance(v);
        if !variance.is_finite() {
            return Err("a duration has an infinite variance".to_owned());
        }
        acc.mean += g.mean(v) + extra.get(v as usize).copied().unwrap_or(0.0);
        acc.variance += variance;
        add_private(&mut acc.terms, v, variance);
        truncate(&mut acc.terms, v, CLARK_TERMS, &mut magnitudes);
        work += acc.terms.len() as u64 * (preds.len() as u64).max(1);
        while let Some(&(_, j)) = ends.get(next_end).filter(|&&(node, _)| node == v) {
            let sink = fold(marked[j].take(), &acc)?;
            work += sink.terms.len() as u64;
            marked[j] = Some(sink);
            next_end += 1;
        }
        // every `CLARK_WINDOW` activities, the work of the rest at the last window's rate:
        // a graph beyond the budget is refused once its forms have grown, not at the budget
        if v % CLARK_WINDOW == CLARK_WINDOW - 1 {
            let rate = (work - window) as f64 / f64::from(CLARK_WINDOW);
            window = work;
            let whole = work as f64 + rate * (g.len() - v as usize - 1) as f64;
            if whole > budget {
                return Err(format!(
                    "too costly: an estimated {whole:.1e} canonical-form terms to combine in all (at the rate of the last {CLARK_WINDOW} of the first {} of {} activities), more than the budget of {}; {}",
                    v + 1,
                    g.len(),
                    budget_text(budget),
                    allowance(whole, CLARK_WORK as f64)
                ));
            }
        }
        if work as f64 > budget {
            return Err(format!(
                "too costly: more than {} canonical-form terms to combine (the budget) after {} of {} activities; {}",
                budget_text(budget),
                v + 1,
                g.len(),
                estimate(
                    work,
                    v as usize + 1,
                    g.len(),
                    (acc.terms.len() * preds.len().max(1)) as f64,
                    CLARK_WORK
                )
            ));
        }
        if remaining[v as usize] > 0 {
            forms[v as usize] = Some(acc);
        } else {
            spare.push(acc.terms);
        }
    }
    let mut finish = Vec::with_capacity(finals.len());
    let mut sink: Option<Canonical> = None;
    for &f in &finals {
        let form = forms[f as usize]
            .as_ref()
            .ok_or("a rank's last activity was lost")?;
        finish.push(form.mean);
        sink = Some(fold(sink, form)?);
    }
    let sink = sink.ok_or("no rank")?;
    let marked = marked
        .into_iter()
        .map(|m| m.map(|m| m.mean).ok_or("an iteration's end was lost"))
        .collect::<Result<Vec<f64>, _>>()?;
    Ok((
        Approximate {
            makespan: Normal {
                mean: sink.mean,
                variance: sink.variance,
            },
            finish,
        },
        marked,
    ))
}

/// Clark's maximum of the finish times folded so far (`sink`, none yet: `form` itself) and
/// `form`, as the makespan's sink takes them: the linear part and the maximum's moments.
fn fold(sink: Option<Canonical>, form: &Canonical) -> Result<Canonical, String> {
    let Some(acc) = sink else {
        return Ok(form.clone());
    };
    let mut terms = Vec::with_capacity(acc.terms.len() + form.terms.len());
    let m = clark_max_form(
        (acc.mean, acc.variance, &acc.terms),
        (form.mean, form.variance, &form.terms),
        &mut terms,
    )
    .map_err(clark_failed)?;
    Ok(Canonical {
        mean: m.mean,
        variance: m.variance,
        terms,
    })
}

fn clark_failed(e: crate::analytic::AnalyticError) -> String {
    format!("the stochastic critical path: {e}")
}

/// What a method stopped at its budget `base` (at factor 1) after `work` on `done` of `total`
/// activities would need in all, each activity left costing `rate` (Clark's critical path:
/// what the last one cost, its forms having grown towards their cap; the exact composition:
/// the average so far), and how to allow it.
fn estimate(work: u64, done: usize, total: usize, rate: f64, base: u64) -> String {
    let whole = work as f64 + total.saturating_sub(done) as f64 * rate;
    format!(
        "an estimated {whole:.1e} in all; {}",
        allowance(whole, base as f64)
    )
}

/// Clark's expected makespan of a program, by [`clark`] over its activity graph `graph`
/// (durations as they are) or, where that is over a budget (the graph too large to record,
/// or Clark's work), of the program extended from the first iterations of its outermost loop
/// ([`super::periodic`], with a mean wait before each crossing of the links in `waits`).
pub(super) struct ClarkMakespan {
    /// The expected makespan.
    pub makespan: f64,
    /// Per rank: its mean finish time (over the whole graph only).
    pub finish: Option<Vec<f64>>,
    /// What the prediction's label adds: Clark's approximation, and the extension's.
    pub notes: Vec<String>,
}

/// See [`ClarkMakespan`] (`whole`: the whole execution's activities, from which a first cut
/// over the budget is refused before it is walked); `Err`: why neither applies.
pub(super) fn clark_makespan(
    prog: &crate::program::Program,
    graph: Result<&Graph<'_>, &str>,
    whole: usize,
    waits: Option<&FxHashMap<u64, f64>>,
) -> Result<ClarkMakespan, String> {
    let mut notes = vec![CLARK_NOTE.to_owned()];
    let why = match graph.map_err(str::to_owned).and_then(|g| clark(g, &[])) {
        Ok(x) => {
            return Ok(ClarkMakespan {
                makespan: x.makespan.mean,
                finish: Some(x.finish),
                notes,
            });
        }
        Err(why) => why,
    };
    let Some(l) = super::periodic::outer_loop(prog).filter(|_| for_cost(&why)) else {
        return Err(why);
    };
    // (a first cut over the budget refused before it is walked)
    let first = super::periodic::FIRST;
    if let Some(least) = super::periodic::cut_over(whole, l, first, super::graph::limit()) {
        return Err(format!(
            "{why}; from the outermost loop's first iterations: its first {first} iterations: {}",
            super::graph::too_large_at_least(least)
        ));
    }
    match super::periodic::extend(prog, l, waits) {
        Ok(x) => {
            notes.push(x.label());
            Ok(ClarkMakespan {
                makespan: x.makespan,
                finish: None,
                notes,
            })
        }
        Err(not) => Err(format!(
            "{why}; from the outermost loop's first iterations: {not}"
        )),
    }
}

/// Whether a method's refusal `why` is for its cost (a budget it would pass), which the
/// extension from a loop's first iterations may avoid.
pub(super) fn for_cost(why: &str) -> bool {
    why.contains("budget")
}

/// The method of [`exact`], before any label.
pub const EXACT_METHOD: &str =
    "expected maxima at synchronisations (exact laws of the random durations)";

/// What every prediction by [`clark`] adds to its label.
pub const CLARK_NOTE: &str = "Clark's maxima take each partial maximum as normal";

/// The method of [`clark`].
pub const CLARK_METHOD: &str = "stochastic critical path (Clark's maxima, shared ancestors kept)";

/// The method of the bounds.
pub const BOUNDS_METHOD: &str = "mean-value critical path (Jensen) to the bulk-synchronous relaxation (the sum over levels of the expected maxima)";

/// Adds the stochastic evaluation's predictions of `prog` to `a`: the exact composition of
/// maxima where it holds, else the stochastic critical path, and the bounds where no resource
/// can be shared. Nothing when every duration is deterministic (the mean-value evaluation is
/// then the execution).
pub fn predictions(
    prog: &crate::program::Program,
    ev: &super::evaluation::Evaluation,
    graph: &Result<Graph<'_>, String>,
    a: &mut crate::predict::Analysis,
) {
    if ev.random.is_empty() {
        return;
    }
    let mut breaks = ev.sharing.describe(prog);
    if breaks.is_empty() && !ev.unshareable {
        breaks.push(
            "random durations may make messages or requests meet at a link, disk unit or processor (the graph has no queueing)"
                .to_owned(),
        );
    }
    if ev.random.iter().any(|w| w.starts_with("message sizes")) {
        breaks.push(
            "message sizes are drawn in whole bytes (their law is taken continuous)".to_owned(),
        );
    }
    breaks.extend(super::evaluation::walked_samples(prog, ev));
    let put = |a: &mut crate::predict::Analysis,
               metric: String,
               value: f64,
               method: &str,
               extra: &[String]| {
        let mut all = breaks.clone();
        all.extend_from_slice(extra);
        let (method, exact) = crate::predict::approximation(method, &all);
        a.add(metric, value, &method, exact);
    };
    // the makespan and, when the program reports each rank, every rank's finish
    let put_all = |a: &mut crate::predict::Analysis,
                   makespan: f64,
                   finish: &[f64],
                   method: &str,
                   notes: &[String]| {
        put(
            a,
            Subject::Program.metric(Figure::Makespan),
            makespan,
            method,
            notes,
        );
        if prog.report_each {
            for (r, f) in finish.iter().enumerate() {
                put(
                    a,
                    Subject::Rank(r).metric(Figure::Finish),
                    *f,
                    method,
                    notes,
                );
            }
        }
    };
    let clark_put =
        |a: &mut crate::predict::Analysis, graph: Result<&Graph<'_>, &str>| match clark_makespan(
            prog,
            graph,
            ev.activities,
            None,
        ) {
            Ok(c) => put_all(
                a,
                c.makespan,
                c.finish.as_deref().unwrap_or_default(),
                CLARK_METHOD,
                &c.notes,
            ),
            Err(why) => a.refuse(CLARK_METHOD, why),
        };
    let sampled_put = |a: &mut crate::predict::Analysis, graph: Result<&Graph<'_>, &str>| {
        match super::sampled::sampled_makespan(prog, graph, None) {
            Ok((s, notes)) => put_all(
                a,
                s.makespan.mean,
                &s.finish,
                super::sampled::METHOD,
                &notes,
            ),
            Err(why) => a.refuse(super::sampled::METHOD, why),
        }
    };
    let g = match graph {
        Ok(g) => g,
        Err(why) => {
            a.refuse(EXACT_METHOD, why.clone());
            clark_put(a, Err(why));
            return sampled_put(a, Err(why));
        }
    };
    match exact(g) {
        Ok(x) => put_all(a, x.makespan.mean, &x.finish, EXACT_METHOD, &[]),
        Err(why) => {
            a.refuse(EXACT_METHOD, why);
            clark_put(a, Ok(g));
            sampled_put(a, Ok(g));
        }
    }
    let random_sizes = ev.random.iter().any(|w| w.starts_with("message sizes"));
    if ev.unshareable && ev.sharing.none() && !random_sizes {
        match level_bound(g) {
            Ok(upper) => a.bounds.push(crate::predict::Bound {
                metric: Subject::Program.metric(Figure::Makespan),
                lower: ev.makespan,
                upper: upper.max(ev.makespan),
                method: BOUNDS_METHOD.to_owned(),
            }),
            Err(why) => a.refuse(BOUNDS_METHOD, why),
        }
    }
}
