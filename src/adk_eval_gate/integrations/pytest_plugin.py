"""pytest plugin: `pytest --eval-gate eval-gate.yml` makes every case of the config a test item.

Items are `<config>::<agent>::<eval set>::<case>`, so `-k`, `--junitxml`, IDEs and pytest-xdist work as for any
test. The agents do not run at collection: the first item to run runs every selected case of the session at once
(one bounded pool, like `adk-eval-gate run`), and each item reports its own case. Under pytest-xdist a worker
cannot know which items it will be sent, so each item runs its own case there and xdist supplies the parallelism.
A case that failed or errored fails its item; a not-evaluated case is skipped with its reason, or fails when the
config's `gate.fail_on` lists `not_evaluated`.

Importing this module must stay cheap: the entry point loads it into every pytest run of an environment where
adk-eval-gate is installed, and it does nothing without `--eval-gate`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from _pytest._code.code import TerminalRepr  # repr_failure's return type; pytest does not re-export it

from adk_eval_gate.core.keys import CaseKey

if TYPE_CHECKING:
    from adk_eval_gate.evalsets.adk_eval_schema import Invocation
    from adk_eval_gate.results.results_format import CaseResult, ResultsFile
    from adk_eval_gate.run.plan import Plan

_STATE = "adk_eval_gate_session"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("adk-eval-gate")
    group.addoption(
        "--eval-gate", metavar="CONFIG", help="collect every case of this adk-eval-gate config as a test item"
    )
    group.addoption(
        "--eval-gate-output",
        metavar="PATH",
        help="also write the session's results file here (a worker's id is added under pytest-xdist)",
    )


def pytest_configure(config: pytest.Config) -> None:
    path = config.getoption("eval_gate", None)
    output = config.getoption("eval_gate_output", None)
    if path is None and output is None:
        return
    if path is None:  # an output for no run: a typo in the command line, not a choice
        raise pytest.UsageError("--eval-gate-output: needs --eval-gate CONFIG; add it, or drop --eval-gate-output")
    if not path.strip():
        raise pytest.UsageError("--eval-gate: is an empty path; give the adk-eval-gate config file")
    from adk_eval_gate.core.errors import InputError
    from adk_eval_gate.core.files import check_output_file
    from adk_eval_gate.run.plan import build_plan

    try:
        plan = build_plan(path)
    except InputError as exc:
        raise pytest.UsageError(f"--eval-gate: {exc.render()}") from None
    if output is not None:  # checked now: the session's end is too late to say the path cannot be written
        try:
            check_output_file(output, "--eval-gate-output")
        except InputError as exc:
            raise pytest.UsageError(f"--eval-gate-output: {exc.problem}; {exc.fix}") from None
    config.pluginmanager.register(_Session(config, plan), _STATE)


def _session(config: pytest.Config) -> _Session:
    """The session state pytest_configure registered (pluggy hands plugins back untyped)."""
    state = config.pluginmanager.get_plugin(_STATE)
    if not isinstance(state, _Session):
        raise pytest.UsageError("adk-eval-gate: the plugin was not configured for this session")
    return state


__all__ = ["CaseFailed", "CaseItem", "ConfigFile", "pytest_addoption", "pytest_configure"]


class _Session:
    """The session's plan, and the results of the cases run so far."""

    def __init__(self, config: pytest.Config, plan: Plan) -> None:
        self.config = config
        self.plan = plan
        self.collected = False
        self.results: list[ResultsFile] = []
        self.seconds = 0.0
        self.cases: dict[CaseKey, CaseResult] = {}
        self.expected = {
            CaseKey(a.name, s.eval_set_id, c.eval_id): list(c.conversation or [])
            for a in plan.agents
            for s in a.eval_sets
            for c in s.file.eval_set.eval_cases
        }

    @property
    def config_path(self) -> Path:
        return self.plan.workflow.path.resolve()

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
        if file_path.resolve() == self.config_path and not self.collected:
            self.collected = True
            return ConfigFile.from_parent(parent, path=file_path)
        return None

    @pytest.hookimpl(tryfirst=True)  # before `-k`/`-m` deselect, so our items are selectable like any other
    def pytest_collection_modifyitems(self, session: pytest.Session, items: list[pytest.Item]) -> None:
        if self.collected:
            return
        self.collected = True
        node = ConfigFile.from_parent(session, path=self.config_path)
        items.extend(node.collect_items())

    def case(self, item: CaseItem) -> CaseResult:
        if item.key not in self.cases:
            pending = [i.key for i in item.session.items if isinstance(i, CaseItem) and i.key not in self.cases]
            if hasattr(self.config, "workerinput"):  # a pytest-xdist worker: only loadgroup says what it will get
                same_set = self.config.getoption("dist", None) == "loadgroup"
                keys = {k for k in pending if k[:2] == item.key[:2]} if same_set else {item.key}
            else:
                keys = set(pending)
            self._run(keys)
        return self.cases[item.key]

    def _run(self, keys: set[CaseKey]) -> None:
        import asyncio
        import dataclasses

        from adk_eval_gate.run.pipeline import run_plan_async
        from adk_eval_gate.run.selection import keep_cases
        from adk_eval_gate.run.settings import runner_settings

        started = time.perf_counter()
        plan = keep_cases(self.plan, lambda *key: key in keys)
        # The agents run in pytest's own process: its fixtures and monkeypatches live here, and a pytest-xdist
        # worker holds threads that make forking an agent host unsafe.
        settings = dataclasses.replace(runner_settings(plan), workers=1)
        results = asyncio.run(run_plan_async(plan, quiet=True, settings=settings))
        self.seconds += time.perf_counter() - started
        self.results.append(results)
        for eval_set in results.eval_sets:
            for case in eval_set.cases:
                self.cases[CaseKey(eval_set.agent, eval_set.eval_set_id, case.eval_id)] = case

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.results:
            cases = sum(r.summary.total for r in self.results)
            terminalreporter.write_line(
                f"adk-eval-gate: {cases} case(s) in {len(self.results)} run(s) of the agents, {self.seconds:.1f} s"
            )

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        """Finished cases are written even when the session was cut short."""
        output = self.config.getoption("eval_gate_output", None)
        if not output or not self.results:
            return
        from adk_eval_gate.results.build import write_results
        from adk_eval_gate.run.shards import merge_results

        path = Path(output)
        worker = getattr(self.config, "workerinput", {}).get("workerid")
        if worker:
            path = path.with_name(f"{path.stem}.{worker}{path.suffix}")
        write_results(merge_results([(f"run {i + 1}", r) for i, r in enumerate(self.results)]), path)


