"""A file google-adk 2.13 or agents-cli 1.11 reads is read here with the same cases and metrics: keys they ignore
are warnings (file, line, what the tool does instead, a did-you-mean), and only what they refuse is refused, in one
line with the line of the field."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from adk_eval_gate.commands.loading import load_config, plan_of
from adk_eval_gate.core.errors import InputError
from adk_eval_gate.criteria.registry import REGISTRY
from adk_eval_gate.evalsets.agents_cli_config import CustomMetricEntry, load_agents_cli_config
from adk_eval_gate.evalsets.agents_cli_config_keys import ENTRY_KEYS
from adk_eval_gate.evalsets.eval_config import load_eval_config
from adk_eval_gate.evalsets.loader import load_eval_set
from adk_eval_gate.run.plan import build_plan

PROMPT = {"role": "user", "parts": [{"text": "Capital of France?"}]}
CLI_CASE = {"eval_case_id": "capital", "prompt": PROMPT}
ADK_CASE = {
    "eval_id": "capital",
    "conversation": [{"user_content": PROMPT, "final_response": {"role": "model", "parts": [{"text": "Paris"}]}}],
}


def _json(tmp_path: Path, name: str, document) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document, indent=2))
    return path


def _yaml(tmp_path: Path, text: str, name: str = "eval_config.yaml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def _line_of(path: Path, text: str) -> int:
    return next(number for number, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _only(warnings, field: str) -> str:
    found = [w.render() for w in warnings if w.field == field]
    assert len(found) == 1, [w.render() for w in warnings]
    assert "\n" not in found[0]
    return found[0]


# --- which reader a file is for -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["basic-dataset.json", "smoke.json", "cases.evalset.json"])
def test_an_agents_cli_dataset_with_an_eval_set_id_is_read_as_agents_cli_reads_it(tmp_path, name):
    """agents-cli reads `eval_cases` and ignores `eval_set_id`; ADK refuses the file (its cases have no eval_id)."""
    path = _json(tmp_path, name, {"eval_set_id": "support", "eval_cases": [CLI_CASE]})
    loaded = load_eval_set(path)
    assert loaded.shape == "agents_cli"
    assert [case.eval_id for case in loaded.eval_set.eval_cases] == ["capital"]
    warning = _only(loaded.warnings, "eval_set_id")
    assert f"{name}:2: eval_set_id: is ignored by agents-cli" in warning


@pytest.mark.parametrize(
    ("name", "document", "shape"),
    [
        # ADK cases in a dataset-named file with an id: ADK reads it, agents-cli refuses it
        ("x-dataset.json", {"eval_set_id": "x", "eval_cases": [ADK_CASE]}, "evalset"),
        # a case both tools can read: the file's name says whose it is, then eval_set_id
        ("x-dataset.json", {"eval_set_id": "x", "eval_cases": [{**ADK_CASE, "prompt": PROMPT}]}, "agents_cli"),
        ("x.evalset.json", {"eval_cases": [{**ADK_CASE, "prompt": PROMPT}], "eval_set_id": "x"}, "evalset"),
        ("x.json", {"eval_set_id": "x", "eval_cases": [{**ADK_CASE, "prompt": PROMPT}]}, "evalset"),
        ("x.json", {"eval_cases": [CLI_CASE]}, "agents_cli"),
    ],
)
def test_the_shape_is_decided_by_the_cases_then_the_name(tmp_path, name, document, shape):
    assert load_eval_set(_json(tmp_path, name, document)).shape == shape


def test_ignored_keys_of_an_adk_eval_set_are_warnings_with_their_lines(tmp_path):
    case = {**ADK_CASE, "tags": ["smoke"], "session_input": {"app_name": "a", "user_id": "u", "locale": "it"}}
    path = _json(tmp_path, "w.evalset.json", {"eval_set_id": "w", "versoin": 2, "eval_cases": [case]})
    loaded = load_eval_set(path)
    assert [c.eval_id for c in loaded.eval_set.eval_cases] == ["capital"]
    assert f"w.evalset.json:{_line_of(path, 'versoin')}: versoin: is not an EvalSet field" in _only(
        loaded.warnings, "versoin"
    )
    assert "ADK keeps it but nothing reads it" in _only(loaded.warnings, "eval_cases[0].tags")
    assert "ADK ignores it" in _only(loaded.warnings, "eval_cases[0].session_input.locale")


def test_a_legacy_initial_state_says_the_session_starts_empty(tmp_path):
    turn = {"query": "hi", "reference": "hello", "mock_tool_output": []}
    path = _json(tmp_path, "old.test.json", [{"name": "c", "data": [turn], "initial_state": {"k": 1}}])
    loaded = load_eval_set(path)
    assert "empty session state" in _only(loaded.warnings, "[0].initial_state")
    assert "initial_session" in _only(loaded.warnings, "[0].initial_state")
    assert "tools run for real" in _only(loaded.warnings, "[0].data[0].mock_tool_output")


def test_a_misspelt_field_of_an_agents_cli_case_gets_a_did_you_mean_other_keys_are_data(tmp_path):
    cases = [{**CLI_CASE, "refrence": {"response": PROMPT}, "context": "kept for custom metrics"}]
    loaded = load_eval_set(_json(tmp_path, "basic-dataset.json", {"eval_cases": cases}))
    assert "did you mean `reference`?" in _only(loaded.warnings, "eval_cases[0].refrence")
    assert [w.field for w in loaded.warnings] == ["eval_cases[0].refrence"]


def test_a_refused_dataset_names_the_line_of_the_field(tmp_path):
    path = _json(tmp_path, "basic-dataset.json", {"eval_cases": [CLI_CASE, {"eval_case_id": "empty"}]})
    with pytest.raises(InputError) as caught:
        load_eval_set(path)
    assert caught.value.render().startswith(f"{path}:{_line_of(path, 'empty') - 1}: eval_cases[1]: ")


# --- ADK's eval_config.json -----------------------------------------------------------------------------------


def test_eval_metrics_beside_criteria_is_a_warning_that_suggests_criteria(tmp_path):
    path = _json(
        tmp_path,
        "eval_config.json",
        {"criteria": {"tool_trajectory_avg_score": 1.0}, "eval_metrics": [{"metric_name": "response_match_score"}]},
    )
    data = load_eval_config(path, set(REGISTRY))
    assert data.criteria == {"tool_trajectory_avg_score": 1.0}  # what ADK's EvalConfig reads
    warning = _only(data.warnings, "eval_metrics")
    assert f"eval_config.json:{_line_of(path, 'eval_metrics')}: " in warning
    assert "did you mean `criteria`?" in warning and "custom_metrics" not in warning


def test_criteria_only_under_eval_metrics_is_refused_on_that_key_with_the_criteria_to_write(tmp_path):
    """ADK reads `criteria={}` and passes every case unscored: a gate that gates nothing is refused."""
    document = {"eval_metrics": [{"metric_name": "response_match_score", "threshold": 0.7}]}
    path = _json(tmp_path, "eval_config.json", document)
    with pytest.raises(InputError) as caught:
        load_eval_config(path, set(REGISTRY))
    message = caught.value.render()
    assert message.startswith(f"{path}:2: eval_metrics: is ignored by ADK")
    assert 'did you mean `criteria`? write {"criteria": {"response_match_score": 0.7}}' in message


def test_unknown_keys_of_an_adk_custom_metric_are_warnings(tmp_path):
    document = {
        "criteria": {"my_metric": 0.5},
        "custom_metrics": {"my_metric": {"code_config": {"name": "m.f"}, "module": "m"}},
        "comment": "x",
    }
    data = load_eval_config(_json(tmp_path, "eval_config.json", document), set(REGISTRY))
    assert data.custom_metric_paths == {"my_metric": "m.f"}
    assert "ADK ignores it" in _only(data.warnings, "custom_metrics.my_metric.module")
    assert "ADK ignores it" in _only(data.warnings, "comment")


# --- agents-cli's eval_config.yaml ----------------------------------------------------------------------------


def test_custom_function_name_says_which_function_really_runs(tmp_path):
    path = _yaml(
        tmp_path,
        """\
        metrics_to_run: [keyword_hit]
        custom_metrics:
          - name: keyword_hit
            custom_function_name: keyword_score
            custom_function: |
              def keyword_score(instance):
                  return 1.0

              def evaluate(instance):
                  return 0.5
        """,
    )
    config = load_agents_cli_config(path)
    assert [(m.name, m.kind) for m in config.metrics] == [("keyword_hit", "code")]
    warning = _only(config.warnings, "custom_metrics[0].custom_function_name")
    assert warning.startswith(f"{path}:4: ")
    assert "scores with the source's `evaluate(instance)`, never with 'keyword_score'" in warning


def test_custom_function_name_without_a_body_is_refused_on_that_key(tmp_path):
    """agents-cli refuses the metric ("needs a 'prompt_template' or 'custom_function'"): refused on the key."""
    path = _yaml(tmp_path, "metrics_to_run: [m]\ncustom_metrics:\n  - name: m\n    custom_function_name: score\n")
    with pytest.raises(InputError) as caught:
        load_agents_cli_config(path)
    message = caught.value.render()
    assert message.startswith(f"{path}:4: custom_metrics[0].custom_function_name: is not read by agents-cli")
    assert "did you mean `custom_function`?" in message


def test_a_metric_type_an_unknown_top_level_key_and_a_threshold_are_warnings(tmp_path):
    path = _yaml(
        tmp_path,
        """\
        version: 1
        metrics_to_run: [helpful, short]
        custom_metrics:
          - name: helpful
            type: llm
            prompt_template: "Rate {response}"
          - name: short
            threshold: 0.8
            custom_function: "evaluate = len"
        """,
    )
    config = load_agents_cli_config(path)
    assert [(m.name, m.kind) for m in config.metrics] == [("helpful", "prompt_template"), ("short", "code")]
    assert _only(config.warnings, "version").startswith(f"{path}:1: version: is ignored by agents-cli")
    assert "a metric's kind comes from its keys" in _only(config.warnings, "custom_metrics[0].type")
    assert "thresholds: {short: 0.8}" in _only(config.warnings, "custom_metrics[1].threshold")


def test_nameless_and_repeated_metrics_follow_agents_cli(tmp_path):
    """agents-cli skips an entry without a name and keeps the last definition of a name."""
    document = {
        "metrics_to_run": ["echo"],
        "custom_metrics": [
            {"custom_function": "evaluate = len"},
            {"name": "echo", "custom_function": "def evaluate(instance):\n    return 1\n"},
            {"name": "echo", "custom_function": "def evaluate(instance):\n    return 0.25\n"},
        ],
    }
    config = load_agents_cli_config(_json(tmp_path, "eval_config.json", document))
    assert [m.name for m in config.metrics] == ["echo"]
    assert "0.25" in (config.metrics[0].source or "")
    assert "agents-cli skips it" in _only(config.warnings, "custom_metrics[0]")
    assert "ignores custom_metrics[1]" in _only(config.warnings, "custom_metrics[2].name")


def test_the_known_metric_keys_are_the_entry_fields():
    assert set(ENTRY_KEYS) == set(CustomMetricEntry.model_fields)


# --- the plan shows each warning once and goes on -------------------------------------------------------------


def test_the_plan_prints_each_warning_once_and_the_run_goes_on(tmp_path, capsys):
    datasets = tmp_path / "tests/eval/datasets"
    datasets.mkdir(parents=True)
    (tmp_path / "app").mkdir()
    (tmp_path / "app/__init__.py").write_text("")
    for name in ("a-dataset.json", "b-dataset.json"):
        _json(datasets, name, {"eval_set_id": name, "eval_cases": [CLI_CASE]})
    _yaml(
        tmp_path / "tests/eval",
        "metrics_to_run: [m]\ncustom_metrics:\n  - name: m\n    type: code\n    custom_function: 'evaluate = len'\n",
    )
    workflow = tmp_path / "eval-gate.yml"
    workflow.write_text(
        "agents:\n  - name: app\n    target: {kind: adk, agent: app}\n"
        "    evalsets: [tests/eval/datasets/*-dataset.json]\n"
    )
    assert len(build_plan(workflow).warnings) == 3  # two eval_set_ids, one `type` in the config both share
    capsys.readouterr()
    plan = plan_of(load_config(str(workflow)))
    err = capsys.readouterr().err.splitlines()
    assert [len(agent.eval_sets) for agent in plan.agents] == [2]
    assert len(err) == 3 and all(line.startswith("warning: ") for line in err)
    assert sum("custom_metrics[0].type" in line for line in err) == 1


def test_an_adk_config_that_also_lists_metrics_to_run_scores_an_adk_eval_set_as_adk_does(tmp_path):
    """ADK reads `criteria` and ignores `metrics_to_run`: the file is ADK's for an ADK eval set, with a warning."""
    _json(tmp_path, "set.evalset.json", {"eval_set_id": "s", "eval_cases": [ADK_CASE]})
    _json(tmp_path, "c.json", {"criteria": {"response_match_score": 0.5}, "metrics_to_run": ["general_quality"]})
    workflow = tmp_path / "gate.yml"
    workflow.write_text(
        "agents:\n  - name: a\n    target: {kind: replay, actuals: set.evalset.json}\n"
        "    evalsets: [set.evalset.json]\n    eval_config: c.json\n"
    )
    plan = build_plan(workflow)
    assert [c.name for c in plan.agents[0].eval_sets[0].criteria] == ["response_match_score"]
    assert [w.field for w in plan.warnings] == ["metrics_to_run"]


