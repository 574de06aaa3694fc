//! Localization as Hadoop's NM does it (`FSDownload`), for `file:` resources: a FILE is
//! copied (a directory linked), an ARCHIVE unpacked by its extension (`.zip` and `.jar`
//! unzipped, `.tar`, `.tar.gz` and `.tgz` untarred, anything else copied as is), a PATTERN
//! jar unpacked only where entry names match the pattern (other archives unpacked whole, as
//! Hadoop does). Each lands in the work directory under its link name; a jar is also kept
//! inside its directory, as `RunJar.unJarAndSave` keeps it.
//!
//! Archives are untrusted input: entries with absolute paths or `..` are refused, symbolic
//! and hard links inside archives are refused, and the entry count and the bytes actually
//! written are bounded ([`Limits`]), whatever the archive's headers claim (a gzip stream's
//! output is bounded too). A source must be a regular file or a directory: a device or FIFO
//! would never end a copy.

use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

/// How a resource is placed (Hadoop's `LocalResourceType`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ResourceKind {
    /// Copied as is.
    #[default]
    File,
    /// Unpacked into a directory.
    Archive,
    /// A jar unpacked where entry names match a pattern.
    Pattern,
}

/// One resource of a launch: where it comes from and how it is placed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LocalResourceSpec {
    /// A local path or a `file:` URL.
    pub url: String,
    /// How it is placed.
    pub kind: ResourceKind,
    /// For [`ResourceKind::Pattern`]: the regular expression entry names must match whole.
    pub pattern: Option<String>,
    /// The source's modification time (epoch ms) the application saw; a source changed since
    /// is refused, as Hadoop's `FSDownload` refuses it. `None` checks nothing.
    pub timestamp: Option<i64>,
}

impl LocalResourceSpec {
    /// A FILE resource.
    pub fn file(url: impl Into<String>) -> LocalResourceSpec {
        LocalResourceSpec {
            url: url.into(),
            ..LocalResourceSpec::default()
        }
    }
}

/// What one archive may unpack to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Entries (files and directories) per archive.
    pub max_entries: usize,
    /// Bytes written per archive, counted as they are written.
    pub max_bytes: u64,
    /// Length of a PATTERN resource's pattern.
    pub max_pattern_len: usize,
}

impl Default for Limits {
    /// 100,000 entries and 8 GiB: Spark's largest usual archive (`__spark_libs__`, every jar
    /// of a Spark install) is ~500 MB in a few hundred entries.
    fn default() -> Limits {
        Limits {
            max_entries: 100_000,
            max_bytes: 8 << 30,
            max_pattern_len: 4096,
        }
    }
}

