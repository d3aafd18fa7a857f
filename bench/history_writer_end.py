"""How long a run waits for its history writer when the run never closed the writer's connection (a short run
ending as the writer calls in): the host tells the writer that the run has gone, so it writes what it received
and ends at once. Were that signal lost, the host's backstop (five minutes, targets/host_process.py) would kill
the writer and the run would wait that long. The bundled example with two workers, the loss made on purpose
(as tests/integration/targets/test_runner.py makes it, which checks the history written); printed: the run's
seconds, each repeat. Fails if any run came within a minute of the backstop.

    python bench/history_writer_end.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKSTOP_SECONDS = 300.0


def lose_the_writer() -> None:
    """The run forgets the writer's connection before it releases the host, so it never closes it."""
    from adk_eval_gate.targets import agent_host

    release = agent_host.AgentHost.release

    async def release_losing_the_writer(self: agent_host.AgentHost) -> None:
        if self._historian is not None:
            self._accepted = [w for w in self._accepted if w is not self._historian]
            self._historian = None
        await release(self)

    agent_host.AgentHost.release = release_losing_the_writer


def one_run(folder: Path) -> float:
    from adk_eval_gate.run.pipeline import run_plan
    from adk_eval_gate.run.plan import build_plan

    example = folder / "hello_world"
    shutil.copytree(ROOT / "examples" / "hello_world", example, ignore=shutil.ignore_patterns("__pycache__", ".adk"))
    config = example / "eval-gate.yml"
    text = config.read_text().replace("agent: hello_world}", "agent: hello_world, eval_history: true}")
    config.write_text("run: {workers: 2}\n" + text)
    started = time.monotonic()
    run_plan(build_plan(config), quiet=True)
    return time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    lose_the_writer()
    seconds = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory() as folder:
            seconds.append(one_run(Path(folder)))
        print(f"run {i + 1}: {seconds[-1]:.1f} s (the host's backstop: {BACKSTOP_SECONDS:.0f} s)")
    if max(seconds) >= BACKSTOP_SECONDS - 60:
        print("the run waited for the backstop: the writer did not end on its own", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
