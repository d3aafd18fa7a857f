"""Every eval file in shared/reference/real-evalsets loads unchanged and equals what ADK's own loaders produce."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

from adk_eval_gate.evalsets.eval_config import sibling_test_config
from adk_eval_gate.evalsets.loader import load_eval_set
from adk_eval_gate.run.plan import build_plan
from tests.support.paths import ROOT

REAL = ROOT.parent / "shared" / "reference" / "real-evalsets"
FILES = sorted(p for p in REAL.rglob("*.json") if p.name != "test_config.json")

# The corpus lives beside the repository in CI (../shared); a user's clone has nothing beside it.
pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"the real eval-file corpus is not beside this clone ({REAL})"
)


def test_corpus_is_present():
    assert len(FILES) >= 25, f"expected the real eval files under {REAL}"


def _adk_eval_set(path: Path):
    """ADK's loader for the file: AgentEvaluator's (EvalSet or flat turns), else `adk eval`'s (named list)."""
    try:
        return AgentEvaluator._load_eval_set_from_file(
            str(path), AgentEvaluator.find_config_for_test_file(str(path)), {}
        )
    except ValueError:
        return load_eval_set_from_file(str(path), path.name)


def _normalise(eval_set, keep_ids: bool) -> list[dict]:
    cases = []
    for case in eval_set.eval_cases:
        conversation = []
        for inv in case.conversation:
            dumped = json.loads(inv.model_dump_json(exclude_none=True))
            dumped.pop("invocation_id", None)
            dumped.pop("creation_timestamp", None)
            conversation.append(dumped)
        session = json.loads(case.session_input.model_dump_json(exclude_none=True)) if case.session_input else None
        cases.append({"eval_id": case.eval_id if keep_ids else None, "session": session, "conversation": conversation})
    return cases


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_loads_like_adk(path):
    ours = load_eval_set(path)
    adk = _adk_eval_set(path)
    native = ours.shape == "evalset"
    assert _normalise(ours.eval_set, keep_ids=native) == _normalise(adk, keep_ids=native)
    if native:
        assert ours.eval_set.eval_set_id == adk.eval_set_id


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_criteria_come_from_the_test_config_beside_the_file(path, tmp_path):
    config = tmp_path / "gate.yml"
    config.write_text(
        f"agents:\n  - name: a\n    target: {{kind: replay, actuals: '{path}'}}\n    evalsets: ['{path}']\n"
    )
    plan = build_plan(config)
    eval_set = plan.agents[0].eval_sets[0]
    adk_config = AgentEvaluator.find_config_for_test_file(str(path))
    ours = {c.name: c.threshold for c in eval_set.criteria}
    theirs = {name: (v if isinstance(v, float) else v.threshold) for name, v in adk_config.criteria.items()}
    assert ours == theirs
    assert (eval_set.criteria_source == "default") == (sibling_test_config(path) is None)


def test_replaying_expected_as_actual_scores_perfect_trajectories(tmp_path):
    """Each real file replayed against itself: every trajectory matches (a check on loader + scorer together)."""
    from adk_eval_gate.run.pipeline import run_plan

    for path in FILES:
        config = tmp_path / "gate.yml"
        config.write_text(
            f"agents:\n  - name: a\n    target: {{kind: replay, actuals: '{path}'}}\n    evalsets: ['{path}']\n"
            "    criteria: {tool_trajectory_avg_score: 1.0}\n"
        )
        results = run_plan(build_plan(config))
        case = results.eval_sets[0].cases[0]
        assert case.metrics["tool_trajectory_avg_score"].score == 1.0, path
        assert case.status == "passed"
