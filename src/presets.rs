//! Presets: the experiments of the classic studies, as ready-made runs. Each
//! names the study it reproduces, the mechanisms standing in for the study's
//! columns, and the study's sizes.

/// One column of a preset's table: a mechanism, warm or cold.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Mechanism id.
    pub mechanism: &'static str,
    /// Whether each message uses a fresh, uncached buffer (`--cold`).
    pub cold: bool,
    /// The study's name for the column.
    pub label: &'static str,
}

/// A ready-made run.
#[derive(Debug, Clone, Copy)]
pub struct Preset {
    /// Name on the command line.
    pub name: &'static str,
    /// The study and table it reproduces.
    pub study: &'static str,
    /// The mechanisms, in the table's column order.
    pub columns: &'static [Column],
    /// The study's message sizes, bytes.
    pub sizes: &'static [usize],
}

/// Every preset.
pub static PRESETS: &[Preset] = &[Preset {
    name: "qnx-table4",
    study: "QNX 4 IPC study (1998), Table 4: transfer time (µs) by message size, one column per mechanism",
    columns: &[
        Column {
            mechanism: "pipe",
            cold: false,
            label: "pipe",
        },
        Column {
            mechanism: "fifo",
            cold: false,
            label: "FIFO",
        },
        Column {
            mechanism: "vm-copy",
            cold: false,
            label: "message",
        },
        Column {
            mechanism: "unix-seqpacket",
            cold: false,
            label: "message (socket)",
        },
        Column {
            mechanism: "vm-copy",
            cold: true,
            label: "message, no cache",
        },
        Column {
            mechanism: "signal-sigqueue",
            cold: false,
            label: "proxy",
        },
        Column {
            mechanism: "shm-posix-sem",
            cold: false,
            label: "shm + sem + memcpy",
        },
    ],
    sizes: &[
        1, 32, 100, 128, 512, 1024, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192, 10240, 12288,
        15369, 22528,
    ],
}];

/// Finds a preset by name.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// All names.
pub fn names() -> Vec<&'static str> {
    PRESETS.iter().map(|p| p.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_column_names_a_registered_mechanism() {
        for p in PRESETS {
            for c in p.columns {
                assert!(
                    crate::mechanisms::find(c.mechanism).is_some(),
                    "{}: {}",
                    p.name,
                    c.mechanism
                );
            }
            assert!(
                !p.sizes.is_empty() && p.sizes.windows(2).all(|w| w[0] < w[1]),
                "{}",
                p.name
            );
        }
    }
}
