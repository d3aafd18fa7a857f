"""`AgentEvaluator`: google-adk 2.13's pytest entry point, same signature and verdicts, on our pipeline.

Swapping `from google.adk.evaluation.agent_evaluator import AgentEvaluator` for
`from adk_eval_gate import AgentEvaluator` keeps a test working: the criteria come from `test_config.json` beside
each eval file (ADK's defaults otherwise), every case runs `num_runs` times, each metric's per-invocation scores
are pooled over the runs and compared with its threshold, a metric without any score is a failure, and a
failure raises `AssertionError` carrying ADK's lines, each followed by the turns that missed: what was expected
and what the agent did.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from adk_eval_gate.config.loader import AgentPlan, Workflow
from adk_eval_gate.config.workflow_settings import Settings
from adk_eval_gate.core.files import load_json
from adk_eval_gate.core.json_types import JsonObject
from adk_eval_gate.criteria.registry import DEFAULT_CRITERIA, REGISTRY, resolve_criteria
from adk_eval_gate.evalsets.adk_eval_schema import SessionInput
from adk_eval_gate.evalsets.eval_config import EvalConfigData, parse_eval_config, sibling_test_config
from adk_eval_gate.evalsets.loader import EvalSetFile, load_eval_set, parse_eval_set
from adk_eval_gate.integrations.adk_failures import failures_for, raise_if_failed, write_csv
from adk_eval_gate.run.plan import AgentRunPlan, EvalSetPlan, Plan
from adk_eval_gate.targets.module import ModuleTarget

NUM_RUNS = 2
TEST_FILE_SUFFIX = ".test.json"
# What ADK accepts in the criteria of a pre-EvalSet (`.test.json` list of turns) file.
LEGACY_CRITERIA = (
    "tool_trajectory_avg_score",
    "response_evaluation_score",
    "response_match_score",
    "safety_v1",
)


def _config_data(eval_config: object, criteria: dict[str, float] | None, source: str) -> EvalConfigData:
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
    criteria = tuple(resolve_criteria(config.criteria, config.source, custom_metrics=config.custom_metric_paths))
    eval_set = EvalSetPlan(file, criteria, config.source, config.user_simulator_config)
    return Plan(workflow, (AgentRunPlan(agent, (eval_set,)),))


@dataclass(frozen=True)
class _Call:
    """One call of `evaluate` / `evaluate_eval_set`, as ADK's signature gives it, for each file it evaluates."""

    agent_module: str
    num_runs: int
    agent_name: str | None
    print_detailed_results: bool
    artifact_service: Any
    output_file: str | None
    history: tuple[Any, str] | None = None


async def _evaluate_file(call: _Call, file: EvalSetFile, config: EvalConfigData) -> None:
    agent_module, num_runs, output_file = call.agent_module, call.num_runs, call.output_file
    from adk_eval_gate.run.pipeline import run_plan_async
    from adk_eval_gate.targets.runner import RunnerSettings

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
        targets=[ModuleTarget(agent_module, call.agent_name, call.artifact_service)],
        settings=RunnerSettings(
            concurrency=settings.concurrency, timeout=settings.timeout, retries=settings.retries, workers=1
        ),
    )
    if call.history is not None:
        from adk_eval_gate.results.eval_history import save_history

        manager, app_name = call.history
        save_history(manager, app_name, results.eval_sets[0], {c.eval_id: c for c in file.eval_set.eval_cases})
    expected = {c.eval_id: list(c.conversation or []) for c in file.eval_set.eval_cases}
    rows: list[dict[str, Any]] | None = [] if output_file else None
    failures = failures_for(results.eval_sets[0], expected, agent_module, call.print_detailed_results, rows)
    if output_file and rows is not None:
        write_csv(rows, output_file)
    raise_if_failed(failures, call.print_detailed_results)


def _test_files(path_or_dir: str) -> list[str]:
    if os.path.isdir(path_or_dir):
        found = [
            os.path.join(root, name)
            for root, _, names in os.walk(path_or_dir)
            for name in names
            if name.endswith(TEST_FILE_SUFFIX)
        ]
        if not found:
            raise ValueError(f"No `*.test.json` eval files found in {path_or_dir}, so there is nothing to evaluate.")
        return found
    return [path_or_dir]


def _with_initial_session(file: EvalSetFile, initial_session: JsonObject) -> EvalSetFile:
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
        eval_set: object,
        criteria: dict[str, float] | None = None,
        eval_config: object = None,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: object = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: object = None,
    ) -> None:
        """Evaluates an agent on an EvalSet object (ADK's or ours) with an EvalConfig (ADK's, or its JSON)."""
        _check_results_manager(app_name, eval_set_results_manager)
        data = eval_set.model_dump(mode="json", exclude_none=True) if hasattr(eval_set, "model_dump") else eval_set
        name = f"<eval set {data.get('eval_set_id', '?') if isinstance(data, dict) else '?'}>"
        if isinstance(data, dict) and not data.get("eval_cases"):
            raise ValueError(
                "No eval cases were evaluated, so there is nothing to report a pass or a failure for. "
                "This happens when `eval_set` has no eval cases."
            )
        file = parse_eval_set(data, Path(name))
        history = _history(app_name, eval_set_results_manager)
        call = _Call(agent_module, num_runs, agent_name, print_detailed_results, artifact_service, output_file, history)
        await _evaluate_file(call, file, _config_data(eval_config, criteria, "<eval_config>"))

    @staticmethod
    async def evaluate(
        agent_module: str,
        eval_dataset_file_path_or_dir: str,
        num_runs: int = NUM_RUNS,
        agent_name: str | None = None,
        initial_session_file: str | None = None,
        print_detailed_results: bool = True,
        artifact_service: object = None,
        output_file: str | None = None,
        app_name: str | None = None,
        eval_set_results_manager: object = None,
    ) -> None:
        """Evaluates the agent in `agent_module` on a file, or on every `*.test.json` under a directory; raises
        AssertionError at the first file with a failure, as ADK does."""
        if num_runs < 1:
            raise ValueError(f"`num_runs` must be at least 1, got {num_runs}.")
        _check_results_manager(app_name, eval_set_results_manager)
        initial_session = load_json(Path(initial_session_file), "initial session file") if initial_session_file else {}
        for test_file in _test_files(str(eval_dataset_file_path_or_dir)):
            config = AgentEvaluator.find_config_for_test_file(test_file)
            file = _with_initial_session(load_eval_set(Path(test_file)), initial_session)
            if file.shape != "evalset":
                for key in config.criteria:
                    if key not in LEGACY_CRITERIA:
                        raise ValueError(f"Invalid criteria key: {key}. Expected one of {list(LEGACY_CRITERIA)}.")
            history = _history(app_name, eval_set_results_manager)
            call = _Call(
                agent_module, num_runs, agent_name, print_detailed_results, artifact_service, output_file, history
            )
            await _evaluate_file(call, file, config)


def _check_results_manager(app_name: str | None, manager: object) -> None:
    if manager is not None and not app_name:
        raise ValueError("app_name is required when eval_set_results_manager is provided.")


def _history(app_name: str | None, manager: object) -> tuple[Any, str] | None:
    return (manager, app_name) if manager is not None and app_name else None
