/* lara dashboard: filters by surface and retrieval role, recomputes every
   rate and interval from the marts' numerators and denominators, and draws
   the cards, tables and charts as inline SVG. No network, no library.

   Data: the JSON block #lara-data (written by lara.report.dashboard). Each
   table holds mart rows at every grouping level the page needs; a filter
   picks the mart's own roll-up row (surface or role 'all'), never a sum of
   rows of different levels. Every value from the logs (surface, role,
   definition and stage names) is escaped before it reaches the page. */
(function () {
  "use strict";

  const D = JSON.parse(document.getElementById("lara-data").textContent);
  const Z = 1.96;
  const Z2 = Z * Z;
  const state = { surface: "all", role: "all" };

  // ------------------------------------------------------------ utilities
  function esc(value) {
    return String(value)
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
      .replace(/'/g, "&#39;");
  }

  const T = {};
  for (const name of Object.keys(D.tables)) {
    const cols = D.tables[name];
    const keys = Object.keys(cols);
    const n = keys.length ? cols[keys[0]].length : 0;
    const out = [];
    for (let i = 0; i < n; i++) {
      const row = {};
      for (const key of keys) row[key] = cols[key][i];
      out.push(row);
    }
    T[name] = out;
  }

  function find(name, match) {
    return (T[name] || []).filter((r) =>
      Object.keys(match).every((k) => r[k] === match[k])
    );
  }
  function one(name, match) {
    return find(name, match)[0] || null;
  }
  function has(name) {
    return (T[name] || []).length > 0;
  }

  // Rates and intervals: the same formulas as macros/metrics/wilson.sql and
  // lara_mean_ci_bound (macros/metrics/rates.sql).
  function ratio(numerator, denominator) {
    return denominator > 0 ? numerator / denominator : null;
  }
  function wilson(numerator, denominator) {
    if (!(denominator > 0)) return [null, null];
    const n = denominator;
    const p = numerator / n;
    const centre = p + Z2 / (2.0 * n);
    const half = Z * Math.sqrt((p * (1.0 - p)) / n + Z2 / (4.0 * n * n));
    const low = numerator === 0 ? 0.0 : Math.max(0.0, (centre - half) / (1.0 + Z2 / n));
    const high =
      numerator === denominator ? 1.0 : Math.min(1.0, (centre + half) / (1.0 + Z2 / n));
    return [low, high];
  }
  function meanInterval(sum, sumOfSquares, count) {
    if (!(count > 1)) return [null, null];
    const n = count;
    const spread =
      Z * Math.sqrt(Math.max(0.0, (sumOfSquares - (sum * sum) / n) / (n - 1.0)) / n);
    return [sum / n - spread, sum / n + spread];
  }
  function prop(row, numerator, denominator) {
    if (!row) return { v: null, lo: null, hi: null, n: null, d: null };
    const n = row[numerator];
    const d = row[denominator];
    const [lo, hi] = wilson(n, d);
    return { v: ratio(n, d), lo: lo, hi: hi, n: n, d: d };
  }
  function rated(row, name) {
    return prop(row, name + "_numerator", name + "_denominator");
  }
  function mean(row, sum, sumOfSquares, count) {
    if (!row) return { v: null, lo: null, hi: null, n: null, d: null };
    const [lo, hi] = meanInterval(row[sum], row[sumOfSquares], row[count]);
    return { v: ratio(row[sum], row[count]), lo: lo, hi: hi, n: row[sum], d: row[count] };
  }

  function isMissing(v) {
    return v === null || v === undefined || Number.isNaN(v);
  }
  function pct(v, digits) {
    return isMissing(v) ? "n/a" : (v * 100).toFixed(digits === undefined ? 1 : digits) + "%";
  }
  function count(v) {
    return isMissing(v) ? "n/a" : Math.round(v).toLocaleString("en-US");
  }
  function fmt(v, kind) {
    if (isMissing(v)) return "n/a";
    if (kind === "score") return v.toFixed(3);
    if (kind === "count") return count(v);
    if (kind === "ms") return count(v) + " ms";
    if (kind === "tokens") return count(v);
    return pct(v);
  }
  function roleLabel(role) {
    return D.labels.roles[role] || role;
  }
  function surfaceLabel(surface) {
    return D.labels.surfaces[surface] || surface;
  }

  // Inputs a metric needs; when one was never logged the metric says so.
  const MISSING = {
    actions: "no actions logged",
    outcomes: "no outcome events logged",
    relevance_labels: "no relevance labels logged",
    prompt_labels: "no routing labels logged",
    goal_labels: "no goal labels logged",
    stage_spans: "no stage spans logged",
    replay: "no replay experiments logged",
  };
  function absentInput(needs) {
    for (const need of needs || []) {
      if (D.logged[need] === false) return MISSING[need];
    }
    return null;
  }
  function absent(message, key, filter) {
    return (
      '<span class="absent" data-metric="' + esc(key) + '" data-filter="' + esc(filter) +
      '" data-value="" data-absent="' + esc(message) + '">' + esc(message) + "</span>"
    );
  }

  function filterText(dims) {
    return dims.map((d) => d + "=" + (d === "retrieval_role" ? state.role : state.surface)).join(";");
  }

  /* A number with its provenance: data-metric (mart.column), data-filter,
     data-value (exact), data-ci-low / -high (recomputed interval). */
  function metric(m, key, filter, opts) {
    const o = opts || {};
    const missing = absentInput(o.needs);
    if (missing) return absent(missing, key, filter);
    let html =
      '<span class="' + (o.css || "num") + '" data-metric="' + esc(key) + '" data-filter="' +
      esc(filter) + '" data-value="' + (isMissing(m.v) ? "" : String(m.v)) + '"';
    if (!isMissing(m.lo)) html += ' data-ci-low="' + String(m.lo) + '"';
    if (!isMissing(m.hi)) html += ' data-ci-high="' + String(m.hi) + '"';
    html += ">" + esc(fmt(m.v, o.kind)) + "</span>";
    if (o.nd !== false && !isMissing(m.d)) {
      const n = o.kind === "score" ? Number(m.n).toFixed(1) : count(m.n);
      html += '<span class="nd">' + esc(n) + " / " + esc(count(m.d)) + "</span>";
    }
    if (o.note) html += '<span class="nd">' + esc(o.note) + "</span>";
    return html;
  }

  function table(headers, rows, css) {
    return (
      '<div class="table-wrap"><table' + (css ? ' class="' + css + '"' : "") + "><thead><tr>" +
      headers.map((h) => "<th>" + h + "</th>").join("") + "</tr></thead><tbody>" +
      rows.join("") + "</tbody></table></div>"
    );
  }

  function notSplit(dims) {
    const parts = [];
    if (dims.indexOf("role") >= 0 && state.role !== "all") {
      parts.push("retrieval role");
    }
    if (dims.indexOf("surface") >= 0 && state.surface !== "all") {
      parts.push("surface");
    }
    if (!parts.length) return "";
    return (
      '<p class="filter-note">Not split by ' + parts.join(" or ") +
      " in the marts: showing every " + parts.join(" and every ") + ".</p>"
    );
  }

  // ------------------------------------------------------------ charts
  function svg(width, height, title, desc, body, css) {
    return (
      '<svg class="' + (css || "chart") + '" viewBox="0 0 ' + width + " " + height +
      '" role="img" preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">' +
      "<title>" + esc(title) + "</title><desc>" + esc(desc) + "</desc>" + body + "</svg>"
    );
  }
  function tickDigits(top) {
    return Math.abs(top * 25 - Math.round(top * 25)) < 1e-9 ? 0 : 1;
  }
  function niceMax(values) {
    const top = Math.max(0, ...values.filter((v) => !isMissing(v)));
    if (top >= 0.5) return 1.0;
    for (const c of [0.02, 0.05, 0.1, 0.2, 0.25, 0.4, 0.5]) if (top <= c && c >= 0.1) return c;
    return 1.0;
  }

  /* Daily trend: one line per series with its 95% interval as a band. */
  function trend(spec) {
    const width = 360, height = 190, x0 = 40, x1 = width - 12, top = 30, bottom = height - 26;
    const days = spec.days;
    const all = [];
    for (const s of spec.series) for (const p of s.points) if (p) all.push(p.hi === null ? p.v : p.hi);
    const ymax = spec.kind === "score" ? 1.0 : niceMax(all);
    const sx = (i) => (days.length > 1 ? x0 + ((x1 - x0) * i) / (days.length - 1) : (x0 + x1) / 2);
    const sy = (v) => bottom - ((bottom - top) * Math.min(v, ymax)) / ymax;
    const parts = [];
    for (let step = 0; step <= 4; step++) {
      const v = (ymax * step) / 4;
      parts.push(
        '<line class="grid" x1="' + x0 + '" y1="' + sy(v).toFixed(1) + '" x2="' + x1 + '" y2="' +
        sy(v).toFixed(1) + '"/><text class="tick" x="' + (x0 - 5) + '" y="' +
        (sy(v) + 4).toFixed(1) + '" text-anchor="end">' +
        esc(spec.kind === "score" ? v.toFixed(2) : pct(v, tickDigits(ymax))) + "</text>"
      );
    }
    const labelled = days.length <= 8 ? days.map((_, i) => i) : [0, Math.floor((days.length - 1) / 2), days.length - 1];
    for (const i of labelled) {
      parts.push(
        '<text class="tick" x="' + sx(i).toFixed(1) + '" y="' + (bottom + 15) +
        '" text-anchor="middle">' + esc(String(days[i]).slice(5)) + "</text>"
      );
    }
    let legendX = 0;
    spec.series.forEach((s) => {
      parts.push(
        '<rect class="bar ' + s.css + '" x="' + legendX + '" y="6" width="10" height="10" rx="2"/>' +
        '<text class="legend" x="' + (legendX + 14) + '" y="15">' + esc(s.label) + "</text>"
      );
      legendX += 30 + 7.2 * s.label.length;
    });
    for (const s of spec.series) {
      const idx = s.points.map((p, i) => (p && !isMissing(p.v) ? i : -1)).filter((i) => i >= 0);
      const banded = idx.filter((i) => !isMissing(s.points[i].lo) && !isMissing(s.points[i].hi));
      if (banded.length > 1) {
        const upper = banded.map((i) => sx(i).toFixed(1) + "," + sy(s.points[i].hi).toFixed(1));
        const lower = banded.slice().reverse().map((i) => sx(i).toFixed(1) + "," + sy(s.points[i].lo).toFixed(1));
        parts.push('<polygon class="band ' + s.css + '" points="' + upper.concat(lower).join(" ") + '"/>');
      }
      if (idx.length > 1) {
        parts.push(
          '<polyline class="line ' + s.css + '" points="' +
          idx.map((i) => sx(i).toFixed(1) + "," + sy(s.points[i].v).toFixed(1)).join(" ") + '"/>'
        );
      }
      for (const i of idx) {
        const p = s.points[i];
        let tip = days[i] + ", " + s.label + ": " + fmt(p.v, spec.kind);
        if (!isMissing(p.d) && spec.kind !== "score") tip += " = " + count(p.n) + " / " + count(p.d);
        if (!isMissing(p.lo)) tip += " (95% CI " + fmt(p.lo, spec.kind) + " to " + fmt(p.hi, spec.kind) + ")";
        parts.push(
          '<circle class="dot ' + s.css + '" cx="' + sx(i).toFixed(1) + '" cy="' + sy(p.v).toFixed(1) +
          '" r="3" data-metric="' + esc(s.key) + '" data-filter="' + esc(spec.filter + ";day=" + days[i]) +
          '" data-value="' + String(p.v) + '"><title>' + esc(tip) + "</title></circle>"
        );
      }
    }
    return svg(width, height, spec.title, spec.desc, parts.join(""));
  }

  /* Horizontal grouped bars with 95% interval whiskers. */
  function groupedBars(categories, series, values, title, desc, labelWidth) {
    const barH = 13, gap = 3, groupGap = 14, width = 560, x0 = labelWidth || 130, x1 = width - 52;
    const groupH = series.length * (barH + gap) - gap;
    const legendH = 26;
    const height = legendH + categories.length * (groupH + groupGap) + 24;
    const all = Object.values(values).map((b) => (isMissing(b.hi) ? b.v : b.hi));
    const top = niceMax(all);
    const bottom = height - 22;
    const parts = [];
    let lx = 0;
    for (const s of series) {
      parts.push(
        '<rect class="bar ' + s.css + '" x="' + lx + '" y="5" width="10" height="10" rx="2"/>' +
        '<text class="legend" x="' + (lx + 14) + '" y="14">' + esc(s.label) + "</text>"
      );
      lx += 30 + 7.2 * s.label.length;
    }
    for (let step = 0; step <= 4; step++) {
      const x = x0 + ((x1 - x0) * step) / 4;
      parts.push(
        '<line class="grid" x1="' + x.toFixed(1) + '" y1="' + (legendH - 4) + '" x2="' + x.toFixed(1) +
        '" y2="' + bottom + '"/><text class="tick" x="' + x.toFixed(1) + '" y="' + (bottom + 14) +
        '" text-anchor="middle">' + pct((top * step) / 4, tickDigits(top)) + "</text>"
      );
    }
    let y = legendH + 4;
    for (const c of categories) {
      parts.push(
        '<text class="label" x="' + (x0 - 8) + '" y="' + (y + groupH / 2 + 4).toFixed(1) +
        '" text-anchor="end">' + esc(c.label) + "</text>"
      );
      for (const s of series) {
        const b = values[c.key + "|" + s.key];
        if (b && b.absent) {
          parts.push('<text class="value muted" x="' + (x0 + 4) + '" y="' + (y + barH - 2) + '">' + esc(b.absent) + "</text>");
        } else if (b && !isMissing(b.v)) {
          const w = Math.max(0, ((x1 - x0) * Math.min(b.v / top, 1)));
          let tip = c.label + ", " + s.label + ": " + pct(b.v);
          if (!isMissing(b.d)) tip += " = " + count(b.n) + " / " + count(b.d);
          if (!isMissing(b.lo)) tip += " (95% CI " + pct(b.lo) + " to " + pct(b.hi) + ")";
          parts.push(
            '<rect class="bar ' + s.css + '" x="' + x0 + '" y="' + y + '" width="' + w.toFixed(1) +
            '" height="' + barH + '" rx="2"><title>' + esc(tip) + "</title></rect>"
          );
          if (!isMissing(b.lo) && !isMissing(b.hi)) {
            const lo = x0 + (x1 - x0) * Math.min(b.lo / top, 1);
            const hi = x0 + (x1 - x0) * Math.min(b.hi / top, 1);
            const mid = y + barH / 2;
            parts.push(
              '<path class="whisker" d="M' + lo.toFixed(1) + "," + mid + "H" + hi.toFixed(1) + "M" +
              lo.toFixed(1) + "," + (mid - 3) + "V" + (mid + 3) + "M" + hi.toFixed(1) + "," + (mid - 3) +
              "V" + (mid + 3) + '"/>'
            );
          }
          parts.push(
            '<text class="value" x="' + (x0 + w + 6).toFixed(1) + '" y="' + (y + barH - 2) + '">' +
            pct(b.v) + "</text>"
          );
        } else {
          parts.push('<text class="value muted" x="' + (x0 + 4) + '" y="' + (y + barH - 2) + '">n/a</text>');
        }
        y += barH + gap;
      }
      y += groupGap - gap;
    }
    return svg(width, height, title, desc, parts.join(""));
  }

  /* Naive vs corrected per row: two dots joined by a line. */
  function dumbbell(pairs, naiveLabel, fixedLabel, title, desc) {
    const width = 560, rowH = 34, x0 = 170, x1 = width - 40, legendH = 26;
    const height = legendH + pairs.length * rowH + 26;
    const top = niceMax(pairs.flatMap((p) => [p.naive.v, p.fixed.v]));
    const bottom = height - 22;
    const parts = [
      '<rect class="bar naive" x="0" y="5" width="10" height="10" rx="2"/><text class="legend" x="14" y="14">' +
        esc(naiveLabel) + "</text>",
      '<rect class="bar fixed" x="' + (40 + 6.6 * naiveLabel.length) + '" y="5" width="10" height="10" rx="2"/>' +
        '<text class="legend" x="' + (54 + 6.6 * naiveLabel.length) + '" y="14">' + esc(fixedLabel) + "</text>",
    ];
    for (let step = 0; step <= 4; step++) {
      const x = x0 + ((x1 - x0) * step) / 4;
      parts.push(
        '<line class="grid" x1="' + x.toFixed(1) + '" y1="' + (legendH - 4) + '" x2="' + x.toFixed(1) +
        '" y2="' + bottom + '"/><text class="tick" x="' + x.toFixed(1) + '" y="' + (bottom + 14) +
        '" text-anchor="middle">' + pct((top * step) / 4, tickDigits(top)) + "</text>"
      );
    }
    let y = legendH + rowH / 2;
    for (const p of pairs) {
      parts.push('<text class="label" x="' + (x0 - 8) + '" y="' + (y + 4) + '" text-anchor="end">' + esc(p.label) + "</text>");
      const xs = {};
      if (!isMissing(p.naive.v)) xs.naive = x0 + (x1 - x0) * Math.min(p.naive.v / top, 1);
      if (!isMissing(p.fixed.v)) xs.fixed = x0 + (x1 - x0) * Math.min(p.fixed.v / top, 1);
      if (xs.naive !== undefined && xs.fixed !== undefined) {
        parts.push('<line class="connector" x1="' + xs.naive.toFixed(1) + '" y1="' + y + '" x2="' + xs.fixed.toFixed(1) + '" y2="' + y + '"/>');
      }
      for (const [key, m, name] of [["naive", p.naive, naiveLabel], ["fixed", p.fixed, fixedLabel]]) {
        if (xs[key] === undefined) continue;
        const other = xs[key === "naive" ? "fixed" : "naive"];
        const left = other !== undefined && (xs[key] < other || (xs[key] === other && key === "naive"));
        let tx = left ? xs[key] - 9 : xs[key] + 9, ty = y + 4, anchor = left ? "end" : "start";
        if (left && xs[key] - x0 < 42) { tx = xs[key]; ty = y - 9; anchor = "middle"; }
        let tip = p.label + ", " + name + ": " + pct(m.v);
        if (!isMissing(m.d)) tip += " = " + count(m.n) + " / " + count(m.d);
        parts.push(
          '<circle class="dot ' + key + '" cx="' + xs[key].toFixed(1) + '" cy="' + y + '" r="6"><title>' +
          esc(tip) + '</title></circle><text class="value small" x="' + tx.toFixed(1) + '" y="' + ty +
          '" text-anchor="' + anchor + '">' + pct(m.v) + "</text>"
        );
      }
      y += rowH;
    }
    return svg(width, height, title, desc, parts.join(""));
  }

  /* One 100% bar split into parts (null counts are absent parts). */
  function stackedShare(items, title, desc, totalLabel) {
    const width = 560, height = 76;
    const present = items.filter((i) => !isMissing(i.count));
    const total = present.reduce((a, i) => a + i.count, 0);
    const parts = [];
    let x = 0;
    for (const i of present) {
      const share = total ? i.count / total : 0;
      const w = width * share;
      parts.push(
        '<rect class="bar ' + i.css + '" x="' + x.toFixed(1) + '" y="8" width="' + w.toFixed(1) +
        '" height="26"><title>' + esc(i.label + ": " + count(i.count) + " of " + count(total) + " (" + pct(share) + ")") +
        "</title></rect>"
      );
      const text = i.label + " " + pct(share);
      if (w > 7 * text.length + 16) {
        parts.push('<text class="inbar" x="' + (x + 8).toFixed(1) + '" y="26">' + esc(text) + "</text>");
      }
      x += w;
    }
    let lx = 0;
    for (const i of present) {
      const text = i.label + " " + pct(total ? i.count / total : 0);
      parts.push(
        '<rect class="bar ' + i.css + '" x="' + lx.toFixed(1) + '" y="43" width="10" height="10" rx="2"/>' +
        '<text class="legend" x="' + (lx + 14).toFixed(1) + '" y="52">' + esc(text) + "</text>"
      );
      lx += 26 + 6.6 * text.length;
    }
    parts.push('<text class="tick" x="0" y="70">' + esc(totalLabel + ": " + count(total)) + "</text>");
    return svg(width, height, title, desc, parts.join(""));
  }

  // ------------------------------------------------------------ sections
  const RETRIEVAL_FILTER = ["surface", "retrieval_role"];

  function retrievalRow(surface, role, day) {
    return one("retrieval", { day: day === undefined ? null : day, surface: surface, role: role });
  }
  function surfaceRow(name, surface, day) {
    return one(name, { day: day === undefined ? null : day, surface: surface });
  }

  const K = D.k;
  const TIER_METRICS = {
    trigger_rate: { label: "Tier 0 · trigger rate", css: "gpr", key: "agg_tier0_routing.trigger_rate" },
    ndcg: { label: "Tier 1 · NDCG@" + K, css: "acr", key: "agg_tier1_quality.ndcg_at_k_mean", kind: "score", needs: ["relevance_labels"] },
    gpr: { label: "Tier 2 · genuine positive", css: "gpr", key: "agg_tier2_usage.genuine_positive_rate", needs: ["actions"] },
    acr: { label: "Tier 2 · agent consumption", css: "acr", key: "agg_tier2_usage.agent_consumption_rate", needs: ["actions"] },
    orf: { label: "Tier 2 · observable failure", css: "orf", key: "agg_tier2_usage.observable_failure_rate" },
    completion: { label: "Tier 3 · completion", css: "done", key: "agg_tier3_completion.completion_rate", needs: ["outcomes"] },
  };
  function retrievalMetric(name, row) {
    if (name === "ndcg") return mean(row, "ndcg_at_k_sum", "ndcg_at_k_sum_of_squares", "labelled_retrieval_count");
    if (name === "gpr") return prop(row, "genuine_positive_retrieval_count", "in_scope_retrieval_count");
    if (name === "acr") return prop(row, "agent_consumption_retrieval_count", "in_scope_retrieval_count");
    if (name === "acr_confirmed") return prop(row, "confirmed_agent_consumption_retrieval_count", "agent_consumption_retrieval_count");
    if (name === "orf") return prop(row, "observable_failure_retrieval_count", "in_scope_retrieval_count");
    if (name === "uor") return prop(row, "unobserved_retrieval_count", "in_scope_retrieval_count");
    if (name === "completion") return prop(row, "completed_retrieval_count", "in_scope_retrieval_count");
    if (name === "p1") return prop(row, "relevant_at_1_retrieval_count", "labelled_retrieval_count");
    if (name === "empty") return prop(row, "empty_retrieval_count", "in_scope_retrieval_count");
    if (name === "goal") return prop(row, "goal_achieved_prompt_count", "goal_labelled_prompt_count");
    throw new Error("unknown metric " + name);
  }
  const ORF_NOTE = () => (D.logged.actions === false ? "re-searches only: no actions logged" : null);

  function renderKpis() {
    const cards = [];
    function card(label, body, sub, css) {
      cards.push(
        '<div class="kpi ' + css + '"><div class="k-label">' + esc(label) + '</div><div class="k-value">' +
        body + '</div><div class="k-sub">' + sub + "</div></div>"
      );
    }
    const routing = surfaceRow("routing", state.surface);
    if (has("routing")) {
      const m = rated(routing, "trigger_rate");
      let sub = "prompts with a retrieval: " + esc(count(m.n)) + " / " + esc(count(m.d));
      if (state.role !== "all") sub += " · not split by role";
      if (!isMissing(m.v) && m.n === m.d && m.d > 0) {
        sub += ' · <span class="caveat">every logged prompt retrieved: if only prompts that retrieved are logged (trace exports), this rate is not measurable</span>';
      }
      card(TIER_METRICS.trigger_rate.label, metric(m, TIER_METRICS.trigger_rate.key, "surface=" + state.surface, { nd: false }), sub, "accent");
    }
    const row = retrievalRow(state.surface, state.role);
    const filter = filterText(RETRIEVAL_FILTER);
    if (has("retrieval")) {
      for (const name of ["ndcg", "gpr", "acr", "orf", "completion"]) {
        const spec = TIER_METRICS[name];
        const m = retrievalMetric(name, row);
        const sub = name === "ndcg"
          ? "mean over " + esc(count(row ? row.labelled_retrieval_count : null)) + " labelled retrievals"
          : esc(count(m.n)) + " / " + esc(count(m.d)) + " in-scope retrievals";
        card(spec.label, metric(m, spec.key, filter, { kind: spec.kind, nd: false, needs: spec.needs, note: name === "orf" ? ORF_NOTE() : null }), sub, spec.css);
      }
      const masked = prop(row, "masked_retrieval_failure_retrieval_count", "labelled_retrieval_count");
      card("Masked retrieval failure",
        metric(masked, "agg_tier_diagnosis.masked_retrieval_failure_rate", filter, { nd: false, needs: ["relevance_labels", "actions"] }),
        esc(count(masked.n)) + " / " + esc(count(masked.d)) + " labelled: bad results the model covered", "orf");
    }
    return cards.join("");
  }

  function renderTrends() {
    const out = [];
    const filter = filterText(RETRIEVAL_FILTER);
    const retrievalDays = D.days.retrieval;
    const surfaceDays = D.days.activity;
    function chart(spec, needs) {
      const missing = absentInput(needs);
      const body = missing
        ? '<div class="absent-chart">' + absent(missing, spec.series[0].key, spec.filter) + "</div>"
        : trend(spec);
      out.push('<figure class="trend"><figcaption class="trend-title">' + esc(spec.title) + "</figcaption>" + body + "</figure>");
    }
    if (has("routing")) {
      chart({
        title: "Trigger rate", desc: "Prompts with a retrieval / prompts, per day, with 95% Wilson intervals.",
        days: surfaceDays, filter: "surface=" + state.surface, kind: "pct",
        series: [{ key: TIER_METRICS.trigger_rate.key, label: "trigger rate", css: "gpr",
          points: surfaceDays.map((d) => rated(surfaceRow("routing", state.surface, d), "trigger_rate")) }],
      });
    }
    if (has("retrieval")) {
      for (const name of ["ndcg", "gpr", "acr", "orf", "completion"]) {
        const spec = TIER_METRICS[name];
        chart({
          title: spec.label.replace(/^Tier \d · /, "").replace(/^./, (c) => c.toUpperCase()),
          desc: spec.label + " per day with 95% intervals.", days: retrievalDays, filter: filter,
          kind: spec.kind || "pct",
          series: [{ key: spec.key, label: spec.label.replace(/^Tier \d · /, ""), css: spec.css,
            points: retrievalDays.map((d) => {
              const r = retrievalRow(state.surface, state.role, d);
              return r ? retrievalMetric(name, r) : null;
            }) }],
        }, spec.needs);
      }
    }
    const pairs = [
      ["ctr", "CTR: naive vs per displayed retrieval", "agg_ctr", "naive_session_ctr", "naive per session", "retrieval_ctr", "per displayed retrieval", ["actions"]],
      ["rewrites", "Rewrites: naive vs search reformulation", "agg_rewrites", "naive_rewrite_rate", "naive rewrite rate", "search_reformulation_rate", "search reformulation", ["actions"]],
      ["abandonment", "Abandonment: naive vs lineage-corrected", "agg_abandonment", "abandonment_rate_naive", "naive", "abandonment_rate_lineage_corrected", "lineage-corrected", ["outcomes"]],
    ];
    for (const [name, title, mart, naive, naiveLabel, fixed, fixedLabel, needs] of pairs) {
      if (!has(name)) continue;
      chart({
        title: title, desc: title + " per day, with 95% Wilson intervals.", days: surfaceDays,
        filter: "surface=" + state.surface, kind: "pct",
        series: [
          { key: mart + "." + naive, label: naiveLabel, css: "naive",
            points: surfaceDays.map((d) => { const r = surfaceRow(name, state.surface, d); return r ? rated(r, naive) : null; }) },
          { key: mart + "." + fixed, label: fixedLabel, css: "fixed",
            points: surfaceDays.map((d) => { const r = surfaceRow(name, state.surface, d); return r ? rated(r, fixed) : null; }) },
        ],
      }, needs);
    }
    return notSplit(["role"]).replace("in the marts", "in the Tier 0 and behaviour marts") +
      '<div class="trend-grid">' + out.join("") + "</div>";
  }

  function renderTier0() {
    if (!has("routing")) return "";
    const surfaces = state.surface === "all" ? D.surfaces.routing : [state.surface];
    const rows = [];
    for (const s of surfaces.concat(state.surface === "all" ? ["all"] : [])) {
      const r = surfaceRow("routing", s);
      if (!r) continue;
      const where = "surface=" + s;
      const cells = ["<td>" + esc(surfaceLabel(s)) + "</td>"];
      cells.push("<td>" + metric(rated(r, "trigger_rate"), "agg_tier0_routing.trigger_rate", where) + "</td>");
      for (const name of ["misroute_rate", "missed_retrieval_rate", "multi_intent_rate", "intent_coverage_rate"]) {
        cells.push("<td>" + metric(rated(r, name), "agg_tier0_routing." + name, where, { needs: ["prompt_labels"] }) + "</td>");
      }
      cells.push("<td>" + esc(count(r.labelled_prompt_count)) + "</td>");
      rows.push("<tr" + (s === "all" ? ' class="total"' : "") + ">" + cells.join("") + "</tr>");
    }
    return notSplit(["role"]) + table(["Surface", "Trigger rate", "Misroute rate", "Missed-retrieval rate", "Multi-intent rate", "Intent coverage", "Labelled prompts"], rows) +
      renderMissedRetrieval(surfaces.concat(state.surface === "all" ? ["all"] : []));
  }

  // The missed-retrieval estimate three ways (agg_tier0_missed_retrieval):
  // rough (the trigger-rate gap to the reference surface), labelled as drawn,
  // and weighted by the logged prompt-label design.
  function renderMissedRetrieval(surfaces) {
    if (!has("missed")) return "";
    const rows = [];
    for (const s of surfaces) {
      const m = surfaceRow("missed", s);
      if (!m) continue;
      const where = "surface=" + s;
      rows.push("<tr" + (s === "all" ? ' class="total"' : "") + "><td>" + esc(surfaceLabel(s)) + "</td>" +
        "<td>" + metric({ v: m.rough_missed_retrieval_share_estimate },
          "agg_tier0_missed_retrieval.rough_missed_retrieval_share_estimate", where) + "</td>" +
        "<td>" + metric(rated(m, "missed_retrieval_prompt_share"),
          "agg_tier0_missed_retrieval.missed_retrieval_prompt_share", where, { needs: ["prompt_labels"] }) + "</td>" +
        "<td>" + metric({ v: m.weighted_missed_retrieval_prompt_share,
          lo: m.weighted_missed_retrieval_prompt_share_ci_low, hi: m.weighted_missed_retrieval_prompt_share_ci_high },
          "agg_tier0_missed_retrieval.weighted_missed_retrieval_prompt_share", where,
          { needs: ["prompt_labels", "prompt_label_sample_design"] }) + "</td>" +
        "<td>" + esc(count(m.weighted_prompt_count)) + "</td></tr>");
    }
    return "<h4>Missed retrievals per prompt: rough vs labelled vs design-weighted</h4>" +
      table(["Surface", "Rough (trigger-rate gap)", "Labelled, as drawn", "Labelled, weighted", "Weighted prompts"], rows);
  }

  function tierTables(rowsBy, labelOf, where) {
    const t1 = [], t23 = [];
    for (const [key, r, total] of rowsBy) {
      const w = where(key);
      const css = total ? ' class="total"' : "";
      const label = '<td class="label">' + esc(labelOf(key)) + "</td>";
      t1.push("<tr" + css + ">" + label +
        "<td>" + metric({ v: r.in_scope_retrieval_count }, "agg_tier1_quality.in_scope_retrieval_count", w, { kind: "count" }) + "</td>" +
        "<td>" + metric(retrievalMetric("empty", r), "agg_tier1_quality.empty_result_rate", w) + "</td>" +
        "<td>" + metric(retrievalMetric("p1", r), "agg_tier1_quality.precision_at_1_mean", w, { needs: ["relevance_labels"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("ndcg", r), "agg_tier1_quality.ndcg_at_k_mean", w, { kind: "score", needs: ["relevance_labels"] }) + "</td>" +
        "<td>" + esc(count(r.labelled_retrieval_count)) + "</td></tr>");
      t23.push("<tr" + css + ">" + label +
        "<td>" + metric(retrievalMetric("gpr", r), "agg_tier2_usage.genuine_positive_rate", w, { needs: ["actions"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("acr", r), "agg_tier2_usage.agent_consumption_rate", w, { needs: ["actions"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("acr_confirmed", r), "agg_tier2_usage.agent_consumption_confirmed_rate", w, { needs: ["actions"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("orf", r), "agg_tier2_usage.observable_failure_rate", w, { note: ORF_NOTE() }) + "</td>" +
        "<td>" + metric(retrievalMetric("uor", r), "agg_tier2_usage.unobserved_rate", w, { needs: ["actions"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("completion", r), "agg_tier3_completion.completion_rate", w, { needs: ["outcomes"] }) + "</td>" +
        "<td>" + metric(retrievalMetric("goal", r), "agg_tier3_completion.goal_rate", w, { needs: ["goal_labels"] }) + "</td></tr>");
    }
    return (
      '<div class="grid2 tables">' +
      "<div><h4>Tier 1 · quality at trigger</h4>" +
      table(["", "In-scope", "Empty results", "Precision@1", "NDCG@" + K, "Labelled"], t1) + "</div>" +
      "<div><h4>Tiers 2-3 · use and completion</h4>" +
      table(["", "GPR", "ACR", "ACR confirmed", "ORF", "UOR", "Completion", "Goal rate"], t23) + "</div></div>"
    );
  }

  function renderTiers() {
    if (!has("retrieval")) return "";
    const roles = (state.role === "all" ? D.roles : [state.role])
      .map((role) => [role, retrievalRow(state.surface, role), false]).filter((x) => x[1]);
    if (state.role === "all") {
      const total = retrievalRow(state.surface, "all");
      if (total) roles.push(["all", total, true]);
    }
    const byRole = tierTables(roles, roleLabel, (role) => "surface=" + state.surface + ";retrieval_role=" + role);
    const surfaces = (state.surface === "all" ? D.surfaces.retrieval : [state.surface])
      .map((s) => [s, retrievalRow(s, state.role), false]).filter((x) => x[1]);
    if (state.surface === "all") {
      const total = retrievalRow("all", state.role);
      if (total) surfaces.push(["all", total, true]);
    }
    const bySurface = tierTables(surfaces, surfaceLabel, (s) => "surface=" + s + ";retrieval_role=" + state.role);

    // Charts per role for the selected surface.
    const cats = roles.map(([role]) => ({ key: role, label: roleLabel(role) }));
    const v2 = {}, v13 = {};
    for (const [role, r] of roles) {
      for (const name of ["gpr", "acr", "orf", "uor"]) {
        const needs = name === "orf" ? [] : ["actions"];
        const missing = absentInput(needs);
        v2[role + "|" + name] = missing ? { absent: missing } : retrievalMetric(name, r);
      }
      for (const [name, needs] of [["p1", ["relevance_labels"]], ["ndcg", ["relevance_labels"]], ["completion", ["outcomes"]]]) {
        const missing = absentInput(needs);
        v13[role + "|" + name] = missing ? { absent: missing } : retrievalMetric(name, r);
      }
    }
    const tier2 = groupedBars(cats,
      [{ key: "gpr", label: "GPR: user used it", css: "gpr" }, { key: "acr", label: "ACR: agent used it", css: "acr" },
       { key: "orf", label: "ORF: visibly failed", css: "orf" }, { key: "uor", label: "UOR: no signal", css: "uor" }],
      v2, "Tier 2 flags per retrieval role", "Share of in-scope retrievals with each Tier 2 flag, per role, with 95% Wilson intervals.");
    const tier13 = groupedBars(cats,
      [{ key: "p1", label: "Precision@1", css: "fixed" }, { key: "ndcg", label: "NDCG@" + K, css: "acr" },
       { key: "completion", label: "Completion rate (Tier 3)", css: "done" }],
      v13, "Tier 1 quality and Tier 3 completion per retrieval role",
      "Precision@1 and NDCG@K on labelled retrievals, completion rate on in-scope retrievals, per role, with 95% intervals.");
    return (
      "<h3>By retrieval role" + (state.surface !== "all" ? " · " + esc(surfaceLabel(state.surface)) : "") + "</h3>" + byRole +
      '<div class="grid2"><figure>' + tier2 + "<figcaption>Tier 2: share of in-scope retrievals with each flag " +
      "(whiskers: 95% Wilson interval). Hover a bar for numerator / denominator.</figcaption></figure><figure>" + tier13 +
      "<figcaption>Tier 1 quality (labelled retrievals) beside Tier 3 completion (in-scope retrievals).</figcaption></figure></div>" +
      renderReretrieval(roles.map(([role]) => role)) +
      "<h3>By surface" + (state.role !== "all" ? " · " + esc(roleLabel(state.role)) : "") + "</h3>" + bySurface
    );
  }

  // Delayed action (metrics.md v2): an asset returned again to the same user
  // within the window, before any outcome on it (agg_reretrieval).
  function renderReretrieval(roles) {
    if (!has("reretrieval")) return "";
    const rows = [];
    let window = null;
    for (const role of roles) {
      const r = one("reretrieval", { surface: state.surface, role: role });
      if (!r) continue;
      window = r.reretrieval_window_days;
      rows.push("<tr" + (role === "all" ? ' class="total"' : "") + '><td class="label">' + esc(roleLabel(role)) + "</td><td>" +
        metric(rated(r, "reretrieval_rate"), "agg_reretrieval.reretrieval_rate",
          "surface=" + state.surface + ";retrieval_role=" + role) + "</td></tr>");
    }
    if (!rows.length) return "";
    return "<h4>Delayed action · re-retrieved within " + esc(String(window)) + " days before any outcome</h4>" +
      table(["", "Re-retrieval rate"], rows);
  }

  function renderWeighted() {
    if (!has("weighted")) return "";
    const roles = (state.role === "all" ? D.roles.concat(["all"]) : [state.role]);
    const rows = [];
    for (const role of roles) {
      const r = one("weighted", { surface: state.surface, role: role });
      if (!r) continue;
      const w = "surface=" + state.surface + ";retrieval_role=" + role;
      const p1 = prop(r, "relevant_at_1_retrieval_count", "labelled_retrieval_count");
      const nd = mean(r, "ndcg_at_k_sum", "ndcg_at_k_sum_of_squares", "labelled_retrieval_count");
      const wp1 = { v: r.precision_at_1_weighted_mean, lo: r.precision_at_1_weighted_ci_low, hi: r.precision_at_1_weighted_ci_high };
      const wnd = { v: r.ndcg_at_k_weighted_mean, lo: r.ndcg_at_k_weighted_ci_low, hi: r.ndcg_at_k_weighted_ci_high };
      const ci = (m, kind) => (isMissing(m.lo) ? "" : '<span class="nd">' + esc(fmt(m.lo, kind)) + " to " + esc(fmt(m.hi, kind)) + "</span>");
      const why = r.weighted_null_reason ? '<span class="nd">' + esc(r.weighted_null_reason) + "</span>" : "";
      rows.push(
        "<tr" + (role === "all" ? ' class="total"' : "") + '><td class="label">' + esc(roleLabel(role)) + "</td>" +
        "<td>" + esc(count(r.labelled_retrieval_count)) + "</td>" +
        "<td>" + metric(p1, "agg_tier1_weighted.precision_at_1_mean", w, { needs: ["relevance_labels"], nd: false }) + ci(p1) + "</td>" +
        "<td>" + metric(wp1, "agg_tier1_weighted.precision_at_1_weighted_mean", w, { needs: ["relevance_labels"], nd: false }) + ci(wp1) + why + "</td>" +
        "<td>" + metric(nd, "agg_tier1_weighted.ndcg_at_k_mean", w, { kind: "score", needs: ["relevance_labels"], nd: false }) + ci(nd, "score") + "</td>" +
        "<td>" + metric(wnd, "agg_tier1_weighted.ndcg_at_k_weighted_mean", w, { kind: "score", needs: ["relevance_labels"], nd: false }) + ci(wnd, "score") + why + "</td>" +
        "<td>" + esc(isMissing(r.effective_sample_size) ? "n/a" : Number(r.effective_sample_size).toFixed(1)) + "</td></tr>"
      );
    }
    if (!rows.length) return '<p class="note">No labelled retrievals for this filter.</p>';
    return table(["Retrieval role", "Labelled", "Precision@1", "Precision@1 weighted", "NDCG@" + K, "NDCG@" + K + " weighted", "Effective n"], rows);
  }

  const MATRIX = [
    ["good", "failure", "downstream_or_routing_issue", "Downstream or routing issue", "122,92,199"],
    ["good", "used", "healthy", "Healthy", "31,157,106"],
    ["good", "neither", "unobserved", "Unobserved", "139,151,164"],
    ["bad", "failure", "retrieval_failure_visible", "Retrieval failure, visible", "217,154,30"],
    ["bad", "used", "masked_retrieval_failure", "Masked retrieval failure", "224,88,58"],
    ["bad", "neither", "unobserved", "Unobserved", "139,151,164"],
  ];
  function renderDiagnosis() {
    const missing = absentInput(["relevance_labels", "actions"]);
    const filter = filterText(RETRIEVAL_FILTER);
    if (missing) return "<p>" + absent(missing, "fct_retrievals.tier_diagnosis_share", filter) + "</p>";
    const cells = find("diagnosis_cells", { surface: state.surface, role: state.role });
    const counts = {};
    for (const c of cells) {
      const k = (c.is_tier1_good ? "good" : "bad") + "|" + c.usage;
      counts[k] = (counts[k] || 0) + c.retrieval_count;
    }
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    const peak = Math.max(0, ...Object.values(counts));
    const rows = [];
    for (const [quality, label] of [["good", "Tier 1 good"], ["bad", "Tier 1 bad"]]) {
      const tds = ["<th>" + label + '<span class="nd">NDCG@K ' + (quality === "good" ? "&ge;" : "&lt;") + " threshold</span></th>"];
      for (const [q, usage, name, title, tint] of MATRIX) {
        if (q !== quality) continue;
        const n = counts[quality + "|" + usage] || 0;
        const alpha = peak ? 0.08 + (0.32 * n) / peak : 0.08;
        tds.push(
          '<td class="cell' + (name === "masked_retrieval_failure" ? " masked" : "") + '" style="background: rgba(' + tint + "," + alpha.toFixed(2) + ')">' +
          '<span class="name">' + title + "</span>" +
          metric({ v: total ? n / total : null }, "fct_retrievals.tier_diagnosis_share", filter + ";is_tier1_good=" + (quality === "good") + ";usage=" + usage, { nd: false }) +
          '<span class="nd">' + esc(count(n)) + " retrievals</span></td>"
        );
      }
      rows.push("<tr>" + tds.join("") + "</tr>");
    }
    const matrix = '<div class="table-wrap"><table class="matrix"><thead><tr><th></th><th>Observable failure (ORF)</th>' +
      "<th>Used (GPR or ACR), no failure</th><th>Neither used nor failed</th></tr></thead><tbody>" + rows.join("") + "</tbody></table></div>";
    const overall = retrievalRow(state.surface, state.role);
    const check = overall
      ? '<p class="note">Labelled in-scope retrievals: ' +
        metric({ v: overall.labelled_retrieval_count }, "agg_tier_diagnosis.labelled_retrieval_count", filter, { kind: "count" }) +
        " (matrix total " + esc(count(total)) + "). Threshold: NDCG@K &ge; " + esc(overall.tier1_good_ndcg) + ".</p>"
      : "";
    const names = [["healthy", "Healthy"], ["masked_retrieval_failure", "Masked failure"], ["retrieval_failure_visible", "Visible failure"],
      ["downstream_or_routing_issue", "Downstream / routing"], ["diagnosis_unobserved", "Unobserved"]];
    const byRole = [];
    for (const role of (state.role === "all" ? D.roles.concat(["all"]) : [state.role])) {
      const r = retrievalRow(state.surface, role);
      if (!r || !r.labelled_retrieval_count) continue;
      const w = "surface=" + state.surface + ";retrieval_role=" + role;
      byRole.push("<tr" + (role === "all" ? ' class="total"' : "") + "><td>" + esc(roleLabel(role)) + "</td><td>" + esc(count(r.labelled_retrieval_count)) + "</td>" +
        names.map(([n]) => "<td>" + metric(prop(r, n + "_retrieval_count", "labelled_retrieval_count"),
          "agg_tier_diagnosis." + n.replace("diagnosis_", "") + "_rate", w) + "</td>").join("") + "</tr>");
    }
    return matrix + check + "<h3>Per retrieval role</h3>" +
      table(["Retrieval role", "Labelled"].concat(names.map((n) => n[1])), byRole);
  }

  function renderNaive() {
    const surfaces = state.surface === "all" ? ["assistant"].concat(D.surfaces.assistant) : [state.surface];
    const blocks = [];
    const specs = [
      ["ctr", "Click-through rate", "agg_ctr", "naive_session_ctr", "retrieval_ctr", null,
        ["Surface", "Naive: per session", "Per displayed retrieval"], "naive: sessions with a click / sessions", "clicked / displayed retrievals", ["actions"],
        '<b>Naive</b> = assistant sessions with a user click / assistant sessions. <b>Per displayed retrieval</b> = displayed in-scope retrievals with &ge; 1 attributed user click / displayed in-scope retrievals. Source: <code>marts.agg_ctr</code>.'],
      ["rewrites", "Rewrites", "agg_rewrites", "naive_rewrite_rate", "search_reformulation_rate", "downstream_correction_rate",
        ["Surface", "Naive rewrite rate", "Search reformulation", "Downstream correction"], "naive rewrite rate", "search reformulation rate", ["actions"],
        '<b>Naive rewrite rate</b> = rewritten prompts / prompts. <b>Search reformulation rate</b> = rewritten retrieval turns with no use of their results before the rewrite / retrieval-turn prompts. <b>Downstream correction rate</b> = all other rewrites / prompts. Source: <code>marts.agg_rewrites</code>.'],
      ["abandonment", "Abandonment of assistant sessions", "agg_abandonment", "abandonment_rate_naive", "abandonment_rate_lineage_corrected", "abandonment_overstatement",
        ["Surface", "Naive", "Lineage-corrected", "Difference (overstatement)"], "naive", "lineage-corrected", ["outcomes"],
        '<b>Naive</b> = sessions with no export / share / download in the same session / assistant sessions. <b>Lineage-corrected</b> also counts a session as not abandoned when an outcome in another session is attributed to one of its retrievals. Source: <code>marts.agg_abandonment</code>.'],
    ];
    for (const [name, title, mart, naive, fixed, extra, headers, naiveLabel, fixedLabel, needs, definition] of specs) {
      if (!has(name)) continue;
      const rows = [], pairs = [];
      for (const s of surfaces) {
        const r = surfaceRow(name, s);
        if (!r) continue;
        const where = "surface=" + s;
        const cells = ["<td>" + esc(surfaceLabel(s)) + "</td>"];
        cells.push("<td>" + metric(rated(r, naive), mart + "." + naive, where, { needs: name === "rewrites" ? [] : needs }) + "</td>");
        cells.push("<td>" + metric(rated(r, fixed), mart + "." + fixed, where, { needs: needs }) + "</td>");
        if (extra) cells.push("<td>" + metric(rated(r, extra), mart + "." + extra, where, { needs: needs }) + "</td>");
        rows.push("<tr>" + cells.join("") + "</tr>");
        pairs.push({ label: surfaceLabel(s), naive: rated(r, naive), fixed: rated(r, fixed) });
      }
      const missing = absentInput(needs);
      const chart = missing || !pairs.length ? "" :
        dumbbell(pairs, naiveLabel, fixedLabel, title + ", naive vs corrected", title + " per surface, naive beside corrected.");
      blocks.push("<div><h3>" + esc(title) + '</h3><div class="def">' + definition + "</div><figure>" + chart + "</figure>" + table(headers, rows) + "</div>");
    }
    return notSplit(["role"]) + '<div class="grid2">' + blocks.join("") + "</div>";
  }

  function renderEffective() {
    if (!has("effective")) return "";
    const missing = absentInput(["actions"]);
    const rows = find("effective", { surface: state.surface === "all" ? "all" : state.surface });
    if (missing) return notSplit(["role"]) + "<p>" + absent(missing, "agg_effective_action_rate.effective_action_rate", "surface=" + state.surface) + "</p>";
    if (!rows.length) return notSplit(["role"]) + '<p class="note">No assistant prompts for this surface (the effective action rate is over assistant prompts).</p>';
    const cats = rows.map((r) => ({ key: r.definition_name, label: String(r.definition_name).replace(/_/g, " ") }));
    const values = {};
    for (const r of rows) values[r.definition_name + "|rate"] = rated(r, "effective_action_rate");
    const chart = groupedBars(cats, [{ key: "rate", label: "effective action rate", css: "fixed" }], values,
      "Effective action rate per definition", "Share of assistant prompts followed by a user action of the definition's types.", 170);
    const body = rows.map((r) =>
      "<tr><td>" + esc(r.definition_name) + '</td><td class="wrap">' + esc(r.action_types) + "</td><td>" +
      metric(rated(r, "effective_action_rate"), "agg_effective_action_rate.effective_action_rate",
        "surface=" + state.surface + ";definition_name=" + r.definition_name) + "</td></tr>");
    return notSplit(["role"]) + '<div class="grid2"><figure>' + chart + "</figure><div>" +
      table(["Definition", '<span class="left">User action types counted</span>', "Rate"], body) + "</div></div>";
  }

  function renderCosts() {
    if (!has("costs")) return "";
    const missing = absentInput(["stage_spans"]);
    const surface = state.surface;
    if (missing) return notSplit(["role"]) + "<p>" + absent(missing, "agg_stage_costs.mean_latency_ms", "surface=" + surface) + "</p>";
    const rows = find("costs", { surface: surface });
    if (!rows.length) return notSplit(["role"]) + '<p class="note">No stage spans for this surface.</p>';
    const body = rows.map((r) => {
      const w = "surface=" + surface + ";stage=" + r.stage;
      const latency = mean(r, "mean_latency_ms_numerator", "mean_latency_ms_sum_of_squares", "mean_latency_ms_denominator");
      const tokens = mean(r, "mean_tokens_numerator", "mean_tokens_sum_of_squares", "mean_tokens_denominator");
      const perTaskLatency = rated(r, "latency_ms_per_successful_task");
      const perTaskTokens = rated(r, "tokens_per_successful_task");
      const ci = (m, kind) => (isMissing(m.lo) ? "" : '<span class="nd">' + esc(fmt(m.lo, kind)) + " to " + esc(fmt(m.hi, kind)) + "</span>");
      return "<tr" + (r.stage === "all_stages" ? ' class="total"' : "") + "><td>" + esc(String(r.stage).replace(/_/g, " ")) + "</td>" +
        "<td>" + esc(count(r.instrumented_prompt_count)) + "</td>" +
        "<td>" + metric(latency, "agg_stage_costs.mean_latency_ms", w, { kind: "ms", nd: false }) + ci(latency, "ms") + "</td>" +
        "<td>" + esc(fmt(r.p50_latency_ms, "ms")) + '<span class="nd">p95 ' + esc(fmt(r.p95_latency_ms, "ms")) + "</span></td>" +
        "<td>" + metric(tokens, "agg_stage_costs.mean_tokens", w, { kind: "tokens", nd: false }) + ci(tokens, "tokens") + "</td>" +
        "<td>" + esc(fmt(r.p50_tokens, "tokens")) + '<span class="nd">p95 ' + esc(fmt(r.p95_tokens, "tokens")) + "</span></td>" +
        "<td>" + metric(perTaskLatency, "agg_stage_costs.latency_ms_per_successful_task", w, { kind: "ms", needs: ["outcomes"] }) + "</td>" +
        "<td>" + metric(perTaskTokens, "agg_stage_costs.tokens_per_successful_task", w, { kind: "tokens", needs: ["outcomes"] }) + "</td></tr>";
    });
    return notSplit(["role"]) + table(["Stage", "Instrumented prompts", "Mean latency (95% CI)", "p50 latency", "Mean tokens (95% CI)", "p50 tokens",
      "Latency per successful task", "Tokens per successful task"], body);
  }

  function renderLineage() {
    const parts = [];
    const surface = state.surface;
    const outcomesMissing = absentInput(["outcomes"]);
    if (has("outcomes")) {
      const o = surfaceRow("outcomes", surface);
      parts.push("<div><h3>Where the outcomes come from</h3>" +
        '<div class="def"><b>Share</b> = user export / share / download events in each attribution status / all such events ' +
        "(non-synthetic). Retrieval-driven: credited by lineage (direct, placement or document); temporal only: linked only by " +
        "time-based inference, which Tier 3 does not count; unattributed: product health outside retrieval. Source: " +
        "<code>marts.agg_unattributed_outcomes</code>.</div>" +
        (outcomesMissing ? "<p>" + absent(outcomesMissing, "agg_unattributed_outcomes.retrieval_driven_outcome_rate", "surface=" + surface) + "</p>"
          : !o || !o.outcome_count ? '<p class="note">No outcome events on this surface.</p>'
          : "<figure>" + stackedShare([
              { label: "retrieval-driven", count: o.retrieval_driven_outcome_count, css: "fixed" },
              { label: "temporal only", count: o.temporal_only_outcome_count, css: "acr" },
              { label: "unattributed", count: o.unattributed_outcome_count, css: "uor" }],
              "Outcome events by attribution status", "Shares of outcome events per status.", "outcome events") + "</figure>" +
            '<p class="note">Retrieval-driven share: ' +
            metric(prop(o, "retrieval_driven_outcome_count", "outcome_count"), "agg_unattributed_outcomes.retrieval_driven_outcome_rate", "surface=" + surface) + "</p>") +
        "</div>");
    }
    if (has("methods") || D.logged.actions === false) {
      const missing = absentInput(["actions"]);
      const css = { direct: "fixed", placement: "acr", document: "done", temporal: "uor" };
      const methods = find("methods", { day: null, surface: surface, role: state.role });
      parts.push("<div><h3>How user actions were attributed</h3>" +
        '<div class="def">Distinct user actions credited to a retrieval, by the rule that resolved them (direct source id, ' +
        "placement, document, or the temporal fallback for actions without lineage). Source: <code>marts.fct_action_attributions</code>.</div>" +
        (missing ? "<p>" + absent(missing, "fct_action_attributions.action_count", filterText(RETRIEVAL_FILTER)) + "</p>"
          : !methods.length ? '<p class="note">No attributed user actions for this filter.</p>'
          : "<figure>" + stackedShare(methods.map((m) => ({ label: m.attribution_method, count: m.action_count, css: css[m.attribution_method] || "uor" })),
              "Attributed user actions by method", "Shares of attributed user actions per method.", "attributed user actions") + "</figure>") +
        "</div>");
    }
    // Every day: outcome events and attributed user actions by lineage.
    const days = D.days.lineage;
    const rows = [];
    for (const day of days) {
      const o = surfaceRow("outcomes", surface, day);
      const methods = find("methods", { day: day, surface: surface });
      const lineageActions = methods.filter((m) => m.attribution_method !== "temporal").reduce((a, m) => a + m.action_count, 0);
      const temporalActions = methods.filter((m) => m.attribution_method === "temporal").reduce((a, m) => a + m.action_count, 0);
      const where = "surface=" + surface + ";day=" + day;
      rows.push("<tr><td>" + esc(day) + (day === days[days.length - 1] ? ' <span class="nd">newest day: may still be filling</span>' : "") + "</td>" +
        "<td>" + (outcomesMissing ? absent(outcomesMissing, "agg_unattributed_outcomes.outcome_count", where) : esc(count(o ? o.outcome_count : 0))) + "</td>" +
        "<td>" + (outcomesMissing ? "" : metric(prop(o, "retrieval_driven_outcome_count", "outcome_count"), "agg_unattributed_outcomes.retrieval_driven_outcome_rate", where)) + "</td>" +
        "<td>" + (outcomesMissing ? "" : metric(prop(o, "unattributed_outcome_count", "outcome_count"), "agg_unattributed_outcomes.unattributed_outcome_rate", where)) + "</td>" +
        "<td>" + esc(count(lineageActions + temporalActions)) + "</td>" +
        "<td>" + metric(prop({ n: lineageActions, d: lineageActions + temporalActions }, "n", "d"), "fct_action_attributions.lineage_share", where, { needs: ["actions"] }) + "</td></tr>");
    }
    const daily = "<h3>Lineage, day by day</h3>" +
      '<div class="def">Every day of the build (the gate above validates the newest partition only). <b>Outcome events</b>: non-synthetic ' +
      "user export / share / download events of the day; <b>retrieval-driven</b> and <b>unattributed</b>: their shares. <b>Attributed user " +
      "actions</b>: distinct user actions of the day credited to a retrieval; <b>by lineage</b> = those resolved by a lineage rule (direct, " +
      "placement, document) / attributed user actions (the rest are temporal fallbacks). Sources: <code>marts.agg_unattributed_outcomes</code>, " +
      "<code>marts.fct_action_attributions</code>.</div>" + notSplit(["role"]) +
      table(["Day", "Outcome events", "Retrieval-driven", "Unattributed", "Attributed user actions", "By lineage"], rows);
    return '<div class="grid2">' + parts.join("") + "</div>" + daily;
  }

  const RENDER = {
    kpis: renderKpis, trends: renderTrends, tier0: renderTier0, tiers: renderTiers, weighted: renderWeighted,
    diagnosis: renderDiagnosis, naive: renderNaive, effective: renderEffective, costs: renderCosts, lineage: renderLineage,
  };

  function render() {
    for (const el of document.querySelectorAll("[data-render]")) {
      const fn = RENDER[el.getAttribute("data-render")];
      if (fn) el.innerHTML = fn();
    }
    for (const chip of document.querySelectorAll("button[data-dim]")) {
      const on = state[chip.getAttribute("data-dim")] === chip.getAttribute("data-value");
      chip.setAttribute("aria-pressed", on ? "true" : "false");
    }
    const label = document.getElementById("filter-state");
    if (label) {
      label.textContent = surfaceLabel(state.surface) + " · " + roleLabel(state.role);
    }
  }

  for (const chip of document.querySelectorAll("button[data-dim]")) {
    chip.addEventListener("click", function () {
      state[chip.getAttribute("data-dim")] = chip.getAttribute("data-value");
      render();
    });
  }
  render();
  document.documentElement.setAttribute("data-rendered", "true");
})();
