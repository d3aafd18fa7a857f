"""GitHub's variables, the event payload and the Action's inputs, in Actions and in any other CI that sets them:
each bad value is exit 2 with one line naming the variable (or the payload's field), before any work, in every
command that reads them; nothing is tried against the network first.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.commands import action
from adk_eval_gate.github import variables
from adk_eval_gate.github.context import ActionsContext
from tests.support.hostile import assert_bad_input, run_cli

HEAD, BASE = "c" * 40, "b" * 40
GOOD_PULL = {
    "number": 7,
    "head": {"sha": HEAD, "ref": "feature"},
    "base": {"sha": BASE, "ref": "main"},
    "labels": [],
}


@pytest.fixture
def replay(example: Path, monkeypatch) -> Path:
    """The example gated on its recorded actuals (no agent runs), with no GitHub variable of the runner's own."""
    for name in (
        "GITHUB_API_URL",
        "GITHUB_SERVER_URL",
        "GITHUB_EVENT_NAME",
        "GITHUB_EVENT_PATH",
        "GITHUB_ACTIONS",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(example)
    return example / "replay.yml"


def commands(example: Path) -> dict[str, list[str]]:
    """Every command that reads the GitHub context (compare reads the labels, ci/merge/publish everything)."""
    return {
        "ci": ["ci", "--config", "replay.yml", "--output-dir", "out", "--quiet", "--no-comment"],
        "merge": ["merge", "baseline/results.json", "--config", "eval-gate.yml", "--output-dir", "out"],
        "compare": [
            "compare",
            "--results",
            "baseline/results.json",
            "--config",
            "eval-gate.yml",
            "--output",
            "c.json",
        ],
        "publish": ["publish", "--dir", "baseline", "--config", "eval-gate.yml", "--output-dir", "out"],
    }


BAD_VARIABLES = [
    ("GITHUB_API_URL", "not a url", "is not an http(s) URL"),
    ("GITHUB_API_URL", "ftp://api.github.com", "is not an http(s) URL"),
    ("GITHUB_API_URL", "https://api.github.com:port", "is not an http(s) URL"),
    ("GITHUB_API_URL", "https://", "is not an http(s) URL"),
    ("GITHUB_SERVER_URL", "github.com", "is not an http(s) URL"),
    ("GITHUB_REPOSITORY", "my-agent", "is not owner/name"),
    ("GITHUB_REPOSITORY", "/my-agent", "is not owner/name"),
    ("GITHUB_REPOSITORY", "octo/my-agent/extra", "is not owner/name"),
    ("GITHUB_REPOSITORY", "octo/..", "is not owner/name"),
    ("GITHUB_RUN_ID", "abc", "is not a positive whole number"),
    ("GITHUB_RUN_ID", "-5", "is not a positive whole number"),
    ("GITHUB_RUN_ID", "1e3", "is not a positive whole number"),
    ("GITHUB_RUN_ATTEMPT", "0", "is not a positive whole number"),
    ("GITHUB_RUN_ATTEMPT", "two", "is not a positive whole number"),
    ("GITHUB_SHA", "HEAD", "is not a commit sha"),
    ("GITHUB_REF", "main", "is not a full ref"),
    ("GITHUB_EVENT_NAME", "Pull Request", "is not an event name"),
    ("GITHUB_TOKEN", "ghp_abc def", "holds spaces"),
]


@pytest.mark.parametrize(("name", "value", "problem"), BAD_VARIABLES, ids=[f"{n}={v}" for n, v, _ in BAD_VARIABLES])
def test_outside_actions_a_bad_variable_is_one_line_naming_it(replay, capsys, monkeypatch, name, value, problem):
    monkeypatch.setenv(name, value)
    line = assert_bad_input(commands(replay.parent)["ci"], replay.parent, capsys, f"{name}: ", problem)
    if name == "GITHUB_TOKEN":
        assert value not in line and "abc" not in line  # a token is never quoted, not even a broken one


@pytest.mark.parametrize("command", ["ci", "merge", "compare", "publish"])
def test_every_command_that_reads_the_context_checks_it_first(replay, capsys, monkeypatch, command):
    monkeypatch.setenv("GITHUB_REPOSITORY", "no-owner")
    assert_bad_input(commands(replay.parent)[command], replay.parent, capsys, "GITHUB_REPOSITORY: ", "owner/name")


@pytest.mark.parametrize(
    ("name", "value"),
    [("GITHUB_API_URL", "api.github.com"), ("GITHUB_REPOSITORY", "my-agent"), ("GITHUB_RUN_ID", "latest")],
)
def test_in_actions_a_bad_variable_is_refused_at_once_not_tried_against_the_api(
    replay, capsys, monkeypatch, name, value
):
    event = replay.parent / "event.json"
    event.write_text(json.dumps({"pull_request": GOOD_PULL}))
    for key, setting in {
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_TOKEN": "ghs_token",
        "GITHUB_REPOSITORY": "o/r",
        name: value,
    }.items():
        monkeypatch.setenv(key, setting)
    argv = ["ci", "--config", "replay.yml", "--output-dir", "out", "--quiet"]
    code, _, err = run_cli(argv, capsys, seconds=10)  # no retries against an API: well under a second
    (line,) = err.splitlines()
    assert code == 2 and line.startswith("::error ") and f"{name}: " in line
    assert not (replay.parent / "out").exists()


def test_empty_variables_count_as_unset(replay, capsys, monkeypatch):
    """GitHub sets GITHUB_BASE_REF to "" outside pull requests; an empty value is no value, not a bad one."""
    for name in (
        "GITHUB_API_URL",
        "GITHUB_REPOSITORY",
        "GITHUB_RUN_ID",
        "GITHUB_BASE_REF",
        "GITHUB_EVENT_PATH",
    ):
        monkeypatch.setenv(name, "")
    context = ActionsContext.from_env()
    assert context.api_url == "https://api.github.com" and context.repository is None and context.event == {}


def test_valid_variables_are_taken_as_given(monkeypatch):
    env = {
        "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
        "GITHUB_SERVER_URL": "https://ghe.example.com",
        "GITHUB_REPOSITORY": "octo_acme/my.agent-1",  # an Enterprise Managed User's owner carries `_`
        "GITHUB_RUN_ID": "1234567890123",
        "GITHUB_RUN_ATTEMPT": "2",
        "GITHUB_SHA": "a" * 64,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_TOKEN": "ghs_abc123\n",  # a pasted secret's trailing newline
    }
    context = ActionsContext.from_env(env)
    assert context.api_url == "https://ghe.example.com/api/v3"
    assert (context.repository, context.run_id, context.token) == (
        "octo_acme/my.agent-1",
        "1234567890123",
        "ghs_abc123",
    )


# --- the event payload outside Actions: GITHUB_EVENT_PATH set means "this is the event" --------------------------

BAD_PAYLOADS = [
    (
        "number missing",
        {"pull_request": {k: v for k, v in GOOD_PULL.items() if k != "number"}},
        "pull_request.number",
    ),
    ("number a word", {"pull_request": {**GOOD_PULL, "number": "seven"}}, "pull_request.number"),
    ("number a boolean", {"pull_request": {**GOOD_PULL, "number": True}}, "pull_request.number"),
    ("head a string", {"pull_request": {**GOOD_PULL, "head": "feature"}}, "pull_request.head"),
    ("base without sha", {"pull_request": {**GOOD_PULL, "base": {"ref": "main"}}}, "pull_request.base.sha"),
    ("labels an object", {"pull_request": {**GOOD_PULL, "labels": {"name": "x"}}}, "pull_request.labels"),
    (
        "label without name",
        {"pull_request": {**GOOD_PULL, "labels": [{"color": "red"}]}},
        "pull_request.labels[0]",
    ),
    ("pull_request null", {"pull_request": None}, "pull_request"),
    ("repository a string", {"repository": "o/r"}, "repository"),
    ("default_branch a number", {"repository": {"default_branch": 5}}, "repository.default_branch"),
]


@pytest.mark.parametrize(("case", "payload", "field"), BAD_PAYLOADS, ids=[c for c, _, _ in BAD_PAYLOADS])
@pytest.mark.parametrize("event_name", ["pull_request", None])
def test_outside_actions_a_broken_payload_is_one_line_naming_the_field(
    replay, capsys, monkeypatch, case, payload, field, event_name
):
    event = replay.parent / "event.json"
    event.write_text(json.dumps(payload))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    if event_name:  # an event without a pull request is judged by what every payload must hold
        monkeypatch.setenv("GITHUB_EVENT_NAME", event_name if "pull_request" in payload else "workflow_dispatch")
    line = assert_bad_input(commands(replay.parent)["ci"], replay.parent, capsys, f"{event}: {field}")
    assert "unset GITHUB_EVENT_PATH to run locally" in line


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "is not a JSON object"),
        (b"\xff\xfe", "UTF-8"),
        (None, "no such file"),
    ],
)
def test_outside_actions_an_unreadable_payload_is_refused_not_taken_for_local_mode(
    replay, capsys, monkeypatch, content, problem
):
    event = replay.parent / "event.json"
    if isinstance(content, bytes):
        event.write_bytes(content)
    elif content is not None:
        event.write_text(content)
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    assert_bad_input(commands(replay.parent)["ci"], replay.parent, capsys, "GITHUB_EVENT_PATH", problem)


