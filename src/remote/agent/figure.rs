//! A figure's child: binding its data socket, drawing its key, forking the
//! process that serves the data plane, reading its report from a pipe,
//! reaping it, and sending `Done`. Apart from the loop because it is the
//! one part of the agent that forks: what the child does between `fork`
//! and `_exit` lives here, and nothing else does.

use super::{Agent, End, FIGURE_GRACE, FINISH_WAIT, Live, log, refused, send};
use crate::remote::data::{self, DataKey};
use crate::remote::frame;
use crate::remote::protocol::AgentMsg;
use crate::remote::task::{MAX_ERROR, Report, Task};
use crate::sys::process::{self, ExitStatus, Fork};
use std::io::{self, ErrorKind, Read, Write};
use std::net::IpAddr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// One figure's child process and its pipes.
pub(super) struct Figure {
    pub(super) pid: libc::pid_t,
    /// A byte here (or its closing) tells the child to stop.
    pub(super) stop: Option<io::PipeWriter>,
    /// The child writes its report here, then exits.
    pub(super) report: Option<io::PipeReader>,
    pub(super) bytes: Vec<u8>,
    /// The report ran past [`frame::MAX_FRAME`].
    pub(super) oversized: bool,
    /// Past this the child is killed.
    pub(super) kill_at: Instant,
    /// `Finish` received: the report is sent once known, by this deadline.
    pub(super) finish_by: Option<Instant>,
    /// The report, once the child ended.
    pub(super) result: Option<Report>,
}

impl Agent {
    /// Starts a figure: binds its data socket, draws its data key, forks
    /// the child that serves it, answers `Ready` with the port and the key.
    pub(super) fn start(&mut self, live: &mut Live, task: Task) -> Option<End> {
        match self.spawn(live, &task) {
            Ok((port, key, figure)) => {
                live.figure = Some(figure);
                send(live, &AgentMsg::Ready { port, key }).err()
            }
            Err(reason) => {
                live.session.figure_ended();
                log(&format!(
                    "figure of {} refused: {reason}",
                    live.session.peer
                ));
                send(live, &refused(&reason)).err()
            }
        }
    }

    fn spawn(&self, live: &Live, task: &Task) -> Result<(u16, String, Figure), String> {
        let ip = self.ip;
        let ports = self.config.data_ports;
        // A bug of the data plane must not end the agent: a panic while
        // binding refuses the figure.
        let listener =
            std::panic::catch_unwind(|| data::listen(task, ip, ports)).map_err(|_| {
                "the agent failed to bind the data socket (internal error)".to_string()
            })??;
        let port = listener.port();
        let key = DataKey::fresh()?;
        let peer = live.session.peer.ip();
        let (stop_r, stop_w) = io::pipe().map_err(|e| format!("pipe: {e}"))?;
        let (report_r, report_w) = io::pipe().map_err(|e| format!("pipe: {e}"))?;
        crate::sys::fd::set_nonblocking(&report_r, true).map_err(|e| format!("pipe: {e}"))?;
        let limit = Duration::from_millis(task.limit_ms);
        match process::fork().map_err(|e| format!("fork: {e}"))? {
            Fork::Child => {
                for fd in [
                    self.listener.as_raw_fd(),
                    live.stream.as_raw_fd(),
                    stop_w.as_raw_fd(),
                    report_r.as_raw_fd(),
                ] {
                    crate::sys::fd::close_inherited(fd);
                }
                let code = figure_child(
                    listener,
                    task,
                    (peer, &key),
                    OwnedFd::from(stop_r),
                    report_w,
                    limit,
                );
                process::exit_now(code)
            }
            Fork::Parent(pid) => {
                // The parent's copy of the data socket closes as `listener`
                // goes out of scope on return; the pipes' child ends now.
                drop(stop_r);
                drop(report_w);
                log(&format!(
                    "figure of {}: {} {} bytes, data port {port}",
                    live.session.peer,
                    task.proto.id(),
                    task.size
                ));
                Ok((
                    port,
                    key.hex(),
                    Figure {
                        pid,
                        stop: Some(stop_w),
                        report: Some(report_r),
                        bytes: Vec::new(),
                        oversized: false,
                        kill_at: Instant::now() + limit + FIGURE_GRACE,
                        finish_by: None,
                        result: None,
                    },
                ))
            }
        }
    }

