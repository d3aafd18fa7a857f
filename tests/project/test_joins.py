"""Compared rows are joined on what they are about (agent, eval set, case, criterion or metric), never on the
object's identity: a row rebuilt with `model_copy` (every row model is frozen) is the same row (issue #37, item 2).

`id()` stays only where identity is the point: walking an object graph for cycles (YAML aliases, exception
chains, an agent's sub-agents) and dropping the very error objects a validator produced."""

from __future__ import annotations

import ast

import pytest
from pydantic import ValidationError

from adk_eval_gate.baseline.comparison_format import DriftRow, EfficiencyRow, PooledSummary, Row, Summary
from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "adk_eval_gate"
ROW_LAYERS = ("baseline", "gate", "report", "publish")


def test_no_row_is_joined_on_its_identity():
    found = []
    for layer in ROW_LAYERS:
        for path in sorted((PACKAGE / layer).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "id":
                    found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not found, f"join on a subject, not id(): {found}"


@pytest.mark.parametrize(
    "row",
    [
        Row(agent="a", criterion="c", baseline=1.0, current=0.0, delta=-1.0, verdict="regressed", reason="r",
            eval_set_id="s", eval_id="e"),
        Summary(agent="a", criterion="c", baseline=1.0, current=0.0, delta=-1.0, verdict="regressed", reason="r",
                eval_set_id="s"),
        PooledSummary(agent="a", criterion="c", baseline=1.0, current=0.0, delta=-1.0, verdict="regressed",
                      reason="r"),
        DriftRow(agent="a", criterion="c", baseline=1.0, current=0.0, delta=-1.0, verdict="regressed", reason="r"),
        EfficiencyRow(agent="a", eval_set_id="s", metric="cost", baseline=1.0, current=2.0, change=1.0,
                      tolerance=0.2, verdict="regressed", reason="r"),
    ],
)  # fmt: skip
def test_every_compared_row_is_frozen(row):
    with pytest.raises(ValidationError):
        row.verdict = "improved"
    assert row.model_copy(update={"gating": True}).gating and not row.gating
