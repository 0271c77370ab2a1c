//! Interconnects: which links a message crosses between two nodes.
//!
//! A topology has `nodes` compute nodes (numbered from 0; ranks live on them) and, for trees,
//! switches; **links** are one-way channels between them, each with its own queue in the
//! simulation (see [`crate::program`]). A message is routed hop by hop by [`Topology::next`],
//! deterministically, so nothing per route is stored:
//!
//! | kind | links | route |
//! |---|---|---|
//! | `bus` | one shared medium | the bus, one hop |
//! | `full` | one per ordered pair of nodes | direct, one hop |
//! | `ring` | two per node (clockwise, counter-clockwise) | the shorter way round (ties clockwise) |
//! | `mesh` (1 to 3 dims) | two per neighbour pair | dimension order (x, then y, then z) |
//! | `torus` (1 to 3 dims) | as `mesh`, with wrap-around | dimension order, the shorter way in each dimension (ties in the positive direction) |
//! | `tree` (arity `k`) | up and down links per edge | up to the lowest common ancestor, then down |
//! | `fat_tree` (arity `k`) | as `tree`, link capacity times `k^level` | as `tree` |
//! | `dragonfly` ([`dragonfly`]) | host links, local links all-to-all in a group, global links between groups | minimal, Valiant or UGAL |
//! | `hyperx` ([`hyperx`]) | host links, all-to-all in each dimension of a grid of routers | minimal (dimension order), Valiant or adaptive |
//!
//! The `fat_tree` is the capacity-scaled tree: the links between level `l` and `l + 1` (leaves
//! at level 0) carry `k^l` times the base bandwidth, so every level has the bisection of the
//! leaves (a full fat tree); it routes like a tree.
//!
//! Minimal routes are what [`Topology::next`] gives. The other [`Routing`]s choose a message's
//! route as it goes: [`Topology::detour`] draws its random intermediate when it is sent, and
//! [`Topology::next_routed`] takes its hops, reading the backlog of the links it could take.

pub mod dragonfly;
pub mod hyperx;

use dragonfly::Dragonfly;
use hyperx::HyperX;
use serde::Deserialize;
use std::fmt;
use strength_reduce::StrengthReducedU32;

/// Dimensions whose product is `nodes`, as square as they come (`[4, 4]` for 16, `[4, 2]` for 8,
/// `[7]` for 7), written as TOML: the example of a `dims` hint.
pub fn example_dims(nodes: u32) -> String {
    let side = (1..=nodes)
        .take_while(|d| d * d <= nodes)
        .filter(|d| nodes.is_multiple_of(*d))
        .last()
        .unwrap_or(1);
    if side == 1 {
        format!("[{nodes}]")
    } else {
        format!("[{}, {side}]", nodes / side)
    }
}

/// The kinds of `[topology]`.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TopologyKind {
    /// One shared medium.
    Bus,
    /// A link per ordered pair.
    Full,
    /// A ring (a 1-D torus).
    Ring,
    /// A 1-3 dimensional mesh.
    Mesh,
    /// A 1-3 dimensional torus.
    Torus,
    /// A tree of switches.
    Tree,
    /// A capacity-scaled tree.
    FatTree,
    /// Groups of routers joined all-to-all, groups joined by global links.
    Dragonfly,
    /// A flattened butterfly: routers all-to-all along each dimension of a grid.
    Hyperx,
}

impl TopologyKind {
    /// Its name in a scenario file (`kind = "fat_tree"`).
    pub fn name(self) -> &'static str {
        match self {
            TopologyKind::Bus => "bus",
            TopologyKind::Full => "full",
            TopologyKind::Ring => "ring",
            TopologyKind::Mesh => "mesh",
            TopologyKind::Torus => "torus",
            TopologyKind::Tree => "tree",
            TopologyKind::FatTree => "fat_tree",
            TopologyKind::Dragonfly => "dragonfly",
            TopologyKind::Hyperx => "hyperx",
        }
    }
}

/// How a message's route is chosen (`[topology] routing`).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Routing {
    /// The shortest route, the same for every message between two nodes (every kind).
    #[default]
    Minimal,
    /// Through a random intermediate (a dragonfly's group, a HyperX's router), then on to the
    /// destination, each leg minimal.
    Valiant,
    /// Dragonfly: at the source router, minimal or Valiant by which first link's backlog times
    /// its route's router hops is smaller (UGAL-L; ties minimal).
    Ugal,
    /// HyperX: at each router, the least backlogged link among the dimensions still to correct
    /// (ties in dimension order).
    Adaptive,
}

impl Routing {
    /// Its name in a scenario file.
    pub fn name(self) -> &'static str {
        match self {
            Routing::Minimal => "minimal",
            Routing::Valiant => "valiant",
            Routing::Ugal => "ugal",
            Routing::Adaptive => "adaptive",
        }
    }

    /// The routings a topology kind has.
    pub fn of_kind(kind: TopologyKind) -> &'static [Routing] {
        match kind {
            TopologyKind::Dragonfly => &[Routing::Minimal, Routing::Valiant, Routing::Ugal],
            TopologyKind::Hyperx => &[Routing::Minimal, Routing::Valiant, Routing::Adaptive],
            _ => &[Routing::Minimal],
        }
    }
}

/// `Ok` when `hosts` and `routers` can all be numbered as vertices (32 bits).
fn vertices_fit(hosts: u64, routers: u64) -> Result<(), String> {
    if hosts + routers > u64::from(u32::MAX) {
        return Err(format!(
            "{hosts} hosts and {routers} routers are more vertices than parsim numbers (2^32)"
        ));
    }
    Ok(())
}

/// A message's detour when it has none: its route is minimal from where it is.
pub const NO_DETOUR: u32 = u32::MAX;

/// Marks a UGAL detour not yet decided on (the message has not reached its source router).
const UNDECIDED: u32 = 1 << 31;

/// The shape of an interconnect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// One shared medium.
    Bus,
    /// A link per ordered pair of nodes.
    Full,
    /// A grid of `dims` (1 to 3), with wrap-around links when `wrap` (ring and torus).
    Grid {
        /// Nodes along each dimension.
        dims: Vec<u32>,
        /// Torus (or ring) rather than mesh.
        wrap: bool,
    },
    /// A `arity`-ary tree of switches with the nodes as leaves.
    Tree {
        /// Children per switch.
        arity: u32,
        /// Capacity scaled by `arity^level` (a fat tree).
        fat: bool,
    },
    /// A dragonfly.
    Dragonfly(Dragonfly),
    /// A HyperX.
    HyperX(HyperX),
}

