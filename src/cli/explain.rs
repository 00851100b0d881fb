//! `ipcmark explain`: its flags, the run they ask for, and the page and
//! anatomies printed; the measuring and tracing are the study's
//! (`studies::explain`).

use super::run::{Printing, finish, measure};
use super::{Failure, flags, heading, print_stdout};
use crate::analysis::explain::tail::TailSelect;
use crate::run::RunRequest;
use crate::studies::explain;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark explain`: `run`'s placement, budget, load and
/// output flags, and the traced pass's length.
#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Ping-pong mechanisms (pipe, unix-stream, shm-futex, …), op-mode
    /// benchmarks (syscall-getpid, sched-yield, rhealstone-task-switch, …)
    /// or a timer's wake-up latency (timer-latency) to explain. See
    /// `ipcmark list`.
    #[arg(value_name = "NAME", required = true)]
    names: Vec<String>,
    #[command(flatten)]
    sizes: flags::Sizes,
    #[command(flatten)]
    pair: flags::Pair,
    #[command(flatten, next_help_heading = heading::PLACEMENT)]
    cpu_latency: flags::CpuLatency,
    #[command(flatten)]
    budget: flags::Budget,
    #[command(flatten)]
    output: flags::Output,
    #[command(flatten)]
    load: flags::Load,
    #[command(flatten)]
    timer: flags::Timer,
    /// Round trips (a mechanism), operations (an op-mode benchmark) or
    /// wake-ups (a timer's wake-up latency: at most 30 s of them) in each
    /// figure's traced pass [default: 2000; 20000 with --tail].
    #[arg(long, value_name = "N",
          value_parser = clap::value_parser!(u64).range(10..=200_000),
          help_heading = heading::SELECTION)]
    round_trips: Option<u64>,
    /// The anatomy of the slowest round trips too: each one's excess over
    /// the typical round trip by part, with what each part was spent
    /// behind (the task that ran instead, the interrupt, the idle state),
    /// and the slow ones grouped by signature. K: the slowest K; P%: the
    /// slowest P% (at least 10). A mechanism's round trips, or a timer's
    /// wake-ups (timer-latency, as `rtla timerlat -a`).
    #[arg(long, value_name = "K|P%", num_args = 0..=1, default_missing_value = "0.1%",
          value_parser = parse_tail, help_heading = heading::SELECTION)]
    tail: Option<TailSelect>,
    /// Save each mechanism figure's traced pass in DIR as the kernel
    /// prints it (NAME-SIZE.trace, the instance's `trace` file) beside its
    /// anatomy's stretches (NAME-SIZE.parts.tsv: round trip, start and end
    /// ns, part), to check the anatomy against the kernel's own text.
    #[arg(long, value_name = "DIR", value_hint = clap::ValueHint::DirPath,
          help_heading = heading::OUTPUT)]
    save_trace: Option<std::path::PathBuf>,
}

/// `--tail`'s value: a count (at least 1) or a share in % (above 0, at
/// most 100).
fn parse_tail(s: &str) -> Result<TailSelect, String> {
    let bad = || format!("'{s}' is not a count of round trips (25) or a share of them (0.1%)");
    match s.strip_suffix('%') {
        Some(p) => {
            let p: f64 = p.trim().parse().map_err(|_| bad())?;
            if !(p > 0.0 && p <= 100.0) {
                return Err(format!("--tail {s}: a share is above 0% and at most 100%"));
            }
            Ok(TailSelect::Share(p / 100.0))
        }
        None => match s.trim().parse::<usize>() {
            Ok(0) => Err("--tail 0: at least one round trip".into()),
            Ok(k) => Ok(TailSelect::Count(k)),
            Err(_) => Err(bad()),
        },
    }
}

/// Runs `ipcmark explain`.
pub fn explain(args: ExplainArgs) -> Result<ExitCode, Failure> {
    explain::check_names(&args.names)?;
    let tail = args.tail;
    let save_trace = args.save_trace;
    // With --tail, --duration is a mechanism's soak (a timer's figure
    // keeps it as its length).
    let soak = tail.and(args.timer.duration);
    if let Some(dir) = &save_trace
        && !dir.is_dir()
    {
        return Err(Failure::usage(format!(
            "--save-trace {}: not a directory (give one that exists)",
            dir.display()
        )));
    }
    let round_trips = args
        .round_trips
        .unwrap_or(if tail.is_some() { 20_000 } else { 2000 }) as usize;
    let printing = Printing {
        long: args.output.long,
        quiet: false,
    };
    let mut request = RunRequest {
        names: args.names,
        sizes: args.sizes.list,
        cpus: args.pair.cpus,
        same_cpu: args.pair.same_cpu,
        rt: args.pair.rt,
        cpu_latency: args.cpu_latency.limit,
        budget: args.budget.into_request(),
        load: args.load.into_request(),
        timer: args.timer.into_request(),
        ..RunRequest::default()
    };
    args.output.into_sinks(&mut request.sinks);
    let outcome = measure(request)?;
    finish(
        outcome,
        printing,
        None,
        Some(&mut |outcome| {
            let done = explain::explain_run(
                outcome,
                &explain::ExplainOptions {
                    round_trips,
                    tail,
                    save_trace: save_trace.clone(),
                    soak,
                },
            );
            let mut out = String::new();
            for (benchmark, size, ex) in &done.anatomies {
                out.push_str(&crate::output::explain::render(
                    benchmark,
                    *size,
                    ex,
                    printing.long,
                ));
            }
            print_stdout(&out)?;
            if let Some(sig) = done.stopped {
                return Err(Failure {
                    code: 128 + sig as u8,
                    message: format!(
                        "interrupted by {}; results so far were kept",
                        crate::engine::os::interrupt::signal_name(sig)
                    ),
                });
            }
            if !done.failed.is_empty() {
                return Err(Failure::run(format!(
                    "explain: no anatomy for {}",
                    done.failed.join("; ")
                )));
            }
            Ok(())
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[derive(clap::Parser)]
    struct Explain {
        #[command(flatten)]
        args: ExplainArgs,
    }

    /// Every name `explain --help` gives as an example is one it explains.
    #[test]
    fn the_help_names_only_what_explain_accepts() {
        let cmd = Explain::command();
        let help = cmd
            .get_arguments()
            .find(|a| a.get_id() == "names")
            .and_then(|a| a.get_help())
            .expect("NAME has help")
            .to_string();
        let examples: Vec<String> = help
            .split(['(', ')'])
            .skip(1)
            .step_by(2)
            .flat_map(|group| group.split(", "))
            .map(|w| w.trim().to_string())
            .filter(|w| w.chars().all(|c| c.is_ascii_lowercase() || c == '-') && !w.is_empty())
            .collect();
        assert!(examples.len() >= 6, "{examples:?} from {help}");
        for name in &examples {
            assert!(
                explain::check_names(std::slice::from_ref(name)).is_ok(),
                "explain --help offers {name}, which explain refuses"
            );
        }
    }
}
