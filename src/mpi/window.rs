//! Windows of non-blocking messages from senders to receivers, as OSU's
//! `osu_bw` (one pair, ranks 0 → 1) and `osu_mbw_mr` (N/2 pairs, rank i →
//! i + N/2) send them: a sender posts a window of `MPI_Isend`s, its
//! receiver the matching `MPI_Irecv`s; each waits for all of them; the
//! receiver then acknowledges the window with a small message, which the
//! sender waits for before its next window.
//!
//! Rank 0 drives every figure: before each phase it tells every rank taking
//! part what the phase is (a [`Phase`] on the control tag), and at the end
//! of the figure collects each rank's [`Tally`]. A phase is a number of
//! windows of one kind: whole-content checks before and after ([`Kind::Verify`]),
//! the warm-up and calibration ([`Kind::Warm`]) and the samples
//! ([`Kind::Sample`]).
//!
//! **Every message is checked.** Message `s` of a pair carries `s` (1, 2,
//! …) in its first `min(size, 8)` bytes. The receiver poisons those bytes
//! before posting its receives and checks every message's number and length
//! when the window has arrived (inside the timed loop, as local streams
//! do); a verify phase's messages carry a fill pattern unique to each and
//! are compared byte for byte; and after every warm-up or sample phase
//! (outside the timed part) the receiver compares the whole of its last
//! window's messages, whose bytes past the number are each window slot's own
//! fill pattern. Each acknowledgement carries the count of messages the
//! receiver has taken so far, which the sender checks; and rank 0 compares
//! every receiver's count with its sender's at the end.

use crate::engine::error::ChannelError;
use crate::engine::message::{check_seq, fill_pattern, poison_seq, seq_len, stamp};
use crate::sys::clock::{monotonic_ns, thread_cpu_ns};
use mpi::collective::CommunicatorCollectives as _;
use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination, Source};
use mpi::request::{LocalScope, scope};
use mpi::topology::{Communicator, Process, Rank, SimpleCommunicator};

/// Tag of the windows' messages.
const DATA: i32 = 11;
/// Tag of a receiver's acknowledgement of a window.
const ACK: i32 = 12;
/// Tag of rank 0's phases and of the ranks' tallies.
const CONTROL: i32 = 13;

/// The most bytes a window may hold on one side (each message of a window
/// has its own buffer, so that each carries its own number).
pub const MAX_WINDOW_BYTES: usize = 256 << 20;

/// What a phase is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Messages with a fill pattern unique to each, compared byte for byte.
    Verify,
    /// Warm-up and calibration: timed, not a sample.
    Warm,
    /// One sample.
    Sample,
    /// The figure is over: send rank 0 your tally.
    End,
    /// No figure follows: return.
    Done,
}

impl Kind {
    fn code(self) -> u64 {
        match self {
            Kind::Verify => 1,
            Kind::Warm => 2,
            Kind::Sample => 3,
            Kind::End => 4,
            Kind::Done => 5,
        }
    }

    fn of(code: u64) -> Option<Kind> {
        Some(match code {
            1 => Kind::Verify,
            2 => Kind::Warm,
            3 => Kind::Sample,
            4 => Kind::End,
            5 => Kind::Done,
            _ => return None,
        })
    }
}

/// What rank 0 announces before each phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Phase {
    /// What the phase is.
    pub kind: Kind,
    /// Bytes per message.
    pub size: usize,
    /// Messages per window.
    pub window: usize,
    /// Windows in the phase.
    pub windows: u64,
}

impl Phase {
    fn encode(&self) -> [u64; 4] {
        [
            self.kind.code(),
            self.size as u64,
            self.window as u64,
            self.windows,
        ]
    }

    fn decode(w: [u64; 4]) -> Option<Phase> {
        Some(Phase {
            kind: Kind::of(w[0])?,
            size: w[1] as usize,
            window: w[2] as usize,
            windows: w[3],
        })
    }
}

/// How a phase is timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// Rank 0 times its own windows, as `osu_bw`: from its first send to
    /// the last acknowledgement.
    Leader,
    /// Every rank enters a barrier before and after the phase and rank 0
    /// times from the first barrier's end to the second's, as
    /// `osu_mbw_mr`, so the time spans every pair's windows.
    Barriers,
}

