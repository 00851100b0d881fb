//! The application load's kernels, after MiBench's `bitcount` and `qsort`
//! (the RTOS study's task load): small, deterministic, and each round's
//! result checked, so a load that ran wrong cannot pass for one that ran.

/// What a CPU load process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuKind {
    /// Bit counting by four methods, which must agree.
    Bitcount,
    /// Quicksort of pseudo-random words, checked sorted and a permutation.
    Qsort,
    /// Both, one round each in turn.
    Mixed,
}

impl CpuKind {
    /// The name in a load spec (`cpu:N:KIND`).
    pub fn name(self) -> &'static str {
        match self {
            CpuKind::Bitcount => "bitcount",
            CpuKind::Qsort => "qsort",
            CpuKind::Mixed => "mixed",
        }
    }

    /// The kind named `name`.
    pub fn from_name(name: &str) -> Option<CpuKind> {
        [CpuKind::Bitcount, CpuKind::Qsort, CpuKind::Mixed]
            .into_iter()
            .find(|k| k.name() == name)
    }
}

/// Words one round works on: a few ms of work per round here.
pub const ROUND_WORDS: usize = 16 * 1024;

/// A deterministic generator (xorshift64*), so every round is reproducible.
pub struct Words(u64);

impl Words {
    /// A generator started from `seed` (0 is replaced: xorshift needs a set bit).
    pub fn new(seed: u64) -> Words {
        Words(seed.max(1))
    }

    /// The next 32-bit word.
    pub fn next_word(&mut self) -> u32 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 32) as u32
    }
}

/// Bits set, by clearing the lowest one until none is left (MiBench's `bit_count`).
fn by_clearing(mut x: u32) -> u32 {
    let mut n = 0;
    while x != 0 {
        x &= x - 1;
        n += 1;
    }
    n
}

/// Bits set, by a 256-entry table over the four bytes (MiBench's `bit_count_table`).
fn by_table(x: u32, table: &[u8; 256]) -> u32 {
    x.to_le_bytes()
        .iter()
        .map(|&b| table[b as usize] as u32)
        .sum()
}

/// Bits set, by shifting one bit out at a time (MiBench's `bit_shifter`).
fn by_shifting(mut x: u32) -> u32 {
    let mut n = 0;
    while x != 0 {
        n += x & 1;
        x >>= 1;
    }
    n
}

/// Bits set, by parallel sums of fields (MiBench's `ntbl_bitcnt` shape).
fn by_fields(x: u32) -> u32 {
    let x = x - ((x >> 1) & 0x5555_5555);
    let x = (x & 0x3333_3333) + ((x >> 2) & 0x3333_3333);
    let x = (x + (x >> 4)) & 0x0F0F_0F0F;
    x.wrapping_mul(0x0101_0101) >> 24
}

/// One bit-count round over `ROUND_WORDS` words from `seed`: the total of
/// bits set, or an error if the four methods disagree on a word.
pub fn bitcount_round(seed: u64) -> Result<u64, String> {
    let mut table = [0u8; 256];
    for (i, t) in table.iter_mut().enumerate() {
        *t = by_shifting(i as u32) as u8;
    }
    let mut words = Words::new(seed);
    let mut total = 0u64;
    for _ in 0..ROUND_WORDS {
        let w = words.next_word();
        let a = by_clearing(w);
        if by_table(w, &table) != a || by_shifting(w) != a || by_fields(w) != a {
            return Err(format!("bitcount: the methods disagree on {w:#010x}"));
        }
        total += a as u64;
    }
    Ok(total)
}

/// Sorts `v` in place: quicksort with a median-of-three pivot, insertion
/// sort below 16 elements, recursing into the smaller side only.
pub fn quicksort(v: &mut [u32]) {
    let mut v = v;
    while v.len() > 16 {
        let n = v.len();
        let (a, b, c) = (v[0], v[n / 2], v[n - 1]);
        let pivot = a.max(b).min(a.min(b).max(c));
        // Hoare partition.
        let (mut i, mut j) = (0usize, n - 1);
        loop {
            while v[i] < pivot {
                i += 1;
            }
            while v[j] > pivot {
                j -= 1;
            }
            if i >= j {
                break;
            }
            v.swap(i, j);
            i += 1;
            j -= 1;
        }
        let (left, right) = v.split_at_mut(j + 1);
        if left.len() < right.len() {
            quicksort(left);
            v = right;
        } else {
            quicksort(right);
            v = left;
        }
    }
    for i in 1..v.len() {
        let mut k = i;
        while k > 0 && v[k - 1] > v[k] {
            v.swap(k - 1, k);
            k -= 1;
        }
    }
}

/// One sort round over `ROUND_WORDS` words from `seed` (in `buf`): the
/// sorted words' checksum, or an error if they are out of order or are not
/// the words that went in (sum and xor kept).
pub fn qsort_round(seed: u64, buf: &mut Vec<u32>) -> Result<u64, String> {
    let mut words = Words::new(seed);
    buf.clear();
    buf.extend((0..ROUND_WORDS).map(|_| words.next_word()));
    let sum_in: u64 = buf.iter().map(|&w| w as u64).sum();
    let xor_in = buf.iter().fold(0u32, |a, &w| a ^ w);
    quicksort(buf);
    if let Some(i) = buf.windows(2).position(|w| w[0] > w[1]) {
        return Err(format!("qsort: out of order at {i}"));
    }
    let sum_out: u64 = buf.iter().map(|&w| w as u64).sum();
    let xor_out = buf.iter().fold(0u32, |a, &w| a ^ w);
    if sum_in != sum_out || xor_in != xor_out {
        return Err("qsort: the sorted words are not the words that went in".into());
    }
    Ok(sum_out ^ xor_out as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bitcount_method_agrees_with_the_hardware_count() {
        let mut table = [0u8; 256];
        for (i, t) in table.iter_mut().enumerate() {
            *t = by_shifting(i as u32) as u8;
        }
        let mut w = Words::new(7);
        for x in [0, 1, u32::MAX, 0x8000_0000]
            .into_iter()
            .chain((0..1000).map(|_| w.next_word()))
        {
            let n = x.count_ones();
            assert_eq!(by_clearing(x), n, "{x:#x}");
            assert_eq!(by_table(x, &table), n, "{x:#x}");
            assert_eq!(by_shifting(x), n, "{x:#x}");
            assert_eq!(by_fields(x), n, "{x:#x}");
        }
    }

    #[test]
    fn rounds_are_deterministic_and_checked() {
        assert_eq!(bitcount_round(3).unwrap(), bitcount_round(3).unwrap());
        assert_ne!(bitcount_round(3).unwrap(), bitcount_round(4).unwrap());
        let mut buf = Vec::new();
        let a = qsort_round(9, &mut buf).unwrap();
        assert!(buf.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(a, qsort_round(9, &mut buf).unwrap());
    }

    #[test]
    fn quicksort_sorts_what_std_sorts() {
        let mut w = Words::new(11);
        for n in [0, 1, 2, 15, 16, 17, 100, 1000] {
            let mut v: Vec<u32> = (0..n).map(|_| w.next_word() % 50).collect();
            let mut expected = v.clone();
            expected.sort_unstable();
            quicksort(&mut v);
            assert_eq!(v, expected, "n = {n}");
        }
    }

    #[test]
    fn kinds_round_trip_through_their_names() {
        for k in [CpuKind::Bitcount, CpuKind::Qsort, CpuKind::Mixed] {
            assert_eq!(CpuKind::from_name(k.name()), Some(k));
        }
        assert_eq!(CpuKind::from_name("fft"), None);
    }
}
