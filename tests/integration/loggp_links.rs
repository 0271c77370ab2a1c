//! LogGP endpoints with links between them (issue 22): links so fast and latency-free that they
//! cost nothing give LogGP's own makespan, and two messages that must share one link on their
//! routes queue there by the delay worked out by hand.

use parsim::analytic::loggp::LogGp;
use parsim::engine::schedule::{DagExecution, DagRun};
use parsim::program::{Interconnect, Sharing, Switching};
use parsim::scenario::check::schedule::goal;
use parsim::schedule::dag::{Dag, TICKS_PER_NS};
use parsim::schedule::{Endpoints, Links, Machine, ReadyOrder};
use parsim::topology::{Shape, Topology};

use crate::goal::{Example, example};

/// LogGOPSim's defaults: `L = 2500`, `o = 1500`, `g = 1000`, `G = 6` ns, `S = 65535` B.
fn defaults() -> Endpoints {
    Endpoints::from_seconds(&LogGp::LOGGOPSIM).unwrap()
}

/// Links of `shape` over `nodes` nodes, one rank per node, cut-through, FCFS.
fn links(shape: Shape, nodes: u32, bandwidth: f64, latency: f64) -> Links {
    Links {
        interconnect: Interconnect {
            topology: Topology::new(shape, nodes).unwrap(),
            bandwidth,
            latency,
            global_latency: latency,
            node_latency: latency,
            startup: 0.0,
            switching: Switching::CutThrough,
            sharing: Sharing::Fcfs,
        },
        ranks_per_node: 1,
    }
}

/// Runs `dag` on LogGOPSim's endpoints, with `links` between them or none (times in ticks, ps).
fn run(dag: &Dag, links: Option<Links>) -> DagRun {
    let m = Machine {
        endpoints: defaults(),
        links,
        order: ReadyOrder::Program,
    };
    DagExecution::new(dag, &m).unwrap().run().unwrap()
}

/// Messages summed over the links: every link crossing of every message.
fn crossings(run: &DagRun) -> u64 {
    run.links.iter().map(|l| l.2).sum()
}

/// A recursive-doubling allreduce of `bytes` on `p` ranks (a power of two), as `parsim goal`
/// writes it: in step `k` rank `r` sends to and receives from `r xor 2^k`, and both wait for
/// the send and the receive of step `k - 1`.
fn recursive_doubling(p: u32, bytes: u32) -> Dag {
    let mut s = format!("num_ranks {p}\n");
    for r in 0..p {
        s.push_str(&format!("\nrank {r} {{\n"));
        for k in 0..p.trailing_zeros() {
            let peer = r ^ (1 << k);
            let (send, recv) = (2 * k, 2 * k + 1);
            s.push_str(&format!("l{send}: send {bytes}b to {peer} tag {k}\n"));
            s.push_str(&format!("l{recv}: recv {bytes}b from {peer} tag {k}\n"));
            if k > 0 {
                for a in [send, recv] {
                    for b in [send - 2, recv - 2] {
                        s.push_str(&format!("l{a} requires l{b}\n"));
                    }
                }
            }
        }
        s.push_str("}\n");
    }
    goal::parse(&s, std::path::Path::new("recursive_doubling.goal")).unwrap()
}

fn torus(side: u32) -> Shape {
    Shape::Grid {
        dims: vec![side, side],
        wrap: true,
    }
}

fn fat_tree() -> Shape {
    Shape::Tree {
        arity: 4,
        fat: true,
    }
}

