"""JSON Schemas of the files we publish, generated from their models (tests keep the shipped copies in step)."""

from __future__ import annotations

import json
from pathlib import Path

from .baseline.models import Comparison
from .results.models import ResultsFile

MODELS = {"results": ResultsFile, "comparison": Comparison}
SHIPPED = {
    "results": Path(__file__).parent / "results" / "results.schema.json",
    "comparison": Path(__file__).parent / "baseline" / "comparison.schema.json",
}


def json_schema_text(kind: str) -> str:
    schema = MODELS[kind].model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://github.com/adk-eval-gate/adk-eval-gate/{kind}.schema.json"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
