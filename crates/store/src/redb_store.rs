//! The durable store: one redb file in the RM's data directory.
//!
//! Records are JSON inside redb values: redb gives atomic, checksummed, fsynced commits and
//! JSON keeps the file readable by tools and tolerant of added optional fields.

use std::path::{Path, PathBuf};

use redb::{
    Database, Durability, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition,
};
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::integrity::Markers;
use crate::{
    ApplicationRecord, AttemptRecord, BackendError, ClusterMeta, DemandRecord, NodeLabelsRecord,
    RecoveredApp, RecoveredState, ReservationRecord, StateStore, StoreError, Write,
};

/// The store's file name inside the data directory.
pub const STORE_FILE_NAME: &str = "rm-state.redb";

/// The layout version this build reads and writes; a file with another version is refused.
pub const SCHEMA_VERSION: u32 = 1;

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const APPS: TableDefinition<u64, &[u8]> = TableDefinition::new("apps");
const ATTEMPTS: TableDefinition<(u64, u32), &[u8]> = TableDefinition::new("attempts");
/// Demands by key; absent from files written before demands existed (read as empty, created by
/// the first demand written).
const DEMANDS: TableDefinition<&str, &[u8]> = TableDefinition::new("demands");

const VERSION_KEY: &str = "schema_version";
const CLUSTER_KEY: &str = "cluster";
/// The node-label registry's admin part, in the meta table.
const NODE_LABELS_KEY: &str = "node-labels";
/// Reservations live in the meta table under this prefix and their id, so a store written
/// before reservations existed opens unchanged.
const RESERVATION_PREFIX: &str = "reservation/";
const RESERVATION_SEQ_KEY: &str = "reservation-sequence";

/// The page cache a store keeps unless told otherwise (`RedbStore::open_with_cache`): redb's
/// own default is 1 GiB, which an RM that only writes (it reads the store back only when it
/// starts) would fill with the pages it wrote. 64 MiB holds the whole file of rm-bench's full
/// preset (28 MB measured: 10,000 live and 1,000 completed apps).
pub const DEFAULT_CACHE_BYTES: usize = 64 * 1024 * 1024;

/// A [`StateStore`] in a redb file; every write is fsynced before it returns.
///
/// redb locks the file: a second `open` of the same directory (in this or another process)
/// fails until the first store is dropped.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .finish()
    }
}

impl RedbStore {
    /// Opens (creating if needed) the store in `data_dir`, which is created if missing.
    ///
    /// Fails with [`StoreError::Open`] naming the file if it cannot be created or read or is
    /// not a redb file, and with [`StoreError::IncompatibleVersion`] if it was written with
    /// another schema version. A file left by a crash is repaired to its last commit.
    pub fn open(data_dir: impl AsRef<Path>) -> Result<Self, StoreError> {
        Self::open_with_cache(data_dir, DEFAULT_CACHE_BYTES)
    }

