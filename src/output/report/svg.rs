//! The report's static charts, drawn as inline SVG by ipcmark itself: the dot
//! plot of figures measured at one size (a row each, the median and its 95%
//! interval on a log axis) and the interval of a comparison's ratio in each
//! row of its table (a forest plot). They need no script, so they print and
//! read even with scripts off.

use super::esc;
use super::figures::sig3;

/// One row of a dot plot: a label, and either a value (with its interval) or
/// why there is none.
pub struct Dot {
    pub label: String,
    pub colour: String,
    /// (value, optional interval), in the axis unit; None: `note` instead.
    pub value: Option<(f64, Option<(f64, f64)>)>,
    pub note: String,
}

/// A log axis over `[lo, hi]` mapped to `[x0, x1]` pixels.
struct LogAxis {
    lo: f64,
    hi: f64,
    x0: f64,
    x1: f64,
}

impl LogAxis {
    /// An axis holding every positive value of `values`, padded a little.
    fn over(values: impl Iterator<Item = f64>, x0: f64, x1: f64) -> Option<LogAxis> {
        let (mut lo, mut hi) = (f64::INFINITY, 0.0f64);
        for v in values.filter(|v| *v > 0.0 && v.is_finite()) {
            lo = lo.min(v);
            hi = hi.max(v);
        }
        if hi <= 0.0 {
            return None;
        }
        Some(LogAxis {
            lo: lo / 1.25,
            hi: hi * 1.25,
            x0,
            x1,
        })
    }

    fn x(&self, v: f64) -> f64 {
        let v = v.clamp(self.lo, self.hi);
        self.x0 + (v / self.lo).ln() / (self.hi / self.lo).ln() * (self.x1 - self.x0)
    }

    /// Tick values: powers of ten, with 2 and 5 between them when the axis
    /// spans less than three decades, and more on an axis of less than one.
    fn ticks(&self) -> Vec<f64> {
        let span = self.hi / self.lo;
        let steps: &[f64] = if span < 10.0 {
            &[1.0, 1.5, 2.0, 3.0, 5.0, 7.0]
        } else if span < 1000.0 {
            &[1.0, 2.0, 5.0]
        } else {
            &[1.0]
        };
        let mut out = Vec::new();
        let mut decade = 10f64.powi(self.lo.log10().floor() as i32);
        while decade <= self.hi {
            for s in steps {
                let v = decade * s;
                if v >= self.lo && v <= self.hi {
                    out.push(v);
                }
            }
            decade *= 10.0;
        }
        out
    }
}

/// A dot plot of `rows` on a log axis labelled `unit`, or None when no row
/// has a positive value (the table alone then says why).
pub fn dot_plot(rows: &[Dot], unit: &str) -> Option<String> {
    const LABEL: f64 = 250.0;
    const WIDTH: f64 = 1000.0;
    const ROW: f64 = 22.0;
    let axis = LogAxis::over(
        rows.iter()
            .filter_map(|r| r.value)
            .flat_map(|(v, i)| [Some(v), i.map(|i| i.0), i.map(|i| i.1)])
            .flatten(),
        LABEL + 10.0,
        WIDTH - 20.0,
    )?;
    let height = 30.0 + ROW * rows.len() as f64 + 24.0;
    let mut s = format!(
        "<svg class=\"dotplot\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         aria-label=\"median of each figure, log scale, {}\">",
        esc(unit)
    );
    let bottom = height - 24.0;
    for t in axis.ticks() {
        let x = axis.x(t);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{x:.1}\" y1=\"20\" x2=\"{x:.1}\" y2=\"{bottom:.1}\"/>\
             <text class=\"tick\" x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>",
            bottom + 16.0,
            sig3(t)
        ));
    }
    s.push_str(&format!(
        "<text class=\"unit\" x=\"{:.1}\" y=\"12\" text-anchor=\"end\">{} (log scale)</text>",
        WIDTH - 20.0,
        esc(unit)
    ));
    for (i, r) in rows.iter().enumerate() {
        let y = 30.0 + ROW * i as f64 + ROW / 2.0;
        s.push_str(&format!(
            "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LABEL,
            y + 4.0,
            esc(&r.label)
        ));
        match r.value {
            Some((v, interval)) if v > 0.0 => {
                if let Some((lo, hi)) = interval.filter(|(lo, hi)| *lo > 0.0 && *hi > 0.0) {
                    s.push_str(&format!(
                        "<line class=\"whisker\" x1=\"{:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" \
                         stroke=\"{}\"/>",
                        axis.x(lo),
                        axis.x(hi),
                        esc(&r.colour)
                    ));
                }
                s.push_str(&format!(
                    "<circle class=\"dot\" cx=\"{:.1}\" cy=\"{y:.1}\" r=\"5\" fill=\"{}\">\
                     <title>{}: {} {}</title></circle>",
                    axis.x(v),
                    esc(&r.colour),
                    esc(&r.label),
                    sig3(v),
                    esc(unit)
                ));
            }
            _ => s.push_str(&format!(
                "<text class=\"status\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
                LABEL + 14.0,
                y + 4.0,
                esc(&r.note)
            )),
        }
    }
    s.push_str("</svg>");
    Some(s)
}

