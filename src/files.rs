//! The one way parsim reads the files it is given and writes the files it makes.
//!
//! **Reading** ([`read_text`], [`open_lines`], [`open_stream`]): only a regular file is read. A
//! named pipe, a device (`/dev/zero`, `/dev/urandom`), a socket or a directory is refused before
//! it is opened (opening a pipe with no writer would wait forever, and a device never ends), with
//! a message that says what the path is. A file larger than the limit of its kind ([`Limit`]) is
//! refused with its size and the limit; the read itself stops at the limit too (a file can grow
//! while it is read, and some files report no size), so memory stays proportional to the limit.
//! Every file read is remembered as an input of the command, and the digest of its content is
//! given to a [`recording`], so that a result's identity covers the files it was computed from.
//! Standard input is read only where a command was given `-` for a scenario ([`read_stdin`]):
//! once, to its end, under the same limit.
//!
//! **Writing** ([`Output`], [`stdout`]): a file is written to a temporary file beside it,
//! created under a fresh random name (never an existing name, never through a link planted
//! there), and renamed over the path only when everything was written, so a failed run leaves
//! nothing half written. An output is refused before anything is written ([`check_outputs`],
//! which commands call before they run, so that the refusal comes first) when it is a file this
//! process has read (every input is read here, and remembered), when it is a symbolic link
//! (`/dev/stdout` is one), when it exists and is not a regular file (a device such as
//! `/dev/null`, a named pipe, a socket, a directory), or when two outputs of one command name
//! the same file.
//! An error (a full disk) names the file, or "standard output".

use std::fmt;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

/// How large an input of each kind may be.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    /// A scenario file (TOML) or a machine profile: 8 MiB, some 80,000 program operations.
    Scenario,
    /// A trace of samples or a CSV of measurements: 256 MiB, some 20 million numbers.
    Data,
    /// A shard file written by parsim: 256 MiB.
    Shard,
    /// A GOAL schedule: 64 GiB (read as a stream; what it holds is bounded by its operations,
    /// at most 2^30).
    Goal,
}

impl Limit {
    /// The largest size, in bytes.
    pub const fn bytes(self) -> u64 {
        match self {
            Limit::Scenario => 8 << 20,
            Limit::Data | Limit::Shard => 256 << 20,
            Limit::Goal => 64 << 30,
        }
    }

    /// What the limit is for, in messages.
    fn what(self) -> &'static str {
        match self {
            Limit::Scenario => "a scenario or profile",
            Limit::Data => "a trace or measurements file",
            Limit::Shard => "a shard file",
            Limit::Goal => "a GOAL schedule",
        }
    }
}

/// Why a file could not be read or written: the file and the reason (shown as `cannot read
/// PATH: REASON` for an error of the operating system, `PATH: REASON` otherwise).
#[derive(Debug, thiserror::Error)]
#[error("{}", self.describe())]
pub struct FileError {
    /// The file (as given).
    pub path: PathBuf,
    /// What is wrong with it.
    pub problem: FileProblem,
}

