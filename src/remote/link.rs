//! The link a remote figure runs over: the interface the route to the far
//! host leaves by, its speed (the shaping qdisc's rate when one is set, or
//! the device's), its MTU and whether TCP adds timestamps — what `wire`
//! needs to compute the link's maximum.
//!
//! Everything is read in the calling thread's network namespace.

use crate::engine::run::remote::LinkFacts;
use crate::remote::wire::DEFAULT_MTU;
use std::net::{IpAddr, SocketAddr};
use std::process::Command;

/// The link towards one host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Link {
    /// The interface the route leaves by (None when `ip` could not tell).
    pub interface: Option<String>,
    /// Its speed, bits per second; None when unknown (a virtual device that
    /// reports none): the caller then needs `--link-speed`.
    pub bits_per_s: Option<u64>,
    /// Where the speed came from: "/sys/class/net/eth0/speed", "tc tbf on
    /// veth-a", "--link-speed", or why it is unknown.
    pub source: String,
    /// The interface's MTU.
    pub mtu: usize,
    /// Whether TCP segments carry timestamps (net.ipv4.tcp_timestamps).
    pub tcp_timestamps: bool,
    /// Whether the speed is a rate shaper's (tc): a shaper holds a frame
    /// back only when its token bucket is empty, so it limits a stream's
    /// rate but imposes no serialisation time on a frame sent alone.
    pub shaper: bool,
}

impl Link {
    /// The same link at a speed the user gave (`--link-speed`).
    pub fn with_speed(mut self, bits_per_s: u64) -> Link {
        self.bits_per_s = Some(bits_per_s);
        self.source = "--link-speed".into();
        self.shaper = false;
        self
    }
}

/// The link the route to `dest` uses. Fails only when the route itself
/// cannot be found; an unknown speed is `bits_per_s: None` with the reason
/// in `source`.
pub fn link_for(dest: IpAddr) -> Result<Link, String> {
    let out = Command::new("ip")
        .args(["-j", "route", "get", &dest.to_string()])
        .output()
        .map_err(|e| format!("cannot run `ip route get {dest}` (iproute2): {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "no route to {dest}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let interface = route_device(&String::from_utf8_lossy(&out.stdout))
        .ok_or_else(|| format!("`ip route get {dest}` named no interface"))?;
    let sys = |what: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{interface}/{what}"))
            .ok()
            .map(|s| s.trim().to_string())
    };
    let mtu = sys("mtu")
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_MTU);
    let tcp_timestamps = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_timestamps")
        .map(|s| s.trim() != "0")
        .unwrap_or(true);
    let (bits_per_s, source) = match shaped_rate(&interface) {
        Some((kind, rate)) => (Some(rate), format!("tc {kind} on {interface}")),
        None => {
            let path = format!("/sys/class/net/{interface}/speed");
            match sys("speed").and_then(|s| s.parse::<i64>().ok()) {
                Some(mbit) if mbit > 0 => (Some(mbit as u64 * 1_000_000), path),
                _ => (
                    None,
                    format!("{path} gives no speed (a virtual device?): give --link-speed"),
                ),
            }
        }
    };
    Ok(Link {
        interface: Some(interface),
        shaper: source.starts_with("tc "),
        bits_per_s,
        source,
        mtu,
        tcp_timestamps,
    })
}

/// The device of the first route in `ip -j route get` output.
fn route_device(json: &str) -> Option<String> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.get(0)?.get("dev")?.as_str().map(str::to_string)
}

/// The rate of a shaping qdisc at the root of `interface` (tbf, or htb's
/// classes' smallest rate), from `tc -j qdisc show`.
fn shaped_rate(interface: &str) -> Option<(String, u64)> {
    let out = Command::new("tc")
        .args(["-j", "qdisc", "show", "dev", interface])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    if let Some(rate) = tbf_rate(&String::from_utf8_lossy(&out.stdout)) {
        return Some(("tbf".into(), rate));
    }
    let out = Command::new("tc")
        .args(["-j", "class", "show", "dev", interface])
        .output()
        .ok()?;
    htb_rate(&String::from_utf8_lossy(&out.stdout)).map(|r| ("htb".into(), r))
}

