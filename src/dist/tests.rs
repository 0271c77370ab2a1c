//! Distribution tests: parameter checks, moments, and a Kolmogorov-Smirnov test of samples
//! against each CDF with a fixed seed (so the verdict is reproducible).

use std::path::Path;

use super::Law;
use super::*;
use crate::rng::stream;

fn build(toml_text: &str) -> Result<Dist, DistError> {
    let spec: DistSpec = toml::from_str(toml_text).expect("valid TOML for a spec");
    spec.build(Path::new("."))
}

/// The KS statistic `sup |F_n(x) - F(x)|` of `n` samples.
fn ks_statistic(dist: &mut Dist, n: usize, seed: u64) -> f64 {
    let mut rng = stream(seed, 0, 0);
    let mut xs: Vec<f64> = (0..n).map(|_| dist.sample(&mut rng)).collect();
    xs.sort_by(f64::total_cmp);
    xs.iter()
        .enumerate()
        .map(|(i, &x)| {
            let f = dist.cdf(x);
            (f - i as f64 / n as f64)
                .abs()
                .max((f - (i + 1) as f64 / n as f64).abs())
        })
        .fold(0.0, f64::max)
}

#[test]
fn samples_follow_their_cdf_kolmogorov_smirnov() {
    // Critical value of D at significance 0.001 is 1.949 / sqrt(n).
    let n = 20_000;
    let critical = 1.949 / (n as f64).sqrt();
    let cases = [
        "dist = \"exp\"\nmean = 2.0",
        "dist = \"uniform\"\nmin = 1.0\nmax = 3.0",
        "dist = \"uniform\"\nmean = 0.5",
        "dist = \"erlang\"\nk = 4\nmean = 1.0",
        "dist = \"h2\"\nmean = 1.0\nscv = 10.0",
        "dist = \"lognormal\"\nmean = 1.0\nscv = 2.0",
        "dist = \"lognormal\"\nmu = 0.0\nsigma = 0.5",
        "dist = \"gamma\"\nmean = 2.0\nscv = 0.3",
        "dist = \"gamma\"\nshape = 0.5\nscale = 2.0",
        "dist = \"weibull\"\nshape = 1.5\nscale = 2.0",
        "dist = \"pareto\"\nshape = 2.5\nscale = 1.0",
        "dist = \"ph\"\nalpha = [0.7, 0.3, 0.0]\ngenerator = [[-2.0, 1.5, 0.0], [0.0, -3.0, 1.0], [0.5, 0.0, -1.0]]",
    ];
    for (i, case) in cases.iter().enumerate() {
        let mut d = build(case).unwrap();
        let ks = ks_statistic(&mut d, n, 1000 + i as u64);
        assert!(ks < critical, "{case}: D = {ks:.5} >= {critical:.5}");
    }
}

#[test]
fn ks_test_rejects_a_wrong_distribution() {
    // The test above must be able to fail: exponential samples against an Erlang-2 CDF.
    let n = 20_000;
    let mut rng = stream(7, 0, 0);
    let mut exp = build("dist = \"exp\"\nmean = 1.0").unwrap();
    let erlang = build("dist = \"erlang\"\nk = 2\nmean = 1.0").unwrap();
    let mut xs: Vec<f64> = (0..n).map(|_| exp.sample(&mut rng)).collect();
    xs.sort_by(f64::total_cmp);
    let d = xs
        .iter()
        .enumerate()
        .map(|(i, &x)| (erlang.cdf(x) - i as f64 / n as f64).abs())
        .fold(0.0, f64::max);
    assert!(d > 1.949 / (n as f64).sqrt());
}

