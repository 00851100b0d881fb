//! A D-Bus connection as the `dbus` and `dbus-p2p` mechanisms use it: the
//! messages encoded and decoded by zbus's wire format (`zbus::wire`), the
//! authentication (SASL `EXTERNAL`) and the framing done here, on a blocking
//! Unix socket.
//!
//! Why not zbus's `Connection`: it runs on an async runtime that keeps a
//! helper thread for a connection's reader task while no call is inside
//! `block_on` (zbus 6 has no blocking API), and the engine forks a peer for
//! every figure from the measuring process, which must then hold no thread
//! (a child of a threaded process inherits the runtime's locks and reactor
//! without the thread that owns them). Its waits would also retry `EINTR`
//! inside the runtime, where the engine's stop, watchdog and dead-peer
//! signals could not end them. So a wait here is a blocking `read` through
//! [`retry`], as every other mechanism's is; what a message is on the wire
//! (header fields, signature, `ay` body, padding) is zbus's.

use crate::engine::channel::{ChannelError, read_full, retry};
use std::io::Read;
use std::os::unix::net::UnixStream;
use zbus::wire::serialized::{Context, Data};
use zbus::wire::{Endian, ObjectPath, Signature, Str, Variant, to_bytes, to_bytes_for_signature};

/// The object the echo service is reached at, its interface and method.
pub const PATH: &str = "/org/ipcmark/Echo";
/// See [`PATH`].
pub const INTERFACE: &str = "org.ipcmark.Echo";
/// See [`PATH`].
pub const MEMBER: &str = "Echo";

const METHOD_CALL: u8 = 1;
const METHOD_RETURN: u8 = 2;
const ERROR: u8 = 3;

// Header field codes (D-Bus specification, "Header Fields").
const F_PATH: u8 = 1;
const F_INTERFACE: u8 = 2;
const F_MEMBER: u8 = 3;
const F_ERROR_NAME: u8 = 4;
const F_REPLY_SERIAL: u8 = 5;
const F_DESTINATION: u8 = 6;
const F_SENDER: u8 = 7;
const F_SIGNATURE: u8 = 8;

/// The largest message the specification allows (128 MiB).
const MAX_MESSAGE: usize = 128 << 20;

type Header<'a> = (u8, u8, u8, u8, u32, u32, Vec<(u8, Variant<'a>)>);

/// One message received, as much of it as the mechanisms look at.
#[derive(Debug, Default)]
pub struct Received {
    /// Method call, return, error or signal.
    pub kind: u8,
    /// Its serial.
    pub serial: u32,
    /// For a return or an error: the serial of the call it answers.
    pub reply_serial: Option<u32>,
    /// Who sent it (set by a bus; absent peer to peer).
    pub sender: Option<String>,
    /// For a call: the method's name.
    pub member: Option<String>,
    /// For a call: the object path.
    pub path: Option<String>,
    /// For an error: its name.
    pub error_name: Option<String>,
    /// The body's signature ("" when none).
    pub signature: String,
    /// The whole message as read; the body starts at `body_at`.
    bytes: Vec<u8>,
    body_at: usize,
    endian: u8,
}

impl Received {
    /// The body as a byte array (`ay`), copied into `buf`, which must be its
    /// exact length.
    pub fn body_into(&self, buf: &mut [u8]) -> Result<(), ChannelError> {
        if self.signature != "ay" {
            return Err(ChannelError::Check(format!(
                "a D-Bus message with body signature {:?}, not \"ay\"",
                self.signature
            )));
        }
        let body = &self.bytes[self.body_at..];
        let data = Data::new(body, Context::new(endian_of(self.endian)?, 0));
        let (array, _): (&[u8], usize) = data
            .deserialize_for_signature("ay")
            .map_err(|e| ChannelError::Check(format!("a D-Bus body that does not decode: {e}")))?;
        if array.len() != buf.len() {
            return Err(ChannelError::Length {
                expected: buf.len(),
                got: array.len(),
            });
        }
        buf.copy_from_slice(array);
        Ok(())
    }
}

fn endian_of(b: u8) -> Result<Endian, ChannelError> {
    match b {
        b'l' => Ok(Endian::Little),
        b'B' => Ok(Endian::Big),
        other => Err(ChannelError::Check(format!(
            "a D-Bus message of byte order {other:#04x}"
        ))),
    }
}

fn wire(e: zbus::Error) -> ChannelError {
    ChannelError::Check(format!("D-Bus encoding: {e}"))
}

