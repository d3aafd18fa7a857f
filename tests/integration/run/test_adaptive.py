"""Adaptive runs and the spending limit, through real ADK agents (a scripted, seeded flaky model) and the real
comparison; the two-stage test's level by simulation."""

from __future__ import annotations

import json
import random
import shutil
import statistics
from pathlib import Path

import pytest

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.baseline.stages import StagedPair
from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.baseline.strata import Strata, group_test
from adk_eval_gate.commands.main import main
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.core.errors import EXIT_BAD_INPUT
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.console import render_table
from adk_eval_gate.report.markdown import render_report
from adk_eval_gate.report.outputs import annotation_lines, junit_xml
from adk_eval_gate.results.build import read_results, write_results
from adk_eval_gate.run.adaptive import Decider, undecided
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.run.shards import merge_results, shard_plan
from tests.support.noisy_suite import write_noisy_eval_set
from tests.support.paths import AGENTS

NOISY_AGENT = AGENTS / "noisy"
KEYS = ("alpha", "beta", "gamma", "delta")


def noisy_suite(
    tmp_path: Path,
    *,
    num_runs: str = "{min: 2, max: 10}",
    run: str = "workers: 1",
    keys: tuple[str, ...] = KEYS,
) -> Path:
    shutil.copytree(NOISY_AGENT, tmp_path / "noisy", ignore=shutil.ignore_patterns("__pycache__"))
    write_noisy_eval_set(tmp_path, keys)
    config = tmp_path / "gate.yml"
    config.write_text(
        f"run: {{{run}}}\njudge: {{prices: {{scripted-noisy: {{input: 1000, output: 2000}}}}}}\n"
        "agents:\n  - name: noisy\n    target: {kind: adk, agent: noisy}\n    evalsets: [s.evalset.json]\n"
        f"    criteria: {{tool_trajectory_avg_score: 1.0}}\n    num_runs: {num_runs}\n"
    )
    return config


@pytest.fixture
def fresh_draws(monkeypatch, tmp_path):
    """A seed of this test's own: the agent's draws are counted per seed, so each test is reproducible alone."""
    monkeypatch.setenv("NOISY_SEED", tmp_path.name)
    return monkeypatch


def _cases(results):
    return {c.eval_id: c for s in results.eval_sets for c in s.cases}


def test_push_run_gets_every_run_and_the_pull_request_only_the_undecided_cases(tmp_path, fresh_draws):
    plan = build_plan(noisy_suite(tmp_path))
    baseline = run_plan(plan, quiet=True)  # no decider: a push run building the baseline
    assert {len(c.runs) for c in _cases(baseline).values()} == {10}
    assert all(c.sampling is None for c in _cases(baseline).values())

    fresh_draws.setenv("NOISY_RATES", json.dumps({"gamma": 0.0}))  # the pull request broke one case
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-pr")
    current = run_plan(plan, quiet=True, decider=Decider(baseline))
    cases = _cases(current)
    assert {k: len(c.runs) for k, c in cases.items()} == {"alpha": 2, "beta": 2, "gamma": 10, "delta": 2}
    assert [r.run for r in cases["gamma"].runs] == list(range(10))
    extra = cases["gamma"].sampling.extra
    assert extra.round == 2 and extra.runs == list(range(2, 10))
    look = extra.criteria["tool_trajectory_avg_score"]
    assert look.undecided and look.current == 0.0 and look.baseline == 1.0 and look.p_drop < 0.05
    assert "tool_trajectory_avg_score 0.000 < baseline 1.000" in extra.reason
    assert cases["alpha"].sampling.extra is None and "no worse" in cases["alpha"].sampling.decided
    assert current.eval_sets[0].adaptive_runs.model_dump() == {"min": 2, "max": 10}
    assert "runs: adaptive 2–10, 1 of 4 cases undecided after the first round" in render_table(current)

    path = tmp_path / "current.json"
    write_results(current, path)  # the record survives the results file and its schema
    assert read_results(path).eval_sets[0].cases[2].sampling == cases["gamma"].sampling

    comparison = build_comparison(
        current, LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "b"))), GateSettings()
    )
    summary = comparison.summaries[0]
    assert summary.verdict == "regressed" and "two-stage adaptive" in summary.reason
    assert comparison.verdict == "fail"
    row = next(r for r in comparison.rows if r.eval_id == "gamma")
    assert row.delta == -1.0


