"""`make demo`: the product's main moments on the bundled example, offline, in under a minute.

A pull request breaks the example agent's tool call (its scripted model stops calling `roll_die`, a one-line
change, as a real regression would be); `adk-eval-gate ci` runs the eval set, compares with the stored baseline
(made the way a default-branch push makes one), writes the comment a reviewer would see and the page, and fails
the gate. Everything goes under out/demo/; the last lines say where each thing is.

    python tools/demo.py [--keep-going]
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "hello_world"
OUT = ROOT / "out" / "demo"
# The one-line regression: the scripted model's rule for "roll an N-sided die" no longer matches, so the agent
# answers without calling its tool.
RULE, BROKEN = r'r"roll an? (\d+)[ -]sided die"', r'r"roll an? (\d+)[ -]sided dice"'


def _cli() -> list[str]:
    script = Path(sys.executable).parent / "adk-eval-gate"
    return [str(script)] if script.exists() else [sys.executable, "-m", "adk_eval_gate"]


def _pull_request(folder: Path) -> None:
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("__pycache__", ".adk", "adk-eval-gate-out"))
    agent = folder / "hello_world" / "agent.py"
    text = agent.read_text(encoding="utf-8")
    if RULE not in text:
        raise SystemExit(f"demo: {agent} no longer has the rule {RULE}; update tools/demo.py")
    agent.write_text(text.replace(RULE, BROKEN), encoding="utf-8")


def _section(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


def main() -> int:
    shutil.rmtree(OUT, ignore_errors=True)
    OUT.mkdir(parents=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INPUT_", "RUNNER_"))}

    _section("1. The config, checked (adk-eval-gate validate)")
    subprocess.run([*_cli(), "validate"], cwd=EXAMPLE, env=env, check=True)

    _section("2. A pull request drops the agent's roll_die call; adk-eval-gate ci gates it")
    checkout = OUT / "pull-request"
    _pull_request(checkout)
    print(f"the change, in {checkout / 'hello_world' / 'agent.py'}:\n  - {RULE}\n  + {BROKEN}", flush=True)
    results = OUT / "adk-eval-gate-out"
    done = subprocess.run(
        [*_cli(), "ci", "--quiet", "--no-comment", "--output-dir", str(results)],
        cwd=checkout,
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    comment = results / "report.md"
    if not comment.is_file():
        print(done.stdout)
        raise SystemExit(f"demo: ci wrote no comment (exit {done.returncode})")

    _section("3. The comment a reviewer sees on the pull request (report.md, first lines)")
    lines = comment.read_text(encoding="utf-8").splitlines()
    print("\n".join(lines[:24]))
    if len(lines) > 24:
        print(f"... ({len(lines) - 24} more lines)")

    _section("4. The verdict")
    verdict = next((line for line in done.stdout.splitlines() if line.startswith("adk-eval-gate:")), "")
    print(f"exit code {done.returncode} ({'the gate failed, as it should' if done.returncode == 1 else 'unexpected'})")
    if verdict:
        print(verdict)

    _section("Where everything is")
    print(f"the comment (markdown, as posted): {comment}")
    print(f"the page (open in a browser):      {results / 'report.html'}   or: adk-eval-gate view {results}")
    print(f"the results and the comparison:    {results / 'results.json'}, {results / 'comparison.json'}")
    print(f"the pull request's checkout:       {checkout}")
    print("the same on your own agent: docs/try-it-offline.md; in CI: the README's quick start")
    return 0 if done.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
