// The page's data arrives packed (report/html_pack.py): gzip-compressed JSON parts in base64. The browser's own
// DecompressionStream reads them, so nothing is fetched and no script of ours parses binary. "head" is what the
// first screen shows; "detail" is one part per `chunk` cases (every run's scores per turn, usage, turns, their
// texts), unpacked one at a time after the first frame, a part whose case is opened first.

function unpackPart(base64) {
  var bytes;
  if (typeof Uint8Array.fromBase64 === "function") {
    bytes = Uint8Array.fromBase64(base64);
  } else {
    var raw = atob(base64);
    bytes = new Uint8Array(raw.length);
    for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  }
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return new Response(stream).text().then(JSON.parse);
}

// Resolves once the first frame with content has been presented (Chromium's and Safari's paint timing report it
// after the fact; the work that follows would otherwise compete with drawing it), at once in a tab nobody sees,
// and after a wait where no paint timing comes.
function afterFirstFrame() {
  return new Promise(function (resolve) {
    var done = false;
    function go() { if (!done) { done = true; setTimeout(resolve, 0); } }
    var types = typeof PerformanceObserver === "function" ? PerformanceObserver.supportedEntryTypes || [] : [];
    if (document.visibilityState === "hidden" || types.indexOf("paint") < 0) {
      requestAnimationFrame(go);
      setTimeout(go, 250);
      return;
    }
    new PerformanceObserver(function (list, observer) {
      if (list.getEntriesByName("first-contentful-paint").length) { observer.disconnect(); go(); }
    }).observe({type: "paint", buffered: true});
    setTimeout(go, 3000);
  });
}

// The promise of detail part k, unpacked once; `state.loaded[k]` holds it when it has arrived.
function detailPart(state, k) {
  if (!state.parts[k]) {
    state.parts[k] = unpackPart(state.packed.detail[k]).then(function (part) { state.loaded[k] = part; return part; });
  }
  return state.parts[k];
}

// Every part in turn, yielding between them so that a click or a scroll is never kept waiting for long.
function loadParts(state) {
  var k = 0;
  function next() {
    if (k >= state.packed.detail.length) return Promise.resolve();
    return detailPart(state, k++).then(function () { return new Promise(function (r) { setTimeout(r, 0); }); }).then(next);
  }
  return next();
}

function partOf(state, c) { return Math.floor(c.index / state.packed.chunk); }

// A case's head and detail back to named fields, texts resolved, as html_cases.expand_case does.
var USAGE = ["input_tokens", "output_tokens", "model_calls", "tool_calls", "latency_seconds", "cost_usd"];
function fullCase(state, c) {
  var part = state.loaded[partOf(state, c)];
  var d = part.cases[c.index % state.packed.chunk], texts = part.texts, reasons = state.reasons;
  function text(i) { return i === null || i === undefined ? null : texts[i]; }
  function turn(t) {
    return {user: text(t[0]) || "", response: text(t[1]) || "", tools: t[2].map(function (k) { return {name: k[0], args: k[1]}; })};
  }
  var full = {};
  Object.keys(c).forEach(function (k) { full[k] = c[k]; });
  full.metrics = {};
  Object.keys(c.metrics).forEach(function (n) {
    var m = {};
    Object.keys(c.metrics[n]).forEach(function (k) { m[k] = c.metrics[n][k]; });
    m.runs = d[0][n].map(function (r) {
      return r === null ? null : {score: r[0], status: CODES[r[1]], reason: text(r[3]),
        turns: r[2].map(function (t) { return [t[0], CODES[t[1]], text(t[2])]; })};
    });
    full.metrics[n] = m;
  });
  full.compared = {};
  Object.keys(c.compared).forEach(function (n) {
    var r = {};
    Object.keys(c.compared[n]).forEach(function (k) { r[k] = c.compared[n][k]; });
    r.reason = r.reason === null ? null : reasons[r.reason];
    full.compared[n] = r;
  });
  full.expected = d[1] ? d[1].map(turn) : null;
  full.runs = d[2].map(function (r) {
    var usage = null;
    if (r[3]) { usage = {}; USAGE.forEach(function (k, i) { usage[k] = r[3][i]; }); }
    return {run: r[0], error: r[1], duration_seconds: r[2], usage: usage, turns: r[4] ? r[4].map(turn) : null};
  });
  full.sampling = d[3];
  return full;
}
