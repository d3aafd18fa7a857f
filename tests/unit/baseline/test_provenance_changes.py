"""What changed besides the code, decided over two results files: which changes are named, which make criteria not
comparable (never a drop passed or flagged across judges), the line that leads the comment and the console, the
history's marks, and shards' provenance merged."""

from __future__ import annotations

from adk_eval_gate.baseline.history.drift import drift_rows
from adk_eval_gate.baseline.history.lookup import index
from adk_eval_gate.baseline.history.provenance_marks import changes_between, drift_comparable, record_provenance
from adk_eval_gate.baseline.history.record_format import History
from adk_eval_gate.baseline.history.records import record_of
from adk_eval_gate.baseline.history.trend import trend_data
from adk_eval_gate.baseline.provenance_changes import like_for_like, provenance_changes
from adk_eval_gate.report.console import render_comparison
from adk_eval_gate.report.html import report_data
from adk_eval_gate.report.provenance_line import changed_line
from adk_eval_gate.results.provenance import merged_provenance, with_provenance
from adk_eval_gate.results.provenance_models import (
    AgentProvenance,
    JudgeProvenance,
    Rescored,
    RunProvenance,
    ScorerVersions,
)
from adk_eval_gate.results.results_format import ResultsFile
from tests.support.report_data import JUDGED, RESPONSE, TRAJECTORY, Case, compared, results_file

SCORERS = ScorerVersions(
    adk_eval_gate="0.2.0", adk_semantics="google-adk 2.13", google_adk="2.13.0", rouge_score="0.1.2"
)


def provenance(
    judge: str = "gemini-2.5-flash", served: str = "gemini-2.5-flash-001", model: str = "m-1", **scorers: str
) -> RunProvenance:
    return RunProvenance(
        judges={JUDGED: JudgeProvenance(model=judge, served={served: 4})},
        agents={"a": AgentProvenance(target="adk", served={model: 8})},
        scorers=SCORERS.model_copy(update=scorers),
    )


def suite(score: float, found: RunProvenance | None, sha: str = "c0ffee" * 6 + "abcd") -> ResultsFile:
    cases = [Case(f"c{i}", {TRAJECTORY: [[1.0]] * 3, JUDGED: [[score]] * 3, RESPONSE: [[0.8]] * 3}) for i in range(8)]
    return results_file({("a", "s"): cases}, sha=sha).model_copy(update={"provenance": found})


def test_a_new_judge_version_makes_its_criterion_not_comparable_and_leads_the_comment_and_the_console():
    base, now = suite(1.0, provenance()), suite(0.0, provenance(served="gemini-2.5-flash-002"))
    before = base.model_copy(deep=True)
    comparison = compared(now, base)
    assert base == before  # marked in a copy
    changed = comparison.changed
    assert changed is not None and changed.handling == "not_comparable" and changed.criteria == [JUDGED]
    judged = [r for r in comparison.rows if r.criterion == JUDGED]
    assert {r.verdict for r in judged} == {"not_comparable"}  # a drop of 1.0 across judges: neither passed nor flagged
    assert {s.verdict for s in comparison.summaries if s.criterion == JUDGED} == {"not_comparable"}
    assert {r.verdict for r in comparison.rows if r.criterion != JUDGED} == {"unchanged"}
    assert comparison.verdict == "pass"
    assert compared(now, base, fail_on=["regression", "error", "not_comparable"]).verdict == "fail"
    line = changed_line(changed)
    assert line is not None and line.startswith(
        "Changed besides the code: judge of final_response_match_v2 gemini-2.5-flash-001 → gemini-2.5-flash-002 — "
        "scores of final_response_match_v2 are not comparable with the baseline and were not compared; run "
        "`adk-eval-gate baseline update` on the default branch"
    )
    assert render_comparison(comparison).splitlines()[0] == line


def test_without_provenance_on_both_sides_the_drop_is_the_agents_as_before():
    base, now = suite(1.0, None), suite(0.0, provenance(served="gemini-2.5-flash-002"))
    comparison = compared(now, base)
    assert comparison.changed is None and like_for_like(base, now) is base
    assert {s.verdict for s in comparison.summaries if s.criterion == JUDGED} == {"regressed"}
    assert not render_comparison(comparison).startswith("Changed")


def test_a_new_served_agent_model_is_named_and_compared_as_the_agents_change():
    base, now = suite(1.0, provenance()), suite(0.0, provenance(model="m-2"))
    comparison = compared(now, base)
    assert comparison.changed is not None and comparison.changed.handling == "compared"
    assert [c.subject for c in comparison.changed.changes] == ["a"]
    assert {s.verdict for s in comparison.summaries if s.criterion == JUDGED} == {"regressed"}
    assert changed_line(comparison.changed) == (
        "Changed besides the code: a's served model m-1 → m-2 — scores were compared as usual (a new model behind "
        "the agent is the agent's change)."
    )


def test_an_unknown_version_on_one_side_is_no_change():
    base, now = suite(1.0, provenance(served="unknown", model="unknown")), suite(1.0, provenance(model="m-2"))
    assert provenance_changes(base, now) is None