/// One hop of a route.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hop {
    /// The link crossed (an index below [`Topology::link_count`]).
    pub link: u64,
    /// Where the message is after the hop (a node, or a switch numbered from `nodes`).
    pub to: u32,
}

/// The straight stretch of a route after a hop: each of the next `hops` hops continues it in a
/// line, `step` vertices on from where the one before went, over the link whose place
/// ([`Topology::place`]) is `step` on from the one before's. Only a mesh or torus has one
/// (`hops = 0` elsewhere): the hops along one dimension that do not wrap round.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Straight {
    /// How many hops after the one it came with continue the line.
    pub hops: u32,
    /// How far each goes, in vertex numbers (the dimension's stride, signed).
    pub step: i32,
}

/// An interconnect of `nodes` compute nodes.
#[derive(Clone, Debug)]
pub struct Topology {
    shape: Shape,
    nodes: u32,
    /// Tree: levels of switches above the leaves.
    levels: u32,
    /// Grid: each dimension's size as a divisor reduced to multiplications, so routing finds a
    /// node's coordinates (x fastest) without a division or a table (which, at 10^5 nodes and
    /// up, cost a cache miss a hop).
    dividers: Vec<StrengthReducedU32>,
    /// Tree: the vertex id where each level starts, levels `0..=levels + 1` (the last is the
    /// number of vertices), and `arity^l` for each level, so routing loops over no level.
    level_starts: Vec<u64>,
    arity_powers: Vec<u64>,
    /// Grid: links per vertex (two per dimension; a link's id is `node * ports + port`).
    ports: u64,
    routing: Routing,
    /// Dragonfly: a global link's bandwidth as a multiple of the others'.
    global_capacity: f64,
    /// With links inside the nodes: the bandwidth of a node's link as a multiple of the
    /// others'. A node's link carries every message between two ranks of that node; its id is
    /// the shape's link count plus the node's number.
    node_capacity: Option<f64>,
}

/// Two topologies are equal when their shapes, node counts, routings and global and node
/// capacities are: the rest follows from them.
impl PartialEq for Topology {
    fn eq(&self, other: &Topology) -> bool {
        self.shape == other.shape
            && self.nodes == other.nodes
            && self.routing == other.routing
            && self.global_capacity.to_bits() == other.global_capacity.to_bits()
            && self.node_capacity.map(f64::to_bits) == other.node_capacity.map(f64::to_bits)
    }
}

impl Topology {
    /// A topology of `shape` over `nodes` nodes. Grids need `dims` whose product is `nodes`;
    /// trees need an arity of at least 2. Returns a message saying what is wrong otherwise.
    pub fn new(shape: Shape, nodes: u32) -> Result<Topology, String> {
        if nodes == 0 {
            return Err("a topology needs at least one node".to_owned());
        }
        let mut levels = 0;
        match &shape {
            Shape::Bus | Shape::Full => {}
            Shape::Grid { dims, .. } => {
                if dims.is_empty() || dims.len() > 3 {
                    return Err(format!(
                        "a mesh or torus has 1 to 3 dimensions, got {}",
                        dims.len()
                    ));
                }
                if dims.contains(&0) {
                    return Err("every dimension needs at least one node".to_owned());
                }
                let product: u64 = dims.iter().map(|&d| u64::from(d)).product();
                if product != u64::from(nodes) {
                    return Err(format!(
                        "dims {dims:?} hold {product} nodes, but the program needs {nodes}: give dimensions whose product is {nodes}, e.g. dims = {}",
                        example_dims(nodes)
                    ));
                }
            }
            Shape::Tree { arity, .. } => {
                if *arity < 2 {
                    return Err(format!("a tree needs an arity of at least 2, got {arity}"));
                }
                let mut span = 1_u64;
                while span < u64::from(nodes) {
                    span *= u64::from(*arity);
                    levels += 1;
                }
                levels = levels.max(1);
            }
            Shape::Dragonfly(d) => {
                d.check()?;
                if d.hosts() != u64::from(nodes) {
                    return Err(format!(
                        "a dragonfly of {} groups of {} routers with {} hosts each has {} hosts, but the program needs {nodes}: give sizes whose product hosts_per_router x routers_per_group x groups is {nodes}",
                        d.groups,
                        d.routers_per_group,
                        d.hosts_per_router,
                        d.hosts()
                    ));
                }
            }
            Shape::HyperX(x) => {
                x.check()?;
                if x.hosts() != u64::from(nodes) {
                    return Err(format!(
                        "a hyperx of {:?} routers with {} hosts each has {} hosts, but the program needs {nodes}: give dims and hosts_per_router whose product is {nodes}",
                        x.dims,
                        x.hosts_per_router,
                        x.hosts()
                    ));
                }
            }
        }
        let dividers = match &shape {
            Shape::Grid { dims, .. } => dims.iter().map(|&d| StrengthReducedU32::new(d)).collect(),
            _ => Vec::new(),
        };
        let (mut level_starts, mut arity_powers) = (Vec::new(), Vec::new());
        if let Shape::Tree { arity, .. } = shape {
            let (mut start, mut width, mut power) = (0_u64, u64::from(nodes), 1_u64);
            for _ in 0..=levels + 1 {
                level_starts.push(start);
                arity_powers.push(power);
                start += width;
                width = width.div_ceil(u64::from(arity));
                power = power.saturating_mul(u64::from(arity));
            }
        }
        let ports = match &shape {
            Shape::Grid { dims, .. } => 2 * dims.len() as u64,
            _ => 0,
        };
        Ok(Topology {
            shape,
            nodes,
            levels,
            dividers,
            level_starts,
            arity_powers,
            ports,
            routing: Routing::Minimal,
            global_capacity: 1.0,
            node_capacity: None,
        })
    }

    /// The same topology routing by `routing`; an error when its kind has no such routing.
    pub fn with_routing(mut self, routing: Routing) -> Result<Topology, String> {
        let kind = self.shape.kind();
        let have = Routing::of_kind(kind);
        if !have.contains(&routing) {
            let names: Vec<&str> = have.iter().map(|r| r.name()).collect();
            return Err(format!(
                "a {} has no {:?} routing: it routes {}",
                kind.name(),
                routing.name(),
                names.join(", ")
            ));
        }
        self.routing = routing;
        Ok(self)
    }

