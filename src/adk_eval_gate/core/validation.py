"""Turns pydantic validation errors into one-line `InputError`s with a concrete fix."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_snake

from adk_eval_gate.core.clip import clip
from adk_eval_gate.core.errors import InputError, did_you_mean, format_loc
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.core.redaction import redact_json

LineLookup = Callable[[Sequence[str | int]], int | None]


def _fix_for(error: JsonObject, model: type[BaseModel] | None) -> tuple[str, str | None]:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    value = error.get("input")
    loc = error["loc"]
    if kind == "missing":
        return "is required but missing", f"add `{loc[-1]}`" if loc else None
    if kind == "extra_forbidden":
        known = _known_fields(model, loc[:-1]) if model is not None else []
        guess = did_you_mean(str(loc[-1]), known) if known and loc else None
        if guess == loc[-1]:  # a key of one form of a union, written beside another form's keys
            return "does not go with the other keys of this object", "keep the keys of one form only"
        fix = f"did you mean `{guess}`?" if guess else "remove it or check the spelling"
        if known and not guess:
            fix += f" (allowed: {', '.join(sorted(known))})"
        return "is not a known field", fix
    if kind in {"less_than_equal", "greater_than_equal", "less_than", "greater_than"}:
        return f"{_show(value)} is out of range", error["msg"].lower()
    if kind == "finite_number":
        return f"{_show(value)} is not a finite number", "use a finite number (NaN and infinity are refused)"
    if kind in {"float_parsing", "float_type", "int_parsing", "int_type", "int_from_float"}:
        if isinstance(value, bool):  # strict: `true` and "0.8" are mistakes, not numbers
            return f"{_show(value)} is a boolean, not a number", "use a plain number"
        if isinstance(value, str) and _numeric(value):
            return f"{_show(value)} is quoted text, not a number", "write the number without quotes"
        return f"{_show(value)} is not a valid number", "use a plain number"
    if kind in {"string_type"}:
        return f"{_show(value)} is not a string", "quote the value"
    if kind in {"bool_type", "bool_parsing"}:
        return f"{_show(value)} is not a boolean", "use true or false"
    if kind in {"list_type", "tuple_type"}:
        return f"expected a list, got {_type_name(value)}", "use a JSON/YAML list"
    if kind in {"dict_type", "model_type", "model_attributes_type"}:
        return f"expected an object, got {_type_name(value)}", "use a JSON/YAML mapping"
    if kind in {"literal_error", "enum"}:
        return f"{_show(value)} is not allowed", f"use one of {ctx.get('expected', '')}"
    if kind == "union_tag_invalid":
        return f"{_show(ctx.get('tag'))} is not allowed", f"use one of {ctx.get('expected_tags', '')}"
    if kind == "union_tag_not_found":
        return f"`{ctx.get('discriminator', 'kind')}` is missing", f"add {ctx.get('discriminator', 'kind')}"
    if kind == "value_error":
        message = str(ctx.get("error", error["msg"]))
        problem, _, fix = message.partition("; ")
        return problem, fix or None
    if kind == "too_short":
        return "must not be empty", "add at least one entry"
    if kind == "string_too_short":
        return "is empty", "give a value or remove the key"
    if kind == "string_pattern_mismatch":
        return f"{_show(value)} has characters that are not allowed", f"match {ctx.get('pattern')}"
    return error["msg"], None


def _numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _show(value: object) -> str:
    return clip(repr(redact_json(value)), 60, "...")  # masked before `repr` escapes it and before the cut


def _type_name(value: object) -> str:
    return {dict: "an object", list: "a list", str: "a string", type(None): "null", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def _known_fields(model: type[BaseModel], loc: Sequence[str | int]) -> list[str]:
    """Best-effort walk of the model tree along `loc` to list the fields allowed at that level."""
    current: object = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = getattr(current, "model_fields", None)
        if not fields:
            return []
        match = next((f for n, f in fields.items() if n == part or f.alias == part), None)
        if match is None:
            # discriminated-union tags and dict keys show up in loc; skip them
            continue
        current = _model_in(match.annotation)
        if current is None:
            return []
    fields = getattr(current, "model_fields", None) or {}
    return list(fields)


def _model_in(annotation: object) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()) or ():
        found = _model_in(arg)
        if found is not None:
            return found
    return None


def input_error_from(
    exc: ValidationError,
    file: str | Path | None,
    *,
    prefix: Sequence[str | int] = (),
    model: type[BaseModel] | None = None,
    lines: LineLookup | None = None,
) -> InputError:
    errors = _likeliest_branch(exc.errors(include_url=False))
    # A misspelt key shows up twice (unknown key + missing field); the unknown key is the one to fix.
    first = min(errors, key=lambda e: 0 if e["type"] == "extra_forbidden" else 1)
    loc = _display_loc(first)
    problem, fix = _fix_for({**first, "loc": tuple(loc)}, model)
    others = [
        e
        for e in errors
        if e is not first
        and not _consequence_of(first, e, fix)
        and (e["type"], _display_loc(e)) != (first["type"], loc)
    ]  # one mistake seen by two union branches
    full_loc = [*prefix, *loc]
    if lines is None and file is not None:
        lines = file_line_lookup(Path(file))
    if others:
        problem += _also(others, prefix, model, lines)
    line = lines(full_loc) if lines else None
    return InputError(file, format_loc(full_loc) or None, problem, fix, line=line)


# Every problem is worth fixing in one round trip, but the message stays one line: the first few, then a count.
LISTED_PROBLEMS = 5


def _also(
    others: list[Any], prefix: Sequence[str | int], model: type[BaseModel] | None, lines: LineLookup | None
) -> str:
    shown = []
    for error in others[:LISTED_PROBLEMS]:
        loc = [*prefix, *_display_loc(error)]
        problem, _ = _fix_for({**error, "loc": tuple(_display_loc(error))}, model)
        line = lines(loc) if lines else None
        shown.append(f"{format_loc(loc) or '(top level)'}{f' (line {line})' if line else ''}: {problem}")
    rest = len(others) - len(shown)
    more = f"; and {rest} more" if rest else ""
    count = f"{len(others)} more problem{'s' if len(others) > 1 else ''}"
    return f" (and {count}: {'; '.join(shown)}{more})"


def _branch_at(loc: Sequence[str | int]) -> tuple[int, str] | None:
    """Where a union branch (a model's class name, as pydantic puts it in loc) appears in loc, and which."""
    for index, part in enumerate(loc):
        if isinstance(part, str) and part[:1].isupper():
            return index, part
    return None


def _likeliest_branch(errors: list[Any]) -> list[Any]:
    """A value that fits no branch of a union fails each branch; the branch the user meant is the one whose keys
    it uses, i.e. with the fewest unknown keys. Without this, `tool_uses: [{args: [1]}]` would be reported as
    "`tool_uses` is not a known field" (of the other branch) instead of "args: expected an object"."""
    branches: dict[tuple[Any, ...], dict[str, list[Any]]] = {}
    for error in errors:
        if (found := _branch_at(error["loc"])) is not None:
            index, name = found
            branches.setdefault(tuple(error["loc"][:index]), {}).setdefault(name, []).append(error)
    losers: set[int] = set()
    for by_branch in branches.values():
        if len(by_branch) < 2:
            continue
        unknown = {name: sum(e["type"] == "extra_forbidden" for e in found) for name, found in by_branch.items()}
        best = min(unknown.values())
        losers.update(id(e) for name, found in by_branch.items() if unknown[name] > best for e in found)
    return [error for error in errors if id(error) not in losers] or errors


def _consequence_of(typo: JsonObject, error: JsonObject, fix: str | None) -> bool:
    """The 'missing' error a misspelt key causes is the same mistake, not another one."""
    if typo["type"] != "extra_forbidden" or error["type"] != "missing" or not fix:
        return False
    # the missing field may be named by its camelCase alias, the suggestion by its snake_case name
    missing = {str(error["loc"][-1]), to_snake(str(error["loc"][-1]))}
    return tuple(error["loc"][:-1]) == tuple(typo["loc"][:-1]) and any(f"`{name}`" in fix for name in missing)


def _display_loc(error: JsonObject) -> list[str | int]:
    """Drops union branch names from loc and shows field names in snake_case, the spelling ADK writes.
    An unknown key is shown exactly as the user wrote it."""
    loc = list(error["loc"])
    unknown = loc.pop() if error["type"] == "extra_forbidden" and loc else None  # the user's key, whatever its case
    parts = [p for p in loc if not (isinstance(p, str) and (p[:1].isupper() or p.startswith("function-")))]
    if unknown is not None:
        parts.append(unknown)
    last = len(parts) - 1
    return [
        p if isinstance(p, int) or (i == last and error["type"] == "extra_forbidden") else to_snake(p)
        for i, p in enumerate(parts)
    ]


def yaml_line_lookup(root: yaml.Node | None) -> LineLookup:
    """Maps a validation loc to the 1-based line of the deepest YAML node that exists along it."""

    def lookup(loc: Sequence[str | int]) -> int | None:
        node = root
        best = node.start_mark.line + 1 if node is not None else None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                pair = next(((k, v) for k, v in node.value if getattr(k, "value", None) == part), None)
                if pair is None:
                    return best
                best = pair[0].start_mark.line + 1  # the key's line reads best in an error
                node = pair[1]
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
                best = node.start_mark.line + 1
            else:
                return best
        return best

    return lookup


# Reading a file again to find a line costs nothing on the happy path (only an error asks), but a huge results file
# is not worth composing into nodes just to name a line.
_LINE_LOOKUP_LIMIT = 16 * 1024 * 1024


def file_line_lookup(path: Path) -> LineLookup | None:
    """Lines for a JSON or YAML file we read: JSON is YAML's flow style, so one composer maps a loc to its line in
    either (the file is read and composed only when an error asks for a line)."""
    if path.suffix.lower() not in {".json", ".yaml", ".yml"}:
        return None

    def lookup(loc: Sequence[str | int]) -> int | None:
        try:
            if path.stat().st_size > _LINE_LOOKUP_LIMIT:
                return None
            root = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
        except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
            return None  # the error is still named by file and field; only the line is missing
        return yaml_line_lookup(root)(loc)

    return lookup
