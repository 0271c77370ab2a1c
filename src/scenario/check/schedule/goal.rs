//! Reading GOAL schedules (the text form LogGOPSim's `txt2bin` reads) into a [`Dag`].
//!
//! ```text
//! num_ranks 2
//!
//! rank 0 {
//! l1: send 8b to 1 tag 5          // sends 8 bytes to rank 1 with tag 5
//! l2: calc 1000 cpu 0             // 1000 ns of computation on CPU 0
//! l2 irequires l1                 // l2 may start once l1 has started
//! }
//!
//! rank 1 {
//! /* receives from anyone, any tag, on NIC 1 */
//! l1: recv 8b from -1 tag -1 nic 1
//! }
//! ```
//!
//! The grammar is txt2bin's (LogGOPSim 76451de) with its accidents removed: `num_ranks N`
//! first; one block `rank R {` ... `}` per rank, in order `0..N-1`; in a block, statements
//! `[label:] send <bytes>b to <rank> [tag T] [cpu C] [nic K]`, `[label:] recv <bytes>b from
//! <rank or -1> [tag T] [cpu C] [nic K]`, `[label:] calc <ns> [cpu C]`, and dependencies
//! `a requires b` (`a` starts after `b` finished) and `a irequires b` (`a` starts after `b`
//! started). Tags default to 0; `-1` is the wildcard of a source or a tag; a tag is kept modulo
//! `2^32` as txt2bin keeps it (Schedgen's trace mode writes 64-bit tags). Labels are per rank.
//!
//! Also accepted (txt2bin refuses or misreads them): indentation, comments after a statement
//! (`//`, `/* */`), optional fields in any order, a dependency before its labels are defined
//! (resolved when the block closes), and `{` on the line after `rank R`. Refused (txt2bin
//! accepts them silently): a label defined twice, a peer outside `0..N`, a `cpu` or `nic` above
//! 255, fewer rank blocks than `num_ranks`, and anything but comments after the last block.
//!
//! **Streaming.** The file is read a line at a time into the [`DagBuilder`], each line where it
//! lies in the reader's buffer: memory is the schedule's, plus one rank's labels while its block
//! is open. The common statements in their plain form (`l3: send 8b to 1 tag 0`, `l3 requires
//! l1`, words one space apart) are read without splitting the line into tokens first; every
//! other line is split. A problem is reported with its line number and what was expected.

use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::io::BufRead;
use std::path::{Path, PathBuf};

use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::files::Limit;
use crate::program::marks::Dependency;
use crate::schedule::dag::{ANY, Dag, DagBuilder, OpKind, TICKS_PER_NS};

/// A problem in a GOAL file: where and what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GoalError {
    /// The file.
    pub file: PathBuf,
    /// The 1-based line (0: the file as a whole).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for GoalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file.display(), self.message)
        } else {
            write!(f, "{}:{}: {}", self.file.display(), self.line, self.message)
        }
    }
}

impl std::error::Error for GoalError {}

/// Reads the GOAL file at `path`: a regular file of at most [`Limit::Goal`] bytes (a pipe, a
/// device or a larger file is refused before it is read), as a stream.
pub fn read_file(path: &Path) -> Result<Dag, GoalError> {
    let stream = crate::files::open_stream(path, Limit::Goal, 1 << 20).map_err(|e| GoalError {
        file: path.to_owned(),
        line: 0,
        message: e.unnamed(),
    })?;
    read(stream, path)
}

/// The longest line a GOAL file may have: a statement takes a few dozen bytes, and a line that
/// never ends (a file of zeros, a binary file) must not fill the memory.
pub const MAX_LINE: usize = 64 << 10;

/// Reads GOAL text from `input`; `path` names it in errors.
pub fn read(input: impl BufRead, path: &Path) -> Result<Dag, GoalError> {
    read_watching(input, path, Vec::new()).0
}

/// Where operations of the GOAL file at `path` were written: for each of `ops`, a rank and the
/// operation's index among that rank's, its line and its label (`x.goal:4, l2`), where the file
/// (read again) still holds what it held when it was run (its XXH3 `digest`). For messages about
/// a schedule that did not complete.
pub fn locate(path: &Path, digest: u64, ops: &[(u32, u32)]) -> Vec<Option<String>> {
    let nowhere = vec![None; ops.len()];
    let Ok(stream) = crate::files::open_stream(path, Limit::Goal, 1 << 20) else {
        return nowhere;
    };
    let watch = ops
        .iter()
        .map(|&op| Watched {
            op,
            line: 0,
            label: None,
        })
        .collect();
    let ((_, found), digests) = crate::files::recording(|| read_watching(stream, path, watch));
    if digests != [digest] {
        return nowhere;
    }
    found
        .into_iter()
        .map(|w| {
            (w.line > 0).then(|| {
                let label = w.label.map_or_else(String::new, |l| format!(", {l}"));
                format!("{}:{}{label}", path.display(), w.line)
            })
        })
        .collect()
}

/// An operation whose line and label a reading notes ([`locate`]).
#[derive(Debug)]
struct Watched {
    /// Its rank and index among the rank's operations.
    op: (u32, u32),
    /// Its line (0 until read).
    line: usize,
    label: Option<String>,
}

/// [`read`], noting where the operations of `watch` are.
fn read_watching(
    mut input: impl BufRead,
    path: &Path,
    watch: Vec<Watched>,
) -> (Result<Dag, GoalError>, Vec<Watched>) {
    let mut p = Parser {
        builder: None,
        labels: Labels::default(),
        deferred: Vec::new(),
        error_line: None,
        in_block: false,
        awaiting_brace: false,
        in_comment: false,
        line: 0,
        watch,
    };
    let dag = p.read(&mut input, path);
    (dag, p.watch)
}

