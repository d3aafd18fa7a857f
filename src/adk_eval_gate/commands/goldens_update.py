"""`goldens update`, the decisions: which cases, which runs agree, and each eval file's new text (nothing written).

A case takes the trajectory (tool calls with their arguments, and the final answer, turn by turn) that a strict
majority of its runs took — every run with `--unanimous`; a run that errored counts as one that did not take it,
so a case is never rewritten from the runs that happened to finish. A case whose runs do not agree, that changed
since the run (its hash differs from the one the results recorded), or whose turns cannot hold the runs' turns
is listed with the reason and left as it is.
"""

from __future__ import annotations

import difflib
import fnmatch
import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from adk_eval_gate.baseline.comparison_format import Comparison
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import load_json, parse_json, read_bytes, read_text
from adk_eval_gate.core.validation import input_error_from
from adk_eval_gate.evalsets.adk_eval_schema import Invocation
from adk_eval_gate.evalsets.golden_rewrite import Golden, golden_of, rewrite
from adk_eval_gate.evalsets.json_spans import SpanError
from adk_eval_gate.evalsets.loader import parse_eval_set
from adk_eval_gate.results.build import case_hash
from adk_eval_gate.results.results_format import CaseResult, EvalSetResult, ResultsFile

BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Selection:
    """Which cases to update: every given kind must match (within one kind, any of its values)."""

    eval_sets: tuple[str, ...] = ()
    cases: tuple[str, ...] = ()  # CASE or SET:CASE, globs allowed, as `--cases` takes them
    criteria: tuple[str, ...] = ()  # cases where one of these criteria did not pass
    regressed: frozenset[tuple[str, str, str]] | None = None  # (agent, eval set, case) a comparison calls regressed

    def empty(self) -> bool:
        return not (self.eval_sets or self.cases or self.criteria) and self.regressed is None

    def chooses(self, agent: str, eval_set: EvalSetResult, case: CaseResult) -> bool:
        name = eval_set.eval_set_id
        if self.eval_sets and not any(fnmatch.fnmatchcase(name, s) for s in self.eval_sets):
            return False
        if self.cases and not any(_case_matches(s, name, case.eval_id) for s in self.cases):
            return False
        if self.criteria and not any(c in case.metrics and case.metrics[c].status != "passed" for c in self.criteria):
            return False
        return self.regressed is None or (agent, name, case.eval_id) in self.regressed


def _case_matches(selector: str, eval_set_id: str, eval_id: str) -> bool:
    set_part, _, case_part = selector.rpartition(":")
    if set_part and not fnmatch.fnmatchcase(eval_set_id, set_part):
        return False
    return fnmatch.fnmatchcase(eval_id, case_part)


def regressed_cases(path: Path) -> frozenset[tuple[str, str, str]]:
    try:
        comparison = Comparison.model_validate(load_json(path, "comparison file"))
    except ValidationError as exc:
        raise input_error_from(exc, path, model=Comparison) from None
    return frozenset((r.agent, r.eval_set_id, r.eval_id) for r in comparison.rows if r.verdict == "regressed")


@dataclass(frozen=True)
class Agreement:
    goldens: tuple[Golden, ...] | None  # None: the case is left as it is
    took: int  # runs that took the chosen trajectory
    runs: int
    problem: str | None = None
    run: int | None = None  # position in `case.runs` of the first run that took the chosen trajectory


def _run_goldens(case: CaseResult) -> list[tuple[Golden, ...] | None]:
    goldens: list[tuple[Golden, ...] | None] = []
    for run in case.runs:
        if run.error is not None or run.actual_invocations is None:
            goldens.append(None)
            continue
        try:
            goldens.append(tuple(golden_of(Invocation.model_validate(i)) for i in run.actual_invocations))
        except ValidationError:
            goldens.append(None)  # a recorded turn this ADK cannot read counts as a run that took nothing
    return goldens


def agreement(case: CaseResult, unanimous: bool) -> Agreement:
    runs = _run_goldens(case)
    taken = [g for g in runs if g is not None]
    if not taken:
        return Agreement(None, 0, len(runs), "has no run with recorded turns (errored, or a baseline without them)")
    keys = [json.dumps([g.trajectory for g in goldens]) for goldens in taken]
    key, took = Counter(keys).most_common(1)[0]
    enough = took == len(runs) if unanimous else 2 * took > len(runs)
    if not enough:
        kinds = len(set(keys)) + (1 if len(taken) < len(runs) else 0)
        need = "all" if unanimous else "more than half"
        return Agreement(
            None,
            took,
            len(runs),
            f"runs disagree: {took} of {len(runs)} took one trajectory ({kinds} different outcomes); {need} must agree",
        )
    chosen = taken[keys.index(key)]
    return Agreement(chosen, took, len(runs), run=runs.index(chosen))


def unified_diff(old: str, new: str, shown: str) -> str:
    """`git apply`-able; difflib's own `unified_diff` treats lines as common as `}` as junk (autojunk) and so
    shows whole blocks as changed when one value in them changed."""
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    old_name, new_name = (shown, shown) if shown.startswith("/") else (f"a/{shown}", f"b/{shown}")
    out = [f"--- {old_name}\n", f"+++ {new_name}\n"]
    for group in difflib.SequenceMatcher(None, a, b, autojunk=False).get_grouped_opcodes(3):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2])} +{_range(first[3], last[4])} @@\n")
        for tag, i1, i2, j1, j2 in group:
            out += [" " + line for line in a[i1:i2]] if tag == "equal" else []
            out += ["-" + line for line in a[i1:i2]] if tag in ("replace", "delete") else []
            out += ["+" + line for line in b[j1:j2]] if tag in ("replace", "insert") else []
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in out)


