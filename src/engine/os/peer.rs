//! The echo server: started as a forked process (default) or a thread, placed,
//! handed its end of the channel, and stopped.

use crate::engine::channel::{ChannelError, Endpoint, PeerIdentity};
use crate::engine::os::interrupt;
use crate::engine::os::placement::SidePlacement;
use crate::sys::mem::SharedMapping;
use crate::sys::process::{self, ExitStatus, Fork};
use crate::sys::{sched, signal};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How the server end runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PeerKind {
    /// A child created by fork after the channel is set up.
    Process,
    /// A thread of the measuring process.
    Thread,
}

/// Faults a channel can be told to have, so that tests can prove the engine
/// catches them. Never used by a normal run. The server applies the first
/// three ([`inject`]); the last three break the ends themselves
/// ([`faulty_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Flip the last byte of every echoed message.
    Corrupt,
    /// Exit after this many messages.
    Die(u64),
    /// Stop answering (but stay alive) after this many messages.
    Hang(u64),
    /// Every receive, on either end, takes the message into a buffer of its
    /// own and writes nothing into the engine's.
    Silent,
    /// The client's end is wired back to itself (swapped descriptors): its
    /// receive returns the message it last sent, and the peer gets nothing.
    Loopback,
    /// The client's two directions share one buffer, and its receive reads
    /// it before the reply lands there: it returns the message it last sent,
    /// though the peer received and answered it.
    SharedBuffer,
}

impl Fault {
    /// Whether the client's end is wrapped ([`faulty_end`]).
    pub fn breaks_client(self) -> bool {
        matches!(self, Fault::Silent | Fault::Loopback | Fault::SharedBuffer)
    }

    /// Whether the server's end is wrapped ([`faulty_end`]).
    pub fn breaks_server(self) -> bool {
        self == Fault::Silent
    }
}

/// An end with one of the faults [`Fault::Silent`], [`Fault::Loopback`] or
/// [`Fault::SharedBuffer`] (for `size`-byte messages); any other fault
/// leaves it as it is.
pub fn faulty_end(fault: Fault, inner: Box<dyn Endpoint>, size: usize) -> Box<dyn Endpoint> {
    if !fault.breaks_client() {
        return inner;
    }
    Box::new(FaultyEnd {
        inner,
        fault,
        own: vec![0u8; size],
        before: vec![0u8; size],
    })
}

/// See [`faulty_end`]. `own` is the end's own buffer: where a silent
/// receive puts the message, or the one buffer of a loopback or of both
/// directions. An end that lends breaks the same way in lent terms: a
/// silent one lends `own`, which no message reaches; a loopback lends the
/// message it last sent; a shared buffer lends that too (`before`) and
/// takes the reply into `own`.
struct FaultyEnd {
    inner: Box<dyn Endpoint>,
    fault: Fault,
    own: Vec<u8>,
    before: Vec<u8>,
}

impl Endpoint for FaultyEnd {
    fn attach(&mut self, peer: PeerIdentity) -> Result<(), ChannelError> {
        self.inner.attach(peer)
    }

    fn relay(&self) -> Option<crate::engine::channel::Relay> {
        self.inner.relay()
    }

    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        match self.fault {
            Fault::Loopback => {
                self.own.copy_from_slice(msg);
                Ok(())
            }
            Fault::SharedBuffer => {
                self.own.copy_from_slice(msg);
                self.inner.send(&self.own)
            }
            _ => self.inner.send(msg),
        }
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        match self.fault {
            Fault::Loopback => {
                buf.copy_from_slice(&self.own);
                Ok(())
            }
            Fault::SharedBuffer => {
                buf.copy_from_slice(&self.own);
                self.inner.recv(&mut self.own)
            }
            Fault::Silent => self.inner.recv(&mut self.own),
            _ => self.inner.recv(buf),
        }
    }

    fn lends(&self) -> bool {
        self.inner.lends()
    }

    fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
        match self.fault {
            Fault::Loopback => Ok(&mut self.own),
            Fault::SharedBuffer => {
                self.before.copy_from_slice(&self.own);
                let reply = self.inner.lend()?;
                self.own.copy_from_slice(reply);
                self.inner.release()?;
                Ok(&mut self.before)
            }
            Fault::Silent => {
                self.inner.lend()?;
                self.inner.release()?;
                Ok(&mut self.own)
            }
            _ => self.inner.lend(),
        }
    }

    fn send_lent(&mut self) -> Result<(), ChannelError> {
        match self.fault {
            Fault::Loopback => Ok(()),
            Fault::SharedBuffer => self.inner.send(&self.own),
            Fault::Silent => self.inner.send(&self.own),
            _ => self.inner.send_lent(),
        }
    }

    fn release(&mut self) -> Result<(), ChannelError> {
        match self.fault {
            Fault::Loopback | Fault::SharedBuffer | Fault::Silent => Ok(()),
            _ => self.inner.release(),
        }
    }
}