/// The root tbf's rate, bits per second (tc's JSON gives bytes per second).
fn tbf_rate(json: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.as_array()?
        .iter()
        .find(|q| q["kind"] == "tbf" && q["root"] == true)
        .and_then(|q| q["options"]["rate"].as_u64())
        .map(|bytes| bytes * 8)
}

/// The smallest rate of the htb classes, bits per second.
fn htb_rate(json: &str) -> Option<u64> {
    let v: serde_json::Value = serde_json::from_str(json).ok()?;
    v.as_array()?
        .iter()
        .filter(|c| c["class"] == "htb")
        .filter_map(|c| c["rate"].as_u64())
        .min()
        .map(|bytes| bytes * 8)
}

/// A rate in bits per second: a number with an optional k, M or G suffix
/// (powers of 1000) and an optional "bit" or "bit/s", e.g. `10M`,
/// `100kbit`, `1G`, `1.5M`.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let bad = || format!("bad rate '{s}': expected bits per second, like 10M, 100k or 1G");
    let t = s.trim();
    let t = t
        .strip_suffix("bit/s")
        .or_else(|| t.strip_suffix("bit"))
        .or_else(|| t.strip_suffix("bps"))
        .unwrap_or(t);
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let mult = match c {
                'k' | 'K' => 1e3,
                'm' | 'M' => 1e6,
                'g' | 'G' => 1e9,
                _ => return Err(bad()),
            };
            (&t[..i], mult)
        }
        _ => (t, 1.0),
    };
    let n: f64 = num.parse().map_err(|_| bad())?;
    let bits = n * mult;
    if !bits.is_finite() || bits < 0.0 || bits > u64::MAX as f64 || bits.fract() != 0.0 {
        return Err(bad());
    }
    Ok(bits as u64)
}

/// The link to the agent at `agent` as its figures record it: the route's
/// interface and speed, or the speed `--link-speed` gives (`speed`). The
/// error is the warning to print when neither says: the figures then have
/// no efficiency, and the run goes on.
pub fn link_to(agent: SocketAddr, speed: Option<u64>) -> Result<LinkFacts, String> {
    facts(agent, link_for(agent.ip()), speed)
}

