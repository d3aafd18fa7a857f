"""What `init` adds to the repository's .gitignore: the folders our runs write, so a local run leaves `git status`
clean. Appended under one comment, never rewritten: lines the user already has (in any form git treats the same)
are not added twice."""

from __future__ import annotations

from pathlib import Path

HEADER = "# adk-eval-gate: run outputs, the judge cache and ADK's local eval history (adk-eval-gate init)"
# The output folder `ci`/`run`/`compare`/`view` share; the judge response cache (judge.cache's default); `.adk/`,
# where ADK (and our runs, as `adk eval` does) keep eval history beside each agent.
PATTERNS = ("adk-eval-gate-out/", ".adk-eval-gate/", ".adk/")


def _same(line: str) -> str:
    """`/out/`, `out/` and `out` ignore the same folder at the root for our purposes: compare without the slashes."""
    return line.strip().strip("/")


def add_ignores(root: Path) -> list[str]:
    """Append the patterns the repository's .gitignore lacks; the ones added (none: nothing written)."""
    path = root / ".gitignore"
    text = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else ""
    have = {_same(line) for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")}
    missing = [pattern for pattern in PATTERNS if _same(pattern) not in have]
    if not missing:
        return []
    lead = "" if not text or text.endswith("\n") else "\n"
    gap = "\n" if text.strip() else ""
    path.write_text(text + lead + gap + "\n".join([HEADER, *missing]) + "\n", encoding="utf-8")
    return missing
