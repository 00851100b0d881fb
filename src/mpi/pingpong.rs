//! OSU's blocking ping-pong between two ranks: the engine's ping-pong
//! model ([`pingpong::measure`] on rank 0, [`pingpong::echo`] on its peer)
//! over `MPI_Send`/`MPI_Recv`, as `osu_latency` times it — one-way latency
//! is half the round trip; every message's sequence number is checked, and
//! the whole content (fill pattern) of the verified round trips before and
//! after the timed ones, as in local figures.
//!
//! The two ranks agree on each figure over a control tag: rank 0 sends the
//! message size, the peer echoes until a stop message, then returns the
//! count of messages it echoed, which must equal the count rank 0 sent.
//!
//! No receive in the timed loop asks MPI for the message's length
//! (`MPI_Get_count`, some 8 ns a call here, one per receive on each side:
//! 4% of an 8 B figure, and osu_latency receives with `MPI_STATUS_IGNORE`).
//! The sequence number of every message is still checked, and a message of
//! another length cannot pass unseen: a longer one is MPI's truncation
//! error, and a shorter one leaves bytes of the verified round trips'
//! poisoned buffers unwritten, which their whole-content check finds. The
//! peer tells the stop from an echo by its tag, a field of the status.

use super::ranks::RankPlace;
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::measure::Measurement;
use crate::engine::models::pingpong;
use crate::engine::models::region::Region;
use crate::engine::os::peer::Fault;
use crate::engine::run::figure::{Facts, FigureResult, Mode, Outcome};
use crate::engine::run::runner::RunSettings;
use crate::engine::run::session::External;
use crate::sys::mpi_p2p as p2p;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, Rank, SimpleCommunicator};
use std::sync::atomic::AtomicU64;

/// The id of MPI ping-pong figures in reports.
pub const ID: &str = "mpi";

/// Tag of the echoed messages.
const DATA: i32 = 1;
/// Tag of the empty message that ends a figure's echo loop.
const STOP: i32 = 2;
/// Tag of the figure's set-up and its count, between the figures.
const CONTROL: i32 = 3;
/// The size rank 0 announces to say that no figure follows.
const DONE: u64 = u64::MAX;

/// One end of the channel: blocking standard-mode send and receive to and
/// from one peer rank, as `osu_latency` uses them.
pub struct MpiEnd {
    peer: Rank,
    /// The echoing end, which also receives the stop message.
    echoes: bool,
    /// Messages sent through this end.
    pub sent: u64,
}

impl MpiEnd {
    /// Rank 0's end, which sends to `peer` and receives its echoes.
    pub fn new(peer: Rank) -> MpiEnd {
        MpiEnd {
            peer,
            echoes: false,
            sent: 0,
        }
    }

    /// The echoing end, which also receives `peer`'s stop message.
    pub fn echoing(peer: Rank) -> MpiEnd {
        MpiEnd {
            peer,
            echoes: true,
            sent: 0,
        }
    }
}

impl Endpoint for MpiEnd {
    fn send(&mut self, msg: &[u8]) -> Result<(), ChannelError> {
        p2p::send(msg, self.peer, DATA).map_err(mpi_error("MPI_Send"))?;
        self.sent += 1;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        if !self.echoes {
            // The echo's tag, as osu_latency receives; its length is not
            // asked for (the module's comment says why that is safe).
            p2p::recv(buf, self.peer, Some(DATA)).map_err(mpi_error("MPI_Recv"))?;
            super::deadline::beat();
            return Ok(());
        }
        // Either tag: the stop or a message to echo, told apart by a field.
        match p2p::recv(buf, self.peer, None).map_err(mpi_error("MPI_Recv"))? {
            DATA => Ok(()),
            STOP => Err(ChannelError::Closed),
            tag => Err(ChannelError::Io {
                op: "MPI_Recv",
                source: std::io::Error::other(format!(
                    "a message of tag {tag} from rank {} amid the figure",
                    self.peer
                )),
            }),
        }
    }
}

/// A failed MPI call as the channel's error (MPI's default handler ends
/// the job first; this is for a library set to return its errors).
fn mpi_error(op: &'static str) -> impl Fn(String) -> ChannelError {
    move |e| ChannelError::Io {
        op,
        source: std::io::Error::other(e),
    }
}

