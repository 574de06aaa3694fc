//! Container log files on disk (`<log dir>/<app>/<container>/<file>`): which exist, and
//! reading them without ever leaving the container's own log directory.
//!
//! Everything named by a request is validated before it touches a path. A log file is opened
//! component by component (`openat` from the log root's descriptor, each step with
//! `O_NOFOLLOW`), and what was opened is then checked through its descriptor (a regular file),
//! so neither `..` nor a symlink a container plants or swaps in while the NM looks can make it
//! serve another file: there is no check-then-open window. Listings canonicalize and leave
//! symlinks out.

use std::fs;
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use nix::fcntl::{openat, OFlag};
use nix::sys::stat::Mode;
use weft_types::yarn_id::{ApplicationId, ContainerId};

/// Why a log request cannot be answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum LogError {
    /// Not a container id.
    #[error("invalid container id, {0}")]
    BadContainer(String),
    /// Not an application id.
    #[error("invalid application id, {0}")]
    BadApp(String),
    /// A file name that is not a single plain path component.
    #[error("invalid log file name, {0}")]
    BadFile(String),
    /// This NM has no log directory for the container.
    #[error("cannot find logs for container {0} on this node")]
    NoContainer(String),
    /// This NM ran no container of the application.
    #[error("app with id {0} not found")]
    NoApp(String),
    /// The container's log directory has no such file.
    #[error("cannot find {file} in the log directory of container {container}")]
    NoFile {
        /// The container.
        container: String,
        /// The file asked for.
        file: String,
    },
    /// Reading the disk failed.
    #[error("{path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying failure.
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> LogError + '_ {
    move |source| LogError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// One file of a container's log directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LogFile {
    /// Its name in the directory.
    pub(crate) name: String,
    /// Size in bytes when listed.
    pub(crate) size: u64,
    /// Last modification, epoch milliseconds.
    pub(crate) modified_ms: i64,
}

/// Parses a container id and makes sure the text is safe as a directory name (the parser
/// alone would let a `+` sign through, for instance).
pub(crate) fn parse_container(text: &str) -> Result<ContainerId, LogError> {
    let plain = text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match text.parse::<ContainerId>() {
        Ok(id) if plain => Ok(id),
        _ => Err(LogError::BadContainer(text.to_string())),
    }
}

/// Parses an application id (its canonical form names the directory).
pub(crate) fn parse_app(text: &str) -> Result<ApplicationId, LogError> {
    text.parse::<ApplicationId>()
        .map_err(|_| LogError::BadApp(text.to_string()))
}

/// A log file name must be one ordinary path component.
pub(crate) fn check_file_name(name: &str) -> Result<(), LogError> {
    let bad = name.is_empty()
        || name == "."
        || name == ".."
        || name.contains(['/', '\\', '\0'])
        || name.chars().any(char::is_control);
    if bad {
        Err(LogError::BadFile(name.to_string()))
    } else {
        Ok(())
    }
}

/// The bytes of a file of `len` bytes that `size` asks for, as (offset, count): all of it
/// without `size`, the first `size` bytes when positive, the last `|size|` when negative.
pub(crate) fn byte_range(len: u64, size: Option<i64>) -> (u64, u64) {
    match size {
        None => (0, len),
        Some(n) if n >= 0 => (0, n.unsigned_abs().min(len)),
        Some(n) => {
            let count = n.unsigned_abs().min(len);
            (len - count, count)
        }
    }
}

/// Epoch milliseconds as Hadoop's `Times.format` prints them (`Tue Nov 14 10:01:05 +0000
/// 2023`), in UTC.
pub(crate) fn hadoop_time(ms: i64) -> String {
    weft_types::CalendarTime::from_epoch_millis(ms).hadoop_format()
}

fn modified_ms(meta: &fs::Metadata) -> i64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .and_then(|d| i64::try_from(d.as_millis()).ok())
        .unwrap_or(0)
}

/// A log file opened for reading, with the part of it a request asked for.
#[derive(Debug)]
pub(crate) struct OpenLog {
    /// The open file (a regular file inside the container's log directory).
    pub(crate) file: fs::File,
    /// Where the part starts.
    pub(crate) offset: u64,
    /// How many bytes it has.
    pub(crate) count: u64,
    /// The file's length when opened.
    pub(crate) len: u64,
}

/// Opens one component below `dir` without following a symlink there; `O_NONBLOCK` so a
/// FIFO planted as a log file cannot hang the open.
fn open_below(dir: &OwnedFd, name: &str, directory: bool) -> nix::Result<OwnedFd> {
    let mut flags = OFlag::O_RDONLY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC | OFlag::O_NONBLOCK;
    if directory {
        flags |= OFlag::O_DIRECTORY;
    }
    openat(dir, name, flags, Mode::empty())
}

