"""The other places a result shows up on GitHub: the step summary, job outputs, JUnit XML and annotations."""

from __future__ import annotations

import json
import re
import uuid
import xml.etree.ElementTree as ET
from pathlib import Path

from ..baseline.models import Comparison
from ..results.models import ResultsFile

STEP_SUMMARY_LIMIT = 1024 * 1024


def write_step_summary(path: Path, markdown: str) -> None:
    data = markdown.encode()
    if len(data) > STEP_SUMMARY_LIMIT - 1024:
        data = data[: STEP_SUMMARY_LIMIT - 1024].decode(errors="ignore").rsplit("\n", 1)[0].encode() + \
            b"\n\n... cut to fit the 1 MiB step summary.\n"
    with path.open("ab") as handle:
        handle.write(data + b"\n")


def write_outputs(path: Path, values: dict[str, str]) -> None:
    """`name<<DELIMITER` blocks, so no value can forge another output."""
    with path.open("a", encoding="utf-8") as handle:
        for name, value in values.items():
            delimiter = f"ghadelimiter_{uuid.uuid4()}"
            handle.write(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")


def junit_xml(results: ResultsFile, comparison: Comparison | None = None) -> str:
    regressed = {(r.agent, r.eval_set_id, r.eval_id) for r in (comparison.rows if comparison else []) if r.verdict == "regressed"}
    suites = ET.Element("testsuites", name="adk-eval-gate", tests=str(results.summary.total))
    for eval_set in results.eval_sets:
        suite = ET.SubElement(suites, "testsuite", name=f"{eval_set.agent}/{eval_set.eval_set_id}", tests=str(eval_set.summary.total),
                              failures=str(eval_set.summary.failed), errors=str(eval_set.summary.error + eval_set.summary.not_run),
                              skipped=str(eval_set.summary.not_evaluated), file=eval_set.file)
        for case in eval_set.cases:
            seconds = sum((r.duration_seconds or 0.0) for r in case.runs)
            element = ET.SubElement(suite, "testcase", classname=f"{eval_set.agent}.{eval_set.eval_set_id}", name=case.eval_id,
                                    time=f"{seconds:.3f}", file=eval_set.file)
            scores = "; ".join(f"{n}={m.score if m.score is not None else 'n/a'} (threshold {m.threshold:g})" for n, m in case.metrics.items())
            if case.status in ("error", "not_run"):  # a case the spending limit left out is no pass
                ET.SubElement(element, "error", message=case.reason or case.status).text = scores
            elif case.status == "failed" or (eval_set.agent, eval_set.eval_set_id, case.eval_id) in regressed:
                message = case.reason or "regressed against the baseline"
                ET.SubElement(element, "failure", message=message).text = scores
            elif case.status == "not_evaluated":
                ET.SubElement(element, "skipped", message=case.reason or "not evaluated")
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


def _escape_annotation(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_annotation(text).replace(":", "%3A").replace(",", "%2C")


def annotations(results: ResultsFile, comparison: Comparison | None, base_dir: Path, workspace: Path | None) -> list[str]:
    """`::error` workflow commands on the eval set line of each failing or regressed case."""
    regressed = {(r.agent, r.eval_set_id, r.eval_id): r.reason for r in (comparison.rows if comparison else []) if r.verdict == "regressed"}
    lines = []
    for eval_set in results.eval_sets:
        absolute = (base_dir / eval_set.file).resolve()
        try:
            shown = absolute.relative_to(workspace.resolve()).as_posix() if workspace else eval_set.file
        except ValueError:
            shown = eval_set.file
        for case in eval_set.cases:
            reason = regressed.get((eval_set.agent, eval_set.eval_set_id, case.eval_id))
            if reason:
                title, message = f"{case.eval_id} regressed", reason
            elif case.status in ("failed", "error", "not_run"):
                title, message = f"{case.eval_id} {case.status}", case.reason or case.status
            else:
                continue
            line = case_line(absolute, case.eval_id)
            lines.append(f"::error file={_escape_property(shown)},line={line},title={_escape_property(title)}::{_escape_annotation(message)}")
    return lines
