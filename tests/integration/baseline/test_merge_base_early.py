"""The merge-base that picks a pull request's baseline is named by git before any of the pull request's code runs.

`setup:` runs the pull request's commands in the checkout: it can move `refs/remotes/origin/main` back to an
old commit (whose baseline had the agent already broken) so that a later `git merge-base` names it, and a
regression would be compared with a baseline as bad. `merge_base_found` asks git once, early; what the checkout's
.git says afterwards is never asked again.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from adk_eval_gate.baseline.stores import merge_base_candidates, merge_base_found
from adk_eval_gate.github.context import ActionsContext


def git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@x", "GIT_COMMITTER_NAME": "a", "GIT_COMMITTER_EMAIL": "a@x"}
    done = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=True, env=env)
    return done.stdout.strip()


def test_the_merge_base_is_what_git_said_before_setup_rewrote_the_checkouts_refs(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commits = []
    for n in range(3):
        (repo / "f").write_text(str(n))
        git(repo, "add", "f")
        git(repo, "commit", "-q", "-m", f"c{n}")
        commits.append(git(repo, "rev-parse", "HEAD"))
    git(repo, "update-ref", "refs/remotes/origin/main", commits[2])
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "f").write_text("pr")
    git(repo, "commit", "-qam", "pr")
    event = {"pull_request": {"number": 1, "base": {"ref": "main", "sha": commits[2]}, "head": {"sha": "x"}}}
    context = ActionsContext(event_name="pull_request", event=event, base_ref="main")
    early = merge_base_found(context, repo)
    assert early.merge_base == (commits[2],)
    # What setup could do next: the remote ref moved back to the first commit.
    git(repo, "update-ref", "refs/remotes/origin/main", commits[0])
    assert merge_base_candidates(context, repo)[0] == commits[0]  # asked again, git now says the old commit
    assert merge_base_candidates(early, repo) == [commits[2]]  # the early answer stands


def test_ci_names_the_merge_base_before_setup_runs():
    # The order is the guarantee: the handshake asks git (handshake/start.py), and ci shakes hands before it makes
    # the plan (where setup runs) and before the agent host's warm-up.
    package = Path(__file__).parents[3] / "src" / "adk_eval_gate"
    start = (package / "handshake" / "start.py").read_text()
    assert "context=merge_base_found(started.context, workflow.base_dir)" in start
    source = (package / "commands" / "ci.py").read_text()
    run = source[source.index("def _run(") : source.index("def _plan(")]
    asked = run.index("handshake = shake_hands(")
    assert asked < run.index("plan = _plan(") and asked < run.index("hosts.warm_up(")
    assert "run_setup(settings.setup" in source[source.index("def _plan(") :]
