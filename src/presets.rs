//! Presets: the experiments of the classic studies, as ready-made runs. Each
//! names the study it reproduces, the mechanisms standing in for the study's
//! columns, and the study's sizes.

use std::time::Duration;

/// How a column is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnMode {
    /// Round trips through an echo server (`--mode pingpong`).
    PingPong,
    /// Stamped messages one way (`--mode oneway`); `interval` `None` is
    /// saturated, otherwise one message per interval. `messages`: timed
    /// messages (`None`: the run's default for the pacing; `--messages`
    /// overrides both).
    OneWay {
        /// Time between two sends (sporadic), or `None` (saturated).
        interval: Option<Duration>,
        /// Timed messages.
        messages: Option<u64>,
    },
    /// Messages streamed one way (`--mode stream`): MB/s.
    Stream,
}

/// One column of a preset's table: a mechanism, warm or cold, and how it is timed.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Mechanism id.
    pub mechanism: &'static str,
    /// Whether each message uses a fresh, uncached buffer (`--cold`).
    pub cold: bool,
    /// The study's name for the column.
    pub label: &'static str,
    /// Ping-pong or one-way, saturated or sporadic.
    pub mode: ColumnMode,
    /// The most bytes the study's mechanism could carry, where it had a
    /// limit the stand-in lacks (QNX proxies carried at most 100 B): rows
    /// past it were not measured by the study, and say so.
    pub max_bytes: Option<usize>,
}

impl Column {
    /// The column as the command line would run it: mechanism and flags,
    /// e.g. "vm-copy --cold", "posix-mq --mode oneway --interval 100ms".
    pub fn command(&self) -> String {
        let mut s = self.mechanism.to_string();
        if self.cold {
            s.push_str(" --cold");
        }
        match self.mode {
            ColumnMode::OneWay { interval, .. } => {
                s.push_str(" --mode oneway");
                if let Some(d) = interval {
                    s.push_str(&format!(" --interval {}", format_duration(d)));
                }
            }
            ColumnMode::Stream => s.push_str(" --mode stream"),
            ColumnMode::PingPong => {}
        }
        s
    }

    const fn pingpong(mechanism: &'static str, cold: bool, label: &'static str) -> Column {
        Column {
            mechanism,
            cold,
            label,
            mode: ColumnMode::PingPong,
            max_bytes: None,
        }
    }

    /// The column with the study's limit on its messages (`max_bytes`).
    const fn up_to(self, bytes: usize) -> Column {
        Column {
            max_bytes: Some(bytes),
            ..self
        }
    }
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
    /// SCHED_FIFO priority the study ran both sides at, if any: used when
    /// permitted (a warning and SCHED_OTHER otherwise); `--rt` overrides it.
    pub rt_priority: Option<i32>,
    /// Whether the study measured with the machine's CPU idle states, as a
    /// desktop's defaults leave them: the preset does too (as with
    /// `--cpu-latency off`) unless `--cpu-latency` is given.
    pub idle_states: bool,
    /// How the run differs from the study, printed under its table.
    pub differences: Option<&'static str>,
    /// Whether the study ran between two hosts: the run needs `--remote`
    /// (or builds the two-host testbed itself), and each figure is shown
    /// with the fraction of the link's best it reached.
    pub network: bool,
    /// The sampling time of each figure in all (as `--max-time`; each pass
    /// takes its share), where the study's many figures at the default's
    /// would take too long; `None`: the default. `--max-time` overrides it.
    pub max_time: Option<Duration>,
}

