"""A replay run of the bundled example (6 cases, `examples/hello_world/replay.yml`) as a user starts it: wall and
CPU seconds of the process from the OS, and what importing google-genai's types alone costs beside it (the schema
eval sets are parsed with), interleaved. Target: the run within 0.5 s wall.

    python bench/replay.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 0.5
EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "hello_world"
GENAI_TYPES = [sys.executable, "-c", "import google.genai.types"]
PYTHON_ALONE = [sys.executable, "-c", "pass"]


def measured(argv: list[str], cwd: Path) -> tuple[float, float]:
    """Wall seconds and CPU seconds (user + system of the process and its reaped children, from wait4)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode not in (0, 1):  # the example's recording holds a failing case: exit 1 is its verdict
        raise SystemExit(f"{argv} exited {child.returncode}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="adk-eval-gate-replay-"))
    command = shutil.which("adk-eval-gate", path=str(Path(sys.executable).parent)) or "adk-eval-gate"
    run = [command, "run", "--config", "replay.yml", "--quiet", "--output", str(out / "results.json")]
    variants = {"replay run, 6 cases": run, "import google.genai.types": GENAI_TYPES, "python -c pass": PYTHON_ALONE}
    samples: dict[str, list[tuple[float, float]]] = {name: [] for name in variants}
    try:
        for _ in range(args.repeat):
            for name, argv in variants.items():  # interleaved: the machine's load drifts alike for all
                samples[name].append(measured(argv, EXAMPLE))
    finally:
        shutil.rmtree(out, ignore_errors=True)
    print(f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}, medians of {args.repeat}")
    print("| | wall s | CPU s |")
    print("|---|---|---|")
    for name, values in samples.items():
        wall, cpu = statistics.median(v[0] for v in values), statistics.median(v[1] for v in values)
        print(f"| {name} | {wall:.2f} (min {min(v[0] for v in values):.2f}) | {cpu:.2f} |")
    wall = statistics.median(v[0] for v in samples["replay run, 6 cases"])
    print(f"replay run: {wall:.2f} s wall (target < {TARGET_SECONDS} s)")
    return 0 if wall < TARGET_SECONDS else 1


if __name__ == "__main__":
    sys.exit(main())
