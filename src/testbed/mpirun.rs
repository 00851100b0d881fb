//! MPI jobs across the testbed: its two namespaces as two nodes, so that a
//! figure between MPI ranks crosses a (shaped) network without a second
//! machine or ssh (docs/cluster.md, "Across the testbed").
//!
//! Open MPI's mpirun runs on node `BASE-a`: in that namespace, under a UTS
//! namespace of its own whose host name is `BASE-a`, so the ranks it
//! starts there are on that node. Ranks on `BASE-b` are started by the
//! `orted` daemon Open MPI launches through its rsh launcher, whose agent
//! (instead of ssh) is `ipcmark testbed node`: it enters the node's
//! namespaces the same way and runs the command line Open MPI gives it
//! with `/bin/sh -c`, as sshd would. The namespace names are the node
//! names, in the hostfile and as each node's host name, so that
//! `MPI_Get_processor_name` tells the nodes apart. Messages between the
//! nodes go over TCP on the veth (ob1 with the tcp BTL; UCX is left out,
//! since it would find the two nodes to be one machine and use shared
//! memory), and between ranks on one node over shared memory (vader).

use super::{self as testbed, NETNS_DIR};
use crate::engine::os::objects::{Cleanup, ObjectNamer};
use crate::sys::{netns, process, signal};
use std::convert::Infallible;
use std::ffi::{CString, OsString};
use std::fs;
use std::net::Ipv4Addr;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The two nodes of a testbed that exists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Nodes {
    base: String,
    net: (u8, u8),
}

impl Nodes {
    /// The nodes of testbed `name` (as `ipcmark testbed up --name` made it).
    pub fn find(name: &str) -> Result<Nodes, String> {
        let base = testbed::base_name(name)?;
        let nodes = Nodes::of_base(base);
        let [a, b] = nodes.names();
        if !testbed::ns_exists(&a) || !testbed::ns_exists(&b) {
            return Err(format!(
                "no testbed {} (namespaces {a} and {b}): `ipcmark testbed up{}` makes it",
                nodes.base,
                testbed::name_flag(name)
            ));
        }
        Ok(nodes)
    }

    fn of_base(base: String) -> Nodes {
        Nodes {
            net: testbed::subnet(&base),
            base,
        }
    }

    /// The node names, which are also their namespaces' and host names:
    /// `BASE-a` (where mpirun runs) and `BASE-b`.
    pub fn names(&self) -> [String; 2] {
        [testbed::ns_a(&self.base), testbed::ns_b(&self.base)]
    }

    /// The testbed's /24, which every MPI connection between nodes uses.
    pub fn subnet(&self) -> String {
        format!("198.{}.{}.0/24", self.net.0, self.net.1)
    }

    fn address(&self, side: usize) -> Ipv4Addr {
        Ipv4Addr::new(198, self.net.0, self.net.1, 1 + side as u8)
    }

    /// The namespace of `host`: a node's name or its address.
    pub fn namespace_of(&self, host: &str) -> Option<String> {
        let names = self.names();
        (0..2)
            .find(|&i| host == names[i] || host.parse::<Ipv4Addr>() == Ok(self.address(i)))
            .map(|i| names[i].clone())
    }

    /// The hostfile: one slot on each node, so that `-n 2` puts rank 0 on
    /// `BASE-a` and rank 1 on `BASE-b` (more ranks need `--oversubscribe`,
    /// and `--host BASE-a:2` puts two on one node).
    pub fn hostfile(&self) -> String {
        self.names()
            .iter()
            .map(|n| format!("{n} slots=1\n"))
            .collect()
    }

    /// mpirun's arguments before the user's: the hostfile, the rsh launcher
    /// with `agent` (a command line of words without spaces), MPI's traffic
    /// between nodes kept to the testbed's veth, and no binding by default.
    pub fn mpirun_args(&self, hostfile: &Path, agent: &str) -> Vec<OsString> {
        let net = self.subnet();
        let mut args: Vec<OsString> = vec!["--hostfile".into(), hostfile.into()];
        for (key, value) in [
            // The launcher, even inside a Slurm allocation.
            ("plm", "rsh"),
            ("plm_rsh_agent", agent),
            // mpirun and its daemon talk over the veth...
            ("oob_tcp_if_include", &net),
            // ...and so do the ranks: ob1's TCP between the nodes, shared
            // memory within one.
            ("pml", "ob1"),
            ("btl", "tcp,self,vader"),
            ("btl_tcp_if_include", &net),
            // Both nodes are this machine: mpirun's default binding puts the
            // first rank of each node on core 0, both on one CPU, where two
            // polling ranks take turns by scheduler ticks (4 ms one way
            // here). Unbound unless the user says `--bind-to`, which wins.
            ("hwloc_base_binding_policy", "none"),
        ] {
            args.extend(["--mca".into(), key.into(), value.into()]);
        }
        args
    }
}

