"""One property per input surface added in the last round, by the hostile-input rule: a result, or exit 2 with
exactly one stderr line and no new file; never a traceback, never exit 1 for the input itself. In process and on
recorded actuals (no agent runs), with a modest example count, so the whole file takes seconds.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adk_eval_gate import pytest_plugin
from tests.e2e.test_properties_hostile import hostile_scalars, hostile_values, workspace
from tests.support.hostile import assert_rule, run_cli, snapshot
from tests.support.paths import ROOT

SURFACE = settings(
    max_examples=40,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
RUN = ["run", "--config", "replay.yml", "--output", "r.json", "--quiet"]
counts = st.one_of(hostile_scalars, st.integers(min_value=-3, max_value=120))


@pytest.fixture(autouse=True)
def _no_actions_environment(monkeypatch):
    for key in (
        "GITHUB_STEP_SUMMARY",
        "GITHUB_OUTPUT",
        "GITHUB_EVENT_PATH",
        "GITHUB_ACTIONS",
        "GITHUB_TOKEN",
    ):
        monkeypatch.delenv(key, raising=False)


def edit_config(root: Path, change) -> None:
    data = yaml.safe_load((root / "replay.yml").read_text())
    change(data)
    (root / "replay.yml").write_text(yaml.safe_dump(data, allow_unicode=True))


def assert_not_failed_by_input(argv: list[str], root: Path, capsys) -> int:
    """The rule, and exit 1 only when the gate itself fails (a results file says so), never for the input."""
    code = assert_rule(argv, root, capsys)
    if code == 1:  # the gate failed on the scores, which were written
        assert (root / "r.json").exists() or (root / "out" / "results.json").exists()
    return code


@SURFACE
@given(
    st.one_of(
        counts,
        st.fixed_dictionaries({"min": counts, "max": counts}),
        st.dictionaries(st.sampled_from(["min", "max", "mean", "Min", ""]), counts, max_size=3),
        hostile_values,
    ),
    st.booleans(),
)
def test_num_runs_in_every_form(capsys, num_runs, all_runs):
    with workspace() as root:
        edit_config(root, lambda data: data["agents"][0].update(num_runs=num_runs))
        assert_rule(["validate", "--config", "replay.yml"], root, capsys)
        assert_not_failed_by_input([*RUN, *(["--all-runs"] if all_runs else [])], root, capsys)


code_names = st.sampled_from(
    [
        "",
        ".",
        "..x",
        ".x",
        "x.",
        "x",
        "a b.c",
        "no_such_module.fn",
        "json.no_such_fn",
        "math.pi",
        "os.path",
        "json.dumps",
        "builtins.len",
        "builtins.abs",
        "string.Template",
        "é.ü",
        "a" * 300 + ".f",
    ]
)


@SURFACE
@given(
    st.one_of(
        st.fixed_dictionaries({"name": code_names}),
        st.fixed_dictionaries({"name": code_names}, optional={"args": hostile_values}),
        hostile_values,
    ),
    st.one_of(counts, st.fixed_dictionaries({"threshold": counts})),
    st.sampled_from(["code_config", "codeConfig", "code_confg"]),
)
def test_custom_metrics_code_config(capsys, code_config, threshold, key):
    with workspace() as root:
        config = {
            "criteria": {"my_metric": threshold},
            "custom_metrics": {"my_metric": {key: code_config}},
        }
        (root / "evals" / "eval_config.json").write_text(json.dumps(config))
        assert_rule(["validate", "--config", "replay.yml"], root, capsys)
        assert_not_failed_by_input(RUN, root, capsys)


comment_words = st.one_of(
    hostile_scalars, st.sampled_from(["update", "recreate", "always", "changed", "failing", "my-app[bot]"])
)


@SURFACE
@given(
    st.one_of(
        st.dictionaries(st.sampled_from(["key", "mode", "when", "author", "mdoe", "post"]), comment_words, max_size=4),
        hostile_values,
    ),
    st.lists(
        st.tuples(
            st.sampled_from(["--comment-key", "--comment-mode", "--comment-when", "--comment-author"]),
            st.sampled_from(
                ["update", "recreate", "changed", "sometimes", "", " ", "-", "x" * 250, "\u202e", "a-->b", "a\nb"]
            ),
        ),
        max_size=3,
    ),
)
def test_comment_options_in_the_config_and_on_the_command_line(capsys, section, flags):
    with workspace() as root:
        edit_config(root, lambda data: data.update(comment=section))
        argv = ["ci", "--config", "replay.yml", "--output-dir", "out", "--quiet"]
        for flag, value in flags:
            argv += [f"{flag}={value}"]
        assert_not_failed_by_input(argv, root, capsys)


tolerance_values = st.one_of(
    hostile_scalars,
    st.sampled_from(["+20%", "20%", "+0%", "-5%", "+1e999%", "nan%", "+20 %", "%", "+10000%", "+10001%"]),
    st.floats(allow_nan=True, allow_infinity=True),
)


@SURFACE
@given(
    st.one_of(
        st.dictionaries(
            st.sampled_from(["cost", "latency", "tokens", "tool_calls", "Cost", "time", ""]),
            tolerance_values,
            max_size=4,
        ),
        hostile_values,
    )
)
def test_efficiency_tolerances(capsys, tolerances):
    with workspace() as root:
        edit_config(root, lambda data: data.setdefault("gate", {}).update(efficiency_tolerance=tolerances))
        assert_rule(["validate", "--config", "replay.yml"], root, capsys)


selector_parts = st.sampled_from(
    [
        "dice",
        "hello_world/dice",
        "evals/dice.evalset.json",
        "dice.evalset.json",
        "./evals/../evals/dice.evalset.json",
        "roll_6",
        "roll_*",
        "*",
        "[",
        "?",
        "",
        ":",
        ",",
        " ",
        "a" * 300,
        "/",
        "~",
        "evals",
        "\u202e",
    ]
)


@SURFACE
@given(st.lists(st.lists(selector_parts, min_size=1, max_size=4).map("".join), min_size=1, max_size=3))
def test_cases_selectors(capsys, selectors):
    with workspace() as root:
        argv = list(RUN)
        for selector in selectors:
            argv += [f"--cases={selector}"]
        assert_not_failed_by_input(argv, root, capsys)


AGENT = "from google.adk.agents import LlmAgent\n\nroot_agent = LlmAgent(name='{name}', model='gemini-2.0-flash')\n"
EVALSET = ROOT / "examples" / "hello_world" / "evals" / "dice.evalset.json"
folder_names = st.sampled_from(["agent", "my-agent", "my agent", "é", "evals", "tests", "a" * 60, "x.y", "_p"])
layout_items = st.tuples(
    st.lists(folder_names, min_size=0, max_size=3).map(lambda parts: "/".join(parts)),
    st.sampled_from(
        [
            "agent package",
            "agent without root_agent",
            "agent.py alone",
            "eval set",
            "eval set, other id",
            "broken eval set",
            "legacy test file",
            "test_config.json",
            "eval_config.json",
            "broken eval_config.json",
            "requirements.txt",
            "symlink loop",
            "eval-gate.yml already there",
        ]
    ),
)


def build_layout(root: Path, items: list[tuple[str, str]]) -> None:
    for folder_text, kind in items:
        folder = root / folder_text if folder_text else root
        folder.mkdir(parents=True, exist_ok=True)
        if kind.startswith("agent"):
            if kind != "agent.py alone":
                (folder / "__init__.py").write_text("from . import agent\n")
            body = AGENT.format(name=folder.name.replace("'", "")) if kind != "agent without root_agent" else "x = 1\n"
            (folder / "agent.py").write_text(body)
        elif kind.startswith("eval set"):
            data = json.loads(EVALSET.read_text())
            if kind.endswith("other id"):
                data["eval_set_id"] = "other"
            (folder / f"{kind[-2:].strip()}.evalset.json").write_text(json.dumps(data))
        elif kind == "broken eval set":
            (folder / "broken.evalset.json").write_text("{")
        elif kind == "legacy test file":
            (folder / "old.test.json").write_text(json.dumps([{"query": "hi", "reference": "hello"}]))
        elif kind.endswith(".json") or kind == "requirements.txt":
            name = kind.removeprefix("broken ")
            (folder / name).write_text("{" if kind.startswith("broken") else '{"criteria": {}}')
        elif kind == "symlink loop" and not (folder / "loop").exists():
            os.symlink(folder, folder / "loop")
        elif kind == "eval-gate.yml already there":
            (root / "eval-gate.yml").write_text("agents: []\n")


@SURFACE
@given(st.lists(layout_items, max_size=6))
def test_init_on_odd_layouts(capsys, items):
    with workspace() as example:
        root = example / "repo"
        root.mkdir()
        build_layout(root, items)
        before = snapshot(root)
        code, _, err = run_cli(["init", "--dir", str(root), "--branch", "main"], capsys)
        assert code in (0, 2) and "Traceback" not in err, err
        if code == 2:
            assert len(err.splitlines()) == 1 and err.startswith("error: "), err
            assert snapshot(root) == before, "a refused init left files behind"
        else:
            assert (root / "eval-gate.yml").is_file() and (root / ".github" / "workflows" / "agent-evals.yml").is_file()
            from adk_eval_gate.run.plan import build_plan

            assert build_plan(root / "eval-gate.yml").agents  # what init wrote validates


plugin_paths = st.sampled_from(
    [
        None,
        "",
        "replay.yml",
        "eval-gate.yml",
        "missing.yml",
        "evals",
        "/dev/null",
        "pipe",
        "replay.yml/x",
        "a" * 300,
    ]
)
output_paths = st.sampled_from(
    [None, "", "r.json", "out/r.json", "evals", "replay.yml/x", "pipe", "/dev/null", "a" * 300 + ".json"]
)


@SURFACE
@given(plugin_paths, output_paths)
def test_pytest_plugin_options(config_path, output):
    """The plugin's options are checked when pytest starts: a one-line usage error (pytest's exit 4), never an
    internal error; the plugin is inert without --eval-gate."""
    with workspace() as root:
        os.mkfifo(root / "pipe")
        options = {"eval_gate": config_path, "eval_gate_output": output}
        registered = []
        config = SimpleNamespace(
            getoption=lambda name, default=None: options.get(name, default),
            pluginmanager=SimpleNamespace(register=lambda plugin, name: registered.append(name)),
        )
        before = snapshot(root)
        try:
            pytest_plugin.pytest_configure(config)
        except pytest.UsageError as exc:
            message = str(exc)
            assert len(message.splitlines()) == 1 and message.startswith(("--eval-gate: ", "--eval-gate-output: "))
            assert not registered
        else:
            assert bool(registered) == bool(config_path)
        if config_path in ("replay.yml", "eval-gate.yml"):
            # a path that cannot be written is refused before any case runs, not at the session's end
            assert bool(registered) == (output is None or output in ("r.json", "out/r.json"))
        assert snapshot(root) == before


@pytest.mark.parametrize("key", ["a-->b", "two\nlines", "x" * 201])
def test_a_comment_key_that_would_break_our_hidden_marker_is_refused(capsys, key):
    """The key sits in a hidden HTML comment at the top of ours: `-->` would end it early, a line break split it."""
    with workspace() as root:
        argv = ["ci", "--config", "replay.yml", "--output-dir", "out", f"--comment-key={key}"]
        assert assert_rule(argv, root, capsys) == 2
        edit_config(root, lambda data: data.update(comment={"key": key}))
        code, _, err = run_cli(["validate", "--config", "replay.yml"], capsys)
        assert code == 2 and "comment.key" in err and len(err.strip().splitlines()) == 1