#[test]
fn links_that_cost_nothing_give_loggps_own_makespan() {
    // 8 KiB messages: the contention table's allreduce (benches/RESULTS.md), where 10 GB/s
    // links of 100 ns make the same 64 ranks 11 us slower on the torus
    let allreduce = recursive_doubling(64, 8192);
    let alone = run(&allreduce, None).makespan_ticks;
    // LogGOPSim's makespan: 6 steps of o + L + o + 8191 G (every rank sends when its previous
    // step's receive is processed; the NIC's g + 8191 G never binds): 6 x 54,646 ns
    assert_eq!(alone, 327_876 * TICKS_PER_NS);
    let real = run(&allreduce, Some(links(torus(8), 64, 1e10, 1e-7))).makespan_ticks;
    assert!(real > alone + 10_000 * TICKS_PER_NS, "{real} {alone}");
    // 1e30 B/s and no latency: every link crossing holds its link one tick (the ceiling of
    // 8192 B / 1e30 B/s = 8e-15 ps), so links can only add ticks a link was busy: at most one
    // per crossing of the whole run. Crossings, by hand: dimension-order routes on the 8 x 8
    // torus cross 1 + 2 + 4 links in x and again in y (the last of each is the tie, 4 hops
    // the positive way), 14 per rank; on the fat tree of arity 4 (three levels) steps 0-1
    // climb one level, 2-3 two, 4-5 three, up and down: 2 (1 + 1 + 2 + 2 + 3 + 3) = 24; one
    // link a message on the bus and on the full graph, 6 per rank
    let cases = [
        ("torus", torus(8), 14),
        ("fat tree", fat_tree(), 24),
        ("bus", Shape::Bus, 6),
        ("full", Shape::Full, 6),
    ];
    for (name, shape, per_rank) in cases {
        let r = run(&allreduce, Some(links(shape, 64, 1e30, 0.0)));
        assert_eq!(crossings(&r), 64 * per_rank, "{name}");
        let with = r.makespan_ticks;
        assert!(
            with >= alone && with - alone <= crossings(&r),
            "{name}: {with} ticks with free links, {alone} alone"
        );
        // so the same to the nanosecond
        assert_eq!(with / TICKS_PER_NS, alone / TICKS_PER_NS, "{name}");
    }
    // LogGOPSim's dissemination example, 1-byte messages on 16 ranks: 22,000 ns alone
    let dag = goal::parse(
        &example(Example::Dissemination),
        std::path::Path::new("dissemination_16.goal"),
    )
    .unwrap();
    let alone = run(&dag, None).makespan_ticks;
    assert_eq!(alone, 22_000 * TICKS_PER_NS);
    for (name, shape) in [("torus", torus(4)), ("fat tree", fat_tree())] {
        let r = run(&dag, Some(links(shape, 16, 1e30, 0.0)));
        let with = r.makespan_ticks;
        assert!(
            with >= alone && with - alone <= crossings(&r),
            "{name}: {with} ticks with free links, {alone} alone"
        );
        assert_eq!(with / TICKS_PER_NS, alone / TICKS_PER_NS, "{name}");
    }
}

/// Ranks 0 and 1 send 1,000 bytes at time 0, to ranks 2 and 3; the receives are posted at once.
const TWO_SENDERS: &str = "num_ranks 4\n\
rank 0 {\nl0: send 1000b to 2 tag 0\n}\n\
rank 1 {\nl0: send 1000b to 3 tag 0\n}\n\
rank 2 {\nl0: recv 1000b from 0 tag 0\n}\n\
rank 3 {\nl0: recv 1000b from 1 tag 0\n}\n";

#[test]
fn two_messages_on_one_link_queue_by_the_hand_computed_delay() {
    let ns = TICKS_PER_NS;
    let dag = goal::parse(TWO_SENDERS, std::path::Path::new("two_senders.goal")).unwrap();
    // LogGP alone the two messages never meet (different senders, different receivers): each
    // receiver finishes at o + L + o + 999 G = 1500 + 2500 + 1500 + 5994 = 11,494 ns
    let r = run(&dag, None);
    assert_eq!(r.makespan_ticks, 11_494 * ns);
    assert_eq!((r.finish[2], r.finish[3]), (11_494 * ns, 11_494 * ns));

    // A line of four nodes (a 1-D mesh, no wrap-around), links of 1 GB/s (w = 1,000 ns for
    // 1,000 bytes) and h = 100 ns a hop. Rank 0's route is 0 -> 1 -> 2, rank 1's is
    // 1 -> 2 -> 3: both cross the link from node 1 to node 2. Both messages enter the network
    // when their sender's o ends, at t = o = 1,500 ns.
    // - Rank 1's message is at link 1->2 at t = o, alone: it holds it until o + w. Cut-through,
    //   its header is on link 2->3 at o + h, which it holds until o + h + w; it is delivered
    //   h after its last transmission ends, o + w + 2h, and reaches rank 3 L later: the idle
    //   route's cost w + 2h = 1,200 ns on top of LogGP alone (12,694 ns).
    // - Rank 0's message holds link 0->1 from o to o + w; its header reaches link 1->2 at
    //   o + h, finds it busy until o + w, and is sent from o + w to o + 2w; delivered at
    //   o + 2w + h: 2w + h = 2,100 ns on top (13,594 ns). On an idle network it would have
    //   started there at o + h and been delivered at o + w + 2h: it queued w - h = 900 ns.
    let line = Shape::Grid {
        dims: vec![4],
        wrap: false,
    };
    let r = run(&dag, Some(links(line.clone(), 4, 1e9, 1e-7)));
    assert_eq!(
        (r.finish[2], r.finish[3]),
        ((11_494 + 2_100) * ns, (11_494 + 1_200) * ns)
    );
    assert_eq!(r.makespan_ticks, (11_494 + 2_100) * ns);
    // the shared link carried both, each of the other two links one
    let topology = Topology::new(line.clone(), 4).unwrap();
    let carried: Vec<(String, u64)> = r
        .links
        .iter()
        .map(|l| (topology.link_name(l.0), l.2))
        .collect();
    let named = |name: &str, messages: u64| (name.to_owned(), messages);
    assert_eq!(carried, [named("0+x", 1), named("1+x", 2), named("2+x", 1)]);

    // Rank 0's message alone on the same line (rank 1 sends nothing) pays only its idle route
    let alone_on_line = TWO_SENDERS
        .replace("rank 1 {\nl0: send 1000b to 3 tag 0\n}", "rank 1 {\n}")
        .replace("rank 3 {\nl0: recv 1000b from 1 tag 0\n}", "rank 3 {\n}");
    let one = goal::parse(&alone_on_line, std::path::Path::new("one_sender.goal")).unwrap();
    let r = run(&one, Some(links(line, 4, 1e9, 1e-7)));
    assert_eq!(r.finish[2], (11_494 + 1_200) * ns);

    // A bus: both messages cross its one link, entering it at the same moment (t = o); the
    // send of rank 0 was stamped first, so its message goes first: o to o + w, delivered h
    // later (w + h = 1,100 ns on top); rank 1's waits w and is sent from o + w to o + 2w
    // (2w + h = 2,100 ns on top, of which w = 1,000 ns queueing)
    let r = run(&dag, Some(links(Shape::Bus, 4, 1e9, 1e-7)));
    assert_eq!(
        (r.finish[2], r.finish[3]),
        ((11_494 + 1_100) * ns, (11_494 + 2_100) * ns)
    );
    assert_eq!(r.makespan_ticks, (11_494 + 2_100) * ns);
}

