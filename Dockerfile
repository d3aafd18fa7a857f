# The Action's image: our code over the base image (Dockerfile.base: Python, git, the dependencies). The release
# workflow builds it on the base it has just published and pushes ghcr.io/<owner>/adk-eval-gate:X.Y.Z, the image
# a released action.yml runs; the tests pass a locally built base through BASE_IMAGE.
ARG BASE_IMAGE=ghcr.io/adk-eval-gate/adk-eval-gate-base:0.2.0
FROM ${BASE_IMAGE}

COPY pyproject.toml README.md LICENSE /opt/adk-eval-gate/
COPY src /opt/adk-eval-gate/src
RUN pip install --no-cache-dir --no-deps --no-build-isolation /opt/adk-eval-gate

# No USER: GitHub runs Docker actions as the image's default user and requires it to be root (its docs say not to
# set USER), so `setup:` commands can install an agent's requirements into /opt/venv and write the workspace.
# -I (isolated, which implies -P): the checkout is the working directory, and `-m` would otherwise put it first on
# sys.path, so a pull request's `yaml.py` would run inside this process (with the job's token) before any `/eval`
# permission check; and no PYTHON* variable nor user site is read, so a `PYTHONPATH` an earlier step left in
# $GITHUB_ENV runs nothing in a later step's container (docs/trust.md). -u and -B stand for the base image's
# PYTHONUNBUFFERED and PYTHONDONTWRITEBYTECODE, which -I ignores.
ENTRYPOINT ["python", "-I", "-u", "-B", "-m", "adk_eval_gate.commands.action"]
