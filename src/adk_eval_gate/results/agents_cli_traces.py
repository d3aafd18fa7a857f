"""The traces of agents-cli cases, written beside our results in agents-cli's own format.

One file per agent, dataset and run: `agents-cli/<agent>/<eval set id>.run<N>.json`, holding
`{"eval_cases": [...]}` with each case as `agents-cli eval generate` writes it (the agent's events merged into
`agent_data.turns`, its final text in `responses`), so `agents-cli eval grade --dataset <file>` grades our run.
Cases whose run failed are left out, as `eval generate` leaves out the cases it could not run.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from adk_eval_gate.core.files import write_text_atomic
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.evalsets.adk_eval_schema import EvalCase, Invocation
from adk_eval_gate.evalsets.agents_cli_traces import generated_case
from adk_eval_gate.results.results_format import ResultsFile

FOLDER = "agents-cli"


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "unnamed"


def trace_documents(
    results: ResultsFile, cases: Mapping[tuple[str, str], Sequence[EvalCase]]
) -> dict[tuple[str, str, int], JsonObject]:
    """(agent, eval set id, run) → the generated dataset of that run, cases in dataset order."""
    documents: dict[tuple[str, str, int], JsonObject] = {}
    for eval_set in results.eval_sets:
        originals = cases.get((eval_set.agent, eval_set.eval_set_id))
        if not originals:
            continue
        by_id = {case.eval_id: case for case in eval_set.cases}
        for original in originals:
            result = by_id.get(original.eval_id)
            for record in result.runs if result is not None else ():
                if record.error is not None or record.actual_invocations is None:
                    continue
                invocations = [Invocation.model_validate(i) for i in record.actual_invocations]
                document = documents.setdefault((eval_set.agent, eval_set.eval_set_id, record.run), {"eval_cases": []})
                document["eval_cases"].append(generated_case(original, invocations))
    return documents


def write_traces(
    results: ResultsFile, cases: Mapping[tuple[str, str], Sequence[EvalCase]], out_dir: Path
) -> list[Path]:
    written = []
    for (agent, eval_set_id, run), document in sorted(trace_documents(results, cases).items()):
        path = out_dir / FOLDER / _safe(agent) / f"{_safe(eval_set_id)}.run{run + 1}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(path, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written