    /// `Finish`: tells the child to stop; the report is sent when it comes.
    pub(super) fn finish(&mut self, live: &mut Live) -> Option<End> {
        let Some(f) = live.figure.as_mut() else {
            return Some(End::Line("internal error: Finish without a figure".into()));
        };
        if let Some(mut w) = f.stop.take() {
            let _ = w.write(&[1]);
        }
        f.finish_by = Some(Instant::now() + FINISH_WAIT);
        send_done_if_ready(live)
    }

    /// Reads the child's report as it comes; at its end, reaps the child.
    pub(super) fn read_report(&mut self) {
        let Some(mut live) = self.live.take() else {
            return;
        };
        if let Some(f) = live.figure.as_mut()
            && let Some(r) = f.report.as_mut()
        {
            let mut chunk = [0u8; 64 << 10];
            loop {
                match r.read(&mut chunk) {
                    Ok(0) => {
                        f.report = None;
                        let status = reap(f.pid);
                        f.result = Some(if f.oversized {
                            Report {
                                error: Some(format!(
                                    "the agent's report is larger than a control frame ({} bytes)",
                                    frame::MAX_FRAME
                                )),
                                ..Report::default()
                            }
                        } else {
                            parse_report(&f.bytes, status)
                        });
                        if let Some(r) = f.result.as_ref().filter(|r| r.rejected > 0) {
                            log(&format!(
                                "figure of {}: dropped {} data connections or datagrams \
                                 from another address or without the figure's key",
                                live.session.peer, r.rejected
                            ));
                        }
                        break;
                    }
                    Ok(n) => {
                        // A report larger than a frame cannot be sent: it
                        // is drained, not kept, and replaced by an error.
                        if f.bytes.len() + n <= frame::MAX_FRAME {
                            f.bytes.extend_from_slice(&chunk[..n]);
                        } else {
                            f.oversized = true;
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                    Err(_) => break,
                }
            }
        }
        match send_done_if_ready(&mut live) {
            Some(end) => self.close(live, end),
            None => self.live = Some(live),
        }
    }
}

/// Sends `Done` once `Finish` came and the report is known.
pub(super) fn send_done_if_ready(live: &mut Live) -> Option<End> {
    let f = live.figure.as_ref()?;
    if f.finish_by.is_none() || f.result.is_none() {
        return None;
    }
    let report = live.figure.take()?.result?;
    live.session.figure_ended();
    live.last_frame = Instant::now();
    send(live, &AgentMsg::Done { report }).err()
}

/// Reaps a child whose report pipe closed (it is exiting).
fn reap(pid: libc::pid_t) -> Option<ExitStatus> {
    loop {
        match process::wait_blocking(pid) {
            Ok(s) => return Some(s),
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(_) => return None,
        }
    }
}

/// The child's report, or one that says how the child ended without one.
fn parse_report(bytes: &[u8], status: Option<ExitStatus>) -> Report {
    if let Ok(r) = serde_json::from_slice::<Report>(bytes) {
        return r;
    }
    let how = match status {
        Some(ExitStatus::Code(c)) => format!("exit code {c}"),
        Some(ExitStatus::Signal(s)) => format!("signal {s}"),
        None => "status unknown".into(),
    };
    Report {
        error: Some(format!("the agent's data process ended: {how}")),
        ..Report::default()
    }
}

/// The figure's child: pins itself, serves the data plane, writes the
/// report; returns its exit code (the caller `_exit`s with it).
fn figure_child(
    listener: data::DataListener,
    task: &Task,
    (peer, key): (IpAddr, &DataKey),
    stop: OwnedFd,
    mut report_w: io::PipeWriter,
    limit: Duration,
) -> i32 {
    // The child must not outlive an agent killed with SIGKILL.
    let _ = process::set_parent_death_signal(libc::SIGKILL);
    // The agent's own children set its flags (SIGCHLD): the data plane's
    // waits must start from a clean state.
    crate::engine::os::interrupt::reset_for_figure();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        if let Some(cpu) = task.cpu
            && let Err(e) = crate::sys::sched::pin_to_cpu(cpu)
        {
            return Report {
                error: Some(format!("cannot run on CPU {cpu}: {e}")),
                ..Report::default()
            };
        }
        data::serve(listener, task, peer, key, stop, Instant::now() + limit)
    }));
    let Ok(mut report) = result else {
        return 101;
    };
    // The report must fit a frame whatever the error says.
    if let Some(e) = &mut report.error
        && e.chars().count() > MAX_ERROR
    {
        *e = e.chars().take(MAX_ERROR).collect();
    }
    match serde_json::to_vec(&report) {
        Ok(bytes) if report_w.write_all(&bytes).is_ok() => 0,
        _ => 1,
    }
}
