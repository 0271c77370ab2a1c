//! The paper's equations as functions of a checked [`Spmd`]: each names its equation.

use super::{Family, Io, Spmd};
use crate::analytic::{self, Center, CenterKind, MulticlassModel, harmonic};

/// `g(p) = p^(-(r-1)/r)`, with `g(1) = 0` by definition (eq. 7).
pub fn g(p: u32, r: f64) -> f64 {
    if p == 1 {
        0.0
    } else {
        f64::from(p).powf(-(r - 1.0) / r)
    }
}

/// `T1 = S_cpu n_io + S_io` on one processor and one disk (eq. 1), with `S_cpu = S_par + S_ser`
/// and `S_io = S0_io + SR_io`.
pub fn t1(m: &Spmd) -> f64 {
    (m.s_par + m.s_ser) * m.n_io + m.s0_io + m.sr_io
}

/// The synchronisation cost `h(c)`: the expected maximum of `c` i.i.d. bursts over their mean
/// (eqs. 4-6): `H_c` for exponential bursts, `2c/(c+1)` for uniform on `[0, 2m]`, 1 for
/// deterministic ones; `None` for families without a closed form.
pub fn h(family: &Family, c: u32) -> Option<f64> {
    match family {
        Family::Exp => Some(harmonic(c)),
        Family::Uniform => Some(2.0 * f64::from(c) / (f64::from(c) + 1.0)),
        Family::Det => Some(1.0),
        _ => None,
    }
}

/// Mean CPU time of one processor's burst, `S_par/p + S_ser` (Amdahl, section 3.5).
pub fn cpu_mean(m: &Spmd) -> f64 {
    m.s_par / f64::from(m.p) + m.s_ser
}

/// The communication delay `S0_com + (1-w) g(p) SR_com` (eq. 10).
pub fn com_delay(m: &Spmd) -> f64 {
    m.s0_com + (1.0 - m.w) * m.g * m.sr_com
}

/// The shared part of the network, `w g(p) SR_com` (eq. 9).
pub fn com_queue(m: &Spmd) -> f64 {
    m.w * m.g * m.sr_com
}

/// The delays of one computation burst, `z = h(c)(S_par/p + S_ser) + S0_com + (1-w)g(p)SR_com`
/// (eq. 15).
pub fn z(m: &Spmd, h: f64) -> f64 {
    h * cpu_mean(m) + com_delay(m)
}

/// The service time of one I/O burst (eq. 14): SIO `S0_io + SR_io/d`; BUS-AIO
/// `S0_io + (SR_io/d)/(p/c)`; CLU-AIO `S0_io + SR_io/(p/c)`.
pub fn t_io(m: &Spmd) -> f64 {
    let groups = f64::from(m.groups());
    let d = f64::from(m.d);
    match m.io {
        Io::Sio => m.s0_io + m.sr_io / d,
        Io::BusAio => m.s0_io + m.sr_io / d / groups,
        Io::CluAio => m.s0_io + m.sr_io / groups,
    }
}

/// `R1(i, z, x)`: the residence time at the queue (service `x`) of a closed network of `i` jobs,
/// a delay `z` and that queue (eq. 17) with the index corrected: the numerator sums over
/// `e1 + e2 = i - 1` (as printed, `e1 + e2 = i`, it has units of time squared). It then equals
/// the MVA residence time `x (1 + Q(i-1))`. Terms are summed in logarithms, so large `i` neither
/// overflows nor underflows.
pub fn r1(i: u32, z: f64, x: f64) -> f64 {
    if i == 0 || x == 0.0 {
        return x;
    }
    if z == 0.0 {
        return f64::from(i) * x;
    }
    let n = i - 1;
    // log of x^e1 z^e2 / e2! with e1 = n - e2
    let mut log_fact = 0.0;
    let terms: Vec<(f64, f64)> = (0..=n)
        .map(|e2| {
            if e2 > 0 {
                log_fact += f64::from(e2).ln();
            }
            let e1 = n - e2;
            let log = f64::from(e1) * x.ln() + f64::from(e2) * z.ln() - log_fact;
            (log, f64::from(e1) + 1.0)
        })
        .collect();
    let top = terms.iter().map(|t| t.0).fold(f64::NEG_INFINITY, f64::max);
    let (num, den) = terms.iter().fold((0.0, 0.0), |(a, b), &(log, w)| {
        let t = (log - top).exp();
        (a + w * t, b + t)
    });
    x * num / den
}

