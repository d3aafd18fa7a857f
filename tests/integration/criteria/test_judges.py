"""LLM-judged criteria with the real google-genai client against a fake Gemini server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from adk_eval_gate.criteria.engine.criterion import ScoringInput, UnparseableReply
from adk_eval_gate.criteria.engine.judge import Judge
from adk_eval_gate.criteria.engine.options import LlmJudgeOptions
from adk_eval_gate.criteria.final_response_match_v2 import parse_label, score_final_response_match_v2
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.llm.cache import LlmCache
from adk_eval_gate.llm.client import LlmClient, LlmSettings
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.adk_required import adk
from tests.support.fake_gemini import FakeGemini, GeminiFault, cycling, verdict
from tests.support.paths import ROOT

SCRIPTS = {
    "alpha": [verdict("valid"), verdict("valid"), verdict("invalid")],
    "bravo": [verdict("valid"), verdict("invalid"), verdict("invalid")],
    "charlie": [verdict("valid"), "I refuse to answer in JSON", verdict("invalid")],
    "delta": ["garbage", '{"is_the_agent_response_valid": maybe', "no label"],
    "echo": [verdict("Valid"), verdict("valid"), verdict("invalid")],
    "foxtrot": ['{"is_the_agent_response_invalid": false}'] * 3,
    "golf": [
        '{"reasoning": "x", "is_the_agent_response_valid": "partially valid"}',
        verdict("almost"),
        verdict("true"),
    ],
}


def scripted() -> FakeGemini:
    return FakeGemini(cycling(SCRIPTS, "answer {}"))


def invocation(answer: str) -> dict:
    return {
        "user_content": {"role": "user", "parts": [{"text": "question"}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


CASES = [["alpha"], ["bravo"], ["charlie"], ["delta"], ["echo"], ["foxtrot"], ["golf"], ["alpha", "delta", "bravo"]]


def test_parse_label_matches_adk_on_judge_outputs():
    _parse_critique = adk("evaluation.final_response_match_v2")._parse_critique
    Label = adk("evaluation.llm_as_judge_utils").Label
    outputs = [text for script in SCRIPTS.values() for text in script] + [
        '"is_the_agent_response_valid": ["valid"]}',
        '"is_the_agent_response_valid": "valid"',
        '{"is_the_agent_response_valid": true}',
        '{"is_the_agent_response_invalid": "invalid"}',
        '{"is_the_agent_response_valid":\n[\n"invalid"\n]\n}',
        "",
        "{}",
    ]
    mapping = {Label.VALID: 1.0, Label.INVALID: 0.0, Label.NOT_FOUND: None}
    for text in outputs:
        assert parse_label(text) == mapping[_parse_critique(text)], text


def test_scores_equal_adks_for_the_same_judge_outputs(gemini_env):
    AdkInvocation = adk("evaluation.eval_case").Invocation
    metrics = adk("evaluation.eval_metrics")
    EvalMetric, LlmAsAJudgeCriterion = metrics.EvalMetric, metrics.LlmAsAJudgeCriterion
    FinalResponseMatchV2Evaluator = adk("evaluation.final_response_match_v2").FinalResponseMatchV2Evaluator
    ours_server, adk_server = scripted(), scripted()
    try:
        options = LlmJudgeOptions(threshold=0.5, judge_model_options={"num_samples": 3})
        gemini_env(ours_server)
        ours = []
        for markers in CASES:
            expected = [Invocation.model_validate(invocation("reference")) for _ in markers]
            actual = [Invocation.model_validate(invocation(f"answer {m}")) for m in markers]
            client = Judge(LlmClient(LlmSettings(retries=0), LlmCache(None)))
            data = ScoringInput(EvalCase(eval_id="c", conversation=expected), actual, expected)
            try:
                ours.append(asyncio.run(score_final_response_match_v2(data, options, client)))
            except UnparseableReply:  # where ADK quietly reports NOT_EVALUATED, the gate errors (judging.py)
                ours.append(None)
        gemini_env(adk_server)
        criterion = LlmAsAJudgeCriterion(threshold=0.5, judge_model_options={"num_samples": 3})
        for markers, mine in zip(CASES, ours, strict=True):
            evaluator = FinalResponseMatchV2Evaluator(
                EvalMetric(metric_name="final_response_match_v2", threshold=0.5, criterion=criterion)
            )
            expected = [AdkInvocation.model_validate(invocation("reference")) for _ in markers]
            actual = [AdkInvocation.model_validate(invocation(f"answer {m}")) for m in markers]
            theirs = asyncio.run(evaluator.evaluate_invocations(actual, expected))
            if mine is None:
                assert theirs.overall_score is None and theirs.overall_eval_status.name == "NOT_EVALUATED", markers
                continue
            assert mine.score == theirs.overall_score, markers
            assert mine.status.value.upper() == theirs.overall_eval_status.name, markers
            assert [p.score for p in mine.per_invocation] == [p.score for p in theirs.per_invocation_results], markers
    finally:
        ours_server.close()
        adk_server.close()
    assert [o and o.score for o in ours] == [
        1.0,
        0.0,
        0.0,
        None,
        0.0,
        1.0,
        0.0,
        0.5,
    ]  # ties and "partially" count as invalid


def judged_example(example, extra: str = "") -> object:
    config = example / "replay.yml"
    config.write_text(
        config.read_text().replace(
            "    eval_config: evals/eval_config.json\n",
            "    criteria: "
            "{response_match_score: 0.8, "
            "final_response_match_v2: {threshold: 0.5, judge_model_options: {num_samples: 3}}}\n",
        )
        + extra
    )
    return config


def prime_judge(prompt: str) -> str:
    """Valid unless the agent's answer says nothing is prime."""
    answer = re.search(r'"Agent response": (".*?")', prompt).group(1)
    return verdict("invalid" if "No prime" in json.loads(answer) else "valid")