def _range(start: int, stop: int) -> str:
    length = stop - start
    return f"{start + (1 if length else 0)},{length}"


@dataclass(frozen=True)
class FileChange:
    path: Path
    shown: str
    old: str
    new: str
    bom: bool
    updated: tuple[str, ...]

    def diff(self) -> str:
        return unified_diff(self.old, self.new, self.shown)

    def content(self) -> bytes:
        return (BOM if self.bom else b"") + self.new.encode()


@dataclass(frozen=True)
class UpdatePlan:
    changes: tuple[FileChange, ...]
    updated: tuple[tuple[str, str], ...]  # (eval set:case, note)
    unchanged: tuple[str, ...]  # chosen, agreeing, and already expecting what the runs did
    listed: tuple[tuple[str, str], ...] = field(default=())  # (eval set:case, why it was left as it is)


def _shown(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.as_posix()


@dataclass
class _FileWork:
    eval_set: EvalSetResult
    updates: dict[str, tuple[Golden, ...]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)


def _chosen(
    results: ResultsFile, selection: Selection, unanimous: bool, base: Path, listed: list[tuple[str, str]]
) -> dict[Path, _FileWork]:
    work: dict[Path, _FileWork] = {}
    for eval_set in results.eval_sets:
        for case in eval_set.cases:
            if not selection.chooses(eval_set.agent, eval_set, case):
                continue
            name = f"{eval_set.eval_set_id}:{case.eval_id}"
            found = agreement(case, unanimous)
            if found.goldens is None:
                listed.append((name, found.problem or "runs disagree"))
                continue
            item = work.setdefault(_inside(base, eval_set.file), _FileWork(eval_set))
            earlier = item.updates.get(case.eval_id)
            if earlier is not None and [g.trajectory for g in earlier] != [g.trajectory for g in found.goldens]:
                listed.append((name, "two agents ran it differently: update one agent's eval sets at a time"))
                item.updates.pop(case.eval_id)
                continue
            item.updates[case.eval_id] = found.goldens
            item.notes[case.eval_id] = f"{found.took} of {found.runs} runs agreed"
    return work


def _inside(base: Path, file: str) -> Path:
    """The eval file a results file names, never outside the config's folder: a results file may come from another
    job or a fork, and what it names is what gets written."""
    path = (base / file).resolve()
    if not path.is_relative_to(base.resolve()):
        raise InputError(
            None, "eval_sets[].file", f"{file!r} is outside {base}", "update goldens from the config's own folder"
        )
    if Path(os.path.normpath(base.resolve() / file)) != path:  # a link would have the update land where it points
        raise InputError(None, "eval_sets[].file", f"{file!r} is a symbolic link", "name the eval file itself")
    return path


def _stale(text: str, path: Path, eval_set: EvalSetResult, ids: Iterable[str]) -> dict[str, str]:
    """Cases edited since the run: their recorded runs answered other expectations (or other questions)."""
    loaded = parse_eval_set(parse_json(text, path, "eval set"), path)
    hashes = {c.eval_id: case_hash(c) for c in loaded.eval_set.eval_cases}
    recorded = {c.eval_id: c.case_hash for c in eval_set.cases}
    return {
        case_id: "changed since the run (its case hash differs): run it again, then update"
        for case_id in ids
        if case_id in hashes and recorded.get(case_id) not in ("", hashes[case_id])
    }


def plan_update(results: ResultsFile, base: Path, selection: Selection, unanimous: bool = False) -> UpdatePlan:
    listed: list[tuple[str, str]] = []
    changes: list[FileChange] = []
    updated: list[tuple[str, str]] = []
    unchanged: list[str] = []
    for path, item in _chosen(results, selection, unanimous, base, listed).items():
        raw = read_bytes(path, "eval set")
        text = read_text(path, "eval set")
        set_id = item.eval_set.eval_set_id
        stale = _stale(text, path, item.eval_set, item.updates)
        listed += [(f"{set_id}:{case_id}", why) for case_id, why in stale.items()]
        updates = {k: v for k, v in item.updates.items() if k not in stale}
        try:
            done = rewrite(text, path, item.eval_set.shape, updates)
        except SpanError as exc:
            raise InputError(path, None, f"could not be rewritten in place ({exc})", "report this file to us") from None
        listed += [(f"{set_id}:{case_id}", why) for case_id, why in done.problems]
        unchanged += [f"{set_id}:{case_id}" for case_id in done.already]
        updated += [(f"{set_id}:{case_id}", item.notes[case_id]) for case_id in done.updated]
        if done.text != text:
            check_still_loads(done.text, path)
            changes.append(FileChange(path, _shown(path), text, done.text, raw.startswith(BOM), done.updated))
    return UpdatePlan(tuple(changes), tuple(updated), tuple(unchanged), tuple(listed))


def check_still_loads(text: str, path: Path) -> None:
    try:
        parse_eval_set(json.loads(text), path)
    except InputError as exc:
        raise InputError(path, exc.field, f"would not load after the update: {exc.problem}", exc.fix) from None


def summary_lines(plan: UpdatePlan, wrote: bool) -> Sequence[str]:
    verb = "updated" if wrote else "would update"
    lines = [f"{verb} {name} ({note})" for name, note in plan.updated]
    lines += [f"already expected: {name}" for name in plan.unchanged]
    lines += [f"left as it is: {name}: {why}" for name, why in plan.listed]
    return lines
