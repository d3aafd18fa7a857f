"""report.html: one self-contained page per run (docs/report-html.md).

The page is a fixed script and style sheet (report/assets/) plus the run's data, embedded as JSON in
`<script type="application/json" id="adk-eval-gate-data">`, packed in compressed parts so that 10,000 cases
stay a small page that draws its first screen at once (report/html_pack.py). Nothing is fetched: a
Content-Security-Policy of `default-src 'none'` with the hashes of the page's own script and style is what lets it
open from a downloaded artifact over file://, offline, and what keeps any markup that slipped into the data from
running. The script builds the page with createElement/textContent only, and numbers are formatted there from
raw values, so a number and the sentence beside it are always the same number.

The embedded data, version 1 (every field always present; null where there is nothing):

    {"version": 1, "title": str,
     "verdict": {"state": "pass"|"fail"|"none", "reason": str, "failures": [str], "overridden": bool,
                 "no_baseline": bool, "warnings": [str], "fail_on": [str]},
     "run": {"sha", "ref", "config_file", "tool_version", "adk_semantics", "started_at", "finished_at",
             "duration_seconds", "interrupted", "stop_reason", "spend": str, "run_url", "report_url"},
     "baseline": {"source", "sha", "created_at", "age_days", "tool_version", "exact_base"} | null,
     "counts": {"total", "passed", "failed", "not_evaluated", "error", "not_run"},
     "budget": {"max_cost_usd", "spent_usd", "not_run"} | null,
     "verdicts": [{"scope": "pooled"|"eval_set", "key": "agent/eval set/criterion" ("agent/*/criterion" when
                   pooled), "agent", "eval_set_id" (null when pooled), "criterion", "baseline", "current", "delta",
                   "estimate", "verdict", "reason", "p_value", "baseline_pass_rate", "current_pass_rate",
                   "cases_compared", "eval_sets_compared", "gating", "cases": ["agent/eval set/case"] (a
                   regressed verdict: the cases whose score on its criterion dropped; else empty)}],
     "efficiency": [comparison.EfficiencyRow as JSON],
     "drift": [{"key": "drift:agent/criterion", "agent", "criterion", "verdict", "gating", "cases": [case key]
                (a regressed drift test: the cases whose share of passing samples fell; else empty), "began"}],
     "eval_sets": [{"key": "agent/eval set", "agent", "eval_set_id", "file", "target", "num_runs",
                    "adaptive_runs": {"min", "max"} | null, "criteria": {name: threshold}, "counts",
                    "means": {name: mean case score | null}}],
     "cases": [{"key": "agent/eval set/case", "agent", "eval_set_id", "eval_id", "status", "reason",
                "tags": ["regressed", "failed", "flaky", "changed", "error", "not_run"] (those that apply;
                        "regressed" also for a case behind a regressed verdict, "flaky" when "flaky" is not empty),
                "flaky": [criterion] (those whose runs disagreed on pass/fail: results.flakiness),
                "metrics": {criterion: {"score", "threshold", "status", "reason", "cause",
                            "runs": [null (the agent errored) | [score, status code, [[turn score, status code,
                                     votes?]], reason?]]}},
                "compared": {criterion: {"baseline", "current", "delta", "estimate", "verdict", "reason" (a
                             text), "p_value", "gating"}},
                "expected": [turn] | null,
                "runs": [[run, error, duration_seconds, usage | null, [turn] | null]],
                "sampling": results.Sampling as JSON | null}],
     "texts": [str], "pass_k": [per eval set: report/html_pass_k.py],
     "history": [{"sha": str, "date": str, "criteria": {"agent/eval set/criterion": mean case score},
                  "changed"?: str (what changed besides the code since the record before)}] | null}

    turn = [user, response, [[tool name, args JSON], ...]]
    usage = [input_tokens, output_tokens, model_calls, tool_calls, latency_seconds, cost_usd]

User texts, responses, votes (a judge's detail per turn), per-run reasons and the compared rows' reasons are
indexes into "texts", where each distinct text is stored once; a "?" item is left out when empty. Status codes:
p passed, f failed, n not_evaluated, e error. html_cases.expand_case gives a case its named fields back, as the
page's script does. The page embeds this data packed (html_pack.pack); `embedded_data` gives it back in this
shape. Texts longer than html_cases.TEXT_LIMIT characters are cut (the cut says so); results.json keeps them whole.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from adk_eval_gate.baseline.comparison_format import Comparison, PooledSummary, Row, Summary
from adk_eval_gate.core.clip import clip, short_sha
from adk_eval_gate.core.redaction import redact
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.report.html_cases import Texts, case_data, cases_behind, eval_set_data
from adk_eval_gate.report.html_pack import pack, unpack
from adk_eval_gate.report.html_pass_k import pass_k_data
from adk_eval_gate.report.provenance_line import changed_line
from adk_eval_gate.report.spend import spend_line
from adk_eval_gate.results.results_format import ResultsFile

DATA_VERSION = 1
ASSETS = Path(__file__).parent / "assets"
DATA_ID = "adk-eval-gate-data"

# Inside <script>, only `</script` (and `<!--`) can end the element early; escaping every <, > and & makes that
# impossible whatever the text, and U+2028/9 are escaped for readers that still treat them as line ends.
_JSON_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_ESCAPE_TABLE = str.maketrans(_JSON_ESCAPES)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def embed_json(data: Any) -> str:
    """JSON that is safe between <script> tags and parses back to `data` (JSON.parse has no NaN: null)."""
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    # Secrets are masked here, while they still read as the JSON-escaped forms redaction knows: after the
    # escaping below a secret holding <, > or & would no longer match when the file is written.
    return redact(text).translate(_ESCAPE_TABLE)


def _verdicts(comparison: Comparison, behind: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    rows = []
    for p in comparison.pooled:
        rows.append(
            {
                "scope": "pooled",
                "key": f"{p.agent}/*/{p.criterion}",
                "agent": p.agent,
                "eval_set_id": None,
                "criterion": p.criterion,
                "cases_compared": p.cases_compared,
                "eval_sets_compared": p.eval_sets_compared,
                "cases": behind.get(f"{p.agent}/*/{p.criterion}", []),
                **_numbers(p),
            }
        )
    for s in comparison.summaries:
        rows.append(
            {
                "scope": "eval_set",
                "key": f"{s.agent}/{s.eval_set_id}/{s.criterion}",
                "agent": s.agent,
                "eval_set_id": s.eval_set_id,
                "criterion": s.criterion,
                "cases_compared": s.cases_compared,
                "eval_sets_compared": None,
                "cases": behind.get(f"{s.agent}/{s.eval_set_id}/{s.criterion}", []),
                **_numbers(s),
            }
        )
    return rows


def _drift(comparison: Comparison, behind: Mapping[str, list[str]]) -> list[dict[str, Any]]:
    rows = comparison.history.drift if comparison.history else []
    return [
        {
            "key": f"drift:{d.agent}/{d.criterion}",
            "agent": d.agent,
            "criterion": d.criterion,
            "verdict": d.verdict,
            "gating": d.gating,
            "cases": behind.get(f"drift:{d.agent}/{d.criterion}", []),
            "began": d.began.model_dump(mode="json") if d.began else None,  # where the slide began
        }
        for d in rows
    ]


def _numbers(row: Summary | PooledSummary) -> dict[str, Any]:
    return {name: getattr(row, name) for name in (*_NUMBERS, *_NUMBERS_PASS)}


# a verdict row's fields the page reads as they are in the comparison file
_NUMBERS = ("baseline", "current", "delta", "estimate", "verdict", "reason", "p_value")
_NUMBERS_PASS = ("baseline_pass_rate", "current_pass_rate", "gating")


def _verdict(comparison: Comparison | None) -> dict[str, Any]:
    if comparison is None:
        return {
            "state": "none",
            "reason": "no comparison with a baseline was made for these results",
            "failures": [],
            "overridden": False,
            "no_baseline": True,
            "warnings": [],
            "fail_on": [],
        }
    gate = comparison.gate
    return {
        "state": comparison.verdict,
        "reason": gate.reason,
        "failures": [f.text for f in gate.failures],
        "overridden": gate.overridden,
        "no_baseline": comparison.baseline is None,
        "warnings": comparison.warnings,
        "fail_on": gate.fail_on,
    }


def _history(records: Iterable[Mapping[str, Any]] | None) -> list[dict[str, Any]] | None:
    """Only well-formed records, oldest first: the history comes from elsewhere and must not break the page."""
    if records is None:
        return None
    kept = []
    for record in records:
        if not isinstance(record, Mapping) or not isinstance(record.get("criteria"), Mapping):
            continue
        means = {
            str(k): float(v)
            for k, v in record["criteria"].items()
            if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v and abs(v) != float("inf")
        }
        kept.append({"sha": str(record.get("sha") or ""), "date": str(record.get("date") or ""), "criteria": means})
        if changed := record.get("changed"):  # the record's judge, served model or scorers changed (a mark)
            kept[-1]["changed"] = clip(str(changed), 600)
    kept.sort(key=lambda r: str(r["date"]))
    return kept or None


def report_data(
    results: ResultsFile,
    comparison: Comparison | None = None,
    expected_cases: Mapping[tuple[str, str, str], list[Invocation]] | None = None,
    history: Iterable[Mapping[str, Any]] | None = None,
    *,
    run_url: str | None = None,
    report_url: str | None = None,
) -> dict[str, Any]:
    """The page's data (the shape in this module's docstring)."""
    texts = Texts()
    cases = _cases(results, comparison, expected_cases or {}, texts)
    behind = cases_behind(comparison) if comparison else {}
    base = comparison.baseline if comparison else None
    verdict = _verdict(comparison)
    if results.offline:  # said first on the page, as in the comment: these scores say nothing of the model
        verdict["warnings"] = [results.offline, *verdict["warnings"]]
    if comparison is not None and (changed := changed_line(comparison.changed)):  # first, as in the comment
        verdict["warnings"] = [changed, *verdict["warnings"]]
    sha = short_sha(results.git.sha)
    return {
        "version": DATA_VERSION,
        "title": f"adk-eval-gate {verdict['state'] if verdict['state'] != 'none' else 'results'}"
        + (f" · {sha}" if sha else ""),
        "verdict": verdict,
        "run": _run(results, run_url, report_url),
        "baseline": base.model_dump(mode="json") if base else None,
        "counts": results.summary.model_dump(mode="json"),
        "budget": results.budget.model_dump(mode="json", include={"max_cost_usd", "spent_usd", "not_run"})
        if results.budget
        else None,
        "verdicts": _verdicts(comparison, behind) if comparison else [],
        "efficiency": [e.model_dump(mode="json") for e in comparison.efficiency] if comparison else [],
        "drift": _drift(comparison, behind) if comparison else [],
        "eval_sets": [eval_set_data(s) for s in results.eval_sets],
        "cases": cases,
        "texts": texts.values(),
        "pass_k": pass_k_data(results, comparison),
        "history": _history(history),
    }


def _cases(
    results: ResultsFile,
    comparison: Comparison | None,
    expected_cases: Mapping[tuple[str, str, str], list[Invocation]],
    texts: Texts,
) -> list[dict[str, object]]:
    """Every case of the run with its compared rows, its expected turns and whether a failing verdict is behind it."""
    rows: dict[tuple[str, str, str], dict[str, Row]] = {}
    for row in comparison.rows if comparison else []:
        rows.setdefault((row.agent, row.eval_set_id, row.eval_id), {})[row.criterion] = row
    behind = cases_behind(comparison) if comparison else {}
    behind_any = {case for keys in behind.values() for case in keys}
    return [
        case_data(eval_set, case, rows.get(key, {}), expected_cases.get(key), texts, "/".join(key) in behind_any)
        for eval_set in results.eval_sets
        for case in eval_set.cases
        for key in [(eval_set.agent, eval_set.eval_set_id, case.eval_id)]
    ]


def _run(results: ResultsFile, run_url: str | None, report_url: str | None) -> dict[str, object]:
    return {
        "sha": results.git.sha,
        "ref": results.git.ref,
        "config_file": results.config_file,
        "tool_version": results.tool.version,
        "adk_semantics": results.tool.adk_semantics,
        "started_at": results.timings.started_at,
        "finished_at": results.timings.finished_at,
        "duration_seconds": results.timings.duration_seconds,
        "interrupted": results.interrupted,
        "stop_reason": results.stop_reason,
        "spend": spend_line(results),
        "run_url": run_url,
        "report_url": report_url,
    }


def embedded_data(page: str) -> dict[str, Any]:
    """The data a rendered page embeds, unpacked to the documented shape (for scripts and tests that read a page
    back)."""
    opening = f'<script type="application/json" id="{DATA_ID}">'
    start = page.index(opening) + len(opening)
    return unpack(json.loads(page[start : page.index("</script>", start)]))


def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


def page_script() -> str:
    """The script files in one function scope: nothing they define leaks onto `window`."""
    scripts = "\n".join(
        _asset(name) for name in ("data.js", "case.js", "cases.js", "filters.js", "reliability.js", "report.js")
    )
    return '(function () {\n"use strict";\n' + scripts + "\n})();\n"


def _sha256(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def render_page(data: Mapping[str, Any]) -> str:
    """The whole page: shell, style, data and script in one file."""
    script, style = page_script(), _asset("report.css")
    # The favicon is an empty data: URL, so the browser asks the network for nothing, not even /favicon.ico.
    csp = (
        f"default-src 'none'; script-src {_sha256(script)}; style-src {_sha256(style)}; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n<link rel="icon" href="data:,">\n'
        f"<title>{html.escape(str(data.get('title', 'adk-eval-gate')))}</title>\n"
        f"<style>{style}</style>\n</head>\n<body>\n"
        "<noscript>This report needs JavaScript; the same data is in results.json and comparison.json.</noscript>\n"
        '<main id="app" aria-live="polite"></main>\n'
        f'<script type="application/json" id="{DATA_ID}">{embed_json(pack(data, embed_json))}</script>\n'
        f"<script>{script}</script>\n</body>\n</html>\n"
    )


def render_html(
    results: ResultsFile,
    comparison: Comparison | None = None,
    expected_cases: Mapping[tuple[str, str, str], list[Invocation]] | None = None,
    history: Iterable[Mapping[str, Any]] | None = None,
    *,
    run_url: str | None = None,
    report_url: str | None = None,
) -> str:
    return render_page(
        report_data(results, comparison, expected_cases, history, run_url=run_url, report_url=report_url)
    )


def write_report_html(
    folder: Path,
    results: ResultsFile,
    comparison: Comparison | None = None,
    expected_cases: Mapping[tuple[str, str, str], list[Invocation]] | None = None,
    history: Iterable[Mapping[str, Any]] | None = None,
    *,
    run_url: str | None = None,
    report_url: str | None = None,
) -> Path:
    from adk_eval_gate.core.files import write_text_atomic
    from adk_eval_gate.report.run_marks import mark_html

    path = folder / "report.html"
    page = render_html(results, comparison, expected_cases, history, run_url=run_url, report_url=report_url)
    write_text_atomic(path, mark_html(page, results.run_id))
    return path


def artifacts_url(run_url: str | None) -> str | None:
    """Where a run's artifacts are listed: its page's #artifacts. Only ever built from the runner's own
    GITHUB_SERVER_URL / GITHUB_REPOSITORY / GITHUB_RUN_ID (or the API's run URL checked against the server),
    never from anything a pull request wrote."""
    return f"{run_url}#artifacts" if run_url else None


def summary_note(path: Path) -> str:
    """The step summary's pointer to the page (the comment links the run's artifacts instead)."""
    return (
        f"\n📄 **Full report**: `{path.as_posix()}`, in this run's artifacts (the example workflows upload the "
        f"output folder as `adk-eval-gate-report`): download and open it in a browser, or run "
        f"`adk-eval-gate view {path.parent.as_posix()}`.\n"
    )
