//! `ipcmark compare A.json B.json`: for every result the two runs share, both
//! medians, the difference, and whether it is significant; then the shift
//! common to all results (the machine's speed moves every figure at once) and
//! which results differ beyond it.
//!
//! Where both runs measured a figure in several passes (`--passes`), the test
//! is Welch's t on the logs of the pass medians, with its interval of the
//! ratio B / A: a run's level moves between runs by more than its samples
//! scatter, and only the spread between passes shows how much. Otherwise it
//! is Mann–Whitney U on the samples, with a bootstrap interval of the ratio
//! of medians, and the output says run-to-run variation was not measured.

use super::{CompareArgs, Failure, print_stdout};
use crate::output::json::SCHEMA;
use crate::output::table::format_size;
use crate::stats::compare::{
    Interval, MannWhitney, Welch, bootstrap_median, bootstrap_ratio_of_medians, mann_whitney,
    welch_log,
};
use crate::stats::median;
use comfy_table::CellAlignment;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::ExitCode;

/// Schema of the comparison JSON.
pub const COMPARE_SCHEMA: &str = "ipcmark.compare/1";

/// Resamples for the bootstrap interval (fixed seed: same files, same interval).
const RESAMPLES: usize = 4000;

/// The parts of a run report a comparison needs.
#[derive(Debug, Deserialize)]
struct RunFile {
    schema: String,
    started_at: String,
    environment: RunEnv,
    results: Vec<RunResult>,
}

#[derive(Debug, Deserialize)]
struct RunEnv {
    hostname: String,
    kernel: String,
}

#[derive(Debug, Deserialize)]
struct RunResult {
    benchmark: String,
    mode: String,
    size_bytes: usize,
    status: String,
    #[serde(default)]
    samples_ns: Option<Vec<f64>>,
    #[serde(default)]
    cold_region_bytes: Option<u64>,
    /// Mode oneway: "saturated" or "sporadic", with `interval_ns`.
    #[serde(default)]
    pacing: Option<String>,
    #[serde(default)]
    interval_ns: Option<u64>,
    /// With `--passes` 2 or more: each pass's median.
    #[serde(default)]
    passes: Option<RunPasses>,
}

#[derive(Debug, Deserialize)]
struct RunPasses {
    medians_ns: Vec<f64>,
}

/// Which test decided a result's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "kebab-case")]
enum Test {
    /// Welch's t on the logs of the pass medians (both runs had passes).
    WelchPasses,
    /// Mann–Whitney U on the samples (a run had one pass).
    MannWhitneySamples,
}

/// One side's identity in the output.
#[derive(Debug, Serialize)]
struct Side {
    path: String,
    started_at: String,
    hostname: String,
    kernel: String,
}

/// One matched result.
#[derive(Debug, Serialize)]
struct Comparison {
    benchmark: String,
    mode: String,
    size_bytes: usize,
    median_a_ns: f64,
    median_b_ns: f64,
    diff_ns: f64,
    diff_percent: f64,
    /// The test the verdict is the one of.
    test: Test,
    /// p of that test.
    p: f64,
    /// Mann–Whitney U on the samples (the verdict's test only without passes).
    mann_whitney: MannWhitney,
    /// Welch's t on the logs of the pass medians, when both runs had passes.
    welch: Option<Welch>,
    /// Interval of B / A at 1 − alpha: Welch's (of the geometric means of the
    /// pass medians) with passes, else a bootstrap of the ratio of medians.
    ratio_interval: Option<Interval>,
    /// Whether that interval excludes 1 (beside the test's p, which may disagree at the edge).
    interval_excludes_one: Option<bool>,
    /// The verdict: p < alpha.
    significant: bool,
    /// "slower", "faster" or "no significant difference" (B relative to A).
    verdict: &'static str,
    /// The same test with B's samples divided by the common shift: whether
    /// this result moved beyond what all results moved together.
    beyond_shift: Option<Beyond>,
}

/// A result's difference beyond the shift common to all results.
#[derive(Debug, Serialize)]
struct Beyond {
    /// p of the result's test with B divided by the shift factor.
    p: f64,
    /// p < alpha.
    significant: bool,
    /// "slower", "faster" or "no significant difference", beyond the shift.
    verdict: &'static str,
}

