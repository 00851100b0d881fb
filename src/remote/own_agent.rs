//! The agent a run starts for itself: a network preset run without
//! `--remote` measures against an `ipcmark serve` it starts on the far side
//! of its own two-host testbed, and stops when the run ends.
//!
//! The testbed is the `testbed` layer's, which this one does not use: the
//! caller says how the agent's process is made (in the testbed's agent
//! namespace); what it runs, how it ends and how it is reached are here.

use crate::remote::client::{Agent, CONNECT_TIMEOUT};
use crate::remote::protocol::DEFAULT_PORT;
use std::net::{IpAddr, SocketAddr};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How often a just-started agent is tried until it listens.
const RETRY: Duration = Duration::from_millis(20);

/// An agent this run started. Dropped: it is killed and reaped.
pub struct OwnAgent {
    child: Child,
    listen: SocketAddr,
}

impl Drop for OwnAgent {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl OwnAgent {
    /// Starts `ipcmark serve` listening on `ip` at the default port with
    /// the token file `token`, as the process `command` makes from serve's
    /// arguments. Its output is discarded (the run's figures report its
    /// errors), and it ends with the thread that started it.
    pub fn start(
        ip: IpAddr,
        token: &Path,
        command: impl FnOnce(&[&str]) -> Result<Command, String>,
    ) -> Result<OwnAgent, String> {
        let listen = SocketAddr::new(ip, DEFAULT_PORT);
        let listen_arg = listen.to_string();
        let token = token.to_string_lossy().into_owned();
        let mut cmd = command(&["serve", "--listen", &listen_arg, "--token-file", &token])?;
        // A run killed with SIGKILL cannot remove its testbed, but its agent
        // ends with it, so `ipcmark clean` finds the namespaces idle.
        crate::sys::process::parent_death_signal_for(&mut cmd, libc::SIGTERM);
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start the testbed's agent: {e}"))?;
        Ok(OwnAgent { child, listen })
    }

    /// The agent's session, once it listens: it was just started, so a
    /// refused connection is tried again until [`CONNECT_TIMEOUT`] has passed.
    pub fn connect(&self, token: Option<Vec<u8>>) -> Result<Agent, String> {
        let spec = self.listen.to_string();
        let until = Instant::now() + CONNECT_TIMEOUT;
        loop {
            match Agent::connect(&spec, token.clone(), CONNECT_TIMEOUT) {
                Ok(a) => return Ok(a),
                Err(_) if Instant::now() < until => std::thread::sleep(RETRY),
                Err(e) => return Err(format!("the testbed's agent: {e}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_agent_is_started_with_serves_arguments_and_killed_when_dropped() {
        let mut seen = Vec::new();
        let agent = OwnAgent::start(
            "198.18.0.2".parse().unwrap(),
            Path::new("/run/token"),
            |args| {
                seen = args.iter().map(|a| a.to_string()).collect();
                // A stand-in that would outlive the test unless killed.
                let mut sleep = Command::new("sleep");
                sleep.arg("60");
                Ok(sleep)
            },
        )
        .expect("sleep starts");
        assert_eq!(
            seen,
            [
                "serve",
                "--listen",
                &format!("198.18.0.2:{DEFAULT_PORT}"),
                "--token-file",
                "/run/token"
            ]
        );
        let proc = format!("/proc/{}", agent.child.id());
        assert!(Path::new(&proc).exists());
        drop(agent);
        // Reaped as well as killed: no zombie is left under this pid.
        assert!(!Path::new(&proc).exists(), "{proc} is still there");
    }

    #[test]
    fn a_command_that_cannot_be_made_is_its_own_error() {
        let e = OwnAgent::start("127.0.0.1".parse().unwrap(), Path::new("t"), |_| {
            Err("cannot find ipcmark's own executable: gone".into())
        })
        .err()
        .unwrap();
        assert_eq!(e, "cannot find ipcmark's own executable: gone");
    }
}
