//! Parsers for command-line values. Each error names the value and what is allowed.

use std::time::Duration;

mod rates;
pub use rates::rates_arg;

/// Largest message size accepted by `--sizes`.
pub const MAX_SIZE: usize = 16 << 20;

/// Parses one size: a whole number of bytes with an optional K or M suffix (×1024).
pub fn size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let (num, mult) = match t.chars().last() {
        Some('K') | Some('k') => (&t[..t.len() - 1], 1024),
        Some('M') | Some('m') => (&t[..t.len() - 1], 1 << 20),
        _ => (t, 1),
    };
    let bad = || {
        format!(
            "invalid size '{s}': expected a whole number of bytes with an optional K or M suffix, from 1 to 16M"
        )
    };
    let n: usize = num.parse().map_err(|_| bad())?;
    let bytes = n.checked_mul(mult).ok_or_else(bad)?;
    if bytes == 0 || bytes > MAX_SIZE {
        return Err(format!(
            "size '{s}' is out of range: sizes go from 1 byte to 16M"
        ));
    }
    Ok(bytes)
}

/// What `--cpu-latency` asks of the PM QoS CPU latency limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuLatency {
    /// Hold a limit of this many µs for the run.
    Hold(i32),
    /// Leave idle states as the machine has them.
    Off,
}

/// `--cpu-latency` value parser: a whole number of µs from 0 to 1000000, or `off`.
pub fn cpu_latency(s: &str) -> Result<CpuLatency, String> {
    let t = s.trim();
    if t == "off" {
        return Ok(CpuLatency::Off);
    }
    match t.parse::<i32>() {
        Ok(us) if (0..=1_000_000).contains(&us) => Ok(CpuLatency::Hold(us)),
        _ => Err(format!(
            "invalid CPU latency '{s}': expected a whole number of µs from 0 to 1000000, or 'off'"
        )),
    }
}

/// A list of message sizes in bytes (one command-line value, comma-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SizeList {
    /// The sizes, in order.
    pub sizes: Vec<usize>,
    /// Whether they came from `sweep` (a run for the cost model).
    pub sweep: bool,
}

/// A list of one or two CPUs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CpuList(pub Vec<usize>);

/// The dense sweep `--sizes sweep` stands for: enough sizes on each side of
/// the usual cache and buffer boundaries for the cost model to place breaks.
pub const SWEEP: &[usize] = &[
    1, 16, 64, 128, 256, 512, 1024, 2048, 3072, 4096, 6144, 8192, 12288, 16384, 24576, 32768,
    49152, 65536,
];

/// `--sizes` value parser: a list, or `sweep`.
pub fn size_list_arg(s: &str) -> Result<SizeList, String> {
    if s.trim() == "sweep" {
        return Ok(SizeList {
            sizes: SWEEP.to_vec(),
            sweep: true,
        });
    }
    size_list(s).map(|sizes| SizeList {
        sizes,
        sweep: false,
    })
}

/// `--cpus` value parser.
pub fn cpu_list_arg(s: &str) -> Result<CpuList, String> {
    cpu_list(s).map(CpuList)
}

