"""`schema`: the JSON Schemas of the files we publish, generated from their models (tests keep the shipped copies
in step), and of the workflow config (eval-gate.yml) for editors and reviewers."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from pydantic import BaseModel

_PACKAGE = Path(__file__).parent.parent
SHIPPED = {
    "results": _PACKAGE / "results" / "results.schema.json",
    "comparison": _PACKAGE / "baseline" / "comparison.schema.json",
    "history": _PACKAGE / "baseline" / "history" / "history.schema.json",
}


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser("schema", help="print the JSON Schema of a file format")
    parser.add_argument("kind", choices=[*SHIPPED, "config"])
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    sys.stdout.write(json_schema_text(args.kind))
    return 0


def json_schema_text(kind: str) -> str:
    from adk_eval_gate.baseline.comparison_format import Comparison
    from adk_eval_gate.baseline.history import History
    from adk_eval_gate.config.workflow_settings import Settings
    from adk_eval_gate.results.results_format import ResultsFile

    models: dict[str, type[BaseModel]] = {
        "results": ResultsFile,
        "comparison": Comparison,
        "history": History,
        "config": Settings,
    }
    model = models[kind]
    schema = model.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://github.com/adk-eval-gate/adk-eval-gate/{kind}.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
