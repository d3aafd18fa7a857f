// The report page: verdict and why, the verdicts with their evidence, eval sets with trends, then every case
// (filters, drill-down in case.js). Every node is built with createElement/textContent: the data is agent text
// and must never be parsed as markup. Numbers are formatted here, once, so a sentence and its table agree.

var SVG_NS = "http://www.w3.org/2000/svg";
var VERDICT_LABELS = {
  regressed: "▼ regressed", improved: "▲ improved", unchanged: "unchanged", inconclusive: "? inconclusive",
  new: "new", removed: "removed", not_comparable: "not comparable", error: "⚠ error"
};
var STATUS_LABELS = {passed: "passed", failed: "failed", not_evaluated: "not evaluated", error: "error",
  not_run: "not run"};
var FILTERS = [["all", "All"], ["regressed", "Regressed"], ["failed", "Failed"], ["flaky", "Flaky"],
  ["changed", "Changed"], ["error", "Errors"], ["not_run", "Not run"]];

function el(tag, attrs) {
  var node = document.createElement(tag);
  setAttrs(node, attrs);
  for (var i = 2; i < arguments.length; i++) append(node, arguments[i]);
  return node;
}

function setAttrs(node, attrs) {
  if (!attrs) return;
  Object.keys(attrs).forEach(function (name) {
    if (attrs[name] !== null && attrs[name] !== undefined && attrs[name] !== false) node.setAttribute(name, String(attrs[name]));
  });
}

function append(node, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { child.forEach(function (c) { append(node, c); }); return; }
  node.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
}

function svg(tag, attrs) {
  var node = document.createElementNS(SVG_NS, tag);
  setAttrs(node, attrs);
  return node;
}

function fmt(v) { return v === null || v === undefined ? "—" : v.toFixed(3); }
function signed(v) {
  if (v === null || v === undefined) return "—";
  var text = Math.abs(v).toFixed(3);
  return (v < 0 && text !== "0.000" ? "−" : "+") + text;
}
function pct(v) { return v === null || v === undefined ? "—" : Math.round(v * 100) + "%"; }
function pfmt(p) { return p >= 0.001 ? p.toPrecision(2).replace(/\.?0+$/, "") : p.toExponential(1); }
function oneIn(p) {
  var n = 1 / p;
  if (n < 10) return n.toFixed(1).replace(/\.0$/, "");
  var digits = Math.pow(10, Math.floor(Math.log10(n)) - 1);
  return (Math.round(n / digits) * digits).toLocaleString("en-US");
}

// The change a verdict is about, in words; `estimate` names the samples when they are not all of them.
function changeWords(r) {
  if (r.delta === null || r.delta === undefined) return "";
  var est = r.estimate ? " (" + r.estimate + ")" : "";
  if (signed(r.delta).slice(1) === "0.000") return "did not move: " + fmt(r.baseline) + " → " + fmt(r.current) + est;
  return (r.delta < 0 ? "fell by " : "rose by ") + fmt(Math.abs(r.delta)) + ", from " + fmt(r.baseline) + " to " +
    fmt(r.current) + est;
}

function pWords(r) {
  var p = r.p_value;
  if (p === null || p === undefined) {
    return ["regressed", "improved", "unchanged", "inconclusive"].indexOf(r.verdict) >= 0 && r.delta !== null ?
      "no test: with one sample a side a change cannot be told from noise" : "";
  }
  var head = "p = " + pfmt(p) + ": ";
  if (r.verdict === "unchanged") return head + "the change is within the tolerance, so it does not count whatever p says";
  var dir = r.delta < 0 ? "a drop" : r.delta > 0 ? "a rise" : "a change";
  var odds = p >= 0.5 ? "at least half the time" : p < 1e-6 ? "less than 1 time in a million" : "about 1 time in " + oneIn(p);
  var tail = r.verdict === "inconclusive" ? " — too often to rule out noise" :
    r.verdict === "regressed" || r.verdict === "improved" ? " — rare enough to call it real" : "";
  return head + "if nothing had changed, " + dir + " at least this large would turn up " + odds + tail;
}

function verdictBadge(verdict, gating) {
  return el("span", {"class": "badge v-" + verdict, title: gating ? "fails the gate" : null},
    VERDICT_LABELS[verdict] || verdict, gating ? " · gating" : verdict === "regressed" ? " · does not gate" : null);
}