/// [`link_to`] once the route has been read (`found`).
fn facts(
    agent: SocketAddr,
    found: Result<Link, String>,
    speed: Option<u64>,
) -> Result<LinkFacts, String> {
    let found = found.map(|l| match speed {
        Some(b) => l.with_speed(b),
        None => l,
    });
    let link = match (found, speed) {
        (Ok(l), _) => l,
        // No route to read (an odd address family): the wire's defaults.
        (Err(_), Some(b)) => Link {
            interface: None,
            bits_per_s: Some(b),
            source: "--link-speed".into(),
            mtu: DEFAULT_MTU,
            tcp_timestamps: true,
            shaper: false,
        },
        (Err(e), None) => {
            return Err(format!(
                "the link to {agent}: {e}; give --link-speed for the efficiency"
            ));
        }
    };
    match link.bits_per_s {
        Some(bits_per_s) => Ok(LinkFacts {
            bits_per_s,
            source: link.source,
            interface: link.interface,
            mtu: link.mtu,
            tcp_timestamps: link.tcp_timestamps,
            shaper: link.shaper,
        }),
        None => Err(format!("the link to {agent}: {}", link.source)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_with_their_suffixes() {
        assert_eq!(parse_rate("10M"), Ok(10_000_000));
        assert_eq!(parse_rate("10mbit"), Ok(10_000_000));
        assert_eq!(parse_rate("100k"), Ok(100_000));
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("1.5M"), Ok(1_500_000));
        assert_eq!(parse_rate("9600"), Ok(9600));
        assert_eq!(parse_rate("0"), Ok(0));
        for bad in ["", "M", "10X", "-1M", "ten", "0.5", "1e400"] {
            let e = parse_rate(bad).unwrap_err();
            assert!(e.contains("bad rate") && !e.contains('\n'), "{bad}: {e}");
        }
    }

    #[test]
    fn the_route_names_its_device() {
        let json = r#"[{"dst":"198.18.0.2","dev":"veth-a","prefsrc":"198.18.0.1","flags":[],"uid":0,"cache":[]}]"#;
        assert_eq!(route_device(json).as_deref(), Some("veth-a"));
        assert_eq!(route_device("[]"), None);
        assert_eq!(route_device("not json"), None);
    }

    #[test]
    fn a_root_tbf_gives_its_rate_in_bits() {
        // As `tc -j qdisc show` prints the testbed's qdisc.
        let json = r#"[{"kind":"tbf","handle":"1:","root":true,"refcnt":3,"options":{"rate":1250000,"burst":"3200b/1","mpu":0,"lat":797440,"linklayer":"ethernet"},"stab":{"linklayer":"ethernet","overhead":24,"mpu":84,"mtu":2047,"tsize":2048}}]"#;
        assert_eq!(tbf_rate(json), Some(10_000_000));
        let fq = r#"[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}]"#;
        assert_eq!(tbf_rate(fq), None);
        let htb = r#"[{"class":"htb","handle":"1:10","root":true,"rate":125000},{"class":"htb","handle":"1:1","rate":1250000}]"#;
        assert_eq!(htb_rate(htb), Some(1_000_000));
    }

    #[test]
    fn loopback_has_a_route_and_its_mtu() {
        // lo exists in every namespace; its speed is unreadable, so either
        // a shaping qdisc or the reason it is unknown is named.
        let link = link_for("127.0.0.1".parse().unwrap()).expect("route to 127.0.0.1");
        assert_eq!(link.interface.as_deref(), Some("lo"));
        assert!(link.mtu >= 1280);
        if link.bits_per_s.is_none() {
            assert!(link.source.contains("--link-speed"), "{}", link.source);
        }
        let given = link.with_speed(10_000_000);
        assert_eq!(
            (given.bits_per_s, given.source.as_str()),
            (Some(10_000_000), "--link-speed")
        );
    }

    #[test]
    fn the_link_to_the_agent_is_the_routes_or_the_given_speed_or_a_warning() {
        let agent: SocketAddr = "198.18.0.2:7207".parse().unwrap();
        let route = || Link {
            interface: Some("veth-a".into()),
            bits_per_s: Some(10_000_000),
            source: "tc tbf on veth-a".into(),
            mtu: 1500,
            tcp_timestamps: false,
            shaper: true,
        };
        let found = facts(agent, Ok(route()), None).unwrap();
        assert_eq!(
            (found.bits_per_s, found.source.as_str(), found.shaper),
            (10_000_000, "tc tbf on veth-a", true)
        );
        // A given speed replaces the route's, on the route's interface.
        let given = facts(agent, Ok(route()), Some(1_000_000_000)).unwrap();
        assert_eq!(
            (given.bits_per_s, given.source.as_str(), given.shaper),
            (1_000_000_000, "--link-speed", false)
        );
        assert_eq!(given.interface.as_deref(), Some("veth-a"));
        // No route: the given speed with the wire's defaults, else a warning.
        let bare = facts(agent, Err("no route".into()), Some(9600)).unwrap();
        assert_eq!((bare.interface, bare.mtu), (None, DEFAULT_MTU));
        assert_eq!(
            facts(agent, Err("no route".into()), None).unwrap_err(),
            "the link to 198.18.0.2:7207: no route; give --link-speed for the efficiency"
        );
        let unknown = Link {
            bits_per_s: None,
            source: "veth-a reports no speed: give --link-speed".into(),
            ..route()
        };
        assert_eq!(
            facts(agent, Ok(unknown), None).unwrap_err(),
            "the link to 198.18.0.2:7207: veth-a reports no speed: give --link-speed"
        );
    }
}
