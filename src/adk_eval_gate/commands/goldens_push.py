"""`/eval update-goldens <full sha> [cases=…]`: the golden update of that commit's run, pushed to the pull request.

By the time this runs, `handshake/who_asked.py` has checked everything `/eval accept` checks (a new comment, not a
bot's, write permission from the API, the full sha equal to the head, the checkout that very commit) and that the
branch may be pushed to (the repository's own, or a fork whose author allows edits by maintainers); the commit has
been evaluated and reported. Here: the cases (those named, else every regressed case of the comparison, else every
case that did not pass) take their runs' turns as `goldens update` does, and ONE commit with every changed file goes
to the pull request's branch, on top of the commit evaluated and only as a fast-forward. The commit message names
who asked; a reply shows the diff for review.
"""

from __future__ import annotations

from pathlib import Path

from adk_eval_gate.commands.goldens_update import Selection, UpdatePlan, plan_update, regressed_cases, summary_lines
from adk_eval_gate.core.clip import clip, short_sha
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.github.conversation import reply
from adk_eval_gate.github.git_data import FileUpdate, PushRefused, push_commit
from adk_eval_gate.handshake.who_asked import CommentRun
from adk_eval_gate.report.escape import code_block, inline
from adk_eval_gate.results.results_format import ResultsFile

MAX_DIFF = 50_000  # GitHub refuses a comment over 65,536 characters


def _selection(asked: CommentRun, results: ResultsFile, output_dir: Path) -> Selection:
    if asked.command.cases:
        return Selection(cases=tuple(asked.command.cases))
    comparison = output_dir / "comparison.json"
    regressed = regressed_cases(comparison) if comparison.is_file() else frozenset()
    if regressed:
        return Selection(regressed=regressed)
    criteria = {name for s in results.eval_sets for c in s.cases for name in c.metrics}
    return Selection(criteria=tuple(sorted(criteria)))


def _repository_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        raise InputError(path, None, "is outside the repository", "keep eval sets inside the repository") from None


def _message(asked: CommentRun, plan: UpdatePlan, head: str) -> str:
    lines = [
        f"Update goldens from the runs of {short_sha(head)}",
        "",
        f"Asked by @{asked.asked_by} with `/eval update-goldens` ({asked.comment_url or 'a pull request comment'}).",
        "",
        *(f"- {name} ({note})" for name, note in plan.updated),
    ]
    return "\n".join(lines) + "\n"


def _listed(plan: UpdatePlan) -> str:
    lines = [inline(line, 300) for line in summary_lines(plan, wrote=True) if line.startswith("left as it is")]
    return "".join(f"\n- {line}" for line in lines[:50])


def push_goldens(
    asked: CommentRun, results: ResultsFile, context: ActionsContext, base_dir: Path, root: Path, output_dir: Path
) -> int:
    pull = context.event["pull_request"]
    head = str(pull["head"]["sha"])
    branch = str(pull["head"]["ref"])
    repository = str(pull["head"]["repo"]["full_name"])
    client = context.client()
    who = inline(f"@{asked.asked_by}", 60)
    plan = plan_update(results, base_dir, _selection(asked, results, output_dir))
    if not plan.changes:
        text = f"`/eval update-goldens` by {who}: nothing to update for commit `{head}`; no file changed."
        reply(client, context.repository or repository, int(pull["number"]), text + _listed(plan))
        return 1 if plan.listed else 0
    files = [FileUpdate(_repository_path(c.path, root), c.content()) for c in plan.changes]
    try:
        pushed = push_commit(client, repository, branch, head, files, _message(asked, plan, head))
    except (PushRefused, GitHubError) as exc:
        text = f"`/eval update-goldens` by {who}: nothing was pushed: {inline(str(exc), 300)}."
        reply(client, context.repository or repository, int(pull["number"]), text)
        print(f"adk-eval-gate: the golden update was not pushed: {exc}")
        return 1
    diff = "".join(c.diff() for c in plan.changes)
    body = (
        f"`/eval update-goldens` by {who}: pushed `{pushed}` to `{inline(branch, 100)}` on top of `{head}`, "
        f"updating {len(plan.updated)} case(s) in {len(files)} file(s). Review the change below; a push made with "
        f"the workflow's token starts no workflow, so evaluate it with `/eval {pushed}`."
        + _listed(plan)
        + "\n\n<details><summary>The golden diff</summary>\n\n"
        + code_block(clip(diff, MAX_DIFF, "\n… (cut: see the pushed commit)"), "diff")
        + "\n\n</details>"
    )
    reply(client, context.repository or repository, int(pull["number"]), body)
    print(f"adk-eval-gate: golden update pushed as {pushed} to {branch}")
    return 0
