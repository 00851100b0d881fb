//! The HTML report of `ipcmark report RUN… --html FILE`: one self-contained
//! page that opens offline. Its charts: latency against message size per
//! mechanism (log–log, with the cost model's lines), throughput against size
//! for stream figures, a dot plot of the figures measured at one size, the
//! latency distribution of each figure (from its percentiles), for mode rate
//! latency against offered load per size (`rate.rs`: a line per mechanism,
//! p50 / p99 / p99.9 chosen on the page, knee and saturation marked), a
//! map's heat maps (`map.rs`), an explained figure's anatomy, and with two
//! runs or more the comparison of each with the first (`output::compare`);
//! then the environment of every run. Every chart has its table beneath it,
//! so the numbers can be copied.
//!
//! The page is built here as text: the tables and the static charts (`svg`)
//! in HTML, the interactive charts as data (a JSON block) that the page's own
//! script (`page.js`) draws with uPlot, inlined from `vendor/`. A
//! Content-Security-Policy forbids every request, and after drawing the
//! script writes what it found (each chart drawn, errors, blocked requests)
//! into `<pre id="selfcheck">`, which the browser test reads. Every string
//! from a report is escaped ([`esc`]).
//!
//! A tax report (`ipcmark tax`, `ipcmark.tax/1`) has a page of its own
//! ([`tax::render_tax`]) in the same skeleton: its ledger as grouped bar
//! charts in static SVG, no uPlot; so has a fleet report (`ipcmark fleet
//! --html`, [`fleet::render_fleet`]): a heat map of hosts × figures per
//! class of machine.

mod charts;
mod comparison;
mod environment;
pub mod figures;
pub mod fleet;
pub mod history;
mod map;
mod page_charts;
mod rate;
mod svg;
pub mod tax;

use crate::record::RunRecord;

/// The uPlot release in `vendor/` (see `vendor/README.md`).
pub const UPLOT_VERSION: &str = "1.6.32";
const UPLOT_JS: &str = include_str!("vendor/uPlot.iife.min.js");
const UPLOT_CSS: &str = include_str!("vendor/uPlot.min.css");
const UPLOT_LICENSE: &str = include_str!("vendor/LICENSE");
const PAGE_CSS: &str = include_str!("page.css");
const PAGE_JS: &str = include_str!("page.js");

/// The only URL the page holds: uPlot's own banner comment, kept as shipped.
#[cfg(test)]
const VENDOR_BANNER: &str = "/*! https://github.com/leeoniya/uPlot (v1.6.32) */";

/// No request may leave the page: nothing is fetched, only inline script and
/// style run, images only from data: URLs.
const CSP: &str = "default-src 'none'; script-src 'unsafe-inline'; \
                   style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'";

/// One run to report: how the user named it and its report (`ipcmark.run/1`).
pub struct RunInput {
    /// The file or history id it was read from.
    pub label: String,
    /// The report, as `ipcmark run --json` writes it, its strings sanitised.
    pub report: RunRecord,
}

/// What a rendered page holds, for the command's one line.
pub struct Rendered {
    /// The HTML page.
    pub html: String,
    /// Charts on the page: drawn by the page's script (uPlot) on a run's
    /// page, static SVG on a tax report's ([`tax::render_tax`]).
    pub charts: usize,
}