const ERROR_CAP: usize = 448;
const OFF_READY: usize = 0;
const OFF_TID: usize = 4;
const OFF_CPU: usize = 8;
const OFF_ERROR_LEN: usize = 12;
const OFF_ERROR: usize = 64;
/// Where a role's own exchange with the measuring side lives (the stream
/// sink's board); the rest of the page.
const OFF_BOARD: usize = 1024;
const BOARD_LEN: usize = 3072;

const READY_PENDING: u32 = 0;
const READY_OK: u32 = 1;
const READY_FAILED: u32 = 2;

/// Shared page through which the server reports readiness, its tid, its CPU
/// and the error that ended it; shared by fork or by the thread alike.
#[derive(Clone)]
struct ControlPage(Arc<SharedMapping>);

impl ControlPage {
    fn new() -> std::io::Result<Self> {
        Ok(ControlPage(Arc::new(SharedMapping::new(
            OFF_BOARD + BOARD_LEN,
        )?)))
    }

    fn ready(&self) -> &AtomicU32 {
        self.0.atomic_u32(OFF_READY)
    }

    fn set_error(&self, msg: &str) {
        let n = msg.len().min(ERROR_CAP);
        self.0.write_bytes(OFF_ERROR, &msg.as_bytes()[..n]);
        self.0
            .atomic_u32(OFF_ERROR_LEN)
            .store(n as u32, Ordering::Release);
    }

    fn board(&self) -> BoardArea<'_> {
        BoardArea {
            map: &self.0,
            offset: OFF_BOARD,
            len: BOARD_LEN,
        }
    }

    fn error(&self) -> Option<String> {
        let n = self.0.atomic_u32(OFF_ERROR_LEN).load(Ordering::Acquire) as usize;
        (n > 0).then(|| {
            let mut buf = vec![0u8; n.min(ERROR_CAP)];
            self.0.read_bytes(OFF_ERROR, &mut buf);
            String::from_utf8_lossy(&buf).into_owned()
        })
    }
}

/// A running server.
pub struct Peer {
    kind: PeerKind,
    pid: libc::pid_t,
    tid: libc::pid_t,
    thread: Option<(JoinHandle<()>, libc::pthread_t)>,
    ctl: ControlPage,
    /// CPU the server reported running on once placed.
    pub server_cpu: Option<usize>,
    reaped: bool,
}

/// What a peer does with its end of the channel once it is placed, attached
/// and ready: a timing model's server loop (the echo of ping-pong, the
/// one-way receiver, the stream sink), handed over by that model so that the
/// peer never needs to know one. It runs in the forked child or the thread
/// and returns when told to stop ([`ChannelError::Stopped`]) or on failure.
#[derive(Clone)]
pub struct PeerRole {
    name: &'static str,
    serve: Arc<ServeFn>,
}

/// The server loop a [`PeerRole`] runs.
pub type ServeFn = dyn Fn(&mut dyn Endpoint, &Serving) -> Result<(), ChannelError> + Send + Sync;

impl PeerRole {
    /// A role called `name` (in debug output) that runs `serve`.
    pub fn new(
        name: &'static str,
        serve: impl Fn(&mut dyn Endpoint, &Serving) -> Result<(), ChannelError> + Send + Sync + 'static,
    ) -> PeerRole {
        PeerRole {
            name,
            serve: Arc::new(serve),
        }
    }
}

impl std::fmt::Debug for PeerRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

/// What a role's server loop is given beside its end of the channel.
pub struct Serving<'a> {
    /// Message size (the server's buffer).
    pub size: usize,
    /// Walk a region this large instead of one buffer (`--cold`).
    pub cold_region: Option<usize>,
    /// Test-only fault to inject ([`inject`]).
    pub fault: Option<Fault>,
    /// The part of the control page where a role and the measuring side
    /// exchange what the role counted (see [`Peer::board`]).
    pub board: BoardArea<'a>,
}

