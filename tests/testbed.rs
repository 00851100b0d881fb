//! `ipcmark testbed up|down`: two hosts on this machine. What it makes, that
//! traffic crosses it, that nothing is left after `down` or `clean`. No
//! test here times the link: bench/testbed_rate.sh measures the shaping.

use crate::util::*;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream, UdpSocket};
use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::Duration;

fn json(args: &[&str]) -> serde_json::Value {
    let out = Command::new(args[0])
        .args(&args[1..])
        .output()
        .expect("run");
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

fn namespaces() -> Vec<String> {
    let out = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .expect("ip netns list");
    stdout(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

macro_rules! testbed_or_skip {
    ($rate:expr) => {
        match TestBed::try_new($rate) {
            Ok(tb) => tb,
            Err(why) => {
                eprintln!("skipped: {why}");
                return;
            }
        }
    };
}

/// Whether a testbed can be made here; if not, says the test is skipped.
fn namespaces_can_be_made() -> bool {
    let can = TestBed::try_new("none").map(drop).is_ok();
    if !can {
        eprintln!("skipped: namespaces cannot be made here");
    }
    can
}

#[test]
fn up_makes_two_namespaces_joined_and_shaped_each_way() {
    let _g = serial();
    let tb = testbed_or_skip!("10M");
    let ns = namespaces();
    assert!(
        ns.contains(&tb.client_ns) && ns.contains(&tb.agent_ns),
        "{ns:?}"
    );
    // One /24 of 198.18.0.0/15, .1 on the client's side, .2 on the agent's.
    let (a, b) = (&tb.client_ip, &tb.agent_ip);
    assert!(a.starts_with("198.18.") || a.starts_with("198.19."), "{a}");
    assert_eq!(
        a.rsplit_once('.').unwrap(),
        (b.rsplit_once('.').unwrap().0, "1")
    );
    assert!(b.ends_with(".2"), "{b}");
    for (ns, dev) in [(&tb.client_ns, "veth-a"), (&tb.agent_ns, "veth-b")] {
        let addr = json(&["ip", "-n", ns, "-j", "addr", "show", "dev", dev]);
        assert_eq!(addr[0]["operstate"], "UP", "{addr}");
        assert_eq!(addr[0]["addr_info"][0]["prefixlen"], 24, "{addr}");
        let link = json(&["ip", "-n", ns, "-j", "-d", "link", "show", "dev", dev]);
        assert_eq!(link[0]["gso_max_segs"], 1, "{link}");
        let lo = json(&["ip", "-n", ns, "-j", "link", "show", "dev", "lo"]);
        assert!(lo[0]["flags"].as_array().unwrap().contains(&"UP".into()));
        // tbf at 10 Mbit/s (tc's JSON gives bytes/s) behind the size table
        // that counts preamble, SFD, FCS, gap and padding.
        let q = json(&["tc", "-n", ns, "-j", "-d", "qdisc", "show", "dev", dev]);
        assert_eq!(q[0]["kind"], "tbf", "{q}");
        assert_eq!(q[0]["root"], true, "{q}");
        assert_eq!(q[0]["options"]["rate"], 1_250_000, "{q}");
        assert_eq!(q[0]["stab"]["overhead"], 24, "{q}");
        assert_eq!(q[0]["stab"]["mpu"], 84, "{q}");
        let k = Command::new("ip")
            .args(["netns", "exec", ns, "ethtool", "-k", dev])
            .output()
            .expect("ethtool -k");
        let features = stdout(&k);
        for f in [
            "tcp-segmentation-offload: off",
            "generic-segmentation-offload: off",
            "generic-receive-offload: off",
        ] {
            assert!(features.contains(f), "{dev}: {f} not found in\n{features}");
        }
    }
    // ipcmark runs on either side.
    for mut c in [tb.exec_a(&["--version"]), tb.exec_b(&["--version"])] {
        let out = wait_with_deadline(c.spawn().unwrap(), Duration::from_secs(10));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // A fresh secret only root can read; `up` says how to use all of it.
    let meta = std::fs::metadata(&tb.token).expect("token file");
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    let token = std::fs::read_to_string(&tb.token).unwrap();
    assert_eq!(token.trim().len(), 64, "{token}");
    assert!(token.trim().chars().all(|c| c.is_ascii_hexdigit()));
    let token_path = tb.token.display().to_string();
    let serve = format!("ip netns exec {} ", tb.agent_ns);
    let run = format!("ip netns exec {} ", tb.client_ns);
    for want in [
        &serve,
        &format!("serve --listen {b} --token-file {token_path}"),
        &run,
        &format!("run tcp --remote {b} --token-file {token_path}"),
        &format!("testbed down --name {}", tb.name),
        &format!("testbed mpirun --name {} -- -n 2 PROGRAM", tb.name),
        &"10 Mbit/s".to_string(),
    ] {
        assert!(
            tb.up_stdout.contains(want.as_str()),
            "{want:?} in\n{}",
            tb.up_stdout
        );
    }
}

#[test]
fn tcp_and_udp_cross_from_the_client_side_to_the_agent_side() {
    let _g = serial();
    let tb = testbed_or_skip!("10M");
    let agent = tb.agent_ip.clone();
    let listener = TestBed::in_ns(&tb.agent_ns, move || {
        TcpListener::bind((agent.as_str(), 0)).expect("bind on the agent's side")
    });
    let addr = listener.local_addr().unwrap();
    let udp_agent = {
        let agent = tb.agent_ip.clone();
        TestBed::in_ns(&tb.agent_ns, move || {
            UdpSocket::bind((agent.as_str(), 0)).expect("udp bind")
        })
    };
    let udp_addr = udp_agent.local_addr().unwrap();
    let echo = std::thread::spawn(move || {
        let (mut s, peer) = listener.accept().expect("accept");
        let mut buf = vec![0u8; 100_000];
        s.read_exact(&mut buf).expect("read");
        s.write_all(&buf).expect("echo");
        peer
    });
    let client_ip = tb.client_ip.clone();
    let (echoed, udp_got) = TestBed::in_ns(&tb.client_ns, move || {
        let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        let sent: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        s.write_all(&sent).expect("write");
        let mut back = vec![0u8; sent.len()];
        s.read_exact(&mut back).expect("read the echo");
        let u = UdpSocket::bind((client_ip.as_str(), 0)).unwrap();
        u.send_to(b"datagram", udp_addr).unwrap();
        (back == sent, u.local_addr().unwrap())
    });
    assert!(echoed, "the echo came back changed");
    // The agent's side saw the client's address: no other route was taken.
    assert_eq!(echo.join().unwrap().ip().to_string(), tb.client_ip);
    udp_agent
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut buf = [0u8; 64];
    let (n, from) = udp_agent.recv_from(&mut buf).expect("the datagram arrives");
    assert_eq!((&buf[..n], from), (&b"datagram"[..], udp_got));
}

#[test]
fn down_leaves_nothing_and_down_of_nothing_is_not_an_error() {
    let _g = serial();
    let tb = testbed_or_skip!("none");
    let (name, a, b, token) = (
        tb.name.clone(),
        tb.client_ns.clone(),
        tb.agent_ns.clone(),
        tb.token.clone(),
    );
    // Unshaped: no qdisc of ipcmark's at the root.
    let q = json(&["tc", "-n", &a, "-j", "qdisc", "show", "dev", "veth-a"]);
    assert_ne!(q[0]["kind"], "tbf", "{q}");
    drop(tb);
    let ns = namespaces();
    assert!(!ns.contains(&a) && !ns.contains(&b), "{ns:?}");
    assert!(!token.exists());
    let out = testbed_cmd(&["down", "--name", &name]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("nothing to remove"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn up_twice_fails_with_one_line_and_leaves_the_first_alone() {
    let _g = serial();
    let tb = testbed_or_skip!("10M");
    let out = testbed_cmd(&["up", "--name", &tb.name]);
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(err.contains("exists already"), "{err}");
    let ns = namespaces();
    assert!(ns.contains(&tb.client_ns) && ns.contains(&tb.agent_ns));
    assert!(tb.token.exists());
}

#[test]
fn bad_testbed_usage_exits_2_with_one_line() {
    for args in [
        &["up", "--rate", "10X"][..],
        &["up", "--name", "a b"][..],
        &["up", "--delay", "0"][..],
        &["down", "--name", "-x/"][..],
    ] {
        let out = testbed_cmd(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn a_delay_needs_netem_and_says_so_where_it_is_missing() {
    let _g = serial();
    if !namespaces_can_be_made() {
        return;
    }
    let name = unique_testbed_name();
    let out = testbed_cmd(&["up", "--name", &name, "--delay", "5"]);
    if out.status.success() {
        let ns = format!("ipcmark-{name}-a");
        let q = json(&["tc", "-n", &ns, "-j", "qdisc", "show", "dev", "veth-a"]);
        let kinds: Vec<_> = q.as_array().unwrap().iter().map(|q| &q["kind"]).collect();
        assert!(kinds.contains(&&"netem".into()), "{q}");
        assert!(testbed_cmd(&["down", "--name", &name]).status.success());
    } else {
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains("netem"), "{err}");
        assert!(!namespaces().iter().any(|n| n.contains(&name)));
    }
}

#[test]
fn without_root_up_names_what_is_missing() {
    let Some(nobody) = Nobody::or_skip("without_root_up_names_what_is_missing") else {
        return;
    };
    let sb = Sandbox::new();
    let out = wait_with_deadline(
        nobody
            .cmd(&sb, &["testbed", "up", "--name", &unique_testbed_name()])
            .spawn()
            .unwrap(),
        Duration::from_secs(20),
    );
    assert_eq!(out.status.code(), Some(1));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("CAP_NET_ADMIN") && err.contains("root"),
        "{err}"
    );
}

#[test]
fn clean_removes_an_idle_testbed_and_keeps_one_in_use() {
    let _g = serial();
    if !namespaces_can_be_made() {
        return;
    }
    let name = unique_testbed_name();
    let out = testbed_cmd(&["up", "--name", &name, "--rate", "none"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let (a, b) = (format!("ipcmark-{name}-a"), format!("ipcmark-{name}-b"));
    let token = format!("/run/ipcmark/testbed-ipcmark-{name}.token");
    // A process inside the agent's side: that namespace is in use.
    let mut inside = Command::new("ip")
        .args(["netns", "exec", &b, "sleep", "60"])
        .spawn()
        .expect("sleep in the namespace");
    let sb = Sandbox::new();
    let out = sb.run(&["clean"], Duration::from_secs(30));
    inside.kill().unwrap();
    inside.wait().unwrap();
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains(&format!("removed network namespace {a}")),
        "{text}"
    );
    assert!(
        text.contains(&format!("kept network namespace {b}")),
        "{text}"
    );
    assert!(namespaces().contains(&b) && !namespaces().contains(&a));
    let out = sb.run(&["clean"], Duration::from_secs(30));
    let text = stdout(&out);
    assert!(
        text.contains(&format!("removed network namespace {b}")),
        "{text}"
    );
    assert!(text.contains(&format!("removed {token}")), "{text}");
    assert!(!namespaces().iter().any(|n| n.contains(&name)));
    assert!(!std::path::Path::new(&token).exists());
}

#[test]
fn testbed_mpirun_and_its_agent_name_a_missing_testbed_in_one_line() {
    let name = unique_testbed_name();
    for (args, code) in [
        (vec!["mpirun", "--name", &name, "--", "-n", "2", "true"], 1),
        (vec!["node", &name, "somehost", "true"], 1),
        (vec!["mpirun", "--name", "a b", "--", "true"], 2),
    ] {
        let out = testbed_cmd(&args);
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        if code == 1 {
            assert!(
                err.contains("no testbed") && err.contains("testbed up"),
                "{err}"
            );
        }
        assert!(stdout(&out).is_empty(), "{args:?}");
    }
}

#[test]
fn a_missing_tool_is_named_before_anything_is_made() {
    let _g = serial();
    if !namespaces_can_be_made() {
        return;
    }
    // A PATH with ip and tc but no ethtool.
    let dir = tempfile::tempdir().unwrap();
    for tool in ["ip", "tc"] {
        let at = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .unwrap();
        std::os::unix::fs::symlink(stdout(&at).trim(), dir.path().join(tool)).unwrap();
    }
    let name = unique_testbed_name();
    let child = Command::new(bin())
        .args(["testbed", "up", "--name", &name])
        .env("PATH", dir.path())
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_with_deadline(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.contains("ethtool is missing") && err.contains("apt-get install ethtool"),
        "{err}"
    );
    assert!(!namespaces().iter().any(|n| n.contains(&name)));
}