/// The NM's log directory, read on behalf of web requests.
#[derive(Debug, Clone)]
pub(crate) struct LogRoot {
    root: PathBuf,
}

impl LogRoot {
    /// Serves the logs under `root`.
    pub(crate) fn new(root: PathBuf) -> LogRoot {
        LogRoot { root }
    }

    fn canonical_root(&self) -> Result<PathBuf, LogError> {
        fs::canonicalize(&self.root).map_err(io_err(&self.root))
    }

    /// `child` resolved (symlinks included) if it exists and stays inside `parent`
    /// (already canonical).
    fn inside(parent: &Path, child: &Path) -> Option<PathBuf> {
        fs::canonicalize(child)
            .ok()
            .filter(|c| c.starts_with(parent) && c != parent)
    }

    /// The canonical log directory of a container, if this NM has one.
    pub(crate) fn container_dir(&self, cid: &str) -> Result<PathBuf, LogError> {
        let id = parse_container(cid)?;
        let root = self.canonical_root()?;
        let missing = || LogError::NoContainer(cid.to_string());
        let app_dir = Self::inside(&root, &root.join(id.app.to_string())).ok_or_else(missing)?;
        // The directory carries the id exactly as the RM sent it (an epoch part included),
        // so look for the text as given first, then for the canonical spelling.
        let mut names = vec![cid.to_string()];
        if id.to_string() != cid {
            names.push(id.to_string());
        }
        names
            .iter()
            .filter_map(|n| Self::inside(&app_dir, &app_dir.join(n)))
            .find(|d| d.is_dir())
            .ok_or_else(missing)
    }

    /// The files of a container's log directory, by name (subdirectories and symlinks
    /// leading out of it are left out).
    pub(crate) fn list(&self, cid: &str) -> Result<Vec<LogFile>, LogError> {
        let dir = self.container_dir(cid)?;
        let mut files = Vec::new();
        for entry in fs::read_dir(&dir).map_err(io_err(&dir))? {
            let entry = entry.map_err(io_err(&dir))?;
            let Some(name) = entry.file_name().to_str().map(str::to_string) else {
                continue;
            };
            // Symlinks are left out: reading never follows them.
            let Ok(meta) = entry.metadata() else {
                continue;
            };
            if meta.is_file() {
                files.push(LogFile {
                    name,
                    size: meta.len(),
                    modified_ms: modified_ms(&meta),
                });
            }
        }
        files.sort_by(|a, b| a.name.cmp(&b.name));
        Ok(files)
    }

    /// Opens one log file of a container and selects the part `size` asks for (see
    /// [`byte_range`]). Only a regular file directly inside the container's own log directory
    /// opens; a symlink anywhere on the way (root excepted) reads as missing.
    pub(crate) fn open(
        &self,
        cid: &str,
        name: &str,
        size: Option<i64>,
    ) -> Result<OpenLog, LogError> {
        let id = parse_container(cid)?;
        check_file_name(name)?;
        let no_container = || LogError::NoContainer(cid.to_string());
        let no_file = || LogError::NoFile {
            container: cid.to_string(),
            file: name.to_string(),
        };
        let root: OwnedFd = fs::File::open(&self.root)
            .map_err(io_err(&self.root))?
            .into();
        let app = open_below(&root, &id.app.to_string(), true).map_err(|_| no_container())?;
        // The directory carries the id as the RM sent it (an epoch part included), else the
        // canonical spelling.
        let canonical = id.to_string();
        let dir = open_below(&app, cid, true)
            .or_else(|e| {
                if canonical != cid {
                    open_below(&app, &canonical, true)
                } else {
                    Err(e)
                }
            })
            .map_err(|_| no_container())?;
        let file = fs::File::from(open_below(&dir, name, false).map_err(|_| no_file())?);
        let meta = file.metadata().map_err(|source| LogError::Io {
            path: self.root.join(&canonical).join(name),
            source,
        })?;
        if !meta.is_file() {
            return Err(no_file());
        }
        let len = meta.len();
        let (offset, count) = byte_range(len, size);
        Ok(OpenLog {
            file,
            offset,
            count,
            len,
        })
    }

