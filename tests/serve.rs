//! `ipcmark serve`, the agent: its control protocol as a client sees it,
//! driven over raw sockets (frames written by hand) and through the hidden
//! `ipcmark agent-check`, which opens one session with the client's code.
//! The agent is an ipcmark process, so every test holds `serial()`.

use crate::util::*;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Child, Output};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A running agent, killed if the test ends before it does.
pub(crate) struct Served {
    child: Option<Child>,
    pub(crate) addr: SocketAddr,
    log: Arc<Mutex<String>>,
}

impl Served {
    /// Starts `ipcmark serve --listen 127.0.0.1:0` with `extra` options and
    /// reads the address it bound from its first line:
    /// `ipcmark serve: listening on ADDR (…)`.
    pub(crate) fn start(sb: &Sandbox, extra: &[&str]) -> Served {
        let mut argv = vec!["serve", "--listen", "127.0.0.1:0"];
        argv.extend_from_slice(extra);
        Served::spawn(sb.cmd(&argv))
    }

    /// Starts the agent `cmd` makes (`ipcmark serve …`, stderr piped), as
    /// [`Served::start`] does.
    pub(crate) fn spawn(mut cmd: std::process::Command) -> Served {
        let mut child = cmd.spawn().expect("spawn ipcmark serve");
        let log = Arc::new(Mutex::new(String::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let mut l = sink.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        });
        let mut served = Served {
            child: Some(child),
            addr: "0.0.0.0:0".parse().unwrap(),
            log,
        };
        assert!(
            eventually(Duration::from_secs(10), || served
                .log()
                .contains("listening on ")),
            "the agent did not start: {}",
            served.log()
        );
        let log = served.log();
        let rest = log.split_once("listening on ").unwrap().1;
        served.addr = rest.split_once(' ').unwrap().0.parse().expect("address");
        served
    }

    pub(crate) fn log(&self) -> String {
        self.log.lock().unwrap().clone()
    }

    pub(crate) fn spec(&self) -> String {
        self.addr.to_string()
    }

    /// Sends `sig` and waits (10 s at most) for the agent to end.
    pub(crate) fn stop(mut self, sig: i32) -> Output {
        let child = self.child.take().unwrap();
        signal(child.id(), sig);
        wait_with_deadline(child, Duration::from_secs(10))
    }

    /// Asserts the agent has not exited.
    pub(crate) fn assert_alive(&mut self) {
        let status = self.child.as_mut().unwrap().try_wait().unwrap();
        assert!(
            status.is_none(),
            "the agent exited: {status:?}\n{}",
            self.log()
        );
    }
}

impl Drop for Served {
    /// SIGTERM first, which the agent ends on (and `runuser`, for an agent
    /// run as nobody, passes on to it, where SIGKILL would leave it
    /// running); SIGKILL if it has not ended within 5 s.
    fn drop(&mut self) {
        if let Some(mut c) = self.child.take() {
            signal(c.id(), libc::SIGTERM);
            if !eventually(Duration::from_secs(5), || {
                c.try_wait().is_ok_and(|s| s.is_some())
            }) {
                let _ = c.kill();
            }
            let _ = c.wait();
        }
    }
}

fn write_frame(s: &mut TcpStream, v: &Value) {
    let json = serde_json::to_vec(v).unwrap();
    let mut f = (json.len() as u32).to_be_bytes().to_vec();
    f.extend(json);
    s.write_all(&f).unwrap();
}

/// Reads one frame as JSON; None if the agent closed the connection.
fn read_frame(s: &mut TcpStream) -> Option<Value> {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut len = [0u8; 4];
    s.read_exact(&mut len).ok()?;
    let mut payload = vec![0u8; u32::from_be_bytes(len) as usize];
    s.read_exact(&mut payload).unwrap();
    Some(serde_json::from_slice(&payload).unwrap())
}

/// The protocol this ipcmark speaks (`PROTOCOL_VERSION`).
const PROTOCOL: u32 = 2;

