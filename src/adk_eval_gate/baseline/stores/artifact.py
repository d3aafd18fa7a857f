"""`artifact` store: the results artifact of the base branch's newest push run that has one (Actions API).

The workflow uploads the results file with actions/upload-artifact (`if: always()`) on pushes to the default
branch; a pull request downloads the artifact of the run at its merge-base when there is one, else of the newest
run. A run's conclusion does not matter (only results that stopped early, `interrupted`, are passed over): a push
whose comparison failed (an accepted regression) still produced
the results of that commit, and skipping it would leave the baseline behind for good.
"""

from __future__ import annotations

import io
import zipfile

from pydantic import ValidationError

from adk_eval_gate.baseline.stores.stored_baseline import (
    LoadedBaseline,
    LoadOutcome,
    PendingHistory,
    RawHistory,
    identity_of,
    merge_base_candidates,
)
from adk_eval_gate.config.loader import Workflow
from adk_eval_gate.config.workflow_settings import ArtifactBaseline
from adk_eval_gate.core.clip import short_sha
from adk_eval_gate.core.files import MAX_FILE_BYTES
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.github.client import GitHubError
from adk_eval_gate.github.context import ActionsContext
from adk_eval_gate.results.results_format import ResultsFile

# The push run writes the history beside results.json under the name every upload step already names (the
# examples, `init`'s workflow and the README since the history began): since history.db it holds the database, told
# from an earlier version's JSON by its first bytes (history/io.py), so that a workflow nobody edited still carries
# the history from push run to push run. An artifact's history.db (none is written) is read as well.
HISTORY_FILE = "history.json"
DATABASE_FILE = "history.db"
RUNS_TO_SEARCH = 20  # runs that died before their upload step have no artifact; look past a few of them
# What an artifact may cost (issue #34: every decoder has a total budget): its download, what its files decompress
# to in all (a zip bomb's member claims any size; each read stops at what is left), and the files tried as results.
MAX_ARCHIVE_BYTES = MAX_FILE_BYTES
MAX_UNZIPPED_BYTES = 2 * MAX_FILE_BYTES  # a results file and a history, each at most the file limit
MEMBERS_TRIED = 10