/// A message to send: a method call or the return of one.
pub struct Outgoing<'a> {
    /// [`METHOD_CALL`] or [`METHOD_RETURN`].
    kind: u8,
    /// For a call: where to (a bus name; none peer to peer).
    pub destination: Option<&'a str>,
    /// For a return: the call it answers.
    pub reply_serial: Option<u32>,
}

impl<'a> Outgoing<'a> {
    /// A call of the echo method, to `destination` on a bus.
    pub fn call(destination: Option<&'a str>) -> Self {
        Outgoing {
            kind: METHOD_CALL,
            destination,
            reply_serial: None,
        }
    }

    /// The return of call `serial`, to `destination` (its sender) on a bus.
    pub fn reply(serial: u32, destination: Option<&'a str>) -> Self {
        Outgoing {
            kind: METHOD_RETURN,
            destination,
            reply_serial: Some(serial),
        }
    }
}

/// A byte array that serde hands over whole (`serialize_bytes`), which
/// zbus writes as one copy; a plain `&[u8]` is a sequence, encoded byte by
/// byte (about 10 ns a byte here), which no D-Bus library pays for `ay`.
struct ByteArray<'a>(&'a [u8]);

impl serde::Serialize for ByteArray<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

/// Encodes one message with a byte-array body (`ay`); zbus encodes the
/// header and the body.
pub fn encode(
    out: &Outgoing<'_>,
    serial: u32,
    body: &[u8],
    into: &mut Vec<u8>,
) -> Result<(), ChannelError> {
    let ctxt = Context::new(Endian::Little, 0);
    let body_bytes = to_bytes_for_signature(ctxt, "ay", &ByteArray(body)).map_err(wire)?;
    let mut fields: Vec<(u8, Variant<'_>)> = Vec::with_capacity(6);
    if out.kind == METHOD_CALL {
        fields.push((
            F_PATH,
            Variant::ObjectPath(ObjectPath::from_static_str_unchecked(PATH)),
        ));
        fields.push((F_INTERFACE, Variant::Str(Str::from_static(INTERFACE))));
        fields.push((F_MEMBER, Variant::Str(Str::from_static(MEMBER))));
    }
    if let Some(r) = out.reply_serial {
        fields.push((F_REPLY_SERIAL, Variant::U32(r)));
    }
    if let Some(d) = out.destination {
        fields.push((F_DESTINATION, Variant::Str(Str::from(d))));
    }
    fields.push((F_SIGNATURE, Variant::Signature(signature_ay())));
    let header: Header<'_> = (
        b'l',
        out.kind,
        0,
        1,
        body_bytes.len() as u32,
        serial,
        fields,
    );
    let head = to_bytes(ctxt, &header).map_err(wire)?;
    into.clear();
    into.extend_from_slice(&head);
    into.resize(head.len().next_multiple_of(8), 0);
    into.extend_from_slice(&body_bytes);
    Ok(())
}

fn signature_ay() -> Signature {
    Signature::try_from("ay").expect("\"ay\" is a signature")
}

/// A connection: the socket, the next serial and a buffer to encode into.
pub struct Conn {
    sock: UnixStream,
    serial: u32,
    out: Vec<u8>,
}

/// The errors a bus sends for a call whose destination is gone.
const PEER_GONE: [&str; 3] = [
    "org.freedesktop.DBus.Error.NoReply",
    "org.freedesktop.DBus.Error.ServiceUnknown",
    "org.freedesktop.DBus.Error.NameHasNoOwner",
];

/// This process's effective uid as `AUTH EXTERNAL` carries it: its
/// decimal digits, each as two hex digits.
fn uid_hex() -> String {
    crate::sys::process::geteuid()
        .to_string()
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect()
}

impl Conn {
    /// The pid of the process at the socket's other end (`SO_PEERCRED`),
    /// if the kernel says.
    pub fn peer_pid(&self) -> Option<libc::pid_t> {
        use std::os::fd::AsFd;
        crate::sys::socket::peer_pid(self.sock.as_fd())
            .ok()
            .flatten()
    }

    /// Authenticates as a client (`AUTH EXTERNAL` with this process's uid)
    /// on `sock`, a bus's or a peer's socket; returns the server's GUID.
    pub fn client(mut sock: UnixStream) -> Result<(Conn, String), ChannelError> {
        let hex = uid_hex();
        write_line(&mut sock, &format!("\0AUTH EXTERNAL {hex}\r\n"))?;
        let answer = read_line(&mut sock)?;
        let guid = answer
            .strip_prefix("OK ")
            .ok_or_else(|| ChannelError::Check(format!("D-Bus authentication refused: {answer}")))?
            .trim()
            .to_string();
        write_line(&mut sock, "BEGIN\r\n")?;
        Ok((
            Conn {
                sock,
                serial: 0,
                out: Vec::new(),
            },
            guid,
        ))
    }