    /// [`RedbStore::open`] with a page cache of at most `cache_bytes` (pages read or written,
    /// kept in memory; 0 keeps none, every access goes to the file).
    pub fn open_with_cache(
        data_dir: impl AsRef<Path>,
        cache_bytes: usize,
    ) -> Result<Self, StoreError> {
        let dir = data_dir.as_ref();
        let path = dir.join(STORE_FILE_NAME);
        let open_err = |source: BackendError| StoreError::Open {
            path: path.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(|e| open_err(e.into()))?;
        let markers = Markers::new(dir, &path);
        markers.check_before_open()?;
        let mut db = match Database::builder()
            .set_cache_size(cache_bytes)
            .create(&path)
        {
            Ok(db) => db,
            Err(redb::DatabaseError::Storage(redb::StorageError::Corrupted(detail))) => {
                return Err(markers
                    .record_damaged(&format!("its latest commit fails its checksums ({detail})")))
            }
            Err(e) => return Err(open_err(e.into())),
        };
        // redb falls back to the previous commit when the latest fails its checksums; verify
        // every page now so that a damaged file is refused instead of silently rolled back.
        match db.check_integrity() {
            Ok(true) => {}
            Ok(false) => {
                return Err(markers.record_damaged(
                    "a page of the file fails its checksum (the file was modified or the disk \
                     damaged it)",
                ))
            }
            Err(redb::DatabaseError::Storage(redb::StorageError::Corrupted(detail))) => {
                return Err(markers
                    .record_damaged(&format!("a page of the file fails its checksum ({detail})")))
            }
            Err(e) => return Err(open_err(e.into())),
        }
        let store = RedbStore { db, path };
        store.init_schema()?;
        markers.record_created()?;
        Ok(store)
    }

    /// The store file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes the schema version into a new file, or checks the one already there.
    fn init_schema(&self) -> Result<(), StoreError> {
        let txn = self.begin_write()?;
        let checked = (|| {
            let mut meta = txn.open_table(META).map_err(|e| self.open_err(e))?;
            // Creating the other tables here lets readers assume they exist.
            let apps = txn.open_table(APPS).map_err(|e| self.open_err(e))?;
            txn.open_table(ATTEMPTS).map_err(|e| self.open_err(e))?;
            let found = match meta.get(VERSION_KEY).map_err(|e| self.open_err(e))? {
                Some(bytes) => Some(self.decode::<u32>(bytes.value(), "schema version")?),
                None => None,
            };
            match found {
                Some(SCHEMA_VERSION) => Ok(false),
                Some(found) => Err(StoreError::IncompatibleVersion {
                    path: self.path.clone(),
                    found,
                    expected: SCHEMA_VERSION,
                }),
                None if !apps.is_empty().map_err(|e| self.open_err(e))? => {
                    Err(StoreError::Corrupt {
                        path: self.path.clone(),
                        what: "schema version".to_owned(),
                        detail: "missing, but applications are stored".to_owned(),
                    })
                }
                None => {
                    let bytes = encode(&SCHEMA_VERSION, "schema version")?;
                    meta.insert(VERSION_KEY, bytes.as_slice())
                        .map_err(|e| self.open_err(e))?;
                    Ok(true)
                }
            }
        })();
        match checked {
            Ok(true) => self.commit(txn),
            Ok(false) => self.discard(txn),
            Err(e) => {
                // The error being reported matters more than a failure to abort.
                let _ = self.discard(txn);
                Err(e)
            }
        }
    }

    fn begin_write(&self) -> Result<redb::WriteTransaction, StoreError> {
        let mut txn = self
            .db
            .begin_write()
            .map_err(|e| self.backend("begin write", e))?;
        // The RM acknowledges as soon as apply returns, so every commit must be on disk.
        txn.set_durability(Durability::Immediate)
            .map_err(|e| self.backend("set durability", e))?;
        // With two-phase commits a latest commit that fails its checksum can only be damage,
        // never a torn write, and redb refuses it instead of rolling back to the one before.
        txn.set_two_phase_commit(true);
        Ok(txn)
    }

    fn commit(&self, txn: redb::WriteTransaction) -> Result<(), StoreError> {
        txn.commit().map_err(|e| self.backend("commit", e))
    }

    fn discard(&self, txn: redb::WriteTransaction) -> Result<(), StoreError> {
        txn.abort().map_err(|e| self.backend("abort", e))
    }

    fn open_err(&self, e: impl Into<redb::Error>) -> StoreError {
        StoreError::Open {
            path: self.path.clone(),
            source: Box::new(e.into()),
        }
    }

    fn backend(&self, operation: &'static str, e: impl Into<redb::Error>) -> StoreError {
        StoreError::Backend {
            path: self.path.clone(),
            operation,
            source: Box::new(e.into()),
        }
    }

    fn decode<T: DeserializeOwned>(&self, bytes: &[u8], what: &str) -> Result<T, StoreError> {
        serde_json::from_slice(bytes).map_err(|e| self.corrupt(what.to_owned(), e.to_string()))
    }

    fn corrupt(&self, what: String, detail: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what,
            detail,
        }
    }

