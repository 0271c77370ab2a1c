//! Rank programs as dependency graphs: each rank a DAG of `send`, `recv` and `calc` operations
//! tied by start-after-finish (`requires`) and start-after-start (`irequires`) dependencies, the
//! model of GOAL (Hoefler, Siebert and Lumsdaine's *Group Operation Assembly Language*, the input
//! of LogGOPSim).
//!
//! A [`Dag`] is what a GOAL schedule says, and nothing more: non-blocking sends and receives,
//! overlap of computation and communication, and any order of completion are expressed by which
//! operation waits for which. The sequential programs of [`super::Program`] lower to it
//! ([`super::lower`]), GOAL files are read into it (`crate::scenario::check::schedule::goal`) and written from it
//! ([`write_goal`]); the executor `crate::engine::schedule` runs it on LogGP endpoints.
//!
//! **Memory.** A schedule of `10^8` operations must fit: an operation is one 16-byte record
//! (its size, tag, where its dependents start, and in one word its peer, kind, CPU and NIC),
//! and a dependency is one `u32` in a single edge array (the dependent's index, its top bit set
//! for `irequires`). An operation's rank is not stored: it is found from the ranks' first
//! operations through a table of one rank per [`RANK_BLOCK`] operations. The rare operation
//! whose size passes 32 bits or whose CPU or NIC passes 2 is *wide*: its record holds an index
//! into a side table of full values. How many operations each waits for is not stored either
//! (the executor counts the edges). [`Dag::op`] gives the decoded [`Op`]. No string, no
//! per-rank vector, no allocation per operation. [`DagBuilder`] takes one rank at a time, in order, and sorts that
//! rank's dependencies into the edge array when the rank ends, so a reader streams a file of any
//! size through it.
//!
//! **Order of dependents.** The dependents of an operation are kept in the order their
//! dependencies were declared: when an operation starts or finishes, the executor makes them
//! ready in that order, as LogGOPSim does (its tie-breaking among operations that become ready
//! together depends on it).
//!
//! **Units.** Sizes are bytes; a `calc`'s size is its time in ticks of [`TICKS_PER_SECOND`]
//! (picoseconds; a GOAL file's `calc` counts nanoseconds, [`TICKS_PER_NS`] ticks each).

use std::fmt;
use std::io::{self, Write};

use crate::program::marks::Dependency;

/// Ticks (the executor's and the [`Dag`]'s unit of time) per second: picoseconds.
pub const TICKS_PER_SECOND: f64 = 1e12;

/// Ticks per nanosecond, the unit of GOAL's `calc` and of LogGOPSim's parameters.
pub const TICKS_PER_NS: u64 = 1000;

/// The wildcard of a receive's source and of any tag (`-1` in GOAL).
pub const ANY: u32 = u32::MAX;

/// The most operations a [`Dag`] holds (a dependency names its target in 30 bits; the executor
/// keeps the top two bits of an event for its kind).
pub const MAX_OPS: u64 = (1 << 30) - 1;

/// The most ranks a [`Dag`] may have.
pub const MAX_DAG_RANKS: u32 = 1 << 24;

/// The flag of an `irequires` edge.
const START_EDGE: u32 = 1 << 31;

/// Operations per entry of the table that finds an operation's rank.
pub const RANK_BLOCK: u32 = 1 << RANK_SHIFT;
const RANK_SHIFT: u32 = 4;

/// A record's word: the peer in its low 25 bits ([`ANY`] as `PEER_ANY`), then the kind, the
/// wide flag, the CPU and the NIC.
const PEER_BITS: u32 = 25;
const PEER_ANY: u32 = (1 << PEER_BITS) - 1;
const KIND_SHIFT: u32 = PEER_BITS;
const WIDE: u32 = 1 << 27;
const CPU_SHIFT: u32 = 28;
const NIC_SHIFT: u32 = 30;
/// The CPUs and NICs a record holds inline (`0..4`); higher ones make it wide.
const SMALL_UNIT: u8 = 4;

