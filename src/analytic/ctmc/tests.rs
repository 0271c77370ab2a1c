use super::*;
use crate::analytic::AnalyticError;
use crate::analytic::cost;

/// A birth-death queue: Poisson arrivals at `lambda`, `servers` exponential servers of rate
/// `mu`, room for `capacity` jobs (arrivals to a full system are lost).
struct Queue {
    lambda: f64,
    mu: f64,
    servers: u32,
    capacity: u32,
}

impl MarkovModel for Queue {
    type State = u32;
    fn initial(&self) -> u32 {
        0
    }
    fn transitions(&self, &n: &u32, out: &mut Vec<(u32, f64)>) {
        if n < self.capacity {
            out.push((n + 1, self.lambda));
        }
        if n > 0 {
            out.push((n - 1, f64::from(n.min(self.servers)) * self.mu));
        }
    }
}

/// The M/M/c/K probabilities: `p_n` proportional to `a^n / n!` up to `c`, then times `(a/c)`
/// per job.
fn mmck(lambda: f64, mu: f64, c: u32, k: u32) -> Vec<f64> {
    let a = lambda / mu;
    let mut w = vec![1.0];
    for n in 1..=k {
        let last = w[n as usize - 1];
        w.push(last * a / f64::from(n.min(c)));
    }
    let total: f64 = w.iter().sum();
    w.iter().map(|x| x / total).collect()
}

fn assert_close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol, "state {i}: {g} vs {w}");
    }
}

/// The probabilities of the states `0..=k` of a birth-death solution.
fn by_count(solution: &Stationary<u32>, k: u32) -> Vec<f64> {
    (0..=k).map(|n| solution.probability(&n)).collect()
}

#[test]
fn mm1k_matches_the_truncated_geometric_law() {
    let (lambda, mu, k) = (0.7, 1.0, 50);
    let queue = Queue {
        lambda,
        mu,
        servers: 1,
        capacity: k,
    };
    let s = stationary(&queue).unwrap();
    assert_eq!(s.states().len(), 51);
    let rho: f64 = lambda / mu;
    let closed: Vec<f64> = (0..=k)
        .map(|n| (1.0 - rho) * rho.powi(n as i32) / (1.0 - rho.powi(k as i32 + 1)))
        .collect();
    assert_close(&by_count(&s, k), &closed, 1e-12);
    assert!(s.residual() <= 1e-12);
    assert_eq!(s.transient_states(), 0);
    // mean number, throughput (departures), loss rate (arrivals at a full queue)
    let mean: f64 = closed.iter().enumerate().map(|(n, p)| n as f64 * p).sum();
    assert!((s.expect(|&n| f64::from(n)) - mean).abs() < 1e-11);
    let throughput = s.flow(|&from, &to| to < from);
    let loss = s.expect(|&n| if n == k { lambda } else { 0.0 });
    assert!((throughput - lambda * (1.0 - closed[k as usize])).abs() < 1e-12);
    assert!((throughput + loss - lambda).abs() < 1e-12);
    assert!((s.expect(|&n| f64::from(n.min(1))) - throughput / mu).abs() < 1e-12);
}

#[test]
fn mmck_matches_the_erlang_law() {
    let (lambda, mu, c, k) = (2.5, 1.0, 3, 20);
    let s = stationary(&Queue {
        lambda,
        mu,
        servers: c,
        capacity: k,
    })
    .unwrap();
    assert_close(&by_count(&s, k), &mmck(lambda, mu, c, k), 1e-12);
}

/// Two exponential stations in tandem: Poisson arrivals at `lambda` into station 1 (room for
/// `room1` jobs, arrivals to a full station lost), then station 2 (room for `room2`); a job
/// served at 1 while 2 is full blocks station 1 until 2 has a departure.
struct Tandem {
    lambda: f64,
    mu1: f64,
    mu2: f64,
    room1: u32,
    room2: u32,
}

/// `(jobs at 1, jobs at 2, whether the job at the head of 1 is done and blocked)`.
type TandemState = (u32, u32, bool);

impl MarkovModel for Tandem {
    type State = TandemState;
    fn initial(&self) -> TandemState {
        (0, 0, false)
    }
    fn transitions(&self, &(n1, n2, blocked): &TandemState, out: &mut Vec<(TandemState, f64)>) {
        if n1 < self.room1 {
            out.push(((n1 + 1, n2, blocked), self.lambda));
        }
        if n1 > 0 && !blocked {
            if n2 < self.room2 {
                out.push(((n1 - 1, n2 + 1, false), self.mu1));
            } else {
                out.push(((n1, n2, true), self.mu1));
            }
        }
        if n2 > 0 {
            if blocked {
                out.push(((n1 - 1, n2, false), self.mu2));
            } else {
                out.push(((n1, n2 - 1, false), self.mu2));
            }
        }
    }
}