def test_unchanged_agent_spends_few_runs_and_passes(tmp_path, fresh_draws):
    # one flaky case, unchanged by the pull request
    fresh_draws.setenv("NOISY_RATES", json.dumps({"beta": 0.6}))
    plan = build_plan(noisy_suite(tmp_path))
    baseline = run_plan(plan, quiet=True)
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-pr")
    current = run_plan(plan, quiet=True, decider=Decider(baseline))
    spent = sum(len(c.runs) for c in _cases(current).values())
    assert spent < 4 * 10 / 2  # at most the flaky case goes to max
    comparison = build_comparison(
        current, LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "b"))), GateSettings()
    )
    assert comparison.verdict == "pass"


def test_without_a_baseline_the_pull_request_runs_min_only(tmp_path, fresh_draws):
    plan = build_plan(noisy_suite(tmp_path))
    current = run_plan(plan, quiet=True, decider=Decider(None))
    assert {len(c.runs) for c in _cases(current).values()} == {2}
    assert all("not in the baseline" in c.sampling.decided for c in _cases(current).values())


def test_cli_run_decides_against_a_baseline_file(tmp_path, fresh_draws, capsys):
    config = noisy_suite(tmp_path)
    assert main(["run", "--config", str(config), "--output", str(tmp_path / "base.json"), "--all-runs", "--quiet"]) == 0
    fresh_draws.setenv("NOISY_RATES", json.dumps({"alpha": 0.0}))
    code = main(
        [
            "run",
            "--config",
            str(config),
            "--output",
            str(tmp_path / "pr.json"),
            "--baseline",
            str(tmp_path / "base.json"),
            "--quiet",
        ]
    )
    assert code == 1  # alpha fails its threshold now
    runs = {c.eval_id: len(c.runs) for c in read_results(tmp_path / "pr.json").eval_sets[0].cases}
    assert runs == {"alpha": 10, "beta": 2, "gamma": 2, "delta": 2}
    assert (
        main(
            [
                "run",
                "--config",
                str(config),
                "--output",
                str(tmp_path / "x.json"),
                "--baseline",
                str(tmp_path / "missing.json"),
            ]
        )
        == EXIT_BAD_INPUT
    )
    assert "--baseline: no results file at" in capsys.readouterr().err


@pytest.mark.parametrize(
    "value, problem",
    [
        ("{min: 4, max: 4}", "need 1 <= min < max <= 100"),
        ("{min: 2}", "is not a run range"),
        ("{min: 0, max: 3}", "need 1 <= min < max <= 100"),
        ("two", "is not a run count"),
    ],
)
def test_bad_run_ranges_are_one_line_errors(tmp_path, capsys, value, problem):
    config = noisy_suite(tmp_path, num_runs=value)
    assert main(["validate", "--config", str(config)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "num_runs" in err[0] and problem in err[0] and "Traceback" not in err[0]


def test_spending_limit_leaves_the_rest_not_run_and_fails_the_gate(tmp_path, fresh_draws):
    # every model call costs 100 * $1000/M + 10 * $2000/M = $0.12; one case (tool call + summary) $0.24 per run
    config = noisy_suite(tmp_path, num_runs="1", run="workers: 1, concurrency: 1, max_cost_usd: 0.5")
    results = run_plan(build_plan(config), quiet=True)
    statuses = [c.status for c in results.eval_sets[0].cases]
    assert statuses == ["passed", "passed", "passed", "not_run"]
    cut = results.eval_sets[0].cases[3]
    assert cut.reason.startswith("not run: the spending limit run.max_cost_usd = $0.5 was reached")
    assert results.summary.not_run == 1 and results.budget.not_run == 1
    assert results.budget.spent_usd == pytest.approx(0.72)
    usage = results.eval_sets[0].cases[0].runs[0].usage
    assert (usage.model_calls, usage.tool_calls, usage.input_tokens, usage.output_tokens) == (2, 1, 200, 20)
    assert usage.cost_usd == pytest.approx(0.24)
    comparison = build_comparison(results, LoadOutcome(None, []), GateSettings())
    assert comparison.verdict == "fail"
    assert any(f.text.startswith("not run: noisy/s delta") for f in comparison.gate.failures)


def _simulated_pvalues(rng: random.Random, cases: int, drop: float) -> float:
    rates = [rng.choice((0.95, 0.95, 0.95, 0.7, 0.3)) for _ in range(cases)]
    current = [max(0.0, r - drop) if i % 4 == 0 else r for i, r in enumerate(rates)]

    def draw(rate: float, n: int) -> list[float]:
        return [1.0 if rng.random() < rate else 0.0 for _ in range(n)]

    pairs = []
    for base_rate, rate in zip(rates, current, strict=True):
        baseline = draw(base_rate, 8)
        pair = StagedPair(baseline, baseline[:4], baseline[4:], draw(rate, 2), [])
        if undecided(pair.selection, pair.first):
            pair.extra = draw(rate, 6)
        pairs.append(pair)
    return group_test(Strata([(p.baseline, p.first + p.extra) for p in pairs], [], [], pairs)).p_drop


def test_two_stage_test_keeps_its_level_whatever_the_selection():
    rng = random.Random(7)
    p_values = [_simulated_pvalues(rng, 12, 0.0) for _ in range(600)]
    for level in (0.01, 0.05, 0.2):
        assert statistics.fmean(p <= level for p in p_values) <= level + 2.5 * (level * (1 - level) / 600) ** 0.5
    power = statistics.fmean(_simulated_pvalues(rng, 12, 0.6) <= 0.05 for _ in range(200))
    assert power > 0.5


def test_budget_cut_cases_are_in_the_headline(tmp_path, fresh_draws):
    config = noisy_suite(tmp_path, num_runs="1", run="workers: 1, concurrency: 1, max_cost_usd: 0.5")
    results = run_plan(build_plan(config), quiet=True)
    comparison = build_comparison(results, LoadOutcome(None, []), GateSettings())
    markdown = render_report(comparison, results, {})
    assert "**1 case(s) not run**: the spending limit run.max_cost_usd = $0.5 was reached" in markdown
    assert "fail the gate" in markdown
    table = render_table(results)
    assert "NOT RUN" in table and "Not run: 1 case(s)" in table


def _compare(current, baseline, **gate):
    return build_comparison(
        current, LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "b"))), GateSettings(**gate)
    )