/// The pairs of a figure: sender `senders[i]` sends to `receivers[i]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pairs {
    /// The sending ranks.
    pub senders: Vec<Rank>,
    /// Each sender's receiver.
    pub receivers: Vec<Rank>,
}

/// What one rank does in a figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// It sends to this rank.
    Sender(Rank),
    /// It receives from this rank.
    Receiver(Rank),
}

impl Pairs {
    /// `osu_bw`'s one pair: rank 0 sends to rank 1.
    pub fn one() -> Pairs {
        Pairs {
            senders: vec![0],
            receivers: vec![1],
        }
    }

    /// `osu_mbw_mr`'s pairs of an even number of ranks: rank i sends to
    /// rank i + ranks/2, so that with ranks packed onto nodes in order each
    /// pair spans the two halves.
    pub fn halves(ranks: Rank) -> Pairs {
        let half = ranks / 2;
        Pairs {
            senders: (0..half).collect(),
            receivers: (half..2 * half).collect(),
        }
    }

    /// What `rank` does, if it takes part.
    pub fn side(&self, rank: Rank) -> Option<Side> {
        if let Some(i) = self.senders.iter().position(|&r| r == rank) {
            return Some(Side::Sender(self.receivers[i]));
        }
        let i = self.receivers.iter().position(|&r| r == rank)?;
        Some(Side::Receiver(self.senders[i]))
    }

    /// Every rank taking part but rank 0, which drives.
    pub fn others(&self) -> impl Iterator<Item = Rank> + '_ {
        self.senders
            .iter()
            .chain(&self.receivers)
            .copied()
            .filter(|&r| r != 0)
    }

    /// How many pairs.
    pub fn len(&self) -> usize {
        self.senders.len()
    }
}

/// What went wrong on one rank (the first thing only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// What: 1 a wrong number at byte `at`, 2 nothing received, 3 a wrong
    /// length (`at` bytes), 4 content differing at byte `at`, 5 an
    /// acknowledgement counting `at` messages.
    pub kind: u64,
    /// The message (or, for an acknowledgement, the last message of the window).
    pub seq: u64,
    /// The detail the kind names.
    pub at: u64,
}

impl Fault {
    fn of(e: ChannelError) -> Fault {
        match e {
            ChannelError::NothingReceived { seq } => Fault {
                kind: 2,
                seq,
                at: 0,
            },
            ChannelError::Corrupt { seq, offset } => Fault {
                kind: 1,
                seq,
                at: offset as u64,
            },
            // check_seq reports nothing else.
            _ => Fault {
                kind: 1,
                seq: 0,
                at: 0,
            },
        }
    }

    /// The fault in words.
    pub fn describe(&self) -> String {
        let (seq, at) = (self.seq, self.at);
        match self.kind {
            1 => format!("message {seq} carried a wrong sequence number (byte {at})"),
            2 => format!("message {seq} never arrived: its buffer still held the poison"),
            3 => format!("message {seq} arrived with {at} bytes"),
            4 => format!("message {seq}'s content differed from what was sent at byte {at}"),
            5 => format!("the acknowledgement after message {seq} counted {at} messages"),
            k => format!("fault {k} at message {seq}"),
        }
    }
}

/// One rank's counts over a figure, sent to rank 0 at its end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Tally {
    /// Messages it sent, in every phase.
    pub sent: u64,
    /// Messages it received, in every phase.
    pub received: u64,
    /// Messages it sent in the samples.
    pub sample_sent: u64,
    /// Messages it received in the samples.
    pub sample_received: u64,
    /// Messages whose every byte it compared.
    pub verified: u64,
    /// Its thread's CPU time over the samples, ns.
    pub cpu_ns: u64,
    /// Its own span of the samples, ns.
    pub span_ns: u64,
    /// The first thing that went wrong.
    pub fault: Option<Fault>,
}

impl Tally {
    fn encode(&self) -> [u64; 10] {
        let f = self.fault.unwrap_or(Fault {
            kind: 0,
            seq: 0,
            at: 0,
        });
        [
            self.sent,
            self.received,
            self.sample_sent,
            self.sample_received,
            self.verified,
            self.cpu_ns,
            self.span_ns,
            f.kind,
            f.seq,
            f.at,
        ]
    }