/// The executor keeps link states in an array indexed by link id up to 2^24 links and in a map
/// beyond: a full graph of 4,097 nodes (16,785,409 links) takes the map, 4,096 (16,777,216)
/// the array, and the same two exchanges give the same figures on both. Rank 0 and the last
/// rank exchange 1,000 bytes; rank 1 sends rank 2 two messages over one link (1 GB/s, 100 ns).
#[test]
fn link_states_in_the_array_and_in_the_map_give_the_same_figures() {
    let exchanges = |p: u32| {
        let last = p - 1;
        let mut s = format!("num_ranks {p}\n");
        s.push_str(&format!(
            "rank 0 {{\nl0: send 1000b to {last} tag 0\nl1: recv 1000b from {last} tag 0\n}}\n"
        ));
        s.push_str("rank 1 {\nl0: send 1000b to 2 tag 0\nl1: send 1000b to 2 tag 1\n}\n");
        s.push_str("rank 2 {\nl0: recv 1000b from 1 tag 0\nl1: recv 1000b from 1 tag 1\n}\n");
        for r in 3..last {
            s.push_str(&format!("rank {r} {{\n}}\n"));
        }
        s.push_str(&format!(
            "rank {last} {{\nl0: recv 1000b from 0 tag 0\nl1: send 1000b to 0 tag 0\nl1 requires l0\n}}\n"
        ));
        goal::parse(&s, std::path::Path::new("exchanges.goal")).unwrap()
    };
    let figures = |p: u32| {
        let r = run(&exchanges(p), Some(links(Shape::Full, p, 1e9, 1e-7)));
        let topology = Topology::new(Shape::Full, p).unwrap();
        let names: Vec<(String, u64)> = r
            .links
            .iter()
            .map(|l| (topology.link_name(l.0), l.2))
            .collect();
        let delays: Vec<f64> = r.links.iter().map(|l| l.3).collect();
        (r.makespan_ticks, r.messages, names, delays)
    };
    let (array, map) = (figures(4096), figures(4097));
    assert_eq!(array.0, map.0);
    assert_eq!(array.1, 4);
    assert_eq!(map.1, 4);
    // the links used, in id order, each with its messages
    assert_eq!(
        map.2,
        vec![
            ("0-4096".to_owned(), 1),
            ("1-2".to_owned(), 2),
            ("4096-0".to_owned(), 1)
        ]
    );
    assert_eq!(array.2[1], ("1-2".to_owned(), 2));
    assert_eq!(array.3, map.3);
    // every link's mean delay is one transmission, 1,000 B at 1 GB/s: on 1-2 the second
    // message leaves rank 1's NIC g + 999 G = 6,994 ns after the first, long after the first
    // has left the link
    for d in &array.3 {
        assert!((d - 1e-6).abs() < 1e-15, "{d}");
    }
}
