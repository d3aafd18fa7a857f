"""One run, one story: the command sequences a user runs into one output folder never leave a verdict of one run
beside the results of another (`ci` then `run` then `view`; `ci` then `compare`; `run`, `compare`, `view`), and
`merge` takes shards of one run only. The bundled example, copied, through the real commands."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.view import render, view
from adk_eval_gate.report.run_marks import mark_of

REPORTS = ("comparison.json", "report.md", "report.html", "junit.xml")


@pytest.fixture
def local(monkeypatch):
    """A developer's shell: no GitHub Actions around."""
    for name in ("GITHUB_ACTIONS", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_RUN_ID", "GITHUB_TOKEN", "CI"):
        monkeypatch.delenv(name, raising=False)


def _ci(config: Path, out: Path, *extra: str) -> int:
    return main(["ci", "--config", str(config), "--output-dir", str(out), "--no-comment", "--quiet", *extra])


def _run(config: Path, out: Path) -> int:
    return main(["run", "--config", str(config), "--output", str(out / "results.json"), "--quiet"])


def _run_id(path: Path) -> str:
    return json.loads(path.read_text())["run_id"]


def test_every_file_of_a_ci_run_names_its_run(example, local):
    out = example / "out"
    _ci(example / "eval-gate.yml", out)
    run_id = _run_id(out / "results.json")
    assert run_id.startswith("local.")
    assert {name: mark_of(out / name).run_id for name in REPORTS} == dict.fromkeys(REPORTS, run_id)


def test_ci_then_run_then_view_never_shows_the_ci_verdict_over_the_new_results(example, local, capsys):
    out = example / "out"
    _ci(example / "eval-gate.yml", out)
    old_comparison = (out / "comparison.json").read_text()
    _run(example / "eval-gate.yml", out)
    assert [name for name in REPORTS if (out / name).exists()] == [], "the ci run's reports stayed beside new results"
    capsys.readouterr()
    page_alone = render(out / "results.json").read_text()
    # put back by hand (an older version's `run` left it): view still pairs nothing of another run
    (out / "comparison.json").write_text(old_comparison)
    assert view(str(out), open_browser=False) == 0
    said = capsys.readouterr().out
    assert "comparison.json is of another run" in said
    page = Path(said.split("\nreport: ", 1)[1].splitlines()[0]).read_text()
    assert page == page_alone


def test_ci_then_compare_leaves_no_report_of_the_earlier_comparison(example, local, tmp_path):
    out = example / "out"
    _ci(example / "eval-gate.yml", out)
    assert (out / "report.md").exists()
    code = main(
        [
            "compare",
            "--config",
            str(example / "eval-gate.yml"),
            "--results",
            str(out / "results.json"),
            "--output",
            str(out / "comparison.json"),
        ]
    )
    assert code in (0, 1)
    assert [name for name in REPORTS[1:] if (out / name).exists()] == []
    assert _run_id(out / "comparison.json") == _run_id(out / "results.json")


def test_run_then_compare_then_view_tells_one_story(example, local, capsys):
    out = example / "out"
    _run(example / "eval-gate.yml", out)
    main(["compare", "--config", str(example / "eval-gate.yml"), "--results", str(out / "results.json"),
          "--output", str(out / "comparison.json")])  # fmt: skip
    assert _run_id(out / "comparison.json") == _run_id(out / "results.json")
    capsys.readouterr()
    assert view(str(out), open_browser=False) == 0
    assert "another run" not in capsys.readouterr().out


def _shards(example: Path) -> tuple[Path, Path]:
    config = example / "eval-gate.yml"
    for i in (1, 2):
        assert _ci(config, example / f"shard{i}", "--shard", f"{i}/2") == 0
    return example / "shard1" / "results.json", example / "shard2" / "results.json"


def _set(path: Path, **fields: object) -> None:
    data = json.loads(path.read_text())
    for name, value in fields.items():
        if name == "sha":
            data["git"]["sha"] = value
        else:
            data[name] = value
    path.write_text(json.dumps(data))


def _merge(example: Path, *parts: Path) -> int:
    return main(["merge", *map(str, parts), "--config", str(example / "eval-gate.yml"),
                 "--output-dir", str(example / "merged"), "--no-comment"])  # fmt: skip


def test_merge_refuses_shards_of_different_workflow_runs_in_one_line(example, local, capsys):
    first, second = _shards(example)
    _set(first, run_id="7001.1.aaaa")
    _set(second, run_id="7002.1.bbbb")
    capsys.readouterr()
    assert _merge(example, first, second) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "workflow run 7002.1" in err[0] and "7001.1" in err[0]
    assert not (example / "merged" / "results.json").exists()


def test_merge_refuses_shards_of_different_commits(example, local, capsys):
    first, second = _shards(example)
    _set(first, sha="a" * 40)
    _set(second, sha="b" * 40)
    assert _merge(example, first, second) == 2
    assert "ran at commit bbbbbbbbbbbb" in capsys.readouterr().err


def test_merge_of_one_runs_shards_names_that_run(example, local):
    first, second = _shards(example)
    _set(first, run_id="7001.2.aaaa")
    _set(second, run_id="7001.2.bbbb")
    assert _merge(example, first, second) in (0, 1)
    merged = _run_id(example / "merged" / "results.json")
    assert merged.startswith("7001.2.") and merged not in ("7001.2.aaaa", "7001.2.bbbb")
    assert mark_of(example / "merged" / "report.md").run_id == merged


def test_a_file_of_the_same_name_that_is_not_ours_is_left_alone(example, local):
    out = example / "out"
    out.mkdir()
    own = {"report.md": "# my notes\n\nWe gate with adk-eval-gate.\n", "junit.xml": '<testsuites name="pytest"/>\n'}
    for name, text in own.items():
        (out / name).write_text(text)
    _run(example / "eval-gate.yml", out)
    assert {name: (out / name).read_text() for name in own} == own
