"""The bundled example is a gate that can fail: with the config `init` writes for it and a baseline made the way a
push to the default branch makes one, the unchanged agent passes, an agent that stopped calling its tool fails,
and so does one broken case of six, the smallest drop `validate` says this suite can confirm."""

from __future__ import annotations

import json
import shutil

import yaml

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.commands.main import main
from adk_eval_gate.report.outputs import verdict_lines
from adk_eval_gate.results.results_format import ResultsFile
from tests.conftest import EXAMPLE

ROLL = r'r"roll an? (\d+)[ -]sided die"'
NO_ROLL = r'r"roll a die with (\d+) sides"'  # the model no longer recognises a roll: it never calls roll_die
NOT_SIX = r'r"roll an? (?!6 )(\d+)[ -]sided die"'  # only "Roll a 6 sided die" goes unrolled


def _break(example, pattern: str) -> None:
    agent = example / "hello_world" / "agent.py"
    source = agent.read_text()
    assert ROLL in source
    agent.write_text(source.replace(ROLL, pattern))


def _ci(example, tmp_path, capsys) -> tuple[int, str, str]:
    out = tmp_path / "out"
    code = main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(out), "--quiet"])
    log = capsys.readouterr().out
    return code, (out / "report.md").read_text(), log


def test_the_example_config_is_what_init_writes_for_its_folder(tmp_path, capsys):
    root = tmp_path / "repo"
    shutil.copytree(EXAMPLE / "hello_world", root / "hello_world", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(EXAMPLE / "evals", root / "evals")
    assert main(["init", "--dir", str(root), "--branch", "main"]) == 0
    written = yaml.safe_load((root / "eval-gate.yml").read_text())
    example = yaml.safe_load((EXAMPLE / "eval-gate.yml").read_text())
    # the one difference: the example commits its baseline beside the config, so that it runs offline
    assert written.pop("baseline") == {"store": "artifact", "name": "adk-eval-gate-results"}
    assert example.pop("baseline") == {"store": "file", "path": "baseline/results.json"}
    assert example == written
    assert written["agents"][0]["num_runs"] == {"min": 2, "max": 10}
    assert written["agents"][0]["evalsets"] == ["evals/*.evalset.json"]
    # init's own lines, comments included, where the example keeps them: what the range can and cannot detect,
    # computed for six cases
    for key in ("num_runs:", "fail_on:"):
        line = next(line for line in (root / "eval-gate.yml").read_text().splitlines() if key in line)
        assert line in (EXAMPLE / "eval-gate.yml").read_text().splitlines()
    runs = next(line for line in (root / "eval-gate.yml").read_text().splitlines() if "num_runs:" in line)
    assert "6 cases are too few for 90% power" in runs and "confirms 1 broken case" in runs


def test_the_committed_baseline_is_what_a_push_stores(example, tmp_path, monkeypatch, capsys):
    committed = ResultsFile.model_validate_json((EXAMPLE / "baseline" / "results.json").read_text())
    dice = committed.eval_sets[0]
    assert dice.num_runs == 10 and all(len(case.runs) == 10 for case in dice.cases)
    # a push to the default branch runs `ci` in baseline mode, which stores every case at num_runs' max
    (example / "baseline" / "results.json").unlink()
    event = tmp_path / "push.json"
    event.write_text(
        json.dumps(
            {"ref": "refs/heads/main", "after": "a" * 40, "repository": {"full_name": "o/r", "default_branch": "main"}}
        )
    )
    for name, value in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_REF": "refs/heads/main",
        "GITHUB_SHA": "a" * 40,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_WORKSPACE": str(example),
    }.items():
        monkeypatch.setenv(name, value)
    assert main(["ci", "--config", str(example / "eval-gate.yml"), "--output-dir", str(tmp_path / "o")]) == 0
    stored = ResultsFile.model_validate_json((example / "baseline" / "results.json").read_text())
    scores = {
        (case.eval_id, name, len(case.runs)): metric.score
        for case in stored.eval_sets[0].cases
        for name, metric in case.metrics.items()
    }
    assert scores == {
        (case.eval_id, name, len(case.runs)): metric.score
        for case in dice.cases
        for name, metric in case.metrics.items()
    }


def test_the_unchanged_example_passes(example, tmp_path, capsys):
    code, report, log = _ci(example, tmp_path, capsys)
    assert code == 0, log
    assert report.startswith("## ✅ adk-eval-gate passed")
    assert "hello\\_world: dice: 6 cases × {2–10} runs → confirms a drop of 1 case / 16.7 points" in report
    assert "unconfirmed" not in report


def test_the_example_that_stopped_calling_its_tool_fails(example, tmp_path, capsys):
    _break(example, NO_ROLL)
    code, report, log = _ci(example, tmp_path, capsys)
    assert code == 1, log
    headline, _, reason = report.splitlines()[:3]
    assert headline == "## ❌ adk-eval-gate failed"
    assert reason.startswith("2 failing condition(s); first: regression: hello\\_world/dice tool\\_trajectory")
    assert "| hello\\_world / dice | tool\\_trajectory\\_avg\\_score | 0.833 → 0.417 † | -0.417 |" in report
    assert "🔴 regressed" in report and "🟡" not in report


