"""Every eval file in shared/reference/real-evalsets loads unchanged and equals what ADK's own loaders produce; every
file in tests/parity/real_shapes (shapes found in public repositories: agents-cli datasets with an `eval_set_id`,
ADK files and configs with keys ADK ignores) is read as the tool that reads it reads it — ADK's own loader and
EvalConfig, and agents-cli's reading of a dataset (`eval generate`: `eval_cases`, each with a `prompt` or
`agent_data`, validated by the SDK's EvalCase). agents-cli's own metric loading of the eval configs there is
checked in tests/parity/test_agents_cli_parity.py."""

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
needs_corpus = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"the real eval-file corpus is not beside this clone ({REAL})"
)
SHAPES = Path(__file__).parent / "real_shapes"
SHAPE_FILES = sorted([*(SHAPES / "datasets").glob("*.json"), *(SHAPES / "evalsets").glob("*.json")])


@needs_corpus
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


@needs_corpus
@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(REAL)))
def test_loads_like_adk(path):
    ours = load_eval_set(path)
    adk = _adk_eval_set(path)
    native = ours.shape == "evalset"
    assert _normalise(ours.eval_set, keep_ids=native) == _normalise(adk, keep_ids=native)
    if native:
        assert ours.eval_set.eval_set_id == adk.eval_set_id


@needs_corpus
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


@needs_corpus
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


def _adk_reads(path: Path):
    """ADK's `load_eval_set_from_file` (EvalSet, else the legacy converter), or None where ADK refuses the file."""
    try:
        return load_eval_set_from_file(str(path), path.name)
    except Exception:
        return None


def _agents_cli_reads(path: Path) -> list | None:
    """agents-cli 1.11's `eval generate` reading (cmd_generate.py): `data.get("eval_cases")` non-empty, each case
    with a truthy `prompt` or `agent_data`, each validated by the SDK's EvalCase; None where it refuses."""
    from vertexai._genai import types as sdk

    data = json.loads(path.read_text())
    cases = data.get("eval_cases") if isinstance(data, dict) else None
    if not cases or not all(isinstance(c, dict) and (c.get("prompt") or c.get("agent_data")) for c in cases):
        return None
    try:
        return [sdk.EvalCase.model_validate(case) for case in cases]
    except Exception:
        return None


def _sent_text(case) -> str:
    """The user message agents-cli sends for an SDK case: the prompt, else the last (user) event."""
    content = case.prompt or [e for t in case.agent_data.turns for e in t.events][-1].content
    return "".join(part.text or "" for part in content.parts)


@pytest.mark.parametrize("path", SHAPE_FILES, ids=lambda p: p.name)
def test_a_real_shape_is_read_as_the_tool_that_reads_it_reads_it(path):
    adk, cli = _adk_reads(path), _agents_cli_reads(path)
    assert adk is not None or cli is not None, f"{path.name}: the corpus holds only files a reference tool reads"
    ours = load_eval_set(path)
    if ours.shape == "agents_cli":
        assert cli is not None, f"{path.name}: read as an agents-cli dataset, which agents-cli refuses"
        assert [c.eval_id for c in ours.eval_set.eval_cases] == [
            case.eval_case_id or f"case_{index}" for index, case in enumerate(cli)
        ]
        sent = [inv.user_content for case in ours.eval_set.eval_cases for inv in case.conversation or []]
        assert ["".join(p.text or "" for p in content.parts or []) for content in sent] == [_sent_text(c) for c in cli]
    else:
        assert adk is not None, f"{path.name}: read as an ADK eval set, which ADK refuses"
        native = ours.shape == "evalset"
        assert _normalise(ours.eval_set, keep_ids=native) == _normalise(adk, keep_ids=native)
    if adk is None or cli is None:  # only one tool reads it: that tool's reading is the one
        assert (ours.shape == "agents_cli") == (cli is not None)


@pytest.mark.parametrize("path", sorted((SHAPES / "adk_configs").glob("*.json")), ids=lambda p: p.name)
def test_a_real_adk_eval_config_gives_the_criteria_adk_reads(path):
    from google.adk.evaluation.eval_config import EvalConfig

    from adk_eval_gate.criteria.registry import REGISTRY
    from adk_eval_gate.evalsets.eval_config import load_eval_config

    theirs = EvalConfig.model_validate_json(path.read_text())
    ours = load_eval_config(path, set(REGISTRY))
    assert ours.criteria == {k: (v if isinstance(v, float) else v.threshold) for k, v in theirs.criteria.items()}
    assert set(ours.custom_metric_paths) == set(theirs.custom_metrics or {})
    assert ours.warnings, f"{path.name} holds keys ADK ignores: each is a warning"
    assert all(w.line for w in ours.warnings)
