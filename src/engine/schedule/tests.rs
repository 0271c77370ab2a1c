//! The executor's own lane of hops, and the straight stretches of grid routes, against the
//! queue alone (every hop an event of the binary heap, routed hop by hop from its flight): the
//! same figures, to the picosecond, on random schedules over every kind of topology.

use super::*;
use crate::analytic::loggp::LogGp;
use crate::program::marks::Dependency;
use crate::program::{Interconnect, Sharing, Switching};
use crate::schedule::dag::DagBuilder;
use crate::schedule::{Endpoints, Links, Machine, ReadyOrder};
use crate::topology::{Shape, Topology};

/// A random schedule of `ranks` ranks: messages between random pairs, of sizes from 0 bytes to
/// past the eager limit, each with its own tag; calcs on `cpus` CPUs in steps of 100 ns (so
/// that times tie); each operation waiting for a random earlier one of its rank (`requires` or
/// `irequires`) or for none. Every dependency goes back to an earlier message, so every
/// schedule completes.
fn random_dag(next: &mut impl FnMut() -> u64, ranks: u32, cpus: u8) -> Dag {
    // per rank: kind, peer, size (bytes or ticks), tag, CPU
    type Planned = (OpKind, u32, u64, u32, u8);
    let mut ops: Vec<Vec<Planned>> = vec![Vec::new(); ranks as usize];
    for tag in 0..30 * ranks {
        let src = (next() % u64::from(ranks)) as u32;
        let dst = (src + 1 + (next() % u64::from(ranks - 1)) as u32) % ranks;
        let size = [0, 8, 8, 100, 1000, 5000, 70_000][(next() % 7) as usize];
        ops[src as usize].push((OpKind::Send, dst, size, tag, 0));
        ops[dst as usize].push((OpKind::Recv, src, size, tag, 0));
        if next().is_multiple_of(3) {
            let r = (next() % u64::from(ranks)) as usize;
            let cpu = (next() % u64::from(cpus)) as u8;
            ops[r].push((OpKind::Calc, 0, 100_000 * (1 + next() % 20), 0, cpu));
        }
    }
    let mut b = DagBuilder::new(ranks).unwrap();
    for rank in &ops {
        b.begin_rank().unwrap();
        for (i, &(kind, peer, size, tag, cpu)) in rank.iter().enumerate() {
            match kind {
                OpKind::Send => b.send(peer, size, tag, 0, 0),
                OpKind::Recv => b.recv(peer, size, tag, 0, 0),
                _ => b.calc(size, cpu),
            }
            .unwrap();
            if i > 0 && !next().is_multiple_of(4) {
                let earlier = (next() % i as u64) as u32;
                let kind = if next().is_multiple_of(4) {
                    Dependency::Irequires
                } else {
                    Dependency::Requires
                };
                b.depend(i as u32, earlier, kind).unwrap();
            }
        }
        b.end_rank().unwrap();
    }
    b.finish().unwrap()
}

/// Endpoints that cost nothing: arrivals one latency after the last hop, sends at once.
const FREE: LogGp = LogGp {
    l: 0.0,
    o: 0.0,
    g: 0.0,
    big_g: 0.0,
    big_o: 0.0,
    s: 4096,
};

/// `endpoints` with links of `shape` over `nodes` nodes between them: 1 GB/s, 100 ns a hop,
/// FCFS.
fn machine(
    endpoints: &LogGp,
    shape: &Shape,
    nodes: u32,
    switching: Switching,
    ranks_per_node: u32,
) -> Machine {
    Machine {
        endpoints: Endpoints::from_seconds(endpoints).unwrap(),
        links: Some(Links {
            interconnect: Interconnect {
                topology: Topology::new(shape.clone(), nodes).unwrap(),
                bandwidth: 1e9,
                latency: 1e-7,
                global_latency: 1e-7,
                node_latency: 1e-7,
                startup: 0.0,
                switching,
                sharing: Sharing::Fcfs,
            },
            ranks_per_node,
        }),
        order: ReadyOrder::Program,
    }
}

