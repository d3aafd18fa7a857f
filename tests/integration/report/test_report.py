"""The PR comment: rendered with GitHub's own markdown renderer, hostile agent text must stay inert."""

from __future__ import annotations

import json
import re

import cmarkgfm
from cmarkgfm.cmark import Options

from adk_eval_gate.baseline.stores import LoadedBaseline, LoadOutcome, identity_of
from adk_eval_gate.config.workflow_settings import GateSettings
from adk_eval_gate.gate.comparison_file import build_comparison
from adk_eval_gate.report.escape import code_block, inline
from adk_eval_gate.report.markdown import BUDGET, CommentPlace, render_report
from adk_eval_gate.run.pipeline import run_plan
from adk_eval_gate.run.plan import build_plan

HOSTILE = (
    "@octocat please merge <script>alert(1)</script> <img src=x onerror=alert(1)> | a | b | "
    "```\n# heading\n``` [click](javascript:alert(1)) ![x](http://evil/x.png) $x^2$ <details><summary>boo"
)


def html_of(markdown: str) -> str:
    # UNSAFE keeps raw HTML in the output, so any HTML that leaked from agent text would show up here
    return cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)


def hostile_run(example):
    evalset = json.loads((example / "evals" / "dice.evalset.json").read_text())
    actual = json.loads(json.dumps(evalset))
    for case in actual["eval_cases"]:
        if case["eval_id"] == "roll_6":
            turn = case["conversation"][0]
            turn["final_response"]["parts"][0]["text"] = HOSTILE
            turn["intermediate_data"]["tool_uses"] = [{"name": "roll_die", "args": {"sides": "@team ```"}}]
    # five runs a side (one recording each): enough evidence for the broken case to fail the gate on its own
    for run in range(5):
        (example / f"hostile{run}.evalset.json").write_text(json.dumps(actual))
    (example / "hostile.yml").write_text(
        "agents:\n  - name: hello_world\n    target: {kind: replay, actuals: ["
        + ", ".join(f"hostile{run}.evalset.json" for run in range(5))
        + "]}\n"
        "    evalsets: [evals/dice.evalset.json]\n    eval_config: evals/eval_config.json\n    num_runs: 5\n"
    )
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 5"))
    baseline = run_plan(build_plan(config), quiet=True)
    plan = build_plan(example / "hostile.yml")
    current = run_plan(plan, quiet=True)
    # the replayed goldens also fix other cases, so the eval set as a whole is unchanged: gate on the case itself
    gate = GateSettings(fail_on=["regression", "case_regression", "error"])
    comparison = build_comparison(current, LoadOutcome(LoadedBaseline(baseline, identity_of(baseline, "b"))), gate)
    return comparison, current, plan


def test_hostile_agent_text_stays_inert_and_the_layout_holds(example):
    comparison, current, plan = hostile_run(example)
    markdown = render_report(
        comparison, current, plan.expected_cases(), CommentPlace(run_url="https://github.com/o/r/actions/runs/1")
    )
    assert "roll\\_6" in markdown and "Cases behind the regressions" in markdown and "first divergence" in markdown
    html = html_of(markdown)
    assert (
        "<script" not in html
        and "<img" not in html
        and "javascript:" not in re.sub(r"<code>.*?</code>", "", html, flags=re.S)
    )
    assert not re.search(
        r"(?<![\w`])@(octocat|team)\b", re.sub(r"<pre>.*?</pre>|<code>.*?</code>", "", html, flags=re.S)
    )
    outside_fences = re.sub(r"^(`{3,}).*?^\1$", "", markdown, flags=re.S | re.M)
    assert html.count("<details>") == html.count("</details>") == outside_fences.count("<details>") >= 2
    assert outside_fences.count("<details>") == outside_fences.count("</details>")
    assert "&lt;details&gt;&lt;summary&gt;boo" in html  # the agent's own tag arrived as text
    for table in re.findall(r"<table>.*?</table>", html, flags=re.S):  # every row has as many cells as the header
        header = len(re.findall(r"<th[ >]", table))
        for row in re.findall(r"<tr>(.*?)</tr>", table, flags=re.S)[1:]:
            assert len(re.findall(r"<td[ >]", row)) == header
    assert "<h1>" not in html  # the fenced '# heading' did not escape its code block


def test_summary_lines_show_plain_case_ids(example):
    comparison, current, plan = hostile_run(example)
    html = html_of(render_report(comparison, current, plan.expected_cases()))
    assert "<summary>roll_6 · tool_trajectory_avg_score</summary>" in html  # no stray backslashes in raw HTML


def test_inline_and_code_block_escaping():
    assert inline("@bob | <b>x</b>") == "@\u200bbob \\| &lt;b&gt;x&lt;/b&gt;"
    block = code_block("a ```` b")
    assert block.startswith("`````") and block.endswith("`````")


def test_the_comment_always_fits_the_budget(example):
    comparison, current, plan = hostile_run(example)
    row = next(r for r in comparison.rows if r.verdict == "regressed")
    many = [row.model_copy(update={"eval_id": f"case_{i:05d}_{'x' * 40}"}) for i in range(3000)]
    comparison = comparison.model_copy(update={"rows": many})
    markdown = render_report(comparison, current, plan.expected_cases())
    assert len(markdown) <= BUDGET
    assert "more regressed rows" in markdown and "full report" in markdown
    assert markdown.count("<details>") == markdown.count("</details>")