    fn decode(w: [u64; 10]) -> Tally {
        Tally {
            sent: w[0],
            received: w[1],
            sample_sent: w[2],
            sample_received: w[3],
            verified: w[4],
            cpu_ns: w[5],
            span_ns: w[6],
            fault: (w[7] != 0).then_some(Fault {
                kind: w[7],
                seq: w[8],
                at: w[9],
            }),
        }
    }

    fn fault(&mut self, f: Fault) {
        self.fault.get_or_insert(f);
    }
}

/// The number a window slot's fill pattern is made from: far from any
/// message's number, so no slot's pattern is a verify message's.
fn slot_seed(slot: usize) -> u64 {
    u64::MAX - slot as u64
}

/// One rank's end of a figure: its buffers (one per message of a window),
/// its next message number and its tally.
pub struct Ends {
    side: Side,
    bufs: Vec<Vec<u8>>,
    /// What a whole-content check expects.
    want: Vec<u8>,
    /// The number of the next message sent or expected.
    seq: u64,
    /// Whether the buffers hold the slots' fill patterns (not a verify
    /// phase's).
    slotted: bool,
    /// The counts so far.
    pub tally: Tally,
}

impl Ends {
    /// The end of `side` for messages of `size` bytes in windows of `window`.
    pub fn new(side: Side, size: usize, window: usize) -> Ends {
        Ends {
            side,
            bufs: vec![vec![0u8; size]; window],
            want: vec![0u8; size],
            seq: 1,
            slotted: false,
            tally: Tally::default(),
        }
    }

    /// Runs one phase of `phase.windows` windows and returns how long it
    /// took on this rank's clock, ns (between the barriers with
    /// [`Timing::Barriers`]).
    pub fn run(&mut self, phase: &Phase, timing: Timing) -> u64 {
        let world = SimpleCommunicator::world();
        let verify = phase.kind == Kind::Verify;
        if !verify && !self.slotted {
            // Outside the timed part: the bytes past each number.
            for (slot, b) in self.bufs.iter_mut().enumerate() {
                fill_pattern(b, slot_seed(slot));
            }
            self.slotted = true;
        }
        if verify {
            self.slotted = false;
        }
        let k = seq_len(&self.want);
        let window = self.bufs.len() as u64;
        let sample = phase.kind == Kind::Sample;
        if timing == Timing::Barriers {
            world.barrier();
        }
        let cpu0 = if sample { cpu_ns() } else { 0 };
        let t0 = monotonic_ns();
        match self.side {
            Side::Sender(to) => {
                let peer = world.process_at_rank(to);
                let mut ack = 0u64;
                for _ in 0..phase.windows {
                    for (i, b) in self.bufs.iter_mut().enumerate() {
                        if verify {
                            fill_pattern(b, self.seq + i as u64);
                        } else {
                            stamp(b, self.seq + i as u64, k);
                        }
                    }
                    self.seq += window;
                    scope(|sc| send_all(sc, &peer, &self.bufs));
                    peer.receive_into_with_tag(&mut ack, ACK);
                    super::deadline::beat();
                    if ack != self.seq - 1 {
                        self.tally.fault(Fault {
                            kind: 5,
                            seq: self.seq - 1,
                            at: ack,
                        });
                    }
                }
            }
            Side::Receiver(from) => {
                let peer = world.process_at_rank(from);
                for _ in 0..phase.windows {
                    for (i, b) in self.bufs.iter_mut().enumerate() {
                        poison_seq(b, self.seq + i as u64, k);
                    }
                    let first = self.seq;
                    let tally = &mut self.tally;
                    scope(|sc| recv_all(sc, &peer, &mut self.bufs, first, tally));
                    for i in 0..self.bufs.len() {
                        let seq = first + i as u64;
                        if let Err(e) = check_seq(&self.bufs[i], seq, k) {
                            self.tally.fault(Fault::of(e));
                        }
                        if verify {
                            fill_pattern(&mut self.want, seq);
                            self.compare(i, seq);
                        }
                    }
                    self.seq += window;
                    peer.send_with_tag(&(self.seq - 1), ACK);
                }
            }
        }
        if timing == Timing::Barriers {
            world.barrier();
            super::deadline::beat();
        }
        let took = monotonic_ns() - t0;
        let moved = window * phase.windows;
        match self.side {
            Side::Sender(_) => self.tally.sent += moved,
            Side::Receiver(_) => self.tally.received += moved,
        }
        if sample {
            self.tally.cpu_ns += cpu_ns().saturating_sub(cpu0);
            self.tally.span_ns += took;
            match self.side {
                Side::Sender(_) => self.tally.sample_sent += moved,
                Side::Receiver(_) => self.tally.sample_received += moved,
            }
        }
        if !verify && matches!(self.side, Side::Receiver(_)) && phase.windows > 0 {
            // The last window's messages, whole (outside the timed part).
            let last = self.seq - window;
            for slot in 0..self.bufs.len() {
                fill_pattern(&mut self.want, slot_seed(slot));
                stamp(&mut self.want, last + slot as u64, k);
                self.compare(slot, last + slot as u64);
            }
        }
        took
    }

