//! The kernel's binary trace buffer as read from `per_cpu/cpuN/trace_pipe_raw`:
//! each event's format (field offsets from its `format` file) and the ring
//! buffer's pages (a page header, then events each with a 32-bit header of
//! type and time delta, as libtraceevent's `kbuffer.c` reads them). The text
//! `trace` file prints a nanosecond clock in microseconds, too coarse for a
//! round trip of a few of them; the binary pages keep the nanoseconds.

use std::collections::HashMap;

/// What a decoded event says, for the kinds the anatomy of a round trip reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// `raw_syscalls:sys_enter`: the current task enters system call `id`.
    SysEnter { id: i64 },
    /// `raw_syscalls:sys_exit`: the current task leaves system call `id`.
    SysExit { id: i64 },
    /// `sched:sched_waking`: `pid` is being woken (from the waker's context).
    Waking { pid: i32, target_cpu: i32 },
    /// `sched:sched_wakeup`: `pid` is on `target_cpu`'s run queue.
    Wakeup { pid: i32, target_cpu: i32 },
    /// `sched:sched_switch`: `prev_pid` leaves the CPU (still runnable when
    /// `prev_runnable`: preempted), `next_pid` runs (0: the idle task).
    Switch {
        prev_pid: i32,
        prev_runnable: bool,
        /// Stopped (`T`: a stop signal; `t`: a tracer) rather than asleep.
        prev_stopped: bool,
        next_pid: i32,
    },
    /// `sched:sched_process_fork`: `parent` made `child` (a process or a
    /// thread; the op anatomy names an operation's children by it).
    Fork { parent: i32, child: i32 },
    /// An interrupt handler, softirq or IPI vector begins on this CPU.
    IrqEntry,
    /// The matching end.
    IrqExit,
    /// `power:cpu_idle`: this CPU enters idle state `state`, or leaves
    /// idle ([`IDLE_EXIT`]).
    Idle { state: u32 },
    /// Any other enabled event (an IPI sent, …): counted, not timed.
    Other,
}

/// `power:cpu_idle`'s state when a CPU leaves idle (`PWR_EVENT_EXIT`).
pub const IDLE_EXIT: u32 = u32::MAX;

/// The words events name things by (a task's command, an interrupt's
/// name), each kept once: an event holds its word's index, so events stay
/// small and `Copy`. Index 0 is the empty word (an event that names nothing).
#[derive(Debug, Clone)]
pub struct Labels {
    words: Vec<String>,
    index: HashMap<String, u32>,
}

impl Default for Labels {
    fn default() -> Labels {
        Labels {
            words: vec![String::new()],
            index: HashMap::from([(String::new(), 0)]),
        }
    }
}

impl Labels {
    /// The index of `word`, added if new.
    pub fn intern(&mut self, word: &str) -> u32 {
        if let Some(&i) = self.index.get(word) {
            return i;
        }
        let i = self.words.len() as u32;
        self.words.push(word.to_string());
        self.index.insert(word.to_string(), i);
        i
    }

    /// The word at `i` ("" for 0 or an index not given out).
    pub fn word(&self, i: u32) -> &str {
        self.words.get(i as usize).map_or("", String::as_str)
    }
}

/// The softirqs by vector number, as the kernel's `softirq_to_name`.
const SOFTIRQS: [&str; 10] = [
    "HI", "TIMER", "NET_TX", "NET_RX", "BLOCK", "IRQ_POLL", "TASKLET", "SCHED", "HRTIMER", "RCU",
];

/// One event of the trace, on the instance's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceEvent {
    /// Timestamp, ns (CLOCK_MONOTONIC with trace_clock `mono`).
    pub ts_ns: u64,
    /// The CPU whose buffer held it.
    pub cpu: usize,
    /// The task current when it fired (`common_pid`; a thread's id).
    pub pid: i32,
    /// What it says.
    pub kind: EventKind,
    /// The word it names ([`Labels`]): the task switched in or woken, the
    /// interrupt entered ("irq 24 virtio0-input.0", "softirq TIMER",
    /// "local_timer"); 0 for none.
    pub label: u32,
    /// The priority of the task it names (the task switched in, the task
    /// woken) in the kernel's numbering: 0–99 real-time, 100–139 normal,
    /// the lower the sooner it runs; [`NO_PRIO`] where it names none.
    pub prio: i16,
}