/// Escapes text for HTML content and attribute values.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// JSON for a `<script type="application/json">` block: `<`, `>` and `&`
/// escaped, so no string of a report can close the block.
fn script_json(v: &serde_json::Value) -> String {
    serde_json::to_string(v)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// The letter naming the `i`-th run in the page (A, B, …).
fn letter(i: usize) -> String {
    char::from_u32('A' as u32 + (i % 26) as u32)
        .map(String::from)
        .unwrap_or_default()
        + &if i >= 26 {
            (i / 26).to_string()
        } else {
            String::new()
        }
}

/// Renders the report of `runs` (at least one), comparing each later run
/// with the first at significance level `alpha`.
#[cfg(test)]
pub fn render(runs: &[RunInput], alpha: f64) -> Rendered {
    render_with(runs, alpha, &[])
}

/// [`render`], with `sections` (the history's: [`history::watch_section`],
/// [`history::advise_section`]) after the runs' and before the environment.
pub fn render_with(runs: &[RunInput], alpha: f64, sections: &[String]) -> Rendered {
    let mut page = page_charts::Page::default();
    let mut body = String::new();
    body.push_str(&header(runs));
    if runs.len() >= 2 {
        for (i, b) in runs.iter().enumerate().skip(1) {
            body.push_str(&comparison::comparison(
                &runs[0],
                b,
                &letter(0),
                &letter(i),
                alpha,
            ));
        }
    }
    for (i, run) in runs.iter().enumerate() {
        body.push_str(&page.run_sections(&letter(i), run));
    }
    for extra in sections {
        body.push_str(extra);
    }
    body.push_str(&environment::section(runs));
    Rendered {
        html: skeleton("ipcmark report", &body, &page.data(), true),
        charts: page.chart_count(),
    }
}

/// The page around `body`: the head with its CSP and style, the footer
/// with the self-check, the charts' JSON block (`data`) and the script.
/// With `uplot`, uPlot and its style are inlined and the footer says how to
/// use its charts; a page of static charts only (a tax report's) carries
/// neither, and its footer says that nothing on it needs a script but the
/// self-check.
fn skeleton(title: &str, body: &str, data: &serde_json::Value, uplot: bool) -> String {
    let version = esc(env!("CARGO_PKG_VERSION"));
    let (style, drawn, library) = if uplot {
        (
            format!("{UPLOT_CSS}\n{PAGE_CSS}"),
            format!(
                "Drawn by ipcmark {version} with uPlot {UPLOT_VERSION} (MIT licence, \
                 inlined: this page makes no request). Charts are interactive: drag to zoom, \
                 double-click to reset, click a legend entry to hide its series."
            ),
            format!(
                "<script>/*! uPlot {UPLOT_VERSION}, vendored unchanged; its licence:\n\
                 {UPLOT_LICENSE}*/\n{UPLOT_JS}</script>\n"
            ),
        )
    } else {
        (
            PAGE_CSS.to_string(),
            format!(
                "Drawn by ipcmark {version} as static SVG (this page makes no request); \
                 hover over a bar or a mark for its values."
            ),
            String::new(),
        )
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{title}</title>\n<style>\n{style}</style>\n\
         <script>{WATCH_JS}</script>\n</head>\n<body>\n<main>\n{body}\
         <footer><p>{drawn}</p>\
         <details><summary>Page self-check</summary><pre id=\"selfcheck\">pending</pre></details>\
         </footer>\n</main>\n\
         <script type=\"application/json\" id=\"report-data\">{data}</script>\n\
         {library}<script>{PAGE_JS}</script>\n</body>\n</html>\n",
        title = esc(title),
        data = script_json(data),
    )
}

/// Runs before anything else on the page: records errors, console errors and
/// blocked requests for the self-check.
const WATCH_JS: &str = "window.__selfcheck={errors:[],csp:[]};\
window.addEventListener('error',function(e){__selfcheck.errors.push('error: '+e.message);});\
document.addEventListener('securitypolicyviolation',function(e){\
__selfcheck.csp.push(e.violatedDirective+' '+e.blockedURI);});\
(function(){var ce=console.error;console.error=function(){\
__selfcheck.errors.push('console.error: '+Array.prototype.join.call(arguments,' '));\
return ce.apply(console,arguments);};})();";

/// The page's title and the table of runs.
fn header(runs: &[RunInput]) -> String {
    let mut s = String::from(
        "<header><h1>ipcmark report</h1><p class=\"lead\">One-way latency is the time of \
         one message between two processes (round trip / 2 in ping-pong); every figure is \
         the median of its samples. Sizes are payload bytes.</p>\
         <table class=\"runs\"><thead><tr><th>run</th><th>from</th><th>started</th>\
         <th>host</th><th>kernel</th><th>figures</th><th>command</th></tr></thead><tbody>",
    );
    for (i, run) in runs.iter().enumerate() {
        let r = &run.report;
        let results = figures::figures(r);
        let ok = results.iter().filter(|f| f.ok()).count();
        let command = r.header.command_line.join(" ");
        let complete = if !r.header.complete {
            " <span class=\"badge warn\">incomplete</span>"
        } else {
            ""
        };
        s.push_str(&format!(
            "<tr><td><a href=\"#run-{l}\" class=\"runletter\">{l}</a></td><td>{}</td>\
             <td class=\"when\">{}</td><td>{}</td><td>{}</td><td class=\"num\">{ok} of {} measured{complete}</td>\
             <td><code>{}</code></td></tr>",
            esc(&run.label),
            esc(&figures::timestamp(&r.header.started_at)),
            esc(&r.header.environment.hostname),
            esc(&r.header.environment.kernel),
            results.len(),
            esc(&command),
            l = letter(i),
        ));
    }
    s.push_str("</tbody></table><nav>Contents: ");
    let mut links: Vec<String> = (1..runs.len())
        .map(|i| {
            format!(
                "<a href=\"#compare-A-{l}\">run {l} against run A</a>",
                l = letter(i)
            )
        })
        .collect();
    links.extend(
        (0..runs.len()).map(|i| format!("<a href=\"#run-{l}\">run {l}</a>", l = letter(i))),
    );
    links.push("<a href=\"#environment\">environment</a>".into());
    s.push_str(&links.join(" · "));
    s.push_str("</nav></header>\n");
    s
}

#[cfg(test)]
mod tests;
