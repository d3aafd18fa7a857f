// One case's drill-down: its comparison with the baseline, every run's scores with the judges' votes and
// reasons, usage, and every turn of the chosen run against the expected one (tool calls with an argument diff,
// the final response as a word diff). Built only when a case is opened, so a large report renders fast.

function renderDetail(c) {
  var parts = [];
  if (c.reason) parts.push(el("p", {"class": "reason"}, c.reason));
  parts.push(compared(c), scoresPerRun(c), usagePerRun(c));
  if (c.sampling) parts.push(sampling(c.sampling));
  parts.push(turnsView(c));
  return el("div", {"class": "detail-body"}, parts);
}

function compared(c) {
  var names = Object.keys(c.compared);
  if (!names.length) return el("p", {"class": "muted"}, "Not compared with a baseline.");
  return el("div", null, el("h3", null, "Against the baseline"), el("table", {"class": "grid inner"},
    el("thead", null, el("tr", null, ["Criterion", "Baseline → current", "Change", "Verdict", "Evidence"]
      .map(function (h) { return el("th", null, h); }))),
    el("tbody", null, names.map(function (n) {
      var r = c.compared[n];
      return el("tr", {"data-compared": n}, el("td", null, n),
        el("td", {"class": "num"}, fmt(r.baseline) + " → " + fmt(r.current),
          r.estimate ? el("div", {"class": "estimate"}, r.estimate) : null),
        el("td", {"class": "num"}, signed(r.delta)), el("td", null, verdictBadge(r.verdict, r.gating)),
        el("td", {"class": "evidence"}, el("div", null, changeWords(r)), el("div", {"class": "p"}, pWords(r)),
          el("div", {"class": "muted"}, r.reason)));
    }))));
}

function scoresPerRun(c) {
  var names = Object.keys(c.metrics);
  var rows = [];
  names.forEach(function (n) {
    var m = c.metrics[n];
    rows.push(el("tr", {"data-metric": n}, el("td", null, n, el("div", {"class": "muted"}, "threshold " + m.threshold)),
      el("td", {"class": "num s-" + m.status}, fmt(m.score), el("div", null, statusBadge(m.status))),
      c.runs.map(function (run, i) {
        var r = m.runs[i];
        if (!r) return el("td", {"class": "muted"}, "agent errored");
        return el("td", {"class": "s-" + r.status}, el("span", {"class": "num"}, fmt(r.score)),
          r.turns.length > 1 || r.turns.some(function (t) { return t[2]; }) ? el("ol", {"class": "turn-scores"},
            r.turns.map(function (t) {
              return el("li", null, fmt(t[0]) + " " + (STATUS_LABELS[t[1]] || t[1]), t[2] ? el("div", {"class": "votes"}, t[2]) : null);
            })) : null,
          r.reason ? el("div", {"class": "muted"}, r.reason) : null);
      })));
    if (m.reason) rows.push(el("tr", null, el("td", {colspan: 2 + c.runs.length, "class": "muted"}, n + ": " + m.reason +
      (m.cause ? " (" + m.cause.replace(/_/g, " ") + ")" : ""))));
  });
  return el("div", null, el("h3", null, "Scores per run"), el("p", {"class": "muted"},
    "The case score is the mean of every turn of every run (ADK's pooling); each run shows its own score and, per turn, " +
    "the judges' votes and reasons where a criterion records them."),
  el("div", {"class": "scroll"}, el("table", {"class": "grid inner"}, el("thead", null, el("tr", null,
    el("th", null, "Criterion"), el("th", null, "Case score"),
    c.runs.map(function (r) { return el("th", null, "Run " + (r.run + 1)); }))), el("tbody", null, rows))));
}