    /// Compares buffer `slot` with `want` byte for byte.
    fn compare(&mut self, slot: usize, seq: u64) {
        match self.bufs[slot]
            .iter()
            .zip(&self.want)
            .position(|(a, b)| a != b)
        {
            None => self.tally.verified += 1,
            Some(at) => self.tally.fault(Fault {
                kind: 4,
                seq,
                at: at as u64,
            }),
        }
    }
}

/// The calling thread's CPU time, ns (0 if the kernel would not say: the
/// figure then shows no CPU per message rather than failing).
fn cpu_ns() -> u64 {
    thread_cpu_ns().unwrap_or(0)
}

/// Posts a non-blocking send of every buffer, then waits for them all.
/// Recursive so that each request lives in a stack frame: a window's
/// requests need no allocation inside the timed loop (rsmpi's
/// `RequestCollection` allocates four vectors per window).
fn send_all<'a>(sc: &LocalScope<'a>, to: &Process<'_>, bufs: &'a [Vec<u8>]) {
    if let Some((first, rest)) = bufs.split_first() {
        let req = to.immediate_send_with_tag(sc, &first[..], DATA);
        send_all(sc, to, rest);
        req.wait();
    }
}

/// Posts a non-blocking receive into every buffer, then waits for them all,
/// recording a message of the wrong length; `first` is the number of the
/// first buffer's message.
fn recv_all<'a>(
    sc: &LocalScope<'a>,
    from: &Process<'_>,
    bufs: &'a mut [Vec<u8>],
    first: u64,
    tally: &mut Tally,
) {
    if let Some((head, rest)) = bufs.split_first_mut() {
        let size = head.len();
        let req = from.immediate_receive_into_with_tag(sc, &mut head[..], DATA);
        recv_all(sc, from, rest, first + 1, tally);
        let got = req.wait().count(u8::equivalent_datatype()) as usize;
        if got != size {
            tally.fault(Fault {
                kind: 3,
                seq: first,
                at: got as u64,
            });
        }
    }
}

/// Tells every rank taking part but rank 0 what comes next.
pub fn announce(pairs: &Pairs, phase: &Phase) {
    let world = SimpleCommunicator::world();
    let words = phase.encode();
    for r in pairs.others() {
        world.process_at_rank(r).send_with_tag(&words[..], CONTROL);
    }
}

/// Ends the figure on every rank taking part and returns each one's tally,
/// by rank (rank 0's is `mine`; ranks not taking part have none).
pub fn end(pairs: &Pairs, size: usize, window: usize, mine: Tally) -> Vec<(Rank, Tally)> {
    announce(
        pairs,
        &Phase {
            kind: Kind::End,
            size,
            window,
            windows: 0,
        },
    );
    let world = SimpleCommunicator::world();
    let mut all = vec![(0, mine)];
    for r in pairs.others() {
        let mut w = [0u64; 10];
        world
            .process_at_rank(r)
            .receive_into_with_tag(&mut w[..], CONTROL);
        all.push((r, Tally::decode(w)));
    }
    all
}

