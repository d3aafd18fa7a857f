// The case table: one row per case, built only when its page of rows is shown. Filters, the search and the counts
// work on the data of every case (filters.js); the table holds the first PAGE_SIZE that match, and "Show more"
// adds the next ones, so 10,000 cases cost the first screen no more than a hundred. A case's drill-down (case.js)
// is built when it is opened, from its part of the data's detail (data.js).

var PAGE_SIZE = 100;
var RANK = ["regressed", "error", "not_run", "failed", "flaky", "changed"];
function rank(c) {
  for (var i = 0; i < RANK.length; i++) if (c.tags.indexOf(RANK[i]) >= 0) return i;
  return RANK.length;
}

function renderCases(data, state) {
  var criteria = [], seen = {};
  data.cases.forEach(function (c, i) {
    c.index = i;
    Object.keys(c.metrics).forEach(function (n) { if (!seen[n]) { seen[n] = true; criteria.push(n); } });
  });
  state.cases = data.cases;
  state.criteria = criteria;
  state.columns = 5 + criteria.length;
  state.order = data.cases.map(function (c, i) { return [rank(c), i]; })
    .sort(function (a, b) { return a[0] - b[0] || a[1] - b[1]; }).map(function (o) { return o[1]; });
  state.rows = {};
  state.detailRows = {};
  state.limit = PAGE_SIZE;
  state.body = el("tbody");
  var counts = {};
  FILTERS.forEach(function (f) { counts[f[0]] = 0; });
  data.cases.forEach(function (c) {
    counts.all++;
    c.tags.forEach(function (t) { if (t in counts) counts[t]++; });
  });
  var buttons = FILTERS.map(function (f) {
    var button = el("button", {type: "button", "data-filter": f[0], "aria-pressed": f[0] === "all" ? "true" : "false"},
      f[1] + " ", el("span", {"class": "count"}, counts[f[0]]));
    button.addEventListener("click", function () { state.filter = f[0]; state.only = null; applyFilter(state); });
    return button;
  });
  var search = el("input", {type: "search", placeholder: "Filter by case id…", "aria-label": "filter by case id"});
  search.addEventListener("input", function () { state.search = search.value.toLowerCase(); applyFilter(state); });
  state.buttons = buttons;
  state.searchBox = search;
  state.focus = el("p", {"class": "focus", id: "case-focus", hidden: "hidden"});
  state.empty = el("p", {"class": "muted", id: "no-cases", hidden: "hidden"}, "No case matches this filter.");
  state.moreButton = el("button", {type: "button"});
  state.moreButton.addEventListener("click", function () { state.limit += PAGE_SIZE; applyFilter(state, true); });
  state.moreText = el("span");
  state.more = el("p", {"class": "more", id: "more-cases", hidden: "hidden"}, state.moreText, " ", state.moreButton);
  var head = ["Case", "Status"].concat(criteria, ["Runs", "Tokens", "Cost"]);
  var table = section("cases", "Cases", [el("div", {"class": "filters", role: "toolbar"}, buttons, search), state.focus,
    el("table", {"class": "grid cases", id: "case-table"}, el("thead", null, el("tr", null,
      head.map(function (h) { return el("th", null, h); }))), state.body), state.empty, state.more]);
  applyFilter(state);
  return table;
}

var CODES = {p: "passed", f: "failed", n: "not_evaluated", e: "error"};
// Each run's outcome comes with the case's head (html_pack.run_outcome): a square per run without its scores.
function runOutcome(c, i) { return CODES[c.outcomes.charAt(i)] || "error"; }

function caseRow(c, criteria, state) {
  var cells = criteria.map(function (n) {
    var m = c.metrics[n], cmp = c.compared[n];
    if (!m) return el("td", {"class": "num muted"}, "—");
    var flaky = c.flaky.indexOf(n) >= 0;
    return el("td", {"class": "num s-" + m.status, "data-criterion": n, title: m.reason || null}, fmt(m.score),
      flaky ? el("div", {"class": "flaky-mark", title: "its runs disagreed on pass/fail"}, "🎲 flaky") : null,
      cmp && cmp.verdict !== "unchanged" ? el("div", null, verdictBadge(cmp.verdict, cmp.gating)) : null);
  });
  var runs = el("td", {"class": "runs"}, c.outcomes.split("").map(function (code, i) {
    var outcome = runOutcome(c, i);
    return el("span", {"class": "dot s-" + outcome, title: "run " + (i + 1) + ": " + (STATUS_LABELS[outcome] || outcome)});
  }));
  var tokens = c.usage[0], cost = c.usage[1];
  var toggle = el("button", {type: "button", "class": "toggle", "aria-expanded": "false"}, "▸");
  var row = el("tr", {"class": "case", "data-case": c.key, "data-tags": c.tags.join(" ")},
    el("td", {"class": "case-id"}, toggle, " ", el("span", {"class": "id"}, c.eval_id),
      el("div", {"class": "muted"}, c.agent + " / " + c.eval_set_id)),
    el("td", null, statusBadge(c.status)), cells, runs,
    el("td", {"class": "num"}, tokens ? tokens.toLocaleString("en-US") : "—"),
    el("td", {"class": "num"}, cost === null ? "—" : "$" + cost.toFixed(4)));
  row.addEventListener("click", function (event) {
    if (event.target.closest("a, input")) return;
    toggleDetail(row, c, state);
  });
  return row;
}

function toggleDetail(row, c, state) {
  var toggle = row.querySelector(".toggle");
  var detail = state.detailRows[c.index];
  if (detail) {
    detail.hidden = !detail.hidden;
  } else {
    var cell = el("td", {colspan: state.columns});
    detail = el("tr", {"class": "detail", "data-detail-for": c.key}, cell);
    state.detailRows[c.index] = detail;
    var k = partOf(state, c);
    if (state.loaded[k]) {
      append(cell, renderDetail(fullCase(state, c)));
    } else {  // opened before its part was unpacked: built as soon as it is, that part first
      append(cell, el("p", {"class": "muted"}, "Loading this case's runs…"));
      detailPart(state, k).then(function () {
        cell.textContent = "";
        append(cell, renderDetail(fullCase(state, c)));
      });
    }
    row.parentNode.insertBefore(detail, row.nextSibling);
  }
  toggle.textContent = detail.hidden ? "▸" : "▾";
  toggle.setAttribute("aria-expanded", detail.hidden ? "false" : "true");
  row.classList.toggle("open", !detail.hidden);
}
