"""agents-cli's eval_config.yaml read with its rules (through a workflow, as users give it), bad ones refused in
one line naming file, field and line; our list of predefined metrics held equal to the SDK's."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from adk_eval_gate.core.errors import InputError
from adk_eval_gate.evalsets.agents_cli_config import PREDEFINED_METRICS, resolve_predefined
from adk_eval_gate.run.plan import build_plan

DATASET = {"eval_cases": [{"eval_case_id": "a", "prompt": {"parts": [{"text": "hi"}]}}]}
M = "metrics_to_run: [m]\ncustom_metrics:\n  - name: m\n"  # one custom metric; each test adds its keys
GOOD = """\
metrics_to_run: [inline_metric, file_metric, general_quality]
custom_metrics:
  - name: inline_metric
    custom_function: |
      def evaluate(instance):
          return 1
  - name: file_metric
    custom_function_file: metrics/score.py
  - name: unused
    prompt_template: "Rate {response}"
    judge_model: gemini-2.5-flash
    judge_model_sampling_count: 4
"""


def _project(tmp_path: Path, config: str | None = GOOD, agent_extra: str = "", config_name="eval_config.yaml") -> Path:
    (tmp_path / "tests/eval/datasets").mkdir(parents=True)
    (tmp_path / "tests/eval/metrics").mkdir()
    (tmp_path / "tests/eval/metrics/score.py").write_text("def evaluate(instance):\n    return {'score': 0.5}\n")
    (tmp_path / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(DATASET))
    if config is not None:
        (tmp_path / "tests/eval" / config_name).write_text(config)
    (tmp_path / "app").mkdir()
    (tmp_path / "app/__init__.py").write_text("")
    workflow = tmp_path / "eval-gate.yml"
    workflow.write_text(
        textwrap.dedent(
            """\
            agents:
              - name: app
                target: {kind: adk, agent: app}
                evalsets: [tests/eval/datasets/*-dataset.json]
            """
        )
        + textwrap.indent(agent_extra, "    ")
    )
    return workflow


def _error(workflow: Path) -> str:
    with pytest.raises(InputError) as caught:
        build_plan(workflow)
    message = caught.value.render()
    assert "\n" not in message
    return message


def test_agents_cli_default_config_is_found_and_read_in_order(tmp_path):
    plan = build_plan(_project(tmp_path))
    eval_set = plan.agents[0].eval_sets[0]
    assert [c.name for c in eval_set.criteria] == ["inline_metric", "file_metric", "general_quality"]
    assert eval_set.criteria_source == "tests/eval/eval_config.yaml"
    assert [c.spec.summary for c in eval_set.criteria] == [
        "agents-cli code metric (inline)",
        "agents-cli code metric (score.py)",
        "agents-cli predefined metric",
    ]
    assert all(not c.options.has_threshold for c in eval_set.criteria)


def test_thresholds_turn_scores_into_pass_fail(tmp_path):
    workflow = _project(
        tmp_path, agent_extra="eval_config: tests/eval/eval_config.yaml\nthresholds: {file_metric: 3.5}\n"
    )
    criteria = {c.name: c for c in build_plan(workflow).agents[0].eval_sets[0].criteria}
    assert criteria["file_metric"].options.has_threshold and criteria["file_metric"].threshold == 3.5
    assert not criteria["inline_metric"].options.has_threshold


def test_metric_kinds_follow_agents_cli(tmp_path):
    config = (
        "metrics_to_run: [coherence, groundedness, exact_match, rouge_l_sum, safety_v3, remote, judge]\n"
        "custom_metrics:\n  - name: remote\n    remote_custom_function: 'def evaluate(i): return 1'\n"
        "  - name: judge\n    prompt_template: 'Rate {response}'\n  - name: exact_match\n  - name: rouge_l_sum\n"
    )
    criteria = build_plan(_project(tmp_path, config)).agents[0].eval_sets[0].criteria
    assert [c.spec.summary.split(" (")[0] for c in criteria] == [
        "agents-cli predefined metric",  # the SDK downloads coherence's definition: an LLM metric
        "agents-cli predefined metric",
        "agents-cli predefined metric",
        "agents-cli predefined metric",
        "agents-cli predefined metric",
        "agents-cli remote code metric",
        "agents-cli prompt template metric",
    ]


def test_json_config_is_accepted_too(tmp_path):
    config = json.dumps(
        {"metrics_to_run": ["m"], "custom_metrics": [{"name": "m", "custom_function": "evaluate = len"}]}
    )
    workflow = _project(tmp_path, config, "eval_config: tests/eval/eval_config.json\n", "eval_config.json")
    assert [c.name for c in build_plan(workflow).agents[0].eval_sets[0].criteria] == ["m"]


@pytest.mark.parametrize(
    ("config", "where", "words"),
    [
        ("metrics_to_run: []\n", "metrics_to_run", "no metric would run"),
        ("metrics_to_run: [general_qualty]\n", "metrics_to_run[0]", "did you mean `general_quality`"),
        ("metrics_to_run: [exact_match]\n", "metrics_to_run[0]", "- name: exact_match"),
        (
            M + "    custom_fuction: x\n",
            "custom_metrics[0].custom_fuction",
            "custom_function",
        ),
        (M, "custom_metrics[0]", "has no custom_function"),
        (
            M + "    custom_function: 'def evaluate(:'\n",
            "custom_metrics[0].custom_function",
            "does not compile",
        ),
        (
            M + "    custom_function: 'x = 1'\n",
            "custom_metrics[0].custom_function",
            "no `evaluate`",
        ),
        (
            M + "    custom_function_file: nope.py\n",
            "custom_metrics[0].custom_function_file",
            "does not exist",
        ),
        (
            M + "    custom_function: 'evaluate = len'\n    custom_function_file: metrics/score.py\n",
            "custom_metrics[0].custom_function_file",
            "both given",
        ),
        (
            M + "    custom_function: 'evaluate = len'\n    execution: cloud\n",
            "custom_metrics[0].execution",
            "",
        ),
        (
            M + "    prompt_template: x\n    judge_model_sampling_count: 40\n",
            "custom_metrics[0].judge_model_sampling_count",
            "",
        ),
        (
            M + "    prompt_template: x\n    rubric_group_name: g\n",
            "custom_metrics[0].rubric_group_name",
            "not supported",
        ),
        (
            "metrics_to_run: [safety_v1]\ncustom_metrics:\n  - name: safety_v1\n    prompt_template: x\n",
            "custom_metrics[0].name",
            "reserved",
        ),
        (
            "metrics_to_run: [m, m]\ncustom_metrics:\n  - name: m\n    prompt_template: x\n",
            "metrics_to_run[1]",
            "listed twice",
        ),
        ("- metrics_to_run\n", None, "expected a mapping"),
        ("metrics_to_run: [a\n", None, "not valid YAML"),
    ],
)
def test_bad_configs_name_file_field_and_line(tmp_path, config, where, words):
    message = _error(_project(tmp_path, config))
    assert message.startswith("tests/eval/eval_config.yaml:")
    if where:
        assert f": {where}: " in message
        assert message.split(":")[1].isdigit()  # the line of the field
    assert words in message


def test_threshold_for_an_unknown_metric_is_refused_in_the_workflow(tmp_path):
    message = _error(_project(tmp_path, agent_extra="thresholds: {inline_metrc: 0.5}\n"))
    assert "eval-gate.yml:" in message and "agents[0].thresholds.inline_metrc" in message
    assert "did you mean `inline_metric`" in message


def test_threshold_must_be_a_number(tmp_path):
    message = _error(_project(tmp_path, agent_extra="thresholds: {inline_metric: high}\n"))
    assert "agents[0].thresholds.inline_metric: 'high' is not a threshold" in message


def test_a_dataset_without_config_says_where_it_looked(tmp_path):
    message = _error(_project(tmp_path, None))
    assert "agents[0].eval_config" in message and "tests/eval/eval_config.yaml does not exist" in message


def test_thresholds_without_an_agents_cli_config_are_refused(tmp_path):
    message = _error(_project(tmp_path, agent_extra="criteria: {response_match_score: 0.5}\nthresholds: {x: 1}\n"))
    assert "agents[0].thresholds" in message and "agents-cli metrics only" in message


def test_adk_criteria_also_score_agents_cli_datasets(tmp_path):
    workflow = _project(tmp_path, agent_extra="criteria: {response_match_score: 0.5}\n")
    assert [c.name for c in build_plan(workflow).agents[0].eval_sets[0].criteria] == ["response_match_score"]


def test_predefined_metrics_are_the_sdks():
    from agentplatform._genai._evals_constant import SUPPORTED_PREDEFINED_METRICS

    assert set(SUPPORTED_PREDEFINED_METRICS) == PREDEFINED_METRICS
    assert resolve_predefined("general_quality") == "general_quality_v2"
    assert resolve_predefined("safety") == "safety_v3" and resolve_predefined("safety_v1") == "safety_v1"