/// How much every result moved together from A to B: the median over
/// results of median(B) / median(A), with a bootstrap interval over results.
#[derive(Debug, Serialize)]
struct CommonShift {
    /// The factor B / A.
    factor: f64,
    /// Its interval at 1 − alpha (results resampled).
    interval: Interval,
    /// Whether the interval excludes 1.
    significant: bool,
    /// Results it is the median of.
    results: usize,
}

/// Fewest compared results for a common shift to mean anything.
const SHIFT_MIN_RESULTS: usize = 5;

/// A result present on one side only, or not measured on one side.
#[derive(Debug, Serialize)]
struct Unmatched {
    benchmark: String,
    mode: String,
    size_bytes: usize,
    why: String,
}

#[derive(Debug, Serialize)]
struct CompareReport {
    schema: &'static str,
    /// The build that wrote it.
    build: crate::output::json::build::BuildRecord,
    alpha: f64,
    a: Side,
    b: Side,
    comparisons: Vec<Comparison>,
    /// Null with fewer than [`SHIFT_MIN_RESULTS`] results.
    common_shift: Option<CommonShift>,
    unmatched: Vec<Unmatched>,
}

type Key = (String, String, usize);

fn load(path: &Path) -> Result<RunFile, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::usage(format!("cannot read {}: {e}", path.display())))?;
    let file: RunFile = serde_json::from_str(&text).map_err(|e| {
        Failure::usage(format!(
            "{} is not an ipcmark run report: {e}",
            path.display()
        ))
    })?;
    if file.schema != SCHEMA {
        return Err(Failure::usage(format!(
            "{} has schema '{}'; compare reads '{SCHEMA}'",
            path.display(),
            file.schema
        )));
    }
    Ok(file)
}

fn side(path: &Path, f: &RunFile) -> Side {
    Side {
        path: path.display().to_string(),
        started_at: f.started_at.clone(),
        hostname: f.environment.hostname.clone(),
        kernel: f.environment.kernel.clone(),
    }
}

fn index(f: &RunFile) -> BTreeMap<Key, &RunResult> {
    f.results
        .iter()
        .map(|r| {
            // A cold figure is a different measurement from a warm one of the same size.
            // A sporadic one-way figure is a different measurement from a
            // saturated one, and from one at another interval.
            let mode = match (r.cold_region_bytes, r.pacing.as_deref(), r.interval_ns) {
                (Some(_), _, _) => format!("{} (cold)", r.mode),
                (None, Some(_), Some(ns)) => format!("{} (every {ns} ns)", r.mode),
                (None, Some(p), None) => format!("{} ({p})", r.mode),
                (None, None, _) => r.mode.clone(),
            };
            ((r.benchmark.clone(), mode, r.size_bytes), r)
        })
        .collect()
}

/// One result's two sides: its samples and, if it had passes, their medians.
struct Sides<'a> {
    a: &'a [f64],
    b: &'a [f64],
    passes: Option<(&'a [f64], &'a [f64])>,
}

fn compare_sides(key: &Key, sides: &Sides, alpha: f64) -> Option<Comparison> {
    let (a, b) = (sides.a, sides.b);
    let mw = mann_whitney(a, b)?;
    let (ma, mb) = (median(a), median(b));
    let welch = sides
        .passes
        .and_then(|(pa, pb)| welch_log(pa, pb, 1.0 - alpha));
    let (test, p, ratio_interval) = match welch {
        Some(w) => (Test::WelchPasses, w.p, Some(w.ratio_interval)),
        None => (
            Test::MannWhitneySamples,
            mw.p,
            bootstrap_ratio_of_medians(a, b, 1.0 - alpha, RESAMPLES, 0x1bc),
        ),
    };
    let significant = p < alpha;
    Some(Comparison {
        benchmark: key.0.clone(),
        mode: key.1.clone(),
        size_bytes: key.2,
        median_a_ns: ma,
        median_b_ns: mb,
        diff_ns: mb - ma,
        diff_percent: if ma > 0.0 {
            (mb - ma) / ma * 100.0
        } else {
            0.0
        },
        test,
        p,
        interval_excludes_one: ratio_interval.map(|i| !i.contains(1.0)),
        ratio_interval,
        mann_whitney: mw,
        welch,
        significant,
        verdict: verdict(significant, mb > ma),
        beyond_shift: None,
    })
}

