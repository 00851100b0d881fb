//! The receiver (the peer's [`PeerRole`] in a stream figure, [`sink_role`]):
//! it checks every message's sequence number (a gap, a repeat or a wrong
//! number fails the figure; a lossy channel counts gaps as loss instead),
//! reads the clock right after each boundary message, and reports its
//! counts, windows and CPU time on the board. Before each receive it
//! poisons the bytes it will check (the whole buffer for a whole-content
//! message), so that a receive that writes nothing cannot pass.
//!
//! An end that lends (`Endpoint::lends`) is read where the message lies and
//! the message given back, so that a figure holds no copy into the
//! engine's buffer that the mechanism does not make.
//!
//! Inside its timed loops: poisoning the number's bytes, the receive (or
//! the loan and its return), checking the number and one load of the
//! current boundary. No allocation, formatting or locking.

use super::board::{Board, SinkPlan, cpu_now};
use crate::engine::channel::{ChannelError, Endpoint};
use crate::engine::message::{check_lent, check_seq, fill_pattern, poison, poison_seq, seq_len};
use crate::engine::models::region::Region;
use crate::engine::os::interrupt;
use crate::engine::os::peer::{Fault, PeerRole, inject};
use crate::sys::clock::monotonic_ns;
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Compares a whole message with the pattern message `seq` was given.
fn check_whole(buf: &[u8], seq: u64, expected: &mut [u8]) -> Result<(), ChannelError> {
    fill_pattern(expected, seq);
    crate::engine::message::check_whole(buf, expected, expected, seq)
}

/// Receives message `seq`, a whole-content one, into a buffer poisoned
/// against it, and compares every byte; an end that lends is compared in
/// place and the message given back.
fn receive_whole(
    ep: &mut dyn Endpoint,
    buf: &mut [u8],
    faults: &mut Faults,
    seq: u64,
    expected: &mut [u8],
) -> Result<(), ChannelError> {
    fill_pattern(expected, seq);
    if ep.lends() {
        let lent = ep.lend()?;
        faults.apply(lent)?;
        // Its number first: lent memory holds no poison, and memory no
        // message reached is told as such.
        check_lent(lent, seq, None, seq, seq_len(lent))?;
        check_whole(lent, seq, expected)?;
        return ep.release();
    }
    poison(buf, expected);
    ep.recv(buf)?;
    faults.apply(buf)?;
    check_whole(buf, seq, expected)
}

/// Counts received messages for the test-only fault of the peer.
pub(super) struct Faults {
    pub(super) fault: Option<Fault>,
    pub(super) count: u64,
}

impl Faults {
    #[inline(always)]
    pub(super) fn apply(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
        if let Some(f) = self.fault {
            self.count += 1;
            inject(f, self.count, buf)?;
        }
        Ok(())
    }
}

/// What the receiver's timed loop found.
#[derive(Debug)]
pub(super) struct Tally {
    /// Receiver CPU ns from the first to the last boundary.
    pub(super) cpu_ns: u64,
    /// Next sequence number after the last boundary (queued).
    pub(super) next_seq: u64,
    /// Messages compared byte for byte (lossy: during the loop).
    pub(super) verified: u64,
}

/// The receiver's loop for a channel that neither loses nor reorders:
/// every message must carry the next number. `stamps[b]` gets the clock
/// right after boundary `b`'s message; it returns after boundary `last`.
#[inline(never)]
pub(super) fn queued_loop(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    faults: &mut Faults,
    board: &Board,
    first_seq: u64,
    stamps: &mut [u64],
) -> Result<Tally, ChannelError> {
    let last = stamps.len() - 1;
    let k = seq_len(region.next());
    let lend = ep.lends();
    let mut seq = first_seq;
    let mut b = 0;
    let mut cpu0 = 0;
    loop {
        if lend {
            // Read where it lies and given back: no copy the mechanism
            // does not make (lent memory holds no poison; its number must
            // be the next).
            let lent = ep.lend()?;
            faults.apply(lent)?;
            check_lent(lent, seq, None, seq, k)?;
            ep.release()?;
        } else {
            let buf = region.next();
            poison_seq(buf, seq, k);
            ep.recv(buf)?;
            faults.apply(buf)?;
            check_seq(buf, seq, k)?;
        }
        if seq == board.boundary(b).load(Ordering::Acquire) {
            // CPU time before the clock at the start, after it at the end: the
            // getrusage calls stay outside every window.
            if b == 0 {
                cpu0 = cpu_now()?;
            }
            stamps[b] = monotonic_ns();
            board.phases().store(b as u64 + 1, Ordering::Relaxed);
            if b == last {
                return Ok(Tally {
                    cpu_ns: cpu_now()? - cpu0,
                    next_seq: seq + 1,
                    verified: 0,
                });
            }
            b += 1;
        }
        seq += 1;
    }
}

