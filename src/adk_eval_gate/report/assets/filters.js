// Which case rows show: the filter buttons and the search (report.js builds them), and a verdict's own cases,
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
    state.only = {keys: keys, label: label};
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

function applyFilter(state) {
  var shown = 0;
  Array.prototype.forEach.call(state.body.children, function (row) {
    if (!row.classList.contains("case")) return;
    var tags = row.getAttribute("data-tags").split(" ");
    var visible = (state.filter === "all" || tags.indexOf(state.filter) >= 0) &&
      (!state.only || state.only.keys.indexOf(row.getAttribute("data-case")) >= 0) &&
      (!state.search || row.getAttribute("data-case").toLowerCase().indexOf(state.search) >= 0);
    row.hidden = !visible;
    var next = row.nextSibling;
    if (next && next.classList.contains("detail")) next.hidden = !visible || !row.classList.contains("open");
    if (visible) shown++;
  });
  state.buttons.forEach(function (b) {
    b.setAttribute("aria-pressed", b.getAttribute("data-filter") === state.filter ? "true" : "false");
  });
  state.empty.hidden = shown > 0;
  state.focus.hidden = !state.only;
  state.focus.textContent = state.only ? "Showing the " + shown + " case" + (shown === 1 ? "" : "s") + " behind " +
    state.only.label + "; choose a filter to see the others." : "";
}