/// The computation subnetwork's cycle time with `i` groups circulating: `z + R1(i, z, x)`.
fn burst(m: &Spmd, h: f64, i: u32) -> f64 {
    let z = z(m, h);
    z + r1(i, z, com_queue(m))
}

/// SIO, reading (a) of eq. 16: every group runs its `n_io` bursts at the full population
/// `p/c`, with no cost for the join: `n_io (z + R1(p/c, z, x)) + T_io`.
pub fn sio_full_population(m: &Spmd, h: f64) -> f64 {
    m.n_io * burst(m, h, m.groups()) + t_io(m)
}

/// SIO, reading (b) of eq. 16 (the sum over `i = 1..p/c`): the join waits for the last of
/// `p/c` groups, and while `i` groups still run, each ends its computation at rate
/// `1 / (n_io (z + R1(i, z, x)))`, so `n_io sum_i (z + R1(i, z, x)) / i + T_io`. Without
/// contention it is the mean maximum of `p/c` exponential computations (the number of bursts is
/// geometric, so a group's computation is exponential when its bursts are).
pub fn sio_draining(m: &Spmd, h: f64) -> f64 {
    let sum: f64 = (1..=m.groups())
        .map(|i| burst(m, h, i) / f64::from(i))
        .sum();
    m.n_io * sum + t_io(m)
}

/// SIO when a cycle has exactly `n_io` computation bursts (a whole number), as the program
/// forms run it, not the paper's geometric count: each group's computation is the sum of
/// `n_io` bursts, taken as exponential of mean `z + R1(p/c, z, x)` (the bus at the full
/// population, as reading (a)), so an Erlang-`n_io` variable; the join waits for the largest of
/// the `p/c` groups (its mean by [`analytic::expected_max_numeric`]), then one I/O burst:
/// `E[max of p/c Erlang(n_io, b)] + T_io`. With `n_io = 1` and no bus it is reading (b).
pub fn sio_fixed_count(m: &Spmd, h: f64) -> analytic::Result<f64> {
    use statrs::distribution::{ContinuousCDF, Gamma};
    let b = burst(m, h, m.groups());
    let n = m.n_io;
    if m.groups() == 1 || b == 0.0 {
        return Ok(n * b + t_io(m));
    }
    let erlang = Gamma::new(n, 1.0 / b).map_err(|_| analytic::AnalyticError::InvalidParameter {
        what: "Erlang(n_io, z + R1)".into(),
        value: b,
    })?;
    let max = analytic::expected_max_numeric(m.groups(), &|t| erlang.cdf(t), 0.0, f64::INFINITY)?;
    Ok(max + t_io(m))
}

/// BUS-AIO by exact MVA with population `p/c` (eqs. 19-22, population `p/c` throughout; eq. 22
/// as printed mixes `p` and `p/c`): a delay `z n_io`, the bus `x n_io` and the I/O queue `T_io`.
/// Returns the cycle time.
pub fn bus_aio(m: &Spmd, h: f64) -> analytic::Result<f64> {
    let centers = [
        Center {
            kind: CenterKind::Delay,
            demand: z(m, h) * m.n_io,
        },
        Center {
            kind: CenterKind::Queue,
            demand: com_queue(m) * m.n_io,
        },
        Center {
            kind: CenterKind::Queue,
            demand: t_io(m),
        },
    ];
    Ok(analytic::mva(&centers, m.groups())?.full().response_time)
}

/// CLU-AIO by exact multiclass MVA (section 4.3): `d` classes of `p/(c d)` groups, each with
/// its own disk `T_io`, sharing the bus `x n_io` and the delay `z n_io`. Returns the cycle time
/// (the same for every class).
pub fn clu_aio(m: &Spmd, h: f64) -> analytic::Result<f64> {
    let d = m.d as usize;
    let mut kinds = vec![CenterKind::Queue; d];
    kinds.extend([CenterKind::Queue, CenterKind::Delay]);
    let demands = (0..d)
        .map(|r| {
            let mut row = vec![0.0; d];
            row[r] = t_io(m);
            row.extend([com_queue(m) * m.n_io, z(m, h) * m.n_io]);
            row
        })
        .collect();
    let model = MulticlassModel::new(kinds, demands, vec![m.groups() / m.d; d])?;
    Ok(analytic::mva_multiclass(&model)?.response_time[0])
}

/// The fraction of `T1` that does not shrink with `p`: `1 - S_par n_io / T1`.
pub fn serial_fraction(m: &Spmd) -> f64 {
    1.0 - m.s_par * m.n_io / t1(m)
}

