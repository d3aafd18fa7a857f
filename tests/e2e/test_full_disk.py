"""A full disk (a real small tmpfs, filled) during any write we do keeps the promise "nothing lost, one line": exit
code 3 (never 1, "the gate failed"), one line naming the file and the fix, no traceback, no temporary file left;
and a baseline advances with its history record or neither does, in every store (file, branch, artifact)."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.core.errors import EXIT_NOT_WRITTEN, WriteError
from adk_eval_gate.core.files import write_text_atomic
from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_push, history_json, make_repo
from tests.support.hostile import run_cli
from tests.support.small_disk import PAGE, small_disk

FULL = ("No space left on device", "File too large")  # ENOSPC; EFBIG where no tmpfs could be mounted


def assert_not_written(code: int, err: str, *fragments: str, actions: bool = False) -> str:
    """Outside Actions stderr is that one line; in Actions it is the one `::error` annotation among the warnings."""
    assert code == EXIT_NOT_WRITTEN, err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if "could not be written" in line] if actions else err.splitlines()
    start = "::error file=" if actions else "error: "
    assert len(lines) == 1 and lines[0].startswith(start), err
    assert "could not be written" in lines[0] and any(words in lines[0] for words in FULL), lines[0]
    assert "free space" in lines[0] or "ulimit" in lines[0], lines[0]
    for fragment in fragments:
        assert fragment in lines[0], f"{fragment!r} not in {lines[0]!r}"
    return lines[0]


def leftovers(folder: Path) -> list[str]:
    """Temporary or old versions a write left behind (the filler is the test's own)."""
    return sorted(p.name for p in folder.rglob(".*") if p.name != ".filler")


def local(monkeypatch) -> None:
    for name in [name for name in os.environ if name.startswith("GITHUB_")]:
        monkeypatch.delenv(name)


def two_runs(tmp_path: Path, config: Path, monkeypatch) -> list[Path]:
    runs = []
    for index, sha in enumerate(SHA[:2]):
        monkeypatch.setenv("GITHUB_SHA", sha)
        runs.append(tmp_path / f"run{index}.json")
        assert main(["run", "--config", str(config), "--output", str(runs[-1]), "--quiet"]) == 0
    return runs


def test_baseline_update_on_a_filling_disk_stores_the_baseline_and_its_history_together_or_neither(
    tmp_path, monkeypatch, capsys
):
    local(monkeypatch)
    with small_disk(tmp_path / "disk") as disk:
        blessed = disk.path / "blessed"
        config = make_repo(tmp_path / "repo", f"{{store: file, path: {blessed}/results.json}}", cases=3)
        first, second = two_runs(tmp_path, config, monkeypatch)
        assert main(["baseline", "update", "--config", str(config), "--results", str(first)]) == 0
        before = {p.name: p.read_bytes() for p in blessed.iterdir()}
        outcomes = []
        for free in range(0, 8 * PAGE, PAGE):
            with disk.leaving(free):
                code, _, err = run_cli(
                    ["baseline", "update", "--config", str(config), "--results", str(second)], capsys
                )
            now = {p.name: p.read_bytes() for p in blessed.iterdir()}
            if code == 0:
                assert json.loads(now["results.json"])["git"]["sha"] == SHA[1]
                assert [r["sha"] for r in history_json(now["history.db"])["records"]] == SHA[:2]
                outcomes.append("both")
                for name, data in before.items():  # back to the first run for the next size
                    (blessed / name).write_bytes(data)
                continue
            assert_not_written(code, err, str(blessed), "nothing was changed")
            assert now == before, "the baseline or its history advanced alone"
            assert leftovers(disk.path) == []
            outcomes.append("neither")
        assert "both" in outcomes and "neither" in outcomes, outcomes
        # Among the refusals, a size where the new baseline fitted and its history did not: the half-way case.
        refused = max(
            free for free, outcome in zip(range(0, 8 * PAGE, PAGE), outcomes, strict=True) if outcome == "neither"
        )
        if disk.mounted:
            assert refused >= -(-len(before["results.json"]) // PAGE) * PAGE, outcomes


def test_ci_with_its_output_folder_on_a_full_disk_is_one_line_and_exit_3(tmp_path, monkeypatch, capsys):
    local(monkeypatch)
    config = make_repo(tmp_path / "repo", "{store: none}", cases=3)
    with small_disk(tmp_path / "disk") as disk:
        out = disk.path / "adk-eval-gate-out"
        for free in (0, 2 * PAGE):
            with disk.leaving(free):
                code, _, err = run_cli(["ci", "--config", str(config), "--output-dir", str(out), "--quiet"], capsys)
            assert_not_written(code, err, str(out))
            assert leftovers(disk.path) == []


@pytest.mark.parametrize("command", ["run", "compare", "merge", "view", "history"])
def test_every_command_that_writes_says_a_full_disk_in_one_line(command, tmp_path, monkeypatch, capsys):
    local(monkeypatch)
    config = make_repo(tmp_path / "repo", "{store: file, path: blessed/results.json}", cases=3)
    first, second = two_runs(tmp_path, config, monkeypatch)
    assert main(["baseline", "update", "--config", str(config), "--results", str(first)]) == 0
    with small_disk(tmp_path / "disk") as disk:
        target = disk.path / "out.json"
        argv = {
            "run": ["run", "--config", str(config), "--output", str(target), "--quiet"],
            "compare": ["compare", "--config", str(config), "--results", str(second), "--output", str(target)],
            "merge": ["merge", str(second), "--config", str(config), "--output-dir", str(disk.path / "out")],
            "view": ["view", str(second), "--no-open"],
        }.get(command)
        if command == "view":  # its private folder is made in the temporary folder: there, on the full disk
            monkeypatch.setattr(tempfile, "tempdir", str(disk.path))
        if argv is not None:
            with disk.leaving(0):
                code, _, err = run_cli(argv, capsys)
            assert_not_written(code, err, str(disk.path))
            assert leftovers(disk.path) == [] and not list(disk.path.glob("adk-eval-gate-view-*"))
            return
        if not disk.mounted:
            pytest.skip(f"standard output on a full disk needs a tmpfs: {disk.why_not}")
        # `history show --json` into a file on the full disk: the write that fails is standard output's.
        with disk.leaving(0), target.open("w") as sink:
            done = subprocess.run(
                [sys.executable, "-m", "adk_eval_gate", "history", "show", "--json", "--config", str(config)],
                stdout=sink,
                stderr=subprocess.PIPE,
                text=True,
                check=False,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            )
        assert_not_written(done.returncode, done.stderr, "<standard output>")


def test_a_read_only_output_folder_is_refused_before_any_work_and_mid_run_is_one_line(tmp_path, monkeypatch, capsys):
    local(monkeypatch)
    with small_disk(tmp_path / "disk") as disk:
        if not disk.mounted:
            pytest.skip(f"a read-only file system needs a tmpfs: {disk.why_not}")
        (disk.path / "out").mkdir()
        disk.read_only()
        config = make_repo(tmp_path / "repo", "{store: none}", cases=3)
        code, _, err = run_cli(["ci", "--config", str(config), "--output-dir", str(disk.path / "out")], capsys)
        assert code == 2 and len(err.splitlines()) == 1 and "is not writable" in err
        # A folder that turns read-only after the check: the write itself says so.
        with pytest.raises(WriteError) as caught:
            write_text_atomic(disk.path / "out" / "report.md", "text")
        assert caught.value.errno == errno.EROFS and caught.value.exit_code == EXIT_NOT_WRITTEN
        assert "read-only" in caught.value.render() and "report.md" in caught.value.render()


def test_a_push_on_a_full_disk_with_the_artifact_store_uploads_no_baseline_without_its_history(
    tmp_path, monkeypatch, capsys
):
    config = make_repo(tmp_path / "repo", "{store: artifact, name: adk-eval-gate-results}", cases=3)
    with FakeGitHub() as fake, small_disk(tmp_path / "disk", 8 * 1024 * 1024) as disk:
        roomy = tmp_path / "roomy"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], roomy) == 0
        pages = {p.name: -(-p.stat().st_size // PAGE) * PAGE for p in roomy.iterdir()}
        before_history = sum(size for name, size in pages.items() if name != "history.json")
        outcomes = []
        for free in (pages["results.json"], before_history - PAGE, before_history, sum(pages.values()) + 64 * PAGE):
            out = disk.path / f"out{free}"
            with disk.leaving(free):
                capsys.readouterr()
                code = ci_push(monkeypatch, fake, tmp_path, config, SHA[0], out)
            err = capsys.readouterr().err
            names = {p.name for p in out.iterdir()} if out.exists() else set()
            if code == 0:
                assert {"results.json", "history.json"} <= names
                outcomes.append("both")
                continue
            line = assert_not_written(code, err, "results.json", actions=True)
            assert "results.json" not in names, "the artifact would carry a baseline without its history"
            if "results.json.unrecorded" in names:
                assert "moved to results.json.unrecorded" in line
                outcomes.append("withdrawn")
            else:
                outcomes.append("neither")
        assert "both" in outcomes and "withdrawn" in outcomes, outcomes