/// What the tallies say is wrong, if anything: a rank's own fault, or a
/// receiver's count differing from its sender's.
pub fn check(pairs: &Pairs, tallies: &[(Rank, Tally)]) -> Result<(), String> {
    let of = |r: Rank| tallies.iter().find(|(x, _)| *x == r).map(|(_, t)| *t);
    for (r, t) in tallies {
        if let Some(f) = t.fault {
            return Err(format!("rank {r}: {}", f.describe()));
        }
    }
    for (&s, &r) in pairs.senders.iter().zip(&pairs.receivers) {
        let (Some(ts), Some(tr)) = (of(s), of(r)) else {
            return Err(format!("no tally from the pair {s} → {r}"));
        };
        if tr.received != ts.sent || tr.sample_received != ts.sample_sent {
            return Err(format!(
                "rank {r} received {} messages ({} in the samples) of the {} ({}) rank {s} sent",
                tr.received, tr.sample_received, ts.sent, ts.sample_sent
            ));
        }
    }
    Ok(())
}

/// A rank's side of every figure rank 0 announces, until it says no
/// figure follows. A rank that takes no part returns at once. A phase it
/// cannot read ends the job (rank 0 would wait for it): the caller aborts.
pub fn serve(pairs: &Pairs, timing: Timing) -> Result<(), String> {
    let world = SimpleCommunicator::world();
    let me = world.rank();
    let Some(side) = pairs.side(me) else {
        return Ok(());
    };
    let leader = world.process_at_rank(0);
    let mut ends: Option<Ends> = None;
    loop {
        let mut w = [0u64; 4];
        leader.receive_into_with_tag(&mut w[..], CONTROL);
        let phase = Phase::decode(w)
            .ok_or_else(|| format!("rank {me}: unknown phase from rank 0: {w:?}"))?;
        match phase.kind {
            Kind::Done => return Ok(()),
            Kind::End => {
                let tally = ends.take().map(|e| e.tally).unwrap_or_default();
                leader.send_with_tag(&tally.encode()[..], CONTROL);
            }
            _ => {
                let e = ends.get_or_insert_with(|| Ends::new(side, phase.size, phase.window));
                e.run(&phase, timing);
            }
        }
    }
}

/// Tells every rank taking part that no figure follows.
pub fn done(pairs: &Pairs) {
    announce(
        pairs,
        &Phase {
            kind: Kind::Done,
            size: 0,
            window: 0,
            windows: 0,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_span_the_two_halves() {
        let p = Pairs::halves(4);
        assert_eq!(p.senders, [0, 1]);
        assert_eq!(p.receivers, [2, 3]);
        assert_eq!(p.side(1), Some(Side::Sender(3)));
        assert_eq!(p.side(2), Some(Side::Receiver(0)));
        assert_eq!(p.side(4), None);
        assert_eq!(p.others().collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(Pairs::one().side(1), Some(Side::Receiver(0)));
    }

    #[test]
    fn phases_and_tallies_survive_their_encoding() {
        let p = Phase {
            kind: Kind::Sample,
            size: 65536,
            window: 64,
            windows: 9,
        };
        assert_eq!(Phase::decode(p.encode()), Some(p));
        assert_eq!(Phase::decode([9, 0, 0, 0]), None);
        let t = Tally {
            sent: 1,
            received: 2,
            sample_sent: 3,
            sample_received: 4,
            verified: 5,
            cpu_ns: 6,
            span_ns: 7,
            fault: Some(Fault {
                kind: 4,
                seq: 8,
                at: 9,
            }),
        };
        assert_eq!(Tally::decode(t.encode()), t);
        assert_eq!(Tally::decode(Tally::default().encode()), Tally::default());
    }

    #[test]
    fn a_count_that_differs_fails_the_figure() {
        let pairs = Pairs::one();
        let sent = Tally {
            sent: 10,
            sample_sent: 8,
            ..Tally::default()
        };
        let mut got = Tally {
            received: 10,
            sample_received: 8,
            ..Tally::default()
        };
        assert_eq!(check(&pairs, &[(0, sent), (1, got)]), Ok(()));
        got.received = 9;
        let e = check(&pairs, &[(0, sent), (1, got)]).unwrap_err();
        assert!(e.contains("rank 1 received 9 messages"), "{e}");
        got.received = 10;
        got.fault = Some(Fault {
            kind: 2,
            seq: 5,
            at: 0,
        });
        let e = check(&pairs, &[(0, sent), (1, got)]).unwrap_err();
        assert!(e.starts_with("rank 1: message 5 never arrived"), "{e}");
    }
}
