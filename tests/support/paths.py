"""Where the suite finds the repository, the bundled example and the test agents, wherever a test file sits."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"
EXAMPLE = ROOT / "examples" / "hello_world"
AGENTS = Path(__file__).resolve().parent / "agents"
