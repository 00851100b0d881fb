//! Opening the history: whose a database is (ipcmark's `application_id`,
//! or a history made before it), a writer's set-up and migration, and a
//! reader that changes nothing (read-only, and `immutable=1` where a WAL
//! database's directory cannot be written). Apart from the queries because
//! every rule here is about what may touch the file, not what is in it.

use super::*;

/// ipcmark's mark in the header of its databases (`PRAGMA application_id`,
/// the ASCII of "IPCM"): a database with another mark, or none and tables
/// that are not a history's, is another program's and is never altered.
pub const APPLICATION_ID: i32 = 0x4950_434D;

/// What a database's header and schema say about whose it is.
struct Found {
    /// `PRAGMA application_id`.
    id: i32,
    /// `PRAGMA user_version`: the migrations it has had.
    version: usize,
    /// The names of its tables, views, indexes and triggers.
    objects: Vec<String>,
    /// Whether its tables are a history's: `runs` and `figures` with the
    /// columns this ipcmark reads (a history made before the mark).
    history_tables: bool,
}

/// Reads whose database `conn` is, writing nothing.
fn owner(conn: &Connection) -> rusqlite::Result<Found> {
    let id: i32 = conn.query_row("PRAGMA application_id", [], |r| r.get(0))?;
    let version = user_version(conn)?;
    let objects = conn
        .prepare("SELECT name FROM sqlite_schema ORDER BY rowid")?
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let columns = |table: &str, names: &[&str]| -> rusqlite::Result<bool> {
        let n: i64 = conn.query_row(
            &format!(
                "SELECT count(*) FROM pragma_table_info('{table}') WHERE name IN ({})",
                names
                    .iter()
                    .map(|n| format!("'{n}'"))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            [],
            |r| r.get(0),
        )?;
        Ok(n as usize == names.len())
    };
    let history_tables = columns("runs", &["id", "kind", "complete", "report"])?
        && columns("figures", &["run_id", "ordinal", "figure"])?;
    Ok(Found {
        id,
        version,
        objects,
        history_tables,
    })
}

/// Whether `path` may be opened as a history, by what [`owner`] found;
/// whether it has its tables (false: a new, empty file).
fn check_owner(path: &Path, found: &Found) -> Result<bool, Error> {
    let ours = found.id == APPLICATION_ID || (found.id == 0 && found.history_tables);
    if !ours && found.id != 0 {
        return Err(Error::Store(format!(
            "{} is another program's SQLite database (application_id {:#010x}, ipcmark's is {APPLICATION_ID:#010x}): not opened, left unchanged; give --db another file",
            path.display(),
            found.id,
        )));
    }
    if !ours && !found.objects.is_empty() {
        let mut what = found.objects.iter().take(3).cloned().collect::<Vec<_>>();
        if found.objects.len() > 3 {
            what.push("…".into());
        }
        return Err(Error::Store(format!(
            "{} is not an ipcmark history (no ipcmark application_id, and it holds {}): not opened, left unchanged; give --db another file",
            path.display(),
            what.join(", ")
        )));
    }
    if found.version > schema::latest() {
        return Err(Error::Store(format!(
            "history {} was written by a newer ipcmark (schema version {}, this one knows up to {}): not opened, left unchanged",
            path.display(),
            found.version,
            schema::latest()
        )));
    }
    Ok(!found.objects.is_empty())
}

/// Whether a reader, which migrates nothing, can read the schema found.
fn check_readable(path: &Path, found: &Found) -> Result<(), Error> {
    if !found.objects.is_empty() && found.version < schema::oldest_readable() {
        return Err(Error::Store(format!(
            "history {} has an older schema (version {}, this ipcmark reads {} to {}): run a command that writes it (ipcmark import, run) to upgrade it",
            path.display(),
            found.version,
            schema::oldest_readable(),
            schema::latest()
        )));
    }
    Ok(())
}

/// Whether `e` is SQLite failing to read a WAL database read-only because
/// it cannot create or open its shared-memory file.
fn cannot_make_shm(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::ReadOnly | rusqlite::ErrorCode::CannotOpen)
    )
}

/// `path` with `suffix` appended: SQLite's `-wal` and `-shm` beside it.
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// The URI that opens `path` as an immutable file (RFC 3986, every byte
/// but the unreserved ones and `/` percent-encoded, so `?`, `#` and `%` in
/// a name stay part of it).
fn immutable_uri(path: &Path) -> std::io::Result<String> {
    use std::os::unix::ffi::OsStrExt;
    let abs = std::path::absolute(path)?;
    let mut uri = String::from("file:");
    for &b in abs.as_os_str().as_bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            uri.push(b as char);
        } else {
            uri.push_str(&format!("%{b:02X}"));
        }
    }
    uri.push_str("?immutable=1");
    Ok(uri)
}