/// What is wrong with a file ([`FileError`] names the file).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FileProblem {
    /// The path is not a regular file.
    #[error(
        "is {0}, not a regular file (parsim reads only files: a pipe or a device could wait or run forever)"
    )]
    NotAFile(&'static str),
    /// The file is larger than its kind allows.
    #[error("is {size} bytes or more, beyond the limit of {} bytes ({} MiB) for {}", limit.bytes(), limit.bytes() >> 20, limit.what())]
    TooLarge {
        /// Its size (or how much was read before stopping).
        size: u64,
        /// The limit that applies.
        limit: Limit,
    },
    /// The file is not UTF-8 text.
    #[error("is not UTF-8 text (at byte {0})")]
    NotText(u64),
    /// An output is one of the command's inputs.
    #[error("is also an input of this command ({}): writing it would destroy that input; choose another file", .0.display())]
    OutputIsInput(PathBuf),
    /// An output exists and is not a regular file.
    #[error(
        "is {0}, not a regular file: parsim writes its results only to regular files (writing into a device or pipe could block or destroy what it stands for); give a file's path, or leave the option out where standard output is the default"
    )]
    OutputNotAFile(&'static str),
    /// A folder to write into is something else.
    #[error("is {0}, not a folder: give a folder to write into (it is made if it does not exist)")]
    NotAFolder(&'static str),
    /// An output names a folder.
    #[error("ends in `/`, a folder's name: give a file's")]
    OutputIsFolder,
    /// An output is a symbolic link.
    #[error("is a symbolic link (to {}): parsim neither writes through a link nor replaces it; give the file's own path, or another name", .0.display())]
    OutputIsLink(PathBuf),
    /// Two outputs of one command name the same file.
    #[error("is also given for another output of this command ({}): one would replace the other; give each its own file", .0.display())]
    OutputTwice(PathBuf),
    /// Reading or writing failed.
    #[error("cannot {verb} it: {source}")]
    Io {
        /// "read" or "write".
        verb: &'static str,
        /// The operating system's error.
        source: std::io::Error,
    },
}

impl FileError {
    /// The message, naming the file.
    fn describe(&self) -> String {
        match &self.problem {
            FileProblem::Io { verb, source } => {
                format!("cannot {verb} {}: {source}", self.path.display())
            }
            other => format!("{}: {other}", self.path.display()),
        }
    }

    /// The message without the file's name, for a message that names the file already:
    /// `cannot read it: REASON` for an error of the operating system, the reason otherwise.
    pub fn unnamed(&self) -> String {
        match &self.problem {
            FileProblem::Io { verb, source } => format!("cannot {verb} it: {source}"),
            other => other.to_string(),
        }
    }

    /// The reason alone, for a message that names the file already.
    pub fn reason(&self) -> String {
        match &self.problem {
            FileProblem::Io { source, .. } => source.to_string(),
            other => other.to_string(),
        }
    }

    fn new(path: &Path, problem: FileProblem) -> FileError {
        FileError {
            path: path.to_owned(),
            problem,
        }
    }

    fn io(verb: &'static str, path: &Path, source: std::io::Error) -> FileError {
        FileError::new(path, FileProblem::Io { verb, source })
    }
}

/// What kind of thing `meta` describes, when it is not a regular file.
fn not_a_file(meta: &std::fs::Metadata) -> Option<&'static str> {
    let t = meta.file_type();
    if t.is_file() {
        return None;
    }
    if t.is_dir() {
        return Some("a directory");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return Some("a named pipe");
        }
        if t.is_char_device() {
            return Some("a character device");
        }
        if t.is_block_device() {
            return Some("a block device");
        }
        if t.is_socket() {
            return Some("a socket");
        }
    }
    Some("not a regular file")
}

/// The files read so far by this process, with their identities.
static READ: std::sync::Mutex<Vec<(PathBuf, Identity)>> = std::sync::Mutex::new(Vec::new());

/// Remembers that `path` (opened as `file`) is an input.
fn remember(path: &Path, meta: &std::fs::Metadata) {
    if let Some(id) = identity_of(path, meta) {
        let mut read = READ
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !read.iter().any(|(_, i)| *i == id) {
            read.push((path.to_owned(), id));
        }
    }
}

/// Every file this process has read through this module: the inputs no output may replace.
pub fn inputs() -> Vec<PathBuf> {
    READ.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .iter()
        .map(|(p, _)| p.clone())
        .collect()
}