/// Parses a comma-separated size list, keeping order and dropping repeats.
pub fn size_list(s: &str) -> Result<Vec<usize>, String> {
    let mut out = Vec::new();
    for part in s.split(',') {
        if part.trim().is_empty() {
            return Err(format!(
                "invalid size list '{s}': empty entry (expected e.g. 1,64,4K)"
            ));
        }
        let v = size(part)?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// Parses a list of one or two CPU numbers ("0,1" or "1").
pub fn cpu_list(s: &str) -> Result<Vec<usize>, String> {
    let cpus: Vec<usize> = s
        .split(',')
        .map(|p| {
            p.trim().parse::<usize>().map_err(|_| {
                format!(
                    "invalid CPU '{}' in '{s}': expected CPU numbers such as 0,1",
                    p.trim()
                )
            })
        })
        .collect::<Result<_, _>>()?;
    match cpus.len() {
        1 | 2 => Ok(cpus),
        _ => Err(format!(
            "invalid CPU list '{s}': give one CPU (both sides) or two (client,server)"
        )),
    }
}

/// `ipcmark map --home`: where a channel's shared pages are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// New pages for each pair, wherever the kernel's first touch puts them.
    Fresh,
    /// On the client's (the writer's) node.
    Writer,
    /// On the server's (the reader's) node.
    Reader,
    /// On this node.
    Node(usize),
}

impl std::fmt::Display for Home {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Home::Fresh => f.write_str("fresh"),
            Home::Writer => f.write_str("writer"),
            Home::Reader => f.write_str("reader"),
            Home::Node(n) => write!(f, "node:{n}"),
        }
    }
}

/// Parses `--home`: fresh, writer, reader or node:N.
pub fn home(s: &str) -> Result<Home, String> {
    match s.trim() {
        "fresh" => Ok(Home::Fresh),
        "writer" => Ok(Home::Writer),
        "reader" => Ok(Home::Reader),
        other => other
            .strip_prefix("node:")
            .and_then(|n| n.parse::<usize>().ok())
            .map(Home::Node)
            .ok_or_else(|| format!("invalid home '{s}': expected fresh, writer, reader or node:N")),
    }
}