impl Parser {
    /// Reads the whole of `input`.
    fn read(&mut self, input: &mut impl BufRead, path: &Path) -> Result<Dag, GoalError> {
        let p = self;
        // a line cut by the end of the reader's buffer, gathered here
        let mut partial = Vec::new();
        let fail = |line: usize, message: String| GoalError {
            file: path.to_owned(),
            line,
            message,
        };
        loop {
            let chunk = input.fill_buf().map_err(|e| {
                // a stream's own error names the file already: give its reason alone
                let why = match e
                    .get_ref()
                    .and_then(|i| i.downcast_ref::<crate::files::FileError>())
                {
                    Some(f) => f.unnamed(),
                    None => format!("cannot read it: {e}"),
                };
                fail(p.line + 1, why)
            })?;
            if chunk.is_empty() {
                break;
            }
            // the lines ending in this chunk, read where they lie
            let mut from = 0;
            for end in memchr::memchr_iter(b'\n', chunk) {
                let line = &chunk[from..=end];
                from = end + 1;
                p.line += 1;
                if partial.len() + line.len() > MAX_LINE {
                    return Err(fail(p.line, too_long()));
                }
                let done = if partial.is_empty() {
                    p.line(line)
                } else {
                    partial.extend_from_slice(line);
                    let done = p.line(&partial);
                    partial.clear();
                    done
                };
                done.map_err(|m| fail(p.error_line.unwrap_or(p.line), m))?;
            }
            partial.extend_from_slice(&chunk[from..]);
            if partial.len() > MAX_LINE {
                return Err(fail(p.line + 1, too_long()));
            }
            let n = chunk.len();
            input.consume(n);
        }
        if !partial.is_empty() {
            p.line += 1;
            p.line(&partial)
                .map_err(|m| fail(p.error_line.unwrap_or(p.line), m))?;
        }
        p.finish().map_err(|m| fail(0, m))
    }
}

fn too_long() -> String {
    format!(
        "the line is longer than {MAX_LINE} bytes (a GOAL statement takes a few dozen): is this a GOAL schedule, written as text?"
    )
}

/// Reads GOAL text held in memory; `path` names it in errors.
pub fn parse(text: &str, path: &Path) -> Result<Dag, GoalError> {
    read(text.as_bytes(), path)
}

/// One rank's labels: `l1`, `x_2`, ... to the local index of their operation, without a
/// string per label: `l<number>` (what Schedgen writes) in a table indexed by the number, others
/// by their bytes in one buffer, found by hash.
#[derive(Debug, Default)]
struct Labels {
    /// `l<n>`: the operation, or `u32::MAX`.
    numbered: Vec<u32>,
    /// The `n`s set in `numbered`, to clear them.
    set: Vec<u32>,
    bytes: Vec<u8>,
    /// (start in `bytes`, length, operation, next entry with the same hash).
    entries: Vec<(u32, u32, u32, u32)>,
    by_hash: FxHashMap<u64, u32>,
}

/// The largest `n` of a label `l<n>` kept in the table (larger ones are hashed).
const MAX_NUMBERED: u64 = 1 << 24;

impl Labels {
    fn clear(&mut self) {
        for &n in &self.set {
            self.numbered[n as usize] = u32::MAX;
        }
        self.set.clear();
        self.bytes.clear();
        self.entries.clear();
        self.by_hash.clear();
    }

    /// `n` for a label `l<n>` (no leading zero) with a small `n`.
    #[inline(always)]
    fn number(label: &[u8]) -> Option<u32> {
        let digits = label.strip_prefix(b"l")?;
        if digits.is_empty() || digits.len() > 8 || digits[0] == b'0' && digits.len() > 1 {
            return None;
        }
        let mut n: u64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return None;
            }
            n = n * 10 + u64::from(d - b'0');
        }
        (n < MAX_NUMBERED).then_some(n as u32)
    }

    fn hash(label: &[u8]) -> u64 {
        let mut h = FxBuildHasher.build_hasher();
        h.write(label);
        h.finish()
    }

    #[inline]
    fn get(&self, label: &[u8]) -> Option<u32> {
        if let Some(n) = Self::number(label) {
            return self
                .numbered
                .get(n as usize)
                .copied()
                .filter(|&op| op != u32::MAX);
        }
        let mut e = *self.by_hash.get(&Self::hash(label))?;
        while e != u32::MAX {
            let (start, len, op, next) = self.entries[e as usize];
            if &self.bytes[start as usize..(start + len) as usize] == label {
                return Some(op);
            }
            e = next;
        }
        None
    }

    /// Defines `label`; `false` when it already was.
    fn insert(&mut self, label: &[u8], op: u32) -> bool {
        if self.get(label).is_some() {
            return false;
        }
        if let Some(n) = Self::number(label) {
            if self.numbered.len() <= n as usize {
                self.numbered.resize(n as usize + 1, u32::MAX);
            }
            self.numbered[n as usize] = op;
            self.set.push(n);
            return true;
        }
        let h = Self::hash(label);
        let next = self.by_hash.get(&h).copied().unwrap_or(u32::MAX);
        let start = self.bytes.len() as u32;
        self.bytes.extend_from_slice(label);
        self.entries.push((start, label.len() as u32, op, next));
        self.by_hash.insert(h, (self.entries.len() - 1) as u32);
        true
    }
}