fn open_namespace(ns: &str) -> Result<OwnedFd, String> {
    let path = Path::new(NETNS_DIR).join(ns);
    fs::File::open(&path)
        .map(OwnedFd::from)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

fn hostname(ns: &str) -> Result<CString, String> {
    CString::new(ns).map_err(|_| format!("bad node name {ns:?}"))
}

/// `ipcmark testbed node`: Open MPI's rsh agent. Runs `words` (the command
/// line Open MPI hands ssh, joined with spaces as ssh does) with
/// `/bin/sh -c` on node `host` of testbed `name`; never returns on success.
pub fn exec_on_node(name: &str, host: &str, words: &[String]) -> Result<Infallible, NodeError> {
    let nodes = Nodes::find(name).map_err(NodeError::Failed)?;
    let ns = nodes.namespace_of(host).ok_or_else(|| {
        let [a, b] = nodes.names();
        NodeError::Usage(format!(
            "{host} is not a node of testbed {}: its nodes are {a} and {b}",
            nodes.base
        ))
    })?;
    if words.is_empty() {
        return Err(NodeError::Usage(format!("nothing to run on {ns}")));
    }
    testbed::check_privileges().map_err(NodeError::Failed)?;
    let net = open_namespace(&ns).map_err(NodeError::Failed)?;
    netns::enter_node(net.as_fd(), &hostname(&ns).map_err(NodeError::Failed)?)
        .map_err(|e| NodeError::Failed(format!("cannot enter node {ns}: {e}")))?;
    drop(net);
    let e = Command::new("/bin/sh")
        .arg("-c")
        .arg(words.join(" "))
        .exec();
    Err(NodeError::Failed(format!(
        "cannot run /bin/sh on {ns}: {e}"
    )))
}

/// Why `ipcmark testbed node` could not run its command.
#[derive(Debug)]
pub enum NodeError {
    /// The arguments name no node (exit 2).
    Usage(String),
    /// The node could not be entered (exit 1).
    Failed(String),
}

/// How an mpirun across the testbed ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// mpirun exited with this code (the job's).
    Exited(i32),
    /// mpirun was killed by this signal.
    Killed(i32),
}

/// Signals that would end `ipcmark testbed mpirun` before it removed its
/// hostfile: held blocked while mpirun runs, and passed on to it.
const FORWARDED: [i32; 4] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT];

/// `ipcmark testbed mpirun`: runs `mpirun` on node `BASE-a` of testbed
/// `name` with the testbed's hostfile, launcher and network settings
/// ([`Nodes::mpirun_args`]) followed by `user_args`, and waits for it.
/// `agent` is the command line of `ipcmark testbed node NAME`. The
/// hostfile's directory is removed on every way out; a SIGINT, SIGTERM,
/// SIGHUP or SIGQUIT is passed on to mpirun, which ends its job, and if
/// this process is killed outright mpirun gets SIGTERM.
pub fn run_mpirun(name: &str, agent: &str, user_args: &[OsString]) -> Result<JobEnd, String> {
    let nodes = Nodes::find(name)?;
    testbed::check_privileges()?;
    check_open_mpi()?;
    let [a, _] = nodes.names();
    let net = open_namespace(&a)?;
    let dir = ObjectNamer::new()
        .temp_dir(&std::env::temp_dir(), "mpi-hosts")
        .map_err(|e| format!("cannot make a directory for the hostfile: {e}"))?;
    let _remove = Cleanup::remove_dir(dir.clone());
    let hostfile: PathBuf = dir.join("hostfile");
    fs::write(&hostfile, nodes.hostfile())
        .map_err(|e| format!("cannot write {}: {e}", hostfile.display()))?;

    let mut cmd = Command::new("mpirun");
    cmd.args(nodes.mpirun_args(&hostfile, agent))
        .args(user_args)
        // The testbed needs root, and Open MPI refuses root without both
        // (the daemon on the other node inherits them through the agent).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    netns::spawn_in_node(&mut cmd, net, hostname(&a)?);
    process::parent_death_signal_for(&mut cmd, libc::SIGTERM);
    // Blocked before the spawn, so that none is lost in between; the child
    // starts with an empty mask (std::process resets it before exec).
    let old = signal::block(&FORWARDED).map_err(|e| format!("cannot block signals: {e}"))?;
    let result = spawn_and_wait(&mut cmd);
    let _ = signal::thread_mask(libc::SIG_SETMASK, &old);
    result
}