fn hello(protocol: u32) -> Value {
    json!({"type": "Hello", "protocol": protocol, "ipcmark": "9.9.9", "client_nonce": "ab".repeat(32)})
}

/// A raw client with an open session (no token).
fn open_session(addr: SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(addr).unwrap();
    write_frame(&mut s, &hello(PROTOCOL));
    assert_eq!(read_frame(&mut s).unwrap()["type"], "Hello");
    write_frame(&mut s, &json!({"type": "Auth", "mac": null}));
    let welcome = read_frame(&mut s).unwrap();
    assert_eq!(welcome["type"], "Welcome", "{welcome}");
    assert!(welcome["environment"]["hostname"].is_string(), "{welcome}");
    s
}

pub(crate) fn check(sb: &Sandbox, spec: &str, extra: &[&str]) -> Output {
    let mut argv = vec!["agent-check", spec];
    argv.extend_from_slice(extra);
    sb.run(&argv, Duration::from_secs(20))
}

/// stderr of a failed client: exit 1 and exactly one line, which is returned.
fn one_line_failure(o: &Output) -> String {
    let err = stderr(o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "stdout: {}\nstderr: {err}",
        stdout(o)
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    err
}

fn token_file(sb: &Sandbox, name: &str, secret: &str, mode: u32) -> String {
    let p = sb.path(name);
    std::fs::write(&p, secret).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
    p.to_string_lossy().into_owned()
}

/// Whether the agent answers a new client's Hello with its own by `deadline`
/// (a `Busy` answer is tried again).
pub(crate) fn answers_hello_by(addr: SocketAddr, deadline: Instant) -> bool {
    while Instant::now() < deadline {
        if let Ok(mut s) = TcpStream::connect(addr) {
            write_frame(&mut s, &hello(PROTOCOL));
            if read_frame(&mut s).is_some_and(|v| v["type"] == "Hello") {
                return true;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[test]
fn a_second_client_is_told_the_agent_is_busy_and_the_next_one_is_served() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    assert!(
        agent.log().contains("no token: loopback only"),
        "{}",
        agent.log()
    );
    let mut first = open_session(agent.addr);
    // `Busy` comes once the second client has authenticated (without a
    // token, an Auth without a MAC), never before.
    let mut second = TcpStream::connect(agent.addr).unwrap();
    write_frame(&mut second, &hello(PROTOCOL));
    assert_eq!(read_frame(&mut second).unwrap()["type"], "Hello");
    write_frame(&mut second, &json!({"type": "Auth", "mac": null}));
    let busy = read_frame(&mut second).expect("an answer");
    assert_eq!(busy["type"], "Busy", "{busy}");
    assert_eq!(
        busy["client"].as_str().unwrap(),
        first.local_addr().unwrap().to_string()
    );
    assert!(
        read_frame(&mut second).is_none(),
        "the busy connection stays open"
    );
    let err = one_line_failure(&check(&sb, &agent.spec(), &[]));
    assert!(
        err.contains(&format!(
            "the agent at {} is busy with another client (127.0.0.1:",
            agent.addr
        )),
        "{err}"
    );
    write_frame(&mut first, &json!({"type": "Bye"}));
    assert!(
        read_frame(&mut first).is_none(),
        "the agent closes after Bye"
    );
    let ok = check(&sb, &agent.spec(), &[]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert!(
        stdout(&ok).starts_with(&format!("agent at {}: ipcmark ", agent.addr)),
        "{}",
        stdout(&ok)
    );
    agent.assert_alive();
    assert!(agent.stop(libc::SIGTERM).status.success());
}

#[test]
fn a_wrong_or_missing_token_is_refused_with_one_line_and_the_agent_still_serves() {
    let _g = serial();
    let sb = Sandbox::new();
    let right = token_file(&sb, "right", "s3cret\n", 0o600);
    let wrong = token_file(&sb, "wrong", "guess\n", 0o600);
    let mut agent = Served::start(&sb, &["--token-file", &right]);
    assert!(agent.log().contains("token required"), "{}", agent.log());
    let err = one_line_failure(&check(&sb, &agent.spec(), &["--token-file", &wrong]));
    assert!(
        err.contains("authentication failed: the token does not match the agent's"),
        "{err}"
    );
    assert!(err.contains(&agent.addr.to_string()), "{err}");
    assert!(
        eventually(Duration::from_secs(5), || agent
            .log()
            .contains("authentication failed")),
        "{}",
        agent.log()
    );
    let err = one_line_failure(&check(&sb, &agent.spec(), &[]));
    assert!(err.contains("requires a token"), "{err}");
    let ok = check(&sb, &agent.spec(), &["--token-file", &right]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    agent.assert_alive();
    drop(agent);
    // A client given a token refuses an agent that cannot prove it holds it.
    let open = Served::start(&sb, &[]);
    let err = one_line_failure(&check(&sb, &open.spec(), &["--token-file", &right]));
    assert!(err.contains("did not prove it holds the token"), "{err}");
}

#[test]
fn a_version_mismatch_is_refused_with_both_versions_named_on_both_sides() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    let mut s = TcpStream::connect(agent.addr).unwrap();
    write_frame(
        &mut s,
        &json!({"type": "Hello", "protocol": 999, "ipcmark": "9.9.9", "future": [1]}),
    );
    let r = read_frame(&mut s).expect("an answer");
    assert_eq!(r["type"], "Refused", "{r}");
    assert_eq!(r["protocol"], PROTOCOL, "{r}");
    let reason = r["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("speaks protocol {PROTOCOL} (ipcmark "))
            && reason.contains("999 (ipcmark 9.9.9)"),
        "{reason}"
    );
    assert!(read_frame(&mut s).is_none());
    assert!(
        eventually(Duration::from_secs(5), || agent.log().contains(&format!(
            "speaks protocol 999 (ipcmark 9.9.9); this agent speaks {PROTOCOL} (ipcmark "
        ))),
        "{}",
        agent.log()
    );
    let ok = check(&sb, &agent.spec(), &[]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    agent.assert_alive();
}

#[test]
fn a_client_that_dies_mid_session_leaves_the_agent_serving_the_next_within_2_s() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    // Dead in the open session, in the handshake, and mid-frame.
    let open = open_session(agent.addr);
    drop(open);
    assert!(answers_hello_by(
        agent.addr,
        Instant::now() + Duration::from_secs(2)
    ));
    let mut s = TcpStream::connect(agent.addr).unwrap();
    write_frame(&mut s, &hello(PROTOCOL));
    drop(s);
    assert!(answers_hello_by(
        agent.addr,
        Instant::now() + Duration::from_secs(2)
    ));
    let mut s = TcpStream::connect(agent.addr).unwrap();
    s.write_all(&[0, 0, 1, 0, b'{']).unwrap();
    drop(s);
    assert!(answers_hello_by(
        agent.addr,
        Instant::now() + Duration::from_secs(2)
    ));
    agent.assert_alive();
}

#[test]
fn sigterm_and_sigint_stop_the_agent_with_exit_0_even_mid_session() {
    let _g = serial();
    let sb = Sandbox::new();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let agent = Served::start(&sb, &[]);
        let _session = open_session(agent.addr);
        let pid = agent.child.as_ref().unwrap().id();
        let out = agent.stop(sig);
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert!(children_of(pid).is_empty());
    }
}

#[test]
fn listening_beyond_loopback_requires_a_private_token_file() {
    let _g = serial();
    let sb = Sandbox::new();
    let o = sb.run(&["serve", "--listen", "0.0.0.0:0"], Duration::from_secs(10));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(stderr(&o).lines().count(), 1, "{}", stderr(&o));
    assert!(
        stderr(&o).contains("requires --token-file"),
        "{}",
        stderr(&o)
    );
    let open = token_file(&sb, "open", "s3cret", 0o644);
    let o = sb.run(
        &["serve", "--listen", "127.0.0.1:0", "--token-file", &open],
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("chmod 600"), "{}", stderr(&o));
    let empty = token_file(&sb, "empty", "\n", 0o600);
    let o = sb.run(
        &["serve", "--listen", "127.0.0.1:0", "--token-file", &empty],
        Duration::from_secs(10),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("is empty"), "{}", stderr(&o));
    assert!(Path::new(&open).exists());
}

#[test]
fn ten_thousand_garbage_frames_over_real_connections_leave_the_agent_serving() {
    const FRAMES: usize = 10_000;
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    let valid = {
        let json = serde_json::to_vec(&hello(PROTOCOL)).unwrap();
        let mut f = (json.len() as u32).to_be_bytes().to_vec();
        f.extend(json);
        f
    };
    let mut rng = fastrand::Rng::with_seed(13);
    let mut sent = 0;
    for _ in 0..FRAMES {
        let garbage: Vec<u8> = match rng.u32(0..4) {
            // A valid Hello with bits flipped.
            0 => {
                let mut f = valid.clone();
                for _ in 0..rng.usize(1..6) {
                    let i = rng.usize(..f.len());
                    f[i] ^= 1 << rng.u32(0..8);
                }
                f
            }
            // A forged length.
            1 => {
                let mut f = rng.u32(..).to_be_bytes().to_vec();
                f.extend((0..rng.usize(0..32)).map(|_| rng.u8(..)));
                f
            }
            // Random bytes.
            2 => (0..rng.usize(1..64)).map(|_| rng.u8(..)).collect(),
            // A frame of random JSON-ish text.
            _ => {
                let body: Vec<u8> = (0..rng.usize(1..48))
                    .map(|_| b"{}[]\":,0123456789truefalsnl Hello type"[rng.usize(..38)])
                    .collect();
                let mut f = (body.len() as u32).to_be_bytes().to_vec();
                f.extend(body);
                f
            }
        };
        let mut s = TcpStream::connect(agent.addr).unwrap();
        // The agent may close before all is written: that is its answer.
        let _ = s.write_all(&garbage);
        let _ = s.shutdown(Shutdown::Write);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut rest = Vec::new();
        match s.read_to_end(&mut rest) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {}
            Err(e) => panic!("no end to a garbage connection: {e}"),
        }
        sent += 1;
    }
    assert_eq!(sent, FRAMES);
    agent.assert_alive();
    let ok = check(&sb, &agent.spec(), &[]);
    assert!(ok.status.success(), "{}", stderr(&ok));
}

/// A fake agent on a test thread: accepts one connection, reads the
/// client's Hello, answers with `answer` (nothing if None) and holds the
/// connection until the client leaves.
fn fake_agent(answer: Option<Value>) -> SocketAddr {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        let (mut s, _) = l.accept().unwrap();
        let _ = read_frame(&mut s);
        if let Some(a) = answer {
            write_frame(&mut s, &a);
        }
        let _ = s.read_to_end(&mut Vec::new());
    });
    addr
}

#[test]
fn the_client_names_both_versions_on_a_mismatch_and_a_silent_agent_within_its_deadline() {
    let _g = serial();
    let sb = Sandbox::new();
    let addr = fake_agent(Some(json!({
        "type": "Refused", "reason": "…", "protocol": 999, "ipcmark": "0.9.0"
    })));
    let err = one_line_failure(&check(&sb, &addr.to_string(), &[]));
    assert!(
        err.contains(&format!(
            "ipcmark agent at {addr} speaks protocol 999 (ipcmark 0.9.0); this client speaks {PROTOCOL} (ipcmark "
        )) && err.contains("use the same ipcmark version on both hosts"),
        "{err}"
    );
    let addr = fake_agent(None);
    let err = one_line_failure(&check(&sb, &addr.to_string(), &[]));
    assert!(
        err.contains(&format!("no answer from the agent at {addr} within 5 s")),
        "{err}"
    );
}

/// Sends `msg` and reads the answer.
fn ask(s: &mut TcpStream, msg: &Value) -> Value {
    write_frame(s, msg);
    read_frame(s).expect("an answer")
}

#[test]
fn a_figure_reports_on_finish_and_a_client_dying_mid_figure_frees_the_agent_within_2_s() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    let pid = agent.child.as_ref().unwrap().id();
    let task = json!({"proto": "tcp", "size": 64, "role": {"role": "echo"}, "cpu": null, "limit_ms": 10000});
    let mut s = open_session(agent.addr);
    let ready = ask(&mut s, &json!({"type": "Start", "task": task}));
    assert_eq!(ready["type"], "Ready", "{ready}");
    let done = ask(&mut s, &json!({"type": "Finish"}));
    assert_eq!(done["type"], "Done", "{done}");
    assert!(done["report"]["messages"].is_u64(), "{done}");
    // The session is open again: a second figure, and the client dies in it.
    let ready = ask(&mut s, &json!({"type": "Start", "task": task}));
    assert_eq!(ready["type"], "Ready", "{ready}");
    let port = ready["port"].as_u64().unwrap() as u16;
    let data = TcpStream::connect((agent.addr.ip(), port)).unwrap();
    assert!(
        eventually(Duration::from_secs(5), || !children_of(pid).is_empty()),
        "no figure process"
    );
    drop(s);
    let deadline = Instant::now() + Duration::from_secs(2);
    assert!(answers_hello_by(agent.addr, deadline));
    assert!(
        eventually(Duration::from_secs(2), || children_of(pid).is_empty()),
        "the figure's process outlived its client: {:?}",
        children_of(pid)
    );
    drop(data);
    agent.assert_alive();
    // SIGTERM in the middle of a figure: exit 0, the figure's process gone.
    let mut s = open_session(agent.addr);
    let ready = ask(&mut s, &json!({"type": "Start", "task": task}));
    assert_eq!(ready["type"], "Ready", "{ready}");
    assert!(eventually(Duration::from_secs(5), || !children_of(pid).is_empty()));
    let figure = children_of(pid);
    let out = agent.stop(libc::SIGTERM);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        figure
            .iter()
            .all(|c| !std::path::Path::new(&format!("/proc/{c}")).exists()),
        "left: {figure:?}"
    );
}

