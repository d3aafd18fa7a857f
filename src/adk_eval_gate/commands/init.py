"""`init`: write eval-gate.yml and a GitHub workflow for the ADK agents and eval files found here."""

from __future__ import annotations

import argparse


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "init", help="write eval-gate.yml and a GitHub workflow for this repository's ADK agents"
    )
    parser.add_argument("--dir", default=".", help="the repository root (default: here)")
    parser.add_argument("--branch", help="the default branch the workflow stores baselines from (default: git's)")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    import os
    from pathlib import Path

    from adk_eval_gate.commands.gitignore import add_ignores
    from adk_eval_gate.commands.scaffold import init
    from adk_eval_gate.targets.model_credentials import has_gemini_credentials

    result = init(Path(args.dir), branch=args.branch)
    print(result.summary())
    if ignored := add_ignores(Path(args.dir)):  # a local run must leave `git status` clean
        print(f"added to .gitignore: {' '.join(ignored)}")
    print(next_steps(result.branch, has_key=has_gemini_credentials(os.environ)))
    return 0


def next_steps(branch: str, has_key: bool = True) -> str:
    """What init cannot do for the user: secrets, token permissions, the first baseline. Without a key here the
    first run it suggests is `ci --offline` (config/offline.py), which needs none."""
    from adk_eval_gate.config.offline import OFFLINE_COMMAND

    try_it = (
        [
            "  3. Try it here: adk-eval-gate validate && adk-eval-gate ci   (the comment and the page go to "
            "adk-eval-gate-out/;",
            "     adk-eval-gate view opens the page; no key at hand: docs/try-it-offline.md)",
        ]
        if has_key
        else [
            f"  3. Try it here, with no key: adk-eval-gate validate && {OFFLINE_COMMAND}   (the model is played from",
            "     the eval set's expected turns: your tools, wiring and the scoring run for real, not the model;",
            "     with GOOGLE_API_KEY set, adk-eval-gate ci runs the model; adk-eval-gate view opens the page)",
        ]
    )
    return "\n".join(
        [
            "next steps:",
            "  1. Add the repository secret GOOGLE_API_KEY (Settings > Secrets and variables > Actions) if the agent "
            "or an",
            "     LLM-judged criterion calls Gemini; for Vertex AI set GOOGLE_GENAI_USE_VERTEXAI, "
            "GOOGLE_CLOUD_PROJECT and",
            "     GOOGLE_CLOUD_LOCATION in the workflow's env instead.",
            "  2. The workflow asks for contents: read, pull-requests: write and actions: read; if your organisation "
            "limits",
            "     GITHUB_TOKEN, allow these (Settings > Actions > General > Workflow permissions).",
            *try_it,
            f"  4. Commit both files and push to {branch}: that run stores the first baseline; pull requests compare "
            "with it.",
        ]
    )