#[test]
fn sample_moments_match_mean_and_scv() {
    let cases = [
        "dist = \"h2\"\nmean = 2.0\nscv = 4.0",
        "dist = \"erlang\"\nk = 2\nmean = 3.0",
        "dist = \"uniform\"\nmin = 0.0\nmax = 2.0",
        "dist = \"weibull\"\nshape = 0.8\nscale = 1.0",
        "dist = \"lognormal\"\nmean = 5.0\nscv = 0.5",
        "dist = \"ph\"\nalpha = [0.7, 0.3, 0.0]\ngenerator = [[-2.0, 1.5, 0.0], [0.0, -3.0, 1.0], [0.5, 0.0, -1.0]]",
    ];
    for case in cases {
        let mut d = build(case).unwrap();
        let mut rng = stream(3, 0, 0);
        let mut t = crate::stats::Tally::new();
        (0..400_000).for_each(|_| t.add(d.sample(&mut rng)));
        let scv = t.variance() / (t.mean() * t.mean());
        assert!(
            (t.mean() / d.mean() - 1.0).abs() < 0.02,
            "{case}: mean {} vs {}",
            t.mean(),
            d.mean()
        );
        assert!(
            (scv / d.scv() - 1.0).abs() < 0.06,
            "{case}: scv {scv} vs {}",
            d.scv()
        );
    }
}

#[test]
fn h2_has_balanced_means_and_the_asked_scv() {
    let d = build("dist = \"h2\"\nmean = 1.0\nscv = 4.0").unwrap();
    let Law::HyperExp { p1, mean1, mean2 } = *d.law() else {
        panic!("not an H2")
    };
    assert!((p1 * mean1 - (1.0 - p1) * mean2).abs() < 1e-12);
    assert!((d.mean() - 1.0).abs() < 1e-12 && (d.scv() - 4.0).abs() < 1e-12);
}

#[test]
fn bad_parameters_are_rejected_with_the_field_named() {
    let cases = [
        ("dist = \"exp\"\nmean = -1.0", "mean"),
        ("dist = \"exp\"\nmean = 1.0\nrate = 1.0", "mean"),
        ("dist = \"exp\"", "mean"),
        ("dist = \"uniform\"\nmin = 2.0\nmax = 1.0", "max"),
        ("dist = \"uniform\"\nmin = 2.0", "max"),
        ("dist = \"erlang\"\nk = 0\nmean = 1.0", "k"),
        ("dist = \"h2\"\nmean = 1.0\nscv = 0.5", "scv"),
        ("dist = \"lognormal\"\nmean = 1.0", "scv"),
        ("dist = \"pareto\"\nshape = 1.0\nscale = 1.0", "shape"),
        ("dist = \"weibull\"\nshape = 0.0\nscale = 1.0", "shape"),
        ("dist = \"empirical\"\nfile = \"no/such/trace.txt\"", "file"),
        (
            "dist = \"ph\"\nalpha = [0.5, 0.4]\ngenerator = [[-1.0, 0.0], [0.0, -1.0]]",
            "alpha",
        ),
        (
            "dist = \"ph\"\nalpha = [1.5, -0.5]\ngenerator = [[-1.0, 0.0], [0.0, -1.0]]",
            "alpha",
        ),
        ("dist = \"ph\"\nalpha = []\ngenerator = []", "alpha"),
        (
            "dist = \"ph\"\nalpha = [1.0]\ngenerator = [[-1.0, 0.0]]",
            "generator",
        ),
        (
            "dist = \"ph\"\nalpha = [1.0, 0.0]\ngenerator = [[-1.0, -0.5], [0.0, -1.0]]",
            "generator",
        ),
        (
            "dist = \"ph\"\nalpha = [1.0, 0.0]\ngenerator = [[-1.0, 2.0], [0.0, -1.0]]",
            "generator",
        ),
        (
            "dist = \"ph\"\nalpha = [1.0, 0.0]\ngenerator = [[0.0, 0.0], [0.0, -1.0]]",
            "generator",
        ),
        // phases 1 and 2 pass the chain back and forth and never end
        (
            "dist = \"ph\"\nalpha = [1.0, 0.0]\ngenerator = [[-1.0, 1.0], [1.0, -1.0]]",
            "generator",
        ),
    ];
    for (case, field) in cases {
        let e = build(case).unwrap_err();
        assert_eq!(e.field, field, "{case}: {e}");
    }
}

#[test]
fn unknown_parameters_fail_to_parse() {
    assert!(toml::from_str::<DistSpec>("dist = \"exp\"\nmeen = 1.0").is_err());
    assert!(toml::from_str::<DistSpec>("dist = \"normal\"\nmean = 1.0").is_err());
}