#[test]
fn tandem_with_blocking_matches_a_dense_solve() {
    let model = Tandem {
        lambda: 1.3,
        mu1: 1.7,
        mu2: 0.9,
        room1: 4,
        room2: 3,
    };
    let s = stationary(&model).unwrap();
    // the states written out: blocked only with station 2 full and a job at station 1
    let mut states: Vec<TandemState> = Vec::new();
    for n1 in 0..=model.room1 {
        for n2 in 0..=model.room2 {
            states.push((n1, n2, false));
            if n2 == model.room2 && n1 > 0 {
                states.push((n1, n2, true));
            }
        }
    }
    let n = states.len();
    assert_eq!(s.states().len(), n);
    let at = |s: TandemState| states.iter().position(|&t| t == s).unwrap();
    // the generator, dense, row-major
    let mut q = vec![0.0; n * n];
    for (i, &(n1, n2, blocked)) in states.iter().enumerate() {
        let mut add = |to: TandemState, rate: f64| {
            q[i * n + at(to)] += rate;
            q[i * n + i] -= rate;
        };
        if n1 < model.room1 {
            add((n1 + 1, n2, blocked), model.lambda);
        }
        match (n1 > 0, blocked, n2 == model.room2) {
            (true, false, false) => add((n1 - 1, n2 + 1, false), model.mu1),
            (true, false, true) => add((n1, n2, true), model.mu1),
            _ => {}
        }
        if n2 > 0 && blocked {
            add((n1 - 1, n2, false), model.mu2);
        } else if n2 > 0 {
            add((n1, n2 - 1, false), model.mu2);
        }
    }
    // Q^T pi = 0 with the last equation replaced by sum pi = 1
    let mut a = vec![0.0; n * n];
    for r in 0..n {
        for c in 0..n {
            a[r * n + c] = if r == n - 1 { 1.0 } else { q[c * n + r] };
        }
    }
    let mut b = vec![0.0; n];
    b[n - 1] = 1.0;
    let dense = crate::linalg::solve(a, b).unwrap();
    let sparse: Vec<f64> = states.iter().map(|st| s.probability(st)).collect();
    assert_close(&sparse, &dense, 1e-12);
    // flow balance: what station 1 sends on is what station 2 serves
    let x1 = s.flow(|&(a1, _, _), &(b1, _, _)| b1 < a1);
    let x2 = s.flow(|&(_, a2, ab), &(_, b2, bb)| b2 < a2 || (ab && !bb));
    assert!((x1 - x2).abs() < 1e-12);
}

/// A closed cycle of three exponential single-server stations with `jobs` jobs.
struct Cycle {
    mu: [f64; 3],
    jobs: u32,
}

impl MarkovModel for Cycle {
    type State = [u32; 3];
    fn initial(&self) -> [u32; 3] {
        [self.jobs, 0, 0]
    }
    fn transitions(&self, s: &[u32; 3], out: &mut Vec<([u32; 3], f64)>) {
        for i in 0..3 {
            if s[i] > 0 {
                let mut t = *s;
                t[i] -= 1;
                t[(i + 1) % 3] += 1;
                out.push((t, self.mu[i]));
            }
        }
    }
}

#[test]
fn closed_cycle_matches_gordon_newell() {
    let model = Cycle {
        mu: [1.0, 2.0, 0.7],
        jobs: 12,
    };
    let s = stationary(&model).unwrap();
    let n = model.jobs;
    assert_eq!(s.states().len(), ((n + 1) * (n + 2) / 2) as usize);
    // product form: p(n) proportional to prod (1/mu_i)^n_i (visit ratios all 1)
    let weight = |st: &[u32; 3]| {
        (0..3)
            .map(|i| (1.0 / model.mu[i]).powi(st[i] as i32))
            .product::<f64>()
    };
    let g: f64 = s.states().iter().map(weight).sum();
    for (st, p) in s.iter() {
        assert!((p - weight(st) / g).abs() <= 1e-10, "{st:?}: {p}");
    }
    // throughput through each station, and X = mu_i U_i
    let x: Vec<f64> = (0..3)
        .map(|i| s.flow(|a, b| b[i] < a[i] && b[(i + 1) % 3] > a[(i + 1) % 3]))
        .collect();
    for i in 0..3 {
        assert!((x[i] - x[0]).abs() < 1e-12);
        let u = s.expect(|st| if st[i] > 0 { 1.0 } else { 0.0 });
        assert!((x[i] - model.mu[i] * u).abs() < 1e-12);
    }
}

