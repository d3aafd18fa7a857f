"""`goldens update` on every real eval file of shared/reference/real-evalsets: an intended change (every tool renamed,
an argument added, every answer reworded) written into the first case leaves every byte outside that case as it
was, changes only what changed inside it, and google-adk's own loaders read the result."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from google.adk.evaluation.agent_evaluator import AgentEvaluator
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file

from adk_eval_gate.evalsets.golden_rewrite import Golden, golden_of, rewrite
from adk_eval_gate.evalsets.json_spans import parse_spans
from adk_eval_gate.evalsets.loader import load_eval_set
from tests.parity.test_real_evalsets import FILES, REAL

pytestmark = pytest.mark.skipif(
    not REAL.is_dir(), reason=f"the real eval-file corpus is not beside this clone ({REAL})"
)


def _changed(golden: Golden) -> Golden:
    return Golden(
        final_texts=tuple(f"{t} (reworded)" for t in golden.final_texts or ("an answer at last",)),
        calls=tuple((f"{name}_v2", {**args, "added": 1}) for name, args in golden.calls),
        responses=golden.responses,
        said=golden.said,
        events=golden.events,
    )


def _outside_first_case(text: str, shape: str) -> tuple[str, str]:
    root = parse_spans(text)
    items = (
        root.items if shape == "legacy_named" else next(m for m in root.members if m.key == "eval_cases").value.items
    )
    return text[: items[0].start], text[items[0].end :]


@pytest.mark.parametrize("path", FILES, ids=[str(p.relative_to(REAL)) for p in FILES])
def test_an_intended_change_rewrites_only_what_changed(path: Path, tmp_path: Path) -> None:
    loaded = load_eval_set(path)
    first = loaded.eval_set.eval_cases[0]
    assert first.conversation is not None
    text = path.read_text(encoding="utf-8")
    goldens = [_changed(golden_of(turn)) for turn in first.conversation]
    done = rewrite(text, path, loaded.shape, {first.eval_id: goldens})
    assert done.updated == (first.eval_id,) and done.problems == ()

    out = tmp_path / path.name
    out.write_text(done.text, encoding="utf-8")
    if loaded.shape != "legacy_turns":  # a flat file is its one case
        assert _outside_first_case(done.text, loaded.shape) == _outside_first_case(text, loaded.shape)
    changed = [line for line in done.text.splitlines() if line not in set(text.splitlines())]
    assert changed and all(
        "(reworded)" in line
        or "_v2" in line
        or '"added"' in line
        or line.strip() in ("},", "}", "],", "]")
        or line.rstrip().endswith(",")
        for line in changed
    )

    again = load_eval_set(out).eval_set.eval_cases[0]
    assert again.conversation is not None
    for turn, golden in zip(again.conversation, goldens, strict=True):
        assert golden_of(turn).calls == golden.calls
        assert golden_of(turn).final_texts and golden_of(turn).final_texts[-1].endswith("(reworded)")
    try:
        adk = AgentEvaluator._load_eval_set_from_file(str(out), AgentEvaluator.find_config_for_test_file(str(path)), {})
    except ValueError:
        adk = load_eval_set_from_file(str(out), out.name)
    assert len(adk.eval_cases) == len(loaded.eval_set.eval_cases)
    assert json.loads(done.text) != json.loads(text)