    /// The same dragonfly with global links of `capacity` times the others' bandwidth.
    pub fn with_global_capacity(mut self, capacity: f64) -> Topology {
        self.global_capacity = capacity;
        self
    }

    /// The same topology with a link inside each node, of `capacity` times the others'
    /// bandwidth, for the messages between the ranks of a node (which otherwise cross no link).
    pub fn with_node_links(mut self, capacity: f64) -> Topology {
        self.node_capacity = Some(capacity);
        self
    }

    /// Whether each node has a link of its own for the messages between its ranks.
    pub fn has_node_links(&self) -> bool {
        self.node_capacity.is_some()
    }

    /// The hop a message between two ranks of node `at` makes over the node's link, when `at`
    /// is `dst` and the nodes have links ([`Topology::with_node_links`]); else `None`.
    #[inline(always)]
    pub fn node_hop(&self, at: u32, dst: u32) -> Option<Hop> {
        (at == dst && self.node_capacity.is_some()).then(|| Hop {
            link: self.shape_links() + u64::from(at),
            to: at,
        })
    }

    /// True when `link` is a node's own link ([`Topology::with_node_links`]).
    pub fn is_node_link(&self, link: u64) -> bool {
        self.node_capacity.is_some() && link >= self.shape_links()
    }

    /// How routes are chosen.
    pub fn routing(&self) -> Routing {
        self.routing
    }

    /// True when a global link (of a dragonfly).
    pub fn is_global(&self, link: u64) -> bool {
        matches!(&self.shape, Shape::Dragonfly(d) if d.is_global(link))
    }

    /// The detour of a message from node `src` to node `dst` under the routing, drawn when it
    /// is sent: Valiant and UGAL on a dragonfly, a group other than the two ends' (none inside
    /// a group, or with fewer than three groups); Valiant on a HyperX, any router; else
    /// [`NO_DETOUR`]. `draw(n)` gives a uniform whole number below `n`.
    pub fn detour(&self, src: u32, dst: u32, draw: impl FnOnce(u32) -> u32) -> u32 {
        match (&self.shape, self.routing) {
            (Shape::Dragonfly(d), Routing::Valiant | Routing::Ugal) => {
                let (gs, gd) = (d.group_of_vertex(src), d.group_of_vertex(dst));
                if gs == gd || d.groups < 3 {
                    return NO_DETOUR;
                }
                let mut via = draw(d.groups - 2);
                for skip in [gs.min(gd), gs.max(gd)] {
                    if via >= skip {
                        via += 1;
                    }
                }
                if self.routing == Routing::Ugal {
                    via | UNDECIDED
                } else {
                    via
                }
            }
            (Shape::HyperX(x), Routing::Valiant) => draw(x.routers() as u32),
            _ => NO_DETOUR,
        }
    }

    /// The next hop from `at` towards node `dst` under the routing, for a message whose detour
    /// ([`Topology::detour`]) is `detour`, updated as the route goes (cleared where the
    /// intermediate is reached, decided at a UGAL source router); `backlog(link)` is how much
    /// waits at a link, for the routings that read it. `None` at `dst`.
    pub fn next_routed(
        &self,
        at: u32,
        dst: u32,
        detour: &mut u32,
        backlog: impl Fn(u64) -> u64,
    ) -> Option<Hop> {
        if at == dst {
            return None;
        }
        Some(match &self.shape {
            Shape::Dragonfly(d) if *detour != NO_DETOUR && at >= self.nodes => {
                if *detour & UNDECIDED != 0 {
                    *detour = self.ugal_choice(d, at, dst, *detour & !UNDECIDED, &backlog);
                }
                if *detour != NO_DETOUR && d.router_in(at, *detour) {
                    *detour = NO_DETOUR;
                }
                if *detour == NO_DETOUR {
                    d.minimal(at, dst)
                } else {
                    d.toward_group(at - self.nodes, *detour)
                }
            }
            Shape::HyperX(x) if self.routing == Routing::Adaptive => {
                let target = x.router_of(dst);
                x.step(at, dst, target, |dims| {
                    let r = x.router(at).expect("a host's only hop is up");
                    let mut best = dims.next().expect("the routers differ");
                    let mut least = backlog(x.along(r, best, target).link);
                    for k in dims {
                        let b = backlog(x.along(r, k, target).link);
                        if b < least {
                            (best, least) = (k, b);
                        }
                    }
                    best
                })
            }
            Shape::HyperX(x) if *detour != NO_DETOUR && at >= self.nodes => {
                if x.router(at) == Some(*detour) {
                    *detour = NO_DETOUR;
                    x.minimal(at, dst)
                } else {
                    x.step(at, dst, *detour, |dims| {
                        dims.next().expect("the routers differ")
                    })
                }
            }
            _ => return self.next(at, dst),
        })
    }

    /// True when [`Topology::expected_crossings`] gives every link a message may cross (minimal
    /// and Valiant routes), false when it gives only the host links (UGAL and adaptive routes,
    /// chosen by the backlogs).
    pub fn crossings_known(&self) -> bool {
        matches!(self.routing, Routing::Minimal | Routing::Valiant)
    }

    /// The routes a message from node `src` to node `dst` may take, as (detour, chance): the
    /// minimal route ([`NO_DETOUR`]) for sure; under Valiant routing each intermediate, equally
    /// likely; `None` under UGAL and adaptive routing, whose routes between routers follow the
    /// links' backlogs.
    pub fn detours(&self, src: u32, dst: u32) -> Option<Vec<(u32, f64)>> {
        match (&self.shape, self.routing) {
            (Shape::Dragonfly(d), Routing::Valiant) => {
                let (gs, gd) = (d.group_of_vertex(src), d.group_of_vertex(dst));
                if gs == gd || d.groups < 3 {
                    return Some(vec![(NO_DETOUR, 1.0)]);
                }
                let weight = 1.0 / f64::from(d.groups - 2);
                Some(
                    (0..d.groups)
                        .filter(|&g| g != gs && g != gd)
                        .map(|g| (g, weight))
                        .collect(),
                )
            }
            (Shape::HyperX(x), Routing::Valiant) => {
                let routers = x.routers() as u32;
                let weight = 1.0 / f64::from(routers);
                Some((0..routers).map(|r| (r, weight)).collect())
            }
            (_, Routing::Ugal | Routing::Adaptive) => None,
            _ => Some(vec![(NO_DETOUR, 1.0)]),
        }
    }

