"""Where baselines live: a file in the repository, a data branch, or the artifact of the base branch's newest
push run. A baseline is a results file (agent outputs stripped) plus its identity."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from typing_extensions import assert_never

from adk_eval_gate.baseline.stores.file import FileStore, NoStore
from adk_eval_gate.baseline.stores.stored_baseline import (
    BaselineStore,
    LoadedBaseline,
    LoadOutcome,
    PendingHistory,
    RawHistory,
    age_days,
    identity_of,
    merge_base_candidates,
    merge_base_found,
    slim,
)
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import ArtifactBaseline, BranchBaseline, FileBaseline, NoBaseline
from adk_eval_gate.github.context import ActionsContext

if TYPE_CHECKING:
    from adk_eval_gate.baseline.stores.artifact import ArtifactStore
    from adk_eval_gate.baseline.stores.branch import BranchStore

__all__ = [
    "ArtifactStore",
    "BaselineStore",
    "BranchStore",
    "FileStore",
    "LoadOutcome",
    "LoadedBaseline",
    "NoStore",
    "PendingHistory",
    "RawHistory",
    "age_days",
    "build_store",
    "describe_baseline",
    "describe_store",
    "identity_of",
    "load_baseline",
    "merge_base_candidates",
    "merge_base_found",
    "slim",
]


def build_store(workflow: Workflow, context: ActionsContext) -> BaselineStore:
    """The store the config names; the branch and artifact stores reach GitHub through `context`."""
    # The GitHub stores load the GitHub client only when a config names them: `history show` over a file store
    # starts in a fraction of the time.
    match workflow.settings.baseline:
        case FileBaseline() as settings:
            return FileStore(settings, workflow)
        case BranchBaseline() as settings:
            from adk_eval_gate.baseline.stores.branch import BranchStore

            return BranchStore(settings, workflow, context)
        case ArtifactBaseline() as settings:
            from adk_eval_gate.baseline.stores.artifact import ArtifactStore

            return ArtifactStore(settings, workflow, context)
        case NoBaseline():
            return NoStore()
        case unknown:
            assert_never(unknown)


def load_baseline(workflow: Workflow | None, context: ActionsContext, path: Path | None = None) -> LoadOutcome:
    """The baseline `compare` uses: an explicit results file, else the config's store, else nothing (said)."""
    if path is not None:
        from adk_eval_gate.results.build import read_results  # the scorers' imports: only to read a results file

        results = read_results(path)
        return LoadOutcome(LoadedBaseline(results, identity_of(results, str(path))))
    if workflow is not None:
        return build_store(workflow, context).load()
    return LoadOutcome(None, ["no --baseline and no --config: nothing to compare with"])


def describe_store(workflow: Workflow) -> str:
    """Said at validate time, because a gate without a baseline compares nothing and passes on regressions."""
    match workflow.settings.baseline:
        case NoBaseline():
            return "baseline: NONE (baseline.store: none): nothing will be compared, so no regression can fail the gate"
        case FileBaseline(path=path) if not (workflow.base_dir / path).exists():
            return (
                f"baseline: NONE yet: {path} does not exist, so nothing will be compared; "
                "create it with `adk-eval-gate baseline update` and commit it"
            )
        case FileBaseline(path=path):
            return f"baseline: the file {path}"
        case BranchBaseline(branch=branch):
            return f"baseline: branch {branch} (written by pushes to the default branch; needs `contents: write`)"
        case ArtifactBaseline(name=name):
            return (
                f"baseline: artifact {name!r} of the newest completed push run on the pull request's base branch "
                "(the push workflow must upload adk-eval-gate-out/results.json under that name; pull requests need "
                "`actions: read`); until one exists nothing is compared"
            )
        case unknown:
            assert_never(unknown)


def describe_baseline(outcome: LoadOutcome) -> str:
    if outcome.baseline is None:
        return "no baseline"
    identity, results = outcome.baseline.identity, outcome.baseline.results
    age = f"{identity.age_days:.1f} days old" if identity.age_days is not None else "age unknown"
    lines = [
        f"baseline: {identity.source}\n  commit {identity.sha or 'unknown'}, created {identity.created_at} ({age}), "
        f"adk-eval-gate {identity.tool_version}"
    ]
    for eval_set in results.eval_sets:
        s = eval_set.summary
        criteria = ", ".join(eval_set.criteria)
        lines.append(
            f"  {eval_set.agent}/{eval_set.eval_set_id}: {s.total} cases, {s.passed} passed, criteria: {criteria}"
        )
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    """`ArtifactStore` and `BranchStore` by name, imported when first asked for (see `build_store`)."""
    if name == "ArtifactStore":
        from adk_eval_gate.baseline.stores.artifact import ArtifactStore

        return ArtifactStore
    if name == "BranchStore":
        from adk_eval_gate.baseline.stores.branch import BranchStore

        return BranchStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