/// A part of a shared page, both sides see it: the peer's control page
/// lends it to a role for its own exchange with the measuring side.
#[derive(Clone, Copy)]
pub struct BoardArea<'a> {
    /// The shared mapping.
    pub map: &'a SharedMapping,
    /// Where the area starts.
    pub offset: usize,
    /// Its length in bytes.
    pub len: usize,
}

/// What to start.
#[derive(Debug, Clone)]
pub struct PeerSpec {
    /// Process or thread.
    pub kind: PeerKind,
    /// Where the server runs.
    pub placement: SidePlacement,
    /// Message size (the server's buffer).
    pub size: usize,
    /// The measuring side, for the server's `attach`.
    pub client: PeerIdentity,
    /// How long to wait for the server to become ready.
    pub timeout: Duration,
    /// Test-only fault.
    pub fault: Option<Fault>,
    /// Walk a region this large instead of one buffer (`--cold`).
    pub cold_region: Option<usize>,
    /// What the peer does: the timing model's server loop.
    pub role: PeerRole,
}

impl Peer {
    /// Starts the server with its end of the channel and waits until it is ready.
    pub fn spawn(server: Box<dyn Endpoint>, spec: &PeerSpec) -> Result<Peer, ChannelError> {
        let ctl = ControlPage::new().map_err(ChannelError::io("mmap control page"))?;
        let mut peer = match spec.kind {
            PeerKind::Process => spawn_process(server, spec, ctl)?,
            PeerKind::Thread => spawn_thread(server, spec, ctl)?,
        };
        peer.wait_ready(spec.timeout)?;
        Ok(peer)
    }

    /// Identity of the server, for the client's `attach`.
    pub fn identity(&self) -> PeerIdentity {
        PeerIdentity {
            pid: self.pid,
            tid: self.tid,
        }
    }

