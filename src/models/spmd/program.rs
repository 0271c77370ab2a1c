//! The program forms of `[spmd]`: the network form (`network = "<topology>"`), the SPMD program
//! written as a rank program ([`crate::program`]) on an explicit interconnect in place of the
//! paper's `w` submodel; and multi-phase programs (`[[spmd.phase]]`, [`super::phase`]), each
//! phase a named `phase` of its cycles followed by an ideal barrier of all ranks, with either
//! communication burst. Like [`super::build`], the builder writes scenario tables (`[program]`,
//! `[topology]`, `[[disk]]`, as [`ProgramTables`]) that the input layer checks as if they had
//! been written by hand, so the program gets every check of the program compiler and
//! `parsim run --show-network` prints exactly what runs.
//!
//! **The program.** `p` ranks, one per node, laid on the process grid of an `r`-dimensional
//! block decomposition ([`grid`]: `p` split into `r` factors as evenly as its prime factors
//! allow, largest first, x fastest; the same grid is the `dims` of a mesh or torus, so grid
//! neighbours are one link apart). Each of `cycles` cycles runs `n_io` computation bursts and
//! one I/O burst:
//!
//! - the CPU burst: a `compute` of mean `S_par/p + S_ser` (the `cpu` family);
//! - with `c > 1`, an ideal (zero-cost) barrier of the rank's group `rank / c`, the paper's
//!   fork-join of `c` processors;
//! - the communication burst: a nearest-neighbour exchange, for each grid dimension of more
//!   than one rank a shift up (send to the `+1` neighbour, receive from the `-1`) then a shift
//!   down; periodic (every rank exchanges both faces) on a `torus` or `ring`, open on every
//!   other kind (the ranks at a grid edge send or receive only);
//! - the I/O burst, per organisation: SIO, an ideal barrier of all ranks, rank 0 at the disk,
//!   a barrier again; BUS-AIO, each group's first rank at the one disk (between barriers of its
//!   group when `c > 1`); CLU-AIO likewise with `d` disk units, each serving `p/(c d)`
//!   consecutive groups. The disk time has mean `T_io` of eq. 14 (the `io_dist` family).
//!
//! **The `w` submodel as operations** (phases without `network = ...`): after the CPU burst
//! (and the group's barrier), the group's first rank holds a `compute` of the delay
//! `S0_com + (1-w) g(p) SR_com` on its own processor (a pure delay) and then the one unit of
//! the `bus` disk, FCFS, for `w g(p) SR_com` (both of the `com` family), while the rest of its
//! group waits at an ideal barrier: the paper's group passing through eqs. 9-10 as one job.
//! Disk bandwidths are fixed by the section's (and the largest phase's) times, and each burst's
//! bytes scale its time, so one table of disks serves every phase.
//!
//! **Costs from the paper's parameters.** `g(p)` is the volume, in MB (2^20 bytes), that an
//! interior rank exchanges per communication burst, as the BTIO scenarios read it: each of its
//! `2r` face messages carries `g(p) 2^20 / (2r)` bytes (the `com` family draws each size with
//! that mean), a link moves `2^20 / SR_com` bytes per time unit, and each message pays the
//! startup `S0_com / (2r)` (cut-through switching, FCFS links, `latency` per hop, default 0).
//! On an idle network an interior rank's burst then costs `S0_com + g(p) SR_com` plus the hops'
//! latency: the paper's communication time at `w = 0`. Contention, and the waiting for
//! neighbours that the paper's independent groups never do, come from the simulation. The
//! number of computation bursts per I/O burst is exactly `n_io` (a whole number), where the
//! paper's network draws it geometrically.

use super::formulas::{com_delay, com_queue, cpu_mean, t_io};
use super::{Io, NetworkForm, Spmd};
use crate::models::tables::{DiskTable, OpTable, ProgramTables, TopologyTable};
use crate::topology::TopologyKind;

/// Bytes in one unit of `g(p)` (a MB).
pub const MB: f64 = 1_048_576.0;