/// Lower-case hex of `bytes`.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The bytes of a hex string the agent sent.
fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// A raw client with an open session, proving `token` as docs/remote.md
/// says: HMAC-SHA256(token, "ipcmark-auth-v1|client|" + server_nonce + "|"
/// + client_nonce).
fn open_session_with_token(addr: SocketAddr, token: &[u8]) -> TcpStream {
    use hmac::{Hmac, KeyInit, Mac};
    let mut s = TcpStream::connect(addr).unwrap();
    let client_nonce = "cd".repeat(32);
    write_frame(
        &mut s,
        &json!({"type": "Hello", "protocol": PROTOCOL, "ipcmark": "9.9.9", "client_nonce": client_nonce}),
    );
    let h = read_frame(&mut s).unwrap();
    assert_eq!(h["type"], "Hello", "{h}");
    let server_nonce = h["server_nonce"].as_str().unwrap();
    let mut m = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(token).unwrap();
    m.update(format!("ipcmark-auth-v1|client|{server_nonce}|{client_nonce}").as_bytes());
    let mac = hex(&m.finalize().into_bytes());
    write_frame(&mut s, &json!({"type": "Auth", "mac": mac}));
    let w = read_frame(&mut s).unwrap();
    assert_eq!(w["type"], "Welcome", "{w}");
    s
}

