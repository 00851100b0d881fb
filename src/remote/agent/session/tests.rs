//! The session's state machine, and the fuzz test of the decoder and the
//! message handler: at least 10⁶ random and mutated frames, no panic, and no
//! frame that is not the genuine article opens a session.

use super::*;
use crate::remote::frame::FrameBuffer;
use crate::remote::task::{Proto, Role};

const TOKEN: &[u8] = b"a shared secret";

fn peer() -> SocketAddr {
    "127.0.0.1:4242".parse().unwrap()
}

fn payload(msg: &ClientMsg) -> Vec<u8> {
    serde_json::to_vec(msg).unwrap()
}

fn hello(nonce: &str) -> ClientMsg {
    ClientMsg::Hello {
        protocol: PROTOCOL_VERSION,
        ipcmark: ipcmark_version().into(),
        client_nonce: nonce.into(),
    }
}

fn task() -> Task {
    Task {
        proto: Proto::Tcp,
        size: 64,
        role: Role::Echo,
        cpu: None,
        limit_ms: 1000,
    }
}

#[test]
fn a_session_goes_through_its_phases_with_the_right_token() {
    let (sn, cn) = (auth::nonce().unwrap(), auth::nonce().unwrap());
    let mut s = Session::new(peer(), Some(TOKEN.to_vec()), sn.clone());
    match s.on_payload(&payload(&hello(&cn)), 0) {
        Step::Reply(AgentMsg::Hello {
            auth_required: true,
            server_nonce,
            ..
        }) => assert_eq!(server_nonce, sn),
        other => panic!("{other:?}"),
    }
    let mac = auth::mac(TOKEN, Side::Client, &sn, &cn);
    let Step::Welcome(Some(theirs)) =
        s.on_payload(&payload(&ClientMsg::Auth { mac: Some(mac) }), 0)
    else {
        panic!("no welcome");
    };
    assert!(auth::verify(TOKEN, Side::Agent, &sn, &cn, &theirs));
    assert_eq!(
        s.on_payload(&payload(&ClientMsg::Clock { t1: 3 }), 9),
        Step::Clock(3, 9)
    );
    assert_eq!(
        s.on_payload(&payload(&ClientMsg::Start { task: task() }), 0),
        Step::Start(task())
    );
    assert_eq!(s.phase(), Phase::Figure);
    assert_eq!(s.on_payload(&payload(&ClientMsg::Finish), 0), Step::Finish);
    s.figure_ended();
    assert_eq!(s.phase(), Phase::Open);
    assert_eq!(s.on_payload(&payload(&ClientMsg::Bye), 0), Step::Bye);
}

