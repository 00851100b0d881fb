//! Two hosts on one machine: two network namespaces joined by a veth pair,
//! shaped to a link speed (10 Mbit/s by default), so that remote figures
//! can be measured, tested and reproduced without a second machine
//! (docs/remote.md, "Testbed"), and `mpirun` across them (`mpirun.rs`,
//! docs/cluster.md): remote figures and MPI jobs both use it, so it is a
//! layer of its own rather than a part of either.
//!
//! The namespaces are `BASE-a` (the client's side) and `BASE-b` (the
//! agent's), where BASE is `ipcmark` or `ipcmark-NAME`: every namespace
//! ipcmark makes starts with `ipcmark` and ends in `-a` or `-b`, which is
//! how `ipcmark clean` knows its own. The pair gets a /24 of the
//! benchmarking range 198.18.0.0/15 (RFC 2544): 198.18.0.0/24 for the
//! default name, another picked from a hash of the name otherwise, so the
//! addresses tell testbeds apart (each pair has its own routing tables, so
//! two that share a /24 do not collide).
//!
//! Each veth end's egress goes through tbf with a size table that counts
//! every frame as the wire does (preamble, SFD, FCS, gap, padding), so the
//! shaped link carries what a real Ethernet of that speed carries.

pub mod mpirun;

use crate::engine::os::objects::CleanReport;
use crate::sys::netns;
use std::fs;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The name of the default testbed, and the prefix of every one.
pub const DEFAULT_NAME: &str = "ipcmark";
/// The link speed a testbed is shaped to unless told otherwise: the
/// study's 10 Mbit Ethernet.
pub const DEFAULT_RATE: u64 = 10_000_000;
/// The veth end in the client's namespace.
pub const CLIENT_IF: &str = "veth-a";
/// The veth end in the agent's namespace.
pub const AGENT_IF: &str = "veth-b";
/// Where `ip netns` keeps its namespaces.
pub(super) const NETNS_DIR: &str = "/run/netns";
/// Where the testbeds' token files go.
const TOKEN_DIR: &str = "/run/ipcmark";

/// Bytes a frame takes on the wire beyond what the kernel hands the device
/// (its Ethernet header and IP packet): preamble + SFD 8, FCS 4, gap 12.
const STAB_OVERHEAD: usize = 24;
/// The least a frame takes on the wire: 64 bytes of frame (padding
/// included) + preamble, SFD and gap.
const STAB_MPU: usize = 84;

/// What testbed to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Its name: `ipcmark` (the default) or a word that tells it apart.
    pub name: String,
    /// The link speed each way, bits per second; None leaves the veth
    /// unshaped.
    pub rate_bits_per_s: Option<u64>,
    /// Delay added each way, ms (netem; only where the kernel has it).
    pub delay_ms: Option<u32>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            name: DEFAULT_NAME.into(),
            rate_bits_per_s: Some(DEFAULT_RATE),
            delay_ms: None,
        }
    }
}

/// A testbed that exists: dropping it removes it (namespaces, and with
/// them the veth pair and its qdiscs, and the token file), on every path,
/// unless [`Testbed::keep`] was called.
#[derive(Debug)]
pub struct Testbed {
    base: String,
    net: (u8, u8),
    rate: Option<u64>,
    delay_ms: Option<u32>,
    token: PathBuf,
    keep: bool,
}

/// The namespaces' common part for a testbed `name`: `ipcmark` or
/// `ipcmark-NAME` (a name that starts with `ipcmark` is kept as it is).
pub fn base_name(name: &str) -> Result<String, String> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.starts_with('-');
    if !ok {
        return Err(format!(
            "bad testbed name '{name}': use up to 40 letters, digits, '-' or '_'"
        ));
    }
    Ok(if name.starts_with(DEFAULT_NAME) {
        name.to_string()
    } else {
        format!("{DEFAULT_NAME}-{name}")
    })
}

/// The second and third octets of the testbed's /24 in 198.18.0.0/15.
pub(super) fn subnet(base: &str) -> (u8, u8) {
    if base == DEFAULT_NAME {
        return (18, 0);
    }
    // FNV-1a: stable across builds, unlike std's hasher.
    let h = base.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0100_0000_01b3)
    });
    let n = 1 + (h % 511) as u16;
    (18 + (n >> 8) as u8, (n & 0xff) as u8)
}

pub(super) fn ns_a(base: &str) -> String {
    format!("{base}-a")
}

pub(super) fn ns_b(base: &str) -> String {
    format!("{base}-b")
}

