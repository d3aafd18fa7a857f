"""`goldens import`: a real ADK session (run through google-adk's Runner and read back as `adk api_server` returns
it), an agents-cli trace or a results case becomes a new case that ADK's loader reads, that leaves the file's other
cases byte for byte, and that the agent it came from passes with 1.0; a session that cannot be replayed says why
in one line and exits 2."""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

from google.adk.evaluation.eval_set import EvalSet as AdkEvalSet
from google.adk.evaluation.local_eval_sets_manager import load_eval_set_from_file
from google.adk.runners import InMemoryRunner
from google.genai import types

from adk_eval_gate.commands.main import main
from adk_eval_gate.evalsets.agents_cli_models import AgentsCliDataset
from adk_eval_gate.results.results_format import ResultsFile


def _session(example: Path, messages: list[str]) -> dict:
    """The session as GET /apps/{app}/users/{user}/sessions/{id} returns it (camelCase, no nulls)."""
    spec = importlib.util.spec_from_file_location("goldens_import_agent", example / "hello_world" / "agent.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    async def converse() -> str:
        runner = InMemoryRunner(agent=module.root_agent, app_name="hello_world")
        session = await runner.session_service.create_session(app_name="hello_world", user_id="u1")
        for text in messages:
            message = types.Content(role="user", parts=[types.Part(text=text)])
            async for _ in runner.run_async(user_id="u1", session_id=session.id, new_message=message):
                pass
        found = await runner.session_service.get_session(app_name="hello_world", user_id="u1", session_id=session.id)
        assert found is not None
        return found.model_dump_json(by_alias=True, exclude_none=True)

    return json.loads(asyncio.run(converse()))


def _import(*args: str) -> int:
    return main(["goldens", "import", *args])


def test_a_session_becomes_a_case_that_passes(example, tmp_path, capsys):
    session = _session(example, ["Roll a 6 sided die", "Is 7 prime?"])
    (tmp_path / "session.json").write_text(json.dumps(session))
    dice = example / "evals" / "dice.evalset.json"
    before = dice.read_text()
    args = ("--from", str(tmp_path / "session.json"), "--into", str(dice), "--config", str(example / "eval-gate.yml"))
    assert _import(*args) == 0
    assert dice.read_text() == before  # a dry run
    assert _import(*args, "--write") == 0 and _import(*args, "--write") == 0
    after = dice.read_text()
    last_case_end = before.rstrip().rstrip("}").rstrip().rstrip("]").rstrip()
    assert after.startswith(last_case_end)  # every case before it, byte for byte
    loaded = AdkEvalSet.model_validate_json(after)
    new = [c for c in loaded.eval_cases if c.eval_id.startswith("session_")]
    assert [c.eval_id for c in new] == [f"session_{session['id']}", f"session_{session['id']}_2"]
    assert new[0].session_input.model_extra["source"].startswith(f"adk session hello_world/u1/{session['id']}")
    assert len(new[0].conversation) == 2
    assert (
        new[0].conversation[0].intermediate_data.invocation_events[0].content.parts[0].function_call.name == "roll_die"
    )

    out = tmp_path / "results.json"
    main(
        [
            "run",
            "--config",
            str(example / "eval-gate.yml"),
            "--output",
            str(out),
            "--quiet",
            "--cases",
            "dice:session_*",
        ]
    )
    results = ResultsFile.model_validate_json(out.read_text())
    scores = [m.score for c in results.eval_sets[0].cases for m in c.metrics.values()]
    assert len(results.eval_sets[0].cases) == 2 and scores and all(s == 1.0 for s in scores)


def test_a_call_without_its_response_cannot_be_replayed(example, tmp_path, capsys):
    session = _session(example, ["Roll a 6 sided die"])
    responses = [e for e in session["events"] if any("functionResponse" in p for p in e["content"]["parts"])]
    assert responses
    session["events"].remove(responses[0])
    (tmp_path / "cut.json").write_text(json.dumps(session))
    dice = example / "evals" / "dice.evalset.json"
    before = dice.read_bytes()
    capsys.readouterr()
    assert _import("--from", str(tmp_path / "cut.json"), "--into", str(dice), "--write") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "calls tool 'roll_die' but no response to it was recorded" in err
    assert dice.read_bytes() == before

    session = _session(example, ["Roll a 6 sided die"])
    call = next(e for e in session["events"] if any("functionCall" in p for p in e["content"]["parts"]))
    call["longRunningToolIds"] = [call["content"]["parts"][0]["functionCall"]["id"]]
    (tmp_path / "long.json").write_text(json.dumps(session))
    assert _import("--from", str(tmp_path / "long.json"), "--into", str(dice), "--write") == 2
    assert "long-running tool" in capsys.readouterr().err and dice.read_bytes() == before


def test_a_results_case_and_a_trace_go_into_legacy_and_agents_cli_files(example, tmp_path, capsys):
    out = tmp_path / "results.json"
    main(
        ["run", "--config", str(example / "eval-gate.yml"), "--output", str(out), "--quiet", "--cases", "dice:roll_20"]
    )
    named = tmp_path / "named.test.json"
    named.write_text(json.dumps([{"name": "roll_20", "data": [{"query": "hi", "reference": "hello"}]}], indent=2))
    assert _import("--from", str(out), "--source-case", "roll_20", "--into", str(named), "--write") == 0
    cases = json.loads(named.read_text())
    assert [c["name"] for c in cases] == ["roll_20", "roll_20_2"]
    assert cases[1]["data"][0]["expected_tool_use"] == [{"tool_name": "roll_die", "tool_input": {"sides": 20}}]
    assert cases[1]["source"].startswith("results results.json: dice:roll_20 run 0")
    adk = load_eval_set_from_file(str(named), "named")
    assert adk.eval_cases[1].conversation[0].final_response.parts[0].text == "I rolled a 20 sided die and got 5."

    traces = tmp_path / "traces.json"
    answer = {"role": "model", "parts": [{"text": "Paris."}]}
    prompt = {"role": "user", "parts": [{"text": "Capital of France?"}]}
    traces.write_text(
        json.dumps({"eval_cases": [{"eval_case_id": "cap", "prompt": prompt, "responses": [{"response": answer}]}]})
    )
    dataset = tmp_path / "basic-dataset.json"
    dataset.write_text('{"eval_cases": [{"eval_case_id": "cap", "prompt": {"parts": [{"text": "x"}]}}]}')
    assert _import("--from", str(traces), "--into", str(dataset), "--write") == 0
    text = dataset.read_text()
    assert text.startswith('{"eval_cases": [{"eval_case_id": "cap", "prompt": {"parts": [{"text": "x"}]}}, {')
    written = AgentsCliDataset.model_validate_json(text).eval_cases[1]
    assert written.eval_case_id == "cap_2" and written.reference.response.parts[0].text == "Paris."

    flat = tmp_path / "flat.test.json"
    flat.write_text(json.dumps([{"query": "hi", "reference": "hello"}]))
    capsys.readouterr()
    assert _import("--from", str(traces), "--into", str(flat), "--write") == 2
    assert "is a flat .test.json" in capsys.readouterr().err