/// Why a resource could not be localized (the caller adds which resource).
#[derive(Debug, thiserror::Error)]
pub enum LocalizeError {
    /// The URL is not something this NM can fetch.
    #[error("{0}")]
    Source(String),
    /// The archive is malformed or breaks a rule.
    #[error("{0}")]
    Archive(String),
    /// Reading or writing failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

fn archive_err(why: impl Into<String>) -> LocalizeError {
    LocalizeError::Archive(why.into())
}

/// Resolves a resource given as a path or a `file:` URL.
pub(crate) fn resource_path(source: &str) -> Result<PathBuf, LocalizeError> {
    let path = if let Some(rest) = source.strip_prefix("file://") {
        // file://host/path is not supported; file:///path has an empty host.
        if !rest.starts_with('/') {
            return Err(LocalizeError::Source(
                "only file:///absolute/path URLs are supported".into(),
            ));
        }
        rest
    } else if let Some(rest) = source.strip_prefix("file:") {
        rest
    } else if source.contains("://") {
        return Err(LocalizeError::Source(
            "only local paths and file:// URLs can be localized".into(),
        ));
    } else {
        source
    };
    let path = PathBuf::from(path);
    if !path.exists() {
        return Err(LocalizeError::Source("does not exist".into()));
    }
    Ok(path)
}

/// A file's modification time in epoch milliseconds, truncated as Java's `File.lastModified`.
fn modified_ms(path: &Path) -> Result<i64, LocalizeError> {
    let modified = fs::metadata(path)?.modified()?;
    let ms = match modified.duration_since(std::time::UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    };
    Ok(ms)
}

/// Places `resource` at `dest` (which does not exist yet; its parent does).
pub(crate) fn localize(
    resource: &LocalResourceSpec,
    dest: &Path,
    limits: &Limits,
) -> Result<(), LocalizeError> {
    let from = resource_path(&resource.url)?;
    if let Some(expected) = resource.timestamp {
        let found = modified_ms(&from)?;
        if found != expected {
            return Err(LocalizeError::Source(format!(
                "changed on the source file system: expected modification time {expected}, found {found}"
            )));
        }
    }
    if from.is_dir() {
        // Trees are read-only by contract and copying them would be slow.
        return Ok(std::os::unix::fs::symlink(&from, dest)?);
    }
    // A device or FIFO would never end (or never start) a copy.
    if !fs::metadata(&from)?.is_file() {
        return Err(LocalizeError::Source(
            "neither a regular file nor a directory".into(),
        ));
    }
    let name = from
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let format = ArchiveFormat::of(&name);
    match (resource.kind, format) {
        (ResourceKind::File, _) | (_, None) => {
            fs::copy(&from, dest)?;
            Ok(())
        }
        (ResourceKind::Archive, Some(format)) => unpack(&from, format, dest, None, limits),
        (ResourceKind::Pattern, Some(format)) => {
            let pattern = match (&resource.pattern, format) {
                (Some(p), ArchiveFormat::Jar) => Some(entry_pattern(p, limits)?),
                _ => None,
            };
            unpack(&from, format, dest, pattern.as_ref(), limits)
        }
    }
}

/// A Java-style whole-name match as a Rust regular expression (simple patterns, the kind
/// MapReduce sends, read the same in both dialects).
fn entry_pattern(pattern: &str, limits: &Limits) -> Result<regex::Regex, LocalizeError> {
    if pattern.len() > limits.max_pattern_len {
        return Err(archive_err(format!(
            "the pattern is {} bytes, more than the {} allowed",
            pattern.len(),
            limits.max_pattern_len
        )));
    }
    regex::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .size_limit(1 << 20)
        .build()
        .map_err(|e| archive_err(format!("invalid pattern {pattern:?}: {e}")))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ArchiveFormat {
    Zip,
    Jar,
    Tar,
    TarGz,
}

impl ArchiveFormat {
    /// By extension, as `FSDownload.unpack` decides.
    fn of(lowercase_name: &str) -> Option<ArchiveFormat> {
        if lowercase_name.ends_with(".jar") {
            Some(ArchiveFormat::Jar)
        } else if lowercase_name.ends_with(".zip") {
            Some(ArchiveFormat::Zip)
        } else if lowercase_name.ends_with(".tar.gz") || lowercase_name.ends_with(".tgz") {
            Some(ArchiveFormat::TarGz)
        } else if lowercase_name.ends_with(".tar") {
            Some(ArchiveFormat::Tar)
        } else {
            None
        }
    }
}

fn unpack(
    from: &Path,
    format: ArchiveFormat,
    dest: &Path,
    pattern: Option<&regex::Regex>,
    limits: &Limits,
) -> Result<(), LocalizeError> {
    fs::create_dir(dest)?;
    let mut out = Unpacker {
        root: dest,
        limits,
        entries: 0,
        bytes: 0,
    };
    let file = File::open(from)?;
    match format {
        ArchiveFormat::Zip | ArchiveFormat::Jar => unzip(file, &mut out, pattern)?,
        ArchiveFormat::Tar => untar(file, &mut out)?,
        ArchiveFormat::TarGz => {
            // Headers, long names and skipped data are read without being written: bound
            // what the decompressor may produce too, not only what lands on disk.
            let headroom = (limits.max_entries as u64).saturating_mul(64 * 1024);
            let bound = limits.max_bytes.saturating_add(headroom);
            untar(flate2::read::GzDecoder::new(file).take(bound), &mut out)?
        }
    }
    if format == ArchiveFormat::Jar {
        if let Some(name) = from.file_name() {
            let kept = dest.join(name);
            if !kept.exists() {
                fs::copy(from, kept)?;
            }
        }
    }
    Ok(())
}

/// An archive entry's name as a path inside the destination: relative, without `.`/`..`
/// tricks. `None` for a name that would escape (or is empty).
pub(crate) fn contained_path(name: &str) -> Option<PathBuf> {
    if name.contains('\0') {
        return None;
    }
    let mut out = PathBuf::new();
    for component in Path::new(name).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    (!out.as_os_str().is_empty()).then_some(out)
}

/// Writes entries under `root`, counting them and their bytes.
struct Unpacker<'a> {
    root: &'a Path,
    limits: &'a Limits,
    entries: usize,
    bytes: u64,
}

impl Unpacker<'_> {
    fn target(&mut self, name: &str) -> Result<PathBuf, LocalizeError> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(archive_err(format!(
                "more than {} entries",
                self.limits.max_entries
            )));
        }
        let rel = contained_path(name).ok_or_else(|| {
            archive_err(format!(
                "entry {name:?} is absolute or leaves the archive's directory"
            ))
        })?;
        Ok(self.root.join(rel))
    }

    fn dir(&mut self, name: &str) -> Result<(), LocalizeError> {
        let path = self.target(name)?;
        fs::create_dir_all(path)?;
        Ok(())
    }

    fn file(&mut self, name: &str, mode: u32, data: &mut dyn Read) -> Result<(), LocalizeError> {
        let path = self.target(name)?;
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        // Nothing under root is a link (links are refused), so this cannot write elsewhere;
        // a second entry of the same name replaces the first, as unzip does.
        let mut file = File::create(&path)?;
        let left = self.limits.max_bytes - self.bytes;
        let written = io::copy(&mut data.take(left + 1), &mut file)?;
        if written > left {
            return Err(archive_err(format!(
                "unpacks to more than {} bytes",
                self.limits.max_bytes
            )));
        }
        self.bytes += written;
        file.flush()?;
        let executable = mode & 0o111 != 0;
        let perm = if executable { 0o755 } else { 0o644 };
        fs::set_permissions(&path, fs::Permissions::from_mode(perm))?;
        Ok(())
    }
}

