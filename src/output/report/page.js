// The report's script: draws the charts the page's JSON block describes with
// uPlot (none on a tax report's page, whose charts are static SVG), then
// checks that each drew, counts the static charts' marks, and writes what it
// found into <pre id="selfcheck"> (the browser test reads it). The data arrive ready to
// plot: ipcmark computed every value; this only draws. Text from the report
// reaches the page through textContent and uPlot's labels (textContent too).
(function () {
  "use strict";
  var check = window.__selfcheck || { errors: [], csp: [] };
  var drawn = [];

  function fmtSize(v) {
    if (v == null) return "";
    if (v >= 1048576 && v % 1048576 === 0) return v / 1048576 + "M";
    if (v >= 1024 && v % 1024 === 0) return v / 1024 + "K";
    return String(Math.round(v));
  }
  function fmtNum(v) {
    if (v == null) return "";
    var a = Math.abs(v);
    if (a >= 100 || a === 0) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    if (a >= 1) return v.toFixed(2);
    if (a >= 0.01) return v.toFixed(3);
    return v.toPrecision(2);
  }
  function fmtNines(y) {
    if (y == null) return "";
    var share = (1 - Math.pow(10, -y)) * 100;
    var digits = Math.max(0, Math.round(y) - 2);
    return share.toFixed(digits) + "%";
  }

  function lineSeries(s) {
    return {
      label: s.label,
      stroke: s.colour,
      width: s.model ? 1.5 : 2,
      dash: s.model ? [6, 4] : undefined,
      spanGaps: true,
      points: { show: !s.model, size: 7, fill: s.colour, stroke: s.colour },
      value: function (u, v) { return v == null ? "—" : fmtNum(v); },
    };
  }

  // A log axis from the power of ten below its least value to the one above.
  function decades(u, min, max) {
    if (min == null || max == null || !(min > 0)) return [min, max];
    return [Math.pow(10, Math.floor(Math.log10(min))), Math.pow(10, Math.ceil(Math.log10(max)))];
  }

  function width(el) {
    return Math.max(320, Math.floor(el.clientWidth || 900));
  }

  function xyChart(spec, el) {
    var opts = {
      width: width(el),
      height: 400,
      scales: { x: { distr: 3, log: 2 }, y: { distr: 3, log: 10 } },
      series: [{ label: "size", value: function (u, v) { return v == null ? "—" : fmtSize(v) + " B"; } }]
        .concat(spec.series.map(lineSeries)),
      axes: [
        {
          label: "message size (bytes, log scale)",
          values: function (u, splits) { return splits.map(fmtSize); },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
        {
          label: spec.ylabel + " (log scale)",
          size: 64,
          values: function (u, splits) { return splits.map(fmtNum); },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
      ],
      legend: { live: true },
    };
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values; }));
    return new uPlot(opts, data, el);
  }

  function cdfChart(group, el) {
    var maxY = 1;
    group.series.forEach(function (s) {
      s.values.forEach(function (v) { if (v != null && v > maxY) maxY = v; });
    });
    maxY = Math.ceil(maxY + 0.25);
    var opts = {
      width: width(el),
      height: 400,
      scales: { x: { distr: 3, log: 10, range: decades }, y: { range: [0, maxY] } },
      series: [{ label: "latency µs", value: function (u, v) { return v == null ? "—" : fmtNum(v); } }]
        .concat(group.series.map(function (s) {
          var o = lineSeries(s);
          o.value = function (u, v) { return v == null ? "—" : fmtNines(v); };
          return o;
        })),
      axes: [
        {
          label: "latency, µs (log scale)",
          values: function (u, splits) { return splits.map(fmtNum); },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
        {
          label: "share at or below (nines)",
          size: 64,
          // No label at 0 (the minimum): it would sit on the median's.
          splits: function () {
            var s = [Math.log10(2)];
            for (var k = 1; k <= maxY; k++) s.push(k);
            return s;
          },
          values: function (u, splits) { return splits.map(fmtNines); },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
      ],
      legend: { live: true },
    };
    var data = [group.x].concat(group.series.map(function (s) { return s.values; }));
    return new uPlot(opts, data, el);
  }

  function cdf(spec, el) {
    var entry = { id: spec.id, kind: "cdf", plot: null };
    if (spec.groups.length > 1) {
      var label = document.createElement("label");
      label.className = "choose";
      label.textContent = "Figures: ";
      var select = document.createElement("select");
      spec.groups.forEach(function (g, i) {
        var o = document.createElement("option");
        o.value = String(i);
        o.textContent = g.name + " (" + g.series.length + ")";
        select.appendChild(o);
      });
      label.appendChild(select);
      el.parentNode.insertBefore(label, el);
      select.addEventListener("change", function () {
        if (entry.plot) entry.plot.destroy();
        entry.plot = cdfChart(spec.groups[Number(select.value)], el);
      });
    }
    entry.plot = cdfChart(spec.groups[0], el);
    return entry;
  }

  // A rate in msg/s as the tables write it: 1k, 20.01k, 1.5M.
  function fmtRate(v) {
    if (v == null) return "";
    var trim = function (x) { return String(Number(x.toFixed(2))); };
    if (v >= 1e6) return trim(v / 1e6) + "M";
    if (v >= 1e3) return trim(v / 1e3) + "k";
    return trim(v);
  }

  // What the chart marks beyond its lines: hollow points where the achieved
  // rate fell short of the offer, and along the rate axis each mechanism's
  // knee (K) and saturation rate (S, S≥ for a bound), one row each.
  function rateMarks(u, spec) {
    var ctx = u.ctx, pr = uPlot.pxRatio || 1, box = u.bbox;
    ctx.save();
    ctx.font = Math.round(11 * pr) + "px sans-serif";
    ctx.textBaseline = "middle";
    var row = 0;
    spec.series.forEach(function (s, k) {
      if (!u.series[k + 1].show) return;
      var ys = u.data[k + 1];
      s.short.forEach(function (short, i) {
        if (!short || ys[i] == null) return;
        var x = u.valToPos(u.data[0][i], "x", true), y = u.valToPos(ys[i], "y", true);
        ctx.beginPath();
        ctx.arc(x, y, 5 * pr, 0, 2 * Math.PI);
        ctx.fillStyle = "#fff";
        ctx.fill();
        ctx.lineWidth = 2 * pr;
        ctx.strokeStyle = s.colour;
        ctx.stroke();
      });
      var y = box.top + box.height - (8 + 14 * row) * pr;
      row++;
      [[s.knee, "K", "right"], [s.saturation, s.saturation_bound ? "S≥" : "S", "left"]]
        .forEach(function (m) {
          if (m[0] == null) return;
          var x = u.valToPos(m[0], "x", true);
          if (x < box.left - 1 || x > box.left + box.width + 1) return;
          ctx.beginPath();
          ctx.moveTo(x, y - 5 * pr);
          ctx.lineTo(x - 5 * pr, y + 4 * pr);
          ctx.lineTo(x + 5 * pr, y + 4 * pr);
          ctx.closePath();
          ctx.fillStyle = s.colour;
          ctx.fill();
          ctx.textAlign = m[2];
          ctx.fillText(m[1], m[2] === "right" ? x - 7 * pr : x + 7 * pr, y);
        });
    });
    ctx.restore();
  }

  function rateChart(spec, key, el) {
    var name = key;
    spec.percentiles.forEach(function (p) { if (p.key === key) name = p.name; });
    var opts = {
      width: width(el),
      height: 400,
      // The rates offered, a little room either side (a decade's range
      // would leave most of a short sweep's chart empty).
      scales: {
        x: { distr: 3, log: 10, range: function (u, min, max) { return [min / 1.25, max * 1.25]; } },
        // Decades, and below the lowest a band kept free for the knee and
        // saturation marks (a row each mechanism), so no mark hides a point.
        y: {
          distr: 3,
          log: 10,
          range: function (u, min, max) {
            var r = decades(u, min, max);
            if (!(r[0] > 0)) return r;
            var band = Math.min(0.35, (10 + 14 * spec.series.length) / 320);
            var span = Math.log10(r[1] / r[0]);
            return [r[0] / Math.pow(10, span * band / (1 - band)), r[1]];
          },
        },
      },
      series: [{ label: "offered", value: function (u, v) { return v == null ? "—" : fmtRate(v) + " msg/s"; } }]
        .concat(spec.series.map(function (s) {
          var o = lineSeries(s);
          o.label = s.legend;
          return o;
        })),
      axes: [
        {
          label: "offered rate, messages/s (log scale)",
          // A tick at each rate offered (uPlot's log ticks would name only
          // the powers of ten), every other one named past a dozen.
          splits: function () { return spec.x.slice(); },
          filter: function (u, splits) { return splits; },
          values: function (u, splits) {
            return splits.map(function (v, i) { return splits.length > 12 && i % 2 ? "" : fmtRate(v); });
          },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
        {
          label: name + " from the intended send, µs (log scale)",
          size: 64,
          // Round values only (1, 2, 5 of each decade): the scale's foot is
          // the marks' band, which is no round value, so uPlot's own log
          // splits would start from it and none would be round.
          splits: function (u) {
            var min = u.scales.y.min, max = u.scales.y.max, out = [];
            if (!(min > 0) || !(max > min)) return out;
            for (var k = Math.floor(Math.log10(min)); k <= Math.ceil(Math.log10(max)); k++) {
              [1, 2, 5].forEach(function (m) {
                var v = m * Math.pow(10, k);
                if (v >= min && v <= max) out.push(v);
              });
            }
            return out;
          },
          filter: function (u, splits) { return splits; },
          values: function (u, splits) { return splits.map(fmtNum); },
          grid: { stroke: "#e6e8eb" },
          ticks: { stroke: "#c9ced4" },
        },
      ],
      hooks: { draw: [function (u) { rateMarks(u, spec); }] },
      legend: { live: true },
    };
    var data = [spec.x].concat(spec.series.map(function (s) { return s.values[key]; }));
    return new uPlot(opts, data, el);
  }

  function rate(spec, el) {
    var entry = { id: spec.id, kind: "rate", plot: null, percentile: spec["default"] };
    var label = document.createElement("label");
    label.className = "choose";
    label.textContent = "Percentile: ";
    var select = document.createElement("select");
    spec.percentiles.forEach(function (p) {
      var o = document.createElement("option");
      o.value = p.key;
      o.textContent = p.name;
      if (p.key === spec["default"]) o.selected = true;
      select.appendChild(o);
    });
    label.appendChild(select);
    el.parentNode.insertBefore(label, el);
    select.addEventListener("change", function () {
      if (entry.plot) entry.plot.destroy();
      entry.percentile = select.value;
      entry.plot = rateChart(spec, select.value, el);
    });
    entry.plot = rateChart(spec, entry.percentile, el);
    return entry;
  }

  // Pixels of a chart's canvas that are coloured (not white, grey or black):
  // the series' lines and points, never the axes or the grid.
  function colouredPixels(u) {
    var c = u.ctx.canvas;
    var d = u.ctx.getImageData(0, 0, c.width, c.height).data;
    var n = 0;
    for (var i = 0; i < d.length; i += 4) {
      var r = d[i], g = d[i + 1], b = d[i + 2];
      if (d[i + 3] > 200 && Math.max(r, g, b) - Math.min(r, g, b) > 50) n++;
    }
    return n;
  }

  function selfcheck() {
    var charts = drawn.map(function (e) {
      var px = 0, error = null;
      try { px = e.plot ? colouredPixels(e.plot) : 0; } catch (err) { error = String(err); }
      var c = { id: e.id, kind: e.kind, coloured_pixels: px, drawn: px > 20, error: error };
      if (e.percentile) c.percentile = e.percentile;
      return c;
    });
    var statics = Array.prototype.map.call(document.querySelectorAll("svg.dotplot"), function (s) {
      return { kind: "dotplot", marks: s.querySelectorAll("circle").length };
    }).concat(Array.prototype.map.call(document.querySelectorAll("svg.heatmap"), function (s) {
      return { kind: "heatmap", marks: s.querySelectorAll("rect.cell").length };
    })).concat(Array.prototype.map.call(document.querySelectorAll("svg.stacked"), function (s) {
      return { kind: "stacked", marks: s.querySelectorAll("rect.seg").length };
    }));
    // A tax report's grouped bars (drawn by ipcmark, no uPlot): its marks
    // are the bars and the × of cells without a difference.
    var taxCharts = document.querySelectorAll("svg.tax-chart");
    statics = statics.concat(Array.prototype.map.call(taxCharts, function (s) {
      return {
        kind: "tax",
        marks: s.querySelectorAll("rect.bar, text.na").length,
        bars: s.querySelectorAll("rect.bar").length,
        hollow: s.querySelectorAll("rect.bar.hollow").length,
      };
    }));
    var resources = (performance.getEntriesByType ? performance.getEntriesByType("resource") : [])
      .map(function (r) { return r.name; });
    var result = {
      charts: charts,
      expected_charts: expected,
      static_charts: statics,
      tax_charts: taxCharts.length,
      errors: check.errors,
      csp_violations: check.csp,
      requests: resources,
    };
    result.ok = charts.length === expected &&
      charts.every(function (c) { return c.drawn; }) &&
      statics.every(function (s) { return s.marks > 0; }) &&
      check.errors.length === 0 && check.csp.length === 0 && resources.length === 0;
    var pre = document.getElementById("selfcheck");
    pre.textContent = JSON.stringify(result, null, 1);
    pre.setAttribute("data-ok", result.ok ? "true" : "false");
  }

  var expected = 0;
  try {
    var data = JSON.parse(document.getElementById("report-data").textContent);
    expected = data.charts.length;
    data.charts.forEach(function (spec) {
      var el = document.getElementById(spec.id);
      try {
        if (spec.kind === "xy") drawn.push({ id: spec.id, kind: "xy", plot: xyChart(spec, el) });
        else if (spec.kind === "cdf") drawn.push(cdf(spec, el));
        else if (spec.kind === "rate") drawn.push(rate(spec, el));
      } catch (err) {
        check.errors.push("chart " + spec.id + ": " + err);
      }
    });
  } catch (err) {
    check.errors.push("report data: " + err);
  }
  window.addEventListener("resize", function () {
    drawn.forEach(function (e) {
      if (e.plot) e.plot.setSize({ width: width(e.plot.root.parentNode), height: 400 });
    });
  });
  // uPlot draws on its next frame: check after it.
  setTimeout(selfcheck, 200);
})();
