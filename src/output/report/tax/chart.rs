//! One table of a tax ledger as a grouped bar chart in static SVG: a group
//! per figure, a bar per layer, its height the layer's difference from bare
//! in % of bare, a whisker for the difference's 95% interval. A bar is
//! filled where the test found a difference at α and hollow where it found
//! none, so the eye goes to what the data support; a cell with no
//! difference to give is a `×` whose tooltip says why. Drawn by ipcmark
//! itself, like `report/svg.rs`: no script, so it prints and reads with
//! scripts off.

use super::super::esc;
use super::super::page_charts::hsl_hex;

/// The layers' colours: Paul Tol's "muted" scheme (told apart under the
/// common colour-vision deficiencies) in an order that puts the most unlike
/// first, then three of Okabe and Ito's; more layers take hues at the golden
/// angle.
const PALETTE: [&str; 12] = [
    "#332288", "#ddcc77", "#117733", "#cc6677", "#88ccee", "#882255", "#44aa99", "#999933",
    "#aa4499", "#e69f00", "#0072b2", "#d55e00",
];

/// The colour of the `i`-th layer, the same in every chart of the page.
pub fn colour(i: usize) -> String {
    match PALETTE.get(i) {
        Some(c) => c.to_string(),
        None => hsl_hex((i as f64 * 137.508) % 360.0, 0.65, 0.42),
    }
}

/// A layer's bar in a group.
pub struct Bar {
    /// Its layer's colour.
    pub colour: String,
    /// The difference, % of bare; `None`: no difference to give, so a mark.
    pub value: Option<f64>,
    /// The 95% interval of the difference, % of bare.
    pub interval: Option<(f64, f64)>,
    /// Whether the test found a difference at α: filled, else hollow.
    pub significant: bool,
    /// Its tooltip, as plain text (escaped here).
    pub title: String,
}

/// One figure's bars, a slot per layer (in the legend's order).
pub struct Group {
    /// The figure's name.
    pub label: String,
    /// A bar per layer.
    pub bars: Vec<Bar>,
}

/// A legend entry: a layer and its colour.
pub struct Key {
    /// The layer's name.
    pub name: String,
    /// Its colour.
    pub colour: String,
}

const WIDTH: f64 = 1000.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 12.0;
const PLOT: f64 = 260.0;
const LINE: f64 = 18.0;
/// The width of a character of the labels (12.5 px sans-serif), px: enough
/// to lay out the legend and to tell when the figures' names need turning.
const CHAR: f64 = 7.5;

/// The vertical axis: % of bare from `lo` to `hi` over pixels `top` to
/// `bottom`, in steps of `step`.
struct Scale {
    lo: f64,
    hi: f64,
    step: f64,
    top: f64,
    bottom: f64,
}

impl Scale {
    /// An axis that holds every bar and (clipped at `limit`) every
    /// interval, 0, and room on the side of 0 where nothing is, so a
    /// negative difference would show, and none is made to look impossible.
    fn over(groups: &[Group], limit: f64, top: f64, bottom: f64) -> Scale {
        let (mut lo, mut hi) = (0.0f64, 0.0f64);
        for b in groups.iter().flat_map(|g| &g.bars) {
            let Some(v) = b.value else { continue };
            let (l, h) = b.interval.unwrap_or((v, v));
            for x in [v, l.clamp(-limit, limit), h.clamp(-limit, limit)] {
                lo = lo.min(x);
                hi = hi.max(x);
            }
        }
        let m = hi.max(-lo).max(2.0);
        let (lo, hi) = (lo.min(-0.2 * m), hi.max(0.2 * m));
        let step = nice((hi - lo) / 6.0);
        Scale {
            lo: (lo / step).floor() * step,
            hi: (hi / step).ceil() * step,
            step,
            top,
            bottom,
        }
    }

    fn y(&self, v: f64) -> f64 {
        let v = v.clamp(self.lo, self.hi);
        self.top + (self.hi - v) / (self.hi - self.lo) * (self.bottom - self.top)
    }

    fn ticks(&self) -> Vec<f64> {
        let n = ((self.hi - self.lo) / self.step).round() as i64;
        (0..=n).map(|k| self.lo + k as f64 * self.step).collect()
    }
}

/// 1, 2, 2.5 or 5 times a power of ten, the least at or above `x`.
fn nice(x: f64) -> f64 {
    let e = 10f64.powf(x.log10().floor());
    let f = x / e;
    e * [1.0, 2.0, 2.5, 5.0, 10.0]
        .into_iter()
        .find(|m| f <= *m + 1e-9)
        .unwrap_or(10.0)
}

/// A tick's label: `+20%`, `0`, `-2.5%`.
fn tick_label(v: f64) -> String {
    let r = (v * 1000.0).round() / 1000.0;
    if r == 0.0 {
        "0".into()
    } else if r > 0.0 {
        format!("+{r}%")
    } else {
        format!("{r}%")
    }
}

