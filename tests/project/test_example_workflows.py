"""The workflows users copy: the quick start compares the second pull request with the default branch's results,
and every example cancels stale runs, keeps the judge cache, reacts to labels and uploads whatever the verdict."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.paths import ROOT

EXAMPLES = sorted((ROOT / "examples" / "workflows").glob("*.yml"))
QUICK_START = ROOT / "examples" / "workflows" / "eval-gate-pr.yml"
PR_TYPES = ["opened", "synchronize", "reopened", "labeled", "unlabeled"]


def load(path: Path) -> dict:
    workflow = yaml.safe_load(path.read_text())
    workflow["on"] = workflow.pop(True)  # pyyaml reads the key `on` as a boolean
    return workflow


def steps(workflow: dict) -> list[dict]:
    return [step for job in workflow["jobs"].values() for step in job.get("steps", [])]


def test_the_quick_start_uploads_the_baseline_on_push_and_compares_pull_requests():
    workflow = load(QUICK_START)
    assert workflow["on"]["pull_request"]["types"] == PR_TYPES
    assert workflow["on"]["push"]["branches"] == ["main"]
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write", "actions": "read"}
    all_steps = steps(workflow)
    (checkout,) = [s for s in all_steps if s.get("uses", "").startswith("actions/checkout@")]
    assert checkout["with"]["fetch-depth"] == 0
    (gate,) = [s for s in all_steps if "/adk-eval-gate@" in s.get("uses", "") and "status" not in s["with"]]
    uploads = [s for s in all_steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    (results,) = [s for s in uploads if s["with"]["name"] == "adk-eval-gate-results"]
    # The name and files the artifact store reads by default, uploaded even when the gate fails: the results and
    # the history each push run hands on to the next.
    assert results["with"]["path"].split() == ["adk-eval-gate-out/results.json", "adk-eval-gate-out/history.json"]
    assert results["if"] == "always()"
    assert all_steps.index(results) > all_steps.index(gate)


def test_the_readme_quick_start_is_the_example_verbatim():
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL)
    assert QUICK_START.read_text() in blocks
    first_lines = readme.splitlines()[:5]
    assert any(line.startswith("make demo") for line in first_lines) and any(
        line.startswith("make test") for line in first_lines
    )
    for doc in re.findall(r"\]\((docs/[\w.-]+\.md)", readme):
        assert (ROOT / doc).is_file(), doc


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_cancels_stale_runs_caches_the_judge_and_always_uploads(path):
    workflow = load(path)
    assert "permissions" in workflow
    concurrency = workflow["concurrency"]
    assert concurrency["group"] and "cancel-in-progress" in concurrency
    if "pull_request" in workflow["on"]:
        assert workflow["on"]["pull_request"]["types"] == PR_TYPES
    for step in steps(workflow):
        if step.get("uses", "").startswith("actions/upload-artifact@"):
            assert step.get("if") == "always()", step
    if not any(
        re.search("adk[-_]eval[-_]gate", s.get("uses", "") + s.get("run", "")) and "ci" in s.get("run", "ci").split()
        for s in steps(workflow)
    ):
        return  # publish-only workflows judge nothing
    restores = [s for s in steps(workflow) if s.get("uses", "").startswith("actions/cache/restore@")]
    assert restores, "the judge cache is restored"
    for restore in restores:
        assert restore["with"]["path"] == ".adk-eval-gate/cache"
        assert (
            restore["with"]["key"].startswith("adk-eval-gate-judge-")
            and "${{ github.run_id }}" in restore["with"]["key"]
        )
        assert restore["with"]["restore-keys"].startswith("adk-eval-gate-judge-")
    for save in [s for s in steps(workflow) if s.get("uses", "").startswith("actions/cache/save@")]:
        assert save["if"] == "always()" and save["with"]["path"] == ".adk-eval-gate/cache"


def test_the_readme_quick_start_config_validates(tmp_path):
    """The config a user copies, beside an agent folder and eval files where it says they are."""
    readme = (ROOT / "README.md").read_text()
    (config,) = [block for block in re.findall(r"```yaml\n(.*?)```", readme, re.DOTALL) if block.startswith("agents:")]
    example = ROOT / "examples" / "hello_world"
    shutil.copytree(example / "hello_world", tmp_path / "my_agent", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(example / "evals", tmp_path / "tests" / "eval")
    (tmp_path / "eval-gate.yml").write_text(config)
    done = subprocess.run(
        [sys.executable, "-m", "adk_eval_gate.commands.main", "validate", "--config", str(tmp_path / "eval-gate.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_fork_publish_example_judges_with_the_base_branchs_config():
    """docs/trust.md: the trusted side checks out the base branch (never the fork's head) and passes --config."""
    workflow = load(ROOT / "examples" / "workflows" / "eval-gate-fork-publish.yml")
    all_steps = steps(workflow)
    (checkout,) = [s for s in all_steps if s.get("uses", "").startswith("actions/checkout@")]
    assert "ref" not in checkout.get("with", {}), "a workflow_run checkout without ref is the default branch"
    (publish,) = [s for s in all_steps if "adk_eval_gate publish" in s.get("run", "")]
    assert "--config" in publish["run"].split()
    assert all_steps.index(checkout) < all_steps.index(publish)
    assert workflow["permissions"]["contents"] == "read"


def test_the_readme_links_every_doc():
    """Every page under docs/ is one hop from the README."""
    readme = (ROOT / "README.md").read_text()
    linked = set(re.findall(r"\]\((docs/[\w.-]+\.md)", readme))
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= linked


def status_steps(workflow: dict) -> dict[str, str]:
    """The Action's `status` steps, by their `if:`."""
    return {s["if"]: s["with"]["status"] for s in steps(workflow) if "status" in s.get("with", {})}


@pytest.mark.parametrize("name", ["eval-gate-pr.yml", "eval-gate-comment.yml"])
def test_a_run_that_stops_without_reporting_marks_the_live_status(name):
    workflow = load(ROOT / "examples" / "workflows" / name)
    assert status_steps(workflow) == {"cancelled()": "cancelled", "failure()": "failed"}
    all_steps = steps(workflow)
    (gate,) = [s for s in all_steps if s.get("id") == "gate"]
    assert all(all_steps.index(s) > all_steps.index(gate) for s in all_steps if "status" in s.get("with", {}))


def test_the_comment_workflow_runs_only_the_commented_pull_requests_head_and_never_stores_a_baseline():
    """docs/comment-commands.md: /eval comments only, the head checked out without the token, a status per commit."""
    workflow = load(ROOT / "examples" / "workflows" / "eval-gate-comment.yml")
    assert workflow["on"] == {"issue_comment": {"types": ["created"]}}
    assert workflow["permissions"]["statuses"] == "write" and workflow["permissions"]["contents"] == "read"
    (job,) = workflow["jobs"].values()
    assert (
        "github.event.issue.pull_request" in job["if"] and "startsWith(github.event.comment.body, '/eval')" in job["if"]
    )
    (checkout,) = [s for s in job["steps"] if s.get("uses", "").startswith("actions/checkout@")]
    assert checkout["with"]["ref"] == "refs/pull/${{ github.event.issue.number }}/head"
    assert checkout["with"]["persist-credentials"] is False
    uploads = [s["with"]["name"] for s in job["steps"] if s.get("uses", "").startswith("actions/upload-artifact@")]
    assert "adk-eval-gate-results" not in uploads
    assert workflow["concurrency"]["cancel-in-progress"] is False


def test_every_checkout_leaves_no_token_in_gits_config():
    """`ci` refuses a checkout holding actions/checkout's persisted token (the pull request's code could read it):
    every workflow users copy, and the one `init` writes, turns it off."""
    template = ROOT / "src" / "adk_eval_gate" / "commands" / "templates" / "init-workflow.yml"
    for path in [*EXAMPLES, template]:
        checkouts = [s for s in steps(load(path)) if s.get("uses", "").startswith("actions/checkout@")]
        assert checkouts, path.name
        assert all(s.get("with", {}).get("persist-credentials") is False for s in checkouts), path.name


TEMPLATE = ROOT / "src" / "adk_eval_gate" / "commands" / "templates" / "init-workflow.yml"
TOKEN_IN_ENV = re.compile(r"github\.token|secrets\.GITHUB_TOKEN|secrets\.GH_", re.IGNORECASE)
# A `run:` step that runs the checkout's code outside the Action's fence (core/command_files.py): it can write
# $GITHUB_ENV / $GITHUB_PATH for every later step of its job.
RUNS_CHECKOUT_CODE = re.compile(r"-r |agents-cli eval|\bmake\b|pip install (-e )?\.|adk[-_]eval[-_]gate ci\b")
QUIET_BASH = "bash --noprofile --norc -eo pipefail {0}"
GATE_COMMAND = re.compile(r"(^|[\s;&|])(adk-eval-gate|-m adk_eval_gate) [a-z]")  # not `pip install adk-eval-gate==`


@pytest.mark.parametrize("path", [*EXAMPLES, TEMPLATE], ids=lambda p: p.name)
def test_later_steps_pick_up_nothing_the_pull_request_left(path):
    """issue 34: a PYTHONPATH, BASH_ENV or PATH entry the pull request's code wrote to the runner's files (or a
    sitecustomize.py in the checkout) must run nothing in a later step that holds the token. The Action's own
    steps are fenced and its image runs `python -I`; a `run:` step of ours runs `python -I -m adk_eval_gate` in a
    bash that reads no startup file, and no step holding the token follows the checkout's code in its job."""
    for name, job in load(path)["jobs"].items():
        ran_checkout_code = None
        for step in job.get("steps", []):
            run = step.get("run", "")
            if GATE_COMMAND.search(run):
                assert "python -I -m adk_eval_gate " in run and "adk-eval-gate " not in run, (path.name, run)
                assert step.get("shell") == QUIET_BASH, (path.name, run)
            holds_token = bool(TOKEN_IN_ENV.search(json.dumps(step.get("env", {})) + json.dumps(step.get("with", {}))))
            if run and holds_token:
                assert ran_checkout_code is None, (
                    f"{path.name}/{name}: {run!r} holds the token after {ran_checkout_code!r}"
                )
            if RUNS_CHECKOUT_CODE.search(run):
                ran_checkout_code = run


def test_the_actions_image_runs_isolated_python():
    """-I: no PYTHON* variable, no user site, no checkout on sys.path, in this step's container or a later one."""
    dockerfile = (ROOT / "Dockerfile").read_text()
    (entry,) = re.findall(r"^ENTRYPOINT (.+)$", dockerfile, re.MULTILINE)
    argv = json.loads(entry)
    assert argv[0] == "python" and "-I" in argv[: argv.index("-m")], argv
    assert argv[argv.index("-m") + 1] == "adk_eval_gate.commands.action"
