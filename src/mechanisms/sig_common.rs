//! Shared parts of the `kill` + `sigsuspend` mechanisms (`signal-sigsuspend`,
//! `signal-handler`): handlers that count, the race-free wait, the client end
//! and the thread-mode hang-up notice.
//!
//! SIGUSR1 goes to the server, SIGUSR2 to the client, each thread-directed
//! (tgkill) so that it reaches the right end even when both are threads of one
//! process. A handler only counts; a waiting end learns that its signal came by
//! seeing its counter advance when `sigsuspend` returns.

use crate::engine::channel::{ChannelError, PeerIdentity};
use crate::engine::interrupt;
use crate::sys::process;
use crate::sys::signal::{self as sig, SigSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Signal that carries a message towards the server.
pub const TO_SERVER: i32 = libc::SIGUSR1;
/// Signal that carries a message towards the client.
pub const TO_CLIENT: i32 = libc::SIGUSR2;

/// SIGUSR1 deliveries to this process (the server's handler, in either mode).
pub static TO_SERVER_COUNT: AtomicU64 = AtomicU64::new(0);
/// SIGUSR2 deliveries to this process.
pub static TO_CLIENT_COUNT: AtomicU64 = AtomicU64::new(0);

/// Handler that only counts a SIGUSR1.
pub extern "C" fn count_to_server(_: libc::c_int) {
    TO_SERVER_COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Handler that only counts a SIGUSR2.
pub extern "C" fn count_to_client(_: libc::c_int) {
    TO_CLIENT_COUNT.fetch_add(1, Ordering::SeqCst);
}

/// Installs `server_handler` for SIGUSR1 and the counting handler for SIGUSR2.
/// Called in `open`, before the fork, so both processes inherit them.
pub fn install_handlers(server_handler: sig::Handler) -> Result<(), ChannelError> {
    sig::install_handler(TO_SERVER, server_handler, 0)
        .map_err(ChannelError::io("sigaction SIGUSR1"))?;
    sig::install_handler(TO_CLIENT, count_to_client, 0)
        .map_err(ChannelError::io("sigaction SIGUSR2"))
}

/// Checks the size the engine asks for: these mechanisms carry no bytes.
pub fn expect_no_payload(size: usize) -> Result<(), ChannelError> {
    if size == 0 {
        Ok(())
    } else {
        Err(ChannelError::Setup(format!(
            "a signal carries no payload, but {size} bytes were asked for"
        )))
    }
}

/// Sends `sig` to the other end's thread.
#[inline]
pub fn signal_peer(peer: &PeerIdentity, signo: i32) -> Result<(), ChannelError> {
    process::tgkill(peer.pid, peer.tid, signo).map_err(|e| match e.raw_os_error() {
        Some(libc::ESRCH) => ChannelError::PeerDied,
        _ => ChannelError::Io {
            op: "tgkill",
            source: e,
        },
    })
}

/// The engine's own signals: held back outside `sigsuspend` too, so that one
/// arriving between the check of its flag and the sleep cannot be lost (the
/// same reasoning as for the awaited signal).
fn engine_signals() -> SigSet {
    let mut set = SigSet::of(&interrupt::signals_for_measuring_thread());
    set.add(interrupt::wake_signal());
    set
}

/// One end's wait for its signal, set up in `attach` in that end's thread.
///
/// Outside `sigsuspend` the thread blocks SIGUSR1, SIGUSR2 and the engine's
/// signals, so each can only be handled inside `sigsuspend`; there the mask is
/// the thread's mask from before `attach` (plus the other SIGUSR) minus the
/// awaited signal. The previous mask comes back when the wait is dropped.
pub struct SignalWait {
    counter: &'static AtomicU64,
    seen: u64,
    wait_mask: SigSet,
    previous: SigSet,
}

impl SignalWait {
    /// Blocks the signals in the calling thread, discards any left pending by an
    /// earlier channel, and starts counting from the current count.
    pub fn attach(awaited: i32, counter: &'static AtomicU64) -> Result<Self, ChannelError> {
        let mut hold = engine_signals();
        hold.add(TO_SERVER);
        hold.add(TO_CLIENT);
        let previous =
            sig::thread_mask(libc::SIG_BLOCK, &hold).map_err(ChannelError::io("sigprocmask"))?;
        let mut wait_mask = previous;
        wait_mask.add(TO_SERVER);
        wait_mask.add(TO_CLIENT);
        wait_mask.remove(awaited);
        // The wait restores `previous` on drop, also if draining fails.
        let mut wait = SignalWait {
            counter,
            seen: 0,
            wait_mask,
            previous,
        };
        let ours = SigSet::of(&[TO_SERVER, TO_CLIENT]);
        while sig::take_pending(&ours)
            .map_err(ChannelError::io("sigtimedwait"))?
            .is_some()
        {}
        wait.seen = counter.load(Ordering::SeqCst);
        Ok(wait)
    }

    /// Sleeps until the awaited signal has been handled once more. `closed` is
    /// the hang-up flag of a thread peer (see [`HangUp`]).
    #[inline]
    pub fn wait(&mut self, closed: &AtomicBool) -> Result<(), ChannelError> {
        loop {
            // An engine signal handled in the previous sigsuspend (together with
            // the awaited one) must not be slept through.
            interrupt::check()?;
            sig::suspend(&self.wait_mask);
            let now = self.counter.load(Ordering::SeqCst);
            if closed.load(Ordering::SeqCst) {
                return Err(ChannelError::Closed);
            }
            if now == self.seen {
                // Woken by the watchdog, SIGCHLD, a stop request or a wake-up.
                continue;
            }
            let expected = self.seen + 1;
            self.seen = now;
            if now != expected {
                return Err(ChannelError::Sequence { expected, got: now });
            }
            return Ok(());
        }
    }
}

impl Drop for SignalWait {
    fn drop(&mut self) {
        // Signals still pending (a late reply, a stop request) are handled here,
        // by the handlers that only count or set flags.
        let _ = sig::thread_mask(libc::SIG_SETMASK, &self.previous);
    }
}

/// Lets a server thread tell the client it is gone: with `--peer thread` a
/// dying server leaves no SIGCHLD and no end-of-file, so without this the
/// client would only learn it from the watchdog. A forked server is not
/// notified for (its death raises SIGCHLD, and its copy of the flag is not the
/// client's).
#[derive(Clone)]
pub struct HangUp {
    closed: Arc<AtomicBool>,
    thread_peer: bool,
}

impl HangUp {
    /// A notice that is only sent if the server is a thread.
    pub fn new(thread_peer: bool) -> Self {
        HangUp {
            closed: Arc::new(AtomicBool::new(false)),
            thread_peer,
        }
    }

    /// The flag the client checks after every wake-up.
    pub fn flag(&self) -> &AtomicBool {
        &self.closed
    }

    /// For a thread peer: sets the flag, then wakes the client with `signo`.
    pub fn notify(&self, client: &PeerIdentity, signo: i32) {
        if self.thread_peer {
            self.closed.store(true, Ordering::SeqCst);
            let _ = process::tgkill(client.pid, client.tid, signo);
        }
    }
}

/// The client end of both mechanisms: SIGUSR1 out, wait for SIGUSR2.
pub struct SignalClient {
    server: Option<PeerIdentity>,
    wait: Option<SignalWait>,
    hang_up: HangUp,
}

impl SignalClient {
    /// A client sharing `hang_up` with its server.
    pub fn new(hang_up: HangUp) -> Self {
        SignalClient {
            server: None,
            wait: None,
            hang_up,
        }
    }
}

fn not_attached() -> ChannelError {
    ChannelError::Setup("endpoint used before attach".into())
}

impl crate::engine::channel::Endpoint for SignalClient {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        self.wait = Some(SignalWait::attach(TO_CLIENT, &TO_CLIENT_COUNT)?);
        self.server = Some(peer);
        Ok(())
    }

    #[inline]
    fn send(&mut self, _msg: &[u8]) -> Result<(), ChannelError> {
        signal_peer(self.server.as_ref().ok_or_else(not_attached)?, TO_SERVER)
    }

    #[inline]
    fn recv(&mut self, _buf: &mut [u8]) -> Result<(), ChannelError> {
        let wait = self.wait.as_mut().ok_or_else(not_attached)?;
        wait.wait(self.hang_up.flag())
    }
}

/// What a server end needs in either mechanism: its wait, the client, and the
/// hang-up notice it sends when a thread peer ends.
pub struct ServerCore {
    /// The client, once attached.
    pub client: Option<PeerIdentity>,
    wait: Option<SignalWait>,
    hang_up: HangUp,
}

impl ServerCore {
    /// A server end sharing `hang_up` with its client.
    pub fn new(hang_up: HangUp) -> Self {
        ServerCore {
            client: None,
            wait: None,
            hang_up,
        }
    }

    /// Blocks the signals in the server's thread and records the client.
    pub fn attach(&mut self, client: PeerIdentity) -> Result<(), ChannelError> {
        self.wait = Some(SignalWait::attach(TO_SERVER, &TO_SERVER_COUNT)?);
        self.client = Some(client);
        Ok(())
    }

    /// Waits until the SIGUSR1 handler has run once more.
    #[inline]
    pub fn wait(&mut self) -> Result<(), ChannelError> {
        let wait = self.wait.as_mut().ok_or_else(not_attached)?;
        // The server is never told it is closed: the engine stops it.
        static NEVER: AtomicBool = AtomicBool::new(false);
        wait.wait(&NEVER)
    }

    /// Sends SIGUSR2 to the client.
    #[inline]
    pub fn reply(&self) -> Result<(), ChannelError> {
        signal_peer(self.client.as_ref().ok_or_else(not_attached)?, TO_CLIENT)
    }
}

impl Drop for ServerCore {
    fn drop(&mut self) {
        if let (Some(client), Some(_)) = (&self.client, &self.wait) {
            self.hang_up.notify(client, TO_CLIENT);
        }
    }
}