    /// The links of the route from node `src` to node `dst` through `detour` (one of
    /// [`Topology::detours`]), in order, each given to `add`. Returns the hops.
    pub fn route_through(&self, src: u32, dst: u32, detour: u32, mut add: impl FnMut(u64)) -> u64 {
        if let Some(hop) = self.node_hop(src, dst) {
            add(hop.link);
            return 1;
        }
        let (mut at, mut detour, mut hops) = (src, detour, 0);
        while let Some(hop) = self.next_routed(at, dst, &mut detour, |_| 0) {
            add(hop.link);
            at = hop.to;
            hops += 1;
        }
        hops
    }

    /// The links a message from node `src` to node `dst` crosses, each given to `add` with the
    /// chance it crosses it under the routing: 1 on a minimal route; over a Valiant route, the
    /// share of the intermediates (each equally likely) whose route crosses it; under UGAL or
    /// adaptive routing, the host links only (the others depend on the backlogs: see
    /// [`Topology::crossings_known`]). Returns the hops walked.
    pub fn expected_crossings(&self, src: u32, dst: u32, mut add: impl FnMut(u64, f64)) -> u64 {
        if src == dst {
            return self.node_hop(src, dst).map_or(0, |hop| {
                add(hop.link, 1.0);
                1
            });
        }
        match self.detours(src, dst) {
            Some(routes) => routes
                .into_iter()
                .map(|(detour, weight)| self.route_through(src, dst, detour, |l| add(l, weight)))
                .sum(),
            None => {
                // a host's injection link is its number, its ejection link the hosts' count on
                add(u64::from(src), 1.0);
                add(u64::from(self.nodes) + u64::from(dst), 1.0);
                2
            }
        }
    }

    /// UGAL-L at router vertex `at`: the detour through group `via` ([`NO_DETOUR`] for the
    /// minimal route) whose first link's backlog times its route's router hops is smaller.
    fn ugal_choice(
        &self,
        d: &Dragonfly,
        at: u32,
        dst: u32,
        via: u32,
        backlog: &impl Fn(u64) -> u64,
    ) -> u32 {
        let minimal = d.minimal(at, dst);
        let valiant = d.toward_group(at - self.nodes, via);
        let minimal_hops = u128::from(d.router_hops(at, dst));
        // to the intermediate group (a local hop when the first is not global), then minimal
        let mut v = valiant.to;
        let mut valiant_hops = 1;
        if !d.router_in(v, via) {
            v = d.toward_group(v - self.nodes, via).to;
            valiant_hops += 1;
        }
        let valiant_hops = u128::from(valiant_hops + d.router_hops(v, dst));
        let min_cost = u128::from(backlog(minimal.link)) * minimal_hops;
        let val_cost = u128::from(backlog(valiant.link)) * valiant_hops;
        if min_cost <= val_cost { NO_DETOUR } else { via }
    }

    /// The shape.
    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// Compute nodes.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }

    /// How many links there are (ids below this), the nodes' own links included.
    pub fn link_count(&self) -> u64 {
        let own = if self.node_capacity.is_some() {
            u64::from(self.nodes)
        } else {
            0
        };
        self.shape_links() + own
    }

    /// How many links the shape has (the nodes' own links not counted).
    fn shape_links(&self) -> u64 {
        let n = u64::from(self.nodes);
        match &self.shape {
            Shape::Bus => 1,
            Shape::Full => n * n,
            Shape::Grid { dims, .. } => n * 2 * dims.len() as u64,
            Shape::Tree { .. } => 2 * self.level_starts[self.levels as usize],
            Shape::Dragonfly(d) => d.link_count(),
            Shape::HyperX(x) => x.link_count(),
        }
    }

    /// The next hop from `at` towards node `dst`, or `None` at `dst`. Inlined: it is the
    /// rank-program engine's per-hop routing, and a call returning the `Option<Hop>` through
    /// memory cost about a third of it.
    #[inline(always)]
    pub fn next(&self, at: u32, dst: u32) -> Option<Hop> {
        self.route_next::<false>(at, dst).map(|(hop, _)| hop)
    }

    /// [`Topology::next`], with the straight stretch that follows the hop: the hops after it
    /// that follow it without routing.
    #[inline(always)]
    pub fn next_straight(&self, at: u32, dst: u32) -> Option<(Hop, Straight)> {
        self.route_next::<true>(at, dst)
    }

    /// The next hop, with its straight stretch if `STRAIGHT` (else an empty one, not worked
    /// out: [`Topology::next`] costs no more than before the stretches).
    #[inline(always)]
    fn route_next<const STRAIGHT: bool>(&self, at: u32, dst: u32) -> Option<(Hop, Straight)> {
        if at == dst {
            return None;
        }
        Some(match &self.shape {
            Shape::Bus => (Hop { link: 0, to: dst }, Straight::default()),
            Shape::Full => (
                Hop {
                    link: u64::from(at) * u64::from(self.nodes) + u64::from(dst),
                    to: dst,
                },
                Straight::default(),
            ),
            Shape::Grid { dims, wrap } => self.grid_next::<STRAIGHT>(dims, *wrap, at, dst),
            Shape::Tree { .. } => (self.tree_next(at, dst), Straight::default()),
            Shape::Dragonfly(d) => (d.minimal(at, dst), Straight::default()),
            Shape::HyperX(x) => (x.minimal(at, dst), Straight::default()),
        })
    }

    /// Where `link`'s state goes in an array of per-link states, a numbering of the links in
    /// which the links of a straight stretch ([`Straight`]) are `step` apart: on a grid by
    /// direction first (`port * nodes + node`), so that the links the messages of neighbouring
    /// nodes enter in one direction are neighbours too; elsewhere the link's id.
    pub fn place(&self, link: u64) -> u64 {
        match self.shape {
            Shape::Grid { .. } if link < self.shape_links() => {
                link % self.ports * u64::from(self.nodes) + link / self.ports
            }
            _ => link,
        }
    }

    /// The link whose state is at `place` ([`Topology::place`]'s inverse).
    pub fn link_at(&self, place: u64) -> u64 {
        let n = u64::from(self.nodes);
        match self.shape {
            Shape::Grid { .. } if place < self.shape_links() => place % n * self.ports + place / n,
            _ => place,
        }
    }

