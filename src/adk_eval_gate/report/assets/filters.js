// Which case rows show: the filter buttons and the search (cases.js builds them), and a verdict's own cases,
// reached from the banner (eval-set, pooled, case and drift regressions) or the verdicts table.

// A verdict leads to the cases behind it: the link shows exactly those, under the filter its verdict belongs to, so
// a regression the page names is never "No case matches".
function casesLink(state, label, keys, verdict) {
  if (!keys || !keys.length) return null;
  var link = el("a", {href: "#cases", "class": "cases-link", "data-cases-for": label},
    keys.length === 1 && keys[0] === label.split(" · ")[0] ? "→ the case" :
      "→ the " + keys.length + " case" + (keys.length > 1 ? "s" : "") + " whose score dropped");
  link.addEventListener("click", function () {
    state.filter = verdict === "regressed" ? "regressed" : "all";
    var set = Object.create(null);
    keys.forEach(function (k) { set[k] = true; });
    state.only = {keys: set, label: label};
    state.search = "";
    if (state.searchBox) state.searchBox.value = "";
    applyFilter(state);
  });
  return link;
}

// The drift test a failure line is about (the gate words it "drift: <agent> <criterion> since …"), when it has cases.
function driftOf(data, failure) {
  return data.drift.filter(function (d) {
    return d.cases.length && failure.indexOf("drift: " + d.agent + " " + d.criterion + " ") === 0;
  })[0] || null;
}

function matches(state, c) {
  return (state.filter === "all" || c.tags.indexOf(state.filter) >= 0) &&
    (!state.only || state.only.keys[c.key] === true) &&
    (!state.search || c.key.toLowerCase().indexOf(state.search) >= 0);
}

// Decides over every case's data, then shows the first `state.limit` that match (`more`: the reader asked for the
// next page, so the limit stays); a case's drill-down stays open or closed as the reader left it.
function applyFilter(state, more) {
  if (!more) state.limit = PAGE_SIZE;
  var matching = state.order.filter(function (i) { return matches(state, state.cases[i]); });
  state.body.textContent = "";
  matching.slice(0, state.limit).forEach(function (i) {
    var row = state.rows[i] || (state.rows[i] = caseRow(state.cases[i], state.criteria, state));
    state.body.appendChild(row);
    if (state.detailRows[i]) state.body.appendChild(state.detailRows[i]);
  });
  var shown = matching.length, left = shown - Math.min(shown, state.limit);
  state.buttons.forEach(function (b) {
    b.setAttribute("aria-pressed", b.getAttribute("data-filter") === state.filter ? "true" : "false");
  });
  state.empty.hidden = shown > 0;
  state.more.hidden = left === 0;
  state.moreText.textContent = "Showing " + (shown - left).toLocaleString("en-US") + " of the " +
    shown.toLocaleString("en-US") + " matching cases.";
  state.moreButton.textContent = "Show " + Math.min(left, PAGE_SIZE) + " more";
  state.focus.hidden = !state.only;
  state.focus.textContent = state.only ? "Showing the " + shown + " case" + (shown === 1 ? "" : "s") + " behind " +
    state.only.label + "; choose a filter to see the others." : "";
}
