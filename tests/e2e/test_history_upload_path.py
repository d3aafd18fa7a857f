"""A workflow written for an earlier version, left as it was, keeps carrying the history (issue 29): its upload step
names adk-eval-gate-out/results.json and adk-eval-gate-out/history.json, and the history, now a database, is
written under that name. An earlier version's JSON history found in the artifact is migrated by the next push run,
record for record, and the runs after it carry the database on."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from adk_eval_gate.baseline.history.database import MAGIC
from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_pull_request, ci_push, history_json, make_repo

ROOT = Path(__file__).parents[2]
V1 = ROOT / "tests" / "support" / "history_v1"
ARTIFACT = "{store: artifact, name: adk-eval-gate-results}"
# The upload step of the quick start as adk-eval-gate 0.2.0 shipped it (README, examples, `init`), verbatim.
OLD_UPLOAD_STEP = """
- if: always()
  uses: actions/upload-artifact@v4
  with:
    name: adk-eval-gate-results
    # history.json: the default branch's history, carried from push run to push run (drift, flaky cases)
    path: |
      adk-eval-gate-out/results.json
      adk-eval-gate-out/history.json
    if-no-files-found: warn
"""


def uploaded_names(step: dict) -> list[str]:
    return [path.removeprefix("adk-eval-gate-out/") for path in step["with"]["path"].split()]


def results_upload(workflow: Path) -> dict:
    jobs = yaml.safe_load(workflow.read_text())["jobs"].values()
    steps = [s for job in jobs for s in job.get("steps", []) if s.get("uses", "").startswith("actions/upload-art")]
    (step,) = [s for s in steps if s["with"]["name"] == "adk-eval-gate-results"]
    return step


def upload(fake: FakeGitHub, index: int, out: Path, names: list[str]) -> None:
    """What that step does: the files it names that exist, in one artifact of the push run."""
    created = datetime(2026, 11, 1, tzinfo=timezone.utc) + timedelta(hours=index)
    fake.add_run(500 + index, SHA[index], created.strftime("%Y-%m-%dT%H:%M:%SZ"))
    files = {name: (out / name).read_bytes() for name in names if (out / name).exists()}
    fake.add_artifact(900 + index, 500 + index, "adk-eval-gate-results", files)


def test_the_shipped_workflows_still_name_what_the_old_one_uploads():
    old = uploaded_names(yaml.safe_load(OLD_UPLOAD_STEP)[0])
    assert old == ["results.json", "history.json"]
    for workflow in (
        ROOT / "examples" / "workflows" / "eval-gate-pr.yml",
        ROOT / "examples" / "workflows" / "eval-gate-baseline.yml",
        ROOT / "src" / "adk_eval_gate" / "commands" / "templates" / "init-workflow.yml",
    ):
        assert uploaded_names(results_upload(workflow)) == old, workflow


def test_an_unchanged_old_workflow_carries_the_history_across_push_runs(tmp_path, monkeypatch):
    names = uploaded_names(yaml.safe_load(OLD_UPLOAD_STEP)[0])
    config = make_repo(tmp_path / "repo", ARTIFACT, cases=4)
    with FakeGitHub() as fake:
        for index in range(3):
            out = tmp_path / f"push{index}"
            assert ci_push(monkeypatch, fake, tmp_path, config, SHA[index], out) == 0
            carried = (out / "history.json").read_bytes()
            assert carried.startswith(MAGIC)  # the database, under the name the step uploads
            assert [r["sha"] for r in history_json(carried)["records"]] == SHA[: index + 1]
            upload(fake, index, out, names)
        # A pull request reads the history that path carried: three records, the newest its base.
        assert ci_pull_request(monkeypatch, fake, tmp_path, config, 7, SHA[2], tmp_path / "pr") == 0
        history = json.loads((tmp_path / "pr" / "comparison.json").read_text())["history"]
        assert history["records"] == 3 and history["error"] is None


def test_an_old_json_history_in_the_artifact_is_migrated_once_and_carried_on(tmp_path, monkeypatch, capsys):
    names = uploaded_names(yaml.safe_load(OLD_UPLOAD_STEP)[0])
    config = make_repo(tmp_path / "repo", ARTIFACT, cases=8, extra="history: {flaky: {min_samples: 3}}\n")
    old = (V1 / "history.json").read_bytes()
    old_records = json.loads(old)["records"]
    with FakeGitHub() as fake:
        # The last push run of the earlier version: its results and its JSON history, as that step uploaded them.
        first = tmp_path / "push6"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[6], first) == 0
        fake.add_run(506, SHA[6], "2026-11-01T06:00:00Z")
        fake.add_artifact(906, 506, "adk-eval-gate-results", {"results.json": (first / "results.json").read_bytes(),
                                                               "history.json": old})  # fmt: skip
        capsys.readouterr()
        out = tmp_path / "push7"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[7], out) == 0
        assert "migrated from JSON to a database (the file keeps its name)" in capsys.readouterr().out
        migrated = (out / "history.json").read_bytes()
        assert migrated.startswith(MAGIC)
        records = history_json(migrated)["records"]
        assert records[:7] == old_records and records[7]["sha"] == SHA[7]
        # The next push run reads the database it carried: no second migration, one record more.
        upload(fake, 7, out, names)
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[8], tmp_path / "push8") == 0
        assert "migrated" not in capsys.readouterr().out
        again = history_json((tmp_path / "push8" / "history.json").read_bytes())["records"]
        assert again[:8] == records and again[8]["sha"] == SHA[8]
