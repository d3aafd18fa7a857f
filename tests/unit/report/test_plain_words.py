"""Say what is true, in plain words first: a metric without a threshold is compared, never PASS; a run with no
baseline shows its current scores; a usage rise that does not gate says so; a line cut for a terminal keeps its
words whole."""

from __future__ import annotations

from pathlib import Path

from adk_eval_gate.baseline.decision_records import FailureRecord
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.baseline.stores.stored_baseline import LoadedBaseline, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.core.clip import clip_words
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.console import render_table
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.report.outputs import verdict_lines
from adk_eval_gate.results.build import read_results
from adk_eval_gate.results.results_format import ResultsFile, RunUsage
from tests.support.report_data import TRAJECTORY, Case, results_file

ROOT = Path(__file__).resolve().parents[3]


def test_an_agents_cli_metric_without_a_threshold_is_compared_never_passed():
    results = read_results(ROOT / "examples" / "agents_cli" / "baseline" / "results.json")
    table = render_table(results)
    assert "response_length" in table
    assert ">= 0 " not in table + " " and "15.000 (compared with baseline)" in table
    # a case scored only on such metrics passed nothing: it was scored
    eval_set = results.eval_sets[0]
    for case in eval_set.cases:
        for name in ("matches_reference", "used_expected_tool"):
            del case.metrics[name]
    eval_set.criteria = {k: v for k, v in eval_set.criteria.items() if k == "response_length"}
    table = render_table(results)
    assert "SCORED" in table and " PASS " not in table


def test_with_no_baseline_the_comment_shows_the_current_scores():
    current = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[1.0]]}), Case("c2", {TRAJECTORY: [[0.0]]})]})
    comparison = build_comparison(current, LoadOutcome(None, ["no baseline yet"]), GateSettings())
    (summary,) = comparison.summaries
    assert summary.verdict == "new" and summary.current == 0.5 and summary.current_pass_rate == 0.5
    report = render_report(comparison, current, {})
    assert "| a / s | tool\\_trajectory\\_avg\\_score | — → 0.500 | — | — → 50% | new |" in report
    assert "— → — |" not in report


def _with_tokens(results: ResultsFile, tokens: int) -> ResultsFile:
    for eval_set in results.eval_sets:
        for case in eval_set.cases:
            for run in case.runs:
                run.usage = RunUsage(input_tokens=tokens, model_calls=1)
    return results


def test_a_usage_rise_that_does_not_gate_says_so_in_the_comment():
    cases = [Case(f"c{i}", {TRAJECTORY: [[1.0]] * 6}) for i in range(8)]
    base = _with_tokens(results_file({("a", "s"): cases}), 100)
    current = _with_tokens(results_file({("a", "s"): cases}), 400)
    outcome = LoadOutcome(LoadedBaseline(base, identity_of(base, "baseline.json")))
    comparison = build_comparison(current, outcome, GateSettings())  # fail_on lacks token_regression
    regressed = [e for e in comparison.efficiency if e.verdict == "regressed"]
    assert regressed and not any(e.gating for e in regressed)
    report = render_report(comparison, current, {})
    assert "🔴 regressed (does not gate) |" in report


def test_a_line_cut_for_a_terminal_keeps_its_words_whole():
    text = "regression: hello_world/dice tool_trajectory_avg_score dropped 0.167 (≥ tolerance 0.05), p = 0.0031"
    for limit in range(20, len(text)):
        cut = clip_words(text, limit)
        assert len(cut) <= limit and cut.endswith("…")
        kept = cut.removesuffix("…")
        assert text.startswith(kept)
        # a word is whole: what follows the cut is not part of it, unless no space was near (one token that long)
        assert not text[len(kept)].isalnum() or " " not in text[(limit - 1) // 2 : limit - 1]
    assert clip_words(text, len(text)) == text


def test_the_job_logs_verdict_line_ends_on_a_whole_word():
    long_reason = "word " * 60
    current = results_file({("a", "s"): [Case("c1", {TRAJECTORY: [[1.0]]})]})
    comparison = build_comparison(current, LoadOutcome(None, []), GateSettings(fail_on=["regression", "no_baseline"]))
    long = FailureRecord(kind="no_baseline", text=f"no baseline: {long_reason}")
    gate = comparison.gate.model_copy(update={"failures": [long], "overridden": False})
    failing = comparison.model_copy(update={"verdict": "fail", "gate": gate})
    first = verdict_lines(failing, current)[0]
    assert "word…" in first and "wor…" not in first


def test_a_usage_rise_these_samples_cannot_confirm_is_unconfirmed_where_it_gates():
    # two cases, one run a side, tokens ×4: beyond tolerance, but two strata of one sample a side cannot reach
    # alpha whatever they hold. Where token_regression gates, that is unconfirmed and fails, never a quiet pass.
    cases = [Case(f"c{i}", {TRAJECTORY: [[1.0]]}) for i in range(2)]
    base = _with_tokens(results_file({("a", "s"): cases}), 100)
    current = _with_tokens(results_file({("a", "s"): cases}), 400)
    outcome = LoadOutcome(LoadedBaseline(base, identity_of(base, "baseline.json")))
    gating = build_comparison(current, outcome, GateSettings(fail_on=["regression", "token_regression"]))
    (tokens,) = [e for e in gating.efficiency if e.metric == "tokens"]
    assert tokens.verdict == "inconclusive" and tokens.gating and "unconfirmed" in tokens.reason
    assert gating.verdict == "fail" and gating.gate.failures[0].text.startswith("unconfirmed: a/s tokens")
    assert gating.gate.unconfirmed == 1
    report = render_report(gating, current, {})
    assert "🟡 unconfirmed (gating) |" in report
    # where it does not gate, it is reported and the gate passes
    quiet = build_comparison(current, outcome, GateSettings())
    assert quiet.verdict == "pass" and quiet.gate.unconfirmed == 0
    # gate.unconfirmed: warn lets it pass under a headline that names it
    warned = build_comparison(
        current, outcome, GateSettings(fail_on=["regression", "token_regression"], unconfirmed="warn")
    )
    assert warned.verdict == "pass" and warned.gate.unconfirmed == 1


def test_a_sentence_in_the_comment_is_cut_at_a_word():
    from adk_eval_gate.report.escape import inline

    cut = inline("the samples in hand cannot confirm it " * 20, 100)
    assert len(cut) <= 100 and cut.endswith("…")
    assert cut.removesuffix("…").split()[-1] in {"the", "samples", "in", "hand", "cannot", "confirm", "it"}
