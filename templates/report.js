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
  var IDLE = { launch_bound: "#c7c7c7", sync: "#a0a0a0", h2d_copy: "#7f7f7f", host_other: "#dddddd",
    other: "#b0b0b0", unattributed: "#e6e6e6" };
  var EXTRA = ["#8c564b", "#9467bd", "#2ca02c", "#d62728", "#ff7f0e", "#1f77b4", "#e377c2", "#7f7f7f"];
  function color(name, i) { return PALETTE[name] || EXTRA[(i || 0) % EXTRA.length]; }
  function fmtUs(us) {
    if (us === null || us === undefined) { return "n/a"; }
    if (Math.abs(us) >= 1e6) { return (us / 1e6).toFixed(3) + " s"; }
    if (Math.abs(us) >= 1e3) { return (us / 1e3).toFixed(2) + " ms"; }
    return us.toFixed(1) + " µs";
  }
  // Numbers with thousands separators (a total of 142,976,988.0 µs reads; 142976988.0 does not).
  function num(v, digits) {
    if (v === null || v === undefined) { return ""; }
    return Number(v).toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
  }
  function empty(id, message) {
    var el = document.getElementById(id);
    el.className = "note";
    el.style.height = "";
    setCodeText(el, message);
  }
  // Text with `backtick` spans shown as <code>; built from text nodes, never parsed as HTML.
  function setCodeText(el, message) {
    el.textContent = "";
    String(message).split("`").forEach(function (part, i) {
      if (i % 2 === 1) { var c = document.createElement("code"); c.textContent = part; el.appendChild(c); }
      else { el.appendChild(document.createTextNode(part)); }
    });
  }
  // Plotly text takes a little HTML (<br>): trace strings go in with < > & escaped.
  function esc(v) { return String(v).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function shortName(name, n) { name = String(name); return name.length > n ? name.slice(0, n - 1) + "\u2026" : name; }

  function drawCategories() {
    var order = D.category_order || Object.keys(D.categories_us || {});
    var idle = D.idle_breakdown_us || {};
    var names = [], values = [], colors = [];
    order.forEach(function (c, i) { names.push(c); values.push(D.categories_us[c]); colors.push(color(c, i)); });
    Object.keys(idle).sort(function (a, b) { return idle[b] - idle[a] || (a < b ? -1 : 1); }).forEach(function (c) {
      if (idle[c] > 0) { names.push("idle: " + c); values.push(idle[c]); colors.push(IDLE[c] || "#bbbbbb"); }
    });
    if (!names.length) { empty("plot-categories", "No per-category time in this analysis."); return; }
    // No window (per-kernel totals only): shares are of the summed kernel time, never of a made-up window.
    var w = D.window_us || values.reduce(function (t, v) { return t + v; }, 0) || 1;
    var of = D.window_us ? " of the window" : " of summed kernel time";
    var meaning = D.idle_causes || {};
    Plotly.newPlot("plot-categories", [{
      type: "bar", orientation: "h", y: names, x: values.map(function (v) { return v / 1e3; }),
      marker: { color: colors, line: { width: 0.5, color: "#777" } },
      text: values.map(function (v) { return (100 * v / w).toFixed(1) + "%"; }),
      customdata: names.map(function (n) { var c = n.slice(6); return n.indexOf("idle: ") === 0 && meaning[c] ? "<br>" + meaning[c] : ""; }),
      textposition: "outside", textangle: 0, cliponaxis: false,
      hovertemplate: "%{y}: %{x:.3f} ms (%{text}" + of + ")%{customdata}<extra></extra>"
    }], {
      margin: { l: 170, r: 60, t: 30, b: 40 }, xaxis: { title: { text: D.window_us ? "ms in the window" : "ms of kernel time (summed; no timeline)" } },
      yaxis: { autorange: "reversed" }
    }, CONFIG);
    var L = D.launch || {}, O = D.overlap || {};
    var facts = [];
    if (L.launch_call_mean_us !== undefined) {
      facts.push("launch-bound idle " + fmtUs(L.launch_overhead_us || 0));
      facts.push("launch call " + fmtUs(L.launch_call_mean_us) + " on average");
    } else if (L.kernels) {
      facts.push("launch overhead unknown (the trace records no host-side launch calls)");
    }
    if (L.launch_to_start_mean_us !== undefined) {
      facts.push("launch to start " + fmtUs(L.launch_to_start_mean_us) + " on average (long when the host runs ahead of the GPU)");
    }
    if (L.short_kernel_share !== undefined) { facts.push((100 * L.short_kernel_share).toFixed(0) + "% of kernels shorter than a launch call"); }
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
        ["slowest", "", "text"]], rows);
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
    var multiRank = lanes.some(function (l) { return l.rank !== lanes[0].rank; });
    var n = lanes.length, gap = 0.02, h = (1 - gap * (n - 1)) / n, seen = {};
    var cats = D.category_order || [];
    lanes.forEach(function (lane, i) {
      var axis = i === 0 ? "" : String(i + 1);
      var top = 1 - i * (h + gap);
      layout["yaxis" + axis] = { domain: [Math.max(0, top - h), top], range: [0, 1], tickvals: [0, 1], tickformat: ".0%",
        showticklabels: n <= 8,
        title: { text: (multiRank ? "rank " + lane.rank + " · " : "") + "GPU " + lane.device + " · stream " + lane.stream, font: { size: 10 } } };
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

  // Columns: [key, header, format, tooltip]. Formats: "name" (a long name, clipped to two lines with the
  // full name in its tooltip; click to expand), "text" (short text, one line), "occ", or the digits of a number.
  var KCOLS = [["name", "Kernel", "name"], ["category", "Category", "text"], ["calls", "Calls", 0],
    ["total_us", "Total µs", 1], ["mean_us", "Mean µs", 2],
    ["share", "Share %", 1, "share of GPU busy time (kernels on concurrent streams can add up to more than 100%)"],
    ["tflops", "TFLOP/s", 1], ["gbps", "GB/s", 0],
    ["occupancy", "Occupancy", "occ", "occupancy of the kernel's dispatches: % of the arch maximum, resident waves per SIMD (AMD) or warps per SM (NVIDIA), and the limiting resource"],
    ["op", "Op", "text"], ["module", "Module", "name"]];

  function isNum(v) { return typeof v === "number" && isFinite(v); }
  function trimNum(v) { return isNum(v) ? String(Math.round(v * 100) / 100) : ""; }
  function isNvidia(o) { return isNum(o.warps_per_sm) || String(o.arch || "").indexOf("sm_") === 0; }

  // The resident unit of each vendor: waves per SIMD (AMD), warps and blocks per SM (NVIDIA).
  function resident(o) {
    if (!o) { return ""; }
    if (isNum(o.warps_per_sm)) { return trimNum(o.warps_per_sm) + " warps/SM" + (isNum(o.blocks_per_sm) ? ", " + trimNum(o.blocks_per_sm) + " blocks/SM" : ""); }
    if (isNum(o.waves_per_simd)) { return trimNum(o.waves_per_simd) + " waves/SIMD"; }
    return "";
  }

  // The limiting resource; resources that tie with it are named too ("registers = shared_memory").
  function limiterText(o) {
    if (!o || !o.limiter) { return ""; }
    if (o.limiter === "none") { return isNum(o.occupancy_pct) && o.occupancy_pct >= 100 ? "none (at the maximum)" : "none"; }
    var lim = o.limits || {}, own = lim[o.limiter];
    if (!isNum(own)) { return String(o.limiter); }
    var ties = Object.keys(lim).sort().filter(function (k) { return k !== o.limiter && lim[k] === own; });
    return [o.limiter].concat(ties).join(" = ");
  }

  // Compact, for the kernel table: "19% · 12 warps/SM (registers = shared_memory)", "50% · 4 waves/SIMD (vgpr)".
  function occText(o) {
    if (!o || !isNum(o.occupancy_pct)) { return ""; }
    var r = isNum(o.warps_per_sm) ? trimNum(o.warps_per_sm) + " warps/SM" : resident(o);
    var l = o.limiter && o.limiter !== "none" ? limiterText(o) : "";
    return o.occupancy_pct.toFixed(0) + "%" + (r ? " · " + r : "") + (l ? " (" + l + ")" : "");
  }

  function cell(row, col) {
    var v = row[col[0]];
    if (col[2] === "occ") { return occText(v); }
    if (col[0] === "share") { return isNum(v) ? (100 * v).toFixed(1) : ""; }
    if (col[2] === "trim") { return trimNum(v); }
    if (col[0] === "name" && row.display) { return String(row.display); }  // demangled, for names recorded mangled
    if (col[2] === "name" || col[2] === "text" || col[2] === "wrap") { return v === null || v === undefined ? "" : String(v); }
    return isNum(v) ? num(v, col[2]) : "";
  }

  function sortKey(row, col) {
    var v = row[col[0]];
    if (col[2] === "occ") { return v && isNum(v.occupancy_pct) ? v.occupancy_pct : null; }
    return v === "" ? null : v;
  }

  // A sortable table; columns with no value in any row are left out.
  function fillTable(tableId, allCols, rows) {
    var table = document.getElementById(tableId);
    var cols = allCols.filter(function (c) { return rows.some(function (r) { return cell(r, c) !== ""; }); });
    var head = document.createElement("tr");
    var state = { key: null, asc: false };
    cols.forEach(function (col) {
      var th = document.createElement("th");
      th.textContent = col[1];
      if (col[3]) { th.title = col[3]; }
      if (col[2] === "name" || col[2] === "text") { th.className = "name"; }
      th.addEventListener("click", function () {
        state.asc = state.key === col[0] ? !state.asc : col[2] === "name" || col[2] === "text";
        state.key = col[0];
        rows.sort(function (a, b) {
          var x = sortKey(a, col), y = sortKey(b, col);
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
        tr.dataset.search = (cols.map(function (c) { return cell(row, c); }).join(" ") +
                             (row.display ? " " + row.name : "")).toLowerCase();  // the recorded name matches too
        cols.forEach(function (col) {
          var td = document.createElement("td"), text = cell(row, col);
          if (col[2] === "name") {
            td.className = "name";
            var div = document.createElement("div");
            div.className = "clip";
            div.textContent = text;
            div.title = col[0] === "name" && row.display ? text + "\n(recorded as " + row.name + ")" : text;
            td.appendChild(div);
          } else {
            td.textContent = text;
            if (col[2] === "text") { td.className = "name text"; }
            if (col[2] === "wrap") { td.className = "name wrap"; }
          }
          tr.appendChild(td);
        });
        tb.appendChild(tr);
      });
      filterRows(table);
    }
    body();
    return cols;
  }

  // Keep the search filter across re-sorts: rows are rebuilt, the query stays on the table.
  function filterRows(table) {
    var q = (table.dataset.query || "").toLowerCase();
    Array.prototype.forEach.call(table.tBodies[0].rows, function (tr) {
      tr.style.display = tr.dataset.search.indexOf(q) >= 0 ? "" : "none";
    });
  }

  // Clipped names open in place on click (and close again); the tooltip has the full name too.
  document.addEventListener("click", function (ev) {
    var el = ev.target;
    if (el && el.classList && el.classList.contains("clip")) { el.classList.toggle("open"); }
  });

  // The occupancy entry of each kernel, by name (the first, largest one), with its vendor's units.
  function occupancyByName() {
    var out = {};
    (D.occupancy || []).forEach(function (o) {
      if (o.kernel && isNum(o.occupancy_pct) && !out[o.kernel]) { out[o.kernel] = o; }
    });
    return out;
  }

  function drawKernels() {
    var occ = occupancyByName();
    var rows = (D.kernels || []).map(function (k) {
      var r = Object.assign({}, k);
      r.occupancy = occ[k.name] || (k.occupancy && isNum(k.occupancy.occupancy_pct) ? k.occupancy : null);
      return r;
    });
    if (!rows.length) { empty("kernel-table", "No kernels in this analysis."); return; }
    fillTable("kernel-table", KCOLS, rows);
    document.getElementById("kernel-search").addEventListener("input", function (ev) {
      var table = document.getElementById("kernel-table");
      table.dataset.query = ev.target.value;
      filterRows(table);
    });
  }

  // "[8192, 8192] bf16 × [8192, 8192] bf16": the tensor inputs only (scalars and None have no shape).
  function tensorArgs(o) {
    var shapes = o.shapes || [], dtypes = o.dtypes || [], out = [];
    shapes.forEach(function (sh, i) {
      if (Array.isArray(sh) && sh.length) { out.push("[" + sh.join(", ") + "]" + (dtypes[i] ? " " + esc(String(dtypes[i]).replace(/^c10::/, "")) : "")); }
    });
    return out.length ? "<br>" + out.slice(0, 6).join(" × ") + (out.length > 6 ? " …" : "") : "";
  }

  function drawRoofline() {
    var ops = (D.ops || []).filter(function (o) { return o.intensity > 0 && o.tflops > 0; });
    // A log-log plot cannot place an op with no FLOPs (copies, fills, gathers): say what is left out.
    var out = (D.ops || []).filter(function (o) { return !(o.intensity > 0 && o.tflops > 0); });
    if (out.length) {
      var outUs = out.reduce(function (t, o) { return t + (o.time_us || 0); }, 0);
      document.getElementById("roofline-left-out").textContent = out.length + " op" + (out.length > 1 ? "s" : "") +
        " with no FLOPs or no byte count (copies, fills, indexing, ops the model does not cover) are not drawn: " +
        fmtUs(outUs) + " in all.";
    }
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
          return esc(o.op) + tensorArgs(o) +
            "<br>" + o.calls + " calls, " + fmtUs(o.time_us) + "<br>" + num(o.tflops, 2) + " TFLOP/s, " + num(o.gbps, 0) +
            " GB/s" + (isNum(o.efficiency) ? "<br>" + (100 * o.efficiency).toFixed(0) + "% of the " + (o.bound === "memory" ? "memory-bandwidth" : esc(o.peak || "")) + " roof" : "") +
            (o.bound ? ", " + o.bound + "-bound" : "");
        }), hovertemplate: "%{text}<extra></extra>" });
    });
    var bw = C.memory_bw_gbps, peaks = C.peaks_tflops || {};
    // One line per distinct rate: fp32 and fp32_matrix at the same TFLOP/s are one roof, named once.
    var byRate = {};
    Object.keys(peaks).sort().forEach(function (k) { (byRate[peaks[k]] = byRate[peaks[k]] || []).push(k); });
    Object.keys(byRate).map(Number).sort(function (a, b) { return b - a; }).forEach(function (p, i) {
      var knee = bw ? p * 1e3 / bw : xmin;
      traces.push({ type: "scatter", mode: "lines", name: byRate[p].join(" / ") + " peak " + p + " TFLOP/s",
        x: [Math.max(knee, xmin), Math.max(xmax, knee * 2)], y: [p, p],
        line: { dash: "dash", width: 1.5, color: EXTRA[i % EXTRA.length] }, hoverinfo: "name" });
    });
    if (bw) {
      var top = Math.max.apply(null, Object.keys(peaks).map(function (k) { return peaks[k]; }).concat([1]));
      traces.push({ type: "scatter", mode: "lines", name: "memory " + bw + " GB/s", x: [xmin, top * 1e3 / bw],
        y: [bw * xmin / 1e3, top], line: { width: 2, color: "#222" }, hoverinfo: "name" });
    }
    Plotly.newPlot("plot-roofline", traces, {
      margin: { l: 70, r: 20, t: 10, b: 50 },
      legend: { x: 1.01, y: 0.92 },
      xaxis: { type: "log", exponentformat: "power", title: { text: "arithmetic intensity (FLOP/byte)" } },
      yaxis: { type: "log", exponentformat: "power", title: { text: "TFLOP/s" } }
    }, CONFIG);
  }


  function drawOccupancy() {
    var occ = D.occupancy || [];
    var notes = document.getElementById("occupancy-notes");
    if (!occ.length) {
      empty("plot-occupancy", "No kernel resources were recorded for this run: run `rocanalyze occupancy` on the kernels' .amdgcn/.hsaco or a Triton cache, or `rocanalyze profile`, which captures the Triton kernels that ran.");
      document.getElementById("occupancy-block").hidden = true;
      return;
    }
    var nvidia = occ.filter(isNvidia).length > occ.length / 2;
    var known = occ.filter(function (o) { return isNum(o.occupancy_pct); });
    // Entries without an occupancy carry the reason: one note per distinct reason, not rows of blanks.
    var reasons = {}, order = [];
    occ.forEach(function (o) {
      if (isNum(o.occupancy_pct)) { return; }
      var why = o.error ? String(o.error).replace(/^\w*Error: /, "") : "no occupancy model for these resources";
      if (!reasons[why]) { reasons[why] = 0; order.push(why); }
      reasons[why] += 1;
    });
    order.forEach(function (why) {
      var p = document.createElement("p");
      p.className = "warn";
      // The occupancy engine's advice names its own flag; here the GPU comes from --gpu.
      var hint = why.indexOf("--arch") >= 0 ? " (with `rocanalyze analyze` or `rocanalyze report`, name the GPU: `--gpu NAME`)" : "";
      setCodeText(p, "Occupancy not computed for " + reasons[why] + " of " + occ.length + " kernels: " + why + hint +
        (known.length ? "" : ". Their recorded resources are listed below."));
      notes.appendChild(p);
    });
    var unit = nvidia ? "warps/SM" : "waves/SIMD";
    if (known.length) {
      var height = Math.max(220, 60 + 22 * known.length);
      document.getElementById("plot-occupancy").style.height = height + "px";
      var label = function (o, i) { return (i + 1) + ". " + shortName(o.kernel || "(unnamed kernel)", 48); };
      Plotly.newPlot("plot-occupancy", [{ type: "bar", orientation: "h", y: known.map(label), x: known.map(function (o) { return o.occupancy_pct; }),
        text: known.map(function (o) { var r = resident(o), l = limiterText(o); return o.occupancy_pct.toFixed(0) + "%" + (r ? " · " + r : "") + (l ? " · " + l : ""); }),
        customdata: known.map(function (o) { return shortName(o.kernel || "(unnamed kernel)", 120); }),
        textposition: "auto", insidetextanchor: "end", marker: { color: "#b5122b" },
        hovertemplate: "%{customdata}<br>%{text}<extra></extra>" }],
        { margin: { l: 330, r: 20, t: 10, b: 40 }, height: height,
          xaxis: { title: { text: "occupancy (% of the arch maximum; resident " + unit + " in the label)" }, range: [0, 100] },
          yaxis: { autorange: "reversed" } }, CONFIG);
    } else {
      document.getElementById("plot-occupancy").hidden = true;
    }
    var cols = [["kernel", "Kernel", "name"], ["calls", "Calls", 0], ["total_us", "Total µs", 1], ["arch", "Arch", "text"],
      ["occupancy_pct", "Occupancy %", 0, "% of the most " + unit + " the arch allows"]];
    if (nvidia) {
      cols = cols.concat([["warps_per_sm", "Warps/SM", 0], ["blocks_per_sm", "Blocks/SM", 0],
        ["limiter_text", "Limiter", "text", "the resource that caps resident blocks (ties named with =)"],
        ["limits_text", "Blocks/SM allowed by", "wrap", "resident blocks per SM that each resource alone would allow; the smallest is the limiter"],
        ["vgpr", "Regs/thread", 0], ["lds_bytes", "Shared mem B", 0, "shared memory per block, bytes"], ["workgroup_size", "Threads/block", 0]]);
    } else {
      cols = cols.concat([["waves_per_simd", "Waves/SIMD", "trim"], ["limiter_text", "Limiter", "text", "the resource that caps resident waves (ties named with =)"],
        ["vgpr", "VGPR", 0], ["agpr", "AGPR", 0], ["sgpr", "SGPR", 0], ["lds_bytes", "LDS bytes", 0],
        ["scratch_bytes", "Scratch bytes", 0], ["workgroup_size", "Workgroup size", 0], ["what_if_text", "What-if", "wrap", "the register or LDS cut that reaches the next occupancy step, and the waves_per_eu hint that asks the compiler for it"]]);
    }
    var rows = occ.map(function (o) {
      var r = Object.assign({}, o);
      r.kernel = o.kernel || "(unnamed kernel)";
      r.limiter_text = limiterText(o);
      // smallest first: the limiter leads
      r.limits_text = o.limits ? Object.keys(o.limits).sort(function (a, b) { return o.limits[a] - o.limits[b] || (a < b ? -1 : 1); })
        .map(function (k) { return k + " " + o.limits[k]; }).join(", ") : "";
      ["vgpr", "agpr", "sgpr", "lds_bytes", "scratch_bytes"].forEach(function (k) { if (!isNum(r[k]) || r[k] < 0) { r[k] = null; } });
      if (nvidia) { r.agpr = null; r.sgpr = null; }
      var w = o.what_if;
      r.what_if_text = w ? (w.fewer ? w.fewer + " fewer " + (w.resource || "registers") + " (at most " + w.most + ") \u2192 " : "") +
        w.next_waves_per_simd + " waves/SIMD; waves_per_eu=" + w.waves_per_eu_hint : "";
      return r;
    });
    fillTable("occupancy-table", cols, rows);
  }

  [drawCategories, drawTimeline, drawKernels, drawRoofline, drawOccupancy].forEach(function (f) { f(); });
})();
