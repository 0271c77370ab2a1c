//! The matrix-analytic MAP/PH/1 solver at 20 phases per level (`cargo bench --bench mam`;
//! figures in the report of the commit that added it).
//!
//! * `map_ph1_20`: a 4-phase MAP (the superposition of two MMPP(2) streams, rates 1.1 and
//!   0.3) into a server with a 5-phase Erlang service of mean 0.5 (utilisation 0.7): a QBD of
//!   4 phases at level 0 and 20 at every other level, solved end to end (drift, logarithmic
//!   reduction, boundary, means).
//!
//! Measured once, on 2 cores shared with other builds: 7 iterations of the logarithmic
//! reduction, 0.46 ms per solve in the first loop of 200, criterion 361 us (353 to 370 us),
//! against a target of 10 ms.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use parsim::analytic::{Map, Ph, map_ph1};

/// The superposition of two MAPs: `D0 = D0a (+) D0b`, `D1 = D1a (+) D1b` (Kronecker sums).
fn superpose(a: &Map, b: &Map) -> Map {
    let (na, nb) = (a.phases(), b.phases());
    let sum = |x: &[Vec<f64>], y: &[Vec<f64>]| -> Vec<Vec<f64>> {
        (0..na * nb)
            .map(|r| {
                (0..na * nb)
                    .map(|c| {
                        let (i, k) = (r / nb, r % nb);
                        let (j, l) = (c / nb, c % nb);
                        let mut v = 0.0;
                        if k == l {
                            v += x[i][j];
                        }
                        if i == j {
                            v += y[k][l];
                        }
                        v
                    })
                    .collect()
            })
            .collect()
    };
    Map::new(sum(a.d0(), b.d0()), sum(a.d1(), b.d1())).expect("a valid MAP")
}

fn map_ph1_20(c: &mut Criterion) {
    let map = superpose(
        &Map::mmpp2([2.0, 0.2], [0.1, 0.1]).expect("MMPP"),
        &Map::mmpp2([0.5, 0.1], [1.0, 1.0]).expect("MMPP"),
    );
    let service = Ph::erlang(5, 10.0).expect("Erlang");
    let solve = || map_ph1(&map, &service).expect("stable and within the budget");
    let r = solve();
    let runs = 200;
    let start = Instant::now();
    for _ in 0..runs {
        black_box(solve());
    }
    eprintln!(
        "map_ph1_20: lambda {:.3}, utilisation {:.3}, L {:.6}, {} iterations, {:.3?} per solve",
        map.lambda(),
        r.metrics.utilisation.unwrap_or(f64::NAN),
        r.metrics.mean_number,
        r.iterations,
        start.elapsed() / runs
    );
    let mut group = c.benchmark_group("mam");
    group
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(3));
    group.bench_function("map_ph1_20", |b| b.iter(|| black_box(solve().metrics)));
    group.finish();
}

criterion_group!(benches, map_ph1_20);
criterion_main!(benches);
