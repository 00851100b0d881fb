//! The report's sections from the history beside its runs (`report
//! --watch`, `report --advise FILE`): each figure series with a change
//! point, drawn across its runs with the change points marked, with its
//! table of changes; and `advise`'s ranking, as its record holds it.

use super::esc;
use super::figures::sig3;
use super::svg::{Mark, series_chart};
use crate::record::advise::{AdviseReport, Sourced, Standing};
use crate::record::watch::SeriesRecord;

/// A series to chart: its record, and its values (ns) with each run's id.
pub struct Charted {
    /// The series as `ipcmark watch` computed it.
    pub series: SeriesRecord,
    /// Its figure in each run, oldest first: (run id, ns).
    pub values: Vec<(i64, f64)>,
}

/// The change-points section: every series of `charted` with a change, its
/// chart and table; `series_total` series were watched in all.
pub fn watch_section(charted: &[Charted], series_total: usize) -> String {
    let changed: Vec<&Charted> = charted
        .iter()
        .filter(|c| !c.series.changes.is_empty())
        .collect();
    let mut s = format!(
        "<section class=\"watch\" id=\"watch\"><h2>Change points across the history</h2>\
         <p>{} of {series_total} series (one figure on one host) changed level \
         (E-divisive means, t test over windows: <code>ipcmark watch</code>, docs/watch.md).</p>",
        changed.len()
    );
    for c in changed {
        let r = &c.series;
        s.push_str(&format!(
            "<h3>{} — {} runs on {}</h3>",
            esc(&r.key),
            r.runs,
            esc(&r.host)
        ));
        let marks: Vec<Mark> = r
            .changes
            .iter()
            .map(|ch| Mark {
                index: ch.index,
                label: format!("{} {:+.1}%", ch.verdict.name(), ch.magnitude * 100.0),
                class: ch.verdict.name().into(),
            })
            .collect();
        let us: Vec<(i64, f64)> = c.values.iter().map(|(id, v)| (*id, v / 1e3)).collect();
        if let Some(svg) = series_chart(&us, &marks, "µs") {
            s.push_str(&svg);
        }
        s.push_str(
            "<table class=\"data watch-changes\"><thead><tr><th>at run</th><th>before µs</th>\
             <th>after µs</th><th>change %</th><th>interval %</th><th>p</th><th>verdict</th>\
             </tr></thead><tbody>",
        );
        for ch in &r.changes {
            s.push_str(&format!(
                "<tr><td>{} → {}</td><td>{}</td><td>{}</td><td>{:+.1}</td>\
                 <td>{:+.1} to {:+.1}</td><td>{:.2e}</td><td>{}</td></tr>",
                ch.run_before.id,
                ch.run_after.id,
                sig3(ch.mean_before_ns / 1e3),
                sig3(ch.mean_after_ns / 1e3),
                ch.magnitude * 100.0,
                ch.interval.low * 100.0,
                ch.interval.high * 100.0,
                ch.p,
                ch.verdict.name()
            ));
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</section>\n");
    s
}

fn sourced(v: Option<&Sourced>, scale: f64) -> String {
    v.map_or("not measured".into(), |v| {
        format!(
            "<span title=\"{} (run {})\">{}</span>",
            esc(&v.from),
            v.run_id,
            sig3(v.value / scale)
        )
    })
}

/// `advise`'s ranking as its record holds it.
pub fn advise_section(r: &AdviseReport) -> String {
    let n = &r.need;
    let mut need = vec![format!("size {} B", n.size_bytes)];
    for (label, v, scale, unit) in [
        ("p50 ≤", n.p50_ns, 1e3, "µs"),
        ("p99 ≤", n.p99_ns, 1e3, "µs"),
        ("rate ≥", n.rate_per_s, 1.0, "msg/s"),
        ("CPU/msg ≤", n.cpu_per_msg_ns, 1e3, "µs"),
    ] {
        if let Some(v) = v {
            need.push(format!("{label} {} {unit}", sig3(v / scale)));
        }
    }
    let mut s = format!(
        "<section class=\"advise\" id=\"advise\"><h2>Which mechanism: ipcmark advise</h2>\
         <p>Need: {} — host {}, {} run(s) read. Each prediction's source is its tooltip.</p>\
         <table class=\"data advise-ranking\"><thead><tr><th>#</th><th>mechanism</th>\
         <th>p50 µs</th><th>p99 µs</th><th>rate msg/s</th><th>CPU/msg µs</th><th>standing</th>\
         </tr></thead><tbody>",
        esc(&need.join(", ")),
        esc(&r.host),
        r.runs_read
    );
    for a in &r.ranking {
        s.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            a.rank,
            esc(&a.benchmark),
            sourced(Some(&a.p50), 1e3),
            sourced(a.p99.as_ref(), 1e3),
            sourced(a.rate.as_ref(), 1.0),
            sourced(a.cpu_per_msg.as_ref(), 1e3),
            match a.standing {
                Standing::MeetsAll => "meets all".to_string(),
                Standing::Unknown => "unknown".to_string(),
                Standing::Misses => format!("misses by {:.0}%", a.miss * 100.0),
            }
        ));
    }
    s.push_str("</tbody></table>");
    for u in &r.unrankable {
        s.push_str(&format!(
            "<p class=\"note\">unrankable: {}: {}</p>",
            esc(&u.benchmark),
            esc(&u.reason)
        ));
    }
    if let Some(v) = &r.verify {
        s.push_str(
            "<table class=\"data advise-verify\"><thead><tr><th>verified</th><th>run</th>\
             <th>p50 predicted µs</th><th>p50 measured µs</th><th>p99 predicted µs</th>\
             <th>p99 measured µs</th><th>p99 ±25%</th></tr></thead><tbody>",
        );
        let cell = |v: Option<f64>| v.map_or("-".into(), |v| sig3(v / 1e3));
        for x in v {
            s.push_str(&format!(
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(&x.benchmark),
                x.run_id.map_or("-".into(), |i| i.to_string()),
                sig3(x.predicted_p50_ns / 1e3),
                cell(x.measured_p50_ns),
                cell(x.predicted_p99_ns),
                cell(x.measured_p99_ns),
                match x.p99_within_25_percent {
                    Some(true) => "within",
                    Some(false) => "outside",
                    None => "-",
                }
            ));
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</section>\n");
    s
}
