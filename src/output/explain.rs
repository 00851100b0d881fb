//! The anatomy of a figure (`ipcmark explain`) as a waterfall: its parts as
//! rows (mean, median, p99 per round trip and one way, share with a bar in
//! text), the residual last, then the traced and untraced round trips and
//! their ratio, the tracing's overhead, and what was lost. An op-mode
//! benchmark's anatomy is per operation: the same rows without one way.

use crate::analysis::explain::{is_interrupt, is_load, is_wake_up};
use crate::analysis::explain_wakeup;
use crate::output::sanitise::text;
use crate::record::explain::{Anatomy, ExplainRecord};
use crate::record::units::format_size;
use std::fmt::Write;

/// Width of a share bar at 100%, in characters.
const BAR: usize = 30;

/// A share (0–1) as a bar of eighths.
fn bar(share: f64) -> String {
    let eighths = (share.clamp(0.0, 1.0) * (BAR * 8) as f64).round() as usize;
    let mut s = "█".repeat(eighths / 8);
    if !eighths.is_multiple_of(8) {
        s.push(['▏', '▎', '▍', '▌', '▋', '▊', '▉'][eighths % 8 - 1]);
    }
    s
}

/// The waterfall of one figure (its note holds the line on a load's own
/// handler time, when one was held); `long` adds the events traced. A
/// timer's wake-up latency is labelled as such, with no one-way column (a
/// latency is not halved).
pub fn render(benchmark: &str, size: usize, ex: &ExplainRecord, long: bool) -> String {
    let mut out = String::new();
    let t = &ex.traced_round_trip_ns;
    // An operation and a wake-up latency have no one way: their rows are
    // per operation or wake-up only.
    let per_op = ex.per_operation();
    let wake = ex.wake_up_latency();
    let whole = per_op || wake;
    let (unit, units) = ex.interval_words();
    let title = match (whole, size) {
        (true, 0) => text(benchmark).into_owned(),
        _ => format!("{} {}", text(benchmark), format_size(size)),
    };
    let _ = writeln!(
        out,
        "\n{title} — anatomy of {} {unit}{} ({} traced {units}, {})",
        if per_op { "an" } else { "a" },
        if wake {
            ", deadline to the task's clock read"
        } else {
            ""
        },
        ex.round_trips,
        ex.method
    );
    let name_w = ex
        .parts
        .iter()
        .map(|p| p.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(unit.len());
    let one_way = |v: f64| {
        if whole {
            String::new()
        } else {
            format!("  {:>9.0}", v / 2.0)
        }
    };
    let _ = writeln!(
        out,
        "  {:<name_w$}  {:>9}  {:>9}  {:>9}{}  {:>6}",
        "part",
        "mean ns",
        "median",
        "p99",
        if whole {
            String::new()
        } else {
            format!("  {:>9}", "one-way")
        },
        "share"
    );
    for p in &ex.parts {
        let ns = |v: Option<f64>| v.map_or_else(|| "—".to_string(), |v| format!("{v:.0}"));
        let _ = writeln!(
            out,
            "  {:<name_w$}  {:>9.0}  {:>9}  {:>9}{}  {:>5.1}%  {}",
            text(&p.name),
            p.mean_ns,
            ns(p.median_ns),
            ns(p.p99_ns),
            one_way(p.mean_ns),
            100.0 * p.share,
            bar(p.share)
        );
    }
    let sum: f64 = ex.parts.iter().map(|p| p.mean_ns).sum();
    let _ = writeln!(
        out,
        "  {:<name_w$}  {:>9.0}  {:>9.0}  {:>9}{}  (parts' means add up to {:.0} ns)",
        if wake { "latency" } else { unit },
        t.mean,
        t.median,
        "",
        one_way(t.mean),
        sum
    );
    let share_of = |f: fn(&str) -> bool| -> f64 {
        ex.parts
            .iter()
            .filter(|p| f(&p.name))
            .map(|p| p.share)
            .sum::<f64>()
            // An empty sum is −0.0, which prints as "-0.0%".
            + 0.0
    };
    // A coarse anatomy has neither part: counters cannot bound them.
    if ex.method == "full" && wake {
        let _ = writeln!(
            out,
            "  timer interrupt {:.1}% · wake-up {:.1}% · interrupts and softirqs during it {:.1}% \
             of the latency",
            100.0 * share_of(explain_wakeup::is_timer_irq),
            100.0 * share_of(explain_wakeup::is_wake_up),
            100.0 * share_of(is_interrupt),
        );
    } else if ex.method == "full" {
        let load = share_of(is_load);
        let _ = writeln!(
            out,
            "  wake-ups {:.1}% · interrupts {:.1}%{} of the {unit}",
            100.0 * share_of(is_wake_up),
            100.0 * share_of(is_interrupt),
            if ex.parts.iter().any(|p| is_load(&p.name)) {
                format!(" · behind the load's processes {:.1}%", 100.0 * load)
            } else {
                String::new()
            }
        );
    }
    let figure = if per_op {
        "run's figure per operation"
    } else if wake {
        "run's figure"
    } else {
        "run's figure × 2"
    };
    match &ex.untraced_round_trip_ns {
        Some(u) if u.median > 0.0 && ex.method != "full" => {
            let _ = writeln!(
                out,
                "  pass median {:.0} ns (untraced, stamped), the {figure}: {:.0} ns",
                t.median, u.median
            );
        }
        Some(u) if u.median > 0.0 => {
            let _ = writeln!(
                out,
                "  traced median {:.0} ns, untraced {:.0} ns ({figure}): tracing costs ×{:.2}",
                t.median,
                u.median,
                t.median / u.median
            );
        }
        _ => {}
    }
    if let Some(c) = &ex.copy {
        let _ = writeln!(
            out,
            "  copy (cost model: {:.3} ns/B over sizes {}–{}, × size, each way): {:.0} ns per round \
             trip, inside the system calls above, not a part",
            c.per_byte_ns,
            format_size(c.from_bytes),
            format_size(c.to_bytes),
            c.round_trip_ns
        );
    }
    if let Some(l) = &ex.load {
        let _ = writeln!(
            out,
            "  load: its interrupt time on CPUs {} as it accounts it (the kernel's interrupts and \
             softirqs, /proc/stat, and its handlers' CPU time, over {:.0} ms) is {:.1}% of each \
             CPU: {:.0} ns per round trip ({:.0} ns of it stamped in the handlers' work); the \
             interrupt parts above are {:.0} ns ({:.0} ns of them behind its handlers){}",
            l.cpus
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(","),
            l.window_ms,
            100.0 * l.fraction,
            l.accounted_ns,
            l.stamped_ns,
            l.parts_ns,
            l.handler_parts_ns,
            l.ratio
                .map_or_else(String::new, |r| format!(": ×{r:.2} the load's account"))
        );
    }
    if ex.lost_events > 0 {
        let _ = writeln!(
            out,
            "  {} events were lost: the parts of the {units} they fell in are partly residual",
            ex.lost_events
        );
    } else if ex.method == "full" {
        let _ = writeln!(out, "  no event was lost");
    }
    if let Some(n) = &ex.note {
        for line in n.lines() {
            let _ = writeln!(out, "  {}", text(line.trim()));
        }
    }
    if let Some(t) = &ex.tail {
        let unit = match ex.kind {
            Some(Anatomy::WakeUpLatency) => super::explain_tail::Unit::WakeUp,
            _ => super::explain_tail::Unit::RoundTrip,
        };
        out.push_str(&super::explain_tail::render(t, long, unit));
    }
    if let Some(s) = &ex.soak {
        out.push_str(&super::explain_tail::render_soak(s));
    }
    if long && !ex.events.is_empty() {
        let _ = writeln!(out, "  events: {}", ex.events.join(" "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::explain::{PartRecord, RoundTripRecord};

    fn part(name: &str, mean: f64, share: f64) -> PartRecord {
        PartRecord {
            name: name.into(),
            mean_ns: mean,
            median_ns: Some(mean),
            p99_ns: None,
            share,
        }
    }

    #[test]
    fn the_waterfall_has_a_row_per_part_the_overhead_and_what_was_lost() {
        let ex = ExplainRecord {
            method: "full".into(),
            parts: vec![
                part("server wake-up: idle exit", 6000.0, 0.75),
                part("client write", 2000.0, 0.25),
                part("residual", 0.0, 0.0),
            ],
            traced_round_trip_ns: RoundTripRecord {
                mean: 8000.0,
                median: 7900.0,
            },
            untraced_round_trip_ns: Some(RoundTripRecord {
                mean: 6000.0,
                median: 5000.0,
            }),
            round_trips: 2000,
            lost_events: 3,
            instance: None,
            events: vec![],
            note: None,
            copy: None,
            load: None,
            kind: None,
            wake_ups: Vec::new(),
            merged_round_trips: None,
            tail: None,
            soak: None,
        };
        let text = render("pipe", 64, &ex, false);
        assert!(!text.contains("copy"), "{text}");
        let with = ExplainRecord {
            copy: Some(crate::record::explain::CopyRecord {
                per_byte_ns: 0.25,
                round_trip_ns: 32.0,
                from_bytes: 1,
                to_bytes: 4096,
            }),
            ..ex.clone()
        };
        let copied = render("pipe", 64, &with, false);
        assert!(
            copied
                .contains("copy (cost model: 0.250 ns/B over sizes 1–4K, × size, each way): 32 ns"),
            "{copied}"
        );
        assert!(text.contains("server wake-up: idle exit"), "{text}");
        assert!(text.contains("75.0%"), "{text}");
        assert!(text.contains("residual"), "{text}");
        assert!(text.contains("×1.58"), "{text}");
        assert!(text.contains("3 events were lost"), "{text}");
        assert!(text.contains("add up to 8000 ns"), "{text}");
        assert!(text.contains("one-way"), "{text}");
        // Per operation: no one-way column, the rows and lines say operation.
        let op = ExplainRecord {
            kind: Some(crate::record::explain::Anatomy::Operation),
            ..ex.clone()
        };
        let per_op = render("getpid", 0, &op, false);
        assert!(
            per_op.contains("getpid — anatomy of an operation (2000 traced operations, full)"),
            "{per_op}"
        );
        assert!(!per_op.contains("one-way"), "{per_op}");
        assert!(per_op.contains("\n  operation "), "{per_op}");
        assert!(
            per_op.contains("(run's figure per operation): tracing costs ×1.58"),
            "{per_op}"
        );
        assert!(
            per_op.contains("parts of the operations they fell in"),
            "{per_op}"
        );
        assert_eq!(bar(1.0).chars().count(), BAR);
        assert_eq!(bar(0.0), "");
    }

    #[test]
    fn a_wake_up_latency_is_labelled_as_one_and_not_halved() {
        let ex = ExplainRecord {
            method: "full".into(),
            parts: vec![
                part("timer irq: idle exit", 30000.0, 0.6),
                part("wake-up: run-queue wait", 15000.0, 0.3),
                part("user", 5000.0, 0.1),
                part("residual", 0.0, 0.0),
            ],
            traced_round_trip_ns: RoundTripRecord {
                mean: 50000.0,
                median: 48000.0,
            },
            untraced_round_trip_ns: Some(RoundTripRecord {
                mean: 45000.0,
                median: 40000.0,
            }),
            round_trips: 2000,
            lost_events: 0,
            instance: None,
            events: vec![],
            note: None,
            copy: None,
            load: None,
            kind: Some(crate::record::explain::Anatomy::WakeUpLatency),
            wake_ups: Vec::new(),
            merged_round_trips: None,
            tail: None,
            soak: None,
        };
        let text = render("timer-latency", 0, &ex, false);
        assert!(text.contains("anatomy of a wake-up latency"), "{text}");
        assert!(text.contains("2000 traced wake-ups"), "{text}");
        assert!(!text.contains("one-way"), "{text}");
        assert!(!text.contains("round trip"), "{text}");
        assert!(!text.contains("25000"), "a half of the latency: {text}");
        assert!(
            text.contains("timer interrupt 60.0% · wake-up 30.0%"),
            "{text}"
        );
        assert!(text.contains("×1.20"), "{text}");
        assert!(text.contains("add up to 50000 ns"), "{text}");
        assert!(text.contains("untraced 40000 ns (run's figure)"), "{text}");
        // Without the trace: the pass's median beside the figure's.
        let coarse = ExplainRecord {
            method: "coarse".into(),
            ..ex
        };
        let text = render("timer-latency", 0, &coarse, false);
        assert!(
            text.contains("pass median 48000 ns (untraced, stamped), the run's figure: 40000 ns"),
            "{text}"
        );
    }
}