struct Parser {
    builder: Option<DagBuilder>,
    labels: Labels,
    /// Dependencies whose labels were not all defined yet: (a, b, kind, line).
    deferred: Vec<(Vec<u8>, Vec<u8>, Dependency, usize)>,
    /// The line an error is on when it is not the line being read (a dependency resolved when
    /// its block closes).
    error_line: Option<usize>,
    in_block: bool,
    awaiting_brace: bool,
    in_comment: bool,
    line: usize,
    /// Operations whose line and label to note ([`locate`]).
    watch: Vec<Watched>,
}

/// The most tokens a line may have (a statement has at most 15).
const MAX_TOKENS: usize = 32;

/// A line's tokens, on the stack.
struct Toks<'a> {
    items: [Tok<'a>; MAX_TOKENS],
    len: usize,
}

impl<'a> Toks<'a> {
    #[inline(always)]
    fn push(&mut self, t: Tok<'a>) -> Result<(), String> {
        if self.len == MAX_TOKENS {
            return Err(format!("more than {MAX_TOKENS} words on one line"));
        }
        self.items[self.len] = t;
        self.len += 1;
        Ok(())
    }
}

/// A token of a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tok<'a> {
    Word(&'a [u8]),
    Num(u64),
    MinusOne,
    Colon,
    Open,
    Close,
}

impl fmt::Display for Tok<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "\"{}\"", String::from_utf8_lossy(w)),
            Tok::Num(n) => write!(f, "{n}"),
            Tok::MinusOne => f.write_str("-1"),
            Tok::Colon => f.write_str("\":\""),
            Tok::Open => f.write_str("\"{\""),
            Tok::Close => f.write_str("\"}\""),
        }
    }
}

fn show(t: Option<&Tok<'_>>) -> String {
    t.map_or_else(|| "the end of the line".to_owned(), ToString::to_string)
}

