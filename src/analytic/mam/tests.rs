//! Cross-checks of the matrix-analytic solvers against independent computations.

use super::*;
use crate::analytic::AnalyticError;
use crate::analytic::ctmc::{MarkovModel, stationary};

fn close(a: f64, b: f64, rel: f64) -> bool {
    (a - b).abs() <= rel * b.abs()
}

/// MMPP(2)/M/1 truncated at `cap` jobs, built state by state: (jobs, phase).
struct Mmpp2M1 {
    rates: [f64; 2],
    switching: [f64; 2],
    mu: f64,
    cap: u32,
}

impl MarkovModel for Mmpp2M1 {
    type State = (u32, usize);
    fn initial(&self) -> (u32, usize) {
        (0, 0)
    }
    fn transitions(&self, &(n, phase): &(u32, usize), out: &mut Vec<((u32, usize), f64)>) {
        out.push(((n, 1 - phase), self.switching[phase]));
        if n < self.cap {
            out.push(((n + 1, phase), self.rates[phase]));
        }
        if n > 0 {
            out.push(((n - 1, phase), self.mu));
        }
    }
}

#[test]
fn mmpp2_m_1_against_the_truncated_chain() {
    // rate (2 * 0.1 + 0.2 * 0.3)/(0.3 + 0.1) = 0.65, mu = 1: rho = 0.65, bursty (SCV > 1)
    let (rates, switching, mu) = ([2.0, 0.2], [0.3, 0.1], 1.0);
    let map = Map::mmpp2(rates, switching).unwrap();
    assert!(close(map.lambda(), 0.65, 1e-14));
    let exact = map_ph1(&map, &Ph::exponential(mu).unwrap()).unwrap();
    // the truncated chain: 2 x 2001 states, the mass beyond 2000 jobs below 1e-30
    let chain = stationary(&Mmpp2M1 {
        rates,
        switching,
        mu,
        cap: 2000,
    })
    .unwrap();
    let number = chain.expect(|&(n, _)| f64::from(n));
    let empty = chain.expect(|&(n, _)| if n == 0 { 1.0 } else { 0.0 });
    assert!(
        close(exact.metrics.mean_number, number, 1e-9),
        "{} {number}",
        exact.metrics.mean_number
    );
    assert!(close(exact.p_empty, empty, 1e-9));
    assert!(close(exact.p_empty, 1.0 - 0.65, 1e-10));
    // the same through MAP/M/c with one server
    let mc = map_mc(&map, 1.0 / mu, 1).unwrap();
    assert!(close(mc.metrics.mean_number, number, 1e-9));
}

#[test]
fn renewal_arrivals_with_exponential_service_agree_with_gim1() {
    // H2/M/1 (the 10.819 anchor: balanced H2 of SCV 4, lambda 0.8, E[S] = 1) and E4/M/1
    let h2 = Ph::h2_balanced(1.25, 4.0).unwrap();
    let qbd_way = phph1(&h2, &Ph::exponential(1.0).unwrap()).unwrap();
    let root_way = gim1(&|x| h2.laplace(x).unwrap_or(f64::NAN), 0.8, 1.0, 1).unwrap();
    assert!(close(
        qbd_way.metrics.mean_response,
        root_way.metrics.mean_response,
        1e-9
    ));
    assert!((qbd_way.metrics.mean_response - 10.819_192_771_983_987).abs() < 1e-8);
    let e4 = Ph::erlang(4, 4.0 * 0.7).unwrap();
    let qbd_way = phph1(&e4, &Ph::exponential(1.0).unwrap()).unwrap();
    let root_way = gim1(&|x| e4.laplace(x).unwrap_or(f64::NAN), 0.7, 1.0, 1).unwrap();
    assert!(close(
        qbd_way.metrics.mean_wait,
        root_way.metrics.mean_wait,
        1e-9
    ));
    assert!(close(qbd_way.p_wait, root_way.p_wait, 1e-9));
}

#[test]
fn a_20_phase_map_ph_1_is_consistent() {
    // MMPP(2) x Erlang-10 service: 20 phases per level; utilisation = 1 - P(empty)
    let map = Map::mmpp2([1.5, 0.3], [0.2, 0.4]).unwrap(); // rate 1.1
    let r = map_ph1(&map, &Ph::erlang(10, 10.0 / 0.8).unwrap()).unwrap();
    assert!(close(r.p_empty, 1.0 - 1.1 * 0.8, 1e-10));
    assert!(close(
        r.metrics.mean_number,
        1.1 * r.metrics.mean_response,
        1e-12
    ));
}

#[test]
fn qbd_refusals() {
    let one = |v: f64| vec![vec![v]];
    let birth_death = |up: f64, down: f64| Qbd {
        boundary: vec![QbdLevel {
            local: one(-up),
            up: one(up),
            down: Vec::new(),
        }],
        entry_down: one(down),
        a0: one(up),
        a1: one(-up - down),
        a2: one(down),
    };
    // the M/M/1 chain: level probabilities (1 - rho) rho^k
    let s = qbd(&birth_death(0.5, 1.0)).unwrap();
    assert!(close(s.level_probability(3), 0.5 * 0.125, 1e-13));
    assert!(close(s.mean_level(), 1.0, 1e-13));
    assert!(close(s.r()[0][0], 0.5, 1e-13));
    assert!(matches!(
        qbd(&birth_death(1.0, 1.0)),
        Err(AnalyticError::Unstable { .. })
    ));
    let mut bad = birth_death(0.5, 1.0);
    bad.a1 = one(-1.0);
    assert!(qbd(&bad).unwrap_err().to_string().contains("row 0 sum"));
    let mut bad = birth_death(0.5, 1.0);
    bad.a0 = one(-0.5);
    assert!(qbd(&bad).unwrap_err().to_string().contains("A0 entry"));
    let mut bad = birth_death(0.5, 1.0);
    bad.entry_down = vec![vec![1.0, 0.0]];
    assert!(qbd(&bad).unwrap_err().to_string().contains("entry_down"));
    let mut bad = birth_death(0.5, 1.0);
    bad.boundary.clear();
    assert!(qbd(&bad).is_err());
    // 2 x 60 = 120 phases per level: 200 * 120^3 = 3.5e8 operations, over the budget
    let mmpp = Map::mmpp2([1.0, 0.5], [0.1, 0.1]).unwrap();
    assert!(matches!(
        map_ph1(&mmpp, &Ph::erlang(60, 600.0).unwrap()),
        Err(AnalyticError::TooCostly { .. })
    ));
}
