"""Template folders a pull request names (`report.templates`, `judge.templates`), read only inside themselves.

Such a template is rendered in the process that holds GitHub's token. Jinja's sandbox keeps it from Python's
objects, but `{% include %}` opens files by name: a symlink in the folder (or a name with `..`) would bring in
any file that process can read (another step's credentials file, `/proc/self/environ`) and post it in the
comment. A template whose real path is not inside one of the folders searched is refused.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import jinja2
from jinja2.exceptions import SecurityError


class ContainedLoader(jinja2.FileSystemLoader):
    """A FileSystemLoader that refuses a template resolving outside its folders (through a link or `..`)."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        real = Path(filename).resolve()
        folders = [Path(folder).resolve() for folder in self.searchpath]
        if not any(real == folder or folder in real.parents for folder in folders):
            raise SecurityError(f"template {template!r} leads outside its folder (a link or '..'): it is not read")
        return source, filename, uptodate