/// What an operation does. The numeric order (send, receive, calc) is the order LogGOPSim gives
/// operations that become ready together.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum OpKind {
    /// Send `size` bytes to `peer` with `tag`.
    Send = 1,
    /// Receive `size` bytes from `peer` (or [`ANY`]) with `tag` (or [`ANY`]).
    Recv = 2,
    /// Hold the CPU for `size` ticks.
    Calc = 3,
    /// The sentinel after the last operation (never executed).
    End = 4,
}

impl OpKind {
    /// The GOAL keyword.
    pub fn name(self) -> &'static str {
        match self {
            OpKind::Send => "send",
            OpKind::Recv => "recv",
            OpKind::Calc => "calc",
            OpKind::End => "end",
        }
    }
}

/// One operation, decoded from its record ([`Dag::op`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    /// Bytes (send, recv) or ticks (calc).
    pub size: u64,
    /// Destination (send), source or [`ANY`] (recv); 0 for a calc.
    pub peer: u32,
    /// Tag or [`ANY`]; 0 for a calc.
    pub tag: u32,
    /// Its rank.
    pub rank: u32,
    /// What it does.
    pub kind: OpKind,
    /// The CPU of its rank it runs on.
    pub cpu: u8,
    /// The NIC of its rank it uses (sends and receives).
    pub nic: u8,
}

/// An operation as stored: 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Record {
    /// Bytes or ticks; for a wide record, its index in the schedule's table of wide ones.
    size: u32,
    tag: u32,
    /// Index of its first dependent in the edge array (the next record's `edges` ends them).
    edges: u32,
    /// Peer, kind, wide flag, CPU and NIC (`PEER_BITS` and after).
    word: u32,
}

/// The full size, CPU and NIC of a wide record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Wide {
    size: u64,
    cpu: u8,
    nic: u8,
}

impl OpKind {
    fn code(self) -> u32 {
        match self {
            OpKind::End => 0,
            OpKind::Send => 1,
            OpKind::Recv => 2,
            OpKind::Calc => 3,
        }
    }

    #[inline(always)]
    fn from_code(c: u32) -> OpKind {
        match c & 3 {
            1 => OpKind::Send,
            2 => OpKind::Recv,
            3 => OpKind::Calc,
            _ => OpKind::End,
        }
    }
}

impl Record {
    #[inline(always)]
    fn kind(self) -> OpKind {
        OpKind::from_code(self.word >> KIND_SHIFT)
    }
}

/// A schedule: `ranks` DAGs of operations.
#[derive(Clone, Debug, PartialEq)]
pub struct Dag {
    ranks: u32,
    /// Every operation, rank by rank, then one [`OpKind::End`] sentinel.
    ops: Vec<Record>,
    /// Dependents, grouped by the operation they depend on.
    edges: Vec<u32>,
    /// Index of each rank's first operation, and the total at the end.
    rank_start: Vec<u32>,
    /// Per block of [`RANK_BLOCK`] records (the last one clamped to the sentinel): the rank of
    /// its first record; one entry more than there are blocks.
    rank_block: Vec<u32>,
    /// The full values of wide records.
    wide: Vec<Wide>,
    cpus: u16,
    nics: u16,
    sends: u64,
}

impl Dag {
    /// Number of ranks.
    pub fn ranks(&self) -> u32 {
        self.ranks
    }

    /// Number of operations.
    pub fn len(&self) -> usize {
        self.ops.len() - 1
    }

    /// True when no rank has an operation.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of sends (messages).
    pub fn sends(&self) -> u64 {
        self.sends
    }

    /// Number of dependencies.
    pub fn dependencies(&self) -> usize {
        self.edges.len()
    }

    /// CPUs per rank (one more than the highest `cpu` used: up to 256).
    pub fn cpus(&self) -> u16 {
        self.cpus
    }

    /// NICs per rank (one more than the highest `nic` used: up to 256).
    pub fn nics(&self) -> u16 {
        self.nics
    }

    /// Operation `i` (a global index).
    #[inline(always)]
    pub fn op(&self, i: u32) -> Op {
        self.op_in(i, self.rank_of(i))
    }