function statusBadge(status) {
  return el("span", {"class": "badge s-" + status}, STATUS_LABELS[status] || status);
}

// Why, in words: each statistical verdict that failed the gate (what changed, by how much, how surprising that
// would be by chance), then the gate's other failing conditions (errors, cases not run, …) as it words them.
function renderBanner(data, state) {
  var v = data.verdict;
  var title = v.state === "pass" ? "✓ Gate passed" : v.state === "fail" ? "✗ Gate failed" : "Results (not compared)";
  if (v.overridden) title += " (accepted by the override label)";
  if (v.no_baseline && v.state !== "none") title += " — no baseline, nothing was compared";
  var gating = data.verdicts.filter(function (r) { return r.gating; }).map(function (r) {
    return [r.agent + " / " + (r.eval_set_id === null ? "all eval sets" : r.eval_set_id) + " · " + r.criterion, r,
      r.cases];
  });
  data.cases.forEach(function (c) {
    Object.keys(c.compared).forEach(function (n) {
      var r = c.compared[n];
      if (r.gating && r.delta !== null) gating.push([c.key + " · " + n, r, [c.key]]);
    });
  });
  var others = v.failures.filter(function (f) { return !/^(regression|case regression|inconclusive): /.test(f); });
  return el("header", {"class": "banner banner-" + v.state, id: "verdict", "data-verdict": v.state},
    el("h1", null, title), el("p", {"class": "reason"}, v.reason),
    gating.length ? el("ul", {"class": "why evidence-list"}, capped(gating, 8).map(function (g) {
      if (typeof g === "string") return el("li", null, g);
      return el("li", null, el("strong", null, g[0]), ": " + (VERDICT_LABELS[g[1].verdict] || g[1].verdict) + " — " +
        changeWords(g[1]) + ". " + pWords(g[1]), " ", casesLink(state, g[0], g[2], g[1].verdict));
    })) : null,
    // A lone failure is already the reason's "first: …"; it is listed again only for its link to its cases.
    others.length && (v.failures.length > 1 || driftOf(data, others[0])) ?
      el("ul", {"class": "why failures"}, capped(others, 8).map(function (f) {
        var drift = driftOf(data, f);
        return el("li", null, f, drift ? [" ", casesLink(state, "drift: " + drift.agent + " · " + drift.criterion,
          drift.cases, drift.verdict)] : null);
      })) : null,
    v.warnings.map(function (w) { return el("p", {"class": "warning"}, "⚠ " + w); }));
}

function capped(items, n) {
  return items.length > n ? items.slice(0, n).concat(["… and " + (items.length - n) + " more, in the tables below"]) : items;
}

function renderFacts(data) {
  var run = data.run, c = data.counts, b = data.baseline;
  var facts = [
    ["Commit", (run.sha || "unknown").slice(0, 12) + (run.ref ? " (" + run.ref + ")" : "")],
    ["Baseline", b ? b.source + " · commit " + (b.sha || "unknown").slice(0, 12) +
      (b.age_days !== null ? " · " + b.age_days.toFixed(1) + " days old" : "") : "none"],
    ["Cases", c.total + " · " + c.passed + " passed · " + c.failed + " failed · " + c.error + " errors · " +
      c.not_evaluated + " not evaluated · " + c.not_run + " not run"],
    ["Duration", run.duration_seconds.toFixed(1) + " s" + (run.interrupted ? " (stopped early: " + run.stop_reason + ")" : "")]
  ];
  if (run.spend) facts.push(["Spend", run.spend]);
  if (data.budget) facts.push(["Budget", "$" + data.budget.spent_usd.toFixed(4) + " of $" + data.budget.max_cost_usd]);
  var links = [];
  if (run.run_url) links.push(el("a", {href: run.run_url, rel: "noopener noreferrer"}, "workflow run"));
  if (run.report_url) links.push(" · ", el("a", {href: run.report_url, rel: "noopener noreferrer"}, "artifacts"));
  if (links.length) facts.push(["Links", links]);
  return el("dl", {"class": "facts"}, facts.map(function (f) {
    return el("div", null, el("dt", null, f[0]), el("dd", null, f[1]));
  }));
}

function section(id, title, body) {
  return el("section", {id: id}, el("h2", null, title), body);
}

