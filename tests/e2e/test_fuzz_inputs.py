"""Whatever JSON lands in an eval file or config, the loaders answer with data or an InputError, never a crash."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.criteria.registry import REGISTRY, resolve_criteria
from adk_eval_gate.evalsets.eval_config import parse_eval_config
from adk_eval_gate.evalsets.loader import parse_eval_set
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "hello_world" / "evals" / "dice.evalset.json"
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
FUZZ = settings(max_examples=300, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _only_input_errors(call) -> None:
    try:
        call()
    except InputError as exc:
        assert "\n" not in exc.render()


@FUZZ
@given(json_values)
def test_arbitrary_json_as_eval_set(value):
    _only_input_errors(lambda: parse_eval_set(value, Path("x.evalset.json")))


@FUZZ
@given(json_values)
def test_arbitrary_json_as_eval_config(value):
    def call():
        data = parse_eval_config(value, Path("eval_config.json"), set(REGISTRY))
        resolve_criteria(data.criteria, "eval_config.json", custom_metrics=data.custom_metric_names)

    _only_input_errors(call)


def _mutations(rng: random.Random, node, depth=0):
    """Replace one random node of a valid eval set by a random JSON value."""
    if isinstance(node, dict) and node and rng.random() < 0.7:
        key = rng.choice(list(node))
        node[key] = (
            _mutations(rng, node[key], depth + 1)
            if rng.random() < 0.7
            else rng.choice([None, 1, "x", [], {}, True, 1.5])
        )
        return node
    if isinstance(node, list) and node and rng.random() < 0.7:
        i = rng.randrange(len(node))
        node[i] = _mutations(rng, node[i], depth + 1)
        return node
    return rng.choice([None, 0, -1, "", "y", [], {}, False, [1], {"a": 1}, 1e308])


def test_mutated_valid_eval_sets_never_crash():
    base = json.loads(EXAMPLE.read_text())
    rng = random.Random(11)
    outcomes = {"ok": 0, "error": 0}
    for _ in range(1500):
        data = _mutations(rng, copy.deepcopy(base))
        try:
            parse_eval_set(data, Path("x.evalset.json"))
            outcomes["ok"] += 1
        except InputError:
            outcomes["error"] += 1
    assert outcomes["ok"] > 50 and outcomes["error"] > 50  # both paths exercised


RESULTS = EXAMPLE.parents[1] / "baseline" / "results.json"
HISTORY = EXAMPLE.parents[1] / "recorded" / "dice.evalset_result.json"


def _mutated_files_only_raise_input_errors(tmp_path: Path, source: Path, load, seed: int) -> dict[str, int]:
    base = json.loads(source.read_text())
    if isinstance(base, str):
        base = json.loads(base)
    rng = random.Random(seed)
    outcomes = {"ok": 0, "error": 0}
    for i in range(300):
        path = tmp_path / f"m{i}.json"
        path.write_text(json.dumps(_mutations(rng, copy.deepcopy(base))))
        try:
            load(path)
            outcomes["ok"] += 1
        except InputError as exc:
            assert "\n" not in exc.render()
            outcomes["error"] += 1
    return outcomes


def test_mutated_results_files_are_read_or_refused(tmp_path):
    from adk_eval_gate.results.build import read_results

    outcomes = _mutated_files_only_raise_input_errors(tmp_path, RESULTS, read_results, 5)
    assert outcomes["ok"] > 10 and outcomes["error"] > 10


def test_mutated_actuals_are_loaded_or_refused(tmp_path):
    from adk_eval_gate.targets.replay import ReplayTarget

    outcomes = _mutated_files_only_raise_input_errors(tmp_path, HISTORY, lambda p: ReplayTarget.from_paths((p,)), 7)
    assert outcomes["ok"] > 10 and outcomes["error"] > 10


@settings(max_examples=120, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_values)
def test_arbitrary_json_as_results_or_actuals(tmp_path_factory, value):
    from adk_eval_gate.results.build import read_results
    from adk_eval_gate.targets.replay import ReplayTarget

    path = tmp_path_factory.mktemp("fuzz") / "x.json"
    try:
        path.write_text(json.dumps(value))
    except ValueError:
        return
    _only_input_errors(lambda: read_results(path))
    _only_input_errors(lambda: ReplayTarget.from_paths((path,)))
