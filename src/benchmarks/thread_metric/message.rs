//! `thread-metric-message`: one thread (priority 10) sends a 16-byte message
//! to a POSIX message queue and receives it back, compares all 16 bytes,
//! changes the last word, and counts. The queue holds one message and does
//! not block: a full queue on send or an empty one on receive means a
//! message was lost or kept, and a different message means it was
//! corrupted; each fails the figure. The queue's name is removed as soon as
//! it is open, so nothing is left behind on any path.

use crate::engine::models::score::{ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body};
use crate::sys::posix_ipc::{MessageQueue, mq_unlink};

/// The message processing test.
pub struct Message;

/// Bytes per message, as in Thread-Metric (four 32-bit words).
const SIZE: usize = 16;

/// Thread-Metric's first message.
const WORDS: [u32; 4] = [0x1111_2222, 0x3333_4444, 0x5555_6666, 0x7777_8888];

fn encode(words: &[u32; 4]) -> [u8; SIZE] {
    let mut m = [0u8; SIZE];
    for (chunk, w) in m.chunks_exact_mut(4).zip(words) {
        chunk.copy_from_slice(&w.to_le_bytes());
    }
    m
}

impl Scored for Message {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-message",
            summary: "a 16-byte message sent to and received from one POSIX queue by one thread (Thread-Metric message processing)",
            group: super::GROUP,
            operation: "one 16-byte message sent and received (mq_send / mq_receive)",
            is_baseline: false,
            needs_fifo: false,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, ctx: &ScoreContext) -> Result<ScoreTest, String> {
        let (name, q) = ctx
            .names
            .create_named("tm-mq", |name| {
                MessageQueue::create(&format!("/{name}"), 1, SIZE)
            })
            .map_err(|e| format!("mq_open: {e}"))?;
        mq_unlink(&format!("/{name}")).map_err(|e| format!("mq_unlink: {e}"))?;
        q.set_nonblocking()
            .map_err(|e| format!("mq_setattr: {e}"))?;
        Ok(ScoreTest {
            threads: vec![ThreadSpec {
                name: "thread 0",
                priority: 10,
                ready: true,
                body: body(move |b| {
                    let mut words = WORDS;
                    let mut received = [0u8; SIZE];
                    loop {
                        b.running()?;
                        let sent = encode(&words);
                        q.send(&sent).map_err(|e| format!("mq_send: {e}"))?;
                        let n = q
                            .receive(&mut received)
                            .map_err(|e| format!("mq_receive: {e}"))?;
                        if n != SIZE || received != sent {
                            return Err(format!(
                                "received {:02x?} ({n} bytes), sent {sent:02x?}",
                                &received[..n.min(SIZE)]
                            )
                            .into());
                        }
                        words[3] = words[3].wrapping_add(1);
                        b.count(0);
                    }
                }),
            }],
            counters: &["thread 0"],
            score: &[0],
            routine: None,
            check: None,
        })
    }
}
