"""`AgentEvaluator`: google-adk 2.13's pytest entry point, same signature and verdicts, on our pipeline.

Swapping `from google.adk.evaluation.agent_evaluator import AgentEvaluator` for
`from adk_eval_gate import AgentEvaluator` keeps a test working: the criteria come from `test_config.json` beside
each eval file (ADK's defaults otherwise), every case runs `num_runs` times, each metric's per-invocation scores
are pooled over the runs and compared with its threshold, a metric without any score is a failure, and a
failure raises `AssertionError` carrying ADK's lines, each followed by the turns that missed: what was expected
and what the agent did.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config.loader import AgentPlan, Workflow
from .config.models import Settings
from .criteria import efficiency
from .criteria.registry import DEFAULT_CRITERIA, REGISTRY, resolve_criteria
from .evalsets.eval_config import EvalConfigData, parse_eval_config, sibling_test_config
from .evalsets.loader import EvalSetFile, load_eval_set, parse_eval_set
from .evalsets.models import Invocation, SessionInput, content_text, tool_calls
from .files import append_text, load_json
from .plan import AgentRunPlan, EvalSetPlan, Plan
from .results.models import CaseResult, EvalSetResult
from .targets.adk import AdkTarget

NUM_RUNS = 2
TEST_FILE_SUFFIX = ".test.json"
# What ADK accepts in the criteria of a pre-EvalSet (`.test.json` list of turns) file.
LEGACY_CRITERIA = (
    "tool_trajectory_avg_score",
    "response_evaluation_score",
    "response_match_score",
    "safety_v1",
)
_CELL = 25  # ADK's `maxcolwidths`
_DIFF_TEXT = 400


class _ModuleTarget(AdkTarget):
    """The agent as AgentEvaluator finds it: an importable module name, not a folder or `module:attribute`."""

    def __init__(self, agent_module: str, agent_name: str | None, artifact_service: Any = None) -> None:
        super().__init__(agent_module, Path.cwd())
        self._agent_name = agent_name
        self._artifact_service = artifact_service

    def preload(self) -> None:
        os.environ.setdefault("ADK_CAPTURE_MESSAGE_CONTENT_IN_SPANS", "false")

    def host_agent(self) -> None:
        return None  # runs in the test's own process, where its fixtures and monkeypatches live

    async def start(self) -> None:
        await super().start()
        if self._artifact_service is not None:
            self._artifacts = self._artifact_service

    async def _load(self) -> tuple[Any, Any]:
        return await agent_for_eval(self._reference, self._agent_name)


async def agent_for_eval(module_name: str, agent_name: str | None = None) -> tuple[Any, Any]:
    """(App or None, agent to evaluate), resolved exactly as ADK 2.13's `AgentEvaluator._get_agent_for_eval`."""
    from google.adk.apps.app import App

    module = importlib.import_module(module_name)
    if not (hasattr(module, "agent") or module_name.endswith(".agent")):
        raise ValueError(
            f"Module {module_name} does not have a member named `agent` or the name should endwith `.agent`."
        )
    holder = getattr(module, "agent", module)
    root = getattr(holder, "root_agent", None)
    if root is None:
        factory = getattr(holder, "get_agent_async", None)
        if not callable(factory):
            raise ValueError(f"Module {module_name} does not have a root_agent or get_agent_async method.")
        root, _ = await factory()
    app = getattr(holder, "app", None)
    app = app if isinstance(app, App) else None
    if agent_name:
        found = root.find_agent(agent_name)
        if found is None:
            raise ValueError(f"Sub-Agent {agent_name!r} not found.")
        root = found
    return app, root


@dataclass(frozen=True)
class _Turn:
    """One invocation of one run, as ADK's detail table and CSV show it."""

    run: int
    index: int
    status: str
    score: float | None
    expected: Invocation | None
    actual: Invocation | None

    def cells(self) -> dict[str, str]:
        prompt = (self.expected or self.actual).user_content if (self.expected or self.actual) else None
        return {
            "prompt": content_text(prompt),
            "expected_response": content_text(self.expected.final_response) if self.expected else "",
            "actual_response": content_text(self.actual.final_response) if self.actual else "",
            "expected_tool_calls": _calls(self.expected),
            "actual_tool_calls": _calls(self.actual),
        }


def _calls(invocation: Invocation | None) -> str:
    if invocation is None:
        return ""
    return "\n".join(
        f"{c.name}({json.dumps(c.args, sort_keys=True, ensure_ascii=False)})"
        for c in tool_calls(invocation.intermediate_data)
    )