    fn write_all(&self, txn: &redb::WriteTransaction, writes: &[Write]) -> Result<(), StoreError> {
        let mut meta = txn
            .open_table(META)
            .map_err(|e| self.backend("open meta", e))?;
        let mut apps = txn
            .open_table(APPS)
            .map_err(|e| self.backend("open apps", e))?;
        let mut attempts = txn
            .open_table(ATTEMPTS)
            .map_err(|e| self.backend("open attempts", e))?;
        let mut demands = txn
            .open_table(DEMANDS)
            .map_err(|e| self.backend("open demands", e))?;
        for write in writes {
            match write {
                Write::Meta(m) => {
                    let bytes = encode(m, "cluster meta")?;
                    meta.insert(CLUSTER_KEY, bytes.as_slice())
                        .map_err(|e| self.backend("write meta", e))?;
                }
                Write::PutApp(app) => {
                    let bytes = encode(app, &format!("application {}", app.app_id))?;
                    apps.insert(app.app_id, bytes.as_slice())
                        .map_err(|e| self.backend("write application", e))?;
                }
                Write::PutAttempt(attempt) => {
                    let known = apps
                        .get(attempt.app_id)
                        .map_err(|e| self.backend("read application", e))?
                        .is_some();
                    if !known {
                        return Err(StoreError::UnknownApp {
                            app_id: attempt.app_id,
                            attempt: attempt.attempt,
                        });
                    }
                    let what = format!(
                        "attempt {} of application {}",
                        attempt.attempt, attempt.app_id
                    );
                    let bytes = encode(attempt, &what)?;
                    attempts
                        .insert((attempt.app_id, attempt.attempt), bytes.as_slice())
                        .map_err(|e| self.backend("write attempt", e))?;
                }
                Write::NodeLabels(record) => {
                    let bytes = encode(record, "node labels")?;
                    meta.insert(NODE_LABELS_KEY, bytes.as_slice())
                        .map_err(|e| self.backend("write node labels", e))?;
                }
                Write::PutReservation(record) => {
                    let key = format!("{RESERVATION_PREFIX}{}", record.id);
                    let bytes = encode(record, &format!("reservation {}", record.id))?;
                    meta.insert(key.as_str(), bytes.as_slice())
                        .map_err(|e| self.backend("write reservation", e))?;
                }
                Write::RemoveReservation(id) => {
                    let key = format!("{RESERVATION_PREFIX}{id}");
                    meta.remove(key.as_str())
                        .map_err(|e| self.backend("remove reservation", e))?;
                }
                Write::ReservationSequence(seq) => {
                    let bytes = encode(seq, "reservation sequence")?;
                    meta.insert(RESERVATION_SEQ_KEY, bytes.as_slice())
                        .map_err(|e| self.backend("write reservation sequence", e))?;
                }
                Write::PutDemand(demand) => {
                    let bytes = encode(demand, &format!("demand {}", demand.key))?;
                    demands
                        .insert(demand.key.as_str(), bytes.as_slice())
                        .map_err(|e| self.backend("write demand", e))?;
                }
                Write::RemoveDemand(key) => {
                    demands
                        .remove(key.as_str())
                        .map_err(|e| self.backend("remove demand", e))?;
                }
                Write::RemoveApp(app_id) => {
                    apps.remove(*app_id)
                        .map_err(|e| self.backend("remove application", e))?;
                    attempts
                        .retain_in((*app_id, 0u32)..=(*app_id, u32::MAX), |_, _| false)
                        .map_err(|e| self.backend("remove attempts", e))?;
                }
            }
        }
        Ok(())
    }
}

impl RedbStore {
    fn load_demands(&self, txn: &redb::ReadTransaction) -> Result<Vec<DemandRecord>, StoreError> {
        let table = match txn.open_table(DEMANDS) {
            Ok(table) => table,
            Err(redb::TableError::TableDoesNotExist(_)) => return Ok(Vec::new()),
            Err(e) => return Err(self.backend("open demands", e)),
        };
        let mut demands = Vec::new();
        for entry in table.iter().map_err(|e| self.backend("read demands", e))? {
            let (key, value) = entry.map_err(|e| self.backend("read demands", e))?;
            let what = format!("demand {}", key.value());
            let demand: DemandRecord = self.decode(value.value(), &what)?;
            if demand.key != key.value() {
                return Err(self.corrupt(what, format!("record says key {}", demand.key)));
            }
            demands.push(demand);
        }
        Ok(demands)
    }
}

fn encode<T: Serialize>(record: &T, what: &str) -> Result<Vec<u8>, StoreError> {
    serde_json::to_vec(record).map_err(|source| StoreError::Encode {
        what: what.to_owned(),
        source,
    })
}