/// One segment of a stacked bar: a part's name, its value and colour.
pub struct Segment {
    pub label: String,
    pub value: f64,
    pub colour: String,
}

/// One horizontal bar of `segments` stacked left to right on a linear axis
/// from 0 to `whole` (labelled `unit`), with a legend beneath that gives
/// each segment's value and share of `whole`; None when no segment is
/// positive. A segment of 0 or less is listed in the legend but not drawn.
pub fn stacked_bar(segments: &[Segment], whole: f64, unit: &str, label: &str) -> Option<String> {
    const WIDTH: f64 = 1000.0;
    const BAR: f64 = 28.0;
    const LINE: f64 = 18.0;
    let drawn: f64 = segments.iter().map(|g| g.value.max(0.0)).sum();
    let scale = whole.max(drawn);
    if drawn <= 0.0 || !scale.is_finite() {
        return None;
    }
    // The legend in two columns.
    let rows = segments.len().div_ceil(2);
    let height = 20.0 + BAR + 24.0 + LINE * rows as f64 + 8.0;
    let mut s = format!(
        "<svg class=\"stacked\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" \
         aria-label=\"{}\">",
        esc(label)
    );
    let (x0, x1) = (10.0, WIDTH - 10.0);
    let px = |v: f64| v / scale * (x1 - x0);
    let mut x = x0;
    for g in segments.iter().filter(|g| g.value > 0.0) {
        let w = px(g.value);
        s.push_str(&format!(
            "<rect class=\"seg\" x=\"{x:.2}\" y=\"20\" width=\"{w:.2}\" height=\"{BAR}\" \
             fill=\"{}\"><title>{}: {} {} ({:.1}%)</title></rect>",
            esc(&g.colour),
            esc(&g.label),
            sig3(g.value),
            esc(unit),
            100.0 * g.value / whole
        ));
        x += w;
    }
    s.push_str(&format!(
        "<text class=\"tick\" x=\"{x0}\" y=\"14\">0</text>\
         <text class=\"tick\" x=\"{x1}\" y=\"14\" text-anchor=\"end\">{} {}</text>",
        sig3(scale),
        esc(unit)
    ));
    let top = 20.0 + BAR + 24.0;
    for (i, g) in segments.iter().enumerate() {
        let (col, row) = (i / rows, i % rows);
        let lx = x0 + col as f64 * (WIDTH / 2.0);
        let ly = top + LINE * row as f64;
        s.push_str(&format!(
            "<rect class=\"key\" x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" \
             fill=\"{}\"/><text class=\"label\" x=\"{:.1}\" y=\"{ly:.1}\">{}: {} {} \
             ({:.1}%)</text>",
            ly - 10.0,
            esc(&g.colour),
            lx + 18.0,
            esc(&g.label),
            sig3(g.value),
            esc(unit),
            100.0 * g.value / whole
        ));
    }
    s.push_str("</svg>");
    Some(s)
}

/// The shared axis of a comparison's forest cells: every interval and 1.
pub struct Forest {
    axis: LogAxis,
}

impl Forest {
    /// An axis over the ratios and their intervals (and 1, the no-change line).
    pub fn over(values: impl Iterator<Item = f64>) -> Forest {
        let axis = LogAxis::over(values.chain([0.9, 1.0 / 0.9]), 4.0, 196.0)
            .expect("1 is always on the axis");
        Forest { axis }
    }

    /// One row's cell: the line at 1, the interval and the ratio.
    pub fn cell(&self, ratio: f64, interval: Option<(f64, f64)>, class: &str) -> String {
        let one = self.axis.x(1.0);
        let mut s = format!(
            "<svg class=\"forest {class}\" viewBox=\"0 0 200 16\" width=\"200\" height=\"16\" \
             role=\"img\" aria-label=\"B/A {}\"><line class=\"one\" x1=\"{one:.1}\" y1=\"0\" \
             x2=\"{one:.1}\" y2=\"16\"/>",
            sig3(ratio)
        );
        if let Some((lo, hi)) = interval.filter(|(lo, hi)| *lo > 0.0 && *hi > 0.0) {
            s.push_str(&format!(
                "<line class=\"ci\" x1=\"{:.1}\" y1=\"8\" x2=\"{:.1}\" y2=\"8\"/>",
                self.axis.x(lo),
                self.axis.x(hi)
            ));
        }
        if ratio > 0.0 {
            s.push_str(&format!(
                "<circle class=\"ratio\" cx=\"{:.1}\" cy=\"8\" r=\"4\"/>",
                self.axis.x(ratio)
            ));
        }
        s.push_str("</svg>");
        s
    }

    /// The axis's ends, for the column's header.
    pub fn range(&self) -> (f64, f64) {
        (self.axis.lo, self.axis.hi)
    }
}

/// A change point on a series chart: the index of the first point at the
/// new level, and its label (verdict and magnitude).
pub struct Mark {
    pub index: usize,
    pub label: String,
    /// `regression`, `improvement` or `unstable`: the mark's class.
    pub class: String,
}