    /// The whole route from node `src` to node `dst` (inside a node, its own link if it has
    /// one).
    pub fn route(&self, src: u32, dst: u32) -> Vec<Hop> {
        if let Some(hop) = self.node_hop(src, dst) {
            return vec![hop];
        }
        let mut hops = Vec::new();
        let mut at = src;
        while let Some(h) = self.next(at, dst) {
            hops.push(h);
            at = h.to;
        }
        hops
    }

    /// The number of links between two nodes (`l` in the message-cost formulas).
    pub fn distance(&self, src: u32, dst: u32) -> u32 {
        self.route(src, dst).len() as u32
    }

    /// The bandwidth multiplier of a link (1 except the upper links of a fat tree, a
    /// dragonfly's global links and the nodes' own links).
    pub fn capacity(&self, link: u64) -> f64 {
        if let Some(c) = self.node_capacity
            && link >= self.shape_links()
        {
            return c;
        }
        match &self.shape {
            Shape::Tree { fat: true, .. } => {
                self.arity_powers[self.level_of(link / 2) as usize] as f64
            }
            Shape::Dragonfly(d) if d.is_global(link) => self.global_capacity,
            _ => 1.0,
        }
    }

    /// A readable name for a link, usable in metric names (no `.`, `,` or spaces): `bus`;
    /// `3-9` (full, from node 3 to 9); `1_2+x` (grid, from the node at x=1, y=2 in the +x
    /// direction); `L1_2up` (tree, the up link of switch 2 of level 1); `node3` (node 3's own
    /// link).
    pub fn link_name(&self, link: u64) -> String {
        let n = u64::from(self.nodes);
        if self.is_node_link(link) {
            return format!("node{}", link - self.shape_links());
        }
        match &self.shape {
            Shape::Bus => "bus".to_owned(),
            Shape::Full => format!("{}-{}", link / n, link % n),
            Shape::Grid { dims, .. } => {
                let node = (link / (2 * dims.len() as u64)) as u32;
                let k = (link % (2 * dims.len() as u64)) as usize;
                let coords: Vec<String> = coords(dims, node).iter().map(u32::to_string).collect();
                format!(
                    "{}{}{}",
                    coords.join("_"),
                    if k.is_multiple_of(2) { '+' } else { '-' },
                    ['x', 'y', 'z'][k / 2]
                )
            }
            Shape::Tree { .. } => {
                let vertex = link / 2;
                let level = self.level_of(vertex);
                let index = vertex - self.level_starts[level as usize];
                let dir = if link.is_multiple_of(2) { "up" } else { "down" };
                format!("L{level}_{index}{dir}")
            }
            Shape::Dragonfly(d) => d.link_name(link),
            Shape::HyperX(x) => x.link_name(link),
        }
    }

    /// Tree: the level of vertex `vertex` (0 = the nodes `0..nodes`).
    #[inline(always)]
    fn level_of(&self, vertex: u64) -> u32 {
        // the levels are few (a 1,048,576-node tree of arity 2 has 21)
        let above = self.level_starts[1..=self.levels as usize]
            .iter()
            .take_while(|&&start| start <= vertex)
            .count();
        above as u32
    }

    /// Tree routing: vertex ids are levels stacked (nodes first); the link from vertex `v` to
    /// its parent is `2v` (up), from the parent to `v` is `2v + 1` (down).
    #[inline(never)]
    fn tree_next(&self, at: u32, dst: u32) -> Hop {
        let (at, dst) = (u64::from(at), u64::from(dst));
        let level = self.level_of(at) as usize;
        let index = at - self.level_starts[level];
        // the ancestor of `dst` at `level`: is `at` above `dst`?
        if level > 0 && dst / self.arity_powers[level] == index {
            // go down towards dst: the child of `at` on dst's path
            let v = self.level_starts[level - 1] + dst / self.arity_powers[level - 1];
            Hop {
                link: 2 * v + 1,
                to: v as u32,
            }
        } else {
            let a = self.arity_powers[1];
            let parent = self.level_starts[level + 1] + index / a;
            Hop {
                link: 2 * at,
                to: parent as u32,
            }
        }
    }
}

/// A node's coordinates in a grid (x fastest).
fn coords(dims: &[u32], node: u32) -> Vec<u32> {
    let mut rest = node;
    dims.iter()
        .map(|&d| {
            let c = rest % d;
            rest /= d;
            c
        })
        .collect()
}

impl Topology {
    /// Dimension-order routing on a mesh or torus: fix x, then y, then z. The straight stretch
    /// after the hop: the hops left in its dimension up to the first that wraps round (none
    /// if this one does).
    #[inline(always)]
    fn grid_next<const STRAIGHT: bool>(
        &self,
        dims: &[u32],
        wrap: bool,
        at: u32,
        dst: u32,
    ) -> (Hop, Straight) {
        let (mut rest_a, mut rest_b) = (at, dst);
        let mut stride = 1;
        for (k, (&d, &divider)) in dims.iter().zip(&self.dividers).enumerate() {
            let (above_a, a) = StrengthReducedU32::div_rem(rest_a, divider);
            let (above_b, b) = StrengthReducedU32::div_rem(rest_b, divider);
            (rest_a, rest_b) = (above_a, above_b);
            if a != b {
                let forward = if wrap {
                    // the shorter way; on a tie, the positive direction
                    let ahead = if b > a { b - a } else { b + d - a };
                    ahead <= d - ahead
                } else {
                    b > a
                };
                let to = if forward {
                    if a + 1 == d {
                        at - a * stride
                    } else {
                        at + stride
                    }
                } else if a == 0 {
                    at + (d - 1) * stride
                } else {
                    at - stride
                };
                let dir = u64::from(!forward);
                let hop = Hop {
                    link: u64::from(at) * 2 * dims.len() as u64 + 2 * k as u64 + dir,
                    to,
                };
                // the coordinate after this hop, the hops left in this dimension after it,
                // and those of them that do not wrap round (each from a coordinate short of
                // the edge it would wrap at)
                if !STRAIGHT {
                    return (hop, Straight::default());
                }
                let straight = match i32::try_from(stride) {
                    Ok(step) if forward && a + 1 < d => Straight {
                        hops: (if b > a { b - a } else { b + d - a } - 1).min(d - 2 - a),
                        step,
                    },
                    Ok(step) if !forward && a > 0 => Straight {
                        hops: (if a > b { a - b } else { a + d - b } - 1).min(a - 1),
                        step: -step,
                    },
                    _ => Straight::default(),
                };
                return (hop, straight);
            }
            stride *= d;
        }
        unreachable!("at != dst, so some coordinate differs")
    }

