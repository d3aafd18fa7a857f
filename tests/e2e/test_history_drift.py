"""Memory across merges, end to end (issue 18): eleven default-branch runs through `adk-eval-gate ci` in push mode
(the artifact and branch stores, over real HTTP against the fake GitHub API) or through `baseline update` (the
file store), then a pull request.

Ten merges that each break one more case of a 100-case eval set never fail their own pull request (one sample a
side is no evidence), yet together they are ten points: the next pull request fails on drift, with a message
naming the window and the cumulative drop. The same agent, unchanged for ten merges, passes.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from adk_eval_gate.commands.main import main
from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_pull_request, ci_push, history_json, make_repo, set_broken

MERGES = 10
STORES = {
    "artifact": "{store: artifact, name: adk-eval-gate-results}",
    "branch": "{store: branch, branch: eval-data}",
}


def upload(fake: FakeGitHub, index: int, out: Path) -> None:
    """What the workflow's upload step does on a push: results.json and history.json in one artifact."""
    created = datetime(2026, 11, 1, tzinfo=timezone.utc) + timedelta(hours=index)
    fake.add_run(500 + index, SHA[index], created.strftime("%Y-%m-%dT%H:%M:%SZ"))
    files = {name: (out / name).read_bytes() for name in ("results.json", "history.json") if (out / name).exists()}
    fake.add_artifact(900 + index, 500 + index, "adk-eval-gate-results", files)


def walk_default_branch(monkeypatch, fake, tmp_path: Path, config: Path, store: str, drifting: bool) -> None:
    """The first run, then ten merges; each merge breaks one more case when `drifting`."""
    for index in range(MERGES + 1):
        set_broken(config.parent, set(range(index)) if drifting else set())
        out = tmp_path / f"push{index}"
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[index], out) == 0
        if store == "artifact":
            upload(fake, index, out)


@pytest.mark.parametrize("store", list(STORES))
def test_ten_one_point_merges_fail_the_next_pull_request_on_drift(store, tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", STORES[store])
    with FakeGitHub() as fake:
        walk_default_branch(monkeypatch, fake, tmp_path, config, store, drifting=True)
        history = history_json((tmp_path / f"push{MERGES}" / "history.json").read_bytes())
        assert [r["sha"] for r in history["records"]] == SHA[: MERGES + 1]
        if store == "branch":
            assert history_json(fake.state.files[("eval-data", "baselines/history.db")]) == history
        capsys.readouterr()
        set_broken(config.parent, set(range(MERGES + 1)))  # the pull request breaks one case more
        assert ci_pull_request(monkeypatch, fake, tmp_path, config, 7, SHA[MERGES], tmp_path / "pr") == 1
        comparison = json.loads((tmp_path / "pr" / "comparison.json").read_text())
        # Against its own base the pull request dropped one point, one sample a side: no evidence, no failure.
        assert [s["verdict"] for s in comparison["summaries"]] == ["unchanged"]
        (drift,) = comparison["history"]["drift"]
        assert drift["verdict"] == "regressed" and drift["gating"] and drift["cases_compared"] == 100
        assert comparison["history"]["reference_sha"] == SHA[0] and comparison["history"]["merges"] == MERGES
        (failure,) = (f["text"] for f in comparison["gate"]["failures"])
        assert failure.startswith(f"drift: qa tool_trajectory_avg_score since {SHA[0][:12]} (2026-"), failure
        assert "10 merge(s) back; gate.drift.window 10)" in failure and "dropped 0.110 (≥ tolerance 0.05)" in failure
        assert "mean score 1.000 → 0.890 over 100 cases" in failure
        # the slide began with the first merge after the reference: named by its commit, here and in the file
        assert f"the slide began at merge {SHA[1][:12]} (2026-" in failure and "1 after the reference" in failure
        assert drift["began"]["sha"] == SHA[1] and drift["began"]["shape"] == "slide"
        assert drift["began"]["significant"] and drift["began"]["p_value"] < 0.01
        body = fake.state.comments[7][0]["body"]
        assert "adk-eval-gate failed" in body and "first: drift: qa tool\\_trajectory\\_avg\\_score since" in body
        # The cases a merge broke changed once, and each passed before it: neither flaky nor broken, that is drift.
        assert "Known from the default branch's history" not in body
        trend = next(line for line in body.splitlines() if line.startswith("| qa · tool\\_trajectory"))
        assert "`█▇▆▆▅▄▃▃▂▁`" in trend and "0.990 → 0.900" in trend and "0.890" in trend
        assert "🔴 regressed -0.110 (gating)" in trend
        assert f"began at merge {SHA[1][:12]} (2026-" in trend.replace("\u200b", "")  # a sha is kept from linking
        assert "adk-eval-gate: FAIL — 1 drift" in capsys.readouterr().out
        assert fake.state.schema_errors == []


@pytest.mark.parametrize("store", list(STORES))
def test_the_same_agent_for_ten_merges_passes(store, tmp_path, monkeypatch):
    config = make_repo(tmp_path / "repo", STORES[store])
    with FakeGitHub() as fake:
        walk_default_branch(monkeypatch, fake, tmp_path, config, store, drifting=False)
        assert ci_pull_request(monkeypatch, fake, tmp_path, config, 7, SHA[MERGES], tmp_path / "pr") == 0
        comparison = json.loads((tmp_path / "pr" / "comparison.json").read_text())
        (drift,) = comparison["history"]["drift"]
        assert drift["verdict"] == "unchanged" and comparison["history"]["merges"] == MERGES
        assert (
            comparison["gate"]["failures"] == [] and "1 drift test(s) over 10 merge(s)" in comparison["gate"]["reason"]
        )
        assert "`▅▅▅▅▅▅▅▅▅▅` | 1.000 → 1.000" in fake.state.comments[7][0]["body"]


def file_store_walk(tmp_path: Path, config: Path, monkeypatch, drifting: bool) -> None:
    for index in range(MERGES + 1):
        set_broken(config.parent, set(range(index)) if drifting else set())
        monkeypatch.setenv("GITHUB_SHA", SHA[index])
        results = tmp_path / f"run{index}.json"
        main(["run", "--config", str(config), "--output", str(results), "--quiet"])
        assert main(["baseline", "update", "--config", str(config), "--results", str(results)]) == 0
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)