def judge_scores(results) -> dict[str, float | None]:
    return {c.eval_id: c.metrics["final_response_match_v2"].score for c in results.eval_sets[0].cases}


def test_second_identical_run_makes_no_judge_calls_and_an_edit_rejudges_only_its_case(example, gemini_env):
    server = FakeGemini(prime_judge)
    gemini_env(server)
    try:
        config = judged_example(example)
        first = run_plan(build_plan(config), quiet=True)
        assert len(server.requests) == 6 * 3 + 1 * 3  # 7 invocations × 3 samples
        assert first.judge.calls == 21 and first.judge.cache_hits == 0 and first.judge.input_tokens > 0
        assert judge_scores(first)["primes_paraphrased"] == 0.0 and judge_scores(first)["roll_6"] == 1.0
        second = run_plan(build_plan(config), quiet=True)
        assert len(server.requests) == 21 and second.judge.calls == 0 and second.judge.cache_hits == 21
        from adk_eval_gate.baseline.stores import LoadOutcome
        from adk_eval_gate.config.workflow_settings import GateSettings
        from adk_eval_gate.gate.comparison_file import build_comparison
        from adk_eval_gate.report.markdown import render_report

        report = render_report(build_comparison(second, LoadOutcome(None, []), GateSettings()), second, {})
        assert "judge: 0 calls, 21 cached (100%)" in report
        assert judge_scores(second) == judge_scores(first)
        evalset = example / "evals" / "dice.evalset.json"
        data = json.loads(evalset.read_text())
        data["eval_cases"][0]["conversation"][0]["final_response"]["parts"][0]["text"] = "You rolled a five on a d6."
        evalset.write_text(json.dumps(data))
        third = run_plan(build_plan(config), quiet=True)
        assert third.judge.calls == 3 and third.judge.cache_hits == 18  # only roll_6 was judged again
        assert all("You rolled a five" in r["prompt"] for r in server.requests[21:])
    finally:
        server.close()


def test_a_judge_that_never_answers_is_an_error_that_fails_the_gate_and_others_stay_judged(example, gemini_env):
    server = FakeGemini(prime_judge)
    gemini_env(server)
    server.faults += [
        GeminiFault("got 5.", status=429, times=2, headers={"Retry-After": "0"}),  # roll_6 and roll_20: retried
        GeminiFault("check whether numbers are prime", status=503, times=100),  # capabilities: never answers
        GeminiFault("13, 17 are prime", delay=3.0, times=100),
    ]  # dice_then_primes turn 2: too slow
    try:
        config = judged_example(example, "judge: {retries: 2, timeout: 1, cache: null}\n")
        results = run_plan(build_plan(config), quiet=True)
    finally:
        server.close()
    cases = {c.eval_id: c for c in results.eval_sets[0].cases}
    judged = {eval_id: case.metrics["final_response_match_v2"] for eval_id, case in cases.items()}
    assert judged["roll_6"].score == 1.0 and judged["roll_20"].score == 1.0
    assert judged["primes_paraphrased"].score == 0.0
    for eval_id, detail in (("capabilities", "HTTP 503"), ("dice_then_primes", "TimeoutError")):
        metric = judged[eval_id]
        assert (metric.status, metric.score, metric.cause) == ("error", None, "judge_unavailable"), eval_id
        assert "judge unavailable after 3 attempts" in metric.reason and detail in metric.reason
        # turn 1 of dice_then_primes was judged, but a partly judged criterion is never compared as a score
        assert all(i.score is None for run in metric.runs for i in run.per_invocation)
        assert (
            cases[eval_id].status == "error" and "final_response_match_v2: judge unavailable" in cases[eval_id].reason
        )
    assert cases["capabilities"].metrics["response_match_score"].score is not None  # deterministic criteria unaffected
    assert results.summary.error == 2

    from adk_eval_gate.baseline.stores import LoadOutcome
    from adk_eval_gate.config.workflow_settings import GateSettings
    from adk_eval_gate.gate.comparison_file import build_comparison
    from adk_eval_gate.report.console import render_table
    from adk_eval_gate.report.markdown import render_report

    comparison = build_comparison(results, LoadOutcome(None, []), GateSettings())
    assert comparison.verdict == "fail" and "error: " in comparison.gate.failures[0].text
    headline = "2 judged scores missing: 2 judge unavailable after 3 attempts"
    assert f"Judged: {headline}" in render_table(results)
    report = render_report(comparison, results, {})
    assert f"**⚠️ {headline}**" in report.split("|")[0]  # above the table: part of the headline