    /// Containers this NM ran for an application (those with a log directory), by id.
    pub(crate) fn containers_of(&self, app: &str) -> Result<Vec<String>, LogError> {
        let id = parse_app(app)?;
        let root = self.canonical_root()?;
        let missing = || LogError::NoApp(app.to_string());
        let dir = Self::inside(&root, &root.join(id.to_string())).ok_or_else(missing)?;
        let mut ids: Vec<String> = fs::read_dir(&dir)
            .map_err(io_err(&dir))?
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| parse_container(n).is_ok_and(|c| c.app == id))
            .collect();
        if ids.is_empty() {
            return Err(missing());
        }
        ids.sort();
        Ok(ids)
    }

    /// Applications with a log directory here, by id.
    pub(crate) fn apps(&self) -> Vec<String> {
        let Ok(entries) = fs::read_dir(&self.root) else {
            return Vec::new();
        };
        let mut apps: Vec<String> = entries
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().to_str().map(str::to_string))
            .filter(|n| parse_app(n).is_ok())
            .collect();
        apps.sort();
        apps
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Seek, SeekFrom};
    use std::os::unix::fs::symlink;

    impl LogRoot {
        /// The selected part, read whole (tests only: the web service streams it).
        fn read(&self, cid: &str, name: &str, size: Option<i64>) -> Result<Vec<u8>, LogError> {
            let mut log = self.open(cid, name, size)?;
            log.file.seek(SeekFrom::Start(log.offset)).unwrap();
            let mut out = Vec::new();
            log.file.take(log.count).read_to_end(&mut out).unwrap();
            Ok(out)
        }
    }

    const APP: &str = "application_1700000000000_0007";
    const CID: &str = "container_1700000000000_0007_01_000002";

    /// A log root with one container whose stdout holds `hello world\n`, a secret next to
    /// the root, and a few symlinks a hostile container could plant.
    fn fixture() -> (tempfile::TempDir, LogRoot) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("logs");
        let dir = root.join(APP).join(CID);
        fs::create_dir_all(&dir).unwrap();
        fs::write(dir.join("stdout"), "hello world\n").unwrap();
        fs::write(dir.join("stderr"), "").unwrap();
        fs::create_dir(dir.join("sub")).unwrap();
        fs::write(tmp.path().join("secret"), "top secret").unwrap();
        symlink(tmp.path().join("secret"), dir.join("escape")).unwrap();
        symlink("stdout", dir.join("alias")).unwrap();
        // A whole container dir that is a link out of the root.
        let other = tmp.path().join("elsewhere");
        fs::create_dir(&other).unwrap();
        fs::write(other.join("stdout"), "not yours").unwrap();
        symlink(
            &other,
            root.join(APP)
                .join("container_1700000000000_0007_01_000003"),
        )
        .unwrap();
        (tmp, LogRoot::new(root))
    }

    #[test]
    fn ids_and_names_are_validated_before_any_path_is_built() {
        assert!(parse_container(CID).is_ok());
        for bad in [
            "container_1_1_1",
            "..",
            "container_+1_0001_01_000001",
            "c/../x",
            "",
        ] {
            assert!(
                matches!(parse_container(bad), Err(LogError::BadContainer(_))),
                "{bad}"
            );
        }
        assert!(matches!(
            parse_app("application_x_1"),
            Err(LogError::BadApp(_))
        ));
        for bad in [
            "",
            ".",
            "..",
            "../stdout",
            "a/b",
            "/etc/passwd",
            "a\\b",
            "a\0b",
            "a\nb",
        ] {
            assert!(
                matches!(check_file_name(bad), Err(LogError::BadFile(_))),
                "{bad:?}"
            );
        }
        check_file_name("stdout").unwrap();
        check_file_name("..hidden").unwrap();
    }

    #[test]
    fn lists_plain_files_only_and_never_outside_links() {
        let (_tmp, logs) = fixture();
        let files = logs.list(CID).unwrap();
        let names: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["stderr", "stdout"]);
        assert_eq!(files[1].size, 12);
        assert!(files[1].modified_ms > 1_600_000_000_000);
    }

    #[test]
    fn serves_files_inside_the_container_dir_only() {
        let (_tmp, logs) = fixture();
        assert_eq!(logs.read(CID, "stdout", None).unwrap(), b"hello world\n");
        // No symlink is followed, not even one that stays inside the directory.
        assert!(matches!(
            logs.read(CID, "alias", None),
            Err(LogError::NoFile { .. })
        ));
        assert!(matches!(
            logs.read(CID, "escape", None),
            Err(LogError::NoFile { .. })
        ));
        assert!(matches!(
            logs.read(CID, "sub", None),
            Err(LogError::NoFile { .. })
        ));
        assert!(matches!(
            logs.read(CID, "missing", None),
            Err(LogError::NoFile { .. })
        ));
        assert!(matches!(
            logs.read(CID, "../../../secret", None),
            Err(LogError::BadFile(_))
        ));
        let linked = "container_1700000000000_0007_01_000003";
        assert!(matches!(
            logs.read(linked, "stdout", None),
            Err(LogError::NoContainer(_))
        ));
        let unknown = "container_1700000000000_0008_01_000001";
        assert!(matches!(logs.list(unknown), Err(LogError::NoContainer(_))));
    }

    #[test]
    fn size_selects_the_head_or_the_tail() {
        assert_eq!(byte_range(10, None), (0, 10));
        assert_eq!(byte_range(10, Some(4)), (0, 4));
        assert_eq!(byte_range(10, Some(40)), (0, 10));
        assert_eq!(byte_range(10, Some(0)), (0, 0));
        assert_eq!(byte_range(10, Some(-3)), (7, 3));
        assert_eq!(byte_range(10, Some(-30)), (0, 10));
        assert_eq!(byte_range(0, Some(-3)), (0, 0));
        assert_eq!(byte_range(10, Some(i64::MIN)), (0, 10));
        let (_tmp, logs) = fixture();
        assert_eq!(logs.read(CID, "stdout", Some(5)).unwrap(), b"hello");
        assert_eq!(logs.read(CID, "stdout", Some(-6)).unwrap(), b"world\n");
    }

    #[test]
    fn a_fifo_or_a_directory_is_not_a_log_file_and_does_not_hang_the_open() {
        let (tmp, logs) = fixture();
        let dir = tmp.path().join("logs").join(APP).join(CID);
        nix::unistd::mkfifo(&dir.join("pipe"), Mode::from_bits_truncate(0o600)).unwrap();
        assert!(matches!(
            logs.read(CID, "pipe", None),
            Err(LogError::NoFile { .. })
        ));
        assert!(matches!(
            logs.read(CID, "sub", None),
            Err(LogError::NoFile { .. })
        ));
    }

    /// A container swapping its log file for a symlink to a secret, as fast as it can, while
    /// the NM reads it: the NM serves the log or nothing, never the secret (issue 18: a
    /// check-then-open NM served /etc/shadow in 3 of 20,000 reads).
    #[test]
    #[allow(clippy::disallowed_methods)] // the swapping container needs a thread of its own
    fn a_file_swapped_for_a_symlink_while_read_never_serves_the_target() {
        let (tmp, logs) = fixture();
        let dir = tmp.path().join("logs").join(APP).join(CID);
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let swaps = std::sync::Arc::new(AtomicU64::new(0));
        let swapper = {
            let (dir, stop, swaps, secret) = (
                dir.clone(),
                stop.clone(),
                swaps.clone(),
                tmp.path().join("secret"),
            );
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let (plain, link) = (dir.join(".plain"), dir.join(".link"));
                    let _ = fs::write(&plain, "log line\n");
                    let _ = fs::rename(&plain, dir.join("swap"));
                    let _ = symlink(&secret, &link);
                    let _ = fs::rename(&link, dir.join("swap"));
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        // Read until the swapper has raced us often enough: on a loaded machine it may get
        // little CPU, so a fixed number of reads could finish before it swapped at all. The
        // read count and the time bound keep the test finite either way.
        let started = std::time::Instant::now();
        let (mut reads, mut served) = (0u64, 0u64);
        while (reads < 20_000 || swaps.load(Ordering::Relaxed) < 1_000)
            && started.elapsed() < std::time::Duration::from_secs(30)
        {
            if let Ok(bytes) = logs.read(CID, "swap", None) {
                assert_ne!(bytes, b"top secret", "the symlink's target was served");
                served += 1;
            }
            reads += 1;
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
        let swaps = swaps.load(Ordering::Relaxed);
        assert!(
            swaps > 100 && served > 0,
            "{swaps} swaps, {served} of {reads} reads served"
        );
    }

    #[test]
    fn apps_and_their_containers_come_from_the_layout() {
        let (_tmp, logs) = fixture();
        assert_eq!(logs.apps(), [APP]);
        // The linked container dir is a directory entry only through a symlink: not listed.
        assert_eq!(logs.containers_of(APP).unwrap(), [CID]);
        assert!(matches!(
            logs.containers_of("application_1700000000000_0008"),
            Err(LogError::NoApp(_))
        ));
        assert!(matches!(
            logs.containers_of("bogus"),
            Err(LogError::BadApp(_))
        ));
    }

    #[test]
    fn times_are_formatted_like_hadoop() {
        assert_eq!(hadoop_time(0), "Thu Jan 01 00:00:00 +0000 1970");
        assert_eq!(
            hadoop_time(1_699_956_065_000),
            "Tue Nov 14 10:01:05 +0000 2023"
        );
        assert_eq!(
            hadoop_time(951_782_400_000),
            "Tue Feb 29 00:00:00 +0000 2000"
        );
    }
}