def _number(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class _Unzipped:
    """An archive's members read within one budget of decompressed bytes, each within the file limit."""

    def __init__(self, bundle: zipfile.ZipFile, where: str) -> None:
        self.bundle, self.where, self.left = bundle, where, MAX_UNZIPPED_BYTES

    def read(self, name: str) -> bytes:
        limit = min(MAX_FILE_BYTES, self.left)
        with self.bundle.open(name) as member:
            data = member.read(limit + 1)
        if len(data) > limit:
            raise GitHubError("GET", self.where, None, f"{name} in the artifact decompresses past {limit} bytes")
        self.left -= len(data)
        return data


class ArtifactStore:
    def __init__(self, settings: ArtifactBaseline, workflow: Workflow, context: ActionsContext) -> None:
        self.settings, self.workflow, self.context = settings, workflow, context
        self.client = context.client()
        self.repo = context.repository

    def _runs(self, branch: str) -> list[JsonObject]:
        path = (
            f"/repos/{self.repo}/actions/workflows/{self.settings.workflow}/runs"
            if self.settings.workflow
            else f"/repos/{self.repo}/actions/runs"
        )
        data = self.client.get_json(path, params={"branch": branch, "event": "push", "per_page": 50})
        return list(data.get("workflow_runs", []))

    def _results_in(self, run: JsonObject) -> tuple[ResultsFile, bytes | None] | None:
        """The run's results and, when the artifact carries it, the history that push run wrote."""
        artifacts = self.client.get_json(f"/repos/{self.repo}/actions/runs/{run['id']}/artifacts").get("artifacts", [])
        artifact = next((a for a in artifacts if a.get("name") == self.settings.name and not a.get("expired")), None)
        if artifact is None:
            return None
        where = f"artifacts/{artifact['id']}"
        if not 0 <= _number(artifact.get("size_in_bytes")) <= MAX_ARCHIVE_BYTES:
            raise GitHubError("GET", where, None, f"the artifact is over the {MAX_ARCHIVE_BYTES} byte limit")
        archive = self.client.request("GET", f"/repos/{self.repo}/actions/artifacts/{artifact['id']}/zip").content
        try:
            with zipfile.ZipFile(io.BytesIO(archive)) as bundle:
                budget = _Unzipped(bundle, where)
                names = sorted(bundle.namelist())
                found = next((n for n in (DATABASE_FILE, HISTORY_FILE) if n in names), None)
                history = budget.read(found) if found is not None else None
                tried = [n for n in names if n.endswith(".json") and n != HISTORY_FILE][:MEMBERS_TRIED]
                for name in tried:
                    try:
                        return ResultsFile.model_validate_json(budget.read(name)), history
                    except ValidationError:
                        continue
        except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, EOFError, OSError):
            raise GitHubError("GET", where, None, "the artifact is not a zip archive we can read") from None
        return None

    def _history_where(self, run: JsonObject | None = None) -> str:
        return f"{HISTORY_FILE} in the artifact {self.settings.name}" + (f" of run {run['id']}" if run else "")

    def load(self) -> LoadOutcome:
        branch = self.context.base_branch
        if not self.repo or not branch:
            return LoadOutcome(
                None,
                ["the artifact store needs GITHUB_REPOSITORY and a base branch: no baseline loaded"],
                history=RawHistory(
                    self._history_where(),
                    note="the artifact store needs GITHUB_REPOSITORY and a base branch: no history read",
                ),
            )
        try:
            runs = self._runs(branch)
            wanted = merge_base_candidates(self.context, self.workflow.base_dir)
            ordered = _merge_base_first(runs, wanted)
            cut_short: list[str] = []
            for position, run in enumerate(ordered[:RUNS_TO_SEARCH]):
                found = self._results_in(run)
                if found is None:
                    continue
                results, history = found
                if results.interrupted:  # a cancelled run's `if: always()` upload: only part of the suite ran
                    cut_short.append(str(run["id"]))
                    continue
                exact = run.get("head_sha") in wanted
                identity = identity_of(results, f"artifact {self.settings.name} of run {run['id']}", exact_base=exact)
                identity = identity.model_copy(update={"sha": identity.sha or run.get("head_sha")})
                warnings = (
                    []
                    if exact
                    else [
                        f"no baseline run at this pull request's merge-base; using run {run['id']} "
                        f"({short_sha(run.get('head_sha'), '?')}, {identity.age_days or 0:.1f} days old)"
                    ]
                )
                if cut_short:
                    warnings.append(f"skipped the results of run(s) {', '.join(cut_short)}: they stopped early")
                raw = RawHistory(self._history_where(run), history)
                if history is None and self.context.pull_request is None:
                    raw = self._older_history(ordered[position + 1 : RUNS_TO_SEARCH], run, warnings) or raw
                return LoadOutcome(LoadedBaseline(results, identity), warnings, history=raw)
        except GitHubError as exc:
            hint = " (does the workflow grant `actions: read`?)" if exc.read_only else ""
            return LoadOutcome(
                None,
                [f"baseline unavailable: {exc}{hint}"],
                error=f"{exc}{hint}",
                history=RawHistory(self._history_where(), error=f"{exc}{hint}"),
            )
        return LoadOutcome(
            None,
            [
                f"no push run on {branch} has an artifact named {self.settings.name!r} yet "
                "(upload it with `if: always()` so that a failing run still leaves one)"
            ],
            history=RawHistory(self._history_where()),
        )

    def _older_history(self, runs: list[JsonObject], newest: JsonObject, warnings: list[str]) -> RawHistory | None:
        """A push run that could not pass the history on (an API failure, a missing upload) must not make the next
        one start afresh: the newest older run that carried one hands it on, and the gap is said."""
        for run in runs:
            found = self._results_in(run)
            if found is not None and found[1] is not None:
                warnings.append(
                    f"the artifact of run {newest['id']} carries no {HISTORY_FILE}; continuing the history of run "
                    f"{run['id']} (the runs between are not in it)"
                )
                return RawHistory(self._history_where(run), found[1])
        return None

    def read_history(self) -> RawHistory:
        """The history the newest usable push run carried: the one its baseline comes with."""
        outcome = self.load()
        return outcome.history or RawHistory(self._history_where())

    def save(self, results: ResultsFile, history: PendingHistory | None = None) -> str:
        """The upload step stores both: `ci` writes the history beside results.json in the output folder, and
        takes results.json back out of it when the history could not be written (publish/store.py)."""
        return (
            f"nothing to do here: upload the output folder (results.json"
            f"{' with ' + HISTORY_FILE if history is not None else ''}) as the artifact {self.settings.name!r} "
            "with actions/upload-artifact in the workflow that runs on the default branch"
        )


def _merge_base_first(runs: list[JsonObject], wanted: list[str]) -> list[JsonObject]:
    """The runs at a merge-base candidate first, nearest candidate first; the others after, in their order."""
    return sorted(
        runs,
        key=lambda r: (
            r.get("head_sha") not in wanted,
            wanted.index(r["head_sha"]) if r.get("head_sha") in wanted else 0,
        ),
    )