def test_budget_cut_stops_judging_cleanly(example, gemini_env):
    server = FakeGemini(prime_judge)
    gemini_env(server)
    try:
        results = run_plan(build_plan(judged_example(example, "judge: {max_calls: 6, cache: null}\n")), quiet=True)
        assert len(server.requests) == 6 and results.judge.calls == 6
        reasons = {c.metrics["final_response_match_v2"].reason for c in results.eval_sets[0].cases}
        assert any(r and "judge budget of 6 calls spent" in r for r in reasons)
    finally:
        server.close()


def test_no_credentials_is_not_evaluated_and_nothing_crashes(example, monkeypatch, capsys):
    for key in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(key, raising=False)
    from adk_eval_gate.commands.main import main

    assert main(["validate", "--config", str(judged_example(example))]) == 0
    assert "final_response_match_v2 needs a judge: without GOOGLE_API_KEY" in capsys.readouterr().out
    results = run_plan(build_plan(example / "replay.yml"), quiet=True)
    case = results.eval_sets[0].cases[0]
    assert case.metrics["final_response_match_v2"].status == "not_evaluated"
    assert "no judge credentials" in case.metrics["final_response_match_v2"].reason
    assert case.metrics["response_match_score"].score == 1.0 and case.status == "passed"


def test_token_budget_prices_and_cost(example, gemini_env):
    server = FakeGemini(prime_judge)
    gemini_env(server)
    try:
        extra = (
            "judge: {max_tokens: 2000, concurrency: 2, cache: null, "
            "prices: {gemini-2.5-flash: {input: 1.0, output: 10.0}}}\n"
        )
        results = run_plan(build_plan(judged_example(example, extra)), quiet=True)
    finally:
        server.close()
    usage = results.judge
    # the budget is checked as each call gets a slot: calls stop once the tokens spent reach it (2 may overshoot)
    assert 0 < usage.calls < 21 and usage.input_tokens + usage.output_tokens >= 2000
    reasons = {c.metrics["final_response_match_v2"].reason for c in results.eval_sets[0].cases}
    assert any(r and "judge budget of 2000 tokens spent" in r for r in reasons)
    # the configured price overrides the built-in one: $1 / $10 per million tokens
    assert usage.cost_usd == pytest.approx((usage.input_tokens * 1.0 + usage.output_tokens * 10.0) / 1e6)
    assert usage.by_criterion["final_response_match_v2"].cost_usd == usage.cost_usd
    from adk_eval_gate.report.spend import spend_line

    assert spend_line(results).startswith(f"judge: {usage.calls} calls, 0 cached (0%)")


def test_a_template_override_changes_the_prompt_and_misses_the_cache(example, gemini_env):
    server = FakeGemini(prime_judge)
    gemini_env(server)
    try:
        config = judged_example(example)
        run_plan(build_plan(config), quiet=True)
        assert len(server.requests) == 21
        overrides = example / "prompts"
        overrides.mkdir()
        builtin = (ROOT / "src/adk_eval_gate/criteria/templates/final_response_match_v2.j2").read_text()
        (overrides / "final_response_match_v2.j2").write_text("Our house rules: be strict.\n" + builtin)
        config.write_text(
            config.read_text().replace("judge: {", "judge: {templates: prompts, ")
            if "judge: {" in config.read_text()
            else "judge: {templates: prompts}\n" + config.read_text()
        )
        again = run_plan(build_plan(config), quiet=True)
    finally:
        server.close()
    assert len(server.requests) == 42 and again.judge.calls == 21
    assert all(r["prompt"].startswith("Our house rules") for r in server.requests[21:])
