"""conversation_scenario cases: the real example agent (adk target, and behind a real `adk api_server`) talks to an
LLM-backed user simulator whose model is a fake Gemini server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.evalsets.adk_eval_schema import Invocation, content_text
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.support.fake_gemini import FakeGemini
from tests.support.paths import AGENTS

PLAN = "First ask for a 6-sided die roll, then ask whether 3 and 5 are prime, then finish."
NEXT_MESSAGES = ["Now are 3 and 5 prime?", "Thanks, one more: roll a 20-sided die."]


def simulator_reply(prompt: str) -> str:
    """Plays the user from the plan: the n-th reply after the starting prompt, then the stop signal."""
    if "user simulator" in prompt.lower() and "is_valid" in prompt:  # a judge prompt, not a simulator prompt
        return '{"is_valid": true}'
    turns_so_far = len(re.findall(r"(?m)^user: ", prompt))
    return NEXT_MESSAGES[turns_so_far - 1] if turns_so_far <= len(NEXT_MESSAGES) else "All done </FINISHED>"


def scenario_workflow(
    example: Path,
    *,
    target: str,
    simulator: dict | None = None,
    criteria: dict | None = None,
    persona: str | dict | None = None,
) -> Path:
    scenario = {"starting_prompt": "Hi! Roll a 6-sided die for me.", "conversation_plan": PLAN}
    if persona is not None:
        scenario["user_persona"] = persona
    (example / "evals" / "talk.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "talk",
                "eval_cases": [
                    {
                        "eval_id": "dice-chat",
                        "conversation_scenario": scenario,
                        "session_input": {"app_name": "hello_world", "user_id": "u1"},
                    }
                ],
            }
        )
    )
    config = {
        "criteria": criteria
        or {"per_turn_user_simulator_quality_v1": {"threshold": 0.5, "judge_model_options": {"num_samples": 1}}}
    }
    if simulator is not None:
        config["user_simulator_config"] = simulator
    (example / "evals" / "talk_config.json").write_text(json.dumps(config))
    path = example / "talk.yml"
    path.write_text(
        f"judge: {{cache: cache, retries: 0}}\nagents:\n  - name: chat\n    target: {target}\n"
        "    evalsets: [evals/talk.evalset.json]\n    eval_config: evals/talk_config.json\n"
    )
    return path


def only_case(results):
    return results.eval_sets[0].cases[0]


def invocations(case) -> list[Invocation]:
    return [Invocation.model_validate(i) for i in case.runs[0].actual_invocations]


def user_turns(case) -> list[str]:
    return [content_text(i.user_content) for i in invocations(case)]


@pytest.fixture
def simulator(gemini_env):
    server = FakeGemini(simulator_reply)
    gemini_env(server)
    yield server
    server.close()


def simulator_calls(server: FakeGemini) -> list[dict]:
    return [r for r in server.requests if "conversation plan" in r["prompt"] and "is_valid" not in r["prompt"]]


def test_adk_agent_talks_with_the_simulated_user_until_the_stop_signal(example, simulator):
    results = run_plan(build_plan(scenario_workflow(example, target="{kind: adk, agent: hello_world}")), quiet=True)
    case = only_case(results)
    assert case.status == "passed", case.reason
    assert user_turns(case) == ["Hi! Roll a 6-sided die for me.", *NEXT_MESSAGES]
    answers = [content_text(i.final_response) for i in invocations(case)]
    assert answers[0].startswith("I rolled a 6 sided die") and "prime" in answers[1] and "20 sided" in answers[2]
    calls = simulator_calls(simulator)
    # the starting prompt costs no call; three replies were asked for (the third is the stop signal)
    assert len(calls) == 3
    # the simulator's default model and ADK's thinking configuration, and the agent's words reach it as history
    thinking = {key.replace("_", "").lower(): value for key, value in calls[0]["config"]["thinkingConfig"].items()}
    assert "gemini-2.5-flash" in calls[0]["path"] and thinking == {"includethoughts": True, "thinkingbudget": 10240}
    assert "hello_world: I rolled a 6 sided die" in calls[0]["prompt"]
    usage = results.agent_usage["chat"]
    assert usage.user_simulator.calls == 3 and usage.user_simulator.cache_hits == 0
    assert usage.user_simulator.cost_usd and usage.user_simulator.cost_usd > 0
    assert usage.model_calls >= 6 and usage.input_tokens > 0  # the scripted agent reports usage on each model call
    # the simulated turns are judged: turn 1 is the starting prompt, the judge says the rest are valid
    assert case.metrics["per_turn_user_simulator_quality_v1"].score == 1.0

    again = run_plan(build_plan(example / "talk.yml"), quiet=True)
    assert len(simulator_calls(simulator)) == 3  # the cache answered every simulator call
    assert again.agent_usage["chat"].user_simulator.cache_hits == 3
    assert user_turns(only_case(again)) == user_turns(case)


def test_simulation_over_http_matches_the_adk_target(example, simulator, api_server):
    results = run_plan(
        build_plan(scenario_workflow(example, target=f"{{kind: http, url: '{api_server}', app_name: hello_world}}")),
        quiet=True,
    )
    case = only_case(results)
    assert case.status == "passed", case.reason
    assert user_turns(case) == ["Hi! Roll a 6-sided die for me.", *NEXT_MESSAGES]


def test_max_allowed_invocations_cuts_the_conversation(example, simulator):
    config = scenario_workflow(
        example, target="{kind: adk, agent: hello_world}", simulator={"max_allowed_invocations": 2}
    )
    case = only_case(run_plan(build_plan(config), quiet=True))
    assert user_turns(case) == ["Hi! Roll a 6-sided die for me.", NEXT_MESSAGES[0]]


def test_custom_instructions_and_personas_reach_the_simulator(example, simulator):
    custom = "PLAN={{ conversation_plan }} STOP={{ stop_signal }} WHO={{ persona.id }}\n{{ conversation_history }}"
    config = scenario_workflow(
        example,
        target="{kind: adk, agent: hello_world}",
        simulator={"custom_instructions": custom, "model": "gemini-2.0-flash"},
        persona="NOVICE",
    )
    case = only_case(run_plan(build_plan(config), quiet=True))
    assert case.status == "passed", case.reason
    prompts = [r for r in simulator.requests if r["prompt"].startswith("PLAN=")]
    assert prompts and all("STOP=</finished> WHO=NOVICE" in p["prompt"] for p in prompts)
    assert "gemini-2.0-flash" in prompts[0]["path"]


def test_an_empty_simulator_reply_fails_only_that_case(example, gemini_env):
    server = FakeGemini(lambda prompt: "")
    gemini_env(server)
    try:
        case = only_case(
            run_plan(build_plan(scenario_workflow(example, target="{kind: adk, agent: hello_world}")), quiet=True)
        )
    finally:
        server.close()
    assert case.status == "error" and "user simulator" in case.reason and "empty" in case.reason


def test_without_credentials_scenario_cases_are_errors_that_say_why(example, monkeypatch):
    for name in ("GOOGLE_API_KEY", "GEMINI_API_KEY", "GOOGLE_GENAI_USE_VERTEXAI"):
        monkeypatch.delenv(name, raising=False)
    results = run_plan(build_plan(scenario_workflow(example, target="{kind: adk, agent: hello_world}")), quiet=True)
    case = only_case(results)
    assert case.status == "error" and "no judge credentials" in case.reason


def test_the_command_target_says_scenarios_need_adk_or_http(example, simulator):
    agent = AGENTS / "command_agent.py"
    config = scenario_workflow(example, target=f"{{kind: command, command: [python3, '{agent}']}}")
    with pytest.raises(InputError, match=r"conversation_scenario: case 'dice-chat' is a scenario.*adk or http target"):
        build_plan(config)  # bad input, up front: not one error per case after the run
