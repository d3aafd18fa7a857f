"""One set of defaults: `--config` is the nearest eval-gate.yml (found like git finds its repository), `run`,
`compare` and `view` share one output folder, and `--help` groups the commands with an example each."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from adk_eval_gate.commands.config_file import find_config
from adk_eval_gate.commands.help import EXAMPLES, GROUPS, OUTPUT_DIR
from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.parser import SUBCOMMANDS, build_parser
from tests.conftest import EXAMPLE


def test_the_nearest_config_is_found_in_the_folder_or_above(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "eval-gate.yml").write_text("agents: []\n")
    deep = tmp_path / "agents" / "weather" / "tests"
    deep.mkdir(parents=True)
    assert find_config(deep) == tmp_path / "eval-gate.yml"
    (deep / "eval-gate.yml").write_text("agents: []\n")
    assert find_config(deep) == deep / "eval-gate.yml"


def test_the_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    (tmp_path / "eval-gate.yml").write_text("agents: []\n")  # outside the repository: another project's
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    assert find_config(repo / "src") is None


def test_a_command_without_a_config_found_is_one_line(tmp_path: Path, monkeypatch, capsys) -> None:
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["validate"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "--config" in err[0] and "no eval-gate.yml" in err[0] and "adk-eval-gate init" in err[0]


def test_validate_finds_the_config_from_a_subfolder(tmp_path: Path, monkeypatch, capsys) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    (project / ".git").mkdir()
    monkeypatch.chdir(project / "evals")
    assert main(["validate"]) == 0
    assert f"{project / 'eval-gate.yml'}: OK" in capsys.readouterr().out


def test_run_compare_and_view_share_one_output_folder(tmp_path: Path, monkeypatch, capsys) -> None:
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    (project / ".git").mkdir()
    (project / "eval-gate.yml").unlink()
    (project / "replay.yml").rename(project / "eval-gate.yml")  # recorded answers: no agent runs
    monkeypatch.chdir(project)
    assert main(["run", "--quiet"]) in (0, 1)
    assert (project / OUTPUT_DIR / "results.json").is_file()
    assert main(["compare", "--baseline", str(project / OUTPUT_DIR / "results.json")]) == 0
    assert (project / OUTPUT_DIR / "comparison.json").is_file()
    capsys.readouterr()
    assert main(["view", "--no-open"]) == 0  # finds the run in the same folder (its page goes to a private one)
    assert f"from {Path(OUTPUT_DIR) / 'results.json'}" in capsys.readouterr().out
    # nothing was written beside the config but the one folder
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(("adk-eval", "comparison"))) == [OUTPUT_DIR]


def test_compare_without_results_says_to_run_first(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["compare"]) == 2
    err = capsys.readouterr().err
    assert "run `adk-eval-gate run` first" in err and f"{OUTPUT_DIR}/results.json" in err


def test_the_overview_groups_every_command_once(capsys) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--help"])
    assert done.value.code == 0
    text = capsys.readouterr().out
    grouped = [name for _, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(module.__name__.rsplit(".", 1)[1] for module in SUBCOMMANDS)
    positions = [text.index(f"{title}:") for title, _ in GROUPS]
    assert positions == sorted(positions), "start here, then everyday, then CI plumbing"
    for name in grouped:
        assert f"\n  {name} " in text


@pytest.mark.parametrize("name", [module.__name__.rsplit(".", 1)[1] for module in SUBCOMMANDS])
def test_every_command_shows_an_example_that_parses_and_its_defaults(name: str) -> None:
    parser = build_parser()
    sub = parser._subparsers._group_actions[0].choices[name]  # type: ignore[union-attr]
    text = sub.format_help()
    assert "examples:" in text and EXAMPLES[name]
    for example in EXAMPLES[name]:
        parser.parse_args(example.split()[1:])  # every example is a valid command line
    for action in sub._actions:
        if action.option_strings and action.default not in (None, False, "==SUPPRESS=="):
            shown = " ".join(text.split())
            # the default itself, or the help names it in words ("default: here")
            assert str(action.default) in shown or "(default" in (action.help or ""), (name, action.dest)


def test_init_ignores_what_our_runs_write_once(tmp_path: Path) -> None:
    from adk_eval_gate.commands.gitignore import HEADER, PATTERNS, add_ignores

    (tmp_path / ".gitignore").write_text("node_modules\n/.adk/")  # one already there, no final newline
    assert add_ignores(tmp_path) == [p for p in PATTERNS if p != ".adk/"]
    text = (tmp_path / ".gitignore").read_text()
    assert text.startswith("node_modules\n/.adk/\n") and HEADER in text
    assert add_ignores(tmp_path) == []  # a second init adds nothing
    assert (tmp_path / ".gitignore").read_text() == text


def test_local_ci_prints_text_at_a_terminal_and_skips_setup(example: Path, monkeypatch) -> None:
    """At a terminal `ci` prints plain verdict lines (no markdown escapes) and where the comment and page are;
    `setup:` would install into the user's own environment, so outside Actions it runs only with --setup."""
    import os
    import pty
    import subprocess
    import sys

    config = example / "eval-gate.yml"
    config.write_text("setup: ['touch setup-ran']\n" + config.read_text())
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}
    leader, follower = pty.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate", "ci", "--quiet", "--output-dir", "out"],
        cwd=example,
        env=env,
        stdout=follower,
        stderr=subprocess.PIPE,
        text=True,
        timeout=300,
    )
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    out = b"".join(chunks).decode()
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert "Gate: " in out and "hello\\_world" not in out and "&lt;" not in out
    assert f"the pull request comment (markdown): {Path('out') / 'report.md'}" in out
    assert (example / "out" / "report.md").is_file()
    assert not (example / "setup-ran").exists()
    assert "pass --setup to run them here" in done.stderr


def test_inits_workflow_is_the_quick_start_workflow() -> None:
    """One workflow, two copies: what init writes and examples/workflows/eval-gate-pr.yml (the README's) differ
    only in comments, the branch and the config path — a step added to one must be added to the other."""
    import yaml

    from adk_eval_gate.commands.scaffold import WORKFLOW
    from tests.conftest import ROOT

    written = yaml.safe_load(WORKFLOW.format(branch="main", config="eval-gate.yml"))
    example = yaml.safe_load((ROOT / "examples" / "workflows" / "eval-gate-pr.yml").read_text())
    assert written == example