/// The disk's bytes per I/O burst: the disk's bandwidth is set so that they take `T_io`.
const IO_BYTES: f64 = 16_777_216.0;

/// The process grid of `p` ranks in `r` dimensions: the prime factors of `p`, largest first,
/// each given to the dimension with the smallest product so far; sorted largest first.
pub fn grid(p: u32, r: u32) -> Vec<u32> {
    let mut dims = vec![1u32; r.max(1) as usize];
    let mut factors = Vec::new();
    let mut n = p;
    let mut f = 2;
    while f * f <= n {
        while n.is_multiple_of(f) {
            factors.push(f);
            n /= f;
        }
        f += 1;
    }
    if n > 1 {
        factors.push(n);
    }
    for f in factors.into_iter().rev() {
        let smallest = (0..dims.len()).min_by_key(|&i| dims[i]).unwrap_or(0);
        dims[smallest] *= f;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

/// Whether the decomposition wraps around (every rank has both neighbours in each dimension).
fn periodic(kind: TopologyKind) -> bool {
    matches!(kind, TopologyKind::Torus | TopologyKind::Ring)
}

/// The rank's neighbour one step along dimension `k` (stride `stride`, size `n`) in direction
/// `up` (true: `+1`), as a program expression; on an open grid it exists only where
/// [`edge`] is false.
pub fn neighbour(stride: u32, n: u32, up: bool, wrap: bool) -> String {
    let c = format!("rank / {stride} % {n}");
    match (up, wrap) {
        (true, true) => format!("rank + (({c} + 1) % {n} - {c}) * {stride}"),
        (false, true) => format!("rank + (({c} + {} - 1) % {n} - {c}) * {stride}", n),
        (true, false) => format!("rank + {stride}"),
        (false, false) => format!("rank - {stride}"),
    }
}

/// The condition (a program expression) that the rank has no neighbour in direction `up` of
/// dimension `k` on an open grid.
pub fn edge(stride: u32, n: u32, up: bool) -> String {
    if up {
        format!("rank / {stride} % {n} == {}", n - 1)
    } else {
        format!("rank / {stride} % {n} == 0")
    }
}

/// The bytes of one face message: `g(p) 2^20 / (2r)`.
pub fn face_bytes(m: &Spmd, net: &NetworkForm) -> f64 {
    m.g * MB / (2.0 * net.dims.len() as f64)
}

/// The program, topology and disk tables of `m`: the network form of one phase (`cycles`
/// cycles), or the phases of a multi-phase program ([`super::phase`]), each a named `phase` of
/// its cycles followed by an ideal barrier of all ranks.
pub fn program_tables(m: &Spmd) -> ProgramTables {
    let scale = Scale::of(m);
    let mut ops = Vec::new();
    if m.phases.is_empty() {
        let cycles = m.network.as_ref().map_or(1, |net| net.cycles);
        ops.push(OpTable::Repeat {
            when: None,
            times: cycles.to_string(),
            body: cycle(m, &scale),
        });
    }
    for phase in &m.phases {
        ops.push(OpTable::Phase {
            name: phase.name.clone(),
            body: vec![OpTable::Repeat {
                when: None,
                times: phase.cycles.to_string(),
                body: cycle(&phase.model, &scale),
            }],
        });
        ops.push(OpTable::Barrier { group: None });
    }
    let topology = match &m.network {
        Some(net) => TopologyTable {
            kind: net.kind,
            dims: matches!(net.kind, TopologyKind::Mesh | TopologyKind::Torus)
                .then(|| net.dims.clone()),
            bandwidth: MB / m.sr_com,
            latency: Some(net.latency),
            startup: Some(m.s0_com / (2.0 * net.dims.len() as f64)),
        },
        // the w submodel sends no message: the topology is only there to be a program's
        None => TopologyTable {
            kind: TopologyKind::Full,
            dims: None,
            bandwidth: 1.0,
            latency: None,
            startup: None,
        },
    };
    let mut disks = vec![DiskTable {
        name: "io".into(),
        count: if m.io == Io::CluAio { m.d } else { 1 },
        bandwidth: IO_BYTES / scale.io,
    }];
    if let Some(bus) = scale.bus {
        disks.push(DiskTable {
            name: "bus".into(),
            count: 1,
            bandwidth: IO_BYTES / bus,
        });
    }
    ProgramTables {
        ranks: m.p,
        report_each: false,
        ops,
        topology,
        disks,
    }
}

/// The reference times that set the disks' bandwidths: the section's `T_io` for the `io`
/// disk, and the largest bus service `w g(p) SR_com` of the phases for the `bus` of the `w`
/// submodel (`None` without one). A burst of time `x` moves `IO_BYTES x / reference` bytes,
/// so the section's own burst moves exactly `IO_BYTES`.
struct Scale {
    io: f64,
    bus: Option<f64>,
}

impl Scale {
    fn of(m: &Spmd) -> Scale {
        let bus = if m.network.is_some() {
            None
        } else {
            let models = std::iter::once(m).chain(m.phases.iter().map(|ph| &ph.model));
            Some(models.map(com_queue).fold(0.0, f64::max)).filter(|&x| x > 0.0)
        };
        Scale { io: t_io(m), bus }
    }
}

/// The operations of one cycle of `m`: `n_io` computation bursts in a `repeat`, then the I/O
/// burst.
fn cycle(m: &Spmd, scale: &Scale) -> Vec<OpTable> {
    let group = format!("rank / {}", m.c);
    let group_barrier = OpTable::Barrier {
        group: Some(group.clone()),
    };
    let mut burst = vec![OpTable::Compute {
        when: None,
        time: m.cpu.spec(cpu_mean(m)),
    }];
    if m.c > 1 {
        burst.push(group_barrier.clone());
    }
    match &m.network {
        Some(net) => burst.extend(exchange(m, net)),
        None => burst.extend(w_submodel(m, scale, &group_barrier)),
    }
    let io_bytes = m.io_dist.spec(IO_BYTES * t_io(m) / scale.io);
    let mut cycle = vec![OpTable::Repeat {
        when: None,
        times: m.n_io.to_string(),
        body: burst,
    }];
    let io = |when: &str, unit: &str| OpTable::Io {
        disk: "io".into(),
        when: Some(when.to_owned()),
        unit: unit.to_owned(),
        bytes: io_bytes.clone(),
    };
    match m.io {
        Io::Sio => {
            let all = OpTable::Barrier { group: None };
            cycle.extend([all.clone(), io("rank == 0", "0"), all]);
        }
        Io::BusAio | Io::CluAio => {
            let unit = if m.io == Io::BusAio {
                "0".to_owned()
            } else {
                format!("{group} / {}", m.groups() / m.d)
            };
            if m.c > 1 {
                cycle.push(group_barrier.clone());
            }
            cycle.push(io(&format!("rank % {} == 0", m.c), &unit));
            if m.c > 1 {
                cycle.push(group_barrier);
            }
        }
    }
    cycle
}

/// The communication burst on an explicit interconnect: the nearest-neighbour exchange.
fn exchange(m: &Spmd, net: &NetworkForm) -> Vec<OpTable> {
    let bytes = m.com.spec(face_bytes(m, net));
    let wrap = periodic(net.kind);
    let mut exchange = Vec::new();
    let mut stride = 1;
    for (k, &n) in net.dims.iter().enumerate() {
        if n > 1 {
            for (j, up) in [true, false].into_iter().enumerate() {
                let tag = (2 * k + j) as u32;
                let to = neighbour(stride, n, up, wrap);
                let from = neighbour(stride, n, !up, wrap);
                if wrap {
                    exchange.push(OpTable::SendRecv {
                        when: None,
                        to,
                        from,
                        bytes: bytes.clone(),
                        tag,
                    });
                } else {
                    let (last, first) = (edge(stride, n, up), edge(stride, n, !up));
                    exchange.push(OpTable::SendRecv {
                        when: Some(format!("!({last}) && !({first})")),
                        to: to.clone(),
                        from: from.clone(),
                        bytes: bytes.clone(),
                        tag,
                    });
                    exchange.push(OpTable::Send {
                        when: Some(first),
                        to,
                        bytes: bytes.clone(),
                        tag: Some(tag),
                    });
                    exchange.push(OpTable::Recv {
                        when: Some(last),
                        from,
                        tag: Some(tag),
                    });
                }
            }
        }
        stride *= n;
    }
    exchange
}

/// The communication burst of the paper's `w` submodel (eqs. 8-10), for a multi-phase program
/// without `network = ...`: the group's first rank holds the delay `S0_com + (1-w) g SR_com`
/// (a `compute` on its own processor, so a pure delay) and then the `bus` disk, one FCFS unit
/// of service `w g SR_com`, both of the `com` family; with `c > 1` its group waits for it at an
/// ideal barrier, as the paper's group passes through the submodel as one job.
fn w_submodel(m: &Spmd, scale: &Scale, group_barrier: &OpTable) -> Vec<OpTable> {
    let leader = format!("rank % {} == 0", m.c);
    let mut ops = Vec::new();
    if com_delay(m) > 0.0 {
        ops.push(OpTable::Compute {
            when: Some(leader.clone()),
            time: m.com.spec(com_delay(m)),
        });
    }
    if let (Some(bus), x) = (scale.bus, com_queue(m))
        && x > 0.0
    {
        ops.push(OpTable::Io {
            disk: "bus".into(),
            when: Some(leader),
            unit: "0".into(),
            bytes: m.com.spec(IO_BYTES * x / bus),
        });
    }
    if m.c > 1 && !ops.is_empty() {
        ops.push(group_barrier.clone());
    }
    ops
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::expr::{Env, Expr};
    use crate::topology::{Shape, Topology};

    #[test]
    fn grids_are_balanced() {
        assert_eq!(grid(64, 3), [4, 4, 4]);
        assert_eq!(grid(64, 2), [8, 8]);
        assert_eq!(grid(9, 3), [3, 3, 1]);
        assert_eq!(grid(12, 2), [4, 3]);
        assert_eq!(grid(7, 2), [7, 1]);
        assert_eq!(grid(1, 3), [1, 1, 1]);
        assert_eq!(grid(16, 1), [16]);
    }

    fn eval(text: &str, rank: u32, p: u32) -> i64 {
        let e = Expr::parse(text, &[]).unwrap();
        e.eval(&Env {
            rank: i64::from(rank),
            ranks: i64::from(p),
            node: i64::from(rank),
            loops: &[],
        })
        .unwrap()
    }

    /// For r = 1, 2, 3 on a torus and a mesh, every rank's neighbours are the ranks whose grid
    /// coordinates differ by one in one dimension (wrapping on the torus), and one link away on
    /// the topology of the same dims; on the mesh the edge conditions hold exactly at the grid's
    /// faces.
    #[test]
    fn neighbours_are_one_link_apart() {
        for (p, r) in [(8u32, 1u32), (12, 2), (16, 2), (27, 3), (64, 3)] {
            let dims = grid(p, r);
            for wrap in [true, false] {
                let topo = Topology::new(
                    Shape::Grid {
                        dims: dims.clone(),
                        wrap,
                    },
                    p,
                )
                .unwrap();
                let mut stride = 1;
                for &n in &dims {
                    for rank in 0..p {
                        let c = rank / stride % n;
                        for up in [true, false] {
                            let at_edge = eval(&edge(stride, n, up), rank, p) != 0;
                            assert_eq!(at_edge, if up { c == n - 1 } else { c == 0 });
                            if !wrap && at_edge {
                                continue;
                            }
                            let to = eval(&neighbour(stride, n, up, wrap), rank, p) as u32;
                            let want_c = if up { (c + 1) % n } else { (c + n - 1) % n };
                            assert_eq!(to, rank - c * stride + want_c * stride);
                            if n > 1 {
                                assert_eq!(topo.distance(rank, to), 1, "p {p} r {r} rank {rank}");
                            }
                        }
                    }
                    stride *= n;
                }
            }
        }
    }
}
