//! `dbus` and `dbus-p2p`: a D-Bus method call round trip, the payload the
//! call's byte array (`ay`) and the reply's. The server end is an object at
//! `/org/ipcmark/Echo` whose method `org.ipcmark.Echo.Echo` answers every
//! call with the bytes it received; the client end calls it and waits for
//! the return of that call (its reply serial), and both ends decode the
//! message and check its signature and length before the engine checks the
//! payload.
//!
//! `dbus` goes through a real `dbus-daemon`: a private bus that ipcmark
//! starts for the channel (its configuration and socket in a directory of
//! its own, ended and removed with the channel, see
//! [`crate::engine::os::daemon`]), or the bus at `--dbus-address` (the
//! user's session bus, say). Each end is a connection of its own, named by
//! the bus (`Hello`); the client calls the server's unique name, so the
//! daemon routes every message (reads it, checks it against its policy,
//! adds the sender and writes it on), which is what a call on a bus costs.
//! `dbus-p2p` is the same call peer to peer, without a broker: one Unix
//! socket pair, the server end authenticating the client with a GUID of its
//! own, as a D-Bus server does.
//!
//! The messages are encoded and decoded by zbus (`zbus::wire`); the
//! connection is [`super::dbus_wire`]'s, for the reasons it gives.

use super::dbus_wire::{Conn, Outgoing, Received};
use crate::engine::channel::*;
use crate::engine::os::daemon::{Daemon, DaemonSpec};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

/// The options the command line gives the D-Bus mechanisms, set once before
/// a run (see [`set_bus_address`]).
static BUS_ADDRESS: OnceLock<String> = OnceLock::new();

/// Uses the bus at `address` (a D-Bus address: `unix:path=…` or
/// `unix:abstract=…`) for `dbus` instead of a private one. Checked here,
/// so that a bad address is a usage error before anything runs.
pub fn set_bus_address(address: &str) -> Result<(), String> {
    parse_address(address)?;
    let set = BUS_ADDRESS.get_or_init(|| address.to_string());
    if set != address {
        return Err(format!(
            "--dbus-address {address:?}: this process already uses the bus at {set:?}"
        ));
    }
    Ok(())
}

/// Where a bus listens.
#[derive(Debug, PartialEq, Eq)]
enum Listen {
    Path(PathBuf),
    Abstract(Vec<u8>),
}

/// The first Unix transport of a D-Bus address (`;`-separated, each
/// `transport:key=value,…`; values percent-escaped).
fn parse_address(address: &str) -> Result<Listen, String> {
    for one in address.split(';') {
        let Some(("unix", keys)) = one.split_once(':') else {
            continue;
        };
        for kv in keys.split(',') {
            match kv.split_once('=') {
                Some(("path", v)) => return Ok(Listen::Path(unescape(v)?.into_os_path())),
                Some(("abstract", v)) => return Ok(Listen::Abstract(unescape(v)?)),
                _ => {}
            }
        }
    }
    Err(format!(
        "D-Bus address {address:?}: ipcmark connects to unix:path=… or unix:abstract=… only"
    ))
}

trait IntoOsPath {
    fn into_os_path(self) -> PathBuf;
}

impl IntoOsPath for Vec<u8> {
    fn into_os_path(self) -> PathBuf {
        use std::os::unix::ffi::OsStringExt;
        PathBuf::from(std::ffi::OsString::from_vec(self))
    }
}

