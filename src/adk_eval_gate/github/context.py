"""The standard GitHub Actions environment, read once into a typed object."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ActionsContext:
    api_url: str = "https://api.github.com"
    repository: str | None = None
    token: str | None = field(default=None, repr=False)
    event_name: str | None = None
    event: dict[str, Any] = field(default_factory=dict, repr=False)
    sha: str | None = None
    ref: str | None = None
    base_ref: str | None = None
    run_id: str | None = None
    server_url: str = "https://github.com"

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> ActionsContext:
        env = dict(os.environ if env is None else env)
        event: dict[str, Any] = {}
        event_path = env.get("GITHUB_EVENT_PATH")
        if event_path and Path(event_path).is_file():
            try:
                event = json.loads(Path(event_path).read_text(encoding="utf-8"))
            except (OSError, ValueError):
                event = {}
        return cls(
            api_url=env.get("GITHUB_API_URL", "https://api.github.com").rstrip("/"),
            repository=env.get("GITHUB_REPOSITORY"),
            token=env.get("INPUT_GITHUB_TOKEN") or env.get("GITHUB_TOKEN"),
            event_name=env.get("GITHUB_EVENT_NAME"),
            event=event if isinstance(event, dict) else {},
            sha=env.get("GITHUB_SHA"),
            ref=env.get("GITHUB_REF"),
            base_ref=env.get("GITHUB_BASE_REF") or None,
            run_id=env.get("GITHUB_RUN_ID"),
            server_url=env.get("GITHUB_SERVER_URL", "https://github.com").rstrip("/"),
        )

    @property
    def pull_request(self) -> dict[str, Any] | None:
        pr = self.event.get("pull_request")
        return pr if isinstance(pr, dict) else None

    @property
    def base_sha(self) -> str | None:
        """The base branch commit the pull request was opened or last synchronised against."""
        pr = self.pull_request
        return (pr or {}).get("base", {}).get("sha")

    @property
    def base_branch(self) -> str | None:
        pr = self.pull_request
        return self.base_ref or (pr or {}).get("base", {}).get("ref") or self.event.get("repository", {}).get("default_branch")

    @property
    def labels(self) -> list[str]:
        return [label.get("name", "") for label in (self.pull_request or {}).get("labels", []) if isinstance(label, dict)]
