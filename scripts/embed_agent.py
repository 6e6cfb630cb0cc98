"""Copy agent/activity_agent.py into template.yaml between the AGENT markers, gzip-compressed and
base64-encoded (the on-start script decodes it with `base64 -d | gunzip`).

Why compressed: the lifecycle configuration's on-start Content is base64 of the script and may hold
at most 16,384 characters ("Length Constraints: Maximum length of 16384":
https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_NotebookInstanceLifecycleHook.html);
the agent as text left almost no room. gzip with mtime 0 is deterministic, so the embedded text is
a pure function of the agent and tests/unit/test_agent.py can say when the two differ.

Run after editing the agent. base64's alphabet has no `$`, so !Sub never reads the agent as a variable.
"""

from __future__ import annotations

import base64
import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "# AGENT-BEGIN (generated from agent/activity_agent.py by scripts/embed_agent.py: base64 of its gzip)"
END = "# AGENT-END"
KEY = "- AgentGz: |"
INDENT = " " * 14  # the markers and the key, at the !Sub variable map's list level
BODY_INDENT = " " * 18
WIDTH = 76  # what `base64` itself writes


def compress(agent: str) -> str:
    """base64 lines of the agent's gzip (level 9, mtime 0: the same bytes for the same agent)."""
    text = base64.b64encode(gzip.compress(agent.encode(), compresslevel=9, mtime=0)).decode()
    return "\n".join(text[i : i + WIDTH] for i in range(0, len(text), WIDTH)) + "\n"


def embedded(template: str) -> tuple[int, int, str]:
    """(start, end, agent source) of the embedded agent: decoded and decompressed."""
    start = template.index(BEGIN)
    line_start = template.rindex("\n", 0, start) + 1
    end = template.index(END, start)
    body = template[start + len(BEGIN) + 1 : template.rindex("\n", 0, end) + 1]
    lines = [line.strip() for line in body.splitlines()]
    assert lines[0] == KEY, f"expected {KEY!r} after the begin marker"
    agent = gzip.decompress(base64.b64decode("".join(lines[1:]), validate=True)).decode()
    return line_start, end + len(END), agent


def render(agent: str) -> str:
    lines = [INDENT + BEGIN + "\n", INDENT + KEY + "\n"]
    lines += [BODY_INDENT + line + "\n" for line in compress(agent).splitlines()]
    lines.append(INDENT + END)
    return "".join(lines)


def main() -> int:
    template_path = ROOT / "template.yaml"
    template = template_path.read_text()
    agent = (ROOT / "agent" / "activity_agent.py").read_text()
    start, end, _ = embedded(template) if BEGIN in template else _old_markers(template)
    template_path.write_text(template[:start] + render(agent) + template[end:])
    print("agent embedded in template.yaml")
    return 0


def _old_markers(template: str) -> tuple[int, int, str]:
    """The agent embedded as text (before it was compressed): replaced from its `- AgentSource: |` line."""
    start = template.index("              - AgentSource: |\n")
    end = template.index(END, start)
    return start, end + len(END), ""


if __name__ == "__main__":
    sys.exit(main())