impl StateStore for RedbStore {
    fn load(&self) -> Result<RecoveredState, StoreError> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| self.backend("begin read", e))?;
        let meta_table = txn
            .open_table(META)
            .map_err(|e| self.backend("open meta", e))?;
        let meta = match meta_table
            .get(CLUSTER_KEY)
            .map_err(|e| self.backend("read meta", e))?
        {
            Some(bytes) => Some(self.decode::<ClusterMeta>(bytes.value(), "cluster meta")?),
            None => None,
        };
        let node_labels = match meta_table
            .get(NODE_LABELS_KEY)
            .map_err(|e| self.backend("read node labels", e))?
        {
            Some(bytes) => self.decode::<NodeLabelsRecord>(bytes.value(), "node labels")?,
            None => NodeLabelsRecord::default(),
        };

        let next_reservation_seq = match meta_table
            .get(RESERVATION_SEQ_KEY)
            .map_err(|e| self.backend("read reservation sequence", e))?
        {
            Some(bytes) => self.decode::<u64>(bytes.value(), "reservation sequence")?,
            None => 0,
        };
        let mut reservations = Vec::new();
        for entry in meta_table
            .range(RESERVATION_PREFIX..)
            .map_err(|e| self.backend("read reservations", e))?
        {
            let (key, value) = entry.map_err(|e| self.backend("read reservations", e))?;
            let Some(id) = key.value().strip_prefix(RESERVATION_PREFIX) else {
                break;
            };
            let what = format!("reservation {id}");
            let record: ReservationRecord = self.decode(value.value(), &what)?;
            if record.id != id {
                return Err(self.corrupt(what, format!("record says id {}", record.id)));
            }
            reservations.push(record);
        }

        let apps_table = txn
            .open_table(APPS)
            .map_err(|e| self.backend("open apps", e))?;
        let mut apps = Vec::new();
        for entry in apps_table
            .iter()
            .map_err(|e| self.backend("read apps", e))?
        {
            let (key, value) = entry.map_err(|e| self.backend("read apps", e))?;
            let id = key.value();
            let what = format!("application {id}");
            let app: ApplicationRecord = self.decode(value.value(), &what)?;
            if app.app_id != id {
                return Err(self.corrupt(what, format!("record says app id {}", app.app_id)));
            }
            apps.push(RecoveredApp {
                app,
                attempts: Vec::new(),
            });
        }

        let attempts_table = txn
            .open_table(ATTEMPTS)
            .map_err(|e| self.backend("open attempts", e))?;
        for entry in attempts_table
            .iter()
            .map_err(|e| self.backend("read attempts", e))?
        {
            let (key, value) = entry.map_err(|e| self.backend("read attempts", e))?;
            let (app_id, number) = key.value();
            let what = format!("attempt {number} of application {app_id}");
            let attempt: AttemptRecord = self.decode(value.value(), &what)?;
            if (attempt.app_id, attempt.attempt) != (app_id, number) {
                let detail = format!(
                    "record says attempt {} of application {}",
                    attempt.attempt, attempt.app_id
                );
                return Err(self.corrupt(what, detail));
            }
            // Both tables iterate in key order, so apps are sorted by id and attempts arrive
            // sorted by (app, attempt).
            match apps.binary_search_by_key(&app_id, |a| a.app.app_id) {
                Ok(i) => apps[i].attempts.push(attempt),
                Err(_) => {
                    return Err(self.corrupt(what, "its application is not stored".to_owned()))
                }
            }
        }
        let demands = self.load_demands(&txn)?;
        Ok(RecoveredState {
            meta,
            node_labels,
            apps,
            reservations,
            next_reservation_seq,
            demands,
        })
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        let txn = self.begin_write()?;
        match self.write_all(&txn, writes) {
            Ok(()) => self.commit(txn),
            Err(e) => {
                // Nothing of the batch may survive; the original error is the one to report.
                let _ = self.discard(txn);
                Err(e)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conformance::{sample_app, sample_attempt};

    /// Opens a store, writes one app with an attempt, closes it, then edits the file directly.
    fn store_then_tamper(edit: impl FnOnce(&redb::WriteTransaction)) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = RedbStore::open(dir.path()).unwrap();
            store.put_app(&sample_app(1)).unwrap();
            store.put_attempt(&sample_attempt(1, 1)).unwrap();
        }
        let db = Database::create(dir.path().join(STORE_FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        edit(&txn);
        txn.commit().unwrap();
        dir
    }

    fn corrupt_what(result: Result<RecoveredState, StoreError>) -> String {
        match result {
            Err(StoreError::Corrupt { what, .. }) => what,
            other => panic!("expected a Corrupt error, got {other:?}"),
        }
    }

    #[test]
    fn a_store_with_a_small_or_no_cache_keeps_what_it_wrote() {
        for cache_bytes in [0, 4096, DEFAULT_CACHE_BYTES] {
            let dir = tempfile::tempdir().unwrap();
            {
                let store = RedbStore::open_with_cache(dir.path(), cache_bytes).unwrap();
                for app in 1..=50 {
                    store.put_app(&sample_app(app)).unwrap();
                    store.put_attempt(&sample_attempt(app, 1)).unwrap();
                }
            }
            let state = RedbStore::open_with_cache(dir.path(), cache_bytes)
                .unwrap()
                .load()
                .unwrap();
            assert_eq!(state.apps.len(), 50, "cache of {cache_bytes} bytes");
        }
    }

    #[test]
    fn garbage_file_is_an_open_error_naming_the_file() {
        for garbage in [b"hello, not a database".to_vec(), vec![0xA5; 64 * 1024]] {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(STORE_FILE_NAME);
            std::fs::write(&path, &garbage).unwrap();
            let err = RedbStore::open(dir.path()).unwrap_err();
            assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
            assert!(
                err.to_string().contains(&path.display().to_string()),
                "{err}"
            );
        }
    }

    #[test]
    fn data_dir_that_cannot_be_created_is_an_open_error() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("not-a-dir");
        std::fs::write(&blocker, b"").unwrap();
        let err = RedbStore::open(&blocker).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
        assert!(err.to_string().contains("not-a-dir"), "{err}");
    }

    #[test]
    fn second_open_of_a_held_store_fails() {
        let dir = tempfile::tempdir().unwrap();
        let _held = RedbStore::open(dir.path()).unwrap();
        let err = RedbStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    }

    #[test]
    fn other_schema_version_is_refused() {
        let dir = store_then_tamper(|txn| {
            let mut meta = txn.open_table(META).unwrap();
            meta.insert(VERSION_KEY, b"99".as_slice()).unwrap();
        });
        let err = RedbStore::open(dir.path()).unwrap_err();
        match &err {
            StoreError::IncompatibleVersion {
                found: 99,
                expected: SCHEMA_VERSION,
                path,
            } => assert_eq!(path, &dir.path().join(STORE_FILE_NAME)),
            other => panic!("expected IncompatibleVersion, got {other:?}"),
        }
        assert!(err.to_string().contains("schema version 99"), "{err}");
    }

    #[test]
    fn missing_schema_version_with_data_is_corrupt() {
        let dir = store_then_tamper(|txn| {
            txn.open_table(META).unwrap().remove(VERSION_KEY).unwrap();
        });
        let err = RedbStore::open(dir.path()).unwrap_err();
        assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    }

    #[test]
    fn undecodable_records_are_corrupt_errors() {
        let dir = store_then_tamper(|txn| {
            let mut apps = txn.open_table(APPS).unwrap();
            apps.insert(7, b"{\"app_id\": 7, \"name\":".as_slice())
                .unwrap();
        });
        let store = RedbStore::open(dir.path()).unwrap();
        assert_eq!(corrupt_what(store.load()), "application 7");

        let dir = store_then_tamper(|txn| {
            let mut attempts = txn.open_table(ATTEMPTS).unwrap();
            attempts.insert((1, 2), [0xFF, 0x00].as_slice()).unwrap();
        });
        let store = RedbStore::open(dir.path()).unwrap();
        assert_eq!(corrupt_what(store.load()), "attempt 2 of application 1");

        let dir = store_then_tamper(|txn| {
            let mut meta = txn.open_table(META).unwrap();
            meta.insert(CLUSTER_KEY, b"[]".as_slice()).unwrap();
        });
        let store = RedbStore::open(dir.path()).unwrap();
        assert_eq!(corrupt_what(store.load()), "cluster meta");
    }

    #[test]
    fn records_that_contradict_their_keys_are_corrupt_errors() {
        let dir = store_then_tamper(|txn| {
            let mut apps = txn.open_table(APPS).unwrap();
            let bytes = serde_json::to_vec(&sample_app(4)).unwrap();
            apps.insert(3, bytes.as_slice()).unwrap();
        });
        let store = RedbStore::open(dir.path()).unwrap();
        assert_eq!(corrupt_what(store.load()), "application 3");

        let dir = store_then_tamper(|txn| {
            let mut attempts = txn.open_table(ATTEMPTS).unwrap();
            let bytes = serde_json::to_vec(&sample_attempt(5, 1)).unwrap();
            attempts.insert((5, 1), bytes.as_slice()).unwrap();
        });
        let store = RedbStore::open(dir.path()).unwrap();
        assert_eq!(corrupt_what(store.load()), "attempt 1 of application 5");
    }
}