#[test]
fn a_state_space_over_the_limit_is_refused_with_its_count() {
    let queue = Queue {
        lambda: 1.0,
        mu: 1.0,
        servers: 1,
        capacity: 50,
    };
    let e = StateSpace::explore_with_limit(&queue, 10).unwrap_err();
    assert!(matches!(e, AnalyticError::TooCostly { .. }));
    let text = e.to_string();
    assert!(text.contains("more than 10 states"), "{text}");
    assert!(text.contains("stopped at 11 states"), "{text}");
    assert!(
        text.contains("allow it with a larger state limit"),
        "{text}"
    );
    assert_eq!(
        StateSpace::explore_with_limit(&queue, 51).unwrap().len(),
        51
    );
    // the default limit scales with the budget factor: 2e6 * 1e-5 = 20 states
    let e = cost::with_budget(1e-5, || StateSpace::explore(&queue)).unwrap_err();
    let text = e.to_string();
    assert!(text.contains("more than 20 states"), "{text}");
    assert!(text.contains("--budget"), "{text}");
    assert_eq!(StateSpace::explore(&queue).unwrap().len(), 51);
}

/// A chain given as a table: `rates[i]` lists `(target, rate)` out of state `i`.
struct Table(Vec<Vec<(usize, f64)>>);

impl MarkovModel for Table {
    type State = usize;
    fn initial(&self) -> usize {
        0
    }
    fn transitions(&self, &i: &usize, out: &mut Vec<(usize, f64)>) {
        out.extend_from_slice(&self.0[i]);
    }
}

#[test]
fn transient_states_get_probability_zero() {
    // 0 <-> 1 -> {2 <-> 3}: only the closed class {2, 3} has mass, 3:1
    let chain = Table(vec![
        vec![(1, 1.0)],
        vec![(0, 1.0), (2, 0.5)],
        vec![(3, 1.0)],
        vec![(2, 3.0)],
    ]);
    let s = stationary(&chain).unwrap();
    assert_close(s.probabilities(), &[0.0, 0.0, 0.75, 0.25], 1e-15);
    assert_eq!(s.transient_states(), 2);
    // an absorbing state is a closed class of one state
    let chain = Table(vec![vec![(1, 2.0)], vec![(2, 1.0), (0, 1.0)], vec![]]);
    let s = stationary(&chain).unwrap();
    assert_eq!(s.probabilities(), &[0.0, 0.0, 1.0]);
    assert_eq!(s.residual(), 0.0);
}

#[test]
fn several_closed_classes_are_refused_by_name() {
    let chain = Table(vec![
        vec![(1, 1.0), (2, 1.0)],
        vec![],
        vec![(3, 1.0)],
        vec![(2, 1.0)],
    ]);
    let e = stationary(&chain).unwrap_err();
    let AnalyticError::NotApplicable(text) = e else {
        panic!("{e:?}")
    };
    assert!(text.contains("2 closed classes"), "{text}");
    assert!(text.contains("no unique stationary distribution"), "{text}");
}

#[test]
fn self_loops_zero_rates_and_duplicates_are_handled_and_bad_rates_refused() {
    // 0 -> 1 listed twice (rates add), a self-loop and a zero rate ignored
    let chain = Table(vec![
        vec![(1, 1.0), (1, 1.0), (0, 5.0), (2, 0.0)],
        vec![(0, 1.0)],
        vec![],
    ]);
    let space = StateSpace::explore(&chain).unwrap();
    assert_eq!(space.len(), 2);
    assert_eq!(space.transitions(0).collect::<Vec<_>>(), vec![(1, 2.0)]);
    let s = space.stationary().unwrap();
    assert_close(s.probabilities(), &[1.0 / 3.0, 2.0 / 3.0], 1e-15);
    for bad in [-1.0, f64::NAN, f64::INFINITY] {
        let e = stationary(&Table(vec![vec![(1, bad)], vec![(0, 1.0)]])).unwrap_err();
        assert!(matches!(e, AnalyticError::InvalidParameter { .. }), "{e}");
    }
}
