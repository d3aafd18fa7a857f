"""The pure parts of a report's steps: the mode is one of four, whatever the event; limiting the baseline to the
cases a `--cases` run ran makes a new outcome and leaves the loaded one as it was; an `/eval` run's results name
the commit evaluated as a new value."""

from __future__ import annotations

import typing

from adk_eval_gate.baseline.comparison_format import BaselineIdentity
from adk_eval_gate.baseline.stores import LoadOutcome
from adk_eval_gate.baseline.stores.stored_baseline import LoadedBaseline
from adk_eval_gate.commands.ci import evaluated_at
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.handshake.mode import Mode, mode_of
from adk_eval_gate.publish.gather import only_cases_run
from tests.support.report_data import Case, results_file

PULL = {"number": 7, "head": {"sha": "c" * 40}, "base": {"sha": "b" * 40, "ref": "main"}}
REPO = {"default_branch": "main"}


def test_every_event_has_one_of_the_four_modes():
    cases = [
        (ActionsContext(event_name="pull_request", event={"pull_request": PULL}), "pull_request"),
        (ActionsContext(event_name="issue_comment", event={"issue": {"number": 7}}), "comment"),
        (ActionsContext(event_name="push", ref="refs/heads/main", event={"repository": REPO}), "baseline"),
        (ActionsContext(event_name="push", ref="refs/heads/feature", event={"repository": REPO}), "local"),
        (ActionsContext(event_name="workflow_dispatch"), "local"),
        (ActionsContext(), "local"),
    ]
    assert [mode_of(context) for context, _ in cases] == [mode for _, mode in cases]
    assert {mode for _, mode in cases} == set(typing.get_args(Mode))


def _case(eval_id: str) -> Case:
    return Case(eval_id, {"tool_trajectory_avg_score": [[1.0]]})


def test_the_baseline_limited_to_the_cases_run_is_a_new_outcome():
    stored = results_file({("shop", "qa"): [_case("a"), _case("b"), _case("c")]})
    loaded = LoadOutcome(LoadedBaseline(stored, BaselineIdentity(source="baseline.json", sha=None)), ["old"])
    current = results_file({("shop", "qa"): [_case("b")]})
    limited = only_cases_run(loaded, current)
    assert [c.eval_id for s in limited.baseline.results.eval_sets for c in s.cases] == ["b"]
    assert limited.baseline.results.summary.total == 1 and limited.warnings == ["old"]
    assert loaded.baseline.results is stored and [c.eval_id for c in stored.eval_sets[0].cases] == ["a", "b", "c"]
    assert only_cases_run(LoadOutcome(None), current).baseline is None


def test_an_eval_runs_results_name_the_commit_evaluated_as_a_new_value():
    results = results_file({("shop", "qa"): [_case("a")]}, sha="d" * 40)
    judged = evaluated_at(results, "e" * 40)
    assert judged.git.sha == "e" * 40 and results.git.sha == "d" * 40
    assert judged.eval_sets is results.eval_sets  # the cases themselves are not copied