class ConfigFile(pytest.File):
    def collect(self) -> list[pytest.Item]:
        return self.collect_items()

    def collect_items(self) -> list[pytest.Item]:
        """Agent and eval set as nested collectors, so node ids and `-k` name them."""
        state = _session(self.config)
        items: list[pytest.Item] = []
        xdist = self.config.pluginmanager.hasplugin("xdist")  # its marker is unknown (strict markers) without it
        for agent in state.plan.agents:
            agent_node = _Group.from_parent(self, name=agent.name)
            for eval_set in agent.eval_sets:
                set_node = _Group.from_parent(agent_node, name=eval_set.eval_set_id)
                for case in eval_set.file.eval_set.eval_cases:
                    item = CaseItem.from_parent(
                        set_node, name=case.eval_id, key=CaseKey(agent.name, eval_set.eval_set_id, case.eval_id)
                    )
                    if xdist:  # `pytest -n auto --dist loadgroup` keeps an eval set on one worker
                        item.add_marker(pytest.mark.xdist_group(f"{agent.name}/{eval_set.eval_set_id}"))
                    items.append(item)
        return items


class _Group(pytest.Collector):
    def collect(self) -> list[Any]:  # items are built by ConfigFile, which knows the plan
        return []


class CaseFailed(AssertionError):
    """A case's failure, shown as its reason and the turns that missed (no traceback into the plugin)."""


class CaseItem(pytest.Item):
    def __init__(self, *, key: CaseKey, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.key = key

    def runtest(self) -> None:
        state = _session(self.config)
        case = state.case(self)
        if case.status == "passed":
            return
        if case.status == "not_evaluated" and "not_evaluated" not in state.plan.workflow.settings.gate.fail_on:
            pytest.skip(f"not evaluated: {case.reason}")
        raise CaseFailed(_explain(case, state.expected.get(self.key, [])))

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str | TerminalRepr:
        if isinstance(excinfo.value, CaseFailed):
            return str(excinfo.value)
        return super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, "::".join(self.key)


def _explain(case: CaseResult, expected: list[Invocation]) -> str:
    from adk_eval_gate.report.adk_details import metric_verdict, missed_turns

    lines = [f"{case.eval_id}: {case.status}" + (f": {case.reason}" if case.reason else "")]
    for name, metric in case.metrics.items():
        if metric.status == "passed":
            continue
        score = "no score" if metric.score is None else f"{metric.score:.4g}"
        lines.append(
            f"{name}: {score} (threshold {metric.threshold:g}, {metric.status})"
            + (f": {metric.reason}" if metric.reason and metric.score is None else "")
        )
        lines.extend(missed_turns(case.eval_id, metric_verdict(case, expected, name)))
    for run in case.runs:
        if run.error:
            lines.append(f"run {run.run + 1} errored: {run.error}")
    from adk_eval_gate.core.redaction import redact

    return redact("\n".join(lines))  # pytest prints it and writes it to --junitxml: no secret the agent echoed
