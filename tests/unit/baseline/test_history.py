"""The history file and what reads it (issue 18): schema, bounds, what never enters it, a history that cannot be
used (refused in one line, failing closed in `ci`, never overwritten), known flaky cases and quarantine, trends,
and the stores' write paths (a concurrent push, a lost reply, an artifact without the history)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from adk_eval_gate.baseline.compare import compare
from adk_eval_gate.baseline.history import sparkline, trend_data
from adk_eval_gate.baseline.history.record_format import History
from adk_eval_gate.commands.main import main
from adk_eval_gate.commands.schema import SHIPPED, json_schema_text
from adk_eval_gate.results.build import read_results
from tests.support.fake_github import FakeGitHub
from tests.support.history_repo import SHA, ci_pull_request, ci_push, history_json, make_repo, set_broken

DAMAGED = b"SQLite format 3\x00" + b"\xff" * 200  # a database's first bytes, and then nothing of one
FILE_STORE = "{store: file, path: blessed/results.json}"
BRANCH_STORE = "{store: branch, branch: eval-data}"


def bless(config: Path, tmp_path: Path, monkeypatch, index: int, broken: set[int], cases: int = 10) -> int:
    """One default-branch commit under the file store: run, then `baseline update`."""
    set_broken(config.parent, broken, cases)
    monkeypatch.setenv("GITHUB_SHA", SHA[index])
    results = tmp_path / f"run{index}.json"
    main(["run", "--config", str(config), "--output", str(results), "--quiet"])
    return main(["baseline", "update", "--config", str(config), "--results", str(results)])


def history_file(config: Path) -> Path:
    return config.parent / "blessed" / "history.db"


def stored_history(fake: FakeGitHub) -> dict:
    return history_json(fake.state.files[("eval-data", "baselines/history.db")])


def legacy_file(config: Path) -> Path:
    """Where earlier versions kept it: read when no history.db is there."""
    return config.parent / "blessed" / "history.json"


# --- the file ---------------------------------------------------------------------------------------------------


def test_the_shipped_history_schema_is_the_generated_one():
    assert SHIPPED["history"].read_text() == json_schema_text("history"), "run `make schema` and commit the result"


def test_a_record_holds_per_case_counts_and_the_history_stays_bounded(tmp_path, monkeypatch, capsys):
    config = make_repo(
        tmp_path / "repo", FILE_STORE, cases=10, extra="history: {max_records: 3}\ngate: {drift: {window: 2}}\n"
    )
    for index in range(5):
        assert bless(config, tmp_path, monkeypatch, index, {0} if index == 4 else set()) == 0
    data = history_json(history_file(config).read_bytes())
    jsonschema.validate(data, json.loads(SHIPPED["history"].read_text()))
    assert [r["sha"] for r in data["records"]] == SHA[2:5]  # the newest three
    (eval_set,) = data["records"][-1]["eval_sets"]
    criterion = eval_set["criteria"]["tool_trajectory_avg_score"]
    assert criterion["mean"] == 0.9 and criterion["pass_rate"] == 0.9 and criterion["samples"] == 10
    assert eval_set["cases"]["q0"]["scores"] == {"tool_trajectory_avg_score": [0.0, 0, 1]}
    assert eval_set["cases"]["q1"]["scores"] == {"tool_trajectory_avg_score": [1.0, 1, 1]}
    assert eval_set["latency_seconds"] is None or eval_set["latency_seconds"] >= 0
    # Blessing the same commit again replaces its record instead of counting it twice.
    assert bless(config, tmp_path, monkeypatch, 4, set()) == 0
    again = history_json(history_file(config).read_bytes())
    assert [r["sha"] for r in again["records"]] == SHA[2:5] and again["records"][-1]["eval_sets"][0]["criteria"][
        "tool_trajectory_avg_score"
    ]["mean"] == 1.0
    assert "history: 3 record(s), blessed/history.db" in capsys.readouterr().out


def test_trend_data_and_sparkline():
    history = History.model_validate(
        {
            "repository": None,
            "config": "eval-gate.yml",
            "records": [
                {
                    "sha": SHA[i],
                    "date": f"2026-11-0{i + 1}T10:00:00+00:00",
                    "tool_version": "0.2.0",
                    "eval_sets": [
                        {
                            "agent": "qa",
                            "eval_set_id": "qa",
                            "num_runs": 1,
                            "criteria": {
                                "tool_trajectory_avg_score": {
                                    "threshold": 1.0,
                                    "config_hash": "h",
                                    "mean": mean,
                                    "pass_rate": mean,
                                    "samples": 10,
                                    "cases": 10,
                                }
                            },
                            "cases": {},
                        }
                    ],
                }
                for i, mean in enumerate([1.0, 0.9, 0.5])
            ],
        }
    )
    assert trend_data(history) == [
        {"sha": SHA[i], "date": f"2026-11-0{i + 1}T10:00:00+00:00", "criteria": {"qa/qa/tool_trajectory_avg_score": m}}
        for i, m in enumerate([1.0, 0.9, 0.5])
    ]
    assert sparkline([1.0, 0.9, 0.5]) == "█▇▁"
    assert sparkline([0.8, 0.8, None, 0.8]) == "▅▅ ▅"  # flat and a gap: nothing invented
    assert sparkline([0.80, 0.81]) == "▄▅"  # a one-point wobble is not drawn as a cliff


# --- what never enters it ---------------------------------------------------------------------------------------


def test_partial_runs_never_enter_the_history_and_hand_it_on_unchanged(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=6)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        stored = fake.state.files[("eval-data", "baselines/history.db")]
        assert [r["sha"] for r in history_json(stored)["records"]] == [SHA[0]]
        # `--cases`: part of the suite; its output still carries the history on, untouched.
        set_broken(config.parent, {1})
        actions = ["ci", "--config", str(config), "--quiet", "--cases", "qa:q1", "--output-dir"]
        assert main([*actions, str(tmp_path / "p1")]) == 0
        assert (tmp_path / "p1" / "history.json").read_bytes() == stored
        # A shard writes no history at all; merging only some of the shards is not a baseline either.
        monkeypatch.setenv("GITHUB_SHA", SHA[2])
        shard = ["ci", "--config", str(config), "--quiet", "--shard", "1/2", "--output-dir", str(tmp_path / "s1")]
        assert main(shard) == 0 and not (tmp_path / "s1" / "history.json").exists()
        merge = ["merge", str(tmp_path / "s1" / "results.json"), "--config", str(config), "--output-dir"]
        assert main([*merge, str(tmp_path / "m")]) == 1  # the baseline was not stored: said, and the job fails
        assert fake.state.files[("eval-data", "baselines/history.db")] == stored
        assert "history unchanged: only a run of the whole suite is recorded" in capsys.readouterr().out


# --- a history that cannot be used ------------------------------------------------------------------------------


def _with_counts(history: dict, score: list) -> dict:
    changed = json.loads(json.dumps(history))
    changed["records"][0]["eval_sets"][0]["cases"]["q0"]["scores"]["tool_trajectory_avg_score"] = score
    return changed


def _valid_history(config: Path, tmp_path: Path, monkeypatch) -> dict:
    assert bless(config, tmp_path, monkeypatch, 0, set()) == 0
    return history_json(history_file(config).read_bytes())


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda h: "{not json", "blessed/history.json: is not JSON (line 1, column 2: Expecting property name"),
        (lambda h: json.dumps({**h, "schema_version": 4}), "has schema_version 4; this version reads 1 or 2 or 3"),
        (lambda h: json.dumps({**h, "repository": "someone/else"}), "written in the repository someone/else, not o/r"),
        (lambda h: json.dumps({**h, "config": "agents/other.yml"}), "belongs to the config agents/other.yml, not"),
        (lambda h: json.dumps([h]), "is not an adk-eval-gate history"),
        (
            lambda h: json.dumps(_with_counts(h, [1.0, 2, 1])),
            "is invalid at records[0].eval_sets[0].cases.q0: scores.tool_trajectory_avg_score: 2 passes out of 1",
        ),
    ],
    ids=["bad-json", "schema-version", "other-repository", "other-config", "not-a-history", "impossible-counts"],
)
def test_history_show_refuses_a_history_it_cannot_use_in_one_line(change, expected, tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", FILE_STORE, cases=3)
    valid = _valid_history(config, tmp_path, monkeypatch)
    monkeypatch.setenv("GITHUB_REPOSITORY", "o/r")
    if "someone/else" not in change(valid):
        valid["repository"] = "o/r"
    history_file(config).unlink()  # an earlier version's file, read as JSON
    legacy_file(config).write_text(change(valid))
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err
    assert "delete it to start a new history (it is never reset silently)" in err
    # `baseline update` will not bless over it either: nothing is written.
    before = (config.parent / "blessed" / "results.json").read_bytes()
    assert bless(config, tmp_path, monkeypatch, 1, {0}, cases=3) == 2
    assert (config.parent / "blessed" / "results.json").read_bytes() == before


def test_a_history_that_cannot_be_read_fails_the_gate_closed_and_is_never_overwritten(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=6)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        fake.state.files[("eval-data", "baselines/history.db")] = DAMAGED
        # A pull request that changed nothing still fails: the drift the history should show cannot be told from none.
        assert ci_pull_request(monkeypatch, fake, tmp_path, config, 7, SHA[0], tmp_path / "pr") == 1
        failures = [
            f["text"] for f in json.loads((tmp_path / "pr" / "comparison.json").read_text())["gate"]["failures"]
        ]
        assert failures == [
            "history: baselines/history.db on branch eval-data: is not a readable SQLite database (file is not a "
            "database); fix it, or delete it to start a new history (it is never reset silently)"
        ]
        assert "The default branch's history could not be used" in fake.state.comments[7][0]["body"]
        # The next push neither resets it nor writes over it, nor stores a baseline without its record, and its
        # job fails saying so.
        capsys.readouterr()
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        assert fake.state.files[("eval-data", "baselines/history.db")] == DAMAGED
        assert ("eval-data", f"baselines/{SHA[1]}.json") not in fake.state.files
        assert json.loads(fake.state.files[("eval-data", "baselines/latest.json")])["sha"] == SHA[0]
        assert not (tmp_path / "p1" / "history.json").exists()
        assert (
            "::error title=adk-eval-gate::neither the baseline nor the history was stored, since the history cannot "
            "advance: baselines/history.db" in capsys.readouterr().err
        )


# --- flaky cases, known -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("quarantine", [False, True], ids=["reported", "quarantined"])
def test_a_case_known_flaky_is_marked_and_quarantine_keeps_it_out_of_the_gate(
    quarantine, tmp_path, monkeypatch, capsys
):
    extra = "gate: {fail_on: [regression, error, drift, threshold]" + (
        ", quarantine: flaky}\n" if quarantine else "}\n"
    )
    config = make_repo(tmp_path / "repo", FILE_STORE, cases=10, extra=extra)
    for index in range(6):  # q0 passes on even commits, fails on odd ones: chance, not a change
        assert bless(config, tmp_path, monkeypatch, index, {0} if index % 2 else set()) == 0
    set_broken(config.parent, {0})
    monkeypatch.setenv("GITHUB_SHA", "f" * 40)
    capsys.readouterr()
    code = main(["ci", "--config", str(config), "--output-dir", str(tmp_path / "pr"), "--quiet"])
    comparison = json.loads((tmp_path / "pr" / "comparison.json").read_text())
    (flaky,) = comparison["history"]["flaky"]
    assert (flaky["eval_id"], flaky["stability"], flaky["passes"], flaky["samples"]) == ("q0", "flaky", 3, 6)
    q0 = next(r for r in comparison["rows"] if r["eval_id"] == "q0")
    assert q0["stability"] == "flaky" and q0["quarantined"] is quarantine
    markdown = capsys.readouterr().out
    assert "| qa / q0 🎲" in markdown and "3 of 6 samples (6 runs) | 🎲 flaky" in markdown
    if quarantine:
        assert code == 0 and comparison["gate"]["failures"] == []
        assert "🎲 **1 flaky case(s) quarantined** (gate.quarantine: flaky)" in markdown
        summary = comparison["summaries"][0]
        assert summary["cases_compared"] == 9  # left out of the eval-set test, still reported
        assert comparison["history"]["drift"][0]["cases_compared"] == 9
    else:
        assert code == 1 and [f["text"] for f in comparison["gate"]["failures"]] == [
            "below threshold: qa/qa q0: tool_trajectory_avg_score 0 < 1"
        ]
        assert "quarantined" not in markdown


def test_quarantined_cases_leave_the_eval_set_test_but_keep_their_row(tmp_path, monkeypatch):
    config = make_repo(tmp_path / "repo", FILE_STORE, cases=4)
    set_broken(config.parent, set())
    main(["run", "--config", str(config), "--output", str(tmp_path / "base.json"), "--quiet"])
    set_broken(config.parent, {0, 1})
    main(["run", "--config", str(config), "--output", str(tmp_path / "now.json"), "--quiet"])
    base, now = read_results(tmp_path / "base.json"), read_results(tmp_path / "now.json")
    key = ("qa", "qa", "q0", "tool_trajectory_avg_score")
    compared = compare(now, base, lambda _: 0.05, 0.01, quarantined={key})
    summaries, rows = compared.summaries, compared.rows
    assert summaries[0].cases_compared == 3 and summaries[0].current == pytest.approx(2 / 3)
    assert [r.eval_id for r in rows if r.quarantined] == ["q0"]


# --- history show, pinned references ---------------------------------------------------------------------------


def test_history_show_prints_the_trend_the_reference_and_the_records(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", FILE_STORE, cases=10, extra="history: {trend: 4}\n")
    for index in range(5):
        assert bless(config, tmp_path, monkeypatch, index, set(range(index))) == 0
    capsys.readouterr()
    assert main(["history", "show", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("History: blessed/history.db, 5 record(s)")
    assert "qa · tool_trajectory_avg_score  █▆▃▁  0.900 → 0.600" in out
    assert f"Drift gate compares with {SHA[0][:12]} (" in out and "4 merge(s) back; gate.drift.window 10" in out
    assert out.index(SHA[4][:12]) < out.index(SHA[1][:12])  # newest first
    assert "qa/qa: tool_trajectory_avg_score 0.600 (pass rate 0.600, 10 samples)" in out
    assert main(["history", "show", "--config", str(config), "--json"]) == 0
    assert History.model_validate_json(capsys.readouterr().out).records[-1].sha == SHA[4]


def test_a_pinned_reference_is_used_and_one_the_history_lacks_fails_closed(tmp_path, monkeypatch):
    pinned = SHA[1][:8]
    config = make_repo(tmp_path / "repo", FILE_STORE, cases=10, extra=f"gate: {{drift: {{reference: '{pinned}'}}}}\n")
    for index in range(4):
        assert bless(config, tmp_path, monkeypatch, index, set()) == 0
    current = tmp_path / "run3.json"
    out = tmp_path / "c.json"
    assert main(["compare", "--config", str(config), "--results", str(current), "--output", str(out)]) == 0
    history = json.loads(out.read_text())["history"]
    assert history["reference_sha"] == SHA[1] and history["merges"] == 2
    assert "the pinned gate.drift.reference" in history["since"]
    text = config.read_text().replace(pinned, "abcdef12")
    config.write_text(text)
    assert main(["compare", "--config", str(config), "--results", str(current), "--output", str(out)]) == 1
    (failure,) = (f["text"] for f in json.loads(out.read_text())["gate"]["failures"])
    assert failure.startswith("history: gate.drift.reference abcdef12 is not in the history up to the base")


# --- the stores' write paths ------------------------------------------------------------------------------------


def test_a_concurrent_push_is_not_overwritten_and_a_lost_reply_is_not_a_failure(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", BRANCH_STORE, cases=4)
    with FakeGitHub() as fake:
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[0], tmp_path / "p0") == 0
        fake.fault("PUT", "history.db$", 409, body={"message": "baselines/history.db does not match"})
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[1], tmp_path / "p1") == 1
        assert "the history changed since it was read (another push wrote it)" in capsys.readouterr().err
        assert [r["sha"] for r in stored_history(fake)["records"]] == [SHA[0]]
        # GitHub stored the write but the reply was lost: the retry finds its own write there and goes on.
        fake.fault("PUT", "history.db$", 502, after_effect=True)
        assert ci_push(monkeypatch, fake, tmp_path, config, SHA[2], tmp_path / "p2") == 0
        assert [r["sha"] for r in stored_history(fake)["records"]] == [SHA[0], SHA[2]]


def test_a_push_after_an_artifact_without_history_continues_the_older_one(tmp_path, monkeypatch, capsys):
    config = make_repo(tmp_path / "repo", "{store: artifact, name: adk-eval-gate-results}", cases=4)
    with FakeGitHub() as fake:
        for index, carried in ((0, True), (1, False), (2, True)):
            out = tmp_path / f"p{index}"
            assert ci_push(monkeypatch, fake, tmp_path, config, SHA[index], out) == 0
            fake.add_run(500 + index, SHA[index], f"2026-11-0{index + 1}T10:00:00Z")
            files = {"results.json": (out / "results.json").read_bytes()}
            if carried:  # run 501's workflow forgot to upload history.json
                files["history.json"] = (out / "history.json").read_bytes()
            fake.add_artifact(900 + index, 500 + index, "adk-eval-gate-results", files)
        history = history_json((tmp_path / "p2" / "history.json").read_bytes())
        assert [r["sha"] for r in history["records"]] == [SHA[0], SHA[2]]
        warnings = json.loads((tmp_path / "p2" / "comparison.json").read_text())["warnings"]
        assert "the artifact of run 501 carries no history.json; continuing the history of run 500 (the runs " in (
            " ".join(warnings)
        )


def test_outside_actions_history_show_says_why_it_read_nothing(tmp_path, capsys):
    for store, why in (
        ("{store: artifact}", "the artifact store needs GITHUB_REPOSITORY and a base branch: no history read"),
        (BRANCH_STORE, "the branch store needs GITHUB_REPOSITORY (and a token): no history read"),
        (FILE_STORE, "no history yet at blessed/history.db: the default branch's runs start one"),
    ):
        config = make_repo(tmp_path / store.split(",")[0].split()[-1].strip("}"), store, cases=2)
        assert main(["history", "show", "--config", str(config)]) == 0
        assert capsys.readouterr().out.strip() == why
    none = make_repo(tmp_path / "none", "{store: none}", cases=2)
    assert main(["history", "show", "--config", str(none)]) == 0
    assert "the config keeps none" in capsys.readouterr().out