/// Amdahl's law `1 / (f + (1-f)/p)` with `f` the [`serial_fraction`].
pub fn amdahl(m: &Spmd) -> f64 {
    let f = serial_fraction(m);
    1.0 / (f + (1.0 - f) / f64::from(m.p))
}

/// Gustafson's law `f + p (1-f)` with `f` the [`serial_fraction`].
pub fn gustafson(m: &Spmd) -> f64 {
    let f = serial_fraction(m);
    f + f64::from(m.p) * (1.0 - f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Eq. 17 with the corrected index is MVA's residence time at the queue, at every
    /// population, light and heavy load alike.
    #[test]
    fn r1_equals_mva() {
        for &(z, x) in &[(1.0, 0.1), (0.2, 0.5), (3.0, 3.0), (0.01, 1.0)] {
            let centers = [
                Center {
                    kind: CenterKind::Delay,
                    demand: z,
                },
                Center {
                    kind: CenterKind::Queue,
                    demand: x,
                },
            ];
            let sol = analytic::mva(&centers, 300).unwrap();
            for i in [1u32, 2, 3, 7, 40, 300] {
                let mva = sol.at(i).unwrap().residence[1];
                let r = r1(i, z, x);
                assert!(
                    (r - mva).abs() <= 1e-10 * mva,
                    "i {i} z {z} x {x}: {r} vs {mva}"
                );
            }
        }
    }

    /// The fixed-count SIO reading: with one burst a cycle and no bus it is reading (b),
    /// `z H_(p/c) + T_io`; with one group, `n_io z + T_io`; with two groups of Erlang-2 sums of
    /// unit bursts, `E[max] = 2 E - int S^2 = 4 - 5/4` by hand (`S(t) = e^-t (1 + t)`).
    #[test]
    fn fixed_count_sio() {
        let mut m = Spmd {
            p: 6,
            d: 1,
            c: 1,
            w: 0.0,
            g: 0.0,
            r: None,
            s_par: 6.0,
            s_ser: 0.0,
            s0_com: 0.0,
            sr_com: 1.0,
            s0_io: 0.0,
            sr_io: 0.5,
            n_io: 1.0,
            io: Io::Sio,
            cpu: Family::Exp,
            com: Family::Exp,
            io_dist: Family::Exp,
            network: None,
            phases: Vec::new(),
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-8 * b;
        let fixed = sio_fixed_count(&m, 1.0).unwrap();
        assert!(close(fixed, sio_draining(&m, 1.0)), "{fixed}");
        assert!(close(fixed, harmonic(6) + 0.5));
        m.p = 2;
        m.s_par = 2.0;
        m.n_io = 2.0;
        assert!(close(sio_fixed_count(&m, 1.0).unwrap(), 4.0 - 1.25 + 0.5));
        m.p = 1;
        m.s_par = 1.0;
        m.n_io = 3.0;
        assert!(close(sio_fixed_count(&m, 1.0).unwrap(), 3.0 + 0.5));
    }

    /// The BTIO arithmetic of the guide's findings (`docs/guide/findings/spmd.md`; p = 9,
    /// section 5.1.1 inputs), against values worked out by hand from eqs. 14-17 and MVA.
    #[test]
    fn btio_readings_of_eq_16() {
        let m = Spmd {
            p: 9,
            d: 3,
            c: 1,
            w: 0.23,
            g: 1.125,
            r: None,
            s_par: 6.9,
            s_ser: 0.08,
            s0_com: 0.0027,
            sr_com: 0.037,
            s0_io: 0.0,
            sr_io: 1.0,
            n_io: 5.0,
            io: Io::Sio,
            cpu: Family::Exp,
            com: Family::Exp,
            io_dist: Family::Exp,
            network: None,
            phases: Vec::new(),
        };
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(close(z(&m, 1.0), 0.881_417_916_666_666_7));
        assert!(close(t1(&m), 35.9));
        assert!(close(sio_full_population(&m, 1.0), 4.792_732_968_316_312));
        assert!(close(sio_draining(&m, 1.0), 12.939_578_246_865_77));
    }

    #[test]
    fn scale_and_synchronisation_cost() {
        assert_eq!(g(1, 3.0), 0.0);
        assert!((g(64, 2.0) - 0.125).abs() < 1e-15);
        assert!((h(&Family::Exp, 3).unwrap() - 11.0 / 6.0).abs() < 1e-15);
        assert!((h(&Family::Uniform, 3).unwrap() - 1.5).abs() < 1e-15);
        assert_eq!(h(&Family::Erlang { k: 2 }, 3), None);
    }
}
