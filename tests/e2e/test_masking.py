"""Secrets are masked before any cut (issue 26), end to end as GitHub runs the Action: agents put their API key
at every offset around every cut the agents' own text goes through — a command agent's `{"error"}` reply and its
last stderr line (300 characters), the 64 KiB stderr tail we keep, an in-process ADK agent's exception (400), an
answer in report.html (4,000) — and no piece of the key of 6 characters or more reaches any file we write, any
request we send to GitHub, or the job log.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.e2e.test_properties_hostile import workspace
from tests.e2e.test_properties_masking import pull_request_environment, write_replay_workspace
from tests.support.fake_github import FakeGitHub
from tests.support.github_links import REFERENCES, links
from tests.support.hostile import run_cli
from tests.support.leaks import leaks, readable
from tests.support.paths import AGENTS
from tests.unit.core.test_secrets import run_action
from tests.unit.report.test_unlinked import HAZARDS

# 38 characters, as in the red team's report: a cut at 300 used to keep its first 20
KEY = "AIzaSyRedTeam_38char-key0123456789abcd"
assert len(KEY) == 38


def _window(cut: int, before: int = 0) -> range:
    """Every offset that puts the key across `cut` (a prefix of `before` characters shifts the cut)."""
    return range(max(0, cut - before - len(KEY) - 2), cut - before + 3)


def _evalset(path: Path, set_id: str, questions: dict[str, str]) -> None:
    cases = [
        {
            "eval_id": eval_id,
            "conversation": [
                {
                    "invocation_id": f"{eval_id}-1",
                    "user_content": {"role": "user", "parts": [{"text": text}]},
                    "final_response": {"role": "model", "parts": [{"text": "an answer"}]},
                }
            ],
        }
        for eval_id, text in questions.items()
    ]
    path.write_text(json.dumps({"eval_set_id": set_id, "eval_cases": cases}))


@pytest.fixture
def cutting_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "evals").mkdir(parents=True)
    shutil.copy(AGENTS / "cutting_agent.py", repo / "agent.py")
    shutil.copytree(AGENTS / "cutting", repo / "cutting", ignore=shutil.ignore_patterns("__pycache__"))
    questions = {
        **{f"refuse_{n}": f"refuse {n}" for n in _window(300)},
        **{f"die_{n}": f"die {n}" for n in _window(300)},
        **{f"flood_{n}": f"flood {n}" for n in range(0, len(KEY), 3)},
        **{f"answer_{n}": f"answer {n}" for n in _window(4000)[::3]},
    }
    _evalset(repo / "evals" / "cmd.evalset.json", "cmd", questions)
    _evalset(repo / "evals" / "adk.evalset.json", "adk", {f"fail_{n}": f"fail {n}" for n in _window(400, 14)})
    (repo / "eval-gate.yml").write_text(
        "report: {check_run: true}\n"
        "baseline: {store: none}\n"
        "agents:\n"
        "  - name: cmd\n"
        f"    target: {{kind: command, command: ['{sys.executable}', ./agent.py]}}\n"
        "    evalsets: [evals/cmd.evalset.json]\n"
        "    criteria: {response_match_score: 0.1}\n"
        "  - name: inproc\n"
        "    target: {kind: adk, agent: cutting}\n"
        "    evalsets: [evals/adk.evalset.json]\n"
        "    criteria: {response_match_score: 0.1}\n"
    )
    (repo / "event.json").write_text(
        json.dumps(
            {
                "number": 7,
                "pull_request": {
                    "number": 7,
                    "head": {"sha": "c" * 40, "ref": "f"},
                    "base": {"sha": "b" * 40, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )
    return repo


def test_a_key_across_every_cut_of_agent_text_leaves_no_piece_anywhere(cutting_repo):
    with FakeGitHub() as fake:
        done = run_action(cutting_repo, fake, GOOGLE_API_KEY=KEY)
        bodies = [json.dumps(r["body"], ensure_ascii=False) for r in fake.state.requests if r["body"] is not None]
    assert done.returncode == 1, done.stderr[-3000:]  # the agents' errors gate
    out = cutting_repo / "adk-eval-gate-out"
    written = {
        str(p.relative_to(cutting_repo)): readable(p)
        for p in cutting_repo.rglob("*")
        if p.is_file() and p.suffix != ".py"
    }
    assert {"results.json", "comparison.json", "report.md", "report.html", "junit.xml"} <= {
        p.name for p in out.iterdir()
    }
    assert "summary.md" in written and "output.txt" in written and bodies
    streams = {"stdout": done.stdout, "stderr": done.stderr, **{f"request {i}": b for i, b in enumerate(bodies)}}
    found = {name: leaks(text, KEY) for name, text in {**written, **streams}.items()}
    assert {name: pieces for name, pieces in found.items() if pieces} == {}

    # Every kind of case did put the key across its cut: the masks are there, and the cuts were made.
    results = json.loads((out / "results.json").read_text())
    reasons = {c["eval_id"]: c.get("reason") or "" for s in results["eval_sets"] for c in s["cases"]}
    for kind in ("refuse", "die", "flood", "fail"):
        cases = [reason for eval_id, reason in reasons.items() if eval_id.startswith(kind + "_")]
        assert cases and all(reason for reason in cases), kind
        assert any("***" in reason for reason in cases), (kind, cases[:2])
        assert any(reason.endswith("…") for reason in cases), (kind, cases[:2])  # cut, and says so
    assert "more characters in results.json" in written["adk-eval-gate-out/report.html"]


def test_agent_text_makes_no_live_reference_in_the_comment(capsys, monkeypatch):
    """Errors, answers and case ids full of references, mentions and links, through `ci` on recorded actuals: the
    comment, the check run and the step summary link to nothing but our own workflow run."""
    hazards = " ".join(token for tokens in HAZARDS.values() for token in tokens)
    cases = [
        ("error_refs", "error", f"the tool failed: {hazards}"),
        ("answer_refs", "answer", f"I fixed it, {hazards}"),
        ("owner/repo#1 @octocat GH-2 a5c3785ed8d6", "error", "see #3"),
        ("https://evil.example/#4", "answer", "www.evil.example"),
        ("steady", "pass", ""),
        *((f"drop_{i}", "answer", "a wrong answer, see #5") for i in range(10)),
    ]
    with workspace() as root, FakeGitHub() as fake:
        write_replay_workspace(root, cases)
        for name, value in pull_request_environment(root, fake.url).items():
            monkeypatch.setenv(name, value)
        assert run_cli(["run", "--config", "good.yml", "--output", "baseline.json", "--quiet"], capsys)[0] == 0
        code, _, err = run_cli(["ci", "--config", "leaky.yml", "--output-dir", "out"], capsys)
        assert code == 1, err[-2000:]
        (comment,) = fake.state.comments[7]
        texts = {
            "comment": comment["body"],
            "check run": fake.state.check_runs[0]["output"]["summary"],
            "step summary": (root / "summary.md").read_text(),
        }
    run_url = "https://github.com/o/r/actions/runs/100"
    agent_text = " ".join(f"{eval_id} {text}" for eval_id, _, text in cases)

    def from_the_agent(link: str) -> bool:
        """A link the renderer made that is not our run's, or a reference made of the agent's own text (our
        own numbers, say a latency of 0.0002953 s in the efficiency table, are not the agent's)."""
        if link.startswith(run_url):
            return False
        kind, _, text = link.partition(": ")
        return kind not in REFERENCES or text in agent_text

    for where, body in texts.items():
        assert "I fixed it" in body and "the tool failed" in body and "Final response" in body, where  # shown
        assert [link for link in links(body) if from_the_agent(link)] == [], where
        assert "#\u200b1" in body and "@\u200boctocat" in body and "GH-\u200b1" in body, where  # still readable