/// How an execution is run.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Variant {
    /// As always.
    Lanes,
    /// Every event in the binary heap: no lane.
    QueueOnly,
    /// Stamps from `u32::MAX` less this on, so that they are renumbered once that many
    /// events in, hops of the lane among them.
    Renumbered(u32),
}

/// Every figure of an execution (or its fault), as text.
fn execute(dag: &Dag, machine: &Machine, variant: Variant) -> String {
    let mut ex = DagExecution::new(dag, machine).unwrap();
    match variant {
        Variant::Lanes => {}
        Variant::QueueOnly => ex.heap.make_binary(),
        Variant::Renumbered(left) => ex.stamp = ex.stamp.max(u32::MAX - left),
    }
    format!("{:?}", ex.run())
}

#[test]
fn lane_hops_and_straight_routes_give_what_the_queue_alone_gives() {
    let mut next = crate::rng::xorshift(2026_u64);
    let grid = |dims: &[u32], wrap| Shape::Grid {
        dims: dims.to_vec(),
        wrap,
    };
    let shapes = [
        (grid(&[4, 4], true), 16),
        (grid(&[3, 5], true), 15),
        (grid(&[2, 2, 3], true), 12),
        (grid(&[4, 3], false), 12),
        (grid(&[9], true), 9),
        (
            Shape::Tree {
                arity: 2,
                fat: true,
            },
            8,
        ),
        (
            Shape::Tree {
                arity: 4,
                fat: false,
            },
            16,
        ),
        (Shape::Bus, 8),
        (Shape::Full, 6),
    ];
    let endpoints = [
        LogGp::LOGGOPSIM,
        LogGp {
            l: 1e-7,
            o: 1e-7,
            g: 1e-8,
            big_g: 1e-10,
            big_o: 0.0,
            s: 4096,
        },
        FREE,
    ];
    let (mut runs, mut completed, mut crossings) = (0, 0, 0);
    for (shape, nodes) in shapes {
        for switching in [Switching::CutThrough, Switching::StoreAndForward] {
            for ranks_per_node in [1, 2] {
                // (links without latency: the hops a run of the lane pushes join that run)
                for (e, cpus, latency) in [
                    (0, 1, 1e-7),
                    (1, 1, 1e-7),
                    (1, 2, 1e-7),
                    (2, 1, 1e-7),
                    (2, 2, 1e-7),
                    (1, 1, 0.0),
                ] {
                    let ranks = nodes * ranks_per_node;
                    let mut machine =
                        machine(&endpoints[e], &shape, nodes, switching, ranks_per_node);
                    if let Some(links) = &mut machine.links {
                        links.interconnect.latency = latency;
                    }
                    let dag = random_dag(&mut next, ranks, cpus);
                    let lanes = execute(&dag, &machine, Variant::Lanes);
                    for variant in [
                        Variant::QueueOnly,
                        Variant::Renumbered(100),
                        Variant::Renumbered(700),
                        Variant::Renumbered(2000),
                    ] {
                        assert_eq!(
                            lanes,
                            execute(&dag, &machine, variant),
                            "{variant:?}: {shape:?}, {switching:?}, {ranks_per_node} ranks a node, endpoints {e}, {cpus} CPUs, latency {latency}"
                        );
                    }
                    runs += 1;
                    if let Ok(run) = DagExecution::new(&dag, &machine).unwrap().run() {
                        completed += 1;
                        crossings += run.links.iter().map(|l| l.2).sum::<u64>();
                    }
                }
            }
        }
    }
    assert_eq!(completed, runs);
    assert!(crossings > 100_000, "{crossings} link crossings");
}

