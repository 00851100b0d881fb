//! The kernel's limits a mechanism reads before it opens a channel
//! (`/proc/sys/fs/mqueue/msgsize_max`, `/proc/sys/fs/pipe-max-size`, …).

/// Reads a numeric kernel limit such as `/proc/sys/fs/mqueue/msgsize_max`.
pub fn kernel_limit(path: &str) -> Option<usize> {
    read_trim(path)?.parse().ok()
}

fn read_trim(path: &str) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}
