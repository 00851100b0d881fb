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
    // Under a stated rate, a rate curve says what that rate costs: its p99
    // there, and whether the mechanism kept up with it.
    let (p99, rate) = match &a.at_rate {
        Some(r) => (
            r.p99.as_ref().map(|s| s.value),
            r.highest_kept_up.as_ref().map(|s| s.value),
        ),
        None => (
            a.p99.as_ref().map(|s| s.value),
            a.rate.as_ref().map(|s| s.value),
        ),
    };
    a.meets = Meets {
        p50: check(need.p50_ns, Some(a.p50.value), false),
        p99: check(need.p99_ns, p99, false),
        rate: check(need.rate_per_s, rate, true),
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
            .filter(|(_, r)| r.header.environment.hostname == host)
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
        .filter(|(_, r)| r.header.environment.hostname == host)
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
                    at_rate: need
                        .rate_per_s
                        .and_then(|r| under_rate::at_rate(&runs, name, need.size_bytes, r, cpus)),
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
    let latency = |a: &Advice| {
        a.at_rate
            .as_ref()
            .and_then(|r| r.p99.as_ref())
            .or(a.p99.as_ref())
            .map_or(a.p50.value, |s| s.value)
    };
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
mod tests;
mod under_rate;