/// A message's arrival scheduled by a hop of the lane, at the very time a later hop of the lane
/// schedules its next one, comes before it: on a ring of 8 nodes with free endpoints and
/// 0-byte messages, rank 0's message to rank 2 arrives 200 ns in, when rank 4's to rank 7 (sent
/// at the same instant) takes its third hop; the lane must stop for the arrival (the executor
/// checks in tests that events come in `(time, stamp)` order). Rank 3's send after a calc of
/// 200 ns waits in the queue meanwhile; with stamps renumbered at each of the first events in
/// turn, the lane must also stop for it.
#[test]
fn an_arrival_scheduled_from_the_lane_comes_before_the_lanes_later_hops() {
    let mut b = DagBuilder::new(8).unwrap();
    for rank in 0..8 {
        b.begin_rank().unwrap();
        match rank {
            0 => b.send(2, 0, 0, 0, 0).map(drop).unwrap(),
            4 => {
                b.send(7, 0, 0, 0, 0).unwrap();
                b.recv(3, 0, 0, 0, 0).map(drop).unwrap();
            }
            2 => b.recv(0, 0, 0, 0, 0).map(drop).unwrap(),
            7 => b.recv(4, 0, 0, 0, 0).map(drop).unwrap(),
            3 => {
                let calc = b.calc(200_000, 0).unwrap();
                let send = b.send(4, 0, 0, 0, 0).unwrap();
                b.depend(send, calc, Dependency::Requires).unwrap();
            }
            _ => {}
        }
        b.end_rank().unwrap();
    }
    let dag = b.finish().unwrap();
    let ring = Shape::Grid {
        dims: vec![8],
        wrap: true,
    };
    let machine = machine(&FREE, &ring, 8, Switching::CutThrough, 1);
    let run = DagExecution::new(&dag, &machine).unwrap().run().unwrap();
    assert_eq!(run.makespan_ticks, 300_000, "three hops of 100 ns");
    let run = format!("{:?}", Ok::<_, DagFault>(run));
    assert_eq!(run, execute(&dag, &machine, Variant::QueueOnly));
    for left in 1..30 {
        assert_eq!(run, execute(&dag, &machine, Variant::Renumbered(left)));
    }
}

/// Two 1,000-byte messages enter a line's link at once (1 GB/s, 100 ns): the second waits the
/// first's 1 us, so the link is busy 2 us and a header spends 1.5 us there on average, in the
/// array of link states and in the map of them alike.
#[test]
fn a_link_reports_what_headers_waited_for_it() {
    let mut b = DagBuilder::new(3).unwrap();
    for (sends, peer) in [(true, 2), (true, 2), (false, 0)] {
        b.begin_rank().unwrap();
        if sends {
            b.send(peer, 1000, 0, 0, 0).unwrap();
        } else {
            b.recv(0, 1000, 0, 0, 0).unwrap();
            b.recv(1, 1000, 0, 0, 0).unwrap();
        }
        b.end_rank().unwrap();
    }
    let dag = b.finish().unwrap();
    // ranks 0 and 1 share node 0; rank 2 is alone on node 1
    let line = machine(
        &FREE,
        &Shape::Grid {
            dims: vec![2],
            wrap: false,
        },
        2,
        Switching::CutThrough,
        2,
    );
    for sparse in [false, true] {
        let mut ex = DagExecution::new(&dag, &line).unwrap();
        if sparse && let Some(net) = &mut ex.net {
            net.runs = LinkRuns::Sparse {
                runs: FxHashMap::default(),
                waits: FxHashMap::default(),
            };
        }
        let run = ex.run().unwrap();
        let [(id, busy, messages, delay)] = &run.links[..] else {
            panic!("one link used: {:?}", run.links);
        };
        let name = line
            .links
            .as_ref()
            .unwrap()
            .interconnect
            .topology
            .link_name(*id);
        assert_eq!((name.as_str(), *messages), ("0+x", 2), "sparse {sparse}");
        // the second arrives 2 us + 100 ns after the start
        assert_eq!(run.makespan_ticks, 2_100_000, "sparse {sparse}");
        assert!((busy * run.makespan - 2e-6).abs() < 1e-15, "{busy}");
        assert!((delay - 1.5e-6).abs() < 1e-15, "sparse {sparse}: {delay}");
    }
}