fn unescape(v: &str) -> Result<Vec<u8>, String> {
    let b = v.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = v
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("D-Bus address: a bad escape in {v:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Ok(out)
}

fn connect(listen: &Listen) -> std::io::Result<UnixStream> {
    match listen {
        Listen::Path(p) => UnixStream::connect(p),
        Listen::Abstract(name) => {
            use std::os::linux::net::SocketAddrExt;
            let addr = std::os::unix::net::SocketAddr::from_abstract_name(name)?;
            UnixStream::connect_addr(&addr)
        }
    }
}

/// The program that runs a private bus.
const DAEMON: &str = "dbus-daemon";

/// The private bus's configuration: a session-like bus on a socket in its
/// directory, anyone of this user may own names and call anything, and
/// messages up to the specification's 128 MiB.
const CONFIG: &str = r#"<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={dir}/bus</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
  <limit name="max_message_size">134217728</limit>
  <limit name="max_incoming_bytes">1000000000</limit>
  <limit name="max_outgoing_bytes">1000000000</limit>
</busconfig>
"#;

/// Where `program` is found in `PATH`, if anywhere.
fn in_path(program: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The largest payload: a message is at most 128 MiB, its header included.
fn limit() -> SizeLimit {
    SizeLimit {
        max_bytes: 127 << 20,
        reason: "D-Bus messages are at most 128 MiB, header included (specification)".into(),
    }
}

/// A method call round trip through a bus daemon.
pub struct Dbus;

/// The same call peer to peer, no daemon.
pub struct DbusP2p;

/// The calling end: it calls Echo on `destination` and waits for the
/// return of that call.
struct Caller {
    conn: Conn,
    destination: Option<String>,
    pending: Option<u32>,
    /// The broker that relays every call and reply (`dbus` only).
    relay: Option<Relay>,
    /// The private bus, ended when the client's end is dropped in the
    /// measuring process.
    _bus: Option<Daemon>,
}

impl Endpoint for Caller {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let serial = self
            .conn
            .send(&Outgoing::call(self.destination.as_deref()), msg)?;
        self.pending = Some(serial);
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let serial = self
            .pending
            .take()
            .ok_or_else(|| ChannelError::Check("a reply awaited with no call made".into()))?;
        let reply = self.conn.recv_reply(serial)?;
        reply.body_into(buf)
    }

    fn relay(&self) -> Option<Relay> {
        self.relay.clone()
    }
}

/// The serving end: the Echo method's implementation, one call at a time.
struct Echoer {
    conn: Conn,
    /// The call being answered: its serial and its sender.
    call: Option<(u32, Option<String>)>,
}

impl Endpoint for Echoer {
    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let call: Received = self.conn.recv_call()?;
        call.body_into(buf)?;
        self.call = Some((call.serial, call.sender));
        Ok(())
    }

    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        let (serial, sender) = self
            .call
            .take()
            .ok_or_else(|| ChannelError::Check("a reply sent with no call to answer".into()))?;
        self.conn
            .send(&Outgoing::reply(serial, sender.as_deref()), msg)?;
        Ok(())
    }
}

/// Connects to the bus, authenticates and says `Hello`, all within
/// `timeout`: a bus that accepts and never answers, or drips its answer a
/// byte at a time, must not hold the run (the deadline is on the whole
/// exchange, not on each read).
fn on_bus(listen: &Listen, timeout: Duration) -> Result<(Conn, String), ChannelError> {
    let joined = {
        let _deadline = crate::engine::os::interrupt::Watchdog::arm(timeout);
        connect(listen)
            .map_err(ChannelError::io("connect to the D-Bus bus"))
            .and_then(Conn::client)
            .and_then(|(mut conn, _guid)| conn.hello().map(|name| (conn, name)))
    };
    joined.map_err(|e| match e {
        ChannelError::Timeout => ChannelError::Check(format!(
            "the D-Bus bus did not finish authentication and Hello within {} s (--timeout)",
            timeout.as_secs_f64()
        )),
        other => other,
    })
}

/// The daemon that relays every message: the private one ipcmark started
/// (`ours`), else the process at the other end of the connection to the
/// bus (`SO_PEERCRED`: the process that listens on the bus's socket, which
/// is the daemon unless another process made the socket and handed it over,
/// as socket activation does).
fn broker(ours: Option<libc::pid_t>, conn: &Conn) -> Relay {
    match (ours, conn.peer_pid()) {
        (Some(pid), _) => Relay {
            what: "the private dbus-daemon".into(),
            pid: Some(pid),
        },
        (None, Some(pid)) => Relay {
            what: "the bus's daemon, the process that listens on its socket (SO_PEERCRED; \
                   under socket activation that is the service manager, and the daemon's \
                   time stays in the residual)"
                .into(),
            pid: Some(pid),
        },
        (None, None) => Relay {
            what: "the bus's daemon, whose pid the bus's socket does not give (SO_PEERCRED)".into(),
            pid: None,
        },
    }
}