fn token_path_of(base: &str) -> PathBuf {
    Path::new(TOKEN_DIR).join(format!("testbed-{base}.token"))
}

pub(super) fn ns_exists(ns: &str) -> bool {
    Path::new(NETNS_DIR).join(ns).exists()
}

/// Runs a command to its end; its failure as one line.
fn run(args: &[&str]) -> Result<(), String> {
    let out = Command::new(args[0])
        .args(&args[1..])
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => missing(args[0]),
            _ => format!("cannot run {}: {e}", args[0]),
        })?;
    if out.status.success() {
        return Ok(());
    }
    let err = String::from_utf8_lossy(&out.stderr);
    Err(format!(
        "`{}` failed: {}",
        args.join(" "),
        err.lines().next().unwrap_or("").trim()
    ))
}

fn missing(tool: &str) -> String {
    match tool {
        "ethtool" => "ethtool is missing: the testbed turns the veth's offloads off with it, or shaping is wrong (apt-get install ethtool)".into(),
        "ip" | "tc" => format!("`{tool}` is missing: the testbed is made with iproute2 (apt-get install iproute2)"),
        _ => format!("`{tool}` is missing"),
    }
}

/// The capabilities making namespaces needs that this process lacks.
fn missing_capabilities() -> Vec<&'static str> {
    let eff = fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .unwrap_or(0);
    [(12, "CAP_NET_ADMIN"), (21, "CAP_SYS_ADMIN")]
        .into_iter()
        .filter(|(bit, _)| eff & (1 << bit) == 0)
        .map(|(_, name)| name)
        .collect()
}

/// Whether the kernel has netem, tried in a namespace of its own (the
/// qdisc either is accepted or "Specified qdisc kind is unknown").
pub fn netem_available() -> Result<bool, String> {
    check_privileges()?;
    let probe = format!("{DEFAULT_NAME}-netem-probe-{}-a", std::process::id());
    run(&["ip", "netns", "add", &probe])?;
    let res = run(&[
        "tc", "-n", &probe, "qdisc", "add", "dev", "lo", "root", "netem", "delay", "1ms",
    ]);
    let _ = run(&["ip", "netns", "del", &probe]);
    Ok(res.is_ok())
}

pub(super) fn check_privileges() -> Result<(), String> {
    let lacks = missing_capabilities();
    if lacks.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "the testbed needs root: making network namespaces takes CAP_SYS_ADMIN and CAP_NET_ADMIN, and this process lacks {}",
            lacks.join(" and ")
        ))
    }
}

/// Every tool the testbed is made with is here, before anything is made:
/// inside a namespace (`ip netns exec … ethtool`) a missing one reads as
/// ip's own failure to exec, which names no package.
fn check_tools() -> Result<(), String> {
    for tool in ["ip", "tc", "ethtool"] {
        let found = std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| {
                fs::metadata(dir.join(tool)).is_ok_and(|m| m.is_file() && m.mode() & 0o111 != 0)
            })
        });
        if !found {
            return Err(missing(tool));
        }
    }
    Ok(())
}

/// A fresh secret: 32 random bytes from the kernel, in hex.
fn fresh_token() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut bytes))
        .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn write_token(path: &Path) -> Result<(), String> {
    let token = fresh_token()?;
    fs::create_dir_all(TOKEN_DIR).map_err(|e| format!("cannot create {TOKEN_DIR}: {e}"))?;
    let _ = fs::remove_file(path);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    writeln!(f, "{token}").map_err(|e| format!("cannot write {}: {e}", path.display()))
}

impl Testbed {
    /// Makes the testbed: namespaces, veth pair, addresses, offloads off,
    /// shaping, token file, then checks a TCP connection crosses it. On
    /// any failure, whatever was made is removed again.
    pub fn up(opts: &Options) -> Result<Testbed, String> {
        let base = base_name(&opts.name)?;
        check_privileges()?;
        check_tools()?;
        if ns_exists(&ns_a(&base)) || ns_exists(&ns_b(&base)) {
            return Err(format!(
                "testbed {base} exists already (`ipcmark testbed down{}` removes it)",
                name_flag(&opts.name)
            ));
        }
        let tb = Testbed {
            net: subnet(&base),
            token: token_path_of(&base),
            base,
            rate: opts.rate_bits_per_s.filter(|&r| r > 0),
            delay_ms: opts.delay_ms.filter(|&d| d > 0),
            keep: false,
        };
        // From here on, dropping `tb` removes what was made so far.
        tb.build()?;
        write_token(&tb.token)?;
        tb.check_link()?;
        Ok(tb)
    }

