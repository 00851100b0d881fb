//! `ipcmark testbed up|down`: two hosts on this machine, for remote figures
//! without a second one (docs/remote.md, "Testbed").

use super::{Failure, print_stdout};
use crate::remote::link::parse_rate;
use crate::remote::testbed::{self, DEFAULT_NAME, Options, Testbed};
use clap::{Args, Subcommand};
use std::process::ExitCode;

/// Arguments of `ipcmark testbed`.
#[derive(Debug, Args)]
pub struct TestbedArgs {
    #[command(subcommand)]
    action: Action,
}

#[derive(Debug, Subcommand)]
enum Action {
    /// Make the testbed: namespaces NAME-a (client) and NAME-b (agent)
    /// joined by a veth pair in 198.18.0.0/15, offloads off, shaped each
    /// way; print how to use it.
    Up(UpArgs),
    /// Remove the testbed (its namespaces, veth pair and token file).
    Down(NameArg),
}

#[derive(Debug, Args)]
struct NameArg {
    /// The testbed's name: namespaces are ipcmark-a/b, or ipcmark-NAME-a/b.
    #[arg(long, value_name = "NAME", default_value = DEFAULT_NAME)]
    name: String,
}

#[derive(Debug, Args)]
struct UpArgs {
    #[command(flatten)]
    name: NameArg,
    /// The link's speed each way, bits per second (k, M, G suffixes);
    /// 0 or `none` leaves it unshaped.
    #[arg(long, value_name = "RATE", default_value = "10M", value_parser = rate_arg)]
    rate: u64,
    /// Delay added each way, ms (needs the kernel's netem).
    #[arg(long, value_name = "MS", value_parser = clap::value_parser!(u32).range(1..=10_000))]
    delay: Option<u32>,
}

fn rate_arg(s: &str) -> Result<u64, String> {
    if s.eq_ignore_ascii_case("none") {
        Ok(0)
    } else {
        parse_rate(s)
    }
}

pub fn testbed(args: TestbedArgs) -> Result<ExitCode, Failure> {
    match args.action {
        Action::Up(up) => up_cmd(up),
        Action::Down(n) => down_cmd(&n.name),
    }
}

fn up_cmd(args: UpArgs) -> Result<ExitCode, Failure> {
    let name = args.name.name;
    testbed::base_name(&name).map_err(Failure::usage)?;
    if args.delay.is_some() && !testbed::netem_available().map_err(Failure::run)? {
        return Err(Failure::usage(
            "--delay needs netem, and this kernel has none (sch_netem): the testbed can shape the rate but not add delay",
        ));
    }
    let tb = Testbed::up(&Options {
        name: name.clone(),
        rate_bits_per_s: Some(args.rate).filter(|&r| r > 0),
        delay_ms: args.delay,
    })
    .map_err(Failure::run)?;
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "ipcmark".into());
    let token = tb.token_path().display().to_string();
    let down = if name == DEFAULT_NAME {
        String::new()
    } else {
        format!(" --name {name}")
    };
    let out = format!(
        "{}\ntoken file: {token}\nagent:  ip netns exec {} {exe} serve --listen {} --token-file {token}\nclient: ip netns exec {} {exe} run tcp --remote {} --token-file {token}\nremove: {exe} testbed down{down}\n",
        tb.describe(),
        tb.agent_ns(),
        tb.agent_ip(),
        tb.client_ns(),
        tb.agent_ip(),
    );
    tb.keep();
    print_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}

fn down_cmd(name: &str) -> Result<ExitCode, Failure> {
    let base = testbed::base_name(name).map_err(Failure::usage)?;
    let out = if testbed::down(name).map_err(Failure::run)? {
        format!(
            "removed testbed {base} (namespaces {base}-a and {base}-b, the veth pair, the token file)\n"
        )
    } else {
        format!("no testbed {base}: nothing to remove\n")
    };
    print_stdout(&out)?;
    Ok(ExitCode::SUCCESS)
}