    /// Operation `i`, known to belong to `rank` (saves finding the rank).
    #[inline(always)]
    pub fn op_in(&self, i: u32, rank: u32) -> Op {
        debug_assert_eq!(rank, self.rank_of(i));
        let r = self.ops[i as usize];
        let peer = match r.word & PEER_ANY {
            PEER_ANY => ANY,
            p => p,
        };
        let (size, cpu, nic) = if r.word & WIDE == 0 {
            (
                u64::from(r.size),
                (r.word >> CPU_SHIFT) as u8 & 3,
                (r.word >> NIC_SHIFT) as u8 & 3,
            )
        } else {
            let w = self.wide[r.size as usize];
            (w.size, w.cpu, w.nic)
        };
        Op {
            size,
            peer,
            tag: r.tag,
            rank,
            kind: r.kind(),
            cpu,
            nic,
        }
    }

    /// What [`Dag::op`] reads first of operation `i`, for a prefetch: its record and its entry
    /// of the table of ranks.
    #[inline(always)]
    pub fn op_memory(&self, i: u32) -> (Option<&impl Sized>, Option<&u32>) {
        (
            self.ops.get(i as usize),
            self.rank_block.get((i >> RANK_SHIFT) as usize),
        )
    }

    /// Where operation `i`'s dependents start in the edge array (reads its record), for a
    /// prefetch.
    #[inline(always)]
    pub fn dependents_memory(&self, i: u32) -> Option<&u32> {
        self.ops
            .get(i as usize)
            .and_then(|r| self.edges.get(r.edges as usize))
    }

    /// What operation `i` does.
    #[inline(always)]
    pub fn kind(&self, i: u32) -> OpKind {
        self.ops[i as usize].kind()
    }

    /// The rank of operation `i` (the number of ranks for the sentinel).
    #[inline(always)]
    pub fn rank_of(&self, i: u32) -> u32 {
        let b = (i >> RANK_SHIFT) as usize;
        let (lo, hi) = (self.rank_block[b], self.rank_block[b + 1]);
        if lo == hi {
            return lo;
        }
        // the last rank from `lo` whose first operation is at or before `i` (ranks without
        // operations share their first index with the next)
        lo + self.rank_start[lo as usize + 1..=hi as usize].partition_point(|&s| s <= i) as u32
    }

    /// The dependents of every operation as stored, grouped by the operation depended on (see
    /// [`Dag::raw_dependents`]).
    pub fn raw_edges(&self) -> &[u32] {
        &self.edges
    }

    /// The global indices of rank `r`'s operations.
    pub fn rank_ops(&self, r: u32) -> std::ops::Range<u32> {
        self.rank_start[r as usize]..self.rank_start[r as usize + 1]
    }

    /// The dependents of operation `i` in declaration order: each with how it waits for `i`.
    #[inline(always)]
    pub fn dependents(&self, i: u32) -> impl Iterator<Item = (u32, Dependency)> + '_ {
        self.raw_dependents(i).iter().map(|&e| {
            let kind = if e & START_EDGE != 0 {
                Dependency::Irequires
            } else {
                Dependency::Requires
            };
            (e & !START_EDGE, kind)
        })
    }

    /// The dependents of operation `i` as stored: the dependent's index, with the top bit set
    /// for an `irequires`.
    #[inline(always)]
    pub fn raw_dependents(&self, i: u32) -> &[u32] {
        let a = self.ops[i as usize].edges as usize;
        let b = self.ops[i as usize + 1].edges as usize;
        &self.edges[a..b]
    }

    /// Whether a raw dependent (see [`Dag::raw_dependents`]) is an `irequires`.
    #[inline(always)]
    pub fn is_start_edge(e: u32) -> bool {
        e & START_EDGE != 0
    }

    /// The index of a raw dependent.
    #[inline(always)]
    pub fn edge_target(e: u32) -> u32 {
        e & !START_EDGE
    }

    /// The operation as one GOAL statement (without label), e.g. `send 8b to 3 tag 0`, with the
    /// calc's time in nanoseconds.
    pub fn describe(&self, i: u32) -> String {
        let mut s = Vec::new();
        write_op(&mut s, &self.op(i)).expect("writing to a Vec cannot fail");
        String::from_utf8(s).expect("GOAL statements are ASCII")
    }

    /// Sets operation `i`'s size, making its record wide if the size needs it.
    fn set_size(&mut self, i: u32, size: u64) {
        let r = &mut self.ops[i as usize];
        if r.word & WIDE != 0 {
            self.wide[r.size as usize].size = size;
        } else if let Ok(small) = u32::try_from(size) {
            r.size = small;
        } else {
            let (cpu, nic) = (
                (r.word >> CPU_SHIFT) as u8 & 3,
                (r.word >> NIC_SHIFT) as u8 & 3,
            );
            r.word = (r.word & (PEER_ANY | 3 << KIND_SHIFT)) | WIDE;
            r.size = self.wide.len() as u32;
            self.wide.push(Wide { size, cpu, nic });
        }
    }
}

