//! HyperX, the flattened butterfly (Ahn, Binkert, Davis, McLaren and Schreiber, SC 2009): routers
//! on a grid of `dims`, each joined by a link to every router that differs from it in one
//! coordinate, with `p` hosts on each router.
//!
//! Vertices: hosts `0..N` (`N = p R`, `R` the product of `dims`; host `i` on router `i / p`), then
//! router `r` as vertex `N + r`, its coordinates `r` in mixed radix (the first dimension
//! fastest). Links, one-way: host `i`'s injection `i`, its ejection `N + i`, and router `r`'s
//! links `2N + r P + port`, `P = sum (d_k - 1)` ports each: the ports of dimension `k` follow those
//! of the dimensions before it, one per other coordinate in increasing order.

use super::Hop;

/// The sizes of a HyperX.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HyperX {
    /// Routers along each dimension (1 to 3 dimensions).
    pub dims: Vec<u32>,
    /// Hosts per router.
    pub hosts_per_router: u32,
}

impl HyperX {
    /// Routers in all.
    pub fn routers(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d)).product()
    }

    /// Hosts in all.
    pub fn hosts(&self) -> u64 {
        self.routers() * u64::from(self.hosts_per_router)
    }

    /// Checks the sizes: 1 to 3 dimensions, each at least 1, at least one host per router, and
    /// every vertex numbered in 32 bits.
    pub fn check(&self) -> Result<(), String> {
        if self.dims.is_empty() || self.dims.len() > 3 {
            return Err(format!(
                "a hyperx has 1 to 3 dimensions, got {}",
                self.dims.len()
            ));
        }
        if self.dims.contains(&0) {
            return Err("every dimension needs at least one router".to_owned());
        }
        if self.hosts_per_router == 0 {
            return Err("hosts_per_router must be at least 1".to_owned());
        }
        super::vertices_fit(self.hosts(), self.routers())
    }

    fn ports(&self) -> u64 {
        self.dims.iter().map(|&d| u64::from(d - 1)).sum()
    }

    /// How many links there are.
    pub fn link_count(&self) -> u64 {
        2 * self.hosts() + self.routers() * self.ports()
    }

    /// The router a vertex is (None for a host).
    pub fn router(&self, vertex: u32) -> Option<u32> {
        u64::from(vertex)
            .checked_sub(self.hosts())
            .map(|r| r as u32)
    }

    /// The router host `host` hangs off.
    pub fn router_of(&self, host: u32) -> u32 {
        host / self.hosts_per_router
    }

    /// Coordinate `k` of router `r`, and the stride of dimension `k`.
    fn coordinate(&self, r: u32, k: usize) -> (u32, u32) {
        let stride: u32 = self.dims[..k].iter().product();
        ((r / stride) % self.dims[k], stride)
    }

    /// The dimensions in which routers `r` and `s` differ, lowest first.
    pub fn differing(&self, r: u32, s: u32) -> impl Iterator<Item = usize> + '_ {
        (0..self.dims.len()).filter(move |&k| self.coordinate(r, k).0 != self.coordinate(s, k).0)
    }

    /// The link from router `r` along dimension `k` to the router whose coordinate there is
    /// `s`'s.
    pub fn along(&self, r: u32, k: usize, s: u32) -> Hop {
        let (c, stride) = self.coordinate(r, k);
        let t = self.coordinate(s, k).0;
        let before: u64 = self.dims[..k].iter().map(|&d| u64::from(d - 1)).sum();
        let port = before + u64::from(if t < c { t } else { t - 1 });
        let to = r - c * stride + t * stride;
        Hop {
            link: 2 * self.hosts() + u64::from(r) * self.ports() + port,
            to: (self.hosts() + u64::from(to)) as u32,
        }
    }

    /// The hop from vertex `at` to host `dst` when the route goes on to router `target`: up from
    /// a host; down to `dst` at its router; else `choose` picks one of the dimensions still
    /// differing from `target` (given lowest first, never empty).
    pub fn step(
        &self,
        at: u32,
        dst: u32,
        target: u32,
        choose: impl FnOnce(&mut dyn Iterator<Item = usize>) -> usize,
    ) -> Hop {
        let Some(r) = self.router(at) else {
            return Hop {
                link: u64::from(at),
                to: (self.hosts() + u64::from(self.router_of(at))) as u32,
            };
        };
        if r == target && target == self.router_of(dst) {
            return Hop {
                link: self.hosts() + u64::from(dst),
                to: dst,
            };
        }
        let k = choose(&mut self.differing(r, target));
        self.along(r, k, target)
    }

    /// The minimal route's next hop, dimension order.
    pub fn minimal(&self, at: u32, dst: u32) -> Hop {
        self.step(at, dst, self.router_of(dst), |dims| {
            dims.next().expect("the routers differ")
        })
    }

    /// A readable name for a link: `h3up`, `h3down` (host 3's injection and ejection), and
    /// `1_2>x3` (from the router at x = 1, y = 2 along x to x = 3).
    pub fn link_name(&self, link: u64) -> String {
        let n = self.hosts();
        if link < n {
            return format!("h{link}up");
        }
        if link < 2 * n {
            return format!("h{}down", link - n);
        }
        let i = link - 2 * n;
        let (r, mut port) = ((i / self.ports()) as u32, i % self.ports());
        let coords: Vec<u32> = (0..self.dims.len())
            .map(|k| self.coordinate(r, k).0)
            .collect();
        let shown: Vec<String> = coords.iter().map(u32::to_string).collect();
        for (k, &d) in self.dims.iter().enumerate() {
            let here = u64::from(d - 1);
            if port < here {
                let t = if port < u64::from(coords[k]) {
                    port
                } else {
                    port + 1
                };
                return format!("{}>{}{t}", shown.join("_"), ['x', 'y', 'z'][k]);
            }
            port -= here;
        }
        unreachable!("a port below the router's port count")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minimal routes take one router hop per differing coordinate, in dimension order, and
    /// their links are distinct and in range; link names are what they say.
    #[test]
    fn minimal_routes_fix_one_coordinate_per_hop() {
        let x = HyperX {
            dims: vec![4, 3, 2],
            hosts_per_router: 2,
        };
        x.check().unwrap();
        let n = x.hosts() as u32;
        let mut seen = std::collections::HashSet::new();
        for src in 0..n {
            for dst in 0..n {
                let mut at = src;
                let mut hops = Vec::new();
                while at != dst {
                    let hop = x.minimal(at, dst);
                    assert!(hop.link < x.link_count());
                    seen.insert(hop.link);
                    hops.push(hop);
                    at = hop.to;
                    assert!(hops.len() <= 5);
                }
                if src != dst {
                    let (rs, rd) = (x.router_of(src), x.router_of(dst));
                    assert_eq!(hops.len(), 2 + x.differing(rs, rd).count());
                }
            }
        }
        assert_eq!(
            seen.len() as u64,
            x.link_count(),
            "every link is on some route"
        );
        let hop = x.along(0, 0, 3);
        assert_eq!(x.link_name(hop.link), "0_0_0>x3");
        assert_eq!(hop.to, n + 3);
        let hop = x.along(5, 1, 1);
        assert_eq!(x.link_name(hop.link), "1_1_0>y0");
    }

    #[test]
    fn bad_sizes_are_refused() {
        for (dims, p) in [
            (vec![], 1),
            (vec![2, 2, 2, 2], 1),
            (vec![3, 0], 1),
            (vec![4], 0),
        ] {
            let x = HyperX {
                dims,
                hosts_per_router: p,
            };
            assert!(x.check().is_err(), "{x:?}");
        }
    }
}