def test_a_pull_request_that_pads_every_prompt_is_a_cost_and_token_regression(tmp_path, fresh_draws):
    plan = build_plan(noisy_suite(tmp_path, num_runs="3"))
    baseline = run_plan(plan, quiet=True)
    # 100 → 160 prompt tokens per model call: +55% tokens, +50% cost
    fresh_draws.setenv("NOISY_PADDING", "60")
    current = run_plan(plan, quiet=True)
    comparison = _compare(
        current,
        baseline,
        fail_on=["regression", "error", "cost_regression"],
        efficiency_tolerance={"cost": "+20%", "tokens": "+20%"},
    )
    rows = {e.metric: e for e in comparison.efficiency}
    assert rows["cost"].verdict == "regressed" and rows["cost"].gating
    assert rows["cost"].change == pytest.approx(0.5)
    # token_regression is not in fail_on
    assert rows["tokens"].verdict == "regressed" and not rows["tokens"].gating
    assert "not gating (gate.fail_on lacks token_regression)" in rows["tokens"].reason
    assert rows["tool_calls"].verdict == "unchanged"
    assert comparison.verdict == "fail"
    assert comparison.gate.failures[0].text.startswith("cost regression: noisy/s cost +50% per run")
    assert comparison.summaries[0].verdict == "unchanged"  # the scores did not move: only the spend did
    markdown = render_report(comparison, current, {})
    table = markdown[markdown.index("**Efficiency, per run**") :]
    assert "| noisy / s | cost | 0.24 → 0.36 | +50% | 🔴 regressed (gating) |" in table
    assert table.index("| cost |") < table.index("| tokens |") and "| tool calls |" not in table

    lenient = _compare(
        current,
        baseline,
        fail_on=["regression", "error", "cost_regression"],
        efficiency_tolerance={"cost": "+60%"},
    )
    assert {e.metric: e.verdict for e in lenient.efficiency}["cost"] == "unchanged" and lenient.verdict == "pass"


ALL_USAGE = ["cost_regression", "latency_regression", "token_regression", "tool_call_regression"]


def test_same_agent_has_no_efficiency_regression_and_a_slower_one_has(tmp_path, fresh_draws):
    # tool calls vary run to run, alike on both sides
    fresh_draws.setenv("NOISY_RATES", json.dumps({"beta": 0.5}))
    # latency is mostly the model's, as with a real one: a loaded CI machine adds a fraction of a second per run
    fresh_draws.setenv("NOISY_LATENCY", "1.0")
    plan = build_plan(noisy_suite(tmp_path, num_runs="4"))
    baseline = run_plan(plan, quiet=True)
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-pr")
    current = run_plan(plan, quiet=True)
    comparison = _compare(current, baseline, fail_on=ALL_USAGE)
    assert {e.metric for e in comparison.efficiency} == {"cost", "latency", "tokens", "tool_calls"}
    assert all(e.verdict != "regressed" for e in comparison.efficiency)
    assert comparison.verdict == "pass"

    fresh_draws.setenv("NOISY_LATENCY", "3.0")
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-slow")
    slower = run_plan(plan, quiet=True)
    comparison = _compare(slower, baseline, fail_on=ALL_USAGE)
    latency = next(e for e in comparison.efficiency if e.metric == "latency")
    assert latency.verdict == "regressed" and latency.change > 1.0 and latency.gating
    assert comparison.gate.failures[0].text.startswith("latency regression: noisy/s latency +")


