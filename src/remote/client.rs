//! The client's side of the control protocol: one session with an agent
//! ([`Agent`]), and the same session as the remote figures use it
//! ([`Control`]). Every error is one line that names the agent's address.

use crate::remote::auth::{self, Side};
use crate::remote::data::DataKey;
use crate::remote::figures::Control;
use crate::remote::frame::{self, FrameError};
use crate::remote::protocol::{
    AgentMsg, ClientMsg, DEFAULT_PORT, PROTOCOL_VERSION, announced_protocol, ipcmark_version,
    printable,
};
use crate::remote::task::{Report, Task};
use std::net::{IpAddr, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The longest the agent may take to answer a request (all but `Finish`).
pub const ANSWER: Duration = Duration::from_secs(5);

/// How long connecting to the agent may take (a run's `--remote`, or the
/// agent a run starts for itself, once it listens).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// An open session with an agent.
pub struct Agent {
    stream: TcpStream,
    addr: SocketAddr,
    environment: serde_json::Value,
    version: String,
}

/// The addresses `spec` (`HOST[:PORT]`, `[V6]:PORT`, a bare IPv6 address)
/// names, the port [`DEFAULT_PORT`] unless given.
pub fn resolve(spec: &str) -> Result<Vec<SocketAddr>, String> {
    if let Ok(a) = spec.parse::<SocketAddr>() {
        return Ok(vec![a]);
    }
    let bare = spec.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, DEFAULT_PORT)]);
    }
    let (host, port) = match spec.rsplit_once(':') {
        Some((h, p)) => (
            h,
            p.parse::<u16>()
                .map_err(|_| format!("{spec:?} is not HOST[:PORT] (bad port {p:?})"))?,
        ),
        None => (spec, DEFAULT_PORT),
    };
    if host.is_empty() {
        return Err(format!("{spec:?} is not HOST[:PORT] (no host)"));
    }
    let addrs: Vec<SocketAddr> = (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {host}: {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("{host} has no address"));
    }
    Ok(addrs)
}