impl Dag {
    /// Gives each receive that names its source and tag the size of the message it matches:
    /// the `k`-th send from `s` to `d` with tag `t` matches the `k`-th such receive of `d`, in
    /// the order of the ranks' operations (what FIFO matching gives when each rank posts its
    /// receives in that order, as a lowered sequential program does). Receives no send matches
    /// keep their size.
    pub fn fill_receive_sizes(&mut self) {
        let mut sends: Vec<(u32, u32, u32, u32)> = Vec::new();
        let mut recvs: Vec<(u32, u32, u32, u32)> = Vec::new();
        for r in 0..self.ranks {
            for i in self.rank_ops(r) {
                let op = self.op_in(i, r);
                match op.kind {
                    // (destination, source, tag, index)
                    OpKind::Send => sends.push((op.peer, r, op.tag, i)),
                    OpKind::Recv if op.peer != ANY && op.tag != ANY => {
                        recvs.push((r, op.peer, op.tag, i));
                    }
                    _ => {}
                }
            }
        }
        sends.sort_unstable();
        recvs.sort_unstable();
        let (mut a, mut b) = (0, 0);
        while a < sends.len() && b < recvs.len() {
            let (ks, kr) = (&sends[a], &recvs[b]);
            match (ks.0, ks.1, ks.2).cmp(&(kr.0, kr.1, kr.2)) {
                std::cmp::Ordering::Less => a += 1,
                std::cmp::Ordering::Greater => b += 1,
                std::cmp::Ordering::Equal => {
                    let size = self.op_in(ks.3, ks.1).size;
                    self.set_size(kr.3, size);
                    a += 1;
                    b += 1;
                }
            }
        }
    }
}

/// Why a schedule cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DagError(pub String);

impl fmt::Display for DagError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for DagError {}

/// Builds a [`Dag`] one rank at a time, in rank order: [`DagBuilder::begin_rank`], its
/// operations and dependencies (indices local to the rank, in any order), then
/// [`DagBuilder::end_rank`].
#[derive(Debug)]
pub struct DagBuilder {
    dag: Dag,
    /// Index of the current rank's first operation, while a rank is open.
    open: Option<u32>,
    /// The current rank's dependencies: (operation waited for, dependent | START_EDGE), local.
    pending: Vec<(u32, u32)>,
    /// Scratch: per local operation, its count of dependents, then its next edge slot.
    slots: Vec<u32>,
    /// The most operations it takes ([`MAX_OPS`] unless [`DagBuilder::limit`] says fewer).
    limit: u64,
}

