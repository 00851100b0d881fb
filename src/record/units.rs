//! How a report's numbers read in words, the same on the page and in the
//! warnings' messages: a size (64, 4K, 1M) and a fraction as a percentage.

/// Human form of a byte count: 64, 4K, 1M.
pub fn format_size(bytes: usize) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{}M", bytes >> 20)
    } else if bytes >= 1024 && bytes.is_multiple_of(1024) {
        format!("{}K", bytes >> 10)
    } else {
        bytes.to_string()
    }
}

/// A fraction as a percentage with no more digits than it needs
/// (0.02 → "2", 0.075 → "7.5", 0.00001 → "0.001").
pub fn percent(fraction: f64) -> String {
    let v = fraction * 100.0;
    let s = if v >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    };
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}
