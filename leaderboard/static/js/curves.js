// Draw the long-tail charts (SPEC §11) from the JSON blocks the pages print: a submission's popularity curve,
// risk-coverage curve and reliability diagram, and the ranking page's overlay of entries' popularity curves.
// Every chart has a table beside it; without JavaScript the tables are the page.
(function () {
  "use strict";
  if (typeof Chart === "undefined") {
    return;
  }
  var styles = getComputedStyle(document.documentElement);
  function css(name, fallback) {
    return styles.getPropertyValue(name).trim() || fallback;
  }
  var ACCENT = css("--accent", "#1f5fbf");
  var MUTED = css("--fg-muted", "#57606a");
  var PALETTE = [0, 1, 2, 3, 4, 5, 6, 7].map(function (i) {
    return css("--curve-" + i, ["#1f5fbf", "#d9822b", "#1a7f37", "#b42318", "#7048e8", "#0b7285", "#9c36b5", "#5c5f66"][i]);
  });
  Chart.defaults.font.family = css("--sans", "system-ui, sans-serif");
  Chart.defaults.color = MUTED;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;  // fill the chart box the stylesheet sizes
  Chart.defaults.datasets.line.clip = 8;  // points on 0 or 1 are drawn whole, not cut by the axis

  function data(canvas) {
    var block = document.getElementById(canvas.getAttribute("data-source"));
    return block ? JSON.parse(block.textContent) : null;
  }
  function alpha(color, hex) {
    return /^#[0-9a-f]{6}$/i.test(color) ? color + hex : color;
  }
  function fixed(value, digits) {
    return value === null || value === undefined ? "–" : Number(value).toFixed(digits);
  }
  function range(lo, hi) {
    var text = function (v) { return Number.isInteger(v) ? v.toLocaleString("en") : String(+v.toPrecision(4)); };
    return lo === hi ? text(lo) : text(lo) + "–" + text(hi);
  }
  function points(bins, pick) {
    return bins.filter(function (b) { return pick(b) !== null && pick(b) !== undefined; })
      .map(function (b) { return { x: b.x, y: pick(b), bin: b }; });
  }
  // Two datasets drawn as a shaded band between an interval's bounds; neither shows in the legend.
  function band(bins, color, label, shade) {
    var withCi = bins.filter(function (b) { return b.ci; });
    var low = { label: label + " 95% interval (low)", band: true, data: withCi.map(function (b) { return { x: b.x, y: b.ci[0] }; }),
      borderWidth: 0, pointRadius: 0, pointHitRadius: 0, fill: false };
    var high = { label: label + " 95% interval", band: true, data: withCi.map(function (b) { return { x: b.x, y: b.ci[1] }; }),
      borderWidth: 0, pointRadius: 0, pointHitRadius: 0, fill: "-1", backgroundColor: alpha(color, shade || "2e") };
    return [low, high];
  }
  function unit(title) {
    return { min: 0, max: 1, title: { display: true, text: title }, ticks: { maxTicksLimit: 6 } };
  }
  function logAxis() {
    return { type: "logarithmic", title: { display: true, text: "Popularity (log scale)" },
      ticks: { maxTicksLimit: 8, autoSkip: true, callback: function (v) {
        var exp = Math.log10(v);
        return Math.abs(exp - Math.round(exp)) < 1e-9 ? Number(v).toLocaleString("en") : "";
      } } };
  }
  function legend() {
    return { position: "top", align: "start", labels: { boxWidth: 14, filter: function (item, chart) {
      return !chart.datasets[item.datasetIndex].band;
    } } };
  }
  function binTooltip() {
    return { filter: function (item) { return !item.dataset.band; }, callbacks: {
      title: function (items) {
        var bin = items.length && items[0].raw.bin;
        return bin ? (bin.bucket ? "Bucket " + bin.bucket : "Popularity " + range(bin.lo, bin.hi)) : "";
      },
      label: function (item) {
        var bin = item.raw.bin, digits = bin && bin.digits ? bin.digits : 4;
        var text = item.dataset.label + ": " + fixed(item.raw.y, digits);
        if (bin && bin.step && item.dataset.withCi) { text += " ±" + fixed(bin.step, 2); }
        return bin && bin.ci && item.dataset.withCi ? text + " [" + fixed(bin.ci[0], digits) + ", " + fixed(bin.ci[1], digits) + "]" : text;
      } } };
  }

  function popularity(canvas, payload) {
    var bins = payload.popularity;
    var datasets = band(bins, ACCENT, "Accuracy").concat([
      { label: "Accuracy", withCi: true, data: points(bins, function (b) { return b.accuracy; }), borderColor: ACCENT,
        backgroundColor: ACCENT, pointRadius: 3.5, borderWidth: 2.5 },
      { label: "Answer rate", data: points(bins, function (b) { return b.answer_rate; }), borderColor: MUTED,
        backgroundColor: MUTED, borderDash: [5, 4], pointRadius: 2, borderWidth: 1.5 }
    ]);
    var x = bins.length && bins[0].bucket ? bucketAxis(bins) : logAxis();
    return { type: "line", data: { datasets: datasets }, options: { parsing: false,
      scales: { x: x, y: unit("Accuracy") }, plugins: { legend: legend(), tooltip: binTooltip() } } };
  }
  // The bucket curve (no numeric popularity): one point per bucket, least popular first, named on the axis.
  function bucketAxis(bins) {
    var names = {};
    bins.forEach(function (b) { names[b.x] = b.bucket; });
    return { type: "linear", min: -0.5, max: 2.5, title: { display: true, text: "Popularity bucket" },
      afterBuildTicks: function (axis) { axis.ticks = bins.map(function (b) { return { value: b.x }; }); },
      ticks: { callback: function (v) { return names[v] || ""; } } };
  }

  function risk(canvas, payload) {
    var curve = payload.risk.map(function (p) { return { x: p[0], y: p[1] }; });
    var last = curve.length ? curve[curve.length - 1].y : null;
    var top = Math.min(1, Math.max(0.1, Math.ceil((Math.max.apply(null, curve.map(function (p) { return p.y; })) + 0.05) * 10) / 10));
    var datasets = [{ label: "Risk (share wrong)", data: curve, borderColor: ACCENT, backgroundColor: ACCENT,
      pointRadius: curve.length > 40 ? 0 : 2.5, borderWidth: 2.5, fill: { target: "origin", above: alpha(ACCENT, "14") } }];
    if (last !== null) {
      datasets.push({ label: "Answering everything: " + fixed(last, 2), data: [{ x: 0, y: last }, { x: 1, y: last }],
        borderColor: MUTED, borderDash: [5, 4], pointRadius: 0, borderWidth: 1.5 });
    }
    return { type: "line", data: { datasets: datasets }, options: { parsing: false,
      scales: { x: { type: "linear", min: 0, max: 1, title: { display: true, text: "Coverage (share of items kept)" } },
        y: { min: 0, max: top, title: { display: true, text: "Risk" }, ticks: { maxTicksLimit: 6 } } },
      plugins: { legend: legend(), tooltip: { callbacks: { label: function (item) {
        return "coverage " + fixed(item.raw.x, 2) + ", risk " + fixed(item.raw.y, 4);
      } } } } } };
  }

  function reliability(canvas, payload) {
    var bins = payload.reliability.filter(function (b) { return b.accuracy !== null && b.confidence !== null; });
    var largest = Math.max.apply(null, bins.map(function (b) { return b.n || 1; }).concat([1]));
    var datasets = [
      { label: "Accuracy per confidence bin", data: bins.map(function (b) { return { x: b.confidence, y: b.accuracy, bin: b }; }),
        borderColor: ACCENT, backgroundColor: alpha(ACCENT, "cc"), borderWidth: 2,
        pointRadius: bins.map(function (b) { return 3 + 6 * Math.sqrt((b.n || 1) / largest); }) },
      { label: "Perfect calibration", data: [{ x: 0, y: 0 }, { x: 1, y: 1 }], borderColor: MUTED, borderDash: [5, 4],
        pointRadius: 0, borderWidth: 1.5 }
    ];
    return { type: "line", data: { datasets: datasets }, options: { parsing: false,
      scales: { x: { type: "linear", min: 0, max: 1, title: { display: true, text: "Mean stated confidence" } }, y: unit("Accuracy") },
      plugins: { legend: legend(), tooltip: { callbacks: { label: function (item) {
        var b = item.raw.bin;
        return b ? "confidence " + fixed(b.lo, 1) + "–" + fixed(b.hi, 1) + ": accuracy " + fixed(b.accuracy, b.digits || 4) +
          ", mean confidence " + fixed(b.confidence, 2) + (b.n ? " (" + b.n + " answered)" : "") : item.dataset.label;
      } } } } } };
  }

  function overlay(entries) {
    var datasets = [];
    var shade = entries.length > 3 ? "12" : "22";  // many overlapping bands: lighter, so the lines stay readable
    entries.forEach(function (entry, i) {
      var color = PALETTE[i % PALETTE.length];
      datasets = datasets.concat(band(entry.bins, color, entry.name, shade));
      datasets.push({ label: entry.name, withCi: true, data: points(entry.bins, function (b) { return b.accuracy; }),
        borderColor: color, backgroundColor: color, pointRadius: 3, borderWidth: 2.5 });
    });
    var first = entries.length ? entries[0].bins : [];  // the overlay's entries share one kind of axis
    var x = first.length && first[0].bucket ? bucketAxis(first) : logAxis();
    return { type: "line", data: { datasets: datasets }, options: { parsing: false,
      scales: { x: x, y: unit("Accuracy") }, plugins: { legend: legend(), tooltip: binTooltip() } } };
  }

  // Rebuild the overlay's table (the chart's text alternative) for the entries drawn.
  function fillTable(table, entries) {
    if (!table) {
      return;
    }
    var ranges = {};
    entries.forEach(function (e) { e.bins.forEach(function (b) { ranges[b.lo + ":" + b.hi] = [b.lo, b.hi]; }); });
    var keys = Object.keys(ranges).sort(function (a, b) { return ranges[a][0] - ranges[b][0] || ranges[a][1] - ranges[b][1]; });
    var head = table.tHead.rows[0];
    while (head.cells.length > 1) { head.deleteCell(1); }
    entries.forEach(function (e, i) {
      var th = document.createElement("th");
      th.scope = "col";
      th.className = "num";
      var swatch = document.createElement("span");
      swatch.className = "swatch swatch-" + (i % PALETTE.length);
      swatch.setAttribute("aria-hidden", "true");
      th.appendChild(swatch);
      th.appendChild(document.createTextNode(e.name));
      head.appendChild(th);
    });
    var body = table.tBodies[0];
    body.textContent = "";
    keys.forEach(function (key) {
      var row = body.insertRow(), th = document.createElement("th");
      th.scope = "row";
      th.className = "mono";
      th.textContent = range(ranges[key][0], ranges[key][1]);
      row.appendChild(th);
      entries.forEach(function (e) {
        var bin = e.bins.filter(function (b) { return b.lo + ":" + b.hi === key; })[0];
        var cell = row.insertCell();
        cell.className = "num";
        var digits = bin && bin.digits ? bin.digits : 4;
        cell.textContent = bin && bin.accuracy !== null ? fixed(bin.accuracy, digits) : "–";
        if (bin && bin.ci) {
          var ci = document.createElement("span");
          ci.className = "ci";
          ci.textContent = "[" + fixed(bin.ci[0], digits) + ", " + fixed(bin.ci[1], digits) + "]";
          cell.appendChild(ci);
        }
      });
    });
  }

  function board(canvas, payload) {
    var chart = new Chart(canvas, overlay(payload.entries));
    var picks = document.querySelector("[data-curve-picks='" + canvas.getAttribute("data-source") + "']");
    if (!picks) {
      return;
    }
    picks.hidden = false;
    var boxes = Array.prototype.slice.call(picks.querySelectorAll("input[type=checkbox]"));
    function limit() {
      var ticked = boxes.filter(function (b) { return b.checked; }).length;
      boxes.forEach(function (b) { b.disabled = !b.checked && ticked >= PALETTE.length; });
    }
    limit();
    picks.addEventListener("change", function () {
      limit();
      var ids = boxes.filter(function (b) { return b.checked; }).map(function (b) { return b.value; });
      if (!ids.length) {
        return;
      }
      var url = canvas.getAttribute("data-url");
      url += (url.indexOf("?") < 0 ? "?" : "&") + "submissions=" + ids.join(",");
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (fresh) {
          if (!fresh) {
            return;
          }
          var config = overlay(fresh.entries);
          chart.data.datasets = config.data.datasets;
          chart.update();
          fillTable(document.getElementById(canvas.getAttribute("data-table")), fresh.entries);
        });
    });
  }

  var DRAW = { popularity: popularity, risk: risk, reliability: reliability };
  document.querySelectorAll("canvas[data-chart]").forEach(function (canvas) {
    var payload = data(canvas), kind = canvas.getAttribute("data-chart");
    if (!payload) {
      return;
    }
    if (kind === "board") {
      board(canvas, payload);
    } else if (DRAW[kind]) {
      new Chart(canvas, DRAW[kind](canvas, payload));
    }
  });
})();
