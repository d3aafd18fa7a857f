"""What "flaky" and "broken" mean (issue 25): one case × criterion disagreeing with itself, run by run — never two
criteria of one case, never two turns of one run. One definition (`results.flakiness`) behind report.html's tag
and the history's labels, which agree on the same data; quarantine only ever takes out such a case."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adk_eval_gate.baseline.history.database import StoredHistory
from adk_eval_gate.baseline.history.io import HistoryState
from adk_eval_gate.baseline.history.lookup import specs_of_results
from adk_eval_gate.baseline.history.record_format import History, HistoryRecord
from adk_eval_gate.baseline.history.records import record_of
from adk_eval_gate.baseline.history.stability import Known, classify, known_cases, quarantinable
from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.history import FlakySettings, HistorySection
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.history import history_lines
from adk_eval_gate.report.html_cases import flaky_criteria
from adk_eval_gate.results.flakiness import fails_every_run, is_flaky
from adk_eval_gate.results.results_format import ResultsFile
from tests.support.report_data import RESPONSE, TRAJECTORY, Case, results_file

SETTINGS = FlakySettings()


@pytest.mark.parametrize(
    ("commits", "flaky", "broken"),
    [
        ([(3, 3)] * 10, False, False),  # the same every time
        ([(0, 3)] * 10, False, True),  # failing every run of every commit: broken, not noise
        ([(2, 3)], True, False),  # one commit whose runs disagree
        ([(3, 3), (3, 3), (0, 3), (0, 3)], False, False),  # one merge broke it: a change, turned once
        ([(1, 1), (0, 1), (1, 1), (1, 1)], False, False),  # broke, then fixed: turned twice
        ([(1, 1), (0, 1), (1, 1), (0, 1)], True, False),  # turned three times: only chance does that
        ([(0, 0), (0, 0)], False, False),  # no run had an outcome: nothing to say
    ],
)
def test_the_definition(commits, flaky, broken):
    assert is_flaky(commits) is flaky and fails_every_run(commits) is broken


def _record(results: ResultsFile, i: int) -> HistoryRecord:
    return record_of(results).model_copy(update={"sha": f"{i:040x}"})


def _labels(records: list[HistoryRecord], results: ResultsFile, settings: FlakySettings = SETTINGS) -> dict:
    return {key: k.stability for key, k in known_cases(records, specs_of_results(results), settings).items()}


def test_identical_history_records_give_no_flaky_and_no_broken_by_noise():
    """The user's measurement: 1,000 multi-turn cases, 200 identical records (nothing varies at all). A case whose
    second turn fails in every run, or that passes one criterion and fails the other, was 'flaky' (167 of 1,000)
    or 'broken' (58) when turns and criteria were pooled into one pass/fail."""
    one_turn_fails = [[1.0, 0.0, 1.0]] * 3  # trajectory: every run fails (mean 2/3 < 1), on its second turn
    low_turn = [[0.9, 0.7, 0.9]] * 3  # response: every run passes (mean 0.83 ≥ 0.8) with one turn below 0.8
    cases = [
        Case(f"c{i}", {TRAJECTORY: one_turn_fails if i % 6 == 0 else [[1.0] * 3] * 3, RESPONSE: low_turn})
        for i in range(1000)
    ]
    results = results_file({("shop", "checkout"): cases})
    record = record_of(results)
    labels = _labels([record.model_copy(update={"sha": f"{i:040x}"}) for i in range(200)], results)
    assert [key for key, label in labels.items() if label == "flaky"] == []
    broken = {key[2] for key, label in labels.items() if label == "broken"}
    assert broken == {f"c{i}" for i in range(0, 1000, 6)}  # exactly the cases that fail every run: not noise
    assert all(label == "stable" for key, label in labels.items() if key[3] == RESPONSE)
    assert all("flaky" not in _case_tags(results, c) for c in ("c0", "c1"))  # the page agrees


def _case_tags(results: ResultsFile, eval_id: str) -> list[str]:
    return flaky_criteria(next(c for c in results.eval_sets[0].cases if c.eval_id == eval_id))


def test_report_html_and_the_history_agree_on_the_same_data():
    """Random runs of random cases (1–3 turns, 5 runs, two criteria): the criteria report.html calls flaky in this
    run are exactly those a history of this one commit labels flaky."""
    rng = random.Random(25)
    values = (0.0, 0.5, 0.75, 0.9, 1.0)

    def runs(turns: int, steady: bool) -> list[list[float]]:
        one = [rng.choice(values) for _ in range(turns)]
        return [one if steady else [rng.choice(values) for _ in range(turns)] for _ in range(5)]

    cases = []
    for i in range(300):
        turns = rng.randint(1, 3)
        cases.append(Case(f"c{i}", {TRAJECTORY: runs(turns, rng.random() < 0.5), RESPONSE: runs(turns, i % 2 == 0)}))
    results = results_file({("shop", "checkout"): cases})
    page = {("shop", "checkout", c.eval_id, n) for c in results.eval_sets[0].cases for n in flaky_criteria(c)}
    history = {key for key, label in _labels([_record(results, 0)], results).items() if label == "flaky"}
    assert page == history
    assert 50 < len(page) < 550  # both kinds of case are in the data: the comparison can fail either way
    steady = {("shop", "checkout", f"c{i}", RESPONSE) for i in range(0, 300, 2)}
    assert not page & steady  # identical runs are never flaky, however their turns and criteria differ


def _state(records: list[HistoryRecord]) -> HistoryState:
    history = StoredHistory.from_history(History(repository="o/r", config="eval-gate.yml", records=records))
    return HistoryState(
        settings=HistorySection(), source="test", repository="o/r", config="eval-gate.yml", history=history
    )


def test_a_deterministic_regression_is_never_quarantined():
    """A history where nothing varies but the cases' own turns and criteria, and one merge that broke a case for good;
    then a pull request that breaks another case in every run. With `gate.quarantine: flaky` nothing leaves the
    gate, and the pull request fails on its regression."""
    steady = {TRAJECTORY: [[1.0, 0.0, 1.0]] * 3, RESPONSE: [[0.9, 0.7, 0.9]] * 3}
    ok = {TRAJECTORY: [[1.0, 1.0]] * 5, RESPONSE: [[1.0, 1.0]] * 5}
    broken_later = {TRAJECTORY: [[0.0, 0.0]] * 5, RESPONSE: [[1.0, 1.0]] * 5}

    def commit(merged: bool, pr: bool = False) -> ResultsFile:
        cases = [Case("steady", steady), Case("merged", broken_later if merged else ok)]
        cases += [Case("victim", broken_later if pr else ok)] + [Case(f"ok{i}", ok) for i in range(5)]
        return results_file({("shop", "checkout"): cases})

    records = [_record(commit(merged=i >= 5), i) for i in range(10)]
    base, current = commit(merged=True), commit(merged=True, pr=True)
    comparison = build_comparison(
        current,
        LoadOutcome(LoadedBaseline(base, identity_of(base, "baseline.json"))),
        GateSettings(quarantine="flaky", fail_on=["regression", "case_regression"]),
        history=_state(records),
    )
    assert comparison.history is not None
    known = {(f.eval_id, f.criterion, f.stability) for f in comparison.history.flaky}
    assert known == {("steady", TRAJECTORY, "broken")}  # fails every run; "merged" changed once: drift, not chance
    assert [r.eval_id for r in comparison.rows if r.quarantined] == []
    victim = next(r for r in comparison.rows if r.eval_id == "victim" and r.criterion == TRAJECTORY)
    assert victim.verdict == "regressed" and victim.gating and comparison.verdict == "fail"


def test_quarantine_takes_out_a_coin_but_not_a_case_that_slipped_once_in_twenty_runs():
    coin = [[[1.0]], [[0.0]], [[1.0]], [[0.0]]]  # per commit, one run
    records = []
    for i in range(20):
        cases = [
            Case("coin", {TRAJECTORY: coin[i % 4]}),
            Case("slip", {TRAJECTORY: [[1.0], [0.0]] if i == 7 else [[1.0]]}),
            Case("ok", {TRAJECTORY: [[1.0]]}),
        ]
        records.append(_record(results_file({("shop", "checkout"): cases}), i))
    current = results_file({("shop", "checkout"): [Case(c, {TRAJECTORY: [[1.0]]}) for c in ("coin", "slip", "ok")]})
    comparison = build_comparison(
        current,
        LoadOutcome(LoadedBaseline(current, identity_of(current, "baseline.json"))),
        GateSettings(quarantine="flaky"),
        history=_state(records),
    )
    assert comparison.history is not None
    # Both disagreed with themselves (the coin turned nineteen times, the slip's two runs of one commit disagreed);
    # only the coin's share of passing runs is in [low, high], so only the coin leaves the gate.
    labels = {(f.eval_id, f.stability, f.passes, f.samples, f.quarantined) for f in comparison.history.flaky}
    assert labels == {("coin", "flaky", 10, 20, True), ("slip", "flaky", 20, 21, False)}
    assert {r.eval_id for r in comparison.rows if r.quarantined} == {"coin"}
    console = "\n".join(history_lines(comparison.history))
    assert "flaky: shop/checkout coin tool_trajectory_avg_score passed 10 of 20 runs over 20 record(s)" in console


def test_records_without_run_outcomes_say_nothing_about_flakiness():
    """An eval set recorded by an earlier version has only the pooled sample counts: they cannot tell a run that
    failed from a turn that failed, so they are not read as run outcomes."""
    results = results_file({("shop", "checkout"): [Case("c", {TRAJECTORY: [[1.0], [0.0], [1.0]]})]})
    record = _record(results, 0)
    (eval_set,) = record.eval_sets
    assert eval_set.run_outcomes and eval_set.cases["c"].runs == {}  # one turn a run: the counts say it already
    old = record.model_copy(update={"eval_sets": [eval_set.model_copy(update={"run_outcomes": False})]})
    assert _labels([old] * 3, results) == {}
    assert _labels([record], results) == {("shop", "checkout", "c", TRAJECTORY): "flaky"}


def test_a_record_keeps_run_outcomes_only_where_the_sample_counts_do_not_say_them():
    two_turns = Case("two_turns", {TRAJECTORY: [[1.0, 0.0]] * 3, RESPONSE: [[1.0, 1.0]] * 3})
    one_turn = Case("one_turn", {TRAJECTORY: [[1.0], [0.0], [1.0]], RESPONSE: [[0.9]] * 3})
    (eval_set,) = record_of(results_file({("shop", "checkout"): [two_turns, one_turn]})).eval_sets
    assert eval_set.cases["two_turns"].scores[TRAJECTORY][1:] == (3, 6)  # three of six turns passed
    assert eval_set.cases["two_turns"].runs == {TRAJECTORY: (0, 3), RESPONSE: (3, 3)}  # …and no run
    assert eval_set.cases["one_turn"].runs == {}


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)).map(lambda t: (min(t), max(t))), max_size=25),
    st.booleans(),
)
def test_only_a_case_that_disagreed_with_itself_is_ever_flaky_or_quarantined(commits, agree):
    """Any history of run outcomes: a label of flaky, and quarantine, need a disagreement by the one definition;
    a case whose every commit agreed and that turned at most twice is never either."""
    if agree:  # every commit unanimous, and at most two turns: a deterministic case, or one that changed
        commits = [(n if i < len(commits) // 2 else 0, n) for i, (_, n) in enumerate(commits)]
    label = classify(commits, SETTINGS)
    runs, passed = sum(n for _, n in commits), sum(p for p, _ in commits)
    known = Known(label or "none", passed, runs, len(commits))
    assert (label == "flaky") == is_flaky(commits)
    assert not quarantinable(known, SETTINGS) or is_flaky(commits)
    if agree:
        assert label != "flaky" and not quarantinable(known, SETTINGS)
    if label == "broken":
        assert passed == 0 < runs