def test_one_broken_case_of_six_is_the_smallest_drop_it_confirms_and_it_fails(example, tmp_path, capsys):
    _break(example, NOT_SIX)
    code, report, log = _ci(example, tmp_path, capsys)
    assert code == 1, log
    # what changed for the user leads: one case of six, which, where its calls departed; the test's sentence follows
    diverged = "roll\\_6: first diverging call: expected roll\\_die(sides=6), got no call"
    assert (
        "regression: hello\\_world/dice tool\\_trajectory\\_avg\\_score: 1 of 6 cases scored lower (roll\\_6); "
        f"{diverged}; dropped 0.167"
    ) in report
    # the case's regression row leads with it too, and so does the job log's verdict line
    assert "| dice / roll\\_6 | tool\\_trajectory\\_avg\\_score |" in report
    assert "first diverging call: expected roll\\_die(sides=6), got no call; " in report.split("| dice / roll\\_6 |")[1]
    out = tmp_path / "out"
    comparison = Comparison.model_validate_json((out / "comparison.json").read_text())
    results = ResultsFile.model_validate_json((out / "results.json").read_text())
    (first, _) = verdict_lines(comparison, results)
    assert first.startswith(
        "adk-eval-gate: FAIL — 2 regressions (hello_world/dice tool_trajectory_avg_score: 1 of 6 cases scored lower "
        "(roll_6); roll_6: first diverging call: expected roll_die(sides=6), got no call; "
    ), first


def test_validate_states_the_power_and_warns_when_the_gate_cannot_fail(example, capsys):
    config = example / "eval-gate.yml"
    assert main(["validate", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "  evalsets 'evals/*.evalset.json' matched 1 file(s): evals/dice.evalset.json" in out
    assert "hello_world: power at alpha 0.01 (2 gating verdict(s) in the run):" in out
    assert "  dice: 6 cases × {2–10} runs → confirms a drop of 1 case / 16.7 points" in out
    assert "warning" not in out
    # a second eval file in the folder is gated without touching the config
    twin = json.loads((example / "evals" / "dice.evalset.json").read_text())
    twin["eval_set_id"] = "dice_again"
    (example / "evals" / "again.evalset.json").write_text(json.dumps(twin))
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))
    assert main(["validate", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "matched 2 file(s): evals/again.evalset.json, evals/dice.evalset.json" in out
    assert "  all 2 eval sets: 12 cases × 1 run → confirms a drop of 8 cases / 66.7 points" in out
    assert "  dice: 6 cases × 1 run → cannot confirm a drop of any size at alpha 0.01" in out
    assert "warning" not in out  # the pooled verdict can still fail: not a gate that cannot
    # but smaller drops it can neither confirm nor rule out, and says which and what would
    assert (
        "  note: a drop from 5 to 58.3 points (all 2 eval sets) is too small for these runs to confirm or rule out: "
        "it is unconfirmed, and gate.unconfirmed: fail fails it; `num_runs: {min: 2, max: 7}` would confirm every "
        "drop beyond tolerance"
    ) in out
    (example / "evals" / "again.evalset.json").unlink()
    assert main(["validate", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert (
        "warning: hello_world: no regression can fail this gate, whatever its size; set `num_runs: {min: 2, max: 7}`"
        in out
    )


def test_a_bad_unconfirmed_policy_is_one_line_naming_the_field(example, capsys):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("gate:\n", "gate:\n  unconfirmed: maybe\n"))
    assert main(["validate", "--config", str(config)]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.endswith("eval-gate.yml:12: gate.unconfirmed: 'maybe' is not allowed; use one of 'fail' or 'warn'")


def test_the_issue_s_one_run_gate_no_longer_reads_as_a_pass(example, tmp_path, capsys):
    """The user's measurement: num_runs 1 on both sides, the tool call dropped. It used to pass ("✅ … no failing
    condition", every drop 🟡 inconclusive); now each drop is unconfirmed and the headline says so."""
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))
    baseline = example / "baseline" / "results.json"
    main(["run", "--config", str(config), "--output", str(baseline), "--quiet"])
    _break(example, NO_ROLL)
    code, report, log = _ci(example, tmp_path, capsys)
    assert code == 1, log
    lines = report.splitlines()
    assert lines[0] == "## ❌ adk-eval-gate failed — 2 drop(s) unconfirmed"
    assert lines[2].startswith("2 failing condition(s); first: unconfirmed: hello\\_world/dice tool\\_trajectory")
    assert "| 0.833 → 0.417 | -0.417 | 83% → 33% | 🟡 unconfirmed |" in report
    assert "`num\\_runs: {min: 2, max: 7}` to give it power" in report
    assert "hello\\_world's gate cannot fail on a regression" in report
    # gate.unconfirmed: warn lets the check pass, never under a ✅ headline
    config.write_text(config.read_text().replace("gate:\n", "gate:\n  unconfirmed: warn\n"))
    code, report, log = _ci(example, tmp_path, capsys)
    assert code == 0, log
    assert report.splitlines()[0] == "## ⚠️ adk-eval-gate: 2 drop(s) unconfirmed, not gating (gate.unconfirmed: warn)"
    assert "adk-eval-gate: PASS — 2 drop(s) unconfirmed, not gating" in log