/// [`TraceEvent::prio`] of an event that names no task's priority.
pub const NO_PRIO: i16 = -1;

impl TraceEvent {
    /// An event that names no word and no priority (`label` 0,
    /// [`NO_PRIO`]): what a test's trace is mostly made of.
    pub fn new(ts_ns: u64, cpu: usize, pid: i32, kind: EventKind) -> TraceEvent {
        TraceEvent {
            ts_ns,
            cpu,
            pid,
            kind,
            label: 0,
            prio: NO_PRIO,
        }
    }
}

/// One field of an event's format: offset and size in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Field {
    offset: usize,
    size: usize,
}

/// How to read one event id's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decoder {
    SysEnter {
        id: Field,
    },
    SysExit {
        id: Field,
    },
    Waking {
        pid: Field,
        cpu: Field,
        comm: Option<Field>,
        prio: Option<Field>,
    },
    Wakeup {
        pid: Field,
        cpu: Field,
    },
    Switch {
        prev: Field,
        state: Field,
        next: Field,
        comm: Option<Field>,
        prio: Option<Field>,
    },
    Fork {
        parent: Field,
        child: Field,
    },
    /// An interrupt entered: a handler (its number and name), a softirq
    /// (its vector) or an x86 vector (the event's own name, interned).
    IrqEntry(IrqSource),
    IrqExit,
    Idle {
        state: Field,
    },
    Other,
}

/// Where an interrupt's name comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
enum IrqSource {
    Handler { irq: Field, name: Field },
    Softirq { vec: Field },
    Vector(u32),
    Unnamed,
}

/// The formats of the enabled events, by their numeric id.
#[derive(Debug, Clone, Default)]
pub struct Formats {
    by_id: HashMap<u16, Decoder>,
    /// The words the decoded events name.
    pub labels: Labels,
}

/// The `ID:` and the fields of one `format` file.
fn parse_format(text: &str) -> Option<(u16, HashMap<String, Field>)> {
    let mut id = None;
    let mut fields = HashMap::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("ID:") {
            id = v.trim().parse().ok();
        } else if let Some(rest) = line.strip_prefix("field:") {
            let mut parts = rest.split(';').map(str::trim);
            let decl = parts.next()?;
            let name = decl.rsplit(' ').next()?.split('[').next()?.to_string();
            let mut offset = None;
            let mut size = None;
            for p in parts {
                if let Some(v) = p.strip_prefix("offset:") {
                    offset = v.parse().ok();
                } else if let Some(v) = p.strip_prefix("size:") {
                    size = v.parse().ok();
                }
            }
            if let (Some(offset), Some(size)) = (offset, size) {
                fields.insert(name, Field { offset, size });
            }
        }
    }
    Some((id?, fields))
}

impl Formats {
    /// Adds the event `system:name` whose `format` file is `text`; an
    /// event the anatomy does not time is kept as [`EventKind::Other`].
    pub fn add(&mut self, system: &str, name: &str, text: &str) -> Result<(), String> {
        let (id, fields) =
            parse_format(text).ok_or_else(|| format!("{system}:{name}: format has no ID"))?;
        let field = |f: &str| {
            fields
                .get(f)
                .copied()
                .ok_or_else(|| format!("{system}:{name}: format has no field {f}"))
        };
        let decoder = match (system, name) {
            ("raw_syscalls", "sys_enter") => Decoder::SysEnter { id: field("id")? },
            ("raw_syscalls", "sys_exit") => Decoder::SysExit { id: field("id")? },
            ("sched", "sched_waking") => Decoder::Waking {
                pid: field("pid")?,
                cpu: field("target_cpu")?,
                comm: fields.get("comm").copied(),
                prio: fields.get("prio").copied(),
            },
            ("sched", "sched_wakeup") => Decoder::Wakeup {
                pid: field("pid")?,
                cpu: field("target_cpu")?,
            },
            ("sched", "sched_switch") => Decoder::Switch {
                prev: field("prev_pid")?,
                state: field("prev_state")?,
                next: field("next_pid")?,
                comm: fields.get("next_comm").copied(),
                prio: fields.get("next_prio").copied(),
            },
            ("power", "cpu_idle") => Decoder::Idle {
                state: field("state")?,
            },
            ("sched", "sched_process_fork") => Decoder::Fork {
                parent: field("parent_pid")?,
                child: field("child_pid")?,
            },
            ("irq", "irq_handler_entry") => Decoder::IrqEntry(IrqSource::Handler {
                irq: field("irq")?,
                name: field("name")?,
            }),
            ("irq", "softirq_entry") => {
                Decoder::IrqEntry(IrqSource::Softirq { vec: field("vec")? })
            }
            (_, n) if is_interrupt(system, n) && n.ends_with("_entry") => {
                let word = self.labels.intern(n.trim_end_matches("_entry"));
                Decoder::IrqEntry(if system == "irq_vectors" {
                    IrqSource::Vector(word)
                } else {
                    IrqSource::Unnamed
                })
            }
            (_, n) if is_interrupt(system, n) && n.ends_with("_exit") => Decoder::IrqExit,
            _ => Decoder::Other,
        };
        self.by_id.insert(id, decoder);
        Ok(())
    }
}