/// Every frame the agent sends on `s` until it closes it.
fn frames_until_closed(s: &mut TcpStream) -> Vec<Value> {
    std::iter::from_fn(|| read_frame(s)).collect()
}

#[test]
fn strangers_in_their_handshake_keep_no_client_out_and_learn_nothing_of_the_session() {
    let _g = serial();
    let sb = Sandbox::new();
    let right = token_file(&sb, "right", "s3cret\n", 0o600);
    let mut agent = Served::start(&sb, &["--token-file", &right]);
    // Strangers without the token: silent connections (more than one address
    // may hold at once) and one that stops after its Hello.
    let mut strangers: Vec<TcpStream> = (0..6)
        .map(|_| TcpStream::connect(agent.addr).unwrap())
        .collect();
    let mut halfway = TcpStream::connect(agent.addr).unwrap();
    write_frame(&mut halfway, &hello(PROTOCOL));
    assert_eq!(read_frame(&mut halfway).unwrap()["type"], "Hello");
    strangers.push(halfway);
    // While they hold their connections, the client with the token is
    // served (within its own 5 s deadline for each answer).
    let ok = check(&sb, &agent.spec(), &["--token-file", &right]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    // A session, and more strangers while it runs.
    let mut holder = open_session_with_token(agent.addr, b"s3cret");
    let holder_addr = holder.local_addr().unwrap().to_string();
    strangers.push(TcpStream::connect(agent.addr).unwrap());
    let mut halfway = TcpStream::connect(agent.addr).unwrap();
    write_frame(&mut halfway, &hello(PROTOCOL));
    assert_eq!(read_frame(&mut halfway).unwrap()["type"], "Hello");
    strangers.push(halfway);
    let mut wrong = TcpStream::connect(agent.addr).unwrap();
    write_frame(&mut wrong, &hello(PROTOCOL));
    assert_eq!(read_frame(&mut wrong).unwrap()["type"], "Hello");
    write_frame(&mut wrong, &json!({"type": "Auth", "mac": "00".repeat(32)}));
    strangers.push(wrong);
    // One that sends more than a handshake takes (the start of a forged
    // 1 MiB frame; 20 KiB, which the agent reads whole, so that it closes
    // with nothing unread and the refusal is not lost to a reset).
    let mut talker = TcpStream::connect(agent.addr).unwrap();
    let mut flood = (1u32 << 20).to_be_bytes().to_vec();
    flood.extend(vec![b' '; 20 << 10]);
    talker.write_all(&flood).unwrap();
    let got = frames_until_closed(&mut talker);
    assert!(
        got.iter().any(|f| f["reason"]
            .as_str()
            .is_some_and(|r| r.contains("bytes sent before authentication"))),
        "{got:?}"
    );
    // A client with the token is told who holds the agent.
    let err = one_line_failure(&check(&sb, &agent.spec(), &["--token-file", &right]));
    assert!(
        err.contains(&format!("is busy with another client ({holder_addr}, for ")),
        "{err}"
    );
    // A stranger is told only why its own connection ends.
    for (i, s) in strangers.iter_mut().enumerate() {
        let got = frames_until_closed(s);
        assert!(!got.is_empty(), "stranger {i}: closed without a word");
        for f in &got {
            assert_eq!(f["type"], "Refused", "stranger {i}: {f}");
            assert!(!f.to_string().contains(&holder_addr), "stranger {i}: {f}");
        }
    }
    // The session was never disturbed.
    assert_eq!(
        ask(&mut holder, &json!({"type": "Clock", "t1": 7}))["t1"],
        7
    );
    write_frame(&mut holder, &json!({"type": "Bye"}));
    assert!(read_frame(&mut holder).is_none());
    let ok = check(&sb, &agent.spec(), &["--token-file", &right]);
    assert!(ok.status.success(), "{}", stderr(&ok));
    agent.assert_alive();
}

/// A data hello: the magic, then `key`.
fn data_hello(key: &[u8]) -> Vec<u8> {
    let mut h = b"IPCMHELO".to_vec();
    h.extend_from_slice(key);
    h
}

/// Starts a 64-byte echo figure over `proto`: its data address and key.
fn start_echo(s: &mut TcpStream, agent: SocketAddr, proto: &str) -> (SocketAddr, Vec<u8>) {
    let task = json!({"proto": proto, "size": 64, "role": {"role": "echo"}, "cpu": null, "limit_ms": 10000});
    let ready = ask(s, &json!({"type": "Start", "task": task}));
    assert_eq!(ready["type"], "Ready", "{ready}");
    let port = ready["port"].as_u64().unwrap() as u16;
    let key = unhex(ready["key"].as_str().unwrap());
    assert_eq!(key.len(), 32);
    (SocketAddr::new(agent.ip(), port), key)
}

/// Message 1 of an echo figure, and what must come back: its sequence
/// number's bytes complemented, the rest intact.
fn message_and_echo() -> ([u8; 64], [u8; 64]) {
    let mut msg = [0xabu8; 64];
    msg[..8].copy_from_slice(&1u64.to_le_bytes());
    let mut echo = msg;
    echo[..8].copy_from_slice(&(!1u64).to_le_bytes());
    (msg, echo)
}

#[test]
fn a_data_port_answers_only_its_client_and_only_with_the_figures_key() {
    let _g = serial();
    let sb = Sandbox::new();
    let mut agent = Served::start(&sb, &[]);
    let mut s = open_session(agent.addr);
    let (msg, echo) = message_and_echo();

    // UDP: a stranger on another loopback address sends the old empty hello,
    // a wrong key and even the figure's own; the client a wrong key first.
    let (at, key) = start_echo(&mut s, agent.addr, "udp");
    let stranger = std::net::UdpSocket::bind("127.0.0.2:0").unwrap();
    for d in [vec![], data_hello(&[0; 32]), data_hello(&key)] {
        stranger.send_to(&d, at).unwrap();
    }
    let client = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(at).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    client.send(&data_hello(&[1; 32])).unwrap();
    client.send(&data_hello(&key)).unwrap();
    let mut back = [0u8; 65];
    assert_eq!(client.recv(&mut back).unwrap(), 0, "the agent's answer");
    client.send(&msg).unwrap();
    assert_eq!(client.recv(&mut back).unwrap(), 64);
    assert_eq!(back[..64], echo);
    // The stranger again, once the figure runs.
    stranger.send_to(&data_hello(&key), at).unwrap();
    stranger.send_to(&msg, at).unwrap();
    let done = ask(&mut s, &json!({"type": "Finish"}));
    assert_eq!(done["type"], "Done", "{done}");
    assert_eq!(done["report"]["error"], Value::Null, "{done}");
    assert_eq!(done["report"]["messages"], 1, "{done}");
    assert_eq!(done["report"]["rejected"], 4, "{done}");
    stranger.set_nonblocking(true).unwrap();
    let got = stranger.recv_from(&mut back);
    assert!(
        got.as_ref()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "the agent sent to the spoofed address: {got:?}"
    );
    assert!(
        eventually(Duration::from_secs(5), || agent
            .log()
            .contains("dropped 4 data connections or datagrams")),
        "{}",
        agent.log()
    );

    // TCP: a silent connection and one with a wrong key, then the client.
    let (at, key) = start_echo(&mut s, agent.addr, "tcp");
    let mut silent = TcpStream::connect(at).unwrap();
    let mut wrong = TcpStream::connect(at).unwrap();
    wrong.write_all(&data_hello(&[2; 32])).unwrap();
    let mut client = TcpStream::connect(at).unwrap();
    client.write_all(&data_hello(&key)).unwrap();
    client.write_all(&msg).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    client.read_exact(&mut back[..64]).unwrap();
    assert_eq!(back[..64], echo);
    drop(client);
    let done = ask(&mut s, &json!({"type": "Finish"}));
    assert_eq!(done["report"]["error"], Value::Null, "{done}");
    assert_eq!(done["report"]["messages"], 1, "{done}");
    assert_eq!(done["report"]["rejected"], 2, "{done}");
    for c in [&mut silent, &mut wrong] {
        c.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut got = Vec::new();
        // End of file or a reset: either way, no byte.
        let _ = c.read_to_end(&mut got);
        assert!(got.is_empty(), "{got:?}");
    }
    agent.assert_alive();
}
