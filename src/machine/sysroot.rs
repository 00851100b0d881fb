//! Where the machine's own files (`/proc`, `/sys`) are read from: the root
//! of this machine, or in tests a fixture tree laid out the same way, so
//! that every reader of the machine's facts (the topology of `ipcmark map`,
//! the checks of `ipcmark doctor`) is tested against machines this one is
//! not, without changing this one.

use std::path::PathBuf;

/// A root under which absolute machine paths (`/sys/devices/system/cpu`)
/// are looked up.
#[derive(Debug, Clone)]
pub struct SysRoot {
    base: PathBuf,
}

impl SysRoot {
    /// This machine's own root, `/`.
    pub fn host() -> SysRoot {
        SysRoot {
            base: PathBuf::from("/"),
        }
    }

    /// A fixture tree: `/sys/x` is read from `base/sys/x`.
    // Only tests point a reader at another root so far.
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn at(base: impl Into<PathBuf>) -> SysRoot {
        SysRoot { base: base.into() }
    }

    /// Where the absolute machine path `abs` lies under this root.
    pub fn path(&self, abs: &str) -> PathBuf {
        self.base.join(abs.trim_start_matches('/'))
    }

    /// The whole file at `abs`, or `None` where it cannot be read.
    pub fn read_raw(&self, abs: &str) -> Option<String> {
        std::fs::read_to_string(self.path(abs)).ok()
    }

    /// The file at `abs` with its surrounding white space trimmed; `None`
    /// where it cannot be read or is empty.
    pub fn read(&self, abs: &str) -> Option<String> {
        let text = self.read_raw(abs)?;
        let text = text.trim();
        (!text.is_empty()).then(|| text.to_string())
    }

    /// The names in the directory `abs`, sorted; empty where it cannot be read.
    pub fn list(&self, abs: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(abs))
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter_map(|e| e.file_name().into_string().ok())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Whether `abs` exists under this root.
    pub fn exists(&self, abs: &str) -> bool {
        self.path(abs).exists()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fixture_root_reads_its_own_tree() {
        let dir = std::env::temp_dir().join(format!("ipcmark-sysroot-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("sys/devices/system/cpu/cpu0")).unwrap();
        std::fs::write(dir.join("sys/devices/system/cpu/online"), "0-1\n").unwrap();
        let root = SysRoot::at(&dir);
        assert_eq!(
            root.read("/sys/devices/system/cpu/online").as_deref(),
            Some("0-1")
        );
        assert_eq!(root.list("/sys/devices/system/cpu"), ["cpu0", "online"]);
        assert!(root.read("/sys/nothing").is_none());
        assert!(root.list("/sys/nothing").is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
