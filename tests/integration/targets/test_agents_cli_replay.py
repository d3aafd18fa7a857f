"""agents-cli's generated traces replayed through a whole run score as the live agent did."""

from __future__ import annotations

import shutil

from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan
from tests.unit.targets.test_agents_cli_replay import EXAMPLE, TRACES


def test_replayed_traces_score_as_the_live_agent(tmp_path):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns("__pycache__"))
    live = run_plan(build_plan(project / "eval-gate.yml"), quiet=True)
    config = project / "replay.yml"
    config.write_text(
        (project / "eval-gate.yml")
        .read_text()
        .replace("{kind: adk, agent: app}", f"{{kind: replay, actuals: ['{TRACES}']}}")
    )
    replayed = run_plan(build_plan(config), quiet=True)

    def scores(results):
        return {c.eval_id: {n: m.score for n, m in c.metrics.items()} for c in results.eval_sets[0].cases}

    assert scores(replayed) == scores(live)