/// A series of one figure across runs (`ipcmark watch`): its values (with
/// each run's id) in run order on a log axis (the same [`LogAxis`] as the dot plot, upright),
/// each change point a dashed line before its first run at the new level,
/// labelled. None when no value is positive.
pub fn series_chart(values: &[(i64, f64)], marks: &[Mark], unit: &str) -> Option<String> {
    const WIDTH: f64 = 1000.0;
    const HEIGHT: f64 = 260.0;
    const LEFT: f64 = 70.0;
    const RIGHT: f64 = 20.0;
    const TOP: f64 = 28.0;
    const BOTTOM: f64 = 36.0;
    let axis = LogAxis::over(values.iter().map(|v| v.1), HEIGHT - BOTTOM, TOP)?;
    let n = values.len().max(2) as f64;
    let x = |i: f64| LEFT + i / (n - 1.0) * (WIDTH - LEFT - RIGHT);
    let mut s = format!(
        "<svg class=\"series\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" role=\"img\" \
         aria-label=\"the figure in each run, log scale, {}, change points marked\">",
        esc(unit)
    );
    for t in axis.ticks() {
        let y = axis.x(t);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            y + 4.0,
            sig3(t)
        ));
    }
    s.push_str(&format!(
        "<text class=\"unit\" x=\"{LEFT}\" y=\"14\">{} (log scale)</text>\
         <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">run, oldest first</text>",
        esc(unit),
        WIDTH - RIGHT,
        HEIGHT - 8.0
    ));
    for m in marks {
        let mx = x(m.index as f64 - 0.5);
        s.push_str(&format!(
            "<line class=\"change {}\" x1=\"{mx:.1}\" y1=\"{TOP}\" x2=\"{mx:.1}\" y2=\"{:.1}\"/>\
             <text class=\"change-label\" x=\"{:.1}\" y=\"{:.1}\">{}</text>",
            esc(&m.class),
            HEIGHT - BOTTOM,
            mx + 4.0,
            TOP + 10.0,
            esc(&m.label)
        ));
    }
    let points: Vec<String> = values
        .iter()
        .enumerate()
        .filter(|(_, (_, v))| *v > 0.0)
        .map(|(i, (_, v))| format!("{:.1},{:.1}", x(i as f64), axis.x(*v)))
        .collect();
    s.push_str(&format!(
        "<polyline class=\"series-line\" fill=\"none\" points=\"{}\"/>",
        points.join(" ")
    ));
    for (i, (id, v)) in values.iter().enumerate().filter(|(_, (_, v))| *v > 0.0) {
        s.push_str(&format!(
            "<circle class=\"series-dot\" cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\"><title>run {}: {} {}</title></circle>",
            x(i as f64),
            axis.x(*v),
            id,
            sig3(*v),
            esc(unit)
        ));
    }
    s.push_str("</svg>");
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dot_plot_escapes_its_labels_and_skips_rows_without_a_value() {
        let rows = [
            Dot {
                label: "<b>pipe</b>".into(),
                colour: "#123456".into(),
                value: Some((3.0, Some((2.0, 4.0)))),
                note: String::new(),
            },
            Dot {
                label: "fifo".into(),
                colour: "#123456".into(),
                value: None,
                note: "failed: peer died".into(),
            },
        ];
        let svg = dot_plot(&rows, "µs").unwrap();
        assert!(svg.contains("&lt;b&gt;pipe&lt;/b&gt;"));
        assert!(!svg.contains("<b>"));
        assert_eq!(svg.matches("<circle").count(), 1);
        assert!(svg.contains("failed: peer died"));
    }

    #[test]
    fn no_positive_value_no_plot() {
        let rows = [Dot {
            label: "x".into(),
            colour: "#000".into(),
            value: None,
            note: "below resolution".into(),
        }];
        assert!(dot_plot(&rows, "µs").is_none());
    }

    #[test]
    fn ticks_lie_on_the_axis() {
        let a = LogAxis::over([3.0, 40.0].into_iter(), 0.0, 100.0).unwrap();
        let t = a.ticks();
        assert!(t.contains(&10.0) && t.contains(&5.0));
        assert!(t.iter().all(|v| *v >= a.lo && *v <= a.hi));
    }

    #[test]
    fn a_series_chart_marks_each_change_before_its_first_run_at_the_new_level() {
        let values: Vec<(i64, f64)> = (1..=10)
            .map(|i| (i, if i > 5 { 11.0 } else { 10.0 }))
            .collect();
        let marks = [Mark {
            index: 5,
            label: "regression +10.0%".into(),
            class: "regression".into(),
        }];
        let svg = series_chart(&values, &marks, "µs").unwrap();
        assert_eq!(svg.matches("<circle class=\"series-dot\"").count(), 10);
        assert_eq!(svg.matches("<line class=\"change regression\"").count(), 1);
        assert!(svg.contains("regression +10.0%") && svg.contains("run 6: 11"));
        assert!(series_chart(&[(1, 0.0)], &[], "µs").is_none());
    }
}