#[test]
fn empirical_replays_in_order_and_draws_from_the_trace() {
    let dir = std::env::temp_dir().join(format!("parsim-trace-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("t.txt"), "1.0, 2.0\n# comment\n4.0\n").unwrap();
    let spec: DistSpec =
        toml::from_str("dist = \"empirical\"\nfile = \"t.txt\"\nmode = \"replay\"").unwrap();
    let mut d = spec.build(&dir).unwrap();
    let mut rng = stream(1, 0, 0);
    let drawn: Vec<f64> = (0..4).map(|_| d.sample(&mut rng)).collect();
    assert_eq!(drawn, [1.0, 2.0, 4.0, 1.0]);
    assert!((d.mean() - 7.0 / 3.0).abs() < 1e-12);
    assert_eq!(d.cdf(2.0), 2.0 / 3.0);
    std::fs::write(dir.join("bad.txt"), "1.0 -2\n").unwrap();
    let spec: DistSpec = toml::from_str("dist = \"empirical\"\nfile = \"bad.txt\"").unwrap();
    assert!(spec.build(&dir).unwrap_err().message.contains(":1:"));
}

/// One distribution of each family (the quantile and moment tests run over all of them).
const FAMILIES: [&str; 10] = [
    "dist = \"exp\"\nmean = 2.0",
    "dist = \"det\"\nvalue = 1.5",
    "dist = \"uniform\"\nmin = 1.0\nmax = 3.0",
    "dist = \"erlang\"\nk = 4\nmean = 1.0",
    "dist = \"h2\"\nmean = 1.0\nscv = 10.0",
    "dist = \"lognormal\"\nmean = 1.0\nscv = 2.0",
    "dist = \"gamma\"\nshape = 0.5\nscale = 2.0",
    "dist = \"weibull\"\nshape = 1.5\nscale = 2.0",
    "dist = \"pareto\"\nshape = 2.5\nscale = 1.0",
    "dist = \"ph\"\nalpha = [0.7, 0.3, 0.0]\ngenerator = [[-2.0, 1.5, 0.0], [0.0, -3.0, 1.0], [0.5, 0.0, -1.0]]",
];

#[test]
fn quantiles_invert_the_cdf() {
    let cases = FAMILIES;
    for case in cases {
        let d = build(case).unwrap();
        for q in [0.5, 0.9, 0.95, 0.99] {
            let x = d.quantile(q).unwrap();
            // the left-continuous inverse: F(x) >= q, and F just below x is below q
            assert!(d.cdf(x) >= q - 1e-9, "{case}: F({x}) = {} < {q}", d.cdf(x));
            assert!(d.cdf(x * (1.0 - 1e-6)) < q + 1e-9, "{case}: q {q} at {x}");
        }
        assert!(d.quantile(0.0).is_err() && d.quantile(1.0).is_err());
    }
}

#[test]
fn erlang_quantile_is_statrs_gamma_and_exponential_is_closed_form() {
    use statrs::distribution::{ContinuousCDF, Gamma};
    let d = build("dist = \"erlang\"\nk = 3\nmean = 1.5").unwrap();
    let reference = Gamma::new(3.0, 2.0).unwrap().inverse_cdf(0.95);
    assert!((d.quantile(0.95).unwrap() / reference - 1.0).abs() < 1e-12);
    // the 0.95 quantile of an Erlang-3 of rate 2, by hand from its CDF: 3.1478...
    assert!((reference - 3.1479).abs() < 2e-4, "{reference}");
    let e = build("dist = \"exp\"\nmean = 2.0").unwrap();
    assert!((e.quantile(0.9).unwrap() - 2.0 * 10f64.ln()).abs() < 1e-12);
}

#[test]
fn raw_moments_match_mean_and_scv() {
    let cases = FAMILIES;
    for case in cases {
        let d = build(case).unwrap();
        let (m, scv) = (d.mean(), d.scv());
        assert!((d.raw_moment(1) / m - 1.0).abs() < 1e-12, "{case}");
        let second = m * m * (1.0 + scv);
        assert!((d.raw_moment(2) / second - 1.0).abs() < 1e-10, "{case}");
    }
    // third moments by hand: exponential 6 m^3, uniform on [1, 3] (81 - 1)/8 = 10
    assert!((build("dist = \"exp\"\nmean = 2.0").unwrap().raw_moment(3) - 48.0).abs() < 1e-9);
    let u = build("dist = \"uniform\"\nmin = 1.0\nmax = 3.0").unwrap();
    assert!((u.raw_moment(3) - 10.0).abs() < 1e-12);
    let pareto = build("dist = \"pareto\"\nshape = 2.5\nscale = 1.0").unwrap();
    assert!(pareto.raw_moment(3).is_infinite());
}

#[test]
fn the_density_is_the_cdfs_derivative() {
    for case in FAMILIES {
        let d = build(case).unwrap();
        if !d.has_density() {
            assert!(d.density(1.0).is_none(), "{case}");
            continue;
        }
        for q in [0.1, 0.3, 0.5, 0.7, 0.9, 0.99] {
            let x = d.quantile(q).unwrap();
            let h = 1e-5 * x.max(1e-3);
            let slope = (d.cdf(x + h) - d.cdf(x - h)) / (2.0 * h);
            let f = d.density(x).unwrap();
            assert!(
                (f - slope).abs() <= 1e-5 * slope.max(1e-3),
                "{case}: density {f} at {x}, central difference {slope}"
            );
        }
        assert_eq!(d.density(-1.0), Some(0.0), "{case}");
    }
}

#[test]
fn bounds_enclose_every_quantile() {
    for case in FAMILIES {
        let d = build(case).unwrap();
        for q in [0.001, 0.5, 0.999] {
            let x = d.quantile(q).unwrap();
            assert!(
                d.lower_bound() <= x && x <= d.upper_bound(),
                "{case}: {x} outside [{}, {}]",
                d.lower_bound(),
                d.upper_bound()
            );
        }
    }
}

/// `{ dist = "ph" }` with the initial vector and sub-generator of a family the analytic side
/// knows in closed form: the same mean, SCV, third moment, CDF, density and quantiles.
#[test]
fn phase_type_laws_equal_the_families_they_write() {
    let cases = [
        // Erlang-3 of mean 1.5: three phases of rate 2 in a row
        (
            "dist = \"erlang\"\nk = 3\nmean = 1.5",
            "dist = \"ph\"\nalpha = [1.0, 0.0, 0.0]\ngenerator = [[-2.0, 2.0, 0.0], [0.0, -2.0, 2.0], [0.0, 0.0, -2.0]]",
        ),
        // the exponential of mean 0.25
        (
            "dist = \"exp\"\nmean = 0.25",
            "dist = \"ph\"\nalpha = [1.0]\ngenerator = [[-4.0]]",
        ),
    ];
    for (family, ph) in cases {
        let (f, p) = (build(family).unwrap(), build(ph).unwrap());
        for k in 1..=3 {
            assert!(
                (p.raw_moment(k) / f.raw_moment(k) - 1.0).abs() < 1e-12,
                "{ph}: E[X^{k}]"
            );
        }
        for x in [0.01, 0.3, 1.0, 2.5, 8.0] {
            assert!(
                (p.cdf(x) - f.cdf(x)).abs() < 1e-12,
                "{ph}: F({x}) {} vs {}",
                p.cdf(x),
                f.cdf(x)
            );
            let (dp, df) = (p.density(x).unwrap(), f.density(x).unwrap());
            assert!(
                (dp - df).abs() < 1e-12 * df.max(1.0),
                "{ph}: f({x}) {dp} vs {df}"
            );
        }
        for q in [0.5, 0.99] {
            let (xp, xf) = (p.quantile(q).unwrap(), f.quantile(q).unwrap());
            assert!(
                (xp / xf - 1.0).abs() < 1e-9,
                "{ph}: quantile {q}: {xp} vs {xf}"
            );
        }
    }
    // a balanced H2 of mean 1, SCV 4: p1 = (1 + sqrt(3/5)) / 2, rates 2 p1 and 2 (1 - p1)
    let h2 = build("dist = \"h2\"\nmean = 1.0\nscv = 4.0").unwrap();
    let p1 = 0.5 * (1.0 + (0.6f64).sqrt());
    let spec = DistSpec::Ph {
        alpha: vec![p1, 1.0 - p1],
        generator: vec![vec![-2.0 * p1, 0.0], vec![0.0, -2.0 * (1.0 - p1)]],
    };
    let ph = spec.build(Path::new(".")).unwrap();
    assert!((ph.mean() - 1.0).abs() < 1e-12 && (ph.scv() - 4.0).abs() < 1e-10);
    for x in [0.1, 1.0, 10.0, 40.0] {
        assert!((ph.cdf(x) - h2.cdf(x)).abs() < 1e-12, "F({x})");
    }
    // the spec prints as a table that reads back to the same law
    #[derive(serde::Deserialize)]
    struct Table {
        d: DistSpec,
    }
    let again: Table =
        toml::from_str(&format!("d = {spec}")).unwrap_or_else(|e| panic!("{spec}: {e}"));
    assert_eq!(again.d, spec);
}

#[test]
fn phase_type_laplace_transform_is_alpha_si_minus_t_inverse_t() {
    // Coxian: rate 2, then on with probability 3/4 to rate 3, which ends; E[exp(-sX)] by hand
    let d =
        build("dist = \"ph\"\nalpha = [1.0, 0.0]\ngenerator = [[-2.0, 1.5], [0.0, -3.0]]").unwrap();
    for s in [0.0, 0.5, 2.0, 10.0] {
        let by_hand = 2.0 / (2.0 + s) * (0.25 + 0.75 * 3.0 / (3.0 + s));
        assert!((d.laplace(s).unwrap() - by_hand).abs() < 1e-14, "s = {s}");
    }
}

/// Each family's transform against `E[exp(-s X)]` integrated from its density (or summed
/// over its atoms).
#[test]
fn laplace_transforms_are_the_expectation_of_exp_minus_s_x() {
    for case in FAMILIES {
        let d = build(case).unwrap();
        let Some(_) = d.laplace(1.0) else { continue };
        for s in [0.1, 1.0, 3.0] {
            let by_quadrature = if d.has_density() {
                // int exp(-s x) f(x) dx = int_0^1 exp(-s Q(u)) du, midpoint rule on 20,000 cells
                let n = 20_000;
                (0..n)
                    .map(|i| (-s * d.quantile((i as f64 + 0.5) / n as f64).unwrap()).exp())
                    .sum::<f64>()
                    / n as f64
            } else {
                (-s * d.mean()).exp()
            };
            let got = d.laplace(s).unwrap();
            assert!(
                (got - by_quadrature).abs() < 1e-4,
                "{case}: L({s}) {got} vs {by_quadrature}"
            );
        }
    }
}

#[test]
fn a_bmap_draws_its_sizes_with_the_rates_of_its_phases() {
    // D0 = [[-0.6, 0.1], [0.05, -0.15]], D1 = diag(0.3, 0.05), D3 = diag(0.2, 0.05): the phases'
    // stationary law (1/3, 2/3), epochs at 0.7/3, a batch of 3 with probability
    // (0.2/3 + 0.1/3) / (0.7/3) = 3/7, jobs at 1.3/3 per unit time
    let spec = ArrivalSpec::Bmap {
        d0: vec![vec![-0.6, 0.1], vec![0.05, -0.15]],
        d: vec![
            vec![vec![0.3, 0.0], vec![0.0, 0.05]],
            vec![vec![0.0, 0.0], vec![0.0, 0.0]],
            vec![vec![0.2, 0.0], vec![0.0, 0.05]],
        ],
    };
    let mut dist = spec.build().unwrap();
    assert!((dist.mean() - 3.0 / 0.7).abs() < 1e-9);
    let (mean, _) = dist.arrival_process().unwrap().batch_moments();
    assert!((mean - 1.3 / 0.7).abs() < 1e-9);
    let mut rng = stream(11, 0, 0);
    let n = 200_000;
    let (mut threes, mut time, mut jobs) = (0u32, 0.0, 0u64);
    for _ in 0..n {
        time += dist.sample(&mut rng);
        let size = dist.arrival_process().unwrap().last_batch();
        assert!(size == 1 || size == 3, "size {size}");
        threes += u32::from(size == 3);
        jobs += u64::from(size);
    }
    // sizes are correlated through the phases: a tolerance of several binomial sigmas
    let share = f64::from(threes) / f64::from(n);
    assert!(
        (share - 3.0 / 7.0).abs() < 0.01,
        "share of batches of 3: {share}"
    );
    let rate = jobs as f64 / time;
    assert!((rate / (1.3 / 3.0) - 1.0).abs() < 0.03, "job rate {rate}");
}
