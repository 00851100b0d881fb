//! `ipcmark advise`: the ping-pong mechanisms measured on one host ranked
//! by a stated need, from the history's run records alone (nothing here
//! measures or reads a file).
//!
//! For each mechanism the latest run with its ping-pong figures is read
//! (on `--cpus`, when given, only figures measured on those CPUs): every
//! prediction is of that shape, one way = a round trip ÷ 2, back to back
//! ([`PREDICTED_AS`]). Its predicted one-way median at the size is the
//! messages' own median (`latency_ns.p50`, single round trips) where that
//! size was measured, else its cost model's line (`cost_models[]`, setup +
//! bytes × per-byte, fitted on centres) times the nearest size's messages'
//! median / centre, else a straight line between the messages' medians of
//! the two nearest measured sizes around it; a size outside the sizes
//! measured is not predicted (the mechanism is unrankable). The centre (a
//! median of batch means, drift-corrected where swept with others) stands in
//! only where a figure has no per-message p50. Its p99 is the predicted
//! median times the p99 / p50 ratio of the nearest measured size, both of
//! single messages, and never below 1: p50 ≤ p99 by construction. Rate and
//! CPU per message come from the latest stream figure of the mechanism at
//! the nearest size. Every number names the run and the figure it came
//! from.
//!
//! Where the history holds a one-way figure of a mechanism at the size
//! (one a `--verify` or `--measure --verify` saved), its messages' own p50
//! and p99 are also given as the one-way prediction ([`oneway`]), of the
//! shape `--verify` measures: one-way messages are not half a round trip
//! (their p99 / p50 is not a ping-pong's). The ranking stays on the
//! ping-pong prediction, which every ranked mechanism has.

use crate::record::advise::{
    ADVISE_SCHEMA, Advice, AdviseReport, Crossover, Meets, Need, OneWayPrediction, Sourced,
    Standing, Unrankable,
};
use crate::record::build::BuildRecord;
use crate::record::summary::CostModel;
use crate::record::units::format_size;
use crate::record::{FigureRecord, Mode, RunRecord, Status};
use std::collections::BTreeMap;

/// The shape every prediction is of: ping-pong figures, one way taken as
/// half a round trip, messages back to back (the receiver never sleeps long
/// between two).
pub const PREDICTED_AS: &str = "pingpong, one way = round trip ÷ 2, back to back";

/// How many of the top picks are paired for crossovers.
const CROSSOVER_PICKS: usize = 3;

/// A figure a prediction may read: measured, with a latency, warm, not
/// under load, not a map's cell, on the CPUs asked for.
fn usable(f: &FigureRecord, mode: Mode, cpus: Option<&[usize]>) -> bool {
    f.mode == mode
        && f.status == Status::Ok
        && f.cold_region_bytes.is_none()
        && f.pair.is_none()
        && f.load.is_none()
        && cpus.is_none_or(|c| f.cpus == c)
}

/// One measured size of a mechanism, ns: its centre (the drift-corrected
/// median of batch means where it was swept with others, as the cost model
/// and `watch` read it, else its median of batch means), and the p50 and
/// p99 of its single messages.
struct Point {
    size: usize,
    centre: f64,
    p50: Option<f64>,
    p99: Option<f64>,
}

impl Point {
    /// The messages' median, or the centre where the figure has none: the
    /// population a p99 is of, so the two stay comparable.
    fn typical(&self) -> f64 {
        self.p50.filter(|v| *v > 0.0).unwrap_or(self.centre)
    }

    /// What [`Point::typical`] is, in words.
    fn typical_is(&self) -> &'static str {
        match self.p50.filter(|v| *v > 0.0) {
            Some(_) => "messages' median",
            None => "centre (median of batch means; no per-message p50)",
        }
    }
}

/// What one mechanism's latest ping-pong run holds.
struct Measured<'a> {
    run_id: i64,
    points: Vec<Point>,
    model: Option<&'a CostModel>,
}

fn log_distance(a: usize, b: usize) -> f64 {
    ((a.max(1) as f64).ln() - (b.max(1) as f64).ln()).abs()
}

/// Every run of `runs` holding ping-pong figures of each mechanism,
/// latest (highest id) first, each with its points sorted by size.
fn pingpong_runs<'a>(
    runs: &'a [(i64, RunRecord)],
    cpus: Option<&[usize]>,
) -> BTreeMap<String, Vec<Measured<'a>>> {
    let mut out: BTreeMap<String, Vec<Measured<'a>>> = BTreeMap::new();
    for (id, run) in runs.iter().rev() {
        let mut here: BTreeMap<&str, Vec<Point>> = BTreeMap::new();
        for f in run
            .results
            .iter()
            .filter(|f| usable(f, Mode::PingPong, cpus))
        {
            if let (Some(l), Some(centre)) = (&f.latency_ns, super::watch::centre(f)) {
                let points = here.entry(&f.benchmark).or_default();
                // A size measured twice in a run (passes apart) is taken once.
                if !points.iter().any(|p| p.size == f.size_bytes) {
                    points.push(Point {
                        size: f.size_bytes,
                        centre,
                        p50: l.p50,
                        p99: l.p99,
                    });
                }
            }
        }
        for (name, mut points) in here {
            points.sort_by_key(|p| p.size);
            let model = run
                .cost_models
                .iter()
                .find(|m| m.benchmark == name && !m.cold);
            out.entry(name.to_string()).or_default().push(Measured {
                run_id: *id,
                points,
                model,
            });
        }
    }
    out
}

