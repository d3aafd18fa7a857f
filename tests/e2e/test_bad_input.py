"""Broken configs, eval sets and eval configs: each a one-line error naming the file and the field, exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from adk_eval_gate.commands.main import main

GOOD_SET = json.dumps(
    {
        "eval_set_id": "s",
        "eval_cases": [
            {
                "eval_id": "c",
                "conversation": [
                    {
                        "user_content": {"role": "user", "parts": [{"text": "hi"}]},
                        "final_response": {"role": "model", "parts": [{"text": "hello"}]},
                    }
                ],
            }
        ],
    }
)


def agent(
    extra: str = "", evalsets: str = "[set.evalset.json]", target: str = "{kind: replay, actuals: set.evalset.json}"
) -> str:
    return f"agents:\n  - name: a\n    target: {target}\n    evalsets: {evalsets}\n{extra}"


def case_set(**case) -> str:
    base = {"eval_id": "c", "conversation": [{"user_content": {"role": "user", "parts": [{"text": "hi"}]}}]}
    base.update(case)
    return json.dumps({"eval_set_id": "s", "eval_cases": [base]})


T_LEGACY = "{kind: replay, actuals: t.test.json}"

# (id, {file: content}, fragments that must all appear in the error line)
CORPUS = [
    ("yaml-syntax", {"gate.yml": "agents: [\n  - name: a\n"}, ["gate.yml:", "not valid YAML"]),
    ("yaml-empty", {"gate.yml": "   \n"}, ["gate.yml", "empty"]),
    ("yaml-binary", {"gate.yml": b"\x00\x01\x02agents"}, ["gate.yml", "binary"]),
    ("yaml-not-utf8", {"gate.yml": b"agents: \xff\xfe\n"}, ["gate.yml", "UTF-8"]),
    ("yaml-list-top", {"gate.yml": "- a\n- b\n"}, ["gate.yml", "mapping"]),
    ("no-agents", {"gate.yml": "version: 1\n"}, ["gate.yml", "agents", "required"]),
    ("empty-agents", {"gate.yml": "agents: []\n"}, ["gate.yml", "agents", "empty"]),
    (
        "typo-top-level",
        {"gate.yml": agent().replace("agents:", "agent:")},
        ["gate.yml:1", "agent: is not a known field;", "did you mean `agents`"],
    ),
    (
        "typo-agent-key",
        {"gate.yml": agent().replace("evalsets:", "evalset:"), "set.evalset.json": GOOD_SET},
        ["gate.yml:4", "agents[0]", "evalset"],
    ),
    ("unknown-target-kind", {"gate.yml": agent(target="{kind: docker}")}, ["gate.yml:3", "agents[0].target", "docker"]),
    ("missing-target", {"gate.yml": "agents:\n  - name: a\n    evalsets: [x]\n"}, ["agents[0].target", "required"]),
    (
        "bad-agent-name",
        {"gate.yml": agent().replace("name: a", "name: 'my agent/v2'")},
        ["agents[0].name", "not allowed"],
    ),
    (
        "duplicate-agents",
        {"gate.yml": agent() + agent().replace("agents:\n", ""), "set.evalset.json": GOOD_SET},
        ["gate.yml", "agents", "unique name"],
    ),
    (
        "unknown-criterion",
        {"gate.yml": agent("    criteria: {tool_trajectory_avg_scor: 1.0}\n"), "set.evalset.json": GOOD_SET},
        ["gate.yml:5", "agents[0].criteria.tool_trajectory_avg_scor", "did you mean `tool_trajectory_avg_score`"],
    ),
    (
        "threshold-above-1",
        {"gate.yml": agent("    criteria: {response_match_score: 1.5}\n"), "set.evalset.json": GOOD_SET},
        ["gate.yml", "response_match_score", "outside [0, 1]"],
    ),
    (
        "threshold-nan",
        {"gate.yml": agent("    criteria: {response_match_score: .nan}\n"), "set.evalset.json": GOOD_SET},
        ["response_match_score", "outside [0, 1]"],
    ),
    (
        "threshold-inf",
        {"gate.yml": agent("    criteria: {response_match_score: 1e999}\n"), "set.evalset.json": GOOD_SET},
        ["response_match_score"],
    ),
    (
        "threshold-text",
        {"gate.yml": agent("    criteria: {response_match_score: high}\n"), "set.evalset.json": GOOD_SET},
        ["response_match_score", "not a number"],
    ),
    (
        "threshold-bool",
        {"gate.yml": agent("    criteria: {response_match_score: true}\n"), "set.evalset.json": GOOD_SET},
        ["response_match_score", "not a threshold"],
    ),
    (
        "bad-match-type",
        {
            "gate.yml": agent("    criteria: {tool_trajectory_avg_score: {threshold: 1, match_type: IN ORDR}}\n"),
            "set.evalset.json": GOOD_SET,
        },
        ["agents[0].criteria.tool_trajectory_avg_score.match_type", "EXACT, IN_ORDER, ANY_ORDER"],
    ),
    (
        "typo-criterion-option",
        {
            "gate.yml": agent("    criteria: {tool_trajectory_avg_score: {threshold: 1, match_typ: IN_ORDER}}\n"),
            "set.evalset.json": GOOD_SET,
        },
        ["tool_trajectory_avg_score.match_typ", "did you mean `match_type`"],
    ),
    (
        "object-without-threshold",
        {"gate.yml": agent("    criteria: {response_match_score: {}}\n"), "set.evalset.json": GOOD_SET},
        ["response_match_score.threshold", "required"],
    ),
    (
        "informational-metric",
        {"gate.yml": agent("    criteria: {token_usage_v1: 0.5}\n"), "set.evalset.json": GOOD_SET},
        ["token_usage_v1", "informational"],
    ),
    (
        "empty-criteria",
        {"gate.yml": agent("    criteria: {}\n"), "set.evalset.json": GOOD_SET},
        ["criteria", "no criteria"],
    ),
    (
        "num-runs-zero",
        {"gate.yml": agent("    num_runs: 0\n")},
        ["agents[0].num_runs", "0 is not a run count; use a count 1-100"],
    ),
    (
        "num-runs-text",
        {"gate.yml": agent("    num_runs: three\n")},
        ["agents[0].num_runs", "'three' is not a run count"],
    ),
    ("num-runs-absurd", {"gate.yml": agent("    num_runs: 1" + "0" * 5000 + "\n")}, ["gate.yml"]),
    (
        "both-criteria-sources",
        {"gate.yml": agent("    criteria: {response_match_score: 0.5}\n    eval_config: c.json\n")},
        ["agents[0]", "keep one"],
    ),
    (
        "missing-evalset",
        {"gate.yml": agent(evalsets="[nope.evalset.json]")},
        ["gate.yml:4", "agents[0].evalsets[0]", "does not exist"],
    ),
    (
        "glob-matches-nothing",
        {"gate.yml": agent(evalsets="['evals/*.evalset.json']")},
        ["agents[0].evalsets[0]", "matches no file"],
    ),
    (
        "missing-actuals",
        {"gate.yml": agent(target="{kind: replay, actuals: gone.json}"), "set.evalset.json": GOOD_SET},
        ["agents[0].target.actuals[0]", "does not exist"],
    ),
    (
        "missing-eval-config",
        {"gate.yml": agent("    eval_config: nope.json\n"), "set.evalset.json": GOOD_SET},
        ["agents[0].eval_config", "does not exist"],
    ),
    (
        "yaml-duplicate-key",
        {"gate.yml": agent("    num_runs: 2\n    num_runs: 3\n"), "set.evalset.json": GOOD_SET},
        ["gate.yml:6", "num_runs: appears twice", "lines 5 and 6"],
    ),
    ("yaml-deep-nesting", {"gate.yml": "agents: " + "[" * 3000 + "]" * 3000 + "\n"}, ["gate.yml"]),
    # eval sets
    (
        "json-syntax",
        {"gate.yml": agent(), "set.evalset.json": '{"eval_set_id": "s",\n "eval_cases": [}'},
        ["set.evalset.json:2", "not valid JSON"],
    ),
    ("json-empty", {"gate.yml": agent(), "set.evalset.json": ""}, ["set.evalset.json", "empty"]),
    (
        "json-binary",
        {"gate.yml": agent(), "set.evalset.json": b"\x89PNG\r\n\x1a\n\x00\x00"},
        ["set.evalset.json", "binary"],
    ),
    ("json-scalar", {"gate.yml": agent(), "set.evalset.json": "42"}, ["set.evalset.json", "object or list"]),
    ("json-empty-list", {"gate.yml": agent(), "set.evalset.json": "[]"}, ["set.evalset.json", "no eval cases"]),
    (
        "json-deep-nesting",
        {"gate.yml": agent(), "set.evalset.json": "[" * 100000 + "]" * 100000},
        ["set.evalset.json", "nested"],
    ),
    (
        "json-absurd-int",
        {"gate.yml": agent(), "set.evalset.json": '{"eval_set_id": ' + "9" * 5000 + "}"},
        ["set.evalset.json"],
    ),
    (
        "not-an-evalset",
        {"gate.yml": agent(), "set.evalset.json": '{"hello": 1}'},
        ["set.evalset.json", "not an ADK eval set"],
    ),
    (
        "camel-top-level",
        {"gate.yml": agent(), "set.evalset.json": '{"evalSetId": "s", "evalCases": []}'},
        ["set.evalset.json", "snake_case"],
    ),
    (
        "no-eval-set-id",
        {"gate.yml": agent(), "set.evalset.json": '{"eval_cases": []}'},
        ["set.evalset.json", "eval_set_id", "required"],
    ),
    (
        "empty-eval-cases",
        {"gate.yml": agent(), "set.evalset.json": '{"eval_set_id": "s", "eval_cases": []}'},
        ["set.evalset.json", "eval_cases", "empty"],
    ),
    (
        "duplicate-eval-id",
        {
            "gate.yml": agent(),
            "set.evalset.json": json.dumps(
                {"eval_set_id": "s", "eval_cases": [json.loads(case_set())["eval_cases"][0]] * 2}
            ),
        },
        ["set.evalset.json", "eval_cases[1].eval_id", "duplicate 'c'"],
    ),
    (
        "conversation-and-scenario",
        {
            "gate.yml": agent(),
            "set.evalset.json": case_set(conversation_scenario={"starting_prompt": "a", "conversation_plan": "b"}),
        },
        ["set.evalset.json", "eval_cases[0]", "exactly one of"],
    ),
    (
        "neither-conversation-nor-scenario",
        {"gate.yml": agent(), "set.evalset.json": json.dumps({"eval_set_id": "s", "eval_cases": [{"eval_id": "c"}]})},
        ["eval_cases[0]", "exactly one of"],
    ),
    (
        "missing-user-content",
        {"gate.yml": agent(), "set.evalset.json": case_set(conversation=[{"final_response": None}])},
        ["eval_cases[0].conversation[0].user_content", "required"],
    ),
    (
        "typo-invocation-key",
        {
            "gate.yml": agent(),
            "set.evalset.json": case_set(
                conversation=[
                    {"user_content": {"parts": [{"text": "x"}]}, "final_respones": {"parts": [{"text": "y"}]}}
                ]
            ),
        },
        ["eval_cases[0].conversation[0].final_respones", "did you mean `final_response`"],
    ),
    (
        "bad-part-type",
        {"gate.yml": agent(), "set.evalset.json": case_set(conversation=[{"user_content": {"parts": "hi"}}])},
        ["eval_cases[0].conversation[0].user_content.parts"],
    ),
    (
        "empty-conversation",
        {"gate.yml": agent(), "set.evalset.json": case_set(conversation=[])},
        ["eval_cases[0].conversation", "empty"],
    ),
    (
        "unknown-persona",
        {
            "gate.yml": agent(),
            "set.evalset.json": json.dumps(
                {
                    "eval_set_id": "s",
                    "eval_cases": [
                        {
                            "eval_id": "c",
                            "conversation_scenario": {
                                "starting_prompt": "a",
                                "conversation_plan": "b",
                                "user_persona": "PIRATE",
                            },
                        }
                    ],
                }
            ),
        },
        ["user_persona", "EXPERT, NOVICE, EVALUATOR"],
    ),
    (
        "legacy-missing-query",
        {
            "gate.yml": agent(evalsets="[t.test.json]", target=T_LEGACY),
            "t.test.json": '[{"query": "a"}, {"reference": "b"}]',
        },
        ["t.test.json", "[1].query", "required"],
    ),
    (
        "legacy-missing-tool-input",
        {
            "gate.yml": agent(evalsets="[t.test.json]", target=T_LEGACY),
            "t.test.json": '[{"query": "a", "expected_tool_use": [{"tool_name": "x"}]}]',
        },
        ["t.test.json", "[0].expected_tool_use[0].tool_input", "required"],
    ),
    (
        "legacy-named-bad-data",
        {
            "gate.yml": agent(evalsets="[n.test.json]", target="{kind: replay, actuals: n.test.json}"),
            "n.test.json": '[{"name": "x", "data": []}]',
        },
        ["n.test.json", "[0].data", "non-empty"],
    ),
    (
        "duplicate-eval-set-ids",
        {
            "gate.yml": agent(evalsets="[set.evalset.json, copy.evalset.json]"),
            "set.evalset.json": GOOD_SET,
            "copy.evalset.json": GOOD_SET,
        },
        ["copy.evalset.json", "eval_set_id", "unique"],
    ),
    # eval_config.json / test_config.json
    (
        "flat-legacy-config",
        {
            "gate.yml": agent("    eval_config: c.json\n"),
            "set.evalset.json": GOOD_SET,
            "c.json": '{"tool_trajectory_avg_score": 1.0}',
        },
        ["c.json", "tool_trajectory_avg_score", "under a top-level `criteria`"],
    ),
    (
        "config-typo-key",
        {
            "gate.yml": agent("    eval_config: c.json\n"),
            "set.evalset.json": GOOD_SET,
            "c.json": '{"critera": {"response_match_score": 0.5}}',
        },
        ["c.json", "critera", "did you mean `criteria`"],
    ),
    (
        "config-unknown-criterion",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": '{"criteria": {"response_match": 0.5}}',
        },
        ["test_config.json", "criteria.response_match", "did you mean `response_match_score`"],
    ),
    (
        "config-bad-threshold",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": '{"criteria": {"response_match_score": -0.1}}',
        },
        ["test_config.json", "criteria.response_match_score", "outside"],
    ),
    (
        "config-bad-json",
        {"gate.yml": agent(), "set.evalset.json": GOOD_SET, "test_config.json": '{"criteria": '},
        ["test_config.json", "not valid JSON"],
    ),
    (
        "config-bad-num-samples",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": json.dumps(
                {"criteria": {"final_response_match_v2": {"threshold": 0.5, "judge_model_options": {"num_samples": 0}}}}
            ),
        },
        ["test_config.json", "final_response_match_v2.judge_model_options.num_samples"],
    ),
    (
        "config-match-type-number",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": json.dumps(
                {"criteria": {"tool_trajectory_avg_score": {"threshold": 1, "match_type": 7}}}
            ),
        },
        ["match_type", "7"],
    ),
    (
        "config-not-object",
        {"gate.yml": agent(), "set.evalset.json": GOOD_SET, "test_config.json": "[1]"},
        ["test_config.json", "JSON object"],
    ),
    # judge templates and the user simulator's instructions
    (
        "judge-templates-missing",
        {"gate.yml": "judge: {templates: prompts}\n" + agent(), "set.evalset.json": GOOD_SET},
        ["gate.yml:1", "judge.templates", "does not exist"],
    ),
    (
        "judge-template-unknown-name",
        {
            "prompts/final_response_match_v3.j2": "x",
            "gate.yml": "judge: {templates: prompts}\n" + agent(),
            "set.evalset.json": GOOD_SET,
        },
        ["final_response_match_v3.j2", "never be used", "final_response_match_v2.j2"],
    ),
    (
        "judge-template-syntax",
        {
            "prompts/final_response_match_v2.j2": "ok\n{% if %}\n",
            "gate.yml": "judge: {templates: prompts}\n" + agent(),
            "set.evalset.json": GOOD_SET,
        },
        ["final_response_match_v2.j2:2", "template syntax error"],
    ),
    (
        "simulator-instructions-placeholders",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": json.dumps(
                {
                    "criteria": {"response_match_score": 0.5},
                    "user_simulator_config": {"custom_instructions": "Plan: {{ conversation_plan }}"},
                }
            ),
        },
        [
            "test_config.json",
            "user_simulator_config.custom_instructions",
            "{{ stop_signal }}",
            "{{ conversation_history }}",
        ],
    ),
    (
        "simulator-instructions-syntax",
        {
            "gate.yml": agent(),
            "set.evalset.json": GOOD_SET,
            "test_config.json": json.dumps(
                {
                    "criteria": {"response_match_score": 0.5},
                    "user_simulator_config": {"custom_instructions": "{{ stop_signal"},
                }
            ),
        },
        ["test_config.json", "custom_instructions", "not a valid Jinja template"],
    ),
    (
        "actuals-bad-json",
        {
            "gate.yml": agent(target="{kind: replay, actuals: act.json}"),
            "set.evalset.json": GOOD_SET,
            "act.json": "{nope",
        },
        ["act.json", "not valid JSON"],
    ),
    # documented as rejected, and once accepted
    (
        "threshold-quoted",
        {"gate.yml": agent("    criteria: {response_match_score: '0.8'}\n"), "set.evalset.json": GOOD_SET},
        ["gate.yml:5", "response_match_score", "text, not a number"],
    ),
    # a quoted threshold in test_config.json is read as ADK reads it, with a warning
    # (tests/unit/evalsets/test_reference_acceptance.py)
    (
        "num-runs-bool",
        {"gate.yml": agent("    num_runs: true\n"), "set.evalset.json": GOOD_SET},
        ["gate.yml:5", "agents[0].num_runs"],
    ),
    (
        "tolerance-unknown-key",
        {"gate.yml": "gate: {tolerance: {respons_match_score: 0.1}}\n" + agent(), "set.evalset.json": GOOD_SET},
        ["gate.yml:1", "gate.tolerance.respons_match_score", "did you mean `response_match_score`"],
    ),
    (
        "override-label-empty",
        {"gate.yml": "gate: {override_label: ''}\n" + agent(), "set.evalset.json": GOOD_SET},
        ["gate.yml:1", "gate.override_label"],
    ),
    (
        "judge-base-url",
        {"gate.yml": "judge: {base_url: localhost:8080}\n" + agent(), "set.evalset.json": GOOD_SET},
        ["gate.yml:1", "judge.base_url"],
    ),
    (
        "test-config-directory",
        {"test_config.json/x": "{}", "gate.yml": agent(), "set.evalset.json": GOOD_SET},
        ["test_config.json", "is a directory"],
    ),
    (
        "command-missing",
        {"gate.yml": agent(target="{kind: command, command: [./agent.sh]}"), "set.evalset.json": GOOD_SET},
        ["gate.yml:3", "agents[0].target.command[0]", "'./agent.sh' does not exist"],
    ),
    (
        "command-not-executable",
        {
            "gate.yml": agent(target="{kind: command, command: [./agent.sh]}"),
            "set.evalset.json": GOOD_SET,
            "agent.sh": "echo hi\n",
        },
        ["agents[0].target.command[0]", "not executable", "chmod +x"],
    ),
    (
        "command-cwd-missing",
        {
            "gate.yml": agent(target=f"{{kind: command, command: [{sys.executable}], cwd: nowhere}}"),
            "set.evalset.json": GOOD_SET,
        },
        ["agents[0].target.cwd", "not an existing directory"],
    ),
    (
        "command-scenario",
        {
            "gate.yml": agent(target=f"{{kind: command, command: [{sys.executable}]}}"),
            "set.evalset.json": json.dumps(
                {
                    "eval_set_id": "s",
                    "eval_cases": [
                        {"eval_id": "c", "conversation_scenario": {"starting_prompt": "a", "conversation_plan": "b"}}
                    ],
                }
            ),
        },
        ["set.evalset.json", "eval_cases[0].conversation_scenario", "command target cannot run"],
    ),
    (
        "report-template-syntax",
        {
            "comment/comment.md.j2": "# R\n{{ c.verdict \n",
            "gate.yml": "report: {templates: comment}\n" + agent(),
            "set.evalset.json": GOOD_SET,
        },
        ["comment.md.j2:2", "template syntax error"],
    ),
    (
        "lone-surrogate",
        {"gate.yml": agent(), "set.evalset.json": GOOD_SET.replace('"hi"', '"hi \\udc00"')},
        ["set.evalset.json:1", "lone UTF-16 surrogate"],
    ),
    (
        "actuals-unknown-schema",
        {
            "gate.yml": agent(target="{kind: replay, actuals: act.json}"),
            "set.evalset.json": GOOD_SET,
            "act.json": '{"schema_version": 7, "eval_sets": []}',
        },
        ["act.json", "schema_version", "7"],
    ),
    (
        "actuals-wrong-type",
        {
            "gate.yml": agent(target="{kind: replay, actuals: act.json}"),
            "set.evalset.json": GOOD_SET,
            "act.json": '{"eval_set_id": "s", "eval_case_results": [{"eval_id": 5}]}',
        },
        ["act.json", "eval_case_results[0].eval_id", "expected a string"],
    ),
    (
        "command-nul-byte",
        {"gate.yml": agent(target='{kind: command, command: [python3, "a\\0b"]}'), "set.evalset.json": GOOD_SET},
        ["gate.yml:3", "agents[0].target.command[1]", "NUL byte"],
    ),
    ("yaml-alias-loop", {"gate.yml": "x: &x [*x]\n" + agent()}, ["gate.yml:1", "own anchor"]),
    (
        "unknown-capitalised-key",
        {"gate.yml": "A: null\n"},
        ["gate.yml:1", "A: is not a known field", "allowed: agents"],
    ),
]


@pytest.mark.parametrize(("name", "files", "fragments"), CORPUS, ids=[c[0] for c in CORPUS])
def test_bad_input_is_one_clear_line_and_exit_2(name, files, fragments, write, capsys):
    for file_name, content in files.items():
        path = write(file_name, content)
    config = path.parent / "gate.yml"
    for command in (
        ["validate", "--config", str(config)],
        ["run", "--config", str(config), "--output", str(path.parent / "r.json")],
    ):
        code = main(command)
        captured = capsys.readouterr()
        assert code == 2, captured
        lines = captured.err.strip().splitlines()
        assert len(lines) == 1, captured.err
        assert lines[0].startswith("error: ")
        for fragment in fragments:
            assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
        assert not (path.parent / "r.json").exists()  # nothing half-written on bad input


def test_errors_carry_a_fix(write, capsys):
    for name, files, _ in CORPUS:
        for file_name, content in files.items():
            path = write(f"{name}/{file_name}", content)
        main(["validate", "--config", str(path.parent / "gate.yml")])
        assert ";" in capsys.readouterr().err, f"{name}: the message names no fix"


def test_no_traceback_at_process_level(write):
    config = write("gate.yml", agent("    criteria: {tool_trajectory_avg_scor: 1.0}\n"))
    write("set.evalset.json", GOOD_SET)
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "validate", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_missing_config_file(tmp_path, capsys):
    assert main(["validate", "--config", str(tmp_path / "absent.yml")]) == 2
    assert "absent.yml: config file not found" in capsys.readouterr().err