impl DagBuilder {
    /// A schedule of `ranks` ranks (at most [`MAX_DAG_RANKS`]).
    pub fn new(ranks: u32) -> Result<DagBuilder, DagError> {
        if ranks == 0 || ranks > MAX_DAG_RANKS {
            return Err(DagError(format!(
                "a schedule has 1 to {MAX_DAG_RANKS} ranks, not {ranks}"
            )));
        }
        let mut rank_start = Vec::with_capacity(ranks as usize + 1);
        rank_start.push(0);
        Ok(DagBuilder {
            dag: Dag {
                ranks,
                ops: Vec::new(),
                edges: Vec::new(),
                rank_start,
                rank_block: Vec::new(),
                wide: Vec::new(),
                cpus: 1,
                nics: 1,
                sends: 0,
            },
            open: None,
            pending: Vec::new(),
            slots: Vec::new(),
            limit: MAX_OPS,
        })
    }

    /// Refuses operations beyond `ops` in all (at most [`MAX_OPS`]).
    pub fn limit(&mut self, ops: u64) {
        self.limit = ops.min(MAX_OPS);
    }

    /// Reserves room for about `ops` more operations.
    pub fn reserve(&mut self, ops: usize) {
        self.dag.ops.reserve(ops);
    }

    /// The number of ranks of the schedule.
    pub fn ranks_total(&self) -> u32 {
        self.dag.ranks
    }

    /// The rank the next [`DagBuilder::begin_rank`] opens.
    pub fn next_rank(&self) -> u32 {
        (self.dag.rank_start.len() - 1) as u32
    }

    /// Opens the next rank; returns its number.
    pub fn begin_rank(&mut self) -> Result<u32, DagError> {
        let r = self.next_rank();
        if r >= self.dag.ranks {
            return Err(DagError(format!(
                "the schedule has {} ranks; rank {r} is one too many",
                self.dag.ranks
            )));
        }
        debug_assert!(self.open.is_none(), "a rank is already open");
        self.open = Some(self.dag.ops.len() as u32);
        Ok(r)
    }

    /// Operations so far, of every rank.
    pub fn len(&self) -> usize {
        self.dag.ops.len()
    }

    /// True before the first operation.
    pub fn is_empty(&self) -> bool {
        self.dag.ops.is_empty()
    }

    /// Operations of the open rank so far.
    pub fn rank_len(&self) -> u32 {
        self.dag.ops.len() as u32 - self.open.unwrap_or(self.dag.ops.len() as u32)
    }

    fn push(
        &mut self,
        kind: OpKind,
        peer: u32,
        size: u64,
        tag: u32,
        cpu: u8,
        nic: u8,
    ) -> Result<u32, DagError> {
        let start = self.open.expect("an operation belongs to an open rank");
        if self.dag.ops.len() as u64 >= self.limit {
            return Err(DagError(format!(
                "the schedule has more than {} operations, the most that fit (at most 2^30, and half the memory this process may take at 32 bytes each)",
                self.limit
            )));
        }
        self.dag.cpus = self.dag.cpus.max(u16::from(cpu) + 1);
        self.dag.nics = self.dag.nics.max(u16::from(nic) + 1);
        let peer = if peer == ANY { PEER_ANY } else { peer };
        let word = peer | kind.code() << KIND_SHIFT;
        let record = match u32::try_from(size) {
            Ok(small) if cpu < SMALL_UNIT && nic < SMALL_UNIT => Record {
                size: small,
                tag,
                edges: 0,
                word: word | u32::from(cpu) << CPU_SHIFT | u32::from(nic) << NIC_SHIFT,
            },
            _ => {
                self.dag.wide.push(Wide { size, cpu, nic });
                Record {
                    size: (self.dag.wide.len() - 1) as u32,
                    tag,
                    edges: 0,
                    word: word | WIDE,
                }
            }
        };
        self.dag.ops.push(record);
        Ok(self.dag.ops.len() as u32 - 1 - start)
    }

    /// Adds `send size bytes to peer with tag` on `cpu` and `nic`; returns its local index.
    pub fn send(
        &mut self,
        peer: u32,
        size: u64,
        tag: u32,
        cpu: u8,
        nic: u8,
    ) -> Result<u32, DagError> {
        if peer >= self.dag.ranks {
            return Err(DagError(format!(
                "a send to rank {peer}, outside 0..{}",
                self.dag.ranks
            )));
        }
        self.dag.sends += 1;
        self.push(OpKind::Send, peer, size, tag, cpu, nic)
    }

