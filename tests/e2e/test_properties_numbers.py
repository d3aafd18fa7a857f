"""Issue #34, item 5: every number the gate reads is bounded where it enters. Generated scores — finite but huge
(1.7e308, whose sum overflows), at the documented bound (±1e15) and just past it, subnormal, negative, NaN and
infinite — in agents-cli results files and in our own results files, through `compare` and `baseline update`: the
answer is a result (exit 0/1) or one line (exit 2), never a traceback; what is written holds finite numbers only."""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_gate.commands.main import main
from tests.e2e.test_agents_cli import _agents_cli_results
from tests.support.hostile import assert_rule
from tests.support.paths import ROOT

MAX_MAGNITUDE = 1e15  # core/numbers.py's, as docs/hostile-input.md documents it
PROPERTIES = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

edges = st.sampled_from(
    [1.7e308, -1.7e308, 1e308, 8.9e307, MAX_MAGNITUDE, -MAX_MAGNITUDE, MAX_MAGNITUDE * (1 + 1e-15), 1e16, 5e-324]
)
scores = st.one_of(edges, st.floats(allow_nan=True, allow_infinity=True), st.floats(-10, 10), st.none())


def _finite_everywhere(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite_everywhere(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite_everywhere(v) for v in value)
    return True


def _parse_finite(text: str):
    return json.loads(text, parse_constant=lambda name: float("nan"))


@PROPERTIES
@given(current=st.lists(scores, min_size=3, max_size=3), baseline=st.lists(scores, min_size=3, max_size=3))
def test_agents_cli_results_with_any_number_are_compared_or_refused_in_one_line(current, baseline, capsys):
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        now = _agents_cli_results(root / "now.json", {f"c{i}": s for i, s in enumerate(current)})
        then = _agents_cli_results(root / "then.json", {f"c{i}": s for i, s in enumerate(baseline)})
        out = root / "out" / "c.json"
        (root / "out").mkdir()
        code = assert_rule(
            ["compare", "--results", str(now), "--baseline", str(then), "--output", str(out)], root, capsys
        )
        if code in (0, 1):
            assert _finite_everywhere(_parse_finite(out.read_text()))


@pytest.fixture(scope="module")
def stored(tmp_path_factory) -> tuple[Path, Path]:
    """An agents-cli project whose baseline (our results file, agents-cli shape) was stored from agents-cli's."""
    root = tmp_path_factory.mktemp("numbers") / "project"
    shutil.copytree(ROOT / "examples" / "agents_cli", root, ignore=shutil.ignore_patterns("__pycache__", "baseline"))
    twelve = {"eval_cases": [{"eval_case_id": f"c{i}", "prompt": {"parts": [{"text": f"Hi {i}"}]}} for i in range(3)]}
    (root / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(twelve))
    config = root / "gate.yml"
    config.write_text(
        "baseline: {store: file, path: baseline/results.json}\ngate: {fail_on: [regression, error]}\n"
        "agents:\n  - name: travel_helper\n    target: {kind: adk, agent: app}\n"
        "    evalsets: [tests/eval/datasets/*-dataset.json]\n    eval_config: tests/eval/eval_config.yaml\n"
    )
    good = _agents_cli_results(root / "good.json", {"c0": 4.5, "c1": 3.0, "c2": 5.0})
    assert main(["baseline", "update", "--config", str(config), "--results", str(good)]) == 0
    return config, root / "baseline" / "results.json"


@PROPERTIES
@given(value=scores, where=st.sampled_from(["score", "threshold", "per_invocation", "runs"]))
def test_our_results_files_with_any_number_are_compared_or_refused_in_one_line(stored, value, where, capsys):
    config, baseline = stored
    data = json.loads(baseline.read_text())
    metric = data["eval_sets"][0]["cases"][0]["metrics"]["quality"]
    if where == "per_invocation":
        metric["per_invocation"] = [value]
    elif where == "runs":
        metric["runs"][0]["score"] = value
    else:
        metric[where] = value
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        forged = root / "forged.json"
        forged.write_text(json.dumps(data, allow_nan=True))
        out = root / "c.json"
        argv = ["compare", "--results", str(forged), "--baseline", str(baseline), "--output", str(out)]
        if assert_rule(argv, root, capsys) in (0, 1):
            assert _finite_everywhere(_parse_finite(out.read_text()))
        argv = ["compare", "--results", str(baseline), "--baseline", str(forged), "--output", str(out)]
        assert_rule(argv, root, capsys)
        kept = {p: p.read_bytes() for p in baseline.parent.iterdir()}
        try:  # the store's history records it: its means and sums must not overflow either
            assert_rule(["baseline", "update", "--config", str(config), "--results", str(forged)], root, capsys)
        finally:
            for path in list(baseline.parent.iterdir()):
                path.unlink()
            for path, data in kept.items():
                path.write_bytes(data)
