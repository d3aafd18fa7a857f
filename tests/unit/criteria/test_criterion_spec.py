"""A CriterionSpec names exactly one way its criterion is scored: a spec with two ways, or none, is refused when it
is built, so the pipeline never picks one of two by accident nor lets an unscorable criterion pass as a gap."""

from __future__ import annotations

import pytest

from adk_eval_gate.criteria.engine.criterion import CriterionSpec, MetricOutcome, Status
from adk_eval_gate.criteria.engine.options import ThresholdOptions
from adk_eval_gate.criteria.registry import REGISTRY, _custom_spec


def _scorer(data, options):
    return MetricOutcome.not_evaluated("unused")


async def _judge(data, options, client):
    return MetricOutcome.not_evaluated("unused")


def _status(score, threshold, runs):
    return Status.PASSED


def test_every_registered_criterion_is_scored_exactly_one_way():
    assert len(REGISTRY) >= 16
    for spec in REGISTRY.values():
        ways = [spec.scorer, spec.judge_scorer, spec.unavailable_reason]
        assert sum(way is not None for way in ways) == 1, spec.name
        assert not spec.judged or spec.judge_scorer is not None, spec.name


def test_the_three_valid_shapes_are_built():
    assert CriterionSpec("computed", ThresholdOptions, _scorer, "in process").scorer is _scorer
    judged = CriterionSpec("judged", ThresholdOptions, None, "by a judge", judged=True, judge_scorer=_judge)
    assert judged.judge_scorer is _judge
    custom = CriterionSpec("custom", ThresholdOptions, None, "own code", judge_scorer=_judge, case_status=_status)
    assert custom.case_status is _status
    assert _custom_spec("nameless", None).unavailable_reason  # a custom metric whose code_config names no function


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"scorer": _scorer, "judge_scorer": _judge}, "exactly one of"),
        ({"scorer": None}, "exactly one of"),
        ({"scorer": _scorer, "unavailable_reason": "not yet"}, "exactly one of"),
        ({"scorer": _scorer, "judged": True}, "judged criterion"),
        ({"scorer": None, "unavailable_reason": "not yet", "case_status": _status}, "no status of its own"),
        ({"scorer": _scorer, "name": " "}, "needs a name"),
    ],
)
def test_a_spec_in_an_invalid_state_is_refused(kwargs, says):
    fields = {"name": "bad", "options_model": ThresholdOptions, "summary": "s", **kwargs}
    with pytest.raises(ValueError, match=says):
        CriterionSpec(**fields)
