"""The config and the plan, read once per command.

The config alone is checked first: its errors come before importing the eval-set and criteria machinery
(google-genai, rouge), which takes a while, so rejecting a bad config stays instant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from adk_eval_gate.config.loader import Workflow, load_workflow

if TYPE_CHECKING:
    from adk_eval_gate.run.plan import Plan


def load_config(config: str) -> Workflow:
    return load_workflow(config)


def plan_of(workflow: Workflow) -> Plan:
    from adk_eval_gate.report.template_check import check_report_templates
    from adk_eval_gate.run.plan import plan_for

    return plan_for(workflow, checks=(check_report_templates,))


def load_plan(config: str, *, warm_up: bool = False) -> Plan:
    """`warm_up` (a run that may host in-process agents) starts the agent host, which imports google-adk, while
    this process validates the config and the eval sets."""
    if warm_up:
        from pathlib import Path

        from adk_eval_gate.targets.host_start import warm_up_early

        warm_up_early(Path(config))
    workflow = load_config(config)
    if warm_up:
        from adk_eval_gate.targets.agent_host import warm_up as name_agents

        name_agents(workflow)
    return plan_of(workflow)