def test_scorer_versions_mark_the_criteria_they_score():
    base = suite(1.0, provenance())
    rouge = like_for_like(base, suite(1.0, provenance(rouge_score="0.1.3")))
    assert rouge.eval_sets[0].criteria[RESPONSE].hash.startswith("scorer-changed:rouge-score 0.1.2 → 0.1.3")
    assert rouge.eval_sets[0].criteria[TRAJECTORY] == base.eval_sets[0].criteria[TRAJECTORY]
    rules = like_for_like(base, suite(1.0, provenance(adk_semantics="google-adk 2.14")))
    assert all(c.hash.startswith("scorer-changed:scoring rules") for c in rules.eval_sets[0].criteria.values())
    ours = suite(1.0, provenance(adk_eval_gate="0.3.0", google_adk="2.14.0"))
    assert like_for_like(base, ours) is base  # named, not a reason: the scoring rules are adk_semantics'
    named = provenance_changes(base, ours)
    assert named is not None and [c.subject for c in named.changes] == ["adk-eval-gate", "google-adk"]


def test_a_rescored_baseline_compares_like_for_like_and_says_so():
    now = suite(0.0, provenance(served="gemini-2.5-flash-002"))
    again = Rescored(judges=provenance(served="gemini-2.5-flash-002").judges, scorers=SCORERS)
    base = suite(0.0, provenance().model_copy(update={"rescored": again}))
    comparison = compared(now, base)
    assert comparison.changed is not None and comparison.changed.handling == "rescored"
    assert {r.verdict for r in comparison.rows} == {"unchanged"}
    assert "re-scored with today's judge and scorers (final_response_match_v2)" in (
        changed_line(comparison.changed) or ""
    )


def test_the_history_keeps_it_and_marks_the_record_where_it_changed():
    older = record_of(suite(1.0, provenance(), sha="1" * 40))
    same = record_of(suite(1.0, provenance(), sha="2" * 40))
    newer = record_of(suite(1.0, provenance(served="gemini-2.5-flash-002", rouge_score="0.1.3"), sha="3" * 40))
    assert older.provenance == record_provenance(suite(1.0, provenance()))
    assert changes_between(older, same) == [] and changes_between(None, older) == []
    assert changes_between(same, newer) == [
        "judge of final_response_match_v2 gemini-2.5-flash (gemini-2.5-flash-001) → gemini-2.5-flash "
        "(gemini-2.5-flash-002)",
        "rouge_score 0.1.2 → 0.1.3",
    ]
    assert "provenance" not in record_of(suite(1.0, None)).model_dump(mode="json")  # reads as an earlier record


def test_shards_provenance_is_summed():
    one, two = provenance(), provenance(model="m-2")
    merged = merged_provenance(one, two)
    assert merged is not None and merged.agents["a"].served == {"m-1": 8, "m-2": 8}
    assert merged.judges[JUDGED].served == {"gemini-2.5-flash-001": 8}
    assert merged_provenance(None, two) is two and merged_provenance(one, None) is one


def test_drift_is_not_tested_across_a_judge_change_since_the_reference_record():
    reference = record_of(suite(1.0, provenance(), sha="1" * 40))
    now = suite(0.0, provenance(served="gemini-2.5-flash-002"))
    comparable, notes = drift_comparable(now, reference)
    assert notes == [
        "drift of final_response_match_v2 not tested: scored otherwise since the reference record "
        "(judge gemini-2.5-flash-001 → gemini-2.5-flash-002)"
    ]
    rows = [row for row, _, _ in drift_rows(comparable, index(reference), lambda _: 0.05, ())]
    assert {row.criterion for row in rows} == {TRAJECTORY, RESPONSE}  # the judged one is left out, not compared
    fell = [row for row, _, _ in drift_rows(now, index(reference), lambda _: 0.05, ()) if row.criterion == JUDGED]
    assert fell and fell[0].current == 0.0  # what the test would otherwise have taken for the agent's drift
    assert drift_comparable(suite(0.0, provenance(model="m-2")), reference) == (suite(0.0, provenance(model="m-2")), [])


def test_the_page_marks_the_trend_point_of_the_record_where_it_changed():
    records = [
        record_of(suite(1.0, provenance(), sha="1" * 40)),
        record_of(suite(1.0, provenance(model="m-2"), sha="2" * 40)),
        record_of(suite(1.0, provenance(model="m-2"), sha="3" * 40)),
    ]
    data = trend_data(History(repository=None, config="eval-gate.yml", records=records))
    assert [d.get("changed") for d in data] == [None, "a's served model m-1 → m-2", None]
    page = report_data(suite(1.0, provenance(model="m-2")), history=data)["history"]
    assert [p.get("changed") for p in page] == [None, "a's served model m-1 → m-2", None]


def test_replayed_and_offline_runs_label_their_served_models_as_such():
    replayed = with_provenance(suite(1.0, None), {JUDGED: {"gemini-2.5-flash-001": 3}})
    assert replayed.provenance is not None
    assert replayed.provenance.agents["a"].target == "replay" and replayed.provenance.agents["a"].label == "replay"
    assert replayed.provenance.judges == {}  # options that name no judge: no LLM judges the criterion
    offline = with_provenance(suite(1.0, None).model_copy(update={"offline": "model played"}), {})
    assert offline.provenance is not None and offline.provenance.agents["a"].label == "offline"
    assert record_provenance(offline).models == {"a": "offline: unknown"}  # no model served anything
