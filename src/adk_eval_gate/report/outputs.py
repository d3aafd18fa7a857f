"""The other places a result shows up on GitHub: the step summary, job outputs, JUnit XML, annotations and the
verdict lines of the job log.

Paths in JUnit and annotations are relative to the repository root, as GitHub and test reporters resolve them.
An annotation is an `::error` only for a case that made the gate fail; a case that failed or regressed without
gating is a `::warning` or `::notice`, so the run's summary never shows errors on a passing check.
"""

from __future__ import annotations

import json
import re
import uuid
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.core.clip import clip_utf8, clip_words
from adk_eval_gate.core.files import append_text
from adk_eval_gate.core.keys import CaseKey
from adk_eval_gate.core.paths import file_from_root
from adk_eval_gate.core.printable import printable
from adk_eval_gate.core.redaction import redact
from adk_eval_gate.gate.evidence import non_gating_regressions, regression_cases
from adk_eval_gate.gate.wording import accepted_by, kind_label, line_lead
from adk_eval_gate.github.workflow_commands import annotation, one_line
from adk_eval_gate.report.provenance_line import changed_line
from adk_eval_gate.results.results_format import ResultsFile

STEP_SUMMARY_LIMIT = 1024 * 1024


def write_step_summary(path: Path, markdown: str) -> None:
    masked = redact(printable(markdown))  # no escape code splits a secret from the mask, nor reaches the page
    text = clip_utf8(masked, STEP_SUMMARY_LIMIT - 1024)  # masked before the cut
    if text != masked:
        text = text.rsplit("\n", 1)[0] + "\n\n... cut to fit the 1 MiB step summary.\n"
    append_text(path, text + "\n")


def write_outputs(path: Path, values: dict[str, str]) -> None:
    """`name<<DELIMITER` blocks, so no value can forge another output."""
    blocks = []
    for name, value in values.items():
        delimiter = f"ghadelimiter_{uuid.uuid4()}"
        blocks.append(f"{name}<<{delimiter}\n{redact(printable(value))}\n{delimiter}\n")  # a later step prints it
    append_text(path, "".join(blocks))


def junit_xml(
    results: ResultsFile, comparison: Comparison | None = None, base_dir: Path | None = None, root: Path | None = None
) -> str:
    """Every text masked as it goes in: XML's escaping (`&amp;`, `&quot;`) would hide a secret from the writer's."""
    regressed = {
        (r.agent, r.eval_set_id, r.eval_id) for r in (comparison.rows if comparison else []) if r.verdict == "regressed"
    }
    suites = ET.Element("testsuites", name="adk-eval-gate")
    totals: Counter[str] = Counter()
    total_time = 0.0
    for eval_set in results.eval_sets:
        shown = file_from_root(base_dir or Path("."), eval_set.file, root if base_dir else None)
        suite = ET.SubElement(
            suites, "testsuite", name=redact(f"{eval_set.agent}/{eval_set.eval_set_id}"), file=redact(shown)
        )
        counts: Counter[str] = Counter()
        suite_time = 0.0
        for case in eval_set.cases:
            seconds = sum((r.duration_seconds or 0.0) for r in case.runs)
            suite_time += seconds
            counts["tests"] += 1
            element = ET.SubElement(
                suite,
                "testcase",
                classname=redact(f"{eval_set.agent}.{eval_set.eval_set_id}"),
                name=redact(case.eval_id),
                time=f"{seconds:.3f}",
                file=redact(shown),
            )
            scores = "; ".join(
                f"{n}={m.score if m.score is not None else 'n/a'} (threshold {m.threshold:g})"
                for n, m in case.metrics.items()
            )
            if case.status in ("error", "not_run"):  # a case the spending limit left out is no pass
                counts["errors"] += 1
                ET.SubElement(element, "error", message=redact(case.reason or case.status)).text = scores
            elif case.status == "failed" or (eval_set.agent, eval_set.eval_set_id, case.eval_id) in regressed:
                counts["failures"] += 1
                message = case.reason or "regressed against the baseline"
                ET.SubElement(element, "failure", message=redact(message)).text = scores
            elif case.status == "not_evaluated":
                counts["skipped"] += 1
                ET.SubElement(element, "skipped", message=redact(case.reason or "not evaluated"))
        for name in ("tests", "failures", "errors", "skipped"):
            suite.set(name, str(counts[name]))
        suite.set("time", f"{suite_time:.3f}")
        totals.update(counts)
        total_time += suite_time
    for name in ("tests", "failures", "errors", "skipped"):
        suites.set(name, str(totals[name]))
    suites.set("time", f"{total_time:.3f}")
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True)


