//! The one way parsim reads the files it is given and writes the files it makes.
//!
//! **Reading** ([`read_text`], [`open_lines`]): only a regular file is read. A named pipe, a
//! device (`/dev/zero`, `/dev/urandom`), a socket or a directory is refused before it is opened
//! (opening a pipe with no writer would wait forever, and a device never ends), with a message
//! that says what the path is. A file larger than the limit of its kind ([`Limit`]) is refused
//! with its size and the limit; the read itself stops at the limit too (a file can grow while it
//! is read, and some files report no size), so memory stays proportional to the limit.
//!
//! **Writing** ([`Output`]): a file is written to a temporary file beside it and renamed over
//! it only when everything was written, so a failed run leaves nothing half written; a path
//! that is a file this process has read (every input is read here, and remembered) is refused,
//! so no output overwrites what the command reads (commands also call [`check_outputs`] before
//! they run, so that the refusal comes first); an error (a full disk) names the file. An output
//! that already exists and is not a regular file (`/dev/stdout`, `/dev/null`, a named pipe) is
//! written in place: a rename would replace the device or pipe itself.

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
}

impl Limit {
    /// The largest size, in bytes.
    pub const fn bytes(self) -> u64 {
        match self {
            Limit::Scenario => 8 << 20,
            Limit::Data | Limit::Shard => 256 << 20,
        }
    }

    /// What the limit is for, in messages.
    fn what(self) -> &'static str {
        match self {
            Limit::Scenario => "a scenario or profile",
            Limit::Data => "a trace or measurements file",
            Limit::Shard => "a shard file",
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
    String::from_utf8(bytes).map_err(|e| {
        FileError::new(
            path,
            FileProblem::NotText(e.utf8_error().valid_up_to() as u64),
        )
    })
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
    })
}

/// The lines of a file, from [`open_lines`].
#[derive(Debug)]
pub struct Lines {
    path: PathBuf,
    reader: BufReader<std::io::Take<std::fs::File>>,
    limit: Limit,
    read: u64,
    number: usize,
    line: String,
    done: bool,
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
                None
            }
            Ok(n) => {
                self.read += n as u64;
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

/// Refuses an output that is one of `inputs` or one of the files this process has read
/// ([`inputs`]), by any path: checked before a command runs, so that no output overwrites what
/// the command reads.
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
    for output in outputs {
        let Some(id) = identity(output) else {
            continue; // a file that does not exist yet is nobody's input
        };
        if let Some((input, _)) = inputs.iter().find(|(_, i)| *i == id) {
            return Err(FileError::new(
                output,
                FileProblem::OutputIsInput(input.to_path_buf()),
            ));
        }
    }
    Ok(())
}

/// A file being written: to a temporary file beside it, renamed over it by [`Output::commit`];
/// dropped without a commit, the temporary file is removed and the path left as it was.
pub struct Output {
    path: PathBuf,
    /// The temporary file, or `None` when writing in place (a device or pipe).
    temp: Option<PathBuf>,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl fmt::Debug for Output {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Output")
            .field("path", &self.path)
            .field("temp", &self.temp)
            .finish()
    }
}

impl Output {
    /// Starts writing `path`; refused when `path` is a file this process has read.
    pub fn create(path: &Path) -> Result<Output, FileError> {
        check_outputs([path], &[])?;
        let in_place = std::fs::metadata(path)
            .ok()
            .is_some_and(|m| not_a_file(&m).is_some() && !m.is_dir());
        if in_place {
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| FileError::io("write", path, e))?;
            return Ok(Output {
                path: path.to_owned(),
                temp: None,
                file: Some(std::io::BufWriter::new(file)),
            });
        }
        let name = path.file_name().ok_or_else(|| {
            FileError::io(
                "write",
                path,
                std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file name"),
            )
        })?;
        let temp = path.with_file_name(format!(
            ".{}.parsim-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&temp)
            .map_err(|e| FileError::io("write", path, e))?;
        Ok(Output {
            path: path.to_owned(),
            temp: Some(temp),
            file: Some(std::io::BufWriter::new(file)),
        })
    }

    /// The path being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes, closes and renames the temporary file over the path.
    pub fn commit(mut self) -> Result<(), FileError> {
        let file = self.file.take().expect("not yet committed");
        let file = file
            .into_inner()
            .map_err(|e| FileError::writing(&self.path, e.into_error()))?;
        if self.temp.is_some() {
            file.sync_all()
                .map_err(|e| FileError::io("write", &self.path, e))?;
        }
        drop(file);
        if let Some(temp) = self.temp.take()
            && let Err(e) = std::fs::rename(&temp, &self.path)
        {
            let _ = std::fs::remove_file(&temp);
            return Err(FileError::io("write", &self.path, e));
        }
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

impl Drop for Output {
    fn drop(&mut self) {
        if let Some(temp) = self.temp.take() {
            drop(self.file.take());
            let _ = std::fs::remove_file(temp);
        }
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
    fn a_full_device_names_the_file() {
        if !Path::new("/dev/full").exists() {
            return;
        }
        let e = write_text(Path::new("/dev/full"), "x").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("/dev/full"), "{text}");
    }
}
