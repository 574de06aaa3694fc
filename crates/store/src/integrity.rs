//! Refusing to start on a damaged store instead of silently rolling back: a marker file records
//! that a store was created in a data directory (so a missing or emptied store file is noticed),
//! redb's checksums are verified on every open, and a failed check is remembered in a sticky
//! file (redb's repair may rewrite the file, so a second start must not find it "clean").

use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::StoreError;

/// Beside the store file once the store was created in a directory.
pub const CREATED_MARKER: &str = "rm-state.created";
/// Beside the store file once an integrity check failed; removed by hand after a restore.
pub const DAMAGED_MARKER: &str = "rm-state.damaged";

/// The markers of one data directory.
pub(crate) struct Markers {
    store: PathBuf,
    created: PathBuf,
    damaged: PathBuf,
}

impl Markers {
    pub(crate) fn new(dir: &Path, store: &Path) -> Markers {
        Markers {
            store: store.to_path_buf(),
            created: dir.join(CREATED_MARKER),
            damaged: dir.join(DAMAGED_MARKER),
        }
    }

    fn damaged(&self, detail: String) -> StoreError {
        StoreError::Damaged {
            path: self.store.clone(),
            detail,
        }
    }

    /// Before opening: a store marked damaged, or missing or empty where one was created, is
    /// refused.
    pub(crate) fn check_before_open(&self) -> Result<(), StoreError> {
        if let Ok(reason) = std::fs::read_to_string(&self.damaged) {
            return Err(self.damaged(format!(
                "an earlier start found it damaged ({}); restore it from a backup (or move it \
                 away to start empty) and then remove {}",
                reason.trim(),
                self.damaged.display()
            )));
        }
        if !self.created.exists() {
            return Ok(());
        }
        let length = std::fs::metadata(&self.store).map(|m| m.len());
        let problem = match length {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "is missing",
            Err(_) => return Ok(()), // redb's own open reports what is wrong
            Ok(0) => "is empty (0 bytes)",
            Ok(_) => return Ok(()),
        };
        Err(self.damaged(format!(
            "it {problem}, but {} says a store was created in this directory: starting would \
             begin a new cluster and forget every application; restore the file, or remove both \
             to start empty",
            self.created.display()
        )))
    }

    /// After a successful open: records that a store exists here (durably).
    pub(crate) fn record_created(&self) -> Result<(), StoreError> {
        if self.created.exists() {
            return Ok(());
        }
        write_durably(
            &self.created,
            "a Weft RM state store was created in this directory\n",
        )
        .map_err(|e| self.open_error(&self.created, e))
    }

    /// After a failed integrity check: remembers it, then returns the error to report.
    pub(crate) fn record_damaged(&self, detail: &str) -> StoreError {
        let _ = write_durably(&self.damaged, detail);
        self.damaged(format!(
            "{detail}; refusing to start on damaged or rolled-back state. Restore the file from a \
             backup (or move it away to start empty) and remove {}",
            self.damaged.display()
        ))
    }

    fn open_error(&self, file: &Path, e: std::io::Error) -> StoreError {
        StoreError::Open {
            path: file.to_path_buf(),
            source: Box::new(e),
        }
    }
}

/// Writes `text` to `path` and makes it and its directory entry durable.
fn write_durably(path: &Path, text: &str) -> std::io::Result<()> {
    let mut f = File::create(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    if let Some(dir) = path.parent() {
        File::open(dir)?.sync_all()?;
    }
    Ok(())
}
