//! `thread-metric-memory`: one thread (priority 10) allocates 128 bytes and
//! frees them, and counts. Thread-Metric allocates from an RTOS memory pool;
//! here the pool is the process's allocator (`malloc` / `free` through Rust's
//! global allocator). The allocation is fallible (`try_reserve_exact`), so a
//! failure fails the figure, and the block's address goes through
//! `black_box`, so the pair cannot be optimised away.

use crate::engine::models::score::{ScoreContext, ScoreInfo, ScoreTest, Scored, ThreadSpec, body};
use std::hint::black_box;

/// The memory allocation test.
pub struct Memory;

/// Bytes per allocation, as in Thread-Metric.
const BLOCK: usize = 128;

impl Scored for Memory {
    fn info(&self) -> ScoreInfo {
        ScoreInfo {
            id: "thread-metric-memory",
            summary: "allocation and release of 128 bytes by one thread (Thread-Metric memory allocation)",
            group: super::GROUP,
            operation: "one 128-byte allocation and release (malloc / free)",
            is_baseline: false,
            needs_fifo: false,
            fifo_priority: super::fifo_priority,
        }
    }

    fn prepare(&self, _ctx: &ScoreContext) -> Result<ScoreTest, String> {
        Ok(ScoreTest {
            threads: vec![ThreadSpec {
                name: "thread 0",
                priority: 10,
                ready: true,
                body: body(|b| {
                    loop {
                        b.running()?;
                        let mut block: Vec<u8> = Vec::new();
                        block
                            .try_reserve_exact(BLOCK)
                            .map_err(|e| format!("allocate {BLOCK} bytes: {e}"))?;
                        if block.capacity() < BLOCK {
                            return Err(format!(
                                "allocated {} bytes, not {BLOCK}",
                                block.capacity()
                            )
                            .into());
                        }
                        black_box(block.as_mut_ptr());
                        drop(black_box(block));
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