def test_outside_actions_a_directory_as_payload_is_refused(replay, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(replay.parent / "evals"))
    assert_bad_input(commands(replay.parent)["ci"], replay.parent, capsys, "GITHUB_EVENT_PATH")


def test_outside_actions_a_good_pull_request_payload_is_judged_as_one(replay, capsys, monkeypatch):
    event = replay.parent / "event.json"
    event.write_text(json.dumps({"pull_request": GOOD_PULL}))
    monkeypatch.setenv("GITHUB_EVENT_PATH", str(event))
    code, _, err = run_cli(commands(replay.parent)["ci"], capsys)
    assert code in (0, 1), err
    assert json.loads((replay.parent / "out" / "pull-request.json").read_text())["number"] == 7


# --- the Action's inputs -----------------------------------------------------------------------------------------


@pytest.fixture
def inputs(monkeypatch):
    for name in ("INPUT_POST-COMMENT", "INPUT_POST_COMMENT", "INPUT_GITHUB-TOKEN", "INPUT_GITHUB_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    return monkeypatch


@pytest.mark.parametrize(
    ("value", "posts"),
    [
        *[(word, True) for word in ("true", "True", "TRUE", "yes", "YES", "1", " true ")],
        *[(word, False) for word in ("false", "False", "FALSE", "no", "No", "0")],
        ("", True),  # the input's default
    ],
)
def test_boolean_inputs_take_githubs_spellings_and_yes_no_1_0(inputs, value, posts):
    inputs.setenv("INPUT_POST-COMMENT", value)
    assert ("--no-comment" not in action._checked_argv()) is posts


@pytest.mark.parametrize("value", ["maybe", "on", "off", "2", "t", "ture", "true false"])
def test_any_other_boolean_input_is_one_line_naming_the_input(inputs, capsys, value):
    inputs.setenv("INPUT_POST-COMMENT", value)
    capsys.readouterr()
    assert action.main() == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("error: <input>: post-comment: ") and "is not a boolean" in line and "true or false" in line


def test_the_token_input_is_checked_and_never_shown(inputs, capsys):
    inputs.setenv("INPUT_GITHUB-TOKEN", "ghs_zq9 value")
    capsys.readouterr()
    assert action.main() == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert "<input>: github-token: holds spaces" in line and "zq9" not in line


def test_the_boolean_words_are_a_superset_of_githubs_own():
    """GitHub's toolkit (getBooleanInput) takes exactly these; every one of them must mean the same here."""
    for word in ("true", "True", "TRUE"):
        assert variables.boolean_input("x", word) is True
    for word in ("false", "False", "FALSE"):
        assert variables.boolean_input("x", word) is False