/// Whether the `*_entry`/`*_exit` pair `system:name` bounds time a CPU
/// spends in an interrupt or softirq that interferes: every `irq` event and
/// x86's vectors (the local timer, irq_work, …) but the IPIs that carry a
/// wake-up itself (reschedule, call-function), which are the wake-up's own
/// cost, not interference.
pub fn is_interrupt(system: &str, name: &str) -> bool {
    match system {
        "irq" => true,
        "irq_vectors" => !name.starts_with("reschedule") && !name.starts_with("call_function"),
        _ => false,
    }
}

fn read_int(data: &[u8], f: Field) -> Option<i64> {
    let b = data.get(f.offset..f.offset + f.size)?;
    Some(match f.size {
        1 => b[0] as i8 as i64,
        2 => i16::from_le_bytes(b.try_into().ok()?) as i64,
        4 => i32::from_le_bytes(b.try_into().ok()?) as i64,
        8 => i64::from_le_bytes(b.try_into().ok()?),
        _ => return None,
    })
}

/// The event in `data` (its record, common fields first), or `None` for an
/// id not in `formats` or a record too short for its fields.
/// A fixed `char[N]` field as text, up to its first NUL.
fn read_str(data: &[u8], f: Field) -> Option<&str> {
    let b = data.get(f.offset..f.offset + f.size)?;
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    std::str::from_utf8(&b[..end]).ok()
}

/// A `__data_loc char[]` field as text: its word holds the string's
/// offset (low 16 bits) and length (high 16) within the record.
fn read_data_loc(data: &[u8], f: Field) -> Option<&str> {
    let loc = u32::from_le_bytes(data.get(f.offset..f.offset + 4)?.try_into().ok()?);
    let (at, len) = ((loc & 0xffff) as usize, (loc >> 16) as usize);
    read_str(
        data,
        Field {
            offset: at,
            size: len,
        },
    )
}

