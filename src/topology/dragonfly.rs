//! The dragonfly (Kim, Dally, Scott and Abts, ISCA 2008): groups of routers joined all-to-all
//! inside a group by local links, and groups joined to one another by global links.
//!
//! `p` hosts hang off each router, `a` routers form a group, each router has `h` global links,
//! and there are `g` groups (at most `a h + 1`, when every pair of groups is joined by exactly
//! one global link). Vertices: hosts `0..N` (`N = p a g`, host `i` on router `i / p`), then the
//! routers, router `r` as vertex `N + r`, in group `r / a`. Links, one-way:
//!
//! | links | ids | how many |
//! |---|---|---|
//! | host to router (injection) | `i` | `N` |
//! | router to host (ejection) | `N + i` | `N` |
//! | local, router `r` to router `y` of its group | `2N + r (a - 1) + (y, less one when above r's place)` | `a g (a - 1)` |
//! | global, port `k` of router `r` | `2N + a g (a - 1) + r h + k` | `a g h` |
//!
//! Global links are arranged consecutively: the `j`-th global port of group `G` (port `j % h`
//! of its router `j / h`) joins group `(G + j + 1) mod g`, for `j < g - 1`; with fewer than
//! `a h + 1` groups the ports from `g - 1` on are left unconnected, so every pair of groups is
//! joined by one link whatever `g`.

use super::Hop;

/// The sizes of a dragonfly.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dragonfly {
    /// Hosts per router (`p`).
    pub hosts_per_router: u32,
    /// Routers per group (`a`).
    pub routers_per_group: u32,
    /// Global links per router (`h`).
    pub global_links_per_router: u32,
    /// Groups (`g`, at most `a h + 1`).
    pub groups: u32,
}

impl Dragonfly {
    /// Hosts in all (`p a g`).
    pub fn hosts(&self) -> u64 {
        u64::from(self.hosts_per_router) * self.routers()
    }

    /// Routers in all (`a g`).
    pub fn routers(&self) -> u64 {
        u64::from(self.routers_per_group) * u64::from(self.groups)
    }

    /// The most groups its global links can join pairwise (`a h + 1`).
    pub fn most_groups(&self) -> u64 {
        u64::from(self.routers_per_group) * u64::from(self.global_links_per_router) + 1
    }

    /// Checks the sizes: each at least 1, `g <= a h + 1`, and every vertex numbered in 32 bits.
    pub fn check(&self) -> Result<(), String> {
        let sizes = [
            ("hosts_per_router", self.hosts_per_router),
            ("routers_per_group", self.routers_per_group),
            ("global_links_per_router", self.global_links_per_router),
            ("groups", self.groups),
        ];
        if let Some((name, _)) = sizes.iter().find(|(_, v)| *v == 0) {
            return Err(format!("{name} must be at least 1"));
        }
        if u64::from(self.groups) > self.most_groups() {
            return Err(format!(
                "{} groups cannot all be joined by the global links: {} routers per group with {} global links each join at most a h + 1 = {} groups; give groups <= {} or more global links per router",
                self.groups,
                self.routers_per_group,
                self.global_links_per_router,
                self.most_groups(),
                self.most_groups()
            ));
        }
        super::vertices_fit(self.hosts(), self.routers())
    }

    fn local_base(&self) -> u64 {
        2 * self.hosts()
    }

    fn global_base(&self) -> u64 {
        self.local_base() + self.routers() * u64::from(self.routers_per_group - 1)
    }

    /// How many links there are.
    pub fn link_count(&self) -> u64 {
        self.global_base() + self.routers() * u64::from(self.global_links_per_router)
    }

    /// True for a global link.
    pub fn is_global(&self, link: u64) -> bool {
        link >= self.global_base()
    }

    /// The router a vertex is (None for a host).
    fn router(&self, vertex: u32) -> Option<u32> {
        u64::from(vertex)
            .checked_sub(self.hosts())
            .map(|r| r as u32)
    }

    /// The group of router `r`.
    pub fn group(&self, r: u32) -> u32 {
        r / self.routers_per_group
    }

