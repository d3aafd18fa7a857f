import json
from tests.e2e.test_agents_cli import _agents_cli_results, project, DATASET, CONFIG  # noqa
from adk_eval_gate.commands.main import main

def test_huge(project, capsys):
    twelve = {"eval_cases": [{"eval_case_id": f"c{i}", "prompt": {"parts": [{"text": f"Hi {i}"}]}} for i in range(12)]}
    (project / "tests/eval/datasets/basic-dataset.json").write_text(json.dumps(twelve))
    config = project / "gate.yml"
    config.write_text(
        "baseline: {store: file, path: baseline/results.json}\ngate: {fail_on: [regression, error], tolerance: 0.05}\n"
        f"agents:\n  - name: travel_helper\n    target: {{kind: adk, agent: app}}\n    evalsets: [{DATASET}]\n"
        f"    eval_config: {CONFIG}\n"
    )
    good = _agents_cli_results(project / "results_1.json", {f"c{i}": 1.7e308 for i in range(12)})
    rc = main(["baseline", "update", "--config", str(config), "--results", str(good)])
    print("update", rc, capsys.readouterr())
    rc = main(["compare", "--config", str(config), "--results", str(good), "--output", str(project / "c.json")])
    print("compare", rc, capsys.readouterr())
