"""How report.html carries its data: gzip-compressed JSON parts, base64 in the page's JSON element.

A run of 10,000 cases × 5 runs holds about 100,000 distinct agent responses: as plain JSON the page would pass
49 MB, and the browser would parse all of it before drawing anything. So the data is split by when it is needed:

* `head`: everything the first screen shows — the verdict, facts, verdicts, efficiency, eval sets, and per case
  what its table row, the filters, the search and the banner need (`case_head`); its comparison rows' reasons
  are indexes into the head's own `reasons`. Unpacked before the first frame.
* `detail`: one part per CHUNK cases, in order: per case what only its drill-down shows (every run's scores per
  turn, usage, turns, the expected turns, sampling), with the texts that chunk refers to, stored once per chunk.
  Unpacked one at a time after the first frame is painted (a case opened earlier has its chunk unpacked first),
  so no single step holds the page for long.

Each part is gzip (the browser's own DecompressionStream reads it: no script of ours parses binary, nothing is
fetched) of JSON produced by the caller's encoder, which masks secrets first, so what is compressed is already
safe. `unpack` gives back the data in the documented shape (report/html.py), text indexes and all, for scripts and
tests that read a page.

    {"version": 1, "packing": "gzip+base64", "chunk": CHUNK, "head": str, "detail": [str]}
"""

from __future__ import annotations

import base64
import gzip
import json
from collections.abc import Callable, Mapping
from typing import Any

PACKING = "gzip+base64"
# Cases per detail part: at 10,000 cases (bench/html_report.py), 20 parts of about 2 MB of JSON each, all 20
# unpacked within about 0.6 s after the first frame, one short step each.
CHUNK = 500
HEAD_CASE_FIELDS = ("key", "agent", "eval_set_id", "eval_id", "status", "reason", "tags", "flaky", "compared")
# zlib's default level: level 9 took 12 s on the 10,000-case benchmark's texts alone.
_LEVEL = 6


def run_outcome(case: Mapping[str, Any], i: int) -> str:
    """Run i of a case as one status code (p f e n, as the page's run squares show it): an error of the run or of
    any criterion's scoring in it, else failed if any criterion failed, else passed if any passed."""
    run = case["runs"][i]
    if run[1]:
        return "e"
    codes = [
        m["runs"][i][1] if i < len(m["runs"]) and m["runs"][i] is not None else "e" for m in case["metrics"].values()
    ]
    for code in ("f", "e", "p"):
        if code in codes:
            return code
    return "n"


def usage_total(case: Mapping[str, Any]) -> list[Any]:
    """[tokens in and out over every run with usage, cost over every run | null when any run's cost is unknown]."""
    tokens, cost, known = 0, 0.0, bool(case["runs"])
    for run in case["runs"]:
        usage = run[3]
        if usage is None:
            known = False
            continue
        tokens += usage[0] + usage[1]
        if usage[5] is None:
            known = False
        else:
            cost += usage[5]
    return [tokens, cost if known else None]


def case_head(case: Mapping[str, Any]) -> dict[str, Any]:
    """What a case's row needs: its fields but the per-run ones, each run's outcome ("ppfe") and the usage total."""
    head = {name: case[name] for name in HEAD_CASE_FIELDS}
    head["metrics"] = {n: {k: v for k, v in m.items() if k != "runs"} for n, m in case["metrics"].items()}
    head["outcomes"] = "".join(run_outcome(case, i) for i in range(len(case["runs"])))
    head["usage"] = usage_total(case)
    return head


def case_detail(case: Mapping[str, Any]) -> list[Any]:
    """[{criterion: runs}, expected, runs, sampling]: the rest of the case."""
    return [{n: m["runs"] for n, m in case["metrics"].items()}, case["expected"], case["runs"], case["sampling"]]


def _map_metric_run(run: list[Any] | None, ref: Callable[[Any], Any]) -> list[Any] | None:
    if run is None:
        return None
    turns = [[t[0], t[1]] + ([ref(t[2])] if len(t) > 2 else []) for t in run[2]]
    return [run[0], run[1], turns] + ([ref(run[3])] if len(run) > 3 else [])