    /// The router host `host` hangs off.
    pub fn router_of(&self, host: u32) -> u32 {
        host / self.hosts_per_router
    }

    /// The group of the vertex `vertex` (a host's is its router's).
    pub fn group_of_vertex(&self, vertex: u32) -> u32 {
        match self.router(vertex) {
            Some(r) => self.group(r),
            None => self.group(self.router_of(vertex)),
        }
    }

    fn vertex(&self, r: u32) -> u32 {
        (self.hosts() + u64::from(r)) as u32
    }

    /// The local link from router `r` to router `y` of its group (`y != r`).
    fn local(&self, r: u32, y: u32) -> Hop {
        let a = self.routers_per_group;
        let (x, yy) = (r % a, y % a);
        let port = if yy < x { yy } else { yy - 1 };
        Hop {
            link: self.local_base() + u64::from(r) * u64::from(a - 1) + u64::from(port),
            to: self.vertex(y),
        }
    }

    /// The next hop from router `r` towards group `to_group` (not `r`'s group): the global
    /// link to it if `r` has it, else the local link to the router of the group that has.
    pub fn toward_group(&self, r: u32, to_group: u32) -> Hop {
        let (a, h, g) = (
            self.routers_per_group,
            self.global_links_per_router,
            self.groups,
        );
        let from = self.group(r);
        let j = (to_group + g - from - 1) % g;
        let owner = from * a + j / h;
        if owner != r {
            return self.local(r, owner);
        }
        let back = g - j - 2;
        Hop {
            link: self.global_base() + u64::from(r) * u64::from(h) + u64::from(j % h),
            to: self.vertex(to_group * a + back / h),
        }
    }

    /// The minimal route's next hop from vertex `at` towards host `dst` (`at != dst`): up from
    /// a host to its router; down to `dst` from its router; a local hop inside `dst`'s group;
    /// else towards `dst`'s group (local, then global).
    pub fn minimal(&self, at: u32, dst: u32) -> Hop {
        let Some(r) = self.router(at) else {
            return Hop {
                link: u64::from(at),
                to: self.vertex(self.router_of(at)),
            };
        };
        let rd = self.router_of(dst);
        if r == rd {
            Hop {
                link: self.hosts() + u64::from(dst),
                to: dst,
            }
        } else if self.group(r) == self.group(rd) {
            self.local(r, rd)
        } else {
            self.toward_group(r, self.group(rd))
        }
    }

    /// True when vertex `at` is a router in group `group`.
    pub fn router_in(&self, at: u32, group: u32) -> bool {
        self.router(at).is_some_and(|r| self.group(r) == group)
    }

    /// The router-to-router hops of the minimal route from router vertex `at` to host `dst`.
    pub fn router_hops(&self, at: u32, dst: u32) -> u32 {
        let mut hops = 0;
        let mut v = at;
        while self.router(v).is_some_and(|r| r != self.router_of(dst)) {
            v = self.minimal(v, dst).to;
            hops += 1;
        }
        hops
    }

    /// A readable name for a link: `h3up` and `h3down` (host 3's injection and ejection),
    /// `g1r2-r3` (local, group 1, from its router 2 to its router 3), `g1r2>g4` (global, from
    /// group 1's router 2 to group 4).
    pub fn link_name(&self, link: u64) -> String {
        let (n, a, h) = (
            self.hosts(),
            u64::from(self.routers_per_group),
            u64::from(self.global_links_per_router),
        );
        if link < n {
            format!("h{link}up")
        } else if link < self.local_base() {
            format!("h{}down", link - n)
        } else if link < self.global_base() {
            let i = link - self.local_base();
            let (r, port) = (i / (a - 1), i % (a - 1));
            let x = r % a;
            let y = if port < x { port } else { port + 1 };
            format!("g{}r{x}-r{y}", r / a)
        } else {
            let i = link - self.global_base();
            let (r, k) = (i / h, i % h);
            let to = self.toward_group_of_port(r as u32, k as u32);
            match to {
                Some(d) => format!("g{}r{}>g{d}", r / a, r % a),
                None => format!("g{}r{}>none{k}", r / a, r % a),
            }
        }
    }

