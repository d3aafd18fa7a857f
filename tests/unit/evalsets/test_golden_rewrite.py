"""Goldens written in each file's own vocabulary: camelCase stays camelCase, recorded events stay events, a case
whose turns do not line up is left alone with its reason; ADK's own EvalSet reads every result."""

from __future__ import annotations

import json
from pathlib import Path

from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet

from adk_eval_gate.evalsets.golden_rewrite import Golden, rewrite

NEW = Golden(
    final_texts=("Rolled a d6: 4.",),
    calls=(("throw_die", {"sides": 6, "count": 1}),),
    responses=(("throw_die", {"result": 4}),),
    said=(),
    events=(
        {
            "author": "dice",
            "content": {
                "role": "model",
                "parts": [{"function_call": {"name": "throw_die", "args": {"sides": 6, "count": 1}}}],
            },
        },
    ),
)


def _camel() -> str:
    turn = {
        "invocationId": "t1",
        "userContent": {"role": "user", "parts": [{"text": "Roll a 6 sided die"}]},
        "finalResponse": {"role": "model", "parts": [{"text": "I rolled a 6 sided die and got 5."}]},
        "intermediateData": {"toolUses": [{"id": "x", "name": "roll_die", "args": {"sides": 6}}], "toolResponses": []},
    }
    other = {**turn, "userContent": {"role": "user", "parts": [{"text": "hi"}]}}
    cases = [{"evalId": "roll", "conversation": [turn]}, {"evalId": "other", "conversation": [other]}]
    return json.dumps({"eval_set_id": "s", "eval_cases": cases}, indent=2)


def test_camel_case_files_stay_camel_case_and_adk_reads_them():
    text = _camel()
    done = rewrite(text, Path("s.evalset.json"), "evalset", {"roll": [NEW]})
    assert done.updated == ("roll",) and done.problems == ()
    data = json.loads(done.text)
    turn = data["eval_cases"][0]["conversation"][0]
    assert turn["intermediateData"]["toolUses"] == [{"id": "x", "name": "throw_die", "args": {"sides": 6, "count": 1}}]
    assert turn["intermediateData"]["toolResponses"] == [{"name": "throw_die", "response": {"result": 4}}]
    assert turn["finalResponse"]["parts"] == [{"text": "Rolled a d6: 4."}]
    assert "tool_uses" not in done.text and "final_response" not in done.text
    other = '"evalId": "other"'
    assert text[text.index(other) :] == done.text[done.text.index(other) :]  # the other case, as it was
    AdkEvalSet.model_validate_json(done.text)


def test_a_case_that_records_events_gets_the_runs_events():
    data = json.loads(_camel())
    data["eval_cases"][0]["conversation"][0]["intermediateData"] = {"invocationEvents": []}
    done = rewrite(json.dumps(data), Path("s.evalset.json"), "evalset", {"roll": [NEW]})
    events = json.loads(done.text)["eval_cases"][0]["conversation"][0]["intermediateData"]["invocationEvents"]
    assert events == [dict(e) for e in NEW.events or ()]
    loaded = AdkEvalSet.model_validate_json(done.text)
    assert loaded.eval_cases[0].conversation[0].intermediate_data.invocation_events[0].author == "dice"


def test_turns_that_do_not_line_up_and_missing_cases_are_listed_not_written():
    text = _camel()
    done = rewrite(text, Path("s.evalset.json"), "evalset", {"roll": [NEW, NEW], "gone": [NEW]})
    assert done.text == text and done.updated == ()
    assert dict(done.problems) == {"roll": "has 1 turns but its runs took 2", "gone": "is not in the file any more"}