fn spawn_and_wait(cmd: &mut Command) -> Result<JobEnd, String> {
    let mut child = cmd.spawn().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => MPIRUN_MISSING.to_string(),
        _ => format!("cannot start mpirun on the testbed: {e}"),
    })?;
    let pid = child.id() as libc::pid_t;
    let pending = signal::SigSet::of(&FORWARDED);
    loop {
        if let Some(status) = child
            .try_wait()
            .map_err(|e| format!("waiting for mpirun: {e}"))?
        {
            use std::os::unix::process::ExitStatusExt;
            return Ok(match (status.code(), status.signal()) {
                (Some(code), _) => JobEnd::Exited(code),
                (None, Some(sig)) => JobEnd::Killed(sig),
                (None, None) => JobEnd::Exited(1),
            });
        }
        while let Ok(Some(sig)) = signal::take_pending(&pending) {
            let _ = process::kill(pid, sig);
        }
        // mpirun's end is seen within this; no signal is lost meanwhile.
        std::thread::sleep(Duration::from_millis(20));
    }
}

const MPIRUN_MISSING: &str =
    "mpirun is missing: testbed mpirun runs Open MPI's (apt-get install openmpi-bin)";

/// The testbed's launcher is Open MPI's rsh agent: MPICH's mpirun takes
/// other options.
fn check_open_mpi() -> Result<(), String> {
    let out = Command::new("mpirun")
        .arg("--version")
        .stdin(Stdio::null())
        .output()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => MPIRUN_MISSING.to_string(),
            _ => format!("cannot run mpirun --version: {e}"),
        })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if text.contains("Open MPI") {
        Ok(())
    } else {
        Err(format!(
            "testbed mpirun needs Open MPI's mpirun (its rsh launcher takes ipcmark as its agent), and this one says: {}",
            text.lines().next().unwrap_or("nothing").trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_the_namespaces_and_answer_to_their_addresses() {
        let n = Nodes::of_base("ipcmark".into());
        assert_eq!(n.names(), ["ipcmark-a", "ipcmark-b"]);
        assert_eq!(n.subnet(), "198.18.0.0/24");
        assert_eq!(n.namespace_of("ipcmark-b").as_deref(), Some("ipcmark-b"));
        assert_eq!(n.namespace_of("198.18.0.1").as_deref(), Some("ipcmark-a"));
        assert_eq!(n.namespace_of("198.18.0.3"), None);
        assert_eq!(n.namespace_of("localhost"), None);
        assert_eq!(n.hostfile(), "ipcmark-a slots=1\nipcmark-b slots=1\n");
    }

    #[test]
    fn mpirun_keeps_every_connection_on_the_testbed() {
        let n = Nodes::of_base("ipcmark-x".into());
        let args: Vec<String> = n
            .mpirun_args(Path::new("/t/h"), "/bin/ipcmark testbed node x")
            .into_iter()
            .map(|a| a.into_string().unwrap())
            .collect();
        let net = n.subnet();
        let joined = args.join(" ");
        assert!(joined.starts_with("--hostfile /t/h "), "{joined}");
        for want in [
            "--mca plm rsh ".to_string(),
            "--mca plm_rsh_agent /bin/ipcmark testbed node x ".into(),
            format!("--mca oob_tcp_if_include {net} "),
            "--mca pml ob1 ".into(),
            "--mca btl tcp,self,vader ".into(),
            format!("--mca btl_tcp_if_include {net} "),
            "--mca hwloc_base_binding_policy none".into(),
        ] {
            assert!(joined.contains(&want), "{want} in {joined}");
        }
    }
}
