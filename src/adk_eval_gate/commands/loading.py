"""The config and the plan, read once per command.

The config alone is checked first: its errors come before importing the eval-set and criteria machinery
(google-genai, rouge), which takes a while, so rejecting a bad config stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adk_eval_gate.config.loader import Workflow, load_workflow

if TYPE_CHECKING:
    from adk_eval_gate.core.command_files import Fence
    from adk_eval_gate.run.plan import Plan
    from adk_eval_gate.targets.host_pool import AgentHostPool


def load_config(config: str) -> Workflow:
    return load_workflow(config)


def plan_of(workflow: Workflow) -> Plan:
    from adk_eval_gate.github.workflow_commands import input_warning
    from adk_eval_gate.report.template_check import check_report_templates
    from adk_eval_gate.run.plan import plan_for

    plan = plan_for(workflow, checks=(check_report_templates,))
    for warning in plan.warnings:  # keys google-adk / agents-cli ignore: the run goes on as theirs would
        input_warning(warning)
    return plan


def load_plan(config: str, *, hosts: AgentHostPool | None = None, offline: bool = False) -> Plan:
    """`hosts` (a run that may host in-process agents) start the agent host, which imports google-adk, while
    this process validates the config and the eval sets. `offline`: the models played (commands/options.py)."""
    from adk_eval_gate.commands.options import offline_workflow

    if hosts is not None:
        from pathlib import Path

        hosts.start_early(Path(config))
    workflow = offline_workflow(load_config(config), offline)
    if hosts is not None:
        hosts.warm_up(workflow)
    return plan_of(workflow)


def end_pull_request_code(hosts: AgentHostPool, fence: Fence) -> None:
    """After the last of the pull request's code ran, before we write a file the runner reads: the agent hosts end
    (the metric process ended with its run), anything they left running is killed, and the runner's command files
    are checked (core/command_files.py: a change is put back and raised)."""
    try:
        hosts.finish()
    finally:
        fence.close()