def case_line(eval_set_file: Path, eval_id: str) -> int:
    """The line where a case's eval_id is written (1 when it cannot be found, e.g. legacy files)."""
    try:
        text = eval_set_file.read_text(encoding="utf-8")
    except OSError:
        return 1
    found = re.search(r'"(?:eval_id|evalId|name)"\s*:\s*' + re.escape(json.dumps(eval_id)), text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


def annotation_lines(
    results: ResultsFile, comparison: Comparison | None, base_dir: Path, root: Path | None
) -> list[str]:
    """One annotation on the eval set line of each failing, erroring or regressed case: `::error` when it made the
    gate fail, else `::warning` (a regression or an error that did not gate) or `::notice` (a failed threshold).
    The regressed cases are the ones the comment lists, chosen once in gate/evidence.py."""
    gate = comparison.gate if comparison else None
    failing = comparison is not None and comparison.verdict == "fail"
    fail_on = set(gate.fail_on) if gate else set()
    pass_rate_failed = failing and gate is not None and any(f.kind == "pass_rate" for f in gate.failures)
    regressions: dict[CaseKey, tuple[str, bool]] = {}
    behind = regression_cases(comparison) if comparison else []
    for row, gates in [
        *((r, failing) for r in behind),
        *((r, False) for r in (non_gating_regressions(comparison) if comparison else [])),
    ]:
        key = CaseKey(row.agent, row.eval_set_id, row.eval_id)
        if key not in regressions or (gates and not regressions[key][1]):
            regressions[key] = (f"{row.criterion}: {row.reason}", gates)
    lines = []
    for eval_set in results.eval_sets:
        absolute = (base_dir / eval_set.file).resolve()
        shown = file_from_root(base_dir, eval_set.file, root)
        for case in eval_set.cases:
            regression = regressions.get(CaseKey(eval_set.agent, eval_set.eval_set_id, case.eval_id))
            if case.status in ("error", "not_run"):  # a case the spending limit left out is no pass
                gates = failing and "error" in fail_on
                level, title, message = (
                    ("error" if gates else "warning"),
                    f"{case.eval_id} {case.status}",
                    case.reason or case.status,
                )
            elif regression:
                level, title, message = (
                    ("error" if regression[1] else "warning"),
                    f"{case.eval_id} regressed",
                    regression[0],
                )
            elif case.status == "failed":
                gates = failing and ("threshold" in fail_on or pass_rate_failed)
                level, title, message = (
                    ("error" if gates else "notice"),
                    f"{case.eval_id} failed",
                    case.reason or "failed",
                )
            else:
                continue
            if level != "error":
                title += " (not gating)"
            lines.append(
                annotation(level, one_line(message), file=shown, line=case_line(absolute, case.eval_id), title=title)
            )
    return lines


_NOUNS = {
    "below threshold": ("case below threshold", "cases below threshold"),
    "not evaluated": ("criterion not evaluated", "criteria not evaluated"),
    "not comparable": ("row not comparable", "rows not comparable"),
    "inconclusive": ("inconclusive comparison", "inconclusive comparisons"),
    "no baseline": ("no baseline", "no baseline"),
    "not run": ("case not run", "cases not run"),
    "unconfirmed": ("unconfirmed drop", "unconfirmed drops"),
}


def _counted(kind: str, n: int) -> str:
    singular, plural = _NOUNS.get(kind, (kind, kind + "s"))
    return f"{n} {singular if n == 1 else plural}"


def _why(comparison: Comparison) -> str:
    """`2 regressions (hello_world/dice trajectory …)`: what failed the gate, counted, and the first in full."""
    gate = comparison.gate
    if comparison.verdict == "pass" and not gate.overridden:
        return gate.reason
    kinds = Counter(kind_label(f) for f in gate.failures)
    counted = ", ".join(_counted(kind, n) for kind, n in kinds.items())
    # the first line after the lead gate/wording.py wrote on it (`regression: `): the lead is known, not read
    first = ""
    if gate.failures:
        head = gate.failures[0]
        first = redact(printable(head.text)).removeprefix(line_lead(head.kind, head.figures.condition)).strip()
    first = clip_words(first, 160)  # a word whole: the log line is read, not parsed
    why = f"{counted} ({first})" if first else counted
    if not gate.overridden:
        return why
    override = gate.override
    if override is not None and override.kind == "comment":
        return f"{accepted_by(override)} despite {why}"
    who = f" (added by @{override.by} at {override.at})" if override and override.by else ""
    return f"accepted by the override label{who} despite {why}"


def verdict_lines(
    comparison: Comparison, results: ResultsFile, *, comment_url: str = "", baseline_note: str = "", gating: bool = True
) -> list[str]:
    """What the job log ends with: the verdict, why, the comment's link; then the cases and the baseline."""
    verdict = comparison.verdict.upper()
    first = f"adk-eval-gate: {verdict} — {_why(comparison)}"
    if not gating:
        first += " (reported, not gating: a push to the default branch passes unless gate.on_push is fail)"
    if comment_url:
        first += f" · comment: {comment_url}"
    s = results.summary
    second = (
        f"adk-eval-gate: {s.total} case(s): {s.passed} passed, {s.failed} failed, {s.error} error(s), "
        f"{s.not_evaluated} not evaluated"
        + (f", {s.not_run} not run" if s.not_run else "")
        + " · baseline: "
        + (f"{comparison.baseline.source}" if comparison.baseline else "none")
    )
    if baseline_note:
        second += f" · {baseline_note}"
    if results.interrupted:
        second += f" · stopped early ({results.stop_reason})"
    lines = [one_line(first), one_line(second)]
    if changed := changed_line(comparison.changed):  # first: the verdict may be the judge's or the model's
        lines.insert(0, one_line(f"adk-eval-gate: {changed}"))
    return [*lines, f"adk-eval-gate: {results.offline}"] if results.offline else lines