const S_IFMT: u32 = 0o170_000;
const S_IFLNK: u32 = 0o120_000;

fn unzip(
    file: File,
    out: &mut Unpacker<'_>,
    pattern: Option<&regex::Regex>,
) -> Result<(), LocalizeError> {
    let mut archive = zip::ZipArchive::new(io::BufReader::new(file))
        .map_err(|e| archive_err(format!("not a readable zip: {e}")))?;
    if archive.len() > out.limits.max_entries {
        return Err(archive_err(format!(
            "{} entries, more than the {} allowed",
            archive.len(),
            out.limits.max_entries
        )));
    }
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| archive_err(format!("entry {i}: {e}")))?;
        let name = entry.name().to_string();
        if pattern.is_some_and(|p| !p.is_match(&name)) {
            continue;
        }
        let mode = entry.unix_mode().unwrap_or(0o644);
        if mode & S_IFMT == S_IFLNK {
            return Err(archive_err(format!(
                "entry {name:?} is a symbolic link, which is not unpacked"
            )));
        }
        if entry.is_dir() {
            out.dir(&name)?;
        } else {
            out.file(&name, mode, &mut entry)?;
        }
    }
    Ok(())
}

fn untar(reader: impl Read, out: &mut Unpacker<'_>) -> Result<(), LocalizeError> {
    let mut archive = tar::Archive::new(reader);
    let entries = archive
        .entries()
        .map_err(|e| archive_err(format!("not a readable tar: {e}")))?;
    for entry in entries {
        let mut entry = entry.map_err(|e| archive_err(format!("not a readable tar: {e}")))?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        let kind = entry.header().entry_type();
        let mode = entry.header().mode().unwrap_or(0o644);
        if kind.is_dir() {
            out.dir(&name)?;
        } else if kind.is_file() || kind.is_contiguous() {
            out.file(&name, mode, &mut entry)?;
        } else if kind.is_pax_global_extensions()
            || kind.is_pax_local_extensions()
            || kind.is_gnu_longname()
            || kind.is_gnu_longlink()
        {
            // Metadata the reader has already applied to the next entry.
            continue;
        } else {
            return Err(archive_err(format!(
                "entry {name:?} is a link or special file, which is not unpacked"
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