#[test]
fn a_wrong_or_missing_token_and_another_version_are_refused() {
    let (sn, cn) = (auth::nonce().unwrap(), auth::nonce().unwrap());
    for mac in [Some(auth::mac(b"wrong", Side::Client, &sn, &cn)), None] {
        let mut s = Session::new(peer(), Some(TOKEN.to_vec()), sn.clone());
        s.on_payload(&payload(&hello(&cn)), 0);
        match s.on_payload(&payload(&ClientMsg::Auth { mac }), 0) {
            Step::Refuse(AgentMsg::Refused { reason, .. }, _) => {
                assert!(reason.starts_with("authentication failed"), "{reason}")
            }
            other => panic!("{other:?}"),
        }
    }
    let mut s = Session::new(peer(), None, sn);
    let other = br#"{"type":"Hello","protocol":999,"ipcmark":"9.9.9","extra":1}"#;
    match s.on_payload(other, 0) {
        Step::Refuse(
            AgentMsg::Refused {
                protocol: Some(PROTOCOL_VERSION),
                ipcmark: Some(_),
                ..
            },
            line,
        ) => assert!(
            line.contains("protocol 999 (ipcmark 9.9.9)")
                && line.contains(&format!("speaks {PROTOCOL_VERSION}")),
            "{line}"
        ),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_task_the_agent_cannot_carry_out_is_refused_and_the_session_stays_open() {
    let mut s = Session::new(peer(), None, auth::nonce().unwrap());
    s.on_payload(&payload(&hello(&auth::nonce().unwrap())), 0);
    s.on_payload(&payload(&ClientMsg::Auth { mac: None }), 0);
    for bad in [
        Task {
            limit_ms: u64::MAX,
            ..task()
        },
        Task {
            size: usize::MAX,
            ..task()
        },
        Task {
            cpu: Some(1 << 20),
            ..task()
        },
        // Its report of one stamp per message would not fit a frame.
        Task {
            role: Role::Receiver {
                messages: MAX_ONEWAY_MESSAGES + 1,
            },
            ..task()
        },
    ] {
        assert!(matches!(
            s.on_payload(&payload(&ClientMsg::Start { task: bad }), 0),
            Step::Reply(AgentMsg::Refused { .. })
        ));
        assert_eq!(s.phase(), Phase::Open);
    }
    let most = Task {
        role: Role::Receiver {
            messages: MAX_ONEWAY_MESSAGES,
        },
        ..task()
    };
    assert!(matches!(
        s.on_payload(&payload(&ClientMsg::Start { task: most }), 0),
        Step::Start(_)
    ));
}

/// The inputs of the fuzz test: valid frames of every message, and the ways
/// a frame goes wrong.
struct Fuzzer {
    rng: fastrand::Rng,
    valid: Vec<Vec<u8>>,
}

const KEYS: &[&str] = &[
    "type",
    "protocol",
    "ipcmark",
    "client_nonce",
    "mac",
    "t1",
    "task",
    "proto",
    "size",
    "role",
    "cpu",
    "limit_ms",
    "window_ms",
    "verify",
    "duration_ms",
    "messages",
];
const TYPES: &[&str] = &[
    "Hello", "Auth", "Clock", "Start", "Finish", "Bye", "Welcome", "Busy", "tcp", "udp", "echo",
    "sink",
];

impl Fuzzer {
    fn new(seed: u64, valid: Vec<Vec<u8>>) -> Fuzzer {
        Fuzzer {
            rng: fastrand::Rng::with_seed(seed),
            valid,
        }
    }

    fn json(&mut self, depth: u32) -> serde_json::Value {
        use serde_json::Value;
        let r = &mut self.rng;
        match r.u32(0..if depth > 3 { 6 } else { 8 }) {
            0 => Value::Null,
            1 => Value::Bool(r.bool()),
            2 => Value::from(r.u64(..)),
            3 => Value::from(r.i64(..)),
            4 => Value::from(r.f64() * 1e6 - 5e5),
            5 => {
                let s = TYPES[r.usize(..TYPES.len())];
                Value::from(if r.bool() {
                    s.to_string()
                } else {
                    format!("{s}{}", r.u8(..))
                })
            }
            6 => Value::Array(
                (0..self.rng.usize(0..4))
                    .map(|_| self.json(depth + 1))
                    .collect(),
            ),
            _ => {
                let mut m = serde_json::Map::new();
                if self.rng.bool() {
                    m.insert(
                        "type".into(),
                        Value::from(TYPES[self.rng.usize(..TYPES.len())]),
                    );
                }
                for _ in 0..self.rng.usize(0..5) {
                    let k = KEYS[self.rng.usize(..KEYS.len())];
                    let v = self.json(depth + 1);
                    m.insert(k.into(), v);
                }
                Value::Object(m)
            }
        }
    }

    fn framed(payload: &[u8]) -> Vec<u8> {
        let mut f = (payload.len() as u32).to_be_bytes().to_vec();
        f.extend_from_slice(payload);
        f
    }

    /// One input: a whole frame, possibly broken.
    fn next(&mut self) -> Vec<u8> {
        let base = self.valid[self.rng.usize(..self.valid.len())].clone();
        match self.rng.u32(0..10) {
            // Bit flips of a valid frame (the length prefix included).
            0..=2 => {
                let mut f = base;
                for _ in 0..self.rng.usize(1..9) {
                    let i = self.rng.usize(..f.len());
                    f[i] ^= 1 << self.rng.u32(0..8);
                }
                f
            }
            // Truncated.
            3 => base[..self.rng.usize(..base.len())].to_vec(),
            // A forged length: zero, oversized, or off by some.
            4 => {
                let mut f = base;
                let n: u32 = match self.rng.u32(0..4) {
                    0 => 0,
                    1 => frame::MAX_FRAME as u32 + 1,
                    2 => self.rng.u32(..),
                    _ => (f.len() as u32 - 4)
                        .wrapping_add(self.rng.u32(0..16))
                        .wrapping_sub(8),
                };
                f[..4].copy_from_slice(&n.to_be_bytes());
                f
            }
            // Random bytes, framed or not.
            5 => {
                let bytes: Vec<u8> = (0..self.rng.usize(0..64))
                    .map(|_| self.rng.u8(..))
                    .collect();
                if self.rng.bool() {
                    Self::framed(&bytes)
                } else {
                    bytes
                }
            }
            // Random JSON.
            6..=7 => {
                let v = self.json(0);
                Self::framed(&serde_json::to_vec(&v).unwrap())
            }
            // A valid message with one field's value swapped for another type,
            // or a field added.
            8 => {
                let mut v: serde_json::Value = serde_json::from_slice(&base[4..]).unwrap();
                if let Some(m) = v.as_object_mut() {
                    let keys: Vec<String> = m.keys().cloned().collect();
                    let k = if self.rng.bool() && !keys.is_empty() {
                        keys[self.rng.usize(..keys.len())].clone()
                    } else {
                        KEYS[self.rng.usize(..KEYS.len())].to_string()
                    };
                    let new = self.json(1);
                    m.insert(k, new);
                }
                Self::framed(&serde_json::to_vec(&v).unwrap())
            }
            // Valid as it is (so that later phases are reached).
            _ => base,
        }
    }
}

#[test]
fn a_million_random_and_mutated_frames_neither_panic_nor_open_a_session() {
    const INPUTS: u64 = 1_000_000;
    let (sn, cn) = (auth::nonce().unwrap(), auth::nonce().unwrap());
    let good_mac = auth::mac(TOKEN, Side::Client, &sn, &cn);
    let valid: Vec<Vec<u8>> = [
        hello(&cn),
        ClientMsg::Auth {
            mac: Some(good_mac.clone()),
        },
        ClientMsg::Auth { mac: None },
        ClientMsg::Clock { t1: 12345 },
        ClientMsg::Start { task: task() },
        ClientMsg::Start {
            task: Task {
                proto: Proto::Udp,
                role: Role::Sink {
                    window_ms: 10,
                    verify: 2,
                },
                cpu: Some(0),
                ..task()
            },
        },
        ClientMsg::Finish,
        ClientMsg::Bye,
    ]
    .iter()
    .map(|m| frame::encode(m).unwrap())
    .collect();
    // The valid way through the phases: Hello, the right Auth, Start, Finish.
    let path: Vec<Vec<u8>> = [0, 1, 4, 6]
        .iter()
        .map(|&i| valid[i][4..].to_vec())
        .collect();
    let mut fuzz = Fuzzer::new(0x1bc0_ffee, valid);
    let mut fed = 0u64;
    let (mut decoded, mut phases) = (0u64, [0u64; 5]);
    let mut session = Session::new(peer(), Some(TOKEN.to_vec()), sn.clone());
    while fed < INPUTS {
        let input = fuzz.next();
        fed += 1;
        if frame::decode::<ClientMsg>(&input).is_ok() {
            decoded += 1;
        }
        let mut buffer = FrameBuffer::default();
        buffer.push(&input);
        let Ok(Some(p)) = buffer.next_payload() else {
            continue;
        };
        phases[session.phase() as usize] += 1;
        match session.on_payload(&p, 0) {
            Step::Welcome(mac) => {
                // Only the genuine MAC (in any hex case) opens the session.
                let Ok(ClientMsg::Auth { mac: Some(sent) }) =
                    frame::decode_payload::<ClientMsg>(&p)
                else {
                    panic!(
                        "a session opened without a MAC: {:?}",
                        String::from_utf8_lossy(&p)
                    );
                };
                assert_eq!(auth::unhex(&sent), auth::unhex(&good_mac));
                assert!(auth::verify(TOKEN, Side::Agent, &sn, &cn, &mac.unwrap()));
            }
            Step::Refuse(..) | Step::Bye => {
                // A new session, taken by valid frames (fed and counted
                // too) to a phase drawn at random, so that every phase
                // meets the broken frames.
                session = Session::new(peer(), Some(TOKEN.to_vec()), sn.clone());
                let target = fuzz.rng.usize(0..5);
                for p in &path[..target.min(path.len())] {
                    session.on_payload(p, 0);
                    fed += 1;
                }
            }
            // The report came (or, every other time, is still on its way).
            Step::Finish if fed.is_multiple_of(2) => session.figure_ended(),
            Step::Finish => {}
            Step::Reply(_) | Step::Clock(..) | Step::Start(_) => {}
        }
    }
    assert!(fed >= INPUTS);
    // The mix reached every phase and decoded some, so it tested something.
    assert!(
        decoded > 0 && phases.iter().all(|&n| n > 0),
        "{decoded} {phases:?}"
    );
}
