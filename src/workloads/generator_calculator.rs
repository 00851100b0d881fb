//! `generator-calculator`: the study's pipe test.
//!
//! A generator process sends vectors of natural numbers over one pipe; a
//! calculator squares every element and sends the vector of results back over
//! a second pipe; the generator checks every result before it sends the next
//! vector. The figure is the time the whole exchange takes.
//!
//! One operation is one vector there and back. A message is an 8-byte header
//! (operation number, element count, both little-endian u32) followed by the
//! elements as little-endian u32: numbers from 1 to 65 535, so every square
//! fits in 32 bits and a result message is as long as its question.

use super::common;
use super::{
    Fault, Headline, Opt, Params, Prepared, ProcessRecord, RunContext, RunError, RunRecord,
    Workload, WorkloadInfo,
};
use crate::engine::channel::{ChannelError, read_full, write_full};
use crate::engine::os::group::Member;
use crate::sys::clock::monotonic_ns;
use std::io::{PipeReader, PipeWriter};
use std::time::Duration;

/// The generator and the calculator.
pub struct GeneratorCalculator;

/// The study's first case: 1 element, 100 000 operations.
const DEFAULT_VECTOR: usize = 1;
const DEFAULT_OPS: u64 = 100_000;
/// Largest vector: 16 Mi elements, a 64 MiB message each way.
pub const MAX_VECTOR: usize = 1 << 24;
const HEADER: usize = 8;
/// Largest element value; elements are 1..=MAX_ELEMENT.
const MAX_ELEMENT: u64 = 65_535;

const GENERATOR_COUNTERS: [&str; 2] = ["verified_elements", "reply_wait_ns"];
const CALCULATOR_COUNTERS: [&str; 1] = ["computed_elements"];

impl Workload for GeneratorCalculator {
    fn info(&self) -> WorkloadInfo {
        WorkloadInfo {
            id: "generator-calculator",
            summary: "a generator sends vectors of natural numbers over a pipe, a calculator returns their squares over a second pipe, every result checked; total time",
            operation: "vector",
            headline: Headline::Time,
            options: &[Opt::Vector, Opt::Ops],
            faults: &[Fault::Corrupt],
        }
    }

    fn prepare(&self, p: &Params) -> Result<Box<dyn Prepared>, String> {
        Ok(Box::new(Exchange::resolve(p)?))
    }
}

/// Resolved settings, shared with the run across MPI ranks
/// (`mpi::workloads`).
pub struct Exchange {
    /// Elements per vector.
    pub vector: usize,
    /// Vectors sent.
    pub ops: u64,
    /// Test fault: the calculator corrupts one element.
    pub corrupt: bool,
}

impl Exchange {
    /// The defaults applied and the limits checked; an error is a usage error.
    pub fn resolve(p: &Params) -> Result<Exchange, String> {
        let vector = p.vector.unwrap_or(DEFAULT_VECTOR);
        let ops = p.ops.unwrap_or(DEFAULT_OPS);
        if !(1..=MAX_VECTOR).contains(&vector) {
            return Err(format!(
                "--vector {vector}: from 1 to {MAX_VECTOR} elements"
            ));
        }
        if ops == 0 {
            return Err("--ops 0: at least one operation".into());
        }
        Ok(Exchange {
            vector,
            ops,
            corrupt: p.fault == Some(Fault::Corrupt),
        })
    }

    /// Bytes of one message, question or answer.
    pub fn message_bytes(&self) -> usize {
        HEADER + 4 * self.vector
    }

    /// A fresh generator state for [`Exchange::fill_question`].
    pub fn seed() -> u64 {
        0x9E37_79B9_7F4A_7C15
    }

    /// Writes operation `op`'s question into `question` (message_bytes long),
    /// its elements drawn from the generator state `x`.
    pub fn fill_question(&self, question: &mut [u8], op: u64, x: &mut u64) {
        put_u32(question, 0, op as u32);
        put_u32(question, 4, self.vector as u32);
        for j in 0..self.vector {
            *x ^= *x << 13;
            *x ^= *x >> 7;
            *x ^= *x << 17;
            put_u32(question, HEADER + 4 * j, (*x % MAX_ELEMENT + 1) as u32);
        }
    }

    /// The calculator's work: every element of the message in `buf`
    /// replaced by its square, in place (the header is kept).
    pub fn compute(&self, buf: &mut [u8], op: u64) {
        for j in 0..self.vector {
            let at = HEADER + 4 * j;
            let v = get_u32(buf, at);
            put_u32(buf, at, v.wrapping_mul(v));
        }
        if self.corrupt && op == self.ops / 2 {
            buf[HEADER] ^= 1;
        }
    }

    /// Checks operation `op`'s answer against its question: the header and
    /// every element's square.
    pub fn check_answer(&self, question: &[u8], answer: &[u8], op: u64) -> Result<(), String> {
        if get_u32(answer, 0) != op as u32 || get_u32(answer, 4) != self.vector as u32 {
            return Err(format!(
                "operation {}: the answer is headed operation {} with {} elements",
                op + 1,
                get_u32(answer, 0) as u64 + 1,
                get_u32(answer, 4)
            ));
        }
        for j in 0..self.vector {
            let at = HEADER + 4 * j;
            let (v, r) = (get_u32(question, at), get_u32(answer, at));
            if r != v * v {
                return Err(format!(
                    "operation {}: element {} came back {r}, expected {v}² = {}",
                    op + 1,
                    j + 1,
                    v * v
                ));
            }
        }
        Ok(())
    }
}

