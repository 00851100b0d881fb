//! `ipcmark testbed up|down|mpirun`: two hosts on this machine, for remote
//! figures and MPI jobs without a second one (docs/remote.md, "Testbed";
//! docs/cluster.md, "Across the testbed").

use super::{Failure, print_stdout};
use crate::remote::link::parse_rate;
use crate::testbed::mpirun::{self, JobEnd, NodeError};
use crate::testbed::{self, DEFAULT_NAME, Options, Testbed};
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
    /// Run Open MPI's mpirun with the testbed's two namespaces as two
    /// nodes, NAME-a (where mpirun runs) and NAME-b, MPI over TCP between
    /// them: `ipcmark testbed mpirun -- -n 2 ipcmark mpi pingpong`.
    Mpirun(MpirunArgs),
    /// Open MPI's rsh agent for `testbed mpirun`: run a command line on a
    /// node of the testbed (as ssh HOST COMMAND…).
    #[command(hide = true)]
    Node(NodeArgs),
}

#[derive(Debug, Args)]
struct MpirunArgs {
    #[command(flatten)]
    name: NameArg,
    /// mpirun's own arguments and the program (after `--`): one rank per
    /// node with `-n 2`; `--host NAME-a:2` puts both on one node.
    #[arg(
        value_name = "MPIRUN_ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    args: Vec<std::ffi::OsString>,
}

/// Positional only: Open MPI appends the node and its command line, whose
/// words (`--mca plm_rsh_agent "… --name NAME"` among them) must reach the
/// command untouched, not be read as this command's options.
#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
struct NodeArgs {
    /// The testbed's name (as `up --name`).
    #[arg(value_name = "NAME")]
    name: String,
    /// The node: its name (NAME-a, NAME-b) or its address.
    #[arg(value_name = "HOST")]
    host: String,
    /// The command line, joined with spaces and run by /bin/sh -c.
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true,
        required = true
    )]
    command: Vec<String>,
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
        Action::Mpirun(m) => mpirun_cmd(m),
        Action::Node(n) => node_cmd(n),
    }
}

fn mpirun_cmd(args: MpirunArgs) -> Result<ExitCode, Failure> {
    let name = args.name.name;
    let exe = std::env::current_exe()
        .map_err(|e| Failure::run(format!("cannot find ipcmark's own executable: {e}")))?;
    let exe = exe.to_str().filter(|s| !s.contains(char::is_whitespace)).ok_or_else(|| {
        Failure::run(format!(
            "ipcmark's path {} has spaces (or is not UTF-8): Open MPI splits its launch agent's command at spaces",
            exe.display()
        ))
    })?;
    // The base name (`ipcmark-NAME`), not NAME: Open MPI drops words of one
    // character from the agent's command line (`testbed node x` arrives as
    // `testbed node`), and `ipcmark-x` names the same testbed.
    let base = testbed::base_name(&name).map_err(Failure::usage)?;
    let agent = format!("{exe} testbed node {base}");
    match mpirun::run_mpirun(&name, &agent, &args.args).map_err(Failure::run)? {
        // The job's code, as mpirun gives it (its ranks printed why).
        JobEnd::Exited(code) => Ok(ExitCode::from(code.clamp(0, 255) as u8)),
        JobEnd::Killed(sig) => Err(Failure::run(format!("mpirun was killed by signal {sig}"))),
    }
}

fn node_cmd(args: NodeArgs) -> Result<ExitCode, Failure> {
    match mpirun::exec_on_node(&args.name, &args.host, &args.command) {
        Ok(never) => match never {},
        Err(NodeError::Usage(e)) => Err(Failure::usage(e)),
        Err(NodeError::Failed(e)) => Err(Failure::run(e)),
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
        "{}\ntoken file: {token}\nagent:  ip netns exec {} {exe} serve --listen {} --token-file {token}\nclient: ip netns exec {} {exe} run tcp --remote {} --token-file {token}\nmpi:    {exe} testbed mpirun{down} -- -n 2 PROGRAM (Open MPI; {} and {} as two nodes)\nremove: {exe} testbed down{down}\n",
        tb.describe(),
        tb.agent_ns(),
        tb.agent_ip(),
        tb.client_ns(),
        tb.agent_ip(),
        tb.client_ns(),
        tb.agent_ns(),
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
