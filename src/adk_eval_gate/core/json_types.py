"""JSON, named: what `json.loads`, a YAML file or GitHub's API hands us, and what we write back.

`JsonObject` is an object as parsed, its shape not yet checked: values are read with `isinstance` (or a pydantic
model) where they decide something, so the one `Any` of parsed JSON lives here rather than in every signature.
`JsonValue` is JSON we build ourselves, typed all the way down.
"""

from __future__ import annotations

from typing import Any, TypeAlias

JsonObject: TypeAlias = dict[str, Any]  # a parsed JSON object: narrow its values before deciding on them
JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
