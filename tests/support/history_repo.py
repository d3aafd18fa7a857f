"""A repository whose agent is replayed from a recorded file: each "merge" rewrites the recording, so a test can
walk the default branch through many commits in seconds, through the real pipeline and the real CLI."""

from __future__ import annotations

import json
from pathlib import Path

from adk_eval_gate.commands.main import main

SHA = [f"{i:02d}".ljust(40, "a") for i in range(60)]  # one commit per default-branch run


def _invocation(i: int, calls_tool: bool) -> dict:
    return {
        "invocation_id": f"q{i}-1",
        "user_content": {"role": "user", "parts": [{"text": f"question {i}"}]},
        "final_response": {"role": "model", "parts": [{"text": f"The answer to question {i}"}]},
        "intermediate_data": {
            "tool_uses": [{"name": "lookup", "args": {"q": f"question {i}"}}] if calls_tool else [],
            "intermediate_responses": [],
        },
    }


def make_repo(root: Path, baseline: str, *, cases: int = 100, extra: str = "") -> Path:
    """One eval set of `cases` one-turn cases, each expecting one `lookup` call; the agent is the recording."""
    (root / "evals").mkdir(parents=True, exist_ok=True)
    expected = [{"eval_id": f"q{i}", "conversation": [_invocation(i, True)]} for i in range(cases)]
    (root / "evals" / "qa.evalset.json").write_text(json.dumps({"eval_set_id": "qa", "eval_cases": expected}))
    set_broken(root, set(), cases)
    config = root / "eval-gate.yml"
    config.write_text(
        f"baseline: {baseline}\n{extra}agents:\n  - name: qa\n"
        "    target: {kind: replay, actuals: recorded/actuals.evalset.json}\n"
        "    evalsets: [evals/qa.evalset.json]\n    criteria: {tool_trajectory_avg_score: 1.0}\n"
    )
    return config


def set_broken(root: Path, broken: set[int], cases: int = 100) -> None:
    """The agent as committed now: the cases in `broken` no longer call their tool."""
    actual = [{"eval_id": f"q{i}", "conversation": [_invocation(i, i not in broken)]} for i in range(cases)]
    (root / "recorded").mkdir(parents=True, exist_ok=True)
    (root / "recorded" / "actuals.evalset.json").write_text(json.dumps({"eval_set_id": "qa", "eval_cases": actual}))


def actions_env(monkeypatch, fake, tmp_path: Path, event_name: str, event: Path, **extra: str) -> None:
    values = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": fake.url,
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_TOKEN": "ghs_workflowToken1",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_RUN_ID": "100",
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "GITHUB_OUTPUT": str(tmp_path / "output.txt"),
        "GITHUB_WORKSPACE": str(tmp_path),
        **extra,
    }
    for key, value in values.items():
        monkeypatch.setenv(key, value)


def push_event(path: Path, sha: str) -> Path:
    path.write_text(json.dumps({"ref": "refs/heads/main", "after": sha, "repository": {"default_branch": "main"}}))
    return path


def pull_request_event(path: Path, number: int, head: str, base: str) -> Path:
    path.write_text(
        json.dumps(
            {
                "action": "synchronize",
                "number": number,
                "pull_request": {
                    "number": number,
                    "head": {"sha": head, "ref": "feature"},
                    "base": {"sha": base, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )
    return path


def ci_push(monkeypatch, fake, tmp_path: Path, config: Path, sha: str, out: Path) -> int:
    """A push to the default branch, as the Action runs it."""
    actions_env(monkeypatch, fake, tmp_path, "push", push_event(tmp_path / "push.json", sha), GITHUB_SHA=sha)
    monkeypatch.setenv("GITHUB_REF", "refs/heads/main")
    monkeypatch.delenv("GITHUB_BASE_REF", raising=False)
    return main(["ci", "--config", str(config), "--output-dir", str(out), "--quiet"])


def ci_pull_request(monkeypatch, fake, tmp_path: Path, config: Path, number: int, base: str, out: Path) -> int:
    event = pull_request_event(tmp_path / f"pr{number}.json", number, "f" * 40, base)
    actions_env(monkeypatch, fake, tmp_path, "pull_request", event, GITHUB_SHA="f" * 40, GITHUB_BASE_REF="main")
    monkeypatch.setenv("GITHUB_REF", f"refs/pull/{number}/merge")
    return main(["ci", "--config", str(config), "--output-dir", str(out), "--quiet"])


def history_json(data: bytes | None) -> dict | None:
    """A stored history (the database, or an earlier version's JSON) as the JSON `history show --json` prints."""
    if data is None:
        return None
    from adk_eval_gate.baseline.history import StoredHistory, history_text

    if not data.startswith(b"SQLite format 3\x00"):
        return json.loads(data)
    return json.loads(history_text(StoredHistory.from_bytes(data)))