    /// Adds `recv size bytes from peer (or ANY) with tag (or ANY)`; returns its local index.
    pub fn recv(
        &mut self,
        peer: u32,
        size: u64,
        tag: u32,
        cpu: u8,
        nic: u8,
    ) -> Result<u32, DagError> {
        if peer != ANY && peer >= self.dag.ranks {
            return Err(DagError(format!(
                "a receive from rank {peer}, outside 0..{}",
                self.dag.ranks
            )));
        }
        self.push(OpKind::Recv, peer, size, tag, cpu, nic)
    }

    /// Adds a `calc` of `ticks` on `cpu`; returns its local index.
    pub fn calc(&mut self, ticks: u64, cpu: u8) -> Result<u32, DagError> {
        self.push(OpKind::Calc, 0, ticks, 0, cpu, 0)
    }

    /// Declares that local operation `a` waits for local operation `b` (`kind`).
    pub fn depend(&mut self, a: u32, b: u32, kind: Dependency) -> Result<(), DagError> {
        let n = self.rank_len();
        if a >= n || b >= n {
            return Err(DagError(format!(
                "a dependency between operations {a} and {b} of a rank with {n}"
            )));
        }
        if a == b {
            return Err(DagError(format!("operation {a} cannot wait for itself")));
        }
        let flag = match kind {
            Dependency::Requires => 0,
            Dependency::Irequires => START_EDGE,
        };
        self.pending.push((b, a | flag));
        Ok(())
    }

    /// Closes the open rank: its dependencies go into the edge array, grouped by the operation
    /// depended on, each group in declaration order.
    pub fn end_rank(&mut self) -> Result<(), DagError> {
        let start = self.open.take().expect("end_rank closes an open rank");
        let n = self.dag.ops.len() as u32 - start;
        let base = self.dag.edges.len();
        if base as u64 + self.pending.len() as u64 >= u64::from(u32::MAX) {
            return Err(DagError(
                "the schedule has more than 2^32 dependencies".to_owned(),
            ));
        }
        // counting sort of the dependencies by the operation depended on (stable)
        self.slots.clear();
        self.slots.resize(n as usize + 1, 0);
        for &(b, _) in &self.pending {
            self.slots[b as usize + 1] += 1;
        }
        for i in 0..n as usize {
            self.slots[i + 1] += self.slots[i];
        }
        for i in 0..n as usize {
            self.dag.ops[(start + i as u32) as usize].edges = (base as u32) + self.slots[i];
        }
        self.dag.edges.resize(base + self.pending.len(), 0);
        for &(b, a) in &self.pending {
            let slot = &mut self.slots[b as usize];
            self.dag.edges[base + *slot as usize] = ((a & !START_EDGE) + start) | (a & START_EDGE);
            *slot += 1;
        }
        self.pending.clear();
        self.dag.rank_start.push(self.dag.ops.len() as u32);
        Ok(())
    }

    /// The schedule, once every rank has been given.
    pub fn finish(mut self) -> Result<Dag, DagError> {
        let given = self.next_rank();
        if given != self.dag.ranks {
            return Err(DagError(format!(
                "the schedule has {} ranks but only {given} were given",
                self.dag.ranks
            )));
        }
        let end = self.dag.edges.len() as u32;
        self.dag.ops.push(Record {
            size: 0,
            tag: 0,
            edges: end,
            word: OpKind::End.code() << KIND_SHIFT,
        });
        self.dag.ops.shrink_to_fit();
        self.dag.edges.shrink_to_fit();
        self.dag.wide.shrink_to_fit();
        // the rank of each block's first record (the last block's end clamped to the sentinel)
        let records = self.dag.ops.len() as u64;
        let blocks = records.div_ceil(u64::from(RANK_BLOCK)) + 1;
        let starts = &self.dag.rank_start;
        let mut block = Vec::with_capacity(blocks as usize);
        let mut r = 0;
        for b in 0..blocks {
            let i = (b << RANK_SHIFT).min(records - 1) as u32;
            while r < self.dag.ranks && starts[r as usize + 1] <= i {
                r += 1;
            }
            block.push(r);
        }
        self.dag.rank_block = block;
        Ok(self.dag)
    }
}

