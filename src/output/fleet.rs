//! The terminal page of `ipcmark fleet`: a line on what was read and the
//! test, then per class of machine a line (its id and fields, hosts,
//! figures, spread), a table of its hosts (figures, shift, z, on which side
//! of the median, verdict) and each outlier with the settings in which it
//! differs from its class, best aligned first. The heat map is the HTML
//! page's (`output::report::fleet`).

use crate::output::sanitise;
use crate::output::table::{align_right, new_table};
use crate::record::fleet::{ClassRecord, FleetReport, HostRecord, SettingDiffRecord, Verdict};

/// A ratio as a signed percentage: `+31.0%`, `−4.2%`.
pub fn percent(ratio: f64) -> String {
    let p = format!("{:.1}", (ratio - 1.0) * 100.0);
    match p.strip_prefix('-') {
        Some(rest) if rest != "0.0" => format!("−{rest}%"),
        Some(rest) => format!("+{rest}%"),
        None => format!("+{p}%"),
    }
}

/// A number with one decimal and a true minus sign: `3.5`, `−0.4`.
pub fn signed(v: f64) -> String {
    let text = format!("{v:.1}");
    match text.strip_prefix('-') {
        Some("0.0") => "0.0".into(),
        Some(rest) => format!("−{rest}"),
        None => text,
    }
}

/// A log spread as the ± percentage it stands for: `±2.1%`.
pub fn spread(log: f64) -> String {
    format!("±{:.1}%", (log.exp() - 1.0) * 100.0)
}

fn verdict(h: &HostRecord) -> String {
    match (h.verdict, h.direction.as_deref()) {
        (Verdict::Outlier, Some(d)) => format!("OUTLIER ({d})"),
        (v, _) => v.name().to_string(),
    }
}

/// How a setting lines up with the outliers, in words.
pub fn alignment(d: &SettingDiffRecord) -> String {
    match (d.outliers_differing, d.normal_differing) {
        (1, 0) => "this host alone".into(),
        (n, 0) => format!("the {n} outliers alone"),
        (_, 1) => "also 1 normal host".into(),
        (_, n) => format!("also {n} normal hosts"),
    }
}

/// The page.
pub fn render(r: &FleetReport) -> String {
    let hosts: usize = r.classes.iter().map(|c| c.hosts.len()).sum();
    let t = &r.test;
    let mut out = format!(
        "fleet: {hosts} host(s) in {} class(es) of machine, from {} run(s), the newest of each \
         host; a host is an outlier when its shift (the median over figures of its ratio to \
         the class's median) has |z| > {} among the class's (median, MAD × {}), is {:.0}% or \
         more, and lies on its side of the median in most figures (sign test, p ≤ {})\n",
        r.classes.len(),
        r.runs_read,
        t.z_threshold,
        t.mad_scale,
        t.min_effect * 100.0,
        t.sign_alpha,
    );
    if !r.superseded.is_empty() {
        out.push_str(&format!(
            "left out: {} older run(s) of a host read (--json lists them)\n",
            r.superseded.len()
        ));
    }
    for c in &r.classes {
        out.push('\n');
        out.push_str(&class(c));
    }
    out
}

/// One class: its line, its hosts' table, its outliers.
fn class(c: &ClassRecord) -> String {
    let spread_words = match c.spread {
        Some(s) => format!("host-to-host spread {}", spread(s)),
        None if c.hosts.len() < 2 => "no host-to-host spread with one host".into(),
        None => "no figure common to 3 hosts".into(),
    };
    let mut out = format!(
        "class {}: {} — {} host(s), {} figure(s), {spread_words}\n",
        c.id,
        sanitise::text(&c.label),
        c.hosts.len(),
        c.figures.len(),
    );
    if let Some(why) = &c.not_tested {
        out.push_str(&format!("no outlier test: {}\n", sanitise::text(why)));
    }
    let mut t = new_table(vec![
        "host", "run", "figures", "shift", "z", "slower", "faster", "verdict",
    ]);
    for h in &c.hosts {
        t.add_row(vec![
            sanitise::text(&h.host).into_owned(),
            sanitise::text(&h.source).into_owned(),
            h.figures.to_string(),
            h.shift.map_or("—".into(), percent),
            h.z.map_or("—".into(), signed),
            h.slower.to_string(),
            h.faster.to_string(),
            verdict(h),
        ]);
    }
    align_right(&mut t, 2..7);
    out.push_str(&format!("{t}\n"));
    let outliers: Vec<&HostRecord> = c
        .hosts
        .iter()
        .filter(|h| h.verdict == Verdict::Outlier)
        .collect();
    if c.tested && outliers.is_empty() {
        out.push_str("no outlier: every host is within the class's spread\n");
    }
    for h in outliers {
        out.push_str(&outlier(h));
    }
    out
}

/// An outlier and the settings in which it differs from its class.
fn outlier(h: &HostRecord) -> String {
    let shift = h.shift.unwrap_or(1.0);
    let (how, side) = match shift >= 1.0 {
        true => (format!("{:.1}% slower", (shift - 1.0) * 100.0), h.slower),
        false => (format!("{:.1}% faster", (1.0 - shift) * 100.0), h.faster),
    };
    let mut out = format!(
        "{} is {how} than its class (z {}; on that side in {side} of {} figures, sign test p {:.2e})",
        sanitise::text(&h.host),
        signed(h.z.unwrap_or(0.0)),
        h.figures,
        h.sign_p.unwrap_or(1.0),
    );
    if h.differs.is_empty() {
        out.push_str(": it differs from its class in no setting recorded\n");
        return out;
    }
    out.push_str("; where it differs from its class, best aligned first:\n");
    for d in &h.differs {
        out.push_str(&format!(
            "  {}: {} (class: {}, {} host(s)) — {}\n",
            sanitise::text(&d.setting),
            sanitise::text(&d.value),
            sanitise::text(&d.class_value),
            d.hosts_with_class_value,
            alignment(d),
        ));
    }
    out
}

/// What one rank's turn of `ipcmark fleet run` gave, as rank 0 records it.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// The rank.
    pub rank: i32,
    /// Its host (sanitised).
    pub host: String,
    /// The run's id in the history, or why it is not there.
    pub stored: Result<i64, String>,
    /// Its figures (measured, failed), when its report arrived.
    pub figures: Option<(usize, usize)>,
}

/// Rank 0's page once every turn of `ipcmark fleet run` is over: a line per
/// rank (its host, its figures, where its run was kept) and the history.
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn render_turns(turns: &[Turn], hosts: usize, db: Option<&std::path::Path>) -> String {
    let plural = |n: usize, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
    let mut out = format!(
        "\nfleet run: {} on {}, measured one after the other, never at once\n",
        plural(turns.len(), "rank"),
        plural(hosts, "host")
    );
    for t in turns {
        let stored = match &t.stored {
            Ok(id) => format!("run {id}"),
            Err(why) => why.clone(),
        };
        let figures = match t.figures {
            Some((ok, 0)) => format!("{} measured", plural(ok, "figure")),
            Some((ok, failed)) => format!("{} measured, {failed} failed", plural(ok, "figure")),
            None => "no report".into(),
        };
        out.push_str(&format!(
            "  rank {:<3} {:<24} {figures}; {stored}\n",
            t.rank, t.host
        ));
    }
    if let Some(db) = db {
        out.push_str(&format!(
            "history: {} (ipcmark fleet --db {0})\n",
            db.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests;
