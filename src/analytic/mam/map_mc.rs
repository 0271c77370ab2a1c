//! MAP/M/c FCFS as a quasi-birth-death process.

use super::dense::Dense;
use super::map::Map;
use super::map_ph1::MapQueueResult;
use super::qbd::{Qbd, QbdLevel, qbd};
use crate::analytic::check;
use crate::analytic::error::Result;

/// MAP/M/c FCFS, exact means: arrivals by `map`, `servers` exponential servers of mean
/// `mean_service`.
///
/// The number of jobs and the MAP phase form a QBD (Neuts 1981, 3.7; Latouche and Ramaswami
/// 1999, 3.5): levels `k < c` are the boundary (`D0 - k mu I` local, `D1` up, `k mu I`
/// down), levels `k >= c` repeat with `A0 = D1`, `A1 = D0 - c mu I`, `A2 = c mu I`; solved by
/// [`qbd`]. `L = sum n pi_n 1`, `R = L / lambda`, `Wq = R - E[S]` (Little); `p_wait` is the
/// probability that an arrival finds all servers busy.
///
/// Errors: `InvalidParameter` for `mean_service` not finite and positive or `servers = 0`;
/// `Unstable` for `lambda E[S] / c >= 1`; as [`qbd`] (`TooCostly` for a MAP of many phases
/// with many servers).
pub fn map_mc(map: &Map, mean_service: f64, servers: u32) -> Result<MapQueueResult> {
    let s = check::positive("mean_service", mean_service)?;
    let c = check::at_least("servers", servers, 1)?;
    let lambda = map.lambda();
    check::stable("MAP/M/c station", lambda * s / f64::from(c))?;
    let mu = 1.0 / s;
    let m = map.phases();
    let d0 = Dense::from_rows(map.d0());
    let d1 = map.d1().to_vec();
    let identity = Dense::identity(m);
    let boundary = (0..c)
        .map(|k| {
            let rate = f64::from(k) * mu;
            QbdLevel {
                local: d0.sub(&identity.scale(rate)).to_rows(),
                up: d1.clone(),
                down: if k == 0 {
                    Vec::new()
                } else {
                    identity.scale(rate).to_rows()
                },
            }
        })
        .collect();
    let full = f64::from(c) * mu;
    let model = Qbd {
        boundary,
        entry_down: identity.scale(full).to_rows(),
        a0: d1,
        a1: d0.sub(&identity.scale(full)).to_rows(),
        a2: identity.scale(full).to_rows(),
    };
    let solution = qbd(&model)?;
    Ok(MapQueueResult::from_levels(&solution, map, 1, s, c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analytic::mam::{Ph, gim1};
    use crate::analytic::single::mmc;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn poisson_is_mmc() {
        for (lambda, s, c) in [(0.8, 1.0, 1), (3.0, 1.0, 4), (4.5, 1.3, 7), (9.0, 1.0, 10)] {
            let r = map_mc(&Map::poisson(lambda).unwrap(), s, c).unwrap();
            let m = mmc(lambda, s, c).unwrap();
            assert!(close(r.metrics.mean_wait, m.mean_wait, 1e-11), "{c}");
            assert!(close(r.metrics.mean_number, m.mean_number, 1e-12));
        }
    }

    #[test]
    fn renewal_map_agrees_with_gim1_for_several_servers() {
        // E3/M/3 and H2/M/2: the QBD of the renewal MAP against the GI/M/c boundary solve
        let e3 = Ph::erlang(3, 3.0 * 2.4).unwrap(); // lambda = 2.4
        let r = map_mc(&Map::renewal(&e3).unwrap(), 1.0, 3).unwrap();
        let g = gim1(&|x| e3.laplace(x).unwrap_or(f64::NAN), 2.4, 1.0, 3).unwrap();
        assert!(close(r.metrics.mean_wait, g.metrics.mean_wait, 1e-9));
        assert!(close(r.p_wait, g.p_wait, 1e-9));
        let h2 = Ph::h2_balanced(1.0 / 1.5, 4.0).unwrap(); // lambda = 1.5
        let r = map_mc(&Map::renewal(&h2).unwrap(), 1.0, 2).unwrap();
        let g = gim1(&|x| h2.laplace(x).unwrap_or(f64::NAN), 1.5, 1.0, 2).unwrap();
        assert!(close(r.metrics.mean_wait, g.metrics.mean_wait, 1e-9));
        assert!(close(r.p_wait, g.p_wait, 1e-9));
    }

    #[test]
    fn refusals() {
        let p = Map::poisson(2.0).unwrap();
        assert!(map_mc(&p, 1.0, 2).is_err());
        assert!(map_mc(&p, 0.0, 3).is_err());
        assert!(map_mc(&p, 1.0, 0).is_err());
        assert!(map_mc(&p, f64::NAN, 3).is_err());
    }
}
