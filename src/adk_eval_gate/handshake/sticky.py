"""What our sticky comment remembers between runs, and the live status it shows while a run is under way.

The comment starts with hidden lines: the key's marker, the run that wrote it, the report's digest and a data line
(the run's state, the commit its result belongs to, the acceptances given with `/eval accept`). Only those leading
lines are read back: the report below them quotes agent text, and a line an agent wrote inside a code block must
never pass for ours. The comment itself is ours only when its author is the token's login, so nobody else can
write an acceptance.

While a run evaluates a new commit, the comment says so at the top and keeps the previous result collapsed under
it; a run that is cancelled or fails before reporting leaves the status saying that.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import asdict, dataclass, field

from adk_eval_gate.core.clip import clip, short_sha
from adk_eval_gate.core.escape import inline
from adk_eval_gate.handshake.limits import BUDGET

_PREFIX = "<!-- adk-eval-gate"
_DATA = "<!-- adk-eval-gate-data: "
_PREVIOUS, _PREVIOUS_END = "<!-- adk-eval-gate-previous -->", "<!-- adk-eval-gate-previous-end -->"
KEPT_ACCEPTANCES = 20  # one per commit; older commits' acceptances matter only if the head goes back to them
STATES = ("done", "running", "cancelled", "failed")


@dataclass(frozen=True)
class Acceptance:
    sha: str
    login: str
    reason: str
    at: str  # the comment's creation time, the server's
    url: str | None = None


@dataclass
class StickyData:
    state: str = "done"  # done | running | cancelled | failed
    result_sha: str | None = None  # the commit the result in the comment belongs to
    evaluating: str | None = None  # the commit a running (or stopped) run was evaluating
    started_at: str | None = None
    run_url: str | None = None
    acceptances: list[Acceptance] = field(default_factory=list)

    def accepted(self, sha: str | None) -> Acceptance | None:
        return next((a for a in reversed(self.acceptances) if sha and a.sha == sha), None)

    def with_acceptance(self, acceptance: Acceptance) -> list[Acceptance]:
        kept = [a for a in self.acceptances if a.sha != acceptance.sha]
        return [*kept, acceptance][-KEPT_ACCEPTANCES:]


def header(body: str | None) -> list[str]:
    """The hidden lines our comment starts with; they end at the first line that is not one."""
    lines = []
    for line in (body or "").split("\n"):
        if not line.startswith(_PREFIX) or not line.endswith("-->"):
            break
        lines.append(line)
    return lines


def data_line(data: StickyData) -> str:
    # base64 keeps any reason text from closing the HTML comment or reading as markdown
    encoded = base64.urlsafe_b64encode(json.dumps(asdict(data), ensure_ascii=False).encode()).decode()
    return f"{_DATA}{encoded} -->"


def read_data(body: str | None) -> StickyData:
    """The data line of our comment's header; a comment without one (an older version's) has no state to keep."""
    for line in header(body):
        if line.startswith(_DATA):
            return _decoded(line[len(_DATA) : -len(" -->")])
    return StickyData()


def _decoded(text: str) -> StickyData:
    try:
        raw = json.loads(base64.urlsafe_b64decode(text.encode()))
        acceptances = [Acceptance(**a) for a in raw.get("acceptances") or []]
        state = raw.get("state") if raw.get("state") in STATES else "done"
        fields = {k: raw.get(k) if isinstance(raw.get(k), str) else None for k in ("result_sha", "evaluating")}
        times = {k: raw.get(k) if isinstance(raw.get(k), str) else None for k in ("started_at", "run_url")}
        return StickyData(state=state, acceptances=acceptances, **fields, **times)
    except (ValueError, TypeError, AttributeError, binascii.Error):
        return StickyData()


def result_of(body: str | None) -> str:
    """The report our comment shows: everything under the header, or the collapsed previous result of a status."""
    text = body or ""
    state = read_data(text).state
    visible = "\n".join(text.split("\n")[len(header(text)) :]).strip("\n")
    if state == "done":
        return visible
    start, end = visible.find(_PREVIOUS), visible.rfind(_PREVIOUS_END)
    if start < 0 or end < start:
        return ""
    return visible[start + len(_PREVIOUS) : end].strip("\n")


def status_text(data: StickyData, previous: str, attempt: int) -> str:
    """The comment's visible text while (or after) a run evaluates `data.evaluating`."""
    commit = f"`{short_sha(data.evaluating, 'unknown')}`"
    run = f"The [workflow run]({data.run_url})" if data.run_url else "The workflow run"
    if attempt > 1:
        run += f" (attempt {attempt})"
    started = f"started {_shown_time(data.started_at)}" if data.started_at else "started"
    headline = {
        "running": f"## ⏳ adk-eval-gate is evaluating commit {commit}\n\n{run} {started}.",
        "cancelled": f"## ⚪ adk-eval-gate: the evaluation of commit {commit} was cancelled\n\n"
        f"{run}, {started}, was cancelled before it reported; the next run will evaluate it.",
        "failed": f"## ⚠️ adk-eval-gate: the evaluation of commit {commit} failed\n\n"
        f"{run}, {started}, stopped before it reported; see its log.",
    }[data.state]
    if not previous:
        return f"{headline}\n\nThere is no earlier result on this pull request.\n"
    if len(previous) > BUDGET - 2000:
        previous = "The previous result was too long to keep here; it is in the previous run's summary."
    of = f"commit {short_sha(data.result_sha)}" if data.result_sha else "an earlier commit"  # raw HTML: no code spans
    return (
        f"{headline}\n\n<details><summary>Previous result, for {of} (not this commit)</summary>\n\n"
        f"{_PREVIOUS}\n{previous}\n{_PREVIOUS_END}\n\n</details>\n"
    )


def _shown_time(iso: str) -> str:
    shown = clip(iso.replace("T", " ").removesuffix("Z"), 16, marker="") + " UTC" if iso.endswith("Z") else iso
    return inline(shown, 40)