impl Agent {
    /// Connects to the agent at `spec` (`HOST[:PORT]`) within
    /// `connect_timeout`, checks both sides speak the same protocol, proves
    /// the token (if given) and checks the agent's proof, and receives the
    /// agent host's environment.
    pub fn connect(
        spec: &str,
        token: Option<Vec<u8>>,
        connect_timeout: Duration,
    ) -> Result<Agent, String> {
        let mut last = String::new();
        for addr in resolve(spec)? {
            match TcpStream::connect_timeout(&addr, connect_timeout) {
                Ok(stream) => return Agent::handshake(stream, addr, token),
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    last = format!(
                        "no answer from the agent at {addr} within {} s",
                        connect_timeout.as_secs_f64()
                    )
                }
                Err(e) => last = format!("cannot connect to the agent at {addr}: {e}"),
            }
        }
        Err(last)
    }

    fn handshake(
        stream: TcpStream,
        addr: SocketAddr,
        token: Option<Vec<u8>>,
    ) -> Result<Agent, String> {
        let _ = stream.set_nodelay(true);
        let mut agent = Agent {
            stream,
            addr,
            environment: serde_json::Value::Null,
            version: String::new(),
        };
        let client_nonce = auth::nonce()?;
        agent.send(&ClientMsg::Hello {
            protocol: PROTOCOL_VERSION,
            ipcmark: ipcmark_version().into(),
            client_nonce: client_nonce.clone(),
        })?;
        let payload = frame::read_payload(&mut agent.stream, Instant::now() + ANSWER)
            .map_err(|e| agent.frame_error(e, ANSWER))?;
        if let Some(theirs) = announced_protocol(&payload)
            && theirs != u64::from(PROTOCOL_VERSION)
        {
            let version = serde_json::from_slice::<serde_json::Value>(&payload)
                .ok()
                .and_then(|v| v.get("ipcmark").and_then(|s| s.as_str()).map(str::to_owned))
                .unwrap_or_else(|| "unknown".into());
            let version = printable(&version, 40);
            return Err(format!(
                "ipcmark agent at {addr} speaks protocol {theirs} (ipcmark {version}); this client \
                 speaks {PROTOCOL_VERSION} (ipcmark {}): use the same ipcmark version on both hosts",
                ipcmark_version()
            ));
        }
        let (server_nonce, auth_required) = match agent.decode(&payload, "the handshake")? {
            AgentMsg::Hello {
                ipcmark,
                server_nonce,
                auth_required,
                ..
            } => {
                agent.version = printable(&ipcmark, 40);
                (server_nonce, auth_required)
            }
            other => return Err(agent.unexpected(other, "the handshake")),
        };
        let mac = match (&token, auth_required) {
            (None, true) => {
                return Err(format!(
                    "the agent at {addr} requires a token: give its token with --token-file"
                ));
            }
            (Some(t), true) => Some(auth::mac(t, Side::Client, &server_nonce, &client_nonce)),
            (_, false) => None,
        };
        agent.send(&ClientMsg::Auth { mac })?;
        match agent.receive(ANSWER, "the handshake")? {
            AgentMsg::Welcome { mac, environment } => {
                if let Some(t) = &token {
                    let proven = mac.is_some_and(|m| {
                        auth::verify(t, Side::Agent, &server_nonce, &client_nonce, &m)
                    });
                    if !proven {
                        return Err(format!(
                            "the agent at {addr} did not prove it holds the token \
                             (it has none, or another one): refusing it"
                        ));
                    }
                }
                agent.environment = environment;
                Ok(agent)
            }
            other => Err(agent.unexpected(other, "the handshake")),
        }
    }

    /// The agent's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The agent host's environment record (as a run's JSON writes it).
    pub fn environment(&self) -> &serde_json::Value {
        &self.environment
    }

    /// The agent's ipcmark version.
    pub fn agent_version(&self) -> &str {
        &self.version
    }

    /// One exchange of the clock-offset estimate: `[t1, t2, t3, t4]`, the
    /// client's clock at sending, the agent's at receipt and at reply, the
    /// client's at receipt (CLOCK_MONOTONIC of each host, ns).
    pub fn clock(&mut self) -> Result<[u64; 4], String> {
        let t1 = crate::sys::clock::monotonic_ns();
        self.send(&ClientMsg::Clock { t1 })?;
        match self.receive(ANSWER, "a clock exchange")? {
            AgentMsg::Clock { t1: back, t2, t3 } if back == t1 => {
                Ok([t1, t2, t3, crate::sys::clock::monotonic_ns()])
            }
            other => Err(self.unexpected(other, "a clock exchange")),
        }
    }

    /// Starts one figure on the agent: the data port its side listens on
    /// and the key its data connection must carry.
    pub fn start(&mut self, task: &Task) -> Result<(u16, DataKey), String> {
        self.send(&ClientMsg::Start { task: task.clone() })?;
        match self.receive(ANSWER, "the start of a figure")? {
            AgentMsg::Ready { port, key } => match DataKey::from_hex(&key) {
                Some(key) => Ok((port, key)),
                None => Err(format!(
                    "the agent at {} sent a data key that is not {} hex digits",
                    self.addr,
                    2 * crate::remote::data::KEY_BYTES
                )),
            },
            other => Err(self.unexpected(other, "the start of a figure")),
        }
    }

    /// Ends the figure that runs and returns the agent's report, waiting at
    /// most `wait` for it.
    pub fn finish(&mut self, wait: Duration) -> Result<Report, String> {
        self.send(&ClientMsg::Finish)?;
        match self.receive(wait, "the end of a figure")? {
            AgentMsg::Done { report } => Ok(report),
            other => Err(self.unexpected(other, "the end of a figure")),
        }
    }

    /// The control connection, for a figure's waits to watch: during a
    /// figure the agent sends nothing on it, so it turns readable only when
    /// the agent has gone (end of file).
    pub fn control_fd(&self) -> std::os::fd::RawFd {
        self.stream.as_raw_fd()
    }

    /// Whether the agent is still there, without waiting: an error (one
    /// line) once its control connection has closed or failed, for a
    /// figure's loop to check between samples.
    pub fn check_alive(&self) -> Result<(), String> {
        match crate::sys::fd::wait_ready(&self.stream.as_raw_fd(), libc::POLLIN, Duration::ZERO) {
            Ok(true) => {}
            Ok(false) | Err(_) => return Ok(()),
        }
        let closed = format!("the agent at {} closed the connection", self.addr);
        if self.stream.set_nonblocking(true).is_err() {
            return Err(closed);
        }
        let peeked = self.stream.peek(&mut [0u8; 1]);
        let _ = self.stream.set_nonblocking(false);
        match peeked {
            Ok(0) => Err(closed),
            Ok(_) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(e) => Err(format!(
                "the agent at {}: connection failed: {e}",
                self.addr
            )),
        }
    }

    /// Ends the session (the agent returns to waiting for a client).
    pub fn bye(mut self) {
        let _ = frame::write_frame(
            &mut self.stream,
            &ClientMsg::Bye,
            Instant::now() + Duration::from_secs(1),
        );
    }

    fn send(&mut self, msg: &ClientMsg) -> Result<(), String> {
        frame::write_frame(&mut self.stream, msg, Instant::now() + ANSWER)
            .map_err(|e| self.frame_error(e, ANSWER))
    }

    fn receive(&mut self, wait: Duration, during: &str) -> Result<AgentMsg, String> {
        let payload = frame::read_payload(&mut self.stream, Instant::now() + wait)
            .map_err(|e| self.frame_error(e, wait))?;
        self.decode(&payload, during)
    }

    /// Decodes an answer; `Busy` and `Refused` become the error they say.
    fn decode(&self, payload: &[u8], during: &str) -> Result<AgentMsg, String> {
        let msg = frame::decode_payload::<AgentMsg>(payload).map_err(|e| {
            format!(
                "the agent at {} {}",
                self.addr,
                printable(&e.to_string(), 300)
            )
        })?;
        match msg {
            AgentMsg::Busy { since_s, client } => Err(format!(
                "the agent at {} is busy with another client ({}, for {since_s:.0} s)",
                self.addr,
                printable(&client, 60)
            )),
            AgentMsg::Refused { reason, .. } if reason.starts_with("authentication failed") => Err(
                format!("the agent at {} refused this client: {reason}", self.addr),
            ),
            AgentMsg::Refused { reason, .. } => Err(format!(
                "the agent at {} refused {during}: {reason}",
                self.addr
            )),
            m => Ok(m),
        }
    }

    fn frame_error(&self, e: FrameError, wait: Duration) -> String {
        match e {
            FrameError::Timeout => format!(
                "no answer from the agent at {} within {} s",
                self.addr,
                wait.as_secs_f64()
            ),
            e => format!(
                "the agent at {} {}",
                self.addr,
                printable(&e.to_string(), 300)
            ),
        }
    }

    fn unexpected(&self, msg: AgentMsg, during: &str) -> String {
        let name = serde_json::to_value(&msg)
            .ok()
            .and_then(|v| v.get("type").and_then(|t| t.as_str()).map(str::to_owned))
            .unwrap_or_default();
        format!(
            "the agent at {} sent an unexpected {name} during {during}",
            self.addr
        )
    }
}