@dataclass(frozen=True)
class _MetricVerdict:
    name: str
    threshold: float
    score: float | None
    status: str  # passed | failed | not_evaluated
    turns: tuple[_Turn, ...]


def _turns(case: CaseResult, expected: list[Invocation], metric_name: str) -> list[_Turn]:
    metric = case.metrics[metric_name]
    turns = []
    for run_metric in metric.runs:
        if run_metric is None:
            continue
        record = next((r for r in case.runs if r.run == run_metric.run), None)
        actual = [Invocation.model_validate(i) for i in (record.actual_invocations or [])] if record else []
        for index, result in enumerate(run_metric.per_invocation):
            turns.append(
                _Turn(
                    run_metric.run,
                    index,
                    result.status,
                    result.score,
                    expected[index] if index < len(expected) else None,
                    actual[index] if index < len(actual) else None,
                )
            )
    return turns


def metric_verdict(case: CaseResult, expected: list[Invocation], metric_name: str) -> _MetricVerdict:
    """ADK's rule: the mean of every run's non-None per-invocation scores against the threshold; the direction
    comes from the per-invocation verdicts when they all agree (lower-is-better custom metrics), else `>=`."""
    metric = case.metrics[metric_name]
    turns = _turns(case, expected, metric_name)
    scores = [t.score for t in turns if t.score is not None]
    overall = statistics.mean(scores) if scores else None
    directions = {
        (t.score > metric.threshold) == (t.status == "passed")
        for t in turns
        if t.score is not None and t.score != metric.threshold and t.status in ("passed", "failed")
    }
    higher_is_better = directions.pop() if len(directions) == 1 else True
    if overall is None:
        status = "not_evaluated"
    elif overall >= metric.threshold if higher_is_better else overall <= metric.threshold:
        status = "passed"
    else:
        status = "failed"
    return _MetricVerdict(metric_name, metric.threshold, overall, status, tuple(turns))


def _printable(text: str) -> str:
    """One line without control characters: an agent's output must not drive the user's terminal."""
    return "".join(ch for ch in " ".join(text.split()) if ch.isprintable())


def _short(text: str) -> str:
    text = _printable(text)
    return text if len(text) <= _DIFF_TEXT else text[: _DIFF_TEXT - 1] + "…"


def missed_turns(eval_id: str, verdict: _MetricVerdict) -> list[str]:
    """The turns that missed, expected beside actual, so a failing test says what to look at. Runs that missed
    a turn the same way share one entry."""
    entries: dict[tuple, list[int]] = {}
    for turn in verdict.turns:
        if turn.status == "passed":
            continue
        cells = turn.cells()
        lines = []
        for label, key in (("tool calls", "tool_calls"), ("response", "response")):
            expected, actual = cells[f"expected_{key}"], cells[f"actual_{key}"]
            if turn.expected is not None and expected != actual:
                lines += [
                    f"    - expected {label}: {_short(expected) or '(none)'}",
                    f"    + actual {label}:   {_short(actual) or '(none)'}",
                ]
        score = "no score" if turn.score is None else f"score {turn.score:.4g}"
        entries.setdefault((turn.index, score, _short(cells["prompt"]), tuple(lines)), []).append(
            turn.run + 1
        )
    out = []
    for (index, score, prompt, lines), runs in entries.items():
        which = f"run {runs[0]}" if len(runs) == 1 else f"runs {', '.join(map(str, runs))}"
        out += [f"  case {eval_id!r}, turn {index + 1}, {which} ({score}): {prompt}", *lines]
    return out