// A long table shows its first `size` items and a button for the rest, built only when asked for: a run of hundreds
// of eval sets still draws its first screen at once. `build` makes an item's row (or rows).
function limitedRows(items, size, build, noun) {
  var body = el("tbody", null, items.slice(0, size).map(build));
  if (items.length <= size) return [body];
  var button = el("button", {type: "button"}, "Show all " + items.length.toLocaleString("en-US") + " " + noun);
  var more = el("p", {"class": "more"}, "Showing " + size + " of " + items.length.toLocaleString("en-US") + " " + noun +
    ".", " ", button);
  button.addEventListener("click", function () { append(body, items.slice(size).map(build)); more.hidden = true; });
  return [body, more];
}

// Gating verdicts first, then the others that moved, then the unchanged ones; the data's order within each.
function byWeight(r, i) {
  return [r.gating ? 0 : r.verdict === "unchanged" ? 2 : 1, i];
}

function renderVerdicts(data, state) {
  if (!data.verdicts.length) return null;
  var ordered = data.verdicts.map(byWeight).sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; })
    .map(function (o) { return data.verdicts[o[1]]; });
  var rows = limitedRows(ordered, 50, function (r) {
    var scope = r.scope === "pooled" ? r.agent + " / all " + r.eval_sets_compared + " eval sets" : r.agent + " / " + r.eval_set_id;
    return el("tr", {"data-verdict-key": r.key, "class": r.gating ? "gating" : null},
      el("td", null, r.scope === "pooled" ? el("strong", null, scope) : scope), el("td", null, r.criterion),
      el("td", {"class": "num"}, r.cases_compared || r.current != null ? fmt(r.baseline) + " → " + fmt(r.current) : "—",
        r.estimate ? el("div", {"class": "estimate"}, r.estimate) : null),
      el("td", {"class": "num"}, signed(r.delta)),
      el("td", {"class": "num"}, r.cases_compared || r.current_pass_rate != null ? pct(r.baseline_pass_rate) + " → " + pct(r.current_pass_rate) : "—"),
      el("td", null, verdictBadge(r.verdict, r.gating)),
      el("td", {"class": "evidence"}, el("div", null, changeWords(r)), el("div", {"class": "p"}, pWords(r)),
        el("div", {"class": "muted"}, r.reason), casesLink(state, scope + " · " + r.criterion, r.cases, r.verdict)));
  }, "verdicts");
  return section("verdicts", "Verdicts against the baseline", [el("table", {"class": "grid"},
    el("thead", null, el("tr", null, ["Agent / eval set", "Criterion", "Baseline → current", "Change",
      "Pass rate", "Verdict", "Evidence"].map(function (h) { return el("th", null, h); }))),
    rows[0]), rows[1]]);
}

function renderEfficiency(data) {
  if (!data.efficiency.length) return null;
  var rows = limitedRows(data.efficiency, 50, function (e) {
    return el("tr", null, el("td", null, e.agent + " / " + e.eval_set_id), el("td", null, e.metric.replace("_", " ")),
      el("td", {"class": "num"}, e.baseline.toPrecision(4) + " → " + e.current.toPrecision(4)),
      el("td", {"class": "num"}, (e.change >= 0 ? "+" : "−") + Math.abs(Math.round(e.change * 100)) + "%"),
      el("td", null, verdictBadge(e.verdict, e.gating)),
      el("td", {"class": "evidence"}, pWords({p_value: e.p_value, delta: e.change, verdict: e.verdict}),
        el("div", {"class": "muted"}, e.reason)));
  }, "rows");
  return section("efficiency", "Efficiency per run", [el("table", {"class": "grid"},
    el("thead", null, el("tr", null, ["Agent / eval set", "Usage", "Baseline → current", "Change", "Verdict",
      "Evidence"].map(function (h) { return el("th", null, h); }))), rows[0]), rows[1]]);
}