/// The chart of `groups`, a slot per entry of `keys`; `alpha` for the
/// legend, `label` for screen readers. None when there is no layer to draw.
pub fn grouped_bars(groups: &[Group], keys: &[Key], alpha: f64, label: &str) -> Option<String> {
    let slots = keys.len().max(groups.iter().map(|g| g.bars.len()).max()?);
    if slots == 0 || groups.is_empty() {
        return None;
    }
    // The legend: the layers in rows, then what filled, hollow, × and the
    // whiskers mean.
    let mut legend = String::new();
    let (mut x, mut y) = (LEFT, 34.0);
    let meaning = [
        (
            Some(("#5b6670", "#5b6670")),
            format!("filled: a difference at α = {alpha}"),
        ),
        (
            Some(("#fff", "#5b6670")),
            "hollow: no difference at α".into(),
        ),
        (None, "× no difference to give (hover: why)".into()),
        (None, "whisker: 95% interval".into()),
    ];
    let layers = keys.iter().map(|k| {
        (
            Some((k.colour.as_str(), k.colour.as_str())),
            k.name.clone(),
            "label",
        )
    });
    let meanings = meaning.iter().map(|(sw, t)| (*sw, t.clone(), "tick"));
    for (n, (swatch, text, class)) in layers.chain(meanings).enumerate() {
        // The meanings are in the smaller type of the ticks.
        let per = if class == "tick" { 6.4 } else { CHAR };
        let w = if swatch.is_some() { 20.0 } else { 0.0 } + text.chars().count() as f64 * per;
        // The meanings start a row of their own.
        if (x + w > WIDTH - RIGHT || n == keys.len()) && x > LEFT {
            x = LEFT;
            y += LINE + if n == keys.len() { 4.0 } else { 0.0 };
        }
        let mut tx = x;
        if let Some((fill, stroke)) = swatch {
            legend.push_str(&format!(
                "<rect class=\"key\" x=\"{x:.1}\" y=\"{:.1}\" width=\"13\" height=\"11\" \
                 fill=\"{}\" stroke=\"{}\" stroke-width=\"1.5\"/>",
                y - 9.5,
                esc(fill),
                esc(stroke)
            ));
            tx += 20.0;
        }
        legend.push_str(&format!(
            "<text class=\"{class}\" x=\"{tx:.1}\" y=\"{y:.1}\">{}</text>",
            esc(&text)
        ));
        x += w + 18.0;
    }
    let top = y + 16.0;
    let bottom = top + PLOT;
    let plot_w = WIDTH - LEFT - RIGHT;
    let longest = groups
        .iter()
        .map(|g| g.label.chars().count())
        .max()
        .unwrap_or(0) as f64;
    // A group's width: its share of the plot, but no more than its bars
    // and its name need (one figure's four bars across the whole width read
    // as blocks, not bars); the groups centred.
    let need = (slots as f64 * 60.0 + 40.0).max(longest * CHAR + 16.0);
    let gw = (plot_w / groups.len() as f64).min(need);
    let x0 = LEFT + (plot_w - gw * groups.len() as f64) / 2.0;
    let turned = longest * CHAR > gw - 8.0;
    let height = bottom
        + if turned {
            (20.0 + 0.5 * longest * CHAR).min(140.0)
        } else {
            28.0
        };
    // An interval may be far wider than every bar (few passes): it is cut
    // at three times the largest bar (10% at least), so the bars stay
    // readable, and an arrow says it goes on.
    let extent = groups
        .iter()
        .flat_map(|g| &g.bars)
        .filter_map(|b| b.value)
        .fold(0.0f64, |m, v| m.max(v.abs()));
    let limit = (3.0 * extent).max(10.0);
    let scale = Scale::over(groups, limit, top, bottom);
    let mut s = format!(
        "<svg class=\"tax-chart\" viewBox=\"0 0 {WIDTH} {height:.0}\" role=\"img\" \
         aria-label=\"{}\"><text class=\"unit\" x=\"{LEFT}\" y=\"14\">layer − bare, % of \
         bare's median</text>{legend}",
        esc(label)
    );
    for (i, _) in groups.iter().enumerate().filter(|(i, _)| i % 2 == 1) {
        s.push_str(&format!(
            "<rect class=\"band\" x=\"{:.1}\" y=\"{top:.1}\" width=\"{gw:.1}\" height=\"{PLOT}\"/>",
            x0 + i as f64 * gw
        ));
    }
    for t in scale.ticks() {
        let ty = scale.y(t);
        s.push_str(&format!(
            "<line class=\"grid\" x1=\"{LEFT}\" y1=\"{ty:.1}\" x2=\"{:.1}\" y2=\"{ty:.1}\"/>\
             <text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            WIDTH - RIGHT,
            LEFT - 6.0,
            ty + 4.0,
            tick_label(t)
        ));
    }
    let inner = gw * 0.84;
    let sw = inner / slots as f64;
    let bw = (sw * 0.78).max(1.0);
    let zero = scale.y(0.0);
    for (i, g) in groups.iter().enumerate() {
        let g0 = x0 + i as f64 * gw;
        for (j, b) in g.bars.iter().enumerate() {
            let bx = g0 + (gw - inner) / 2.0 + j as f64 * sw + (sw - bw) / 2.0;
            s.push_str(&bar(b, bx, bw, &scale, limit, zero));
        }
        let cx = g0 + gw / 2.0;
        let ly = bottom + 16.0;
        if turned {
            s.push_str(&format!(
                "<text class=\"label\" x=\"{cx:.1}\" y=\"{ly:.1}\" text-anchor=\"end\" \
                 transform=\"rotate(-30 {cx:.1} {ly:.1})\">{}</text>",
                esc(&g.label)
            ));
        } else {
            s.push_str(&format!(
                "<text class=\"label\" x=\"{cx:.1}\" y=\"{ly:.1}\" text-anchor=\"middle\">{}</text>",
                esc(&g.label)
            ));
        }
    }
    s.push_str(&format!(
        "<line class=\"zero\" x1=\"{LEFT}\" y1=\"{zero:.1}\" x2=\"{:.1}\" y2=\"{zero:.1}\"/></svg>",
        WIDTH - RIGHT
    ));
    Some(s)
}