/// Opens `path` for reading if it is a regular file no larger than `limit`.
fn open(path: &Path, limit: Limit) -> Result<std::fs::File, FileError> {
    // the kind is checked before opening: opening a pipe with no writer waits forever
    let meta = std::fs::metadata(path).map_err(|e| FileError::io("read", path, e))?;
    if let Some(kind) = not_a_file(&meta) {
        return Err(FileError::new(path, FileProblem::NotAFile(kind)));
    }
    let file = std::fs::File::open(path).map_err(|e| FileError::io("read", path, e))?;
    // and again on what was opened (the path may have been replaced in between)
    let meta = file
        .metadata()
        .map_err(|e| FileError::io("read", path, e))?;
    if let Some(kind) = not_a_file(&meta) {
        return Err(FileError::new(path, FileProblem::NotAFile(kind)));
    }
    if meta.len() > limit.bytes() {
        return Err(FileError::new(
            path,
            FileProblem::TooLarge {
                size: meta.len(),
                limit,
            },
        ));
    }
    remember(path, &meta);
    Ok(file)
}

/// What a command line writes for a scenario to be read from standard input.
pub const STDIN_ARGUMENT: &str = "-";

/// What errors and reports call a scenario read from standard input.
pub const STDIN_NAME: &str = "<stdin>";

/// True when `path` is [`STDIN_ARGUMENT`].
pub fn is_stdin(path: &Path) -> bool {
    path.as_os_str() == STDIN_ARGUMENT
}

/// What standard input held when [`read_stdin`] first read it (or why it could not be read):
/// the text is read once and every later call gets it again, as a command that loads its
/// scenarios twice (a shard's planning, then its run) needs.
static STDIN_TEXT: std::sync::OnceLock<Result<String, StdinProblem>> = std::sync::OnceLock::new();

/// Why standard input could not be read, kept to be reported again on a later call.
#[derive(Clone, Debug)]
enum StdinProblem {
    TooLarge(u64, Limit),
    NotText(u64),
    Io(std::io::ErrorKind, String),
}

/// The whole text of standard input, at most `limit` bytes, read to its end on the first call
/// (a terminal is read until end of input, Ctrl-D); errors name [`STDIN_NAME`].
pub fn read_stdin(limit: Limit) -> Result<String, FileError> {
    let read = STDIN_TEXT.get_or_init(|| {
        let mut bytes = Vec::new();
        std::io::stdin()
            .lock()
            .take(limit.bytes() + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| StdinProblem::Io(e.kind(), e.to_string()))?;
        if bytes.len() as u64 > limit.bytes() {
            return Err(StdinProblem::TooLarge(bytes.len() as u64, limit));
        }
        String::from_utf8(bytes)
            .map_err(|e| StdinProblem::NotText(e.utf8_error().valid_up_to() as u64))
    });
    let name = Path::new(STDIN_NAME);
    read.clone().map_err(|p| match p {
        StdinProblem::TooLarge(size, limit) => {
            FileError::new(name, FileProblem::TooLarge { size, limit })
        }
        StdinProblem::NotText(at) => FileError::new(name, FileProblem::NotText(at)),
        StdinProblem::Io(kind, text) => {
            FileError::io("read", name, std::io::Error::new(kind, text))
        }
    })
}

/// The whole text of a regular file of at most `limit` bytes.
pub fn read_text(path: &Path, limit: Limit) -> Result<String, FileError> {
    let file = open(path, limit)?;
    let mut bytes = Vec::new();
    file.take(limit.bytes() + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::io("read", path, e))?;
    if bytes.len() as u64 > limit.bytes() {
        return Err(FileError::new(
            path,
            FileProblem::TooLarge {
                size: bytes.len() as u64,
                limit,
            },
        ));
    }
    record(xxhash_rust::xxh3::xxh3_64(&bytes));
    String::from_utf8(bytes).map_err(|e| {
        FileError::new(
            path,
            FileProblem::NotText(e.utf8_error().valid_up_to() as u64),
        )
    })
}

