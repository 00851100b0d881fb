//! The terminal rendering of `ipcmark advise`: the ranking, where each
//! prediction came from, the mechanisms that could not be ranked, the
//! crossovers, and `--verify`'s predicted against measured.

use crate::output::sanitise;
use crate::output::table::{align_right, format_size, new_table};
use crate::record::advise::{AdviseReport, Meets, Sourced, Standing};

fn us(ns: f64) -> String {
    format!("{:.2}", ns / 1e3)
}

fn opt(s: &Option<Sourced>, f: impl Fn(f64) -> String) -> String {
    s.as_ref().map_or("not measured".into(), |s| f(s.value))
}

fn rate(v: f64) -> String {
    if v >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if v >= 1e3 {
        format!("{:.1}k", v / 1e3)
    } else {
        format!("{v:.0}")
    }
}

fn meets(m: &Meets) -> String {
    let parts: Vec<String> = [
        ("p50", m.p50),
        ("p99", m.p99),
        ("rate", m.rate),
        ("cpu", m.cpu_per_msg),
    ]
    .iter()
    .filter_map(|(n, v)| v.map(|ok| format!("{n} {}", if ok { "yes" } else { "NO" })))
    .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// The advice as the terminal shows it.
pub fn render(r: &AdviseReport) -> String {
    let n = &r.need;
    let mut need = vec![format!("size {}", format_size(n.size_bytes))];
    if let Some(v) = n.p50_ns {
        need.push(format!("p50 ≤ {} µs", us(v)));
    }
    if let Some(v) = n.p99_ns {
        need.push(format!("p99 ≤ {} µs", us(v)));
    }
    if let Some(v) = n.rate_per_s {
        need.push(format!("rate ≥ {}/s", rate(v)));
    }
    if let Some(v) = n.cpu_per_msg_ns {
        need.push(format!("CPU/msg ≤ {} µs", us(v)));
    }
    if let Some(c) = &n.cpus {
        need.push(format!(
            "on CPUs {}",
            c.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ));
    }
    let mut out = format!(
        "need: {} — host {}, runs read: {}\n",
        need.join(", "),
        sanitise::text(&r.host),
        r.runs_read
    );
    // Under a stated rate, the latency a rate curve gives there, and the
    // highest rate it kept up with, beside the closed-loop figures.
    let under_rate = n.rate_per_s.is_some();
    let mut head = vec!["#", "mechanism", "p50 µs", "p99 µs", "rate msg/s"];
    if under_rate {
        head.extend(["p99 at rate µs", "kept up to"]);
    }
    head.extend(["CPU/msg µs", "meets", "standing"]);
    let mut t = new_table(head);
    for a in &r.ranking {
        let standing = match a.standing {
            Standing::MeetsAll => "meets all".to_string(),
            Standing::Unknown => "cannot tell".to_string(),
            Standing::Misses => format!("misses by {:.0}%", a.miss * 100.0),
        };
        let mut row = vec![
            a.rank.to_string(),
            sanitise::text(&a.benchmark).into_owned(),
            us(a.p50.value),
            opt(&a.p99, us),
            opt(&a.rate, rate),
        ];
        if under_rate {
            match &a.at_rate {
                Some(r) => row.extend([
                    r.p99.as_ref().map_or("beyond".into(), |s| us(s.value)),
                    opt(&r.highest_kept_up, rate),
                ]),
                None => row.extend(["no curve".to_string(), "no curve".to_string()]),
            }
        }
        row.extend([opt(&a.cpu_per_msg, us), meets(&a.meets), standing]);
        t.add_row(row);
    }
    align_right(&mut t, 2..if under_rate { 8 } else { 6 });
    out.push_str(&format!("{t}\n"));
    out.push_str("where each prediction came from:\n");
    for a in &r.ranking {
        let mut line = format!(
            "  {}: p50 {} (run {})",
            sanitise::text(&a.benchmark),
            sanitise::text(&a.p50.from),
            a.p50.run_id
        );
        for (what, s) in [("p99", &a.p99), ("rate", &a.rate), ("CPU", &a.cpu_per_msg)] {
            if let Some(s) = s {
                line.push_str(&format!(
                    "; {what} {} (run {})",
                    sanitise::text(&s.from),
                    s.run_id
                ));
            }
        }
        if let Some(r) = &a.at_rate {
            match (&r.p99, &r.note) {
                (Some(p), _) => line.push_str(&format!(
                    "; at {}/s: p99 {} µs from {} (run {})",
                    rate(r.rate),
                    us(p.value),
                    sanitise::text(&p.from),
                    p.run_id
                )),
                (None, Some(why)) => line.push_str(&format!("; {}", sanitise::text(why))),
                (None, None) => {}
            }
        }
        if let Some(o) = &a.oneway {
            line.push_str(&format!(
                "; one way: p50 {} µs, p99 {} µs, from {} (run {})",
                us(o.p50.value),
                us(o.p99.value),
                sanitise::text(&o.predicted_as),
                o.p50.run_id
            ));
        }
        out.push_str(&line);
        out.push('\n');
    }
    for u in &r.unrankable {
        out.push_str(&format!(
            "unrankable: {}: {}\n",
            sanitise::text(&u.benchmark),
            sanitise::text(&u.reason)
        ));
    }
    if r.crossovers.is_empty() {
        out.push_str("crossovers between the top picks: none (no two of them have cost models)\n");
    }
    for c in &r.crossovers {
        let (a, b) = (sanitise::text(&c.a), sanitise::text(&c.b));
        let faster = sanitise::text(&c.faster_below);
        match c.size_bytes {
            Some(x) => out.push_str(&format!(
                "crossover {a} / {b}: at {:.0} bytes ({faster} faster below; runs {}, {})\n",
                x, c.run_ids[0], c.run_ids[1]
            )),
            None => out.push_str(&format!(
                "crossover {a} / {b}: none within the sizes both measured ({faster} faster throughout)\n"
            )),
        }
    }
    if let Some(v) = &r.verify {
        let mut t = new_table(vec![
            "mechanism",
            "run",
            "p50 predicted µs",
            "p50 measured µs",
            "ratio",
            "p99 predicted µs",
            "p99 measured µs",
            "ratio",
            "p99 ±25%",
        ]);
        let ratio = |m: Option<f64>, p: Option<f64>| match (m, p) {
            (Some(m), Some(p)) if p > 0.0 => format!("{:.2}", m / p),
            _ => "-".into(),
        };
        let cell = |v: Option<f64>| v.map_or("-".into(), us);
        for x in v {
            t.add_row(vec![
                sanitise::text(&x.benchmark).into_owned(),
                x.run_id.map_or("-".into(), |i| i.to_string()),
                us(x.predicted_p50_ns),
                cell(x.measured_p50_ns),
                ratio(x.measured_p50_ns, Some(x.predicted_p50_ns)),
                cell(x.predicted_p99_ns),
                cell(x.measured_p99_ns),
                ratio(x.measured_p99_ns, x.predicted_p99_ns),
                match x.p99_within_25_percent {
                    Some(true) => "within".into(),
                    Some(false) => "outside".into(),
                    None => "-".into(),
                },
            ]);
        }
        align_right(&mut t, 1..8);
        let how = v
            .iter()
            .find_map(|x| x.measured_as.as_ref().map(|m| (m, x.messages)))
            .map_or(String::new(), |(m, n)| {
                format!(
                    ", measured {}{}",
                    sanitise::text(m),
                    n.map_or(String::new(), |n| format!(", {n} messages each"))
                )
            });
        // Each pick may be predicted from its own shape (one way where the
        // history has it, else ping-pong): every shape is named.
        let mut shapes: Vec<(&str, Vec<&str>)> = Vec::new();
        for x in v {
            if let Some(p) = &x.predicted_as {
                match shapes.iter_mut().find(|(s, _)| s == p) {
                    Some((_, names)) => names.push(&x.benchmark),
                    None => shapes.push((p, vec![&x.benchmark])),
                }
            }
        }
        let predicted = match shapes.len() {
            0 => String::new(),
            1 => format!("; predicted from {}", sanitise::text(shapes[0].0)),
            _ => format!(
                "; predicted from {}",
                shapes
                    .iter()
                    .map(|(s, n)| format!(
                        "{} ({})",
                        sanitise::text(s),
                        sanitise::text(&n.join(", "))
                    ))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        out.push_str(&format!(
            "verify (measured / predicted{how}{predicted}):\n{t}\n"
        ));
        if v.iter().any(|x| {
            x.measured_as
                .as_deref()
                .is_some_and(|m| m.contains("sporadic"))
                && x.predicted_as
                    .as_deref()
                    .is_none_or(|p| !p.contains("sporadic"))
        }) {
            // A prediction of messages back to back, set against paced
            // ones: a blocking receiver sleeps between two and each message
            // pays its wake-up.
            out.push_str(
                "paced: a receiver that blocks sleeps between messages and each one pays a \
                 wake-up, which a back-to-back prediction does not hold (`ipcmark doctor` \
                 measures that wake-up here)\n",
            );
        }
    }
    out
}
