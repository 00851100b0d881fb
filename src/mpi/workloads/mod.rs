//! The OpenSSI study's three workloads across the ranks of an MPI job
//! (`ipcmark workload NAME --engine mpi`, docs/cluster.md): the same
//! settings, checks and records as the local workloads (`crate::workloads`),
//! with MPI messages or an MPI window in place of pipes, semaphores and
//! shared memory. One file per workload.
//!
//! Every rank runs every run: where the ranks are ([`super::ranks::gather`]),
//! a barrier, its role, then its figures gathered on rank 0, which alone
//! returns the [`RunRecord`]. Which rank plays which role is a *cast*: the
//! ranks `--place` names, one per role in the workload's order
//! ([`MpiWorkload::seats`]), one configuration each, or by default rank
//! order ([`MpiWorkload::default_cast`]); the launcher's mapping (`--map-by`,
//! rankfiles, hostfiles) decides which node each rank runs on. The ranks
//! without a role in a configuration wait for its runs to end asleep
//! ([`Job::settle`]), so they take no CPU from the ranks that work.
//! A rank that fails or waits past the time-out prints one line and ends
//! the job (`MPI_Abort`): its peers would otherwise wait for it forever.

mod generator_calculator;
mod philosophers;
mod shared_counter;

use super::ranks::{self, RankPlace};
use crate::engine::os::group::MemberReport;
use crate::sys::clock::monotonic_ns;
use crate::workloads::{Params, Place, ProcessRecord, RunRecord};
use mpi::collective::{CommunicatorCollectives as _, Root as _};
use mpi::datatype::Equivalence;
use mpi::point_to_point::{Destination as _, Source as _};
use mpi::topology::{Color, Communicator, Rank, SimpleCommunicator};
use std::time::Duration;

/// Figures every rank reports after a run, in this order; the last
/// [`COUNTERS`] are the workload's own counters.
const STATS: usize = 9;
const COUNTERS: usize = STATS - 3;
/// Index in a rank's [`Stats`] of the operations it did, its own time, and
/// its CPU at the end (+1; 0 for unknown).
const OPS: usize = 0;
const TIME: usize = 1;
const CPU_END: usize = 2;

/// One rank's figures for rank 0.
type Stats = [u64; STATS];

/// Tags of a hand-off (`--handoff`): the role's state, its acknowledgement.
const STATE: i32 = 13;
const ACK: i32 = 14;

/// The application-level hand-offs (`--handoff`) one rank made of its
/// role: MPI cannot move a process, so a role's state is sent to a spare
/// rank, which acknowledges it. Shared by every workload that hands a role
/// on, so that each is timed and reported alike.
#[derive(Default)]
struct Handoffs {
    count: u64,
    total_ns: u64,
    max_ns: u64,
}

/// A rank's hand-off counters, in the order [`Handoffs::counters`] gives.
const HANDOFF_COUNTERS: [&str; 3] = ["handoffs", "handoff_ns", "handoff_max_ns"];

impl Handoffs {
    /// Hands the role's `state` to rank `to` and waits for its
    /// acknowledgement, which echoes `state[0]` (`what` names that word in
    /// a message). Timed from sending the state to receiving the
    /// acknowledgement, nothing else: the receiver's check is part of it,
    /// as it is part of taking the role over.
    fn hand(&mut self, job: &Job, to: usize, state: &[u64], what: &str) -> Result<(), String> {
        let t = monotonic_ns();
        job.send(to, STATE, state);
        let mut ack = [0u64; 1];
        job.recv(to, ACK, &mut ack, "hand-off acknowledgement")?;
        let took = monotonic_ns() - t;
        if ack[0] != state[0] {
            return Err(format!(
                "rank {}: rank {to} acknowledged the hand-off at {what} {}, expected {}",
                job.rank, ack[0], state[0]
            ));
        }
        self.count += 1;
        self.total_ns += took;
        self.max_ns = self.max_ns.max(took);
        Ok(())
    }

    /// Receives a role's state from rank `from` (the receiver checks it,
    /// then calls [`Handoffs::acknowledge`]).
    fn receive(job: &Job, from: usize, state: &mut [u64]) -> Result<(), String> {
        job.recv(from, STATE, state, "handed state")
    }

