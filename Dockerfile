# The Action's image: a thin layer over the published base image (dependencies already installed), so a run
# does not spend minutes reinstalling them. Tests pass a locally built stand-in through BASE_IMAGE.
ARG BASE_IMAGE=ghcr.io/adk-eval-gate/adk-eval-gate-base:0.1
FROM ${BASE_IMAGE}

COPY pyproject.toml README.md /opt/adk-eval-gate/
COPY src /opt/adk-eval-gate/src
RUN pip install --no-cache-dir --no-deps --no-build-isolation /opt/adk-eval-gate \
    && useradd --create-home --uid 1001 runner

# GitHub-hosted runners mount the workspace for uid 1001; the action runs as that user, not as root.
USER 1001
ENTRYPOINT ["python", "-m", "adk_eval_gate.action"]