fn verdict(significant: bool, slower: bool) -> &'static str {
    match (significant, slower) {
        (false, _) => "no significant difference",
        (true, true) => "slower",
        (true, false) => "faster",
    }
}

/// The shift common to all results, if there are enough with positive medians.
fn common_shift(comparisons: &[&Comparison], alpha: f64) -> Option<CommonShift> {
    let logs: Vec<f64> = comparisons
        .iter()
        .filter(|c| c.median_a_ns > 0.0 && c.median_b_ns > 0.0)
        .map(|c| (c.median_b_ns / c.median_a_ns).ln())
        .collect();
    if logs.len() < SHIFT_MIN_RESULTS {
        return None;
    }
    let ci = bootstrap_median(&logs, 1.0 - alpha, RESAMPLES, 0x5417)?;
    Some(CommonShift {
        factor: median(&logs).exp(),
        interval: Interval {
            low: ci.low.exp(),
            high: ci.high.exp(),
        },
        significant: !ci.contains(0.0),
        results: logs.len(),
    })
}

/// Tests each result again with B divided by the common factor (its pass
/// medians with passes, else its samples).
fn beyond(c: &mut Comparison, sides: &Sides, factor: f64, alpha: f64) {
    let scale = |v: &[f64]| -> Vec<f64> { v.iter().map(|x| x / factor).collect() };
    let b = scale(sides.b);
    let p = match (c.test, sides.passes) {
        (Test::WelchPasses, Some((pa, pb))) => welch_log(pa, &scale(pb), 1.0 - alpha).map(|w| w.p),
        _ => mann_whitney(sides.a, &b).map(|mw| mw.p),
    };
    if let Some(p) = p {
        let significant = p < alpha;
        c.beyond_shift = Some(Beyond {
            p,
            significant,
            verdict: verdict(significant, median(&b) > median(sides.a)),
        });
    }
}

pub fn compare(args: CompareArgs) -> Result<ExitCode, Failure> {
    if !(args.alpha > 0.0 && args.alpha < 0.5) {
        return Err(Failure::usage(format!(
            "--alpha {}: must lie strictly between 0 and 0.5",
            args.alpha
        )));
    }
    if let Some(out) = &args.json {
        super::check_output_path("--json", out)?;
    }
    let (fa, fb) = (load(&args.a)?, load(&args.b)?);
    let (ia, ib) = (index(&fa), index(&fb));
    let mut comparisons = Vec::new();
    let mut unmatched = Vec::new();
    let mut miss = |key: &Key, why: String| {
        unmatched.push(Unmatched {
            benchmark: key.0.clone(),
            mode: key.1.clone(),
            size_bytes: key.2,
            why,
        })
    };
    for (key, ra) in &ia {
        let Some(rb) = ib.get(key) else {
            miss(key, "only in A".into());
            continue;
        };
        match (
            ra.status.as_str(),
            rb.status.as_str(),
            &ra.samples_ns,
            &rb.samples_ns,
        ) {
            ("ok", "ok", Some(a), Some(b)) => {
                let sides = Sides {
                    a,
                    b,
                    passes: ra
                        .passes
                        .as_ref()
                        .zip(rb.passes.as_ref())
                        .map(|(pa, pb)| (pa.medians_ns.as_slice(), pb.medians_ns.as_slice())),
                };
                match compare_sides(key, &sides, args.alpha) {
                    Some(c) => comparisons.push((c, sides)),
                    None => miss(key, "no samples".into()),
                }
            }
            (sa, sb, _, _) => miss(key, format!("not measured on both sides (A {sa}, B {sb})")),
        }
    }
    for key in ib.keys().filter(|k| !ia.contains_key(*k)) {
        miss(key, "only in B".into());
    }
    let shift = common_shift(
        &comparisons.iter().map(|(c, ..)| c).collect::<Vec<_>>(),
        args.alpha,
    );
    let comparisons = comparisons
        .into_iter()
        .map(|(mut c, sides)| {
            if let Some(sh) = &shift {
                beyond(&mut c, &sides, sh.factor, args.alpha);
            }
            c
        })
        .collect();
    let report = CompareReport {
        schema: COMPARE_SCHEMA,
        build: crate::output::json::build::BuildRecord::current(),
        alpha: args.alpha,
        a: side(&args.a, &fa),
        b: side(&args.b, &fb),
        comparisons,
        common_shift: shift,
        unmatched,
    };
    if let Some(out) = &args.json {
        crate::output::json::write_atomic(out, &report)
            .map_err(|e| Failure::run(format!("cannot write {}: {e}", out.display())))?;
    }
    print_stdout(&render(&report))?;
    Ok(ExitCode::SUCCESS)
}

