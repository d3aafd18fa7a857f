"""The judge phase reports progress like inference does, and `run --print-detailed-results` shows every turn."""

from __future__ import annotations

import re

from adk_eval_gate.commands.main import main
from tests.support.fake_gemini import FakeGemini, verdict

LINE = re.compile(
    r"\[adk-eval-gate\] judging: (\d+)/(\d+) scored, (\d+) model calls \((\d+) cached, (\d+) failed\), "
    r"[\d.]+s elapsed, ETA \d+s"
)


def test_judge_progress_counts_calls_cache_hits_and_failures(example, tmp_path, monkeypatch, capsys):
    server = FakeGemini(lambda prompt: verdict("valid"))
    try:
        monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        monkeypatch.delenv("GOOGLE_GENAI_USE_VERTEXAI", raising=False)
        config = example / "eval-gate.yml"
        config.write_text(
            config.read_text()
            .replace(
                "    eval_config: evals/eval_config.json   # ADK's own file, unchanged\n",
                "    criteria: {final_response_match_v2: 0.5}\n",
            )
            .replace("num_runs: {min: 2, max: 10}", "num_runs: 1")  # one run of each case: 35 judge calls
        )
        lines = []
        for _ in range(2):  # the second run answers every judge call from the cache
            main(["run", "--config", str(config), "--output", str(tmp_path / "r.json")])
            lines.append([LINE.search(x).groups() for x in capsys.readouterr().err.splitlines() if LINE.search(x)])
    finally:
        server.close()
    first, second = lines[0][-1], lines[1][-1]
    assert first[:2] == ("6", "6") and second[:2] == ("6", "6")
    assert int(first[2]) == 35 and first[3:] == ("0", "0")  # 7 turns x 5 samples, ADK's default num_samples
    assert int(second[3]) == 35 and second[4] == "0"
    assert [int(g[0]) for g in lines[0]] == sorted(int(g[0]) for g in lines[0])


def test_quiet_runs_print_no_judge_progress(example, tmp_path, monkeypatch, capsys):
    server = FakeGemini(lambda prompt: verdict("valid"))
    try:
        monkeypatch.setenv("GOOGLE_API_KEY", "fake-judge-key")
        monkeypatch.setenv("GOOGLE_GEMINI_BASE_URL", server.url)
        config = example / "eval-gate.yml"
        config.write_text(
            config.read_text().replace(
                "    eval_config: evals/eval_config.json   # ADK's own file, unchanged\n",
                "    criteria: {final_response_match_v2: 0.5}\n",
            )
        )
        main(["run", "--config", str(config), "--output", str(tmp_path / "r.json"), "--quiet"])
    finally:
        server.close()
    assert "judging:" not in capsys.readouterr().err


def test_print_detailed_results_shows_each_turn_of_each_metric(example, tmp_path, capsys):
    config = example / "eval-gate.yml"
    config.write_text(config.read_text().replace("num_runs: {min: 2, max: 10}", "num_runs: 1"))
    assert (
        main(
            [
                "run",
                "--config",
                str(example / "eval-gate.yml"),
                "--output",
                str(tmp_path / "r.json"),
                "--quiet",
                "--print_detailed_results",
                "--cases",
                "dice:roll_12_wrong_golden,dice_then_primes",
            ]
        )
        == 1
    )
    out = capsys.readouterr().out
    assert "Eval set `dice`, case `roll_12_wrong_golden`: failed" in out
    assert (
        "Summary: `EvalStatus.FAILED` for Metric: `tool_trajectory_avg_score`. Expected threshold: `1.0`, actual "
        "value: `0.0`." in out
    )
    assert "| EvalStatus.FAILED | 0.0   | 1.0       | Roll a 12 sided die | I rolled a 10 sided die … |" in out
    assert out.count("| EvalStatus.PASSED |") == 2 + 2 + 1  # dice_then_primes' two turns x two metrics, roll_12's ROUGE
    assert "Summary: `EvalStatus.INFORMATIONAL` for Metric: `token_usage_v1`" in out
