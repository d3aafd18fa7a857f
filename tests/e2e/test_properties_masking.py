"""Secrets are masked before any cut (issue 26), as a property of the whole `ci` command: for any kind of secret
the redactor knows (any secret-bearing variable name; plain, or with characters that JSON, HTML, XML, markdown
and workflow commands escape, non-ASCII, spanning lines), placed at any offset around any cut the report makes —
the comment's cells (120, 160, 200, 300, 600), the response diff (1,200), report.html (4,000), the console's
columns — in an agent's error, its answer or a case id, no piece of it of 6 characters or more reaches any
output: results.json, comparison.json, report.md, report.html, junit.xml, the step summary, the job outputs,
the comment and check run sent to GitHub, the annotations and the console.

In process and on recorded actuals (no agent runs): each example is one `run` for the baseline and one `ci`.
"""

from __future__ import annotations

import json
import os
import string
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from adk_eval_gate.core.redaction import MIN_SECRET_LENGTH
from tests.e2e.test_properties_hostile import workspace
from tests.support.fake_github import FakeGitHub
from tests.support.hostile import run_cli
from tests.support.leaks import leaks, readable

MASKING = settings(
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
REASON_CUTS = [120, 160, 200, 300, 400, 600]  # the comment's cells and the console's reason line
# the response diff in the comment (its answer line comes after 58 characters of header), report.html's texts
ANSWER_CUTS = [(1200, 58), (4000, 0)]
ID_CUTS = [19, 40, 120, 200]  # the console's column keeps both ends of an id; the comment's summary line
FILLER = "x"
ALPHABET = string.ascii_letters.replace("x", "") + string.digits + '-_*"\\&<>%é#@/:.=+ \n'


def _usable(secret: str) -> bool:
    # A key has some variety: "9999999999999" is also what a float such as 0.09999999999999998 prints, in our
    # own numbers, which the search below would count as a leak.
    return (
        secret == secret.strip() and len(secret) >= MIN_SECRET_LENGTH and "**" not in secret and len(set(secret)) >= 4
    )


secrets = st.one_of(
    st.text(alphabet=string.ascii_letters.replace("x", "") + string.digits + "-_", min_size=38, max_size=40),
    st.text(alphabet=ALPHABET, min_size=MIN_SECRET_LENGTH, max_size=50),
).filter(_usable)
names = st.sampled_from(["GOOGLE_API_KEY", "MY_DB_PASSWORD", "ShinySecretThing", "OPENAI_KEY", "AUTH_SECRET"])
# how far before the cut the secret starts: from wholly before it to just after it
shifts = st.integers(min_value=-2, max_value=70)


def _invocation(eval_id: str, answer: str) -> dict:
    return {
        "invocation_id": f"{eval_id}-1",
        "user_content": {"role": "user", "parts": [{"text": f"question {len(eval_id)}"}]},
        "final_response": {"role": "model", "parts": [{"text": answer}]},
    }


def write_replay_workspace(root: Path, cases: list[tuple[str, str, str]]) -> None:
    """`cases`: (eval id, kind, text): an `error` run, an `answer` that regresses, or a `pass`."""
    (root / "evals" / "leak.evalset.json").write_text(
        json.dumps(
            {
                "eval_set_id": "leak",
                "eval_cases": [
                    {"eval_id": e, "conversation": [_invocation(e, "the expected answer")]} for e, _, _ in cases
                ],
            }
        )
    )
    (root / "evals" / "leak_config.json").write_text(json.dumps({"criteria": {"response_match_score": 0.5}}))

    def actuals(recorded: bool) -> dict:
        def run(eval_id: str, kind: str, text: str) -> dict:
            if not recorded or kind == "pass":
                return {"actual_invocations": [_invocation(eval_id, "the expected answer")]}
            return {"error": text} if kind == "error" else {"actual_invocations": [_invocation(eval_id, text)]}

        cases_out = [{"eval_id": e, "runs": [run(e, k, t)]} for e, k, t in cases]
        return {"schema_version": 1, "eval_sets": [{"eval_set_id": "leak", "cases": cases_out}]}

    (root / "good.json").write_text(json.dumps(actuals(False)))
    (root / "leaky.json").write_text(json.dumps(actuals(True)))
    for name, recorded in (("good", "good.json"), ("leaky", "leaky.json")):
        (root / f"{name}.yml").write_text(
            "baseline: {store: file, path: baseline.json}\n"
            "report: {check_run: true}\n"
            "agents:\n"
            "  - name: a\n"
            f"    target: {{kind: replay, actuals: {recorded}}}\n"
            "    evalsets: [evals/leak.evalset.json]\n"
            "    eval_config: evals/leak_config.json\n"
        )
    (root / "event.json").write_text(
        json.dumps(
            {
                "number": 7,
                "pull_request": {
                    "number": 7,
                    "head": {"sha": "c" * 40, "ref": "f"},
                    "base": {"sha": "b" * 40, "ref": "main"},
                    "labels": [],
                },
                "repository": {"full_name": "o/r", "default_branch": "main"},
            }
        )
    )


def pull_request_environment(root: Path, api_url: str) -> dict[str, str]:
    """A pull request's job in GitHub Actions, against the fake GitHub at `api_url`."""
    return {
        "GITHUB_ACTIONS": "true",
        "GITHUB_API_URL": api_url,
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_REPOSITORY": "o/r",
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(root / "event.json"),
        "GITHUB_SHA": "c" * 40,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_BASE_REF": "main",
        "GITHUB_RUN_ID": "100",
        "GITHUB_WORKSPACE": str(root),
        "GITHUB_OUTPUT": str(root / "output.txt"),
        "GITHUB_STEP_SUMMARY": str(root / "summary.md"),
        "GITHUB_TOKEN": "ghs_workflowToken0123456789",
    }


def _placed(secret: str, cut: int, shift: int, prefix: int = 0) -> str:
    return FILLER * max(0, cut - prefix - shift) + secret + " and more words after it"


@MASKING
@example(secret="AIzaSyRedTeam_38char-key0123456789abcd", name="GOOGLE_API_KEY", shift=0, spread=[20] * 9)
@given(secrets, names, shifts, st.lists(st.integers(0, 70), min_size=9, max_size=9))
def test_a_secret_across_any_cut_of_the_report_leaves_no_piece_in_any_output(capsys, secret, name, shift, spread):
    cases: list[tuple[str, str, str]] = []
    for i, cut in enumerate(REASON_CUTS):
        # the comment shows an error row's reason as `the current run errored: <error>`
        cases.append((f"error_{cut}", "error", _placed(secret, cut, (shift + spread[i]) % 72 - 2, 25)))
        cases.append((f"raw_{cut}", "error", _placed(secret, cut, (shift + spread[i]) % 72 - 2)))
    for i, (cut, prefix) in enumerate(ANSWER_CUTS):
        cases.append((f"answer_{cut}", "answer", _placed(secret, cut, (shift + spread[6 + i]) % 72 - 2, prefix)))
    if not any(c.isspace() for c in secret):  # an id is one line
        for cut in ID_CUTS:
            tag = f"id{cut}-"
            cases.append((tag + _placed(secret, cut, (shift + spread[8]) % 72 - 2, len(tag)), "pass", ""))
    cases.append(("steady", "pass", ""))
    # enough clear drops for the eval set to regress, so the comment shows the cases behind it with their diffs
    cases += [(f"drop_{i}", "answer", "a wrong answer") for i in range(10)]

    with workspace() as root, FakeGitHub() as fake:
        write_replay_workspace(root, cases)
        environment = {name: secret, **pull_request_environment(root, fake.url)}
        before = dict(os.environ)
        os.environ.update(environment)
        try:
            assert run_cli(["run", "--config", "good.yml", "--output", "baseline.json", "--quiet"], capsys)[0] == 0
            code, out, err = run_cli(["ci", "--config", "leaky.yml", "--output-dir", "out"], capsys)
        finally:
            os.environ.clear()
            os.environ.update(before)
        assert code == 1, err[-2000:]  # the errors and the regression gate
        bodies = [json.dumps(r["body"], ensure_ascii=False) for r in fake.state.requests if r["body"] is not None]
        written = {
            str(p.relative_to(root)): readable(p)
            for p in [*(root / "out").iterdir(), root / "summary.md", root / "output.txt"]
        }
    assert {"out/report.md", "out/report.html", "out/junit.xml", "out/results.json", "out/comparison.json"} <= set(
        written
    )
    assert len(bodies) >= 2  # the comment and the check run
    outputs = {**written, "stdout": out, "stderr": err, **{f"request {i}": b for i, b in enumerate(bodies)}}
    found = {where: leaks(text, secret) for where, text in outputs.items()}
    assert {where: pieces for where, pieces in found.items() if pieces} == {}
    assert "***" in written["out/results.json"] and "***" in written["out/report.html"]  # the secret was there
