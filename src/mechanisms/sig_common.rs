//! Shared parts of the `kill` + `sigsuspend` mechanisms (`signal-sigsuspend`,
//! `signal-handler`): handlers that count, the race-free wait and the client
//! end.
//!
//! SIGUSR1 goes to the server, SIGUSR2 to the client, each thread-directed
//! (tgkill) so that it reaches the right end even when both are threads of one
//! process. A handler only counts; a waiting end learns that its signal came by
//! seeing its counter advance when `sigsuspend` returns.

use crate::engine::channel::{ChannelError, PeerIdentity};
use crate::engine::os::interrupt;
use crate::sys::process;
use crate::sys::signal::{self as sig, SigSet};
use std::sync::atomic::{AtomicU64, Ordering};

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

    /// Sleeps until the awaited signal has been handled once more.
    #[inline]
    pub fn wait(&mut self) -> Result<(), ChannelError> {
        loop {
            // An engine signal handled in the previous sigsuspend (together with
            // the awaited one) must not be slept through.
            interrupt::check()?;
            sig::suspend(&self.wait_mask);
            let now = self.counter.load(Ordering::SeqCst);
            if now == self.seen {
                // Woken by the watchdog, SIGCHLD, a stop request or a wake-up
                // (e.g. a server thread that ended): `check` decides.
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

/// The client end of both mechanisms: SIGUSR1 out, wait for SIGUSR2.
#[derive(Default)]
pub struct SignalClient {
    server: Option<PeerIdentity>,
    wait: Option<SignalWait>,
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
        self.wait.as_mut().ok_or_else(not_attached)?.wait()
    }
}

/// What a server end needs in either mechanism: its wait and the client.
#[derive(Default)]
pub struct ServerCore {
    /// The client, once attached.
    pub client: Option<PeerIdentity>,
    wait: Option<SignalWait>,
}

impl ServerCore {
    /// Blocks the signals in the server's thread and records the client.
    pub fn attach(&mut self, client: PeerIdentity) -> Result<(), ChannelError> {
        self.wait = Some(SignalWait::attach(TO_SERVER, &TO_SERVER_COUNT)?);
        self.client = Some(client);
        Ok(())
    }

    /// Waits until the SIGUSR1 handler has run once more.
    #[inline]
    pub fn wait(&mut self) -> Result<(), ChannelError> {
        self.wait.as_mut().ok_or_else(not_attached)?.wait()
    }

    /// Sends SIGUSR2 to the client.
    #[inline]
    pub fn reply(&self) -> Result<(), ChannelError> {
        signal_peer(self.client.as_ref().ok_or_else(not_attached)?, TO_CLIENT)
    }
}
