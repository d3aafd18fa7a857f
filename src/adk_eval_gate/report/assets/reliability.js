// The "Reliability" section: each eval set's pass^k (the chance a case passes k runs in a row, estimated without
// bias from its runs: C(c, k) / C(n, k)), its 95% interval over cases, the baseline's when gate.pass_k compared
// them, and the least reliable cases. Built from data.pass_k (report/html_pass_k.py).

function choose(n, k) {
  if (k < 0 || k > n) return 0;
  var r = 1;
  for (var i = 1; i <= k; i++) r = r * (n - k + i) / i;
  return r;
}

function passK(tally, k) {
  return tally[1] < k ? null : choose(tally[0], k) / choose(tally[1], k);
}

function reliabilityCases(s) {
  var ids = Object.keys(s.tallies).filter(function (id) { var v = passK(s.tallies[id], s.k); return v === null || v < 1; });
  ids.sort(function (a, b) { return (passK(s.tallies[a], s.k) || 0) - (passK(s.tallies[b], s.k) || 0); });
  if (!ids.length) return el("div", {"class": "muted"}, "every case passed every run");
  var shown = ids.slice(0, 8).map(function (id) {
    var t = s.tallies[id], v = passK(t, s.k);
    return el("li", {"data-pass-k-case": s.key + "/" + id}, id + ": " + (v === null ? "cannot be estimated" : v.toFixed(2)) +
      " (" + t[0] + "/" + t[1] + " runs passed)");
  });
  return el("ul", {"class": "pass-k-cases"}, shown, ids.length > 8 ? el("li", {"class": "muted"}, "and " + (ids.length - 8) + " more") : null);
}

function renderReliability(data) {
  if (!data.pass_k || !data.pass_k.length) return null;
  var rows = data.pass_k.map(function (s) {
    var c = s.compared;
    var value = s.value === null ? "cannot be estimated (k = " + s.k + " > runs of " + s.short.join(", ") + ")" :
      s.value.toFixed(2) + " [" + s.low.toFixed(2) + ", " + s.high.toFixed(2) + "]";
    return el("tr", {"data-pass-k": s.key, "class": c && c.gating ? "gating" : null},
      el("td", null, s.agent + " / " + s.eval_set_id, el("div", {"class": "muted"}, s.cases + " case(s)")),
      el("td", {"class": "num"}, String(s.k)),
      el("td", {"class": "num"}, value),
      el("td", {"class": "num"}, c && c.baseline !== null ? c.baseline.toFixed(2) : "—"),
      el("td", null, c ? verdictBadge(c.verdict === "dropped" ? "regressed" : c.verdict === "not_estimable" ? "error" : c.verdict, c.gating) : "—",
        c ? el("div", {"class": "muted"}, c.reason) : null),
      el("td", null, reliabilityCases(s)));
  });
  return section("reliability", "Reliability (pass^k)", [el("p", {"class": "muted"},
    "pass^k: the chance that a case passes k runs in a row (a run passes when every criterion with a threshold " +
    "passed); the eval set's is the mean over its cases, with a 95% interval over cases."),
    el("table", {"class": "grid"}, el("thead", null, el("tr", null, ["Agent / eval set", "k", "pass^k [95%]",
      "Baseline", "Verdict (gate.pass_k)", "Least reliable cases"].map(function (h) { return el("th", null, h); }))),
      el("tbody", null, rows))]);
}
