"""Hostile and broken input, kind by kind: every file, argument and variable the tool reads.

The rule for each: exit 2, exactly one stderr line `error: file[:line]: field: problem; fix`, no traceback, no hang,
and no new file left behind.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from tests.support.hostile import assert_bad_input, time_limit
from tests.support.paths import ROOT


@pytest.fixture
def replay(example: Path, monkeypatch) -> Path:
    """The bundled example gated on its recorded actuals: no agent runs, so every check here is fast."""
    for key in (
        "GITHUB_STEP_SUMMARY",
        "GITHUB_OUTPUT",
        "GITHUB_EVENT_PATH",
        "GITHUB_ACTIONS",
        "GITHUB_TOKEN",
    ):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(example)
    return example / "replay.yml"


def _edit_config(config: Path, old: str, new: str) -> None:
    text = config.read_text()
    assert old in text
    config.write_text(text.replace(old, new))


# --- files that are not regular files: refused before they are opened -----------------------------------------


@pytest.mark.parametrize("which", ["config", "evalset", "actuals", "eval_config", "test_config"])
def test_named_pipes_are_refused_without_hanging(replay, capsys, which):
    example = replay.parent
    target = {
        "config": replay,
        "evalset": example / "evals" / "dice.evalset.json",
        "actuals": example / "recorded" / "dice.evalset_result.json",
        "eval_config": example / "evals" / "eval_config.json",
        "test_config": example / "evals" / "test_config.json",
    }[which]
    if which == "test_config":  # read beside the eval set when no eval_config is named
        _edit_config(replay, "    eval_config: evals/eval_config.json\n", "")
    target.unlink(missing_ok=True)
    os.mkfifo(target)
    line = assert_bad_input(
        ["validate", "--config", str(replay)], example, capsys, target.name, "named pipe", seconds=10
    )
    assert which == "config" or str(example) not in line  # eval files are named relative to the config


def test_devices_and_directories_are_refused(replay, capsys, tmp_path):
    assert_bad_input(["validate", "--config", "/dev/zero"], replay.parent, capsys, "/dev/zero", "is a device")
    assert_bad_input(["validate", "--config", str(replay.parent)], replay.parent, capsys, "is a directory")
    (replay.parent / "evals" / "test_config.json").mkdir()
    _edit_config(replay, "    eval_config: evals/eval_config.json\n", "")
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "evals/test_config.json",
        "is a directory",
    )


@pytest.mark.parametrize("kind", ["results", "baseline"])
def test_pipes_as_results_or_baseline(replay, capsys, kind):
    example = replay.parent
    pipe = example / "pipe.json"
    os.mkfifo(pipe)
    good = str(example / "baseline" / "results.json")
    results, baseline = (str(pipe), good) if kind == "results" else (good, str(pipe))
    assert_bad_input(
        ["compare", "--results", results, "--baseline", baseline, "--output", str(example / "c.json")],
        example,
        capsys,
        "pipe.json",
        "named pipe",
        seconds=10,
    )


def test_merge_and_publish_refuse_pipes(replay, capsys, monkeypatch):
    example = replay.parent
    os.mkfifo(example / "shard.json")
    assert_bad_input(
        ["merge", str(example / "shard.json"), "--config", str(replay), "--output-dir", str(example / "out")],
        example,
        capsys,
        "shard.json",
        "named pipe",
        seconds=10,
    )
    artifact = example / "artifact"
    artifact.mkdir()
    os.mkfifo(artifact / "results.json")
    event = example / "workflow_run.json"  # a well-formed trusted event: the artifact is what is broken
    event.write_text(
        json.dumps(
            {
                "repository": {"default_branch": "main"},
                "workflow_run": {
                    "id": 5,
                    "head_sha": "a" * 40,
                    "event": "pull_request",
                    "pull_requests": [{"number": 7}],
                },
            }
        )
    )
    for name, value in {
        "GITHUB_EVENT_NAME": "workflow_run",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_TOKEN": "t0k3n-for-the-test",
    }.items():
        monkeypatch.setenv(name, value)
    assert_bad_input(
        ["publish", "--dir", str(artifact), "--config", str(replay)],
        example,
        capsys,
        "results.json",
        "named pipe",
        seconds=10,
    )


# --- globs ------------------------------------------------------------------------------------------------------


def test_recursive_glob_through_symlink_loops_ends_quickly(replay, capsys):
    example = replay.parent
    deep = example / "evals" / "a" / "b"
    deep.mkdir(parents=True)
    for i, target in enumerate([example / "evals", example, example / "evals" / "a"]):
        (deep / f"loop{i}").symlink_to(target, target_is_directory=True)
    _edit_config(replay, "evalsets: [evals/*.evalset.json]", "evalsets: ['**/*.evalset.json']")
    with time_limit(10):
        assert main(["validate", "--config", str(replay)]) == 0
    assert "evals/dice.evalset.json [dice]: 6 case(s)" in capsys.readouterr().out  # found once, not once per loop
    _edit_config(replay, "'**/*.evalset.json'", "'**/*.nothing.json'")
    assert_bad_input(["validate", "--config", str(replay)], example, capsys, "matches no file", seconds=10)


# --- output paths, checked before any work ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("argv", "fragments"),
    [
        (["run", "--output", "evals"], ["--output", "is a directory"]),
        (["run", "--output", ""], ["--output", "empty path"]),
        (["run", "--output", "replay.yml/r.json"], ["--output", "replay.yml is a file, not a directory"]),
        (["ci", "--output-dir", "replay.yml"], ["--output-dir", "not a directory"]),
        (["ci", "--output-dir", "replay.yml/out"], ["--output-dir", "replay.yml"]),
        (
            ["compare", "--results", "baseline/results.json", "--output", "evals"],
            ["--output", "is a directory"],
        ),
    ],
)
def test_unwritable_outputs_are_refused_before_running(replay, capsys, argv, fragments):
    if argv[0] != "compare":
        argv = [*argv, "--config", str(replay)]
    assert_bad_input(argv, replay.parent, capsys, *fragments)


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("GITHUB_STEP_SUMMARY", "evals", "is a directory"),
        ("GITHUB_OUTPUT", "missing/dir/out.txt", "does not exist"),
        ("GITHUB_OUTPUT", "out", "where this command writes its own output"),
    ],
)
def test_github_files_are_checked_before_running(replay, capsys, monkeypatch, variable, value, fragment):
    monkeypatch.setenv(variable, str(replay.parent / value))
    assert_bad_input(["ci", "--config", str(replay), "--output-dir", "out"], replay.parent, capsys, variable, fragment)


# --- eval text and actuals --------------------------------------------------------------------------------------


def test_lone_surrogate_in_eval_text(replay, capsys):
    evalset = replay.parent / "evals" / "dice.evalset.json"
    evalset.write_text(evalset.read_text().replace('"Roll a 6 sided die"', '"Roll a 6 sided die \\ud800"', 1))
    assert_bad_input(
        ["run", "--config", str(replay), "--output", "r.json"],
        replay.parent,
        capsys,
        "evals/dice.evalset.json:",
        "lone UTF-16 surrogate",
    )


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (lambda d: d.update(eval_case_results="many"), ["eval_case_results", "is str, expected a list"]),
        (lambda d: d["eval_case_results"].__setitem__(0, 7), ["eval_case_results[0]", "expected an object"]),
        (
            lambda d: d["eval_case_results"][0].update(eval_id=["x"]),
            ["eval_case_results[0].eval_id", "expected a string"],
        ),
        (
            lambda d: d["eval_case_results"][0]["eval_metric_result_per_invocation"].__setitem__(0, "row"),
            ["eval_metric_result_per_invocation[0]", "expected an object"],
        ),
    ],
)
def test_actuals_with_fields_of_the_wrong_type(replay, capsys, edit, fragments):
    actuals = replay.parent / "recorded" / "dice.evalset_result.json"
    data = json.loads(actuals.read_text())
    if isinstance(data, str):
        data = json.loads(data)
    edit(data)
    actuals.write_text(json.dumps(data))
    line = assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "recorded/dice.evalset_result.json:",
        *fragments,
    )
    assert str(replay.parent) not in line


def test_actuals_with_an_unknown_schema_version(replay, capsys):
    actuals = replay.parent / "recorded" / "results.json"
    data = json.loads((replay.parent / "baseline" / "results.json").read_text())
    data["schema_version"] = 9
    actuals.write_text(json.dumps(data))
    _edit_config(replay, "actuals: recorded/dice.evalset_result.json", "actuals: recorded/results.json")
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "recorded/results.json",
        "schema_version",
        "9",
    )


# --- config values the README documents as rejected -------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        ("    num_runs: 1\n", "    num_runs: true\n", ["replay.yml:8", "agents[0].num_runs"]),
        (
            "    eval_config: evals/eval_config.json\n",
            "    criteria: {response_match_score: '0.8'}\n",
            ["agents[0].criteria.response_match_score", "text, not a number"],
        ),
        ("agents:\n", "gate: {tolerance: '0.1'}\nagents:\n", ["gate.tolerance"]),
        (
            "agents:\n",
            "gate: {tolerance: {response_match_scor: 0.1}}\nagents:\n",
            ["replay.yml:3", "gate.tolerance.response_match_scor", "did you mean `response_match_score`"],
        ),
        ("agents:\n", "gate: {override_label: ''}\nagents:\n", ["gate.override_label"]),
        ("agents:\n", "judge: {base_url: 'not a url'}\nagents:\n", ["judge.base_url"]),
        ("agents:\n", "run: {timeout: '10'}\nagents:\n", ["run.timeout"]),
        ("agents:\n", "judge: {cache: replay.yml}\nagents:\n", ["judge.cache", "not a directory"]),
        (
            "target: {kind: replay, actuals: recorded/dice.evalset_result.json}",
            "target: {kind: command, command: [./no-such-agent.py]}",
            ["agents[0].target.command[0]", "does not exist"],
        ),
        (
            "target: {kind: replay, actuals: recorded/dice.evalset_result.json}",
            "target: {kind: command, command: [no-such-program-anywhere]}",
            ["agents[0].target.command[0]", "not on PATH"],
        ),
        (
            "target: {kind: replay, actuals: recorded/dice.evalset_result.json}",
            f"target: {{kind: command, command: [{sys.executable}], cwd: nowhere}}",
            ["agents[0].target.cwd", "not an existing directory"],
        ),
    ],
)
def test_documented_rejections(replay, capsys, old, new, fragments):
    _edit_config(replay, old, new)
    assert_bad_input(["validate", "--config", str(replay)], replay.parent, capsys, *fragments)
    assert_bad_input(["run", "--config", str(replay), "--output", "r.json"], replay.parent, capsys, *fragments)


def test_report_template_syntax_error_is_caught_by_validate(replay, capsys):
    (replay.parent / "comment").mkdir()
    (replay.parent / "comment" / "comment.md.j2").write_text("# Report\n{% for row in rows %}\n")
    _edit_config(replay, "agents:\n", "report: {templates: comment}\nagents:\n")
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "comment/comment.md.j2:",
        "template syntax error",
    )
    assert_bad_input(["ci", "--config", str(replay), "--output-dir", "out"], replay.parent, capsys, "comment.md.j2")


def test_yaml_alias_bombs_and_self_references(replay, capsys):
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    replay.write_text("\n".join(lines) + "\nagents: [*l8]\n")
    assert_bad_input(["validate", "--config", str(replay)], replay.parent, capsys, "YAML aliases", seconds=10)
    replay.write_text("a: &a [*a]\nagents: []\n")
    assert_bad_input(
        ["validate", "--config", str(replay)], replay.parent, capsys, "replay.yml:1", "own anchor", seconds=10
    )


# --- results, baselines, shards -----------------------------------------------------------------------------------


def _results(example: Path) -> dict:
    return json.loads((example / "baseline" / "results.json").read_text())


def _first_metric(data: dict) -> dict:
    return next(iter(data["eval_sets"][0]["cases"][0]["metrics"].values()))


@pytest.mark.parametrize(
    ("edit", "fragments"),
    [
        (
            lambda d: _first_metric(d).update(score=float("nan")),
            ["eval_sets[0].cases[0].metrics.", "score: nan is not a finite number"],
        ),
        (lambda d: _first_metric(d).update(score=7.5), ["score 7.5 is outside [0, 1]"]),
        (lambda d: _first_metric(d).update(threshold=-1), ["threshold", "outside [0, 1]"]),
        (
            lambda d: d["eval_sets"][0]["cases"].append(d["eval_sets"][0]["cases"][0]),
            ["eval_id", "duplicate"],
        ),
        (lambda d: d["eval_sets"].append(d["eval_sets"][0]), ["eval_sets[1]", "also eval_sets[0]"]),
        (lambda d: d.pop("schema_version"), ["schema_version: is missing"]),
        (lambda d: d.update(schema_version=2), ["schema_version", "2 is not a version"]),
        (lambda d: d["timings"].update(duration_seconds=-3), ["timings.duration_seconds"]),
    ],
)
def test_results_are_not_taken_on_trust(replay, capsys, edit, fragments):
    example = replay.parent
    data = _results(example)
    edit(data)
    (example / "tampered.json").write_text(json.dumps(data))
    good = str(example / "baseline" / "results.json")
    for results, baseline in (("tampered.json", good), (good, "tampered.json")):
        assert_bad_input(
            ["compare", "--results", results, "--baseline", baseline, "--output", "c.json"],
            example,
            capsys,
            "tampered.json",
            *fragments,
        )
    assert_bad_input(
        ["merge", "tampered.json", "--config", "eval-gate.yml", "--output-dir", "out"],
        example,
        capsys,
        "tampered.json",
    )


def test_merge_refuses_shards_of_another_config_and_names_overlapping_files(replay, capsys):
    example = replay.parent
    data = _results(example)
    (example / "s1.json").write_text(json.dumps(data))
    (example / "s2.json").write_text(json.dumps(data))
    assert_bad_input(
        ["merge", "s1.json", "s2.json", "--config", "eval-gate.yml", "--output-dir", "out"],
        example,
        capsys,
        "s2.json",
        "is also in s1.json",
    )
    other = json.loads(json.dumps(data))
    other["eval_sets"][0]["eval_set_id"] = "someone_elses"
    (example / "other.json").write_text(json.dumps(other))
    assert_bad_input(
        ["merge", "other.json", "--config", "eval-gate.yml", "--output-dir", "out"],
        example,
        capsys,
        "other.json",
        "someone_elses is not in",
    )
    other = json.loads(json.dumps(data))
    other["config_file"] = "another.yml"
    (example / "other.json").write_text(json.dumps(other))
    assert_bad_input(
        ["merge", "other.json", "--config", "eval-gate.yml", "--output-dir", "out"],
        example,
        capsys,
        "other.json",
        "config_file",
        "'another.yml' is not 'eval-gate.yml'",
    )


# --- the command line itself -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["bogus"],
        ["run", "--cases"],  # (`run` alone looks for eval-gate.yml: tests/unit/commands/test_defaults_and_help.py)
        ["run", "--config"],
        ["run", "--config", "x", "--nope"],
        ["baseline", "delete", "--config", "x"],
        ["schema", "everything"],
        ["ci", "--config", "x", "--shard"],
    ],
)
def test_usage_errors_are_one_line_with_a_help_hint(tmp_path, capsys, argv):
    line = assert_bad_input(argv, tmp_path, capsys, "--help")
    assert line.startswith("error: adk-eval-gate")


def test_bad_shard_and_working_directory(replay, capsys, monkeypatch):
    assert_bad_input(
        ["ci", "--config", str(replay), "--shard", "3/2"], replay.parent, capsys, "--shard", "out of range"
    )
    from adk_eval_gate.commands.action import main as action_main

    monkeypatch.setenv("INPUT_WORKING-DIRECTORY", str(replay.parent / "nowhere"))
    capsys.readouterr()
    assert action_main() == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "working-directory" in err[0] and "nowhere" in err[0]


def test_closed_stdout_ends_quietly(replay):
    """`adk-eval-gate ... | head`: the reader went away; no traceback, the conventional SIGPIPE status."""
    process = subprocess.Popen(
        [sys.executable, "-m", "adk_eval_gate", "schema", "results"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(ROOT / "src")},
    )
    process.stdout.close()
    stderr = process.communicate(timeout=60)[1].decode()
    assert stderr == "" and process.returncode == 141


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_output_files_follow_the_umask(replay, capsys, umask, mode):
    previous = os.umask(umask)
    try:
        assert main(["ci", "--config", str(replay), "--output-dir", "out", "--quiet"]) in (0, 1)
        assert main(["run", "--config", str(replay), "--output", "r.json", "--quiet"]) in (0, 1)
    finally:
        os.umask(previous)
    for path in [replay.parent / "r.json", *(replay.parent / "out").iterdir()]:
        assert path.stat().st_mode & 0o777 == mode, path


def test_eval_file_errors_name_files_relative_to_the_config(replay, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the working directory is elsewhere: paths stay relative to the config
    (replay.parent / "evals" / "dice.evalset.json").write_text('{"eval_set_id": "dice", "eval_cases": [}')
    line = assert_bad_input(["validate", "--config", str(replay)], tmp_path, capsys, "evals/dice.evalset.json:1")
    assert line.startswith("error: evals/dice.evalset.json:1: ")


def test_report_template_that_cannot_render_is_caught_by_validate(replay, capsys):
    (replay.parent / "comment").mkdir()
    (replay.parent / "comment" / "comment.md.j2").write_text("# Report\n{{ no_such_variable.field }}\n")
    _edit_config(replay, "agents:\n", "report: {templates: comment}\nagents:\n")
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "comment/comment.md.j2",
        "fails to render",
        "no_such_variable",
    )


@pytest.mark.parametrize(
    ("make", "fragments"),
    [
        (lambda b: (b.unlink(), b.mkdir()), ["replay.yml:3", "baseline.path", "is a directory"]),
        (lambda b: b.write_text('{"schema_version": 1,'), ["baseline/results.json:1", "not valid JSON"]),
        (
            lambda b: b.write_text(b.read_text().replace('"schema_version": 1', '"schema_version": 3')),
            ["schema_version", "3"],
        ),
    ],
)
def test_an_unreadable_baseline_is_refused_before_the_agents_run(replay, capsys, make, fragments):
    make(replay.parent / "baseline" / "results.json")
    _edit_config(replay, "agents:\n", "baseline: {store: file, path: baseline/results.json}\nagents:\n")
    assert_bad_input(["ci", "--config", str(replay), "--output-dir", "out"], replay.parent, capsys, *fragments)


def test_console_ids_are_cut_in_the_middle_and_agent_text_loses_bidi_controls(replay):
    from adk_eval_gate.report.console import render_table
    from adk_eval_gate.report.escape import code_block, html_text, inline
    from adk_eval_gate.results.build import read_results

    results = read_results(replay.parent / "baseline" / "results.json")
    cases = results.eval_sets[0].cases
    cases[0].eval_id = "customer_support_refund_flow_with_a_long_shared_prefix_case_0001"
    cases[1].eval_id = "customer_support_refund_flow_with_a_long_shared_prefix_case_0002"
    cases[1].reason = "the agent said \u202egnp.exe\u202c and \x1b[31mred\x1b[0m"
    table = render_table(results)
    assert "customer_support_re…red_prefix_case_0001" in table and "customer_support_re…red_prefix_case_0002" in table
    assert "\u202e" not in table and "\x1b" not in table
    hostile = "a\u202ab\u202bc\u202cd\u202de\u202ef\u2066g\u2067h\u2068i\u2069j\u200ek\u200fl\u061cm"
    for rendered in (inline(hostile), html_text(hostile), code_block(hostile)):
        assert "abcdefghijklm" in rendered


@pytest.mark.parametrize(
    ("path", "fragment"), [("evals", "'evals' is a directory"), ("replay.yml/r.json", "which is a file")]
)
def test_a_baseline_path_that_cannot_hold_a_file(replay, capsys, path, fragment):
    _edit_config(replay, "agents:\n", f"baseline: {{store: file, path: {path}}}\nagents:\n")
    for argv in (
        ["baseline", "update", "--results", "baseline/results.json"],
        ["baseline", "show"],
        ["validate"],
    ):
        assert_bad_input(
            [*argv, "--config", str(replay)], replay.parent, capsys, "replay.yml:3", "baseline.path", fragment
        )


def test_text_that_is_not_utf8_never_reaches_a_written_file(replay, capsys):
    """Arguments and file names arrive with lone surrogates when their bytes are not UTF-8; YAML can spell one."""
    bad = os.fsdecode(b"label-\xff")
    assert_bad_input(
        ["compare", "--results", "baseline/results.json", "--label", bad],
        replay.parent,
        capsys,
        "--label",
        "not valid UTF-8",
    )
    (replay.parent / "evals" / os.fsdecode(b"odd-\xfe.evalset.json")).write_bytes(
        (replay.parent / "evals" / "dice.evalset.json").read_bytes()
    )
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "agents[0].evalsets[0]",
        "not valid UTF-8",
    )
    replay.write_text('gate: {override_label: "\\ud800"}\n' + replay.read_text())
    assert_bad_input(["validate", "--config", str(replay)], replay.parent, capsys, "lone UTF-16 surrogate")


def test_agent_text_with_a_lone_surrogate_is_written_not_lost(replay, tmp_path):
    from adk_eval_gate.results.build import read_results, write_results

    results = read_results(replay.parent / "baseline" / "results.json")
    results.eval_sets[0].cases[0].reason = "the server said \ud800"
    write_results(results, tmp_path / "r.json")
    assert read_results(tmp_path / "r.json").eval_sets[0].cases[0].reason == "the server said \ufffd"


def test_a_broken_agent_folder_leaves_no_bytecode_behind(example, capsys, monkeypatch):
    monkeypatch.chdir(example)
    (example / "hello_world" / "agent.py").write_text("import definitely_not_installed_module\n")
    for cached in example.rglob("__pycache__"):
        shutil.rmtree(cached)
    # as without PYTHONDONTWRITEBYTECODE, which this machine sets
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    assert_bad_input(["validate", "--config", "eval-gate.yml"], example, capsys, "definitely_not_installed_module")


def test_a_glob_that_would_walk_too_far_is_refused(replay, capsys, monkeypatch):
    from adk_eval_gate.config import globs

    monkeypatch.setattr(globs, "MAX_ENTRIES", 20)  # the real limit, 200 000, stands for a walk of the whole disk
    _edit_config(replay, "evalsets: [evals/*.evalset.json]", "evalsets: ['**/*.evalset.json']")
    assert_bad_input(
        ["validate", "--config", str(replay)],
        replay.parent,
        capsys,
        "agents[0].evalsets[0]",
        "walks more than 20",
    )


def test_a_pipe_in_the_judge_cache_is_a_miss_not_a_hang(tmp_path):
    from adk_eval_gate.llm.cache import LlmCache, cache_key

    cache = LlmCache(tmp_path)
    key = cache_key(prompt="x")
    (tmp_path / key[:2]).mkdir()
    os.mkfifo(tmp_path / key[:2] / f"{key}.json")
    with time_limit(5):
        assert cache.get(key) is None
    cache.put(cache_key(prompt="y"), {"text": "ok"})
    assert cache.get(cache_key(prompt="y")) == {"text": "ok"}