/// Parses a duration such as 500us, 20ms, 1s, 1.5s or 2m.
pub fn duration(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || {
        format!("invalid duration '{s}': expected a number with a unit: us, ms, s or m (e.g. 20ms)")
    };
    let v: f64 = num.parse().map_err(|_| bad())?;
    let secs = match unit {
        "us" | "µs" => v * 1e-6,
        "ms" => v * 1e-3,
        "s" => v,
        "m" | "min" => v * 60.0,
        _ => return Err(bad()),
    };
    if !secs.is_finite() || secs <= 0.0 || secs > 3600.0 {
        return Err(format!(
            "duration '{s}' is out of range: from 1us to 1 hour"
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// Parses a message rate: a number of messages per second with an optional
/// k or M multiplier and an optional `/s` (50k/s, 50000, 1.5M/s).
pub fn rate(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t.strip_suffix("/s").unwrap_or(t);
    let (num, mult) = match t.chars().last() {
        Some('k') | Some('K') => (&t[..t.len() - 1], 1e3),
        Some('M') => (&t[..t.len() - 1], 1e6),
        _ => (t, 1.0),
    };
    let bad =
        || format!("invalid rate '{s}': expected messages per second, e.g. 50k/s, 50000 or 1.5M/s");
    let v: f64 = num.parse().map_err(|_| bad())?;
    let r = v * mult;
    if !r.is_finite() || r <= 0.0 || r > 1e9 {
        return Err(format!("rate '{s}' is out of range: above 0, at most 1G/s"));
    }
    Ok(r)
}

/// Parses `--interval`: a duration above zero, at most one minute (a
/// sporadic figure sends tens of messages, each waited for that long).
pub fn interval(s: &str) -> Result<Duration, String> {
    let d = duration(s)?;
    if d > Duration::from_secs(60) {
        return Err(format!(
            "interval '{s}' is too long: at most 60s (a figure sends tens of messages)"
        ));
    }
    Ok(d)
}

/// Parses a duration that may also be zero ("0", "0s", "30ms"): for waits a
/// user may want to leave out, such as thinking time.
pub fn duration_or_zero(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(t.len());
    if t[..split].parse::<f64>().is_ok_and(|v| v == 0.0)
        && matches!(&t[split..], "" | "us" | "µs" | "ms" | "s" | "m" | "min")
    {
        return Ok(Duration::ZERO);
    }
    duration(s)
}

/// Parses a memory size as the study wrote them: a whole number with B, KB
/// (10³), MB (10⁶), KiB (2¹⁰) or MiB (2²⁰), or no unit for bytes; "4B",
/// "40KB", "4MB".
pub fn byte_size(s: &str) -> Result<usize, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let mult: usize = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "kb" | "k" => 1_000,
        "mb" | "m" => 1_000_000,
        "kib" => 1 << 10,
        "mib" => 1 << 20,
        _ => {
            return Err(format!(
                "invalid size '{s}': expected a whole number with B, KB, MB, KiB or MiB (e.g. 4B, 40KB, 4MB)"
            ));
        }
    };
    let n: usize = num.parse().map_err(|_| {
        format!("invalid size '{s}': expected a whole number with B, KB, MB, KiB or MiB (e.g. 4B, 40KB, 4MB)")
    })?;
    n.checked_mul(mult)
        .filter(|&b| b > 0)
        .ok_or_else(|| format!("size '{s}' is out of range"))
}

/// Highest event or interrupt frequency accepted, Hz (a 10 µs period).
pub const MAX_FREQUENCY_HZ: f64 = 100_000.0;

/// Parses one frequency in Hz: a positive number up to [`MAX_FREQUENCY_HZ`].
pub fn frequency(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let t = t
        .strip_suffix("Hz")
        .or_else(|| t.strip_suffix("hz"))
        .unwrap_or(t);
    let v: f64 = t
        .parse()
        .map_err(|_| format!("invalid frequency '{s}': expected a number of Hz such as 1000"))?;
    if !v.is_finite() || v <= 0.0 || v > MAX_FREQUENCY_HZ {
        return Err(format!(
            "frequency '{s}' is out of range: from above 0 to 100000 Hz"
        ));
    }
    Ok(v)
}

/// A list of frequencies in Hz (one command-line value, comma-separated).
#[derive(Debug, Clone, PartialEq)]
pub struct FrequencyList(pub Vec<f64>);

/// `--frequencies` value parser: order kept, repeats dropped.
pub fn frequency_list_arg(s: &str) -> Result<FrequencyList, String> {
    let mut out: Vec<f64> = Vec::new();
    for part in s.split(',') {
        if part.trim().is_empty() {
            return Err(format!(
                "invalid frequency list '{s}': empty entry (expected e.g. 60,250,1000)"
            ));
        }
        let f = frequency(part)?;
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Ok(FrequencyList(out))
}

/// Parses a precision target: a percentage (`2%`) or a fraction below 1
/// (`0.02`); the result is a fraction above 0 and at most 1.
pub fn precision(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "invalid precision '{s}': expected a percentage such as 2% (or a fraction such as 0.02)"
        )
    })?;
    let f = v * scale;
    if !f.is_finite() || f <= 0.0 || f > 1.0 || (scale == 1.0 && f >= 1.0) {
        return Err(format!(
            "precision '{s}' is out of range: above 0% and at most 100% (a fraction: above 0 and below 1)"
        ));
    }
    Ok(f)
}

/// Parses a relative change (`--max-regression`, `--min-magnitude`): a
/// percentage (`5%`) or a fraction (`0.05`), above 0 and below 100%.
pub fn relative_change(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n.trim(), 0.01),
        None => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| {
        format!(
            "invalid change '{s}': expected a percentage such as 5% (or a fraction such as 0.05)"
        )
    })?;
    let f = v * scale;
    if !f.is_finite() || f <= 0.0 || f >= 1.0 {
        return Err(format!(
            "change '{s}' is out of range: above 0% and below 100%"
        ));
    }
    Ok(f)
}

/// `--tolerance` value parser: a fraction of the period, above 0 and at most
/// 1 (a wake-up a whole period late has missed the next event).
pub fn tolerance(s: &str) -> Result<f64, String> {
    let v: f64 = s.trim().parse().map_err(|_| {
        format!("invalid tolerance '{s}': expected a fraction of the period such as 0.5")
    })?;
    if !v.is_finite() || v <= 0.0 || v > 1.0 {
        return Err(format!(
            "tolerance '{s}' is out of range: a fraction of the period above 0 and at most 1"
        ));
    }
    Ok(v)
}