fn must_exist(path: &Path) -> Result<(), Error> {
    if path.exists() {
        Ok(())
    } else {
        Err(Error::Usage(format!(
            "no history at {} yet: no run has been saved there",
            path.display()
        )))
    }
}

/// How long a write waits for another process's transaction to end.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Why opening the history failed: a lock another process holds for a
/// moment (worth trying again), or anything else.
enum Setup {
    Busy(String),
    Other(Error),
}

impl Setup {
    fn from_sql(path: &Path) -> impl Fn(rusqlite::Error) -> Setup + '_ {
        move |e| {
            if is_busy(&e) {
                Setup::Busy(e.to_string())
            } else {
                Setup::Other(sqlite_error(path, &e))
            }
        }
    }
}

/// Whether `e` is SQLite's "database is busy / locked".
fn is_busy(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked)
    )
}

impl Store {
    /// Opens the history at `path` for a command that writes it, creating
    /// it (and its directory) if needed and bringing its tables up to date.
    /// A database written by a newer ipcmark, or another program's, is
    /// refused before anything is written to it.
    pub fn open(path: &Path) -> Result<Store, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| sql_error(path, format!("cannot create {}: {e}", dir.display())))?;
        }
        Self::connect(path, OpenFlags::default())
    }

    /// Opens the history at `path` for a command that writes it but does
    /// not create it (`history --prune`).
    pub fn open_existing(path: &Path) -> Result<Store, Error> {
        must_exist(path)?;
        Self::connect(path, OpenFlags::default() - OpenFlags::SQLITE_OPEN_CREATE)
    }

    /// Opens the history at `path` for a command that only reads it
    /// (`history`, `show`, `compare`, `export`, `report`): read-only, so a
    /// history the user may read but not write, or one on a read-only
    /// mount, can be read, and nothing in the file is changed (no
    /// migration, no switch of journal mode, no `application_id`).
    pub fn open_reader(path: &Path) -> Result<Store, Error> {
        must_exist(path)?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let store = match Self::reader(path, Connection::open_with_flags(path, flags)) {
            Err(Setup::Busy(e)) => return Err(sql_error(path, e)),
            Err(Setup::Other(e)) => return Err(e),
            Ok(None) => return Ok(Store::read_only(path, Self::open_immutable(path)?)),
            Ok(Some(conn)) => conn,
        };
        Ok(Store::read_only(path, store))
    }

    fn read_only(path: &Path, (conn, tables): (Connection, bool)) -> Store {
        Store {
            conn,
            path: path.to_path_buf(),
            tables,
        }
    }

    /// `opened` checked as a reader's connection: whose database it is and
    /// which schema it has. `None` when SQLite cannot read it read-only
    /// because a database in WAL mode needs its shared-memory file (`-shm`)
    /// and this user cannot create it (a directory they may not write, a
    /// read-only mount): then [`open_immutable`](Self::open_immutable).
    fn reader(
        path: &Path,
        opened: rusqlite::Result<Connection>,
    ) -> Result<Option<(Connection, bool)>, Setup> {
        let conn = opened.map_err(Setup::from_sql(path))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(Setup::from_sql(path))?;
        match owner(&conn) {
            Err(e) if cannot_make_shm(&e) => Ok(None),
            Err(e) => Err(Setup::from_sql(path)(e)),
            Ok(found) => {
                let tables = check_owner(path, &found).map_err(Setup::Other)?;
                check_readable(path, &found).map_err(Setup::Other)?;
                Ok(Some((conn, tables)))
            }
        }
    }

    /// Opens `path` as SQLite's immutable file (no locks, no `-shm`): only
    /// when no write-ahead log lies beside it, so the file holds every
    /// committed run. A log that is there and cannot be read this way is
    /// refused: reading without it would miss runs.
    fn open_immutable(path: &Path) -> Result<(Connection, bool), Error> {
        let wal = sidecar(path, "-wal");
        if wal.exists() {
            return Err(Error::Store(format!(
                "history {}: its write-ahead log {} cannot be read by this user (the directory is not writable and there is no readable {}); run a writing command (ipcmark import, run) on it as its owner, which folds the log into the database",
                path.display(),
                wal.display(),
                sidecar(path, "-shm").display()
            )));
        }
        let uri = immutable_uri(path).map_err(|e| sql_error(path, e))?;
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        match Self::reader(path, Connection::open_with_flags(uri, flags)) {
            Ok(Some(opened)) => Ok(opened),
            Ok(None) => Err(sql_error(path, "cannot be read, even as an immutable file")),
            Err(Setup::Busy(e)) => Err(sql_error(path, e)),
            Err(Setup::Other(e)) => Err(e),
        }
    }

    fn connect(path: &Path, flags: OpenFlags) -> Result<Store, Error> {
        let mut conn =
            Connection::open_with_flags(path, flags).map_err(|e| sqlite_error(path, &e))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(|e| sql_error(path, e))?;
        // SQLite answers "database is locked" at once, without its busy
        // handler, where waiting could deadlock: switching a new file to WAL
        // or reading it while another process does so or migrates it. Only
        // then is the whole set-up tried again, until the busy timeout.
        let deadline = std::time::Instant::now() + BUSY_TIMEOUT;
        loop {
            match Self::set_up(&mut conn, path) {
                Err(Setup::Busy(_)) if std::time::Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(5 + fastrand::u64(0..20)));
                }
                Err(Setup::Busy(e)) => return Err(sql_error(path, e)),
                Err(Setup::Other(e)) => return Err(e),
                Ok(()) => break,
            }
        }
        Ok(Store {
            conn,
            path: path.to_path_buf(),
            tables: true,
        })
    }

    /// Checks whose database it is and its schema version, switches to WAL,
    /// migrates and marks it as ipcmark's: the steps of opening that
    /// another process opening the same new file can make fail at once
    /// with "database is locked" ([`Setup::Busy`]).
    fn set_up(conn: &mut Connection, path: &Path) -> Result<(), Setup> {
        // Read before anything is written: another program's database, or
        // a newer schema, is left as it is.
        let found = owner(conn).map_err(Setup::from_sql(path))?;
        check_owner(path, &found).map_err(Setup::Other)?;
        let version = found.version;
        // WAL lets a reader and a writer, or two runs, share the file; the
        // busy timeout makes a second writer wait its turn.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(Setup::from_sql(path))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(Setup::from_sql(path))?;
        // Immediate transactions take the write lock at once, so they wait
        // under the busy timeout instead of failing on an upgrade.
        conn.set_transaction_behavior(rusqlite::TransactionBehavior::Immediate);
        if version < schema::latest()
            && let Err(e) = schema::migrations().to_latest(conn)
        {
            if let rusqlite_migration::Error::RusqliteError { err, .. } = &e
                && is_busy(err)
            {
                return Err(Setup::Busy(e.to_string()));
            }
            // Two processes creating the history at once: the other one may
            // have migrated it meanwhile.
            if user_version(conn).ok() != Some(schema::latest()) {
                return Err(Setup::Other(match &e {
                    rusqlite_migration::Error::RusqliteError { err, .. } => sqlite_error(path, err),
                    _ => sql_error(path, e),
                }));
            }
        }
        // A new history, or one made before ipcmark marked its databases,
        // is marked now (a history made before is recognised by its tables).
        if found.id != APPLICATION_ID {
            conn.pragma_update(None, "application_id", APPLICATION_ID)
                .map_err(Setup::from_sql(path))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reader_of_an_empty_file_sees_an_empty_history_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        std::fs::write(&path, b"").unwrap();
        let s = Store::open_reader(&path).unwrap();
        assert!(s.runs().unwrap().is_empty());
        assert!(matches!(s.resolve("last"), Err(Error::Usage(m)) if m.contains("empty")));
        assert!(matches!(s.resolve("1"), Err(Error::Usage(m)) if m.contains("no run 1")));
        drop(s);
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 0);
        // A writer makes it a history, marked as ipcmark's.
        let w = Store::open(&path).unwrap();
        let id: i32 = w
            .conn
            .query_row("PRAGMA application_id", [], |r| r.get(0))
            .unwrap();
        assert_eq!(id, APPLICATION_ID);
    }

    #[test]
    fn a_database_marked_by_another_program_is_refused_even_when_empty() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("other.sqlite");
        Connection::open(&path)
            .unwrap()
            .execute_batch("PRAGMA application_id = 42")
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        for open in [Store::open, Store::open_reader, Store::open_existing] {
            let Err(Error::Store(m)) = open(&path) else {
                panic!("opened another program's database")
            };
            assert!(
                m.contains("another program's") && m.contains("0x0000002a"),
                "{m}"
            );
        }
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_reader_refuses_a_schema_older_than_its_own_and_asks_for_a_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("h.sqlite");
        Connection::open(&path)
            .unwrap()
            .execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; CREATE TABLE runs (id INTEGER);"
            ))
            .unwrap();
        let before = std::fs::read(&path).unwrap();
        let Err(Error::Store(m)) = Store::open_reader(&path) else {
            panic!("read a schema it does not know")
        };
        assert!(
            m.contains("older schema") && m.contains("ipcmark import"),
            "{m}"
        );
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn the_immutable_uri_keeps_every_byte_of_the_name() {
        let uri = immutable_uri(Path::new("/tmp/a b?c#d%e/h.sqlite")).unwrap();
        assert_eq!(uri, "file:/tmp/a%20b%3Fc%23d%25e/h.sqlite?immutable=1");
    }
}