impl Mechanism for Dbus {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "dbus",
            summary: "D-Bus method call round trip through a dbus-daemon (a private bus, or --dbus-address), payload as a byte array (ay)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("dbus-daemon (Debian package dbus); crate zbus")
    }

    fn unavailable(&self) -> Option<String> {
        if BUS_ADDRESS.get().is_some() || in_path(DAEMON).is_some() {
            return None;
        }
        Some(format!(
            "{DAEMON} not found in PATH (install Debian's dbus package, or give a bus with --dbus-address)"
        ))
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        Some(limit())
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No("a method call waits for its reply")
    }

    fn relayed(&self) -> bool {
        true
    }

    fn open(&self, ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (bus, listen, note) = match BUS_ADDRESS.get() {
            Some(address) => (
                None,
                parse_address(address).map_err(ChannelError::Check)?,
                format!("bus at {address}"),
            ),
            None => {
                let daemon = Daemon::start(
                    ctx.names,
                    &DaemonSpec {
                        program: DAEMON,
                        what: "dbus",
                        files: vec![("bus.conf", CONFIG.to_string())],
                        args: vec![
                            "--config-file={dir}/bus.conf".into(),
                            "--nofork".into(),
                            "--print-address".into(),
                        ],
                        ready_within: Duration::from_secs(10),
                    },
                )
                .map_err(ChannelError::io("start a private dbus-daemon"))?;
                // Where it says it listens (the path its configuration names).
                let listen = parse_address(&daemon.first_line).map_err(ChannelError::Check)?;
                (Some(daemon), listen, "a private dbus-daemon".to_string())
            }
        };
        let (server, server_name) = on_bus(&listen, ctx.timeout)?;
        let (client, _) = on_bus(&listen, ctx.timeout)?;
        let relay = broker(bus.as_ref().map(|d| d.pid), &client);
        Ok(Channel {
            client: Box::new(Caller {
                conn: client,
                destination: Some(server_name),
                pending: None,
                relay: Some(relay),
                _bus: bus,
            }),
            server: Some(Box::new(Echoer {
                conn: server,
                call: None,
            })),
            note: Some(note),
        })
    }
}

impl Mechanism for DbusP2p {
    fn info(&self) -> MechanismInfo {
        MechanismInfo {
            id: "dbus-p2p",
            summary: "D-Bus method call round trip peer to peer (no daemon) over a Unix socket pair, payload as a byte array (ay)",
            payload: Payload::Bytes,
            topology: Topology::Peer,
            spins: false,
        }
    }

