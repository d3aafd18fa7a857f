"""agents-cli datasets read unchanged into our eval sets (Shape A and B), and bad ones refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.evalsets.agents_cli_dataset import original_case, prior_events
from adk_eval_gate.evalsets.loader import load_eval_set

USER = {"role": "user", "parts": [{"text": "And in Paris?"}]}
SHAPE_A = {
    "eval_case_id": "capital",
    "prompt": {"parts": [{"text": "Capital of France?"}]},
    "reference": {"response": {"role": "model", "parts": [{"text": "Paris"}]}},
}
SHAPE_B = {
    "eval_case_id": "follow_up",
    "agent_data": {
        "turns": [
            {
                "turn_index": 0,
                "events": [
                    {"author": "user", "content": {"role": "user", "parts": [{"text": "Weather in Tokyo?"}]}},
                    {"author": "root_agent", "content": {"role": "model", "parts": [{"text": "Rainy."}]}},
                ],
            },
            {"turn_index": 1, "events": [{"author": "user", "content": USER, "state_delta": {"unit": "C"}}]},
        ]
    },
    "custom_field": {"kept": True},
}


def _write(tmp_path: Path, document, name: str = "basic-dataset.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def _error(tmp_path: Path, document, name: str = "basic-dataset.json") -> str:
    with pytest.raises(InputError) as caught:
        load_eval_set(_write(tmp_path, document, name))
    message = caught.value.render()
    assert "\n" not in message and name in message
    return message


def test_both_shapes_become_single_turn_cases_with_the_case_kept(tmp_path):
    loaded = load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_A, SHAPE_B, {"prompt": USER}]}))
    assert loaded.shape == "agents_cli" and loaded.eval_set.eval_set_id == "basic-dataset"
    a, b, unnamed = loaded.eval_set.eval_cases
    assert [a.eval_id, b.eval_id, unnamed.eval_id] == ["capital", "follow_up", "case_2"]
    assert a.conversation[0].user_content.role == "user"  # the SDK's prompt may omit the role; ADK's may not
    assert a.conversation[0].final_response.parts[0].text == "Paris"  # reference.response is the expected answer
    assert b.conversation[0].user_content.parts[0].text == "And in Paris?"
    assert b.conversation[0].final_response is None
    assert original_case(b).model_extra == {"custom_field": {"kept": True}}
    assert prior_events(a) == []


def test_shape_b_history_is_every_earlier_event_and_the_last_message_state_delta(tmp_path):
    case = load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_B]})).eval_set.eval_cases[0]
    history = prior_events(case)
    assert [e["author"] for e in history] == ["user", "root_agent", "user"]
    assert history[1]["content"]["parts"] == [{"text": "Rainy."}]
    assert history[2] == {"author": "user", "actions": {"stateDelta": {"unit": "C"}}}  # content sent as the turn


def test_cases_survive_the_trip_to_a_worker_process(tmp_path):
    from adk_eval_gate.evalsets.adk_eval_schema import EvalCase

    case = load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_B]})).eval_set.eval_cases[0]
    again = EvalCase.model_validate(case.model_dump(mode="json", exclude_none=True))
    assert prior_events(again) == prior_events(case)


def test_any_file_name_with_agents_cli_cases_is_recognised(tmp_path):
    assert load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_A]}, "smoke.json")).shape == "agents_cli"


@pytest.mark.parametrize(
    ("cases", "field", "words"),
    [
        ([{"eval_case_id": "x"}], "eval_cases[0]", "neither `prompt` nor"),
        ([{**SHAPE_A, "agent_data": SHAPE_B["agent_data"]}], "eval_cases[0].prompt", "ambiguous"),
        (
            [{"agent_data": {"turns": [{"events": [{"author": "root_agent", "content": USER}]}]}}],
            "eval_cases[0].agent_data.turns[0].events",
            "end with an event by 'root_agent'",
        ),
        (
            [{"agent_data": {"turns": [{"events": [{"author": "user"}]}]}}],
            "eval_cases[0].agent_data.turns[0].events",
            "without content",
        ),
        ([SHAPE_A, SHAPE_A], "eval_cases[1].eval_case_id", "duplicate 'capital'"),
        (
            [{**SHAPE_A, "reference": {"role": "model", "parts": [{"text": "Paris"}]}}],
            "eval_cases[0].reference",
            "bare Content",
        ),
        ([{**SHAPE_A, "eval_case_id": " "}], "eval_cases[0].eval_case_id", "is empty"),
        ([{"prompt": {"parts": []}}], "eval_cases[0].prompt.parts", "nothing to send"),
        ([], "eval_cases", "is empty"),
    ],
)
def test_bad_cases_name_the_file_and_field(tmp_path, cases, field, words):
    message = _error(tmp_path, {"eval_cases": cases})
    assert f": {field}: " in message and words in message


def test_an_envelope_without_cases_is_refused(tmp_path):
    assert "eval_cases: is missing" in _error(tmp_path, {"cases": []})


def test_a_case_nested_too_deeply_is_one_line(tmp_path):
    path = tmp_path / "deep-dataset.json"
    path.write_text('{"eval_cases": [{"prompt": {"parts": [{"text": "x"}]}, "x": ' + "[" * 500 + "]" * 500 + "}]}")
    with pytest.raises(InputError) as caught:
        load_eval_set(path)
    assert "eval_cases[0]: is nested too deeply to keep" in caught.value.render()


def test_moving_a_case_keeps_its_hash_so_it_stays_comparable(tmp_path):
    from adk_eval_gate.results.build import case_hash

    first = load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_A, SHAPE_B]})).eval_set.eval_cases
    moved = load_eval_set(_write(tmp_path, {"eval_cases": [SHAPE_B, SHAPE_A]})).eval_set.eval_cases
    assert case_hash(first[0]) == case_hash(moved[1]) and case_hash(first[1]) == case_hash(moved[0])
    changed = {**SHAPE_A, "reference": {"response": {"role": "model", "parts": [{"text": "Lyon"}]}}}
    assert case_hash(load_eval_set(_write(tmp_path, {"eval_cases": [changed]})).eval_set.eval_cases[0]) != case_hash(
        first[0]
    )


def test_traces_listed_as_a_dataset_say_to_replay_them(tmp_path):
    from tests.support.paths import ROOT

    traces = json.loads((ROOT / "tests/support/agents_cli/generated-traces.json").read_text())
    message = _error(tmp_path, traces)
    assert "traces that were already run" in message and "kind: replay" in message
