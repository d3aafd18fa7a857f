"""A checkout that holds the token actions/checkout persisted is refused before any of the pull request's code
runs: that code could read it from the repository's git config (core/persisted_credentials.py, `ci`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adk_eval_gate.core.persisted_credentials import persisted_credential
from tests.support.hostile import assert_bad_input

HEADER = "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46Z2hzX3NlY3JldA=="
CHECKOUT_V4 = f"""[core]
\trepositoryformatversion = 0
[remote "origin"]
\turl = https://github.com/o/r
[http "https://github.com/"]
\textraheader = {HEADER}
"""


def write_config(checkout: Path, text: str) -> None:
    (checkout / ".git").mkdir(parents=True, exist_ok=True)
    (checkout / ".git" / "config").write_text(text)


def test_checkout_v4_writes_the_header_into_the_config(tmp_path):
    write_config(tmp_path, CHECKOUT_V4)
    assert persisted_credential(tmp_path) == "http.https://github.com/.extraheader"


def test_checkout_v6_includes_a_file_that_holds_it(tmp_path):
    credentials = tmp_path / "runner_temp" / "git-credentials-1234.config"
    credentials.parent.mkdir()
    credentials.write_text(f'[http "https://github.com/"]\n\textraheader = {HEADER}\n')
    write_config(
        tmp_path / "repo",
        f'[core]\n\tbare = false\n[includeIf "gitdir:/github/workspace/.git"]\n\tpath = {credentials}\n',
    )
    assert persisted_credential(tmp_path / "repo") == "http.https://github.com/.extraheader"


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("[core]\n\tsshCommand = ssh -i /home/runner/work/_temp/key -o StrictHostKeyChecking=yes\n", "core.sshCommand"),
        ('[http "https://github.com/"]\n\textraheader =\n', None),  # what checkout's cleanup leaves
        (CHECKOUT_V4.replace("\textraheader", "#\textraheader"), None),  # a comment
        ('[remote "origin"]\n\turl = https://github.com/o/r\n', None),  # `persist-credentials: false`
        ("[include]\n\tpath = /nonexistent/file\n", None),
    ],
)
def test_other_configs(tmp_path, text, found):
    write_config(tmp_path, text)
    assert persisted_credential(tmp_path) == found


def test_no_git_directory_at_all(tmp_path):
    assert persisted_credential(tmp_path) is None


def test_a_worktree_points_at_its_git_directory(tmp_path):
    write_config(tmp_path / "main", CHECKOUT_V4)
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text(f"gitdir: {tmp_path / 'main' / '.git'}\n")
    assert persisted_credential(tmp_path / "wt") == "http.https://github.com/.extraheader"


def test_ci_refuses_before_anything_runs(example, monkeypatch, capsys):
    for name in ("GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_ACTIONS", "GITHUB_API_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GITHUB_WORKSPACE", str(example))
    write_config(example, CHECKOUT_V4)
    line = assert_bad_input(
        ["ci", "--config", str(example / "replay.yml"), "--output-dir", str(example / "out")],
        example,
        capsys,
        ".git/config",
        "http.https://github.com/.extraheader",
        "persist-credentials: false",
    )
    assert "eC1hY2Nlc3M" not in line  # the setting's name, never its value