def _map_turns(turns: list[list[Any]] | None, ref: Callable[[Any], Any]) -> list[list[Any]] | None:
    return None if turns is None else [[ref(t[0]), ref(t[1]), t[2]] for t in turns]


def _map_scores(detail: list[Any], ref: Callable[[Any], Any]) -> dict[str, list[Any]]:
    return {n: [_map_metric_run(r, ref) for r in metric_runs] for n, metric_runs in detail[0].items()}


def _map_conversation(detail: list[Any], ref: Callable[[Any], Any]) -> tuple[Any, list[Any]]:
    return _map_turns(detail[1], ref), [[r[0], r[1], r[2], r[3], _map_turns(r[4], ref)] for r in detail[2]]


# A case's text indexes are re-stored in the order html_cases.case_data stored them — each criterion's runs, the
# comparison rows, the expected turns, every run's turns — so that `unpack` gives back the very same indexes.


class _Store:
    """Each distinct text once, by index (as html_cases.Texts, over texts already cut)."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def reader(self, source: list[str]) -> Callable[[int | None], int | None]:
        """Stores source[i] and gives its index here."""

        def ref(i: int | None) -> int | None:
            if i is None:
                return None
            return self._index.setdefault(source[i], len(self._index))

        return ref

    def finish(self) -> list[str]:
        self.values = list(self._index)
        return self.values


def _blob(part: Any, to_json: Callable[[Any], str]) -> str:
    return base64.b64encode(gzip.compress(to_json(part).encode(), compresslevel=_LEVEL, mtime=0)).decode("ascii")


def _unblob(text: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(text)).decode())


def pack(data: Mapping[str, Any], to_json: Callable[[Any], str]) -> dict[str, Any]:
    """The page's embedded object; `to_json` serialises a part (it masks secrets)."""
    reasons = _Store()
    from_data = reasons.reader(data["texts"])
    heads = []
    for case in data["cases"]:
        head = case_head(case)
        head["compared"] = {n: {**r, "reason": from_data(r["reason"])} for n, r in case["compared"].items()}
        heads.append(head)
    parts = []
    for start in range(0, len(data["cases"]), CHUNK):
        texts = _Store()
        ref = texts.reader(data["texts"])
        details = []
        for case in data["cases"][start : start + CHUNK]:
            detail = case_detail(case)
            scores = _map_scores(detail, ref)
            expected, runs = _map_conversation(detail, ref)
            details.append([scores, expected, runs, detail[3]])
        parts.append(_blob({"cases": details, "texts": texts.finish()}, to_json))
    head = {k: v for k, v in data.items() if k not in ("cases", "texts")}
    head.update(cases=heads, reasons=reasons.finish())
    return {
        "version": data["version"],
        "packing": PACKING,
        "chunk": CHUNK,
        "head": _blob(head, to_json),
        "detail": parts,
    }


def unpack(packed: Mapping[str, Any]) -> dict[str, Any]:
    """The data in the documented shape from a page's embedded object, with the same text indexes."""
    if packed.get("packing") != PACKING:
        raise ValueError(f"report.html data packed as {packed.get('packing')!r}, not {PACKING!r}")
    head = _unblob(packed["head"])
    chunks = [_unblob(part) for part in packed["detail"]]
    store, cases = _Store(), []
    from_head = store.reader(head["reasons"])
    for i, row in enumerate(head["cases"]):
        chunk = chunks[i // packed["chunk"]]
        from_chunk = store.reader(chunk["texts"])
        detail = chunk["cases"][i % packed["chunk"]]
        case = {name: row[name] for name in HEAD_CASE_FIELDS}
        scores = _map_scores(detail, from_chunk)
        case["compared"] = {n: {**r, "reason": from_head(r["reason"])} for n, r in row["compared"].items()}
        expected, runs = _map_conversation(detail, from_chunk)
        case["metrics"] = {n: {**m, "runs": scores[n]} for n, m in row["metrics"].items()}
        case.update(expected=expected, runs=runs, sampling=detail[3])
        cases.append(case)
    rest = {k: v for k, v in head.items() if k not in ("cases", "reasons")}
    return {**rest, "cases": cases, "texts": store.finish()}