function usagePerRun(c) {
  if (!c.runs.some(function (r) { return r.usage || r.error || r.duration_seconds !== null; })) return null;
  return el("div", null, el("h3", null, "Usage per run"), el("table", {"class": "grid inner"},
    el("thead", null, el("tr", null, ["Run", "Input tokens", "Output tokens", "Model calls", "Tool calls", "Duration", "Cost", "Error"]
      .map(function (h) { return el("th", null, h); }))),
    el("tbody", null, c.runs.map(function (r) {
      var u = r.usage || {};
      return el("tr", {"data-run": r.run}, el("td", null, "Run " + (r.run + 1)),
        ["input_tokens", "output_tokens", "model_calls", "tool_calls"].map(function (k) {
          return el("td", {"class": "num"}, u[k] === undefined ? "—" : u[k].toLocaleString("en-US"));
        }),
        el("td", {"class": "num"}, r.duration_seconds === null ? "—" : r.duration_seconds.toFixed(2) + " s"),
        el("td", {"class": "num"}, u.cost_usd === null || u.cost_usd === undefined ? "—" : "$" + u.cost_usd.toFixed(4)),
        el("td", {"class": "error-text"}, r.error || ""));
    }))));
}

function sampling(s) {
  var text = "Adaptive runs: the first " + s.first_round_runs + " run(s) form the first round. " +
    (s.extra ? "Extra runs " + s.extra.runs.map(function (r) { return r + 1; }).join(", ") + ": " + s.extra.reason :
      (s.decided || ""));
  return el("p", {"class": "muted sampling"}, text);
}

function turnsView(c) {
  var holder = el("div", {"class": "turns"});
  if (!c.runs.length) return el("p", {"class": "muted"}, "No run recorded.");
  var chosen = 0;
  for (var i = 0; i < c.runs.length; i++) {
    if (runOutcome(c, i) !== "passed") { chosen = i; break; }
  }
  var buttons = c.runs.map(function (r, i) {
    var b = el("button", {type: "button", "data-run": r.run, "class": "s-" + runOutcome(c, i)},
      "Run " + (r.run + 1) + " · " + (STATUS_LABELS[runOutcome(c, i)] || runOutcome(c, i)));
    b.addEventListener("click", function (event) { event.stopPropagation(); show(i); });
    return b;
  });
  function show(i) {
    buttons.forEach(function (b, j) { b.setAttribute("aria-pressed", j === i ? "true" : "false"); });
    holder.textContent = "";
    append(holder, runTurns(c, c.runs[i]));
  }
  show(chosen);
  return el("div", null, el("h3", null, "Turns"), el("div", {"class": "run-picker", role: "toolbar"}, buttons), holder);
}

function runTurns(c, run) {
  if (run.error) return el("p", {"class": "error-text"}, "This run errored: " + run.error);
  var actual = run.turns || [], expected = c.expected || [];
  if (!actual.length && !expected.length) return el("p", {"class": "muted"}, "No turns recorded for this run.");
  var count = Math.max(actual.length, expected.length), out = [];
  if (!c.expected) out.push(el("p", {"class": "muted"}, "The expected conversation is not in these results " +
    "(a conversation scenario, or rendered without the eval set files): only the actual turns are shown."));
  for (var i = 0; i < count; i++) {
    var a = actual[i] || null, e = c.expected ? expected[i] || null : null;
    out.push(el("div", {"class": "turn", "data-turn": i + 1}, el("h4", null, "Turn " + (i + 1)),
      el("div", {"class": "user"}, el("span", {"class": "label"}, "User"), el("pre", null, (a || e || {}).user || "")),
      toolCalls(e, a), response(e, a)));
  }
  return out;
}

function json(v) { return v === undefined ? "" : JSON.stringify(v); }