// The figures see the session through `Control` only, so that unit tests
// can stand a scripted agent in its place.
impl Control for Agent {
    fn agent(&self) -> SocketAddr {
        self.addr()
    }
    fn start(&mut self, task: &Task) -> Result<(u16, DataKey), String> {
        Agent::start(self, task)
    }
    fn finish(&mut self, wait: Duration) -> Result<Report, String> {
        Agent::finish(self, wait)
    }
    fn clock(&mut self) -> Result<[u64; 4], String> {
        Agent::clock(self)
    }
    fn alive(&self) -> Result<(), String> {
        self.check_alive()
    }
    fn watch(&self) -> Option<std::os::fd::RawFd> {
        Some(self.control_fd())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake agent on a thread: the handshake without a token, then holds
    /// the connection until `release` says, then closes it.
    fn fake_agent(release: std::sync::mpsc::Receiver<()>) -> SocketAddr {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap();
        std::thread::spawn(move || {
            let (mut s, _) = l.accept().unwrap();
            let by = || Instant::now() + Duration::from_secs(10);
            let _: ClientMsg = frame::read_frame(&mut s, by()).unwrap();
            let hello = AgentMsg::Hello {
                protocol: PROTOCOL_VERSION,
                ipcmark: "test".into(),
                server_nonce: auth::nonce().unwrap(),
                auth_required: false,
            };
            frame::write_frame(&mut s, &hello, by()).unwrap();
            let _: ClientMsg = frame::read_frame(&mut s, by()).unwrap();
            let welcome = AgentMsg::Welcome {
                mac: None,
                environment: serde_json::json!({"hostname": "fake"}),
            };
            frame::write_frame(&mut s, &welcome, by()).unwrap();
            let _ = release.recv();
        });
        addr
    }

    #[test]
    fn a_closed_control_connection_is_seen_without_waiting() {
        let (tx, rx) = std::sync::mpsc::channel();
        let addr = fake_agent(rx);
        let agent = Agent::connect(&addr.to_string(), None, Duration::from_secs(5)).unwrap();
        assert_eq!(agent.agent_version(), "test");
        assert_eq!(agent.environment()["hostname"], "fake");
        assert_eq!(agent.check_alive(), Ok(()));
        tx.send(()).unwrap();
        let start = Instant::now();
        let err = loop {
            match agent.check_alive() {
                Err(e) => break e,
                Ok(()) if start.elapsed() < Duration::from_secs(10) => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Ok(()) => panic!("the closed connection was never seen"),
            }
        };
        assert_eq!(err, format!("the agent at {addr} closed the connection"));
    }

    #[test]
    fn addresses_take_the_default_port_unless_given() {
        let p = DEFAULT_PORT;
        assert_eq!(
            resolve("198.18.0.2").unwrap(),
            vec![format!("198.18.0.2:{p}").parse().unwrap()]
        );
        assert_eq!(
            resolve("198.18.0.2:9").unwrap(),
            vec!["198.18.0.2:9".parse().unwrap()]
        );
        assert_eq!(
            resolve("::1").unwrap(),
            vec![format!("[::1]:{p}").parse().unwrap()]
        );
        assert_eq!(
            resolve("[::1]").unwrap(),
            vec![format!("[::1]:{p}").parse().unwrap()]
        );
        assert_eq!(
            resolve("[::1]:9").unwrap(),
            vec!["[::1]:9".parse().unwrap()]
        );
        assert!(
            resolve("localhost:7")
                .unwrap()
                .iter()
                .all(|a| a.port() == 7)
        );
        assert!(resolve("host:port").unwrap_err().contains("bad port"));
        assert!(resolve(":7").unwrap_err().contains("no host"));
    }
}