/// Rank 0's side: an [`External`] item of the engine's session whose
/// figures are ping-pong with the peer rank.
pub struct MpiPingPong {
    peer: Rank,
    /// "rank 0 on HOST ↔ rank 1 on HOST", recorded with each figure.
    note: String,
}

impl MpiPingPong {
    /// Rank 0's item, with `peer` serving ([`serve`]); `places` is every
    /// rank's place ([`super::ranks::gather`]).
    pub fn new(peer: Rank, places: &[RankPlace]) -> MpiPingPong {
        let me = SimpleCommunicator::world().rank();
        let nodes = super::ranks::nodes(places);
        let at = |r: Rank| {
            let host = places
                .get(r as usize)
                .map_or("(unknown)", |p| p.host.as_str());
            let node = nodes.iter().position(|&n| n == host).unwrap_or(0);
            format!("rank {r} on {host} (node {node})")
        };
        MpiPingPong {
            peer,
            note: format!("MPI: {} ↔ {}", at(me), at(peer)),
        }
    }

    /// Tells the peer that no figure follows (every path of rank 0 must,
    /// or the peer waits for ever).
    pub fn done(&self) {
        SimpleCommunicator::world()
            .process_at_rank(self.peer)
            .send_with_tag(&DONE, CONTROL);
    }

    fn figure(&self, size: usize, s: &RunSettings) -> Result<Measurement, String> {
        let _armed = super::deadline::arm(&format!("rank {}", self.peer));
        let world = SimpleCommunicator::world();
        let peer = world.process_at_rank(self.peer);
        peer.send_with_tag(&(size as u64), CONTROL);
        let mut end = MpiEnd::new(self.peer);
        let measured = pingpong::measure(&mut end, size, false, &s.budget, None, None);
        // Ends the peer's loop on every path: it echoed all it received.
        peer.send_with_tag(&[0u8; 0][..], STOP);
        let (echoed, _) = peer.receive_with_tag::<u64>(CONTROL);
        let m = measured.map_err(|e| e.to_string())?;
        if echoed != end.sent {
            return Err(format!(
                "rank {} echoed {echoed} messages of the {} sent",
                self.peer, end.sent
            ));
        }
        Ok(m)
    }
}

impl External for MpiPingPong {
    fn id(&self) -> &'static str {
        ID
    }

    fn mode(&self) -> Mode {
        Mode::PingPong
    }

    fn sizes(&self, requested: &[usize]) -> Vec<usize> {
        requested.to_vec()
    }

    fn measure(&self, size: usize, s: &RunSettings) -> FigureResult {
        let mut r = FigureResult::new(ID, Facts::PingPong, size);
        r.cpus.extend(crate::sys::sched::current_cpu());
        r.note = Some(self.note.clone());
        r.outcome = self
            .figure(size, s)
            .map(|m| Outcome::Ok(Box::new(m)))
            .unwrap_or_else(Outcome::Failed);
        r
    }
}

/// The peer's side: sends its host, then echoes each figure rank 0
/// announces until rank 0 says it is done, with `fault` injected into
/// the echo if asked (testing ipcmark itself). An error here cannot reach
/// rank 0 (it waits for an echo): the caller ends the job with it.
pub fn serve(leader: Rank, fault: Option<Fault>) -> Result<(), String> {
    let world = SimpleCommunicator::world();
    let me = world.rank();
    let leader_at = world.process_at_rank(leader);
    loop {
        let (size, _) = leader_at.receive_with_tag::<u64>(CONTROL);
        if size == DONE {
            return Ok(());
        }
        let echoed = AtomicU64::new(0);
        let mut end = MpiEnd::echoing(leader);
        let mut region = Region::warm(size as usize);
        match pingpong::echo(&mut end, &mut region, fault, &echoed) {
            // Rank 0's stop message: the figure is over.
            Err(ChannelError::Closed) => {}
            Err(e) => return Err(format!("rank {me}, echoing {size}-byte messages: {e}")),
            Ok(()) => {}
        }
        leader_at.send_with_tag(&echoed.into_inner(), CONTROL);
    }
}