@pytest.mark.parametrize(
    "value, problem",
    [
        ('{cost: "20"}', "cost: '20' is not a relative tolerance"),
        ('{price: "+20%"}', "unknown usage metric 'price'"),
        ('{latency: "-5%"}', "latency: '-5%' is not a relative tolerance"),
    ],
)
def test_bad_efficiency_tolerances_are_one_line_errors(tmp_path, capsys, value, problem):
    config = noisy_suite(tmp_path)
    config.write_text(config.read_text() + f"gate: {{fail_on: [cost_regression], efficiency_tolerance: {value}}}\n")
    assert main(["validate", "--config", str(config)]) == EXIT_BAD_INPUT
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "gate.efficiency_tolerance" in err[0] and problem in err[0]


def test_spending_limit_cuts_extra_runs_but_keeps_the_first_round(tmp_path, fresh_draws):
    # the push run below is unlimited; the pull request can afford its first round (4 cases × 2 runs × $0.24)
    plan = build_plan(noisy_suite(tmp_path))
    baseline = run_plan(plan, quiet=True)
    limited = noisy_suite(tmp_path / "pr", run="workers: 1, concurrency: 1, max_cost_usd: 1.9")
    fresh_draws.setenv("NOISY_RATES", json.dumps({"alpha": 0.0, "beta": 0.0}))
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-pr")
    current = run_plan(build_plan(limited), quiet=True, decider=Decider(baseline))
    cases = _cases(current)
    assert [c.status for c in cases.values()] == ["failed", "failed", "passed", "passed"]
    assert len(cases["alpha"].runs) == 10  # $1.92 spent once alpha's extra round was admitted: beta's is cut
    assert len(cases["beta"].runs) == 2 and cases["beta"].sampling.extra.runs == []
    assert (
        "; cut: not run: the spending limit run.max_cost_usd = $1.9 was reached" in cases["beta"].sampling.extra.reason
    )


def test_ci_on_a_pull_request_loads_the_baseline_before_running(tmp_path, fresh_draws):
    config = noisy_suite(tmp_path)
    assert main(["run", "--config", str(config), "--output", str(tmp_path / "base.json"), "--all-runs", "--quiet"]) == 0
    config.write_text(config.read_text() + "baseline: {store: file, path: base.json}\n")
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"pull_request": {"number": 7, "head": {"sha": "a" * 40}, "base": {"sha": "b" * 40, "ref": "main"}}})
    )
    for name, value in {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "s.md"),
    }.items():
        fresh_draws.setenv(name, value)
    fresh_draws.delenv("GITHUB_TOKEN", raising=False)
    fresh_draws.setenv("NOISY_RATES", json.dumps({"delta": 0.0}))
    fresh_draws.setenv("NOISY_SEED", f"{tmp_path.name}-pr")
    out = tmp_path / "out"
    assert main(["ci", "--config", str(config), "--output-dir", str(out), "--no-comment", "--quiet"]) == 1
    results = read_results(out / "results.json")
    assert {c.eval_id: len(c.runs) for c in results.eval_sets[0].cases} == {
        "alpha": 2,
        "beta": 2,
        "gamma": 2,
        "delta": 10,
    }
    comparison = Comparison.model_validate_json((out / "comparison.json").read_text())
    assert comparison.summaries[0].verdict == "regressed" and "two-stage adaptive" in comparison.summaries[0].reason


def test_budget_cut_cases_are_errors_in_junit_and_annotations(tmp_path, fresh_draws):
    config = noisy_suite(tmp_path, num_runs="1", run="workers: 1, concurrency: 1, max_cost_usd: 0.5")
    results = run_plan(build_plan(config), quiet=True)
    xml = junit_xml(results)
    assert 'errors="1"' in xml and '<error message="not run: the spending limit' in xml
    lines = annotation_lines(results, build_comparison(results, LoadOutcome(None, []), GateSettings()), tmp_path, None)
    assert any("title=delta not_run::not run: the spending limit" in line for line in lines)


def test_merged_shards_add_up_their_spending(tmp_path, fresh_draws):
    config = noisy_suite(tmp_path, num_runs="1", run="workers: 1, concurrency: 1, max_cost_usd: 0.2")
    parts = [run_plan(shard_plan(build_plan(config), i, 2), quiet=True) for i in (1, 2)]
    assert [p.budget.not_run for p in parts] == [1, 1]  # each shard afforded one case of its two
    merged = merge_results([(f"shard {i}", p) for i, p in enumerate(parts, 1)])
    assert merged.budget.not_run == 2 and merged.summary.not_run == 2
    assert merged.budget.spent_usd == pytest.approx(0.48)