thread_local! {
    /// The digests of the files read on this thread while [`recording`] runs.
    static RECORDED: std::cell::RefCell<Option<Vec<u64>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` and returns, with its result, the digest (XXH3, 64 bits) of the content of every
/// file it read through this module on this thread, in the order they were read to their end:
/// what a result computed from them depends on beyond its own text (a GOAL schedule, a trace,
/// a machine profile).
pub fn recording<T>(f: impl FnOnce() -> T) -> (T, Vec<u64>) {
    let outer = RECORDED.with(|r| r.borrow_mut().replace(Vec::new()));
    let result = f();
    let digests = RECORDED.with(|r| {
        let mut r = r.borrow_mut();
        let mine = r.take().unwrap_or_default();
        if let Some(mut outer) = outer {
            // a recording inside another: the outer one read these files too
            outer.extend(&mine);
            *r = Some(outer);
        }
        mine
    });
    (result, digests)
}

/// Notes the digest of a file read to its end, if a [`recording`] runs.
fn record(digest: u64) {
    RECORDED.with(|r| {
        if let Some(list) = r.borrow_mut().as_mut() {
            list.push(digest);
        }
    });
}

/// A regular file of at most `limit` bytes, read as a buffered stream ([`BufRead`]): reading
/// past the limit fails with [`FileProblem::TooLarge`], and a stream read to its end counts
/// for [`recording`].
pub fn open_stream(path: &Path, limit: Limit, capacity: usize) -> Result<Stream, FileError> {
    let file = open(path, limit)?;
    Ok(Stream {
        path: path.to_owned(),
        reader: BufReader::with_capacity(capacity, file.take(limit.bytes() + 1)),
        limit,
        read: 0,
        digest: Box::default(),
        ended: false,
    })
}

/// A file read as a stream, from [`open_stream`].
pub struct Stream {
    path: PathBuf,
    reader: BufReader<std::io::Take<std::fs::File>>,
    limit: Limit,
    read: u64,
    digest: Box<xxhash_rust::xxh3::Xxh3Default>,
    ended: bool,
}

impl fmt::Debug for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stream")
            .field("path", &self.path)
            .field("read", &self.read)
            .finish()
    }
}

impl Read for Stream {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let buf = self.fill_buf()?;
            let n = buf.len().min(out.len());
            out[..n].copy_from_slice(&buf[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Stream {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.read > self.limit.bytes() {
            let e = FileError::new(
                &self.path,
                FileProblem::TooLarge {
                    size: self.read,
                    limit: self.limit,
                },
            );
            return Err(std::io::Error::other(e));
        }
        let path = &self.path;
        let buf = self.reader.fill_buf().map_err(|e| {
            let kind = e.kind();
            std::io::Error::new(kind, FileError::io("read", path, e))
        })?;
        if buf.is_empty() && !self.ended {
            self.ended = true;
            record(self.digest.digest());
        }
        Ok(buf)
    }

    fn consume(&mut self, n: usize) {
        self.digest.update(&self.reader.buffer()[..n]);
        self.read += n as u64;
        self.reader.consume(n);
    }
}

/// The lines of a regular file of at most `limit` bytes, read as a stream (one line in memory
/// at a time), each with its number from 1; a line that cannot be read ends the iteration with
/// its error.
pub fn open_lines(path: &Path, limit: Limit) -> Result<Lines, FileError> {
    let file = open(path, limit)?;
    Ok(Lines {
        path: path.to_owned(),
        reader: BufReader::new(file.take(limit.bytes() + 1)),
        limit,
        read: 0,
        number: 0,
        line: String::new(),
        done: false,
        digest: Box::default(),
    })
}

/// The lines of a file, from [`open_lines`].
pub struct Lines {
    path: PathBuf,
    reader: BufReader<std::io::Take<std::fs::File>>,
    limit: Limit,
    read: u64,
    number: usize,
    line: String,
    done: bool,
    digest: Box<xxhash_rust::xxh3::Xxh3Default>,
}

impl fmt::Debug for Lines {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Lines")
            .field("path", &self.path)
            .field("number", &self.number)
            .finish()
    }
}

impl Lines {
    /// The next line (without its line end) and its number, `None` at the end.
    pub fn next_line(&mut self) -> Option<Result<(usize, &str), FileError>> {
        if self.done {
            return None;
        }
        self.line.clear();
        match self.reader.read_line(&mut self.line) {
            Ok(0) => {
                self.done = true;
                record(self.digest.digest());
                None
            }
            Ok(n) => {
                self.read += n as u64;
                self.digest.update(self.line.as_bytes());
                if self.read > self.limit.bytes() {
                    self.done = true;
                    return Some(Err(FileError::new(
                        &self.path,
                        FileProblem::TooLarge {
                            size: self.read,
                            limit: self.limit,
                        },
                    )));
                }
                self.number += 1;
                let line = self.line.trim_end_matches(['\n', '\r']);
                Some(Ok((self.number, line)))
            }
            Err(e) => {
                self.done = true;
                let e = if e.kind() == std::io::ErrorKind::InvalidData {
                    FileError::new(&self.path, FileProblem::NotText(self.read))
                } else {
                    FileError::io("read", &self.path, e)
                };
                Some(Err(e))
            }
        }
    }
}

/// The identity of a file (device and inode where there are such), to tell whether two paths
/// name the same file whatever links or spellings they go through.
#[cfg(unix)]
type Identity = (u64, u64);

/// The identity of a file: its canonical path.
#[cfg(not(unix))]
type Identity = PathBuf;

#[cfg(unix)]
fn identity_of(_: &Path, meta: &std::fs::Metadata) -> Option<Identity> {
    use std::os::unix::fs::MetadataExt;
    Some((meta.dev(), meta.ino()))
}

#[cfg(not(unix))]
fn identity_of(path: &Path, _: &std::fs::Metadata) -> Option<Identity> {
    std::fs::canonicalize(path).ok()
}

/// The identity of the existing file at `path`.
fn identity(path: &Path) -> Option<Identity> {
    identity_of(path, &std::fs::metadata(path).ok()?)
}

/// Refuses, before a command runs, what no output may be: one of `inputs` or a file this process
/// has read ([`inputs`]), by any path; a symbolic link (writing through it would write where it
/// points, a rename would replace it: `/dev/stdout` is one); something that exists and is not a
/// regular file (a device, a named pipe, a socket, a directory: a rename would replace it, and
/// writing into it could block or destroy what it stands for); and a file that two of `outputs`
/// name (the second would replace the first).
pub fn check_outputs<'a>(
    outputs: impl IntoIterator<Item = &'a Path>,
    inputs: &[&Path],
) -> Result<(), FileError> {
    let read = self::inputs();
    let inputs: Vec<_> = inputs
        .iter()
        .copied()
        .chain(read.iter().map(PathBuf::as_path))
        .filter_map(|p| identity(p).map(|id| (p, id)))
        .collect();
    let mut seen: Vec<(&Path, Place)> = Vec::new();
    for output in outputs {
        if output.as_os_str().to_string_lossy().ends_with('/') {
            return Err(FileError::new(output, FileProblem::OutputIsFolder));
        }
        if std::fs::symlink_metadata(output).is_ok_and(|m| m.file_type().is_symlink()) {
            let target = std::fs::read_link(output).unwrap_or_default();
            return Err(FileError::new(output, FileProblem::OutputIsLink(target)));
        }
        if let Ok(meta) = std::fs::metadata(output) {
            if let Some(kind) = not_a_file(&meta) {
                return Err(FileError::new(output, FileProblem::OutputNotAFile(kind)));
            }
            let id = identity_of(output, &meta);
            if let Some((input, _)) = inputs.iter().find(|(_, i)| Some(i) == id.as_ref()) {
                return Err(FileError::new(
                    output,
                    FileProblem::OutputIsInput(input.to_path_buf()),
                ));
            }
        }
        let place = place(output);
        if let Some((first, _)) = seen.iter().find(|(_, p)| *p == place) {
            return Err(FileError::new(
                output,
                FileProblem::OutputTwice(first.to_path_buf()),
            ));
        }
        seen.push((output, place));
    }
    Ok(())
}

/// Makes the folder `dir` (and its parents) to write files into; refused when it exists and is
/// something else (a file, a device), with what it is.
pub fn make_folder(dir: &Path) -> Result<(), FileError> {
    if let Ok(meta) = std::fs::metadata(dir)
        && !meta.is_dir()
    {
        let kind = not_a_file(&meta).unwrap_or("a file");
        return Err(FileError::new(dir, FileProblem::NotAFolder(kind)));
    }
    std::fs::create_dir_all(dir).map_err(|e| FileError::io("write", dir, e))
}

/// Where an output goes, to tell two outputs of one file apart from two files: the existing
/// file's identity, or the folder ([`resolved_folder`]) and the name of one still to be written.
#[derive(Debug, PartialEq, Eq)]
enum Place {
    Existing(Identity),
    New(PathBuf, std::ffi::OsString),
}

fn place(path: &Path) -> Place {
    if let Some(id) = identity(path) {
        return Place::Existing(id);
    }
    Place::New(
        resolved_folder(&folder_of(path)),
        path.file_name().unwrap_or_default().to_owned(),
    )
}

/// The folder a file named `path` is in (`.` for a bare name).
pub fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    }
}

/// Folder `dir` by one name however it is spelled: its canonical path if it exists, else its
/// absolute path with `.` and `..` taken out (a folder still to be made).
pub fn resolved_folder(dir: &Path) -> PathBuf {
    if let Ok(canonical) = std::fs::canonicalize(dir) {
        return canonical;
    }
    let absolute = std::path::absolute(dir).unwrap_or_else(|_| dir.to_owned());
    let mut clean = PathBuf::new();
    for part in absolute.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                clean.pop();
            }
            other => clean.push(other),
        }
    }
    clean
}

/// A file being written: to a temporary file beside it, created under a fresh random name that
/// nothing had (never opened through a link or over an existing file, readable as a file the
/// user creates is), and renamed over the path by [`Output::commit`]; dropped without a commit,
/// the temporary file is removed and the path left as it was.
pub struct Output {
    path: PathBuf,
    file: Option<std::io::BufWriter<tempfile::NamedTempFile>>,
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output")
            .field("path", &self.path)
            .field("temp", &self.file.as_ref().map(|w| w.get_ref().path()))
            .finish()
    }
}

impl Output {
    /// Starts writing `path`; refused as [`check_outputs`] refuses it.
    pub fn create(path: &Path) -> Result<Output, FileError> {
        check_outputs([path], &[])?;
        let name = path.file_name().ok_or_else(|| {
            FileError::io(
                "write",
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
            )
        })?;
        let folder = folder_of(path);
        let mut prefix = std::ffi::OsString::from(".");
        prefix.push(name);
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix).suffix(".parsim-tmp");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // what `File::create` asks for (the umask applies): not tempfile's private 0600
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let temp = builder
            .tempfile_in(folder)
            .map_err(|e| FileError::io("write", path, e))?;
        Ok(Output {
            path: path.to_owned(),
            file: Some(std::io::BufWriter::new(temp)),
        })
    }

    /// The path being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, closes and renames the temporary file over the path.
    pub fn commit(mut self) -> Result<(), FileError> {
        let file = self.file.take().expect("not yet committed");
        let temp = file
            .into_inner()
            .map_err(|e| FileError::writing(&self.path, e.into_error()))?;
        temp.as_file()
            .sync_all()
            .map_err(|e| FileError::io("write", &self.path, e))?;
        temp.persist(&self.path)
            .map_err(|e| FileError::io("write", &self.path, e.error))?;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let path = &self.path;
        self.file
            .as_mut()
            .expect("not yet committed")
            .write(buf)
            .map_err(|e| named(path, e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let path = &self.path;
        self.file
            .as_mut()
            .expect("not yet committed")
            .flush()
            .map_err(|e| named(path, e))
    }
}

/// An I/O error that says which file it happened to (the kind kept, so that a closed pipe is
/// still recognised).
fn named(path: &Path, e: std::io::Error) -> std::io::Error {
    let kind = e.kind();
    std::io::Error::new(kind, FileError::io("write", path, e))
}

impl FileError {
    /// The error of writing `path`, from an I/O error that may already name it (an
    /// [`Output`]'s writes do).
    pub fn writing(path: &Path, e: std::io::Error) -> FileError {
        if !e.get_ref().is_some_and(|inner| inner.is::<FileError>()) {
            return FileError::io("write", path, e);
        }
        let kind = e.kind();
        match e.into_inner().map(|inner| inner.downcast::<FileError>()) {
            Some(Ok(named)) => *named,
            Some(Err(other)) => FileError::io("write", path, std::io::Error::new(kind, other)),
            None => FileError::io("write", path, std::io::Error::from(kind)),
        }
    }
}

/// Standard output, whose errors say that it is standard output (`cannot write standard
/// output: No space left on device`), with the kind kept so that a closed pipe still ends
/// parsim quietly.
#[derive(Debug)]
pub struct Stdout(std::io::StdoutLock<'static>);

/// Standard output, locked for the caller ([`Stdout`]).
pub fn stdout() -> Stdout {
    Stdout(std::io::stdout().lock())
}

/// What errors of standard output name.
const STDOUT: &str = "standard output";

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.write(buf).map_err(|e| named(Path::new(STDOUT), e))
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush().map_err(|e| named(Path::new(STDOUT), e))
    }
}

