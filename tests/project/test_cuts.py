"""Every cut of text we show goes through core/clip.py, which masks before it cuts (issue #34, item 4).

A slice taken before masking hides a secret from the mask: `redact` looks for whole values, so the start of a key
left at the end of a cut line passes every writer. The scan below flags, anywhere in src, a slice with a bound
other than ±1 or none (`text[:300]`, `s[-40:]`), an index into a split (`x.split(":")[0]`, `lines[-1]` of
`.splitlines()`), `textwrap.shorten`, and a precision on a string format (`{x:.300s}`, `%.300s`). A cut of text
that is never shown (bytes of /proc, a list of records, a hex digest) is listed below with the reason it is safe;
anything else fails this test and belongs in `core/clip.py` (`clip`, `clip_end`, `first_line`, `last_line`,
`short_sha`).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.support.paths import ROOT

PACKAGE = ROOT / "src" / "adk_eval_gate"
_SPLITS = {"split", "rsplit", "splitlines", "partition", "rpartition"}

# Whole modules whose cuts are of data that is never shown: the reason is the module's.
MODULES = {
    "evalsets/json_spans.py": "a JSON parser: cuts the file's own text at the values' places, shows none of it",
    "core/clip.py": "the cutting helper itself: masks first, then cuts",
    "core/isolation.py": "parses /proc's bytes (stat, environ) of our own process",
    "core/files.py": "reads at most the size limit of bytes and sniffs them for NUL; parses /proc/self/mountinfo",
    "core/persisted_credentials.py": "parses git config lines to find a persisted header; shows none of them",
    "config/globs.py": "splits glob patterns into path parts",
    "config/near_miss.py": "matches glob pattern parts against names",
    "baseline/evidence.py": "slices numpy arrays of probabilities, never text",
    "baseline/power.py": "splits lists of scores into stages",
    "baseline/power_simulation.py": "splits lists of scores into stages",
    "baseline/stages.py": "splits lists of runs into stages",
    "baseline/drift_start.py": "splits lists of records' values at a change-point",
}

# Single cuts in other modules: (module, source text) → why it is not a cut of shown text before masking.
CUTS = {
    ("baseline/history/database.py", "self._seqs[-max_records:]"): "a list of record numbers",
    ("baseline/history/drift.py", "case.case_hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/drift.py", "config.hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/io.py", "longer[len(longer) - len(shorter) :]"): "a list of records",
    ("baseline/history/lookup.py", "c.case_hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/lookup.py", "s.criteria[name].hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/records.py", "c.case_hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/records.py", "config.hash[:HASH_LENGTH]"): "a hex sha256 we computed",
    ("baseline/history/records.py", "records[-max_records:]"): "a list of records",
    ("baseline/history/stability.py", "records[-settings.records :]"): "a list of records",
    ("baseline/history/summaries.py", "self._items[-count:]"): "a list of summaries",
    ("baseline/history/summaries.py", "self.shas[-count:]"): "a list of shas",
    ("baseline/history/trend.py", "records[-count:]"): "a list of records",
    ("baseline/history/view.py", "records[: base + 1]"): "a list of records",
    ("baseline/history/view.py", "records[ref : base + 1]"): "a list of records",
    ("baseline/pass_k_compare.py", "estimate_.short[:3]"): "a list of case ids, each kept whole",
    ("report/history_reliability.py", "records[ref:]"): "a list of records",
    ("baseline/stores/artifact.py", "ordered[:RUNS_TO_SEARCH]"): "a list of workflow runs",
    ("baseline/stores/artifact.py", "ordered[position + 1 : RUNS_TO_SEARCH]"): "a list of workflow runs",
    (
        "baseline/stores/artifact.py",
        '[n for n in names if n.endswith(".json") and n != HISTORY_FILE][:MEMBERS_TRIED]',
    ): "a list of archive members",
    ("commands/history.py", "state.history.records[-state.settings.trend :]"): "a list of records",
    (
        "commands/goldens_import.py",
        "sorted(found)[:10]",
    ): "a list of case ids, shown masked",
    ("commands/goldens_import.py", 'key.split(":", 1)[1]'): "matches a case id, shows nothing",
    ("commands/goldens_push.py", "lines[:50]"): "a list of lines, each clipped by inline()",
    ("commands/goldens_update.py", "a[i1:i2]"): "a list of lines difflib compares",
    ("commands/goldens_update.py", "b[j1:j2]"): "a list of lines difflib compares",
    ("core/command_files.py", "sorted(folder.iterdir())[:MAX_FOLDER_FILES]"): "a list of paths",
    ("core/command_files.py", "ended[:SHOWN_ENDED]"): "a list of processes",
    ("core/descendants.py", 'stat.partition(" (")[2]'): "parses /proc/<pid>/stat",
    ("core/descendants.py", "name[:32]"): "a process name, made printable ASCII right after",
    ("commands/main.py", 'token.partition("=")[2]'): "parses the command line",
    ("evalsets/eval_file_keys.py", "found[:LISTED]"): "a list of keys",
    ("evalsets/eval_file_keys.py", 'path.name[: -len(".json")]'): "a file name's stem, matched, not shown",
    ("evalsets/session_import.py", '_UNSAFE.sub("_", wanted).strip("_.-")[:MAX_ID]'): "an id of [A-Za-z0-9_.-]",
    ("gate/plain.py", "lower[:_NAMED]"): "a list of rows",
    ("results/build.py", 'run_id.rsplit(".", 1)[0]'): "a run id of [\\w.-] we made",
    ("results/build.py", "uuid.uuid4().hex[:16]"): "hex digits we made",
    ("run/plan.py", "unique[: SHOWN_WARNINGS - 1]"): "a list of warnings",
    ("run/shards.py", "new_run_id().rsplit('.', 1)[1]"): "a run id of [\\w.-] we made",
    ("targets/historian.py", "self._data[start + HEADER.size : end]"): "bytes of the host's own messages",
    ("targets/historian.py", "self._data[:end]"): "bytes of the host's own messages",
    ("commands/main.py", "sys.argv[1:2]"): "a list of arguments",
    ("commands/scaffold.py", 'f"{base}-{suffix}"[:100]'): "an entry name of [A-Za-z0-9_.-] made from folder names",
    ("commands/scaffold.py", "skipped[:3]"): "a list of messages",
    ("commands/usage.py", 'token.split("=", 1)[0]'): "the option's name from the user's own command line",
    ("core/validation.py", "others[:LISTED_PROBLEMS]"): "a list of validation errors",
    ("core/validation.py", 'error["loc"][:index]'): "a tuple of field names",
    ("criteria/agents_cli_service.py", 'variable.split(".")[0].split("[")[0]'): "parses a template variable",
    ("criteria/agents_cli_service.py", 'variable.split(".")[0]'): "parses a template variable",
    ("criteria/user_simulator_quality.py", "data.actual[:i]"): "a list of invocations",
    ("evalsets/agents_cli_config.py", 'm.rpartition("_v")[0]'): "parses a metric's version suffix",
    ("evalsets/agents_cli_config.py", 'm.rpartition("_v")[2]'): "parses a metric's version suffix",
    ("evalsets/agents_cli_dataset.py", 'path.name[: -len(".json")]'): "removes a known suffix",
    ("evalsets/legacy.py", "name[: -len(suffix)]"): "removes a known suffix",
    ("github/commands.py", 'body.lstrip().split("\\n", 1)[0]'): "parses a person's own public /eval comment",
    ("integrations/pytest_plugin.py", "k[:2]"): "a key tuple",
    ("integrations/pytest_plugin.py", "item.key[:2]"): "a key tuple",
    ("llm/cache.py", "key[:2]"): "a hex cache key",
    ("llm/client.py", 'cls.__module__.partition(".")[0]'): "a Python module name",
    ("llm/prices.py", 'model.rsplit("/", 1)[-1]'): "parses a model name for its price",
    ("handshake/ours.py", "hashlib.sha256(text.encode()).hexdigest()[:20]"): "a hex digest",
    ("handshake/who_asked.py", "command.sha[:40]"): "a sha the command parser checked is hex",
    ("handshake/sticky.py", "[*kept, acceptance][-KEPT_ACCEPTANCES:]"): "a list of acceptances",
    ("handshake/sticky.py", "visible[start + len(_PREVIOUS) : end]"): "our own comment's section, between markers",
    ("handshake/sticky.py", 'line[len(_DATA) : -len(" -->")]'): "our own comment's hidden data line",
    ("handshake/sticky.py", 'text.split("\\n")[len(header(text)) :]'): "a list of our own comment's lines",
    ("report/console.py", "gate.failures[1:6]"): "a list of failures",
    ("report/history.py", "report.flaky[:20]"): "a list of cases",
    ("report/html.py", 'page[start : page.index("</script>", start)]'): "our own rendered page",
    ("report/html_pack.py", 'data["cases"][start : start + CHUNK]'): "a list of cases",
    ("report/markdown.py", 'cut[: cut.rfind("\\n")]'): "drops the last line of text `clip` already masked",
    ("report/markdown.py", "self.evidence[:evidence]"): "a list of evidence",
    ("report/markdown.py", "self.summaries[:sets]"): "a list of summaries",
    ("report/markdown.py", "self.summaries[sets:]"): "a list of summaries",
    ("report/outputs.py", 'text.rsplit("\\n", 1)[0]'): "drops the last line of text `clip_utf8` already masked",
    ("run/selection.py", "ids[:20]"): "a list of ids",
    ("run/shards.py", "digest[:8]"): "a digest's bytes",
    ("targets/agents_cli_replay.py", "events[last + 1 :]"): "a list of events",
    ("targets/command.py", "into[:-STDERR_TAIL_BYTES]"): "stderr's tail, masked with `clip_end` before it is shown",
    ("targets/command.py", "readers[1:3]"): "a list of tasks",
    ("targets/replay.py", "self._sources[:3]"): "a list of paths",
}


def _trivial(bound: ast.expr | None) -> bool:
    if bound is None:
        return True
    if isinstance(bound, ast.UnaryOp) and isinstance(bound.op, ast.USub):
        bound = bound.operand
    return isinstance(bound, ast.Constant) and bound.value in (0, 1)


def _is_cut(node: ast.AST) -> bool:
    if isinstance(node, ast.Subscript):
        if isinstance(node.slice, ast.Slice):
            return not (_trivial(node.slice.lower) and _trivial(node.slice.upper))
        value = node.value
        return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr in _SPLITS
    if isinstance(node, ast.Attribute):
        return node.attr == "shorten"
    if isinstance(node, ast.FormattedValue) and node.format_spec is not None:
        spec = "".join(str(v.value) for v in ast.walk(node.format_spec) if isinstance(v, ast.Constant))
        return re.fullmatch(r".*\.\d+s?", spec) is not None  # `.300` / `.300s` cut a string; `.3f` rounds
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and re.search(r"%-?\d*\.\d+s", node.value)


def cuts_in(source: str) -> list[tuple[int, str]]:
    tree = ast.parse(source)
    return [(n.lineno, ast.get_source_segment(source, n) or "") for n in ast.walk(tree) if _is_cut(n)]


def test_every_cut_of_shown_text_goes_through_clip():
    found = set()
    unlisted = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module in MODULES:
            continue
        for line, segment in cuts_in(path.read_text()):
            found.add((module, segment))
            if (module, segment) not in CUTS:
                unlisted.append(f"{module}:{line}: {segment}")
    assert not unlisted, "cut before masking? use core/clip.py (or list it here with why it is safe):\n" + "\n".join(
        unlisted
    )
    stale = sorted(set(CUTS) - found)
    assert not stale, f"listed cuts no longer in the code (remove them): {stale}"


def test_the_scan_sees_each_kind_of_cut():
    """The scan itself can fail: each spelling of a cut that once leaked is found."""
    samples = [
        "tail = err.splitlines()[-1][:300]",
        "x = text[-40:]",
        "x = text[n:]",
        "x = reason.split(':', 1)[0]",
        "import textwrap\nx = textwrap.shorten(text, 80)",
        "x = f'{text:.300}'",
        "x = f'{text:.300s}'",
        "x = '%.300s' % text",
    ]
    for sample in samples:
        assert cuts_in(sample), sample
    for harmless in ["x = items[1:]", "x = items[:-1]", "x = f'{score:.3f}'", "x = text.strip()"]:
        assert not cuts_in(harmless), harmless


def test_listed_modules_exist():
    assert all((PACKAGE / m).is_file() for m in MODULES), [m for m in MODULES if not (PACKAGE / m).is_file()]
    assert all(isinstance(Path(m), Path) and reason for (m, _), reason in CUTS.items())