    fn wait_ready(&mut self, timeout: Duration) -> Result<(), ChannelError> {
        let start = Instant::now();
        loop {
            match self.ctl.ready().load(Ordering::Acquire) {
                READY_OK => {
                    self.tid =
                        self.ctl.0.atomic_u32(OFF_TID).load(Ordering::Relaxed) as libc::pid_t;
                    let cpu = self.ctl.0.atomic_u32(OFF_CPU).load(Ordering::Relaxed) as i32;
                    self.server_cpu = (cpu >= 0).then_some(cpu as usize);
                    return Ok(());
                }
                READY_FAILED => {
                    return Err(ChannelError::Setup(format!(
                        "peer failed to start: {}",
                        self.ctl.error().unwrap_or_default()
                    )));
                }
                READY_PENDING => {}
                _ => unreachable!("control page holds only known states"),
            }
            interrupt::check()?;
            if start.elapsed() > timeout {
                return Err(ChannelError::Timeout);
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// The part of the control page a role reports on (the stream sink's
    /// counts); the role sees the same area as [`Serving::board`].
    pub fn board(&self) -> BoardArea<'_> {
        self.ctl.board()
    }

    /// The error the server recorded before it ended, if any.
    pub fn reported_error(&self) -> Option<String> {
        self.ctl.error()
    }

    /// Stops the server and reaps it; returns a process peer's exit status.
    pub fn stop(mut self) -> Option<ExitStatus> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Option<ExitStatus> {
        if self.reaped {
            return None;
        }
        self.reaped = true;
        match self.kind {
            PeerKind::Process => {
                let _ = process::kill(self.pid, libc::SIGKILL);
                // SIGKILL cannot be ignored; the deadline only guards against a
                // child stuck in uninterruptible sleep.
                let deadline = Instant::now() + Duration::from_secs(5);
                loop {
                    match process::try_wait(self.pid) {
                        Ok(Some(status)) => return Some(status),
                        Ok(None) if Instant::now() < deadline => {
                            std::thread::sleep(Duration::from_micros(100))
                        }
                        _ => return None,
                    }
                }
            }
            PeerKind::Thread => {
                interrupt::request_peer_stop();
                if let Some((handle, pthread)) = self.thread.take() {
                    let deadline = Instant::now() + Duration::from_secs(5);
                    while !handle.is_finished() && Instant::now() < deadline {
                        let _ = signal::pthread_kill(pthread, interrupt::wake_signal());
                        std::thread::sleep(Duration::from_micros(200));
                    }
                    if handle.is_finished() {
                        let _ = handle.join();
                    }
                    // A thread that ignores every wake-up for 5 s is left detached:
                    // nothing else can end a thread, and the run must go on.
                }
                None
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.stop_inner();
    }
}

fn spawn_process(
    server: Box<dyn Endpoint>,
    spec: &PeerSpec,
    ctl: ControlPage,
) -> Result<Peer, ChannelError> {
    let parent = process::getpid();
    match process::fork().map_err(ChannelError::io("fork"))? {
        Fork::Child => {
            // From here on only this code runs in the child; it never returns,
            // so the child never releases the parent's objects.
            let _ = process::set_parent_death_signal(libc::SIGKILL);
            if process::getppid() != parent {
                process::exit_now(1);
            }
            let code = run_server(server, spec, &ctl);
            process::exit_now(code)
        }
        Fork::Parent(pid) => {
            // The parent's copy of the server end (its descriptors) closes here,
            // so the client sees end-of-file if the child dies.
            drop(server);
            Ok(Peer {
                kind: PeerKind::Process,
                pid,
                tid: pid,
                thread: None,
                ctl,
                server_cpu: None,
                reaped: false,
            })
        }
    }
}

fn spawn_thread(
    server: Box<dyn Endpoint>,
    spec: &PeerSpec,
    ctl: ControlPage,
) -> Result<Peer, ChannelError> {
    let spec = spec.clone();
    let thread_ctl = ctl.clone();
    let measuring_thread = signal::pthread_self();
    let (tx, rx) = std::sync::mpsc::channel();
    let handle = std::thread::Builder::new()
        .name("ipcmark-server".into())
        .spawn(move || {
            // Stop, watchdog and child signals must reach the measuring thread.
            let _ = signal::block(&interrupt::signals_for_measuring_thread());
            let _ = tx.send(signal::pthread_self());
            run_server(server, &spec, &thread_ctl);
            // Ended on its own (error, fault): unlike a child there is no
            // SIGCHLD, so say so and wake the measuring thread's wait. Its end
            // of the channel is already dropped.
            if !interrupt::peer_stop_requested() {
                interrupt::peer_gone();
                let _ = signal::pthread_kill(measuring_thread, interrupt::wake_signal());
            }
        })
        .map_err(ChannelError::io("spawn server thread"))?;
    let pthread = rx
        .recv()
        .map_err(|_| ChannelError::Setup("server thread ended before starting".into()))?;
    Ok(Peer {
        kind: PeerKind::Thread,
        pid: process::getpid(),
        tid: 0,
        thread: Some((handle, pthread)),
        ctl,
        server_cpu: None,
        reaped: false,
    })
}

/// Places the server, attaches it, reports ready and echoes until stopped.
/// Returns the exit code a process peer ends with.
fn run_server(mut server: Box<dyn Endpoint>, spec: &PeerSpec, ctl: &ControlPage) -> i32 {
    let fail_start = |msg: String| {
        ctl.set_error(&msg);
        ctl.ready().store(READY_FAILED, Ordering::Release);
        1
    };
    if let Err(e) = spec.placement.apply() {
        return fail_start(e.to_string());
    }
    if let Err(e) = server.attach(spec.client) {
        return fail_start(format!("attach: {e}"));
    }
    ctl.0
        .atomic_u32(OFF_TID)
        .store(process::gettid() as u32, Ordering::Relaxed);
    let cpu = sched::current_cpu().map_or(-1, |c| c as i32);
    ctl.0
        .atomic_u32(OFF_CPU)
        .store(cpu as u32, Ordering::Relaxed);
    ctl.ready().store(READY_OK, Ordering::Release);
    let serving = Serving {
        size: spec.size,
        cold_region: spec.cold_region,
        fault: spec.fault,
        board: ctl.board(),
    };
    let mut server = match spec.fault {
        Some(f) if f.breaks_server() => faulty_end(f, server, spec.size),
        _ => server,
    };
    let served = (spec.role.serve)(server.as_mut(), &serving);
    match served {
        Ok(()) | Err(ChannelError::Stopped) => 0,
        Err(e) => {
            ctl.set_error(&e.to_string());
            1
        }
    }
}

/// Applies a test-only fault to the `count`-th message received.
pub fn inject(fault: Fault, count: u64, buf: &mut [u8]) -> Result<(), ChannelError> {
    match fault {
        Fault::Corrupt => {
            if let Some(last) = buf.last_mut() {
                *last ^= 0xA5;
            }
        }
        Fault::Die(after) if count >= after => {
            return Err(ChannelError::Setup(
                "fault injection: the server exits".into(),
            ));
        }
        Fault::Hang(after) if count >= after => loop {
            interrupt::check()?;
            std::thread::sleep(Duration::from_millis(5));
        },
        _ => {}
    }
    Ok(())
}
