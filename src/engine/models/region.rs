//! Where each message lives in memory: always in one buffer (warm: it stays
//! in cache), or in the next slot of a region larger than the last-level
//! cache (cold: the QNX study's "without cache" column, which it obtained by
//! moving the buffer).

/// Slots are cache-line aligned so that consecutive messages share no line.
const LINE: usize = 64;

/// A buffer region and the slot the next message uses.
pub struct Region {
    mem: Vec<u8>,
    size: usize,
    stride: usize,
    off: usize,
}

impl Region {
    /// One buffer of `size` bytes, reused by every message.
    pub fn warm(size: usize) -> Region {
        Region {
            mem: vec![0u8; size.max(1)],
            size,
            stride: 0,
            off: 0,
        }
    }

    /// A region of `region_bytes` (at least two slots) walked one message-sized
    /// slot per message, so each message's bytes were last touched a whole
    /// region ago. Written once now, so no page fault happens while timing.
    pub fn cold(size: usize, region_bytes: usize) -> Region {
        let stride = size.max(1).next_multiple_of(LINE);
        Region {
            mem: vec![0x5Au8; region_bytes.max(2 * stride)],
            size,
            stride,
            off: 0,
        }
    }

    /// The region a peer's server loop walks: in a cold figure both copies
    /// of a message start from memory, as in the study.
    pub fn for_peer(serving: &crate::engine::os::peer::Serving) -> Region {
        match serving.cold_region {
            Some(bytes) => Region::cold(serving.size, bytes),
            None => Region::warm(serving.size),
        }
    }

    /// The slot for the next message.
    #[inline(always)]
    pub fn next(&mut self) -> &mut [u8] {
        let at = self.off;
        self.off += self.stride;
        if self.off + self.size > self.mem.len() {
            self.off = 0;
        }
        &mut self.mem[at..at + self.size]
    }
}

/// Bytes of the largest (last-level) cache of CPU 0, from sysfs.
pub fn last_level_cache_bytes() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.flatten()
        .filter_map(|e| {
            let size = std::fs::read_to_string(e.path().join("size")).ok()?;
            let size = size.trim();
            let (num, mult) = match size.strip_suffix('K') {
                Some(n) => (n, 1024),
                None => match size.strip_suffix('M') {
                    Some(n) => (n, 1 << 20),
                    None => (size, 1),
                },
            };
            num.parse::<usize>().ok().map(|n| n * mult)
        })
        .max()
}

/// Size of a cold region: twice the last-level cache (at least 8 MiB; 64 MiB
/// when the cache size is unknown).
pub fn cold_region_bytes() -> usize {
    last_level_cache_bytes().map_or(64 << 20, |c| (2 * c).max(8 << 20))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warm_reuses_one_slot_and_cold_walks_the_region() {
        let mut w = Region::warm(100);
        let a = w.next().as_ptr();
        assert_eq!(w.next().as_ptr(), a);
        let mut c = Region::cold(100, 1000);
        let starts: Vec<usize> = (0..9).map(|_| c.next().as_ptr() as usize).collect();
        let base = starts[0];
        // 128-byte slots; the slot at 896 still fits (996 ≤ 1000), the next would not.
        let offs: Vec<usize> = starts.iter().map(|s| s - base).collect();
        assert_eq!(offs, [0, 128, 256, 384, 512, 640, 768, 896, 0]);
        assert_eq!(Region::warm(0).next().len(), 0);
        assert!(cold_region_bytes() >= 8 << 20);
    }
}
