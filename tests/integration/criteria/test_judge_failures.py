"""A judge that breaks never passes quietly: the real google-genai client against tests/support/fake_gemini.py
on 127.0.0.1.

Only designed absences (no credentials, a spent budget) are `not_evaluated`; a judge still failing after its retries,
a reply that cannot be read or a bug is the criterion's `error`: the case errors, the gate fails by default, and the
console summary and the comment headline count the missing judged scores. The replay target needs no google-adk, so
these tests also run on the dependency leg without it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.commands.main import main
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.results.build import read_results
from tests.conftest import free_port
from tests.support.fake_gemini import FakeGemini, GeminiFault, verdict
from tests.support.paths import ROOT

JUDGED_CASES = 6  # the bundled example's cases: one judged score each
INVOCATIONS = 7  # one judge sample each


@pytest.fixture
def judge_at(monkeypatch):
    def use(url: str | None) -> None:
        for key in (
            "GOOGLE_API_KEY",
            "GEMINI_API_KEY",
            "GOOGLE_GENAI_USE_VERTEXAI",
            "GOOGLE_GEMINI_BASE_URL",
        ):
            monkeypatch.delenv(key, raising=False)
        if url is not None:
            monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
            monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", url)

    return use


def judged_config(example: Path, judge: str = "{retries: 1, cache: null}", criteria: str | None = None) -> Path:
    config = example / "replay.yml"
    criteria = (
        criteria
        or "{response_match_score: 0.8, "
        "final_response_match_v2: {threshold: 0.5, judge_model_options: {num_samples: 1}}}"
    )
    config.write_text(
        config.read_text().replace("    eval_config: evals/eval_config.json\n", f"    criteria: {criteria}\n")
        + f"judge: {judge}\n"
    )
    return config


def run(config: Path, capsys) -> tuple[int, str, object]:
    output = config.parent / "out" / "results.json"
    code = main(["run", "--config", str(config), "--output", str(output)])
    return code, capsys.readouterr().out, read_results(output)


def judged(results) -> dict:
    return {c.eval_id: c.metrics["final_response_match_v2"] for c in results.eval_sets[0].cases}


def comment_headline(results) -> str:
    comparison = build_comparison(results, LoadOutcome(None, []), GateSettings())
    report = render_report(comparison, results, {})
    return comparison.verdict, report.split("| Agent")[0]


def assert_errors_gate(results, out: str, cause: str, headline: str) -> None:
    metrics = judged(results)
    assert {m.status for m in metrics.values()} == {"error"} and {m.cause for m in metrics.values()} == {cause}
    assert all(m.score is None for m in metrics.values())
    assert all(c.status == "error" for c in results.eval_sets[0].cases)
    assert results.eval_sets[0].cases[0].metrics["response_match_score"].score is not None  # the rest is still scored
    assert f"Judged: {headline}" in out
    verdict, top = comment_headline(results)
    assert verdict == "fail" and f"**⚠️ {headline}**" in top


@pytest.mark.parametrize("status", [500, 429])
def test_a_judge_failing_every_call_is_an_error_that_fails_the_gate(example, judge_at, capsys, status):
    server = FakeGemini(lambda prompt: verdict("valid"))
    server.faults.append(GeminiFault("", status=status, times=10**6, headers={"Retry-After": "0"}))
    judge_at(server.url)
    try:
        code, out, results = run(judged_config(example), capsys)
    finally:
        server.close()
    assert code == 1 and len(server.requests) == INVOCATIONS * 2  # one retry each
    assert_errors_gate(
        results,
        out,
        "judge_unavailable",
        f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} judge unavailable after 2 attempts",
    )
    assert f"HTTP {status}" in judged(results)["roll_6"].reason


@pytest.mark.parametrize(
    "reply",
    [
        "<html>503 Service Unavailable</html>",
        '{"reasoning": "looks fine"}',
        '{"is_the_agent_response_valid": ["perhaps"]}',
    ],
)
def test_judge_replies_that_cannot_be_read_are_an_error_that_fails_the_gate(example, judge_at, capsys, reply):
    server = FakeGemini(lambda prompt: reply)
    judge_at(server.url)
    try:
        code, out, results = run(judged_config(example), capsys)
    finally:
        server.close()
    assert code == 1 and len(server.requests) == INVOCATIONS  # a readable answer that says nothing is not retried
    assert_errors_gate(
        results,
        out,
        "unparseable_reply",
        f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} judge reply unreadable",
    )
    assert "is_the_agent_response_valid" in judged(results)["roll_6"].reason


def test_a_judge_nobody_listens_on_is_retried_then_an_error(example, judge_at, capsys):
    judge_at(f"http://127.0.0.1:{free_port()}")  # connection refused, whatever HTTP package google-genai runs on
    _, out, results = run(judged_config(example), capsys)
    assert_errors_gate(
        results,
        out,
        "judge_unavailable",
        f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} judge unavailable",
    )
    # refused twice in a row: every later call of the run fails at once instead of retrying for minutes
    assert re.search(r"judge endpoint cannot be reached: \w*(Connect|Refused)", judged(results)["roll_6"].reason)


def test_a_refused_request_is_not_retried_and_is_an_error(example, judge_at, capsys):
    server = FakeGemini(lambda prompt: verdict("valid"))
    server.faults.append(GeminiFault("", status=400, times=10**6))
    judge_at(server.url)
    try:
        _, out, results = run(judged_config(example, "{retries: 3, cache: null}"), capsys)
    finally:
        server.close()
    assert len(server.requests) == INVOCATIONS
    assert "judge refused the request: HTTP 400" in judged(results)["roll_6"].reason
    assert_errors_gate(
        results,
        out,
        "judge_unavailable",
        f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} judge unavailable",
    )


def test_a_bug_in_judging_is_an_internal_error_not_a_quiet_gap(example, judge_at, capsys):
    server = FakeGemini(lambda prompt: verdict("valid"))
    judge_at(server.url)
    templates = example / "judge-templates"
    templates.mkdir()
    (templates / "final_response_match_v2.j2").write_text("{{ prompt }} {{ no_such_value.field }}\n")
    try:
        _, out, results = run(judged_config(example, "{retries: 1, cache: null, templates: judge-templates}"), capsys)
    finally:
        server.close()
    assert not server.requests
    assert "UndefinedError" in judged(results)["roll_6"].reason
    assert_errors_gate(
        results, out, "internal_error", f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} internal error"
    )


def test_no_credentials_is_a_designed_absence_counted_in_the_headline(example, judge_at, capsys):
    judge_at(None)
    _, out, results = run(judged_config(example), capsys)
    metrics = judged(results)
    assert {(m.status, m.cause) for m in metrics.values()} == {("not_evaluated", "no_credentials")}
    assert results.summary.error == 0
    headline = f"{JUDGED_CASES} judged scores missing: {JUDGED_CASES} no judge credentials"
    assert f"Judged: {headline}" in out
    verdict, top = comment_headline(results)
    assert verdict == "pass" and f"**⚠️ {headline}**" in top  # a fork passes, but nobody can miss why


def test_a_spent_budget_is_a_designed_absence_and_mixed_causes_are_listed_errors_first(example, judge_at, capsys):
    server = FakeGemini(lambda prompt: verdict("valid") if "got 5." in prompt else "no label here")
    judge_at(server.url)
    try:
        _, out, results = run(judged_config(example, "{retries: 0, cache: null, max_calls: 4, concurrency: 1}"), capsys)
    finally:
        server.close()
    causes = sorted(m.cause or "scored" for m in judged(results).values())
    spent = causes.count("budget_spent")
    unreadable = causes.count("unparseable_reply")
    assert len(server.requests) == 4 and spent >= JUDGED_CASES - 4 and unreadable >= 1
    statuses = {m.cause: m.status for m in judged(results).values() if m.cause}
    assert statuses == {"budget_spent": "not_evaluated", "unparseable_reply": "error"}
    assert (
        f"Judged: {spent + unreadable} judged scores missing: {unreadable} judge reply unreadable, "
        f"{spent} judge budget spent"
    ) in out


RUBRIC = "{rubric_id: concise, rubric_content: {text_property: The answer is short.}}"


def test_a_rubric_criterion_without_any_rubrics_stops_validate_and_run(example, capsys):
    config = judged_config(example, criteria="{rubric_based_final_response_quality_v1: {threshold: 0.5}}")
    for command in (["validate"], ["run", "--output", str(example / "out.json")]):
        assert main([*command, "--config", str(config)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith(f"error: {config.name}:")
        assert "agents[0].criteria.rubric_based_final_response_quality_v1.rubrics: no rubrics" in err[0]
        assert "type: FINAL_RESPONSE_QUALITY" in err[0]
    assert not (example / "out.json").exists()


def test_rubrics_in_the_criterion_or_of_the_right_type_in_a_case_are_enough(example, capsys):
    original = (example / "replay.yml").read_text()
    config = judged_config(
        example,
        criteria=f"{{rubric_based_final_response_quality_v1: {{threshold: 0.5, rubrics: [{RUBRIC}]}}}}",
    )
    assert main(["validate", "--config", str(config)]) == 0
    config.write_text(original)
    evalset = example / "evals" / "dice.evalset.json"
    data = json.loads(evalset.read_text())
    rubric = {"rubric_id": "short", "rubric_content": {"text_property": "Short."}, "type": "TOOL_USE_QUALITY"}
    data["eval_cases"][-1]["rubrics"] = [rubric]  # another criterion's type: ADK filters it out
    evalset.write_text(json.dumps(data))
    config = judged_config(example, criteria="{rubric_based_final_response_quality_v1: 0.5}")
    assert main(["validate", "--config", str(config)]) == 2
    assert "no rubrics" in capsys.readouterr().err
    data["eval_cases"][-1]["conversation"][0]["rubrics"] = [{**rubric, "type": "FINAL_RESPONSE_QUALITY"}]
    evalset.write_text(json.dumps(data))
    assert main(["validate", "--config", str(config)]) == 0


def test_an_eval_config_file_is_named_when_its_rubric_criterion_has_none(example, capsys):
    eval_config = example / "evals" / "eval_config.json"
    eval_config.write_text(json.dumps({"criteria": {"rubric_based_tool_use_quality_v1": {"threshold": 0.5}}}))
    assert main(["validate", "--config", str(example / "replay.yml")]) == 2
    err = capsys.readouterr().err
    # named as the config names it: relative to the config's directory
    assert err.startswith(
        "error: evals/eval_config.json: criteria.rubric_based_tool_use_quality_v1.rubrics: no rubrics"
    )


def test_no_module_imports_an_http_transport():
    """google-genai 3 runs on httpx2, not httpx: importing a transport ourselves broke every judged score."""
    source = ROOT / "src" / "adk_eval_gate"
    offenders = [
        str(p)
        for p in source.rglob("*.py")
        if re.search(r"^\s*(import|from)\s+(httpx|httpcore|aiohttp)\b", p.read_text(), re.M)
    ]
    assert offenders == []