    /// Acknowledges the state received from rank `from`, echoing its first
    /// word.
    fn acknowledge(job: &Job, from: usize, state: &[u64]) {
        job.send(from, ACK, &state[..1]);
    }

    /// The counters for rank 0, as [`HANDOFF_COUNTERS`] names them.
    fn counters(&self) -> [u64; 3] {
        [self.count, self.total_ns, self.max_ns]
    }
}

/// What a message along a [`Rotation`] is, in its last but one word.
const TAKE_OVER: u64 = 0;
const FINISHED: u64 = 1;

/// A role's rotation under `--handoff`: the ranks that play it in turn,
/// the first from the start. A message along it is the role's state
/// followed by two words: [`TAKE_OVER`] or [`FINISHED`], and for the end
/// the position of the rank where the role ended, so that the news goes
/// round once and every waiting rank stops.
struct Rotation<'a> {
    ring: &'a [usize],
    /// This rank's position in `ring`.
    pos: usize,
    prev: usize,
    next: usize,
}

impl<'a> Rotation<'a> {
    /// `rank`'s view of `ring` (a rank not in it is taken as its first).
    fn new(ring: &'a [usize], rank: usize) -> Rotation<'a> {
        let len = ring.len();
        let pos = ring.iter().position(|&r| r == rank).unwrap_or(0);
        Rotation {
            ring,
            pos,
            prev: ring[(pos + len - 1) % len],
            next: ring[(pos + 1) % len],
        }
    }

    /// Whether this rank plays the role from the start.
    fn first(&self) -> bool {
        self.pos == 0
    }

    /// Whether hand-off number `turn` (from 1) gives the role to this rank.
    fn is_turn(&self, turn: u64) -> bool {
        turn % self.ring.len() as u64 == self.pos as u64
    }

    /// Waits for the role from the previous rank: true with its state in
    /// `msg` (two words longer than the state), false when the role has
    /// ended (passed on to the next rank unless it knows already).
    fn wait(&self, job: &Job, msg: &mut [u64]) -> Result<bool, String> {
        Handoffs::receive(job, self.prev, msg)?;
        let n = msg.len();
        match msg[n - 2] {
            TAKE_OVER => Ok(true),
            FINISHED => {
                if self.ring[msg[n - 1] as usize % self.ring.len()] != self.next {
                    job.send(self.next, STATE, msg);
                }
                Ok(false)
            }
            other => Err(format!(
                "rank {}: rank {} sent hand-off message kind {other}",
                job.rank, self.prev
            )),
        }
    }

    /// Hands the role's `state` to the next rank, timed in `handoffs`.
    fn hand(
        &self,
        job: &Job,
        handoffs: &mut Handoffs,
        state: &[u64],
        what: &str,
    ) -> Result<(), String> {
        let msg: Vec<u64> = state.iter().copied().chain([TAKE_OVER, 0]).collect();
        handoffs.hand(job, self.next, &msg, what)
    }

    /// The role ended on this rank: tells the rest of the rotation.
    fn finish(&self, job: &Job, state: &[u64]) {
        if self.ring.len() > 1 {
            let msg: Vec<u64> = state
                .iter()
                .copied()
                .chain([FINISHED, self.pos as u64])
                .collect();
            job.send(self.next, STATE, &msg);
        }
    }
}

/// The rotation of role `i` of `roles` (their ranks): its rank, then every
/// `roles.len()`-th spare starting with the `i`-th, so that the spares are
/// dealt in turn to the roles and no rank is ever asked to play two.
fn rotation(roles: &[usize], spares: &[usize], i: usize) -> Vec<usize> {
    let mut ranks = vec![roles[i]];
    ranks.extend(spares.iter().skip(i).step_by(roles.len()));
    ranks
}

/// The hand-offs of `ranks` whose [`Handoffs::counters`] start at counter
/// `at` of their [`Stats`]: their number and the run's metrics (count, mean
/// and longest, each hand-off counted once, by the rank that handed on).
fn handoff_metrics(all: &[Stats], ranks: &[usize], at: usize) -> (u64, [(&'static str, f64); 3]) {
    let c = STATS - COUNTERS + at;
    let count: u64 = ranks.iter().map(|&r| all[r][c]).sum();
    let total: u64 = ranks.iter().map(|&r| all[r][c + 1]).sum();
    let max = ranks.iter().map(|&r| all[r][c + 2]).max().unwrap_or(0);
    let mean = if count > 0 {
        total as f64 / count as f64
    } else {
        0.0
    };
    (
        count,
        [
            ("handoffs", count as f64),
            ("handoff_mean_ns", mean),
            ("handoff_max_ns", max as f64),
        ],
    )
}

/// A workload across MPI ranks, with its settings resolved and checked.
///
/// A *cast* is the rank playing each of its roles, in the order of
/// [`MpiWorkload::seats`]; every rank of a cast takes part in the run's
/// start barrier ([`Job::barrier`]), the others only idle.
pub trait MpiWorkload {
    /// Ranks the job needs at least for the default cast.
    fn min_ranks(&self) -> usize;
    /// The roles a cast of `n` ranks names, in order (for messages and
    /// the report: "generator", "calculator").
    fn seats(&self, n: usize) -> Vec<String>;
    /// The cast without `--place`: the roles in rank order.
    fn default_cast(&self, size: usize) -> Vec<usize>;
    /// Whether `cast` (ranks already checked to exist) suits the workload:
    /// its length and which ranks may play two roles. One line if not.
    fn check_cast(&self, cast: &[usize]) -> Result<(), String>;
    /// What each of `size` ranks does under `cast`, in rank order ("idle"
    /// when nothing).
    fn roles(&self, cast: &[usize], size: usize) -> Vec<String>;
    /// The ranks whose figures are the workload's processes, in order.
    fn workers(&self, cast: &[usize]) -> Vec<usize>;
    /// The resolved settings, for the JSON report.
    fn parameters(&self) -> serde_json::Value;
    /// The fixed length of a run, for workloads whose figure is a count.
    fn duration(&self) -> Option<Duration>;
    /// How long a receive spins before it sleeps between looks: as long as
    /// MPI's own blocking receive would for a workload that waits for quick
    /// answers, none for one whose ranks wait long and share CPUs.
    fn spin(&self) -> Duration {
        Duration::from_millis(1)
    }
    /// One run under `cast`, on every rank; `Some` on rank 0 only.
    fn run(&self, job: &Job, cast: &[usize]) -> Result<Option<RunRecord>, String>;
}

/// `cast` has no rank twice: `what` names the workload for the message.
fn distinct(cast: &[usize], what: &str) -> Result<(), String> {
    for (i, r) in cast.iter().enumerate() {
        if cast[..i].contains(r) {
            return Err(format!(
                "rank {r} is named twice: {what} gives each role a rank of its own"
            ));
        }
    }
    Ok(())
}

/// `cast` has exactly the `n` ranks `w`'s roles need.
fn cast_len(w: &dyn MpiWorkload, cast: &[usize], n: usize) -> Result<(), String> {
    if cast.len() == n {
        Ok(())
    } else {
        Err(format!(
            "{} rank(s) given; a placement names {n}, one per role in this order: {}",
            cast.len(),
            w.seats(n).join(", ")
        ))
    }
}

/// The casts of `--place`'s placements (each a list of ranks) for a job of
/// `size` ranks, or the default cast without any: every rank within the
/// job, suiting the workload, and every cast of the same length (the
/// report's processes are one list). An error is a usage error, one line
/// naming the placement.
pub fn casts(
    w: &dyn MpiWorkload,
    placements: &[Vec<usize>],
    size: usize,
) -> Result<Vec<Vec<usize>>, String> {
    if placements.is_empty() {
        return Ok(vec![w.default_cast(size)]);
    }
    for cast in placements {
        let what = format!("--place '{}'", show_ranks(cast));
        if let Some(r) = cast.iter().find(|&&r| r >= size) {
            return Err(format!(
                "{what}: no rank {r} in a job of {size} ranks (0 to {})",
                size - 1
            ));
        }
        w.check_cast(cast).map_err(|e| format!("{what}: {e}"))?;
        if cast.len() != placements[0].len() {
            return Err(format!(
                "{what}: names {} ranks, the first placement {}; every placement of one command names the same roles",
                cast.len(),
                placements[0].len()
            ));
        }
    }
    Ok(placements.to_vec())
}

/// Ranks as `--place` writes them: `0,2`.
pub fn show_ranks(ranks: &[usize]) -> String {
    ranks
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Resolves workload `id`'s settings (the local workload's own rules) for
/// `size` ranks, with a hand-off every `handoff` operations. An error is a
/// usage error, one line.
pub fn prepare(
    id: &str,
    params: &Params,
    handoff: Option<u64>,
    size: usize,
) -> Result<Box<dyn MpiWorkload>, String> {
    let w: Box<dyn MpiWorkload> = match id {
        "generator-calculator" => Box::new(generator_calculator::prepare(params, handoff)?),
        "shared-counter" => Box::new(shared_counter::prepare(params, handoff)?),
        "philosophers" => Box::new(philosophers::prepare(params, handoff)?),
        other => return Err(format!("{other} has no run across MPI ranks")),
    };
    if size < w.min_ranks() {
        let n = w.min_ranks();
        return Err(format!(
            "{id} --engine mpi needs {n} ranks here, the job has {size}: mpirun -n {n} ipcmark workload {id} --engine mpi (see docs/cluster.md for the roles)"
        ));
    }
    Ok(w)
}

/// The job as one run sees it.
pub struct Job {
    world: SimpleCommunicator,
    /// This rank.
    pub rank: usize,
    /// Ranks in the job.
    pub size: usize,
    /// The longest any wait on a peer may last.
    pub timeout: Duration,
    /// How long a receive spins before sleeping ([`MpiWorkload::spin`]).
    pub spin: Duration,
    /// The ranks of the configuration's cast ([`Job::cast`]), which alone
    /// meet at the start barrier; `None` on the others.
    team: Option<SimpleCommunicator>,
}

impl Job {
    /// The job of `MPI_COMM_WORLD` (MPI initialised), its receives spinning
    /// for 1 ms before they sleep.
    pub fn new(timeout: Duration) -> Job {
        let world = SimpleCommunicator::world();
        Job {
            rank: world.rank() as usize,
            size: world.size() as usize,
            world,
            timeout,
            spin: Duration::from_millis(1),
            team: None,
        }
    }

    /// Sets the ranks of the next configuration's cast (collective: every
    /// rank calls it with the same cast, outside any timed part).
    pub fn cast(&mut self, cast: &[usize]) {
        let color = if cast.contains(&self.rank) {
            Color::with_value(0)
        } else {
            Color::undefined()
        };
        self.team = self.world.split_by_color(color);
    }

    /// Every rank's place (collective).
    fn places(&self) -> Vec<RankPlace> {
        ranks::gather()
    }

    /// Waits for every rank of the cast: the start of a run's timed part.
    /// Only the cast's ranks call it; a blocking barrier, since they start
    /// working as soon as it opens. (Without a cast, nothing to wait for.)
    fn barrier(&self) {
        if let Some(team) = &self.team {
            team.barrier();
        }
    }

    /// Waits for every rank of the job, asleep: `MPI_Ibarrier`, tested
    /// every `pause`. Every rank calls it at the end of a run, so the
    /// ranks without a role (and those done early) sleep through the run
    /// instead of polling in a blocking collective, which would take the
    /// CPU from the ranks still working. A collective every rank reaches:
    /// a rank that dies ends the job through mpirun.
    /// `pause` is the sleep between tests (zero: spin).
    fn settle(&self, pause: Duration) {
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => return,
                Err(r) => {
                    req = r;
                    if pause.is_zero() {
                        std::hint::spin_loop();
                    } else {
                        std::thread::sleep(pause);
                    }
                }
            }
        }
    }

    /// Sends `buf` to `to` with `tag` (standard mode, as `MPI_Send`).
    fn send<T: Equivalence>(&self, to: usize, tag: i32, buf: &[T]) {
        self.world
            .process_at_rank(to as Rank)
            .send_with_tag(buf, tag);
    }

    /// Receives into `buf` from `from` with `tag`, failing past the
    /// time-out: `MPI_Iprobe` until the message is there (spinning for
    /// [`Job::spin`], as MPI's own blocking receive would, then sleeping
    /// 20 µs between looks, to leave the CPU to the ranks that work), then
    /// `MPI_Recv`. A message of another length is an error.
    fn recv<T: Equivalence>(
        &self,
        from: usize,
        tag: i32,
        buf: &mut [T],
        what: &str,
    ) -> Result<(), String> {
        let peer = self.world.process_at_rank(from as Rank);
        let start = monotonic_ns();
        let spin_ns = self.spin.as_nanos() as u64;
        let limit = self.timeout.as_nanos() as u64;
        let status = loop {
            if let Some(s) = peer.immediate_probe_with_tag(tag) {
                break s;
            }
            let waited = monotonic_ns() - start;
            if waited > limit {
                return Err(format!(
                    "rank {}: no {what} from rank {from} within {} s (--timeout)",
                    self.rank,
                    self.timeout.as_secs_f64()
                ));
            }
            if waited > spin_ns {
                std::thread::sleep(Duration::from_micros(20));
            } else {
                std::hint::spin_loop();
            }
        };
        let count = status.count(T::equivalent_datatype()) as usize;
        if count != buf.len() {
            return Err(format!(
                "rank {}: {what} from rank {from} has {count} items, expected {}",
                self.rank,
                buf.len()
            ));
        }
        peer.receive_into_with_tag(buf, tag);
        Ok(())
    }

    /// Every rank's [`Stats`], on rank 0 (collective), once every rank has
    /// finished its part of the run, waiting asleep ([`Job::settle`]).
    fn gather(&self, mine: &Stats) -> Vec<Stats> {
        self.settle(Duration::from_millis(1));
        self.collect(mine)
    }

    /// [`Job::gather`] for a rank other ranks still need: it keeps calling
    /// MPI while it waits (MPI's passive-target progress happens there).
    fn gather_serving(&self, mine: &Stats) -> Vec<Stats> {
        self.settle(Duration::ZERO);
        self.collect(mine)
    }

    fn collect(&self, mine: &Stats) -> Vec<Stats> {
        let root = self.world.process_at_rank(0);
        if self.rank == 0 {
            let mut all = vec![0u64; STATS * self.size];
            root.gather_into_root(&mine[..], &mut all[..]);
            all.chunks(STATS)
                .map(|c| {
                    let mut s = [0; STATS];
                    s.copy_from_slice(c);
                    s
                })
                .collect()
        } else {
            root.gather_into(&mine[..]);
            Vec::new()
        }
    }
}

/// A rank's figures: its operations, its time since `start` (ns) and its
/// counters, with the CPU it ends on.
fn stats(ops: u64, start: u64, counters: &[u64]) -> Stats {
    let mut s = [0; STATS];
    s[OPS] = ops;
    s[TIME] = monotonic_ns().saturating_sub(start);
    s[CPU_END] = crate::sys::sched::current_cpu().map_or(0, |c| c as u64 + 1);
    for (d, &c) in s[STATS - COUNTERS..].iter_mut().zip(counters) {
        *d = c;
    }
    s
}

/// The places of a run in the workloads' terms, each rank with its role.
fn places(raw: &[RankPlace], roles: &[String]) -> Vec<Place> {
    let nodes = ranks::nodes(raw);
    raw.iter()
        .map(|p| Place {
            rank: p.rank as usize,
            role: roles
                .get(p.rank as usize)
                .cloned()
                .unwrap_or_else(|| "idle".into()),
            host: p.host.clone(),
            node: nodes.iter().position(|n| *n == p.host).unwrap_or(0),
            pid: p.pid,
            allowed_cpus: p.allowed_cpus.clone(),
            cpu: p.cpu,
        })
        .collect()
}

/// The record of the process on `rank`, from its place and its figures;
/// `names` label its counters. ipcmark pins nothing, so nothing was placed.
fn process(
    role: &str,
    rank: usize,
    place: &RankPlace,
    s: &Stats,
    names: &[&'static str],
) -> ProcessRecord {
    let cpu_end = s[CPU_END].checked_sub(1).map(|c| c as usize);
    let mut seen: Vec<usize> = [place.cpu, cpu_end].into_iter().flatten().collect();
    seen.dedup();
    let counters: Vec<u64> = s[STATS - COUNTERS..].to_vec();
    ProcessRecord {
        role: role.to_string(),
        rank: Some(rank),
        counters: names.iter().zip(&counters).map(|(&n, &v)| (n, v)).collect(),
        report: MemberReport {
            cpu_placed: None,
            cpu_start: place.cpu,
            cpu_end,
            cpus_seen: seen,
            migrations: 0,
            migration_misses: 0,
            ops: s[OPS],
            time_ns: s[TIME],
            counters,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_few_ranks_and_misplaced_options_are_refused_in_one_line() {
        let p = Params::default();
        let e = prepare("generator-calculator", &p, Some(10), 2)
            .err()
            .unwrap();
        assert!(e.contains("needs 3 ranks here, the job has 2"), "{e}");
        assert!(e.contains("mpirun -n 3"), "{e}");
        let e = prepare("philosophers", &p, Some(10), 6).err().unwrap();
        assert!(e.contains("needs 11 ranks here"), "{e}");
        let e = prepare("shared-counter", &p, Some(10), 3).err().unwrap();
        assert!(e.contains("needs 4 ranks here"), "{e}");
        assert!(prepare("shared-counter", &p, None, 2).is_ok());
        let quick = Params {
            eat: Some(Duration::ZERO),
            ..Params::default()
        };
        let e = prepare("philosophers", &quick, None, 5).err().unwrap();
        assert!(e.contains("needs 6 ranks"), "{e}");
        assert!(!e.contains('\n'));
    }

    #[test]
    fn placements_are_checked_against_the_job_and_the_workload() {
        let p = Params::default();
        let w = prepare("generator-calculator", &p, None, 3).unwrap();
        let w = w.as_ref();
        assert_eq!(casts(w, &[], 3).unwrap(), [vec![0, 1]]);
        let two = casts(w, &[vec![0, 1], vec![0, 2]], 3).unwrap();
        assert_eq!(two, [vec![0, 1], vec![0, 2]]);
        let err = |p: &[Vec<usize>]| casts(w, p, 3).unwrap_err();
        let e = err(&[vec![0, 3]]);
        assert_eq!(e, "--place '0,3': no rank 3 in a job of 3 ranks (0 to 2)");
        assert!(err(&[vec![2, 2]]).contains("rank 2 is named twice"));
        assert!(err(&[vec![0]]).contains("one per role in this order: generator, calculator"));
        let w = prepare("generator-calculator", &p, Some(5), 4).unwrap();
        let e = casts(w.as_ref(), &[vec![0, 1, 2], vec![0, 1, 2, 3]], 4).unwrap_err();
        assert!(e.contains("names the same roles"), "{e}");
        let w = prepare("philosophers", &p, None, 6).unwrap();
        assert!(casts(w.as_ref(), &[vec![5, 0, 1, 2, 3, 4]], 6).is_ok());
        assert!(!e.contains('\n'));
    }

    #[test]
    fn places_number_nodes_by_first_appearance_and_name_roles() {
        let at = |rank: i32, host: &str| RankPlace {
            rank,
            host: host.into(),
            pid: 10 + rank as u32,
            allowed_cpus: vec![0, 1],
            cpu: Some(rank as usize % 2),
        };
        let raw = [at(0, "b"), at(1, "a"), at(2, "b")];
        let roles = vec!["generator".to_string(), "calculator".to_string()];
        let p = places(&raw, &roles);
        assert_eq!(p.iter().map(|p| p.node).collect::<Vec<_>>(), [0, 1, 0]);
        assert_eq!(p[2].role, "idle");
        assert_eq!(p[1].host, "a");
        let mut s = [0u64; STATS];
        s[OPS] = 7;
        s[CPU_END] = 2;
        s[STATS - COUNTERS] = 99;
        let r = process("calculator", 1, &raw[1], &s, &["computed_elements"]);
        assert_eq!(r.rank, Some(1));
        assert_eq!(r.report.ops, 7);
        assert_eq!(r.report.cpu_end, Some(1));
        assert_eq!(r.report.cpu_placed, None);
        assert_eq!(r.counters, vec![("computed_elements", 99)]);
    }
}