/// The event in `data` (its record, common fields first), the word it
/// names (interned in `labels`) and the priority of the task it names, or
/// `None` for an id not in `formats` or a record too short for its fields.
fn decode_record(
    by_id: &HashMap<u16, Decoder>,
    labels: &mut Labels,
    data: &[u8],
) -> Option<(i32, EventKind, u32, i16)> {
    let id = u16::from_le_bytes(data.get(0..2)?.try_into().ok()?);
    let pid = i32::from_le_bytes(data.get(4..8)?.try_into().ok()?);
    let mut label = 0;
    // A priority outside the kernel's range is not one.
    let priority = |f: &Option<Field>| {
        f.and_then(|f| read_int(data, f))
            .and_then(|p| i16::try_from(p).ok())
            .filter(|p| (0..=139).contains(p))
            .unwrap_or(NO_PRIO)
    };
    let mut prio = NO_PRIO;
    let kind = match by_id.get(&id)? {
        Decoder::SysEnter { id } => EventKind::SysEnter {
            id: read_int(data, *id)?,
        },
        Decoder::SysExit { id } => EventKind::SysExit {
            id: read_int(data, *id)?,
        },
        Decoder::Waking {
            pid,
            cpu,
            comm,
            prio: p,
        } => {
            if let Some(name) = comm.and_then(|f| read_str(data, f)) {
                label = labels.intern(name);
            }
            prio = priority(p);
            EventKind::Waking {
                pid: read_int(data, *pid)? as i32,
                target_cpu: read_int(data, *cpu)? as i32,
            }
        }
        Decoder::Wakeup { pid, cpu } => EventKind::Wakeup {
            pid: read_int(data, *pid)? as i32,
            target_cpu: read_int(data, *cpu)? as i32,
        },
        Decoder::Switch {
            prev,
            state,
            next,
            comm,
            prio: p,
        } => EventKind::Switch {
            prev_pid: read_int(data, *prev)? as i32,
            // TASK_RUNNING is 0; the preempted flag (TASK_REPORT_MAX) is
            // above the state bits and also means still runnable.
            prev_runnable: read_int(data, *state)? & 0xff == 0,
            // The state's report bit: T (stopped) 0x4, t (traced) 0x8.
            prev_stopped: read_int(data, *state)? & 0xc != 0,
            next_pid: {
                if let Some(name) = comm.and_then(|f| read_str(data, f)) {
                    label = labels.intern(name);
                }
                prio = priority(p);
                read_int(data, *next)? as i32
            },
        },
        Decoder::Fork { parent, child } => EventKind::Fork {
            parent: read_int(data, *parent)? as i32,
            child: read_int(data, *child)? as i32,
        },
        Decoder::IrqEntry(source) => {
            label = match source {
                IrqSource::Handler { irq, name } => {
                    let n = read_int(data, *irq)?;
                    match read_data_loc(data, *name) {
                        Some(name) => labels.intern(&format!("irq {n} {name}")),
                        None => labels.intern(&format!("irq {n}")),
                    }
                }
                IrqSource::Softirq { vec } => {
                    let v = read_int(data, *vec)?;
                    match SOFTIRQS.get(v as usize) {
                        Some(name) => labels.intern(&format!("softirq {name}")),
                        None => labels.intern(&format!("softirq {v}")),
                    }
                }
                IrqSource::Vector(word) => *word,
                IrqSource::Unnamed => 0,
            };
            EventKind::IrqEntry
        }
        Decoder::IrqExit => EventKind::IrqExit,
        Decoder::Idle { state } => EventKind::Idle {
            state: read_int(data, *state)? as u32,
        },
        Decoder::Other => EventKind::Other,
    };
    Some((pid, kind, label, prio))
}

/// Size of the page header before the events: the timestamp (8 bytes) and
/// the commit word (a `local_t`, 8 bytes on a 64-bit kernel).
const PAGE_HEADER: usize = 16;
/// The commit word's bits that hold the page's data length.
const COMMIT_MASK: u64 = (1 << 27) - 1;
/// Set in the commit word when events were lost before this page.
const MISSED_EVENTS: u64 = 1 << 31;
/// Set when the count of the events lost is stored after the data.
const MISSED_STORED: u64 = 1 << 30;

/// What one page gave.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct PageOutcome {
    /// Events decoded (of ids in the formats).
    pub events: usize,
    /// Events the kernel says were lost before this page (1 where it says
    /// some were but not how many).
    pub missed: u64,
}

