//! ipcmark: what communication, synchronisation and scheduling cost on Linux.

mod benchmarks;
mod cli;
mod engine;
mod mechanisms;
mod output;
mod presets;
mod stats;
mod sys;
mod workloads;

fn main() -> std::process::ExitCode {
    cli::main()
}