/// `--load`: the load's parts, comma-separated, or `none` (the accounting
/// without a load).
#[derive(Debug, Clone, PartialEq)]
pub struct LoadArg(pub Vec<crate::engine::os::load::LoadSpec>);

/// The handler's work at each expiry of an interrupt source without `work=`.
pub const DEFAULT_IRQ_WORK: Duration = Duration::from_micros(2);

/// Parses `--load`: `irq:FREQ[:work=DUR]`, `cpu:N[:bitcount|qsort|mixed]`,
/// `net:RATE` (datagrams per second, `k` for thousands), comma-separated;
/// or `none`.
pub fn load_arg(s: &str) -> Result<LoadArg, String> {
    use crate::engine::os::load::{self, CpuKind, LoadSpec};
    if s.trim() == "none" {
        return Ok(LoadArg(Vec::new()));
    }
    let expected = "expected irq:FREQ[:work=DUR], cpu:N[:bitcount|qsort|mixed] or net:RATE, \
                    comma-separated (e.g. irq:4000,cpu:2), or none";
    let mut out = Vec::new();
    for part in s.split(',') {
        let fields: Vec<&str> = part.trim().split(':').collect();
        let spec = match fields.as_slice() {
            ["irq", freq, rest @ ..] if rest.len() <= 1 => {
                let hz = frequency(freq).map_err(|e| format!("load '{part}': {e}"))?;
                if hz > load::MAX_IRQ_HZ {
                    return Err(format!("load '{part}': at most {} Hz", load::MAX_IRQ_HZ));
                }
                let work = match rest {
                    [] => DEFAULT_IRQ_WORK,
                    [w] => {
                        let d = w.strip_prefix("work=").ok_or_else(|| {
                            format!("load '{part}': the third field is work=DUR (e.g. work=2us)")
                        })?;
                        duration_or_zero(d).map_err(|e| format!("load '{part}': {e}"))?
                    }
                    _ => unreachable!("at most one field after the frequency"),
                };
                let period = Duration::from_secs_f64(1.0 / hz);
                if work > period / 2 {
                    return Err(format!(
                        "load '{part}': the handler's work must fit in half a period ({:?})",
                        period / 2
                    ));
                }
                LoadSpec::Irq {
                    frequency_hz: hz,
                    work,
                }
            }
            ["cpu", n, rest @ ..] if rest.len() <= 1 => {
                let processes: usize = n
                    .parse()
                    .ok()
                    .filter(|n| (1..=32).contains(n))
                    .ok_or_else(|| format!("load '{part}': N is a count of processes, 1 to 32"))?;
                let kind = match rest {
                    [] => CpuKind::Mixed,
                    [k] => CpuKind::from_name(k).ok_or_else(|| {
                        format!("load '{part}': unknown kind '{k}' (bitcount, qsort or mixed)")
                    })?,
                    _ => unreachable!("at most one field after the count"),
                };
                LoadSpec::Cpu { processes, kind }
            }
            ["net", rate] => {
                let (num, mult) = match rate.strip_suffix(['k', 'K']) {
                    Some(n) => (n, 1000),
                    None => (*rate, 1),
                };
                let pps = num
                    .parse::<u64>()
                    .ok()
                    .map(|n| n * mult)
                    .filter(|n| (1..=load::MAX_NET_PPS).contains(n))
                    .ok_or_else(|| {
                        format!(
                            "load '{part}': RATE is datagrams per second, 1 to {}",
                            load::MAX_NET_PPS
                        )
                    })?;
                LoadSpec::Net { packets_per_s: pps }
            }
            _ => return Err(format!("invalid load '{part}': {expected}")),
        };
        out.push(spec);
    }
    Ok(LoadArg(out))
}

