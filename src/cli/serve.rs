//! `ipcmark serve`: the agent remote figures run against (docs/remote.md);
//! and the hidden `ipcmark agent-check`, which opens one session with an
//! agent and closes it (what the tests and a user checking a firewall need).

use super::Failure;
use crate::remote::agent::{self, Config};
use crate::remote::auth::read_token_file;
use crate::remote::client::{self, Agent};
use crate::remote::protocol::{PROTOCOL_VERSION, ipcmark_version};
use crate::remote::task::PortRange;
use clap::Args;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `ipcmark serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Where to accept clients: ADDR[:PORT] (port 7878 unless given; 0
    /// takes any free port, printed at start). Any address but loopback
    /// requires --token-file.
    #[arg(long, value_name = "ADDR[:PORT]", default_value = "127.0.0.1")]
    listen: String,
    /// A file holding the secret clients must prove they know (HMAC
    /// challenge–response; it never goes on the wire). Must be readable by
    /// its owner only.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    token_file: Option<PathBuf>,
    /// The ports the figures' data connections may use, FIRST-LAST (or one
    /// port), for a firewall; any free port by default.
    #[arg(long, value_name = "FIRST-LAST", value_parser = parse_ports)]
    data_ports: Option<PortRange>,
    /// Serve one session, then exit.
    #[arg(long)]
    once: bool,
}

/// Arguments of `ipcmark agent-check` (hidden).
#[derive(Debug, Args)]
pub struct AgentCheckArgs {
    /// The agent: HOST[:PORT].
    #[arg(value_name = "HOST[:PORT]")]
    agent: String,
    /// The agent's token.
    #[arg(long, value_name = "FILE", value_hint = clap::ValueHint::FilePath)]
    token_file: Option<PathBuf>,
}

/// Parses `--data-ports`: `FIRST-LAST` or one port.
pub fn parse_ports(s: &str) -> Result<PortRange, String> {
    let (a, b) = s.split_once('-').unwrap_or((s, s));
    let port = |p: &str| {
        p.trim()
            .parse::<u16>()
            .map_err(|_| format!("{s:?} is not a port range like 5201-5210"))
    };
    let (first, last) = (port(a)?, port(b)?);
    if first > last || (first == 0) != (last == 0) {
        return Err(format!("{s:?} is not a port range like 5201-5210"));
    }
    Ok(PortRange { first, last })
}

/// The address to listen on: `ADDR[:PORT]`, the default port unless given.
fn listen_address(spec: &str) -> Result<SocketAddr, Failure> {
    let addrs = client::resolve(spec).map_err(|e| Failure::usage(format!("--listen: {e}")))?;
    Ok(addrs[0])
}

/// `ipcmark serve`.
pub fn serve(args: ServeArgs) -> Result<ExitCode, Failure> {
    let listen = listen_address(&args.listen)?;
    let token = match &args.token_file {
        Some(p) => Some(read_token_file(p).map_err(Failure::usage)?),
        None => None,
    };
    if token.is_none() && !listen.ip().is_loopback() {
        return Err(Failure::usage(format!(
            "listening on {} (not loopback) requires --token-file: anyone who can reach it \
             could otherwise run figures on this host",
            listen.ip()
        )));
    }
    let config = Config {
        listen,
        token,
        data_ports: args.data_ports.unwrap_or(PortRange::ANY),
        once: args.once,
    };
    let ports = match config.data_ports {
        PortRange::ANY => "any free port".to_string(),
        PortRange { first, last } => format!("ports {first}-{last}"),
    };
    let access = if config.token.is_some() {
        "token required"
    } else {
        "no token: loopback only"
    };
    agent::serve(&config, |bound| {
        eprintln!(
            "ipcmark serve: listening on {bound} ({access}; protocol {PROTOCOL_VERSION}, \
             ipcmark {}; data on {ports})",
            ipcmark_version()
        );
    })
    .map_err(Failure::run)?;
    Ok(ExitCode::SUCCESS)
}

/// `ipcmark agent-check`: one session with the agent, one clock exchange,
/// `Bye`. Prints the agent's address, version and host name.
pub fn agent_check(args: AgentCheckArgs) -> Result<ExitCode, Failure> {
    let token = match &args.token_file {
        Some(p) => Some(read_token_file(p).map_err(Failure::usage)?),
        None => None,
    };
    let mut agent =
        Agent::connect(&args.agent, token, Duration::from_secs(5)).map_err(Failure::run)?;
    agent.clock().map_err(Failure::run)?;
    let host = agent.environment()["hostname"]
        .as_str()
        .unwrap_or("?")
        .to_string();
    println!(
        "agent at {}: ipcmark {} on {host}",
        agent.addr(),
        agent.agent_version()
    );
    agent.bye();
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::remote::protocol::DEFAULT_PORT;

    #[test]
    fn port_ranges_parse() {
        assert_eq!(
            parse_ports("5201-5210"),
            Ok(PortRange {
                first: 5201,
                last: 5210
            })
        );
        assert_eq!(
            parse_ports("5201"),
            Ok(PortRange {
                first: 5201,
                last: 5201
            })
        );
        assert_eq!(parse_ports("0"), Ok(PortRange::ANY));
        for bad in ["5210-5201", "0-5", "x", "1-70000", ""] {
            assert!(parse_ports(bad).is_err(), "{bad}");
        }
        assert!(listen_address("127.0.0.1").is_ok_and(|a| a.port() == DEFAULT_PORT));
    }
}