    /// The group global port `k` of router `r` leads to (None when it is unconnected).
    fn toward_group_of_port(&self, r: u32, k: u32) -> Option<u32> {
        let (a, h, g) = (
            self.routers_per_group,
            self.global_links_per_router,
            self.groups,
        );
        let j = (r % a) * h + k;
        (j + 1 < g).then(|| (self.group(r) + j + 1) % g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn df(p: u32, a: u32, h: u32, g: u32) -> Dragonfly {
        let d = Dragonfly {
            hosts_per_router: p,
            routers_per_group: a,
            global_links_per_router: h,
            groups: g,
        };
        d.check().unwrap();
        d
    }

    fn walk(d: &Dragonfly, src: u32, dst: u32) -> Vec<Hop> {
        let mut hops = Vec::new();
        let mut at = src;
        while at != dst {
            let hop = d.minimal(at, dst);
            hops.push(hop);
            at = hop.to;
            assert!(hops.len() <= 5, "{src} -> {dst}: {hops:?}");
        }
        hops
    }

    /// Every pair of hosts: the minimal route has at most one global hop, at most one local
    /// hop in each group, the right length, and distinct links in range.
    #[test]
    fn minimal_routes_cross_at_most_one_global_link() {
        for d in [
            df(2, 4, 2, 9),
            df(1, 3, 2, 5),
            df(2, 2, 1, 3),
            df(1, 1, 1, 2),
        ] {
            let n = d.hosts() as u32;
            for src in 0..n {
                for dst in 0..n {
                    if src == dst {
                        continue;
                    }
                    let route = walk(&d, src, dst);
                    let globals = route.iter().filter(|h| d.is_global(h.link)).count();
                    let (gs, gd) = (d.group_of_vertex(src), d.group_of_vertex(dst));
                    assert_eq!(globals, usize::from(gs != gd), "{src} -> {dst}");
                    assert!(route.iter().all(|h| h.link < d.link_count()));
                    let routers = route.len() - 2;
                    assert_eq!(d.router_hops(route[0].to, dst) as usize, routers);
                    if d.router_of(src) == d.router_of(dst) {
                        assert_eq!(route.len(), 2);
                    } else if gs == gd {
                        assert_eq!(route.len(), 3);
                    } else {
                        assert!((3..=5).contains(&route.len()));
                    }
                }
            }
        }
    }

    /// With `g = a h + 1` every global port is used once and each pair of groups is joined by
    /// one link each way; each global link's far end is in the group its name says.
    #[test]
    fn global_links_join_every_pair_of_groups_once() {
        let d = df(1, 4, 2, 9);
        let mut pairs = std::collections::HashSet::new();
        for r in 0..d.routers() as u32 {
            for k in 0..2 {
                let to = d.toward_group_of_port(r, k).expect("every port is used");
                assert!(pairs.insert((d.group(r), to)), "two links {r}:{k}");
                let hop = d.toward_group(r, to);
                assert!(d.is_global(hop.link));
                assert!(d.router_in(hop.to, to));
                // and the far router's link back leads to r's group, landing on r
                let back = d.toward_group(hop.to - d.hosts() as u32, d.group(r));
                assert_eq!(back.to, d.hosts() as u32 + r);
            }
        }
        assert_eq!(pairs.len(), 9 * 8);
        assert_eq!(d.link_name(d.toward_group(0, 1).link), "g0r0>g1");
        assert_eq!(d.link_name(0), "h0up");
        assert_eq!(d.link_name(d.hosts()), "h0down");
    }

    #[test]
    fn too_many_groups_are_refused_with_the_bound() {
        let d = Dragonfly {
            hosts_per_router: 2,
            routers_per_group: 4,
            global_links_per_router: 2,
            groups: 10,
        };
        let e = d.check().unwrap_err();
        assert!(e.contains("a h + 1 = 9"), "{e}");
        let zero = Dragonfly { groups: 0, ..d };
        assert!(
            zero.check()
                .unwrap_err()
                .contains("groups must be at least 1")
        );
    }
}