/// `--load-sweep`: the interrupt frequencies of its levels, Hz.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadSweep(pub Vec<f64>);

/// Parses `--load-sweep irq:F1,F2,…`: one level per frequency, each an
/// interrupt source at that frequency (default handler work) added to
/// `--load`.
pub fn load_sweep_arg(s: &str) -> Result<LoadSweep, String> {
    let freqs = s.trim().strip_prefix("irq:").ok_or_else(|| {
        format!("invalid load sweep '{s}': expected irq:F1,F2,… (e.g. irq:60,250,1000,2000,4000)")
    })?;
    let list = frequency_list_arg(freqs)?.0;
    for &f in &list {
        load_arg(&format!("irq:{f}")).map_err(|e| format!("load sweep: {e}"))?;
    }
    Ok(LoadSweep(list))
}

/// Parses `--load-cpus`: CPU numbers and ranges, comma-separated ("0,1", "0-3").
pub fn cpu_set_arg(s: &str) -> Result<CpuList, String> {
    let bad = || format!("invalid CPU list '{s}': expected numbers and ranges, e.g. 0,1 or 0-3");
    let mut out = Vec::new();
    for part in s.split(',') {
        let (a, b) = match part.trim().split_once('-') {
            Some((a, b)) => (a, b),
            None => (part.trim(), part.trim()),
        };
        let (a, b): (usize, usize) = (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        if a > b || b >= 4096 {
            return Err(bad());
        }
        for c in a..=b {
            if !out.contains(&c) {
                out.push(c);
            }
        }
    }
    Ok(CpuList(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relative_change_is_a_percentage_or_a_fraction_below_one() {
        assert_eq!(relative_change("5%"), Ok(0.05));
        assert_eq!(relative_change(" 12.5 % "), Ok(0.125));
        assert_eq!(relative_change("0.1"), Ok(0.1));
        for bad in ["0", "0%", "100%", "1", "-5%", "x", "", "nan"] {
            assert!(relative_change(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes() {
        assert_eq!(size("1"), Ok(1));
        assert_eq!(size("4K"), Ok(4096));
        assert_eq!(size("1M"), Ok(1 << 20));
        assert_eq!(size_list("1,64,1K,64").unwrap(), vec![1, 64, 1024]);
        for bad in ["0", "12Q", "", "-1", "17M", "1.5K"] {
            assert!(size(bad).is_err(), "{bad}");
        }
        assert!(size_list("1,,2").is_err());
    }

    #[test]
    fn cpus() {
        assert_eq!(cpu_list("0,1"), Ok(vec![0, 1]));
        assert_eq!(cpu_list("3"), Ok(vec![3]));
        assert!(cpu_list("0,1,2").is_err());
        assert!(cpu_list("a").is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(duration("20ms"), Ok(Duration::from_millis(20)));
        assert_eq!(duration("1s"), Ok(Duration::from_secs(1)));
        assert_eq!(duration("500us"), Ok(Duration::from_micros(500)));
        for bad in ["20", "0s", "-1s", "1h", "ms"] {
            assert!(duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn frequencies_and_tolerances() {
        assert_eq!(
            frequency_list_arg("60,250,1000,60").unwrap().0,
            vec![60.0, 250.0, 1000.0]
        );
        assert_eq!(frequency("4000Hz"), Ok(4000.0));
        for bad in ["0", "-60", "x", "200000", "inf"] {
            assert!(frequency(bad).is_err(), "{bad}");
        }
        assert!(frequency_list_arg("60,,250").is_err());
        assert_eq!(tolerance("0.5"), Ok(0.5));
        assert_eq!(tolerance("1"), Ok(1.0));
        for bad in ["0", "-0.5", "1.5", "half", "NaN"] {
            assert!(tolerance(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn zero_durations_and_byte_sizes() {
        assert_eq!(duration_or_zero("0"), Ok(Duration::ZERO));
        assert_eq!(duration_or_zero("0ms"), Ok(Duration::ZERO));
        assert_eq!(duration_or_zero("30ms"), Ok(Duration::from_millis(30)));
        assert!(duration_or_zero("-1ms").is_err());
        assert!(duration_or_zero("0x").is_err());
        assert_eq!(byte_size("4B"), Ok(4));
        assert_eq!(byte_size("40KB"), Ok(40_000));
        assert_eq!(byte_size("4MB"), Ok(4_000_000));
        assert_eq!(byte_size("4MiB"), Ok(4 << 20));
        assert_eq!(byte_size("64"), Ok(64));
        for bad in ["", "0B", "4XB", "-4B", "4.5KB"] {
            assert!(byte_size(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn load_specs_parse_with_defaults_and_bounds() {
        use crate::engine::os::load::{CpuKind, LoadSpec};
        let l = load_arg("irq:4000,cpu:2,net:20k,irq:60:work=10us,cpu:1:qsort").unwrap();
        assert_eq!(
            l.0,
            vec![
                LoadSpec::Irq {
                    frequency_hz: 4000.0,
                    work: DEFAULT_IRQ_WORK
                },
                LoadSpec::Cpu {
                    processes: 2,
                    kind: CpuKind::Mixed
                },
                LoadSpec::Net {
                    packets_per_s: 20_000
                },
                LoadSpec::Irq {
                    frequency_hz: 60.0,
                    work: Duration::from_micros(10)
                },
                LoadSpec::Cpu {
                    processes: 1,
                    kind: CpuKind::Qsort
                },
            ]
        );
        assert_eq!(load_arg("none").unwrap().0, vec![]);
        assert_eq!(
            load_arg("irq:1000:work=0").unwrap().0,
            vec![LoadSpec::Irq {
                frequency_hz: 1000.0,
                work: Duration::ZERO
            }]
        );
        for (bad, says) in [
            ("irq", "invalid load"),
            ("irq:0", "out of range"),
            ("irq:50000", "at most"),
            ("irq:4000:work=200us", "half a period"),
            ("irq:4000:2us", "work=DUR"),
            ("cpu:0", "1 to 32"),
            ("cpu:2:fft", "unknown kind"),
            ("net:0", "1 to"),
            ("net:1000000", "1 to"),
            ("disk:3", "invalid load"),
            ("irq:1000,", "invalid load"),
        ] {
            let e = load_arg(bad).unwrap_err();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn load_cpus_take_lists_and_ranges() {
        assert_eq!(cpu_set_arg("0,1").unwrap().0, vec![0, 1]);
        assert_eq!(cpu_set_arg("2-4,0").unwrap().0, vec![2, 3, 4, 0]);
        for bad in ["", "a", "3-1", "1,,2"] {
            assert!(cpu_set_arg(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn load_sweeps_are_interrupt_frequencies() {
        assert_eq!(
            load_sweep_arg("irq:60,250,1000,2000,4000").unwrap().0,
            vec![60.0, 250.0, 1000.0, 2000.0, 4000.0]
        );
        assert!(load_sweep_arg("cpu:1,2").unwrap_err().contains("irq:F1,F2"));
        assert!(
            load_sweep_arg("irq:60,50000")
                .unwrap_err()
                .contains("at most")
        );
    }

    #[test]
    fn a_rate_reads_messages_per_second_with_k_or_m_and_refuses_the_rest() {
        assert_eq!(rate("50k/s"), Ok(50_000.0));
        assert_eq!(rate("50000"), Ok(50_000.0));
        assert_eq!(rate("1.5M/s"), Ok(1_500_000.0));
        for bad in ["fast", "0", "-5k/s", "k/s", ""] {
            assert!(rate(bad).is_err(), "{bad}");
        }
    }
}
