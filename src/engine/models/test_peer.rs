//! For the timing models' unit tests: a channel between two ends of one
//! process (std channels), its server end served by a thread of the test
//! running a model's own server loop; no signal, no fork, no global state.

use crate::engine::channel::{ChannelError, Endpoint, expect_len, nothing_lent};
use crate::engine::os::peer::{Fault, faulty_end};
use std::sync::mpsc::{Receiver, Sender, channel};
use std::thread::JoinHandle;

/// One end: sends into one queue, receives from the other. A receive after
/// the other end is dropped reports [`ChannelError::Closed`], which is how a
/// served thread ends.
pub struct End {
    tx: Sender<Vec<u8>>,
    rx: Receiver<Vec<u8>>,
}

impl Endpoint for End {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.tx.send(msg.to_vec()).map_err(|_| ChannelError::Closed)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        let m = self.rx.recv().map_err(|_| ChannelError::Closed)?;
        expect_len(buf.len(), m.len())?;
        buf.copy_from_slice(&m);
        Ok(())
    }
}

/// An [`End`] that lends what it receives: the message it holds is lent
/// in place, sent back as it is now or dropped.
pub struct Lender {
    end: End,
    held: Option<Vec<u8>>,
}

impl Endpoint for Lender {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.end.send(msg)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        self.end.recv(buf)
    }

    fn lends(&self) -> bool {
        true
    }

    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        let m = self.end.rx.recv().map_err(|_| ChannelError::Closed)?;
        Ok(self.held.insert(m))
    }

    fn send_lent(&mut self) -> Result<(), ChannelError> {
        let m = self.held.take().ok_or_else(nothing_lent)?;
        self.end.tx.send(m).map_err(|_| ChannelError::Closed)
    }

    fn release(&mut self) -> Result<(), ChannelError> {
        self.held.take().map(drop).ok_or_else(nothing_lent)
    }
}

/// An end that only lends: a copying receive fails, as does a loan taken
/// while the last is still out; it counts the loans given back. For the
/// tests that a model reads a lending end in place.
pub struct LendOnly {
    /// The end the messages come from.
    pub end: End,
    held: Option<Vec<u8>>,
    /// Loans given back so far.
    pub released: std::sync::Arc<std::sync::atomic::AtomicU64>,
}

impl LendOnly {
    /// `end`, lending only.
    pub fn new(end: End) -> Self {
        LendOnly {
            end,
            held: None,
            released: Default::default(),
        }
    }
}

impl Endpoint for LendOnly {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        self.end.send(msg)
    }

    fn recv(&mut self, _: &mut [u8]) -> Result<(), ChannelError> {
        Err(ChannelError::Setup("copied from an end that lends".into()))
    }

    fn lends(&self) -> bool {
        true
    }

    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        if self.held.is_some() {
            return Err(ChannelError::Setup(
                "lent again before it was given back".into(),
            ));
        }
        let m = self.end.rx.recv().map_err(|_| ChannelError::Closed)?;
        Ok(self.held.insert(m))
    }

    fn release(&mut self) -> Result<(), ChannelError> {
        self.held.take().ok_or_else(nothing_lent)?;
        self.released
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// A client end and a server end joined to each other.
pub fn pair() -> (End, End) {
    let (to_server, from_client) = channel();
    let (to_client, from_server) = channel();
    (
        End {
            tx: to_server,
            rx: from_server,
        },
        End {
            tx: to_client,
            rx: from_client,
        },
    )
}

/// A served channel for `size`-byte messages, its ends broken by `fault`
/// as a run's `--fault` breaks them; `serve` runs the server end in a thread
/// until the client end is dropped (or returns an error).
pub fn served(
    size: usize,
    fault: Option<Fault>,
    serve: impl FnOnce(&mut dyn Endpoint) -> Result<(), ChannelError> + Send + 'static,
) -> (Box<dyn Endpoint>, JoinHandle<Result<(), ChannelError>>) {
    served_by(false, size, fault, serve)
}

/// [`served`], its ends [`Lender`]s where `lending`.
pub fn served_by(
    lending: bool,
    size: usize,
    fault: Option<Fault>,
    serve: impl FnOnce(&mut dyn Endpoint) -> Result<(), ChannelError> + Send + 'static,
) -> (Box<dyn Endpoint>, JoinHandle<Result<(), ChannelError>>) {
    let (client, server) = pair();
    let (mut client, mut server): (Box<dyn Endpoint>, Box<dyn Endpoint>) = if lending {
        let lender = |end| Lender { end, held: None };
        (Box::new(lender(client)), Box::new(lender(server)))
    } else {
        (Box::new(client), Box::new(server))
    };
    if let Some(f) = fault {
        client = faulty_end(f, client, size);
        if f.breaks_server() {
            server = faulty_end(f, server, size);
        }
    }
    let thread = std::thread::spawn(move || serve(server.as_mut()));
    (client, thread)
}

/// The faults a channel must not get a figure through, with their names.
pub const BROKEN: [(&str, Fault); 3] = [
    ("a loopback", Fault::Loopback),
    ("a receive that writes nothing", Fault::Silent),
    ("one buffer for both directions", Fault::SharedBuffer),
];

/// An end wired to itself: it receives what it sent (a self-loop).
pub fn self_loop() -> End {
    let (tx, rx) = channel();
    End { tx, rx }
}
