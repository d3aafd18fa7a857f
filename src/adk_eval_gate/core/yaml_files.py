"""Reading YAML defensively: syntax errors with their line, alias bombs, self-referencing anchors and duplicate
keys all become one `InputError` (apart from files.py so that reading JSON or writing files never imports yaml)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from adk_eval_gate.core.clip import masked_lines
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.core.files import has_lone_surrogate, read_text


def load_yaml(path: Path, what: str) -> tuple[Any, yaml.Node | None]:
    """Returns the parsed document and its node tree (used to point errors at line numbers)."""
    return parse_yaml(read_text(path, what), path, what)


def parse_yaml(text: str, path: Path, what: str) -> tuple[Any, yaml.Node | None]:
    """`load_yaml` for text read elsewhere (a file at another commit, from GitHub's API); `path` names it."""
    try:
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            _check_expansion(node, path, what)
            data = loader.construct_document(node) if node is not None else None
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = (exc.problem or exc.context or "syntax error").strip()
        raise InputError(path, None, f"{what} is not valid YAML: {problem}", "fix the YAML syntax", line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(
            path, None, f"{what} is not valid YAML: {masked_lines(str(exc))[0]}", "fix the YAML syntax"
        ) from None
    except RecursionError:
        raise InputError(path, None, f"{what} is nested too deeply", "flatten the YAML") from None
    except ValueError:  # an integer with thousands of digits
        raise InputError(path, None, f"{what} holds a number too long to read", "remove the absurd number") from None
    _reject_duplicate_keys(node, path, what)
    if has_lone_surrogate(data):  # YAML's "\ud800" escape: the same hole as in JSON
        raise InputError(
            path, None, f"{what} holds a lone UTF-16 surrogate escape (\\ud800-\\udfff)", "write the character itself"
        )
    return data, node


# A config is a few hundred nodes; aliases of aliases ("billion laughs") expand exponentially, and an alias
# inside its own anchor never ends: both would hang every later walk of the data.
MAX_YAML_NODES = 100_000


def _check_expansion(root: yaml.Node | None, path: Path, what: str) -> None:
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)] if root is not None else []
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if isinstance(node, yaml.ScalarNode):
            sizes[key] = 1
            continue
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else list(node.value)
        if children_done:
            on_path.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            if sizes[key] > MAX_YAML_NODES:
                raise InputError(
                    path,
                    None,
                    f"{what} expands to more than {MAX_YAML_NODES} values through YAML aliases",
                    "write the values out instead of nesting aliases",
                    line=node.start_mark.line + 1,
                )
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise InputError(
                path,
                None,
                f"{what} has a YAML alias inside its own anchor (an endless value)",
                "remove the self-reference",
                line=node.start_mark.line + 1,
            )
        on_path.add(key)
        stack.append((node, True))
        for child in children:
            if id(child) in on_path:
                raise InputError(
                    path,
                    None,
                    f"{what} has a YAML alias inside its own anchor (an endless value)",
                    "remove the self-reference",
                    line=child.start_mark.line + 1,
                )
            if id(child) not in sizes:
                stack.append((child, False))


def _reject_duplicate_keys(root: yaml.Node | None, path: Path, what: str) -> None:
    """YAML keeps the last of two equal keys without a word; in a gate's config that hides a mistake."""
    stack = [root] if root is not None else []
    visited: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in visited:  # an alias: its anchor was checked
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: dict[object, int] = {}
            for key, value in node.value:
                name = getattr(key, "value", None)
                if isinstance(name, str) and name in seen:
                    raise InputError(
                        path,
                        name,
                        f"appears twice in {what} (lines {seen[name]} and {key.start_mark.line + 1})",
                        "keep one; YAML would silently use the last",
                        line=key.start_mark.line + 1,
                    )
                if isinstance(name, str):
                    seen[name] = key.start_mark.line + 1
                stack.append(value)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