    fn build(&self) -> Result<(), String> {
        let (a, b) = (self.client_ns(), self.agent_ns());
        run(&["ip", "netns", "add", &a])?;
        run(&["ip", "netns", "add", &b])?;
        run(&[
            "ip", "-n", &a, "link", "add", CLIENT_IF, "type", "veth", "peer", "name", AGENT_IF,
            "netns", &b,
        ])?;
        for (ns, dev, ip) in [
            (&a, CLIENT_IF, self.client_ip()),
            (&b, AGENT_IF, self.agent_ip()),
        ] {
            let cidr = format!("{ip}/24");
            run(&["ip", "-n", ns, "addr", "add", &cidr, "dev", dev])?;
            run(&["ip", "-n", ns, "link", "set", "lo", "up"])?;
            run(&["ip", "-n", ns, "link", "set", dev, "up"])?;
            // Segmentation offloads would hand tbf 64 KiB super-packets
            // and merge them again on receipt: shaping counts frames.
            run(&[
                "ip", "netns", "exec", ns, "ethtool", "-K", dev, "gso", "off", "tso", "off", "gro",
                "off",
            ])?;
            // TCP builds GSO packets whatever the device's features (they
            // are cut after the qdisc), and the size table would count a
            // packet of several segments as one frame: one segment per
            // packet keeps tbf's count frame by frame.
            run(&[
                "ip",
                "-n",
                ns,
                "link",
                "set",
                "dev",
                dev,
                "gso_max_segs",
                "1",
            ])?;
            self.shape(ns, dev)?;
        }
        Ok(())
    }

    /// Shapes `dev`'s egress: tbf at the rate behind a size table that
    /// counts each packet as its frame on the wire (+24 bytes, at least
    /// 84), with netem below it for the delay.
    fn shape(&self, ns: &str, dev: &str) -> Result<(), String> {
        let mut parent = vec!["root"];
        if let Some(rate) = self.rate {
            let rate_arg = format!("{rate}bit");
            // Two full frames, or 1 ms at the rate when that is more (a
            // burst below the timer's reach would cap a fast link).
            let burst = (2 * 1538 + 124).max((rate / 8 / 1000) as usize).to_string();
            let limit = queue_limit().to_string();
            let (overhead, mpu) = (STAB_OVERHEAD.to_string(), STAB_MPU.to_string());
            run(&[
                "tc",
                "-n",
                ns,
                "qdisc",
                "add",
                "dev",
                dev,
                "root",
                "handle",
                "1:",
                "stab",
                "mtu",
                "2047",
                "tsize",
                "2048",
                "overhead",
                &overhead,
                "mpu",
                &mpu,
                "linklayer",
                "ethernet",
                "tbf",
                "rate",
                &rate_arg,
                "burst",
                &burst,
                "limit",
                &limit,
            ])?;
            parent = vec!["parent", "1:1"];
        }
        if let Some(ms) = self.delay_ms {
            let delay = format!("{ms}ms");
            let mut args = vec!["tc", "-n", ns, "qdisc", "add", "dev", dev];
            args.extend(&parent);
            args.extend(["handle", "10:", "netem", "delay", &delay, "limit", "100000"]);
            run(&args).map_err(|e| {
                if e.contains("unknown") {
                    "this kernel has no netem (sch_netem), so the testbed cannot add a delay".into()
                } else {
                    e
                }
            })?;
        }
        Ok(())
    }

