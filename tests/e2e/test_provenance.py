"""What changed besides the code, end to end through the CLI: a real ADK agent (the scripted noisy model, its
served model version set by NOISY_MODEL_VERSION) judged by the real google-genai client against a fake Gemini
whose answers name their model version. The baseline is made with judge version A and model v1, the pull
request runs with judge version B and model v2: the comment's and the console's first line names both, the
history marks the record where they changed, and the judged criterion is re-scored when the baseline kept its
invocations, else not compared."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.commands.main import main
from adk_eval_gate.results.build import read_results
from adk_eval_gate.results.provenance import installed
from tests.support.fake_gemini import FakeGemini, verdict
from tests.support.noisy_suite import write_noisy_eval_set
from tests.support.paths import AGENTS

KEYS = ("alpha", "beta", "gamma")
JUDGED = "final_response_match_v2"
SHA = [f"{i:02d}".ljust(40, "b") for i in range(3)]


def suite(root: Path, store: str) -> Path:
    shutil.copytree(AGENTS / "noisy", root / "noisy", ignore=shutil.ignore_patterns("__pycache__"))
    write_noisy_eval_set(root, KEYS)
    config = root / "gate.yml"
    config.write_text(
        "run: {workers: 1}\njudge: {cache: null}\n"
        "agents:\n  - name: noisy\n    target: {kind: adk, agent: noisy}\n    evalsets: [s.evalset.json]\n"
        "    criteria:\n      tool_trajectory_avg_score: 1.0\n"
        f"      {JUDGED}: {{threshold: 0.5, judge_model_options: {{judge_model: gemini-judge, num_samples: 1}}}}\n"
        f"    num_runs: 2\n{store}"
    )
    return config


@pytest.fixture
def judge(gemini_env, monkeypatch, tmp_path):
    """The fake judge, answering `valid` as version judge-a until a test moves it on; the agent's draws seeded."""
    server = FakeGemini(lambda prompt: verdict("valid"))
    server.model_version = "judge-a"
    gemini_env(server)
    monkeypatch.setenv("NOISY_SEED", tmp_path.name)
    monkeypatch.setenv("NOISY_MODEL_VERSION", "scripted-v1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    yield server
    server.close()


def move_on(judge, monkeypatch) -> None:
    """A new judge version behind the same name, one that finds every answer invalid; a new model behind the
    agent's name. The code is the same."""
    judge.model_version, judge.reply = "judge-b", lambda prompt: verdict("invalid")
    monkeypatch.setenv("NOISY_MODEL_VERSION", "scripted-v2")


def test_a_run_records_its_judge_its_served_model_and_the_scorers(judge, tmp_path):
    config = suite(tmp_path, "")
    results = tmp_path / "run.json"
    assert main(["run", "--config", str(config), "--output", str(results), "--quiet"]) == 0
    provenance = read_results(results).provenance
    assert provenance is not None
    assert provenance.judges[JUDGED].model == "gemini-judge"
    assert provenance.judges[JUDGED].served == {"judge-a": 3 * 2}  # one sample per case and run
    assert set(provenance.judges) == {JUDGED}  # a criterion no LLM judges has no judge
    noisy = provenance.agents["noisy"]
    assert noisy.target == "adk" and noisy.label is None
    assert set(noisy.served) == {"scripted-v1"} and noisy.served["scripted-v1"] >= 3 * 2 * 2  # call + answer
    assert provenance.scorers.google_adk == installed("google-adk") is not None
    assert provenance.scorers.rouge_score == installed("rouge-score")


def test_a_new_judge_and_model_lead_the_comment_and_the_stored_baseline_cannot_be_compared_on_them(
    judge, tmp_path, monkeypatch, capsys
):
    config = suite(tmp_path, "baseline: {store: file, path: blessed/results.json}\n")
    monkeypatch.setenv("GITHUB_SHA", SHA[0])
    base = tmp_path / "base.json"
    assert main(["run", "--config", str(config), "--output", str(base), "--quiet"]) == 0
    assert main(["baseline", "update", "--config", str(config), "--results", str(base)]) == 0
    stored = read_results(tmp_path / "blessed" / "results.json")  # slim: scores, no invocations
    assert stored.provenance is not None and stored.provenance.judges[JUDGED].served == {"judge-a": 6}
    move_on(judge, monkeypatch)
    monkeypatch.setenv("GITHUB_SHA", SHA[1])
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(["ci", "--config", str(config), "--output-dir", str(out), "--no-comment", "--quiet"])
    printed = capsys.readouterr().out
    comparison = Comparison.model_validate_json((out / "comparison.json").read_text())
    report = (out / "report.md").read_text()
    first = report.splitlines()[0].replace("\\", "")  # markdown's escapes aside
    assert first.startswith("> 🔀 **Changed besides the code: judge of final_response_match_v2 judge-a → judge-b")
    assert "noisy's served model scripted-v1 → scripted-v2" in first
    assert "not comparable with the baseline" in first and "adk-eval-gate baseline update" in first
    # the log: the comment (no step summary here), then the verdict lines, led by the change
    ending = [line for line in printed.splitlines() if line.startswith("adk-eval-gate: ")]
    assert ending[0].startswith("adk-eval-gate: Changed besides the code: judge of final_response_match_v2")
    assert ending[1].startswith("adk-eval-gate: PASS")
    assert comparison.changed is not None and comparison.changed.handling == "not_comparable"
    judged = [r for r in comparison.rows if r.criterion == JUDGED]
    # every judged score fell 1 → 0 with the new judge: never flagged as the agent's drop, never passed as unchanged
    assert judged and {r.verdict for r in judged} == {"not_comparable"}
    assert all("scored otherwise than the baseline was (judge judge-a → judge-b)" in r.reason for r in judged)
    assert {r.verdict for r in comparison.rows if r.criterion != JUDGED} == {"unchanged"}
    assert code == 0  # gate.fail_on lacks not_comparable: the policy decides, the first line says why
    # the default branch moves on too: its history marks the record where the judge and the model changed
    assert main(["baseline", "update", "--config", str(config), "--results", str(out / "results.json")]) == 0
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 0
    shown = capsys.readouterr().out.splitlines()
    marks = [line for line in shown if "changed besides the code" in line]
    assert len(marks) == 1, shown
    # the records' list (history show also names records in its trend and pass^k sections, above it)
    listed = next(i for i, line in enumerate(shown) if line.strip().startswith("Newest "))
    newest = next(i for i, line in enumerate(shown) if i > listed and SHA[1][:7] in line)
    assert shown[newest + 1] == marks[0]  # under the newer record, not the older
    assert "judge of final_response_match_v2 gemini-judge (judge-a) → gemini-judge (judge-b)" in marks[0]
    assert "noisy's served model scripted-v1 → scripted-v2" in marks[0]


def test_a_baseline_that_kept_its_invocations_is_rescored_with_todays_judge(judge, tmp_path, monkeypatch, capsys):
    config = suite(tmp_path, "")
    full = tmp_path / "full.json"  # `run`'s own output: every run's invocations
    assert main(["run", "--config", str(config), "--output", str(full), "--quiet"]) == 0
    before = len(judge.requests)
    move_on(judge, monkeypatch)
    out = tmp_path / "out"
    capsys.readouterr()
    code = main(["ci", "--config", str(config), "--baseline", str(full), "--output-dir", str(out), "--no-comment"])
    comparison = Comparison.model_validate_json((out / "comparison.json").read_text())
    first = (out / "report.md").read_text().splitlines()[0].replace("\\", "")
    assert "judge of final_response_match_v2 judge-a → judge-b" in first
    assert "re-scored with today's judge and scorers (final_response_match_v2): compared like for like" in first
    assert comparison.changed is not None and comparison.changed.handling == "rescored"
    judged = [r for r in comparison.rows if r.criterion == JUDGED]
    # the baseline's answers judged again by judge-b: 0 → 0, the same as the pull request's, not a drop of 1
    assert judged and {(r.verdict, r.baseline, r.current) for r in judged} == {("unchanged", 0.0, 0.0)}
    assert len(judge.requests) - before == 2 * 3 * 2  # the pull request's and the baseline's runs, judged once
    assert code == 0
    # `compare` with the config does the same from the two files
    capsys.readouterr()
    args = ["--results", str(out / "results.json"), "--baseline", str(full), "--config", str(config)]
    assert main(["compare", *args]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("Changed besides the code: judge of final_response_match_v2 judge-a → judge-b")
    assert "compared like for like" in printed[0]
    assert main(["compare", *args[:4]]) == 0  # without the config there is no plan to re-score with
    assert "not comparable with the baseline" in capsys.readouterr().out.splitlines()[0]