def _grid(rows: list[dict[str, Any]]) -> str:
    """ADK prints `tabulate(..., tablefmt="grid", maxcolwidths=25)`; a plain grid with the same columns."""
    if not rows:
        return ""
    headers = list(rows[0])
    cells = [[_clip(str(row[h] if row[h] is not None else "")) for h in headers] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(headers)]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values: list[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    return "\n".join(
        [rule, line(headers), rule.replace("-", "="), *(x for r in cells for x in (line(r), rule))]
    )


def _clip(text: str) -> str:
    text = _printable(text)
    return text if len(text) <= _CELL else text[: _CELL - 1] + "…"


_ADK_STATUS = {
    "passed": "EvalStatus.PASSED",
    "failed": "EvalStatus.FAILED",
    "not_evaluated": "EvalStatus.NOT_EVALUATED",
}


def _print_details(verdict: _MetricVerdict) -> None:
    print(
        f"Summary: `{_ADK_STATUS[verdict.status]}` for Metric: `{verdict.name}`. "
        f"Expected threshold: `{verdict.threshold}`, actual value: `{verdict.score}`."
    )
    rows = [
        {
            "eval_status": _ADK_STATUS.get(t.status, t.status),
            "score": t.score,
            "threshold": verdict.threshold,
            **t.cells(),
        }
        for t in verdict.turns
    ]
    print(_grid(rows))
    print("\n\n")


def _print_efficiency(case: CaseResult) -> None:
    """ADK prints its informational metrics too: every run's per-invocation values, pooled, and no threshold."""
    runs = [
        [Invocation.model_validate(i) for i in r.actual_invocations]
        for r in case.runs
        if r.actual_invocations
    ]
    for name in efficiency.NAMES:
        values = [v for run in runs for v in efficiency.run_value(name, run).per_invocation if v is not None]
        overall = statistics.mean(values) if values else None
        print(
            f"Summary: `EvalStatus.INFORMATIONAL` for Metric: `{name}`. Expected threshold: `None`, "
            f"actual value: `{overall}`."
        )


def print_case_details(eval_set_id: str, case: CaseResult, expected: list[Invocation]) -> None:
    """`adk eval --print_detailed_results`: every metric's summary and per-invocation grid for one case."""
    print(f"Eval set `{eval_set_id}`, case `{case.eval_id}`: {case.status}")
    for name in case.metrics:
        _print_details(metric_verdict(case, expected, name))
    _print_efficiency(case)


def _csv_rows(eval_set_id: str, eval_id: str, verdict: _MetricVerdict) -> list[dict[str, Any]]:
    return [
        {
            "eval_set_id": eval_set_id,
            "eval_id": eval_id,
            "metric_name": verdict.name,
            "threshold": verdict.threshold,
            "score": t.score,
            "eval_status": t.status.upper(),
            **t.cells(),
        }
        for t in verdict.turns
    ]


def _write_csv(rows: list[dict[str, Any]], output_file: str) -> None:
    """Appends, writing the header only for a new file (ADK's `to_csv(mode="a")`)."""
    if not rows:
        return
    path = Path(output_file)
    path.parent.mkdir(parents=True, exist_ok=True)
    buffer = io.StringIO(newline="")
    writer = csv.DictWriter(buffer, fieldnames=list(rows[0]))
    if not path.is_file():
        writer.writeheader()
    writer.writerows(rows)
    append_text(path, buffer.getvalue())  # masks any secret the agent echoed, like every file we write


def failures_for(
    result: EvalSetResult,
    expected: dict[str, list[Invocation]],
    agent_module: str,
    print_detailed_results: bool = False,
    csv_rows: list[dict[str, Any]] | None = None,
) -> list[str]:
    """ADK's failure lines for one eval set's results, each followed by the turns behind it."""
    failures: list[str] = []
    for case in result.cases:
        for name in case.metrics:
            if case.metrics[name].status == "error":
                # A judge or metric that broke in any run is no pass, whatever the other runs' turns say.
                failures.append(f"{name} for {agent_module} could not be scored: {case.metrics[name].reason}")
                continue
            verdict = metric_verdict(case, expected.get(case.eval_id, []), name)
            if not verdict.turns:
                continue  # every run errored: reported below, as ADK reports a run without metric results
            if csv_rows is not None:
                csv_rows.extend(_csv_rows(result.eval_set_id, case.eval_id, verdict))
            if verdict.status == "not_evaluated":
                reason = case.metrics[name].reason
                failures.append(
                    f"{name} for {agent_module} was not evaluated. No score was produced, so the threshold "
                    f"of {verdict.threshold} was never checked and this is not a score regression."
                    + (f" Why: {reason}" if reason else " See the logs for why the metric could not run.")
                )
                failures.extend(missed_turns(case.eval_id, verdict))
            elif verdict.status == "failed":
                failures.append(
                    f"{name} for {agent_module} Failed. Expected {verdict.threshold}, but got {verdict.score}."
                )
                failures.extend(missed_turns(case.eval_id, verdict))
            if print_detailed_results:
                _print_details(verdict)
        if print_detailed_results:
            _print_efficiency(case)
        errored = [r for r in case.runs if r.error]
        if errored:
            failures.append(
                f"{case.eval_id} for {agent_module} Failed. {len(errored)} of {len(case.runs)} runs were "
                f"recorded as failed without producing any metric results. First error: {errored[0].error}"
            )
    return failures


def _raise_if_failed(failures: list[str], print_detailed_results: bool) -> None:
    message = "Following are all the test failures."
    if not print_detailed_results:
        message += (
            " If you looking to get more details on the failures, then please re-run this test with "
            "`print_detailed_results` set to `True`."
        )
    # Raised, not asserted: `python -O` would drop an assert and pass a failing agent, and pytest rewrites the
    # asserts of a plugin's modules (ours is one), which would change ADK's message.
    if failures:
        raise AssertionError(message + "\n" + "\n".join(failures))


def _config_data(eval_config: Any, criteria: dict[str, float] | None, source: str) -> EvalConfigData:
    if criteria:
        return EvalConfigData(criteria=dict(criteria), source=source)
    if eval_config is None:
        raise ValueError("`eval_config` is required.")
    if hasattr(eval_config, "model_dump"):  # ADK's EvalConfig: what the user set, in its JSON spelling
        eval_config = eval_config.model_dump(mode="json", exclude_unset=True)
    return parse_eval_config(eval_config, Path(source), set(REGISTRY))


def _plan(agent_module: str, file: EvalSetFile, config: EvalConfigData, num_runs: int) -> Plan:
    settings = Settings.model_validate(
        {
            "run": {"workers": 1},  # in the test's own process, where its fixtures and monkeypatches live
            # ADK asks the judge every time; a test must not write a cache into the repo
            "judge": {"cache": None},
            "agents": [
                {
                    "name": "agent",
                    # ADK's AgentEvaluator keeps history only through an explicit eval_set_results_manager
                    "target": {"kind": "adk", "agent": agent_module, "eval_history": False},
                    "evalsets": [str(file.path)],
                    "num_runs": num_runs,
                }
            ],
        }
    )
    agent = AgentPlan(0, settings.agents[0], (file.path,), None, ())
    workflow = Workflow(Path.cwd() / "AgentEvaluator", Path.cwd(), settings, (agent,), lambda loc: None)
    criteria = tuple(
        resolve_criteria(config.criteria, config.source, custom_metrics=config.custom_metric_paths)
    )
    eval_set = EvalSetPlan(file, criteria, config.source, config.user_simulator_config)
    return Plan(workflow, (AgentRunPlan(agent, (eval_set,)),))


async def _evaluate_file(
    agent_module: str,
    file: EvalSetFile,
    config: EvalConfigData,
    *,
    num_runs: int,
    agent_name: str | None,
    print_detailed_results: bool,
    artifact_service: Any,
    output_file: str | None,
    history: tuple[Any, str] | None = None,
) -> None:
    from .pipeline import run_plan_async
    from .targets.runner import RunnerSettings

    if num_runs < 1:
        raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
    if not file.eval_set.eval_cases:
        raise ValueError(
            "No eval cases were evaluated, so there is nothing to report a pass or a failure for. "
            "This happens when `eval_set` has no eval cases."
        )
    plan = _plan(agent_module, file, config, num_runs)
    settings = plan.workflow.settings.run
    results = await run_plan_async(
        plan,
        quiet=True,
        targets=[_ModuleTarget(agent_module, agent_name, artifact_service)],
        settings=RunnerSettings(
            concurrency=settings.concurrency, timeout=settings.timeout, retries=settings.retries, workers=1
        ),
    )
    if history is not None:
        from .targets.eval_history import save_history

        manager, app_name = history
        save_history(
            manager, app_name, results.eval_sets[0], {c.eval_id: c for c in file.eval_set.eval_cases}
        )
    expected = {c.eval_id: list(c.conversation or []) for c in file.eval_set.eval_cases}
    rows: list[dict[str, Any]] | None = [] if output_file else None
    failures = failures_for(results.eval_sets[0], expected, agent_module, print_detailed_results, rows)
    if output_file and rows is not None:
        _write_csv(rows, output_file)
    _raise_if_failed(failures, print_detailed_results)


def _test_files(path_or_dir: str) -> list[str]:
    if os.path.isdir(path_or_dir):
        found = [
            os.path.join(root, name)
            for root, _, names in os.walk(path_or_dir)
            for name in names
            if name.endswith(TEST_FILE_SUFFIX)
        ]
        if not found:
            raise ValueError(
                f"No `*.test.json` eval files found in {path_or_dir}, so there is nothing to evaluate."
            )
        return found
    return [path_or_dir]


def _with_initial_session(file: EvalSetFile, initial_session: dict[str, Any]) -> EvalSetFile:
    """ADK applies an initial session file only to pre-EvalSet files, and refuses it for an EvalSet file."""
    if not initial_session:
        return file
    if file.shape == "evalset":
        raise AssertionError(
            "Initial session should be specified as a part of EvalSet file. Explicit initial "
            "session is only needed, when specifying data in the older schema."
        )
    session = SessionInput(
        app_name=initial_session.get("app_name", ""),
        user_id=initial_session.get("user_id", ""),
        state=initial_session.get("state", {}),
    )
    cases = [c.model_copy(update={"session_input": session}) for c in file.eval_set.eval_cases]
    return EvalSetFile(file.path, file.eval_set.model_copy(update={"eval_cases": cases}), file.shape)


class AgentEvaluator:
    """An evaluator for agents, mainly for test cases (google-adk 2.13's API)."""

    @staticmethod
    def find_config_for_test_file(test_file: str) -> EvalConfigData:
        """The `test_config.json` beside the test file, or ADK's defaults."""
        path = sibling_test_config(Path(test_file))
        if path is None:
            return EvalConfigData(criteria=dict(DEFAULT_CRITERIA), source="default")
        return parse_eval_config(load_json(path, "eval config"), path, set(REGISTRY))

    @staticmethod
    async def evaluate_eval_set(
        agent_module: str,
        eval_set: Any,
        criteria: dict[str, float] | None = None,
        eval_config: Any = None,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: Any = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: Any = None,
    ) -> None:
        """Evaluates an agent on an EvalSet object (ADK's or ours) with an EvalConfig (ADK's, or its JSON)."""
        _check_results_manager(app_name, eval_set_results_manager)
        data = (
            eval_set.model_dump(mode="json", exclude_none=True)
            if hasattr(eval_set, "model_dump")
            else eval_set
        )
        name = f"<eval set {data.get('eval_set_id', '?') if isinstance(data, dict) else '?'}>"
        if isinstance(data, dict) and not data.get("eval_cases"):
            raise ValueError(
                "No eval cases were evaluated, so there is nothing to report a pass or a failure for. "
                "This happens when `eval_set` has no eval cases."
            )
        file = parse_eval_set(data, Path(name))
        await _evaluate_file(
            agent_module,
            file,
            _config_data(eval_config, criteria, "<eval_config>"),
            num_runs=num_runs,
            agent_name=agent_name,
            print_detailed_results=print_detailed_results,
            artifact_service=artifact_service,
            output_file=output_file,
            history=_history(app_name, eval_set_results_manager),
        )

    @staticmethod
    async def evaluate(
        agent_module: str,
        eval_dataset_file_path_or_dir: str,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        initial_session_file: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: Any = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: Any = None,
    ) -> None:
        """Evaluates the agent in `agent_module` on a file, or on every `*.test.json` under a directory; raises
        AssertionError at the first file with a failure, as ADK does."""
        if num_runs < 1:
            raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
        _check_results_manager(app_name, eval_set_results_manager)
        initial_session = (
            load_json(Path(initial_session_file), "initial session file") if initial_session_file else {}
        )
        for test_file in _test_files(str(eval_dataset_file_path_or_dir)):
            config = AgentEvaluator.find_config_for_test_file(test_file)
            file = _with_initial_session(load_eval_set(Path(test_file)), initial_session)
            if file.shape != "evalset":
                for key in config.criteria:
                    if key not in LEGACY_CRITERIA:
                        raise ValueError(
                            f"Invalid criteria key: {key}. Expected one of {list(LEGACY_CRITERIA)}."
                        )
            await _evaluate_file(
                agent_module,
                file,
                config,
                num_runs=num_runs,
                agent_name=agent_name,
                print_detailed_results=print_detailed_results,
                artifact_service=artifact_service,
                output_file=output_file,
                history=_history(app_name, eval_set_results_manager),
            )


def _check_results_manager(app_name: str | None, manager: Any) -> None:
    if manager is not None and not app_name:
        raise ValueError("app_name is required when eval_set_results_manager is provided.")


def _history(app_name: str | None, manager: Any) -> tuple[Any, str] | None:
    return (manager, app_name) if manager is not None and app_name else None
