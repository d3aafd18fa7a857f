"""`--cases` picks cases the way `adk eval file.evalset.json:case1,case2` does, and a partial run is never a
baseline."""

from __future__ import annotations

import json

import pytest

from adk_eval_gate.commands.ci import run_ci
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.handshake.settings import PublishOptions
from adk_eval_gate.run.plan import build_plan
from adk_eval_gate.run.selection import select_cases


def _ids(plan) -> dict[str, list[str]]:
    return {s.eval_set_id: [c.eval_id for c in s.file.eval_set.eval_cases] for a in plan.agents for s in a.eval_sets}


def test_selectors_by_id_file_and_glob(example):
    plan = build_plan(example / "eval-gate.yml")
    assert _ids(select_cases(plan, ["dice:roll_6,roll_20"])) == {"dice": ["roll_6", "roll_20"]}
    assert _ids(select_cases(plan, ["evals/dice.evalset.json:roll_*"])) == {
        "dice": ["roll_6", "roll_20", "roll_12_wrong_golden"]
    }
    assert _ids(select_cases(plan, ["dice.evalset.json:capabilities", "dice:primes_*"])) == {
        "dice": ["capabilities", "primes_paraphrased"]
    }
    assert _ids(select_cases(plan, ["hello_world/dice"]))["dice"] == _ids(plan)["dice"]
    assert _ids(select_cases(plan, ["dice:roll_6", "dice"]))["dice"] == _ids(plan)["dice"]


@pytest.mark.parametrize(
    ("selector", "named"),
    [
        ("dicee:roll_6", "no eval set 'dicee'"),
        ("dice:roll_7", "no case 'roll_7' in eval set 'dice'"),
        ("dice:nothing_*", r"no case 'nothing_\*'"),
        ("dice:", "names no case"),
    ],
)
def test_unknown_names_are_bad_input(example, selector, named):
    with pytest.raises(InputError, match=named):  # one line naming what matched nothing
        select_cases(build_plan(example / "eval-gate.yml"), [selector])


def test_a_selected_run_on_the_default_branch_never_overwrites_the_baseline(example, tmp_path, capsys):
    baseline = example / "baseline" / "results.json"
    before = baseline.read_bytes()
    event = tmp_path / "event.json"
    event.write_text(
        json.dumps({"ref": "refs/heads/main", "after": "a" * 40, "repository": {"default_branch": "main"}})
    )
    context = ActionsContext.from_env(
        {"GITHUB_EVENT_NAME": "push", "GITHUB_REF": "refs/heads/main", "GITHUB_EVENT_PATH": str(event)}
    )
    options = PublishOptions(
        config=str(example / "eval-gate.yml"),
        output_dir=str(tmp_path / "out"),
        quiet=True,
        cases=["dice:roll_6"],
    )
    run_ci(options, context)
    assert baseline.read_bytes() == before
    assert "baseline not stored: --cases ran only part of the suite" in capsys.readouterr().out  # the verdict line
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["summary"]["total"] == 1
    # the cases not chosen were not run, not removed: the comparison speaks of roll_6 alone
    comparison = json.loads((tmp_path / "out" / "comparison.json").read_text())
    assert {row["eval_id"] for row in comparison["rows"]} == {"roll_6"}
    assert "removed" not in {row["verdict"] for row in comparison["rows"]}
