//! A two-host testbed for tests of remote figures: made with `ipcmark
//! testbed up --name <unique>`, removed with `ipcmark testbed down` when
//! the value is dropped. Where namespaces cannot be made (not root, no
//! iproute2 or ethtool, a container that forbids them) [`TestBed::try_new`]
//! says why, and the test prints "skipped: …" and returns.
//!
//! Hold [`super::serial`] while a testbed exists: `ipcmark clean` (run by
//! other tests) removes testbed namespaces no process is in.

use super::{bin, stderr, wait_with_deadline};
use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A testbed that exists until this value is dropped.
pub struct TestBed {
    /// The name given to `testbed up --name`.
    pub name: String,
    /// The client's namespace (`ipcmark-NAME-a`).
    pub client_ns: String,
    /// The agent's namespace (`ipcmark-NAME-b`).
    pub agent_ns: String,
    /// The client's address, as `ip` lists it on veth-a.
    pub client_ip: String,
    /// The agent's address, on veth-b.
    pub agent_ip: String,
    /// The token file `up` wrote.
    pub token: PathBuf,
    /// What `testbed up` printed.
    pub up_stdout: String,
}

/// Whether `tool --version`-like `args` runs.
fn have(args: &[&str]) -> bool {
    Command::new(args[0])
        .args(&args[1..])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A unique testbed name for this test process.
pub fn unique_testbed_name() -> String {
    format!(
        "t{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Runs `ipcmark testbed ARGS` to its end (at most 30 s).
pub fn testbed_cmd(args: &[&str]) -> std::process::Output {
    let child = Command::new(bin())
        .arg("testbed")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn ipcmark testbed");
    wait_with_deadline(child, Duration::from_secs(30))
}

/// The IPv4 address `ip` lists on `dev` in namespace `ns`.
pub fn ns_address(ns: &str, dev: &str) -> Option<String> {
    let out = Command::new("ip")
        .args(["-n", ns, "-j", "addr", "show", "dev", dev])
        .output()
        .ok()?;
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    v[0]["addr_info"]
        .as_array()?
        .iter()
        .find(|a| a["family"] == "inet")
        .and_then(|a| a["local"].as_str())
        .map(str::to_string)
}

impl TestBed {
    /// Makes a testbed shaped to `rate` (`10M`, `none`…), or the reason
    /// this machine cannot.
    pub fn try_new(rate: &str) -> Result<TestBed, String> {
        // SAFETY: geteuid has no arguments and cannot fail.
        if unsafe { libc::geteuid() } != 0 {
            return Err("not root: network namespaces cannot be made".into());
        }
        for (tool, args) in [
            ("ip (iproute2)", &["ip", "-V"][..]),
            ("tc (iproute2)", &["tc", "-V"][..]),
            ("ethtool", &["ethtool", "--version"][..]),
        ] {
            if !have(args) {
                return Err(format!("{tool} is missing"));
            }
        }
        let name = unique_testbed_name();
        let out = testbed_cmd(&["up", "--name", &name, "--rate", rate]);
        if !out.status.success() {
            let err = stderr(&out);
            if err.contains("Operation not permitted") || err.contains("lacks") {
                return Err(format!("namespaces cannot be made here: {}", err.trim()));
            }
            panic!("testbed up failed: {err}");
        }
        let base = format!("ipcmark-{name}");
        let (client_ns, agent_ns) = (format!("{base}-a"), format!("{base}-b"));
        let tb = TestBed {
            client_ip: ns_address(&client_ns, "veth-a").expect("veth-a's address"),
            agent_ip: ns_address(&agent_ns, "veth-b").expect("veth-b's address"),
            token: PathBuf::from(format!("/run/ipcmark/testbed-{base}.token")),
            up_stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            name,
            client_ns,
            agent_ns,
        };
        Ok(tb)
    }

    /// `ip netns exec NS ipcmark ARGS`, output piped.
    fn exec_in(ns: &str, args: &[&str]) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns])
            .arg(bin())
            .args(args)
            .env_remove("RUST_BACKTRACE")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        c
    }

    /// ipcmark with `args` on the client's side.
    pub fn exec_a(&self, args: &[&str]) -> Command {
        Self::exec_in(&self.client_ns, args)
    }

    /// ipcmark with `args` on the agent's side.
    pub fn exec_b(&self, args: &[&str]) -> Command {
        Self::exec_in(&self.agent_ns, args)
    }

    /// Runs `f` on a thread moved into namespace `ns` (sockets it opens
    /// are that namespace's).
    pub fn in_ns<T: Send + 'static>(ns: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
        let file = File::open(format!("/run/netns/{ns}")).expect("open the namespace");
        std::thread::spawn(move || {
            // SAFETY: setns reads its two integer arguments; `file` is open.
            let r = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "setns: {}", std::io::Error::last_os_error());
            f()
        })
        .join()
        .expect("the thread in the namespace panicked")
    }
}

impl Drop for TestBed {
    fn drop(&mut self) {
        let out = testbed_cmd(&["down", "--name", &self.name]);
        if !out.status.success() && !std::thread::panicking() {
            panic!("testbed down failed: {}", stderr(&out));
        }
    }
}