/// Decodes one page of `per_cpu/cpu{cpu}/trace_pipe_raw` into `out`.
pub fn decode_page(
    page: &[u8],
    cpu: usize,
    formats: &mut Formats,
    out: &mut Vec<TraceEvent>,
) -> PageOutcome {
    let mut outcome = PageOutcome::default();
    if page.len() < PAGE_HEADER {
        return outcome;
    }
    let mut ts = u64::from_le_bytes(page[0..8].try_into().expect("8 bytes"));
    let commit = u64::from_le_bytes(page[8..16].try_into().expect("8 bytes"));
    let size = ((commit & COMMIT_MASK) as usize).min(page.len() - PAGE_HEADER);
    let data = &page[PAGE_HEADER..PAGE_HEADER + size];
    if commit & MISSED_EVENTS != 0 {
        outcome.missed = if commit & MISSED_STORED != 0 {
            page.get(PAGE_HEADER + size..PAGE_HEADER + size + 8)
                .map_or(1, |b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
                .max(1)
        } else {
            1
        };
    }
    let word = |at: usize| -> Option<u32> {
        Some(u32::from_le_bytes(data.get(at..at + 4)?.try_into().ok()?))
    };
    let mut at = 0usize;
    while let Some(header) = word(at) {
        let type_len = header & 0x1f;
        let delta = (header >> 5) as u64;
        at += 4;
        match type_len {
            // Padding: its length follows; a zero delta ends the page.
            29 => {
                let Some(len) = word(at) else { break };
                if delta == 0 {
                    break;
                }
                at += len as usize;
            }
            // Time extend: 59 bits of delta.
            30 => {
                let Some(high) = word(at) else { break };
                ts += ((high as u64) << 27) + delta;
                at += 4;
            }
            // An absolute timestamp.
            31 => {
                let Some(high) = word(at) else { break };
                ts = ((high as u64) << 27) + delta;
                at += 4;
            }
            _ => {
                ts += delta;
                let (start, len) = if type_len == 0 {
                    let Some(len) = word(at) else { break };
                    (at + 4, (len as usize).saturating_sub(4).next_multiple_of(4))
                } else {
                    (at, type_len as usize * 4)
                };
                let Some(record) = data.get(start..start + len) else {
                    break;
                };
                if let Some((pid, kind, label, prio)) =
                    decode_record(&formats.by_id, &mut formats.labels, record)
                {
                    out.push(TraceEvent {
                        label,
                        prio,
                        ..TraceEvent::new(ts, cpu, pid, kind)
                    });
                    outcome.events += 1;
                }
                at = start + len;
            }
        }
    }
    outcome
}

/// The lost events in a per-CPU `stats` file: its "overrun" (overwritten)
/// and "dropped events" (refused when full) counts.
pub fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "overrun" | "dropped events")
                .then(|| v.trim().parse::<u64>().ok())
                .flatten()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    const SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
        \tfield:pid_t prev_pid;\toffset:24;\tsize:4;\tsigned:1;\n\
        \tfield:long prev_state;\toffset:32;\tsize:8;\tsigned:1;\n\
        \tfield:pid_t next_pid;\toffset:56;\tsize:4;\tsigned:1;\n\
        \tfield:int next_prio;\toffset:60;\tsize:4;\tsigned:1;\n";
    const ENTER: &str = "name: sys_enter\nID: 443\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\
        \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n";

    const FORK: &str = "name: sched_process_fork\nID: 366\nformat:\n\
        \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
        \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
        \tfield:__data_loc char[] parent_comm;\toffset:8;\tsize:4;\tsigned:0;\n\
        \tfield:pid_t parent_pid;\toffset:12;\tsize:4;\tsigned:1;\n\
        \tfield:__data_loc char[] child_comm;\toffset:16;\tsize:4;\tsigned:0;\n\
        \tfield:pid_t child_pid;\toffset:20;\tsize:4;\tsigned:1;\n";

    fn formats() -> Formats {
        let mut f = Formats::default();
        f.add("sched", "sched_process_fork", FORK).unwrap();
        f.add("sched", "sched_switch", SWITCH).unwrap();
        f.add("raw_syscalls", "sys_enter", ENTER).unwrap();
        f.add("irq_vectors", "local_timer_entry", "ID: 165\n")
            .unwrap();
        f
    }

    fn record(id: u16, pid: i32, len: usize) -> Vec<u8> {
        let mut r = vec![0u8; len];
        r[0..2].copy_from_slice(&id.to_le_bytes());
        r[4..8].copy_from_slice(&pid.to_le_bytes());
        r
    }

    fn push_event(data: &mut Vec<u8>, delta: u32, rec: &[u8]) {
        assert!(rec.len().is_multiple_of(4));
        let words = rec.len() / 4;
        if words <= 28 {
            data.extend((words as u32 | (delta << 5)).to_le_bytes());
        } else {
            data.extend((delta << 5).to_le_bytes());
            data.extend((rec.len() as u32 + 4).to_le_bytes());
        }
        data.extend(rec);
    }

    fn page(ts: u64, data: &[u8], commit_flags: u64) -> Vec<u8> {
        let mut p = ts.to_le_bytes().to_vec();
        p.extend((data.len() as u64 | commit_flags).to_le_bytes());
        p.extend(data);
        p.resize(4096, 0);
        p
    }

    #[test]
    fn a_page_gives_its_events_with_their_fields_and_times() {
        let mut sw = record(372, 10, 64);
        sw[24..28].copy_from_slice(&10i32.to_le_bytes());
        sw[32..40].copy_from_slice(&1i64.to_le_bytes());
        sw[56..60].copy_from_slice(&0i32.to_le_bytes());
        sw[60..64].copy_from_slice(&120i32.to_le_bytes());
        let mut enter = record(443, 10, 16);
        enter[8..16].copy_from_slice(&202i64.to_le_bytes());
        let mut data = Vec::new();
        push_event(&mut data, 5, &enter);
        // A time extend of 1 << 27 + 3 ns.
        data.extend((30u32 | (3 << 5)).to_le_bytes());
        data.extend(1u32.to_le_bytes());
        // sched_switch is 64 bytes: 16 words, a short header.
        push_event(&mut data, 7, &sw);
        // An unknown id is skipped, a long record (over 28 words) read.
        push_event(&mut data, 1, &record(999, 1, 120));
        push_event(&mut data, 2, &record(165, 0, 8));
        let mut out = Vec::new();
        let o = decode_page(&page(1000, &data, 0), 1, &mut formats(), &mut out);
        assert_eq!(
            o,
            PageOutcome {
                events: 3,
                missed: 0
            }
        );
        assert_eq!(
            out[0],
            TraceEvent {
                ts_ns: 1005,
                cpu: 1,
                pid: 10,
                kind: EventKind::SysEnter { id: 202 },
                label: 0,
                prio: NO_PRIO,
            }
        );
        assert_eq!(out[1].ts_ns, 1005 + (1 << 27) + 3 + 7);
        assert_eq!(
            out[1].kind,
            EventKind::Switch {
                prev_pid: 10,
                prev_runnable: false,
                prev_stopped: false,
                next_pid: 0
            }
        );
        // The task switched in: the idle task, at its priority.
        assert_eq!(out[1].prio, 120);
        assert_eq!(out[2].ts_ns, out[1].ts_ns + 3);
        assert_eq!(out[2].kind, EventKind::IrqEntry);
    }

    #[test]
    fn a_fork_names_its_parent_and_child() {
        let mut fork = record(366, 10, 24);
        fork[12..16].copy_from_slice(&10i32.to_le_bytes());
        fork[20..24].copy_from_slice(&11i32.to_le_bytes());
        let mut data = Vec::new();
        push_event(&mut data, 4, &fork);
        let mut out = Vec::new();
        decode_page(&page(0, &data, 0), 0, &mut formats(), &mut out);
        assert_eq!(
            out[0].kind,
            EventKind::Fork {
                parent: 10,
                child: 11
            }
        );
    }

    #[test]
    fn a_page_says_when_events_were_lost_before_it() {
        let mut data = Vec::new();
        push_event(&mut data, 1, &record(165, 0, 8));
        let mut p = page(0, &data, MISSED_EVENTS | MISSED_STORED);
        p[16 + data.len()..16 + data.len() + 8].copy_from_slice(&42u64.to_le_bytes());
        let o = decode_page(&p, 0, &mut formats(), &mut Vec::new());
        assert_eq!(o.missed, 42);
        let o = decode_page(
            &page(0, &data, MISSED_EVENTS),
            0,
            &mut formats(),
            &mut Vec::new(),
        );
        assert_eq!(o.missed, 1);
    }

    #[test]
    fn stats_count_overruns_and_drops() {
        let text = "entries: 5\noverrun: 3\ncommit overrun: 0\nbytes: 10\n\
                    oldest event ts: 1.0\ndropped events: 4\nread events: 7\n";
        assert_eq!(lost_in_stats(text), 7);
    }
}