/// Writes `dag` as GOAL text that LogGOPSim's `txt2bin` reads: `num_ranks`, then each rank's
/// block with every operation labelled `l<local index>` and, after them, its dependencies
/// grouped by the operation depended on in their order (so the file read back gives the same
/// [`Dag`]). No line is indented (txt2bin misreads leading white space). A calc's ticks are
/// written in nanoseconds, rounded to the nearest; returns how many calcs that rounding changed.
pub fn write_goal(dag: &Dag, w: &mut impl Write) -> io::Result<u64> {
    let mut rounded = 0;
    writeln!(w, "num_ranks {}", dag.ranks)?;
    for r in 0..dag.ranks {
        writeln!(w, "\nrank {r} {{")?;
        let ops = dag.rank_ops(r);
        let first = ops.start;
        for i in ops.clone() {
            let op = dag.op_in(i, r);
            if op.kind == OpKind::Calc && !op.size.is_multiple_of(TICKS_PER_NS) {
                rounded += 1;
            }
            write!(w, "l{}: ", i - first)?;
            write_op(w, &op)?;
            w.write_all(b"\n")?;
        }
        for b in ops {
            for (a, kind) in dag.dependents(b) {
                writeln!(w, "l{} {} l{}", a - first, kind.name(), b - first)?;
            }
        }
        writeln!(w, "}}")?;
    }
    Ok(rounded)
}