impl Parser {
    /// Strips comments (keeping the state of a `/* */` across lines) and splits into tokens.
    fn tokens<'a>(&mut self, line: &'a [u8], out: &mut Toks<'a>) -> Result<(), String> {
        let mut i = 0;
        let n = line.len();
        while i < n {
            if self.in_comment {
                match find(&line[i..], b"*/") {
                    Some(k) => {
                        self.in_comment = false;
                        i += k + 2;
                    }
                    None => return Ok(()),
                }
                continue;
            }
            let c = line[i];
            match c {
                b' ' | b'\t' | b'\r' | b'\n' => i += 1,
                b'/' if line.get(i + 1) == Some(&b'/') => return Ok(()),
                b'/' if line.get(i + 1) == Some(&b'*') => {
                    self.in_comment = true;
                    i += 2;
                }
                b':' => {
                    out.push(Tok::Colon)?;
                    i += 1;
                }
                b'{' => {
                    out.push(Tok::Open)?;
                    i += 1;
                }
                b'}' => {
                    out.push(Tok::Close)?;
                    i += 1;
                }
                b'-' if line.get(i + 1) == Some(&b'1')
                    && !line.get(i + 2).is_some_and(u8::is_ascii_digit) =>
                {
                    out.push(Tok::MinusOne)?;
                    i += 2;
                }
                b'0'..=b'9' => {
                    let mut v: u64 = 0;
                    let start = i;
                    while i < n && line[i].is_ascii_digit() {
                        v = v
                            .checked_mul(10)
                            .and_then(|v| v.checked_add(u64::from(line[i] - b'0')))
                            .ok_or_else(|| {
                                format!(
                                    "the number {} does not fit 64 bits",
                                    String::from_utf8_lossy(&line[start..])
                                        .split_whitespace()
                                        .next()
                                        .unwrap_or("")
                                )
                            })?;
                        i += 1;
                    }
                    out.push(Tok::Num(v))?;
                }
                c if c.is_ascii_alphabetic() => {
                    let start = i;
                    while i < n && (line[i].is_ascii_alphanumeric() || line[i] == b'_') {
                        i += 1;
                    }
                    out.push(Tok::Word(&line[start..i]))?;
                }
                _ => {
                    let ch = String::from_utf8_lossy(&line[i..])
                        .chars()
                        .next()
                        .unwrap_or('?');
                    return Err(format!("unexpected character {ch:?}"));
                }
            }
        }
        Ok(())
    }

    fn line(&mut self, line: &[u8]) -> Result<(), String> {
        if self.in_block
            && !self.in_comment
            && !self.awaiting_brace
            && let Some(done) = self.plain_statement(line)
        {
            return done;
        }
        let mut toks = Toks {
            items: [Tok::Colon; MAX_TOKENS],
            len: 0,
        };
        self.tokens(line, &mut toks)?;
        if toks.len == 0 {
            return Ok(());
        }
        let mut t = &toks.items[..toks.len];
        if self.awaiting_brace {
            if t.first() != Some(&Tok::Open) {
                return Err(format!(
                    "expected \"{{\" to open the rank's block, found {}",
                    show(t.first())
                ));
            }
            self.awaiting_brace = false;
            self.in_block = true;
            t = &t[1..];
            if t.is_empty() {
                return Ok(());
            }
        }
        if !self.in_block {
            return self.outside(t);
        }
        self.block_line(t)
    }

    /// The tokens of a line inside a rank's block: a statement, a `}` that closes the block,
    /// or both.
    fn block_line(&mut self, t: &[Tok<'_>]) -> Result<(), String> {
        let last = t.len().saturating_sub(1);
        if t.iter().take(last).any(|x| *x == Tok::Close) {
            return Err(
                "a \"}\" before the end of the line: a block closes at the end of its line (one block a line), and a second \"}\" has no block to close"
                    .to_owned(),
            );
        }
        match t {
            [] => Ok(()),
            [Tok::Close] => self.close_block(),
            [statement @ .., Tok::Close] => {
                self.statement(statement)?;
                self.close_block()
            }
            [Tok::Word(b"rank"), ..] | [Tok::Word(b"num_ranks"), ..] => Err(format!(
                "{} inside the block of rank {}: is that block missing its \"}}\"?",
                show(t.first()),
                self.builder().next_rank()
            )),
            _ => self.statement(t),
        }
    }

    fn builder(&mut self) -> &mut DagBuilder {
        self.builder.as_mut().expect("num_ranks came first")
    }

    /// A line outside rank blocks: `num_ranks N` or `rank R {`.
    fn outside(&mut self, t: &[Tok<'_>]) -> Result<(), String> {
        match t {
            [Tok::Word(b"num_ranks"), Tok::Num(n)] => {
                if self.builder.is_some() {
                    return Err("num_ranks is given twice".to_owned());
                }
                let n = u32::try_from(*n).map_err(|_| format!("num_ranks {n} is too large"))?;
                let mut b = DagBuilder::new(n).map_err(|e| e.0)?;
                // no more operations than fit the memory the process may take
                b.limit(crate::schedule::lower::most_operations());
                self.builder = Some(b);
                Ok(())
            }
            [Tok::Word(b"num_ranks"), rest @ ..] => Err(format!(
                "expected the number of ranks after num_ranks, found {}",
                show(rest.first())
            )),
            [Tok::Word(b"rank"), Tok::Num(r), rest @ ..] => {
                let Some(b) = &self.builder else {
                    return Err(
                        "a rank block before num_ranks: the file must start with num_ranks N"
                            .to_owned(),
                    );
                };
                let expected = b.next_rank();
                if expected == b.ranks_total() {
                    return Err(format!(
                        "rank {r}: the schedule has num_ranks {} and every block was given",
                        b.ranks_total()
                    ));
                }
                if *r != u64::from(expected) {
                    return Err(format!(
                        "rank blocks come in order 0 to num_ranks - 1: expected rank {expected}, found rank {r}"
                    ));
                }
                self.builder().begin_rank().map_err(|e| e.0)?;
                self.labels.clear();
                match rest {
                    [Tok::Open, inside @ ..] => {
                        // `rank 0 {}` or `rank 0 { l1: calc 5 }` on one line
                        self.in_block = true;
                        self.block_line(inside)
                    }
                    [] => {
                        self.awaiting_brace = true;
                        Ok(())
                    }
                    [other, ..] => Err(format!("expected \"{{\" after rank {r}, found {other}")),
                }
            }
            [Tok::Word(b"rank"), rest @ ..] => Err(format!(
                "expected a rank number after \"rank\", found {}",
                show(rest.first())
            )),
            [Tok::Close, ..] => Err(
                "a \"}\" with no block open: one too many (or its block's \"{\" is missing)"
                    .to_owned(),
            ),
            [first, ..] => Err(format!(
                "expected num_ranks N or rank R {{, found {first}{}",
                if matches!(first, Tok::Word(_)) {
                    " (statements belong inside a rank's block)"
                } else {
                    ""
                }
            )),
            [] => Ok(()),
        }
    }

    fn close_block(&mut self) -> Result<(), String> {
        for (a, b, kind, line) in std::mem::take(&mut self.deferred) {
            let la = self.labels.get(&a);
            let lb = self.labels.get(&b);
            let rank = self.builder().next_rank();
            let done = match (la, lb) {
                (Some(x), Some(y)) => self.depend(&a, x, y, kind),
                (None, _) => Err(undefined(&a, rank)),
                (_, None) => Err(undefined(&b, rank)),
            };
            if done.is_err() {
                self.error_line = Some(line);
            }
            done?;
        }
        self.in_block = false;
        self.builder().end_rank().map_err(|e| e.0)
    }

    fn statement(&mut self, t: &[Tok<'_>]) -> Result<(), String> {
        match t {
            [Tok::Word(a), Tok::Word(kw), Tok::Word(b)]
                if *kw == b"requires" || *kw == b"irequires" =>
            {
                let kind = if *kw == b"requires" {
                    Dependency::Requires
                } else {
                    Dependency::Irequires
                };
                self.dependency(a, b, kind)
            }
            [Tok::Word(_), Tok::Word(kw), rest @ ..]
                if *kw == b"requires" || *kw == b"irequires" =>
            {
                Err(format!(
                    "expected one label after {}, found {}",
                    String::from_utf8_lossy(kw),
                    if rest.is_empty() {
                        "none".to_owned()
                    } else {
                        show(rest.get(1).or(rest.first()))
                    }
                ))
            }
            [Tok::Word(label), Tok::Colon, rest @ ..] => {
                if is_keyword(label) {
                    return Err(format!(
                        "\"{}\" is a keyword and cannot be a label",
                        String::from_utf8_lossy(label)
                    ));
                }
                let op = self.operation(rest)?;
                self.define(label, op)
            }
            _ => self.operation(t).map(|_| ()),
        }
    }

    /// `a requires b` (or `irequires`): now if both labels are defined, else when the block
    /// closes.
    fn dependency(&mut self, a: &[u8], b: &[u8], kind: Dependency) -> Result<(), String> {
        match (self.labels.get(a), self.labels.get(b)) {
            (Some(x), Some(y)) => self.depend(a, x, y, kind),
            _ => {
                self.deferred
                    .push((a.to_vec(), b.to_vec(), kind, self.line));
                Ok(())
            }
        }
    }

    /// Operation `x` (labelled `a`) waits for `y`.
    #[inline(always)]
    fn depend(&mut self, a: &[u8], x: u32, y: u32, kind: Dependency) -> Result<(), String> {
        if x == y {
            return Err(format!(
                "\"{}\" {} itself: an operation cannot wait for itself",
                String::from_utf8_lossy(a),
                kind.name()
            ));
        }
        self.builder().depend(x, y, kind).map_err(|e| e.0)
    }

    /// Gives operation `op` its label.
    fn define(&mut self, label: &[u8], op: u32) -> Result<(), String> {
        if !self.labels.insert(label, op) {
            return Err(format!(
                "label \"{}\" is already defined in this rank",
                String::from_utf8_lossy(label)
            ));
        }
        if !self.watch.is_empty() {
            self.note_label(label, op);
        }
        Ok(())
    }

    /// (A reading for [`locate`]) operation `op` of the open rank has `label`.
    #[cold]
    #[inline(never)]
    fn note_label(&mut self, label: &[u8], op: u32) {
        let rank = self.builder().next_rank();
        for w in self.watch.iter_mut().filter(|w| w.op == (rank, op)) {
            w.label = Some(String::from_utf8_lossy(label).into_owned());
        }
    }

    /// (A reading for [`locate`]) operation `op` of the open rank is on the current line.
    #[cold]
    #[inline(never)]
    fn note_line(&mut self, op: u32) {
        let (rank, line) = (self.builder().next_rank(), self.line);
        for w in self.watch.iter_mut().filter(|w| w.op == (rank, op)) {
            w.line = line;
        }
    }

    /// The common statements in their plain form, read without tokens: `label: send <n>b to
    /// <rank> [tag <n>]`, the same with `recv ... from`, `label: calc <n>`, and `a requires b`
    /// (or `irequires`), words one space apart, the line ending in `\n`. `None` for any other
    /// line (also one that this form would refuse), which the tokens then read; what is read
    /// here goes through the same steps as there, with the same errors.
    fn plain_statement(&mut self, line: &[u8]) -> Option<Result<(), String>> {
        let mut c = Cursor { s: line, i: 0 };
        let first = c.word()?;
        if is_keyword(first) {
            return None;
        }
        if c.eat(b": ") {
            let verb = c.word()?;
            let kind = match verb {
                b"send" => OpKind::Send,
                b"recv" => OpKind::Recv,
                b"calc" => OpKind::Calc,
                _ => return None,
            };
            let size = c.space_number()?;
            let (mut peer, mut tag) = (0, 0);
            if kind != OpKind::Calc {
                let dir: &[u8] = if kind == OpKind::Send {
                    b"b to"
                } else {
                    b"b from"
                };
                if !c.eat(dir) {
                    return None;
                }
                peer = u32::try_from(c.space_number()?)
                    .ok()
                    .filter(|&p| p != ANY)?;
                if c.eat(b" tag") {
                    // txt2bin keeps the low 32 bits of a tag
                    tag = c.space_number()? as u32;
                }
            }
            if !c.at_end() {
                return None;
            }
            return Some(
                self.add(kind, size, peer, tag, 0, 0)
                    .and_then(|op| self.define(first, op)),
            );
        }
        let kind = if c.eat(b" requires") {
            Dependency::Requires
        } else if c.eat(b" irequires") {
            Dependency::Irequires
        } else {
            return None;
        };
        if !c.eat(b" ") {
            return None;
        }
        let second = c.word()?;
        if !c.at_end() {
            return None;
        }
        Some(self.dependency(first, second, kind))
    }

    /// `send`, `recv` or `calc` with its fields; returns its local index.
    fn operation(&mut self, t: &[Tok<'_>]) -> Result<u32, String> {
        let (kind, rest) = match t {
            [Tok::Word(w), rest @ ..] if matches!(*w, b"send" | b"recv" | b"calc") => (*w, rest),
            [first, ..] => {
                return Err(format!(
                    "expected send, recv, calc, \"label:\" or \"a requires b\", found {first}"
                ));
            }
            [] => return Err("expected an operation after the label".to_owned()),
        };
        let verb = match kind {
            b"send" => "send",
            b"recv" => "recv",
            _ => "calc",
        };
        let mut rest = rest;
        let size = match rest {
            [Tok::Num(n), r @ ..] => {
                rest = r;
                *n
            }
            _ => {
                return Err(format!(
                    "expected {} after {verb}, found {}",
                    if kind == b"calc" {
                        "a time in ns"
                    } else {
                        "a size in bytes (e.g. 8b)"
                    },
                    show(rest.first())
                ));
            }
        };
        let mut peer = 0;
        if kind != b"calc" {
            match rest {
                [Tok::Word(b"b"), r @ ..] => rest = r,
                _ => {
                    return Err(format!(
                        "expected \"b\" after the size {size} (sizes are in bytes: {size}b), found {}",
                        show(rest.first())
                    ));
                }
            }
            let dir: &[u8] = if kind == b"send" { b"to" } else { b"from" };
            match rest {
                [Tok::Word(w), r @ ..] if *w == dir => rest = r,
                _ => {
                    return Err(format!(
                        "expected \"{}\" after the size of a {verb}, found {}",
                        String::from_utf8_lossy(dir),
                        show(rest.first())
                    ));
                }
            }
            peer = match rest {
                [Tok::Num(n), r @ ..] => {
                    rest = r;
                    u32::try_from(*n)
                        .ok()
                        .filter(|&p| p != ANY)
                        .ok_or_else(|| format!("rank {n} is too large"))?
                }
                [Tok::MinusOne, r @ ..] if kind == b"recv" => {
                    rest = r;
                    ANY
                }
                _ => {
                    return Err(format!(
                        "expected a rank{} after \"{}\", found {}",
                        if kind == b"recv" { " or -1 (any)" } else { "" },
                        String::from_utf8_lossy(dir),
                        show(rest.first())
                    ));
                }
            };
        }
        let (mut tag, mut cpu, mut nic) = (None, None, None);
        while let Some(field) = rest.first() {
            let name = match field {
                Tok::Word(w @ (b"tag" | b"cpu" | b"nic")) => *w,
                other => {
                    return Err(format!(
                        "expected {} or the end of the line, found {other}",
                        if kind == b"calc" {
                            "cpu"
                        } else {
                            "tag, cpu, nic"
                        }
                    ));
                }
            };
            let fname = match name {
                b"tag" => "tag",
                b"cpu" => "cpu",
                _ => "nic",
            };
            if kind == b"calc" && name != b"cpu" {
                return Err(format!("a calc has no {fname} (only cpu)"));
            }
            let value = match rest.get(1) {
                Some(Tok::Num(n)) => Some(*n),
                Some(Tok::MinusOne) if name == b"tag" => None,
                other => {
                    return Err(format!(
                        "expected a number{} after {fname}, found {}",
                        if name == b"tag" { " or -1" } else { "" },
                        show(other)
                    ));
                }
            };
            let slot = match name {
                b"tag" => &mut tag,
                b"cpu" => &mut cpu,
                _ => &mut nic,
            };
            if slot.is_some() {
                return Err(format!("{fname} is given twice"));
            }
            *slot = Some(value);
            rest = &rest[2..];
        }
        let small = |v: Option<Option<u64>>, what: &str| -> Result<u8, String> {
            match v.flatten() {
                None => Ok(0),
                Some(n) => u8::try_from(n).map_err(|_| format!("{what} {n} is beyond 255")),
            }
        };
        let cpu = small(cpu, "cpu")?;
        let nic = small(nic, "nic")?;
        // txt2bin keeps the low 32 bits of a tag
        let tag = match tag {
            None => 0,
            Some(None) => ANY,
            Some(Some(t)) => t as u32,
        };
        let kind = match kind {
            b"send" => OpKind::Send,
            b"recv" => OpKind::Recv,
            _ => OpKind::Calc,
        };
        self.add(kind, size, peer, tag, cpu, nic)
    }

    /// Adds an operation to the open rank; returns its local index.
    fn add(
        &mut self,
        kind: OpKind,
        size: u64,
        peer: u32,
        tag: u32,
        cpu: u8,
        nic: u8,
    ) -> Result<u32, String> {
        let b = self.builder();
        let r = match kind {
            OpKind::Send => b.send(peer, size, tag, cpu, nic),
            OpKind::Recv => b.recv(peer, size, tag, cpu, nic),
            _ => {
                let ticks = size
                    .checked_mul(TICKS_PER_NS)
                    .ok_or_else(|| format!("calc {size} ns is too long"))?;
                b.calc(ticks, cpu)
            }
        };
        let op = r.map_err(|e| e.0)?;
        if !self.watch.is_empty() {
            self.note_line(op);
        }
        Ok(op)
    }

    fn finish(&mut self) -> Result<Dag, String> {
        if self.in_comment {
            return Err("a /* comment is never closed".to_owned());
        }
        let Some(b) = self.builder.take() else {
            return Err("no num_ranks: a GOAL file starts with num_ranks N".to_owned());
        };
        if self.in_block || self.awaiting_brace {
            return Err(format!(
                "the block of rank {} is never closed (a missing \"}}\")",
                b.next_rank()
            ));
        }
        let given = b.next_rank();
        if given < b.ranks_total() {
            return Err(format!(
                "num_ranks is {} but the file has {given} rank block{}",
                b.ranks_total(),
                if given == 1 { "" } else { "s" }
            ));
        }
        b.finish().map_err(|e| e.0)
    }
}

fn undefined(label: &[u8], rank: u32) -> String {
    let label = String::from_utf8_lossy(label);
    format!(
        "label \"{label}\" is not defined in rank {rank}: labels are local to their rank's block; define it there (\"{label}: calc 0\") or correct the name"
    )
}

/// A position in a line, for [`Parser::plain_statement`].
struct Cursor<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    /// Skips `text` if the line goes on with it.
    #[inline(always)]
    fn eat(&mut self, text: &[u8]) -> bool {
        let found = self.s[self.i..].starts_with(text);
        if found {
            self.i += text.len();
        }
        found
    }

    /// A word as the tokens read one (a letter, then letters, digits and `_`), ended by
    /// neither of those.
    #[inline(always)]
    fn word(&mut self) -> Option<&'a [u8]> {
        let start = self.i;
        if !self.s.get(start)?.is_ascii_alphabetic() {
            return None;
        }
        let len = self.s[start..]
            .iter()
            .position(|&b| !(b.is_ascii_alphanumeric() || b == b'_'))?;
        self.i += len;
        Some(&self.s[start..self.i])
    }

    /// One space, then a number of 1 to 18 digits (which cannot overflow), ended by a
    /// non-digit.
    #[inline(always)]
    fn space_number(&mut self) -> Option<u64> {
        if !self.eat(b" ") {
            return None;
        }
        let start = self.i;
        let mut v: u64 = 0;
        while let Some(&d) = self.s.get(self.i).filter(|d| d.is_ascii_digit()) {
            v = v * 10 + u64::from(d - b'0');
            self.i += 1;
            if self.i - start > 18 {
                return None;
            }
        }
        (self.i > start).then_some(v)
    }

    /// Whether only the line's `\n` is left.
    #[inline(always)]
    fn at_end(&self) -> bool {
        &self.s[self.i..] == b"\n"
    }
}

fn is_keyword(w: &[u8]) -> bool {
    matches!(
        w,
        b"send" | b"recv" | b"calc" | b"requires" | b"irequires" | b"rank" | b"num_ranks"
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schedule::dag::OpKind;

    fn read_str(text: &str) -> Result<Dag, GoalError> {
        parse(text, Path::new("t.goal"))
    }

    #[test]
    fn operations_are_located_only_in_the_file_that_ran() {
        let text = "num_ranks 2\nrank 0 {\nl1: calc 5\nl2: send 8b to 1\n}\nrank 1 {\nx: recv 8b from 0\n}\n";
        let path = std::env::temp_dir().join(format!("parsim-locate-{}.goal", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let digest = xxhash_rust::xxh3::xxh3_64(text.as_bytes());
        let places = locate(&path, digest, &[(0, 1), (1, 0)]);
        let at = |line: usize, label: &str| Some(format!("{}:{line}, {label}", path.display()));
        assert_eq!(places, vec![at(4, "l2"), at(7, "x")]);
        // the file was edited since it ran: its lines are not the ones that ran
        assert_eq!(locate(&path, digest ^ 1, &[(0, 1)]), vec![None]);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    fn every_statement_form() {
        let d = read_str(
            "// a comment\nnum_ranks 2\n\nrank 0 {\nl1: send 8b to 1 tag 5\n  l2:calc 1000 cpu 1 // trailing\n\
             l2 irequires l1\nsend 0 b to 1\n}\nrank 1\n{\n/* two\nlines */ x_1: recv 8b from -1 tag -1 nic 2\n\
             y: recv 0b from 0 nic 1 tag 4294967301\ny requires x_1\n}\n",
        )
        .unwrap();
        assert_eq!(d.len(), 5);
        assert_eq!(d.cpus(), 2);
        assert_eq!(d.nics(), 3);
        let o = |i| d.op(i);
        assert_eq!(
            (o(0).kind, o(0).peer, o(0).size, o(0).tag),
            (OpKind::Send, 1, 8, 5)
        );
        assert_eq!(
            (o(1).kind, o(1).size, o(1).cpu),
            (OpKind::Calc, 1_000_000, 1)
        );
        assert_eq!((o(2).kind, o(2).size, o(2).tag), (OpKind::Send, 0, 0));
        assert_eq!((o(3).peer, o(3).tag, o(3).nic), (ANY, ANY, 2));
        assert_eq!(o(4).tag, 5, "64-bit tags keep their low 32 bits");
        assert_eq!(
            d.dependents(0).collect::<Vec<_>>(),
            [(1, Dependency::Irequires)]
        );
        assert_eq!(
            d.dependents(3).collect::<Vec<_>>(),
            [(4, Dependency::Requires)]
        );
    }

    /// The plain lines read without tokens give what the tokens give: the same lines with
    /// extra spaces (which the tokens alone read) make the same schedule and the same errors.
    #[test]
    fn plain_lines_read_as_the_tokens_read_them() {
        let plain = "num_ranks 3\nrank 0 {\nl0: send 8b to 1 tag 2147483649\nl1: recv 4294967297b from 2\n\
                     x_2: calc 12\nl3: send 18446744073709551615b to 2 tag 99999999999\nl1 requires l0\n\
                     x_2 irequires l1\nl3 requires x_2\n}\nrank 1 {\nl0: recv 8b from 0 tag 2147483649\n}\n\
                     rank 2 {\nl0: send 4294967296b to 0\nl1: recv 1b from 0 tag 1410065407\n}\n";
        let spaced = plain
            .replace(": ", " :  ")
            .replace(" requires ", "  requires ");
        assert_ne!(plain, spaced);
        let (a, b) = (read_str(plain).unwrap(), read_str(&spaced).unwrap());
        assert_eq!(a, b);
        let o = |i| a.op(i);
        assert_eq!(
            (o(1).size, o(3).size, o(5).size),
            (1 << 32 | 1, u64::MAX, 1 << 32)
        );
        assert_eq!((o(0).tag, o(3).tag), (1 << 31 | 1, 1_215_752_191));
        assert_eq!(o(2).size, 12_000);
        for bad in [
            "l0: send 8b to 3 tag 0\n",
            "l0: calc 18446744073709552\n",
            "l0: calc 1\nl0: calc 2\n",
            "l0: recv 8b from 4294967295\n",
            "l0: send 8b to 99999999999999999999\n",
            "l1 requires l0\n",
        ] {
            let text = format!("num_ranks 3\nrank 0 {{\n{bad}}}\n");
            let spaced = text
                .replace(": ", " :  ")
                .replace(" requires ", "  requires ");
            let (e, f) = (read_str(&text).unwrap_err(), read_str(&spaced).unwrap_err());
            assert_eq!(e, f, "{bad}");
        }
    }

    /// A differential fuzz of the two readings: random schedules of plain, near-plain and
    /// broken lines (labels that are keywords, numbers at every width boundary, missing and
    /// extra words, tabs, comments, one character inserted or deleted), each read as written
    /// (the plain form where it applies) and with every space doubled (the tokens alone), must
    /// give the same schedule or the same error.
    #[test]
    fn random_lines_read_the_same_with_and_without_tokens() {
        let (mut next, mut mutate) = (
            crate::rng::xorshift(2211_u64),
            crate::rng::xorshift(1122_u64),
        );
        let mut pick = |options: &[&'static str]| options[(next() % options.len() as u64) as usize];
        let labels = [
            "l0", "l1", "l2", "x_1", "a", "send", "rank", "tag", "b", "l0l", "9x",
        ];
        let numbers = [
            "0",
            "1",
            "3",
            "8",
            "2147483649",
            "4294967295",
            "4294967296",
            "18446744073709551615",
            "18446744073709551616",
            "99999999999999999999",
            "-1",
        ];
        let mut parsed = (0, 0);
        for case in 0..50_000 {
            let mut text = format!("num_ranks {}\n", pick(&["1", "2", "3"]));
            for r in 0..3 {
                text.push_str(&format!("rank {r} {{\n"));
                for _ in 0..(case % 7) {
                    let (l, m, n, t) =
                        (pick(&labels), pick(&labels), pick(&numbers), pick(&numbers));
                    let peer = pick(&["0", "1", "2", "3", "-1", "4294967295"]);
                    let line = match pick(&["send", "recv", "calc", "dep", "odd"]) {
                        "send" => format!("{l}: send {n}b to {peer}"),
                        "recv" => format!("{l}: recv {n}b from {peer}"),
                        "calc" => format!("{l}: calc {n}"),
                        "dep" => format!("{l} {} {m}", pick(&["requires", "irequires"])),
                        _ => pick(&[
                            "",
                            "// a comment",
                            "l0: send 8 b to 1",
                            "l0:send 8b to 1",
                            "l0: send 8b to 1 tag",
                            "\tl0: calc 1",
                            "l0: calc 1 ",
                            "l0: calc 1 cpu 1",
                            "l1: recv 8b from 0 tag 1 nic 2",
                            "l0: send 8b to 1 tag 2 /* c */",
                            "l0 requires",
                            "requires l0",
                            "l0: sendx 8b to 1",
                        ])
                        .to_owned(),
                    };
                    let mut line = if pick(&["tag", "", ""]) == "tag" && !line.contains("calc") {
                        format!("{line} tag {t}")
                    } else {
                        line
                    };
                    if mutate() % 8 == 0 && !line.is_empty() {
                        let at = (mutate() % line.len() as u64) as usize;
                        if line.is_char_boundary(at) {
                            if mutate() % 2 == 0 {
                                line.remove(at);
                            } else {
                                line.insert(
                                    at,
                                    pick(&[" ", ":", "b", "0", "9", "a", "\t", "{"])
                                        .chars()
                                        .next()
                                        .unwrap(),
                                );
                            }
                        }
                    }
                    text.push_str(&line);
                    text.push('\n');
                }
                text.push_str("}\n");
            }
            let doubled = text.replace(' ', "  ");
            match (read_str(&text), read_str(&doubled)) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a, b, "{text}");
                    parsed.0 += 1;
                }
                (Err(a), Err(b)) => {
                    assert_eq!(a, b, "{text}");
                    parsed.1 += 1;
                }
                (a, b) => panic!("{text}\nas written: {a:?}\nspaces doubled: {b:?}"),
            }
        }
        // both outcomes are exercised
        assert!(parsed.0 > 1500 && parsed.1 > 1500, "{parsed:?}");
    }

    #[test]
    fn forward_references_resolve_when_the_block_closes() {
        let d = read_str("num_ranks 1\nrank 0 {\nb requires a\na: calc 1\nb: calc 2\n}\n").unwrap();
        assert_eq!(
            d.dependents(0).collect::<Vec<_>>(),
            [(1, Dependency::Requires)]
        );
    }

    #[test]
    fn errors_name_the_line_and_what_is_wrong() {
        let err = |text: &str| read_str(text).unwrap_err().to_string();
        assert_eq!(
            err("num_ranks 2\nrank 0 {\nl1: send 8 to 1\n}\n"),
            "t.goal:3: expected \"b\" after the size 8 (sizes are in bytes: 8b), found \"to\""
        );
        assert!(err("rank 0 {\n").contains("t.goal:1: a rank block before num_ranks"));
        assert!(err("num_ranks 2\nrank 1 {\n}\n").contains("expected rank 0, found rank 1"));
        assert!(
            err("num_ranks 2\nrank 0 {\n}\n")
                .contains("num_ranks is 2 but the file has 1 rank block")
        );
        assert!(
            err("num_ranks 2\nrank 0 {\nsend 1b to 2\n}\n").contains("t.goal:3: a send to rank 2")
        );
        assert!(
            err("num_ranks 1\nrank 0 {\na: calc 1\na: calc 2\n}\n")
                .contains("t.goal:4: label \"a\" is already")
        );
        assert!(
            err("num_ranks 1\nrank 0 {\na requires b\n}\n")
                .contains("t.goal:3: label \"a\" is not defined in rank 0")
        );
        assert!(
            err("num_ranks 1\nrank 0 {\ncalc 5 nic 1\n}\n").contains("t.goal:3: a calc has no nic")
        );
        assert!(err("num_ranks 1\nrank 0 {\nsend 1b from 0\n}\n").contains("expected \"to\""));
        assert!(err("num_ranks 1\nrank 0 {\ncalc 1\n").contains("never closed"));
        assert!(
            err("num_ranks 1\nrank 0 {\nrecv 1b from 0 cpu 300\n}\n")
                .contains("cpu 300 is beyond 255")
        );
        assert!(err("num_ranks 1\nrank 0 {\ncalc 1 $\n}\n").contains("unexpected character '$'"));
    }
}
