//! The fleet page without a browser: a heat map per class with a square
//! per host and figure, coloured by ratio, the outlier's row marked, its
//! settings listed, every report string escaped, no request.
//! `tests/fleet.rs` writes it through the command line.

use super::*;
use crate::analysis::fleet::fleet;
use crate::analysis::fleet::tests::{build, fleet_of};
use crate::output::report::tests::HOSTILE;

fn report() -> FleetReport {
    let mut hosts = fleet_of(20, Some(7));
    hosts[2].record.header.environment.hostname = HOSTILE.into();
    hosts[7].record.header.environment.frequency_governor = Some(HOSTILE.into());
    fleet(hosts, None, build())
}

#[test]
fn a_class_is_a_heat_map_of_hosts_by_figures_with_the_outlier_marked() {
    let r = report();
    let page = render_fleet("r-*.json", &r);
    assert_eq!(page.charts, 1);
    let html = &page.html;
    assert_eq!(html.matches("<svg class=\"heatmap fleet\"").count(), 1);
    assert_eq!(html.matches("<rect class=\"cell\"").count(), 20 * 12);
    assert_eq!(html.matches("<rect class=\"outlier\"").count(), 1);
    assert!(html.contains("▲ node07</text>"), "the outlier's row label");
    // Its squares are red, the others near white.
    assert!(html.contains("node07 · pipe/pingpong/64: +"));
    // The settings' table names the governor first.
    let at = html.find("<h3>node07").unwrap();
    let first_row = &html[at..];
    let governor = first_row.find("<code>frequency_governor</code>").unwrap();
    assert!(first_row[..governor].matches("<tr><td><code>").count() == 0);
    assert!(html.contains("this host alone"));
    assert!(html.contains("<span class=\"badge warn\">outlier (slower)</span>"));
}

#[test]
fn the_colours_are_white_alike_red_slower_blue_faster_and_full_at_30_percent() {
    assert_eq!(colour(1.0), "hsl(4, 75%, 97%)");
    assert_eq!(colour(1.3), "hsl(4, 75%, 50%)");
    assert_eq!(colour(2.0), colour(1.3), "beyond 30%: full");
    assert_eq!(colour(1.0 / 1.3), "hsl(214, 75%, 50%)");
    let light = |c: String| -> f64 {
        c.trim_end_matches("%)")
            .rsplit(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    assert!(light(colour(1.03)) > 90.0, "3%: nearly white");
}

#[test]
fn every_string_is_escaped_and_the_page_makes_no_request() {
    let html = render_fleet(HOSTILE, &report()).html;
    assert!(!html.contains(HOSTILE));
    assert!(!html.contains("<script>alert"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&amp;&quot;&#39;"));
    assert!(!html.contains("http://") && !html.contains("https://"));
    assert!(!html.contains("uPlot.min"));
    assert!(html.contains("<pre id=\"selfcheck\">pending</pre>"));
}

#[test]
fn a_class_without_figures_has_no_heat_map() {
    let mut hosts = fleet_of(3, None);
    for h in &mut hosts {
        h.record.results.clear();
    }
    let page = render_fleet("x", &fleet(hosts, None, build()));
    assert_eq!(page.charts, 0);
    assert!(!page.html.contains("<svg class=\"heatmap fleet\""));
    assert!(page.html.contains("No outlier test"));
}
