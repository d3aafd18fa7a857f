"""Agent text made safe for GitHub markdown: the rules live in core/escape.py, below the pull request's handshake
(handshake/), which quotes a commenter's words in its replies before anything runs."""

from adk_eval_gate.core.escape import code_block, html_text, inline, strip_controls, unlinked

__all__ = ["code_block", "html_text", "inline", "strip_controls", "unlinked"]