    /// A TCP connection from the client's side to the agent's, one byte
    /// each way: the testbed carries traffic before anyone relies on it.
    fn check_link(&self) -> Result<(), String> {
        let agent = self.agent_ip();
        let listener = self.in_ns(&self.agent_ns(), move || {
            TcpListener::bind((agent, 0)).map_err(|e| format!("bind {agent}: {e}"))
        })?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("testbed check: {e}"))?;
        let echo = std::thread::spawn(move || -> std::io::Result<()> {
            // Accept with a deadline: a client that never arrives must not
            // keep `up` waiting.
            listener.set_nonblocking(true)?;
            let deadline = std::time::Instant::now() + Duration::from_secs(3);
            let mut s = loop {
                match listener.accept() {
                    Ok((s, _)) => break s,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        if std::time::Instant::now() > deadline {
                            return Err(std::io::Error::new(e.kind(), "no connection came"));
                        }
                        std::thread::sleep(Duration::from_millis(5));
                    }
                    Err(e) => return Err(e),
                }
            };
            s.set_nonblocking(false)?;
            s.set_read_timeout(Some(Duration::from_secs(2)))?;
            let mut b = [0u8; 1];
            s.read_exact(&mut b)?;
            s.write_all(&b)
        });
        let reply = self.in_ns(&self.client_ns(), move || ping(addr));
        let echoed = echo.join().map_err(|_| "testbed check panicked")?;
        match (reply, echoed) {
            (Ok(b'!'), Ok(())) => Ok(()),
            (Err(e), _) => Err(format!("testbed check: {e}")),
            (_, Err(e)) => Err(format!("testbed check: the agent's side: {e}")),
            (Ok(_), _) => Err("testbed check: the echo came back changed".into()),
        }
    }

    /// Runs `f` on a thread of its own moved into namespace `ns`.
    fn in_ns<T: Send + 'static>(
        &self,
        ns: &str,
        f: impl FnOnce() -> Result<T, String> + Send + 'static,
    ) -> Result<T, String> {
        let path = Path::new(NETNS_DIR).join(ns);
        std::thread::spawn(move || {
            enter(&path)?;
            f()
        })
        .join()
        .map_err(|_| "testbed: a thread panicked".to_string())?
    }

    /// Leaves the testbed in place when this value is dropped (`ipcmark
    /// testbed up` hands it to the user).
    pub fn keep(mut self) {
        self.keep = true;
    }

    /// The client's namespace.
    pub fn client_ns(&self) -> String {
        ns_a(&self.base)
    }

    /// The agent's namespace.
    pub fn agent_ns(&self) -> String {
        ns_b(&self.base)
    }

    /// The client's address (in its namespace, on `veth-a`).
    pub fn client_ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, self.net.0, self.net.1, 1)
    }

    /// The agent's address (in its namespace, on `veth-b`).
    pub fn agent_ip(&self) -> Ipv4Addr {
        Ipv4Addr::new(198, self.net.0, self.net.1, 2)
    }

    /// The token file the agent and the client share (mode 0600).
    pub fn token_path(&self) -> &Path {
        &self.token
    }

    /// Moves the calling thread (only it) into the client's namespace:
    /// sockets it opens afterwards reach the agent at [`Self::agent_ip`],
    /// and threads and processes it starts afterwards start there too.
    pub fn enter_client_side(&self) -> Result<(), String> {
        enter(&Path::new(NETNS_DIR).join(self.client_ns()))
    }

    /// `ip netns exec BASE-b <this executable> args…`, to be spawned.
    pub fn command_in_agent_ns(&self, args: &[&str]) -> Result<Command, String> {
        let exe = std::env::current_exe()
            .map_err(|e| format!("cannot find ipcmark's own executable: {e}"))?;
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.agent_ns()])
            .arg(exe)
            .args(args);
        Ok(cmd)
    }

    /// One line on what the testbed is.
    pub fn describe(&self) -> String {
        let shaping = match self.rate {
            Some(r) => format!(
                "shaped to {} each way (tbf, every frame counted as on the wire)",
                format_rate(r)
            ),
            None => "unshaped".into(),
        };
        let delay = match self.delay_ms {
            Some(ms) => format!(", {ms} ms delay each way (netem)"),
            None => String::new(),
        };
        format!(
            "testbed {}: namespaces {} ({}, {CLIENT_IF}) and {} ({}, {AGENT_IF}) joined by a veth pair, offloads off, {shaping}{delay}",
            self.base,
            self.client_ns(),
            self.client_ip(),
            self.agent_ns(),
            self.agent_ip()
        )
    }
}

impl Drop for Testbed {
    fn drop(&mut self) {
        if !self.keep {
            let _ = remove(&self.base);
        }
    }
}