    /// Authenticates a client as the server of a peer-to-peer connection
    /// with `guid` (32 hex digits): it must claim this process's uid.
    pub fn server(mut sock: UnixStream, guid: &str) -> Result<Conn, ChannelError> {
        let mut first = [0u8; 1];
        read_full(&mut sock, &mut first)?;
        if first[0] != 0 {
            return Err(ChannelError::Check(
                "a D-Bus client that did not start with a nul byte".into(),
            ));
        }
        let hex = uid_hex();
        loop {
            let line = read_line(&mut sock)?;
            match line.split_once(' ').unwrap_or((line.as_str(), "")) {
                ("AUTH", rest) if rest == format!("EXTERNAL {hex}") => {
                    write_line(&mut sock, &format!("OK {guid}\r\n"))?
                }
                ("NEGOTIATE_UNIX_FD", _) => write_line(&mut sock, "ERROR\r\n")?,
                ("BEGIN", _) => break,
                _ => write_line(&mut sock, "REJECTED EXTERNAL\r\n")?,
            }
        }
        Ok(Conn {
            sock,
            serial: 0,
            out: Vec::new(),
        })
    }

    /// Sends one message with `body` as its `ay`; returns its serial.
    pub fn send(&mut self, out: &Outgoing<'_>, body: &[u8]) -> Result<u32, ChannelError> {
        self.serial = self.serial.wrapping_add(1).max(1);
        let mut buf = std::mem::take(&mut self.out);
        let sent = encode(out, self.serial, body, &mut buf)
            .and_then(|()| crate::engine::channel::write_full(&mut self.sock, &buf));
        self.out = buf;
        sent.map(|()| self.serial)
    }

    /// Calls `org.freedesktop.DBus.Hello` on a bus: the connection's unique name.
    pub fn hello(&mut self) -> Result<String, ChannelError> {
        self.serial += 1;
        let fields: Vec<(u8, Variant<'_>)> = vec![
            (
                F_PATH,
                Variant::ObjectPath(ObjectPath::from_static_str_unchecked(
                    "/org/freedesktop/DBus",
                )),
            ),
            (
                F_INTERFACE,
                Variant::Str(Str::from_static("org.freedesktop.DBus")),
            ),
            (F_MEMBER, Variant::Str(Str::from_static("Hello"))),
            (
                F_DESTINATION,
                Variant::Str(Str::from_static("org.freedesktop.DBus")),
            ),
        ];
        let header: Header<'_> = (b'l', METHOD_CALL, 0, 1, 0, self.serial, fields);
        let head = to_bytes(Context::new(Endian::Little, 0), &header).map_err(wire)?;
        let mut bytes = head.to_vec();
        bytes.resize(bytes.len().next_multiple_of(8), 0);
        crate::engine::channel::write_full(&mut self.sock, &bytes)?;
        let serial = self.serial;
        loop {
            let m = self.recv()?;
            if m.reply_serial != Some(serial) {
                continue;
            }
            if m.kind != METHOD_RETURN || m.signature != "s" {
                return Err(ChannelError::Check(format!(
                    "the bus refused Hello: {}",
                    m.error_name.as_deref().unwrap_or("no name")
                )));
            }
            let data = Data::new(&m.bytes[m.body_at..], Context::new(endian_of(m.endian)?, 0));
            let (name, _): (String, usize) = data.deserialize().map_err(wire)?;
            return Ok(name);
        }
    }

