"""The criterion names an eval config may use, as the eval-data vocabulary: ADK 2.13's, and ours with the
`gate_` prefix. The criteria stage's registry implements exactly these (a test holds the two equal); the config
stage checks names against this list without importing any scorer."""

from __future__ import annotations

CRITERION_NAMES = (
    "tool_trajectory_avg_score",
    "response_match_score",
    "final_response_match_v2",
    "rubric_based_final_response_quality_v1",
    "rubric_based_tool_use_quality_v1",
    "rubric_based_multi_turn_trajectory_quality_v1",
    "hallucinations_v1",
    "per_turn_user_simulator_quality_v1",
    "safety_v1",
    "gate_trajectory_precision",
    "gate_trajectory_recall",
    "gate_trajectory_single_tool_use",
    "response_evaluation_score",
    "multi_turn_task_success_v1",
    "multi_turn_trajectory_quality_v1",
    "multi_turn_tool_use_quality_v1",
)

# ADK appends these to every eval as informational values (the efficiency metrics); they take no threshold, so
# naming one as a criterion is a mistake.
INFORMATIONAL_METRICS = ("tool_call_count_v1", "inference_call_count_v1", "token_usage_v1", "invocation_duration_v1")