    fn requires(&self) -> Option<&'static str> {
        Some("crate zbus (no daemon)")
    }

    fn size_limit(&self) -> Option<SizeLimit> {
        Some(limit())
    }

    fn stream(&self) -> StreamSupport {
        StreamSupport::No("a method call waits for its reply")
    }

    fn open(&self, _ctx: &OpenContext) -> Result<Channel, ChannelError> {
        let (a, b) = UnixStream::pair().map_err(ChannelError::io("socketpair"))?;
        let guid: String = (0..16)
            .map(|_| format!("{:02x}", fastrand::u8(..)))
            .collect();
        // The client's first lines wait in the socket for the server, which
        // answers before the client reads: both sides in one thread.
        let hello = b.try_clone().map_err(ChannelError::io("dup"))?;
        let auth = std::thread::scope(|s| {
            let server = s.spawn(|| Conn::server(hello, &guid));
            let client = Conn::client(a);
            (client, server.join())
        });
        let (client, server) = match auth {
            (Ok((client, got)), Ok(Ok(server))) => {
                if got != guid {
                    return Err(ChannelError::Check(format!(
                        "the peer's GUID came back as {got}, not {guid}"
                    )));
                }
                (client, server)
            }
            (Err(e), _) | (_, Ok(Err(e))) => return Err(e),
            (_, Err(_)) => return Err(ChannelError::Check("the D-Bus handshake failed".into())),
        };
        drop(b);
        Ok(Channel {
            client: Box::new(Caller {
                conn: client,
                destination: None,
                pending: None,
                relay: None,
                _bus: None,
            }),
            server: Some(Box::new(Echoer {
                conn: server,
                call: None,
            })),
            note: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanisms::test_util;

    #[test]
    fn addresses_are_read_as_d_bus_writes_them() {
        assert_eq!(
            parse_address("unix:path=/run/user/1000/bus").unwrap(),
            Listen::Path("/run/user/1000/bus".into())
        );
        assert_eq!(
            parse_address("tcp:host=x,port=1;unix:abstract=/tmp/dbus-%41b,guid=00").unwrap(),
            Listen::Abstract(b"/tmp/dbus-Ab".to_vec())
        );
        let err = parse_address("tcp:host=localhost,port=5").unwrap_err();
        assert!(err.contains("unix:path="), "{err}");
        assert!(parse_address("unix:path=/x%4").is_err());
    }

    #[test]
    fn p2p_echoes_at_several_sizes() {
        test_util::echo_sizes(&DbusP2p, &[1, 8, 4096, 65536 + 3]);
        // Peer to peer, nothing relays.
        assert!(test_util::open(&DbusP2p, 8).client.relay().is_none());
    }

    #[test]
    fn bus_echoes_at_several_sizes_and_ends_its_daemon() {
        if Dbus.unavailable().is_some() {
            eprintln!("skipped: {}", Dbus.unavailable().unwrap());
            return;
        }
        let ours = || {
            let prefix = format!("ipcmark-{}-", std::process::id());
            std::fs::read_dir(crate::engine::os::objects::tmpfs_base())
                .unwrap()
                .flatten()
                .filter(|e| {
                    let n = e.file_name().to_string_lossy().into_owned();
                    n.starts_with(&prefix) && n.contains("-dbus-")
                })
                .count()
        };
        let mut ch = test_util::open(&Dbus, 64);
        assert_eq!(ours(), 1, "the private bus's directory");
        // The client's end names the daemon that relays each message, and
        // the bus's socket says the same pid (SO_PEERCRED), as it does for
        // a bus ipcmark did not start.
        assert!(Dbus.relayed() && !DbusP2p.relayed());
        let relay = ch.client.relay().expect("a broker");
        let pid = relay.pid.expect("its pid");
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap();
        assert_eq!(comm.trim(), DAEMON);
        let dir = std::fs::read_dir(crate::engine::os::objects::tmpfs_base())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                let n = p.file_name().unwrap().to_string_lossy().into_owned();
                n.starts_with(&format!("ipcmark-{}-", std::process::id())) && n.contains("-dbus-")
            })
            .unwrap();
        let (conn, _) = on_bus(
            &Listen::Path(dir.join("bus")),
            std::time::Duration::from_secs(10),
        )
        .unwrap();
        assert_eq!(broker(None, &conn).pid, Some(pid));
        drop(conn);
        test_util::echo_once(&mut ch, 64);
        drop(ch);
        assert_eq!(
            ours(),
            0,
            "the private bus's directory, once the channel is dropped"
        );
        test_util::echo_sizes(&Dbus, &[1, 4096, 65536 + 3]);
    }

    #[test]
    fn a_reply_of_another_length_is_refused() {
        let mut ch = test_util::open(&DbusP2p, 16);
        ch.client.send(&[7u8; 16]).unwrap();
        let server = ch.server.as_mut().unwrap();
        let mut got = [0u8; 16];
        server.recv(&mut got).unwrap();
        server.send(&[7u8; 8]).unwrap();
        let err = ch.client.recv(&mut [0u8; 16]).unwrap_err();
        assert!(
            matches!(
                err,
                ChannelError::Length {
                    expected: 16,
                    got: 8
                }
            ),
            "{err}"
        );
    }
}