/// A header whose hops take it past the time limit (links of 10^6 s: past it at the fifth of
/// eleven hops) ends the run with an overflow at its sender's rank, also when nothing but the
/// lane's hops is left to run (it went on, and blamed the receiver, before).
#[test]
fn hops_past_the_time_limit_are_an_overflow() {
    let mut b = DagBuilder::new(12).unwrap();
    for rank in 0..12 {
        b.begin_rank().unwrap();
        if rank == 0 {
            b.send(11, 8, 0, 0, 0).unwrap();
        } else if rank == 11 {
            b.recv(0, 8, 0, 0, 0).unwrap();
        }
        b.end_rank().unwrap();
    }
    let dag = b.finish().unwrap();
    let line = Shape::Grid {
        dims: vec![12],
        wrap: false,
    };
    let mut slow = machine(&FREE, &line, 12, Switching::CutThrough, 1);
    if let Some(links) = &mut slow.links {
        links.interconnect.latency = 1e6;
    }
    let run = DagExecution::new(&dag, &slow).unwrap().run();
    assert!(
        matches!(run, Err(DagFault::Overflow { rank: 0 })),
        "{run:?}"
    );
}

/// Events that wait for busy units cost each one step in and one out of their park, not one
/// trip through the queue per unit freed: `n` independent calcs on one CPU (some of no time),
/// and `n` messages reaching one rank at once, are put back about `n` times, not `n^2 / 2`
/// (a count of work, not a timing), and end when the hand computation says.
#[test]
fn waiting_for_busy_units_costs_linear_work() {
    let n: u32 = 20_000;
    let endpoints = Machine {
        endpoints: Endpoints::from_seconds(&LogGp::LOGGOPSIM).unwrap(),
        links: None,
        order: ReadyOrder::Program,
    };
    // one rank, calcs of 1 us and of no time alternating, all ready at once
    let mut b = DagBuilder::new(1).unwrap();
    b.begin_rank().unwrap();
    for i in 0..n {
        b.calc(if i % 2 == 0 { 1_000_000 } else { 0 }, 0).unwrap();
    }
    b.end_rank().unwrap();
    let dag = b.finish().unwrap();
    let run = DagExecution::new(&dag, &endpoints).unwrap().run().unwrap();
    assert_eq!(run.makespan_ticks, u64::from(n / 2) * 1_000_000);
    assert!(
        run.requeued <= 2 * u64::from(n),
        "{} put back",
        run.requeued
    );
    // every other rank sends 8 bytes to rank 0 at once: each costs rank 0 o + 7 G of CPU
    let ranks = n / 4;
    let mut b = DagBuilder::new(ranks).unwrap();
    b.begin_rank().unwrap();
    for _ in 1..ranks {
        b.recv(ANY, 8, ANY, 0, 0).unwrap();
    }
    b.end_rank().unwrap();
    for _ in 1..ranks {
        b.begin_rank().unwrap();
        b.send(0, 8, 0, 0, 0).unwrap();
        b.end_rank().unwrap();
    }
    let dag = b.finish().unwrap();
    let run = DagExecution::new(&dag, &endpoints).unwrap().run().unwrap();
    let (o, l, g_byte) = (1_500_000, 2_500_000, 6000);
    let receive = (o + 7 * g_byte).max(1_000_000 + 7 * g_byte);
    assert_eq!(
        run.makespan_ticks,
        o + l + u64::from(ranks - 1) * receive,
        "the messages are processed one after the other from o + L on"
    );
    assert!(
        run.requeued <= 2 * u64::from(ranks),
        "{} put back",
        run.requeued
    );
}

/// A rank's calcs on several CPUs can add up past 64 bits while each CPU stays within the time
/// limit: refused, not wrapped.
#[test]
fn sums_past_64_bits_are_refused() {
    let mut b = DagBuilder::new(1).unwrap();
    b.begin_rank().unwrap();
    for cpu in 0..6 {
        b.calc((1 << 62) - 1_000_000, cpu).unwrap();
    }
    b.end_rank().unwrap();
    let dag = b.finish().unwrap();
    let m = Machine {
        endpoints: Endpoints::from_seconds(&LogGp::LOGGOPSIM).unwrap(),
        links: None,
        order: ReadyOrder::Program,
    };
    let run = DagExecution::new(&dag, &m).unwrap().run();
    assert!(
        matches!(&run, Err(DagFault::Sum(what)) if what.contains("rank 0")),
        "{run:?}"
    );
}
