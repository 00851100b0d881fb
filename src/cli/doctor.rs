//! `ipcmark doctor`: examines this machine for a run on the CPUs a run
//! would use (or `--cpus`), and prints every check's status, what it found
//! and the fix, or the record as JSON. It exits 0 whenever it ran, whatever
//! the statuses: it reports on the machine, it does not judge a run.

use super::{Failure, flags, parse, print_stdout};
use crate::machine::doctor;
use crate::machine::sysroot::SysRoot;
use crate::output::terminal;
use clap::Args;
use std::process::ExitCode;

/// Arguments of `ipcmark doctor`.
#[derive(Debug, Args)]
#[command(mut_arg("json", |a| a.help(flags::JsonStdout::DOCTOR_HELP).require_equals(false)))]
pub struct DoctorArgs {
    /// The CPUs a run would measure on, e.g. 0,1 or 2-3 (default: the first
    /// two this process may use, where `run` puts its client and server).
    #[arg(long, value_name = "LIST", value_parser = parse::cpu_set_arg)]
    cpus: Option<parse::CpuList>,
    #[command(flatten)]
    json: flags::JsonStdout,
}

/// The CPUs to examine: `given`, each one this process may use, or the
/// first two of `allowed` (one where only one is).
fn measured_cpus(given: Option<&[usize]>, allowed: &[usize]) -> Result<Vec<usize>, Failure> {
    let show = |v: &[usize]| {
        v.iter()
            .map(|c| c.to_string())
            .collect::<Vec<_>>()
            .join(",")
    };
    match given {
        Some(list) => {
            if let Some(c) = list.iter().find(|c| !allowed.contains(c)) {
                return Err(Failure::usage(format!(
                    "--cpus: CPU {c} does not exist or is not available to ipcmark; available CPUs: {}",
                    show(allowed)
                )));
            }
            Ok(list.to_vec())
        }
        None if allowed.is_empty() => Err(Failure::run("no CPU is available to this process")),
        None => Ok(allowed[..allowed.len().min(2)].to_vec()),
    }
}

pub fn doctor(args: DoctorArgs) -> Result<ExitCode, Failure> {
    args.json.check()?;
    let allowed = crate::sys::sched::allowed_cpus()
        .map_err(|e| Failure::run(format!("cannot read this process's CPUs: {e}")))?;
    let cpus = measured_cpus(args.cpus.as_ref().map(|l| l.0.as_slice()), &allowed)?;
    let root = SysRoot::host();
    let checks = doctor::examine(&root, &cpus);
    let host = root
        .read("/proc/sys/kernel/hostname")
        .unwrap_or_else(|| "unknown".into());
    let record = crate::output::doctor::record(
        &host,
        crate::output::recorder::now_rfc3339(),
        crate::sys::process::geteuid() == 0,
        &cpus,
        &checks,
    );
    let text = if args.json.on() {
        serde_json::to_string_pretty(&record)
            .map_err(|e| Failure::run(format!("cannot represent the checks: {e}")))?
            + "\n"
    } else {
        let colour = terminal::colour_on(terminal::is_users_terminal(&std::io::stdout()));
        crate::output::doctor::render(&record, colour)
    };
    match args.json.on() {
        true => args.json.emit(&text)?,
        false => print_stdout(&text)?,
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measured_cpus_default_to_the_first_two_and_must_be_available() {
        assert_eq!(measured_cpus(None, &[2, 3, 5]).ok(), Some(vec![2, 3]));
        assert_eq!(measured_cpus(None, &[4]).ok(), Some(vec![4]));
        assert_eq!(
            measured_cpus(Some(&[5, 3]), &[2, 3, 5]).ok(),
            Some(vec![5, 3])
        );
        let e = measured_cpus(Some(&[0]), &[2, 3]).err().unwrap();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("CPU 0") && e.message.contains("2,3"),
            "{}",
            e.message
        );
    }
}