function toolCalls(e, a) {
  var exp = e ? e.tools : null, act = a ? a.tools : [];
  var n = Math.max(exp ? exp.length : 0, act.length);
  if (!n) return el("p", {"class": "muted"}, "No tool calls" + (exp ? " expected or made." : "."));
  var rows = [];
  for (var i = 0; i < n; i++) {
    var x = exp ? exp[i] : undefined, y = act[i];
    var same = x && y && x.name === y.name && json(x.args) === json(y.args);
    rows.push(el("tr", {"class": exp ? (same ? "same" : "differs") : null, "data-call": i + 1},
      el("td", {"class": "num"}, i + 1),
      exp ? el("td", null, x ? callText(x) : el("span", {"class": "missing"}, "— none —")) : null,
      el("td", null, y ? callText(y) : el("span", {"class": "missing"}, "— none —")),
      exp ? el("td", null, x && y ? argDiff(x, y) : null) : null));
  }
  var head = exp ? ["#", "Expected", "Actual", "Argument differences"] : ["#", "Actual"];
  return el("div", null, el("span", {"class": "label"}, "Tool calls"), el("table", {"class": "grid inner calls"},
    el("thead", null, el("tr", null, head.map(function (h) { return el("th", null, h); }))), el("tbody", null, rows)));
}

function callText(call) {
  return el("code", null, call.name + "(" + (call.args === null || call.args === undefined ? "" : json(call.args)) + ")");
}

function argDiff(x, y) {
  var out = [];
  if (x.name !== y.name) out.push(el("div", {"class": "diff-line"}, "name: ", el("del", null, x.name), " → ", el("ins", null, y.name)));
  var xa = x.args, ya = y.args;
  if (xa && ya && typeof xa === "object" && typeof ya === "object" && !Array.isArray(xa) && !Array.isArray(ya)) {
    var keys = Object.keys(xa).concat(Object.keys(ya).filter(function (k) { return !(k in xa); })).sort();
    keys.forEach(function (k) {
      if (json(xa[k]) === json(ya[k])) return;
      out.push(el("div", {"class": "diff-line", "data-arg": k}, el("code", null, k), ": ",
        k in xa ? el("del", null, json(xa[k])) : el("span", {"class": "muted"}, "(absent)"), " → ",
        k in ya ? el("ins", null, json(ya[k])) : el("span", {"class": "muted"}, "(absent)")));
    });
  } else if (json(xa) !== json(ya)) {
    out.push(el("div", {"class": "diff-line"}, "args: ", el("del", null, json(xa)), " → ", el("ins", null, json(ya))));
  }
  return out.length ? out : el("span", {"class": "muted"}, "identical");
}

function response(e, a) {
  var exp = e ? e.response : null, act = a ? a.response : "";
  if (exp === null) return el("div", null, el("span", {"class": "label"}, "Response"), el("pre", {"class": "response"}, act));
  if (exp === act) return el("div", null, el("span", {"class": "label"}, "Response (as expected)"), el("pre", {"class": "response"}, act));
  var d = wordDiff(exp, act);
  return el("div", {"class": "response-diff"}, el("span", {"class": "label"}, "Response: expected vs actual"),
    el("div", {"class": "sides"}, el("pre", {"class": "response expected"}, d[0]), el("pre", {"class": "response actual"}, d[1])));
}

// A word-level longest-common-subsequence diff: words only in the expected text are struck out on its side, words
// only in the actual text are highlighted on its side. Too long a pair falls back to showing both whole.
function wordDiff(x, y) {
  var a = x.split(/(\s+)/), b = y.split(/(\s+)/);
  if (a.length * b.length > 4e6) return [[x], [y]];
  var n = a.length, m = b.length, lcs = new Array(n + 1);
  for (var i = 0; i <= n; i++) lcs[i] = new Uint32Array(m + 1);
  for (i = n - 1; i >= 0; i--) {
    for (var j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  }
  var left = [], right = [];
  i = 0; j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) { left.push(a[i]); right.push(b[j]); i++; j++; }
    else if (j < m && (i === n || lcs[i][j + 1] >= lcs[i + 1][j])) { right.push(/^\s+$/.test(b[j]) ? b[j] : el("ins", null, b[j])); j++; }
    else { left.push(/^\s+$/.test(a[i]) ? a[i] : el("del", null, a[i])); i++; }
  }
  return [left, right];
}
