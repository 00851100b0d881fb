//! Behaviour of the ipcmark binary, in one test binary (as ripgrep's
//! tests/tests.rs): one harness (`util`), one module per topic. No test
//! asserts a time; every test that runs a benchmark holds `util::serial()`.
//!
//! Run a topic alone with `cargo test --test tests MODULE::`.

mod util;

// Ping-pong, the default mode: the matrix, precision, passes, sweeps, schema.
mod pingpong;
// `ipcmark map`: every pair of CPUs, its classes, CSV, compare.
mod map;
// The page: compact by default, within 60 lines; `--long`.
mod page;
// `ipcmark explain`: the anatomy of a figure, its tracefs instance removed.
mod explain;
// `ipcmark explain` of op-mode benchmarks: the anatomy of one operation.
mod explain_ops;
// `explain --tail`, and an anatomy checked against the kernel's text trace.
mod explain_tail;
// `ipcmark explain timer-latency`: a timer's wake-up latency, part by part.
mod explain_timer;
// `ipcmark explain` stopped in each phase; its instances across PID namespaces.
mod explain_stops;
// `ipcmark explain dbus`: the broker's relaying, a part of the round trip.
mod explain_dbus;
// Faults, dead and silent peers, signals, `clean`: nothing is left behind.
mod objects;
mod robustness;
// dbus and dbus-p2p: the skip without dbus-daemon, the private bus's release.
mod dbus;
// Bad input, `list`, the README's tables.
mod usage;
// `ipcmark compare`.
mod compare;
// `ipcmark watch` and `ipcmark check`: change points of the history, a CI gate.
mod watch;
// The exports for CI dashboards: Bencher, github-action-benchmark, JUnit,
// GitHub annotations, Otava.
mod export;
// `ipcmark advise`: a mechanism for a stated need, from the history.
mod advise;
// `ipcmark selftest`: A/A pairs, the test of compare's test.
mod selftest;
mod tax;
// `ipcmark fleet`: hosts of a class, the outliers and their settings.
mod fleet;
// `ipcmark report --html`: the page, rendered in headless Chromium.
mod report;
// The run history: history, show, export, import, prune; CSV.
mod history;
// Reports from elsewhere: no terminal escape or spreadsheet formula gets through.
mod hostile_reports;
// `ipcmark show`: the page the run printed.
mod show;
// `--preset`: a study's experiment as it was done.
mod presets;
// The other modes and groups.
mod oneway;
// `--mode rate`: latency under an offered load, a curve of rates.
mod rate;
mod rhealstone;
mod sched;
mod stream;
mod syscall;
mod thread_metric;
mod timer;
// `ipcmark workload`.
mod workloads;
// `--load`: a stated load held during the figures, and its clean-up.
mod load;
// The CPU wake-up latency request, held as root and not as nobody.
mod cpu_latency;
// `ipcmark doctor`: the machine's checks, as root and as nobody.
mod doctor;
// Every mode's JSON keeps the fields of tests/fields/*.txt.
mod field_paths;
// `ipcmark testbed`: two hosts on one machine, in network namespaces.
mod testbed;
// `run --remote`: figures against an agent, over loopback and the testbed.
mod remote;
// `ipcmark serve`: the agent's handshake, token, busy answer, deadlines, garbage.
mod serve;
// `ipcmark mpi` under mpirun (cargo feature `mpi`), and its absence without it.
mod mpi;
// `ipcmark workload --engine mpi` under mpirun, and its absence without the feature.
mod mpi_workloads;
// `--version` and the reports' `build`; the man page, completions, packaging.
mod packaging;
