//! The data plane: the connections a remote figure's messages travel on,
//! and the agent's side of every role (echo, sink, source, receiver).
//! The agent runs [`serve`] in a child process of its own; the client
//! measures through [`connect`]'s endpoint with the engine's models.

use crate::remote::task::{PortRange, Report, Task};
use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::time::Instant;

/// The agent's data socket for one figure, bound before the client is told
/// its port.
pub struct DataListener {
    port: u16,
}

impl DataListener {
    /// The port the client connects (or sends) to.
    pub fn port(&self) -> u16 {
        self.port
    }
}

/// Binds the data socket for `task` on `ip`, at the first free port of
/// `ports` (any port for [`PortRange::ANY`]).
pub fn listen(_task: &Task, _ip: IpAddr, _ports: PortRange) -> Result<DataListener, String> {
    unimplemented!("data plane: being written")
}

/// Runs the agent's side of `task` on `listener` (in the agent's child
/// process): accepts the client's connection, then echoes, sinks, sends or
/// receives until the client closes, `stop` becomes readable (a byte, or
/// the agent's end closed) or `deadline` passes; what it counted, with the
/// error that ended it early if one did.
pub fn serve(_listener: DataListener, _task: &Task, _stop: OwnedFd, _deadline: Instant) -> Report {
    unimplemented!("data plane: being written")
}