    /// True when every link has the same capacity (all but fat trees, and dragonflies whose
    /// global links differ).
    pub fn uniform(&self) -> bool {
        !matches!(self.shape, Shape::Tree { fat: true, .. })
            && self.global_capacity == 1.0
            && self.node_capacity.is_none_or(|c| c == 1.0)
    }
}

impl Shape {
    /// The kind of `[topology]` that gives this shape.
    pub fn kind(&self) -> TopologyKind {
        match self {
            Shape::Bus => TopologyKind::Bus,
            Shape::Full => TopologyKind::Full,
            Shape::Grid { wrap: true, dims } if dims.len() == 1 => TopologyKind::Ring,
            Shape::Grid { wrap: true, .. } => TopologyKind::Torus,
            Shape::Grid { wrap: false, .. } => TopologyKind::Mesh,
            Shape::Tree { fat: false, .. } => TopologyKind::Tree,
            Shape::Tree { fat: true, .. } => TopologyKind::FatTree,
            Shape::Dragonfly(_) => TopologyKind::Dragonfly,
            Shape::HyperX(_) => TopologyKind::Hyperx,
        }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Bus => f.write_str("bus"),
            Shape::Full => f.write_str("full"),
            Shape::Grid { dims, wrap } => {
                let d: Vec<String> = dims.iter().map(u32::to_string).collect();
                let kind = match (wrap, dims.len()) {
                    (true, 1) => "ring",
                    (true, _) => "torus",
                    (false, _) => "mesh",
                };
                write!(f, "{kind} {}", d.join("x"))
            }
            Shape::Tree { arity, fat } => {
                write!(f, "{}tree of arity {arity}", if *fat { "fat " } else { "" })
            }
            Shape::Dragonfly(d) => write!(
                f,
                "dragonfly of {} groups x {} routers x {} hosts, {} global links per router",
                d.groups, d.routers_per_group, d.hosts_per_router, d.global_links_per_router
            ),
            Shape::HyperX(x) => {
                let d: Vec<String> = x.dims.iter().map(u32::to_string).collect();
                write!(f, "hyperx {} x {} hosts", d.join("x"), x.hosts_per_router)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grid(dims: &[u32], wrap: bool) -> Topology {
        let n = dims.iter().product();
        Topology::new(
            Shape::Grid {
                dims: dims.to_vec(),
                wrap,
            },
            n,
        )
        .unwrap()
    }

    #[test]
    fn mesh_routes_in_dimension_order_with_manhattan_length() {
        let t = grid(&[4, 4], false);
        // (0,0) -> (3,2): 3 hops in x then 2 in y
        let r = t.route(0, 3 + 2 * 4);
        let path: Vec<u32> = r.iter().map(|h| h.to).collect();
        assert_eq!(path, [1, 2, 3, 7, 11]);
        for src in 0..16 {
            for dst in 0..16 {
                let (sx, sy, dx, dy) = (src % 4, src / 4, dst % 4, dst / 4);
                assert_eq!(t.distance(src, dst), sx.abs_diff(dx) + sy.abs_diff(dy));
            }
        }
    }

    /// Walking a route with the straight stretches (routing only where one ends) gives the
    /// route hop by hop, on every pair of nodes of meshes and tori of odd, even, one-wide and
    /// two-wide dimensions; and the stretches cover most hops on a large torus.
    #[test]
    fn straight_stretches_give_the_route_hop_by_hop() {
        for (dims, wrap) in [
            (vec![7], true),
            (vec![8], true),
            (vec![2, 5], true),
            (vec![6, 1, 4], true),
            (vec![5, 4, 3], false),
            (vec![9, 8], true),
            (vec![3, 3, 3], true),
        ] {
            let t = grid(&dims, wrap);
            for src in 0..t.nodes() {
                for dst in 0..t.nodes() {
                    let mut walked = Vec::new();
                    let mut at = src;
                    while let Some((mut hop, straight)) = t.next_straight(at, dst) {
                        walked.push(hop);
                        for _ in 0..straight.hops {
                            let place = t.place(hop.link).wrapping_add_signed(straight.step.into());
                            hop = Hop {
                                link: t.link_at(place),
                                to: hop.to.wrapping_add_signed(straight.step),
                            };
                            walked.push(hop);
                        }
                        at = hop.to;
                    }
                    assert_eq!(walked, t.route(src, dst), "{dims:?} {wrap} {src} -> {dst}");
                }
            }
        }
        let t = grid(&[64, 64], true);
        let (mut hops, mut routed) = (0, 0);
        for dst in 0..t.nodes() {
            let mut at = 0;
            while let Some((hop, straight)) = t.next_straight(at, dst) {
                routed += 1;
                hops += 1 + straight.hops;
                at = hop
                    .to
                    .wrapping_add_signed(straight.step * straight.hops as i32);
            }
        }
        assert!(routed * 8 < hops, "{routed} of {hops} hops routed");
    }

    #[test]
    fn torus_takes_the_shorter_way_round() {
        let t = grid(&[8, 8], true);
        assert_eq!(t.distance(0, 7), 1, "wrap-around");
        assert_eq!(t.distance(0, 4), 4, "tie");
        assert_eq!(t.route(0, 4)[0].to, 1, "ties go the positive way");
        assert_eq!(t.distance(0, 7 + 7 * 8), 2);
        let ring = grid(&[5], true);
        assert_eq!(ring.distance(0, 3), 2);
        assert_eq!(ring.route(0, 3)[0].to, 4);
        let t3 = grid(&[2, 3, 4], true);
        for src in 0..24 {
            for dst in 0..24 {
                assert!(t3.distance(src, dst) <= 1 + 1 + 2);
                let links: std::collections::HashSet<u64> =
                    t3.route(src, dst).iter().map(|h| h.link).collect();
                assert!(links.iter().all(|&l| l < t3.link_count()));
            }
        }
    }

    #[test]
    fn grid_routes_fix_each_coordinate_in_turn_on_sizes_of_every_kind() {
        // coordinates by division (`coords`) against the routing's divisor by multiplication,
        // on sizes that are odd, prime, powers of two and one
        for (dims, wrap) in [
            (vec![3, 5, 7], true),
            (vec![3, 5, 7], false),
            (vec![16, 1, 9], true),
            (vec![2, 13], true),
            (vec![64], false),
        ] {
            let t = grid(&dims, wrap);
            let n: u32 = dims.iter().product();
            for src in 0..n {
                for dst in 0..n {
                    let (a, b) = (coords(&dims, src), coords(&dims, dst));
                    let expected: u32 = (0..dims.len())
                        .map(|k| {
                            let d = a[k].abs_diff(b[k]);
                            if wrap { d.min(dims[k] - d) } else { d }
                        })
                        .sum();
                    let route = t.route(src, dst);
                    assert_eq!(route.len() as u32, expected, "{dims:?} {src} -> {dst}");
                    let mut at = src;
                    for hop in &route {
                        // each hop changes one coordinate, the lowest dimension still differing
                        let (c, next) = (coords(&dims, at), coords(&dims, hop.to));
                        let k = (0..dims.len()).find(|&k| c[k] != b[k]).unwrap();
                        assert!((0..dims.len()).all(|j| (j == k) == (c[j] != next[j])));
                        at = hop.to;
                    }
                    assert_eq!(at, dst);
                }
            }
        }
    }

    #[test]
    fn tree_goes_up_to_the_common_ancestor_and_down() {
        let t = Topology::new(
            Shape::Tree {
                arity: 2,
                fat: false,
            },
            8,
        )
        .unwrap();
        assert_eq!(t.distance(0, 1), 2);
        assert_eq!(t.distance(0, 2), 4);
        assert_eq!(t.distance(0, 7), 6);
        assert_eq!(t.distance(5, 4), 2);
        // the links of a route are distinct and in range
        for src in 0..8 {
            for dst in 0..8 {
                let r = t.route(src, dst);
                assert_eq!(r.last().map_or(src, |h| h.to), dst);
                assert!(r.iter().all(|h| h.link < t.link_count()));
            }
        }
        let odd = Topology::new(
            Shape::Tree {
                arity: 3,
                fat: true,
            },
            10,
        )
        .unwrap();
        for src in 0..10 {
            for dst in 0..10 {
                assert_eq!(odd.route(src, dst).last().map_or(src, |h| h.to), dst);
            }
        }
        // a fat tree's root links carry arity^levels-1 times the base capacity
        let fat = Topology::new(
            Shape::Tree {
                arity: 2,
                fat: true,
            },
            8,
        )
        .unwrap();
        let up = fat.route(0, 7);
        let caps: Vec<f64> = up.iter().map(|h| fat.capacity(h.link)).collect();
        assert_eq!(caps, [1.0, 2.0, 4.0, 4.0, 2.0, 1.0]);
    }

    /// Places number the links once each, `link_at` gives the link back, and on a grid the
    /// links out of neighbouring nodes in one direction have neighbouring places.
    #[test]
    fn places_number_every_link_once() {
        let tree = Topology::new(
            Shape::Tree {
                arity: 3,
                fat: true,
            },
            10,
        )
        .unwrap();
        for t in [
            grid(&[5, 4, 3], false),
            grid(&[9, 8], true),
            grid(&[7], true),
            tree,
            Topology::new(Shape::Full, 6).unwrap(),
        ] {
            let count = t.link_count();
            let mut seen = vec![false; count as usize];
            for link in 0..count {
                let place = t.place(link);
                assert!(place < count && !seen[place as usize], "{link} at {place}");
                seen[place as usize] = true;
                assert_eq!(t.link_at(place), link);
            }
        }
        let t = grid(&[9, 8], true);
        let (a, b) = (t.route(10, 14)[0].link, t.route(11, 15)[0].link);
        assert_eq!(t.place(b), t.place(a) + 1);
    }

    #[test]
    fn bus_and_full_are_one_hop() {
        let bus = Topology::new(Shape::Bus, 16).unwrap();
        assert_eq!(bus.route(3, 9), [Hop { link: 0, to: 9 }]);
        let full = Topology::new(Shape::Full, 16).unwrap();
        assert_eq!(full.route(3, 9)[0].link, 3 * 16 + 9);
        assert!(full.route(4, 4).is_empty());
        assert_eq!(full.link_name(3 * 16 + 9), "3-9");
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(
            Topology::new(
                Shape::Grid {
                    dims: vec![4, 4],
                    wrap: false
                },
                15
            )
            .is_err()
        );
        assert!(
            Topology::new(
                Shape::Grid {
                    dims: vec![2, 2, 2, 2],
                    wrap: true
                },
                16
            )
            .is_err()
        );
        assert!(
            Topology::new(
                Shape::Tree {
                    arity: 1,
                    fat: false
                },
                4
            )
            .is_err()
        );
    }

    fn routed(shape: Shape, routing: Routing) -> Topology {
        let nodes = match &shape {
            Shape::Dragonfly(d) => d.hosts() as u32,
            Shape::HyperX(x) => x.hosts() as u32,
            _ => unreachable!(),
        };
        Topology::new(shape, nodes)
            .unwrap()
            .with_routing(routing)
            .unwrap()
    }

    fn dragonfly(p: u32, a: u32, h: u32, g: u32) -> Shape {
        Shape::Dragonfly(Dragonfly {
            hosts_per_router: p,
            routers_per_group: a,
            global_links_per_router: h,
            groups: g,
        })
    }

    /// Walks a routed message from `src` to `dst`, `backlog` read at each hop.
    fn walk(
        t: &Topology,
        src: u32,
        dst: u32,
        mut detour: u32,
        backlog: impl Fn(u64) -> u64,
    ) -> Vec<Hop> {
        let mut hops = Vec::new();
        let mut at = src;
        while let Some(hop) = t.next_routed(at, dst, &mut detour, &backlog) {
            hops.push(hop);
            at = hop.to;
            assert!(hops.len() <= 12, "{src} -> {dst}: {hops:?}");
        }
        assert_eq!(detour, NO_DETOUR, "the detour is spent on arrival");
        hops
    }

    /// Valiant on a dragonfly: every message between groups passes through its intermediate
    /// group, crossing two global links, and the intermediates are drawn uniformly among the
    /// other groups.
    #[test]
    fn valiant_dragonfly_routes_pass_through_the_drawn_group() {
        let t = routed(dragonfly(2, 4, 2, 9), Routing::Valiant);
        let Shape::Dragonfly(d) = t.shape().clone() else {
            unreachable!()
        };
        let mut counts = [0_u32; 9];
        let mut next = crate::rng::lcg_below(5);
        for src in 0..72 {
            for dst in 0..72 {
                let detour = t.detour(src, dst, |n| next(u64::from(n)) as u32);
                let (gs, gd) = (d.group_of_vertex(src), d.group_of_vertex(dst));
                if gs == gd {
                    assert_eq!(detour, NO_DETOUR);
                    continue;
                }
                assert!(detour != gs && detour != gd && detour < 9);
                counts[detour as usize] += 1;
                let hops = walk(&t, src, dst, detour, |_| 0);
                assert_eq!(hops.last().unwrap().to, dst);
                assert_eq!(hops.iter().filter(|h| t.is_global(h.link)).count(), 2);
                assert!(hops.iter().any(|h| d.router_in(h.to, detour)));
            }
        }
        // 72 x 64 messages between groups, 4608 detours over 9 groups: 512 each on average
        // (binomial, standard deviation about 21)
        for c in counts {
            assert!((420..=610).contains(&c), "{counts:?}");
        }
    }

    /// UGAL: with no backlog anywhere the minimal route; with the minimal first link backlogged
    /// (more than the Valiant route's extra hops make up for) the detour.
    #[test]
    fn ugal_takes_the_detour_only_when_the_minimal_link_is_backlogged() {
        let t = routed(dragonfly(1, 4, 2, 9), Routing::Ugal);
        let Shape::Dragonfly(d) = t.shape().clone() else {
            unreachable!()
        };
        let (src, dst) = (0, 8); // group 0's router 0 to group 2's router 0
        let detour = t.detour(src, dst, |_| 4);
        let minimal = t.route(src, dst);
        assert_eq!(walk(&t, src, dst, detour, |_| 0), minimal);
        let first = minimal[1].link;
        let heavy = walk(&t, src, dst, detour, |l| if l == first { 1000 } else { 1 });
        assert_ne!(heavy, minimal);
        assert_eq!(heavy.iter().filter(|h| t.is_global(h.link)).count(), 2);
        // the fifth of the groups other than 0 and 2: [1, 3, 4, 5, 6, 7, 8][4]
        assert!(heavy.iter().any(|h| d.router_in(h.to, 6)));
        // a light backlog does not outweigh the detour's hops
        let light = walk(&t, src, dst, detour, |l| if l == first { 2 } else { 1 });
        assert_eq!(light, minimal);
    }

    /// HyperX: Valiant passes through its router; adaptive corrects the least backlogged
    /// dimension first, and both take minimal-length legs.
    #[test]
    fn hyperx_valiant_and_adaptive_routes() {
        let shape = Shape::HyperX(HyperX {
            dims: vec![4, 4],
            hosts_per_router: 1,
        });
        let t = routed(shape.clone(), Routing::Valiant);
        // host 0 (router (0,0)) to host 15 (router (3,3)) through router 6 = (2,1)
        let hops = walk(&t, 0, 15, 6, |_| 0);
        let routers: Vec<u32> = hops.iter().map(|h| h.to).collect();
        assert_eq!(routers, [16, 16 + 2, 16 + 6, 16 + 7, 16 + 15, 15]);
        let a = routed(shape, Routing::Adaptive);
        let minimal = a.route(0, 15);
        assert_eq!(
            walk(&a, 0, 15, NO_DETOUR, |_| 0),
            minimal,
            "ties in dimension order"
        );
        let x_link = minimal[1].link;
        let adaptive = walk(&a, 0, 15, NO_DETOUR, |l| u64::from(l == x_link));
        let routers: Vec<u32> = adaptive.iter().map(|h| h.to).collect();
        assert_eq!(
            routers,
            [16, 16 + 12, 16 + 15, 15],
            "y first when x is busy"
        );
    }

    #[test]
    fn routings_a_kind_does_not_have_are_refused() {
        let torus = grid(&[4, 4], true);
        let e = torus.with_routing(Routing::Valiant).unwrap_err();
        assert!(
            e.contains("torus has no \"valiant\" routing: it routes minimal"),
            "{e}"
        );
        let d = Topology::new(dragonfly(1, 2, 1, 3), 6).unwrap();
        let e = d.with_routing(Routing::Adaptive).unwrap_err();
        assert!(e.contains("minimal, valiant, ugal"), "{e}");
    }

    /// Expected crossings: a Valiant message between groups crosses two global links and its
    /// host links for certain, its shares over the intermediates summing to its mean hops; under
    /// UGAL only its host links are given.
    #[test]
    fn expected_crossings_spread_a_message_over_its_intermediates() {
        let t = routed(dragonfly(1, 4, 2, 9), Routing::Valiant);
        let mut shares: std::collections::HashMap<u64, f64> = Default::default();
        let hops = t.expected_crossings(0, 8, |l, s| *shares.entry(l).or_default() += s);
        let global: f64 = shares
            .iter()
            .filter(|(l, _)| t.is_global(**l))
            .map(|(_, s)| s)
            .sum();
        assert!((global - 2.0).abs() < 1e-12, "{global}");
        assert!((shares[&0] - 1.0).abs() < 1e-12, "the injection link");
        assert!((shares[&(36 + 8)] - 1.0).abs() < 1e-12, "the ejection link");
        let total: f64 = shares.values().sum();
        assert!(
            (total - hops as f64 / 7.0).abs() < 1e-12,
            "7 intermediates walked"
        );
        let inside = t.expected_crossings(0, 1, |_, s| assert_eq!(s, 1.0));
        assert_eq!(inside, 3, "inside a group: the minimal route");
        let u = routed(dragonfly(1, 4, 2, 9), Routing::Ugal);
        let mut links = Vec::new();
        assert_eq!(u.expected_crossings(0, 8, |l, s| links.push((l, s))), 2);
        assert_eq!(links, [(0, 1.0), (36 + 8, 1.0)]);
        let x = routed(
            Shape::HyperX(HyperX {
                dims: vec![3, 3],
                hosts_per_router: 1,
            }),
            Routing::Valiant,
        );
        let mut total = 0.0;
        let hops = x.expected_crossings(0, 8, |_, s| total += s);
        assert!((total - hops as f64 / 9.0).abs() < 1e-12);
    }
}