fn write_op(w: &mut impl Write, op: &Op) -> io::Result<()> {
    let num = |v: u32| {
        if v == ANY {
            "-1".to_owned()
        } else {
            v.to_string()
        }
    };
    match op.kind {
        OpKind::Send | OpKind::Recv => {
            let (verb, dir) = if op.kind == OpKind::Send {
                ("send", "to")
            } else {
                ("recv", "from")
            };
            write!(
                w,
                "{verb} {}b {dir} {} tag {}",
                op.size,
                num(op.peer),
                num(op.tag)
            )?;
            if op.cpu != 0 {
                write!(w, " cpu {}", op.cpu)?;
            }
            if op.nic != 0 {
                write!(w, " nic {}", op.nic)?;
            }
        }
        OpKind::Calc => {
            let ns = (op.size + TICKS_PER_NS / 2) / TICKS_PER_NS;
            write!(w, "calc {ns}")?;
            if op.cpu != 0 {
                write!(w, " cpu {}", op.cpu)?;
            }
        }
        OpKind::End => write!(w, "// end")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn two_ranks() -> Dag {
        let mut b = DagBuilder::new(2).unwrap();
        b.begin_rank().unwrap();
        let s = b.send(1, 8, 0, 0, 0).unwrap();
        let c = b.calc(5000, 0).unwrap();
        let r = b.recv(1, 8, 3, 0, 0).unwrap();
        b.depend(r, s, Dependency::Irequires).unwrap();
        b.depend(c, s, Dependency::Requires).unwrap();
        b.depend(r, c, Dependency::Requires).unwrap();
        b.end_rank().unwrap();
        b.begin_rank().unwrap();
        let r = b.recv(ANY, 8, ANY, 0, 0).unwrap();
        let s = b.send(0, 8, 3, 0, 1).unwrap();
        b.depend(s, r, Dependency::Requires).unwrap();
        b.end_rank().unwrap();
        b.finish().unwrap()
    }

    #[test]
    fn dependents_keep_their_declaration_order_and_kind() {
        let d = two_ranks();
        assert_eq!(d.len(), 5);
        assert_eq!(d.ranks(), 2);
        assert_eq!(d.nics(), 2);
        assert_eq!(d.sends(), 2);
        let deps: Vec<_> = d.dependents(0).collect();
        assert_eq!(
            deps,
            [(2, Dependency::Irequires), (1, Dependency::Requires)]
        );
        assert_eq!(
            d.dependents(1).collect::<Vec<_>>(),
            [(2, Dependency::Requires)]
        );
        let waits_for = |i| {
            d.raw_edges()
                .iter()
                .filter(|&&e| Dag::edge_target(e) == i)
                .count()
        };
        assert_eq!(waits_for(2), 2);
        assert_eq!(
            d.dependents(3).collect::<Vec<_>>(),
            [(4, Dependency::Requires)]
        );
        assert_eq!(d.op(4).rank, 1);
        assert_eq!(d.rank_ops(1), 3..5);
        assert_eq!(size_of::<Record>(), 16);
    }

    /// Sizes past 32 bits and CPUs or NICs past 3 go to the side table and come back whole;
    /// ranks are found across empty ranks and blocks of many small ranks.
    #[test]
    fn wide_operations_and_ranks_come_back_whole() {
        let ranks = 70;
        let mut b = DagBuilder::new(ranks).unwrap();
        let mut expected = Vec::new();
        for r in 0..ranks {
            b.begin_rank().unwrap();
            // rank r has r % 5 operations (none for every fifth rank)
            for k in 0..r % 5 {
                let (size, cpu, nic) = match k {
                    0 => ((1u64 << 32) + 1, 0, 0),
                    1 => (u64::from(u32::MAX), 3, 3),
                    2 => (7, 4, 0),
                    _ => (u64::MAX, 200, 255),
                };
                b.send((r + 1) % ranks, size, ANY, cpu, nic).unwrap();
                expected.push((r, size, cpu, nic));
            }
            b.end_rank().unwrap();
        }
        let mut d = b.finish().unwrap();
        assert_eq!((d.cpus(), d.nics()), (201, 256), "nic 255 makes 256 NICs");
        for (i, &(r, size, cpu, nic)) in expected.iter().enumerate() {
            let op = d.op(i as u32);
            assert_eq!(
                (op.rank, op.size, op.cpu, op.nic, op.tag, op.peer, op.kind),
                (r, size, cpu, nic, ANY, (r + 1) % ranks, OpKind::Send),
                "operation {i}"
            );
        }
        assert_eq!(d.rank_of(d.len() as u32), ranks);
        // a size set past 32 bits on a narrow record, and back to a small one on a wide record
        let narrow = expected.iter().position(|e| e.1 == 7).unwrap() as u32;
        d.set_size(narrow, 1 << 40);
        assert_eq!((d.op(narrow).size, d.op(narrow).cpu), (1 << 40, 4));
        d.set_size(narrow, 9);
        assert_eq!(d.op(narrow).size, 9);
        let small = expected.iter().position(|e| e.2 == 3).unwrap() as u32;
        d.set_size(small, (1 << 33) + 5);
        let op = d.op(small);
        assert_eq!((op.size, op.cpu, op.nic), ((1 << 33) + 5, 3, 3));
    }

    #[test]
    fn goal_text_labels_every_operation_and_groups_dependencies() {
        let mut out = Vec::new();
        let rounded = write_goal(&two_ranks(), &mut out).unwrap();
        assert_eq!(rounded, 0);
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "num_ranks 2\n\nrank 0 {\nl0: send 8b to 1 tag 0\nl1: calc 5\nl2: recv 8b from 1 tag 3\n\
             l2 irequires l0\nl1 requires l0\nl2 requires l1\n}\n\nrank 1 {\n\
             l0: recv 8b from -1 tag -1\nl1: send 8b to 0 tag 3 nic 1\nl1 requires l0\n}\n"
        );
    }

    #[test]
    fn bad_peers_and_counts_are_refused() {
        let mut b = DagBuilder::new(2).unwrap();
        b.begin_rank().unwrap();
        assert!(b.send(2, 1, 0, 0, 0).is_err());
        assert!(b.depend(0, 0, Dependency::Requires).is_err());
        b.end_rank().unwrap();
        assert!(b.finish().unwrap_err().0.contains("only 1"));
        assert!(DagBuilder::new(0).is_err());
    }
}
