"""adk-eval-gate: gate pull requests on Google ADK agent evaluations."""

__version__ = "0.2.0"