impl Prepared for Exchange {
    fn roles(&self) -> Vec<String> {
        vec!["generator".into(), "calculator".into()]
    }

    fn parameters(&self) -> serde_json::Value {
        serde_json::json!({
            "vector": self.vector,
            "ops": self.ops,
            "element_bytes": 4,
            "message_bytes": self.message_bytes(),
        })
    }

    fn duration(&self) -> Option<Duration> {
        None
    }

    fn run(&self, ctx: &RunContext) -> Result<RunRecord, RunError> {
        let roles = self.roles();
        let pipe = || std::io::pipe().map_err(|e| RunError::Failed(format!("pipe: {e}")));
        let (question_rx, question_tx) = pipe()?;
        let (answer_rx, answer_tx) = pipe()?;
        let mut ends = Some((question_tx, answer_rx, question_rx, answer_tx));
        let group = common::spawn(ctx, &roles, move |m| {
            // Each process keeps only its own two ends and closes the others,
            // so that either side sees end-of-file if the other dies.
            let (q_tx, a_rx, q_rx, a_tx) = ends.take().expect("each process runs its body once");
            if m.index() == 0 {
                drop((q_rx, a_tx));
                self.generator(m, q_tx, a_rx)
            } else {
                drop((q_tx, a_rx));
                self.calculator(m, q_rx, a_tx)
            }
        })?;
        // The closure, and with it the parent's copies of the pipe ends, is
        // gone once spawn returns.
        // The longest one vector may take: 64 MiB through a pipe each way is
        // well under a second; allow for a slow machine.
        let longest = Duration::from_secs(1) + Duration::from_nanos(self.vector as u64 * 100);
        let report = common::finish(group, ctx, &roles, None, longest)?;
        let total_ops = report.members[0].ops;
        if total_ops != self.ops {
            return Err(RunError::Failed(format!(
                "the generator reported {total_ops} operations, expected {}",
                self.ops
            )));
        }
        let elapsed = report.elapsed_ns;
        let verified = report.members[0].counters[0];
        let metrics = vec![
            ("time_ns", elapsed as f64),
            ("per_op_ns", elapsed as f64 / self.ops as f64),
            ("verified_elements", verified as f64),
        ];
        Ok(RunRecord {
            elapsed_ns: elapsed,
            stopped_after_ns: None,
            figure: elapsed as f64,
            processes: report
                .members
                .into_iter()
                .zip(roles)
                .enumerate()
                .map(|(i, (r, role))| {
                    let names: &[&'static str] = if i == 0 {
                        &GENERATOR_COUNTERS
                    } else {
                        &CALCULATOR_COUNTERS
                    };
                    ProcessRecord {
                        role,
                        rank: None,
                        counters: names
                            .iter()
                            .enumerate()
                            .map(|(c, &name)| (name, r.counters[c]))
                            .collect(),
                        report: r,
                    }
                })
                .collect(),
            metrics,
            places: Vec::new(),
        })
    }
}

fn put_u32(buf: &mut [u8], at: usize, v: u32) {
    buf[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn get_u32(buf: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

impl Exchange {
    /// Sends every vector, waits for its results and checks each one.
    fn generator(
        &self,
        m: &mut Member,
        mut tx: PipeWriter,
        mut rx: PipeReader,
    ) -> Result<(), ChannelError> {
        let len = self.message_bytes();
        let mut question = vec![0u8; len];
        let mut answer = vec![0u8; len];
        let mut x = Exchange::seed();
        let (mut verified, mut wait_ns) = (0u64, 0u64);
        for op in 0..self.ops {
            m.before_op(op)?;
            self.fill_question(&mut question, op, &mut x);
            write_full(&mut tx, &question)?;
            let sent = monotonic_ns();
            read_full(&mut rx, &mut answer)?;
            wait_ns += monotonic_ns() - sent;
            self.check_answer(&question, &answer, op)
                .map_err(ChannelError::Check)?;
            verified += self.vector as u64;
        }
        m.set_ops(self.ops);
        m.set_counter(0, verified);
        m.set_counter(1, wait_ns);
        Ok(())
    }

    /// Answers every vector with the squares of its elements.
    fn calculator(
        &self,
        m: &mut Member,
        mut rx: PipeReader,
        mut tx: PipeWriter,
    ) -> Result<(), ChannelError> {
        let mut buf = vec![0u8; self.message_bytes()];
        let mut computed = 0u64;
        for op in 0..self.ops {
            m.before_op(op)?;
            read_full(&mut rx, &mut buf)?;
            self.compute(&mut buf, op);
            computed += self.vector as u64;
            write_full(&mut tx, &buf)?;
        }
        m.set_ops(self.ops);
        m.set_counter(0, computed);
        Ok(())
    }
}