/// One bar at `x`, `w` wide, with its whisker, or the mark of a cell with
/// no difference, on the zero line at `zero`.
fn bar(b: &Bar, x: f64, w: f64, scale: &Scale, limit: f64, zero: f64) -> String {
    let cx = x + w / 2.0;
    let Some(v) = b.value else {
        return format!(
            "<text class=\"na\" x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">\
             <title>{}</title>×</text>",
            zero - 4.0,
            esc(&b.title)
        );
    };
    let (y0, y1) = (scale.y(v.max(0.0)), scale.y(v.min(0.0)));
    let c = esc(&b.colour);
    let (class, fill) = if b.significant {
        ("bar", c.clone())
    } else {
        ("bar hollow", "#fff".to_string())
    };
    let mut s = format!(
        "<g class=\"cell\"><title>{}</title><rect class=\"{class}\" x=\"{x:.1}\" y=\"{y0:.1}\" \
         width=\"{w:.1}\" height=\"{:.1}\" fill=\"{fill}\" stroke=\"{c}\"/>",
        esc(&b.title),
        (y1 - y0).max(1.0),
    );
    if let Some((lo, hi)) = b.interval {
        let (ylo, yhi) = (scale.y(lo.max(-limit)), scale.y(hi.min(limit)));
        let cap = (w * 0.5).min(8.0) / 2.0;
        s.push_str(&format!(
            "<line class=\"whisker\" x1=\"{cx:.1}\" y1=\"{yhi:.1}\" x2=\"{cx:.1}\" y2=\"{ylo:.1}\"/>"
        ));
        for (end, clipped, dir) in [(yhi, hi > limit, 1.0), (ylo, lo < -limit, -1.0)] {
            // A cut interval ends in an arrow pointing on, a whole one in a cap.
            if clipped {
                s.push_str(&format!(
                    "<path class=\"whisker\" d=\"M{:.1},{:.1} L{cx:.1},{end:.1} L{:.1},{:.1}\"/>",
                    cx - 3.5,
                    end + 5.0 * dir,
                    cx + 3.5,
                    end + 5.0 * dir
                ));
            } else {
                s.push_str(&format!(
                    "<line class=\"whisker\" x1=\"{:.1}\" y1=\"{end:.1}\" x2=\"{:.1}\" y2=\"{end:.1}\"/>",
                    cx - cap,
                    cx + cap
                ));
            }
        }
    }
    s.push_str("</g>");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_steps_and_tick_labels() {
        assert_eq!(nice(3.0), 5.0);
        assert_eq!(nice(0.7), 1.0);
        assert_eq!(nice(22.0), 25.0);
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(20.0), "+20%");
        assert_eq!(tick_label(-2.5), "-2.5%");
    }

    #[test]
    fn the_axis_holds_every_bar_and_room_below_zero() {
        let g = Group {
            label: "pipe".into(),
            bars: vec![Bar {
                colour: colour(0),
                value: Some(40.0),
                interval: Some((30.0, 500.0)),
                significant: true,
                title: String::new(),
            }],
        };
        let s = Scale::over(&[g], 120.0, 0.0, 100.0);
        assert!(s.hi >= 120.0 && s.hi < 200.0, "the interval cut: {}", s.hi);
        assert!(s.lo < 0.0, "room below zero: {}", s.lo);
        assert!(s.ticks().contains(&0.0));
    }

    #[test]
    fn names_too_long_for_their_group_are_turned() {
        let groups = |label: &str, n: usize| -> Vec<Group> {
            (0..n)
                .map(|_| Group {
                    label: label.into(),
                    bars: vec![],
                })
                .collect()
        };
        let keys = [Key {
            name: "netns".into(),
            colour: colour(0),
        }];
        let few = grouped_bars(&groups("syscall-read-tmpfs", 2), &keys, 0.05, "t").unwrap();
        assert!(!few.contains("rotate("));
        let many = grouped_bars(&groups("syscall-read-tmpfs", 9), &keys, 0.05, "t").unwrap();
        assert_eq!(many.matches("rotate(-30").count(), 9);
    }
}
