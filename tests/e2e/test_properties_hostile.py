"""Generated broken versions of every input, each answered by the rule: a result (exit 0/1) or exit 2 with exactly
one stderr line, no traceback, no new file, within a time limit. No agent runs: the example is gated on its
recorded actuals, so each example takes milliseconds."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.hostile import assert_rule
from tests.support.paths import ROOT

EXAMPLE = ROOT / "examples" / "hello_world"
PROPERTIES = settings(
    max_examples=100,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)

hostile_scalars = st.sampled_from(
    [
        None,
        True,
        False,
        0,
        -1,
        1,
        2,
        0.5,
        1.5,
        1e308,
        float("nan"),
        float("inf"),
        "",
        " ",
        "0.8",
        "true",
        "x",
        "../../../etc/passwd",
        "/dev/zero",
        "/dev/null",
        "evals",
        "**/*",
        "**",
        "[",
        "a" * 300,
        "\u202eevil",
        "\ud83d\ude00",
        "recorded/dice.evalset_result.json",
        "evals/*.evalset.json",
        "http://",
        "https://example.com",
        "~",
        "-",
        "--help",
    ]
)
hostile_values = st.recursive(
    hostile_scalars | st.text(max_size=12) | st.integers(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children, max_size=3),
    max_leaves=8,
)


@contextmanager
def workspace() -> Iterator[Path]:
    """A fresh copy of the example per generated input (hypothesis reuses the test's fixtures across examples)."""
    with tempfile.TemporaryDirectory(prefix="hostile-") as folder:
        root = Path(folder) / "ex"
        shutil.copytree(EXAMPLE, root, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
        previous = os.getcwd()
        os.chdir(root)
        try:
            yield root
        finally:
            os.chdir(previous)


def replace_at(data, path: list[int], value):
    """Replaces the node that `path` (indices into the children, modulo their number) leads to."""
    if not path or not isinstance(data, (dict, list)) or not data:
        return value
    keys = list(data) if isinstance(data, dict) else list(range(len(data)))
    key = keys[path[0] % len(keys)]
    data[key] = replace_at(data[key], path[1:], value)
    return data


mutation = st.tuples(st.lists(st.integers(min_value=0, max_value=50), max_size=6), hostile_values)


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


@PROPERTIES
@given(mutation)
def test_broken_configs(capsys, change):
    with workspace() as root:
        data = yaml.safe_load((root / "replay.yml").read_text())
        (root / "replay.yml").write_text(yaml.safe_dump(replace_at(data, *change), allow_unicode=True))
        assert_rule(["validate", "--config", "replay.yml"], root, capsys)
        assert_rule(["run", "--config", "replay.yml", "--output", "r.json", "--quiet"], root, capsys)


@PROPERTIES
@given(
    st.sampled_from(["evals/dice.evalset.json", "evals/eval_config.json", "recorded/dice.evalset_result.json"]),
    mutation,
)
def test_broken_eval_sets_eval_configs_and_actuals(capsys, file, change):
    with workspace() as root:
        data = json.loads((root / file).read_text())
        if isinstance(data, str):  # ADK's double-encoded history
            data = json.loads(data)
        (root / file).write_text(json.dumps(replace_at(data, *change)))
        assert_rule(["run", "--config", "replay.yml", "--output", "r.json", "--quiet"], root, capsys)


@PROPERTIES
@given(
    st.sampled_from(
        [
            "evals/dice.evalset.json",
            "replay.yml",
            "recorded/dice.evalset_result.json",
            "evals/eval_config.json",
        ]
    ),
    st.integers(min_value=0),
    st.binary(max_size=8),
)
def test_truncated_or_corrupted_bytes(capsys, file, at, garbage):
    with workspace() as root:
        raw = (root / file).read_bytes()
        cut = at % (len(raw) + 1)
        (root / file).write_bytes(raw[:cut] + garbage + raw[cut + len(garbage) :] if garbage else raw[:cut])
        assert_rule(["validate", "--config", "replay.yml"], root, capsys)


@PROPERTIES
@given(st.booleans(), mutation)
def test_broken_results_and_baselines(capsys, as_baseline, change):
    with workspace() as root:
        data = json.loads((root / "baseline" / "results.json").read_text())
        (root / "tampered.json").write_text(json.dumps(replace_at(data, *change)))
        good = "baseline/results.json"
        results, baseline = (good, "tampered.json") if as_baseline else ("tampered.json", good)
        assert_rule(["compare", "--results", results, "--baseline", baseline, "--output", "c.json"], root, capsys)
        assert_rule(
            ["merge", "tampered.json", "--config", "eval-gate.yml", "--output-dir", "out", "--no-comment"],
            root,
            capsys,
        )


PATHS = [
    "",
    "out",
    "evals",
    "replay.yml",
    "replay.yml/x",
    "missing/deeper/x",
    "pipe",
    "/dev/null",
    "out/results.json",
]
path_kinds = st.sampled_from([*PATHS, "\x00"])
env_path_kinds = st.sampled_from(PATHS)  # an environment variable cannot hold a NUL byte


@PROPERTIES
@given(st.sampled_from(["run", "compare", "ci", "merge"]), path_kinds, env_path_kinds, env_path_kinds)
def test_output_paths_and_github_files(capsys, monkeypatch, command, output, summary, outputs):
    with workspace() as root:
        os.mkfifo(root / "pipe")
        for variable, value in (("GITHUB_STEP_SUMMARY", summary), ("GITHUB_OUTPUT", outputs)):
            if value:
                monkeypatch.setenv(variable, value)
            else:
                monkeypatch.delenv(variable, raising=False)
        argv = {
            "run": ["run", "--config", "replay.yml", "--quiet", "--output", output],
            "compare": [
                "compare",
                "--results",
                "baseline/results.json",
                "--baseline",
                "baseline/results.json",
                "--output",
                output,
            ],
            "ci": ["ci", "--config", "replay.yml", "--quiet", "--no-comment", "--output-dir", output],
            "merge": [
                "merge",
                "baseline/results.json",
                "--config",
                "eval-gate.yml",
                "--no-comment",
                "--output-dir",
                output,
            ],
        }[command]
        assert_rule(argv, root, capsys)


tokens = st.sampled_from(
    [
        "validate",
        "run",
        "ci",
        "merge",
        "publish",
        "compare",
        "baseline",
        "schema",
        "show",
        "update",
        "results",
        "comparison",
        "--config",
        "replay.yml",
        "eval-gate.yml",
        "--output",
        "--output-dir",
        "--results",
        "--baseline",
        "baseline/results.json",
        "--label",
        "--shard",
        "1/2",
        "0/0",
        "a/b",
        "--dir",
        "--quiet",
        "--no-comment",
        "--comment-key",
        "",
        "-",
        "--",
        "-x",
        "evals",
        "/dev/zero",
    ]
)


@settings(
    max_examples=150,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(tokens, max_size=7))
def test_arbitrary_command_lines(capsys, argv):
    with workspace() as root:
        assert_rule(argv, root, capsys)