fn render(r: &CompareReport) -> String {
    let mut header = vec![
        "benchmark",
        "size",
        "A µs",
        "B µs",
        "Δ %",
        "p",
        "B/A 95% CI",
        "verdict",
    ];
    if r.common_shift.is_some() {
        header.push("beyond shift");
    }
    let mut t = crate::output::table::new_table(header);
    for c in &r.comparisons {
        let ci = c
            .ratio_interval
            .map_or("-".to_string(), |i| format!("{:.3}–{:.3}", i.low, i.high));
        // Where the two methods disagree, say so: the difference is borderline.
        let verdict = match (c.verdict, c.interval_excludes_one == Some(c.significant)) {
            ("no significant difference", true) => "n.s.".to_string(),
            ("no significant difference", false) => "n.s. (interval excludes 1)".to_string(),
            (v, true) => v.to_string(),
            (v, false) => format!("{v} (interval includes 1)"),
        };
        let mut row = vec![
            c.benchmark.clone(),
            format_size(c.size_bytes),
            format!("{:.2}", c.median_a_ns / 1e3),
            format!("{:.2}", c.median_b_ns / 1e3),
            format!("{:+.1}", c.diff_percent),
            format!("{:.3}", c.p),
            ci,
            verdict,
        ];
        if r.common_shift.is_some() {
            row.push(
                c.beyond_shift
                    .as_ref()
                    .map_or("-", |b| match b.verdict {
                        "no significant difference" => "n.s.",
                        v => v,
                    })
                    .to_string(),
            );
        }
        t.add_row(row);
    }
    for col in 1..7 {
        if let Some(c) = t.column_mut(col) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    let significant = r.comparisons.iter().filter(|c| c.significant).count();
    let with_passes = r
        .comparisons
        .iter()
        .filter(|c| c.test == Test::WelchPasses)
        .count();
    let method = match (with_passes, r.comparisons.len()) {
        (w, n) if w == n => "Welch's t on the pass medians".to_string(),
        (0, _) => "Mann–Whitney U on the samples".to_string(),
        (w, n) => format!(
            "Welch's t on the pass medians for {w}, Mann–Whitney U on the samples for {}",
            n - w
        ),
    };
    let mut out = format!(
        "A: {} ({}, {}, Linux {})\nB: {} ({}, {}, Linux {})\n{t}\n{} of {} results differ significantly ({method}, α = {}; n.s. = not significant; with no change at all about {:.0} would, by chance); Δ and the interval are B relative to A\n",
        r.a.path,
        r.a.started_at,
        r.a.hostname,
        r.a.kernel,
        r.b.path,
        r.b.started_at,
        r.b.hostname,
        r.b.kernel,
        significant,
        r.comparisons.len(),
        r.alpha,
        r.alpha * r.comparisons.len() as f64
    );
    if with_passes < r.comparisons.len() {
        out.push_str(
            "without passes on both sides a test sees only the samples of each run, not how \
             much a run's level moves between runs: measure both with --passes 2 or more \
             (the default is 5)\n",
        );
    }
    if let Some(sh) = &r.common_shift {
        let beyond = r
            .comparisons
            .iter()
            .filter(|c| c.beyond_shift.as_ref().is_some_and(|b| b.significant))
            .count();
        out.push_str(&format!(
            "all {} results together: B/A {:.3} ({:+.1}%, 95% CI {:.3}–{:.3}, {}): a change of the \
             machine's speed between the runs moves every result so, as does a change that touches \
             every mechanism; {} of {} differ beyond it\n",
            sh.results,
            sh.factor,
            (sh.factor - 1.0) * 100.0,
            sh.interval.low,
            sh.interval.high,
            if sh.significant {
                "significant"
            } else {
                "not significant"
            },
            beyond,
            r.comparisons.len()
        ));
    }
    for u in &r.unmatched {
        out.push_str(&format!(
            "not compared: {} {} {}: {}\n",
            u.benchmark,
            u.mode,
            format_size(u.size_bytes),
            u.why
        ));
    }
    out
}
