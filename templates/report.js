// rocanalyze report: draws the plots and tables from the JSON embedded once in this page.
// Names from traces are untrusted: they only ever reach the page through textContent or plotly text.
(function () {
  "use strict";
  var D = JSON.parse(document.getElementById("rocanalyze-data").textContent);
  var CONFIG = { displaylogo: false, responsive: true };
  var PALETTE = {
    gemm: "#b5122b", attention: "#e8702a", conv: "#7b3294", elementwise: "#1f78b4", reduction: "#33a02c",
    norm: "#6a9f3c", softmax: "#b2df8a", index: "#a6761d", sort: "#666666", communication: "#e7298a",
    memcpy: "#17becf", memset: "#9edae5", other: "#bcbd22",
    launch_bound: "#c7c7c7", sync: "#a0a0a0", h2d_copy: "#7f7f7f", host_other: "#dddddd"
  };
  var EXTRA = ["#8c564b", "#9467bd", "#2ca02c", "#d62728", "#ff7f0e", "#1f77b4", "#e377c2", "#7f7f7f"];
  function color(name, i) { return PALETTE[name] || EXTRA[(i || 0) % EXTRA.length]; }
  function fmtUs(us) {
    if (us === null || us === undefined) { return "n/a"; }
    if (Math.abs(us) >= 1e6) { return (us / 1e6).toFixed(3) + " s"; }
    if (Math.abs(us) >= 1e3) { return (us / 1e3).toFixed(2) + " ms"; }
    return us.toFixed(1) + " µs";
  }
  function num(v, digits) { return (v === null || v === undefined) ? "" : Number(v).toFixed(digits); }
  function empty(id, message) {
    var el = document.getElementById(id);
    el.classList.remove("plot", "tall");
    el.className = "note";
    el.textContent = message;
  }

  function drawCategories() {
    var order = D.category_order || Object.keys(D.categories_us || {});
    var idle = D.idle_breakdown_us || {};
    var names = [], values = [], colors = [];
    order.forEach(function (c, i) { names.push(c); values.push(D.categories_us[c]); colors.push(color(c, i)); });
    Object.keys(idle).sort().forEach(function (c) {
      if (idle[c] > 0) { names.push("idle: " + c); values.push(idle[c]); colors.push(color(c)); }
    });
    if (!names.length) { empty("plot-categories", "No per-category time in this analysis."); return; }
    var w = D.window_us || 1;
    Plotly.newPlot("plot-categories", [{
      type: "bar", orientation: "h", y: names, x: values.map(function (v) { return v / 1e3; }),
      marker: { color: colors }, text: values.map(function (v) { return (100 * v / w).toFixed(1) + "%"; }),
      textposition: "auto", hovertemplate: "%{y}: %{x:.3f} ms (%{text})<extra></extra>"
    }], {
      margin: { l: 170, r: 20, t: 10, b: 40 }, xaxis: { title: { text: "ms in the window" } },
      yaxis: { autorange: "reversed" }
    }, CONFIG);
    var L = D.launch || {}, O = D.overlap || {};
    var facts = [];
    if (L.launch_overhead_us !== undefined) { facts.push("launch overhead " + fmtUs(L.launch_overhead_us)); }
    if (L.launch_call_mean_us !== undefined) { facts.push("launch call " + fmtUs(L.launch_call_mean_us) + " on average"); }
    if (L.launch_to_start_mean_us !== undefined) { facts.push("launch to start " + fmtUs(L.launch_to_start_mean_us)); }
    if (L.short_kernel_share !== undefined) { facts.push((100 * L.short_kernel_share).toFixed(0) + "% of kernels shorter than a launch"); }
    if (L.kernels_per_step !== undefined) { facts.push(num(L.kernels_per_step, 0) + " kernels per step"); }
    if (O.communication_us) { facts.push("communication " + fmtUs(O.communication_us) + ", exposed " + fmtUs(O.exposed_communication_us)); }
    if (D.startup_us) { facts.push("start-up outside the window " + fmtUs(D.startup_us)); }
    if (D.memory && D.memory.peak_bytes) { facts.push("peak device memory " + (D.memory.peak_bytes / 1e9).toFixed(2) + " GB"); }
    document.getElementById("launch-facts").textContent = facts.join(" · ");
    var ranks = D.ranks || [];
    if (ranks.length > 1) {
      document.getElementById("ranks-block").hidden = false;
      var rows = ranks.map(function (r) {
        return { rank: r.rank, window_us: r.window_us, busy_us: r.busy_us, idle_us: r.idle_us,
          exposed: r.exposed_communication_us, imbalance: typeof r.imbalance === "number" ? 100 * r.imbalance : null,
          slowest: r.slowest ? "slowest" : "" };
      });
      fillTable("rank-table", [["rank", "Rank", 0], ["window_us", "Window µs", 0], ["busy_us", "Busy µs", 0],
        ["idle_us", "Idle µs", 0], ["exposed", "Exposed comm. µs", 0], ["imbalance", "Behind slowest %", 1],
        ["slowest", "", "name"]], rows);
    }
  }

  function drawTimeline() {
    var T = D.timeline || {};
    var lanes = T.lanes || [];
    if (!lanes.length || !T.n_bins) { empty("plot-timeline", "No timeline in this analysis (aggregate-only input)."); return; }
    var x = [];
    for (var b = 0; b < T.n_bins; b++) { x.push((b + 0.5) * T.bin_us / 1e3); }  // ms from the window start
    var traces = [], layout = { barmode: "stack", bargap: 0, margin: { l: 120, r: 20, t: 40, b: 40 },
      showlegend: true, legend: { orientation: "h", y: 1.02, yanchor: "bottom" } };
    var n = lanes.length, gap = 0.02, h = (1 - gap * (n - 1)) / n, seen = {};
    var cats = D.category_order || [];
    lanes.forEach(function (lane, i) {
      var axis = i === 0 ? "" : String(i + 1);
      var top = 1 - i * (h + gap);
      layout["yaxis" + axis] = { domain: [Math.max(0, top - h), top], range: [0, 1], showticklabels: false,
        title: { text: "r" + lane.rank + " d" + lane.device + " s" + lane.stream, font: { size: 10 } } };
      var by = lane.busy_us_by_category || {};
      var names = Object.keys(by).sort(function (a, b) { return cats.indexOf(a) - cats.indexOf(b); });
      names.forEach(function (c) {
        traces.push({ type: "bar", x: x, y: by[c].map(function (v) { return v / T.bin_us; }), name: c,
          legendgroup: c, showlegend: !seen[c], marker: { color: color(c, cats.indexOf(c)) }, yaxis: "y" + axis,
          hovertemplate: c + ": %{y:.0%} busy at %{x:.2f} ms<extra></extra>" });
        seen[c] = true;
      });
    });
    layout.xaxis = { title: { text: "ms from the window start" }, anchor: "y" + (n === 1 ? "" : String(n)) };
    Plotly.newPlot("plot-timeline", traces, layout, CONFIG);
  }

  var KCOLS = [["name", "Kernel", "name"], ["category", "Category", "name"], ["calls", "Calls", 0],
    ["total_us", "Total µs", 1], ["mean_us", "Mean µs", 2], ["share", "Share %", 1], ["tflops", "TFLOP/s", 1],
    ["gbps", "GB/s", 0], ["occupancy", "Occupancy", "occ"], ["op", "Op", "name"], ["module", "Module", "name"]];

  function cell(row, col) {
    var v = row[col[0]];
    if (col[2] === "occ") {
      if (!v || typeof v.occupancy_pct !== "number") { return ""; }
      return v.occupancy_pct.toFixed(0) + "%" + (v.limiter ? " (" + v.limiter + ")" : "");
    }
    if (col[0] === "share") { return v === null || v === undefined ? "" : (100 * v).toFixed(1); }
    if (col[2] === "name") { return v === null || v === undefined ? "" : String(v); }
    return num(v, col[2]);
  }

  function fillTable(tableId, cols, rows) {
    var table = document.getElementById(tableId);
    var head = document.createElement("tr");
    var state = { key: null, asc: false };
    cols.forEach(function (col) {
      var th = document.createElement("th");
      th.textContent = col[1];
      if (col[2] === "name") { th.className = "name"; }
      th.addEventListener("click", function () {
        state.asc = state.key === col[0] ? !state.asc : col[2] === "name";
        state.key = col[0];
        rows.sort(function (a, b) {
          var x = a[col[0]], y = b[col[0]];
          if (col[2] === "occ") { x = x && typeof x.occupancy_pct === "number" ? x.occupancy_pct : -1; y = y && typeof y.occupancy_pct === "number" ? y.occupancy_pct : -1; }
          if (x === y) { return 0; }
          if (x === null || x === undefined) { return 1; }
          if (y === null || y === undefined) { return -1; }
          return (x < y ? -1 : 1) * (state.asc ? 1 : -1);
        });
        body();
      });
      head.appendChild(th);
    });
    table.tHead.appendChild(head);
    function body() {
      var tb = table.tBodies[0];
      tb.textContent = "";
      rows.forEach(function (row) {
        var tr = document.createElement("tr");
        tr.dataset.search = cols.map(function (c) { return cell(row, c); }).join(" ").toLowerCase();
        cols.forEach(function (col) {
          var td = document.createElement("td");
          td.textContent = cell(row, col);
          if (col[2] === "name") { td.className = "name"; }
          tr.appendChild(td);
        });
        tb.appendChild(tr);
      });
      filterRows(table);
    }
    body();
  }

  // Keep the search filter across re-sorts: rows are rebuilt, the query stays on the table.
  function filterRows(table) {
    var q = (table.dataset.query || "").toLowerCase();
    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
      tr.style.display = tr.dataset.search.indexOf(q) >= 0 ? "" : "none";
    });
  }

  function drawKernels() {
    var rows = (D.kernels || []).slice();
    if (!rows.length) { empty("kernel-table", "No kernels in this analysis."); return; }
    fillTable("kernel-table", KCOLS, rows);
    document.getElementById("kernel-search").addEventListener("input", function (ev) {
      var table = document.getElementById("kernel-table");
      table.dataset.query = ev.target.value;
      filterRows(table);
    });
  }

  function drawRoofline() {
    var ops = (D.ops || []).filter(function (o) { return o.intensity > 0 && o.tflops > 0; });
    var C = D.ceilings || {};
    if (!ops.length) { empty("plot-roofline", "No op with FLOPs and bytes in this analysis (the trace records no input shapes)."); return; }
    var xmin = Math.min.apply(null, ops.map(function (o) { return o.intensity; })) / 4;
    var xmax = Math.max.apply(null, ops.map(function (o) { return o.intensity; })) * 4;
    var traces = [], cats = {}, order = D.category_order || [];
    var tmax = Math.max.apply(null, ops.map(function (o) { return o.time_us || 0; })) || 1;
    ops.forEach(function (o) { (cats[o.category] = cats[o.category] || []).push(o); });
    Object.keys(cats).sort().forEach(function (c) {
      var pts = cats[c];
      traces.push({ type: "scatter", mode: "markers", name: c, x: pts.map(function (o) { return o.intensity; }),
        y: pts.map(function (o) { return o.tflops; }),
        marker: { color: color(c, order.indexOf(c)), opacity: 0.75, line: { width: 0.5, color: "#333" },
          size: pts.map(function (o) { return 6 + 34 * Math.sqrt((o.time_us || 0) / tmax); }) },
        text: pts.map(function (o) {
          return String(o.op) + "<br>shapes " + JSON.stringify(o.shapes) + "<br>dtypes " + JSON.stringify(o.dtypes) +
            "<br>" + o.calls + " calls, " + fmtUs(o.time_us) + "<br>" + num(o.tflops, 2) + " TFLOP/s, " + num(o.gbps, 0) +
            " GB/s" + (o.efficiency !== undefined && o.efficiency !== null ? "<br>" + (100 * o.efficiency).toFixed(0) + "% of roof" : "") +
            (o.bound ? ", " + o.bound + "-bound" : "");
        }), hovertemplate: "%{text}<extra></extra>" });
    });
    var bw = C.memory_bw_gbps, peaks = C.peaks_tflops || {};
    Object.keys(peaks).forEach(function (k, i) {
      var p = peaks[k], knee = bw ? p * 1e3 / bw : xmin;
      traces.push({ type: "scatter", mode: "lines", name: k + " peak " + p + " TFLOP/s", x: [Math.max(knee, xmin), Math.max(xmax, knee * 2)],
        y: [p, p], line: { dash: "dash", width: 1.5, color: EXTRA[i % EXTRA.length] }, hoverinfo: "name" });
    });
    if (bw) {
      var top = Math.max.apply(null, Object.keys(peaks).map(function (k) { return peaks[k]; }).concat([1]));
      traces.push({ type: "scatter", mode: "lines", name: "memory " + bw + " GB/s", x: [xmin, top * 1e3 / bw],
        y: [bw * xmin / 1e3, top], line: { width: 2, color: "#222" }, hoverinfo: "name" });
    }
    Plotly.newPlot("plot-roofline", traces, {
      margin: { l: 70, r: 20, t: 10, b: 50 },
      legend: { x: 1.01, y: 0.92 },
      xaxis: { type: "log", title: { text: "arithmetic intensity (FLOP/byte)" } },
      yaxis: { type: "log", title: { text: "TFLOP/s" } }
    }, CONFIG);
  }

  function resident(o) {
    if (typeof o.waves_per_simd === "number") { return o.waves_per_simd + " waves/SIMD"; }
    if (typeof o.warps_per_sm === "number") { return o.warps_per_sm + " warps/SM, " + o.blocks_per_sm + " blocks/SM"; }
    return "";
  }

  function drawOccupancy() {
    var occ = D.occupancy || [];
    if (!occ.length) {
      empty("plot-occupancy", "No kernel code objects were captured for this run: run `rocanalyze occupancy` on the kernels' .amdgcn/.hsaco or a Triton cache, or `rocanalyze profile`, which captures the Triton kernels that ran.");
      document.getElementById("occupancy-table").style.display = "none";
      return;
    }
    var known = occ.filter(function (o) { return typeof o.occupancy_pct === "number"; });
    if (known.length) {
      document.getElementById("plot-occupancy").style.height = Math.max(220, 60 + 22 * known.length) + "px";
      var label = function (o, i) { var n = String(o.kernel); return (i + 1) + ". " + (n.length > 48 ? n.slice(0, 47) + "…" : n); };
      Plotly.newPlot("plot-occupancy", [{ type: "bar", orientation: "h", y: known.map(label), x: known.map(function (o) { return o.occupancy_pct; }),
        text: known.map(function (o) { return o.limiter || ""; }),
        customdata: known.map(function (o) { return String(o.kernel) + "<br>" + resident(o); }),
        textposition: "auto", marker: { color: "#b5122b" },
        hovertemplate: "%{customdata}<br>%{x:.0f}% of the maximum, limited by %{text}<extra></extra>" }],
        { margin: { l: 330, r: 20, t: 10, b: 40 }, height: Math.max(220, 60 + 22 * known.length),
          xaxis: { title: { text: "occupancy (% of the arch maximum)" }, range: [0, 100] }, yaxis: { autorange: "reversed" } }, CONFIG);
    } else {
      empty("plot-occupancy", "No occupancy could be computed for these kernels (see the Note column).");
    }
    var cols = [["kernel", "Kernel", "name"], ["arch", "Arch", "name"], ["resident", "Resident", "name"],
      ["occupancy_pct", "Occupancy %", 0], ["limiter", "Limiter", "name"], ["vgpr", "VGPR/regs", 0], ["agpr", "AGPR", 0],
      ["sgpr", "SGPR", 0], ["lds_bytes", "LDS bytes", 0], ["scratch_bytes", "Scratch", 0], ["what_if_text", "What-if", "name"],
      ["error", "Note", "name"]];
    var rows = occ.map(function (o) {
      var r = Object.assign({}, o);
      r.resident = resident(o);
      ["vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes"].forEach(function (k) { if (r[k] < 0) { r[k] = null; } });
      var w = o.what_if;
      r.what_if_text = w ? (w.fewer ? w.fewer + " fewer " + (w.resource || "registers") + " (at most " + w.most + ") \u2192 " : "") +
        w.next_waves_per_simd + " waves/SIMD; waves_per_eu=" + w.waves_per_eu_hint : "";
      return r;
    });
    fillTable("occupancy-table", cols, rows);
  }

  [drawCategories, drawTimeline, drawKernels, drawRoofline, drawOccupancy].forEach(function (f) { f(); });
})();