/// The nearest measured size to `size` (by ratio of sizes) that `keep`
/// accepts.
fn nearest<'p>(m: &'p Measured, size: usize, keep: impl Fn(&Point) -> bool) -> Option<&'p Point> {
    m.points
        .iter()
        .filter(|p| keep(p))
        .min_by(|a, b| log_distance(a.size, size).total_cmp(&log_distance(b.size, size)))
}

/// The predicted median at `size`, or why there is none.
fn predict_p50(name: &str, m: &Measured, size: usize) -> Result<Sourced, String> {
    let sourced = |value, from: String| Sourced {
        value,
        run_id: m.run_id,
        from,
    };
    if let Some(p) = m.points.iter().find(|p| p.size == size) {
        return Ok(sourced(
            p.typical(),
            format!("{}, {name} pingpong {}", p.typical_is(), format_size(size)),
        ));
    }
    // The cost model is fitted on centres (batch means): scaled to the
    // messages' median by the nearest size's own ratio of the two.
    let scale = nearest(m, size, |p| p.centre > 0.0).map(|p| (p, p.typical() / p.centre));
    if let (Some(seg), Some((p, scale))) = (
        m.model.and_then(|c| {
            c.segments
                .iter()
                .find(|s| s.from_bytes <= size && size <= s.to_bytes)
        }),
        scale,
    ) {
        return Ok(sourced(
            (seg.setup_ns + size as f64 * seg.per_byte_ns) * scale,
            format!(
                "cost model of {name} ({}–{}: {:.0} ns + {:.4} ns/B, r² {:.3}) × {} / centre {scale:.2} of {name} pingpong {}",
                format_size(seg.from_bytes),
                format_size(seg.to_bytes),
                seg.setup_ns,
                seg.per_byte_ns,
                seg.r2,
                p.typical_is(),
                format_size(p.size)
            ),
        ));
    }
    let below = m.points.iter().rev().find(|p| p.size < size);
    let above = m.points.iter().find(|p| p.size > size);
    match (below, above) {
        (Some(a), Some(b)) => {
            let t = (size - a.size) as f64 / (b.size - a.size) as f64;
            Ok(sourced(
                a.typical() + t * (b.typical() - a.typical()),
                format!(
                    "interpolated between the {} of {name} pingpong {} and {} (no cost model covers {})",
                    a.typical_is(),
                    format_size(a.size),
                    format_size(b.size),
                    format_size(size)
                ),
            ))
        }
        _ => {
            let sizes: Vec<String> = m.points.iter().map(|p| format_size(p.size)).collect();
            Err(format!(
                "nothing measured at or around {}: its ping-pong sizes are {} (run {}); \
                 run `ipcmark run {name} --sizes {}`",
                format_size(size),
                sizes.join(", "),
                m.run_id,
                format_size(size)
            ))
        }
    }
}

/// The predicted p99: the predicted median times the p99 / p50 ratio of
/// the nearest measured size that has a p99, both of its single messages
/// (measured together); a ratio below 1 (a p99 under the centre standing in
/// for a missing p50) is taken as 1, so the p99 is never below the p50.
fn predict_p99(name: &str, m: &Measured, size: usize, p50: f64) -> Option<Sourced> {
    let p = nearest(m, size, |p| p.p99.is_some() && p.typical() > 0.0)?;
    let ratio = (p.p99? / p.typical()).max(1.0);
    let from = format!(
        "median × p99 / {} {ratio:.2} of {name} pingpong {}",
        p.typical_is(),
        format_size(p.size)
    );
    Some(Sourced {
        value: p50 * ratio,
        run_id: m.run_id,
        from,
    })
}

/// How many of the latest one-way figures (one a run) a one-way
/// prediction is the median of: one run's p99 on a shared machine can move
/// 2–3× with the load of its moment, and a single loaded run would
/// otherwise become the next prediction whole.
const ONEWAY_RUNS: usize = 5;

/// The pacing `--verify` runs at `rate` messages a second, ns between two
/// sends (none: saturated), as `run --interval` rounds it.
pub fn pacing_ns(rate: Option<f64>) -> Option<u64> {
    rate.filter(|r| *r > 0.0)
        .map(|r| (std::time::Duration::from_secs_f64(1.0 / r).as_nanos() as u64).max(1))
}

