"""Copy agent/activity_agent.py into template.yaml between the AGENT markers.

Run after editing the agent; tests/unit/test_agent.py fails when the two differ.
CloudFormation's !Sub would read ${...} in the agent as a variable, so the agent must not use it.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BEGIN = "# AGENT-BEGIN (generated from agent/activity_agent.py by scripts/embed_agent.py)"
END = "# AGENT-END"
INDENT = " " * 18


def embedded(template: str) -> tuple[int, int, str]:
    start = template.index(BEGIN)
    line_start = template.rindex("\n", 0, start) + 1
    end = template.index(END, start)
    body = template[start + len(BEGIN) + 1 : template.rindex("\n", 0, end) + 1]
    return line_start, end + len(END), "".join(line[len(INDENT):] if line.strip() else "\n" for line in body.splitlines(keepends=True))


def render(agent: str) -> str:
    if "${" in agent:
        raise SystemExit("agent/activity_agent.py must not contain '${' (CloudFormation !Sub would read it)")
    lines = [INDENT + BEGIN + "\n"]
    lines += [(INDENT + line if line.strip() else "\n") for line in agent.splitlines(keepends=True)]
    lines.append(INDENT + END)
    return "".join(lines)


def main() -> int:
    template_path = ROOT / "template.yaml"
    template = template_path.read_text()
    agent = (ROOT / "agent" / "activity_agent.py").read_text()
    start, end, _ = embedded(template)
    template_path.write_text(template[:start] + render(agent) + template[end:])
    print("agent embedded in template.yaml")
    return 0


if __name__ == "__main__":
    sys.exit(main())
