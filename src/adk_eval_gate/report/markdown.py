"""The pull-request report: rendered from jinja2 templates (users may override them), built to a size budget.

Order of importance: the verdict and why; the summary table; regressions with their evidence (expected vs actual
tool calls with the first divergence marked, a response diff, the reason); improvements; everything else,
collapsed. When the comment would pass the budget, the least important parts go first, and the report says where
the full version is.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import jinja2
from google.genai import types as genai_types
from jinja2.sandbox import SandboxedEnvironment

from adk_eval_gate.baseline.comparison_format import Comparison, PooledSummary, Row, Summary
from adk_eval_gate.core.clip import clip, masked_lines
from adk_eval_gate.core.contained_templates import ContainedLoader
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text, tool_calls
from adk_eval_gate.gate.evidence import non_gating_regressions, regression_cases
from adk_eval_gate.gate.outcome import subject_of
from adk_eval_gate.handshake.limits import BUDGET
from adk_eval_gate.report.efficiency_line import efficiency_line
from adk_eval_gate.report.escape import code_block, html_text, inline
from adk_eval_gate.report.provenance_line import changed_line
from adk_eval_gate.report.spend import spend_line
from adk_eval_gate.results.missing import missing_judged_line
from adk_eval_gate.results.results_format import ResultsFile

CUT = "\n… (cut)"
TEMPLATES = Path(__file__).parent / "templates"


@dataclass
class Evidence:
    row: Row
    trajectory: str | None  # a code block: expected vs actual calls, first divergence marked
    response_diff: str | None
    rationale: str


def _call_text(call: genai_types.FunctionCall) -> str:
    return f"{call.name}({json.dumps(call.args, sort_keys=True, ensure_ascii=False) if call.args is not None else ''})"


def trajectory_block(expected: Sequence[genai_types.FunctionCall], actual: Sequence[genai_types.FunctionCall]) -> str:
    lines = []
    divergence = next(
        (i for i, (e, a) in enumerate(zip(expected, actual, strict=False)) if _call_text(e) != _call_text(a)),
        min(len(expected), len(actual)) if len(expected) != len(actual) else None,
    )
    for i in range(max(len(expected), len(actual))):
        e = _call_text(expected[i]) if i < len(expected) else "—"
        a = _call_text(actual[i]) if i < len(actual) else "—"
        mark = "  ← first divergence" if i == divergence else ""
        lines.append(f"{i + 1}. expected {e}\n   actual   {a}{mark}")
    return code_block("\n".join(lines) or "no tool calls on either side")


def response_diff(expected: str, actual: str, limit: int = 1200) -> str | None:
    if expected == actual:
        return None
    # Masked before the split into lines (a secret spanning lines would lose its shape to the diff's `+`/`-`)
    # and before the cut (`clip`), which must not leave a secret's first half.
    diff = "\n".join(
        difflib.unified_diff(masked_lines(expected), masked_lines(actual), "expected", "actual", lineterm="", n=1)
    )
    return code_block(clip(diff, limit + len(CUT), CUT), "diff")


def evidence_for(row: Row, results: ResultsFile, expected_cases: dict[CaseKey, list[Invocation]]) -> Evidence:
    case = next(
        (
            c
            for s in results.eval_sets
            if (s.agent, s.eval_set_id) == (row.agent, row.eval_set_id)
            for c in s.cases
            if c.eval_id == row.eval_id
        ),
        None,
    )
    expected = expected_cases.get(CaseKey(row.agent, row.eval_set_id, row.eval_id), [])
    trajectory = diff = None
    run = next((r for r in (case.runs if case else []) if r.actual_invocations), None)
    if run and expected:
        actual = [Invocation.model_validate(i) for i in run.actual_invocations or []]
        turn = next(
            (
                i
                for i, (e, a) in enumerate(zip(expected, actual, strict=False))
                if [_call_text(c) for c in tool_calls(e.intermediate_data)]
                != [_call_text(c) for c in tool_calls(a.intermediate_data)]
                or content_text(e.final_response) != content_text(a.final_response)
            ),
            0,
        )
        if turn < len(actual) and turn < len(expected):
            e, a = expected[turn], actual[turn]
            if "trajectory" in row.criterion or "tool" in row.criterion:
                trajectory = trajectory_block(tool_calls(e.intermediate_data), tool_calls(a.intermediate_data))
            diff = response_diff(content_text(e.final_response), content_text(a.final_response))
    return Evidence(row, trajectory, diff, row.reason)


def environment(template_dir: Path | None) -> SandboxedEnvironment:
    loaders: list[jinja2.BaseLoader] = [jinja2.FileSystemLoader(str(TEMPLATES))]
    if template_dir is not None:
        loaders.insert(0, ContainedLoader(str(template_dir)))  # the pull request's folder: nothing outside it
    # Sandboxed: an override is the pull request's file, rendered in the process that holds GitHub's token, and a
    # plain template can reach any Python object (`cycler.__init__.__globals__`).
    env = SandboxedEnvironment(
        loader=jinja2.ChoiceLoader(loaders),
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["inline"] = inline
    env.filters["html_text"] = html_text
    env.filters["num"] = lambda v: "—" if v is None else f"{v:.3f}"
    env.filters["signed"] = lambda v: "—" if v is None else f"{v:+.3f}"
    env.filters["pct"] = lambda v: "—" if v is None else f"{v:.0%}"
    env.filters["mark"] = stability_mark
    return env


def stability_mark(row: Row) -> str:
    """What the history knows about a case, beside its name: 🎲 flaky, ⛔ broken on the default branch."""
    mark = {"flaky": " 🎲", "broken": " ⛔"}.get(row.stability or "", "")
    return mark + (" (quarantined)" if row.quarantined else "")


_ORDER = {"regressed": 0, "inconclusive": 2, "error": 3, "not_comparable": 3, "improved": 4}


def _importance(summary: Summary | PooledSummary) -> int:
    """Gating regressions, then other regressions, unconfirmed drops, errors, improvements, the rest (a stable sort
    keeps the eval sets' own order within each)."""
    if summary.verdict == "regressed":
        return 0 if summary.gating else 1
    return 2 if getattr(summary, "unconfirmed", False) else _ORDER.get(summary.verdict, 5)


@dataclass(frozen=True)
class CommentPlace:
    """Where the comment stands, besides the comparison it renders: the run's links, the commit, a template folder
    the config names, the size budget, where the full report is, and one line on who asked (escaped like agent
    text)."""

    run_url: str | None = None
    head_sha: str | None = None
    template_dir: Path | None = None
    budget: int = BUDGET
    full_report_hint: str = "the full report, report.html, is in the workflow run's artifacts"
    report_url: str | None = None
    note: str | None = None


# detail levels, most complete first; each drops the least important remaining part ("rows"/"sets" None: all)
_LEVELS: tuple[dict[str, int | bool | None], ...] = (
    {"evidence": None, "improvements": True, "others": True, "rows": None, "sets": None},
    {"evidence": None, "improvements": True, "others": False, "rows": None, "sets": None},
    {"evidence": None, "improvements": False, "others": False, "rows": None, "sets": None},
    {"evidence": 10, "improvements": False, "others": False, "rows": None, "sets": 500},
    {"evidence": 3, "improvements": False, "others": False, "rows": None, "sets": 200},
    {"evidence": 0, "improvements": False, "others": False, "rows": 200, "sets": 100},
    {"evidence": 0, "improvements": False, "others": False, "rows": 20, "sets": 20},
)


def render_report(
    comparison: Comparison,
    results: ResultsFile,
    expected_cases: dict[CaseKey, list[Invocation]],
    place: CommentPlace = CommentPlace(),
) -> str:
    """The PR comment: the most complete detail level that fits `place.budget`, else the last one cut at a line."""
    template = environment(place.template_dir).get_template("comment.md.j2")
    parts = _CommentParts.of(comparison, results, expected_cases)
    text = ""
    for index, level in enumerate(_LEVELS):
        text = template.render(**parts.at(level, truncated=index > 0), **_around(comparison, results, place))
        if len(text) <= place.budget:
            return text
    cut = clip(text, place.budget - 200, marker="")
    hint = inline(place.full_report_hint)
    return cut[: cut.rfind("\n")] + f"\n\n… the report was cut to fit GitHub's limit; {hint}.\n"


@dataclass(frozen=True)
class _CommentParts:
    """What the comment shows of a comparison, each part cut to a detail level by `at`."""

    regressions: list[Row]
    not_gating: list[Row]
    improvements: list[Row]
    others: list[Row]
    evidence: list[Evidence]
    summaries: list[Summary]
    quarantined: int

    @classmethod
    def of(
        cls, comparison: Comparison, results: ResultsFile, expected_cases: dict[CaseKey, list[Invocation]]
    ) -> _CommentParts:
        regressions = regression_cases(comparison)
        not_gating = non_gating_regressions(comparison)
        shown = {subject_of(r) for r in [*regressions, *not_gating]}
        return cls(
            regressions=regressions,
            not_gating=not_gating,
            improvements=[r for r in comparison.rows if r.verdict == "improved"],
            others=[r for r in comparison.rows if r.verdict != "improved" and subject_of(r) not in shown],
            evidence=[evidence_for(r, results, expected_cases) for r in regressions],
            # The eval-set table, what failed first: with many eval sets it is the comment's largest part, and
            # what it leaves out must never be a regression while a quiet row is shown.
            summaries=sorted(comparison.summaries, key=_importance),
            quarantined=len({(r.agent, r.eval_set_id, r.eval_id) for r in comparison.rows if r.quarantined}),
        )

    def at(self, level: dict[str, int | bool | None], *, truncated: bool) -> dict[str, object]:
        evidence = len(self.evidence) if level["evidence"] is None else int(level["evidence"])
        sets = len(self.summaries) if level["sets"] is None else int(level["sets"])
        rows = len(self.regressions) + 1 if level["rows"] is None else int(level["rows"])
        improvements, others = bool(level["improvements"]), bool(level["others"])
        return {
            "regressions": self.regressions,
            "not_gating": self.not_gating,
            "evidence": self.evidence[:evidence],
            "hidden_evidence": max(0, len(self.evidence) - evidence),
            "improvements": self.improvements if improvements else [],
            "hidden_improvements": 0 if improvements else len(self.improvements),
            "others": self.others if others else [],
            "hidden_others": 0 if others else len(self.others),
            "rows_limit": rows,
            "summaries": self.summaries[:sets],
            "hidden_summaries": self.summaries[sets:],
            "truncated": truncated,
            "quarantined_cases": self.quarantined,
            "flaky_limit": 30 if others else 10,
        }


def _around(comparison: Comparison, results: ResultsFile, place: CommentPlace) -> dict[str, object]:
    """What the comment says around the comparison's rows: the run, its spend, its links, the first line."""
    return {
        "c": comparison,
        "results": results,
        "efficiency": efficiency_line(c for s in results.eval_sets for c in s.cases),
        "run_url": place.run_url,
        "head_sha": place.head_sha,
        "full_report_hint": place.full_report_hint,
        "spend": spend_line(results),
        "missing_judged": missing_judged_line(results),
        "report_url": place.report_url,
        "note": place.note,
        "changed_line": changed_line(comparison.changed),
    }