/// Writes `text` to `path` through an [`Output`].
pub fn write_text(path: &Path, text: &str) -> Result<(), FileError> {
    let mut out = Output::create(path)?;
    out.write_all(text.as_bytes())
        .map_err(|e| FileError::writing(path, e))?;
    out.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("parsim-files-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn devices_and_directories_are_refused_before_reading() {
        for (path, kind) in [
            ("/dev/zero", "a character device"),
            ("/dev/urandom", "a character device"),
            ("/", "a directory"),
        ] {
            if !Path::new(path).exists() {
                continue;
            }
            let e = read_text(Path::new(path), Limit::Scenario).unwrap_err();
            assert!(e.to_string().contains(kind), "{e}");
            assert!(e.to_string().starts_with(path), "{e}");
        }
    }

    #[test]
    fn a_file_past_its_limit_is_refused_with_both_sizes() {
        let dir = scratch("large");
        let f = dir.join("big.toml");
        std::fs::write(&f, vec![b'#'; (Limit::Scenario.bytes() + 10) as usize]).unwrap();
        let e = read_text(&f, Limit::Scenario).unwrap_err().to_string();
        assert!(e.contains("8388618 bytes") && e.contains("8388608"), "{e}");
        assert!(open_lines(&f, Limit::Scenario).is_err());
        std::fs::write(&f, "a\r\nb\n\nc").unwrap();
        let mut lines = open_lines(&f, Limit::Scenario).unwrap();
        let mut seen = Vec::new();
        while let Some(l) = lines.next_line() {
            let (n, l) = l.unwrap();
            seen.push((n, l.to_owned()));
        }
        assert_eq!(
            seen,
            [
                (1, "a".to_owned()),
                (2, "b".to_owned()),
                (3, String::new()),
                (4, "c".to_owned())
            ]
        );
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_output_appears_whole_or_not_at_all() {
        let dir = scratch("atomic");
        let f = dir.join("out.csv");
        std::fs::write(&f, "old").unwrap();
        {
            let mut out = Output::create(&f).unwrap();
            out.write_all(b"half").unwrap();
            // dropped without commit: a failed run
        }
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "old");
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "no temporary left"
        );
        write_text(&f, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_by_any_path() {
        let dir = scratch("same");
        let f = dir.join("s.toml");
        std::fs::write(&f, "x").unwrap();
        let other = dir.join(".").join("s.toml");
        let e = check_outputs([other.as_path()], &[f.as_path()]).unwrap_err();
        assert!(e.to_string().contains("also an input"), "{e}");
        check_outputs([dir.join("new.csv").as_path()], &[f.as_path()]).unwrap();
        // a file read through this module is remembered: no output may replace it
        let g = dir.join("read.toml");
        std::fs::write(&g, "y").unwrap();
        write_text(&g, "z").unwrap();
        read_text(&g, Limit::Scenario).unwrap();
        let e = write_text(&dir.join(".").join("read.toml"), "w").unwrap_err();
        assert!(e.to_string().contains("also an input"), "{e}");
        assert_eq!(std::fs::read_to_string(&g).unwrap(), "z");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn standard_output_errors_name_it() {
        let e = named(Path::new(STDOUT), std::io::Error::from_raw_os_error(28));
        assert_eq!(e.kind(), std::io::ErrorKind::StorageFull);
        let text = FileError::writing(Path::new("x"), e).to_string();
        assert!(
            text.starts_with("cannot write standard output: No space left"),
            "{text}"
        );
    }

    #[test]
    fn devices_pipes_and_directories_are_refused_as_outputs() {
        let dir = scratch("devices");
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        let mut cases = vec![(dir.clone(), "a directory")];
        if made.is_ok_and(|s| s.success()) {
            cases.push((fifo, "a named pipe"));
        }
        // a device node of our own (the null device's numbers; mknod needs root)
        let node = dir.join("node");
        let made = std::process::Command::new("mknod")
            .args([node.as_os_str(), "c".as_ref(), "1".as_ref(), "3".as_ref()])
            .status();
        if made.is_ok_and(|s| s.success()) {
            cases.push((node, "a character device"));
        }
        if Path::new("/dev/null").exists() {
            cases.push((PathBuf::from("/dev/null"), "a character device"));
        }
        for (path, kind) in cases {
            let e = Output::create(&path).unwrap_err().to_string();
            assert!(e.contains(kind) && e.contains("not a regular file"), "{e}");
            let e = write_text(&path, "x").unwrap_err().to_string();
            assert!(e.contains(kind), "{e}");
        }
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_planted_link_is_never_followed_nor_replaced() {
        let dir = scratch("planted");
        let victim = dir.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let out = dir.join("out.json");
        // links planted under every name a writer could choose by itself: the old fixed ones
        for planted in [
            format!("{}.tmp", out.display()),
            format!(
                "{}/.out.json.parsim-{}.tmp",
                dir.display(),
                std::process::id()
            ),
        ] {
            std::os::unix::fs::symlink(&victim, planted).unwrap();
        }
        write_text(&out, "result").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "result");
        // a link at the output's own path (as /dev/stdout is) is refused, and stays
        let link = dir.join("link.json");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        let e = write_text(&link, "result").unwrap_err().to_string();
        assert!(e.contains("symbolic link"), "{e}");
        assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn two_outputs_of_one_file_are_refused() {
        let dir = scratch("twice");
        let a = dir.join("a.svg");
        let same = dir.join(".").join("a.svg");
        let e = check_outputs([a.as_path(), same.as_path()], &[]).unwrap_err();
        assert!(e.to_string().contains("another output"), "{e}");
        std::fs::write(&a, "x").unwrap();
        let e = check_outputs([same.as_path(), a.as_path()], &[]).unwrap_err();
        assert!(e.to_string().contains("another output"), "{e}");
        check_outputs([a.as_path(), dir.join("b.svg").as_path()], &[]).unwrap();
        std::fs::remove_dir_all(dir).unwrap();
    }
}