    /// Receives the next message, whatever it is.
    pub fn recv(&mut self) -> Result<Received, ChannelError> {
        let mut fixed = [0u8; 16];
        read_full(&mut self.sock, &mut fixed)?;
        let endian = endian_of(fixed[0])?;
        let u32_at = |at: usize| {
            let b = [fixed[at], fixed[at + 1], fixed[at + 2], fixed[at + 3]];
            match endian {
                Endian::Little => u32::from_le_bytes(b),
                Endian::Big => u32::from_be_bytes(b),
            }
        };
        let body_len = u32_at(4) as usize;
        let fields_len = u32_at(12) as usize;
        let body_at = (16 + fields_len).next_multiple_of(8);
        let total = body_at.saturating_add(body_len);
        if total > MAX_MESSAGE {
            return Err(ChannelError::Check(format!(
                "a D-Bus message of {total} bytes, beyond the specification's 128 MiB"
            )));
        }
        let mut bytes = vec![0u8; total];
        bytes[..16].copy_from_slice(&fixed);
        read_full(&mut self.sock, &mut bytes[16..])?;
        let mut m = Received {
            kind: fixed[1],
            serial: u32_at(8),
            body_at,
            endian: fixed[0],
            ..Received::default()
        };
        {
            let data = Data::new(&bytes[..16 + fields_len], Context::new(endian, 0));
            let (header, _): (Header<'_>, usize) = data.deserialize().map_err(wire)?;
            for (code, value) in header.6 {
                match (code, value) {
                    (F_REPLY_SERIAL, Variant::U32(s)) => m.reply_serial = Some(s),
                    (F_SENDER, Variant::Str(s)) => m.sender = Some(s.to_string()),
                    (F_MEMBER, Variant::Str(s)) => m.member = Some(s.to_string()),
                    (F_ERROR_NAME, Variant::Str(s)) => m.error_name = Some(s.to_string()),
                    (F_PATH, Variant::ObjectPath(p)) => m.path = Some(p.to_string()),
                    (F_SIGNATURE, Variant::Signature(s)) => m.signature = s.to_string(),
                    _ => {}
                }
            }
        }
        m.bytes = bytes;
        Ok(m)
    }

    /// Receives until the return of call `serial` (a bus's signals to this
    /// connection, such as `NameAcquired`, are passed over).
    pub fn recv_reply(&mut self, serial: u32) -> Result<Received, ChannelError> {
        loop {
            let m = self.recv()?;
            if m.reply_serial != Some(serial) || !matches!(m.kind, METHOD_RETURN | ERROR) {
                continue;
            }
            if m.kind == ERROR {
                let name = m.error_name.as_deref().unwrap_or("an error without a name");
                // The bus answers for a peer that is gone: NoReply when its
                // connection dropped with the call pending (dbus-daemon sets
                // no reply timeout by default, and the engine's deadline ends
                // a slow peer first), ServiceUnknown / NameHasNoOwner when it
                // had already left. That is the peer closing its end.
                if PEER_GONE.contains(&name) {
                    return Err(ChannelError::Closed);
                }
                return Err(ChannelError::Check(format!("the Echo call failed: {name}")));
            }
            return Ok(m);
        }
    }

    /// Receives until a call of the echo method (passing over signals).
    pub fn recv_call(&mut self) -> Result<Received, ChannelError> {
        loop {
            let m = self.recv()?;
            if m.kind != METHOD_CALL {
                continue;
            }
            if m.member.as_deref() != Some(MEMBER) || m.path.as_deref() != Some(PATH) {
                return Err(ChannelError::Check(format!(
                    "a call of {:?} at {:?}, not {MEMBER} at {PATH}",
                    m.member, m.path
                )));
            }
            return Ok(m);
        }
    }
}

fn write_line(sock: &mut UnixStream, line: &str) -> Result<(), ChannelError> {
    crate::engine::channel::write_full(sock, line.as_bytes())
}

/// Reads one line of the authentication exchange, byte by byte (nothing
/// after its `\r\n` may be taken from the socket: the messages follow).
fn read_line(sock: &mut UnixStream) -> Result<String, ChannelError> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        if line.len() > 4096 {
            return Err(ChannelError::Check(
                "a D-Bus authentication line beyond 4 KiB".into(),
            ));
        }
        let n = retry("read", || sock.read(&mut byte))?;
        if n == 0 {
            return Err(ChannelError::Closed);
        }
        line.push(byte[0]);
    }
    line.truncate(line.len() - 2);
    String::from_utf8(line)
        .map_err(|_| ChannelError::Check("a D-Bus authentication line not in UTF-8".into()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The whole-array encoding is byte for byte the sequence encoding
    /// zbus gives a `&[u8]`, and decodes back to the payload.
    #[test]
    fn a_byte_array_encodes_as_zbus_encodes_ay() {
        let payload: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let ctxt = Context::new(Endian::Little, 0);
        let whole = to_bytes_for_signature(ctxt, "ay", &ByteArray(&payload)).unwrap();
        let seq = to_bytes(ctxt, payload.as_slice()).unwrap();
        assert_eq!(whole.bytes(), seq.bytes());
        let mut msg = Vec::new();
        encode(&Outgoing::call(Some(":1.7")), 3, &payload, &mut msg).unwrap();
        let (a, b) = UnixStream::pair().unwrap();
        let mut conn = Conn {
            sock: b,
            serial: 0,
            out: Vec::new(),
        };
        crate::engine::channel::write_full(&mut &a, &msg).unwrap();
        let m = conn.recv_call().unwrap();
        assert_eq!((m.serial, m.signature.as_str()), (3, "ay"));
        let mut back = vec![0u8; payload.len()];
        m.body_into(&mut back).unwrap();
        assert_eq!(back, payload);
    }
}