// One record per earlier run, oldest first; this run is appended when the history does not hold it yet.
function sparkline(history, key, current, sha) {
  var points = history.filter(function (h) { return typeof h.criteria[key] === "number"; })
    .map(function (h) {
      // a record whose judge, served model or scorers changed is marked: a step there may not be the code's
      var changed = h.changed ? " — changed besides the code: " + h.changed : "";
      return {label: h.sha.slice(0, 12) + " " + h.date + changed, value: h.criteria[key]};
    });
  var last = history.length ? history[history.length - 1] : null;
  if (current !== null && !(last && sha && last.sha === sha)) points.push({label: "this run", value: current});
  if (points.length < 2) return null;
  var w = 120, h = 28, pad = 3;
  var values = points.map(function (p) { return p.value; });
  var lo = Math.min.apply(null, values), hi = Math.max.apply(null, values);
  var span = hi - lo || 1;
  var xy = points.map(function (p, i) {
    return [pad + i * (w - 2 * pad) / (points.length - 1), h - pad - (p.value - (hi - lo ? lo : lo - 0.5)) * (h - 2 * pad) / span];
  });
  var node = svg("svg", {"class": "spark", width: w, height: h, viewBox: "0 0 " + w + " " + h, role: "img",
    "data-spark": key, "aria-label": "trend of " + key});
  var title = svg("title");
  title.textContent = points.map(function (p) { return p.label + ": " + fmt(p.value); }).join("\n");
  node.appendChild(title);
  node.appendChild(svg("polyline", {points: xy.map(function (p) { return p[0].toFixed(1) + "," + p[1].toFixed(1); }).join(" "),
    fill: "none", stroke: "currentColor", "stroke-width": 1.5}));
  var end = xy[xy.length - 1];
  node.appendChild(svg("circle", {cx: end[0].toFixed(1), cy: end[1].toFixed(1), r: 2.5, fill: "currentColor"}));
  return el("span", {"class": "trend"}, node, el("span", {"class": "muted"}, " " + points.length + " runs, " +
    fmt(lo) + "–" + fmt(hi)));
}

function renderEvalSets(data) {
  var rows = limitedRows(data.eval_sets, 20, function (s) {
    return Object.keys(s.criteria).map(function (name, i) {
      var key = s.key + "/" + name;
      return el("tr", {"data-eval-set": s.key, "data-criterion": name},
        i === 0 ? el("td", {rowspan: Object.keys(s.criteria).length}, s.agent + " / " + s.eval_set_id,
          el("div", {"class": "muted"}, s.file + " · " + s.target + " · " + (s.adaptive_runs ? "runs " +
            s.adaptive_runs.min + "–" + s.adaptive_runs.max : s.num_runs + " run" + (s.num_runs > 1 ? "s" : "")) +
            " · " + s.counts.passed + "/" + s.counts.total + " passed")) : null,
        el("td", null, name), el("td", {"class": "num"}, fmt(s.means[name])), el("td", {"class": "num"}, "≥ " + s.criteria[name]),
        data.history ? el("td", null, sparkline(data.history, key, s.means[name], data.run.sha)) : null);
    });
  }, "eval sets");
  var head = ["Agent / eval set", "Criterion", "Mean case score", "Threshold"];
  if (data.history) head.push("Trend (mean case score per run)");
  return section("eval-sets", "Eval sets", [el("table", {"class": "grid"},
    el("thead", null, el("tr", null, head.map(function (h) { return el("th", null, h); }))), rows[0]), rows[1]]);
}

function main() {
  var packed = JSON.parse(document.getElementById("adk-eval-gate-data").textContent);
  if (typeof DecompressionStream !== "function") {
    return Promise.reject(new Error("this browser cannot unpack the report's data (it needs DecompressionStream: " +
      "Chrome 80, Firefox 113, Safari 16.4 or newer); results.json and comparison.json hold the same data"));
  }
  var state = {filter: "all", search: "", only: null, packed: packed, parts: [], loaded: []};
  return unpackPart(packed.head).then(function (data) {
    state.reasons = data.reasons;
    var app = document.getElementById("app");
    append(app, [renderBanner(data, state), renderFacts(data), renderVerdicts(data, state), renderEfficiency(data),
      renderReliability(data), renderEvalSets(data), renderCases(data, state),
      el("footer", null, "adk-eval-gate " + data.run.tool_version + " · scores follow " + data.run.adk_semantics +
        " · " + data.run.started_at + " · results.json and comparison.json hold every number on this page")]);
    // What only a case's drill-down shows waits until the first screen is on the glass.
    return afterFirstFrame().then(function () { return loadParts(state); });
  }).then(function () { document.documentElement.setAttribute("data-state", "ready"); });
}

Promise.resolve().then(main).catch(function (error) {
  document.documentElement.setAttribute("data-state", "error");
  document.getElementById("app").appendChild(el("p", {"class": "warning"}, "The report could not be shown: " + error));
  console.error(error);
});
