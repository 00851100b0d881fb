//! `ipcmark tax [NAME…] [--layers LIST] [--sizes LIST] [--passes N]
//! [--quick] [--alpha A] [--json FILE] [--html FILE]`: the flags, the study
//! (`studies::tax`: the figures bare and under each isolation layer, pass
//! by pass), its ledger (`output::tax`), JSON (`ipcmark.tax/1`) and HTML
//! page (`output::report::tax`, as `ipcmark report TAX.json` draws it). Exit 0
//! when the study ran (cells may still say a layer failed), 1 when the bare
//! passes failed, 2 on bad usage, 128 + the signal when stopped.

use super::{Failure, flags, print_stdout};
use crate::engine::os::interrupt;
use crate::studies::tax::layers::{DEFAULT_LAYERS, Layer};
use crate::studies::tax::{self, DEFAULT_NAMES, DEFAULT_PASSES, TaxRequest};
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark tax`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::Json::TAX_HELP)))]
pub struct TaxArgs {
    /// Mechanisms and benchmarks (default: pipe unix-stream tcp udp
    /// shm-futex posix-mq syscall-getpid syscall-read-tmpfs).
    #[arg(value_name = "NAME")]
    names: Vec<String>,
    /// Layers, comma-separated: cgroup, cpu-max:QUOTA/PERIOD (e.g.
    /// 20ms/100ms), seccomp:default, seccomp:args:N, userns, netns, pidns,
    /// ipcns, namespaces, ssbd, ibpb, container (default: each kind once,
    /// with cpu-max:20ms/100ms and seccomp:args:100).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    layers: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    /// Passes: in each pass every name runs under each variant (bare and
    /// every layer) back to back, the order rotated by pass and name
    /// (default 5; 3 with --quick).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(2..=100))]
    passes: Option<u32>,
    /// Each pass at --quick's budget (short samples).
    #[arg(long)]
    quick: bool,
    /// In the last pass, each figure's anatomy (as `ipcmark explain`), bare
    /// and under each layer: a cell then says which part grew (root, with
    /// tracefs: every tracepoint; else counters only). Not under a PID
    /// namespace, whose tasks the tracepoints name by other pids.
    #[arg(long)]
    explain: bool,
    /// Round trips (operations) in each anatomy's traced pass.
    #[arg(long, value_name = "N", default_value_t = 2000, requires = "explain",
          value_parser = clap::value_parser!(u64).range(10..=200_000))]
    round_trips: u64,
    #[command(flatten)]
    alpha: flags::Alpha,
    #[command(flatten)]
    json: flags::Json,
    /// Also write the ledger as one self-contained HTML page (a bar chart
    /// per table) to this file, as `ipcmark report TAX.json --html FILE` would.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    html: Option<std::path::PathBuf>,
}

pub fn tax(args: TaxArgs) -> Result<ExitCode, Failure> {
    let alpha = args.alpha.checked()?;
    if let Some(out) = &args.json.path {
        super::check_output_path("--json", out)?;
    }
    if let Some(out) = &args.html {
        super::check_output_path("--html", out)?;
    }
    let layer_names: Vec<String> = if args.layers.is_empty() {
        DEFAULT_LAYERS.split(',').map(str::to_string).collect()
    } else {
        args.layers
    };
    let layers = layer_names
        .iter()
        .map(|l| Layer::parse(l).map_err(|e| Failure::usage(format!("--layers: {e}"))))
        .collect::<Result<Vec<_>, _>>()?;
    let names = if args.names.is_empty() {
        DEFAULT_NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        args.names
    };
    let sizes = match args.sizes.list {
        Some(l) if l.sweep => {
            return Err(Failure::usage(
                "--sizes: a tax is measured at a few sizes, not a sweep; give a list (e.g. 64,4K)",
            ));
        }
        Some(l) => l.sizes,
        None => vec![64],
    };
    let passes = args
        .passes
        .map_or(if args.quick { 3 } else { DEFAULT_PASSES }, |p| p as usize);
    let request = TaxRequest {
        names,
        sizes,
        layers,
        passes,
        quick: args.quick,
        alpha,
        explain: args.explain.then_some(args.round_trips as usize),
    };
    let report = tax::tax(request, &mut |step| eprintln!("tax: {step}"))?;
    if let Some(out) = &args.json.path {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    if let Some(out) = &args.html {
        let label = args
            .json
            .path
            .as_ref()
            .map_or("ipcmark tax".into(), |p| p.display().to_string());
        super::report::write_tax_page(out, &label, &report)?;
    }
    print_stdout(&crate::output::tax::render(&report))?;
    if let Some(sig) = interrupt::stop_requested() {
        return Ok(ExitCode::from(128 + sig as u8));
    }
    Ok(ExitCode::SUCCESS)
}