@pytest.mark.parametrize("drifting", [True, False], ids=["drifting", "unchanged"])
def test_the_file_store_keeps_its_history_beside_the_baseline(drifting, tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", "{store: file, path: blessed/results.json}")
    file_store_walk(tmp_path, config, monkeypatch, drifting)
    history = history_json((config.parent / "blessed" / "history.db").read_bytes())
    assert [r["sha"] for r in history["records"]] == SHA[: MERGES + 1]
    set_broken(config.parent, set(range(MERGES + 1)) if drifting else set())
    current = tmp_path / "pr.json"
    main(["run", "--config", str(config), "--output", str(current), "--quiet"])
    capsys.readouterr()
    code = main(["compare", "--config", str(config), "--results", str(current), "--output", str(tmp_path / "c.json")])
    out = capsys.readouterr().out
    comparison = json.loads((tmp_path / "c.json").read_text())
    (drift,) = comparison["history"]["drift"]
    if drifting:
        assert code == 1 and drift["verdict"] == "regressed"
        assert out.startswith("Gate: FAIL — 1 failing condition(s); first: drift: qa tool_trajectory_avg_score since")
        assert "10 merge(s) back; gate.drift.window 10): dropped 0.110" in out
        assert f"the slide began at merge {SHA[1][:12]}" in out  # the console names the merge too
    else:
        assert code == 0 and drift["verdict"] == "unchanged" and drift["began"] is None
    # `history show` names where the slide began and each record's pass^k (one run a case: pass^1, the pass rate)
    assert main(["history", "show", "--config", str(config)]) == 0
    shown = capsys.readouterr().out
    assert "  pass^k per eval set, k = the fewest runs of a case: every run passed" in shown
    assert f"qa/qa: {SHA[MERGES][:12]} {'0.90' if drifting else '1.00'} [" in shown
    began = f"qa tool_trajectory_avg_score: the slide began at merge {SHA[1][:12]}"
    assert (began in shown) == drifting, shown
    # `ci` outside Actions (a laptop) reads the same history and reaches the same verdict.
    assert main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "local"), "--quiet"]) == code