/// The receiver's loop for a channel that may drop messages (a datagram
/// socket; no end that lends is lossy, so this one copies): numbers must
/// only grow; `counts[j - 1]` gets the messages received of sample `j`
/// (number in `(b_(j-1), b_j]`). A boundary whose message was lost is
/// stamped at the first later message. Numbers up to `verify` are the
/// verify messages, compared byte for byte. The number's bytes are zeroed
/// before each receive (numbers start at 1), and while verify messages are
/// due the body is poisoned against the next one's pattern.
#[inline(never)]
#[allow(clippy::too_many_arguments)]
pub(super) fn lossy_loop(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    faults: &mut Faults,
    board: &Board,
    verify: u64,
    expected: &mut [u8],
    stamps: &mut [u64],
    counts: &mut [u64],
) -> Result<Tally, ChannelError> {
    let last = stamps.len() - 1;
    let mut seen = 0u64;
    let mut b = 0;
    let mut cpu0 = 0;
    let mut verified = 0;
    loop {
        let buf = region.next();
        if seen < verify {
            // The next message is most likely the next verify message:
            // its body poisoned against that one's pattern.
            fill_pattern(expected, seen + 1);
            poison(buf, expected);
        }
        // Numbers start at 1: a 0 left is a receive that wrote nothing.
        buf[..8].fill(0);
        ep.recv(buf)?;
        faults.apply(buf)?;
        let s = u64::from_le_bytes(buf[..8].try_into().expect("lossy sizes are at least 8 B"));
        if s == 0 {
            return Err(ChannelError::NothingReceived { seq: seen + 1 });
        }
        if s <= seen {
            return Err(ChannelError::Sequence {
                expected: seen + 1,
                got: s,
            });
        }
        seen = s;
        if s <= verify {
            check_whole(buf, s, expected)?;
            verified += 1;
            board.verified().store(verified, Ordering::Relaxed);
            continue;
        }
        let mut placed = false;
        loop {
            let end = board.boundary(b).load(Ordering::Acquire);
            if end == 0 || s < end {
                break;
            }
            if b == 0 {
                cpu0 = cpu_now()?;
            }
            stamps[b] = monotonic_ns();
            board.phases().store(b as u64 + 1, Ordering::Relaxed);
            if s == end {
                // The boundary message itself belongs to the phase it ends.
                if b >= 1 {
                    counts[b - 1] += 1;
                }
                placed = true;
            }
            if b == last {
                return Ok(Tally {
                    cpu_ns: cpu_now()? - cpu0,
                    next_seq: s + 1,
                    verified,
                });
            }
            b += 1;
        }
        if !placed && b >= 1 {
            counts[b - 1] += 1;
        }
    }
}

/// The peer's role in a stream figure: [`sink`] with `plan`, on the board
/// the peer lends it.
pub fn sink_role(plan: SinkPlan) -> PeerRole {
    PeerRole::new("stream sink", move |ep, serving| {
        let mut region = Region::for_peer(serving);
        sink(
            ep,
            &mut region,
            serving.fault,
            &plan,
            &Board::new(serving.board),
        )
    })
}

