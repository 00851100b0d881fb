//! `rhealstone-message-latency`: Rhealstone's intertask message latency. The
//! measuring thread sends an 8-byte message (its sequence number) on a POSIX
//! message queue to a helper one priority above it, blocked in `mq_receive`;
//! the helper preempts it, checks the number, acknowledges and blocks again.
//! The baseline is the same `mq_send` and `mq_receive` done by one thread on
//! a second queue, with no wake-up and no switch; what remains is the
//! message's way from one thread to the other.
//!
//! Both queues are unlinked as soon as they are open: nothing is left
//! behind whatever happens to the run.

use super::{GROUP, Helpers, realtime, until};
use crate::benchmarks::sched::{SWITCH_SOURCE, shared_cpu};
use crate::engine::channel::{ChannelError, expect_len, retry};
use crate::engine::op::{
    Counter, Events, KernelCall, Op, OpContext, OpInfo, Operation, Prepared, RealTime,
};
use crate::sys::posix_ipc::{MessageQueue, mq_unlink};
use crate::sys::seccomp::calls;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const MQ_SEND: KernelCall = KernelCall {
    name: "mq_timedsend",
    nrs: calls::MQ_TIMEDSEND,
};

/// Bytes per message: a sequence number.
const MSG: usize = 8;

/// Marks the message that tells the receiver to stop.
const STOP: u64 = u64::MAX;

/// A message to a higher-priority thread blocked on a POSIX queue.
pub struct MessageLatency;

/// A queue, unlinked at once (the descriptor keeps it alive).
fn anonymous_queue(ctx: &OpContext) -> Result<MessageQueue, ChannelError> {
    let (name, q) = ctx
        .names
        .create_named("rh-mq", |name| {
            MessageQueue::create(&format!("/{name}"), 4, MSG)
        })
        .map_err(ChannelError::io("mq_open"))?;
    mq_unlink(&format!("/{name}")).map_err(ChannelError::io("mq_unlink"))?;
    Ok(q)
}

impl Operation for MessageLatency {
    fn info(&self) -> OpInfo {
        OpInfo {
            id: "rhealstone-message-latency",
            summary: "an 8-byte POSIX mq message to a higher-priority SCHED_FIFO thread blocked on it (send and receive in one thread subtracted)",
            group: GROUP,
            bytes: MSG,
            enters: &[MQ_SEND],
            avoids: &[],
        }
    }

    fn events(&self) -> Option<Events> {
        Some(Events {
            name: "message",
            per_op: 1,
        })
    }

    fn realtime(&self) -> Option<RealTime> {
        Some(realtime(
            "the receiver does not preempt the sender: the figure includes waiting for the scheduler to run it",
        ))
    }

    fn prepare(&self, ctx: &OpContext) -> Result<Prepared, ChannelError> {
        let cpu = shared_cpu(ctx)?;
        let queue = Arc::new(anonymous_queue(ctx)?);
        let own = anonymous_queue(ctx)?;
        let ack = Arc::new(AtomicU64::new(0));
        let mut helpers = Helpers::new();
        let stop = helpers.stop_flag();
        let (q, a) = (queue.clone(), ack.clone());
        helpers.spawn("receiver", cpu, ctx.rt_priority.map(|p| p + 1), move || {
            let mut buf = [0u8; MSG];
            while !stop.load(Ordering::Relaxed) {
                // The run's signals are blocked here: only a message ends the wait.
                match q.receive(&mut buf) {
                    Ok(MSG) => {
                        let v = u64::from_le_bytes(buf);
                        if v != STOP {
                            a.store(v, Ordering::Release);
                        }
                    }
                    Ok(_) => a.store(STOP, Ordering::Release),
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => return,
                }
            }
        })?;
        let q = queue.clone();
        helpers.on_stop(move || {
            let _ = q.send_timeout(&STOP.to_le_bytes(), Duration::from_millis(1));
        });
        Ok(Prepared {
            op: Box::new(MessageOp {
                queue,
                ack,
                seq: 0,
                baseline: SelfMessage { queue: own, seq: 0 },
                fifo: ctx.rt_priority.is_some(),
                helpers,
            }),
            note: Some(format!(
                "receiver on CPU {cpu}{}",
                ctx.rt_priority.map_or(String::new(), |p| format!(
                    " at SCHED_FIFO {}, sender at {p}",
                    p + 1
                ))
            )),
        })
    }
}

struct MessageOp {
    queue: Arc<MessageQueue>,
    ack: Arc<AtomicU64>,
    seq: u64,
    baseline: SelfMessage,
    fifo: bool,
    helpers: Helpers,
}

impl Op for MessageOp {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        self.seq += 1;
        let seq = self.seq;
        retry("mq_send", || self.queue.send(&seq.to_le_bytes()))?;
        let ack = &self.ack;
        until("receiving thread", || ack.load(Ordering::Acquire) >= seq)?;
        let got = ack.load(Ordering::Acquire);
        if got != seq {
            return Err(ChannelError::Sequence { expected: seq, got });
        }
        Ok(())
    }

    fn counter(&mut self) -> Result<Option<Counter>, ChannelError> {
        // Under SCHED_FIFO the receiver blocks again after every message.
        if !self.fifo {
            return Ok(None);
        }
        Ok(Some(Counter {
            source: SWITCH_SOURCE,
            value: self.helpers.switches(0)?,
            per_op: 1,
        }))
    }

    fn baseline(&mut self) -> Option<&mut dyn Op> {
        Some(&mut self.baseline)
    }
}

/// The same send and receive by one thread on its own queue.
struct SelfMessage {
    queue: MessageQueue,
    seq: u64,
}

impl Op for SelfMessage {
    #[inline]
    fn run(&mut self) -> Result<(), ChannelError> {
        self.seq += 1;
        let seq = self.seq;
        retry("mq_send", || self.queue.send(&seq.to_le_bytes()))?;
        let mut buf = [0u8; MSG];
        let n = retry("mq_receive", || self.queue.receive(&mut buf))?;
        expect_len(MSG, n)?;
        let got = u64::from_le_bytes(buf);
        if got != seq {
            return Err(ChannelError::Sequence { expected: seq, got });
        }
        Ok(())
    }
}