def test_an_unknown_criterion_option_in_a_file_adk_reads_is_a_warning_and_the_default_applies(tmp_path):
    """ADK's criteria keep unknown keys and never read them: `match_typ` silently means EXACT there, loudly here."""
    _json(tmp_path, "set.evalset.json", {"eval_set_id": "s", "eval_cases": [ADK_CASE]})
    config = _json(
        tmp_path,
        "test_config.json",
        {"criteria": {"tool_trajectory_avg_score": {"threshold": 1.0, "match_typ": "IN_ORDER"}}},
    )
    workflow = tmp_path / "gate.yml"
    workflow.write_text(
        "agents:\n  - name: a\n    target: {kind: replay, actuals: set.evalset.json}\n"
        "    evalsets: [set.evalset.json]\n"
    )
    plan = build_plan(workflow)
    (criterion,) = plan.agents[0].eval_sets[0].criteria
    assert criterion.options.match_type.value == "EXACT"
    (warning,) = plan.warnings
    assert warning.field == "criteria.tool_trajectory_avg_score.match_typ"
    assert warning.line == _line_of(config, "match_typ")
    assert "ADK ignores it" in warning.render() and "did you mean `match_type`?" in warning.render()


@pytest.mark.parametrize(
    ("criterion", "threshold", "field"),
    [
        ('"0.8"', 0.8, "criteria.response_match_score"),
        ('{"threshold": "0.8"}', 0.8, "criteria.response_match_score.threshold"),
        ("true", 1.0, "criteria.response_match_score"),
    ],
)
def test_a_threshold_adk_reads_as_a_number_is_that_number_with_a_warning(tmp_path, criterion, threshold, field):
    _json(tmp_path, "set.evalset.json", {"eval_set_id": "s", "eval_cases": [ADK_CASE]})
    (tmp_path / "test_config.json").write_text(f'{{"criteria": {{"response_match_score": {criterion}}}}}')
    workflow = tmp_path / "gate.yml"
    workflow.write_text(
        "agents:\n  - name: a\n    target: {kind: replay, actuals: set.evalset.json}\n"
        "    evalsets: [set.evalset.json]\n"
    )
    plan = build_plan(workflow)
    assert [c.threshold for c in plan.agents[0].eval_sets[0].criteria] == [threshold]
    (warning,) = plan.warnings
    assert warning.field == field and f"ADK reads it as {threshold}" in warning.render()


def test_a_file_full_of_ignored_keys_does_not_flood_the_log(tmp_path):
    from adk_eval_gate.run.plan import SHOWN_WARNINGS

    noise = {f"note_{i}": i for i in range(500)}
    _json(tmp_path, "set.evalset.json", {"eval_set_id": "s", "eval_cases": [{**ADK_CASE, **noise}], **noise})
    _json(tmp_path, "test_config.json", {"criteria": {"response_match_score": 0.5}, **noise})
    workflow = tmp_path / "gate.yml"
    workflow.write_text(
        "agents:\n  - name: a\n    target: {kind: replay, actuals: set.evalset.json}\n"
        "    evalsets: [set.evalset.json]\n"
    )
    warnings = build_plan(workflow).warnings
    assert len(warnings) == SHOWN_WARNINGS
    assert warnings[-1].render().startswith("<input>: ") and "more keys" in warnings[-1].render()
