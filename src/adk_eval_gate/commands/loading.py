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


def load_plan(config: str) -> Plan:
    return plan_of(load_config(config))