fn ping(addr: SocketAddr) -> Result<u8, String> {
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(2))
        .map_err(|e| format!("connect to {addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))
        .map_err(|e| e.to_string())?;
    s.write_all(b"!").map_err(|e| e.to_string())?;
    let mut b = [0u8; 1];
    s.read_exact(&mut b)
        .map_err(|e| format!("no echo from {addr}: {e}"))?;
    Ok(b[0])
}

fn enter(path: &Path) -> Result<(), String> {
    let f = fs::File::open(path).map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    netns::enter_net(f.as_fd()).map_err(|e| format!("cannot enter {}: {e}", path.display()))
}

/// tbf's queue, bytes: more than any socket's send buffer can hold (twice
/// net.core.wmem_max, at least 1 MiB), so a sender blocks on its socket
/// rather than the qdisc dropping its packets.
fn queue_limit() -> u64 {
    let wmem_max = fs::read_to_string("/proc/sys/net/core/wmem_max")
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
        .unwrap_or(0);
    (2 * wmem_max).max(1 << 20)
}

pub(super) fn name_flag(name: &str) -> String {
    if name == DEFAULT_NAME {
        String::new()
    } else {
        format!(" --name {name}")
    }
}

/// `10 Mbit/s`, `1.5 Mbit/s`, `100 kbit/s`.
pub fn format_rate(bits_per_s: u64) -> String {
    let (v, unit) = match bits_per_s {
        r if r >= 1_000_000_000 => (r as f64 / 1e9, "Gbit/s"),
        r if r >= 1_000_000 => (r as f64 / 1e6, "Mbit/s"),
        r if r >= 1_000 => (r as f64 / 1e3, "kbit/s"),
        r => (r as f64, "bit/s"),
    };
    format!("{} {unit}", (v * 1000.0).round() / 1000.0)
}

/// Removes testbed `name`'s namespaces and token file. Ok(false): there
/// was nothing to remove.
pub fn down(name: &str) -> Result<bool, String> {
    let base = base_name(name)?;
    let exists =
        ns_exists(&ns_a(&base)) || ns_exists(&ns_b(&base)) || token_path_of(&base).exists();
    if !exists {
        return Ok(false);
    }
    check_privileges()?;
    remove(&base)
}

fn remove(base: &str) -> Result<bool, String> {
    let mut found = false;
    let mut errors = Vec::new();
    for ns in [ns_a(base), ns_b(base)] {
        if ns_exists(&ns) {
            found = true;
            if let Err(e) = run(&["ip", "netns", "del", &ns]) {
                errors.push(e);
            }
        }
    }
    let token = token_path_of(base);
    if token.exists() {
        found = true;
        if let Err(e) = fs::remove_file(&token) {
            errors.push(format!("cannot remove {}: {e}", token.display()));
        }
    }
    if errors.is_empty() {
        Ok(found)
    } else {
        Err(errors.join("; "))
    }
}

/// Whether a namespace name is one a testbed makes.
fn is_testbed_ns(name: &str) -> bool {
    name.starts_with(DEFAULT_NAME) && (name.ends_with("-a") || name.ends_with("-b"))
}

/// The (device, inode) of every network namespace a thread is in (a
/// thread that entered one with setns, as `enter_client_side` does, shows
/// only under its task).
fn namespaces_in_use() -> Vec<(u64, u64)> {
    let numbered = |dir: &Path| -> Vec<PathBuf> {
        fs::read_dir(dir)
            .map(|d| {
                d.flatten()
                    .filter(|e| e.file_name().to_string_lossy().parse::<u32>().is_ok())
                    .map(|e| e.path())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut used: Vec<(u64, u64)> = numbered(Path::new("/proc"))
        .iter()
        .flat_map(|p| numbered(&p.join("task")))
        .filter_map(|t| fs::metadata(t.join("ns/net")).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect();
    used.sort_unstable();
    used.dedup();
    used
}

/// `ipcmark clean`: removes testbed namespaces no process is in (and the
/// token files of testbeds so removed); keeps those in use.
pub fn clean_stale(report: &mut CleanReport) {
    let Ok(entries) = fs::read_dir(NETNS_DIR) else {
        return;
    };
    let mut names: Vec<String> = entries
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| is_testbed_ns(n))
        .collect();
    if names.is_empty() {
        return;
    }
    names.sort();
    let in_use = namespaces_in_use();
    for name in names {
        let path = Path::new(NETNS_DIR).join(&name);
        let label = format!("network namespace {name}");
        let used = fs::metadata(&path)
            .map(|m| in_use.contains(&(m.dev(), m.ino())))
            .unwrap_or(false);
        if used {
            report.live.push(label);
            continue;
        }
        match run(&["ip", "netns", "del", &name]) {
            Ok(()) => report.removed.push(label),
            Err(e) => report.failed.push(format!("{label}: {e}")),
        }
        let base = &name[..name.len() - 2];
        let token = token_path_of(base);
        if !ns_exists(&ns_a(base)) && !ns_exists(&ns_b(base)) && token.exists() {
            match fs::remove_file(&token) {
                Ok(()) => report.removed.push(token.display().to_string()),
                Err(e) => report.failed.push(format!("{}: {e}", token.display())),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_prefix_clean_knows() {
        assert_eq!(base_name("ipcmark").unwrap(), "ipcmark");
        assert_eq!(base_name("t1").unwrap(), "ipcmark-t1");
        assert_eq!(base_name("ipcmark-x").unwrap(), "ipcmark-x");
        for bad in ["", "-x", "a b", "a/b", &"x".repeat(41)] {
            assert!(base_name(bad).is_err(), "{bad}");
        }
        assert!(is_testbed_ns("ipcmark-a") && is_testbed_ns("ipcmark-t1-b"));
        assert!(!is_testbed_ns("ipcmark-t1") && !is_testbed_ns("other-a"));
    }

    #[test]
    fn subnets_stay_in_the_benchmarking_range() {
        assert_eq!(subnet("ipcmark"), (18, 0));
        let mut seen = std::collections::HashSet::new();
        for i in 0..200 {
            let (b, c) = subnet(&format!("ipcmark-t{i}"));
            assert!(b == 18 || b == 19, "{b}.{c}");
            assert!((b, c) != (18, 0));
            seen.insert((b, c));
        }
        // A hash spreads them: a few collisions among 200 names at most.
        assert!(seen.len() > 150, "{}", seen.len());
    }

    /// In-process use, as `run --preset qnx-network` makes it: the client's
    /// thread finds the shaped link towards the agent, ipcmark starts in
    /// the agent's namespace, and dropping the value removes everything.
    #[test]
    fn a_testbed_in_process_is_found_by_link_for_and_removed_on_drop() {
        if !missing_capabilities().is_empty() || run(&["ethtool", "--version"]).is_err() {
            eprintln!("skipped: needs root and ethtool");
            return;
        }
        let opts = Options {
            name: format!("unit-{}", std::process::id()),
            ..Options::default()
        };
        let tb = Testbed::up(&opts).expect("testbed up");
        let (a, b, token) = (tb.client_ns(), tb.agent_ns(), tb.token_path().to_owned());
        assert!(ns_exists(&a) && ns_exists(&b) && token.exists());
        let agent = std::net::IpAddr::V4(tb.agent_ip());
        let side_a = Path::new(NETNS_DIR).join(&a);
        let link = std::thread::spawn(move || {
            enter(&side_a).expect("enter the client's namespace");
            crate::remote::link::link_for(agent)
        })
        .join()
        .unwrap()
        .expect("a route to the agent");
        assert_eq!(link.interface.as_deref(), Some(CLIENT_IF));
        assert_eq!(link.bits_per_s, Some(DEFAULT_RATE));
        assert_eq!(link.source, format!("tc tbf on {CLIENT_IF}"));
        assert_eq!(link.mtu, 1500);
        // A thread of this process inside a: `clean` sees the namespace in use.
        let (inside_tx, inside_rx) = std::sync::mpsc::channel();
        let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
        let side_a = Path::new(NETNS_DIR).join(&a);
        let holder = std::thread::spawn(move || {
            enter(&side_a).expect("enter the client's namespace");
            inside_tx.send(()).unwrap();
            let _ = release_rx.recv();
        });
        inside_rx.recv().unwrap();
        let ns_of = |ns: &str| {
            let m = fs::metadata(Path::new(NETNS_DIR).join(ns)).unwrap();
            (m.dev(), m.ino())
        };
        let used = namespaces_in_use();
        assert!(used.contains(&ns_of(&a)), "a thread in {a} was not seen");
        assert!(!used.contains(&ns_of(&b)), "{b} is idle");
        release_tx.send(()).unwrap();
        holder.join().unwrap();
        // Here the executable is this test harness: `--list` names this test.
        let out = tb
            .command_in_agent_ns(&["--list"])
            .unwrap()
            .output()
            .unwrap();
        assert!(out.status.success());
        assert!(String::from_utf8_lossy(&out.stdout).contains("in_process_is_found"));
        drop(tb);
        assert!(!ns_exists(&a) && !ns_exists(&b) && !token.exists());
    }

    #[test]
    fn rates_print_in_their_unit() {
        assert_eq!(format_rate(10_000_000), "10 Mbit/s");
        assert_eq!(format_rate(1_500_000), "1.5 Mbit/s");
        assert_eq!(format_rate(100_000), "100 kbit/s");
        assert_eq!(format_rate(1_000_000_000), "1 Gbit/s");
    }
}