/// Every preset.
pub static PRESETS: &[Preset] = &[
    Preset {
        name: "qnx-table4",
        study: "QNX 4 IPC study (1998), Table 4: transfer time (µs) by message size, one column per mechanism",
        columns: &[
            Column::pingpong("pipe", false, "pipe"),
            Column::pingpong("fifo", false, "FIFO"),
            Column::pingpong("vm-copy", false, "message"),
            Column::pingpong("unix-seqpacket", false, "message (socket)"),
            Column::pingpong("vm-copy", true, "message, no cache"),
            Column::pingpong("signal-sigqueue", false, "proxy").up_to(100),
            Column::pingpong("shm-posix-sem", false, "shm + sem + memcpy"),
        ],
        sizes: &[
            1, 32, 100, 128, 512, 1024, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192, 10240,
            12288, 15369, 22528,
        ],
        rt_priority: None,
        idle_states: false,
        differences: None,
        network: false,
        // 109 figures × 5 passes: at the default 1 s each the run took
        // 228–231 s on 2-vCPU guests. A figure's interval rests on its pass
        // medians, whose spread from pass to pass on a shared machine is
        // several times a pass's own: 60 ms of samples a pass (0.3 s in
        // all) keeps the passes and their intervals (docs/method.md).
        max_time: Some(Duration::from_millis(300)),
    },
    Preset {
        name: "mq-article",
        study: "POSIX message queues (Blaess, 2011): one-way latency (µs) of a stamped message, \
            sporadic vs saturated sending, min / mean / max, sender and receiver on two CPUs, SCHED_FIFO 40",
        columns: &[
            Column {
                mechanism: "posix-mq",
                cold: false,
                label: "sporadic",
                mode: ColumnMode::OneWay {
                    interval: Some(Duration::from_millis(100)),
                    messages: Some(30),
                },
                max_bytes: None,
            },
            Column {
                mechanism: "posix-mq",
                cold: false,
                label: "saturated",
                mode: ColumnMode::OneWay {
                    interval: None,
                    messages: None,
                },
                max_bytes: None,
            },
        ],
        sizes: &[8, 64, 512, 4096, 8192, 16384, 65536],
        rt_priority: Some(40),
        // Part of what makes a rare message slow is waking a CPU that went idle.
        idle_states: true,
        differences: Some(
            "differences from the study: sporadic = one message every 100 ms, 30 per size (the study: one a second, \
         read by eye), to stay within minutes; saturated = one message in flight, the next sent as soon as the \
         receiver acknowledges the last (the study let the queue fill), windows of --window messages (100000 as \
         in the study); CLOCK_MONOTONIC in ns, one clock read subtracted (the study: gettimeofday in µs); sizes \
         above fs.mqueue.msgsize_max are skipped",
        ),
        network: false,
        max_time: None,
    },
    Preset {
        name: "qnx-network",
        study: "QNX 4 IPC study (1998), Table 4 (network columns) and Figure 7: transfer time (µs) of \
            a message between two hosts on 10 Mbit/s Ethernet, and its share of the link's best",
        columns: &[
            Column::pingpong("udp", false, "message in network"),
            Column::pingpong("tcp", false, "pipe in network"),
            Column {
                mechanism: "udp",
                cold: false,
                label: "messages, MB/s",
                mode: ColumnMode::Stream,
                max_bytes: None,
            },
            Column {
                mechanism: "tcp",
                cold: false,
                label: "pipe, MB/s",
                mode: ColumnMode::Stream,
                max_bytes: None,
            },
        ],
        sizes: &[
            1, 32, 100, 128, 512, 1024, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192, 10240,
            12288, 15369, 22528,
        ],
        rt_priority: None,
        idle_states: false,
        differences: Some(
            "differences from the study: UDP datagrams stand in for QNX messages and a TCP connection \
             for its network pipes; the hosts are the two ends of the run's link (--remote, or two \
             network namespaces joined by a veth pair shaped to 10 Mbit/s with tbf, counting Ethernet's \
             preamble, FCS, gap and padding); transfer time = half the round trip, as every ping-pong \
             figure, with (x%) = its serialisation floor ÷ the figure on a real link (a shaper imposes \
             no such floor: none then); Figure 7's efficiency of data transfer is the MB/s columns, \
             each message size streamed one way, (x%) = MB/s ÷ the link's most for that size (the \
             study's 1.2 MB/s); figures are --quick (short samples), to finish in minutes",
        ),
        network: true,
        max_time: None,
    },
];

/// A study run under a stated load at several interrupt frequencies
/// (`ipcmark run --preset NAME`): its benchmarks once per level, and the
/// study's tables.
#[derive(Debug, Clone, Copy)]
pub struct LoadStudy {
    /// Name on the command line.
    pub name: &'static str,
    /// The study and what it measured.
    pub study: &'static str,
    /// Benchmarks measured at every level.
    pub benchmarks: &'static [&'static str],
    /// Benchmarks measured once, at the first level (the application load
    /// alone): a periodic benchmark that is its own interrupt source.
    pub once: &'static [&'static str],
    /// The application load held at every level (`--load`).
    pub load: &'static str,
    /// Interrupt frequencies of the levels after the first, Hz (`--load-sweep`).
    pub frequencies: &'static [f64],
    /// Thread-Metric's counting period per test.
    pub period: Duration,
    /// Length of each timer-failures figure.
    pub duration: Duration,
    /// How the run differs from the study.
    pub differences: &'static str,
}

/// Every load study.
pub static LOAD_STUDIES: &[LoadStudy] = &[LoadStudy {
    name: "rtos-load",
    study: "RTOS performance under task and interrupt load (Chen, Cai, Shi, 2014): Fail_sys per \
        interrupt frequency; Rhealstone task switch and Thread-Metric scores, raw and corrected, \
        under periodic interrupts from 60 Hz to 4 kHz with bitcount and qsort running",
    benchmarks: &[
        "rhealstone-task-switch",
        "rhealstone-preemption",
        "thread-metric-basic",
        "thread-metric-cooperative",
        "thread-metric-preemptive",
    ],
    once: &["timer-failures"],
    load: "cpu:1:mixed",
    frequencies: &[60.0, 250.0, 1000.0, 2000.0, 4000.0],
    period: Duration::from_secs(1),
    duration: Duration::from_secs(1),
    differences: "differences from the study: Linux tasks and threads stand in for the RTOS's; the \
        interrupt source is a timerfd whose handler (2 µs of work) runs in a SCHED_FIFO 99 process, not a \
        signal generator's hardware interrupt; Fail_sys is timer-failures' (wake-ups later than half a \
        period) under the application load alone; Thread-Metric counts for 1 s per test; figures are \
        --quick (passes and samples few, to finish in minutes)",
}];

/// Finds a load study by name.
pub fn find_load_study(name: &str) -> Option<&'static LoadStudy> {
    LOAD_STUDIES.iter().find(|p| p.name == name)
}

/// A duration as the command line takes it: 100ms, 1s, 250us.
pub fn format_duration(d: Duration) -> String {
    let ns = d.as_nanos();
    if ns.is_multiple_of(1_000_000_000) {
        format!("{}s", ns / 1_000_000_000)
    } else if ns.is_multiple_of(1_000_000) {
        format!("{}ms", ns / 1_000_000)
    } else {
        format!("{}us", ns as f64 / 1e3)
    }
}

/// Finds a preset by name.
pub fn find(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// All names, the load studies' included.
pub fn names() -> Vec<&'static str> {
    PRESETS
        .iter()
        .map(|p| p.name)
        .chain(LOAD_STUDIES.iter().map(|s| s.name))
        .collect()
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
