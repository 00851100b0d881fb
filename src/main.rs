//! ipcmark: what communication, synchronisation and scheduling cost on Linux.

// The only `unsafe` is in `sys`, each block with its `// SAFETY:` line.
#![deny(unsafe_code)]

mod analysis;
#[cfg(test)]
mod architecture;
mod benchmarks;
mod cli;
mod engine;
mod history;
mod machine;
mod mechanisms;
#[cfg(feature = "mpi")]
mod mpi;
mod output;
mod presets;
mod record;
mod remote;
mod stats;
mod studies;
#[allow(unsafe_code)]
mod sys;
mod testbed;
mod workloads;

fn main() -> std::process::ExitCode {
    cli::main()
}