/// The receiver (run by the peer): checks and counts the stream, reports on
/// the board, then waits to be stopped.
fn sink(
    ep: &mut dyn Endpoint,
    region: &mut Region,
    fault: Option<Fault>,
    plan: &SinkPlan,
    board: &Board,
) -> Result<(), ChannelError> {
    let size = region.next().len();
    let mut expected = vec![0u8; size];
    let mut faults = Faults { fault, count: 0 };
    let mut stamps = vec![0u64; plan.samples + 1];
    let mut counts = vec![0u64; plan.samples];
    let tally = if plan.lossy {
        lossy_loop(
            ep,
            region,
            &mut faults,
            board,
            plan.verify,
            &mut expected,
            &mut stamps,
            &mut counts,
        )?
    } else {
        for seq in 1..=plan.verify {
            receive_whole(ep, region.next(), &mut faults, seq, &mut expected)?;
            // Progress, for a sender that waits in vain for the report.
            board.verified().store(seq, Ordering::Relaxed);
        }
        let mut t = queued_loop(ep, region, &mut faults, board, plan.verify + 1, &mut stamps)?;
        for seq in t.next_seq..t.next_seq + plan.verify {
            receive_whole(ep, region.next(), &mut faults, seq, &mut expected)?;
        }
        t.verified = 2 * plan.verify;
        for (j, c) in counts.iter_mut().enumerate() {
            *c = board.boundary(j + 1).load(Ordering::Acquire)
                - board.boundary(j).load(Ordering::Acquire);
        }
        t
    };
    for j in 1..=plan.samples {
        board
            .window(j)
            .store(stamps[j] - stamps[j - 1], Ordering::Relaxed);
        board.count(j).store(counts[j - 1], Ordering::Relaxed);
    }
    board
        .received()
        .store(counts.iter().sum(), Ordering::Relaxed);
    board.cpu_ns().store(tally.cpu_ns, Ordering::Relaxed);
    board
        .lent()
        .store(u64::from(ep.lends() && !plan.lossy), Ordering::Relaxed);
    board.verified().store(tally.verified, Ordering::Relaxed);
    board.done().store(1, Ordering::Release);
    // The sender reads the board, then the engine stops this side.
    loop {
        interrupt::check()?;
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(test)]
mod tests {
    use super::super::board::BOARD_LEN;
    use super::*;
    use crate::engine::os::peer::BoardArea;
    use crate::sys::mem::SharedMapping;

    fn board_map() -> SharedMapping {
        SharedMapping::new_private(BOARD_LEN).unwrap()
    }

    /// The board over `map` with phase ends `ends` (warm-up, then each
    /// sample's).
    fn board_of<'a>(map: &'a SharedMapping, ends: &[u64]) -> Board<'a> {
        let board = Board::new(BoardArea {
            map,
            offset: 0,
            len: BOARD_LEN,
        });
        for (b, &end) in ends.iter().enumerate() {
            board.boundary(b).store(end, Ordering::Relaxed);
        }
        board
    }

    /// Hands out numbered messages, dropping those `drop` selects.
    struct Feed {
        next: u64,
        size: usize,
        drop: fn(u64) -> bool,
    }

    impl Endpoint for Feed {
        fn send(&mut self, _: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
            while (self.drop)(self.next) {
                self.next += 1;
            }
            fill_pattern(&mut buf[..self.size], self.next);
            self.next += 1;
            Ok(())
        }
    }

    #[test]
    fn queued_loop_stops_at_the_last_boundary_and_catches_a_gap() {
        let map = board_map();
        let board = board_of(&map, &[10, 20, 35]);
        let mut ep = Feed {
            next: 1,
            size: 16,
            drop: |_| false,
        };
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        let mut stamps = [0u64; 3];
        let t = queued_loop(
            &mut ep,
            &mut Region::warm(16),
            &mut f,
            &board,
            1,
            &mut stamps,
        )
        .unwrap();
        assert_eq!(t.next_seq, 36);
        assert!(stamps[0] <= stamps[1] && stamps[1] <= stamps[2]);

        let mut gap = Feed {
            next: 1,
            size: 16,
            drop: |s| s == 15,
        };
        let err = queued_loop(
            &mut gap,
            &mut Region::warm(16),
            &mut f,
            &board,
            1,
            &mut stamps,
        )
        .unwrap_err();
        assert!(
            matches!(err, ChannelError::Corrupt { seq: 15, .. }),
            "{err}"
        );
    }

    #[test]
    fn lossy_loop_counts_each_sample_and_survives_a_lost_boundary() {
        let map = board_map();
        let board = board_of(&map, &[10, 20, 30]);
        // Verify messages 1..=3; 12 and 13 lost; boundary 20 itself lost.
        let mut ep = Feed {
            next: 1,
            size: 16,
            drop: |s| s == 12 || s == 13 || s == 20,
        };
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        let (mut stamps, mut counts) = ([0u64; 3], [0u64; 2]);
        let mut expected = vec![0u8; 16];
        let t = lossy_loop(
            &mut ep,
            &mut Region::warm(16),
            &mut f,
            &board,
            3,
            &mut expected,
            &mut stamps,
            &mut counts,
        )
        .unwrap();
        assert_eq!(t.verified, 3);
        // Sample 1 is 11..=20 without 12, 13, 20; sample 2 is 21..=30.
        assert_eq!(counts, [7, 10]);
        assert_eq!(t.next_seq, 31);
    }

    /// A receive that writes nothing into the buffer it is given.
    struct Silent;

    impl Endpoint for Silent {
        fn send(&mut self, _: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, _: &mut [u8]) -> Result<(), ChannelError> {
            Ok(())
        }
    }

    /// Reads the one buffer the sender writes without waiting for the
    /// next message: the sender (here, every other receive) is slower.
    struct SharedRead {
        slot: Vec<u8>,
        reads: u64,
    }

    impl Endpoint for SharedRead {
        fn send(&mut self, _: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, buf: &mut [u8]) -> Result<(), ChannelError> {
            if self.reads.is_multiple_of(2) {
                fill_pattern(&mut self.slot, self.reads / 2 + 1);
            }
            self.reads += 1;
            buf.copy_from_slice(&self.slot);
            Ok(())
        }
    }

    #[test]
    fn a_receive_that_writes_nothing_or_reads_a_shared_buffer_is_caught() {
        let map = board_map();
        let board = board_of(&map, &[100, 200]);
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        for size in [1, 8, 64] {
            let mut stamps = [0u64; 2];
            // Warm or cold, whatever the buffer held before.
            for mut region in [Region::warm(size), Region::cold(size, 1 << 16)] {
                let err = queued_loop(&mut Silent, &mut region, &mut f, &board, 1, &mut stamps)
                    .unwrap_err();
                assert!(
                    matches!(err, ChannelError::NothingReceived { seq: 1 }),
                    "{size} B: {err}"
                );
            }
            let mut shared = SharedRead {
                slot: vec![0u8; size],
                reads: 0,
            };
            let err = queued_loop(
                &mut shared,
                &mut Region::warm(size),
                &mut f,
                &board,
                1,
                &mut stamps,
            )
            .unwrap_err();
            assert!(
                matches!(err, ChannelError::Corrupt { seq: 2, .. }),
                "{size} B: {err}"
            );
            // A whole-content message: every byte poisoned first.
            let mut expected = vec![0u8; size];
            let err = receive_whole(&mut Silent, &mut vec![0u8; size], &mut f, 1, &mut expected)
                .unwrap_err();
            assert!(
                matches!(
                    err,
                    ChannelError::NothingReceived { seq: 1 } | ChannelError::NotReturned { seq: 1 }
                ),
                "{size} B: {err}"
            );
        }
        // A lossy channel: numbers start at 1, and a 0 left is nothing received.
        let (mut stamps, mut counts) = ([0u64; 2], [0u64; 1]);
        let mut expected = vec![0u8; 16];
        let err = lossy_loop(
            &mut Silent,
            &mut Region::warm(16),
            &mut f,
            &board,
            3,
            &mut expected,
            &mut stamps,
            &mut counts,
        )
        .unwrap_err();
        assert!(
            matches!(err, ChannelError::NothingReceived { seq: 1 }),
            "{err}"
        );
    }

    /// A [`Feed`] that only lends: a copying receive fails, as does a loan
    /// taken while the last is still out.
    struct LendingFeed {
        feed: Feed,
        held: Vec<u8>,
        out: bool,
        released: u64,
    }

    impl Endpoint for LendingFeed {
        fn send(&mut self, _: &[u8]) -> Result<(), ChannelError> {
            Ok(())
        }
        fn recv(&mut self, _: &mut [u8]) -> Result<(), ChannelError> {
            Err(ChannelError::Setup("copied from an end that lends".into()))
        }
        fn lends(&self) -> bool {
            true
        }
        fn lend(&mut self) -> Result<&mut [u8], ChannelError> {
            if std::mem::replace(&mut self.out, true) {
                return Err(ChannelError::Setup("lent again before given back".into()));
            }
            self.feed.recv(&mut self.held)?;
            Ok(&mut self.held)
        }
        fn release(&mut self) -> Result<(), ChannelError> {
            assert!(std::mem::replace(&mut self.out, false), "nothing lent");
            self.released += 1;
            Ok(())
        }
    }

    #[test]
    fn an_end_that_lends_is_read_in_place_and_every_loan_given_back() {
        let map = board_map();
        let board = board_of(&map, &[10, 20]);
        let lending = |drop: fn(u64) -> bool| LendingFeed {
            feed: Feed {
                next: 1,
                size: 16,
                drop,
            },
            held: vec![0u8; 16],
            out: false,
            released: 0,
        };
        let mut f = Faults {
            fault: None,
            count: 0,
        };
        let mut expected = vec![0u8; 16];
        let mut ep = lending(|_| false);
        receive_whole(&mut ep, &mut [0u8; 16], &mut f, 1, &mut expected).unwrap();
        let mut stamps = [0u64; 2];
        let t = queued_loop(
            &mut ep,
            &mut Region::warm(16),
            &mut f,
            &board,
            2,
            &mut stamps,
        )
        .unwrap();
        assert_eq!((t.next_seq, ep.released), (21, 20));
        // A gap in what is lent is caught as in what is copied.
        let mut gap = lending(|s| s == 15);
        let err = queued_loop(
            &mut gap,
            &mut Region::warm(16),
            &mut f,
            &board,
            1,
            &mut stamps,
        )
        .unwrap_err();
        assert!(
            matches!(err, ChannelError::NotLent { seq: 15, got: 16 }),
            "{err}"
        );
        // A whole-content message changed on the way fails.
        let mut ep = lending(|_| false);
        ep.feed.next = 2;
        let err = receive_whole(&mut ep, &mut [0u8; 16], &mut f, 1, &mut expected).unwrap_err();
        assert!(!matches!(err, ChannelError::Setup(_)), "{err}");
    }
}
