//! The agent's accept path: its data socket for one figure
//! ([`DataListener`], [`listen`]) and the wait for the client on it — the
//! TCP connections held, without a byte written, until their hello shows
//! the key, and the UDP hello answered once it does. Apart because it is
//! the agent's defence of the data plane: whatever comes from another
//! address or without the key is dropped unanswered and counted.

use super::end::Sock;
use super::{DataKey, HELLO_LEN};
use crate::remote::task::{PortRange, Proto, Task};
use crate::sys::fd::wait_readable;
use std::io::{self, Read};
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// The most TCP data connections the agent holds while it waits for their
/// hello: past it the oldest is dropped, so silent connections can delay
/// the client's by nothing but their own number.
const MAX_PENDING: usize = 8;

/// Whether `a` and `b` are one host's address (an IPv4 client seen through
/// an IPv6 socket is the same client).
fn same_host(a: IpAddr, b: IpAddr) -> bool {
    a.to_canonical() == b.to_canonical()
}

/// The agent's data socket for one figure, bound before the client is told
/// its port.
pub struct DataListener {
    bound: Bound,
    port: u16,
}

enum Bound {
    Tcp(TcpListener),
    Udp(UdpSocket),
}

impl DataListener {
    /// The port the client connects (or sends) to.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// Binds the data socket for `task` on `ip`, at the first free port of
/// `ports` (any port for [`PortRange::ANY`]).
pub fn listen(task: &Task, ip: IpAddr, ports: PortRange) -> Result<DataListener, String> {
    let mut last = None;
    for port in ports.first..=ports.last {
        let at = SocketAddr::new(ip, port);
        let bound = match task.proto {
            Proto::Tcp => TcpListener::bind(at).map(Bound::Tcp),
            Proto::Udp => UdpSocket::bind(at).map(Bound::Udp),
        };
        match bound {
            Ok(bound) => {
                let local = match &bound {
                    Bound::Tcp(l) => l.local_addr(),
                    Bound::Udp(s) => s.local_addr(),
                }
                .map_err(|e| format!("getsockname: {e}"))?;
                return Ok(DataListener {
                    bound,
                    port: local.port(),
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(format!(
        "no data port free on {ip} in {}-{}: {}",
        ports.first,
        ports.last,
        last.map_or_else(|| "empty range".into(), |e| e.to_string())
    ))
}

/// Waits until `until` for the client's connection (TCP) or hello (UDP):
/// the first from `peer` that carries `key`'s hello. Whatever else comes
/// is dropped unanswered and counted in `rejected`.
pub(super) fn accept(
    listener: DataListener,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<Sock, String> {
    let sock = match listener.bound {
        Bound::Tcp(l) => Sock::Tcp(accept_tcp(l, peer, key, until, rejected)?),
        Bound::Udp(s) => {
            accept_udp(&s, peer, key, until, rejected)?;
            Sock::Udp(s)
        }
    };
    sock.tune()
        .map_err(|e| format!("data socket options: {e}"))?;
    Ok(sock)
}

/// The UDP hello: datagrams from another address or without the key are
/// dropped; the first good one connects the socket to its sender (the
/// kernel then drops every datagram from anywhere else) and is answered
/// with an empty datagram — the agent's first byte on the data plane.
fn accept_udp(
    s: &UdpSocket,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<(), String> {
    // One byte more than a hello, so that a longer datagram is not taken
    // for one truncated to the buffer.
    let mut buf = [0u8; HELLO_LEN + 1];
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if !wait_readable(s, left).map_err(|e| format!("poll: {e}"))? {
            return Err(never("sent its data hello", *rejected));
        }
        match s.recv_from(&mut buf) {
            Ok((n, from)) if same_host(from.ip(), peer) && key.is_hello(&buf[..n]) => {
                s.connect(from).map_err(|e| format!("connect: {e}"))?;
                s.send(&[]).map_err(|e| format!("data hello: {e}"))?;
                return Ok(());
            }
            Ok(_) => *rejected += 1,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("recv: {e}")),
        }
    }
}

/// A TCP connection waiting for its hello.
struct Pending {
    stream: TcpStream,
    got: [u8; HELLO_LEN],
    len: usize,
}

/// The TCP hello: connections from another address are closed at once;
/// the others are held (at most [`MAX_PENDING`], non-blocking, all watched
/// at once, so a silent one holds up nobody) until their first
/// [`HELLO_LEN`] bytes show whether they carry the key. The agent writes
/// nothing to any of them; the first with the key is the figure's.
fn accept_tcp(
    l: TcpListener,
    peer: IpAddr,
    key: &DataKey,
    until: Instant,
    rejected: &mut u64,
) -> Result<TcpStream, String> {
    l.set_nonblocking(true)
        .map_err(|e| format!("data socket options: {e}"))?;
    let mut pending: Vec<Pending> = Vec::new();
    loop {
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            *rejected += pending.len() as u64;
            return Err(never("opened the data connection", *rejected));
        }
        let mut fds: Vec<libc::pollfd> = std::iter::once(l.as_raw_fd())
            .chain(pending.iter().map(|p| p.stream.as_raw_fd()))
            .map(|fd| libc::pollfd {
                fd,
                events: libc::POLLIN,
                revents: 0,
            })
            .collect();
        match crate::sys::fd::poll(&mut fds, left) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(format!("poll: {e}")),
        }
        // The held connections first (in reverse, so that removing one
        // leaves the indices still to visit in place).
        for i in (0..pending.len()).rev() {
            if fds[i + 1].revents == 0 {
                continue;
            }
            let p = &mut pending[i];
            match p.stream.read(&mut p.got[p.len..]) {
                Ok(0) => {}
                Ok(n) => {
                    p.len += n;
                    if p.len < HELLO_LEN {
                        continue;
                    }
                    if key.is_hello(&p.got) {
                        let p = pending.swap_remove(i);
                        *rejected += pending.len() as u64;
                        p.stream
                            .set_nonblocking(false)
                            .map_err(|e| format!("data socket options: {e}"))?;
                        return Ok(p.stream);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    continue;
                }
                Err(_) => {}
            }
            // Closed, failed or a wrong hello: dropped.
            pending.swap_remove(i);
            *rejected += 1;
        }
        if fds[0].revents == 0 {
            continue;
        }
        loop {
            match l.accept() {
                Ok((stream, from)) => {
                    if !same_host(from.ip(), peer) || stream.set_nonblocking(true).is_err() {
                        *rejected += 1;
                        continue;
                    }
                    if pending.len() >= MAX_PENDING {
                        pending.remove(0);
                        *rejected += 1;
                    }
                    pending.push(Pending {
                        stream,
                        got: [0; HELLO_LEN],
                        len: 0,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // A connection reset before it was accepted, or no
                // descriptor left: the others go on (after a pause, as the
                // listener stays readable while the cause lasts).
                Err(_) => {
                    std::thread::sleep(Duration::from_millis(10));
                    break;
                }
            }
        }
    }
}

/// The error of a figure whose client never came, with what was dropped.
fn never(what: &str, rejected: u64) -> String {
    let mut e = format!("the client never {what}");
    if rejected > 0 {
        e.push_str(&format!(
            " ({rejected} connections or datagrams from another address or without the figure's key were dropped)"
        ));
    }
    e
}

#[cfg(test)]
mod tests {
    use super::super::{connect, serve};
    use super::*;
    use crate::remote::task::{Report, Role};
    use std::io::Write;
    use std::os::fd::OwnedFd;

    #[test]
    fn an_ipv4_client_seen_through_an_ipv6_socket_is_the_same_host() {
        let v4: IpAddr = "127.0.0.1".parse().unwrap();
        let mapped: IpAddr = "::ffff:127.0.0.1".parse().unwrap();
        assert!(same_host(v4, mapped));
        assert!(!same_host(v4, "127.0.0.2".parse().unwrap()));
    }

    fn serve_in_thread(
        task: &Task,
        peer: IpAddr,
        wait: Duration,
    ) -> (
        u16,
        DataKey,
        io::PipeWriter,
        std::thread::JoinHandle<Report>,
    ) {
        let l = listen(task, "127.0.0.1".parse().unwrap(), PortRange::ANY).unwrap();
        let port = l.port();
        let key = DataKey::fresh().unwrap();
        let (r, w) = io::pipe().unwrap();
        let (task, theirs) = (task.clone(), key.clone());
        let h = std::thread::spawn(move || {
            serve(
                l,
                &task,
                peer,
                &theirs,
                OwnedFd::from(r),
                Instant::now() + wait,
            )
        });
        (port, key, w, h)
    }

    fn echo_task(proto: Proto) -> Task {
        Task {
            proto,
            size: 16,
            role: Role::Echo,
            cpu: None,
            limit_ms: 20_000,
        }
    }

    #[test]
    fn silent_and_wrong_tcp_connections_get_no_byte_and_do_not_hold_up_the_client() {
        let (port, key, mut stop, h) = serve_in_thread(
            &echo_task(Proto::Tcp),
            "127.0.0.1".parse().unwrap(),
            Duration::from_secs(20),
        );
        let at: SocketAddr = ([127, 0, 0, 1], port).into();
        // Silent ones, more than the agent holds, then one with a wrong key.
        let silent: Vec<TcpStream> = (0..MAX_PENDING + 2)
            .map(|_| TcpStream::connect(at).unwrap())
            .collect();
        let mut wrong = TcpStream::connect(at).unwrap();
        wrong.write_all(&DataKey::fresh().unwrap().hello()).unwrap();
        let mut end = connect(
            &echo_task(Proto::Tcp),
            at,
            &key,
            Instant::now() + Duration::from_secs(20),
            None,
        )
        .unwrap();
        let mut msg = [7u8; 16];
        end.send_all(&msg).unwrap();
        assert!(end.recv_exact(&mut msg).unwrap(), "no echo");
        drop(end);
        // The echo ends as the client closes: the pipe may be gone already.
        let _ = stop.write_all(&[1]);
        let report = h.join().unwrap();
        assert_eq!(report.error, None);
        assert_eq!(report.messages, 1);
        assert!(report.rejected >= 1, "{report:?}");
        // Not one byte came back on a stranger's connection.
        wrong
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        let mut got = Vec::new();
        let _ = wrong.read_to_end(&mut got);
        assert!(got.is_empty(), "{got:?}");
        for mut s in silent {
            s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
            let mut got = Vec::new();
            let _ = s.read_to_end(&mut got);
            assert!(got.is_empty(), "{got:?}");
        }
    }

    #[test]
    fn a_connection_from_another_address_gets_nothing_even_with_the_key() {
        // The control connection came from 127.0.0.2; this test connects
        // from 127.0.0.1.
        let (port, key, _stop, h) = serve_in_thread(
            &echo_task(Proto::Tcp),
            "127.0.0.2".parse().unwrap(),
            Duration::from_millis(500),
        );
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(&key.hello()).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        let _ = s.read_to_end(&mut got);
        assert!(got.is_empty(), "{got:?}");
        let report = h.join().unwrap();
        assert_eq!(report.rejected, 1, "{report:?}");
        let e = report.error.unwrap();
        assert!(e.contains("never opened the data connection (1 "), "{e}");
    }
}