/// The one-way prediction of `name` at `size`: the medians of the
/// messages' p50 and p99 of its latest one-way figures at that size (one
/// a run, up to [`ONEWAY_RUNS`]) paced as `rate` asks
/// (saturated without one); paced, with no figure of that pacing, the
/// latest saturated one, which says it leaves out the wake-up each paced
/// message pays. None where the history has neither.
pub fn oneway(
    runs: &[(i64, RunRecord)],
    name: &str,
    size: usize,
    cpus: Option<&[usize]>,
    rate: Option<f64>,
) -> Option<OneWayPrediction> {
    // One figure per run, latest first, at most ONEWAY_RUNS of them.
    let latest = |interval: Option<u64>| {
        let found: Vec<(i64, f64, f64)> = runs
            .iter()
            .rev()
            .filter_map(|(id, run)| {
                run.results.iter().find_map(|f| {
                    let o = f.oneway.as_ref()?;
                    let l = f.latency_ns.as_ref()?;
                    let (p50, p99) = (l.p50.filter(|v| *v > 0.0)?, l.p99?);
                    (f.benchmark == name
                        && f.size_bytes == size
                        && usable(f, Mode::OneWay, cpus)
                        && o.interval_ns == interval)
                        .then_some((*id, p50, p99.max(p50)))
                })
            })
            .take(ONEWAY_RUNS)
            .collect();
        (!found.is_empty()).then_some(found)
    };
    let wanted = pacing_ns(rate);
    let shape = |interval: Option<u64>| match interval {
        Some(ns) => format!("oneway, sporadic every {ns} ns"),
        None => "oneway, saturated".to_string(),
    };
    let (found, interval, predicted_as) = match latest(wanted) {
        Some(found) => (found, wanted, shape(wanted)),
        None if wanted.is_some() => (
            latest(None)?,
            None,
            "oneway, saturated; leaves out the wake-up per message".to_string(),
        ),
        None => return None,
    };
    let median = |pick: fn(&(i64, f64, f64)) -> f64| {
        let mut v: Vec<f64> = found.iter().map(pick).collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let (p50, p99) = (median(|f| f.1), median(|f| f.2).max(median(|f| f.1)));
    let run_id = found[0].0;
    let figure = format!("{name} {} {}", shape(interval), format_size(size));
    let (of, runs_named) = match found.len() {
        1 => ("", format!("run {run_id}")),
        n => (
            "median over its latest runs of the ",
            format!(
                "{n} runs: {}",
                found
                    .iter()
                    .map(|f| f.0.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
    };
    Some(OneWayPrediction {
        p50: Sourced {
            value: p50,
            run_id,
            from: format!("{of}messages' median of {figure} ({runs_named})"),
        },
        p99: Sourced {
            value: p99,
            run_id,
            from: format!("{of}messages' p99 of {figure} ({runs_named})"),
        },
        predicted_as,
    })
}

/// Rate and CPU per message from the latest stream figure of `name`
/// nearest `size`.
fn stream(
    runs: &[(i64, RunRecord)],
    name: &str,
    size: usize,
    cpus: Option<&[usize]>,
) -> (Option<Sourced>, Option<Sourced>) {
    for (id, run) in runs.iter().rev() {
        let nearest = run
            .results
            .iter()
            .filter(|f| f.benchmark == name && usable(f, Mode::Stream, cpus))
            .filter(|f| f.stream.is_some())
            .min_by(|a, b| {
                log_distance(a.size_bytes, size).total_cmp(&log_distance(b.size_bytes, size))
            });
        let Some(f) = nearest else { continue };
        let s = f.stream.as_ref().expect("filtered on stream");
        let figure = format!("{name} stream {}", format_size(f.size_bytes));
        let rate = s.messages_per_s.map(|v| Sourced {
            value: v,
            run_id: *id,
            from: format!("messages/s of {figure}"),
        });
        let cpu = match (s.cpu_ns_per_message.sender, s.cpu_ns_per_message.receiver) {
            (Some(a), Some(b)) => Some(Sourced {
                value: a + b,
                run_id: *id,
                from: format!("sender + receiver CPU per message of {figure}"),
            }),
            _ => None,
        };
        return (rate, cpu);
    }
    (None, None)
}

/// Relative miss of an upper bound (0 when met).
fn over(value: f64, bound: f64) -> f64 {
    (value / bound - 1.0).max(0.0)
}

/// Judges one mechanism against the need: each bound, where it stands,
/// its largest miss.
fn judge(a: &mut Advice, need: &Need) {
    let mut miss: f64 = 0.0;
    let mut check = |bound: Option<f64>, value: Option<f64>, lower: bool| -> Option<bool> {
        let (b, v) = (bound?, value?);
        let m = if lower {
            over(b, v.max(f64::MIN_POSITIVE))
        } else {
            over(v, b)
        };
        miss = miss.max(m);
        Some(m == 0.0)
    };
    a.meets = Meets {
        p50: check(need.p50_ns, Some(a.p50.value), false),
        p99: check(need.p99_ns, a.p99.as_ref().map(|s| s.value), false),
        rate: check(need.rate_per_s, a.rate.as_ref().map(|s| s.value), true),
        cpu_per_msg: check(
            need.cpu_per_msg_ns,
            a.cpu_per_msg.as_ref().map(|s| s.value),
            false,
        ),
    };
    let stated = [
        (need.p50_ns.is_some(), a.meets.p50),
        (need.p99_ns.is_some(), a.meets.p99),
        (need.rate_per_s.is_some(), a.meets.rate),
        (need.cpu_per_msg_ns.is_some(), a.meets.cpu_per_msg),
    ];
    a.miss = miss;
    a.standing = if stated.iter().any(|(_, m)| *m == Some(false)) {
        Standing::Misses
    } else if stated.iter().any(|(s, m)| *s && m.is_none()) {
        Standing::Unknown
    } else {
        Standing::MeetsAll
    };
}

/// Where two cost models cross within the sizes both cover (the first
/// crossing: `analysis::cost_model::crossing`), and which is faster below;
/// none when they share no sizes. `a` and `b` name the mechanisms.
pub fn crossover(
    a: &str,
    ma: &CostModel,
    b: &str,
    mb: &CostModel,
    run_ids: [i64; 2],
) -> Option<Crossover> {
    let c = super::cost_model::crossing(ma, mb)?;
    Some(Crossover {
        a: a.into(),
        b: b.into(),
        size_bytes: c.at_bytes.first().copied(),
        faster_below: if c.faster_first == ma.benchmark { a } else { b }.into(),
        run_ids,
    })
}

/// What `advise --measure` runs before it advises: the candidates of
/// `host` with no figure at the need's size (on its CPUs), by mode.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Missing {
    /// Candidates with no ping-pong figure at the size.
    pub pingpong: Vec<String>,
    /// Candidates with no stream figure at the size (only when the need
    /// states a rate or a CPU per message, which stream figures judge).
    pub stream: Vec<String>,
}

/// The figures `candidates` lack in `host`'s `runs` for `need`: a
/// candidate has its size in a mode when some run holds a usable figure
/// of it there, or one skipped there (it cannot run at that size here:
/// measuring it again would skip it again).
pub fn missing(host: &str, need: &Need, runs: &[(i64, RunRecord)], candidates: &[&str]) -> Missing {
    let cpus = need.cpus.as_deref();
    let has = |name: &str, mode: Mode| {
        runs.iter()
            .filter(|(_, r)| r.environment.hostname == host)
            .flat_map(|(_, r)| &r.results)
            .any(|f| {
                f.benchmark == name
                    && f.size_bytes == need.size_bytes
                    && (usable(f, mode, cpus) || (f.mode == mode && f.status == Status::Skipped))
            })
    };
    let streams = need.rate_per_s.is_some() || need.cpu_per_msg_ns.is_some();
    Missing {
        pingpong: candidates
            .iter()
            .filter(|n| !has(n, Mode::PingPong))
            .map(|n| n.to_string())
            .collect(),
        stream: candidates
            .iter()
            .filter(|n| streams && !has(n, Mode::Stream))
            .map(|n| n.to_string())
            .collect(),
    }
}

/// Ranks the ping-pong mechanisms of `host`'s runs (`runs`: every run of
/// the history with its id, oldest first; others' hosts are left out) by
/// `need`.
pub fn advise(
    host: &str,
    need: Need,
    runs: &[(i64, RunRecord)],
    build: BuildRecord,
) -> AdviseReport {
    let runs: Vec<(i64, RunRecord)> = runs
        .iter()
        .filter(|(_, r)| r.environment.hostname == host)
        .cloned()
        .collect();
    let cpus = need.cpus.as_deref();
    let measured = pingpong_runs(&runs, cpus);
    let (mut ranking, mut unrankable) = (Vec::new(), Vec::new());
    let mut chosen: BTreeMap<&str, &Measured> = BTreeMap::new();
    for (name, all) in &measured {
        // The latest run that can predict at the size; when none can, the
        // latest one's reason.
        let mut predicted = None;
        for m in all {
            match predict_p50(name, m, need.size_bytes) {
                Ok(p50) => {
                    predicted = Some(Ok((m, p50)));
                    break;
                }
                Err(why) => {
                    predicted.get_or_insert(Err(why));
                }
            }
        }
        match predicted.expect("a mechanism here has a run") {
            Err(reason) => unrankable.push(Unrankable {
                benchmark: name.clone(),
                reason,
            }),
            Ok((m, p50)) => {
                chosen.insert(name, m);
                let p99 = predict_p99(name, m, need.size_bytes, p50.value);
                let (rate, cpu_per_msg) = stream(&runs, name, need.size_bytes, cpus);
                let mut a = Advice {
                    rank: 0,
                    benchmark: name.clone(),
                    p50,
                    p99,
                    rate,
                    cpu_per_msg,
                    meets: Meets::default(),
                    standing: Standing::MeetsAll,
                    miss: 0.0,
                    oneway: oneway(&runs, name, need.size_bytes, cpus, need.rate_per_s),
                };
                judge(&mut a, &need);
                ranking.push(a);
            }
        }
    }
    let order = |a: &Advice| match a.standing {
        Standing::MeetsAll => 0,
        Standing::Unknown => 1,
        Standing::Misses => 2,
    };
    let latency = |a: &Advice| a.p99.as_ref().map_or(a.p50.value, |s| s.value);
    ranking.sort_by(|a, b| {
        order(a).cmp(&order(b)).then_with(|| match a.standing {
            Standing::Misses => a.miss.total_cmp(&b.miss),
            _ => latency(a).total_cmp(&latency(b)),
        })
    });
    for (i, a) in ranking.iter_mut().enumerate() {
        a.rank = i + 1;
    }
    let mut crossovers = Vec::new();
    let top: Vec<&Advice> = ranking.iter().take(CROSSOVER_PICKS).collect();
    for (i, a) in top.iter().enumerate() {
        for b in &top[i + 1..] {
            let (ma, mb) = (chosen[a.benchmark.as_str()], chosen[b.benchmark.as_str()]);
            if let (Some(ca), Some(cb)) = (ma.model, mb.model)
                && let Some(c) =
                    crossover(&a.benchmark, ca, &b.benchmark, cb, [ma.run_id, mb.run_id])
            {
                crossovers.push(c);
            }
        }
    }
    AdviseReport {
        schema: ADVISE_SCHEMA.into(),
        build,
        host: host.into(),
        need,
        runs_read: runs.len(),
        ranking,
        unrankable,
        crossovers,
        verify: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::watch::tests::fixture;
    use crate::record::summary::Segment;

    fn need(size: usize) -> Need {
        Need {
            size_bytes: size,
            rate_per_s: None,
            p50_ns: None,
            p99_ns: None,
            cpu_per_msg_ns: None,
            cpus: None,
        }
    }

    fn runs(names: &[&str]) -> Vec<(i64, RunRecord)> {
        names
            .iter()
            .enumerate()
            .map(|(i, n)| (i as i64 + 1, fixture(n)))
            .collect()
    }

    fn run(need: Need, runs: &[(i64, RunRecord)]) -> AdviseReport {
        let host = runs[0].1.environment.hostname.clone();
        advise(&host, need, runs, runs[0].1.build.clone())
    }

    fn of<'a>(r: &'a AdviseReport, name: &str) -> &'a Advice {
        r.ranking.iter().find(|a| a.benchmark == name).unwrap()
    }

    /// The messages' median of a figure, or its centre where it has none.
    fn typical(f: &FigureRecord) -> f64 {
        let l = f.latency_ns.as_ref().unwrap();
        l.p50
            .filter(|v| *v > 0.0)
            .unwrap_or_else(|| crate::analysis::watch::centre(f).unwrap())
    }

    fn pipe_at(r: &RunRecord, size: usize) -> &FigureRecord {
        r.results
            .iter()
            .find(|f| f.benchmark == "pipe" && f.mode == Mode::PingPong && f.size_bytes == size)
            .unwrap()
    }

    #[test]
    fn a_size_its_cost_model_covers_is_its_line_scaled_to_the_messages_median() {
        let h = runs(&["cost-model"]);
        let seg = &h[0].1.cost_models[0].segments[0];
        let r = run(need(2048), &h);
        let pipe = of(&r, "pipe");
        // The nearest measured size (1K and 4K lie as far) scales the line.
        let scaled: Vec<f64> = [1024, 4096]
            .iter()
            .map(|s| {
                let f = pipe_at(&h[0].1, *s);
                (seg.setup_ns + 2048.0 * seg.per_byte_ns) * typical(f)
                    / crate::analysis::watch::centre(f).unwrap()
            })
            .collect();
        assert!(
            scaled.iter().any(|e| (pipe.p50.value - e).abs() < 1e-6),
            "{} not in {scaled:?}",
            pipe.p50.value
        );
        assert!(pipe.p50.from.contains("cost model"), "{}", pipe.p50.from);
        assert!(pipe.p50.from.contains("centre"), "{}", pipe.p50.from);
        assert_eq!(pipe.p50.run_id, 1);
        // p99 from the nearest measured size's ratio, which it names.
        let p99 = pipe.p99.as_ref().unwrap();
        assert!(
            p99.from.contains("1K") || p99.from.contains("4K"),
            "{}",
            p99.from
        );
        assert!(p99.value >= pipe.p50.value);
    }

    #[test]
    fn a_size_measured_directly_is_its_messages_median_and_p99() {
        let h = runs(&["cost-model"]);
        let f = pipe_at(&h[0].1, 4096);
        let l = f.latency_ns.as_ref().unwrap();
        let r = run(need(4096), &h);
        let pipe = of(&r, "pipe");
        assert_eq!(pipe.p50.value, l.p50.unwrap());
        assert!(
            pipe.p50.from.contains("messages' median"),
            "{}",
            pipe.p50.from
        );
        // The figure's own p99, as measured with its p50.
        let p99 = pipe.p99.as_ref().unwrap();
        assert!((p99.value - l.p99.unwrap().max(l.p50.unwrap())).abs() < 1e-6);
        assert!(p99.from.contains("4K"));
    }

    #[test]
    fn the_p50_is_the_messages_median_not_the_batch_means_centre() {
        // Under load batch means rise above the messages' median: a centre
        // far above the p99 must not become the p50.
        let mut h = runs(&["cost-model"]);
        let f = h[0]
            .1
            .results
            .iter_mut()
            .find(|f| f.benchmark == "pipe" && f.size_bytes == 4096)
            .unwrap();
        f.sweep = None;
        let l = f.latency_ns.as_mut().unwrap();
        (l.p50, l.p99) = (Some(2650.0), Some(5980.0));
        l.median = 20_000.0;
        let r = run(need(4096), &h);
        let pipe = of(&r, "pipe");
        assert_eq!(pipe.p50.value, 2650.0);
        assert_eq!(pipe.p99.as_ref().unwrap().value, 5980.0);
    }

    #[test]
    fn the_p99_is_never_below_the_p50() {
        // A figure without a per-message p50 stands in its centre, which
        // under load can exceed its p99: the ratio is held at 1.
        let mut h = runs(&["cost-model"]);
        for f in h[0].1.results.iter_mut() {
            f.sweep = None;
            if let Some(l) = f.latency_ns.as_mut() {
                l.p50 = None;
                l.median = 20_000.0;
                l.p99 = Some(5_000.0);
            }
        }
        for size in [1024, 2048, 4096] {
            let r = run(need(size), &h);
            for a in &r.ranking {
                let p99 = a.p99.as_ref().unwrap();
                assert!(
                    p99.value >= a.p50.value,
                    "{size}: {} {}",
                    a.benchmark,
                    p99.value
                );
                assert!(a.p50.from.contains("centre"), "{}", a.p50.from);
            }
        }
    }

    #[test]
    fn every_prediction_names_its_shape() {
        let h = runs(&["ipc-quick"]);
        let r = run(need(544), &h);
        assert!(!r.ranking.is_empty());
        for a in &r.ranking {
            assert!(a.p50.from.contains("pingpong"), "{}", a.p50.from);
            assert!(a.p99.as_ref().unwrap().from.contains("pingpong"));
        }
        assert!(PREDICTED_AS.contains("round trip ÷ 2"));
    }

    #[test]
    fn without_a_model_a_size_between_two_measured_is_interpolated_and_says_so() {
        let h = runs(&["ipc-quick"]);
        let r = run(need(544), &h);
        let pipe = of(&r, "pipe");
        let m: Vec<f64> = h[0]
            .1
            .results
            .iter()
            .filter(|f| f.benchmark == "pipe")
            .map(typical)
            .collect();
        let expected = m[0] + (544.0 - 64.0) / (1024.0 - 64.0) * (m[1] - m[0]);
        assert!((pipe.p50.value - expected).abs() < 1e-6);
        assert!(pipe.p50.from.contains("interpolated"), "{}", pipe.p50.from);
    }

    #[test]
    fn nothing_measured_around_the_size_is_unrankable_with_its_reason() {
        let h = runs(&["ipc-quick"]);
        let r = run(need(16384), &h);
        assert!(r.ranking.is_empty());
        let names: Vec<&str> = r.unrankable.iter().map(|u| u.benchmark.as_str()).collect();
        assert_eq!(names, ["pipe", "shm-futex"]);
        assert!(
            r.unrankable[0].reason.contains("64, 1K"),
            "{}",
            r.unrankable[0].reason
        );
        assert!(r.unrankable[0].reason.contains("--sizes 16K"));
    }

    #[test]
    fn the_latest_run_that_can_predict_is_read() {
        // Run 2 (ipc-quick) is later but did not measure 4K; run 1 did.
        let h = runs(&["cost-model", "ipc-quick"]);
        assert_eq!(of(&run(need(4096), &h), "pipe").p50.run_id, 1);
        assert_eq!(of(&run(need(1024), &h), "pipe").p50.run_id, 2);
    }

    #[test]
    fn those_meeting_every_bound_come_first_then_the_rest_by_their_miss() {
        let h = runs(&["ipc-quick"]);
        // Unbounded, the lower p99 leads.
        let free = run(need(1024), &h);
        let lead = &free.ranking[0];
        let other = &free.ranking[1];
        assert!(lead.p99.as_ref().unwrap().value <= other.p99.as_ref().unwrap().value);
        assert!(
            free.ranking
                .iter()
                .all(|a| a.standing == Standing::MeetsAll)
        );
        // A p50 bound between the two medians puts the faster median first.
        let (fast, slow) = match lead.p50.value < other.p50.value {
            true => (lead, other),
            false => (other, lead),
        };
        let mut n = need(1024);
        n.p50_ns = Some((fast.p50.value + slow.p50.value) / 2.0);
        let bound = run(n, &h);
        assert_eq!(bound.ranking[0].benchmark, fast.benchmark);
        assert_eq!(bound.ranking[0].meets.p50, Some(true));
        assert_eq!(bound.ranking[0].standing, Standing::MeetsAll);
        assert_eq!(bound.ranking[1].meets.p50, Some(false));
        assert_eq!(bound.ranking[1].standing, Standing::Misses);
        assert!(bound.ranking[1].miss > 0.0);
        assert_eq!(bound.ranking[1].rank, 2);
    }

    #[test]
    fn rate_and_cpu_come_from_a_stream_figure_or_are_not_measured() {
        let h = runs(&["cost-model", "stream"]);
        let s = h[1].1.results[0].stream.clone().unwrap();
        let mut n = need(4096);
        n.rate_per_s = Some(s.messages_per_s.unwrap() / 2.0);
        let r = run(n.clone(), &h);
        let pipe = of(&r, "pipe");
        assert_eq!(pipe.rate.as_ref().unwrap().value, s.messages_per_s.unwrap());
        assert_eq!(pipe.rate.as_ref().unwrap().run_id, 2);
        let cpu = s.cpu_ns_per_message.sender.unwrap() + s.cpu_ns_per_message.receiver.unwrap();
        assert!((pipe.cpu_per_msg.as_ref().unwrap().value - cpu).abs() < 1e-6);
        assert_eq!(pipe.meets.rate, Some(true));
        // Without a stream figure, a rate bound cannot be judged.
        let r = run(n, &h[..1]);
        assert!(of(&r, "pipe").rate.is_none());
        assert_eq!(of(&r, "pipe").standing, Standing::Unknown);
    }

    fn model(name: &str, setup: f64, per_byte: f64, to: usize) -> CostModel {
        CostModel {
            benchmark: name.into(),
            cold: false,
            segments: vec![Segment {
                from_bytes: 64,
                to_bytes: to,
                setup_ns: setup,
                per_byte_ns: per_byte,
                r2: 1.0,
                setup_ci_ns: [setup, setup],
                per_byte_ci_ns: [per_byte, per_byte],
                sizes: 3,
            }],
        }
    }

    #[test]
    fn two_lines_cross_where_they_are_equal_within_the_shared_sizes() {
        let a = model("a", 1000.0, 1.0, 16384);
        let b = model("b", 3000.0, 0.5, 16384);
        let c = crossover("a", &a, "b", &b, [1, 2]).unwrap();
        assert!((c.size_bytes.unwrap() - 4000.0).abs() < 1e-9);
        assert_eq!(c.faster_below, "a");
        // Beyond the sizes measured there is no crossover.
        let short = model("b", 3000.0, 0.5, 2048);
        let c = crossover("a", &a, "b", &short, [1, 2]).unwrap();
        assert_eq!(c.size_bytes, None);
        assert_eq!(c.faster_below, "a");
    }

    #[test]
    fn another_hosts_runs_are_not_read() {
        let h = runs(&["cost-model"]);
        let r = advise("elsewhere", need(4096), &h, h[0].1.build.clone());
        assert!(r.ranking.is_empty() && r.unrankable.is_empty());
        assert_eq!(r.runs_read, 0);
    }

    #[test]
    fn missing_names_what_the_size_lacks_by_mode_and_skipped_counts_as_known() {
        let runs = runs(&["ipc-quick", "stream"]);
        let host = runs[0].1.environment.hostname.clone();
        let pp: Vec<&FigureRecord> = runs[0]
            .1
            .results
            .iter()
            .filter(|f| f.mode == Mode::PingPong && f.status == Status::Ok)
            .collect();
        let (have, size) = (pp[0].benchmark.clone(), pp[0].size_bytes);
        let candidates = [have.as_str(), "no-such-mechanism"];
        let m = missing(&host, &need(size), &runs, &candidates);
        assert_eq!(m.pingpong, vec!["no-such-mechanism".to_string()]);
        assert!(
            m.stream.is_empty(),
            "no rate or CPU stated: no stream needed"
        );
        let mut with_rate = need(size);
        with_rate.rate_per_s = Some(50_000.0);
        let m = missing(&host, &with_rate, &runs, &candidates);
        assert!(m.stream.contains(&"no-such-mechanism".to_string()));
        // Another host's figures are not this host's.
        let m = missing("elsewhere", &need(size), &runs, &candidates);
        assert_eq!(m.pingpong.len(), 2);
        // A figure skipped at the size is known: not measured again.
        let mut skipped = runs.clone();
        let f = skipped[0]
            .1
            .results
            .iter_mut()
            .find(|f| f.benchmark == have && f.size_bytes == size && f.mode == Mode::PingPong)
            .unwrap();
        f.status = Status::Skipped;
        assert!(
            missing(&host, &need(size), &skipped, &candidates).pingpong
                == vec!["no-such-mechanism".to_string()]
        );
    }

    /// A run holding one one-way figure of pipe at `size`, paced every
    /// `interval` ns (none: saturated), its messages' p50 and p99 given.
    fn oneway_run(size: usize, interval: Option<u64>, p50: f64, p99: f64) -> RunRecord {
        let mut r = fixture("cost-model");
        let mut f = pipe_at(&r, 4096).clone();
        (f.mode, f.size_bytes, f.sweep) = (Mode::OneWay, size, None);
        let l = f.latency_ns.as_mut().unwrap();
        (l.p50, l.p99) = (Some(p50), Some(p99));
        f.oneway = Some(crate::record::facts::OneWayRecord {
            pacing: if interval.is_some() {
                "sporadic"
            } else {
                "saturated"
            }
            .into(),
            interval_ns: interval,
            messages_sent: 20_000,
            messages_received: 20_000,
            gaps: 0,
            window: 20_000,
            windows: Vec::new(),
            mean_ns: p50,
            time_bounded: false,
            sender_timer_slack_ns: 50_000,
            sender_sched_policy: "SCHED_OTHER".into(),
        });
        r.results = vec![f];
        r.cost_models.clear();
        r
    }

    #[test]
    fn a_oneway_figure_at_the_size_is_the_oneway_prediction_and_names_its_shape() {
        let mut h = runs(&["cost-model"]);
        let pingpong = of(&run(need(4096), &h), "pipe").clone();
        assert!(
            pingpong.oneway.is_none(),
            "no one-way figure: ping-pong only"
        );
        h.push((2, oneway_run(4096, None, 900.0, 1600.0)));
        let r = run(need(4096), &h);
        let pipe = of(&r, "pipe");
        let o = pipe.oneway.as_ref().unwrap();
        assert_eq!((o.p50.value, o.p99.value), (900.0, 1600.0));
        assert_eq!((o.p50.run_id, o.p99.run_id), (2, 2));
        assert_eq!(o.predicted_as, "oneway, saturated");
        assert!(o.p99.from.contains("oneway"), "{}", o.p99.from);
        assert!(o.p99.from.contains("(run 2)"), "{}", o.p99.from);
        // The ranking's figures stay the ping-pong ones.
        assert_eq!(pipe.p50, pingpong.p50);
        assert_eq!(pipe.p99, pingpong.p99);
    }

    #[test]
    fn a_oneway_figure_at_another_size_is_not_a_prediction_at_this_one() {
        let mut h = runs(&["cost-model"]);
        h.push((2, oneway_run(1024, None, 900.0, 1600.0)));
        assert!(of(&run(need(4096), &h), "pipe").oneway.is_none());
        assert!(of(&run(need(1024), &h), "pipe").oneway.is_some());
    }

    #[test]
    fn paced_the_same_pacing_is_preferred_else_saturated_which_says_what_it_leaves_out() {
        let mut h = runs(&["cost-model"]);
        h.push((2, oneway_run(4096, None, 900.0, 1600.0)));
        let mut paced = need(4096);
        paced.rate_per_s = Some(1000.0);
        let o = of(&run(paced.clone(), &h), "pipe").oneway.clone().unwrap();
        assert_eq!(o.p99.value, 1600.0);
        assert!(o.predicted_as.starts_with("oneway, saturated"));
        assert!(o.predicted_as.contains("wake-up"), "{}", o.predicted_as);
        // Another pacing is not this one.
        h.push((3, oneway_run(4096, Some(10_000), 7000.0, 9000.0)));
        let o = of(&run(paced.clone(), &h), "pipe").oneway.clone().unwrap();
        assert_eq!(o.p99.value, 1600.0);
        h.push((4, oneway_run(4096, Some(1_000_000), 30_000.0, 80_000.0)));
        let o = of(&run(paced, &h), "pipe").oneway.clone().unwrap();
        assert_eq!((o.p50.value, o.p99.value), (30_000.0, 80_000.0));
        assert_eq!(o.predicted_as, "oneway, sporadic every 1000000 ns");
        // Saturated, a paced figure is not read.
        let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
        assert_eq!(o.p50.value, 900.0);
    }

    #[test]
    fn the_oneway_prediction_is_the_median_of_the_latest_runs_so_one_loaded_run_does_not_carry() {
        let mut h = runs(&["cost-model"]);
        for (id, p99) in [
            (2, 5000.0),
            (3, 700.0),
            (4, 800.0),
            (5, 2100.0),
            (6, 650.0),
            (7, 690.0),
        ] {
            h.push((id, oneway_run(4096, None, 500.0, p99)));
        }
        let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
        // Runs 3–7: the oldest (5 000 ns) is past the five latest.
        assert_eq!(o.p99.value, 700.0);
        assert_eq!(o.p50.value, 500.0);
        assert_eq!(o.p99.run_id, 7);
        assert!(
            o.p99.from.contains("5 runs: 7, 6, 5, 4, 3"),
            "{}",
            o.p99.from
        );
    }

    #[test]
    fn the_oneway_p99_is_never_below_its_p50() {
        let mut h = runs(&["cost-model"]);
        h.push((2, oneway_run(4096, None, 900.0, 700.0)));
        let o = of(&run(need(4096), &h), "pipe").oneway.clone().unwrap();
        assert_eq!((o.p50.value, o.p99.value), (900.0, 900.0));
    }
}
